"""`ksched drain`: can these nodes be drained, and where would their pods go?

What `kubectl drain` does, offline, over a loaded Cluster:
  1. cordon the nodes (edits.cordon);
  2. sort each node's pods with kubectl's drain filters (k8s.io/kubectl/pkg/drain/filters.go), in
     their order, the first filter that keeps a pod deciding: DaemonSet-managed pods stay (as with
     --ignore-daemonsets), mirror pods are skipped, pods with an emptyDir volume are an error
     unless --delete-emptydir-data, pods without a controller an error unless --force. A node with
     an error gets no eviction at all, as kubectl gives up on it;
  3. evict the others through the eviction API's PodDisruptionBudget check (the registry's
     eviction.go): a pod selected by more than one budget cannot be evicted; a running, ready
     pod takes one of its budget's disruptionsAllowed, or is refused when none is left;
  4. reschedule the evicted pods' replacements (the controllers recreate them; a bare pod deleted
     with --force is gone) highest priority first, each bound before the next, with kube-scheduler's
     own cycle (Scheduler.run_sequence), preemption reported as it would nominate;
  5. a refused eviction is retried, as kubectl does, once replacements of that budget's pods have
     been placed (each placed replacement is healthy again, one more disruption allowed); what is
     still refused when nothing more can change is reported with its budget.
The snapshot files are never modified; the cluster is changed in memory, round by round.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..api.labels import LabelSelector, parse_label_selector
from ..api.model import Node, Pod
from ..config.scheduler import SchedulerConfig
from ..errors import InputError
from ..framework.result import CycleResult
from ..inputs.cluster import Cluster
from ..scheduling.scheduler import Scheduler, queue_sort
from .edits import cordon, is_daemonset_pod, owner_of, select_nodes

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"

# kubectl's drain filter messages (filters.go), each printed after "cannot delete " as kubectl prints it
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
# the eviction API's refusals (eviction.go)
PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
PDB_MULTIPLE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."

# what happens to a pod of a drained node
STAYS_DAEMONSET = "daemonset"  # not evicted (kubectl drain never deletes DaemonSet pods)
SKIPPED_MIRROR = "mirror"  # not evicted (kubelet's static pod)
REFUSED = "refused"  # a drain filter error: kubectl evicts nothing on the node
BLOCKED = "blocked"  # the eviction API refuses it (PDB)
EVICTED = "evicted"  # evicted; a controller recreates it and it is rescheduled
DELETED = "deleted"  # evicted with --force, no controller: nothing recreates it


@dataclass
class PodOutcome:
    """One pod of a drained node."""

    pod: Pod
    node: str
    action: str
    message: str = ""  # kubectl's or the eviction API's words
    pdb: str = ""  # namespace/name of the budget that refused or was used
    owner: str = ""  # `Kind namespace/name`, "" for a bare pod
    replacement: Pod | None = None
    result: CycleResult | None = None  # the replacement's scheduling cycle
    round: int = 0  # the eviction round (1 = at once; later = after retries)
    recreated: bool = True  # a controller recreates it (not a bare pod, not an orphan)


@dataclass
class NodeOutcome:
    name: str
    pods: list[PodOutcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # kubectl's `cannot delete ...` lines
    warnings: list[str] = field(default_factory=list)  # kubectl's warnings (`ignoring ...: pods`)

    def problems(self, allow_preemption: bool = False) -> list[str]:
        """Why the node cannot be drained cleanly: empty when it can."""
        out = list(self.errors)
        for o in self.pods:
            if o.action == BLOCKED:
                out.append(f"eviction of {o.pod.key} refused: {o.message}")
            elif o.action == DELETED:
                out.append(f"{o.pod.key} has no controller to recreate it: deleted")
            elif o.action == EVICTED and o.result is not None and not placed(o.result, allow_preemption):
                what = "needs preemption" if nominated(o.result) else "fits nowhere"
                out.append(f"{o.pod.key} {what} once evicted")
        return out


@dataclass
class DrainReport:
    nodes: list[NodeOutcome]
    evicted: list[PodOutcome]  # the evicted pods in the order their replacements were scheduled
    rounds: int

    def drainable(self, allow_preemption: bool = False) -> bool:
        return all(not n.problems(allow_preemption) for n in self.nodes)


def nominated(r: CycleResult) -> str | None:
    p = r.preemption
    return p.nominated_node if p is not None and p.nominated_node and not r.schedulable else None


def placed(r: CycleResult, allow_preemption: bool = False) -> bool:
    return bool(r.schedulable and r.selected_node) or (allow_preemption and nominated(r) is not None)


# ---------------------------------------------------------------------------- kubectl's filters


def has_local_storage(pod: Pod) -> bool:
    return any(isinstance(v, dict) and v.get("emptyDir") is not None for v in pod.volumes)


def _terminal(pod: Pod) -> bool:
    return pod.phase in ("Succeeded", "Failed")


def drain_filter(
    pod: Pod, *, delete_emptydir_data: bool, force: bool, daemonsets: set[tuple[str, str]] | None = None
) -> tuple[str, str]:
    """(action, message) as kubectl's filters decide, the first that does not delete deciding:
    EVICTED (maybe with a warning message), STAYS_DAEMONSET, SKIPPED_MIRROR or REFUSED.
    `daemonsets`: the (namespace, name) of the snapshot's DaemonSets, when it has any; a
    DaemonSet pod whose DaemonSet is not among them is an orphan (kubectl's Get fails)."""
    warning = ""
    if is_daemonset_pod(pod) and not _terminal(pod):
        owner = (pod.controller_ref() or {}).get("name") or ""
        if daemonsets is not None and (pod.namespace, owner) not in daemonsets:
            missing = f'daemonsets.apps "{owner}" not found'
            if not force:
                return REFUSED, missing
            return EVICTED, missing  # kubectl deletes an orphan with --force, with the error as warning
        return STAYS_DAEMONSET, DAEMONSET_WARNING
    if MIRROR_POD_ANNOTATION in pod.annotations:
        return SKIPPED_MIRROR, ""
    if has_local_storage(pod) and not _terminal(pod):
        if not delete_emptydir_data:
            return REFUSED, LOCAL_STORAGE_FATAL
        warning = LOCAL_STORAGE_WARNING
    if not _terminal(pod) and pod.controller_ref() is None:
        if not force:
            return REFUSED, UNMANAGED_FATAL
        warning = UNMANAGED_WARNING  # kubectl keeps the last filter's warning
    return EVICTED, warning


def _grouped(pairs: list[tuple[str, str]], fmt: str) -> list[str]:
    """kubectl's `message: pod, pod` lines (its map order is random; here first seen first)."""
    by_msg: dict[str, list[str]] = {}
    for msg, key in pairs:
        by_msg.setdefault(msg, []).append(key)
    return [fmt.format(msg=m, pods=", ".join(keys)) for m, keys in by_msg.items()]


# ---------------------------------------------------------------------------- the eviction API


@dataclass
class Budget:
    key: str  # namespace/name
    namespace: str
    selector: LabelSelector
    allowed: int  # status.disruptionsAllowed, as it changes during the drain
    desired: int
    healthy: int
    always_allow_unhealthy: bool


def _count(status: dict, key: str) -> int:
    v = status.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def budgets_of(cluster: Cluster) -> list[Budget]:
    out = []
    for (ns, name), raw in sorted(cluster.objects.get("PodDisruptionBudget", {}).items()):
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        try:
            sel = parse_label_selector(spec.get("selector"), "spec.selector")
        except InputError:
            continue  # an invalid selector matches no pod
        if sel.is_nothing or sel.is_empty():
            continue  # the eviction API: a nil or empty selector matches nothing

        allowed, desired, healthy = (
            _count(status, k) for k in ("disruptionsAllowed", "desiredHealthy", "currentHealthy")
        )
        out.append(
            Budget(
                f"{ns}/{name}",
                ns,
                sel,
                allowed,
                desired,
                healthy,
                spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow",
            )
        )
    return out


def _is_ready(pod: Pod) -> bool:
    """podutil.IsPodReady. The snapshot loader drops conditions that are True and routine
    (cluster.slim_object), so a running pod is ready unless it keeps a Ready condition that is
    not True."""
    if pod.phase != "Running":
        return False
    conds = (pod.raw.get("status") or {}).get("conditions") or []
    return not any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") != "True" for c in conds)


def evict(pod: Pod, budgets: list[Budget]) -> tuple[bool, str, str]:
    """(evicted, message, budget key) as the eviction subresource decides, taking a disruption
    from the budget when it evicts a healthy pod."""
    if pod.phase in ("Succeeded", "Failed", "Pending") or pod.deleting:
        return True, "", ""  # canIgnorePDB
    matching = [b for b in budgets if b.namespace == pod.namespace and b.selector.matches(pod.labels)]
    if len(matching) > 1:
        return False, PDB_MULTIPLE, ", ".join(b.key for b in matching)
    if not matching:
        return True, "", ""
    b = matching[0]
    if not _is_ready(pod) and (b.always_allow_unhealthy or (b.healthy >= b.desired and b.desired > 0)):
        return True, "", b.key
    if b.allowed <= 0:
        return (
            False,
            (
                f"{PDB_VIOLATION} The disruption budget {b.key.split('/', 1)[1]} needs {b.desired} "
                f"healthy pods and has {b.healthy} currently"
            ),
            b.key,
        )
    b.allowed -= 1
    b.healthy -= 1
    return True, "", b.key


# ---------------------------------------------------------------------------- the drain


def replacement_of(pod: Pod, cluster: Cluster, templates: dict | None = None) -> Pod:
    """The pod its controller creates in its place: the same spec, not bound to a node.
    `templates`: a dict the caller keeps across calls (model.Pod's), so that replacements whose
    spec parts are the very same objects (the loader shares equal parts) share their parsed
    fields instead of each parsing them again."""
    raw = dict(pod.raw)
    spec = {k: v for k, v in (raw.get("spec") or {}).items() if k != "nodeName"}
    raw["spec"] = spec
    raw["status"] = {"phase": "Pending"}
    meta = dict(raw.get("metadata") or {})
    meta.pop("deletionTimestamp", None)
    raw["metadata"] = meta
    return Pod(raw, cluster.priorities, cluster.default_priority, templates)


def _bound(pod: Pod, node_name: str, cluster: Cluster) -> Pod:
    raw = dict(pod.raw)
    raw["spec"] = {**(raw.get("spec") or {}), "nodeName": node_name}
    raw["status"] = {"phase": "Running"}
    return Pod(raw, cluster.priorities, cluster.default_priority)


def drain(
    cluster: Cluster,
    config: SchedulerConfig,
    targets: list[str],
    *,
    delete_emptydir_data: bool = False,
    force: bool = False,
    seed: int | None = None,
    on_round: Callable[[Scheduler, list[CycleResult]], None] | None = None,
    sampling: int | None = None,
) -> DrainReport:
    """Drain the nodes named or selected by `targets` (in that order) on `cluster`, which this
    changes: the nodes cordoned, the evicted pods removed, their placed replacements bound.
    `on_round(scheduler, results)` sees each round's results with the scheduler that decided them.
    `sampling`: node sampling from this start index (None: off); one scheduler's index carries
    from round to round, as a running kube-scheduler's does."""
    drained: list[Node] = []
    for t in targets:
        for n in select_nodes(cluster, t, "NODE"):
            if n.name not in {d.name for d in drained}:
                drained.append(n)
    if not drained:
        raise InputError("no node to drain", field="NODE")
    names = [n.name for n in drained]
    cordon(cluster, drained)
    on_node: dict[str, list[Pod]] = {n: [] for n in names}
    for p in cluster.pods:
        if p.node_name in on_node:
            on_node[p.node_name].append(p)

    budgets = budgets_of(cluster)
    # kubectl looks each DaemonSet pod's DaemonSet up; a snapshot without any DaemonSet object
    # (DaemonSets not exported) cannot tell an orphan, and every DaemonSet is taken to exist
    ds_objects = cluster.objects.get("DaemonSet") or {}
    daemonsets = set(ds_objects) if ds_objects else None
    nodes: list[NodeOutcome] = []
    pending: list[PodOutcome] = []  # to evict, in node then pod order
    for name in names:
        no = NodeOutcome(name)
        nodes.append(no)
        decided = [
            (p, *drain_filter(p, delete_emptydir_data=delete_emptydir_data, force=force, daemonsets=daemonsets))
            for p in on_node[name]
        ]
        errors = [(msg, p.key) for p, action, msg in decided if action == REFUSED]
        no.errors = _grouped(errors, "cannot delete {msg}: {pods}")
        no.warnings = _grouped(
            [(msg, p.key) for p, action, msg in decided if msg and action != REFUSED], "{msg}: {pods}"
        )
        for p, action, msg in decided:
            o = PodOutcome(p, name, action, msg, owner=owner_of(p, cluster))
            o.recreated = bool(o.owner) and not (is_daemonset_pod(p) and action == EVICTED)
            if action == EVICTED and errors:
                o.action, o.message = REFUSED, "kubectl evicts nothing on a node with errors"
            no.pods.append(o)
            if o.action == EVICTED:
                pending.append(o)

    evicted_order: list[PodOutcome] = []
    rounds = 0
    while pending:
        rounds += 1
        now = []
        for o in pending:
            ok, msg, pdb = evict(o.pod, budgets)
            o.pdb = pdb
            if ok:
                o.action = EVICTED if o.recreated else DELETED
                o.message = "" if o.action == EVICTED else o.message
                o.round = rounds
                now.append(o)
            else:
                o.action, o.message = BLOCKED, msg
        if not now:
            break
        gone = {id(o.pod) for o in now}
        cluster.pods = [p for p in cluster.pods if id(p) not in gone]
        movers = [o for o in now if o.action == EVICTED]
        for o in movers:
            o.replacement = replacement_of(o.pod, cluster)
        by_pod = {id(o.replacement): o for o in movers}
        queue = queue_sort([o.replacement for o in movers if o.replacement is not None])
        sched = Scheduler(cluster, config)
        if sampling is not None:
            sched.enable_sampling(sampling % max(1, len(sched.snapshot.names)))
        results = sched.run_sequence(queue, seed)
        if sched.sampling is not None:
            sampling = sched.sampling.next_start
        if on_round is not None:
            on_round(sched, results)
        healed = 0
        for r in results:
            o = by_pod[id(r.pod)]
            o.result = r
            evicted_order.append(o)
            if r.schedulable and r.selected_node:
                cluster.pods.append(_bound(r.pod, r.selected_node, cluster))
                for b in budgets:
                    if b.namespace == r.pod.namespace and b.selector.matches(r.pod.labels):
                        b.allowed += 1  # the replacement is healthy: the budget allows one more
                        b.healthy += 1
                        healed += 1
        pending = [o for o in pending if o.action == BLOCKED]
        if not healed:
            break
    return DrainReport(nodes, evicted_order, rounds)
