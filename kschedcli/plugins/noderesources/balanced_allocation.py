"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay close together.

Until v1.35 a node scores the balance it would have with the pod; from v1.36 the change in
balance the pod makes, 50 + (50 + with - without) / 2 (balancedResourceScorer), so a node the pod
evens out beats one that is merely even."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...framework.interface import BatchScorePlugin, Plugin, PreScorePlugin, ScoresInRange
from ...framework.status import skip
from .resource_allocation import (
    balanced_change_scorer,
    balanced_scorer,
    pod_request_list,
    resource_vectors,
    scored_arrays,
    scored_columns,
    scored_float_arrays,
)

if TYPE_CHECKING:
    from ...api.model import Pod
    from ...backend.snapshot import NodeInfo
    from ...framework.cycle_state import CycleState
    from ...framework.status import Status


_KEY = "PreScoreNodeResourcesBalancedAllocation"


class NodeResourcesBalancedAllocation(Plugin, PreScorePlugin, BatchScorePlugin):
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, args, handle):
        super().__init__(args, handle)
        self.resources = args.get("resources") or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        self.scores_change = handle.release.has("BalancedAllocationScoresChange")

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        reqs = pod_request_list(pod, self.resources, use_requested=True)
        if all(r == 0 for r in reqs):
            return skip()
        state.write(_KEY, reqs)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = state.get(_KEY)
        if reqs is None:
            reqs = pod_request_list(pod, self.resources, use_requested=True)
            if all(r == 0 for r in reqs):
                return 0, None
        requested, allocatable = resource_vectors(node_info, self.resources, reqs, use_requested=True)
        if self.scores_change:
            allocated = [q - r if a else 0 for q, r, a in zip(requested, reqs, allocatable)]
            return balanced_change_scorer(requested, allocated, allocatable), None
        return balanced_scorer(requested, allocatable), None

    def array_scores_in_range(self, state: CycleState) -> bool:
        # score_array: two fractions in [0, 1] (no value negative, allocatable above 0), so
        # (1 - |f - g| / 2) * 100 in [50, 100]
        return True

    def score_array(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Any:
        """score_nodes as an int64 array where it takes its arrays' path (cpu and memory, the
        snapshot's own nodes at CycleState.score_positions); None elsewhere."""
        reqs = state.get(_KEY)
        if reqs is None or self.scores_change or [r["name"] for r in self.resources] != ["cpu", "memory"]:
            return None
        pc, pm = reqs
        if pc < 0 or pm < 0:
            return None
        floats = scored_float_arrays(self.handle, state, nodes, ("alloc_cpu", "alloc_mem", "req_cpu", "req_mem"))
        if floats is not None:
            cols = floats[1]
            if cols.nonneg and not cols.zero_alloc and (cols.bound + max(pc, pm)) >> 53 == 0:
                return _balanced_floats(floats, pc, pm)
        arrays = scored_arrays(
            self.handle, state, nodes, ("alloc_cpu", "alloc_mem", "req_cpu", "req_mem"), any_size=True
        )
        if arrays is None:
            return None
        sc = arrays[1]
        if not (sc.nonneg and (sc.bound + max(pc, pm)) >> 53 == 0 and arrays[2].all() and arrays[3].all()):
            return None
        return _balanced_arrays(arrays, pc, pm)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        """score over many nodes; cpu and memory (the default) computed directly in float64 as
        balancedResourceScorer does, anything else node by node."""
        reqs = state.get(_KEY)
        if reqs is None or self.scores_change or [r["name"] for r in self.resources] != ["cpu", "memory"]:
            return [self.score(state, pod, ni)[0] for ni in nodes], None
        pc, pm = reqs
        names = ("alloc_cpu", "alloc_mem", "req_cpu", "req_mem")
        exact = pc >= 0 and pm >= 0
        arrays = scored_arrays(self.handle, state, nodes, names) if exact else None
        if arrays is not None:
            sc = arrays[1]
            if sc.nonneg and (sc.bound + max(pc, pm)) >> 53 == 0 and arrays[2].all() and arrays[3].all():
                scores: list[int] = _balanced_arrays(arrays, pc, pm).tolist()
                return scores, None
        cols = scored_columns(self.handle, state, nodes, names) if exact else None
        if cols is not None and cols[0].nonneg and (cols[0].bound + max(pc, pm)) >> 53 == 0:
            return _balanced_columns(cols, pc, pm), None
        out: list[int] = []
        append = out.append
        for ni in nodes:
            alloc = ni.node.allocatable
            ca = alloc.milli_cpu
            ma = alloc.memory
            if ca and ma:
                used = ni.requested
                rc = used.milli_cpu + pc
                rm = used.memory + pm
                if (ca | ma | rc | rm) >> 53:
                    # not every operand below 2**53 (or one negative): convert each first, as Go
                    fc = float(rc) / float(ca)
                    fm = float(rm) / float(ma)
                else:
                    # int / int is the correctly rounded quotient, which is Go's float64 quotient
                    # when both operands convert exactly
                    fc = rc / ca
                    fm = rm / ma
                if fc > 1:
                    fc = 1.0
                if fm > 1:
                    fm = 1.0
                append(int((1 - abs((fc - fm) / 2)) * 100.0))
            else:
                append(100)  # fewer than two fractions: no deviation
        return out, None


def _balanced_arrays(arrays: tuple, pc: int, pm: int) -> Any:
    """_balanced_columns over int64 arrays, every node having both resources: each operand below
    2**53 converts to float64 exactly, and numpy's quotient, difference and product are IEEE's, as
    Go's and Python's; astype truncates as Go's int64() (every product is in [0, 100])."""
    np, _, alloc_cpu, alloc_mem, req_cpu, req_mem = arrays
    r = req_cpu + pc
    q = req_mem + pm
    f = np.where(r <= alloc_cpu, r / alloc_cpu, 1.0)
    g = np.where(q <= alloc_mem, q / alloc_mem, 1.0)
    return ((1 - np.abs((f - g) / 2)) * 100.0).astype(np.int64)


def _balanced_floats(floats: tuple, pc: int, pm: int) -> Any:
    """_balanced_arrays on scored_float_arrays' arrays (read at its `take`), every node having
    both resources, no value negative, each request plus the pod's below 2**53: the sums are
    exact, the quotients IEEE's as Go's; a request over allocatable gives a quotient above 1 (or
    1 itself), so the smaller of it and 1 is the fraction _balanced_arrays chooses; the rest is
    its arithmetic in its order."""
    np, _, take, alloc_cpu, alloc_mem, req_cpu, req_mem = floats
    f = req_cpu + pc
    f /= alloc_cpu
    np.minimum(f, 1.0, out=f)
    g = req_mem + pm
    g /= alloc_mem
    np.minimum(g, 1.0, out=g)
    f -= g
    f /= 2
    np.abs(f, out=f)
    np.subtract(1, f, out=f)
    f *= 100.0
    scores = f.astype(np.int64)
    return scores if take is None else scores.take(take)


def _balanced_columns(cols: tuple, pc: int, pm: int) -> list[int]:
    """balancedResourceScorer on cpu and memory from the score columns, every operand a
    non-negative int below 2**53: int / int is then the correctly rounded quotient, Go's float64
    one (a fraction is over 1, and made 1, exactly when the request is over allocatable); a node
    lacking either resource has one fraction or none, no deviation (100). The products are
    truncated to int in one pass at the end, as Go's int64() conversion."""
    table, alloc_cpu, alloc_mem, req_cpu, req_mem = cols
    if not table.zero_alloc or (0 not in alloc_cpu and 0 not in alloc_mem):  # every node has both resources
        products = [
            (1 - abs(((x / a if (x := r + pc) <= a else 1.0) - (y / b if (y := q + pm) <= b else 1.0)) / 2)) * 100.0
            for a, b, r, q in zip(alloc_cpu, alloc_mem, req_cpu, req_mem)
        ]
        # each fraction in [0, 1] (no value negative, allocatable not 0): each product in [50, 100]
        return ScoresInRange(map(int, products))
    out: list[float] = []
    append = out.append
    for a, b, r, q in zip(alloc_cpu, alloc_mem, req_cpu, req_mem):
        if a and b:
            f = (r + pc) / a
            g = (q + pm) / b
            if f > 1:
                f = 1.0
            if g > 1:
                g = 1.0
            append((1 - abs((f - g) / 2)) * 100.0)
        else:
            append(100.0)  # fewer than two fractions: no deviation
    return list(map(int, out))
