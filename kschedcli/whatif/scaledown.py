"""cluster-autoscaler's scale-down, simulated offline: `ksched scale-down`.

Reimplemented from cluster-autoscaler v1.34.5 (core/scaledown/planner, core/scaledown/eligibility,
simulator/cluster.go, simulator/drainability/rules, simulator/utilization): the nodes it would find
unneeded, and why each other node stays.

1. eligibility (core/scaledown/eligibility/eligibility.go), per node in name order: a node with
   the annotation cluster-autoscaler.kubernetes.io/scale-down-disabled=true, or in no node group,
   stays; its utilization (simulator/utilization/info.go) is the larger of its pods' cpu and
   memory requests over its allocatable (a GPU node's: GPU requests over allocatable GPUs),
   DaemonSet and mirror pods counted, pods being deleted not (the defaults); a node without cpu or
   memory allocatable stays (Calculate errs); above the threshold (0.5 by default), it stays;
2. the removal simulation (simulator/cluster.go, SimulateNodeRemoval), per eligible node in turn:
   its pods as the simulation holds them then (with those moved there by earlier removals),
   sorted by the drainability rules (simulator/drain.go, simulator/drainability/rules, in
   rules.Default's order: mirror, long-terminating, daemonset, safe-to-evict, terminal,
   replicated, system, not-safe-to-evict, local storage, pdb; pods_to_move); then each pod to
   move, in the node's order, placed on another node still in the cluster (filters only,
   round-robin), the node itself replaced meanwhile by a pod-less copy tainted
   ToBeDeletedByClusterAutoscaler (v1.34.4 on: it still counts as a topology domain); the first
   that fits nowhere keeps the node. A removable node leaves the cluster
   with its pods moved, before the next node is tried (canPersist); its budgets' disruptions are
   spent (a node whose pods take more than a budget allows is still removable: the planner marks
   it risky);
3. a node group's minimum size: removable nodes beyond it stay (nodes dropped in name order).

Not simulated, for want of a clock: the time-dependent parts (a kube-system pod older than
--blocking-system-pod-distruption-timeout is drainable; a deleted pod is long-terminating only
past its grace period; a node tainted ToBeDeletedByClusterAutoscaler recently is being deleted).
ksched blocks every kube-system pod without a budget and counts every pod being deleted as
long-terminating. Nor the replica-count rule's look-up of each pod's controller (the snapshot may
not hold the controllers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..api.model import Node, Pod
from ..config.scheduler import SchedulerConfig
from ..inputs.cluster import Cluster
from ..plugins.interpodaffinity.index import carry_over
from .autoscaler import GPU_RESOURCES, NodeGroup, Simulation, _copy_pod, _has_gpu
from .drain import Budget, budgets_of

SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
MIRROR = "kubernetes.io/config.mirror"
TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler"
DEFAULT_THRESHOLD = 0.5  # --scale-down-utilization-threshold and --scale-down-gpu-utilization-threshold


@dataclass
class NodeVerdict:
    node: str
    group: str | None
    utilization: float | None  # the larger of cpu and memory (GPU on a GPU node)
    resource: str  # which one
    removable: bool = False
    reason: str = ""  # why it stays
    blocking_pod: str | None = None
    moves: list[tuple[str, str]] = field(default_factory=list)  # (pod, destination)


@dataclass
class ScaleDownReport:
    nodes: list[NodeVerdict]
    threshold: float

    @property
    def removable(self) -> list[NodeVerdict]:
        return [v for v in self.nodes if v.removable]


def _membership(cluster: Cluster, groups: list[NodeGroup]) -> dict[str, NodeGroup]:
    """Node -> its group: the template node's own group, and every node sharing the template's
    node-pool label value (or instance type and zone)."""
    from .autoscaler import GROUP_LABELS, INSTANCE_TYPE, instance_type_and_zone

    def key(n: Node) -> tuple | None:
        for k in GROUP_LABELS:
            if n.labels.get(k):
                return (k, n.labels[k])
        it, zone = instance_type_and_zone(n.labels)
        return (INSTANCE_TYPE, it, zone) if it else None

    out: dict[str, NodeGroup] = {}
    for g in groups:
        k = key(g.template)
        for n in cluster.nodes:
            if n.name == g.template.name or (k is not None and key(n) == k):
                out.setdefault(n.name, g)
    return out


DAEMONSET_POD = "cluster-autoscaler.kubernetes.io/daemonset-pod"
# the controller kinds the replicated rule accepts with --skip-nodes-with-custom-controller-pods
# (on by default): any other controller is a custom one and blocks the node
REPLICATED_KINDS = ("ReplicationController", "Job", "ReplicaSet", "StatefulSet")


def _is_daemonset(pod: Pod) -> bool:
    """utils/pod IsDaemonSetPod: a DaemonSet controller, or the daemonset-pod annotation."""
    ref = pod.controller_ref()
    return (ref is not None and ref.get("kind") == "DaemonSet") or pod.annotations.get(DAEMONSET_POD) == "true"


def utilization(node: Node, pods: list[Pod]) -> tuple[float, str]:
    """utilization.Calculate with the default flags (DaemonSet and mirror pods counted; pods
    being deleted left out, as long-terminating). Raises ValueError, as Calculate errs, when
    the node has no cpu or memory allocatable (a non-GPU node)."""
    pods = [p for p in pods if not p.deleting]
    if _has_gpu(node):
        name = next((r for r in GPU_RESOURCES if node.allocatable.scalars.get(r, 0) > 0), GPU_RESOURCES[0])
        alloc = node.allocatable.scalars.get(name, 0)
        used = sum(p.requests.scalars.get(name, 0) for p in pods)
        return (used / alloc if alloc else 0.0), name  # an unready GPU: 0
    if not node.allocatable.milli_cpu or not node.allocatable.memory:
        which = "cpu" if not node.allocatable.milli_cpu else "memory"
        raise ValueError(f"no {which} allocatable")
    cpu = sum(p.requests.milli_cpu for p in pods) / node.allocatable.milli_cpu
    mem = sum(p.requests.memory for p in pods) / node.allocatable.memory
    return (cpu, "cpu") if cpu > mem else (mem, "memory")


def _local_storage(pod: Pod) -> bool:
    """utils/drain HasBlockingLocalStorage: a hostPath, or an emptyDir not in memory, not named
    in the safe-to-evict-local-volumes annotation (split at commas, nothing trimmed)."""
    value = pod.annotations.get(SAFE_TO_EVICT_LOCAL_VOLUMES) or ""
    allowed = set(value.split(",")) if value else set()
    for v in (pod.raw.get("spec") or {}).get("volumes") or []:
        if not isinstance(v, dict) or v.get("name") in allowed:
            continue
        if v.get("hostPath") is not None:
            return True
        ed = v.get("emptyDir")
        if ed is not None and (ed or {}).get("medium") != "Memory":
            return True
    return False


def _ghost(node: Node) -> Node:
    """replaceWithTaintedGhostNode's copy of the node: its object with the ToBeDeleted taint
    added (cluster-autoscaler's value is the time in Unix seconds; ksched has no clock: "0")."""
    spec = node.raw.get("spec") if isinstance(node.raw.get("spec"), dict) else {}
    taints = [t for t in spec.get("taints") or []]
    taints.append({"key": TO_BE_DELETED, "value": "0", "effect": "NoSchedule"})
    return Node({**node.raw, "spec": {**spec, "taints": taints}})


def pods_to_move(pods: list[Pod], budgets: list[Budget]) -> tuple[list[Pod], str | None, str | None]:
    """GetPodsToMove with the default drainability rules (rules.Default), in their order, the
    first with an outcome deciding: mirror (skipped), long-terminating (skipped: a pod being
    deleted), daemonset (drainable, kept apart: not moved), safe-to-evict=true and terminal
    (drainable), then the blocking ones: replicated, system, not-safe-to-evict, local storage,
    pdb. (pods to move, blocking pod, reason)."""
    move = []
    for p in pods:
        if MIRROR in p.annotations or p.deleting or _is_daemonset(p):
            continue
        if p.annotations.get(SAFE_TO_EVICT) == "true" or p.phase in ("Succeeded", "Failed"):
            move.append(p)
            continue
        ref = p.controller_ref()
        if ref is None:
            return [], p.key, "not replicated (no controller)"
        if ref.get("kind") not in REPLICATED_KINDS:
            return [], p.key, f"not replicated (a custom controller: {ref.get('kind')})"
        matching = [b for b in budgets if b.namespace == p.namespace and b.selector.matches(p.labels)]
        if p.namespace == "kube-system" and not matching:
            return [], p.key, "a kube-system pod without a PodDisruptionBudget"
        if p.annotations.get(SAFE_TO_EVICT) == "false":
            return [], p.key, f"annotated {SAFE_TO_EVICT}=false"
        if _local_storage(p):
            return [], p.key, "local storage (hostPath or emptyDir)"
        if any(b.allowed < 1 for b in matching):
            return [], p.key, "not enough PodDisruptionBudget disruptions"
        move.append(p)
    return move, None, None


def scale_down(
    cluster: Cluster, config: SchedulerConfig, groups: list[NodeGroup], threshold: float = DEFAULT_THRESHOLD
) -> ScaleDownReport:
    member = _membership(cluster, groups)
    nodes = sorted(cluster.nodes, key=lambda n: n.name)
    on: dict[str, list[Pod]] = {}
    for p in cluster.pods:
        if p.node_name:
            on.setdefault(p.node_name, []).append(p)
    verdicts: list[NodeVerdict] = []
    candidates: list[NodeVerdict] = []
    for n in nodes:
        g = member.get(n.name)
        try:
            util, res = utilization(n, on.get(n.name, []))
            failed = None
        except ValueError as e:
            util, res, failed = None, "", str(e)
        v = NodeVerdict(n.name, g.name if g else None, util, res)
        verdicts.append(v)
        if (n.raw.get("metadata") or {}).get("annotations", {}).get(SCALE_DOWN_DISABLED) == "true":
            v.reason = f"annotated {SCALE_DOWN_DISABLED}=true"
        elif g is None:
            v.reason = "in no node group (not autoscaled)"
        elif util is None:
            v.reason = f"utilization unknown: {failed}"
        elif util > threshold:  # v1.34.5: at the threshold is underutilized (v1.34.0: not)
            v.reason = f"above the {threshold:.0%} utilization threshold"
        else:
            candidates.append(v)
    budgets = budgets_of(cluster)
    by_name = {n.name: n for n in nodes}
    sim = Simulation(cluster, config, list(nodes), list(cluster.pods))
    for v in candidates:
        # the node's pods as the simulation has them: with those moved there by earlier removals
        move, blocking, why = pods_to_move(sim.scheduler.snapshot.by_name[v.node].pods, budgets)
        if blocking is not None:
            v.reason, v.blocking_pod = f"blocked by pod {blocking}: {why}", blocking
            continue
        # the node's pods off it, the node tainted out of reach: its pods placed elsewhere
        # findPlaceFor (v1.34.4 on): the node's pods off it, the node replaced by a pod-less copy
        # tainted ToBeDeletedByClusterAutoscaler:NoSchedule at the end of the node list (it still
        # counts as a topology domain), never a destination; removed for good once all moved
        trial = sim.without_node(v.node, ghost=_ghost(by_name[v.node]))
        not_it = v.node.__ne__
        moves = []
        for p in move:
            c = _copy_pod(p)
            dest = trial.place_any(c, matches=not_it)
            if dest is None:
                v.reason = f"no place to move pod {p.key}"
                break
            moves.append((p.key, dest))
        else:
            v.removable, v.moves = True, moves
            sim = trial.without_node(v.node)
            # the plugins' indexes carried over from the trial's, then the trial let go
            snapshot = sim.scheduler.snapshot
            carry_over(snapshot)
            snapshot.forget_parent()
            for b in budgets:
                b.allowed -= sum(1 for p in move if b.namespace == p.namespace and b.selector.matches(p.labels))
    # a node group's minimum size
    by_group: dict[str, int] = {}
    for v in verdicts:
        if v.removable and v.group is not None:
            g = next(gr for gr in groups if gr.name == v.group)
            size = g.current_size if g.current_size else sum(1 for x in verdicts if x.group == g.name)
            if size - by_group.get(g.name, 0) <= g.min_size:
                v.removable = False
                v.reason = f"node group {g.name} at its minimum size ({g.min_size})"
                continue
            by_group[g.name] = by_group.get(g.name, 0) + 1
    return ScaleDownReport(verdicts, threshold)


def scale_down_doc(report: ScaleDownReport) -> dict:
    return {
        "threshold": report.threshold,
        "removable": [v.node for v in report.removable],
        "nodes": [
            {
                "node": v.node,
                "nodeGroup": v.group,
                "utilization": None if v.utilization is None else round(v.utilization, 6),
                "resource": v.resource,
                "removable": v.removable,
                "reason": v.reason or None,
                "blockingPod": v.blocking_pod,
                "moves": [{"pod": p, "node": n} for p, n in v.moves],
            }
            for v in report.nodes
        ],
    }
