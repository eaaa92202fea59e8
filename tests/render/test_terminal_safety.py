"""Terminal safety (docs/terminal-safety.md): names, labels, taints and messages from a snapshot reach a
real pseudo-terminal escaped, never as the escape sequences, controls or Rich markup they hold; the
JSON and YAML documents keep the exact strings."""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys

import pytest
import yaml
from rich.text import Text as RichText

from kschedcli.render.jsontext import json_text
from kschedcli.render.richsafe import SafeTable, Text
from kschedcli.render.terminal.layout import make_console
from kschedcli.render.yamltext import yaml_text
from kschedcli.textsafe import EscapingStream, safe_name, safe_text

TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen
CSI = "\x9b"  # a one-byte CSI (C1)
DEL = "\x7f"
MARKUP = "[red]x[/red]"
BIDI = "\u202e"

NODE_A = "node-a" + TITLE + MARKUP
NODE_B = "node-b" + CLEAR + DEL + CSI
NS = "ns" + TITLE
PENDING = "pend" + TITLE + "[bold]x" + CSI + BIDI  # no `/`: a NAMESPACE/NAME argument
RUNNING = "run" + TITLE + MARKUP
TAINT_KEY = "k" + CLEAR
TAINT_VALUE = "v" + TITLE + CSI
LABEL_KEY = "zone" + TITLE
LABEL_VALUE = "z" + CLEAR


def _node(name: str, cpu: str, taints=()) -> dict:
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": "h", LABEL_KEY: LABEL_VALUE}},
        "spec": {"taints": list(taints)},
        "status": {"capacity": alloc, "allocatable": alloc},
    }


def _pod(name: str, cpu: str, spec: dict) -> dict:
    containers = [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {**spec, "containers": containers},
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("evil")
    running = _pod(RUNNING, "500m", {"nodeName": NODE_B})
    running["status"] = {"phase": "Running"}
    pending = _pod(PENDING, "3", {"nodeSelector": {LABEL_KEY: "nomatch" + CLEAR}})
    pending["status"] = {"phase": "Pending"}
    items = [
        _node(NODE_A, "4", [{"key": TAINT_KEY, "value": TAINT_VALUE, "effect": "NoSchedule"}]),
        _node(NODE_B, "1") | {"extra" + CLEAR: {}},
        running,
        pending,
    ]
    snapshot = d / "evil.json"  # YAML carries such characters only as escapes; JSON is simplest
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    template = d / "tpl.json"
    template.write_text(json.dumps(_pod("tpl", "100m", {}) | {"metadata": {"name": "tpl", "namespace": "default"}}))
    bad = d / "bad.json"  # a quantity the loader refuses, quoted in the error line
    bad_items = [_node(NODE_A, "4" + TITLE + CLEAR)]
    bad.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": bad_items}))
    return {"snapshot": str(snapshot), "template": str(template), "bad": str(bad), "dir": d}


def _run_on_pty(args: list[str], tmp_path, term: str, no_color: bool = False) -> tuple[int, bytes]:
    """ksched ARGS with stdout and stderr on a pseudo-terminal: (exit status, every byte it wrote)."""
    master, slave = os.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    env.update(TERM=term, COLUMNS="100", KSCHED_CACHE_DIR=str(tmp_path / "cache"), KSCHED_NO_PROGRESS="1")
    if no_color:
        env["NO_COLOR"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kschedcli", *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:  # a hang: fail rather than wait for ever
                proc.kill()
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    return proc.wait(timeout=120), out


def _commands(f) -> list[list[str]]:
    s = f["snapshot"]
    pod = f"{NS}/{PENDING}"
    return [
        ["explain", pod, "-c", s],
        ["explain", pod, "-c", s, "--node", NODE_A],
        ["explain", pod, "-c", s, "--node", NODE_B],
        ["preempt", pod, "-c", s],
        ["schedule", "-c", s],
        ["schedule", "-c", s, "-o", "wide"],
        ["schedule", "-c", s, "-o", "name"],
        ["-v", "--no-cache", "schedule", "-c", s],  # --verbose: an unknown field named
        ["capacity", f["template"], "-c", s, "--max", "3"],
        ["drain", NODE_B, "-c", s],
        ["drain", NODE_A, "-c", s],
        ["explain", f"{NS}/missing{TITLE}", "-c", s],  # error: no such pod
        ["explain", pod, "-c", s, "--node", "gone" + TITLE],  # error: no such node
        ["explain", pod, "-c", f["bad"]],  # error quoting a value from the snapshot
        ["schedule", "-c", s, "--bogus" + CLEAR],  # usage error
    ]


def _no_injection(out: bytes) -> None:
    for raw in (b"\x1b]", b"\x1b[2J", b"\x07", b"\xc2\x9b", b"\x7f", BIDI.encode(), b"\x1b"):
        assert raw not in out, (raw, out.decode("utf-8", "replace"))


@pytest.mark.parametrize("index", range(15))
def test_nothing_from_the_inputs_acts_on_a_dumb_terminal(files, tmp_path, index):
    """TERM=dumb: Rich writes no escape code of its own, so any ESC at all would come from the inputs."""
    args = _commands(files)[index]
    code, out = _run_on_pty(args, tmp_path, "dumb")
    assert code in (0, 1, 2)
    assert b"Traceback" not in out
    _no_injection(out)
    # what was escaped is shown, readable: ESC as \x1b
    assert b"\\x1b" in out or b"\\x" in out, out.decode()


def test_views_show_the_names_escaped_and_markup_as_written(files, tmp_path):
    code, out = _run_on_pty(["explain", f"{NS}/{PENDING}", "-c", files["snapshot"]], tmp_path, "dumb")
    text = out.decode()
    assert code == 1
    assert "ns\\x1b]0;pwned\\x07/pend\\x1b]0;pwned\\x07[bold]x\\x9b\\u202e" in text
    assert "k\\x1b[2J: v\\x1b]0;pwned\\x07\\x9b" in text  # the taint, in kube-scheduler's message
    assert "node-a\\x1b]0;pwned\\x07[red]x[/red]" in text  # markup printed, not obeyed


def test_colour_output_holds_rich_styling_only(files, tmp_path):
    """With colour, every ESC is Rich's own styling (SGR): no title, no clear screen, no C1 CSI."""
    for args in _commands(files):
        code, out = _run_on_pty(args, tmp_path, "xterm-256color")
        assert b"Traceback" not in out
        unstyled = re.sub(rb"\x1b\[[0-9;]*m", b"", out)
        _no_injection(unstyled)


def test_no_color_output_holds_no_escape_from_the_inputs(files, tmp_path):
    code, out = _run_on_pty(["schedule", "-c", files["snapshot"], "-o", "wide"], tmp_path, "xterm", no_color=True)
    _no_injection(re.sub(rb"\x1b\[[0-9;]*m", b"", out))  # NO_COLOR keeps bold and dim
    assert b"node-b\\x1b[2J\\x7f\\x9b" in out or b"\\x1b]0;pwned" in out


def test_error_line_quotes_the_value_escaped(files, tmp_path):
    code, out = _run_on_pty(["explain", f"{NS}/{PENDING}", "-c", files["bad"]], tmp_path, "dumb")
    assert code == 2
    assert b"\\x1b]0;pwned\\x07\\x1b[2J" in out  # the quantity as given, escaped
    assert out.count(b"\n") == 1


def test_name_output_is_one_escaped_line_per_pod(files, tmp_path):
    code, out = _run_on_pty(["schedule", "-c", files["snapshot"], "-o", "name"], tmp_path, "dumb")
    assert code == 1
    assert out == b"ns\\x1b]0;pwned\\x07/pend\\x1b]0;pwned\\x07[bold]x\\x9b\\u202e\r\n"  # the pty writes \n as \r\n


def _stdout(args: list[str], tmp_path) -> str:
    env = dict(os.environ, KSCHED_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "kschedcli", *args], capture_output=True, env=env, check=False)
    assert r.returncode in (0, 1), r.stderr
    return r.stdout.decode("utf-8")


def test_json_and_yaml_keep_the_exact_strings(files, tmp_path):
    s = files["snapshot"]
    doc = json.loads(_stdout(["explain", f"{NS}/{PENDING}", "-c", s, "-o", "json"], tmp_path))
    assert doc["pod"] == f"{NS}/{PENDING}"
    text = _stdout(["schedule", "-c", s, "-o", "json"], tmp_path)
    assert json.loads(text)["results"][0]["pod"] == f"{NS}/{PENDING}"
    for raw in ("\x1b", "\x07", "\x9b", "\x7f", BIDI):
        assert raw not in text  # as \u escapes: the same string to a JSON reader, inert on a terminal
    text = _stdout(["schedule", "-c", s, "-o", "yaml"], tmp_path)
    assert yaml.safe_load(text)["results"][0]["pod"] == f"{NS}/{PENDING}"
    for raw in ("\x1b", "\x07", "\x9b", "\x7f", BIDI):
        assert raw not in text


# the pieces


def test_safe_text_escapes_controls_and_keeps_valid_text_itself():
    plain = "node-1 ✔ 13× zone\u00a0a"
    assert safe_text(plain) is plain
    assert safe_text("a\nb\tc") == "a\nb\tc"
    assert safe_name("a\nb\tc\r") == "a\\nb\\tc\\r"
    assert safe_text(TITLE + CLEAR + CSI + DEL + BIDI + "\u2028\x00") == (
        "\\x1b]0;pwned\\x07\\x1b[2J\\x9b\\x7f\\u202e\\u2028\\x00"
    )
    assert safe_text("C:\\x1b") == "C:\\x1b"  # a backslash is text
    assert safe_text(safe_text(TITLE)) == safe_text(TITLE)


def test_text_escapes_what_it_is_given_and_keeps_its_styles():
    t = Text("a" + TITLE + "b", style="bold")
    t.append(CSI, style="red")
    t.append_text(RichText("c\x1b", style="green"))
    assert t.plain == "a\\x1b]0;pwned\\x07b\\x9bc\\x1b"
    styled = {t.plain[s.start : s.end]: str(s.style) for s in t.spans}
    assert styled == {"\\x9b": "red", "c\\x1b": "green"}
    spans = Text("x\x1by", spans=[__import__("rich.text").text.Span(1, 3, "red")]).spans
    assert (spans[0].start, spans[0].end) == (1, 6)  # `\x1by`


def test_console_escapes_whatever_reaches_it_and_reads_no_markup():
    buf = io.StringIO()
    console = make_console(True, file=buf, width=60)
    console.print(RichText("raw" + CLEAR))  # a plain rich Text: the console's own guard
    console.print("[red]x[/red]" + TITLE)
    table = SafeTable()
    table.add_column("N" + TITLE)
    table.add_row("r" + CSI)
    console.print(table)
    out = buf.getvalue()
    assert "\x1b" not in out and "\x9b" not in out
    assert "raw\\x1b[2J" in out and "[red]x[/red]\\x1b]0;pwned\\x07" in out and "r\\x9b" in out


def test_escaping_stream():
    buf = io.StringIO()
    EscapingStream(buf).write("ksched: " + NODE_B + "\n")
    assert buf.getvalue() == "ksched: node-b\\x1b[2J\\x7f\\x9b\n"


def test_json_text_and_yaml_text_escape_and_read_back():
    doc = {"a": TITLE, "b": CSI + DEL, "c": BIDI + " é", "d": "nel\x85", "e": "ls\u2028", "f": "plain é"}
    for text, load in ((json_text(doc), json.loads), (yaml_text(doc), yaml.safe_load)):
        assert load(text) == doc
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e\u2028]", text), text
    assert json_text({"a": "plain é"}) == '{\n  "a": "plain é"\n}'
    assert yaml_text({"a": "plain é"}) == "a: plain é\n"


def test_markup_in_a_name_is_printed_not_obeyed(tmp_path):
    """Rich markup in a name (no control character at all) is text: before, a table cell read it."""
    name = "node[red]x[/red]"
    snapshot = tmp_path / "markup.json"
    items = [_node(name, "4"), _pod("p", "100m", {"nodeName": name}) | {"status": {"phase": "Running"}}]
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    code, out = _run_on_pty(["drain", name, "-c", str(snapshot)], tmp_path, "dumb")
    table_row = [ln for ln in out.decode().splitlines() if "not evicted" in ln or "evicted" in ln]
    assert table_row and table_row[0].lstrip().startswith(name), out.decode()


def test_progress_shows_a_file_name_escaped():
    """The progress display (on a terminal, for loads over a second) names the file it reads."""
    from kschedcli.render.progress import RichReporter
    from kschedcli.render.richsafe import SafeConsole

    buf = io.StringIO()
    before = sys.stderr
    reporter = RichReporter(SafeConsole(file=buf, force_terminal=True, width=100))
    with reporter("Reading " + NODE_B + MARKUP, 10, "items") as task:
        reporter.show(task)  # what the one-second timer would do
        sys.stderr.write("warning " + TITLE + "\n")  # written meanwhile: through the display, escaped
        reporter.progress.refresh()
    assert sys.stderr is before
    out = buf.getvalue()
    assert "Reading node-b\\x1b[2J\\x7f\\x9b[red]x[/red]" in out
    assert "warning \\x1b]0;pwned\\x07" in out
    _no_injection(re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out).encode())
