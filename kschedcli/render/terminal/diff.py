"""`ksched diff`: the terminal view of a diff.DiffReport (the worlds, aggregates side by side, the pods that differ)."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console

from ...diff import DiffReport, Outcome
from ..richsafe import Text
from .layout import glue, indent, new_table, plural, print_blocks, section

_MODES = {
    "pods": "the given pods",
    "pending": "the snapshot's pending pods",
    "all": "every bound pod, re-placed from an empty cluster",
}


def _flags_glued(name: str) -> str:
    """A world's command line with each flag kept with its first value (`--config FILE`): a narrow
    screen breaks between flags, never after a lone `--config`."""
    return re.sub(r"(--[a-z-]+) (?!--)(\S+)", lambda m: glue(m.group(1) + " " + m.group(2)), name)


def _cell(o: Outcome | None) -> Text:
    if o is None:
        return Text("– not in this world", style="muted")
    if o.verdict == "schedulable":
        return Text.assemble(("✔ ", "ok"), (o.node or "", "node"))
    if o.verdict == "preemption":
        return Text.assemble(("⚠ ", "warn"), (o.node or "", "node"), (f" evicting {len(o.victims)}", "warn"))
    return Text("✘ " + o.verdict, style="bad")


def _num(a: float, b: float, unit: str = "") -> tuple[str, str, Text]:
    delta = b - a
    if isinstance(a, float) or isinstance(b, float):
        d = f"{delta:+.1f}{unit}" if delta else "="
        return f"{a:.1f}{unit}", f"{b:.1f}{unit}", Text(d, style="warn" if delta else "muted")
    return str(a), str(b), Text(f"{delta:+d}" if delta else "=", style="warn" if delta else "muted")


def diff_renderables(report: DiffReport, console: Console) -> list[list[Any]]:
    a, b = report.a, report.b
    head = section(
        "Diff",
        f"{plural(a.pods, 'pod')} ({_MODES[report.mode]}) scheduled in two worlds, "
        "highest priority first, each bound before the next",
    )
    worlds = [
        Text.assemble(("  A  ", "title"), _flags_glued(a.name)),
        Text.assemble(("  B  ", "title"), _flags_glued(b.name)),
    ]
    t = new_table()
    t.add_column("", no_wrap=True)
    t.add_column("A", justify="right", no_wrap=True)
    t.add_column("B", justify="right", no_wrap=True)
    t.add_column("B − A", justify="right", no_wrap=True)
    rows = [
        ("nodes", a.nodes, b.nodes),
        ("scheduled", a.scheduled, b.scheduled),
        ("need preemption", a.preemption, b.preemption),
        ("unschedulable", a.unschedulable, b.unschedulable),
        ("nodes running workload pods", a.nodes_used, b.nodes_used),
        ("nodes receiving pods", a.nodes_receiving, b.nodes_receiving),
    ]
    for label, va, vb in rows:
        t.add_row(label, *_num(va, vb))
    for res in ("cpu", "memory"):
        sa, sb = a.spread[res], b.spread[res]
        t.add_row(f"{res} requested, mean", *_num(sa.mean, sb.mean, "%"))
        t.add_row(f"{res} requested, stdev", *_num(sa.stdev, sb.stdev, "%"))
        t.add_row(f"{res} requested, min–max", f"{sa.min:.0f}–{sa.max:.0f}%", f"{sb.min:.0f}–{sb.max:.0f}%", "")
    blocks: list[list[Any]] = [
        [head, *worlds],
        [section("Aggregates", "over the schedulable nodes after the run"), indent(t)],
    ]
    if report.changes:
        c = new_table()
        c.add_column("Pod", style="pod", overflow="fold")
        c.add_column("Prio", justify="right", no_wrap=True)
        c.add_column("A", no_wrap=True)
        c.add_column("B", no_wrap=True)
        for ch in report.changes:
            c.add_row(ch.pod, str(ch.priority), _cell(ch.a), _cell(ch.b))
        blocks.append(
            [section("Changes", f"{plural(len(report.changes), 'pod')} whose verdict or node differs"), indent(c)]
        )
        blocks.append([Text(f"≠ {plural(len(report.changes), 'pod')} placed differently", style="warn")])
    else:
        blocks.append([Text("= every pod gets the same verdict and node in both worlds", style="ok")])
    return blocks


def render_diff(report: DiffReport, console: Console) -> None:
    print_blocks(console, diff_renderables(report, console))
