"""`ksched drain -o json|yaml`: the document of a drain.DrainReport (the terminal view: terminal/drain.py)."""

from __future__ import annotations

from typing import Any

from .. import KUBE_SCHEDULER_VERSION, __version__
from ..scheduling.analysis import verdict_of
from ..whatif.drain import DrainReport, PodOutcome, nominated


def _move(o: PodOutcome) -> dict[str, Any]:
    r = o.result
    d: dict[str, Any] = {
        "pod": o.pod.key,
        "fromNode": o.node,
        "priority": o.pod.priority,
        "owner": o.owner or None,
        "round": o.round,
    }
    if o.pdb:
        d["pdb"] = o.pdb
    if r is None:
        return d
    d["verdict"] = verdict_of(r)
    d["node"] = r.selected_node if r.schedulable else nominated(r)
    if r.preemption is not None and not r.schedulable and r.preemption.victims:
        d["victims"] = list(r.preemption.victims)
    d["message"] = r.message
    return d


def drain_doc(report: DrainReport, edits: list, allow_preemption: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"kschedVersion": __version__, "kubernetesVersion": KUBE_SCHEDULER_VERSION}
    if edits:
        doc["edits"] = [a.doc() for a in edits]
    nodes = []
    for n in report.nodes:
        problems = n.problems(allow_preemption)
        nodes.append(
            {
                "node": n.name,
                "drainable": not problems,
                "problems": problems,
                "errors": list(n.errors),
                "warnings": list(n.warnings),
                "pods": [
                    {
                        "pod": o.pod.key,
                        "action": o.action,
                        **({"message": o.message} if o.message else {}),
                        **({"pdb": o.pdb} if o.pdb else {}),
                    }
                    for o in n.pods
                ],
            }
        )
    doc["drain"] = {
        "drainable": report.drainable(allow_preemption),
        "rounds": report.rounds,
        "nodes": nodes,
        "evicted": [_move(o) for o in report.evicted],
    }
    return doc
