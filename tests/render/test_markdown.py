"""`-o markdown` (docs/reports.md): every command's Markdown parses as GitHub tables with the header's
column count on every row, opens with the verdict line, balances its <details> blocks, escapes hostile
names, and stays within its limit with an honest `+N more`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.render.markdown import GITHUB_COMMENT_LIMIT, esc, markdown_text

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


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_hostile_names_escaped(kind: str, documents) -> None:
    """A node and a pod named with Markdown and HTML specials cannot break a table or open an element."""
    doc, _ = documents[kind]
    raw = json.dumps(doc)
    for name in ("general-a-01", "general-c-02", "shop/web-7d9f8b6c5d", "ip-10-0-32-10.us-east-1.compute.internal"):
        raw = raw.replace(name, HOSTILE)
    hostile = json.loads(raw)
    text = markdown_text(kind.removesuffix("-carry-out"), hostile)
    if HOSTILE in raw:
        assert esc(HOSTILE) in text, kind  # whole, escaped
    assert "<script>" not in text
    assert "a|b" not in text
    tables(text)
    assert balanced(text)


def test_escape() -> None:
    assert esc("a|b<script>") == "a\\|b&lt;script&gt;"
    assert esc("`x` *y* _z_ [l](u)") == "\\`x\\` \\*y\\* \\_z\\_ \\[l\\](u)"
    assert esc("two\nlines") == "two lines"
    assert esc("x" * 300) == "x" * 300  # never cut


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
