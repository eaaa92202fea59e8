"""The cluster's utilization in a report: requested against allocatable per node for CPU, memory,
pods and each extended resource, as heatmaps, one small multiple per zone and pool. Up to
MAX_NODE_ROWS nodes every node is drawn; a larger cluster is drawn aggregated: one row per zone and
pool (their sums), then the TOP_NODES fullest nodes, the rest counted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import charts
from .page import Page, table_html

MAX_NODE_ROWS = 600
TOP_NODES = 40
GIB = 1024**3


def amount(resource: str, value: int) -> str:
    """An amount as a person reads it: cores, GiB, counts."""
    if resource == "cpu":
        return f"{value / 1000:,.2f}"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return f"{value / GIB:,.1f}Gi"
    return f"{value:,}"


def ratio(used: list[int]) -> float | None:
    req, alloc = used
    return None if alloc <= 0 else req / alloc


def group_of(node: dict) -> str:
    return f"zone {node['zone']} · pool {node['pool']}"


def _cell_text(resource: str, used: list[int]) -> str:
    r = ratio(used)
    pct = "" if r is None else f" ({r:.0%})"
    return f"{amount(resource, used[0])} / {amount(resource, used[1])}{pct}"


def _cells(label: str, used: dict[str, list[int]], resources: list[str], fit: str | None) -> list[dict]:
    out: list[dict[str, Any]] = [{"row": label, "column": r, "ratio": ratio(used[r])} for r in resources]
    if fit is not None:
        out.append({"row": label, "column": "the pod", "fit": fit})
    return out


def _data_table(rows: list[tuple[Any, ...]], resources: list[str], extra: str) -> str:
    """Rows (node, zone, pool, resources used[, the pod's fit]) as the chart's data table."""
    headers = ["node", "zone", "pool", *(f"{r} requested / allocatable" for r in resources)]
    if extra:
        headers.append(extra)
    body = []
    for row in rows:
        name, zone, pool, used = row[0], row[1], row[2], row[3]
        cells = [name, zone, pool, *(_cell_text(r, used[r]) for r in resources)]
        if extra:
            cells.append(row[4] if len(row) > 4 else "")
        body.append(cells)
    return table_html(headers, body)


def _sum(nodes: list[dict], resources: list[str]) -> dict[str, list[int]]:
    return {r: [sum(n["resources"][r][0] for n in nodes), sum(n["resources"][r][1] for n in nodes)] for r in resources}


def utilization_section(
    page: Page,
    usage: dict[str, Any],
    *,
    heading: str = "Cluster utilization",
    note: str = "",
    fit: Callable[[str], str] | None = None,
    key: str = "util",
) -> None:
    """The section: per zone and pool a heatmap of every node (small multiples), or, over
    MAX_NODE_ROWS nodes, the zones and pools aggregated and the fullest nodes. `fit`: node -> its
    state for the pod explained (charts.FIT_STATES), drawn as a first column."""
    resources: list[str] = usage["resources"]
    nodes: list[dict] = usage["nodes"]
    page.heading(heading, ident=key)
    page.para(
        (note + " " if note else "")
        + "Each cell is a node's requested amount over its allocatable (pods: the pods on it over its pod "
        "slots), on a colour scale from 0% (dark) to 100% (yellow); an empty cell: the node has none of "
        "that resource.",
        "note",
    )
    if not nodes:
        page.para("No nodes.", "note")
        return
    groups: dict[str, list[dict]] = {}
    for n in sorted(nodes, key=lambda n: (n["zone"], n["pool"], n["name"])):
        groups.setdefault(group_of(n), []).append(n)
    extra = "the pod" if fit is not None else ""
    if len(nodes) <= MAX_NODE_ROWS:
        panels = []
        rows = []
        for label, members in groups.items():
            cells: list[dict] = []
            for n in members:
                state = fit(n["name"]) if fit is not None else None
                shown = n["name"] + (" (cordoned)" if n["unschedulable"] else "")
                cells += _cells(shown, n["resources"], resources, state)
                rows.append((n["name"], n["zone"], n["pool"], n["resources"], state or ""))
            panels.append((f"{label}: {len(members)} node(s)", cells))
        svg = charts.to_svg(charts.heatmaps(panels, resources, fit=fit is not None))
        caption = f"Utilization of every node ({len(nodes):,}), one heatmap per zone and pool ({len(groups)})"
        page.figure(svg, caption, _data_table(rows, resources, extra))
        return
    # aggregated: the zones and pools, then the fullest nodes
    cells = []
    rows = []
    for label, members in groups.items():
        used = _sum(members, resources)
        state = None
        if fit is not None:
            states = [fit(n["name"]) for n in members]
            feasible = sum(s in ("selected", "feasible") for s in states)
            state = "selected" if "selected" in states else ("feasible" if feasible else "filtered")
            label_shown = f"{label} ({len(members):,} nodes, {feasible:,} feasible)"
        else:
            label_shown = f"{label} ({len(members):,} nodes)"
        cells += _cells(label_shown, used, resources, state)
        first = members[0]
        rows.append((f"{len(members):,} nodes", first["zone"], first["pool"], used, state or ""))
    panel = (f"{len(groups)} zone/pool groups, {len(nodes):,} nodes", cells)
    svg = charts.to_svg(charts.heatmaps([panel], resources, fit=fit is not None))
    page.figure(
        svg,
        f"Utilization per zone and pool: the sums of their {len(nodes):,} nodes' requests over their allocatable",
        _data_table(rows, resources, extra),
    )

    def fullest(n: dict) -> tuple:
        worst = max((ratio(n["resources"][r]) or 0.0) for r in resources)
        return (-(worst), n["name"])

    top = sorted(nodes, key=fullest)[:TOP_NODES]
    if fit is not None:  # the selected node drawn too
        chosen = [n for n in nodes if fit(n["name"]) == "selected" and n not in top]
        top = top[: TOP_NODES - len(chosen)] + chosen
    cells = []
    rows = []
    for n in top:
        state = fit(n["name"]) if fit is not None else None
        cells += _cells(f"{n['name']} ({n['zone']} · {n['pool']})", n["resources"], resources, state)
        rows.append((n["name"], n["zone"], n["pool"], n["resources"], state or ""))
    more = len(nodes) - len(top)
    title = f"The {len(top)} fullest nodes (by their fullest resource); +{more:,} more nodes not drawn"
    page.figure(
        charts.to_svg(charts.heatmaps([(title, cells)], resources, fit=fit is not None)),
        f"The {len(top)} fullest of {len(nodes):,} nodes; +{more:,} more nodes not drawn",
        _data_table(rows, resources, extra),
    )
