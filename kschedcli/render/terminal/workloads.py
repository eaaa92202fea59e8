"""The schedule's results grouped by workload (`ksched schedule` of Deployments, DaemonSets, ...):
one row per workload, and for a DaemonSet, the nodes where its pod does not fit or is not made."""

from __future__ import annotations

from rich.console import Console

from ..richsafe import Text
from .layout import Hang, TableOrStack, indent, make_console, new_table, plural, prose, section


def _outcome(counts: dict) -> Text:
    t = Text()
    parts = [
        ("schedulable", "✔ {} scheduled", "ok"),
        ("preemption", "⚠ {} need preemption", "warn"),
        ("unschedulable", "✘ {} unschedulable", "bad"),
        ("error", "✘ {} errors", "bad"),
    ]
    for key, fmt, style in parts:
        if counts.get(key) or key == "schedulable":
            if t.plain:
                t.append("  ")
            # (none scheduled: the count without the tick, which would read as a success)
            t.append(
                fmt.format(counts.get(key, 0)) if counts.get(key) else "0 scheduled",
                style=style if counts.get(key) else "",
            )
    return t


def workloads_renderables(summary: list[dict]) -> list:
    table = new_table()
    table.add_column("Workload", style="pod", no_wrap=True)
    table.add_column("Wanted", justify="right", no_wrap=True)
    table.add_column("Running", justify="right", no_wrap=True)
    table.add_column("New", justify="right", no_wrap=True)
    table.add_column("Result")
    notes: list = []
    stacked: list = []  # where a workload's name and its counts do not fit side by side
    for w in summary:
        wanted = "" if w["desired"] is None else str(w["desired"])
        if w["kind"] == "DaemonSet":
            nodes = w["nodes"]
            wanted = f"{sum(1 for n in nodes if n['eligible'])}/{len(nodes)} nodes"
        name = Text(f"{w['kind']} {w['namespace']}/{w['name']}")
        table.add_row(name, wanted, str(w["existing"]), str(len(w["pods"])), prose(_outcome(w["results"])))
        stacked.append(Text(name.plain, style="pod"))
        under = Text(
            (f"wanted {wanted}, " if wanted else "") + f"running {w['existing']}, new {len(w['pods'])}   ",
            style="muted",
        )
        under.append_text(_outcome(w["results"]))
        stacked.append(Hang(under, 2, 4))
        if w.get("note"):
            notes.append(Text(f"{w['kind']} {w['namespace']}/{w['name']}: {w['note']}", style="muted"))
        if w["kind"] == "DaemonSet":
            misfits = [n for n in w["nodes"] if n["fits"] is False]
            left_out = [n for n in w["nodes"] if not n["eligible"]]
            if misfits or left_out:
                t = new_table()
                t.add_column("Node", style="node", no_wrap=True)
                t.add_column(f"DaemonSet {w['namespace']}/{w['name']}")
                for n in misfits:
                    t.add_row(n["node"], Text(f"✘ does not fit: {n['failure'] or n['message']}", style="bad"))
                for n in left_out:
                    t.add_row(n["node"], Text(f"not run here: {n['reason']}", style="muted"))
                notes.append(t)
    fits_everywhere = [
        w for w in summary if w["kind"] == "DaemonSet" and all(n["fits"] is not False for n in w["nodes"])
    ]
    head = section("Workloads", f"{plural(len(summary), 'workload')}: the pods their controllers would create")
    block: list = [head, indent(TableOrStack(table, stacked), 2)]
    for n in notes:
        block += [Text(""), indent(n, 2)]
    for w in fits_everywhere:
        eligible = sum(1 for n in w["nodes"] if n["eligible"])
        block.append(
            Text(
                f"✔ DaemonSet {w['namespace']}/{w['name']} fits on every node it runs on "
                f"({eligible} of {len(w['nodes'])})",
                style="ok",
            )
        )
    return block


def render_workloads(summary: list[dict], console: Console | None = None, *, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    console.print()
    for r in workloads_renderables(summary):
        console.print(r)
