"""NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation scoring many nodes from the
snapshot's score columns give each node the score `score` gives it node by node (Go's int64 and
float64 arithmetic): on random clusters with zero allocatable, requests over allocatable, pods
without requests (the non-zero defaults), extended resources and values past 2**53, at the
feasible nodes' positions and over every node, before and after binds."""

import random
from collections import Counter

import pytest
from builders import node, plugin, pod, scheduler

from kschedcli.backend import vectors
from kschedcli.framework.cycle_state import CycleState
from kschedcli.framework.interface import MAX_NODE_SCORE, ScoresInRange


@pytest.fixture(params=[False, True], ids=["lists", "numpy"])
def vectorised(request, monkeypatch):
    """Both ways of scoring many nodes: Python's ints, and the score columns as int64 arrays
    (numpy, which a process uses past its first passes over a large cluster)."""
    if request.param:
        pytest.importorskip("numpy")
        monkeypatch.setattr(vectors, "MIN_NODES", 1)
        monkeypatch.setattr(vectors, "IMPORT_AFTER_NODES", 0)
    else:
        monkeypatch.setattr(vectors, "MIN_NODES", 10**9)
    return request.param


CPUS = ["0", "1", "4", "7500m", "64", "100000"]
MEMS = ["0", "1", "1Gi", "8Gi", "100G", "1Ti", "9007199254740993", "123456789012345678"]
REQ_CPUS = [None, "0", "1m", "100m", "3", "70", "200000"]
REQ_MEMS = [None, "0", "1", "200Mi", "3Gi", "9Gi", "2Ti", "9007199254740990"]


def _requests(rng):
    r = {}
    cpu, mem = rng.choice(REQ_CPUS), rng.choice(REQ_MEMS)
    if cpu is not None:
        r["cpu"] = cpu
    if mem is not None:
        r["memory"] = mem
    if rng.random() < 0.2:
        r["example.com/gpu"] = "1"
    return r


def _cluster(rng, n_nodes):
    nodes, pods = [], []
    for i in range(n_nodes):
        extra = {"example.com/gpu": "4"} if rng.random() < 0.3 else None
        nodes.append(node(f"n{i}", cpu=rng.choice(CPUS), memory=rng.choice(MEMS), pods="500", extra=extra))
        for j in range(rng.randint(0, 4)):
            pods.append(pod(f"p{i}-{j}", requests=_requests(rng), node_name=f"n{i}"))
    return nodes, pods


def _each_node(pl, state, incoming, nodes):
    return [pl.score(state, incoming, ni)[0] for ni in nodes]


def _at_positions(pl, state, incoming, nis, positions):
    """The snapshot's nodes at `positions` scored in one call, as the framework passes the feasible
    ones (CycleState.score_positions), equal their node-by-node scores; returns those nodes."""
    some = [nis[i] for i in positions]
    state.score_positions = positions
    got = pl.score_nodes(state, incoming, some)[0]
    state.score_positions = None
    assert got == _each_node(pl, state, incoming, some)
    return some


arrays_made: Counter = Counter()  # score_array's answers, by whether scored_float_arrays' path was open


def _array_at(pl, state, incoming, nis, positions):
    """score_array (the columnar cycle's) over the snapshot's nodes, or those at `positions`,
    equal node by node where it answers (float64 arrays where every value converts exactly,
    int64 arrays or None elsewhere)."""
    np = pytest.importorskip("numpy")
    some = nis if positions is None else [nis[i] for i in positions]
    if positions is not None:
        state.score_positions = positions
        state.score_positions_array = (positions, np.array(positions, dtype=np.intp))
    try:
        got = pl.score_array(state, incoming, some)
    finally:
        state.score_positions = state.score_positions_array = None
    floats = pl.handle.snapshot.score_float_arrays(np) is not None
    arrays_made[(pl.name, got is not None, floats)] += 1
    if got is not None:
        assert got.tolist() == _each_node(pl, state, incoming, some)


marked: Counter = Counter()  # the plugins' columns found marked in range (ScoresInRange)


def _check(s, rng, names=("NodeResourcesFit", "NodeResourcesBalancedAllocation")):
    snap = s.snapshot
    nis = snap.node_infos
    for _ in range(6):
        incoming = pod("in", requests=_requests(rng))
        for name in names:
            pl = plugin(s, name)
            state = CycleState()
            if pl.pre_score(state, incoming, nis) is not None:
                continue  # Skip: nothing to score
            # every node (the snapshot's own list), read off the score columns
            got = pl.score_nodes(state, incoming, nis)[0]
            assert got == _each_node(pl, state, incoming, nis)
            if isinstance(got, ScoresInRange):  # the framework does not check these again
                marked[name] += 1
                assert all(0 <= v <= MAX_NODE_SCORE for v in got)
            # the feasible ones, at their positions
            positions = sorted(rng.sample(range(len(nis)), rng.randint(2, len(nis))))
            some = _at_positions(pl, state, incoming, nis, positions)
            # nodes that are not the snapshot's: node by node
            copies = [ni.clone() for ni in some]
            assert pl.score_nodes(state, incoming, copies)[0] == _each_node(pl, state, incoming, copies)
    assert snap._score is not None  # the many-node scores were made from the columns


def test_score_columns_give_each_nodes_own_score(vectorised):
    rng = random.Random(35)
    marked.clear()
    for _ in range(40):
        nodes, pods = _cluster(rng, rng.randint(2, 12))
        s = scheduler(nodes, pods)
        _check(s, rng)
        # binds after the columns were built: the columns follow them
        for k in range(rng.randint(1, 5)):
            s.bind(pod(f"b{k}", requests=_requests(rng)), rng.choice(nodes).name)
        _check(s, rng)
    # the pure-Python columns mark what they prove in range (numpy's arrays are checked as before)
    assert vectorised or (marked["NodeResourcesFit"] > 20 and marked["NodeResourcesBalancedAllocation"] > 2)


def test_score_columns_are_exact_where_float64_division_matters(vectorised):
    """Fractions whose float64 quotient rounds: the columns' int / int is Go's float64(a) / float64(b)
    where both convert exactly, and values past 2**53 take the node-by-node path."""
    nodes = [
        node("odd", cpu="3", memory="3"),
        node("big", cpu="7", memory="9007199254740993"),
        node("zero-cpu", cpu="0", memory="8Gi"),
        node("zero-mem", cpu="4", memory="0"),
        node("nothing", cpu="0", memory="0"),
    ]
    pods = [
        pod("a", requests={"cpu": "1", "memory": "1"}, node_name="odd"),
        pod("b", requests={"cpu": "2", "memory": "4503599627370497"}, node_name="big"),
        pod("c", node_name="zero-cpu"),  # no requests: scored with the non-zero defaults
        pod("d", requests={"cpu": "9"}, node_name="zero-mem"),
    ]
    s = scheduler(nodes, pods)
    _check(s, random.Random(1))
    bal = plugin(s, "NodeResourcesBalancedAllocation")
    state = CycleState()
    incoming = pod("in", requests={"cpu": "1", "memory": "1"})
    bal.pre_score(state, incoming, s.snapshot.node_infos)
    # odd: cpu 2/3, memory 2/3 -> no deviation; nodes lacking a resource: 100
    scores = dict(zip(s.snapshot.names, bal.score_nodes(state, incoming, s.snapshot.node_infos)[0]))
    assert scores["odd"] == 100
    assert scores["zero-cpu"] == scores["zero-mem"] == scores["nothing"] == 100


def test_image_and_taint_scores_over_many_nodes_are_each_nodes_own():
    """ImageLocality (one image: node states told apart by identity) and TaintToleration (a
    decision per taint group, the untainted nodes' last) over the snapshot's nodes, every one or
    at positions, equal their node-by-node scores and verdicts."""
    rng = random.Random(7)
    images = [
        (["app:1"], 300 * 1024 * 1024),
        (["db:2"], 900 * 1024 * 1024),
        (["app:1", "app:latest"], 50 * 1024 * 1024),
    ]
    taints = [
        {"key": "a", "value": "1", "effect": "PreferNoSchedule"},
        {"key": "b", "value": "", "effect": "NoSchedule"},
        {"key": "c", "value": "x", "effect": "PreferNoSchedule"},
    ]
    for _ in range(20):
        nodes = []
        for i in range(rng.randint(2, 14)):
            held = [{"names": n, "sizeBytes": size} for n, size in rng.sample(images, rng.randint(0, 2))]
            nodes.append(node(f"n{i}", images=held, taints=rng.sample(taints, rng.randint(0, 2))))
        s = scheduler(nodes)
        nis = s.snapshot.node_infos
        for image in ("app:1", "db:2", "none:3"):
            incoming = pod("in", containers=[{"name": "c", "image": image}])
            for name in ("ImageLocality", "TaintToleration"):
                pl = plugin(s, name)
                state = CycleState()
                if hasattr(pl, "pre_score"):
                    pl.pre_score(state, incoming, nis)
                assert pl.score_nodes(state, incoming, nis)[0] == _each_node(pl, state, incoming, nis)
                positions = sorted(rng.sample(range(len(nis)), rng.randint(1, len(nis))))
                _at_positions(pl, state, incoming, nis, positions)
            tt = plugin(s, "TaintToleration")
            verdicts = tt.filter_nodes(CycleState(), incoming, nis)
            expected = [tt.filter(CycleState(), incoming, ni) for ni in nis]
            assert [None if v is None else v.reasons for v in verdicts] == [
                None if v is None else v.reasons for v in expected
            ]


def test_score_arrays_give_each_nodes_own_score_and_follow_binds(vectorised):
    """Clusters whose every value the int64 arrays hold (no zero allocatable, nothing near 2**53):
    with numpy the many-node scores come from Snapshot.score_arrays, equal node by node, before
    and after binds, at positions and over every node."""
    rng = random.Random(61)
    for _ in range(15):
        nodes, pods = [], []
        for i in range(rng.randint(2, 14)):
            cpu = rng.choice(["1", "3", "4", "7500m", "64"])
            mem = rng.choice(["1", "3", "1Gi", "8Gi", "100G", "1Ti"])
            nodes.append(node(f"n{i}", cpu=cpu, memory=mem, pods="500"))
            for j in range(rng.randint(0, 4)):
                req = {"cpu": rng.choice(["1m", "100m", "3", "70"]), "memory": rng.choice(["1", "200Mi", "9Gi"])}
                pods.append(pod(f"p{i}-{j}", requests=req if rng.random() < 0.8 else None, node_name=f"n{i}"))
        s = scheduler(nodes, pods)
        _check(s, rng)
        for k in range(rng.randint(1, 5)):
            s.bind(pod(f"b{k}", requests={"cpu": rng.choice(["1", "250m"]), "memory": "1Gi"}), rng.choice(nodes).name)
        _check(s, rng)
        arrays = s.snapshot._score_arrays
        assert (arrays is not None and arrays is not False) == vectorised


def test_score_array_gives_each_nodes_own_score():
    """The columnar cycle's scores (score_array) over every node, most and a few of them, equal
    node by node: float64 arrays where every value converts exactly (Snapshot.score_float_arrays,
    requests over allocatable and nodes with little room among them), int64 arrays or the list
    path elsewhere (zero allocatable, values past 2**53), before and after binds."""
    rng = random.Random(8)
    arrays_made.clear()
    for trial in range(60):
        if trial % 2:
            nodes, pods = _cluster(rng, rng.randint(2, 12))
        else:
            nodes, pods = [], []
            for i in range(rng.randint(2, 14)):
                mem = rng.choice(["1", "3", "1Gi", "8Gi", "100G", "1Ti"])
                nodes.append(node(f"n{i}", cpu=rng.choice(["1", "3", "4", "7500m", "64"]), memory=mem, pods="500"))
                for j in range(rng.randint(0, 4)):
                    req = {"cpu": rng.choice(["1m", "100m", "3", "70"]), "memory": rng.choice(["1", "200Mi", "9Gi"])}
                    pods.append(pod(f"p{i}-{j}", requests=req if rng.random() < 0.8 else None, node_name=f"n{i}"))
        s = scheduler(nodes, pods)
        for step in range(2):
            nis = s.snapshot.node_infos
            for _ in range(4):
                small = {"cpu": rng.choice(["100m", "2", "5"]), "memory": rng.choice(["1", "1Gi", "20Gi"])}
                incoming = pod("in", requests=_requests(rng) if rng.random() < 0.3 else small)
                for name in ("NodeResourcesFit", "NodeResourcesBalancedAllocation"):
                    pl = plugin(s, name)
                    state = CycleState()
                    if pl.pre_score(state, incoming, nis) is not None:
                        continue
                    positions = sorted(rng.sample(range(len(nis)), rng.randint(2, len(nis))))
                    for at in (None, positions, positions[: max(2, len(positions) // 3)]):
                        _array_at(pl, state, incoming, nis, at)
            for k in range(rng.randint(1, 4)):
                s.bind(pod(f"b{step}-{k}", requests=_requests(rng)), rng.choice(nodes).name)
    # answered in float64 (as far as the values allow), NodeResourcesFit in int64 where the floats
    # would not be exact too
    assert arrays_made[("NodeResourcesFit", True, True)] > 100, arrays_made
    assert arrays_made[("NodeResourcesBalancedAllocation", True, True)] > 100, arrays_made
    assert arrays_made[("NodeResourcesFit", True, False)] > 10, arrays_made


def test_least_allocated_in_float64_floors_a_quotient_just_below_an_integer():
    """Memory allocatable 2**52 + 5, requests leaving (allocatable - 1) / 100 free: LeastAllocated's
    memory term is the floor of 1 - 1/allocatable, 0, and an odd cpu term carries a wrong 1 into
    the mean. score_array's float64 path (every value below 2**53) gives Go's score."""
    np = pytest.importorskip("numpy")
    allocatable = 2**52 + 5
    held = (99 * allocatable + 1) // 100 - 1  # with the incoming pod's 1 byte: (99A + 1) / 100
    s = scheduler(
        [node("edge", cpu="4", memory=str(allocatable)), node("plain", cpu="4", memory="8Gi")],
        [pod("big", requests={"cpu": "1", "memory": str(held)}, node_name="edge")],
    )
    incoming = pod("in", requests={"cpu": "140m", "memory": "1"})
    pl = plugin(s, "NodeResourcesFit")
    state = CycleState()
    assert pl.pre_score(state, incoming, s.snapshot.node_infos) is None
    want = _each_node(pl, state, incoming, s.snapshot.node_infos)
    assert want[0] == (71 + 0) // 2  # (4000 - 1140) * 100 // 4000 = 71; memory (A - 1) // A = 0
    assert s.snapshot.score_float_arrays(np) is not None  # (the float64 path: every value converts exactly)
    assert pl.score_array(state, incoming, s.snapshot.node_infos).tolist() == want


def test_float64_score_arithmetic_equals_the_integer_arithmetic_on_random_columns():
    """_least_allocated_floats and _balanced_floats against _least_allocated_arrays and
    _balanced_arrays (Go's integer and float64 arithmetic) on random columns of every magnitude
    below 2**53 (where Snapshot.score_float_arrays gives them), requests over what is free among
    them, and dividends one below a multiple of the allocatable (the quotients closest under an
    integer): the same scores, over every node and at positions."""
    np = pytest.importorskip("numpy")
    from kschedcli.plugins.noderesources.balanced_allocation import _balanced_arrays, _balanced_floats
    from kschedcli.plugins.noderesources.fit import _least_allocated_arrays, _least_allocated_floats

    top = 2**53 - 1
    rng = random.Random(17)
    checked: Counter = Counter()
    for trial in range(400):
        n = 64
        bits = (10, 20, 32, 40, 46, 50, 52)[trial % 7]
        alloc_cpu = [rng.randint(1, 2**bits) for _ in range(n)]
        alloc_mem = [rng.randint(1, 2**bits) for _ in range(n)]
        pc, pm = rng.randint(0, min(2**bits, top // 100)), rng.randint(0, min(2**bits, top // 100))
        c, m = pc * 100, pm * 100

        def free(a: int, asked: int) -> int:
            # a hundred times what is left: anywhere up to a hundred times allocatable (negative:
            # requests over allocatable), or the pod's request plus one below a multiple of allocatable
            most = (top - asked) // a
            if rng.random() < 0.6 or most < 1:
                return rng.randint(-min(100 * a, top), min(100 * a, top))
            return asked + a * rng.randint(1, min(100, most)) - 1

        free_cpu = [free(a, c) for a in alloc_cpu]
        free_mem = [free(a, m) for a in alloc_mem]
        req_cpu = [rng.randint(0, min(2 * a, top - pc)) for a in alloc_cpu]
        req_mem = [rng.randint(0, min(2 * a, top - pm)) for a in alloc_mem]
        columns = (alloc_cpu, alloc_mem, free_cpu, free_mem, req_cpu, req_mem)
        ints = [np.array(col, dtype=np.int64) for col in columns]
        floats = [np.array(col, dtype=np.float64) for col in columns]
        take = np.array(sorted(rng.sample(range(n), rng.randint(1, n))), dtype=np.intp) if trial % 2 else None
        at = slice(None) if take is None else take
        want = _least_allocated_arrays((np, None, ints[0][at], ints[1][at], ints[2][at], ints[3][at]), c, m)
        got = _least_allocated_floats((np, None, take, floats[0], floats[1], floats[2], floats[3]), c, m)
        assert got.tolist() == want.tolist(), (trial, bits)
        want = _balanced_arrays((np, None, ints[0][at], ints[1][at], ints[4][at], ints[5][at]), pc, pm)
        got = _balanced_floats((np, None, take, floats[0], floats[1], floats[4], floats[5]), pc, pm)
        assert got.tolist() == want.tolist(), (trial, bits)
        checked[bits] += 1
    assert len(checked) == 7
