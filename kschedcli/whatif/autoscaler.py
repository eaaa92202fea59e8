"""cluster-autoscaler's scale-up, simulated offline: `ksched scale-up`.

Reimplemented from cluster-autoscaler v1.34's own code (core/scaleup/orchestrator,
core/scaleup/equivalence, estimator/, expander/, simulator/): the same steps in the same order.

1. filter-out-schedulable: the pending pods, highest priority first, each placed on the first
   existing node (nodes in name order, tried round-robin from the one after the last success, as
   its SchedulerPluginRunner does) whose PreFilter and Filter plugins pass, bound before the next;
2. the other pods grouped as its equivalence groups are (same controller, same labels and spec);
3. per node group, the template node (an example node sanitized: fresh name and hostname label,
   cluster-autoscaler's own taints and node-condition taints dropped, its DaemonSet and mirror pods
   kept, no other pod) checked for each group's first pod (the scale-up pre-check);
4. the binpacking estimate per group: the groups ordered by (cpu request / node cpu + memory
   request / node memory), largest first; each pod tried on the new nodes already added, then on
   the last node added, then on a fresh node (none added once the last one stayed empty, or past
   the group's max size less its current size, or past 1,000 nodes a scale-up);
5. the expanders over the groups that help at least one pod: least-waste, most-pods,
   least-nodes, price, priority and random, each with the set it leaves (several when it ties).

Only PreFilter and Filter plugins run (cluster-autoscaler never scores): the scheduler's own.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from ..api.model import Node, Pod
from ..api.quantity import milli_value, value
from ..api.resources import parse_resource_list
from ..backend.node_tree import ZONE_BETA
from ..config.scheduler import SchedulerConfig
from ..errors import InputError, cut
from ..framework.cycle_state import CycleState
from ..framework.status import Status
from ..inputs.cluster import Cluster
from ..loader import iter_objects
from ..plugins.podtopologyspread.plugin import ERR_REASON_CONSTRAINTS_NOT_MATCH
from ..scheduling.scheduler import Scheduler
from ..textsafe import safe_name

HOSTNAME_LABEL = "kubernetes.io/hostname"
MAX_NODES_PER_SCALE_UP = 1000  # --max-nodes-per-scaleup's default
MAX_EQUIVALENCE_GROUPS_BY_CONTROLLER = 10
EXPENDABLE_PRIORITY_CUTOFF = -10  # --expendable-pods-priority-cutoff's default
EXPANDERS = ("least-waste", "most-pods", "least-nodes", "price", "priority", "random")
# labels naming a node's group, in the order they are looked for (inferred groups)
GROUP_LABELS = (
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "karpenter.sh/nodepool",
)
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
# the labels kubelet set before v1.17 (and still sets beside the GA ones): a node exported from an
# older cluster may carry only these
BETA_INSTANCE_TYPE = "beta.kubernetes.io/instance-type"


# a control-plane node's role labels (the second before v1.24)
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")


def instance_type_and_zone(labels: dict[str, str]) -> tuple[str | None, str | None]:
    """A node's instance type and zone, for a group inferred from them: the GA labels, else the
    beta ones they replaced; none for a control-plane node, which no cloud provider puts in a
    node group cluster-autoscaler scales (its instance type is often a worker's)."""
    if any(k in labels for k in CONTROL_PLANE_LABELS):
        return None, None
    return (labels.get(INSTANCE_TYPE) or labels.get(BETA_INSTANCE_TYPE), labels.get(ZONE) or labels.get(ZONE_BETA))


# taints a template made from a node leaves out (utils/taints: SanitizeTaints)
_CA_TAINTS = ("ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler")
_CONDITION_TAINTS = (
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/out-of-disk",
)
_TAINT_PREFIXES = (
    "startup-taint.cluster-autoscaler.kubernetes.io/",
    "status-taint.cluster-autoscaler.kubernetes.io/",
    "ignore-taint.cluster-autoscaler.kubernetes.io/",
)
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")
GPU_LABEL = "cloud.google.com/gke-accelerator"
# the price model of cluster-autoscaler's GCE provider, per hour (FORMAT.md's convention)
CPU_PRICE = 0.033174
MEMORY_GIB_PRICE = 0.004446
GIB = 1024**3
MIB = 1024**2


# ---------------------------------------------------------------------------- node groups


@dataclass
class NodeGroup:
    name: str
    template: Node  # the node the group's new nodes copy (its name is the example's)
    example_pods: list[Pod]  # the DaemonSet and mirror pods the example node runs
    min_size: int = 0
    max_size: int | None = None  # None: no bound but the per-scale-up one
    current_size: int = 0
    price: float | None = None  # per hour
    priority: int | None = None
    source: str = "file"  # "file" or the label it was inferred from

    @property
    def room(self) -> int:
        """Nodes the group may add: max - current, at most 1,000 a scale-up."""
        left = MAX_NODES_PER_SCALE_UP if self.max_size is None else self.max_size - self.current_size
        return max(0, min(left, MAX_NODES_PER_SCALE_UP))


def _is_template_pod(pod: Pod) -> bool:
    if pod.deleting:
        return False
    ref = pod.controller_ref()
    if ref is not None and ref.get("kind") == "DaemonSet":
        return True
    return "kubernetes.io/config.mirror" in pod.annotations


def _pods_on(cluster: Cluster, node: str) -> list[Pod]:
    return [p for p in cluster.pods if p.node_name == node and _is_template_pod(p)]


def _int_field(d: dict, key: str, path: str, where: str, default: int | None = None) -> int | None:
    v = d.get(key, default)
    if v is None:
        return None
    if type(v) is not int or v < 0:
        raise InputError(f"{v!r} is not a whole number of nodes, 0 or more", source=path, where=where, field=key)
    return v


def read_node_groups(path: str, cluster: Cluster) -> list[NodeGroup]:
    """The node groups of a file (FORMAT.md, "Cluster-autoscaler scale-up"): `nodeGroups`, each
    with name, templateNode (an existing node's name) or template (a Node), minSize, maxSize,
    currentSize, optional pricePerHour and priority."""
    docs = list(iter_objects(path))
    groups: list[NodeGroup] = []
    seen: set[str] = set()
    by_name = {n.name: n for n in cluster.nodes}
    for n, (doc, _) in enumerate(docs):
        where = f"document {n + 1}" if len(docs) > 1 else ""
        items = doc.get("nodeGroups") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise InputError("expected a list under nodeGroups", source=path, where=where, field="nodeGroups")
        for i, g in enumerate(items):
            at = f"{where} nodeGroups[{i}]".strip() if where else f"nodeGroups[{i}]"
            if not isinstance(g, dict):
                raise InputError("expected a node group (a mapping)", source=path, where=at)
            name = g.get("name")
            if not isinstance(name, str) or not name:
                raise InputError("a node group needs a name", source=path, where=at, field="name")
            if safe_name(name) != name:  # the views print it on one line, as a terminal shows it
                raise InputError(
                    f"{cut(name)}: a control character (a newline, a tab, an escape) in a name",
                    source=path,
                    where=at,
                    field="name",
                )
            if name in seen:
                raise InputError(f"node group {name} is given twice", source=path, where=at, field="name")
            seen.add(name)
            at = f"node group {name}"
            known = {
                "name",
                "templateNode",
                "template",
                "minSize",
                "maxSize",
                "currentSize",
                "pricePerHour",
                "priority",
            }
            for k in g:
                if k not in known:
                    raise InputError(f"unknown field {k!r}", source=path, where=at, field=str(k))
            if ("templateNode" in g) == ("template" in g):
                raise InputError(
                    "give templateNode or template (one of them)", source=path, where=at, field="templateNode"
                )
            if "templateNode" in g:
                example = by_name.get(g["templateNode"]) if isinstance(g["templateNode"], str) else None
                if example is None:
                    raise InputError(
                        f"no node {g['templateNode']!r} in the cluster", source=path, where=at, field="templateNode"
                    )
                pods = _pods_on(cluster, example.name)
            else:
                t = g["template"]
                if not isinstance(t, dict) or t.get("kind", "Node") != "Node":
                    raise InputError("template must be a Node", source=path, where=at, field="template")
                try:
                    example = Node({"apiVersion": "v1", "kind": "Node", **t})
                except InputError as err:
                    sub = f"template.{err.field}" if err.field else "template"
                    raise InputError(err.message, source=path, where=at, field=sub) from None
                pods = []
            min_size = _int_field(g, "minSize", path, at, 0) or 0
            max_size = _int_field(g, "maxSize", path, at)
            current = _int_field(g, "currentSize", path, at)
            if current is None:
                current = sum(1 for n in cluster.nodes if n is example) if "templateNode" in g else 0
            if max_size is not None and max_size < min_size:
                raise InputError(
                    f"maxSize {max_size} is below minSize {min_size}", source=path, where=at, field="maxSize"
                )
            price = g.get("pricePerHour")
            if price is not None and (
                isinstance(price, bool) or not isinstance(price, (int, float)) or not 0 <= price < math.inf
            ):  # (NaN and infinity are not prices either)
                raise InputError(f"{price!r} is not a price", source=path, where=at, field="pricePerHour")
            prio = g.get("priority")
            if prio is not None and type(prio) is not int:
                raise InputError(f"{prio!r} is not a whole number", source=path, where=at, field="priority")
            groups.append(
                NodeGroup(
                    name, example, pods, min_size, max_size, current, None if price is None else float(price), prio
                )
            )
    if not groups:
        raise InputError("no node group found", source=path, field="nodeGroups")
    return groups


def infer_node_groups(cluster: Cluster) -> list[NodeGroup]:
    """Node groups from the nodes' labels: the first of GROUP_LABELS a node carries, else its
    instance type and zone. A group's example is its first node by name; its current size is its
    node count; no max size is known (the per-scale-up bound only)."""
    members: dict[tuple[str, str], list[Node]] = {}
    for n in sorted(cluster.nodes, key=lambda n: n.name):
        key = next(((k, n.labels[k]) for k in GROUP_LABELS if n.labels.get(k)), None)
        if key is None:
            it, zone = instance_type_and_zone(n.labels)
            if not it:
                continue
            key = (f"{INSTANCE_TYPE}+{ZONE}", f"{it}/{zone}" if zone else it)
        members.setdefault(key, []).append(n)
    groups = []
    for (label, name), nodes in sorted(members.items(), key=lambda kv: kv[0][1]):
        groups.append(NodeGroup(name, nodes[0], _pods_on(cluster, nodes[0].name), 0, None, len(nodes), source=label))
    if not groups:
        raise InputError(
            "no node group: the nodes carry no node-pool label nor an instance type (give --node-groups FILE)",
            field="--node-groups",
        )
    return groups


def _sanitized_node(example: Node, name: str) -> Node:
    """createSanitizedNode: the example's object under a fresh name and hostname label, without
    cluster-autoscaler's taints and the node-condition taints."""
    raw = copy.deepcopy(example.raw)
    meta = raw.setdefault("metadata", {})
    meta["name"] = name
    meta["uid"] = f"{name}-uid"
    meta["labels"] = {**(meta.get("labels") or {}), HOSTNAME_LABEL: name}
    spec = raw.get("spec") or {}
    taints = spec.get("taints")
    if isinstance(taints, list):
        kept = [
            t
            for t in taints
            if not (
                isinstance(t, dict)
                and (
                    t.get("key") in _CA_TAINTS
                    or t.get("key") in _CONDITION_TAINTS
                    or str(t.get("key") or "").startswith(_TAINT_PREFIXES)
                )
            )
        ]
        raw["spec"] = {**spec, "taints": kept}
    return Node(raw)


def _sanitized_pod(cluster: Cluster, pod: Pod, node: str, suffix: str) -> Pod:
    raw = copy.deepcopy(pod.raw)
    meta = raw.setdefault("metadata", {})
    meta["name"] = f"{pod.name}-{suffix}"
    meta["uid"] = f"{pod.uid}-{suffix}"
    raw.setdefault("spec", {})["nodeName"] = node
    p = Pod(raw, cluster.priorities, cluster.default_priority)
    p.node_name = node
    return p


# ---------------------------------------------------------------------------- the simulation


def pod_cpu_mem(pod: Pod) -> tuple[int, int]:
    """podutils.PodRequests: milli-cpu and memory bytes the pod requests (overhead included)."""
    return pod.requests.milli_cpu, pod.requests.memory


def _capacity(node: Node) -> tuple[int, int]:
    status = node.raw.get("status") or {}
    cap = status.get("capacity")
    if not isinstance(cap, dict):
        cap = status.get("allocatable") or {}
    amounts = parse_resource_list(cap, "status.capacity")
    return milli_value(amounts.get("cpu", 0)), value(amounts.get("memory", 0))


class Simulation:
    """A cluster snapshot cluster-autoscaler's way: nodes added and pods bound as the simulation
    goes, the filters run through the scheduler's own frameworks (PreFilter, then Filter per node).

    One scheduler serves a simulation from its first question on: a node added goes into its
    snapshot in place (Snapshot.add_node, the cost of that node and its pods), a pod placed is
    bound there. A fork (cluster-autoscaler's ClusterSnapshot.Fork) is a snapshot derived from
    this one's, sharing every NodeInfo until it changes; the fork's changes never reach this one.
    """

    # a scan of every node tries this many node by node before deciding the rest a column at a
    # time (the same first node either way; the columns pay off for pods that fit nowhere)
    SCAN_BY_NODE = 64

    def __init__(
        self, cluster: Cluster, config: SchedulerConfig, nodes: list[Node], pods: list[Pod], parent: Any = None
    ):
        self.base = cluster
        self.config = config
        self.nodes = list(nodes)
        self.pods = list(pods)
        # SchedulerPluginRunner's lastIndex: one runner serves the whole scale-up (filter-out-
        # schedulable, then each group's estimate), so a fork shares it
        self.cursor = [0]
        self._scheduler: Scheduler | None = None
        self._parent = parent  # the snapshot this one derives from (a fork), until built
        self._ready: Any = None  # a snapshot made already (without_node), until built

    def fork(self) -> Simulation:
        s = Simulation(self.base, self.config, self.nodes, self.pods, self.scheduler.snapshot)
        s.cursor = self.cursor
        return s

    @property
    def scheduler(self) -> Scheduler:
        if self._scheduler is None:
            c = copy.copy(self.base)
            c.prebuilt_snapshot = None
            c.nodes = list(self.nodes)
            c.pods = list(self.pods)
            c.nominated_pods = []
            parent, self._parent = self._parent, None
            snapshot, self._ready = self._ready, None
            if snapshot is None and parent is not None:
                snapshot = parent.derive(c.nodes, c.pods)
            self._scheduler = Scheduler(c, self.config, snapshot)
        return self._scheduler

    def without_node(self, name: str, ghost: Node | None = None) -> Simulation:
        """A fork with the node and every pod on it gone (ClusterSnapshot.RemoveNodeInfo), and
        `ghost`, when given, added at the end with no pod (AddNodeInfo): the fork's snapshot is
        this one's less that node (Snapshot.without_nodes), every other NodeInfo shared until the
        fork binds to it, so that trying a node's removal costs that node and the pods moved, not
        a rebuild of the cluster. This simulation is unchanged (and must not bind while the fork
        is in use: they share NodeInfos). Image states are not recounted, nor worked out for the
        ghost: the hints simulator runs filters only, and only ImageLocality, a score plugin,
        reads them."""
        # the fork's `pods` lists only the pods bound to it: its snapshot, made here, holds the
        # rest (a list of every pod less the node's would cost a pass over the cluster per trial)
        s = Simulation(
            self.base,
            self.config,
            [n for n in self.nodes if n.name != name] + ([ghost] if ghost is not None else []),
            [],
        )
        s._ready = self.scheduler.snapshot.without_nodes({name}, images=False)
        if ghost is not None:
            s._ready.add_node(ghost, [], images=False)
        s.cursor = self.cursor
        return s

    def add_node(self, node: Node, pods: list[Pod]) -> None:
        """A node and the pods it runs (bound to it) added to the snapshot."""
        self.nodes.append(node)
        self.pods.extend(pods)
        if self._scheduler is not None:
            self._scheduler.snapshot.add_node(node, pods)
            self._scheduler.cluster.nodes.append(node)
            self._scheduler.cluster.pods.extend(pods)

    def _pre_filter(self, pod: Pod) -> tuple[Any, CycleState, set[str] | None, Status | None]:
        s = self.scheduler
        fw = s.framework_for(pod)
        if fw is None:
            return None, CycleState(), None, Status("UnschedulableAndUnresolvable", f"no profile {pod.scheduler_name}")
        state = CycleState()
        pf = fw.run_pre_filter(state, pod)
        if pf.status is not None:
            return fw, state, None, pf.status
        allowed = None
        if pf.result is not None and not pf.result.all_nodes():
            allowed = set(pf.result.node_names or ())
        return fw, state, allowed, None

    def check(self, pod: Pod, node: str) -> Status | None:
        """RunFiltersOnNode: None when the pod passes every filter on the node, else the failure."""
        fw, state, allowed, failed = self._pre_filter(pod)
        if failed is not None:
            return failed
        if allowed is not None and node not in allowed:
            return Status("UnschedulableAndUnresolvable", "node(s) didn't satisfy the PreFilter result")
        return fw.run_filter_plugins(state, pod, self.scheduler.snapshot.by_name[node])

    def place_any(self, pod: Pod, matches=None, among: list[str] | None = None) -> str | None:
        """RunFiltersUntilPassingNode: the first node, round-robin from the one after the last
        success, that is acceptable (`matches(name)`, or one of `among` when given: only those
        are tried), schedulable and passes the filters; the pod bound there."""
        fw, state, allowed, failed = self._pre_filter(pod)
        if failed is not None:
            return None
        snapshot = self.scheduler.snapshot
        infos = snapshot.node_infos
        n = len(infos)
        start = self.cursor[0] % n if n else 0
        if among is not None:
            index_of = snapshot.index_of
            positions = sorted(index_of[name] for name in among)
            k = bisect.bisect_left(positions, start)
            order: Any = positions[k:] + positions[:k]
        else:
            order = itertools.chain(range(start, n), range(start))
        for tried, i in enumerate(order):
            ni = infos[i]
            name = ni.node.name
            if allowed is not None and name not in allowed:
                continue
            if ni.node.unschedulable or (matches is not None and not matches(name)):
                continue
            if among is None and tried >= self.SCAN_BY_NODE:
                # the rest decided a column at a time: only the feasible nodes are walked
                columns = fw.run_filter_columns(state, pod)[1]
                feasible = [j for j, st in enumerate(columns) if st is None]
                k = bisect.bisect_left(feasible, i)
                w = bisect.bisect_left(feasible, start)
                rest = feasible[k:] if i >= start else feasible[k:w]
                if i >= start:
                    rest += feasible[:w]
                return self._first_of(pod, infos, rest, allowed, matches, n)
            if fw.run_filter_plugins(state, pod, ni) is None:
                self.cursor[0] = (i + 1) % n
                self.bind(pod, name)
                return name
        return None

    def _first_of(self, pod: Pod, infos: list, positions: list[int], allowed, matches, n: int) -> str | None:
        """place_any's walk over positions that pass the filters (in the order to try them)."""
        for i in positions:
            node = infos[i].node
            if allowed is not None and node.name not in allowed:
                continue
            if node.unschedulable or (matches is not None and not matches(node.name)):
                continue
            self.cursor[0] = (i + 1) % n
            self.bind(pod, node.name)
            return node.name
        return None

    def place_on(self, pod: Pod, node: str) -> Status | None:
        st = self.check(pod, node)
        if st is None:
            self.bind(pod, node)
        return st

    def bind(self, pod: Pod, node: str) -> None:
        self.scheduler.bind(pod, node)
        self.pods.append(pod)


def _copy_pod(pod: Pod) -> Pod:
    """The pod again, unbound (a bound pod's spec.nodeName dropped, as the removal simulation
    drops it before placing the pod elsewhere)."""
    c = copy.copy(pod)
    c.node_name = ""
    spec = pod.raw.get("spec")
    if isinstance(spec, dict) and spec.get("nodeName"):
        c.raw = {**pod.raw, "spec": {k: v for k, v in spec.items() if k != "nodeName"}}
    return c


def equivalence_groups(pods: list[Pod]) -> list[list[Pod]]:
    """groupPodsBySchedulingProperties: pods of one controller with the same labels and spec
    together (at most 10 groups a controller); a pod without a controller, or a DaemonSet's, alone.
    Groups in the order of their first pod."""
    groups: list[list[Pod]] = []
    by_controller: dict[str, list[tuple[int, Pod]]] = {}
    for p in pods:
        ref = p.controller_ref()
        if ref is None or ref.get("kind") == "DaemonSet":
            groups.append([p])
            continue
        uid = str(ref.get("uid") or f"{ref.get('kind')}/{p.namespace}/{ref.get('name')}")
        egs = by_controller.setdefault(uid, [])
        found = next(
            (gid for gid, rep in egs if rep.labels == p.labels and _semantic_spec(rep) == _semantic_spec(p)), None
        )
        if found is not None:
            groups[found].append(p)
            continue
        if len(egs) < MAX_EQUIVALENCE_GROUPS_BY_CONTROLLER:
            egs.append((len(groups), p))
        groups.append([p])
    return groups


def _semantic_spec(pod: Pod) -> Any:
    """PodSpecSemanticallyEqual's view of a spec: projected volumes (the service account token's
    kube-api-access-xxxxx, named differently in every pod) and their mounts, the hostname and the
    containers' env left out."""
    spec = pod.raw.get("spec")
    if not isinstance(spec, dict):
        return spec
    raw_volumes = spec.get("volumes")
    volumes: list = raw_volumes if isinstance(raw_volumes, list) else []
    projected = {v.get("name") for v in volumes if isinstance(v, dict) and v.get("projected") is not None}
    out = {k: v for k, v in spec.items() if k not in ("hostname", "volumes")}
    kept = [v for v in volumes if not (isinstance(v, dict) and v.get("name") in projected)]
    if kept:
        out["volumes"] = kept
    for key in ("containers", "initContainers"):
        cs = spec.get(key)
        if not isinstance(cs, list):
            continue
        clean = []
        for c in cs:
            if isinstance(c, dict):
                c = {k: v for k, v in c.items() if k != "env"}
                mounts = c.get("volumeMounts")
                if isinstance(mounts, list):
                    mounts = [m for m in mounts if not (isinstance(m, dict) and m.get("name") in projected)]
                    if mounts:
                        c["volumeMounts"] = mounts
                    else:
                        c.pop("volumeMounts")
            clean.append(c)
        out[key] = clean
    return out


@dataclass
class GroupEstimate:
    group: NodeGroup
    new_nodes: int = 0
    helped: list[Pod] = field(default_factory=list)
    not_helped: dict[str, str] = field(default_factory=dict)  # pod key -> why no node of the group took it
    skipped: str | None = None  # why the group was not considered (max size reached)
    node_pods: list[list[str]] = field(default_factory=list)  # per new node, the pods put there


@dataclass
class ExpanderChoice:
    name: str
    best: list[str]
    reason: str


@dataclass
class ScaleUpReport:
    fits_existing: list[tuple[str, str]]  # (pod key, node)
    pending: list[Pod]  # the pods left for the scale-up, in order
    groups: list[GroupEstimate]
    expanders: list[ExpanderChoice]
    unhelped: dict[str, dict[str, str]]  # pod key -> group -> reason
    inferred: bool = False
    ignored: dict[str, str] = field(default_factory=dict)  # pod key -> why no scale-up is for it

    @property
    def all_placed(self) -> bool:
        """Every pod placed: on an existing node, on a new node, or waiting for its preemption."""
        return not self.unhelped and all(why.startswith("waits for preemption") for why in self.ignored.values())


def _template_for(sim: Simulation, cluster: Cluster, group: NodeGroup, name: str) -> tuple[Node, list[Pod]]:
    node = _sanitized_node(group.template, name)
    suffix = name.rsplit("-", 1)[-1] if name.startswith("template-node-for-") else name
    pods = [_sanitized_pod(cluster, p, name, suffix) for p in group.example_pods]
    return node, pods


def _reason(st: Status | None) -> str:
    if st is None:
        return ""
    msg = st.message() or st.code
    return f"{st.plugin}: {msg}" if st.plugin else msg


def estimate(sim: Simulation, cluster: Cluster, group: NodeGroup, groups: list[list[Pod]]) -> GroupEstimate:
    """BinpackingNodeEstimator.Estimate for one group, on a fork of `sim`."""
    out = GroupEstimate(group)
    template = group.template
    alloc_cpu, alloc_mem = template.allocatable.milli_cpu, template.allocatable.memory

    def score(g: list[Pod]) -> float:
        cpu, mem = pod_cpu_mem(g[0])
        s = 0.0
        if alloc_cpu > 0:
            s += cpu / alloc_cpu
        if alloc_mem > 0:
            s += mem / alloc_mem
        return s

    ordered = sorted(groups, key=score, reverse=True)
    s = sim.fork()
    new_names: list[str] = []
    with_pods: set[str] = set()
    per_node: dict[str, list[str]] = {}
    last = ""
    limit = group.room
    new_available = True

    def track(pod: Pod, node: str) -> None:
        with_pods.add(node)
        per_node.setdefault(node, []).append(pod.key)
        out.helped.append(pod)

    for eg in ordered:
        pods = [_copy_pod(p) for p in eg]
        i = 0
        while i < len(pods):
            # the hinting simulator over the new nodes only (isNodeAcceptable)
            node = s.place_any(pods[i], among=new_names) if new_names else None
            if node is None:
                break
            track(pods[i], node)
            i += 1
        if not new_available:
            continue
        for pod in pods[i:]:
            found = False
            if last:
                st = s.place_on(pod, last)
                if st is None:
                    found = True
                    track(pod, last)
                elif _uses_hostname_spread(pod) and ERR_REASON_CONSTRAINTS_NOT_MATCH in st.reasons:
                    node = s.place_any(pod, lambda n, skip=last: n != skip)
                    if node is not None:
                        found = True
                        track(pod, node)
            if found:
                continue
            if last and last not in with_pods:
                break
            if len(new_names) >= limit:
                new_available = False
                break
            name = f"template-node-for-{group.name}-e-{len(new_names)}"
            node_obj, daemon = _template_for(s, cluster, group, name)
            s.add_node(node_obj, daemon)
            new_names.append(name)
            last = name
            if s.place_on(pod, name) is not None:
                break
            track(pod, name)
    out.new_nodes = len(with_pods)
    out.node_pods = [per_node[n] for n in new_names if n in per_node]
    return out


def _uses_hostname_spread(pod: Pod) -> bool:
    tsc = (pod.raw.get("spec") or {}).get("topologySpreadConstraints") or []
    return any(isinstance(c, dict) and c.get("topologyKey") == HOSTNAME_LABEL for c in tsc)


# ---------------------------------------------------------------------------- expanders


def _least_waste(options: list[GroupEstimate]) -> tuple[list[str], str]:
    best: list[str] = []
    least = 0.0
    scores = []
    for o in options:
        cpu = sum(pod_cpu_mem(p)[0] for p in o.helped)
        mem = sum(pod_cpu_mem(p)[1] for p in o.helped)
        node_cpu, node_mem = _capacity(o.group.template)
        avail_cpu, avail_mem = node_cpu * o.new_nodes, node_mem * o.new_nodes
        wasted = ((avail_cpu - cpu) / avail_cpu if avail_cpu else math.nan) + (
            (avail_mem - mem) / avail_mem if avail_mem else math.nan
        )
        scores.append(f"{o.group.name} {wasted * 50:.2f}%")
        if wasted == least and best:
            best.append(o.group.name)
        if not best or wasted < least:
            least = wasted
            best = [o.group.name]
    return best, "least blended cpu+memory waste: " + ", ".join(scores)


def _most_pods(options: list[GroupEstimate]) -> tuple[list[str], str]:
    most = max((len(o.helped) for o in options), default=0)
    return [o.group.name for o in options if len(o.helped) == most], f"most pods helped ({most})"


def _least_nodes(options: list[GroupEstimate]) -> tuple[list[str], str]:
    counts = [o.new_nodes for o in options if o.new_nodes > 0]
    least = min(counts, default=0)
    return [o.group.name for o in options if o.new_nodes == least and least > 0], f"fewest new nodes ({least})"


def _pod_price(cpu_milli: int, mem: int) -> float:
    return cpu_milli / 1000 * CPU_PRICE + mem / GIB * MEMORY_GIB_PRICE


def _preferred_cpu(node_count: int) -> int:
    for size, cpu in ((2, 1000), (6, 2000), (20, 4000), (60, 8000), (200, 16000)):
        if node_count <= size:
            return cpu
    return 32000


def _has_gpu(node: Node) -> bool:
    if GPU_LABEL in node.labels:
        return True
    return any(node.allocatable.scalars.get(r, 0) > 0 for r in GPU_RESOURCES)


def _price(options: list[GroupEstimate], cluster_nodes: int) -> tuple[list[str], str]:
    stabilization = _pod_price(500, 500 * MIB)
    preferred = _preferred_cpu(cluster_nodes)
    best: list[str] = []
    best_score = 0.0
    notes = []
    for o in options:
        if o.group.price is None:
            notes.append(f"{o.group.name} has no price")
            continue
        node_price = o.group.price * o.new_nodes
        pod_price = sum(_pod_price(*pod_cpu_mem(p)) for p in o.helped)
        ratio = (node_price + stabilization) / (pod_price + stabilization)
        cpu, _ = _capacity(o.group.template)
        unfit = max(preferred / cpu, cpu / preferred) if cpu > 0 else math.inf
        suppressed = (unfit - 1.0) * (1.0 - math.tanh((o.new_nodes - 1) / 15.0)) + 1.0
        if _has_gpu(o.group.template):
            suppressed = 1000.0
        score = suppressed * ratio
        notes.append(f"{o.group.name} {score:.4g}")
        if not best or score == best_score:
            best.append(o.group.name)
            best_score = score
        elif score < best_score:
            best = [o.group.name]
            best_score = score
    return best, "lowest price score (node price over pod price, times unfitness): " + ", ".join(notes)


def _priority(options: list[GroupEstimate]) -> tuple[list[str], str]:
    prios = [o.group.priority for o in options if o.group.priority is not None]
    if not prios:
        return [], "no group has a priority"
    top = max(prios)
    return [o.group.name for o in options if o.group.priority == top], f"highest priority ({top})"


def run_expanders(options: list[GroupEstimate], names: list[str], cluster_nodes: int) -> list[ExpanderChoice]:
    out = []
    for name in names:
        if not options:
            out.append(ExpanderChoice(name, [], "no group helps any pod"))
            continue
        if name == "least-waste":
            best, why = _least_waste(options)
        elif name == "most-pods":
            best, why = _most_pods(options)
        elif name == "least-nodes":
            best, why = _least_nodes(options)
        elif name == "price":
            best, why = _price(options, cluster_nodes)
        elif name == "priority":
            best, why = _priority(options)
        else:
            best, why = [o.group.name for o in options], "any group that helps (picked at random)"
        out.append(ExpanderChoice(name, sorted(best), why))
    return out


def chain_expanders(options: list[GroupEstimate], names: list[str], cluster_nodes: int) -> ExpanderChoice:
    """--expander a,b,...: each filter narrows the options the one before left (expander/factory's
    chain); the last set is the answer (cluster-autoscaler then picks one at random)."""
    left = list(options)
    reasons = []
    for name in names:
        if len(left) <= 1:
            break
        choice = run_expanders(left, [name], cluster_nodes)[0]
        if choice.best:
            left = [o for o in left if o.group.name in choice.best]
        reasons.append(f"{name}: {choice.reason}")
    return ExpanderChoice(",".join(names), sorted(o.group.name for o in left), "; ".join(reasons))


def check_expanders(names: list[str]) -> list[str]:
    for n in names:
        if n not in EXPANDERS:
            raise InputError(f"{cut(n)}: not an expander (one of {', '.join(EXPANDERS)})", field="--expander")
    return names


def scale_up(
    cluster: Cluster,
    config: SchedulerConfig,
    pending: list[Pod],
    groups: list[NodeGroup],
    expanders: list[str] | None = None,
    *,
    inferred: bool = False,
) -> ScaleUpReport:
    """The scale-up cluster-autoscaler would plan for the pending pods (module docstring)."""
    existing = sorted(cluster.nodes, key=lambda n: n.name)
    sim = Simulation(cluster, config, existing, list(cluster.pods))
    ignored: dict[str, str] = {}
    names = {n.name for n in existing}
    candidates: list[Pod] = []
    for pod in pending:
        # filterOutExpendable: pods below the expendable cutoff never trigger a scale-up; a pod
        # nominated to an existing node waits there for its preemption (it holds that room)
        if pod.priority < EXPENDABLE_PRIORITY_CUTOFF:
            ignored[pod.key] = f"expendable: priority {pod.priority} is below {EXPENDABLE_PRIORITY_CUTOFF}"
        elif pod.nominated_node_name and pod.nominated_node_name in names:
            ignored[pod.key] = f"waits for preemption on {pod.nominated_node_name} (status.nominatedNodeName)"
            p = _copy_pod(pod)
            sim.bind(p, pod.nominated_node_name)
        else:
            candidates.append(pod)
    # filter-out-schedulable: highest priority first (stable among equals)
    fits: list[tuple[str, str]] = []
    left: list[Pod] = []
    for pod in sorted(candidates, key=lambda p: -p.priority):
        p = _copy_pod(pod)
        node = sim.place_any(p)
        if node is None:
            left.append(pod)
        else:
            fits.append((pod.key, node))
    left_keys = {p.key for p in left}
    left = []
    for p in candidates:
        if p.key not in left_keys:
            continue
        ref = p.controller_ref()
        if ref is not None and ref.get("kind") == "DaemonSet":
            # filterOutDaemonSetPods: a scale-up does not add nodes for a DaemonSet's pod
            ignored[p.key] = "a DaemonSet's pod: no scale-up adds a node for it"
        else:
            left.append(p)
    egs = equivalence_groups(left)
    estimates: list[GroupEstimate] = []
    for g in groups:
        est = GroupEstimate(g)
        estimates.append(est)
        if g.max_size is not None and g.current_size >= g.max_size:
            est.skipped = f"max size reached ({g.max_size})"
            est.not_helped = {p.key: est.skipped for p in left}
            continue
        # the scale-up pre-check: each group's first pod on the template node
        probe = sim.fork()
        name = f"template-node-for-{g.name}"
        template, daemon = _template_for(probe, cluster, g, name)
        probe.add_node(template, daemon)
        fitting = []
        for eg in egs:
            st = probe.check(_copy_pod(eg[0]), name)
            if st is None:
                fitting.append(eg)
            else:
                for p in eg:
                    est.not_helped[p.key] = _reason(st)
        if not fitting:
            continue
        e = estimate(sim, cluster, g, fitting)
        est.new_nodes, est.helped, est.node_pods = e.new_nodes, e.helped, e.node_pods
        helped = {p.key for p in est.helped}
        for eg in fitting:
            for p in eg:
                if p.key not in helped:
                    est.not_helped[p.key] = (
                        f"no room: the group may add {g.room} node{'s' if g.room != 1 else ''}"
                        if e.new_nodes >= g.room
                        else "no new node of the group takes it (binpacking)"
                    )
    options = [e for e in estimates if e.helped and e.new_nodes > 0]
    choices = run_expanders(options, list(expanders or EXPANDERS), len(cluster.nodes))
    helped_any = {p.key for e in options for p in e.helped}
    unhelped = {
        p.key: {e.group.name: e.not_helped.get(p.key, "") for e in estimates} for p in left if p.key not in helped_any
    }
    return ScaleUpReport(fits, left, estimates, choices, unhelped, inferred, ignored)


def scale_up_doc(report: ScaleUpReport, chain: ExpanderChoice | None = None) -> dict:
    """`ksched scale-up -o json` (schema: $defs/scaleUp)."""
    groups = []
    for e in report.groups:
        g = e.group
        groups.append(
            {
                "name": g.name,
                "templateNode": g.template.name,
                "inferredFrom": None if g.source == "file" else g.source,
                "minSize": g.min_size,
                "maxSize": g.max_size,
                "currentSize": g.current_size,
                "pricePerHour": g.price,
                "priority": g.priority,
                "newNodes": e.new_nodes,
                "podsHelped": [p.key for p in e.helped],
                "podsNotHelped": [{"pod": k, "reason": r} for k, r in e.not_helped.items()],
                "skipped": e.skipped,
                "newNodePods": e.node_pods,
            }
        )
    expanders: dict[str, Any] = {}
    reasons = {}
    for c in report.expanders:
        expanders[c.name] = None if not c.best else c.best[0] if len(c.best) == 1 else list(c.best)
        reasons[c.name] = c.reason
    doc = {
        "fitsExistingNodes": [k for k, _ in report.fits_existing],
        "placements": [{"pod": k, "node": n} for k, n in report.fits_existing],
        "pending": [p.key for p in report.pending],
        "nodeGroups": groups,
        "expanders": expanders,
        "expanderReasons": reasons,
        "unhelped": [{"pod": k, "reasons": r} for k, r in report.unhelped.items()],
        "ignored": [{"pod": k, "reason": r} for k, r in report.ignored.items()],
    }
    if chain is not None:
        doc["chosen"] = {"expander": chain.name, "groups": chain.best, "reason": chain.reason}
    return doc
