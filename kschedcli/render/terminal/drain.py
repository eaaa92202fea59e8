"""`ksched drain`: the terminal view of a drain.DrainReport (per node, why, where each evicted pod goes)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group

from ...scheduling.analysis import verdict_of
from ...whatif.drain import (
    BLOCKED,
    DELETED,
    EVICTED,
    REFUSED,
    SKIPPED_MIRROR,
    STAYS_DAEMONSET,
    DrainReport,
    PodOutcome,
    nominated,
)
from ..richsafe import Text
from .layout import (
    GLUE,
    Hang,
    TableOrStack,
    glue,
    glue_message,
    hang,
    indent,
    new_table,
    plural,
    print_blocks,
    prose,
    section,
)

_ACTION_TEXT = {
    STAYS_DAEMONSET: "stays (DaemonSet pod)",
    SKIPPED_MIRROR: "stays (mirror pod)",
    REFUSED: "not evicted",
    BLOCKED: "eviction refused",
    EVICTED: "evicted",
    DELETED: "deleted (no controller)",
}


def _outcome(o: PodOutcome) -> Text:
    r = o.result
    if r is None:
        return Text("–", style="muted")
    v = verdict_of(r)
    if v == "schedulable":
        return Text.assemble(("✔ ", "ok"), (r.selected_node or "", "node"))
    if v == "preemption":
        return Text.assemble(("⚠ ", "warn"), (nominated(r) or "", "node"), (" by preemption", "warn"))
    return Text("✘ fits nowhere" if v == "unschedulable" else "✘ error", style="bad")


def _why(o: PodOutcome) -> str:
    r = o.result
    if r is None:
        return ""
    if r.schedulable:
        sel = r.selected_node
        extra = f"score {r.totals[sel]}" if sel is not None and sel in r.totals else "only feasible node"
        return extra + (f" (after retries, round {o.round})" if o.round > 1 else "")
    if nominated(r) and r.preemption is not None:
        return "evicts " + ", ".join(r.preemption.victims)
    return glue_message(r.message)


def drain_renderables(report: DrainReport, console: Console, allow_preemption: bool) -> list[list[Any]]:
    blocks: list[list[Any]] = []
    head = section(
        "Drain",
        f"{plural(len(report.nodes), 'node')} cordoned; what kubectl drain would evict, "
        "then each replacement scheduled, highest priority first, bound before the next",
    )
    table = new_table()
    table.add_column("Node", style="node", no_wrap=True)
    table.add_column("Drainable", no_wrap=True)
    table.add_column("Pods")
    stacked: list[Any] = []  # where a node name and the other cells do not fit side by side
    for n in report.nodes:
        problems = n.problems(allow_preemption)
        counts: dict[str, int] = {}
        for o in n.pods:
            counts[_ACTION_TEXT[o.action]] = counts.get(_ACTION_TEXT[o.action], 0) + 1
        # each count kept with what it counts; a narrow screen breaks between them
        pods = ", ".join(glue(f"{v} {k}") for k, v in counts.items()) or "no pods"
        drainable = Text("✔ yes", style="ok") if not problems else Text("✘ no", style="bad")
        table.add_row(n.name, drainable, prose(pods))
        stacked.append(Text(n.name, style="node"))
        under = Text("drainable" + GLUE, style="muted")
        under.append_text(Text(glue(drainable.plain), style=drainable.style))
        under.append("   ")
        under.append("pods" + GLUE, style="muted")
        under.append(pods)
        stacked.append(Hang(under, 2, 4))
    blocks.append([head, indent(TableOrStack(table, stacked))])
    why: list[Any] = []
    any_problem = False
    for n in report.nodes:
        for p in n.problems(allow_preemption):
            why.append(Text(f"  ✘ {n.name}: {p}", style="bad"))
            any_problem = True
        for w in n.warnings:
            why.append(Text(f"  {n.name}: {w}", style="muted"))
    if why:
        blocks.append([section("Why" if any_problem else "Warnings"), *why])
    if report.evicted:
        t = _rescheduled_table(report, beside=True)
        # Rich narrows the Why column by what the table lacks; below its longest unbreakable unit (a
        # name, `score 630`) it would cut it: then each why goes under its pod
        whys = [console.measure(prose(_why(o))) for o in report.evicted]
        slack = max(m.maximum for m in whys) - max(m.minimum for m in whys)
        # and where the column would be left too narrow for a sentence (a why of a dozen lines):
        # the other columns' natural widths, measured unbounded, leave it `room`
        wide = console.options.update(max_width=10**6)
        longest = max(console.measure(prose(_why(o)), options=wide).maximum for o in report.evicted)
        room = console.width - 2 - (console.measure(t, options=wide).maximum - longest)
        if console.measure(t).maximum - slack > console.width - 2 or (longest > room and room < _WHY_MIN):
            # each why under its pod: the rows stacked (a why row in the table's pod column would
            # widen that column past the others' room)
            t = Group(*(hang(x) for x in _rescheduled_stacked(report)))
        else:
            # stacked where the names alone do not fit side by side
            t = TableOrStack(t, _rescheduled_stacked(report), probe=_rescheduled_table(report, beside=False))
        rounds = (
            f" in {report.rounds} rounds (refused evictions retried once replacements were placed)"
            if report.rounds > 1
            else ""
        )
        blocks.append([section("Rescheduled", f"{plural(len(report.evicted), 'replacement')}{rounds}"), indent(t)])
    ok = report.drainable(allow_preemption)
    blocks.append(
        [
            Text(
                "✔ every node can be drained: every evicted pod finds a node"
                if ok
                else "✘ not every node can be drained cleanly (see Why)",
                style="ok" if ok else "bad",
            )
        ]
    )
    return blocks


_WHY_MIN = 40  # the narrowest Why column a long reason is wrapped in beside its pod


def _rescheduled_table(report: DrainReport, beside: bool):
    """The evicted pods and where each goes; the why in its own column (`beside`) or on a line of
    its own under the pod, where names and numbers would not fit beside it."""
    t = new_table()
    t.add_column("#", justify="right", style="muted")
    t.add_column("Evicted pod", style="pod", no_wrap=True)
    t.add_column("Prio", justify="right", no_wrap=True)
    t.add_column("From", style="node", no_wrap=True)
    t.add_column("Moves to", no_wrap=True)
    if beside:
        t.add_column("Why", style="muted")
    for i, o in enumerate(report.evicted, start=1):
        cells: list[Any] = [str(i), o.pod.key, str(o.pod.priority), o.node, _outcome(o)]
        why = _why(o)
        if beside:
            t.add_row(*cells, prose(why, style="muted"))
            continue
        t.add_row(*cells)
        if why:
            t.add_row("", Hang(Text(why, style="muted"), 2, 2), "", "", "")
    return t


def _rescheduled_stacked(report: DrainReport) -> list[Any]:
    """The Rescheduled rows where pod and node names do not fit side by side: each evicted pod on a
    line of its own, where it goes from and to under it, then the why."""
    out: list[Any] = []
    for i, o in enumerate(report.evicted, start=1):
        head = Text(f"{i:>2}  ", style="muted")
        head.append(o.pod.key, style="pod")
        head.append("  " + glue(f"prio {o.pod.priority}"), style="muted")
        out.append(Hang(head, 0, 4))
        moves = Text("from" + GLUE, style="muted")
        moves.append(o.node, style="node")
        moves.append(" →" + GLUE, style="muted")
        cell = _outcome(o)
        moves.append_text(Text(glue(cell.plain), style=cell.style, spans=list(cell.spans)))
        out.append(Hang(moves, 4, 6))
        why = _why(o)
        if why:
            out.append(Hang(Text(why, style="muted"), 4, 6))
    return out


def render_drain(report: DrainReport, console: Console, allow_preemption: bool) -> None:
    print_blocks(console, drain_renderables(report, console, allow_preemption))
