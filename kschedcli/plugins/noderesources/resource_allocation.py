"""resourceAllocationScorer: the shared scoring walk over the configured resources."""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Any

from ...api import quantity
from ...api.model import is_scalar_resource, scoring_requests
from ...backend.vectors import numpy_for, numpy_module
from ...framework.interface import MAX_NODE_SCORE

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


def pod_request_list(pod, resources: list[dict], use_requested: bool, pod_level: bool = True) -> list[int]:
    """The pod's request per configured resource (model.scoring_requests says which requests)."""
    reqs = scoring_requests(pod, use_requested, pod_level)
    out = []
    for r in resources:
        n = reqs.get(r["name"], 0)
        out.append(quantity.milli_value(n) if r["name"] == "cpu" else quantity.value(n))
    return out


def _own_snapshot(handle, state, nodes) -> Any:
    """The handle's snapshot when `nodes` are its own (all of them, or those at
    CycleState.score_positions); None otherwise."""
    snapshot = getattr(handle, "snapshot", None)
    if snapshot is None or (state.score_positions is None and nodes is not snapshot.node_infos):
        return None
    return snapshot


def scored_columns(handle, state, nodes, names: tuple[str, ...]) -> tuple | None:
    """(the snapshot's ScoreColumns, then each of its columns `names` read in the order of
    `nodes`) when `nodes` are the snapshot's own (_own_snapshot); None otherwise."""
    snapshot = _own_snapshot(handle, state, nodes)
    if snapshot is None:
        return None
    positions = state.score_positions
    cols = snapshot.score_columns()
    if positions is None:
        return (cols, *(getattr(cols, n) for n in names))
    if len(positions) < 2:  # itemgetter of one position gives the value itself, not a tuple
        return None
    gathered = state.score_gathered
    if gathered is None or gathered[0] is not positions or gathered[1] is not cols:
        # (the scorers of one cycle share what they read: allocatable, most of all)
        gathered = state.score_gathered = (positions, cols, {}, itemgetter(*positions))
    _, _, known, at = gathered
    out = [cols]
    for n in names:
        values = known.get(n)
        if values is None:
            values = known[n] = at(getattr(cols, n))
        out.append(values)
    return tuple(out)


_AT_KEY = "ksched.scored_arrays_at"  # (positions, the snapshot's arrays, {column: its values there})


def scored_arrays(handle, state, nodes, names: tuple[str, ...], any_size: bool = False) -> tuple | None:
    """(numpy, the snapshot's ScoreColumns, then its columns `names` as int64 arrays in the order of `nodes`)
    when numpy pays over this many nodes (vectors.numpy_for; `any_size`: whenever numpy is there,
    for a caller that wants arrays) and `nodes` are the snapshot's own (_own_snapshot); None
    otherwise. Every value's magnitude is below 2**61 (Snapshot.score_arrays)."""
    snapshot = _own_snapshot(handle, state, nodes)
    if snapshot is None:
        return None
    positions = state.score_positions
    np = numpy_module() if any_size else numpy_for(len(nodes))
    if np is None:
        return None
    arrays = snapshot.score_arrays(np)
    if arrays is None:
        return None
    cols = snapshot.score_columns()  # (brought up to date by score_arrays)
    by_name = dict(zip(cols.NAMES, arrays))
    if positions is None:
        return (np, cols, *(by_name[n] for n in names))
    at = _positions_array(state, positions, np)
    return (np, cols, *_columns_at(state, _AT_KEY, positions, arrays, by_name, names, at))


def _positions_array(state, positions, np) -> Any:
    """CycleState.score_positions as an intp array of `np` (made once per cycle)."""
    made = state.score_positions_array
    if made is None or made[0] is not positions:
        made = state.score_positions_array = (positions, np.array(positions, dtype=np.intp))
    return made[1]


def _columns_at(state, key: str, positions, arrays: tuple, by_name: dict, names: tuple[str, ...], at) -> list:
    """The columns `names` of the snapshot's `arrays` read at the positions `at`, each once per
    cycle (kept in the CycleState under `key`: NodeResourcesFit and BalancedAllocation both read
    the allocatable ones)."""
    memo = state.get(key)
    if memo is None or memo[0] is not positions or memo[1] is not arrays:
        memo = (positions, arrays, {})
        state.write(key, memo)
    read = memo[2]
    out = []
    for n in names:
        column = read.get(n)
        if column is None:
            column = read[n] = by_name[n].take(at)
        out.append(column)
    return out


_FLOATS_AT_KEY = "ksched.scored_float_arrays_at"  # (positions, the snapshot's float arrays, {column: its values there})


def scored_float_arrays(handle, state, nodes, names: tuple[str, ...]) -> tuple | None:
    """For a scorer's float64 arithmetic: (numpy, the snapshot's ScoreColumns, `take`, then its
    columns `names` as float64 arrays), `nodes` being the snapshot's own (_own_snapshot) and every
    value below 2**53 in magnitude (Snapshot.score_float_arrays); None otherwise. Where the nodes
    are all or most of the snapshot's, the arrays are its whole columns and `take` the nodes'
    positions (None: every node, in order), to read the scores at; elsewhere the columns read at
    the nodes' positions (once per cycle) and `take` None."""
    snapshot = _own_snapshot(handle, state, nodes)
    np = numpy_module()
    if snapshot is None or np is None:
        return None
    arrays = snapshot.score_float_arrays(np)
    if arrays is None:
        return None
    cols = snapshot.score_columns()  # (brought up to date by score_float_arrays)
    by_name = dict(zip(cols.NAMES, arrays))
    positions = state.score_positions
    take = None
    if positions is not None:
        at = _positions_array(state, positions, np)
        total = len(arrays[0])
        if len(at) * 2 < total:
            return (np, cols, None, *_columns_at(state, _FLOATS_AT_KEY, positions, arrays, by_name, names, at))
        if len(at) < total:
            take = at
    return (np, cols, take, *(by_name[n] for n in names))


def allocatable_and_requested(node_info, name: str, pod_request: int, use_requested: bool) -> tuple[int, int]:
    if pod_request == 0 and is_scalar_resource(name):
        return 0, 0
    alloc = node_info.node.allocatable
    if name == "cpu":
        used = node_info.requested.milli_cpu if use_requested else node_info.non0_cpu
        return alloc.milli_cpu, used + pod_request
    if name == "memory":
        used = node_info.requested.memory if use_requested else node_info.non0_mem
        return alloc.memory, used + pod_request
    if name == "ephemeral-storage":
        return alloc.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
    if name in alloc.scalars:
        return alloc.scalars[name], node_info.requested.scalars.get(name, 0) + pod_request
    return 0, 0


def resource_vectors(node_info, resources, pod_requests, use_requested):
    requested = [0] * len(resources)
    allocatable = [0] * len(resources)
    for i, r in enumerate(resources):
        a, q = allocatable_and_requested(node_info, r["name"], pod_requests[i], use_requested)
        if a == 0:
            continue
        allocatable[i] = a
        requested[i] = q
    return requested, allocatable


def _go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _weighted_mean(resources, resource_score):
    """The shared shape of LeastAllocated and MostAllocated: a weighted integer mean over the
    resources the node has, each scored by `resource_score(requested, capacity)`."""

    def scorer(requested, allocatable):
        node_score = weight_sum = 0
        for i, r in enumerate(resources):
            cap = allocatable[i]
            if cap == 0:
                continue
            node_score += resource_score(requested[i], cap) * r["weight"]
            weight_sum += r["weight"]
        return 0 if weight_sum == 0 else _go_div(node_score, weight_sum)

    return scorer


def least_allocated(resources):
    return _weighted_mean(resources, lambda req, cap: 0 if req > cap else _go_div((cap - req) * MAX_NODE_SCORE, cap))


def most_allocated(resources):
    return _weighted_mean(resources, lambda req, cap: _go_div(min(req, cap) * MAX_NODE_SCORE, cap))


def broken_linear(shape: list[tuple[int, int]]):
    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return shape[0][1]
                pu, ps = shape[i - 1]
                return ps + _go_div((s - ps) * (p - pu), (u - pu))
        return shape[-1][1]

    return f


def requested_to_capacity_ratio(resources, shape_points: list[dict]):
    shape = [
        (p.get("utilization", 0), p.get("score", 0) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
        for p in shape_points
    ]
    raw = broken_linear(shape)

    def resource_score(req, cap):
        if cap == 0 or req > cap:
            return raw(MAX_UTILIZATION)
        return raw(_go_div(req * MAX_UTILIZATION, cap))

    def scorer(requested, allocatable):
        node_score = weight_sum = 0
        for i, r in enumerate(resources):
            if allocatable[i] == 0:
                continue
            s = resource_score(requested[i], allocatable[i])
            if s > 0:
                node_score += s * r["weight"]
                weight_sum += r["weight"]
        if weight_sum == 0:
            return 0
        # math.Round(float64(nodeScore) / float64(weightSum)): each operand rounded to float64 first
        return _go_round(float(node_score) / float(weight_sum))

    return scorer


def _go_round(x: float) -> int:
    """math.Round: half away from zero, exactly (floor(x + 0.5) is off for 0.49999999999999994)."""
    a = abs(x)
    t = math.floor(a)
    if a - t >= 0.5:  # a - t is exact for a float a
        t += 1
    return int(t) if x >= 0 else -int(t)


def balanced_scorer(requested, allocatable):
    """balancedResourceScorer in float64 as Go computes it: operands converted before dividing,
    sums accumulated left to right (Python's sum() may compensate; a plain loop does not)."""
    fractions = []
    total = 0.0
    for i in range(len(requested)):
        if allocatable[i] == 0:
            continue
        f = float(requested[i]) / float(allocatable[i])
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        n = float(len(fractions))
        mean = total / n
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / n)
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_change_scorer(requested, allocated, allocatable):
    """v1.36's balancedResourceScorer: the balance with the pod against the balance without it,
    brought back to [50, 100], in Go's integer arithmetic."""
    with_pod = balanced_scorer(requested, allocatable)
    without_pod = balanced_scorer(allocated, allocatable)
    return MAX_NODE_SCORE // 2 + _go_div(MAX_NODE_SCORE // 2 + with_pod - without_pod, 2)
