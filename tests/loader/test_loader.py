"""The snapshot reader: Lists, multi-document YAML, JSON, stdin, streaming, parallel YAML, errors."""

from __future__ import annotations

import io
import json
import sys

import pytest
import yaml

from kschedcli import loader, progress
from kschedcli.errors import InputError
from kschedcli.inputs.cluster import load_cluster, slim_object
from kschedcli.loader import json_stream, workers, yaml_reader


def pod(name, ns="default", node="n1", cpu="100m", **extra):
    d = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {
            "nodeName": node,
            "containers": [
                {
                    "name": "c",
                    "image": "img",
                    "resources": {"requests": {"cpu": cpu}},
                    "env": [{"name": "A", "value": "1"}],
                }
            ],
        },
        "status": {"phase": "Running"},
    }
    d.update(extra)
    return d


NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


def objects(path, transform=None):
    return [(o, w) for o, w in loader.iter_objects(str(path), transform)]


def test_json_list_is_flattened_with_locations(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"apiVersion": "v1", "items": [NODE, pod("a")], "kind": "List"}))
    got = objects(f)
    assert [o["kind"] for o, _ in got] == ["Node", "Pod"]
    assert [w for _, w in got] == ["items[0] (Node n1)", "items[1] (Pod default/a)"]


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_list_within_a_snapshot_list_is_flattened(tmp_path, suffix):
    """A snapshot List holding a List (files merged by hand or by jq): the inner List's node and
    its bound pod are read as kubectl reads them, each slimmed as the others are."""
    n2 = {**NODE, "metadata": {"name": "n2", "labels": {"zone": "b"}}}
    inner = {"apiVersion": "v1", "kind": "List", "items": [NODE, pod("a"), {"kind": "List", "items": [pod("b")]}]}
    doc = {"apiVersion": "v1", "kind": "List", "items": [inner, n2]}
    f = tmp_path / f"c{suffix}"
    f.write_text(json.dumps(doc) if suffix == ".json" else yaml.safe_dump(doc))
    cluster = load_cluster([str(f)])
    assert sorted(n.name for n in cluster.nodes) == ["n1", "n2"]
    assert sorted(p.name for p in cluster.pods) == ["a", "b"]
    got = objects(f, slim_object)
    assert [o["kind"] for o, _ in got] == ["Node", "Pod", "Pod", "Node"]
    assert all("env" not in c for o, _ in got if o["kind"] == "Pod" for c in o["spec"]["containers"])


def test_typed_list_items_get_the_kind(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"kind": "PodList", "items": [{"metadata": {"name": "p"}}]}))
    ((o, w),) = objects(f)
    assert o["kind"] == "Pod" and w == "items[0] (Pod default/p)"


def test_multi_document_yaml_with_a_list_and_empty_documents(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(NODE) + "---\n---\n" + yaml.safe_dump({"kind": "List", "items": [pod("a"), pod("b")]}))
    got = objects(f)
    assert [w for _, w in got] == [
        "document 1 (Node n1)",
        "document 2 items[0] (Pod default/a)",
        "document 2 items[1] (Pod default/b)",
    ]


def test_single_json_object(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps(pod("solo")))
    ((o, w),) = objects(f)
    assert o == pod("solo") and w == "Pod default/solo"


def test_stdin(monkeypatch):
    data = yaml.safe_dump_all([NODE, pod("x")]).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    got = objects("-")
    assert [o["metadata"]["name"] for o, _ in got] == ["n1", "x"]


def test_streamed_json_equals_a_whole_decode(tmp_path, monkeypatch):
    """Blocks far smaller than an item, runs decoded together, a multi-byte character cut
    between blocks, the List's kind after its items, indented or compact layout."""
    items = [
        pod(f"p{i}", cpu=f"{i + 1}m", metadata={"name": f"p{i}", "annotations": {"note": "héllo ✓" * i}})
        for i in range(60)
    ]
    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    monkeypatch.setattr(json_stream, "_BLOCK", 37)
    monkeypatch.setattr(json_stream, "_MIN_BATCH", 200)
    for text in (
        json.dumps(doc, ensure_ascii=False),
        json.dumps(doc, indent=4, ensure_ascii=False),
        '{"apiVersion":"v1","items":[\n'
        + ",\n".join(json.dumps(i, ensure_ascii=False) for i in items)
        + '\n],"kind":"List"}',
    ):
        f = tmp_path / "c.json"
        f.write_bytes(text.encode())
        docs = loader.load_documents(str(f))
        assert docs == [json.loads(text)]


def test_json_that_does_not_stream_falls_back(tmp_path):
    f = tmp_path / "c.json"
    f.write_text('{"kind": "List", "items": [], "items": [{"kind": "Node", "metadata": {"name": "n"}}]}')
    assert [o["metadata"]["name"] for o, _ in objects(f)] == ["n"]  # the last `items`, as json.loads


FAST_YAML_CASES = [
    "a: 1\nb: 0755\nc: 0x1f\nd: 1_000\ne: 1:30\nf: -3\n",  # YAML 1.1 integers
    "a: yes\nb: No\nc: on\nd: 'true'\ne: ~\nf: null\ng:\n",  # booleans and nulls
    "a: 1.5\nb: .inf\nc: 2001-12-14\nd: '2025-01-01T00:00:00Z'\ne: '1e3'\n",
    "base: &b {x: 1, y: [1, 2]}\nuse: *b\nmerged:\n  <<: *b\n  y: 3\n",  # anchors, aliases, merge
    "a: !!str 123\nb: !!int '7'\n1: one\ntrue: t\n",  # explicit tags, non-string keys
    's: |\n  line1\n  line2\nf: >\n  folded\n  text\nq: "tab\\there"\n',
]


@pytest.mark.parametrize("text", FAST_YAML_CASES)
def test_fast_yaml_matches_safe_load(text):
    assert list(yaml_reader.yaml_docs(text)) == list(yaml.safe_load_all(text))


LINE_READER_CASES = [
    # what the line reader takes itself
    "a: 1\nb:\n  c: x\n  d:\n  - 1\n  - two\n  - k: v\n    l: w\ne: {}\nf: []\ng: 'it''s'\nh: \"q\\\"x\"\n",
    "---\n---\nk: v\n---\n",
    "- a\n- b: 1\n  c:\n  - d\n",
    "x: -3\ny: 0\nz: 012\nw: yes\nv: ~\nu: 2025-01-01\nt: 1.0\ns: http://a:b/c\nr: a#b\nq: ':x'\np:   padded   \n",
    "labels:\n  app.kubernetes.io/name: web\n  'true': quoted-key\n",
    # what it hands to libyaml, whole document by whole document
    "a: 1 # comment\n",
    "a: b\n  continued\n",
    "a: |\n  block\n",
    "a: [1, 2]\n",
    "? a\n: b\n",
    "a:\n- - 1\n",
    "  a: 1\n",
    "--- !tag\na: 1\n",
    "a: &x 1\nb: *x\n",
    "a: 'multi\n  line'\n",
    'a: "tab\\x41"\n',
    "80: http\n",
    "a:\tb\n",
    "a: b: c\n",
    "a: -\n",
    "-\n  a: 1\n",
    "- 'a: b'\n",
]


@pytest.mark.parametrize("text", LINE_READER_CASES)
def test_line_reader_matches_libyaml(text):
    def read(f):
        try:
            return ("ok", list(f(text)))
        except yaml.YAMLError as e:
            return ("error", str(e))

    assert read(yaml_reader.yaml_docs) == read(lambda t: yaml.load_all(t, Loader=yaml.CSafeLoader))


def test_yaml_error_names_file_and_line(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("kind: Node\nmetadata:\n  name: n1\n  labels: [a\n")
    with pytest.raises(InputError) as e:
        objects(f)
    assert e.value.source == str(f) and "malformed YAML" in e.value.message
    assert e.value.where.startswith("line ")


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        objects(tmp_path / "nope.yaml")
    with pytest.raises(InputError, match="is a directory"):
        objects(tmp_path)


def test_bad_field_names_file_location_and_field(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"kind": "List", "items": [NODE, pod("ok"), pod("bad", cpu="lots")]}))
    with pytest.raises(InputError) as e:
        load_cluster([str(f)])
    assert e.value.source == str(f)
    assert e.value.where == "items[2] (Pod default/bad)"
    assert e.value.field == "spec.containers[0].resources.requests.cpu"


def test_not_an_object(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("- 1\n- 2\n")
    with pytest.raises(InputError, match="expected a Kubernetes object"):
        objects(f)


def test_slim_object_keeps_what_the_scheduler_reads():
    p = pod(
        "a",
        status={
            "phase": "Running",
            "startTime": "t",
            "podIP": "1.2.3.4",
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
            ],
            "containerStatuses": [
                {"name": "c", "image": "img", "resources": {"requests": {"cpu": "1"}}, "state": {"running": {}}}
            ],
        },
    )
    p["spec"]["volumes"] = [
        {"name": "tok", "projected": {"sources": [{"serviceAccountToken": {}}]}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
    ]
    s = slim_object(p)
    c = s["spec"]["containers"][0]
    assert "env" not in c and c["resources"] == {"requests": {"cpu": "100m"}} and c["image"] == "img"
    assert s["status"]["conditions"] == [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
    assert s["status"]["containerStatuses"] == [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]
    assert "podIP" not in s["status"] and s["status"]["startTime"] == "t"
    assert s["spec"]["volumes"] == [
        {"name": "tok", "projected": {}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
    ]
    assert "env" in p["spec"]["containers"][0]  # the source object is not modified
    pending = pod("b", node="")
    assert slim_object(pending) is pending  # pending pods are kept whole


def test_parallel_yaml_pieces_equal_a_whole_read(tmp_path, monkeypatch):
    docs = [NODE] + [
        pod(f"p{i}", metadata={"name": f"p{i}", "namespace": "ns", "labels": {"i": str(i)}}) for i in range(40)
    ]
    text = "".join("---\n" + yaml.safe_dump(d) for d in docs)
    f = tmp_path / "c.yaml"
    f.write_text(text)
    monkeypatch.setattr(workers, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("KSCHED_WORKERS", "2")
    pieces = workers.split_yaml(str(f), len(text), 6)
    assert pieces and len(pieces) > 1
    assert all(text.encode()[s : s + 4] == b"---\n" for s, _ in pieces)
    got = workers.yaml_parallel(str(f), len(text), slim_object, progress.NULL_TASK)
    assert got == [slim_object(d) for d in docs]


def test_parallel_yaml_error_reports_the_whole_file_line(tmp_path, monkeypatch):
    good = "".join("---\n" + yaml.safe_dump(pod(f"p{i}")) for i in range(30))
    f = tmp_path / "c.yaml"
    f.write_text(good + "---\nkind: Pod\nmetadata:\n  name: [x\n  uid: u\n" + good)
    with pytest.raises(yaml.YAMLError) as ref:
        list(yaml.safe_load_all(f.read_text()))
    line = ref.value.problem_mark.line + 1
    assert line > good.count("\n") + 3  # past the first piece
    monkeypatch.setattr(workers, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("KSCHED_WORKERS", "2")
    with pytest.raises(InputError) as e:
        objects(f, slim_object)
    assert "malformed YAML" in e.value.message
    assert e.value.where == f"line {line}, column {ref.value.problem_mark.column + 1}"
