"""PodTopologySpread's per-node match counts kept between cycles: reused only while a node is unchanged."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders import fresh_state, node, plugin, pod, scheduler

from kschedcli.plugins.podtopologyspread.plugin import PRE_FILTER_KEY, PRE_SCORE_KEY

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _node(name, zone):
    return node(name, labels={ZONE: zone, HOST: name})


def _web(name, node_name=None, constraints=None, labels=None, ns="default"):
    spec = {"topologySpreadConstraints": constraints} if constraints is not None else {}
    return pod(name, ns=ns, node_name=node_name, labels=labels or {"app": "web"}, spec=spec)


HARD = [
    {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
]
SOFT = [
    {
        "maxSkew": 1,
        "topologyKey": HOST,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
]


def _zone_counts(sched, p):
    pl = plugin(sched, "PodTopologySpread")
    state = fresh_state()
    _, st = pl.pre_filter(state, p, sched.snapshot.list())
    assert st is None
    return dict(state.read(PRE_FILTER_KEY).counts[0])


def _host_scores(sched, p):
    pl = plugin(sched, "PodTopologySpread")
    state = fresh_state()
    nodes = sched.snapshot.list()
    assert pl.pre_score(state, p, nodes) is None
    return {ni.node.name: pl.score(state, p, ni)[0] for ni in nodes}, state


def test_counts_follow_binds_between_cycles():
    sched = scheduler(
        [_node("a", "z1"), _node("b", "z2")],
        [_web("w1", "a"), _web("w2", "a"), _web("o1", "b", labels={"app": "other"})],
    )
    incoming = _web("new", constraints=HARD)
    assert _zone_counts(sched, incoming) == {"z1": 2, "z2": 0}
    sched.snapshot.bind(_web("w3"), "b")
    assert _zone_counts(sched, incoming) == {"z1": 2, "z2": 1}
    # an eviction (the snapshot's own nodes change only through bind, evict and add_node)
    assert sched.snapshot.evict(sched.snapshot.get("a").pods[0])
    assert _zone_counts(sched, incoming) == {"z1": 1, "z2": 1}
    # binds and evictions in other namespaces and of pods the selector does not match change nothing
    sched.snapshot.bind(_web("x1", ns="other"), "b")
    sched.snapshot.bind(_web("o2", labels={"app": "other"}), "a")
    assert _zone_counts(sched, incoming) == {"z1": 1, "z2": 1}
    # a pod bound and evicted between two cycles, and one moved: each step replayed in order
    w4 = _web("w4")
    sched.snapshot.bind(w4, "a")
    assert sched.snapshot.evict(w4)
    w3 = next(p for p in sched.snapshot.get("b").pods if p.name == "w3")
    assert sched.snapshot.evict(w3)
    sched.snapshot.bind(w3, "a")
    assert _zone_counts(sched, incoming) == {"z1": 2, "z2": 0}


def test_score_counts_follow_binds_and_namespaces():
    sched = scheduler(
        [_node("a", "z1"), _node("b", "z1")], [_web("w1", "a"), _web("w2", "a"), _web("x", "b", ns="other")]
    )
    incoming = _web("new", constraints=SOFT)
    raw, state = _host_scores(sched, incoming)
    s = state.read(PRE_SCORE_KEY)
    assert s.counters[0](sched.snapshot.get("a")) == 2
    assert s.counters[0](sched.snapshot.get("b")) == 0  # other namespace
    before = raw["a"] - raw["b"]
    sched.snapshot.bind(_web("w3"), "b")
    sched.snapshot.bind(_web("w4"), "b")
    raw2, state2 = _host_scores(sched, incoming)
    assert state2.read(PRE_SCORE_KEY).counters[0](sched.snapshot.get("b")) == 2
    assert raw2["a"] == raw2["b"] and before > 0


def test_clone_is_counted_on_its_own_and_not_stored():
    sched = scheduler([_node("a", "z1"), _node("b", "z2")], [_web("w1", "a"), _web("w2", "a")])
    incoming = _web("new", constraints=HARD)
    _zone_counts(sched, incoming)  # fills the memo for the snapshot's NodeInfos
    pl = plugin(sched, "PodTopologySpread")
    own = sched.snapshot.get("a")
    clone = own.clone()
    clone.remove_pod(clone.pods[0])
    clone.generation = own.generation  # even at the same generation, another object is recounted
    counter = pl._counters("default", pl.constraints_for(incoming, "DoNotSchedule")[0])[0]
    assert counter(clone) == 1
    assert counter(own) == 2
    assert counter(clone) == 1


def test_terminating_pods_are_not_counted():
    dying = _web("d", "a")
    dying.raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    from kschedcli.api.model import Pod

    sched = scheduler([_node("a", "z1"), _node("b", "z2")], [_web("w1", "a"), Pod(dying.raw)])
    assert _zone_counts(sched, _web("new", constraints=HARD)) == {"z1": 1, "z2": 0}


def test_clear_caches_forgets_the_memo():
    sched = scheduler([_node("a", "z1")], [_web("w1", "a")])
    incoming = _web("new", constraints=HARD)
    _zone_counts(sched, incoming)
    pl = plugin(sched, "PodTopologySpread")
    assert pl._match_counts._tables
    sched.clear_caches()
    assert not pl._match_counts._tables


def test_compiled_selectors_count_as_the_selector_matches():
    from kschedcli.api.labels import parse_label_selector
    from kschedcli.plugins.podtopologyspread.counting import _count_matching, _pod_counter

    labels = [{"app": "web", "tier": "fe"}, {"app": "web"}, {"app": "web", "tier": "be"}, {"x": "y"}, {"tier": "fe"}]
    pods = [_web(f"p{i}", "a", labels=lab) for i, lab in enumerate(labels)] + [_web("q", "a", ns="x")]
    sched = scheduler([_node("a", "z1")], pods)
    ni = sched.snapshot.get("a")
    for raw, want in [
        ({"matchLabels": {"app": "web"}}, 3),
        ({"matchLabels": {"app": "web", "tier": "fe"}}, 1),
        ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["be"]}]}, 4),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe", "be"]}]}, 3),
        ({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]}, 2),
    ]:
        sel = parse_label_selector(raw, "s")
        assert _pod_counter("default", sel)(ni.pods) == want == _count_matching(ni, "default", sel), raw


def test_namespace_groups_follow_binds_for_a_new_selector():
    sched = scheduler([_node("a", "z1"), _node("b", "z2")], [_web("w1", "a")])
    assert _zone_counts(sched, _web("new", constraints=HARD)) == {"z1": 1, "z2": 0}
    sched.snapshot.bind(_web("c1", labels={"app": "cache"}), "b")
    other = [dict(HARD[0], labelSelector={"matchLabels": {"app": "cache"}})]
    assert _zone_counts(sched, _web("new2", constraints=other)) == {"z1": 0, "z2": 1}


def test_services_by_namespace_follow_the_clusters_objects():
    """DefaultSelector's Services by namespace are indexed once and indexed again whenever the
    cluster lists other objects (one added, one replaced by an equal copy); a Service without
    metadata.namespace is in `default`."""
    from kschedcli.plugins.podtopologyspread.common import NamespaceIndex

    class Objects:
        def __init__(self):
            self.services: list[dict] = []

        def list(self, kind):
            assert kind == "Service"
            return list(self.services)

    def svc(name, ns=None):
        meta = {"name": name} if ns is None else {"name": name, "namespace": ns}
        return {"kind": "Service", "metadata": meta, "spec": {"selector": {"app": name}}}

    cluster = Objects()
    a, b = svc("a", "shop"), svc("b")
    cluster.services = [a, b]
    index = NamespaceIndex("Service")
    assert index.of(cluster, "shop") == [a]
    assert index.of(cluster, "default") == [b]
    assert index.of(cluster, "other") == []
    c = svc("c", "shop")
    cluster.services.append(c)
    assert index.of(cluster, "shop") == [a, c]
    moved = svc("a", "web")  # same count, another object
    cluster.services[0] = moved
    assert index.of(cluster, "shop") == [c]
    assert index.of(cluster, "web") == [moved]


def test_a_stale_tally_taken_again_counts_as_the_changed_nodes_counted_one_by_one():
    """A tally older than the binds and evictions since (more of them than pods it counted) is
    taken again from the label index: at every step of binds and evictions, over many selectors
    (some matching nothing), the counts each node gets are those of the tally kept and each
    changed node recounted, and those of the node's pods counted directly."""
    import random

    from kschedcli.plugins.podtopologyspread.counting import _count_matching, _MatchCountCache

    rng = random.Random(3)
    nodes = [_node(f"n{i}", f"z{i % 3}") for i in range(12)]
    apps = ["web", "api", "db", "none"]
    pods = [_web(f"p{i}", f"n{rng.randrange(12)}", labels={"app": rng.choice(apps[:3])}) for i in range(40)]
    sched = scheduler(nodes, pods)
    snap = sched.snapshot
    pl = plugin(sched, "PodTopologySpread")
    incoming = {a: _web(f"in-{a}", constraints=SOFT, labels={"app": a}) for a in apps}
    caches = {"often": _MatchCountCache(retally=0.0), "never": _MatchCountCache(retally=float("inf"))}
    caches["default"] = _MatchCountCache()
    retallied = 0
    for step in range(60):
        if step % 4 == 3 and snap.node_infos[step % 12].pods:
            snap.evict(snap.node_infos[step % 12].pods[0])
        else:
            snap.bind(_web(f"b{step}", labels={"app": rng.choice(apps[:3])}), f"n{rng.randrange(12)}")
        for a in rng.sample(apps, 2):
            sel = pl.constraints_for(incoming[a], "ScheduleAnyway")[0][0].selector
            direct = [_count_matching(ni, "default", sel) for ni in snap.node_infos]
            for name, cache in caches.items():
                before = dict(cache._tables)
                counter = cache.counter(snap, "default", sel)
                if (
                    name == "often"
                    and before
                    and any(cache._tables[k] is not v for k, v in before.items() if k in cache._tables)
                ):
                    retallied += 1
                assert [counter(ni) for ni in snap.node_infos] == direct, (step, a, name)
                held = dict((ni.node.name, n) for ni, n in counter.held_counts(counter.holders()))
                assert held == {ni.node.name: n for ni, n in zip(snap.node_infos, direct) if n}, (step, a, name)
    assert retallied
    assert len(caches["never"]._tables) == len(caches["often"]._tables)


def test_node_inclusion_is_kept_per_node_object_for_pods_sharing_their_cache():
    """matchNodeInclusionPolicies' checks are kept in the pod's `_cache` per node object: pods
    sharing it (a template's replacements) reuse them, and a node object with the same name but
    other labels or taints (an edit) is checked on its own."""
    from kschedcli.plugins.podtopologyspread.common import Constraint
    from kschedcli.plugins.podtopologyspread.counting import _NodeEligibility

    def constraint(affinity, taints):
        c = Constraint.__new__(Constraint)
        c.node_affinity_policy, c.node_taints_policy = affinity, taints
        return c

    honour_all = constraint("Honor", "Honor")
    ignore_affinity = constraint("Ignore", "Honor")
    a = pod("a", spec={"nodeSelector": {"disk": "ssd"}})
    b = pod("b", spec={"nodeSelector": {"disk": "ssd"}})
    b._cache = a._cache  # as a sweep shares a template's
    ssd = node("n1", labels={"disk": "ssd"})
    hdd = node("n1", labels={"disk": "hdd"})  # the same node, edited
    tainted = node("n1", labels={"disk": "ssd"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    assert _NodeEligibility(a, ssd).includes(honour_all)
    assert _NodeEligibility(b, ssd).includes(honour_all)
    assert not _NodeEligibility(b, hdd).includes(honour_all)
    assert _NodeEligibility(a, hdd).includes(ignore_affinity)
    assert not _NodeEligibility(a, tainted).includes(honour_all)
    assert not _NodeEligibility(a, tainted).includes(ignore_affinity)
    assert _NodeEligibility(a, ssd).includes(honour_all)  # (still so)
    # a pod with its own cache and other fields is not answered from another's
    c = pod("c", spec={"nodeSelector": {"disk": "hdd"}})
    assert _NodeEligibility(c, hdd).includes(honour_all)
    assert not _NodeEligibility(c, ssd).includes(honour_all)


def test_domains_kept_per_key_follow_a_node_added_in_place():
    """PreFilter keeps which nodes have the constraints' keys, and their domains, while the
    snapshot's label columns stay the same: a node added in place (cluster-autoscaler's
    template node, Snapshot.add_node) opens its zone's domain in the next cycle."""
    s = scheduler([_node("a1", "a"), _node("b1", "b")], [_web("w1", "a1")])
    p = _web("new", constraints=HARD)
    assert _zone_counts(s, p) == {"a": 1, "b": 0}
    assert _zone_counts(s, p) == {"a": 1, "b": 0}  # (as kept)
    s.snapshot.add_node(_node("c1", "c"), [])
    assert _zone_counts(s, p) == {"a": 1, "b": 0, "c": 0}
    s.snapshot.add_node(node("nozone", labels={HOST: "nozone"}), [])  # no zone: no domain
    assert list(_zone_counts(s, p)) == ["a", "b", "c"]


def test_prefilter_counts_in_numpy_equal_the_holders_walked(monkeypatch):
    """PreFilter's domains and counts of a constraint whose nodes are not all eligible
    (matchNodeInclusionPolicies honouring the pod's node selector, affinity or tolerations; two
    constraints needing both keys), read as numpy arrays where numpy is loaded
    (_inclusion_array, _eligible_sums), equal the eligible holders walked one by one: on random
    clusters with nodes lacking a key, tainted nodes and binds between cycles, every count in its
    order and the critical paths."""
    import random

    import numpy

    rng = random.Random(3)
    zones = ["a", "b", "c"]
    nodes = []
    for i in range(24):
        labels = {ZONE: zones[i % 3], HOST: f"h{i}"}
        if rng.random() < 0.3:
            labels["disk"] = "ssd"
        if i in (4, 9):
            del labels[ZONE]
        if i == 11:
            del labels[HOST]
        taints = [{"key": "pool", "value": "gpu", "effect": "NoSchedule"}] if rng.random() < 0.25 else []
        nodes.append(node(f"n{i:02d}", labels=labels, taints=taints))
    apps = ["web", "api"]
    existing = [
        pod(f"e{j}", node_name=f"n{rng.randrange(24):02d}", labels={"app": rng.choice(apps)}) for j in range(50)
    ]
    sched = scheduler(nodes, existing)
    pl = plugin(sched, "PodTopologySpread")

    def incoming(k):
        app = rng.choice(apps)
        constraints = [
            {
                "maxSkew": rng.choice([1, 2]),
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": app}},
                **({"nodeAffinityPolicy": rng.choice(["Honor", "Ignore"])} if rng.random() < 0.6 else {}),
                **({"nodeTaintsPolicy": rng.choice(["Honor", "Ignore"])} if rng.random() < 0.6 else {}),
            }
            for key in rng.sample([ZONE, HOST], rng.choice([1, 2]))
        ]
        spec = {"topologySpreadConstraints": constraints}
        if rng.random() < 0.4:
            spec["nodeSelector"] = {"disk": "ssd"}
        elif rng.random() < 0.3:
            term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": rng.sample(zones, 2)}]}
            spec["affinity"] = {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
            }
        if rng.random() < 0.4:
            spec["tolerations"] = [{"key": "pool", "operator": "Exists"}]
        return pod(f"p{k}", labels={"app": app}, spec=spec)

    def prefilter(p, numpy_loaded):
        monkeypatch.setitem(sys.modules, "numpy", numpy if numpy_loaded else None)
        state = fresh_state()
        _, st = pl.pre_filter(state, p, sched.snapshot.list())
        monkeypatch.setitem(sys.modules, "numpy", numpy)
        assert st is None
        s = state.read(PRE_FILTER_KEY)
        return [list(c.items()) for c in s.counts], [(cp.values, cp.nums) for cp in s.critical_paths]

    walked = 0
    for k in range(80):
        p = incoming(k)
        want = prefilter(p, False)
        assert prefilter(p, True) == want, p.name
        walked += any(len(c) < 3 for c in want[0]) or any(len(c) < 22 for c in want[0] if c and len(c) > 3)
        if k % 3 == 0:
            sched.bind(p, f"n{rng.randrange(24):02d}")
    assert walked > 20  # (most pods have nodes left out)


def test_counts_kept_between_cycles_follow_their_selectors_pair_log():
    """The counts kept per selector (PodTopologySpread's tallies, InterPodAffinity's per-domain
    tallies) replay only the binds and evictions of pods carrying the selector's first key=value
    requirement (Snapshot.pair_log), the whole namespace's for a selector without one: at every
    step of random binds and evictions (in two namespaces, pods carrying one, both or neither of
    the labels read), never taken again, they equal the nodes' pods counted directly. The pair
    log holds exactly the pod_log's entries carrying its pair from the first time it was asked for."""
    import random

    from kschedcli.api.labels import parse_label_selector
    from kschedcli.plugins.interpodaffinity.index import _domain_tally
    from kschedcli.plugins.podtopologyspread.counting import _count_matching, _MatchCountCache

    rng = random.Random(9)
    nodes = [_node(f"n{i}", f"z{i % 3}") for i in range(10)]

    def labels():
        out = {}
        if rng.random() < 0.8:
            out["app"] = rng.choice(["web", "api", "db"])
        if rng.random() < 0.6:
            out["tier"] = rng.choice(["a", "b"])
        return out

    pods = [_web(f"p{i}", f"n{rng.randrange(10)}", labels=labels()) for i in range(30)]
    sched = scheduler(nodes, pods)
    snap = sched.snapshot
    selectors = [
        parse_label_selector(sel, "s")
        for sel in (
            {"matchLabels": {"app": "web"}},
            {"matchLabels": {"app": "web", "tier": "a"}},
            {"matchLabels": {"tier": "b"}, "matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]},
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]},
            {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        )
    ]
    assert [bool(s.equality_pairs()) for s in selectors] == [True, True, True, False, False]
    cache = _MatchCountCache(retally=float("inf"))
    followed = snap.pair_log("default", "app", "web")
    start = len(snap.pod_log.get("default", ()))
    for step in range(80):
        ns = "default" if rng.random() < 0.8 else "other"
        held = [p for ni in snap.node_infos for p in ni.pods if p.namespace == ns]
        if step % 3 == 2 and held:
            assert snap.evict(rng.choice(held))
        else:
            snap.bind(_web(f"b{step}", ns=ns, labels=labels()), f"n{rng.randrange(10)}")
        for sel in rng.sample(selectors, 3):
            direct = [_count_matching(ni, "default", sel) for ni in snap.node_infos]
            counter = cache.counter(snap, "default", sel)
            assert [counter(ni) for ni in snap.node_infos] == direct, (step, sel)
            zones: dict = {}
            for ni, n in zip(snap.node_infos, direct):
                if n:
                    zones[ni.node.labels[ZONE]] = zones.get(ni.node.labels[ZONE], 0) + n
            assert _domain_tally(snap, "default", sel, ZONE) == zones, (step, sel)
    carrying = [e for e in snap.pod_log["default"][start:] if e[0].labels.get("app") == "web"]
    assert followed == carrying and len(carrying) > 10
