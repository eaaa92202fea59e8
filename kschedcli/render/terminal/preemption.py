"""Preemption in explain: the nominated node and its victims, or why preemption cannot make room;
and the pieces of a preemption result the preempt view shares."""

from __future__ import annotations

from typing import Any

from ..richsafe import Text
from .layout import name_list, plural, section


def preemption_summary(result) -> list[Any]:
    p = result.preemption
    if p is None or result.schedulable:
        return []
    out: list[Any] = []
    if p.nominated_node:
        out.append(
            section(
                "Preemption",
                f"{plural(len(p.candidates), 'candidate')}"
                + (f", {plural(len(p.not_helpful), 'node')} where it cannot help" if p.not_helpful else "")
                + " · ksched preempt shows every candidate",
            )
        )
        t = Text("  nominate ")
        t.append(p.nominated_node, style="node bold")
        t.append(", evict: ", style="muted")
        t.append(", ".join(p.victims) or "nothing")
        out.append(t)
        pri = _victim_priorities(p)
        if pri:
            out.append(Text(f"  victim priorities: {', '.join(str(x) for x in pri)}", style="muted"))
        if len(p.equally_good) > 1:
            out.append(Text("  equally good: " + ", ".join(c.node for c in p.equally_good), style="warn"))
    else:
        out.append(section("Preemption", "cannot make room"))
        msg = p.ineligible or preemption_part(result.message) or p.message
        by_why: dict[str, list[str]] = {}
        for n in sorted(p.not_helpful):
            by_why.setdefault(p.not_helpful[n], []).append(n)
        if by_why:
            for why in sorted(by_why, key=lambda w: (-len(by_why[w]), w)):
                nodes = by_why[why]
                out.append(
                    Text.assemble(
                        ("  " + plural(len(nodes), "node") + ": ", "num"),
                        (why, "warn"),
                        (f"  ({name_list(nodes, 2)})", "muted"),
                    )
                )
        else:
            out.append(Text("  " + (msg or "no candidate node"), style="warn"))
    return out


def _victim_priorities(p) -> list[int]:
    for c in p.candidates:
        if c.node == p.nominated_node:
            return list(c.victim_priorities)
    return []


def preemption_part(message: str) -> str:
    i = message.find("preemption: ")
    return message[i:] if i >= 0 else ""


def criteria(c) -> dict:
    prios = list(c.victim_priorities)
    return {
        "pdb": c.pdb_violations,
        "highest": max(prios) if prios else None,
        "sum": sum(prios) if prios else 0,
        "count": len(c.victims),
    }


# why a candidate ranked below the nominated node, in words (kube-scheduler's criteria, in order)
CRITERION_TEXT = {
    "pdbViolations": "more PDB violations",
    "highestVictimPriority": "higher top victim priority",
    "victimPrioritySum": "higher victim priority sum",
    "victimCount": "more victims",
    "latestStartTime": "victims started earlier",
}
