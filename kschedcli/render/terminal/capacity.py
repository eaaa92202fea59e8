"""`ksched capacity` in the terminal: copies that fit per template, where they went (per node and per
zone / pool label), and what stopped each template (its last copy, explained as `explain` does)."""

from __future__ import annotations

from rich.console import Console

from ..richsafe import Text
from .layout import Hang, TableOrStack, indent, make_console, new_table, plural, prose, section


def _counts_table(title: str, counts: dict[str, int], style: str = "node"):
    t = new_table()
    t.add_column(title, style=style, no_wrap=True)
    t.add_column("Copies", justify="right", no_wrap=True)
    for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        t.add_row(k or "(no label)", str(v))
    return t


def capacity_renderables(doc: dict, top: int) -> list:
    blocks: list = []
    head = section(
        "Capacity",
        "copies scheduled one after another, each bound before the next; preemption off: copies evict nothing",
    )
    summary = new_table()
    summary.add_column("Template", style="pod", no_wrap=True)
    summary.add_column("Copies that fit", justify="right", no_wrap=True)
    summary.add_column("Stopped by")
    stacked: list = []  # where a template's name and the rest do not fit side by side
    for t in doc["perTemplate"]:
        stopped = {
            "max": f"--max {doc['max']}",
            "limit": "the bound without --max (Kubernetes' 150,000 pods per cluster)",
            "room": "the nodes' allocatable pods, all taken",
            "unschedulable": "a copy that fits nowhere",
            "error": "an error",
        }[t["stoppedBy"]]
        summary.add_row(t["template"], str(t["replicas"]), prose(stopped))
        stacked.append(Text(t["template"], style="pod"))
        stacked.append(Hang(Text(f"{plural(t['replicas'], 'copy', 'copies')} fit; stopped by {stopped}"), 2, 4))
    total = Text(f"{plural(doc['replicas'], 'copy', 'copies')} fit in total", style="ok" if doc["replicas"] else "bad")
    blocks.append([head, indent(TableOrStack(summary, stacked), 2), total])
    if doc["perNode"]:
        nodes = dict(doc["perNode"])
        shown = dict(sorted(nodes.items(), key=lambda kv: (-kv[1], kv[0]))[:top]) if top else nodes
        where = [
            section("Where", f"copies per node ({plural(len(nodes), 'node')} took some)"),
            indent(_counts_table("Node", shown), 2),
        ]
        if len(shown) < len(nodes):
            where.append(Text(f"  … {len(nodes) - len(shown)} more nodes (--top 0 lists all)", style="muted"))
        for label, counts in doc["perLabel"].items():
            where += [Text(""), indent(_counts_table(label, counts, style="node"), 2)]
        blocks.append(where)
    return blocks


def stop_explanation(label: str, result, session, *, no_color: bool = False, width: int | None = None) -> str:
    """The copy that fit nowhere, explained as `explain` explains a pod, written out at once (the
    next template's copies change the cluster it saw)."""
    import io

    from .explain import render_explain

    base = make_console(no_color)
    buf = io.StringIO()
    console = make_console(
        no_color, file=buf, width=width or base.width, force_terminal=base.is_terminal and not no_color
    )
    console.print(section(f"Stopped: {label}", "the first copy that fits nowhere, explained"))
    console.print()
    render_explain(result, session, console, footer=False)  # the report ends with it once
    return buf.getvalue()


def render_capacity(
    doc: dict, stops: list[str], console: Console | None = None, *, top: int = 10, no_color: bool = False
) -> None:
    """The capacity report, then each stop's explanation (from stop_explanation)."""
    console = console or make_console(no_color)
    first = True
    for block in capacity_renderables(doc, top):
        if not first:
            console.print()
        first = False
        for r in block:
            console.print(r)
    for text in stops:
        console.print()
        console.file.write(text)
