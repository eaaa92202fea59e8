"""Plugins' many-node methods (filter_nodes / score_nodes) and the framework's column caches must
decide exactly what the node-by-node methods decide. Seeded random clusters, small enough to be quick."""

from __future__ import annotations

import copy
import random

import pytest
from builders import node, pod, scheduler

from kschedcli.framework.cycle_state import CycleState
from kschedcli.framework.runtime import Framework

ZONES = ["a", "b", "c"]
APPS = ["web", "api", "db"]


def _taints(rng):
    out = []
    if rng.random() < 0.3:
        out.append({"key": "pool", "value": rng.choice(["gpu", "batch"]), "effect": "NoSchedule"})
    if rng.random() < 0.3:
        out.append({"key": "soft", "value": "x", "effect": "PreferNoSchedule"})
    return out


def _pod_spec(rng, app):
    spec = {}
    if rng.random() < 0.4:
        spec["tolerations"] = [{"key": "pool", "operator": "Exists"}]
    if rng.random() < 0.2:
        spec["tolerations"] = spec.get("tolerations", []) + [
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
        ]
    cons = []
    if rng.random() < 0.5:
        cons.append(
            {
                "maxSkew": rng.choice([1, 2]),
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                "labelSelector": {"matchLabels": {"app": app}},
            }
        )
    if rng.random() < 0.3:
        cons.append(
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                "labelSelector": {"matchLabels": {"app": app}},
            }
        )
    if cons:
        spec["topologySpreadConstraints"] = cons
    if rng.random() < 0.4:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": rng.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]),
                        "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                    }
                ]
            }
        }
    if rng.random() < 0.05:
        spec["nodeName"] = f"n{rng.randrange(12)}"
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(ZONES)}
    if rng.random() < 0.2:
        terms = [
            {
                "matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [f"host-{rng.randrange(12)}"]}
                ]
            }
        ]
        if rng.random() < 0.5:
            terms.append(
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"n{rng.randrange(12)}"]}]}
            )
        spec.setdefault("affinity", {})["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    return spec


def _cluster(seed):
    rng = random.Random(seed)
    # hostname labels need not be the node names (they are not on EKS, say)
    nodes = [
        node(
            f"n{i}",
            cpu=str(rng.choice([2, 4, 8])),
            memory=f"{rng.choice([4, 8, 16])}Gi",
            pods=str(rng.choice([3, 110])),
            labels={"topology.kubernetes.io/zone": ZONES[i % 3], "kubernetes.io/hostname": f"host-{i}"},
            taints=_taints(rng),
            unschedulable=rng.random() < 0.1,
            images=[{"names": ["app:1"], "sizeBytes": 300 * 2**20}] if rng.random() < 0.5 else [],
        )
        for i in range(12)
    ]
    if seed % 2:
        # nodes lacking a topology label: no domain for the zone, no hostname (counted as None)
        del nodes[5].labels["topology.kubernetes.io/zone"]
        del nodes[7].labels["kubernetes.io/hostname"]
    existing = []
    for j in range(30):
        app = rng.choice(APPS)
        existing.append(
            pod(
                f"e{j}",
                labels={"app": app},
                node_name=f"n{rng.randrange(12)}",
                requests={"cpu": f"{rng.choice([100, 500, 1500])}m", "memory": f"{rng.choice([128, 1024])}Mi"},
                spec=_pod_spec(rng, app) if rng.random() < 0.5 else None,
            )
        )
    pending = []
    for k in range(25):
        app = rng.choice(APPS)
        pending.append(
            pod(
                f"p{k}",
                labels={"app": app},
                requests={"cpu": f"{rng.choice([0, 200, 1000, 3000])}m", "memory": f"{rng.choice([0, 256, 2048])}Mi"},
                spec=_pod_spec(rng, app),
            )
        )
    return nodes, existing, pending


def _verdict(st):
    return None if st is None or st.code == "Success" else (st.code, tuple(st.reasons), st.plugin)


@pytest.mark.parametrize("seed", range(6))
def test_many_node_methods_agree_with_node_by_node(seed):
    nodes, existing, pending = _cluster(seed)
    sched = scheduler(nodes, existing)
    fw = sched.frameworks["default-scheduler"]
    nis = sched.snapshot.node_infos
    checked_filters = checked_scores = 0
    for p in pending:
        state = CycleState()
        pf = fw.run_pre_filter(state, p)
        if pf.status is not None:
            continue
        for pl in fw.filter_plugins:
            if pl.name in state.skip_filter_plugins or not hasattr(pl, "filter_nodes"):
                continue
            batch = pl.filter_nodes(state, p, nis)
            one = [pl.filter(state, p, ni) for ni in nis]
            assert [_verdict(s) for s in batch] == [_verdict(s) for s in one], (pl.name, p.name)
            checked_filters += 1
        if fw.run_pre_score(state, p, nis) is not None:
            continue
        for pl in fw.score_plugins:
            if pl.name in state.skip_score_plugins or not hasattr(pl, "score_nodes"):
                continue
            batch, st = pl.score_nodes(state, p, nis)
            assert st is None
            assert batch == [pl.score(state, p, ni)[0] for ni in nis], (pl.name, p.name)
            checked_scores += 1
    assert checked_filters > 20 and checked_scores > 20


def _summary(r):
    return (
        r.schedulable,
        r.selected_node,
        r.message,
        sorted(r.feasible),
        {n: _verdict(nf.first_failure) for n, nf in r.filters.items()},
        {n: {pl: (ps.raw, ps.normalized) for pl, ps in per.items()} for n, per in r.scores.items()},
        dict(r.totals),
    )


@pytest.mark.parametrize("seed", range(4))
def test_column_caches_across_a_sequence_change_nothing(seed):
    """A sequence with the equivalence-class columns (each bind replayed from the snapshot's log)
    decides every cycle as a sequence computing everything afresh does."""
    nodes, existing, pending = _cluster(seed)
    cached = scheduler(nodes, existing)
    _, existing2, pending2 = _cluster(seed)
    fresh = scheduler(nodes, existing2)
    for fw in fresh.frameworks.values():
        fw.equivalence.enabled = False
    a = cached.run_sequence(pending)
    b = []
    for p in pending2:
        fresh.clear_caches()
        r = fresh.schedule(p)
        b.append(r)
        if r.schedulable:
            fresh.bind(p, r.selected_node)
    assert sum(r.schedulable for r in a) > 3
    assert [_summary(r) for r in a] == [_summary(r) for r in b]


def test_filter_table_rows_are_each_plugins_verdict():
    nodes = [node("n0"), node("n1", cpu="1")]
    sched = scheduler(nodes)
    r = sched.schedule(pod("p", requests={"cpu": "2"}))
    assert list(r.filters) == ["n0", "n1"] and "n1" in r.filters and len(r.filters) == 2
    assert r.filters["n0"].first_failure is None
    assert r.filters["n1"].plugins["NodeResourcesFit"].reasons == ["Insufficient cpu"]
    assert r.filters["n1"].first_failure.plugin == "NodeResourcesFit"
    assert r.feasible == ["n0"]


def test_score_columns_follow_the_order_of_the_nodes_given():
    nodes = [node("n0"), node("n1", cpu="8")]
    sched = scheduler(nodes)
    fw: Framework = sched.frameworks["default-scheduler"]
    p = pod("p", requests={"cpu": "1"})
    state = CycleState()
    fw.run_pre_filter(state, p)
    nis = sched.snapshot.node_infos
    assert fw.run_pre_score(state, p, nis) is None
    cols = {name: raw for name, raw, _, _ in fw.run_score(state, p, list(reversed(nis)))}
    # n1 (8 cpu) first: cpu 7/8 -> 87, memory (8Gi - the 200Mi non-zero default) -> 97, mean 92;
    # n0: cpu 3/4 -> 75, memory 97, mean 86
    assert cols["NodeResourcesFit"] == [92, 86]


def test_image_states_take_the_first_nodes_size_and_count_every_node():
    def imgs(*pairs):
        return [{"names": [n], "sizeBytes": s} for n, s in pairs]

    nodes = [
        node("n0", images=imgs(("b:1", 7))),
        node("n1", images=imgs(("a:1", 100), ("b:1", 9))),
        node("n2", images=imgs(("b:1", 7))),
        node("n3", images=imgs(("a:1", 200))),
        node("n4", images=imgs(("a:1", 100), ("b:1", 9))),
    ]
    snap = scheduler(nodes).snapshot
    st = {ni.node.name: ni.image_states for ni in snap.node_infos}
    assert st["n0"] == st["n2"] == {"b:1": (7, 4)}
    assert st["n1"] == st["n4"] == {"a:1": (100, 3), "b:1": (7, 4)}
    assert st["n3"] == {"a:1": (100, 3)}


def test_node_affinity_many_nodes_with_the_profiles_added_affinity():
    added = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}]}
            ]
        }
    }
    profile = {
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": added}}],
    }
    nodes = [node(f"n{i}", labels={"topology.kubernetes.io/zone": ZONES[i % 3], "tier": str(i % 2)}) for i in range(6)]
    sched = scheduler(nodes, profile=profile)
    fw = sched.frameworks["default-scheduler"]
    pl = fw.plugins["NodeAffinity"]
    p = pod("p", spec={"nodeSelector": {"tier": "1"}})
    state = CycleState()
    assert fw.run_pre_filter(state, p).status is None
    nis = sched.snapshot.node_infos
    batch = [_verdict(s) for s in pl.filter_nodes(state, p, nis)]
    assert batch == [_verdict(pl.filter(state, p, ni)) for ni in nis]
    enforced = ("UnschedulableAndUnresolvable", ("node(s) didn't match scheduler-enforced node affinity",), "")
    mismatch = ("UnschedulableAndUnresolvable", ("node(s) didn't match Pod's node affinity/selector",), "")
    # zones a b c a b c, tiers 0 1 0 1 0 1
    assert batch == [mismatch, None, enforced, None, mismatch, enforced]


@pytest.mark.parametrize("seed", range(3))
def test_snapshot_columns_follow_binds(seed):
    """The snapshot's per-node columns (free resources, label values, taint groups) stay equal to
    what its nodes say after binds, and the filters reading them decide as node by node."""
    nodes, existing, pending = _cluster(seed)
    sched = scheduler(nodes, existing)
    snap = sched.snapshot
    fw = sched.frameworks["default-scheduler"]
    snap.free_columns()  # built before the binds, then brought up to date
    bound = 0
    for p in pending:
        r = sched.schedule(p)
        if r.schedulable:
            sched.bind(p, r.selected_node)
            bound += 1
        nis = snap.node_infos
        assert snap.free_columns() == (
            [ni.node.allocatable.allowed_pods - len(ni.pods) for ni in nis],
            [ni.node.allocatable.milli_cpu - ni.requested.milli_cpu for ni in nis],
            [ni.node.allocatable.memory - ni.requested.memory for ni in nis],
            [ni.node.allocatable.ephemeral_storage - ni.requested.ephemeral_storage for ni in nis],
        )
        state = CycleState()
        if fw.run_pre_filter(state, p).status is None:
            fit = fw.plugins["NodeResourcesFit"]
            assert [_verdict(s) for s in fit.filter_nodes(state, p, nis)] == [
                _verdict(fit.filter(state, p, ni)) for ni in nis
            ]
    assert bound > 3
    groups, first = snap.taint_groups()
    sigs = [tuple((t.key, t.value, t.effect) for t in ni.node.taints) for ni in snap.node_infos]
    for sig, g in zip(sigs, groups):
        assert (g == -1) == (not sig)
        if g >= 0:
            assert sig == tuple((t.key, t.value, t.effect) for t in first[g].node.taints)
    assert snap.label_column("topology.kubernetes.io/zone") == [
        ni.node.labels.get("topology.kubernetes.io/zone") for ni in snap.node_infos
    ]


def test_a_shared_error_status_is_wrapped_on_every_node():
    """NodeResourcesFit without its PreFilter state answers one Error for every node; the framework
    wraps it as kube-scheduler's RunFilterPlugins does, on each node, naming the plugin."""
    sched = scheduler([node("n0"), node("n1"), node("n2")])
    fw = sched.frameworks["default-scheduler"]
    fit = fw.plugins["NodeResourcesFit"]
    col = fw.filter_column(fit, CycleState(), pod("p"), sched.snapshot.node_infos)
    assert len(col) == 3 and all(st.code == "Error" and st.plugin == "NodeResourcesFit" for st in col)
    assert col[0].message().startswith('running "NodeResourcesFit" filter plugin: ')
    assert col[0].message().count("running") == 1


def test_snapshot_sums_pods_per_node_as_adding_them_one_by_one():
    """Snapshot construction adds each node's pods in one pass (NodeInfo.add_pods); every
    aggregate must equal adding them one at a time: requests (extended resources included),
    non-zero requests, host ports, PVC references, the affinity lists, the pod order."""
    from kschedcli.backend.snapshot import NodeInfo

    rng = random.Random(3)
    nodes, existing, _ = _cluster(4)
    extra = []
    for j in range(40):
        spec = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": f"c{rng.randrange(4)}"}}]}
        if rng.random() < 0.3:
            spec["containers"] = [
                {
                    "name": "c",
                    "image": "a",
                    "ports": [{"containerPort": 80, "hostPort": rng.choice([80, 81])}],
                    "resources": {"requests": {"cpu": "100m", "example.com/gpu": "1"}},
                }
            ]
        if rng.random() < 0.3:
            spec["affinity"] = {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "podAffinityTerm": {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": {"matchLabels": {"app": "web"}},
                            },
                        }
                    ]
                }
            }
        extra.append(
            pod(f"x{j}", node_name=f"n{rng.randrange(12)}", requests={"cpu": "200m", "memory": "64Mi"}, spec=spec)
        )
    sched = scheduler(nodes, existing + extra + [pod("lost", node_name="nowhere")])
    snap = sched.snapshot
    assert [p.name for p in snap.unplaced_pods] == ["lost"]
    slots = [s for s in NodeInfo.__slots__ if s not in ("generation", "derived")]
    checked = 0
    for ni in snap.node_infos:
        one = NodeInfo(ni.node)
        for p in ni.pods:
            one.add_pod(p)
        for s in slots:
            a, b = getattr(ni, s), getattr(one, s)
            if s == "requested":
                a, b = (
                    (a.milli_cpu, a.memory, a.ephemeral_storage, a.scalars),
                    (b.milli_cpu, b.memory, b.ephemeral_storage, b.scalars),
                )
            elif s == "image_states":
                continue
            assert a == b, (ni.node.name, s)
        checked += bool(ni.used_ports) + bool(ni.pods_with_affinity) + bool(ni.requested.scalars)
    assert checked > 5
    everyone = existing + extra
    assert [p.name for ni in snap.node_infos for p in ni.pods] == [
        p.name for n in nodes for p in everyone if p.node_name == n.name
    ]


def test_first_failure_skips_explicit_success_statuses():
    """A plugin may answer an explicit Success status rather than nothing: the node's first
    failure is still the first plugin, in profile order, that did not pass."""
    from kschedcli.framework.status import Status

    sched = scheduler([node("n0"), node("n1", cpu="1")])
    pl = sched.frameworks["default-scheduler"].plugins["NodeUnschedulable"]
    pl.filter_nodes = lambda state, p, nodes: [Status("Success") for _ in nodes]
    r = sched.schedule(pod("p", requests={"cpu": "2"}))
    assert r.filters["n0"].first_failure is None
    assert r.filters["n1"].first_failure.plugin == "NodeResourcesFit"
    assert r.feasible == ["n0"] and r.selected_node == "n0"


def test_a_filter_error_ends_the_cycle_with_the_last_nodes_error():
    """A filter plugin erring on some nodes makes the cycle an error; as kube-scheduler's
    diagnosis, the message is the last such node's (in node order)."""
    from kschedcli.framework.status import Status

    sched = scheduler([node("n0"), node("n1"), node("n2")])
    pl = sched.frameworks["default-scheduler"].plugins["NodeUnschedulable"]
    pl.filter_nodes = lambda state, p, nodes: [None, Status("Error", "disk on fire"), Status("Error", "out of luck")]
    r = sched.schedule(pod("p"))
    assert not r.schedulable
    assert r.error == r.message == 'running "NodeUnschedulable" filter plugin: out of luck'
    assert r.filters["n1"].first_failure.reasons == ['running "NodeUnschedulable" filter plugin: disk on fire']


def test_resource_scores_over_many_nodes_at_the_edges_of_float64():
    """NodeResourcesFit's and BalancedAllocation's many-node scores equal their node-by-node
    scores where operands pass 2**53 (Go converts each to float64 before dividing), where a node
    lacks cpu or memory, and where requests exceed the allocatable."""
    rng = random.Random(5)
    nodes = []
    for i in range(40):
        cpu = rng.choice(["0", "3", "9007199254741", "123456789012345678"])
        memory = rng.choice(["0", "7Gi", "8Ei", "9007199254740993", "9007199254740991"])
        nodes.append(node(f"n{i}", cpu=cpu, memory=memory))
    existing = [
        pod(
            f"e{j}",
            node_name=f"n{rng.randrange(40)}",
            requests={
                "cpu": rng.choice(["1", "2", "9007199254740", "5"]),
                "memory": rng.choice(["1Gi", "9007199254740000", "3Ei", "9Gi"]),
            },
        )
        for j in range(60)
    ]
    sched = scheduler(nodes, existing)
    fw = sched.frameworks["default-scheduler"]
    nis = sched.snapshot.node_infos
    compared = 0
    for k, (cpu, memory) in enumerate([("500m", "1Gi"), ("3", "8Ei"), ("90071992547409", "9007199254740993")]):
        p = pod(f"p{k}", requests={"cpu": cpu, "memory": memory})
        state = CycleState()
        fw.run_pre_filter(state, p)
        assert fw.run_pre_score(state, p, nis) is None
        for name in ("NodeResourcesFit", "NodeResourcesBalancedAllocation"):
            pl = fw.plugins[name]
            batch, st = pl.score_nodes(state, p, nis)
            assert st is None
            assert batch == [pl.score(state, p, ni)[0] for ni in nis], (name, p.name)
            compared += 1
    assert compared == 6


@pytest.mark.parametrize("seed", range(3))
def test_normalize_on_lists_agrees_with_normalize_on_dicts(seed):
    """NormalizeScore on a list (BatchNormalizePlugin: TaintToleration, PodTopologySpread) leaves
    what normalize_score leaves in a dict of the same scores, on every node and on a subset, with
    and without PodTopologySpread's ignored nodes."""
    nodes, existing, pending = _cluster(seed)
    sched = scheduler(nodes, existing)
    fw = sched.frameworks["default-scheduler"]
    nis = sched.snapshot.node_infos
    checked = 0
    for p in pending:
        state = CycleState()
        if fw.run_pre_filter(state, p).status is not None or fw.run_pre_score(state, p, nis) is not None:
            continue
        for name in ("TaintToleration", "PodTopologySpread"):
            if name in state.skip_score_plugins:
                continue
            pl = fw.plugins[name]
            for subset in (nis, nis[1::2]):
                names = [ni.node.name for ni in subset]
                raw, _ = pl.score_nodes(state, p, subset)
                table = dict(zip(names, raw))
                assert pl.normalize_score(state, p, table) is None
                listed, st = pl.normalize_scores(state, p, list(raw), names)
                assert st is None
                assert listed == list(table.values()), (name, p.name)
                checked += 1
            if name == "PodTopologySpread":
                s = state.read("PreScorePodTopologySpread")
                s.ignored_nodes.add(nis[0].node.name)
                names = [ni.node.name for ni in nis]
                raw, _ = pl.score_nodes(state, p, nis)
                table = dict(zip(names, raw))
                pl.normalize_score(state, p, table)
                assert pl.normalize_scores(state, p, list(raw), names)[0] == list(table.values())
    assert checked > 10


def test_totals_read_as_a_dict_of_each_nodes_weighted_sum():
    """A cycle's totals: node name -> the sum of its normalized scores times their weights, in the
    feasible nodes' order, read as the dict it stands for (==, get, in, items, len)."""
    nodes, existing, pending = _cluster(3)
    sched = scheduler(nodes, existing)
    checked = 0
    for p in pending:
        r = sched.schedule(p)
        if not r.schedulable or len(r.feasible) < 2:
            continue
        want = {n: sum(ps.normalized * ps.weight for ps in r.scores[n].values()) for n in r.feasible}
        assert r.totals == want and want == r.totals
        assert list(r.totals) == r.feasible and list(r.totals.items()) == list(want.items())
        assert len(r.totals) == len(want) and r.totals.get("no-such-node") is None
        assert r.selected_node in r.totals and r.totals[r.selected_node] == max(want.values())
        checked += 1
    assert checked > 5


def test_a_labels_absence_is_known_until_a_node_is_added():
    """Snapshot.label_missing: whether some node lacks the label, found once and forgotten when a
    node comes (a node without it makes it missing)."""
    nodes, existing, _ = _cluster(2)
    sched = scheduler(nodes, existing)
    snap = sched.snapshot
    assert snap.label_missing("topology.kubernetes.io/zone") is False
    assert snap.label_missing("no-such-label") is True
    snap.add_node(node("late", labels={"kubernetes.io/hostname": "late"}), [])
    assert snap.label_missing("topology.kubernetes.io/zone") is True
    assert snap.label_column("topology.kubernetes.io/zone")[-1] is None


def test_fit_filter_nodes_on_many_of_the_snapshot_s_nodes_reads_its_columns():
    """NodeResourcesFit's filter_nodes on a list of 16 or more of the snapshot's own NodeInfos (a
    sampled search's chunk, the nodes changed since a cached column), in any order, reads the
    snapshot's free columns at their positions: as node by node, binds included; NodeInfos that
    are not the snapshot's (copies) are read from themselves."""
    rng = random.Random(7)
    nodes = [
        node(f"n{i:02}", cpu=str(rng.choice([1, 2, 4])), memory="4Gi", pods=str(rng.choice([2, 110])))
        for i in range(40)
    ]
    sched = scheduler(nodes)
    snap = sched.snapshot
    fw = sched.frameworks["default-scheduler"]
    fit = fw.plugins["NodeResourcesFit"]
    snap.free_columns()  # built before the binds, then brought up to date
    for j in range(60):
        p = pod(f"p{j}", requests={"cpu": rng.choice(["500m", "1", "1500m"]), "memory": "512Mi"})
        r = sched.schedule(p)
        if r.schedulable:
            sched.bind(p, r.selected_node)
        state = CycleState()
        assert fw.run_pre_filter(state, p).status is None
        nis = snap.node_infos
        some = [nis[k] for k in rng.sample(range(len(nis)), 20)]
        expected = [_verdict(fit.filter(state, p, ni)) for ni in some]
        assert [_verdict(s) for s in fit.filter_nodes(state, p, some)] == expected
        copies = [copy.copy(ni) for ni in some]
        assert [_verdict(s) for s in fit.filter_nodes(state, p, copies)] == expected
    # the cluster filled up: the last pods' verdicts include failures
    assert any(_verdict(s) is not None for s in fit.filter_nodes(state, p, snap.node_infos))


@pytest.mark.parametrize("seed", range(6))
def test_spread_prescore_at_known_positions_is_prescore_node_by_node(seed):
    """PodTopologySpread's PreScore given the nodes' snapshot positions (label columns read at them;
    the pod's own constraints require every key, so nodes lacking one are ignored) keeps the same
    domains, in the same order, the same ignored nodes and weights as reading each node's labels."""
    from kschedcli.plugins.podtopologyspread.plugin import PRE_SCORE_KEY

    nodes, existing, pending = _cluster(seed)
    sched = scheduler(nodes, existing)
    fw = sched.frameworks["default-scheduler"]
    pts = fw.plugins["PodTopologySpread"]
    nis = sched.snapshot.node_infos
    rng = random.Random(seed)
    required = ignored = 0
    for p in pending:
        positions = sorted(rng.sample(range(len(nis)), rng.randrange(2, len(nis) + 1)))
        some = [nis[k] for k in positions]
        states = []
        for at in (positions, None):
            state = CycleState()
            if fw.run_pre_filter(state, p).status is not None:
                break
            state.score_positions = at
            if pts.pre_score(state, p, some) is not None:  # Skip: no soft constraint
                break
            states.append(state.get(PRE_SCORE_KEY))
        if len(states) < 2:
            continue
        a, b = states
        assert [list(m.items()) for m in a.counts] == [list(m.items()) for m in b.counts], p.name
        assert (a.ignored_nodes, a.weights) == (b.ignored_nodes, b.weights), p.name
        required += a.require_all
        ignored += bool(a.ignored_nodes)
    assert required > 3
    # odd seeds: a node without a zone label and one without a hostname label
    assert ignored > 0 if seed % 2 else ignored == 0
