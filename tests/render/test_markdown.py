"""`-o markdown` (docs/reports.md): every command's Markdown parses as GitHub tables with the header's
column count on every row, opens with the verdict line, balances its <details> blocks, escapes hostile
names (Markdown and HTML, and the characters a terminal acts on, as docs/terminal-safety.md writes
them), and stays within its limit with an honest `+N more`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.render.markdown import GITHUB_COMMENT_LIMIT, esc, markdown_text
from kschedcli.textsafe import UNSAFE

FIX = Path(__file__).resolve().parents[2] / "fixtures"
PROD = str(FIX / "prod-cluster.yaml")
EKS = str(FIX / "eks-cluster.yaml")
PODS = FIX / "pods"

COMMANDS = {
    "explain": ["explain", "-c", PROD, "-f", str(PODS / "checkout.yaml")],
    "preempt": ["preempt", "-c", PROD, "-f", str(PODS / "payments.yaml")],
    "schedule": ["schedule", "-c", PROD, "-f", str(PODS / "rollout.yaml")],
    "run": ["run", str(FIX / "scenarios" / "lose-zone-a.yaml")],
    "schedule-carry-out": ["schedule", "-c", PROD, "-f", str(PODS / "rollout.yaml"), "--preemption", "carry-out"],
    "capacity": ["capacity", "-c", PROD, str(PODS / "web.yaml")],
    "drain": ["drain", "-c", PROD, "general-a-01"],
    "diff": ["diff", "-c", PROD, "--against-cluster", str(FIX / "small-cluster.yaml"), str(PODS / "cart.yaml")],
    "sweep": ["sweep", "-c", PROD, "--fail", "zone"],
    "scale-up": ["scale-up", "-c", EKS],
    "scale-down": ["scale-down", "-c", EKS],
}


def cells(line: str) -> list[str]:
    """A table row's cells: split on the `|` no backslash escapes."""
    assert line.startswith("|") and line.endswith("|"), line
    return re.split(r"(?<!\\)\|", line[1:-1])


def tables(text: str) -> list[list[list[str]]]:
    """Every GitHub table in `text` (header, then rows), checked: a separator row of `---` cells under
    the header, the header's column count on every row, a blank line after it."""
    return [rows for rows, _ in cut_tables(text)]


def cut_tables(text: str) -> list[tuple[list[list[str]], int]]:
    """tables(), each with the N of the `+N more` line that follows it (0: none)."""
    lines = text.split("\n")
    found = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("|"):
            header = cells(lines[i])
            sep = cells(lines[i + 1])
            assert len(sep) == len(header) and all(c == "---" for c in sep), (lines[i], lines[i + 1])
            rows = [header]
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                row = cells(lines[i])
                assert len(row) == len(header), f"{len(row)} cells under {len(header)} columns: {lines[i]}"
                rows.append(row)
                i += 1
            assert i == len(lines) or lines[i] == "", "a table ends with a blank line"
            more = re.match(r"\+(\d+) more ", lines[i + 1]) if i + 1 < len(lines) else None
            found.append((rows, int(more.group(1)) if more else 0))
        else:
            i += 1
    return found


def balanced(text: str) -> bool:
    depth = 0
    for tag in re.findall(r"</?details>", text):
        depth += -1 if tag.startswith("</") else 1
        if depth < 0:
            return False
    return depth == 0


def invoke(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "120", "KSCHED_NO_CACHE": "1"})


@pytest.fixture(scope="module")
def documents() -> dict[str, tuple[dict, int]]:
    """Each command's -o json document and exit status."""
    out = {}
    for kind, args in COMMANDS.items():
        r = invoke([*args, "-o", "json"])
        assert r.exit_code in (0, 1), (kind, r.output)
        out[kind] = (json.loads(r.stdout), r.exit_code)
    return out


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_command_markdown(kind: str, documents) -> None:
    doc, code = documents[kind]
    r = invoke([*COMMANDS[kind], "-o", "markdown"])
    assert r.exit_code == code, r.output  # the command's exit status
    text = r.stdout
    assert text == markdown_text(kind.removesuffix("-carry-out"), doc)  # built from the -o json document
    assert text == invoke([*COMMANDS[kind], "-o", "markdown"]).stdout  # deterministic
    first = [line for line in text.split("\n") if line and not line.startswith("#")][0]
    assert first.startswith("**Verdict:** "), first
    assert tables(text), "at least one table"
    assert balanced(text)
    assert len(text) <= GITHUB_COMMENT_LIMIT
    assert "(the full report: `-o json`)" not in text  # nothing cut at the full limit


def test_verdicts_follow_the_documents(documents) -> None:
    assert "is **schedulable** on **general-c-02**" in markdown_text("explain", documents["explain"][0])
    assert "needs **preemption**" in markdown_text("preempt", documents["preempt"][0])
    assert "**Verdict:** 2 of 5 pod(s) not schedulable" in markdown_text("schedule", documents["schedule"][0])
    assert "**Verdict:** **not** drainable" in markdown_text("drain", documents["drain"][0])
    assert "**Verdict:** 1 pod(s) differ" in markdown_text("diff", documents["diff"][0])
    assert "**Verdict:** not zone-loss safe: 3 of 3" in markdown_text("sweep", documents["sweep"][0])
    carried = markdown_text("schedule", documents["schedule-carry-out"][0])
    assert "Preemption carried out: 1 pod(s) evicted" in carried
    assert "| batch/etl-adhoc-024 | general-c-02 | payments/payments-worker-7f6d5c4b3-9xk2p |" in carried


HOSTILE = "a|b<script>`*_[x]"
# what a terminal acts on: set the title, clear the screen, a one-byte CSI, a right-to-left override,
# a line separator, NEL and DEL; with Markdown specials and text that is only non-ASCII
CONTROLS = "a|b\x1b]0;pwned\x07\x1b[2J\x9b6n\u202eevil\u2028\x85\x7f<i>é東京"


def unsafe(text: str) -> list[str]:
    """The characters of text that a terminal would act on (textsafe's list; newline and tab are not)."""
    return UNSAFE.findall(text)


@pytest.mark.parametrize("hostile", [HOSTILE, CONTROLS], ids=["markup", "controls"])
@pytest.mark.parametrize("kind", list(COMMANDS))
def test_hostile_names_escaped(kind: str, hostile: str, documents) -> None:
    """A node and a pod named with Markdown and HTML specials cannot break a table or open an element;
    named with terminal controls, they reach the Markdown as visible escapes."""
    doc, _ = documents[kind]
    raw = json.dumps(doc)
    names = (
        "general-a-01",
        "general-c-02",
        "shop/web-7d9f8b6c5d",
        "shop/cart-64d8f7b9c-p4t7w",
        "ip-10-0-32-10.us-east-1.compute.internal",
        "ip-10-0-32-1.us-east-1.compute.internal",
    )
    assert any(name in raw for name in names), kind  # every document names one of them
    for name in names:
        raw = raw.replace(name, json.dumps(hostile)[1:-1])
    text = markdown_text(kind.removesuffix("-carry-out"), json.loads(raw))
    assert esc(hostile) in text, kind  # whole, escaped
    assert "<script>" not in text and "<i>" not in text
    assert "a|b" not in text
    assert unsafe(text) == [], kind
    tables(text)
    assert balanced(text)


def test_escape() -> None:
    assert esc("a|b<script>") == "a\\|b&lt;script&gt;"
    assert esc("`x` *y* _z_ [l](u)") == "\\`x\\` \\*y\\* \\_z\\_ \\[l\\](u)"
    assert esc("two\nlines") == "two lines"
    assert esc("x" * 300) == "x" * 300  # never cut


def test_escape_writes_controls_as_the_other_views_do() -> None:
    # the escape is itself escaped for Markdown: GitHub shows `\x1b`, as the table view prints it
    assert esc("n1\x1bc\x9b2J\x1b7\u202eevil") == "n1\\\\x1bc\\\\x9b2J\\\\x1b7\\\\u202eevil"
    assert esc("k\x1b[31m|v") == "k\\\\x1b\\[31m\\|v"  # Markdown's own escapes kept
    # a line separator, NEL, CR, VT, FF are shown, not taken as line breaks; a newline still is one
    assert esc("a\u2028b\x85c\rd\x0be\x0cf\ng") == "a\\\\u2028b\\\\x85c\\\\rd\\\\x0be\\\\x0cf g"
    # ordinary text is unchanged, accents and CJK included
    assert esc("nœud-東京-ü 3×") == "nœud-東京-ü 3×"
    assert esc("") == "" and esc(None) == ""


def test_a_control_in_a_field_not_escaped_as_markdown_is_escaped_all_the_same() -> None:
    """assemble, which every view goes through, escapes what the views put in without esc (numbers,
    counts): nothing from a document reaches the output raw, whatever the view forgot."""
    doc = {
        "pod": "ns/p",
        "schedulable": True,
        "verdict": "schedulable",
        "selectedNode": "n1",
        "selectedScore": "7\x1b]0;pwned\x07",  # a number in a real document
        "nodeCount": "\x9b2J",
        "feasibleNodeCount": "1\u202e",
        "nodeGroups": [{"nodes": ["n1"], "count": 1, "feasible": True}],
    }
    text = markdown_text("explain", doc)
    assert unsafe(text) == []
    assert "(score 7\\x1b]0;pwned\\x07)" in text
    assert "Nodes: \\x9b2J, feasible: 1\\u202e;" in text


@pytest.mark.parametrize("kind", ["capacity", "scale-down", "explain", "sweep", "schedule"])
@pytest.mark.parametrize("share", [0.5, 0.8])
def test_small_limit_cuts_honestly(kind: str, share: float, documents) -> None:
    doc, _ = documents[kind]
    full = markdown_text(kind, doc)
    limit = int(len(full) * share)
    text = markdown_text(kind, doc, limit=limit)
    assert len(text) <= limit
    assert balanced(text)
    if re.search(r"^\+\d+ more lines ", text, re.M):  # the prose alone was too long: whole lines cut
        assert text.split("\n")[:3] == full.split("\n")[:3]
        return
    cut = cut_tables(text)
    whole = tables(full)
    assert len(cut) == len(whole)  # a cut table keeps its header
    assert any(n for _, n in cut)
    # the commands with an HTML report point at it first
    pointer = "`--report FILE.html` or `-o json`" if kind in ("capacity", "explain", "sweep") else "`-o json`"
    assert re.search(rf"^\+\d+ more .* \(the full report: {re.escape(pointer)}\)$", text, re.M)
    for (rows, n), full_rows in zip(cut, whole, strict=True):
        assert rows[0] == full_rows[0]
        assert len(rows) - 1 + n == len(full_rows) - 1  # the rows shown plus N: the whole table
        assert rows == full_rows[: len(rows)]  # the first rows kept, in order
    assert text.split("\n")[0] == full.split("\n")[0]  # the summary comes first and stays
    assert "**Verdict:** " in text


def test_cut_count_is_exact() -> None:
    doc = {"removable": [f"node-{i:03}" for i in range(200)], "nodes": [], "threshold": 0.5}
    text = markdown_text("scale-down", doc, limit=1000)
    assert len(text) <= 1000
    [table] = tables(text)
    [n] = re.findall(r"^\+(\d+) more nodes", text, re.M)
    assert len(table) - 1 + int(n) == 200
    assert table[-1] == [f" node-{len(table) - 2:03} "]  # the first rows kept, in order


def test_the_reported_kinds_are_the_html_views() -> None:
    from kschedcli.render.html.views import VIEWS
    from kschedcli.render.markdown import REPORTED

    assert set(VIEWS) == REPORTED


# -- every command with -o markdown, over a cluster whose names hold what a terminal acts on ---------

TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen
CSI = "\x9b6n"  # a one-byte CSI (C1)
BIDI = "\u202e"  # right-to-left override
NODE_A = "node-a" + TITLE + "|x"  # tainted
NODE_B = "node-b" + CLEAR + CSI + BIDI
NODE_C = "nœud-東京-c"  # ordinary text: printed as it is
NS = "ns" + TITLE
OWNER = "web" + CLEAR + BIDI
PENDING = "pend" + CSI + BIDI
REASON = "busy" + TITLE + CSI  # an HTTP extender's message


def _hostile_node(name: str, zone: str, taints: list | None = None) -> dict:
    alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    labels = {
        "kubernetes.io/hostname": "h-" + zone,
        "topology.kubernetes.io/zone": zone,
        "node.kubernetes.io/instance-type": "m5.xlarge",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints or []},
        "status": {"capacity": alloc, "allocatable": alloc},
    }


def _hostile_pod(name: str, cpu: str, node: str | None) -> dict:
    meta: dict = {"name": name, "namespace": NS, "labels": {"app": "web"}, "uid": "uid-" + name}
    spec: dict = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if node is not None:
        spec["nodeName"] = node
        owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": OWNER, "uid": "u", "controller": True}
        meta["ownerReferences"] = [owner]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if node is not None else "Pending"},
    }


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("hostile-md")
    taint = {"key": "k" + CLEAR, "value": "v" + BIDI, "effect": "NoSchedule"}
    items = [
        _hostile_node(NODE_A, "z1", [taint]),
        _hostile_node(NODE_B, "z2"),
        _hostile_node(NODE_C, "z3"),
        _hostile_pod("run-b" + TITLE, "1", NODE_B),
        _hostile_pod("run-c" + TITLE, "1", NODE_C),
        _hostile_pod(PENDING, "3500m", None),
    ]
    snapshot = d / "cluster.json"  # YAML carries such characters only as escapes; JSON is simplest
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    template = d / "tpl.json"
    template.write_text(json.dumps(_hostile_pod("tpl", "500m", None) | {"metadata": {"name": "tpl"}}))
    scenario = d / "scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "apiVersion": "ksched.io/v1alpha1",
                "kind": "Scenario",
                "metadata": {"name": "lose" + TITLE},
                "cluster": [str(snapshot)],
                "edits": [{"cordon": NODE_C}],
            }
        )
    )
    return {"snapshot": str(snapshot), "template": str(template), "scenario": str(scenario)}


def _hostile_commands(f: dict[str, str]) -> dict[str, tuple[list[str], list[str]]]:
    """Each command with -o markdown over the hostile cluster, and the names its Markdown shows."""
    s = f["snapshot"]
    pod = f"{NS}/{PENDING}"
    nodes = [NODE_A, NODE_B, NODE_C]
    return {
        "explain": (["explain", pod, "-c", s], [NS, PENDING, "k" + CLEAR, *nodes]),
        "preempt": (["preempt", pod, "-c", s], [NS, PENDING, "k" + CLEAR, *nodes]),
        "schedule": (["schedule", "-c", s], [NS, PENDING, "k" + CLEAR]),
        "run": (["run", f["scenario"]], [NS, PENDING, NODE_C]),
        "capacity": (["capacity", f["template"], "-c", s, "--max", "3"], [NODE_B, NODE_C]),
        "drain": (["drain", NODE_B, "-c", s], [NS, "run-b" + TITLE, NODE_B, NODE_C]),
        "diff": (["diff", "-c", s, "--cordon", NODE_B], [NODE_B]),
        "sweep": (["sweep", "-c", s, "--fail", "node", "--workers", "1"], [NS, OWNER, *nodes]),
        "scale-up": (["scale-up", "-c", s], nodes),
        "scale-down": (["scale-down", "-c", s], [NS, *nodes]),
    }


@pytest.mark.parametrize("kind", list(_hostile_commands({"snapshot": "", "template": "", "scenario": ""})))
def test_markdown_of_every_command_escapes_what_a_terminal_acts_on(kind: str, hostile_files) -> None:
    """Node, pod, namespace, owner and taint names holding ESC sequences, a C1 CSI and a bidirectional
    override reach the Markdown as the visible escapes the other views print (`\\x1b`), Markdown's own
    escaping (`\\|`) kept; non-ASCII text stays as it is."""
    args, names = _hostile_commands(hostile_files)[kind]
    r = invoke([*args, "-o", "markdown"])
    assert r.exit_code in (0, 1), r.output
    text = r.stdout
    assert unsafe(text) == [], (kind, text)
    for name in names:
        assert esc(name) in text, (kind, name, text)
    if NODE_A in names:
        assert "node-a\\\\x1b\\]0;pwned\\\\x07\\|x |" in text  # ends its cell: the `|` in it escaped
    if NODE_C in names:
        assert NODE_C in text  # accents and CJK as they are
    assert "\\\\x1b" in text
    doc = json.loads(invoke([*args, "-o", "json"]).stdout)
    assert text == markdown_text(kind, doc)  # from the document, which keeps the exact strings
    tables(text)
    assert balanced(text)


def test_markdown_escapes_an_extender_s_messages(hostile_files, tmp_path) -> None:
    """An HTTP extender's failure message for a node and its error, in explain's and schedule's Markdown."""
    from extender_server import serve

    ext = serve({"filter": lambda a: {"NodeNames": [], "FailedNodes": {n: REASON for n in a["NodeNames"]}}})
    failing = serve({"filter": lambda a: {"Error": "boom" + CLEAR + BIDI}})
    try:
        for server, says in ((ext, esc(REASON)), (failing, esc("boom" + CLEAR + BIDI))):
            cfg = tmp_path / "ext.yaml"
            cfg.write_text(
                "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders:\n"
                f"- urlPrefix: {server.url}\n  filterVerb: filter\n  nodeCacheCapable: true\n"
            )
            for cmd in (["explain", str(PODS / "web.yaml")], ["schedule", str(PODS / "web.yaml")]):
                args = [*cmd, "-c", str(FIX / "small-cluster.yaml"), "--config", str(cfg), "--no-cache"]
                r = invoke([*args, "-o", "markdown"])
                assert r.exit_code in (0, 1), r.output
                assert unsafe(r.stdout) == [], r.stdout
                assert says in r.stdout, (says, r.stdout)
    finally:
        ext.close()
        failing.close()
