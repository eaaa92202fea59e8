"""`ksched diff`: the terminal view and the JSON document of a diff.DiffReport."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from .. import KUBE_SCHEDULER_VERSION, __version__
from ..diff import DiffReport, Outcome, WorldSummary

_MODES = {
    "pods": "the given pods",
    "pending": "the snapshot's pending pods",
    "all": "every bound pod, re-placed from an empty cluster",
}


def _outcome_doc(o: Outcome | None) -> dict[str, Any] | None:
    if o is None:
        return None
    d: dict[str, Any] = {"verdict": o.verdict, "node": o.node}
    if o.victims:
        d["victims"] = list(o.victims)
    if o.verdict not in ("schedulable",):
        d["message"] = o.message
    return d


def _world_doc(w: WorldSummary) -> dict[str, Any]:
    return {
        "world": w.name, "nodes": w.nodes, "pods": w.pods, "scheduled": w.scheduled,
        "needPreemption": w.preemption, "unschedulable": w.unschedulable, "nodesUsed": w.nodes_used,
        "nodesReceivingPods": w.nodes_receiving,
        "utilisation": {res: {"mean": s.mean, "stdev": s.stdev, "min": s.min, "max": s.max}
                        for res, s in w.spread.items()},
    }


def diff_doc(report: DiffReport, edits: list) -> dict[str, Any]:
    doc: dict[str, Any] = {"kschedVersion": __version__, "kubernetesVersion": KUBE_SCHEDULER_VERSION}
    if edits:
        doc["edits"] = [a.doc() for a in edits]
    doc["diff"] = {
        "pods": report.mode, "same": report.same, "a": _world_doc(report.a), "b": _world_doc(report.b),
        "changes": [{"pod": c.pod, "priority": c.priority, "a": _outcome_doc(c.a), "b": _outcome_doc(c.b)}
                    for c in report.changes],
    }
    return doc


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
    from .terminal import _indent, _plural, _section, _table
    a, b = report.a, report.b
    head = _section("Diff", f"{_plural(a.pods, 'pod')} ({_MODES[report.mode]}) scheduled in two worlds, "
                            "highest priority first, each bound before the next")
    worlds = [Text.assemble(("  A  ", "title"), a.name), Text.assemble(("  B  ", "title"), b.name)]
    t = _table()
    t.add_column("", no_wrap=True)
    t.add_column("A", justify="right", no_wrap=True)
    t.add_column("B", justify="right", no_wrap=True)
    t.add_column("B − A", justify="right", no_wrap=True)
    rows = [("nodes", a.nodes, b.nodes), ("scheduled", a.scheduled, b.scheduled),
            ("need preemption", a.preemption, b.preemption), ("unschedulable", a.unschedulable, b.unschedulable),
            ("nodes running workload pods", a.nodes_used, b.nodes_used),
            ("nodes receiving pods", a.nodes_receiving, b.nodes_receiving)]
    for label, va, vb in rows:
        t.add_row(label, *_num(va, vb))
    for res in ("cpu", "memory"):
        sa, sb = a.spread[res], b.spread[res]
        t.add_row(f"{res} requested, mean", *_num(sa.mean, sb.mean, "%"))
        t.add_row(f"{res} requested, stdev", *_num(sa.stdev, sb.stdev, "%"))
        t.add_row(f"{res} requested, min–max", f"{sa.min:.0f}–{sa.max:.0f}%", f"{sb.min:.0f}–{sb.max:.0f}%", "")
    blocks: list[list[Any]] = [[head, *worlds], [_section("Aggregates", "over the schedulable nodes after the run"),
                                                 _indent(t)]]
    if report.changes:
        c = _table()
        c.add_column("Pod", style="pod", overflow="fold")
        c.add_column("Prio", justify="right", no_wrap=True)
        c.add_column("A", no_wrap=True)
        c.add_column("B", no_wrap=True)
        for ch in report.changes:
            c.add_row(ch.pod, str(ch.priority), _cell(ch.a), _cell(ch.b))
        blocks.append([_section("Changes", f"{_plural(len(report.changes), 'pod')} whose verdict or node differs"),
                       _indent(c)])
        blocks.append([Text(f"≠ {_plural(len(report.changes), 'pod')} placed differently", style="warn")])
    else:
        blocks.append([Text("= every pod gets the same verdict and node in both worlds", style="ok")])
    return blocks


def render_diff(report: DiffReport, console: Console) -> None:
    from .terminal import _print_all
    _print_all(console, diff_renderables(report, console))
