"""`schedule --preemption=carry-out`: the schedule table, then the evictions, the retries and where
every pod ended."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ..richsafe import Text
from .layout import make_console, print_blocks, section
from .schedule import schedule_renderables


def carried_out_lines(run) -> list[Any]:
    """What carrying preemption out did: per preempting cycle its evictions, each retry's outcome,
    then the final placement of every pod of the sequence."""
    out: list[Any] = []
    out.append(
        section(
            "Preemption carried out",
            "victims deleted, the preemptor nominated to the node and retried after the other pods",
        )
    )
    by_cycle: dict[int, list] = {}
    for e in run.evictions:
        by_cycle.setdefault(e.cycle, []).append(e)
    happened = False
    for i, r in enumerate(run.results):
        attempt = getattr(r, "attempt", None) or 1
        evicted = by_cycle.get(i)
        if evicted:
            happened = True
            t = Text("  ")
            t.append(f"#{i + 1} ", style="muted")
            t.append(r.pod.key, style="pod")
            t.append(" preempted on ", style="")
            t.append(evicted[0].node, style="node bold")
            t.append(f": evicted {', '.join(e.pod for e in evicted)}", style="warn")
            out.append(t)
        elif attempt > 1:
            t = Text("  ")
            t.append(f"#{i + 1} ", style="muted")
            t.append(r.pod.key, style="pod")
            t.append(f" retried (attempt {attempt}): ", style="")
            if r.schedulable and r.selected_node:
                t.append("✔ bound to ", style="ok")
                t.append(r.selected_node, style="node bold")
            else:
                t.append("✘ not placed", style="bad")
            out.append(t)
    for pod, node in run.cleared:
        out.append(Text(f"  nomination of {pod} to {node} cleared (lower priority than the preemptor)", style="muted"))
    if not happened:
        out.append(Text("  no pod preempted", style="muted"))
        return out
    out.append(Text())
    out.append(section("Final placement"))
    width = max(len(p.pod) for p in run.placements)
    for p in run.placements:
        t = Text("  ")
        t.append(p.pod.ljust(width), style="pod")
        t.append("  ")
        if p.node:
            t.append("✔ " + p.node, style="ok")
        elif p.evicted:
            t.append("✘ evicted by a later preemption", style="bad")
        else:
            t.append("✘ not placed", style="bad")
        if p.attempts > 1:
            t.append(f"  ({p.attempts} attempts)", style="muted")
        out.append(t)
    return out


def render_carried_out(run, session, console: Console | None = None, *, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    print_blocks(console, [*schedule_renderables(run.results, session, console), carried_out_lines(run)])
