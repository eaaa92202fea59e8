"""`ksched diff -o json|yaml`: the document of a diff.DiffReport (the terminal view: terminal/diff.py)."""

from __future__ import annotations

from typing import Any

from .. import KUBE_SCHEDULER_VERSION, __version__
from ..whatif.diff import DiffReport, Outcome, WorldSummary


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
        "world": w.name,
        "nodes": w.nodes,
        "pods": w.pods,
        "scheduled": w.scheduled,
        "needPreemption": w.preemption,
        "unschedulable": w.unschedulable,
        "nodesUsed": w.nodes_used,
        "nodesReceivingPods": w.nodes_receiving,
        "utilisation": {
            res: {"mean": s.mean, "stdev": s.stdev, "min": s.min, "max": s.max} for res, s in w.spread.items()
        },
    }


def diff_doc(report: DiffReport, edits: list) -> dict[str, Any]:
    doc: dict[str, Any] = {"kschedVersion": __version__, "kubernetesVersion": KUBE_SCHEDULER_VERSION}
    if edits:
        doc["edits"] = [a.doc() for a in edits]
    doc["diff"] = {
        "pods": report.mode,
        "same": report.same,
        "a": _world_doc(report.a),
        "b": _world_doc(report.b),
        "changes": [
            {"pod": c.pod, "priority": c.priority, "a": _outcome_doc(c.a), "b": _outcome_doc(c.b)}
            for c in report.changes
        ],
    }
    return doc
