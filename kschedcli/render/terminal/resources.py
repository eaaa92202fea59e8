"""The resources breakdown: each node's free allocatable against the pod's requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...scheduling.analysis import annotations_of, fmt_quantity
from ..richsafe import Text
from .layout import ALSO, GLUE, indent, name_list, new_table, plural, prose, quantities, section, unglued


def _res_cell(row: dict, fmt: Callable[[int], str], name: bool = False) -> Text:
    """`free of allocatable`, marked when short; with the resource's name in the narrow layout. The
    spaces are glued: an amount never leaves its resource or its `of`."""
    label = f"{row['resource']}{GLUE}" if name else ""
    if row["resource"] == "pods" and name:
        label = "pod slots" + GLUE
    free, alloc = fmt(row["free"]), fmt(row["allocatable"])
    if row["fits"]:
        return Text.assemble((label, "muted"), (free, "ok"), (f"{GLUE}of{GLUE}{alloc}", "muted"))
    return Text.assemble((ALSO + GLUE, "bad"), (label, "bad"), (free, "bad"), (f"{GLUE}of{GLUE}{alloc}", "muted"))


# the narrowest the words of a node's resources may be beside its name (else they go under it)
_WORDS_MIN = 30


def resources_section(result, *, all_nodes: bool = False, limit: int = 8, width: int = 80) -> list[Any]:
    ann = annotations_of(result)
    res = ann.get("resources") or {}
    if not res:
        return []
    names = list(res)
    selected = result.selected_node if result.selected_node in res else None
    roomy = ann.get("roomRejectedBy") or {}
    failing = [n for n in names if n != selected]

    def closeness(name):
        rows = res[name]
        return (sum(1 for r in rows if not r["fits"]), name)

    failing.sort(key=closeness)
    short = [n for n in failing if n not in roomy]

    # a few nodes with room first (the answer may be there), then the nodes short of room
    def spare(name):  # the share of its allocatable a node keeps once the pod is on it, at worst
        return min((r["free"] - r["request"]) / max(r["allocatable"], 1) for r in res[name])

    with_room = sorted((n for n in failing if n in roomy), key=lambda n: (-spare(n), n))
    order = ([selected] if selected else []) + with_room[:3] + short + with_room[3:]
    shown = order if all_nodes else order[:limit]
    rows0 = res[shown[0]]
    # one precision per resource over the rows shown: 2.260 beside 6.594
    fmts = [
        quantities(r["resource"], [v for n in shown for v in (res[n][i]["free"], res[n][i]["allocatable"])])
        for i, r in enumerate(rows0)
    ]
    out: list[Any] = []
    what = "free allocatable for the pod's requests"
    if short:
        what += (
            f"; {plural(len(short), 'node')} {'lacks' if len(short) == 1 else 'lack'} resources, "
            "closest to fitting first"
        )
    if roomy:
        what += "; first the nodes with room that another plugin rejects"
    out.append(section("Resources", what))
    labels = []
    for name in shown:
        label = Text(name, style="node")
        if name == selected:
            label.append(" (selected)", style="ok")
        elif name in roomy:
            label.append(" (room)", style="warn")
        labels.append(label)
    cells = [[unglued(_res_cell(r, fmts[i])) for i, r in enumerate(res[name])] for name in shown]
    heads = [
        ("pods", "free slots")
        if r["resource"] == "pods"
        else (r["resource"], f"needs {fmt_quantity(r['resource'], r['request'])}")
        for r in rows0
    ]
    col_w = [max([len(h[0]), len(h[1])] + [len(row[i].plain) for row in cells]) for i, h in enumerate(heads)]
    natural = 2 + max(len(x.plain) for x in labels) + sum(w + 3 for w in col_w)
    table: Any = new_table()
    table.add_column("Node", style="node", no_wrap=True)
    if natural <= width:
        for head, need in heads:
            table.add_column(f"{head}\n{need}", justify="right", no_wrap=True)
        for label, row in zip(labels, cells, strict=True):
            table.add_row(label, *row)
    else:
        # too wide for a column per resource: each node's resources as words that wrap between them
        needs = ", ".join(
            f"{r['resource']} {fmt_quantity(r['resource'], r['request'])}" for r in rows0 if r["resource"] != "pods"
        )
        head = prose(Text(f"Free of allocatable (the pod needs {needs} and a pod slot)", style="bold"))
        # too narrow even for the words beside the node (a 60-character name at 80 columns): each
        # node on its line, its resources as words on the next
        under = 2 + max(len(x.plain) for x in labels) + 3 + _WORDS_MIN > width
        if under:
            out.append(indent(head, 2))
        else:
            table.add_column(head)
        for label, name in zip(labels, shown, strict=True):
            line = Text()
            for i, r in enumerate(res[name]):
                if i:
                    line.append(", ", style="muted")
                line.append_text(_res_cell(r, fmts[i], name=True))
            if under:
                out += [indent(label, 2), indent(prose(line), 4)]
            else:
                table.add_row(label, prose(line))
        if under:
            table = None
    if table is not None:
        out.append(indent(table, 2))
    if len(shown) < len(order):
        out.append(Text(f"  … {plural(len(order) - len(shown), 'more node')} (--all-nodes lists them)", style="muted"))
    if roomy:
        by_plugin: dict[str, list[str]] = {}
        for n in with_room:
            by_plugin.setdefault(roomy[n], []).append(n)
        parts = [f"{plugin} ({name_list(nodes)})" for plugin, nodes in sorted(by_plugin.items())]
        more = ann.get("roomRejectedByOmitted") or 0
        if more:
            parts.append(f"… +{plural(more, 'more node')} with room")
        out.append(Text("  room, rejected by: " + "; ".join(parts), style="warn"))

    return out
