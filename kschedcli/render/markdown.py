"""`-o markdown`: an answer's JSON document as GitHub-flavoured Markdown, for pull-request comments
and `$GITHUB_STEP_SUMMARY` (docs/reports.md).

Each view opens with the verdict line (`**Verdict:** ...`), the counts and the worst items, then the
details in `<details>` blocks. The whole stays within `limit` characters (GitHub's comment limit,
65,536, by default): rows are dropped from the longest tables, details first, and every cut table
says `+N more` and points at `-o json`. Names are escaped, never cut: as Markdown (esc), and the
characters a terminal acts on written as visible escapes (textsafe), in esc and again over the whole
text in assemble, which every view goes through. Reads documents only: one function per document kind
(the `to_dict()` of the Session's answers)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..textsafe import safe_text

GITHUB_COMMENT_LIMIT = 65_536

JSON_POINTER = "the full report: `-o json`"
# the commands that also write an HTML report (--report, render/html/) point at it first
REPORT_POINTER = "the full report: `--report FILE.html` or `-o json`"

# backslash first; `&` before the entities that use it
_ESCAPES = (
    ("\\", "\\\\"),
    ("&", "&amp;"),
    ("<", "&lt;"),
    (">", "&gt;"),
    ("|", "\\|"),
    ("`", "\\`"),
    ("*", "\\*"),
    ("_", "\\_"),
    ("[", "\\["),
    ("]", "\\]"),
    ("~", "\\~"),  # GitHub's strikethrough (~x~)
    ("$", "\\$"),  # GitHub's math ($x$)
)


def esc(value: Any) -> str:
    """A name or message as Markdown text: whole, on one line, nothing in it taken as Markdown or HTML
    (a `|` cannot end a table cell, `<script>` is text), and no character a terminal acts on: ESC, the
    C0 and C1 controls, the bidirectional controls are written as the other views write them (`\\x1b`,
    textsafe.safe_text) before the Markdown escaping, so that the rendered text reads the same. Line
    breaks become spaces (after safe_text only `\\n` is left to break a line)."""
    text = "" if value is None else str(value)
    text = " ".join(safe_text(text).splitlines())
    for raw, escaped in _ESCAPES:
        text = text.replace(raw, escaped)
    return text


def _html(value: Any) -> str:
    """Text inside an HTML element (`<summary>`): the HTML specials as entities."""
    return esc(value)


@dataclass
class Table:
    """A GitHub table; `keep` rows of it are shown (all when None), the rest counted as `+N more`."""

    headers: Sequence[str]
    rows: Sequence[Sequence[Any]]
    what: str = "rows"
    keep: int | None = None

    def shown(self) -> int:
        return len(self.rows) if self.keep is None else min(self.keep, len(self.rows))

    def lines(self, pointer: str = JSON_POINTER) -> list[str]:
        if not self.rows:
            return []
        out = ["| " + " | ".join(self.headers) + " |", "|" + "---|" * len(self.headers)]
        for row in self.rows[: self.shown()]:
            out.append("| " + " | ".join(str(c) for c in row) + " |")
        cut = len(self.rows) - self.shown()
        if cut:
            out += ["", f"+{cut} more {self.what} ({pointer})"]
        return out


@dataclass
class Details:
    summary: str
    blocks: list[Block] = field(default_factory=list)


Block = str | Table | Details


def _lines(blocks: Iterable[Block], pointer: str = JSON_POINTER) -> list[str]:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Table):
            lines = b.lines(pointer)
            if lines:
                out += [*lines, ""]
        elif isinstance(b, Details):
            inner = _lines(b.blocks, pointer)
            if inner:
                out += ["<details>", f"<summary>{b.summary}</summary>", "", *inner, "</details>", ""]
        else:
            out += [b, ""]
    return out


def _tables(blocks: Iterable[Block], depth: int = 0) -> list[tuple[int, Table]]:
    found: list[tuple[int, Table]] = []
    for b in blocks:
        if isinstance(b, Table):
            found.append((depth, b))
        elif isinstance(b, Details):
            found += _tables(b.blocks, depth + 1)
    return found


def assemble(blocks: list[Block], limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """The blocks as Markdown of at most `limit` characters: while too long, the table with the most
    rows shown (inside <details> before the summary's, the later on a tie) shows half as many. Every
    cut says how much went and where the whole is (`pointer`)."""

    def text() -> str:
        # the one way out of every view: whatever did not go through esc (a number, a header) is
        # escaped here too, before the length is measured
        return safe_text("\n".join(_lines(blocks, pointer)).rstrip("\n") + "\n")

    out = text()
    tables = _tables(blocks)
    while len(out) > limit:
        candidates = [(t.shown() > 0, depth > 0, t.shown(), i) for i, (depth, t) in enumerate(tables)]
        if not candidates or not max(candidates)[0]:
            break
        _, _, shown, i = max(candidates)
        tables[i][1].keep = shown // 2
        out = text()
    if len(out) > limit:  # the prose alone is too long: whole lines go, and say how many
        lines = out.splitlines()
        kept = len(lines)
        while kept > 0 and len(_cut_lines(lines, kept, pointer)) > limit:
            kept -= 1
        out = _cut_lines(lines, kept, pointer)
    return out


def _cut_lines(lines: list[str], kept: int, pointer: str) -> str:
    """The first `kept` lines, the count of the others, and the </details> the cut left open."""
    head = lines[:kept]
    opened = sum(line == "<details>" for line in head) - sum(line == "</details>" for line in head)
    note = f"+{len(lines) - kept} more lines ({pointer})"
    return "\n".join([*head, "", note, *["</details>"] * opened]) + "\n"


def _code(value: Any) -> str:
    return f"**{esc(value)}**" if value else "-"


def _names(values: Iterable[Any]) -> str:
    return ", ".join(esc(v) for v in values) or "-"


def _release(doc: dict) -> str:
    if not doc.get("kubernetesVersion"):
        return ""
    chosen = doc.get("kubernetesVersionChosenBy") or {}
    line = f"kube-scheduler {esc(doc.get('kubernetesVersion', ''))}"
    if chosen.get("reason"):
        line += f" ({esc(chosen['reason'])})"
    return f"<sub>ksched {esc(doc.get('kschedVersion', ''))}, {line}</sub>"


def _verdict(text: str) -> str:
    return f"**Verdict:** {text}"


# -- explain / preempt -------------------------------------------------------------------------


def _failure(ff: dict | None) -> str:
    if not ff:
        return "-"
    reasons = "; ".join(esc(r) for r in ff.get("reasons") or [])
    return f"{esc(ff.get('plugin'))}: {reasons}" if reasons else esc(ff.get("plugin"))


def _explain_blocks(doc: dict) -> list[Block]:
    pod = esc(doc.get("pod"))
    verdict = doc.get("verdict", "")
    if doc.get("schedulable"):
        what = f"{pod} is **{esc(verdict)}** on {_code(doc.get('selectedNode'))}"
        if doc.get("selectedScore") is not None:
            what += f" (score {doc['selectedScore']})"
    else:
        what = f"{pod} needs **preemption**" if verdict == "preemption" else f"{pod} is **{esc(verdict)}**"
        nominated = (doc.get("preemption") or {}).get("nominatedNode")
        if nominated:
            what += f"; preemption would nominate {_code(nominated)}"
    feasible = doc.get("feasibleNodes")
    nfeasible = len(feasible) if isinstance(feasible, list) else doc.get("feasibleNodeCount", 0)
    blocks: list[Block] = [
        f"### ksched: {pod}",
        _verdict(what),
        f"Nodes: {doc.get('nodeCount', 0)}, feasible: {nfeasible}; "
        f"failing plugins: {_names(doc.get('failingPlugins') or [])}",
    ]
    if doc.get("message"):
        blocks.append(f"> {esc(doc['message'])}")
    groups = sorted(doc.get("nodeGroups") or [], key=lambda g: (g.get("feasible", False), -g.get("count", 0)))
    blocks.append(
        Table(
            ["Nodes", "Count", "Feasible", "First failure"],
            [
                [
                    _names(g.get("nodes") or []),
                    g.get("count", 0),
                    "yes" if g.get("feasible") else "no",
                    _failure(g.get("firstFailure")),
                ]
                for g in groups
            ],
            what="node groups",
        )
    )
    pre = doc.get("preemption")
    if pre:
        cands = pre.get("candidates") or []
        rows = [
            [
                esc(c.get("node")),
                _names(c.get("victims") or []),
                c.get("pdbViolations", 0),
                esc(c.get("lostOn") or "chosen"),
            ]
            for c in cands
        ]
        blocks.append(
            Details(
                f"Preemption: {len(cands)} candidate node(s), victims on the nominated node: "
                f"{len(pre.get('victims') or [])}",
                [
                    *([f"> {esc(pre['message'])}"] if pre.get("message") else []),
                    Table(["Node", "Victims", "PDB violations", "Lost on"], rows, what="candidates"),
                ],
            )
        )
    filters = doc.get("filters")
    if isinstance(filters, dict) and filters:
        rows = [[esc(n), _failure(v.get("firstFailure"))] for n, v in sorted(filters.items())]
        blocks.append(Details(f"Filters: {len(rows)} node(s)", [Table(["Node", "First failure"], rows, what="nodes")]))
    scores = doc.get("scores")
    if isinstance(scores, dict) and scores:

        def total(v: Any) -> Any:
            return v.get("total", "") if isinstance(v, dict) else v

        ranked = sorted(scores.items(), key=lambda kv: (-(total(kv[1]) or 0), kv[0]))
        rows = [[esc(n), total(v)] for n, v in ranked]
        blocks.append(Details(f"Scores: {len(rows)} feasible node(s)", [Table(["Node", "Score"], rows, what="nodes")]))
    return blocks


def explanation_markdown(doc: dict, limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """`explain -o markdown` and `preempt -o markdown` (Explanation.to_dict())."""
    return assemble([*_explain_blocks(doc), _release(doc)], limit, pointer)


# -- schedule / run ----------------------------------------------------------------------------


def schedule_run_markdown(doc: dict, limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """`schedule -o markdown` and `run -o markdown` (ScheduleRun.to_dict())."""
    results = doc.get("results") or []
    counts: dict[str, int] = {}
    for r in results:
        counts[r.get("verdict", "")] = counts.get(r.get("verdict", ""), 0) + 1
    placed = counts.get("schedulable", 0)
    verdict = (
        f"all {len(results)} pod(s) schedulable"
        if placed == len(results)
        else f"{len(results) - placed} of {len(results)} pod(s) not schedulable"
    )
    tally = ", ".join(f"{esc(v)}: {n}" for v, n in sorted(counts.items())) or "no pods"
    worst = [r for r in results if r.get("verdict") != "schedulable"]
    blocks: list[Block] = ["### ksched schedule", _verdict(verdict), tally]
    edits = doc.get("edits") or []
    if edits:
        blocks.append("Cluster edits: " + "; ".join(f"{esc(e.get('flag'))} {esc(e.get('summary'))}" for e in edits))
    blocks.append(
        Table(
            ["Pod", "Verdict", "Message"],
            [[esc(r.get("pod")), esc(r.get("verdict")), esc(r.get("message"))] for r in worst],
            what="pods not schedulable",
        )
    )
    rows = [
        [esc(r.get("pod")), esc(r.get("verdict")), esc(r.get("selectedNode") or "-"), r.get("selectedScore", "")]
        for r in results
    ]
    blocks.append(
        Details(f"Every pod: {len(results)}", [Table(["Pod", "Verdict", "Node", "Score"], rows, what="pods")])
    )
    if "evictions" in doc:  # --preemption carry-out
        evictions = doc.get("evictions") or []
        placements = doc.get("placements") or []
        blocks.insert(3, f"Preemption carried out: {len(evictions)} pod(s) evicted, {len(placements)} placed")
        rows = [[esc(e.get("pod")), esc(e.get("node")), esc(e.get("preemptor"))] for e in evictions]
        blocks.append(Details(f"Evictions: {len(evictions)}", [Table(["Pod", "Node", "Preemptor"], rows, what="pods")]))
        rows = [[esc(p.get("pod")), esc(p.get("node") or "-"), p.get("attempts", "")] for p in placements]
        blocks.append(
            Details(f"Placements: {len(placements)}", [Table(["Pod", "Node", "Attempts"], rows, what="pods")])
        )
    workloads = doc.get("workloads") or []
    if workloads:
        rows = [[esc(w.get("workload") or w.get("name")), esc(_short(w))] for w in workloads]
        blocks.append(Details(f"Workloads: {len(workloads)}", [Table(["Workload", "Summary"], rows, what="workloads")]))
    return assemble([*blocks, _release(doc)], limit, pointer)


def _short(d: dict) -> str:
    """The scalar fields of a summary row, `key: value` joined (its lists counted)."""
    parts = []
    for k, v in d.items():
        if k in ("workload", "name"):
            continue
        parts.append(f"{k}: {len(v)}" if isinstance(v, list | dict) else f"{k}: {v}")
    return ", ".join(parts)


# -- capacity ----------------------------------------------------------------------------------


def capacity_markdown(doc: dict, limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """`capacity -o markdown` (Capacity.to_dict())."""
    per = doc.get("perTemplate") or []
    blocks: list[Block] = [
        "### ksched capacity",
        _verdict(f"{doc.get('replicas', 0)} more cop(ies) fit" + (f" (max {doc['max']})" if doc.get("max") else "")),
        Table(
            ["Template", "Source", "Copies"],
            [[esc(t.get("template")), esc(t.get("source")), t.get("replicas", 0)] for t in per],
            what="templates",
        ),
    ]
    if doc.get("stopMessage"):
        blocks.append(f"Stopped: {esc(doc['stopMessage'])}")
    per_node = doc.get("perNode") or {}
    rows = [[esc(n), c] for n, c in sorted(per_node.items(), key=lambda kv: (-kv[1], kv[0]))]
    blocks.append(Details(f"Per node: {len(rows)} node(s)", [Table(["Node", "Copies"], rows, what="nodes")]))
    for label, values in sorted((doc.get("perLabel") or {}).items()):
        rows = [[esc(v), c] for v, c in sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))]
        blocks.append(Details(f"Per {_html(label)}", [Table([esc(label), "Copies"], rows, what="values")]))
    return assemble([*blocks, _release(doc)], limit, pointer)


# -- drain -------------------------------------------------------------------------------------


def drain_markdown(doc: dict, limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """`drain -o markdown` (Drain.to_dict())."""
    d = doc.get("drain") or {}
    nodes = d.get("nodes") or []
    evicted = d.get("evicted") or []
    stuck = [e for e in evicted if e.get("verdict") != "schedulable"]
    ok = d.get("drainable")
    blocks: list[Block] = [
        "### ksched drain",
        _verdict(
            ("drainable" if ok else "**not** drainable")
            + f": {sum(1 for n in nodes if n.get('drainable'))} of {len(nodes)} node(s) drainable, "
            f"{len(evicted)} pod(s) evicted, {len(stuck)} without a node"
        ),
        Table(
            ["Node", "Drainable", "Problems"],
            [
                [esc(n.get("node")), "yes" if n.get("drainable") else "no", len(n.get("problems") or [])]
                for n in sorted(nodes, key=lambda n: (bool(n.get("drainable")), n.get("node", "")))
            ],
            what="nodes",
        ),
    ]
    problems = [[esc(n.get("node")), esc(p)] for n in nodes for p in n.get("problems") or []]
    blocks.append(Details(f"Problems: {len(problems)}", [Table(["Node", "Problem"], problems, what="problems")]))
    rows = [
        [
            esc(e.get("pod")),
            esc(e.get("fromNode")),
            esc(e.get("verdict")),
            esc(e.get("node") or "-"),
            esc(e.get("message")),
        ]
        for e in sorted(evicted, key=lambda e: (e.get("verdict") == "schedulable", e.get("pod", "")))
    ]
    blocks.append(
        Details(
            f"Evicted pods: {len(evicted)}", [Table(["Pod", "From", "Verdict", "Node", "Message"], rows, what="pods")]
        )
    )
    return assemble([*blocks, _release(doc)], limit, pointer)


# -- diff --------------------------------------------------------------------------------------


def diff_markdown(doc: dict, limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """`diff -o markdown` (Diff.to_dict())."""
    d = doc.get("diff") or {}
    changes = d.get("changes") or []
    a, b = d.get("a") or {}, d.get("b") or {}
    keys = ["nodes", "pods", "scheduled", "needPreemption", "unschedulable", "nodesUsed", "nodesReceivingPods"]
    blocks: list[Block] = [
        "### ksched diff",
        _verdict("the same in both worlds" if d.get("same") else f"{len(changes)} pod(s) differ"),
        f"A: {esc(a.get('world'))}  \nB: {esc(b.get('world'))}",
        Table(["", "A", "B"], [[k, a.get(k, ""), b.get(k, "")] for k in keys], what="rows"),
    ]

    def side(x: dict) -> str:
        return f"{esc(x.get('verdict'))} {esc(x.get('node') or '')}".strip()

    rows = [
        [
            esc(c.get("pod")),
            side(c.get("a") or {}),
            side(c.get("b") or {}),
            esc((c.get("b") or {}).get("message") or ""),
        ]
        for c in changes
    ]
    blocks.append(Details(f"Changes: {len(changes)}", [Table(["Pod", "A", "B", "Message in B"], rows, what="pods")]))
    return assemble([*blocks, _release(doc)], limit, pointer)


# -- sweep -------------------------------------------------------------------------------------


def sweep_markdown(doc: dict, limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """`sweep -o markdown` (Sweep.to_dict())."""
    s = doc.get("summary") or {}
    scenarios = doc.get("scenarios") or []
    blocks: list[Block] = [
        "### ksched sweep",
        _verdict(
            f"{esc(s.get('verdict'))}: {s.get('failing', 0)} of {s.get('scenarios', len(scenarios))} scenario(s) fail"
        ),
    ]
    exposure = s.get("exposure") or []
    blocks.append(
        Table(
            ["Workload", "Running", "Down", "Lost after rescheduling", "Scenario"],
            [
                [
                    esc(e.get("workload")),
                    e.get("running", ""),
                    e.get("down", ""),
                    e.get("lostAfterRescheduling", ""),
                    esc(e.get("scenario")),
                ]
                for e in exposure
            ],
            what="workloads",
        )
    )
    if s.get("exposureOmitted"):
        blocks.append(f"+{s['exposureOmitted']} more workloads ({pointer})")
    rows = [
        [
            esc(f"{sc.get('family', '')} {sc.get('name', '')}".strip()),
            "yes" if sc.get("ok") else "no",
            sc.get("podsOnFailedNodes", ""),
            sc.get("recreated", ""),
            len(sc.get("pending") or []),
        ]
        for sc in sorted(scenarios, key=lambda sc: (bool(sc.get("ok")), -len(sc.get("pending") or [])))
    ]
    blocks.append(
        Details(
            f"Scenarios: {len(scenarios)}",
            [Table(["Scenario", "OK", "Pods on failed nodes", "Recreated", "Pending"], rows, what="scenarios")],
        )
    )
    pending = [
        [esc(f"{sc.get('family', '')} {sc.get('name', '')}".strip()), esc(p.get("pod")), esc(p.get("reason"))]
        for sc in scenarios
        for p in sc.get("pending") or []
    ]
    blocks.append(
        Details(f"Pending pods: {len(pending)}", [Table(["Scenario", "Pod", "Reason"], pending, what="pods")])
    )
    return assemble([*blocks, _release(doc)], limit, pointer)


# -- scale-up / scale-down ---------------------------------------------------------------------


def scale_up_markdown(doc: dict, limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """`scale-up -o markdown` (ScaleUp.to_dict())."""
    pending = doc.get("pending") or []
    fits = doc.get("fitsExistingNodes") or []
    unhelped = doc.get("unhelped") or []
    expanders = doc.get("expanders") or {}
    best = next(iter(expanders.values()), None) or []
    verdict = (
        f"{len(pending)} pending pod(s) need new nodes" + (f"; first choice {_code(best[0])}" if best else "")
        if pending
        else "no pod needs a new node"
    )
    blocks: list[Block] = [
        "### ksched scale-up",
        _verdict(verdict),
        f"Fit existing nodes: {len(fits)}; need a scale-up: {len(pending)}; no group helps: {len(unhelped)}",
        Table(
            ["Expander", "Choice", "Why"],
            [
                [esc(name), _names((groups or [])[:1]), esc((doc.get("expanderReasons") or {}).get(name, ""))]
                for name, groups in expanders.items()
            ],
            what="expanders",
        ),
    ]
    rows = [
        [esc(u.get("pod") if isinstance(u, dict) else u), esc(_short(u) if isinstance(u, dict) else "")]
        for u in unhelped
    ]
    blocks.append(Details(f"No node group helps: {len(unhelped)}", [Table(["Pod", "Why"], rows, what="pods")]))
    groups = doc.get("nodeGroups") or []
    rows = [
        [
            esc(g.get("name")),
            g.get("currentSize", ""),
            g.get("maxSize") if g.get("maxSize") is not None else "-",
            esc(g.get("templateNode")),
        ]
        for g in groups
    ]
    blocks.append(
        Details(f"Node groups: {len(groups)}", [Table(["Group", "Size", "Max", "Template node"], rows, what="groups")])
    )
    rows = [[esc(p.get("pod")), esc(p.get("node"))] for p in doc.get("placements") or []]
    blocks.append(Details(f"Placed on existing nodes: {len(rows)}", [Table(["Pod", "Node"], rows, what="pods")]))
    return assemble([*blocks, _release(doc)], limit, pointer)


def scale_down_markdown(doc: dict, limit: int = GITHUB_COMMENT_LIMIT, pointer: str = JSON_POINTER) -> str:
    """`scale-down -o markdown` (ScaleDown.to_dict())."""
    nodes = doc.get("nodes") or []
    removable = doc.get("removable") or []
    blocks: list[Block] = [
        "### ksched scale-down",
        _verdict(f"{len(removable)} of {len(nodes)} node(s) removable (threshold {doc.get('threshold', '')})"),
        Table(["Removable node"], [[esc(n)] for n in removable], what="nodes"),
    ]
    rows = [
        [
            esc(n.get("node")),
            esc(n.get("nodeGroup")),
            f"{100 * (n.get('utilization') or 0):.1f}% {esc(n.get('resource') or '')}".strip(),
            "yes" if n.get("removable") else "no",
            esc(n.get("reason")),
        ]
        for n in nodes
    ]
    blocks.append(
        Details(
            f"Every node: {len(nodes)}",
            [Table(["Node", "Group", "Utilization", "Removable", "Why"], rows, what="nodes")],
        )
    )
    return assemble([*blocks, _release(doc)], limit, pointer)


RENDERERS: dict[str, Callable[..., str]] = {
    "explain": explanation_markdown,
    "preempt": explanation_markdown,
    "schedule": schedule_run_markdown,
    "run": schedule_run_markdown,
    "capacity": capacity_markdown,
    "drain": drain_markdown,
    "diff": diff_markdown,
    "sweep": sweep_markdown,
    "scale-up": scale_up_markdown,
    "scale-down": scale_down_markdown,
}


# the commands with --report (render/html/views.py's VIEWS; tests/render/test_markdown.py holds them equal)
REPORTED = frozenset({"explain", "capacity", "diff", "sweep", "scale-up"})


def markdown_text(kind: str, doc: dict, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """The document of command `kind` (explain, schedule, ...) as Markdown of at most `limit` characters."""
    pointer = REPORT_POINTER if kind in REPORTED else JSON_POINTER
    return RENDERERS[kind](doc, limit, pointer)
