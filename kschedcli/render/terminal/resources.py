"""The resources breakdown: each node's free allocatable against the pod's requests."""
from __future__ import annotations

from typing import Any

from rich.text import Text

from ..analysis import annotations_of, fmt_quantity
from .layout import ALSO, indent, new_table, plural, section


def _res_cell(row: dict) -> Text:
    r = row["resource"]
    free = fmt_quantity(r, row["free"])
    alloc = fmt_quantity(r, row["allocatable"])
    if row["fits"]:
        return Text.assemble((free, "ok"), (f" of {alloc}", "muted"))
    return Text.assemble((ALSO + " " + free, "bad"), (f" of {alloc}", "muted"))


def resources_section(result, *, all_nodes: bool = False, limit: int = 8) -> list[Any]:
    ann = annotations_of(result)
    res = ann.get("resources") or {}
    if not res:
        return []
    names = list(res)
    selected = result.selected_node if result.selected_node in res else None
    failing = [n for n in names if n != selected]

    def closeness(name):
        rows = res[name]
        return (sum(1 for r in rows if not r["fits"]), name)
    failing.sort(key=closeness)
    order = ([selected] if selected else []) + failing
    shown = order if all_nodes else order[:limit]
    rows0 = res[shown[0]]
    out: list[Any] = []
    what = "free allocatable for the pod's requests"
    if failing:
        what += f"; {plural(len(failing), 'node')} lack resources, closest to fitting first"
    out.append(section("Resources", what))
    table = new_table()
    table.add_column("Node", style="node", no_wrap=True)
    for r in rows0:
        if r["resource"] == "pods":
            table.add_column("pods\nfree slots", justify="right")
        else:
            table.add_column(f"{r['resource']}\nneeds {fmt_quantity(r['resource'], r['request'])}", justify="right")
    for name in shown:
        label = Text(name, style="node")
        if name == selected:
            label.append(" (selected)", style="ok")
        table.add_row(label, *[_res_cell(r) for r in res[name]])
    out.append(indent(table, 2))
    if len(shown) < len(order):
        out.append(Text(f"  … {len(order) - len(shown)} more nodes (--all-nodes lists them)", style="muted"))
    return out

