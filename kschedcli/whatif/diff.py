"""`ksched diff`: the same pods scheduled in two worlds (two configs, two snapshots, or a snapshot
and its edited self), and what differs.

Each world is a Cluster and a SchedulerConfig; its pods are scheduled in priority order (PrioritySort),
each bound before the next, by Scheduler.run_sequence. With `replace_all`, each world's bound pods
are taken off their nodes and placed again from an empty cluster. Pods are matched across the
worlds by namespace/name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..api.model import Pod
from ..backend.snapshot import NodeInfo
from ..config.scheduler import SchedulerConfig
from ..framework.result import CycleResult
from ..inputs.cluster import Cluster
from ..scheduling.scheduler import Scheduler, queue_sort
from .edits import is_daemonset_pod


@dataclass
class Outcome:
    """One pod's verdict in one world: schedulable (node = the selected node), preemption
    (node = the nominated node), unschedulable or error (node None)."""

    verdict: str
    node: str | None
    message: str = ""
    victims: list[str] = field(default_factory=list)


def outcome_of(r: CycleResult) -> Outcome:
    if r.error:
        return Outcome("error", None, r.error)
    if r.schedulable:
        return Outcome("schedulable", r.selected_node, r.message)
    p = r.preemption
    if p is not None and p.nominated_node:
        return Outcome("preemption", p.nominated_node, r.message, list(p.victims))
    return Outcome("unschedulable", None, r.message)


@dataclass
class Spread:
    """Requested / allocatable, in percent, over the schedulable nodes after the run."""

    mean: float
    stdev: float
    min: float
    max: float


@dataclass
class WorldSummary:
    name: str  # how the world was made: `--config default`, `--against-config b.yaml`...
    nodes: int  # nodes in the snapshot
    pods: int  # pods scheduled (tried)
    scheduled: int
    preemption: int  # pods that only preemption would place
    unschedulable: int  # unschedulable or error
    nodes_used: int  # nodes running at least one pod after the run (DaemonSet pods aside)
    nodes_receiving: int  # nodes that received at least one of the pods
    spread: dict[str, Spread]  # cpu, memory
    outcomes: dict[str, Outcome]  # pod key -> outcome
    profiles: list[str] = field(default_factory=list)  # the profiles (schedulerName) the pods ran under
    # the nodes after the run, for the report's utilization (whatif/utilization.py)
    node_infos: list[NodeInfo] = field(default_factory=list, repr=False, compare=False)


@dataclass
class PodChange:
    pod: str
    priority: int
    a: Outcome | None  # None: the pod is not in that world
    b: Outcome | None


@dataclass
class DiffReport:
    a: WorldSummary
    b: WorldSummary
    changes: list[PodChange]  # in world A's scheduling order, then pods only in B
    mode: str  # "pods" (given), "pending" (the snapshot's pending pods), "all"

    @property
    def same(self) -> bool:
        return not self.changes


def _spread(values: list[float]) -> Spread:
    if not values:
        return Spread(0.0, 0.0, 0.0, 0.0)
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return Spread(round(mean, 1), round(math.sqrt(var), 1), round(min(values), 1), round(max(values), 1))


def _summarise(name: str, sched: Scheduler, results: list[CycleResult]) -> WorldSummary:
    outcomes = {r.pod.key: outcome_of(r) for r in results}
    counts = {"schedulable": 0, "preemption": 0, "unschedulable": 0, "error": 0}
    for o in outcomes.values():
        counts[o.verdict] += 1
    infos = sched.snapshot.list()
    cpu: list[float] = []
    mem: list[float] = []
    for ni in infos:
        if ni.node.unschedulable:
            continue
        alloc = ni.allocatable
        if alloc.milli_cpu > 0:
            cpu.append(100.0 * ni.requested.milli_cpu / alloc.milli_cpu)
        if alloc.memory > 0:
            mem.append(100.0 * ni.requested.memory / alloc.memory)
    receiving = {o.node for o in outcomes.values() if o.verdict == "schedulable"}
    used = sum(1 for ni in infos if any(not is_daemonset_pod(p) for p in ni.pods))
    return WorldSummary(
        name=name,
        nodes=len(infos),
        pods=len(results),
        scheduled=counts["schedulable"],
        preemption=counts["preemption"],
        unschedulable=counts["unschedulable"] + counts["error"],
        nodes_used=used,
        nodes_receiving=len(receiving),
        spread={"cpu": _spread(cpu), "memory": _spread(mem)},
        outcomes=outcomes,
        profiles=sorted({r.profile for r in results if r.profile}),
        node_infos=infos,
    )


def unbound(pod: Pod, cluster: Cluster) -> Pod:
    """The pod as it was before it was bound: no node, pending."""
    raw = dict(pod.raw)
    raw["spec"] = {k: v for k, v in (raw.get("spec") or {}).items() if k != "nodeName"}
    raw["status"] = {"phase": "Pending"}
    return Pod(raw, cluster.priorities, cluster.default_priority)


def run_world(
    name: str,
    cluster: Cluster,
    config: SchedulerConfig,
    pods: list[Pod] | None,
    *,
    replace_all: bool = False,
    seed: int | None = None,
    sampling: int | None = None,
) -> tuple[WorldSummary, list[CycleResult]]:
    """Schedule `pods` (with replace_all: the cluster's bound pods, taken off their nodes) in
    priority order on `cluster`. The cluster's pod list is emptied first with replace_all."""
    if replace_all:
        pods = [unbound(p, cluster) for p in cluster.pods]
        cluster.pods = []
    sched = Scheduler(cluster, config)
    if sampling is not None:  # node sampling from this start index
        sched.enable_sampling(sampling % max(1, len(sched.snapshot.names)))
    results = sched.run_sequence(queue_sort(list(pods or [])), seed)
    return _summarise(name, sched, results), results


def compare(
    a: WorldSummary, b: WorldSummary, order_a: list[CycleResult], order_b: list[CycleResult], mode: str
) -> DiffReport:
    changes: list[PodChange] = []
    seen: set[str] = set()
    for r in order_a + order_b:
        key = r.pod.key
        if key in seen:
            continue
        seen.add(key)
        oa, ob = a.outcomes.get(key), b.outcomes.get(key)
        if oa is None or ob is None or (oa.verdict, oa.node) != (ob.verdict, ob.node):
            changes.append(PodChange(key, r.pod.priority, oa, ob))
    return DiffReport(a, b, changes, mode)


def diff(
    world_a: tuple[str, Cluster, SchedulerConfig],
    world_b: tuple[str, Cluster, SchedulerConfig],
    pods_of: Callable[[Cluster], list[Pod]] | None,
    *,
    seed: int | None = None,
    mode: str = "pods",
    sampling: int | None = None,
) -> DiffReport:
    """Both worlds run; `pods_of(cluster)` gives each world its pods (parsed against that world's
    PriorityClasses); None with mode "all" re-places every bound pod. `sampling`: node sampling
    in both worlds, from this start index (None: off)."""
    runs = []
    for name, cluster, config in (world_a, world_b):
        pods = pods_of(cluster) if pods_of is not None else None
        runs.append(run_world(name, cluster, config, pods, replace_all=mode == "all", seed=seed, sampling=sampling))
    (sa, ra), (sb, rb) = runs
    return compare(sa, sb, ra, rb, mode)
