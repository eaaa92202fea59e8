"""NodeResourcesFit: the pod's requests against the node's free allocatable; resource scoring."""

from __future__ import annotations

import math
import operator
from collections import deque
from itertools import compress, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ...api.model import is_extended_resource
from ...backend.snapshot import free_columns
from ...backend.vectors import fit_int64, numpy_for
from ...framework.interface import (
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    EnqueueExtensions,
    Plugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoresInRange,
)
from ...framework.status import UNRESOLVABLE, UNSCHEDULABLE, Status, error
from .resource_allocation import (
    least_allocated,
    most_allocated,
    pod_request_list,
    requested_to_capacity_ratio,
    resource_vectors,
    scored_arrays,
    scored_columns,
    scored_float_arrays,
)

if TYPE_CHECKING:
    from ...api.model import Pod
    from ...backend.snapshot import NodeInfo
    from ...framework.cycle_state import CycleState


_PREFILTER_KEY = "PreFilterNodeResourcesFit"
_LACKING = object()  # filter_nodes' mark for a node whose reasons are still to be told
_PRESCORE_KEY = "PreScoreNodeResourcesFit"


class InsufficientResource:
    __slots__ = ("resource", "reason", "requested", "used", "capacity", "unresolvable")

    def __init__(self, resource, reason, requested, used, capacity, unresolvable):
        self.resource = resource
        self.reason = reason
        self.requested = requested
        self.used = used
        self.capacity = capacity
        self.unresolvable = unresolvable

    def to_dict(self) -> dict:
        return {
            "resource": self.resource,
            "reason": self.reason,
            "requested": self.requested,
            "used": self.used,
            "capacity": self.capacity,
            "unresolvable": self.unresolvable,
        }


def _free_of_nodes(snapshot, nodes: list[NodeInfo]) -> tuple:
    """free_columns(nodes); read off the snapshot's own columns when `nodes` are many of its
    NodeInfos (a sampled search's chunk, the nodes changed since a cached column)."""
    if snapshot is not None and len(nodes) >= 16:
        at = list(map(snapshot.index_of.get, [ni.node.name for ni in nodes]))
        if None not in at and all(map(operator.is_, map(snapshot.node_infos.__getitem__, at), nodes)):
            get = itemgetter(*at)
            return tuple(get(col) for col in snapshot.free_columns())
    return free_columns(nodes)


def fits_request(req, node_info, ignored: set[str], ignored_groups: set[str]) -> list[InsufficientResource]:
    """fitsRequest: pod count first, then cpu, memory, ephemeral-storage, then scalar resources."""
    return fits_request_on(
        req, node_info.node.allocatable, node_info.requested, node_info.pod_count(), ignored, ignored_groups
    )


def fits_request_on(
    req, alloc, used, npods: int, ignored: set[str], ignored_groups: set[str]
) -> list[InsufficientResource]:
    """fitsRequest against a node's allocatable, its requested resources and pod count."""
    out = []
    if npods + 1 > alloc.allowed_pods:
        out.append(InsufficientResource("pods", "Too many pods", 1, npods, alloc.allowed_pods, False))
    if req.milli_cpu == 0 and req.memory == 0 and req.ephemeral_storage == 0 and not req.scalars:
        return out
    if req.milli_cpu > 0 and req.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(
            InsufficientResource(
                "cpu",
                "Insufficient cpu",
                req.milli_cpu,
                used.milli_cpu,
                alloc.milli_cpu,
                req.milli_cpu > alloc.milli_cpu,
            )
        )
    if req.memory > 0 and req.memory > alloc.memory - used.memory:
        out.append(
            InsufficientResource(
                "memory", "Insufficient memory", req.memory, used.memory, alloc.memory, req.memory > alloc.memory
            )
        )
    if req.ephemeral_storage > 0 and req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(
            InsufficientResource(
                "ephemeral-storage",
                "Insufficient ephemeral-storage",
                req.ephemeral_storage,
                used.ephemeral_storage,
                alloc.ephemeral_storage,
                req.ephemeral_storage > alloc.ephemeral_storage,
            )
        )
    # Go walks this map in random order; sorted keeps ksched's output deterministic.
    for name in sorted(req.scalars):
        q = req.scalars[name]
        if q == 0:
            continue
        if is_extended_resource(name) and (
            name in ignored or (ignored_groups and name.split("/", 1)[0] in ignored_groups)
        ):
            continue
        cap = alloc.scalars.get(name, 0)
        u = used.scalars.get(name, 0)
        if q > cap - u:
            out.append(InsufficientResource(name, f"Insufficient {name}", q, u, cap, q > cap))
    return out


def _verdict(insufficient: list[InsufficientResource], above_allocatable_unresolvable: bool = True) -> Status | None:
    """Filter's status. From v1.34 a request above the node's whole allocatable makes it
    UnschedulableAndUnresolvable (no eviction can help); before, every shortage is Unschedulable."""
    if not insufficient:
        return None
    unresolvable = above_allocatable_unresolvable and any(i.unresolvable for i in insufficient)
    code = UNRESOLVABLE if unresolvable else UNSCHEDULABLE
    return Status(code, *(i.reason for i in insufficient))


def _least_allocated_arrays(arrays: tuple, c: int, m: int) -> Any:
    """_least_allocated_columns over int64 arrays, every node having both resources (`c`, `m`: a
    hundred times the pod's requests), as an int64 array: a free column less a request stays
    within int64 (each below 2**61), and where it is not negative numpy's floor division is Go's
    truncating one."""
    np, _, alloc_cpu, alloc_mem, free_cpu, free_mem = arrays
    cpu = np.where(free_cpu >= c, (free_cpu - c) // alloc_cpu, 0)
    mem = np.where(free_mem >= m, (free_mem - m) // alloc_mem, 0)
    return (cpu + mem) >> 1


def _least_allocated_floats(floats: tuple, c: int, m: int) -> Any:
    """_least_allocated_arrays in float64 (scored_float_arrays' arrays, read at its `take`), every
    node having both resources, no allocatable or request negative, `c` and `m` below 2**53. Each
    value is then its float64 exactly, and so is a free column less a request where it is not
    negative (a negative one keeps its sign: 0). Its correctly rounded quotient by allocatable
    floors to the integer quotient q: the exact quotient is at least 1 / allocatable below the
    next integer, more than the rounding's half ulp (at most q / 2**53) as q * allocatable, the
    dividend, is below 2**53."""
    np, _, take, alloc_cpu, alloc_mem, free_cpu, free_mem = floats
    cpu = np.floor((free_cpu - c) / alloc_cpu)
    np.maximum(cpu, 0.0, out=cpu)  # (a request over what is free: 0)
    mem = np.floor((free_mem - m) / alloc_mem)
    np.maximum(mem, 0.0, out=mem)
    cpu += mem
    scores = cpu.astype(np.int64) >> 1
    return scores if take is None else scores.take(take)


class NodeResourcesFit(Plugin, PreFilterPlugin, BatchFilterPlugin, PreScorePlugin, BatchScorePlugin, EnqueueExtensions):
    name = "NodeResourcesFit"

    def __init__(self, args, handle):
        super().__init__(args, handle)
        self.ignored = set(args.get("ignoredResources") or [])
        self.ignored_groups = set(args.get("ignoredResourceGroups") or [])
        self.above_allocatable_unresolvable = handle.release.has("FitUnresolvableAboveAllocatable")
        ss = args.get("scoringStrategy") or {"type": "LeastAllocated"}
        self.strategy = ss.get("type", "LeastAllocated")
        self.resources = ss.get("resources") or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        if self.strategy == "MostAllocated":
            self.scorer = most_allocated(self.resources)
        elif self.strategy == "RequestedToCapacityRatio":
            shape = (ss.get("requestedToCapacityRatio") or {}).get("shape") or []
            self.scorer = requested_to_capacity_ratio(self.resources, shape)
        else:
            self.scorer = least_allocated(self.resources)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_PREFILTER_KEY, pod.requests)
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            req = state.read(_PREFILTER_KEY)
        except KeyError as e:
            return error(str(e))
        return _verdict(
            fits_request(req, node_info, self.ignored, self.ignored_groups), self.above_allocatable_unresolvable
        )

    def prefilter_requests(self, state):
        """What PreFilter kept of the pod's requests, or None when PreFilter did not run."""
        return state.get(_PREFILTER_KEY)

    def filter_on(self, state, node, used, npods: int):
        """Filter on `node` holding `npods` pods that request `used` in all."""
        try:
            req = state.read(_PREFILTER_KEY)
        except KeyError as e:
            return error(str(e))
        return _verdict(
            fits_request_on(req, node.allocatable, used, npods, self.ignored, self.ignored_groups),
            self.above_allocatable_unresolvable,
        )

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """filter over many nodes: each node's room and free resources against the requests (the
        snapshot keeps them as columns for its own node list); a node lacking any is then told
        apart by fitsRequest's reasons, nodes failing alike sharing one status."""
        try:
            req = state.read(_PREFILTER_KEY)
        except KeyError as e:
            return [error(str(e))] * len(nodes)
        if req.scalars:
            return [self.filter(state, pod, ni) for ni in nodes]
        snapshot = getattr(self.handle, "snapshot", None)
        if snapshot is not None and nodes is snapshot.node_infos:
            np = numpy_for(len(nodes))
            if np is not None and fit_int64((req.milli_cpu, req.memory, req.ephemeral_storage)):
                arrays = snapshot.free_arrays(np)
                if arrays is not None:
                    return self._filter_arrays(np, req, nodes, arrays)
            room, free_cpu, free_mem, free_eph = snapshot.free_columns()
        else:
            room, free_cpu, free_mem, free_eph = _free_of_nodes(snapshot, nodes)
        # a resource the pod does not ask for is not compared
        c = req.milli_cpu if req.milli_cpu > 0 else -math.inf
        m = req.memory if req.memory > 0 else -math.inf
        eph = req.ephemeral_storage if req.ephemeral_storage > 0 else -math.inf
        # _LACKING marks the nodes whose statuses are made below
        out: list[Any] = (
            [
                None if r > 0 and c <= fc and m <= fm and eph <= fe else _LACKING
                for r, fc, fm, fe in zip(room, free_cpu, free_mem, free_eph)
            ]
            if req.ephemeral_storage > 0
            else [None if r > 0 and c <= fc and m <= fm else _LACKING for r, fc, fm in zip(room, free_cpu, free_mem)]
        )
        if _LACKING not in out:
            return out
        # nodes failing alike share one status: which of fitsRequest's reasons a node has, and
        # which of them ask for more than its whole allocatable, read off the columns (the
        # status itself is made from the first such node's fitsRequest)
        shared: dict[tuple, Status | None] = {}
        for i in list(compress(range(len(out)), out)):  # the lacking nodes (None is false)
            alloc = nodes[i].node.allocatable
            short_cpu, short_mem, short_eph = c > free_cpu[i], m > free_mem[i], eph > free_eph[i]
            key = (
                room[i] <= 0,
                short_cpu,
                short_cpu and c > alloc.milli_cpu,
                short_mem,
                short_mem and m > alloc.memory,
                short_eph,
                short_eph and eph > alloc.ephemeral_storage,
            )
            st = shared.get(key, _LACKING)
            if st is _LACKING:
                lacking = fits_request(req, nodes[i], self.ignored, self.ignored_groups)
                st = shared[key] = _verdict(lacking, self.above_allocatable_unresolvable)
            out[i] = st
        return out

    def fits_array(self, state: CycleState, pod: Pod, np) -> Any:
        """Whether each of the snapshot's nodes passes filter, as a boolean array in its node
        order (scheduling/columnar.py), or None when the pod asks for extended resources or a
        value does not fit in int64 (filter_nodes then decides, with its statuses). A node passes
        exactly when filter_nodes finds none of fitsRequest's reasons on it."""
        req = state.get(_PREFILTER_KEY)
        snapshot = getattr(self.handle, "snapshot", None)
        if req is None or req.scalars or snapshot is None:
            return None
        if not fit_int64((req.milli_cpu, req.memory, req.ephemeral_storage)):
            return None
        arrays = snapshot.free_arrays(np)
        if arrays is None:
            return None
        room, free_cpu, free_mem, free_eph = arrays[:4]
        fits = room > 0
        for asked, free in ((req.milli_cpu, free_cpu), (req.memory, free_mem), (req.ephemeral_storage, free_eph)):
            if asked > 0:
                fits &= free >= asked
        return fits

    def array_scores_in_range(self, state: CycleState) -> bool:
        # score_array's LeastAllocated: each resource's (free - request) // allocatable where the
        # request fits, over allocatable above 0 and every value not negative (free at most a
        # hundred times allocatable): in [0, 100], and so their mean
        return True

    def score_array(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Any:
        """score_nodes as an int64 array, for LeastAllocated on cpu and memory with unit weights
        over the snapshot's own nodes at CycleState.score_positions (its arrays' path); None
        where score_nodes would take another path."""
        reqs = state.get(_PRESCORE_KEY)
        if (
            reqs is None
            or self.strategy != "LeastAllocated"
            or [r["name"] for r in self.resources] != ["cpu", "memory"]
        ):
            return None
        pc, pm = reqs
        if self.resources[0]["weight"] != 1 or self.resources[1]["weight"] != 1 or pc < 0 or pm < 0:
            return None
        c, m = pc * 100, pm * 100
        if max(c, m) >= 2**61:
            return None
        names = ("alloc_cpu", "alloc_mem", "free0_cpu100", "free0_mem100")
        floats = scored_float_arrays(self.handle, state, nodes, names) if max(c, m) < 2**53 else None
        if floats is not None:
            cols = floats[1]
            if cols.nonneg and not cols.zero_alloc:
                return _least_allocated_floats(floats, c, m)
        arrays = scored_arrays(self.handle, state, nodes, names, any_size=True)
        if arrays is None or not arrays[1].nonneg or not arrays[2].all() or not arrays[3].all():
            return None
        return _least_allocated_arrays(arrays, c, m)

    def _filter_arrays(self, np, req, nodes: list[NodeInfo], arrays: tuple) -> list[Status | None]:
        """filter_nodes over the snapshot's int64 columns (vectors.py): each node's fitsRequest
        reasons as bits (no room; per resource asked for: short, and short beyond the whole
        allocatable), the nodes sharing bits sharing one status, made from the first of them."""
        room, free_cpu, free_mem, free_eph, alloc_cpu, alloc_mem, alloc_eph = arrays
        bits = (room <= 0).astype(np.uint8)
        for shift, asked, free, alloc in (
            (1, req.milli_cpu, free_cpu, alloc_cpu),
            (3, req.memory, free_mem, alloc_mem),
            (5, req.ephemeral_storage, free_eph, alloc_eph),
        ):
            if asked > 0:
                short = free < asked
                bits |= short.view(np.uint8) << shift
                bits |= (short & (alloc < asked)).view(np.uint8) << (shift + 1)
        out: list[Status | None] = [None] * len(nodes)
        lacking = np.flatnonzero(bits)
        if not len(lacking):
            return out
        kinds = bits[lacking]
        for kind in np.unique(kinds).tolist():
            at = lacking[kinds == kind].tolist()
            st = _verdict(
                fits_request(req, nodes[at[0]], self.ignored, self.ignored_groups), self.above_allocatable_unresolvable
            )
            deque(map(out.__setitem__, at, repeat(st)), maxlen=0)
        return out

    def reprieve_check(self, state, node):
        """For the preemption dry run's reprieve: a function (used, npods) -> whether Filter would
        pass on `node` holding `npods` pods that request `used` in all."""
        req = state.read(_PREFILTER_KEY)
        alloc = node.allocatable
        ignored, groups = self.ignored, self.ignored_groups
        if req.scalars:
            return lambda used, npods: not fits_request_on(req, alloc, used, npods, ignored, groups)
        # no extended resources asked for: fitsRequest compares the pod count, cpu, memory and
        # ephemeral storage only
        cpu, mem, eph = req.milli_cpu, req.memory, req.ephemeral_storage
        max_pods = alloc.allowed_pods

        def fits(used, npods: int) -> bool:
            return (
                npods < max_pods
                and (cpu <= 0 or cpu <= alloc.milli_cpu - used.milli_cpu)
                and (mem <= 0 or mem <= alloc.memory - used.memory)
                and (eph <= 0 or eph <= alloc.ephemeral_storage - used.ephemeral_storage)
            )

        return fits

    def insufficient(self, pod, node_info) -> list[InsufficientResource]:
        """For explanations: every resource the node lacks for this pod."""
        return fits_request(pod.requests, node_info, self.ignored, self.ignored_groups)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        state.write(_PRESCORE_KEY, pod_request_list(pod, self.resources, use_requested=False, pod_level=False))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = state.get(_PRESCORE_KEY)
        if reqs is None:
            reqs = pod_request_list(pod, self.resources, use_requested=False, pod_level=False)
        requested, allocatable = resource_vectors(node_info, self.resources, reqs, use_requested=False)
        return self.scorer(requested, allocatable), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        """score over many nodes; LeastAllocated on cpu and memory (the default) is computed
        directly (from the snapshot's score columns when the nodes are its own), anything else
        node by node."""
        reqs = state.get(_PRESCORE_KEY)
        if reqs is None:
            reqs = pod_request_list(pod, self.resources, use_requested=False, pod_level=False)
        if self.strategy != "LeastAllocated" or [r["name"] for r in self.resources] != ["cpu", "memory"]:
            return [self.score(state, pod, ni)[0] for ni in nodes], None
        pc, pm = reqs
        wc, wm = self.resources[0]["weight"], self.resources[1]["weight"]
        if wc == 1 and wm == 1 and pc >= 0 and pm >= 0:
            names = ("alloc_cpu", "alloc_mem", "free0_cpu100", "free0_mem100")
            c, m = pc * 100, pm * 100
            arrays = scored_arrays(self.handle, state, nodes, names) if max(c, m) < 2**61 else None
            if arrays is not None and arrays[1].nonneg and arrays[2].all() and arrays[3].all():
                scores: list[int] = _least_allocated_arrays(arrays, c, m).tolist()
                return scores, None
            cols = scored_columns(self.handle, state, nodes, names)
            if cols is not None and cols[0].nonneg:
                return self._least_allocated_columns(cols, pc, pm, nodes), None
        unit = wc == 1 and wm == 1
        out: list[int] = []
        append = out.append
        for ni in nodes:
            alloc = ni.node.allocatable
            ca = alloc.milli_cpu
            ma = alloc.memory
            if unit and ca and ma:
                # the default weights on a node with both resources: the same sums, written out
                r = ni.non0_cpu + pc
                s = (ca - r) * 100 // ca if r <= ca else 0
                r = ni.non0_mem + pm
                if r <= ma:
                    s += (ma - r) * 100 // ma
                append(s // 2)
                continue
            s = w = 0
            if ca:
                r = ni.non0_cpu + pc
                if r <= ca:
                    s += (ca - r) * 100 // ca * wc
                w += wc
            if ma:
                r = ni.non0_mem + pm
                if r <= ma:
                    s += (ma - r) * 100 // ma * wm
                w += wm
            out.append(s // w if w else 0)
        return out, None

    def _least_allocated_columns(self, cols: tuple, pc: int, pm: int, nodes: list[NodeInfo]) -> list[int]:
        """LeastAllocated on cpu and memory, unit weights, from the score columns (no value
        negative, so Go's truncating division is Python's floor): per resource the node has,
        (allocatable - requested) * 100 // allocatable, 0 where the request is over allocatable;
        their mean, truncated. The columns hold a hundred times what is left after the non-zero
        requests: less a hundred times the pod's, that is the numerator."""
        table, alloc_cpu, alloc_mem, free_cpu, free_mem = cols
        c, m = pc * 100, pm * 100
        if not table.zero_alloc or (0 not in alloc_cpu and 0 not in alloc_mem):  # every node has both resources
            # no value negative: 100 * (allocatable - requested) <= 100 * allocatable, each term in
            # [0, 100], their mean too
            return ScoresInRange(
                [
                    ((u - c) // a if u >= c else 0) + ((v - m) // b if v >= m else 0) >> 1
                    for a, b, u, v in zip(alloc_cpu, alloc_mem, free_cpu, free_mem)
                ]
            )
        out: list[int] = []
        for k, (a, b, u, v) in enumerate(zip(alloc_cpu, alloc_mem, free_cpu, free_mem)):
            if a and b:
                out.append(((u - c) // a if u >= c else 0) + ((v - m) // b if v >= m else 0) >> 1)
            else:  # a resource the node lacks does not count
                out.append(self.score_nodes_one(nodes[k], pc, pm))
        return out

    def score_nodes_one(self, ni: NodeInfo, pc: int, pm: int) -> int:
        """LeastAllocated with unit weights on a node lacking cpu or memory (or both)."""
        requested, allocatable = resource_vectors(ni, self.resources, [pc, pm], use_requested=False)
        return self.scorer(requested, allocatable)

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("Pod", "Delete|UpdatePodScaleDown", "an assigned pod is deleted or scaled down"),
            ClusterEvent(
                "Node",
                "Add|UpdateNodeAllocatable|UpdateNodeTaint|UpdateNodeLabel",
                "a node is added or its allocatable grows",
            ),
        ]
