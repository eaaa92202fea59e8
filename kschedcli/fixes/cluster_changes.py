"""Candidate changes to the cluster, in the cluster edits' own vocabulary (edits.py): uncordon a
node, add a node like an existing one, remove a taint from a node, evict the pods preemption
would. Each is `--flag value` pairs that `ksched explain POD --flag value` applies as given."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..edits import UNSCHEDULABLE_TAINT
from .blocked import Blocked, is_system_taint
from .model import Change

if TYPE_CHECKING:
    from ..model import Pod
    from ..result import CycleResult
    from ..snapshot import Snapshot

# labels that name a node's pool (managed node groups of the big clouds, Karpenter, and the plain
# `pool`/`node-pool` of hand-made clusters); the instance type when none is set
POOL_LABELS = (
    "node-pool",
    "pool",
    "nodegroup",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "karpenter.sh/nodepool",
    "node.kubernetes.io/instance-type",
)
# what an empty copy of a node can change: its room, its host ports, and being a new domain of
# its hostname (spread, anti-affinity)
_NEW_NODE_CURES = frozenset({"NodeResourcesFit", "NodePorts", "InterPodAffinity", "PodTopologySpread"})
MAX_PER_KIND = 3  # nodes tried per kind of cluster change


def pool_of(node) -> tuple[str, str] | None:
    for key in POOL_LABELS:
        v = node.labels.get(key)
        if v:
            return key, v
    return None


def uncordon_changes(blocked: Blocked, snapshot: Snapshot) -> list[Change]:
    """Uncordon a node that only being cordoned keeps the pod off."""
    nodes = snapshot.list()
    out = []
    for i in blocked.nodes_failing_within({"NodeUnschedulable", "TaintToleration"}):
        node = nodes[i].node
        if not node.unschedulable:
            continue
        others = [t for t in node.taints if t.effect in ("NoSchedule", "NoExecute") and t.key != UNSCHEDULABLE_TAINT]
        if "TaintToleration" in blocked.failing[i] and others:
            continue  # another taint keeps it off too
        out.append(Change("uncordon", f"uncordon {node.name}", edits=[("--uncordon", node.name)], opens=1))
        if len(out) >= MAX_PER_KIND:
            break
    return out


def add_node_changes(blocked: Blocked, pod: Pod, snapshot: Snapshot) -> list[Change]:
    """Add a node like one the pod fails only for want of room (or for a port or a spread a new
    hostname domain would cure), one per pool, the pool's first such node by name."""
    nodes = snapshot.list()
    req = pod.requests
    seen: set = set()
    out = []
    for i in blocked.nodes_failing_within(_NEW_NODE_CURES):
        node = nodes[i].node
        if node.unschedulable:
            continue
        alloc = node.allocatable
        if (
            req.milli_cpu > alloc.milli_cpu
            or req.memory > alloc.memory
            or req.ephemeral_storage > alloc.ephemeral_storage
            or any(v > alloc.scalars.get(k, 0) for k, v in req.scalars.items())
        ):
            continue  # even an empty copy would lack room
        pool = pool_of(node)
        if pool in seen:
            continue
        seen.add(pool)
        which = f" (pool {pool[1]})" if pool is not None else ""
        out.append(Change("addNode", f"add a node like {node.name}{which}", edits=[("--add-node", node.name)]))
        if len(out) >= MAX_PER_KIND:
            break
    return out


def remove_taint_changes(blocked: Blocked, pod: Pod, snapshot: Snapshot) -> list[Change]:
    """Remove from one node the taints that alone keep the pod off it (never a taint the cluster's
    controllers keep)."""
    nodes = snapshot.list()
    out = []
    seen: set = set()
    for i in blocked.nodes_failing_within({"TaintToleration"}):
        node = nodes[i].node
        taints = [
            t
            for t in node.taints
            if t.effect in ("NoSchedule", "NoExecute")
            and not any(tol.tolerates(t.key, t.value, t.effect) for tol in pod.tolerations)
        ]
        if not taints or any(is_system_taint(t.key) for t in taints):
            continue
        sig = tuple(sorted((t.key, t.effect) for t in taints))
        if sig in seen:
            continue  # one node per taint set: a pool's nodes are alike
        seen.add(sig)
        edits = [("--taint", f"{node.name}:{t.key}:{t.effect}-") for t in taints]
        words = ", ".join(f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in taints)
        out.append(Change("removeTaint", f"remove the taint {words} from {node.name}", edits=edits, opens=1))
        if len(out) >= MAX_PER_KIND:
            break
    return out


def evict_changes(result: CycleResult, siblings: set[str] | frozenset[str] = frozenset()) -> list[Change]:
    """Evict the lower-priority pods preemption chose, so the pod fits without preempting; never
    when a victim shares the pod's owner (`siblings`: its controller would make it again, and
    evicting the others alone is a different change, for the verifying cycle to judge)."""
    p = result.preemption
    if p is None or not p.nominated_node or not p.victims:
        return []
    victims = [v for v in p.victims if v not in siblings]
    if not victims or len(victims) != len(p.victims):
        return []
    n = len(victims)
    shown = ", ".join(victims[:3]) + (f", … +{n - 3} more" if n > 3 else "")
    return [
        Change(
            "evict",
            f"evict {n} lower-priority pod{'s' if n != 1 else ''} from {p.nominated_node}: {shown}",
            edits=[("--evict", v) for v in victims],
            opens=1,
        )
    ]
