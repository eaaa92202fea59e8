"""`kubectl cluster-info dump` as a snapshot: its standard output (typed Lists one after another,
each namespace's container logs printed between its pods and the next namespace) and the
directory `--output-directory` writes (nodes.json, a folder per namespace with its lists and a
folder of logs per pod) read as the objects they hold, the same answers as a plain snapshot of
those objects."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.loader.clusterinfo import without_dump_logs

ROOT = Path(__file__).resolve().parents[2]
PROD = ROOT / "fixtures" / "prod-cluster.yaml"
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")

# the lists of one namespace, in the order cluster-info dump prints them
NAMESPACED = [
    ("events", "EventList", None),
    ("replication-controllers", "ReplicationControllerList", "ReplicationController"),
    ("services", "ServiceList", "Service"),
    ("daemonsets", "DaemonSetList", "DaemonSet"),
    ("deployments", "DeploymentList", "Deployment"),
    ("replicasets", "ReplicaSetList", "ReplicaSet"),
    ("pods", "PodList", "Pod"),
]


def invoke(*args: str, input: str | None = None):
    return CliRunner().invoke(app, list(args), input=input)


def _objects() -> dict[str, list[dict]]:
    """prod-cluster's objects a cluster-info dump holds, by kind, each pod's priority resolved as
    the API server resolves it (a dump has no PriorityClasses)."""
    docs = [d for d in yaml.safe_load_all(PROD.read_text()) if d]
    values = {d["metadata"]["name"]: d["value"] for d in docs if d["kind"] == "PriorityClass"}
    by_kind: dict[str, list[dict]] = {}
    for d in docs:
        if d["kind"] == "Pod":
            d["spec"]["priority"] = values.get(d["spec"].get("priorityClassName"), 0)
        by_kind.setdefault(d["kind"], []).append(d)
    return by_kind


def _typed_list(kind: str, items: list[dict]) -> dict:
    """A typed List as client-go's typed clients return it: its items without kind and apiVersion."""
    bare = [{k: v for k, v in it.items() if k not in ("kind", "apiVersion")} for it in items]
    return {"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "4711"}, "items": bare}


def _logs(pods: list[dict]) -> str:
    """Each container's log block as cluster-info dump prints it: any text (JSON and YAML
    lookalikes, no final newline, a failed request's line)."""
    out = []
    for i, p in enumerate(pods):
        ns, name = p["metadata"]["namespace"], p["metadata"]["name"]
        for c in p["spec"]["containers"]:
            body = [
                '{"level":"info","msg":"started"}\n---\nitems: [\n',
                "no newline at the end",
                "Request log error: the server rejected our request\n",
            ][i % 3]
            out.append(f"==== START logs for container {c['name']} of pod {ns}/{name} ====\n")
            out.append(body)
            out.append(f"==== END logs for container {c['name']} of pod {ns}/{name} ====\n")
    return "".join(out)


def _namespaces(by_kind: dict[str, list[dict]]) -> list[str]:
    namespaced = (o for k, objs in by_kind.items() if k != "Node" for o in objs)
    return sorted({o["metadata"]["namespace"] for o in namespaced if "namespace" in o["metadata"]})


def _in(ns: str, objs: list[dict]) -> list[dict]:
    return [o for o in objs if o["metadata"].get("namespace") == ns]


def _event(ns: str) -> dict:
    return {
        "metadata": {"name": "e1", "namespace": ns},
        "involvedObject": {"kind": "Pod", "name": "x"},
        "reason": "Scheduled",
        "message": "Successfully assigned",
    }


def write_dump_stdout(path: Path, output: str = "json") -> None:
    """What `kubectl cluster-info dump -A [-o yaml] > path` writes."""
    by_kind = _objects()
    lists = [_typed_list("NodeList", by_kind["Node"])]
    parts: list[str] = []

    def emit(doc: dict) -> None:
        if output == "json":
            parts.append(json.dumps(doc, indent=4) + "\n")
        else:
            parts.append(("---\n" if parts else "") + yaml.safe_dump(doc))

    emit(lists[0])
    for ns in _namespaces(by_kind):
        for _, list_kind, kind in NAMESPACED:
            items = [_event(ns)] if kind is None else _in(ns, by_kind.get(kind, []))
            emit(_typed_list(list_kind, items))
        parts.append(_logs(_in(ns, by_kind["Pod"])))
    path.write_text("".join(parts))


def write_dump_directory(root: Path) -> None:
    """What `kubectl cluster-info dump -A --output-directory root` writes."""
    by_kind = _objects()
    root.mkdir()
    (root / "nodes.json").write_text(json.dumps(_typed_list("NodeList", by_kind["Node"]), indent=4))
    for ns in _namespaces(by_kind):
        folder = root / ns
        folder.mkdir()
        for name, list_kind, kind in NAMESPACED:
            items = [_event(ns)] if kind is None else _in(ns, by_kind.get(kind, []))
            (folder / f"{name}.json").write_text(json.dumps(_typed_list(list_kind, items), indent=4))
        for p in _in(ns, by_kind["Pod"]):
            (folder / p["metadata"]["name"]).mkdir()
            (folder / p["metadata"]["name"] / "logs.txt").write_text(_logs([p]))
    # events are not read: a broken one would fail the read
    (root / _namespaces(by_kind)[0] / "events.json").write_text("{ not JSON")


def write_plain(path: Path) -> None:
    """The same objects as one plain snapshot."""
    by_kind = _objects()
    items = [o for k in ("Node", "ReplicaSet", "Service", "Pod") for o in by_kind.get(k, [])]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def _answers(cluster: str) -> list:
    out = []
    for args in (("explain", WEB), ("schedule", WEB), ("capacity", WEB)):
        r = invoke(*args, "-c", cluster, "-o", "json")
        assert r.exit_code in (0, 1), r.output
        out.append(json.loads(r.stdout))
    return out


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> list:
    path = tmp_path_factory.mktemp("plain") / "plain.json"
    write_plain(path)
    return _answers(str(path))


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_the_standard_output_of_cluster_info_dump_is_its_objects(tmp_path, plain, output):
    dump = tmp_path / f"dump.{output}"
    write_dump_stdout(dump, output)
    assert "==== START logs" in dump.read_text()
    got = _answers(str(dump))
    assert got == plain
    assert got[0]["scores"]  # (a real answer: the pods and nodes were read)
    # on standard input too
    r = invoke("explain", WEB, "-c", "-", "-o", "json", input=dump.read_text())
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == plain[0]


def test_the_directory_cluster_info_dump_writes_is_its_objects(tmp_path, plain):
    root = tmp_path / "cluster-state"
    write_dump_directory(root)
    assert _answers(str(root)) == plain
    # what ksched writes (--report, --save-snapshot) never replaces one of the files it reads there
    from kschedcli.errors import InputError
    from kschedcli.inputs.sources import check_output_file

    target = root / _namespaces(_objects())[0] / "pods.json"
    with pytest.raises(InputError, match="is one of the files of .*, an input of this command"):
        check_output_file(str(target), [str(root)], "--report", "the report")
    check_output_file(str(tmp_path / "report.html"), [str(root)], "--report", "the report")  # (elsewhere: fine)


def test_a_plain_directory_still_reads_only_its_own_files(tmp_path):
    # a folder with pods.json but no nodes.json beside it is not a dump
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "ns").mkdir()
    write_plain(tmp_path / "snap" / "ns" / "pods.json")
    r = invoke("explain", WEB, "-c", str(tmp_path / "snap"))
    assert r.exit_code == 2
    assert "(its subdirectories are not read)" in r.stderr


def test_a_log_cut_off_leaves_the_error_where_the_file_breaks(tmp_path):
    dump = tmp_path / "dump.json"
    write_dump_stdout(dump)
    text = dump.read_text()
    cut = text[: text.rindex("==== END logs")]
    dump.write_text(cut)
    r = invoke("explain", WEB, "-c", str(dump))
    assert r.exit_code == 2
    assert r.stderr.startswith(f"ksched: {dump}: line ")
    assert "malformed JSON after the JSON objects before it" in r.stderr


def test_log_blocks_are_blanked_line_for_line():
    data = (
        b'{"a": 1}\n'
        b"==== START logs for container c of pod ns/p ====\n"
        b"\xff\xfe binary\n{\nno newline"
        b"==== END logs for container c of pod ns/p ====\n"
        b'{"b": 2}\n'
        b"==== START logs for container d of pod ns/q ====\r\n"
        b"==== END logs for container c of pod ns/p ====\n"  # another container's marker: still inside
        b"==== END logs for container d of pod ns/q ====\r\n"
        b'{"c": 3}\n'
    )
    got = without_dump_logs(data)
    assert got == b'{"a": 1}\n' + b"\n" * 4 + b'{"b": 2}\n' + b"\n" * 3 + b'{"c": 3}\n'
    assert got.count(b"\n") == data.count(b"\n")
    assert without_dump_logs(b'{"a": 1}\n') is None
    assert without_dump_logs(b"==== START logs for container c of pod ns/p ====\nnever ends\n") is None


def test_the_line_older_kubectl_printed_after_the_dump_is_left_out(tmp_path, plain):
    # kubectl before kubernetes/kubectl#816 ended its standard output with this line
    dump = tmp_path / "dump.json"
    write_dump_stdout(dump)
    dump.write_text(dump.read_text() + "Cluster info dumped to standard output\n")
    r = invoke("explain", WEB, "-c", str(dump), "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == plain[0]
    # a dump of namespaces without pods has no log block: the line alone
    only = tmp_path / "nodes-only.json"
    nodes = json.dumps(_typed_list("NodeList", _objects()["Node"]))
    only.write_text(nodes + "\nCluster info dumped to standard output")
    r = invoke("explain", WEB, "-c", str(only))
    assert r.exit_code == 0, r.output
    assert without_dump_logs(b'{"a": 1}\nCluster info dumped to standard output\n') == b'{"a": 1}\n\n'
    assert without_dump_logs(b'{"a": 1}\nCluster info dumped to standard output\n{"b": 2}\n') is None


def test_a_log_holding_nul_bytes_is_read_from_standard_input(tmp_path, plain):
    # a stream's NUL byte refuses it at once (/dev/zero, a binary), unless a container's log began
    dump = tmp_path / "dump.json"
    write_dump_stdout(dump)
    data = dump.read_bytes()
    at = data.index(b"==== START logs")
    at = data.index(b"\n", at) + 1
    data = data[:at] + b"\x00\x00\xff binary \x00\n" + data[at:]
    r = CliRunner().invoke(app, ["explain", WEB, "-c", "-", "-o", "json"], input=data)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == plain[0]
    r = CliRunner().invoke(app, ["explain", WEB, "-c", "-"], input=data[:100] + b"\x00" + data[100:])
    assert r.exit_code == 2
    assert r.stderr == "ksched: -: not YAML or JSON text: a NUL byte at offset 100\n"


def test_a_stream_that_fails_is_not_read_again(tmp_path, monkeypatch):
    # the read with the logs left out takes a stream's kept bytes: a FIFO nobody writes to is
    # waited for once, not twice
    from kschedcli.loader import sources

    opened: list[str] = []
    real = sources._open_stream
    monkeypatch.setattr(sources, "FIFO_WRITER_SECONDS", 0.1)
    monkeypatch.setattr(sources, "_open_stream", lambda path, mode: opened.append(path) or real(path, mode))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = invoke("explain", WEB, "-c", str(fifo))
    assert r.exit_code == 2
    assert "a FIFO nobody writes to" in r.stderr
    assert opened == [str(fifo)]


@pytest.mark.parametrize("damage", ["directory", "dangling", "loop", "fifo"])
def test_a_dump_directory_whose_pods_file_is_not_a_file_is_refused(tmp_path, monkeypatch, damage):
    # was: the namespace folder, pods and all, left out without a word
    from kschedcli.loader import sources

    monkeypatch.setattr(sources, "FIFO_WRITER_SECONDS", 0.1)
    root = tmp_path / "cluster-state"
    write_dump_directory(root)
    pods = root / "shop" / "pods.json"
    pods.unlink()
    if damage == "directory":
        pods.mkdir()
        says = f"ksched: {root / 'shop'}: --cluster: a namespace folder of a `kubectl cluster-info dump` directory"
    elif damage == "dangling":
        pods.symlink_to(tmp_path / "gone.json")
        says = f"ksched: {pods}: no such file"
    elif damage == "loop":
        pods.symlink_to(pods)
        says = f"ksched: {pods}: cannot read: "
    else:
        os.mkfifo(pods)
        says = f"ksched: {pods}: a FIFO nobody writes to"
    r = invoke("explain", WEB, "-c", str(root))
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(says), r.stderr
    assert r.stderr.count("\n") == 1


def test_a_pods_log_folder_named_like_a_file_is_not_read(tmp_path, plain):
    # a pod's name may end in .json: its folder of logs is a directory, never read
    root = tmp_path / "cluster-state"
    write_dump_directory(root)
    (root / "shop" / "report.json").mkdir()
    (root / "shop" / "report.json" / "logs.txt").write_text("==== START logs ...")
    assert _answers(str(root)) == plain
