"""Inputs that can be read only once (stdin, FIFOs, devices), usage errors, and a reader that closes
stdout early: issue 11's classes 4 (pipes hang), 5 (`-c -` and pending pods), 6 (usage errors on one
line) and 9 (a closed stdout does not change the exit status)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small-cluster.yaml"
PROD = ROOT / "fixtures" / "prod-cluster.yaml"
WEB = ROOT / "fixtures" / "pods" / "web.yaml"
HANG_GUARD = 120  # seconds: a hang fails the test instead of stalling the suite (no timing asserted)


def ksched(*args: str, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, input_bytes: bytes | None = None):
    """ksched as a separate process (real file descriptors, real pipes)."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "kschedcli", *args],
        stdin=None if input_bytes is not None else stdin,
        input=input_bytes,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
        timeout=HANG_GUARD,
    )


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(app, list(args), input=input, env={"NO_COLOR": "1", "COLUMNS": "80"})


class Fifo:
    """A named pipe fed once by a thread, as `<(kubectl get ...)` is by the shell."""

    def __init__(self, tmp_path: Path, name: str, data: bytes):
        self.path = tmp_path / name
        os.mkfifo(self.path)
        self.thread = threading.Thread(target=self._feed, args=(data,), daemon=True)
        self.thread.start()

    def _feed(self, data: bytes) -> None:
        try:
            with open(self.path, "wb") as f:  # blocks until the reader opens it
                f.write(data)
        except BrokenPipeError:
            pass

    def __str__(self) -> str:
        return str(self.path)


def as_json_list(path: Path) -> bytes:
    items = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()


# ----------------------------------------------------------------------------- 4: pipes


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_cluster_and_pod_from_fifos_are_read_once(tmp_path, form):
    cluster = SMALL.read_bytes() if form == "yaml" else as_json_list(SMALL)
    expected = ksched("explain", str(WEB), "-c", str(SMALL), "-o", "json")
    fifo_cluster = Fifo(tmp_path, "cluster", cluster)
    fifo_pod = Fifo(tmp_path, "pod", WEB.read_bytes())
    got = ksched("explain", str(fifo_pod), "-c", str(fifo_cluster), "-o", "json")
    assert got.returncode == expected.returncode == 0, got.stderr
    assert got.stdout == expected.stdout


def test_stdin_snapshot_as_json_equals_the_file():
    expected = ksched("explain", str(WEB), "-c", str(SMALL), "-o", "json")
    got = ksched("explain", str(WEB), "-c", "-", "-o", "json", input_bytes=as_json_list(SMALL))
    assert got.returncode == 0 and got.stdout == expected.stdout


def test_snapshot_as_a_stream_of_json_objects_equals_the_file(tmp_path):
    # `kubectl get nodes,pods -A -o json | jq -c '.items[]'`: one object a line, no List around them
    items = [d for d in yaml.safe_load_all(SMALL.read_text()) if d]
    lines = "\n".join(json.dumps(it) for it in items).encode()
    path = tmp_path / "objects.json"
    path.write_bytes(lines)
    expected = ksched("explain", str(WEB), "-c", str(SMALL), "-o", "json")
    assert ksched("explain", str(WEB), "-c", str(path), "-o", "json").stdout == expected.stdout
    assert ksched("explain", str(WEB), "-c", "-", "-o", "json", input_bytes=lines).stdout == expected.stdout
    # cut off in its third object: one line naming where the stream breaks, not a YAML parser's words
    cut = lines[: lines.index(b"\n", lines.index(b"\n") + 1) + 20]
    path.write_bytes(cut)
    got = ksched("explain", str(WEB), "-c", str(path))
    assert got.returncode == 2
    assert got.stderr.decode() == f"ksched: {path}: line 3: malformed JSON after the JSON objects before it\n"


def test_config_from_a_fifo(tmp_path):
    config = ROOT / "fixtures" / "config" / "profiles.yaml"
    expected = ksched("explain", str(WEB), "-c", str(SMALL), "--config", str(config), "-o", "json")
    got = ksched(
        "explain", str(WEB), "-c", str(SMALL), "--config", str(Fifo(tmp_path, "cfg", config.read_bytes())), "-o", "json"
    )
    assert got.returncode == expected.returncode and got.stdout == expected.stdout, got.stderr


def test_endless_binary_device_is_refused_at_its_first_nul():
    r = ksched("explain", str(WEB), "-c", "/dev/zero")
    assert r.returncode == 2
    assert r.stderr.decode() == "ksched: /dev/zero: not YAML or JSON text: a NUL byte at offset 0\n"


def test_binary_on_stdin_is_refused():
    r = run("explain", str(WEB), "-c", "-", input=b"kind: List\n\0\0\0")
    assert r.exit_code == 2 and r.stderr == "ksched: -: not YAML or JSON text: a NUL byte at offset 11\n"


def test_text_that_is_not_utf8_is_refused_where_it_stops_being_utf8(tmp_path):
    latin1 = tmp_path / "pod.yaml"
    latin1.write_bytes(b"apiVersion: v1\nkind: Pod\nmetadata: {name: caf\xe9}\n")
    for args in (("explain", str(latin1), "-c", str(SMALL)), ("explain", str(WEB), "-c", str(latin1))):
        r = run(*args)
        assert (
            r.exit_code == 2
            and r.stderr == f"ksched: {latin1}: not UTF-8 text: byte 0xe9 at line 3, column 21 (offset 45)\n"
        )
    # from a pipe, as from a file
    r = run("explain", str(WEB), "-c", "-", input=b"kind: List\nitems: []\n# \xc3(\n")
    assert r.exit_code == 2 and r.stderr == "ksched: -: not UTF-8 text: byte 0xc3 at line 3, column 3 (offset 23)\n"


# ----------------------------------------------------------------------------- 5: `-c -` everywhere


def test_schedule_finds_the_pending_pods_of_a_snapshot_on_stdin():
    from_file = run("schedule", "-c", str(PROD), "-o", "json")
    from_stdin = run("schedule", "-c", "-", "-o", "json", input=PROD.read_bytes())
    assert from_file.exit_code == from_stdin.exit_code == 1
    assert len(json.loads(from_stdin.stdout)["results"]) == 2
    assert from_stdin.stdout == from_file.stdout


def test_explain_finds_a_pending_pod_by_name_in_a_snapshot_on_stdin():
    ref = "shop/checkout-6b8c9d7f5-h2j4k"
    from_file = run("explain", ref, "-c", str(PROD), "-o", "json")
    from_stdin = run("explain", ref, "-c", "-", "-o", "json", input=PROD.read_bytes())
    assert from_stdin.exit_code == from_file.exit_code, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout and json.loads(from_stdin.stdout)["pod"] == ref


@pytest.mark.parametrize(
    "args,takers",
    [
        (["explain", "-", "-c", "-"], "POD and --cluster"),
        (["preempt", "-", "-c", "-"], "POD and --cluster"),
        (["schedule", "-", "-c", "-"], "PODS and --cluster"),
        (["explain", str(WEB), "-c", "-", "-c", "-"], "--cluster twice"),
        (["explain", str(WEB), "-c", "-", "--config", "-"], "--cluster and --config"),
        # every command and option that can read `-`, the two involved named
        (["diff", "-", "-c", str(PROD), "--against-cluster", "-"], "PODS and --against-cluster"),
        (["diff", str(WEB), "-c", "-", "--against-cluster", "-"], "--cluster and --against-cluster"),
        (["diff", str(WEB), "-c", "-", "--against-config", "-"], "--cluster and --against-config"),
        (["diff", "-", "-c", str(PROD), "--against-config", "-"], "PODS and --against-config"),
        (
            ["diff", str(WEB), "-c", str(PROD), "--against-cluster", "-", "--against-config", "-"],
            "--against-cluster and --against-config",
        ),
        (["scale-up", "-", "-c", str(PROD), "--node-groups", "-"], "PODS and --node-groups"),
        (["scale-up", str(WEB), "-c", "-", "--node-groups", "-"], "--cluster and --node-groups"),
        (["scale-down", "-c", "-", "--node-groups", "-"], "--cluster and --node-groups"),
        (["run", "-", "-c", "-"], "SCENARIO and --cluster"),
        (["capacity", "-", "-c", "-"], "FILE and --cluster"),
        (["capacity", "-", "-", "-c", str(PROD)], "FILE twice"),
        (["schedule", "-", "-c", str(PROD), "--add-node", "@-"], "PODS and --add-node"),
        (["drain", "pool=x", "-c", "-", "--add-node", "@-"], "--cluster and --add-node"),
        (["sweep", "--rolling", "pool=x", "-c", "-", "--surge", "@-"], "--cluster and --surge"),
    ],
)
def test_stdin_named_twice_is_one_line(args, takers):
    r = run(*args, input=PROD.read_bytes())
    assert r.exit_code == 2
    assert r.stderr == f"ksched: -: stdin is named twice ({takers}); it can be read only once\n"
    assert r.stdout == ""


def test_a_scenario_on_stdin_naming_stdin_is_one_line():
    """A scenario read from stdin whose own snapshot is `-`: the two named, nothing read twice."""
    scenario = b"apiVersion: ksched.io/v1alpha1\nkind: Scenario\ncluster: ['-']\n"
    r = run("run", "-", input=scenario)
    assert r.exit_code == 2
    said = "stdin is named twice (SCENARIO and the scenario's cluster); it can be read only once"
    assert r.stderr == f"ksched: -: {said}\n"


# ----------------------------------------------------------------------------- 6: usage errors


@pytest.mark.parametrize(
    "args,message",
    [
        (["explain", str(WEB), "-c", str(SMALL), "--frobnicate"], "No such option: --frobnicate"),
        (["explain", str(WEB), "-c", str(SMALL), "-o", "xml"], "'xml' is not one of 'table', 'json', 'yaml'"),
        (["explain", str(WEB), "-c", str(SMALL), "--top", "many"], "Invalid value for '--top'"),
        (["explain", str(WEB), "-c", str(SMALL), "--top"], "Option '--top' requires an argument."),
        (["preempt", str(WEB), "-c"], "Option '-c' requires an argument."),
        (["nonsense"], "No such command 'nonsense'."),
        (["schedule", "-c", str(SMALL), "--order", "random"], "Invalid value for '--order'"),
    ],
)
def test_usage_errors_are_one_line_with_the_hint_on_it(args, message):
    r = run(*args)
    assert r.exit_code == 2
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("ksched: ") and message in r.stderr, r.stderr
    command = "ksched" if args[0] == "nonsense" or "requires an argument" in message else f"ksched {args[0]}"
    assert r.stderr.endswith(f" (see '{command} -h')\n"), r.stderr
    assert "Usage:" not in r.stderr and r.stdout == ""


def test_usage_error_of_the_installed_command_is_one_line():
    r = ksched("explain", str(WEB), "-c", str(SMALL), "-o", "xml")
    assert r.returncode == 2 and r.stdout == b""
    err = r.stderr.decode()
    assert len(err.splitlines()) == 1 and err.startswith("ksched: Invalid value for '--output' / '-o': ")
    assert "'xml' is not one of 'table', 'json', 'yaml'" in err and err.endswith(" (see 'ksched explain -h')\n")


def test_help_and_bare_ksched_are_unchanged():
    assert run("explain", "-h").exit_code == 0
    bare = ksched()
    assert bare.returncode == 2 and b"Usage: ksched" in bare.stderr and b"Commands:" in bare.stderr


# ----------------------------------------------------------------------------- 9: closed stdout


@pytest.mark.parametrize(
    "args",
    [
        ["explain", str(WEB), "-c", str(SMALL)],
        ["explain", str(WEB), "-c", str(SMALL), "-o", "json"],
        ["schedule", "-c", str(PROD)],
        ["schedule", "-c", str(PROD), "-o", "json"],
        ["schema"],
    ],
)
def test_a_reader_that_closes_stdout_does_not_change_the_exit_status(args):
    whole = ksched(*args, stdout=subprocess.DEVNULL)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write meets EPIPE
    try:
        cut = ksched(*args, stdout=write_end)
    finally:
        os.close(write_end)
    assert cut.returncode == whole.returncode, cut.stderr
    assert cut.stderr == whole.stderr == b""


# ----------------------------------------------------------------------------- endless text on a pipe


def test_endless_text_on_stdin_ends_in_one_line_at_the_bound():
    """`yes | ksched explain - -c snap.yaml`: read up to the user-file bound (256 MiB), then one line."""
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        p = ksched("explain", "-", "-c", str(SMALL), stdin=yes.stdout)
    finally:
        yes.kill()
        yes.wait()
    assert p.returncode == 2 and p.stdout == b"", p.stderr
    assert p.stderr.decode() == (
        "ksched: -: more than 256 MiB: larger than any real input, so ksched stops reading (a file of pods, "
        "workloads, nodes or a config is read up to 256 MiB)\n"
    )


def test_an_endless_cluster_pipe_stops_at_the_snapshot_bound():
    """`-c <(yes)`: the snapshot bound (4 GiB) is the same reading with a larger limit; shown on a
    real pipe fed endlessly, with a small limit."""
    from kschedcli.errors import InputError
    from kschedcli.loader import sources

    r, w = os.pipe()

    def feed() -> None:
        try:
            while True:
                os.write(w, b"y\n" * 4096)
        except OSError:
            pass

    threading.Thread(target=feed, daemon=True).start()
    with os.fdopen(r, "rb") as f, pytest.raises(InputError) as e:
        sources._read_stream(f, "/dev/fd/63", 8 << 20)
    os.close(w)
    assert str(e.value) == (
        "/dev/fd/63: more than 8 MiB: larger than any real input, so ksched stops reading (a file of pods, "
        "workloads, nodes or a config is read up to 8 MiB)"
    )
    assert sources.MAX_SNAPSHOT_BYTES == 4 << 30
    big = sources.too_large("snap.yaml", sources.MAX_SNAPSHOT_BYTES)
    assert str(big).endswith("(a snapshot is read up to 4 GiB)")


def test_a_regular_file_past_the_bound_is_refused_before_it_is_read(tmp_path):
    f = tmp_path / "pods.yaml"
    with open(f, "wb") as out:
        out.truncate((256 << 20) + 1)  # sparse: no disk used
    r = run("explain", str(f), "-c", str(SMALL))
    assert r.exit_code == 2 and "more than 256 MiB" in r.stderr, r.output


# a FIFO nobody writes to: one line after a bounded wait for a writer, never a hang


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "{fifo}", "-c", str(PROD)],
        ["explain", str(WEB), "-c", "{fifo}"],
        ["scale-up", "-c", str(PROD), "--node-groups", "{fifo}"],
        ["run", "{fifo}"],
        ["sweep", "-c", str(PROD), "--rolling", "pool=general", "--surge", "@{fifo}"],
    ],
)
def test_a_fifo_nobody_writes_to_is_one_line(tmp_path, monkeypatch, argv):
    from kschedcli.loader import sources

    monkeypatch.setattr(sources, "FIFO_WRITER_SECONDS", 0.2)
    fifo = tmp_path / "nobody"
    os.mkfifo(fifo)
    result: list = []
    t = threading.Thread(target=lambda: result.append(run(*[a.format(fifo=fifo) for a in argv])), daemon=True)
    t.start()
    t.join(HANG_GUARD)
    assert not t.is_alive(), "ksched waited for a writer that never came"
    r = result[0]
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert len(line.splitlines()) == 1 and line.startswith(f"ksched: {fifo}: "), line
    assert line.endswith("a FIFO nobody writes to (no writer opened it within 0.2 s)"), line


def test_a_fifo_whose_writer_comes_a_little_later_is_read(tmp_path):
    fifo = tmp_path / "later"
    os.mkfifo(fifo)

    def feed() -> None:
        import time

        time.sleep(0.5)  # the reader opened it first: it waits for this writer
        with open(fifo, "wb") as f:
            f.write(PROD.read_bytes())

    threading.Thread(target=feed, daemon=True).start()
    r = run("explain", str(WEB), "-c", str(fifo), "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["verdict"]
