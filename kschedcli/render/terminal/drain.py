"""`ksched drain`: the terminal view of a drain.DrainReport (per node, why, where each evicted pod goes)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ...drain import (
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
from ..analysis import verdict_of
from .layout import indent, new_table, plural, print_blocks, section

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
        extra = f"score {r.totals[r.selected_node]}" if r.selected_node in r.totals else "only feasible node"
        return extra + (f" (after retries, round {o.round})" if o.round > 1 else "")
    if nominated(r) and r.preemption is not None:
        return "evicts " + ", ".join(r.preemption.victims)
    return r.message


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
    for n in report.nodes:
        problems = n.problems(allow_preemption)
        counts: dict[str, int] = {}
        for o in n.pods:
            counts[_ACTION_TEXT[o.action]] = counts.get(_ACTION_TEXT[o.action], 0) + 1
        pods = ", ".join(f"{v} {k}" for k, v in counts.items()) or "no pods"
        table.add_row(n.name, Text("✔ yes", style="ok") if not problems else Text("✘ no", style="bad"), pods)
    blocks.append([head, indent(table)])
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
        t = new_table()
        t.add_column("#", justify="right", style="muted")
        t.add_column("Evicted pod", style="pod", overflow="fold")
        t.add_column("Prio", justify="right", no_wrap=True)
        t.add_column("From", style="node", no_wrap=True)
        t.add_column("Moves to", no_wrap=True)
        t.add_column("Why", style="muted", overflow="fold")
        for i, o in enumerate(report.evicted, start=1):
            t.add_row(str(i), o.pod.key, str(o.pod.priority), o.node, _outcome(o), _why(o))
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


def render_drain(report: DrainReport, console: Console, allow_preemption: bool) -> None:
    print_blocks(console, drain_renderables(report, console, allow_preemption))
