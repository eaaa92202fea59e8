"""What the workloads layer yields (each Workload and the pods it makes, the Expansion of the
input) and, per workload, what became of its new pods (the `workloads` part of `schedule`'s results)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..api.model import Pod
from .daemonset import DaemonNode

# -- results -------------------------------------------------------------------------------------


@dataclass
class Workload:
    kind: str
    namespace: str
    name: str
    source: str
    where: str
    desired: int | None  # replicas / parallelism; None for a DaemonSet
    existing: int  # pods of the snapshot it already controls
    pods: list[Pod] = field(default_factory=list)
    template: dict = field(default_factory=dict)  # the pod template its pods come from
    template_field: str = "spec.template"
    daemon_nodes: list[DaemonNode] = field(default_factory=list)
    note: str = ""  # why it creates no pod (suspended, ...)

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def as_doc(self) -> dict:
        doc: dict = {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "desired": self.desired,
            "existing": self.existing,
            "pods": [p.key for p in self.pods],
        }
        if self.kind == "DaemonSet":
            doc["nodes"] = [
                {"node": d.node, "eligible": d.eligible, "existing": d.existing, "reason": d.reason or None}
                for d in self.daemon_nodes
            ]
        if self.note:
            doc["note"] = self.note
        return doc


@dataclass
class Expansion:
    """The pods to schedule, in input order (a workload's pods in the order its controller makes
    them), and the workload each came from (None for a Pod given as it is)."""

    pods: list[Pod] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    origin: dict[str, Workload | None] = field(default_factory=dict)  # pod key -> workload
    ignored: Counter = field(default_factory=Counter)  # kinds of the input left out
    added: Counter = field(default_factory=Counter)  # objects added to the cluster

    def workload_of(self, pod: Pod) -> Workload | None:
        return self.origin.get(pod.key)


# -- results by workload ---------------------------------------------------------------------------


def summarize(expansion: Expansion, results) -> list[dict]:
    """Per workload, what became of its new pods: counts by verdict, and for a DaemonSet each node's
    outcome (`fits`: its pod was scheduled there). `results` are the cycle results of the pods."""
    by_pod = {r.pod.key: r for r in results}
    out = []
    for w in expansion.workloads:
        doc = w.as_doc()
        counts = {"schedulable": 0, "preemption": 0, "unschedulable": 0, "error": 0}
        for p in w.pods:
            r = by_pod.get(p.key)
            if r is not None:
                counts[_verdict(r)] += 1
        doc["results"] = counts
        if w.kind == "DaemonSet":
            for d, node in zip(doc["nodes"], w.daemon_nodes):
                r = by_pod.get(node.pod) if node.pod else None
                d["pod"] = node.pod or None
                # fits: its pod was scheduled there (true for a node already running it; null
                # where the controller makes no pod)
                d["fits"] = (True if node.existing else None) if r is None else r.schedulable
                d["message"] = None if r is None or r.schedulable else r.message
                d["failure"] = None if r is None or r.schedulable else _node_failure(r, node.node)
        out.append(doc)
    return out


def _node_failure(r, node: str) -> str | None:
    """The first filter that rejected `node` in the cycle (the verdict on the node its pod is
    pinned to), from the node groups the views compute (None when the result was not annotated)."""
    for g in (getattr(r, "annotations", None) or {}).get("nodeGroups", ()):
        if node in g["nodes"] and g["firstFailure"]:
            ff = g["firstFailure"]
            return f"{ff['plugin']}: {', '.join(ff['reasons'])}"
    return None


def _verdict(r) -> str:
    if r.error:
        return "error"
    if r.schedulable:
        return "schedulable"
    return "preemption" if r.preemption is not None and r.preemption.nominated_node else "unschedulable"
