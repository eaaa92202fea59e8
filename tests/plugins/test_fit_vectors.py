"""NodeResourcesFit over int64 arrays (vectors.py) gives every node the very verdict the
pure-Python columns give, nodes failing alike sharing one status object, before and after binds;
values beyond int64 stay on Python's ints. And numpy is imported only where it pays."""

import random

import pytest
from builders import node, plugin, pod, scheduler

from kschedcli.backend import vectors
from kschedcli.config.versions import RELEASES
from kschedcli.framework.cycle_state import CycleState


def _verdicts(col):
    """Each node's (code, reasons, plugin), and which nodes share one status object."""
    seen: dict[int, int] = {}
    shared = [seen.setdefault(id(st), len(seen)) if st is not None else None for st in col]
    return [None if st is None else (st.code, tuple(st.reasons), st.plugin) for st in col], shared


def _filter(fit, incoming, s, vectorised: bool, monkeypatch):
    monkeypatch.setattr(vectors, "MIN_NODES", 1 if vectorised else 10**9)
    monkeypatch.setattr(vectors, "IMPORT_AFTER_NODES", 0)
    state = CycleState()
    fit.pre_filter(state, incoming, s.snapshot.node_infos)
    return fit.filter_nodes(state, incoming, s.snapshot.node_infos)


def _cluster(rng, n=40, huge=False):
    nodes, pods = [], []
    for i in range(n):
        name = f"n{i}"
        memory = "1180591620717411303424" if huge and i == 7 else rng.choice(["1Gi", "4Gi", "8Gi"])
        nodes.append(
            node(
                name,
                cpu=rng.choice(["1", "2", "4"]),
                memory=memory,
                pods=rng.choice(["1", "2", "10"]),
                extra={"ephemeral-storage": rng.choice(["1Gi", "10Gi"])},
            )
        )
        for j in range(rng.randint(0, 2)):
            requests = {"cpu": rng.choice(["0", "500m", "1500m"]), "memory": rng.choice(["0", "512Mi", "3Gi"])}
            pods.append(pod(f"{name}-p{j}", requests=requests, node_name=name))
    return nodes, pods


def _incoming(rng, k):
    requests = {}
    for resource, amounts in (
        ("cpu", ["0", "1", "3", "8"]),
        ("memory", ["0", "1Gi", "6Gi", "16Gi"]),
        ("ephemeral-storage", ["0", "2Gi", "20Gi"]),
    ):
        amount = rng.choice(amounts)
        if amount != "0":
            requests[resource] = amount
    return pod(f"in-{k}", requests=requests)


@pytest.mark.parametrize("release_name", ["v1.33", "v1.34"])
def test_the_arrays_give_every_node_the_pure_python_verdict(release_name, monkeypatch):
    pytest.importorskip("numpy")
    rng = random.Random(34)
    kinds = set()
    for _ in range(25):
        nodes, pods = _cluster(rng)
        s = scheduler(nodes, pods, release=RELEASES[release_name])
        fit = plugin(s, "NodeResourcesFit")
        for k in range(6):
            incoming = _incoming(rng, k)
            fast = _filter(fit, incoming, s, True, monkeypatch)
            assert s.snapshot._free_arrays is not None and s.snapshot._free_arrays is not False
            assert _verdicts(fast) == _verdicts(_filter(fit, incoming, s, False, monkeypatch))
            kinds.update(tuple(st.reasons) for st in fast if st is not None)
        # binds change the free columns: the arrays follow them
        for p in [pod(f"late-{j}", requests={"cpu": "500m", "memory": "1Gi"}) for j in range(5)]:
            s.bind(p, rng.choice(s.snapshot.names))
        incoming = _incoming(rng, 9)
        assert _verdicts(_filter(fit, incoming, s, True, monkeypatch)) == _verdicts(
            _filter(fit, incoming, s, False, monkeypatch)
        )
    # every reason, alone and together, came up
    assert {r for reasons in kinds for r in reasons} == {
        "Too many pods",
        "Insufficient cpu",
        "Insufficient memory",
        "Insufficient ephemeral-storage",
    }
    assert any(len(reasons) >= 3 for reasons in kinds)


def test_a_value_beyond_int64_keeps_the_pure_python_path(monkeypatch):
    pytest.importorskip("numpy")
    rng = random.Random(7)
    nodes, pods = _cluster(rng, huge=True)  # a node with 1 ZiB of memory
    s = scheduler(nodes, pods)
    fit = plugin(s, "NodeResourcesFit")
    for k in range(5):
        incoming = _incoming(rng, k)
        fast = _filter(fit, incoming, s, True, monkeypatch)
        assert s.snapshot._free_arrays is False
        assert _verdicts(fast) == _verdicts(_filter(fit, incoming, s, False, monkeypatch))


def test_a_request_beyond_int64_keeps_the_pure_python_path(monkeypatch):
    pytest.importorskip("numpy")
    rng = random.Random(11)
    nodes, pods = _cluster(rng)
    s = scheduler(nodes, pods)
    fit = plugin(s, "NodeResourcesFit")
    incoming = pod("greedy", requests={"cpu": "1", "memory": "1180591620717411303424"})  # 1 ZiB
    fast = _filter(fit, incoming, s, True, monkeypatch)
    assert s.snapshot._free_arrays is None  # never built: the request alone ruled the arrays out
    assert _verdicts(fast) == _verdicts(_filter(fit, incoming, s, False, monkeypatch))
    assert {st.reasons[-1] for st in fast} == {"Insufficient memory"}


def test_numpy_is_imported_only_for_large_clusters_after_enough_passes(monkeypatch):
    imported = []
    module = object()

    def import_numpy():
        imported.append(module)
        return module

    monkeypatch.setattr(vectors, "_walked", 0)
    monkeypatch.setattr(vectors, "IMPORT_AFTER_NODES", 3 * vectors.MIN_NODES)
    monkeypatch.setattr(vectors, "_imported", lambda: imported[0] if imported else None)
    monkeypatch.setattr(vectors, "_import", import_numpy)
    assert vectors.numpy_for(vectors.MIN_NODES - 1) is None
    assert vectors._walked == 0  # small clusters do not count towards the import
    got = [vectors.numpy_for(vectors.MIN_NODES) for _ in range(5)]
    assert got == [None, None, None, module, module]
    assert imported == [module]  # imported once
    assert vectors.numpy_for(vectors.MIN_NODES - 1) is None  # small clusters stay on Python's ints
    # a larger cluster gets there in fewer passes
    monkeypatch.setattr(vectors, "_walked", 0)
    imported.clear()
    got = [vectors.numpy_for(2 * vectors.MIN_NODES) for _ in range(3)]
    assert got == [None, module, module]


def test_a_process_that_has_numpy_already_uses_it_at_once(monkeypatch):
    module = object()
    monkeypatch.setattr(vectors, "_walked", 0)
    monkeypatch.setattr(vectors, "_imported", lambda: module)
    monkeypatch.setattr(vectors, "_import", lambda: pytest.fail("imported again"))
    assert vectors.numpy_for(vectors.MIN_NODES) is module


def test_fit_int64_bounds():
    assert vectors.fit_int64([])
    assert vectors.fit_int64([-(2**63), 2**63 - 1])
    assert not vectors.fit_int64([2**63])
    assert not vectors.fit_int64([0, -(2**63) - 1])
