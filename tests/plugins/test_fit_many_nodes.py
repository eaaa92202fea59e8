"""NodeResourcesFit over many nodes tells lacking nodes apart by which of fitsRequest's reasons
they have and which ask for more than the whole allocatable: each node gets the status Filter
gives it, and nodes failing alike share one status object."""

import itertools

import pytest
from builders import node, plugin, pod, scheduler

from kschedcli.config.versions import RELEASES
from kschedcli.framework.cycle_state import CycleState


def _verdict(st):
    return None if st is None else (st.code, tuple(st.reasons), st.plugin)


@pytest.mark.parametrize("release_name", ["v1.33", "v1.34"])
def test_lacking_nodes_get_filters_status_and_alike_ones_share_it(release_name):
    nodes, pods = [], []
    # every mix of: no room for a pod, cpu short (within or above allocatable), memory short
    # (within or above), ephemeral storage short
    shapes = itertools.product([False, True], ["ok", "short", "above"], ["ok", "short", "above"], [False, True])
    for i, (full, cpu, mem, eph) in enumerate(shapes):
        for copy in range(2):  # two alike nodes of each shape
            name = f"n{i}-{copy}"
            nodes.append(
                node(
                    name,
                    cpu="1" if cpu == "above" else "4",
                    memory="1Gi" if mem == "above" else "8Gi",
                    pods="1" if full else "10",
                    extra={"ephemeral-storage": "1Gi" if eph else "10Gi"},
                )
            )
            used = {"cpu": "3" if cpu == "short" else "0", "memory": "7Gi" if mem == "short" else "0"}
            pods.append(pod(f"{name}-p", requests=used, node_name=name))
    s = scheduler(nodes, pods, release=RELEASES[release_name])
    fit = plugin(s, "NodeResourcesFit")
    incoming = pod("in", requests={"cpu": "2", "memory": "2Gi", "ephemeral-storage": "2Gi"})
    state = CycleState()
    fit.pre_filter(state, incoming, s.snapshot.node_infos)
    nis = s.snapshot.node_infos
    many = fit.filter_nodes(state, incoming, nis)
    assert [_verdict(st) for st in many] == [_verdict(fit.filter(state, incoming, ni)) for ni in nis]
    assert sum(st is None for st in many) == 2  # only the roomy, unused nodes fit
    for a, b in zip(many[::2], many[1::2]):
        assert a is b  # alike nodes share their status
    codes = {st.code for st in many if st is not None}
    assert codes == (
        {"Unschedulable"} if release_name == "v1.33" else {"Unschedulable", "UnschedulableAndUnresolvable"}
    )


def test_first_failures_are_each_nodes_first_non_success_status_in_profile_order():
    """The framework's per-node first failure, laid from the columns' failing entries: the first
    status per node that is not None and not an explicit Success, the very object."""
    import random

    from kschedcli.framework.runtime import first_failures
    from kschedcli.framework.status import Status

    rng = random.Random(18)
    shapes = set()
    for _ in range(400):
        n = rng.randint(0, 40)
        shared = [
            Status(rng.choice(["Unschedulable", "UnschedulableAndUnresolvable", "Success"]), f"r{j}") for j in range(3)
        ]
        columns = []
        for _ in range(rng.randint(0, 5)):
            kind = rng.choice(["passes", "all fail", "some", "some", "few", "success"])
            if kind == "passes":
                col = [None] * n
            elif kind == "all fail":
                col = [rng.choice(shared[:2]) for _ in range(n)]
            elif kind == "success":
                col = [Status("Success") if rng.random() < 0.5 else None for _ in range(n)]
            elif kind == "few":  # a column failing a node or two (overlaid node by node)
                col = [rng.choice(shared[:2]) if rng.random() < 0.08 else None for _ in range(n)]
            else:
                col = [rng.choice(shared) if rng.random() < 0.4 else None for _ in range(n)]
            shapes.add(kind)
            columns.append(col)
        want = []
        for i in range(n):
            first = None
            for col in columns:
                if col[i] is not None and col[i].code != "Success":
                    first = col[i]
                    break
            want.append(first)
        got = first_failures([list(c) for c in columns], n)
        assert len(got) == n
        assert all(a is b for a, b in zip(got, want)), (columns, got, want)
        # the same with each column's distinct statuses given, as the filter pass gives them
        given = first_failures([list(c) for c in columns], n, [set(filter(None, c)) for c in columns])
        assert all(a is b for a, b in zip(given, want)), (columns, given, want)
    assert shapes == {"passes", "all fail", "some", "few", "success"}


def test_nodes_all_lacking_get_filters_status_in_node_order():
    """A preemptor lacks room on every node: each node's status is Filter's, and the statuses of
    alike nodes are made from the first of them."""
    shapes = [("4", "8Gi", "3"), ("1", "8Gi", "0"), ("4", "1Gi", "0"), ("4", "3Gi", "3"), ("1", "1Gi", "0")]
    nodes, pods = [], []
    for i, (cpu, memory, used) in enumerate(shapes * 3):
        nodes.append(node(f"n{i}", cpu=cpu, memory=memory))
        pods.append(pod(f"p{i}", requests={"cpu": used}, node_name=f"n{i}"))
    s = scheduler(nodes, pods)
    fit = plugin(s, "NodeResourcesFit")
    incoming = pod("big", requests={"cpu": "2", "memory": "4Gi"})
    state = CycleState()
    fit.pre_filter(state, incoming, s.snapshot.node_infos)
    nis = s.snapshot.node_infos
    many = fit.filter_nodes(state, incoming, nis)
    assert None not in many
    assert [_verdict(st) for st in many] == [_verdict(fit.filter(state, incoming, ni)) for ni in nis]
    for i in range(len(shapes)):  # the same shape, every fifth node: one status object
        assert many[i] is many[i + len(shapes)] is many[i + 2 * len(shapes)]


def test_node_unschedulable_over_the_snapshot_follows_cordoned_and_added_nodes():
    from kschedcli.framework.cycle_state import CycleState as State

    nodes = [node(f"n{i}", unschedulable=i % 3 == 1) for i in range(7)]
    s = scheduler(nodes, [])
    unsched = plugin(s, "NodeUnschedulable")
    incoming = pod("in")
    snap = s.snapshot

    def verdicts():
        many = unsched.filter_nodes(State(), incoming, snap.node_infos)
        one = [unsched.filter(State(), incoming, ni) for ni in snap.node_infos]
        assert [_verdict(st) for st in many] == [_verdict(st) for st in one]
        return [st is not None for st in many]

    assert verdicts() == [i % 3 == 1 for i in range(7)]
    snap.add_node(node("n7", unschedulable=True), [])
    snap.add_node(node("n8"), [])
    assert verdicts() == [i % 3 == 1 for i in range(7)] + [True, False]
    toleration = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}
    tolerant = pod("tolerant", spec={"tolerations": [toleration]})
    assert unsched.filter_nodes(State(), tolerant, snap.node_infos) == [None] * 9
