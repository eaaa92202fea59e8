"""`ksched schedule`: one row per pod in queue order, its outcome and why, and the counts."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ..analysis import annotations_of, node_groups, short_reason, verdict_of
from .layout import indent, make_console, new_table, plural, print_blocks, section


def _outcome(r) -> Text:
    v = verdict_of(r)
    if v == "schedulable":
        return Text.assemble(("✔ ", "ok"), (r.selected_node or "", "node"))
    if v == "preemption":
        return Text.assemble(("⚠ ", "warn"), (r.preemption.nominated_node, "node"))
    if v == "error":
        return Text("✘ error", style="bad")
    return Text("✘ unschedulable", style="bad")


def _why(r) -> str:
    """One short line: the score and ties, the victims, or the largest groups of rejected nodes."""
    if r.error:
        return r.error
    if r.schedulable:
        extra = f"score {r.totals[r.selected_node]}" if r.selected_node in r.totals else "only feasible node"
        if len(r.top_nodes) > 1:
            extra += f", tied with {len(r.top_nodes) - 1} more"
        return extra
    if r.preemption is not None and r.preemption.nominated_node:
        return "evicts " + ", ".join(r.preemption.victims)
    if r.pre_filter is not None:
        return f"{r.pre_filter.plugin}: {r.pre_filter.message()}"
    groups = [g for g in (annotations_of(r).get("nodeGroups") or node_groups(r)) if not g["feasible"]]
    by_first: dict[str, int] = {}
    for g in groups:
        ff = g["firstFailure"]
        key = f"{ff['plugin']}: " + ", ".join(short_reason(x) for x in ff["reasons"])
        by_first[key] = by_first.get(key, 0) + g["count"]
    items = sorted(by_first.items(), key=lambda kv: (-kv[1], kv[0]))
    text = "; ".join(f"{n}× {k}" for k, n in items[:2])
    if len(items) > 2:
        text += f"; +{len(items) - 2} more reasons"
    return text


def _cell_len(cell: str | Text) -> int:
    return len(cell) if isinstance(cell, str) else len(cell.plain)


def schedule_renderables(results, session, console: Console) -> list[list[Any]]:
    counts = {"schedulable": 0, "preemption": 0, "unschedulable": 0, "error": 0}
    rows = []
    for i, r in enumerate(results, start=1):
        counts[verdict_of(r)] += 1
        rows.append((str(i), r.pod.key, str(r.pod.priority), _outcome(r), _why(r)))
    fixed = 2 + sum(max(_cell_len(x[k]) for x in rows) + 3
                    for k in range(4)) if rows else 0
    inline = fixed + max((len(x[4]) for x in rows), default=0) <= console.width or console.width - fixed >= 40
    table = new_table()
    table.add_column("#", justify="right", style="muted")
    table.add_column("Pod", style="pod", no_wrap=inline, overflow="fold")
    table.add_column("Prio", justify="right", no_wrap=True)
    table.add_column("Result", no_wrap=True)
    if inline:
        table.add_column("Why", style="muted")
    for row in rows:
        if inline:
            table.add_row(*row)
        else:
            table.add_row(*row[:4])
            table.add_row("", Text(row[4], style="muted"), "", "", end_section=False)
    ann_nodes = annotations_of(results[0]).get("nodeCount") if results else None
    n = ann_nodes if ann_nodes is not None else len(session.scheduler.snapshot.list())
    head = section("Schedule", f"{plural(len(results), 'pod')}, one after another, on {plural(n, 'node')}; "
                                "each one placed is bound before the next")
    summary = Text()
    summary.append(f"✔ {counts['schedulable']} scheduled", style="ok")
    summary.append("   ")
    summary.append(f"⚠ {counts['preemption']} need preemption (nominated node)", style="warn")
    summary.append("   ")
    summary.append(f"✘ {counts['unschedulable']} unschedulable", style="bad" if counts["unschedulable"] else "")
    if counts["error"]:
        summary.append(f"   ✘ {counts['error']} errors", style="bad")
    hint = Text("ksched explain NAMESPACE/NAME or POD-FILE explains one pod", style="muted")
    return [[head, indent(table, 2), summary, hint]]


def render_schedule(results, session, console: Console | None = None, *, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    print_blocks(console, schedule_renderables(results, session, console))
