"""NodeInfo and Snapshot: per-node aggregates built once and updated on bind (as kube-scheduler's cache).

Plugins read only these; nothing here walks every pod for a node query.
"""

from __future__ import annotations

import builtins  # Snapshot.list shadows the name in its class body
import itertools
import operator
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..api.model import Node, Pod, Resource, taint_signature
from ..loader import no_gc
from .vectors import fit_int64

_generation = 0


def _next_generation() -> int:
    global _generation
    _generation += 1
    return _generation


def latest_generation() -> int:
    """The generation last given out: it moves whenever any NodeInfo is made or changes."""
    return _generation


_PVC_KEYS = "ksched.snapshot.pvc-keys"

# volume sources that never attach to a node, nor fail to be counted (NodeVolumeLimits)
_NEVER_ATTACHED = frozenset(("name", "configMap", "secret", "projected", "emptyDir", "downwardAPI", "hostPath"))


def _pvc_keys(pod: Pod) -> tuple[tuple[str, ...], int]:
    """`namespace/claim` of every persistentVolumeClaim volume of the pod, and how many of its
    volumes are neither a claim named so nor of a source that never attaches (_NEVER_ATTACHED):
    generic ephemeral and in-tree volumes, and any other."""
    keys = []
    other = 0
    for v in pod.volumes:
        pvc = (v or {}).get("persistentVolumeClaim") if isinstance(v, dict) else None
        if pvc:
            keys.append(f"{pod.namespace}/{pvc.get('claimName', '')}")
            if not pvc.get("claimName"):
                other += 1
        elif isinstance(v, dict) and not _NEVER_ATTACHED.issuperset(v):
            other += 1
    return tuple(keys), other


class NodeInfo:
    __slots__ = (
        "node",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "non0_cpu",
        "non0_mem",
        "used_ports",
        "pvc_ref_counts",
        "other_volumes",
        "generation",
        "image_states",
        "derived",
    )

    def __init__(self, node: Node):
        self.node = node
        self.pods: list[Pod] = []
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self.requested = Resource()
        self.non0_cpu = 0
        self.non0_mem = 0
        # (protocol, port) -> set of host IPs in use
        self.used_ports: dict[tuple[str, int], set[str]] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        # its pods' volumes that are no named claim and may attach (snapshot._pvc_keys)
        self.other_volumes = 0
        self.generation = _next_generation()
        # normalized image name -> (size, number of nodes that have it); filled by the Snapshot
        self.image_states: dict[str, tuple[int, int]] = {}
        # what consumers derived from the pods, by key; dropped whenever the pods change
        self.derived: dict | None = None

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def allocatable(self) -> Resource:
        return self.node.allocatable

    def pod_count(self) -> int:
        """len(self.pods), without making the pods where they are made when first read (a node
        read from the snapshot cache: lazy_pods.LazyNodeInfo)."""
        return len(self.pods)

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        if pod.has_affinity():
            self.pods_with_affinity.append(pod)
        if pod.has_required_anti_affinity():
            self.pods_with_required_anti_affinity.append(pod)
        self._update(pod, 1)

    def add_pods(self, pods: list[Pod]) -> None:
        """add_pod of each, in order, the sums taken in one pass (building a snapshot)."""
        if not pods:
            return
        self.pods.extend(pods)
        cpu = mem = eph = non0_cpu = non0_mem = 0
        scalars = self.requested.scalars
        pvc = self.pvc_ref_counts
        other = 0
        for pod in pods:
            if pod.pod_affinity is not None or pod.pod_anti_affinity is not None:
                self.pods_with_affinity.append(pod)
                if pod.has_required_anti_affinity():
                    self.pods_with_required_anti_affinity.append(pod)
            r = pod.requests
            cpu += r.milli_cpu
            mem += r.memory
            eph += r.ephemeral_storage
            if r.scalars:
                for k, v in r.scalars.items():
                    scalars[k] = scalars.get(k, 0) + v
            non0_cpu += pod.non0_cpu
            non0_mem += pod.non0_mem
            if pod.host_ports:
                self._update_ports(pod, 1)
            vols = pod._cache.get(_PVC_KEYS)
            if vols is None:
                vols = pod._cache[_PVC_KEYS] = _pvc_keys(pod)
            for key in vols[0]:
                pvc[key] = pvc.get(key, 0) + 1
            other += vols[1]
        self.other_volumes += other
        req = self.requested
        req.milli_cpu += cpu
        req.memory += mem
        req.ephemeral_storage += eph
        self.non0_cpu += non0_cpu
        self.non0_mem += non0_mem
        self.generation = _next_generation()
        self.derived = None

    def remove_pod(self, pod: Pod) -> bool:
        uid = pod.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if not lst:
                continue
            for i, p in enumerate(lst):
                if p is pod or p.uid == uid:
                    del lst[i]
                    break
        pods = self.pods
        for i, p in enumerate(pods):
            if p is pod or p.uid == uid:
                del pods[i]
                self._update(pod, -1)
                return True
        return False

    def _update(self, pod: Pod, sign: int) -> None:
        self.requested.add(pod.requests, sign)
        self.non0_cpu += sign * pod.non0_cpu
        self.non0_mem += sign * pod.non0_mem
        if pod.host_ports:
            self._update_ports(pod, sign)
        vols = pod._cache.get(_PVC_KEYS)
        if vols is None:
            vols = pod._cache[_PVC_KEYS] = _pvc_keys(pod)
        self.other_volumes += sign * vols[1]
        for key in vols[0]:
            n = self.pvc_ref_counts.get(key, 0) + sign
            if n <= 0:
                self.pvc_ref_counts.pop(key, None)
            else:
                self.pvc_ref_counts[key] = n
        self.generation = _next_generation()
        self.derived = None

    def _update_ports(self, pod: Pod, sign: int) -> None:
        for ip, proto, port in pod.host_ports:
            key = (proto, port)
            if sign > 0:
                self.used_ports.setdefault(key, set()).add(ip or "0.0.0.0")
            else:
                ips = self.used_ports.get(key)
                if ips is not None:
                    ips.discard(ip or "0.0.0.0")
                    if not ips:
                        del self.used_ports[key]

    def derive(self, key: str, build):
        """build(self), kept until the node's pods change (per-node aggregates a plugin wants
        that kube-scheduler's NodeInfo does not carry)."""
        d = self.derived
        if d is None:
            d = self.derived = {}
        elif key in d:
            return d[key]
        v = d[key] = build(self)
        return v

    def without(self, removed_ids: set[int]) -> NodeInfo:
        """A copy holding every pod but those whose id() is in `removed_ids`, built up from the
        pods that stay; its generation is new (it is not the node's current state)."""
        c = NodeInfo(self.node)
        c.image_states = self.image_states
        removed_ports = []
        for p in self.pods:
            if id(p) not in removed_ids:
                c.add_pod(p)
            elif p.host_ports:
                removed_ports.append(p)
        # host ports are sets per (protocol, port), as kube-scheduler's HostPortInfo: removing a
        # pod frees its ports even when a staying pod uses the same one, so replay the removals
        c.used_ports = {k: set(v) for k, v in self.used_ports.items()}
        for p in removed_ports:
            c._update_ports(p, -1)
        return c

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.requested = self.requested.clone()
        c.non0_cpu = self.non0_cpu
        c.non0_mem = self.non0_mem
        c.used_ports = {k: set(v) for k, v in self.used_ports.items()}
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.other_volumes = self.other_volumes
        c.generation = self.generation
        c.image_states = self.image_states
        c.derived = None
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.node.name}, {len(self.pods)} pods)"


def free_of(ni: NodeInfo) -> tuple[int, int, int, int]:
    """(room for more pods, free milli-cpu, free memory, free ephemeral storage) of a node."""
    alloc, used = ni.node.allocatable, ni.requested
    return (
        alloc.allowed_pods - len(ni.pods),
        alloc.milli_cpu - used.milli_cpu,
        alloc.memory - used.memory,
        alloc.ephemeral_storage - used.ephemeral_storage,
    )


def _below_2_61(values) -> bool:
    """Whether every value (Python ints) is of magnitude below 2**61."""
    return not values or (min(values) > -(2**61) and max(values) < 2**61)


def _below_2_53(values) -> bool:
    """Whether every value (Python ints) is of magnitude below 2**53 (each converts to float64 exactly)."""
    return not values or (min(values) > -(2**53) and max(values) < 2**53)


def _patched(
    arrays: tuple, columns: Sequence[list[int]], changed: list[int], fits: Callable[[list[int]], bool]
) -> bool:
    """Each array set from its column (lists in the same order) at the `changed` positions; False,
    the arrays half patched, when some position's values are not `fits`."""
    for i in set(changed):
        values = [col[i] for col in columns]
        if not fits(values):
            return False
        for array, v in zip(arrays, values):
            array[i] = v
    return True


def free_columns(node_infos: list[NodeInfo]) -> tuple[list[int], list[int], list[int], list[int]]:
    """free_of each node, as four columns in node order."""
    cols: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
    for values in map(free_of, node_infos):
        for col, v in zip(cols, values):
            col.append(v)
    return cols


class ScoreColumns:
    """What NodeResourcesFit's and NodeResourcesBalancedAllocation's scores read of each node, as
    columns in node order: allocatable milli-cpu and memory (`alloc_cpu`, `alloc_mem`), requested
    (`req_cpu`, `req_mem`), and a hundred times allocatable less the non-zero requests
    (`free0_cpu100`, `free0_mem100`: what LeastAllocated subtracts a hundred times the pod's
    from). `bound` is at least every allocatable and requested value (an upper bound kept through
    updates); `nonneg` says none is negative, nor any non-zero request: below 2**53 every such
    value converts to float64 exactly; `zero_alloc` is false when every node has some cpu and some
    memory allocatable."""

    __slots__ = (
        "alloc_cpu",
        "alloc_mem",
        "req_cpu",
        "req_mem",
        "free0_cpu100",
        "free0_mem100",
        "bound",
        "nonneg",
        "zero_alloc",
    )
    NAMES = ("alloc_cpu", "alloc_mem", "req_cpu", "req_mem", "free0_cpu100", "free0_mem100")  # _columns' order

    def __init__(self, node_infos: builtins.list[NodeInfo]):
        allocs = [ni.node.allocatable for ni in node_infos]
        reqs = [ni.requested for ni in node_infos]
        self.alloc_cpu = [a.milli_cpu for a in allocs]
        self.alloc_mem = [a.memory for a in allocs]
        self.req_cpu = [r.milli_cpu for r in reqs]
        self.req_mem = [r.memory for r in reqs]
        self.free0_cpu100 = [(a - ni.non0_cpu) * 100 for a, ni in zip(self.alloc_cpu, node_infos)]
        self.free0_mem100 = [(a - ni.non0_mem) * 100 for a, ni in zip(self.alloc_mem, node_infos)]
        values = (self.alloc_cpu, self.alloc_mem, self.req_cpu, self.req_mem)
        self.bound = max(map(max, values)) if node_infos else 0
        # (the non-zero requests too: free0 then at most a hundred times allocatable)
        self.nonneg = not node_infos or (
            min(map(min, values)) >= 0 and min(min(ni.non0_cpu, ni.non0_mem) for ni in node_infos) >= 0
        )
        # whether some node may have no cpu or no memory allocatable (once true, kept)
        self.zero_alloc = 0 in self.alloc_cpu or 0 in self.alloc_mem

    def _values(self, ni: NodeInfo) -> tuple[int, int, int, int, int, int]:
        a, r = ni.node.allocatable, ni.requested
        self.bound = max(self.bound, a.milli_cpu, a.memory, r.milli_cpu, r.memory)
        if min(a.milli_cpu, a.memory, r.milli_cpu, r.memory, ni.non0_cpu, ni.non0_mem) < 0:
            self.nonneg = False
        if not a.milli_cpu or not a.memory:
            self.zero_alloc = True
        free0 = ((a.milli_cpu - ni.non0_cpu) * 100, (a.memory - ni.non0_mem) * 100)
        return (a.milli_cpu, a.memory, r.milli_cpu, r.memory, *free0)

    def _columns(self) -> tuple[builtins.list[int], ...]:
        return (self.alloc_cpu, self.alloc_mem, self.req_cpu, self.req_mem, self.free0_cpu100, self.free0_mem100)

    def set(self, i: int, ni: NodeInfo) -> None:
        for col, v in zip(self._columns(), self._values(ni)):
            col[i] = v

    def append(self, ni: NodeInfo) -> None:
        for col, v in zip(self._columns(), self._values(ni)):
            col.append(v)


def _group_pods(
    pods: Iterable[Pod], node_names: Container[str]
) -> tuple[dict[str, list[Pod]], dict[str, list[Pod]], list[Pod]]:
    """(pods by node, pods by namespace, pods bound to a node not in node_names), each in the
    order given; the namespace lists hold only the placed pods."""
    placed: dict[str, list[Pod]] = {}
    by_ns: dict[str, list[Pod]] = {}
    unplaced: list[Pod] = []
    for p in pods:
        on_node = placed.get(p.node_name)
        if on_node is None:
            if p.node_name not in node_names:
                unplaced.append(p)
                continue
            on_node = placed[p.node_name] = []
        on_node.append(p)
        lst = by_ns.get(p.namespace)
        if lst is None:
            by_ns[p.namespace] = [p]
        else:
            lst.append(p)
    return placed, by_ns, unplaced


def _first_size(node: Node, name: str) -> int:
    """The size the node lists image `name` with (its first listing of the name)."""
    for names, size in node.images:
        if name in names:
            return size
    return 0


class Snapshot:
    """Every node's NodeInfo in the cluster's node order, with the indexes plugins share."""

    # without_nodes: how this snapshot came from its parent (a _Removal); label indexes are taken
    # from the parent's, less the removed pods, with the pods bound and evicted since (pod_log)
    _removal: Any = None

    def __init__(self, nodes: Iterable[Node], pods: Iterable[Pod]):
        self.node_infos: list[NodeInfo] = []
        self.by_name: dict[str, NodeInfo] = {}
        for n in nodes:
            ni = NodeInfo(n)
            self.node_infos.append(ni)
            self.by_name[n.name] = ni
        placed, by_ns, unplaced = _group_pods(pods, self.by_name)
        self.unplaced_pods: list[Pod] = unplaced  # bound to a node the snapshot does not have
        self._pods_by_namespace: dict[str, list[Pod]] = by_ns
        for name, on_node in placed.items():
            self.by_name[name].add_pods(on_node)
        self.generation = _next_generation()
        self._build_image_states()
        self._borrowed: set[int] = set()  # NodeInfos shared with the snapshot this was derived from
        self.derived_from: Snapshot | None = None
        self.removed_positions: builtins.list[int] = []  # without_nodes: those gone from derived_from
        self.copies: dict[int, NodeInfo] = {}
        self._init_indexes()

    def _init_indexes(self) -> None:
        self.names: list[str] = [ni.node.name for ni in self.node_infos]
        self.index_of: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        # the index of the node each bind changed, in order: results cached per node (column
        # caches) bring themselves up to date by replaying the entries past their position
        self.changes: list[int] = []
        # per namespace, the pods bound (1) to and evicted (-1) from the snapshot's nodes, with
        # the node's name, in order: per-selector counts bring themselves up to date from it
        self.pod_log: dict[str, list[tuple[Pod, str, int]]] = {}
        # namespace -> label key -> value -> the pod_log entries of the pods carrying it, from
        # when it was first asked for (pair_log)
        self._pair_logs: dict[str, dict[str, dict[str, list[tuple[Pod, str, int]]]]] = {}
        # namespace -> label key -> value -> the placed pods carrying it; built per namespace and
        # key on first use (a selector's keys only, not every label of every pod)
        self._label_index: dict[str, dict[str, dict[str, list[Pod]]]] = {}
        # per-node values in node order, for plugins deciding every node at once (built on first use)
        self._label_columns: dict[str, list] = {}
        self._image_columns: dict[str, list] = {}
        self._taint_groups: tuple[list[int], list[NodeInfo]] | None = None
        self._unschedulable: list[int] | None = None  # positions of cordoned nodes (unschedulable_positions)
        self._free: tuple[list, list, list, list] | None = None
        self._free_seen = 0  # how much of `changes` the free columns include
        # the free columns and the allocatable ones as int64 arrays (vectors.py): None until
        # asked for, False when a value does not fit in int64
        self._free_arrays: Any = None
        self._free_arrays_seen = 0
        self._score: ScoreColumns | None = None  # the resource scorers' columns (score_columns)
        self._score_seen = 0
        # the score columns as int64 arrays (score_arrays): None until asked for, False when a
        # value is too large for the arrays' arithmetic
        self._score_arrays: Any = None
        self._score_arrays_seen = 0
        # the same as float64 arrays (score_float_arrays): None until asked for, False when a value
        # does not convert exactly
        self._score_floats: Any = None
        self._score_floats_seen = 0

    def _build_image_states(self) -> None:
        for ni, states in zip(self.node_infos, self._image_states()):
            ni.image_states = states

    def _image_states(self) -> builtins.list[dict[str, tuple[int, int]]]:
        # kube-scheduler's cache keeps one ImageStateSummary per image name (backend/cache/cache.go,
        # addNodeImageStates): its Size is the sizeBytes of the first node added that lists the name,
        # shared by every node holding it. One (size, nodes) pair per name, shared by the tables.
        counts: dict[str, int] = defaultdict(int)
        sizes: dict[str, int] = {}
        listed: list[list[str]] = []
        for ni in self.node_infos:
            names_here = []
            for names, size in ni.node.images:
                for name in names:
                    if name not in sizes:
                        sizes[name] = size
                    names_here.append(name)
            for name in set(names_here):
                counts[name] += 1
            listed.append(names_here)
        state_of = {name: (size, counts[name]) for name, size in sizes.items()}
        return [{name: state_of[name] for name in names_here} for names_here in listed]

    def derive(self, nodes: Iterable[Node], pods: Iterable[Pod]) -> Snapshot:
        """What `Snapshot(nodes, pods)` gives, sharing this snapshot's NodeInfo of every node whose
        Node object and pods (the same objects, in the same order) are unchanged: a cluster edit
        (edits.py) rebuilds only the nodes it touched. Node order, the namespace and label indexes
        and image states are those of the new cluster. A shared NodeInfo is copied before the
        derived snapshot binds or evicts on it, so this snapshot never sees its changes."""
        new = Snapshot.__new__(Snapshot)
        nodes = builtins.list(nodes)
        placed, by_ns, unplaced = _group_pods(pods, {n.name for n in nodes})
        new.node_infos = []
        new.by_name = {}
        new._borrowed = set()
        old_of = self.by_name
        no_pods: builtins.list[Pod] = []
        for n in nodes:
            here = placed.get(n.name, no_pods)
            ni = old_of.get(n.name)
            if ni is not None and ni.node is n and len(ni.pods) == len(here) and all(map(operator.is_, ni.pods, here)):
                new._borrowed.add(len(new.node_infos))
            else:
                ni = NodeInfo(n)
                ni.add_pods(here)
            new.node_infos.append(ni)
            new.by_name[n.name] = ni
        new.unplaced_pods = unplaced
        new._pods_by_namespace = by_ns
        new.generation = _next_generation()
        new.derived_from = self
        new.removed_positions = []
        new.copies = {}  # position -> the NodeInfo its own is a copy of (same node and pods)
        for i, states in new._derived_image_states(self):
            ni = new.node_infos[i]
            if ni.image_states == states:
                continue
            if i in new._borrowed:  # an added or removed node changed how many nodes hold an image
                new.copies[i] = ni
                ni = new.node_infos[i] = new.by_name[ni.node.name] = ni.clone()
                new._borrowed.discard(i)
            ni.image_states = states
        new._init_indexes()
        return new

    def without_nodes(self, removed: Container[str], images: bool = True) -> Snapshot:
        """`derive` of this snapshot's nodes less those named in `removed`, with every pod but
        theirs, in work proportional to what the removed nodes held (their pods' namespaces,
        their images), not to the cluster: for `ksched sweep`, one derived snapshot per scenario.
        Every kept NodeInfo is shared (borrowed: copied before a bind or eviction); a node whose
        image states change (a removed node listed one of its images) gets a shallow copy holding
        the new states (worked out when first read), borrowed too. The
        columns and label indexes are taken from this snapshot's on first use, less the removed
        positions and pods (`_removal`). This snapshot must not have been bound to or evicted
        from while the new one is in use (they share NodeInfos). `images=False` keeps the kept
        nodes' image states as they were (one node too many for the removed node's images): for
        callers that only filter (cluster-autoscaler's removal simulation), ImageLocality, a score
        plugin, being their only reader. `removed_positions` records where the removed nodes were
        here, so that the plugins' indexes over this snapshot carry over (interpodaffinity/index.py)."""
        with no_gc():  # thousands of small objects, all kept: a collection would find nothing
            return self._without_nodes(removed, images)

    def _without_nodes(self, removed: Container[str], images: bool) -> Snapshot:
        gone_pods: set[int] = set()
        gone_positions = [i for i, name in enumerate(self.names) if name in removed]
        gone_by_ns: dict[str, builtins.list[Pod]] = {}
        for i in gone_positions:
            for p in self.node_infos[i].pods:
                gone_pods.add(id(p))
                gone_by_ns.setdefault(p.namespace, []).append(p)
        new = Snapshot.__new__(Snapshot)
        gone_set = set(gone_positions)
        new.node_infos = without_positions(self.node_infos, gone_positions)
        new.by_name = dict(self.by_name)
        for i in gone_positions:
            del new.by_name[self.node_infos[i].node.name]
        new._borrowed = set(range(len(new.node_infos)))
        new.unplaced_pods = builtins.list(self.unplaced_pods)
        by_ns = self._pods_by_namespace
        new._pods_by_namespace = {ns: builtins.list(lst) for ns, lst in by_ns.items()}
        # the pods' places in their namespaces' lists, indexed once a snapshot is the parent of a
        # second derivation (a sweep's loaded snapshot, of every scenario); a chain of single
        # derivations (scale-down's removals) filters the namespaces touched instead
        uses = self.__dict__["_derivations"] = self.__dict__.get("_derivations", 0) + 1
        at = self._namespace_positions() if uses > 1 else None
        for ns, pods in gone_by_ns.items():
            lst = by_ns[ns]
            if at is not None:
                drop = sorted(at[id(p)] for p in pods)
                if all(lst[i] is p for i, p in zip(drop, sorted(pods, key=lambda p: at[id(p)]))):
                    new._pods_by_namespace[ns] = without_positions(lst, drop)
                    continue
            # (or the lists changed since they were indexed: not for a snapshot bound to)
            new._pods_by_namespace[ns] = [p for p in lst if id(p) not in gone_pods]
        new.generation = _next_generation()
        new.derived_from = self
        new.removed_positions = gone_positions
        new.copies = {}
        # image states: only the names a removed node lists count differently (one node fewer
        # each, the size that of the first node left listing it)
        removed_holding: dict[str, int] = defaultdict(int)  # name -> removed nodes listing it
        for i in gone_positions if images else ():
            for name in {name for listed, _ in self.node_infos[i].node.images for name in listed}:
                removed_holding[name] += 1
        state_of: dict[str, tuple[int, int]] = {}
        if removed_holding:
            holders = self._image_holders()
            nis = self.node_infos
            for name, k in removed_holding.items():
                first = next((i for i in holders.get(name, ()) if i not in gone_set), None)
                if first is None:
                    continue
                state_of[name] = (_first_size(nis[first].node, name), nis[first].image_states[name][1] - k)
            # the nodes left listing a changed name: a copy each, its states restated on first read
            for i in set().union(*(holders[name] for name in state_of)) - gone_set:
                k = i - bisect_left(gone_positions, i)
                c = _restated(nis[i], state_of)
                new.node_infos[k] = new.by_name[c.node.name] = c
                new.copies[k] = nis[i]
        new._init_indexes()
        new._removal = _Removal(self, gone_positions, state_of, gone_pods, gone_by_ns, len(new.node_infos))
        return new

    def forget_parent(self) -> None:
        """Let go of the snapshot this one was derived from (a chain of derivations, as
        scale-down's removals make, would otherwise keep every snapshot of it alive): what was
        still to be taken from the parent on first use (columns, label indexes) is built from
        this snapshot's own nodes instead."""
        self.derived_from = None
        self._removal = None

    def _namespace_positions(self) -> dict[int, int]:
        """id(pod) -> its place in its namespace's list (built once)."""
        at = self.__dict__.get("_ns_at")
        if at is None:
            at = {}
            for lst in self._pods_by_namespace.values():
                at.update(zip(map(id, lst), range(len(lst))))
            self.__dict__["_ns_at"] = at
        return at

    def _parent_removal(self) -> _Removal | None:
        """How this snapshot came from its parent (without_nodes), while its node list is that
        parent's less the removed nodes (no node added since)."""
        r = self._removal
        if r is None or len(self.node_infos) != r.size:
            return None
        return r

    def _image_holders(self) -> dict[str, builtins.list[int]]:
        """image name -> the positions of the nodes listing it, in node order (built once)."""
        held = self.__dict__.get("_holders")
        if held is None:
            held = {}
            for i, ni in enumerate(self.node_infos):
                for name in {name for names, _ in ni.node.images for name in names}:
                    held.setdefault(name, []).append(i)
            self.__dict__["_holders"] = held
        return held

    def _derived_image_states(self, old: Snapshot) -> Iterable[tuple[int, dict[str, tuple[int, int]]]]:
        """(position, image states) of the nodes whose image states may differ from those their
        NodeInfo holds. When the old nodes keep their places and images and new ones come after
        them (edits that change nodes or add some), a name's size stays that of its first node
        and only the names the new nodes list count again; otherwise all are worked out anew."""
        nis, n_old = self.node_infos, len(old.node_infos)
        same_prefix = len(nis) >= n_old and all(
            a.node is b.node or (a.node.name == b.node.name and a.node.images == b.node.images)
            for a, b in zip(nis, old.node_infos)
        )
        if not same_prefix:
            return enumerate(self._image_states())
        out = []
        for i in range(n_old):
            if nis[i] is not old.node_infos[i]:
                out.append((i, old.node_infos[i].image_states))  # what it held before the edit
        if len(nis) == n_old:
            return out
        # added nodes: their names count once more on every node listing them
        added: dict[str, int] = defaultdict(int)
        sizes: dict[str, int] = {}
        for ni in nis[n_old:]:
            here = set()
            for names, size in ni.node.images:
                for name in names:
                    sizes.setdefault(name, size)
                    here.add(name)
            for name in here:
                added[name] += 1
        state_of: dict[str, tuple[int, int]] = {}
        for ni in old.node_infos:
            if len(state_of) == len(added):
                break
            for name in added.keys() & ni.image_states.keys() if ni.image_states else ():
                state_of.setdefault(name, ni.image_states[name])
        for name, k in added.items():
            size, count = state_of.get(name, (sizes[name], 0))
            state_of[name] = (size, count + k)
        changed = dict(out)
        for i, ni in enumerate(nis):
            base = changed.get(i, ni.image_states) if i < n_old else {}
            listed = base.keys() & added.keys() if i < n_old else None
            if i >= n_old:
                names_here = [name for names, _ in ni.node.images for name in names]
                changed[i] = {name: state_of[name] for name in names_here}
            elif listed:
                changed[i] = {**base, **{name: state_of[name] for name in listed}}
        return changed.items()

    def _own(self, name: str) -> NodeInfo:
        """The node's NodeInfo, first copied if it is shared with the snapshot this was derived from."""
        i = self.index_of[name]
        ni = self.node_infos[i]
        if i in self._borrowed:
            ni = self.node_infos[i] = self.by_name[name] = ni.clone()
            self._borrowed.discard(i)
        return ni

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    # -- columns: one value per node, in node order -------------------------------------------
    def label_column(self, key: str) -> list:
        """Each node's value of label `key` (None where it has none)."""
        col = self._label_columns.get(key)
        if col is None:
            r = self._parent_removal()
            if r is not None:
                col = without_positions(r.parent.label_column(key), r.positions)
            else:
                col = [ni.node.labels.get(key) for ni in self.node_infos]
            self._label_columns[key] = col
        return col

    def label_codes(self, key: str, np) -> tuple[Any, builtins.list]:
        """label_column(key) as (an int64 array of each node's value's index in the list of
        distinct values, -1 where the node has no such label; that list, in first-met order),
        for `np` (numpy, which the caller chose to use). Kept until a node is added."""
        known: dict[str, tuple] = self.__dict__.setdefault("_label_codes", {})  # (made on first use)
        made = known.get(key)
        r = self._parent_removal() if made is None else None
        if r is not None:
            # the parent's, less the removed nodes (a value no node has any more stays listed):
            # made once for the snapshot every scenario of a sweep derives its own from
            codes, distinct = r.parent.label_codes(key, np)
            made = known[key] = (np.delete(codes, r.positions), distinct)
        if made is None:
            col = self.label_column(key)
            index: dict[Any, int] = {None: -1}
            for v in col:
                if v not in index:
                    index[v] = len(index) - 1
            codes = np.fromiter(map(index.__getitem__, col), dtype=np.int64, count=len(col))
            made = known[key] = (codes, [v for v in index if v is not None])
        return made

    def label_code_index(self, key: str, np) -> tuple[Any, dict[str, int]]:
        """label_codes(key)'s codes, and each distinct value's code as a dict (for a lookup
        table filled from a few values, where the distinct values are many: hostnames)."""
        codes, distinct = self.label_codes(key, np)
        known: dict[str, tuple] = self.__dict__.setdefault("_label_code_index", {})  # (made on first use)
        made = known.get(key)
        if made is None or made[0] is not distinct:
            made = known[key] = (distinct, {v: i for i, v in enumerate(distinct)})
        return codes, made[1]

    def name_ranks(self, np) -> Any:
        """An int64 array in node order, ordered as the nodes' names (each node's place in the
        names sorted, or the parent's places less the removed nodes'): the least of tied nodes
        by name has the least. Kept until a node is added."""
        ranks = self.__dict__.get("_name_ranks")
        r = self._parent_removal() if ranks is None else None
        if r is not None:
            ranks = self.__dict__["_name_ranks"] = np.delete(r.parent.name_ranks(np), r.positions)
        if ranks is None:
            order = sorted(range(len(self.names)), key=self.names.__getitem__)
            ranks = np.empty(len(order), dtype=np.int64)
            ranks[np.array(order, dtype=np.intp)] = np.arange(len(order), dtype=np.int64)
            self.__dict__["_name_ranks"] = ranks
        return ranks

    def label_missing(self, key: str) -> bool:
        """Whether some node has no label `key` (a column's None entries looked for once)."""
        known: dict[str, bool] = self.__dict__.setdefault("_label_missing", {})  # (made on first use)
        missing = known.get(key)
        if missing is None:
            missing = known[key] = any(map(operator.is_, self.label_column(key), itertools.repeat(None)))
        return missing

    def image_column(self, name: str) -> list:
        """Each node's state of image `name` (its ImageStateSummary pair; None where it has none)."""
        col = self._image_columns.get(name)
        if col is None:
            r = self._parent_removal()
            if r is not None:
                col = without_positions(r.parent.image_column(name), r.positions)
                state = r.images.get(name)
                if state is not None:
                    # every node left listing it holds the name's new state
                    new_of: dict[Any, Any] = dict.fromkeys(col, state)
                    new_of[None] = None
                    col = builtins.list(map(new_of.__getitem__, col))
            elif "_holders" in self.__dict__ and not self.changes:
                # a parent of without_nodes' snapshots, never changed: the nodes listing it only
                col = [None] * len(self.node_infos)
                nis = self.node_infos
                one = self.__dict__.get("_image_state_of")
                if one is not None:  # every node listing it holds its one pair (lazy_pods.ImageStates)
                    state = one.get(name)
                    for i in self.__dict__["_holders"].get(name, ()):
                        col[i] = state
                else:
                    for i in self.__dict__["_holders"].get(name, ()):
                        col[i] = nis[i].image_states.get(name)
            else:
                col = [ni.image_states.get(name) for ni in self.node_infos]
            self._image_columns[name] = col
        return col

    def image_holders(self, name: str, np) -> tuple[Any, builtins.list] | None:
        """The positions of the nodes holding image `name` (an intp array of `np`, ascending) and
        each one's state (as image_column holds them), for a snapshot derived by without_nodes
        from one never bound to: read off the parent's holders in work proportional to them, not
        to the nodes. None for any other snapshot (image_column has every node's)."""
        r = self._parent_removal()
        if r is None or r.parent.changes:
            return None
        parent = r.parent
        held = parent._image_holders().get(name, ())
        if not len(held):
            return np.zeros(0, dtype=np.intp), []
        at = np.array(held, dtype=np.intp)
        if r.positions:
            gone = np.array(r.positions, dtype=np.intp)
            at = at[~np.isin(at, gone)]
            at = at - np.searchsorted(gone, at)  # (each kept node moves up past the removed before it)
        state = r.images.get(name)
        if state is None:
            one = parent.__dict__.get("_image_state_of")
            if one is None:
                nis = parent.node_infos
                gone_set = set(r.positions)
                kept = [i for i in held if i not in gone_set]
                return at, [nis[i].image_states.get(name) for i in kept]
            state = one.get(name)
        return at, [state] * len(at)

    def taint_groups(self) -> tuple[list[int], list[NodeInfo]]:
        """Each node's taint set as a group number (-1: no taints), and the first node of each
        group: a decision made from taints alone is made once per group."""
        if self._taint_groups is None:
            number: dict[tuple, int] = {}
            groups: list[int] = []
            first: list[NodeInfo] = []
            for ni in self.node_infos:
                taints = ni.node.taints
                if not taints:
                    groups.append(-1)
                    continue
                sig = taint_signature(ni.node)
                g = number.get(sig)
                if g is None:
                    g = number[sig] = len(first)
                    first.append(ni)
                groups.append(g)
            self._taint_groups = (groups, first)
        return self._taint_groups

    def unschedulable_positions(self) -> list[int]:
        """The positions of the nodes marked unschedulable (cordoned), in node order."""
        at = self._unschedulable
        if at is None:
            at = self._unschedulable = [i for i, ni in enumerate(self.node_infos) if ni.node.unschedulable]
        return at

    def free_columns(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """Each node's room for more pods (allowed pods minus pods), and its free milli-cpu,
        memory and ephemeral storage (allocatable minus requested), up to date with every bind."""
        free = self._free
        if free is None:
            r = self._parent_removal()
            if r is not None:
                # the parent's, less the removed nodes: as of the derivation, then every change since
                cols = [without_positions(col, r.positions) for col in r.parent.free_columns()]
                free = self._free = (cols[0], cols[1], cols[2], cols[3])
                self._free_seen = 0
            else:
                free = self._free = free_columns(self.node_infos)
                self._free_seen = len(self.changes)
        if self._free_seen < len(self.changes):
            nis = self.node_infos
            for i in set(self.changes[self._free_seen :]):
                for col, v in zip(free, free_of(nis[i])):
                    col[i] = v
        self._free_seen = len(self.changes)
        return free

    def score_columns(self) -> ScoreColumns:
        """Each node's allocatable, requested and non-zero requested milli-cpu and memory as
        columns in node order (ScoreColumns), up to date with every bind: for the resource
        scorers' pass over many nodes."""
        cols = self._score
        if cols is None:
            cols = self._score = ScoreColumns(self.node_infos)
            self._score_seen = len(self.changes)
        elif self._score_seen < len(self.changes):
            nis = self.node_infos
            for i in set(self.changes[self._score_seen :]):
                cols.set(i, nis[i])
            self._score_seen = len(self.changes)
        return cols

    def score_arrays(self, np) -> tuple | None:
        """score_columns' six columns (ScoreColumns order) as int64 arrays of `np` (numpy, which
        the caller chose to use; vectors.py), up to date with every bind; None when some value's
        magnitude reaches 2**61 (the scorers' sums and differences of two values then stay
        within int64)."""
        return self._score_columns_as("_score_arrays", np.int64, _below_2_61, np)

    def score_float_arrays(self, np) -> tuple | None:
        """score_columns' six columns (ScoreColumns order) as float64 arrays of `np`, up to date
        with every bind; None when some value's magnitude reaches 2**53 (below it every value is
        its float64 exactly)."""
        return self._score_columns_as("_score_floats", np.float64, _below_2_53, np)

    def _score_columns_as(self, attr: str, dtype: Any, fits: Callable[[Any], bool], np) -> tuple | None:
        """score_columns as arrays of `dtype`, kept in the attribute `attr` (None until made,
        False once a value is not `fits`) and brought up to date by the changes since
        (`attr`_seen of them included)."""
        cols = self.score_columns()
        arrays = getattr(self, attr)
        seen = attr + "_seen"
        if arrays is None:
            columns = cols._columns()
            if not all(map(fits, columns)):
                setattr(self, attr, False)
                return None
            arrays = tuple(np.array(col, dtype=dtype) for col in columns)
            setattr(self, attr, arrays)
        elif arrays is False:
            return None
        elif not _patched(arrays, cols._columns(), self.changes[getattr(self, seen) :], fits):
            setattr(self, attr, False)
            return None
        setattr(self, seen, len(self.changes))
        return arrays

    def free_arrays(self, np) -> tuple | None:
        """free_columns, then each node's allocatable milli-cpu, memory and ephemeral storage,
        as seven int64 arrays of `np` (numpy, which the caller chose to use; vectors.py), up to
        date with every bind; None when some value does not fit in int64."""
        free = self.free_columns()
        arrays = self._free_arrays
        r = self._parent_removal() if arrays is None else None
        if r is not None:
            parent = r.parent.free_arrays(np)
            if parent is not None:
                # the parent's, less the removed nodes: as of the derivation, then every change since
                arrays = self._free_arrays = tuple(np.delete(a, r.positions) for a in parent)
                self._free_arrays_seen = 0
        if arrays is None:
            allocs = [ni.node.allocatable for ni in self.node_infos]
            columns = (
                *free,
                [a.milli_cpu for a in allocs],
                [a.memory for a in allocs],
                [a.ephemeral_storage for a in allocs],
            )
            if not all(map(fit_int64, columns)):
                self._free_arrays = False
                return None
            arrays = self._free_arrays = tuple(np.array(col, dtype=np.int64) for col in columns)
        elif arrays is False:
            return None
        elif not _patched(arrays, free, self.changes[self._free_arrays_seen :], fit_int64):
            self._free_arrays = False
            return None
        self._free_arrays_seen = len(self.changes)
        return arrays

    def list(self) -> list[NodeInfo]:
        return self.node_infos

    def have_pods_with_affinity(self) -> builtins.list[NodeInfo]:
        return [ni for ni in self.node_infos if ni.pods_with_affinity]

    def have_pods_with_required_anti_affinity(self) -> builtins.list[NodeInfo]:
        return [ni for ni in self.node_infos if ni.pods_with_required_anti_affinity]

    def _key_index(self, namespace: str, key: str) -> dict[str, builtins.list[Pod]]:
        """value of label `key` -> the namespace's placed pods carrying it, built on first use."""
        by_key = self._label_index.get(namespace)
        if by_key is None:
            by_key = self._label_index[namespace] = {}
        index = by_key.get(key)
        if index is None and self._removal is not None:
            index = by_key[key] = self._key_index_from_parent(namespace, key)
        elif index is None:
            index = by_key[key] = {}
            for p in self._pods_by_namespace.get(namespace, ()):
                v = p.labels.get(key)
                if v is not None:
                    lst = index.get(v)
                    if lst is None:
                        index[v] = [p]
                    else:
                        lst.append(p)
        return index

    def _key_index_from_parent(self, namespace: str, key: str) -> dict[str, builtins.list[Pod]]:
        """_key_index of a snapshot from without_nodes: the parent's, less the removed pods, then
        the binds and evictions since, in order (the lists keep the namespace list's order)."""
        r = self._removal
        index = {v: builtins.list(held) for v, held in r.parent._key_index(namespace, key).items()}
        gone = r.pods_by_ns.get(namespace)
        if gone:
            ids = r.pod_ids
            for v in {p.labels.get(key) for p in gone}:
                held = index.get(v) if v is not None else None
                if held is not None and v is not None:
                    index[v] = [p for p in held if id(p) not in ids]
        for pod, _, sign in self.pod_log.get(namespace, ()):
            v = pod.labels.get(key)
            if v is None:
                continue
            if sign > 0:
                index.setdefault(v, []).append(pod)
            else:
                held = index.get(v)
                if held is not None:
                    _drop(held, pod)
        return {v: held for v, held in index.items() if held}

    def pods_matching(self, namespace: str, selector) -> builtins.list[Pod]:
        """The pods placed on the snapshot's nodes in `namespace` whose labels match `selector`,
        looked up by the selector's rarest key=value pair (or the namespace's pods)."""
        if selector.is_nothing:
            return []
        best: Sequence[Pod] | None = None
        pairs = selector.equality_pairs()
        if pairs:
            best_at = 0
            for at, (k, v) in enumerate(pairs):
                cand = self._key_index(namespace, k).get(v)
                if cand is None:
                    return []
                if best is None or len(cand) < len(best):
                    best, best_at = cand, at
            assert best is not None  # every pair had candidates (else returned above)
            # every candidate carries the rarest pair: only the other requirements are checked
            rest = selector.without_requirement(pairs[best_at])
            if not rest:
                return builtins.list(best)
            if all(op == "In" and len(values) == 1 for _, op, values in rest):
                if len(rest) == 1:
                    key, _, values = rest[0]
                    (value,) = values
                    return [p for p in best if p.labels.get(key) == value]
                # one pass per requirement (each keeps the order of the candidates)
                kept: Sequence[Pod] = best
                for key, _, values in rest:
                    (value,) = values
                    kept = [p for p in kept if p.labels.get(key) == value]
                return builtins.list(kept)
        else:
            best = self._pods_by_namespace.get(namespace, ())
        match = selector.matches
        assert best is not None  # every pair had candidates (else returned above)
        return [p for p in best if match(p.labels)]

    def evict(self, pod: Pod) -> bool:
        """Delete a bound pod (a preemption victim): its node, the namespace and label indexes
        and the change log forget it. False when the pod is on none of the snapshot's nodes."""
        ni = self.by_name.get(pod.node_name)
        if ni is None or not any(p is pod or p.uid == pod.uid for p in ni.pods):
            return False
        self._own(pod.node_name).remove_pod(pod)
        self.changes.append(self.index_of[pod.node_name])
        self._log(pod, pod.node_name, -1)
        in_ns = self._pods_by_namespace.get(pod.namespace)
        if in_ns is not None:
            _drop(in_ns, pod)
        by_key = self._label_index.get(pod.namespace)
        if by_key is not None:
            for key, index in by_key.items():
                held = index.get(pod.labels.get(key))  # type: ignore[arg-type]  # None: not held
                if held is not None:
                    _drop(held, pod)
        self.generation = _next_generation()
        return True

    def add_node(self, node: Node, pods: Sequence[Pod], images: bool = True) -> NodeInfo:
        """Append a node with its pods (bound to it already) in place: what cluster-autoscaler's
        cluster snapshot does when its estimator adds a template node. Costs the new node and its
        pods, not a rebuild: the indexes and columns kept are extended (the node-tracking indexes
        of the plugins grow on their next refresh). The new node's image states count it with the
        nodes before it; the other nodes' states are not recounted (only scoring reads them).
        `images=False` leaves the new node's image states empty (for callers that only filter)."""
        ni = NodeInfo(node)
        ni.add_pods(builtins.list(pods))
        counts: dict[str, tuple[int, int]] = {}
        for names, size in node.images if images else ():
            for name in names:
                if name not in counts:
                    held = next((o.image_states[name] for o in self.node_infos if name in o.image_states), None)
                    counts[name] = (held[0], held[1] + 1) if held is not None else (size, 1)
        ni.image_states = counts
        self.__dict__.pop("_holders", None)  # image name -> positions: built again when asked
        self.__dict__.pop("_image_state_of", None)  # the others' states are not recounted
        i = len(self.node_infos)
        self.node_infos.append(ni)
        self.by_name[node.name] = ni
        self.names.append(node.name)
        self.index_of[node.name] = i
        for key, col in self._label_columns.items():
            col.append(node.labels.get(key))
        self.__dict__.pop("_label_missing", None)
        self.__dict__.pop("_label_codes", None)
        self.__dict__.pop("_name_ranks", None)
        for name, col in self._image_columns.items():
            col.append(counts.get(name))
        self._taint_groups = None
        if self._unschedulable is not None and node.unschedulable:
            self._unschedulable.append(i)
        if self._free is not None:
            for col, v in zip(self._free, free_of(ni)):
                col.append(v)
        self._free_arrays = None
        self._free_arrays_seen = 0
        if self._score is not None:
            self._score.append(ni)
        self._score_arrays = None
        self._score_arrays_seen = 0
        self._score_floats = None
        self._score_floats_seen = 0
        for pod in pods:
            self._pods_by_namespace.setdefault(pod.namespace, []).append(pod)
            self._log(pod, node.name, 1)
            by_key = self._label_index.get(pod.namespace)
            if by_key is not None:
                for key, index in by_key.items():
                    value = pod.labels.get(key)
                    if value is not None:
                        index.setdefault(value, []).append(pod)
        self.changes.append(i)
        self.generation = _next_generation()
        return ni

    def _log(self, pod: Pod, node_name: str, sign: int) -> None:
        """A pod bound to (1) or evicted from (-1) a node: into the namespace's pod_log, and the
        pair logs asked for of its labels."""
        entry = (pod, node_name, sign)
        self.pod_log.setdefault(pod.namespace, []).append(entry)
        by_key = self._pair_logs.get(pod.namespace)
        if by_key:
            labels = pod.labels
            for key, by_value in by_key.items():
                value = labels.get(key)
                if value is not None:
                    held = by_value.get(value)
                    if held is not None:
                        held.append(entry)

    def pair_log(self, namespace: str, key: str, value: str) -> builtins.list[tuple[Pod, str, int]]:
        """The entries of the namespace's pod_log whose pod carries the label key=value, in
        order, from the first time it is asked for on: the list itself, which every later bind
        and eviction extends. A selector with that pair matches none of the other entries (its
        counts follow from these alone)."""
        by_value = self._pair_logs.setdefault(namespace, {}).setdefault(key, {})
        held = by_value.get(value)
        if held is None:
            held = by_value[value] = []
        return held

    def selector_log(self, namespace: str, selector) -> builtins.list[tuple[Pod, str, int]] | None:
        """What counts of a selector's matching pods kept between cycles replay: the pods bound
        and evicted in the namespace that carry its first key=value requirement (pair_log; no
        other pod matches it), or None where it has none (the namespace's whole pod_log)."""
        pairs = selector.equality_pairs()
        if not pairs:
            return None
        key, value = pairs[0]
        return self.pair_log(namespace, key, value)

    def bind(self, pod: Pod, node_name: str) -> None:
        """Assume the pod on the node: what kube-scheduler's cache does before binding."""
        pod.node_name = node_name
        self._own(node_name).add_pod(pod)
        self.changes.append(self.index_of[node_name])
        self._log(pod, node_name, 1)
        self._pods_by_namespace.setdefault(pod.namespace, []).append(pod)
        by_key = self._label_index.get(pod.namespace)
        if by_key is not None:
            for key, index in by_key.items():
                v = pod.labels.get(key)
                if v is not None:
                    index.setdefault(v, []).append(pod)
        self.generation = _next_generation()


# what plugins build over a snapshot on its first cycle and can build ahead, for a PrebuiltSnapshot
# (build_indexes): `build(snapshot)` gives an object whose `adopt(snapshot)` takes it up again in
# the process that takes the snapshot (PrebuiltSnapshot.take)
_BUILT_AHEAD: list = []


def build_ahead(build) -> None:
    """Have PrebuiltSnapshot.build_indexes run `build` (see _BUILT_AHEAD)."""
    _BUILT_AHEAD.append(build)


class PrebuiltSnapshot:
    """A Snapshot built ahead, with the node and pod objects it was built from: the snapshot cache
    stores one with the parsed cluster, so that a command reading the entry does not group and sum
    every pod again. `take` hands it out once, and only for those very objects in that order.
    Stored, its pods are in `store` (a lazy_pods.PodStore), made when first read, and with it the
    indexes plugins build ahead (build_indexes)."""

    __slots__ = ("nodes", "pods", "snapshot", "store", "indexes")

    def __init__(self, nodes: Iterable[Node], pods: Iterable[Pod]):
        self.nodes = tuple(nodes)
        self.pods = tuple(pods)
        self.snapshot: Snapshot | None = Snapshot(self.nodes, self.pods)
        self.store = None
        self.indexes: builtins.list = []

    def build_indexes(self) -> None:
        """Build what the first cycle would build over the snapshot (build_ahead), to be stored with it."""
        if self.snapshot is not None:
            self.indexes = [build(self.snapshot) for build in _BUILT_AHEAD]

    def take(self, nodes: Sequence[Node], pods: Sequence[Pod] | None) -> Snapshot | None:
        """The snapshot of `nodes` and `pods`, or None (taken already, or built from other objects).
        `pods` None: the store's pods, none read yet (so none changed). Its generations are given
        out anew: they were counted in the process that built it."""
        snap = self.snapshot
        if snap is None or len(nodes) != len(self.nodes) or not all(map(operator.is_, nodes, self.nodes)):
            return None
        if pods is not None or self.store is None:
            mine = self.pods if self.store is None else self.store.all()
            if pods is None or len(pods) != len(mine) or not all(map(operator.is_, pods, mine)):
                return None
        self.snapshot = None
        unplaced: Any = snap.unplaced_pods
        if type(unplaced) is tuple:  # (store, positions): lazy_pods.store_pods
            snap.unplaced_pods = unplaced[0].take(unplaced[1])
        for ni in snap.node_infos:
            ni.generation = _next_generation()
        snap.generation = _next_generation()
        for index in self.indexes:
            index.adopt(snap)
        self.indexes = []
        return snap


def _drop(pods: list[Pod], pod: Pod) -> None:
    for i, p in enumerate(pods):
        if p is pod:
            del pods[i]
            return


def without_positions(values: Sequence, gone: Sequence[int]) -> builtins.list:
    """`values` as a list without the items at the positions `gone` (ascending)."""
    if len(gone) <= 8:  # a copy, then each removed in place (from the end)
        out = builtins.list(values)
        for i in reversed(gone):
            del out[i]
        return out
    out = builtins.list(values[: gone[0]])
    for a, b in zip(gone, [*gone[1:], len(values)]):
        out += values[a + 1 : b]
    return out


_IMAGE_STATES: Any = NodeInfo.__dict__["image_states"]  # the slot's descriptor, under _Restated's property


class _Restated(NodeInfo):
    """A NodeInfo sharing every field of another (its pods, sums, generation) but its image
    states: those of the names in `_restated` (name -> new state, one map shared by every such
    node of a derived snapshot) replaced, worked out when first read (only ImageLocality reads
    them, and it reads the snapshot's image columns when it scores the snapshot's nodes)."""

    __slots__ = ("_restated",)
    _restated: dict[str, tuple[int, int]] | None

    @property
    def image_states(self) -> dict[str, tuple[int, int]]:
        states = _IMAGE_STATES.__get__(self)
        r = self._restated
        if r is not None:
            states = {**states, **{name: r[name] for name in states.keys() & r.keys()}}
            _IMAGE_STATES.__set__(self, states)
            self._restated = None
        return states

    @image_states.setter
    def image_states(self, states: dict[str, tuple[int, int]]) -> None:
        _IMAGE_STATES.__set__(self, states)
        self._restated = None


def _restated(ni: NodeInfo, restated: dict[str, tuple[int, int]]) -> NodeInfo:
    """A _Restated copy of `ni` (its `derived` none)."""
    c = _Restated.__new__(_Restated)
    c.node = ni.node
    c.pods = ni.pods
    c.pods_with_affinity = ni.pods_with_affinity
    c.pods_with_required_anti_affinity = ni.pods_with_required_anti_affinity
    c.requested = ni.requested
    c.non0_cpu = ni.non0_cpu
    c.non0_mem = ni.non0_mem
    c.used_ports = ni.used_ports
    c.pvc_ref_counts = ni.pvc_ref_counts
    c.other_volumes = ni.other_volumes
    c.generation = ni.generation
    _IMAGE_STATES.__set__(c, ni.image_states)
    c._restated = restated
    c.derived = None
    return c


@dataclass(slots=True)
class _Removal:
    """How a snapshot was derived by `Snapshot.without_nodes`: its parent, the parent's positions
    removed (ascending), the image names whose states changed (and their new states), the removed
    pods (ids, and by namespace), and how many nodes the snapshot had then."""

    parent: Snapshot
    positions: builtins.list[int]
    images: dict[str, tuple[int, int]]
    pod_ids: set[int]
    pods_by_ns: dict[str, builtins.list[Pod]]
    size: int
