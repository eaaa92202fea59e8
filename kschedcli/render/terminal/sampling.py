"""`ksched explain` on 100 nodes or more: what kube-scheduler's node sampling would select,
over every start index its search could begin at (scheduling/sampling.py, outlook)."""

from __future__ import annotations

from typing import Any

from ..richsafe import Text
from .layout import section


def sampling_section(result) -> list[Any]:
    o = getattr(result, "sampling_outlook", None)
    if not o:
        return []
    out: list[Any] = [
        section(
            "Node sampling",
            "kube-scheduler scores only the first feasible nodes it finds, from where its last cycle stopped",
        )
    ]
    ev = o.get("evaluatedNodes") or {}
    searched = o["searchedNodes"]
    what = f"of the {searched} nodes of the PreFilter result" if "preFilterResultNodes" in o else f"of {searched} nodes"
    out.append(
        Text(
            f"  it looks for {o['numFeasibleNodesToFind']} feasible nodes {what} "
            f"(percentageOfNodesToScore {o['percentageOfNodesToScore'] or 'adaptive'}); "
            f"{o['feasibleNodes']} are feasible; it evaluates {ev.get('min')}–{ev.get('max')} "
            f"(mean {ev.get('mean')})"
        )
    )
    winners = o.get("winners") or []
    if o["feasibleNodes"] <= o["numFeasibleNodesToFind"]:
        out.append(Text("  every start index finds every feasible node: the same node as with all nodes scored"))
        return out
    out.append(Text(f"  over the {o['startPositions']} start indices it would select:"))
    for w in winners:
        t = Text("    ")
        t.append(w["node"], style="node")
        t.append(f"  {w['percent']:.1f} % ({w['startPositions']})")
        if w["node"] == o.get("allNodesSelectedNode"):
            t.append("  the best node overall", style="muted")
        out.append(t)
    if o.get("winnersOmitted"):
        out.append(Text(f"    ... {o['winnersOmitted']} more nodes", style="muted"))
    out.append(
        Text(
            f"  the best node overall ({o.get('allNodesSelectedNode')}) is reached from "
            f"{o['allNodesSelectedFromPercent']:.1f} % of them"
        )
    )
    return out
