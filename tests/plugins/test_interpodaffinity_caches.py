"""InterPodAffinity's kept answers (ExistingTermsIndex.entries_matching's per-labels answers, the
per-domain counts of the incoming pod's preferred terms when no explanation is asked for) against
a walk of every pod of every node: random clusters with terms of other namespaces, of every
namespace and of a namespaceSelector, asked again after binds, evictions and namespace labels
changed in place; explained and plain cycles alike."""

from __future__ import annotations

import random

import pytest
from builders import node, plugin, pod, scheduler

from kschedcli.framework.cycle_state import CycleState
from kschedcli.plugins.interpodaffinity.plugin import PRE_FILTER_KEY, PRE_SCORE_KEY
from kschedcli.plugins.interpodaffinity.terms import pod_terms

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
KEYS = [HOST, ZONE, "rack"]
APPS = ["web", "api", "db"]
NAMESPACES = ["default", "other", "blue"]


def _term(rng):
    t: dict = {"topologyKey": rng.choice(KEYS)}
    r = rng.random()
    if r < 0.7:
        t["labelSelector"] = {"matchLabels": {"app": rng.choice(APPS)}}
    elif r < 0.85:
        t["labelSelector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}
    else:
        t["labelSelector"] = {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["back"]}]}
    r = rng.random()
    if r < 0.15:
        t["namespaces"] = ["other", "blue"]
    elif r < 0.25:
        t["namespaceSelector"] = {}
    elif r < 0.4:
        t["namespaceSelector"] = {"matchLabels": {"team": "x"}}
    return t


def _affinity(rng):
    aff: dict = {}
    for section in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.5:
            continue
        s: dict = {}
        if rng.random() < 0.5:
            s["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(rng)]
        if rng.random() < 0.7:
            s["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng)} for _ in range(rng.randint(1, 2))
            ]
        if s:
            aff[section] = s
    return aff


class _World:
    def __init__(self, seed: int):
        rng = self.rng = random.Random(seed)
        nodes = []
        for i in range(rng.randint(4, 14)):
            labels = {HOST: f"n{i}", ZONE: rng.choice("abc")}
            if rng.random() < 0.6:
                labels["rack"] = f"r{rng.randrange(3)}"
            nodes.append(node(f"n{i}", labels=labels))
        self.names = [n.name for n in nodes]
        self.templates = [_affinity(rng) for _ in range(5)]
        self.count = 0
        existing = [self.make(rng.choice(self.names)) for _ in range(rng.randint(0, 40))]
        prof: dict = {"schedulerName": "default-scheduler"}
        if rng.random() < 0.3:
            prof["pluginConfig"] = [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": rng.choice([0, 5])}}]
        self.sched = scheduler(nodes, existing, profile=prof)
        ns_labels = self.sched.cluster.namespace_labels
        for ns in NAMESPACES:
            ns_labels[ns] = {"kubernetes.io/metadata.name": ns}
        ns_labels["blue"]["team"] = "x"
        self.pl = plugin(self.sched, "InterPodAffinity")

    def make(self, node_name: str = "", spec_chance: float = 0.6):
        rng = self.rng
        self.count += 1
        spec = {}
        if rng.random() < spec_chance:
            spec["affinity"] = rng.choice(self.templates) if rng.random() < 0.7 else _affinity(rng)
        labels = {"app": rng.choice(APPS)}
        if rng.random() < 0.3:
            labels["tier"] = rng.choice(["front", "back"])
        return pod(f"p{self.count}", ns=rng.choice(NAMESPACES), labels=labels, node_name=node_name, spec=spec)


def _reference(world: _World, p) -> tuple[dict, dict]:
    """Every node's every pod walked: the existing pods' required anti-affinity terms matching `p`
    per (topology key, value); the raw topology scores PreScore sums."""
    pl = world.pl
    all_ns = dict(world.sched.cluster.namespace_labels)
    all_ns.setdefault(p.namespace, {"kubernetes.io/metadata.name": p.namespace})
    ns_labels = all_ns[p.namespace]
    hard = pl.hard_pod_affinity_weight
    anti: dict = {}
    score: dict = {}
    own = pod_terms(p)
    incoming = [(t.with_namespaces_resolved(all_ns), t.weight) for t in own.preferred_affinity] + [
        (t.with_namespaces_resolved(all_ns), -t.weight) for t in own.preferred_anti_affinity
    ]
    for ni in world.sched.snapshot.list():
        labels = ni.node.labels
        for ep in ni.pods:
            et = pod_terms(ep)
            for t in et.required_anti_affinity:
                tv = labels.get(t.topology_key)
                if tv is not None and t.matches(p, ns_labels):
                    anti[(t.topology_key, tv)] = anti.get((t.topology_key, tv), 0) + 1
            weighted = [(t, hard) for t in et.required_affinity if hard > 0]
            weighted += [(t, t.weight) for t in et.preferred_affinity]
            weighted += [(t, -t.weight) for t in et.preferred_anti_affinity]
            for t, w in weighted:
                tv = labels.get(t.topology_key)
                if tv is not None and t.matches(p, ns_labels):
                    vals = score.setdefault(t.topology_key, {})
                    vals[tv] = vals.get(tv, 0) + w
            for t, w in incoming:
                tv = labels.get(t.topology_key)
                if tv is not None and t.matches(ep, None):
                    vals = score.setdefault(t.topology_key, {})
                    vals[tv] = vals.get(tv, 0) + w
    return anti, score


def _asked(world: _World, p, explained: bool) -> tuple[dict, dict]:
    pl = world.pl
    nodes = world.sched.snapshot.list()
    state = CycleState()
    state.explained = explained
    pl.pre_filter(state, p, nodes)
    pf = state.get(PRE_FILTER_KEY)
    st = pl.pre_score(state, p, nodes)
    assert st is None or st.is_skip()
    ps = state.get(PRE_SCORE_KEY)
    return (pf.existing_anti_counts if pf is not None else {}), (ps.topology_score if ps is not None else {})


@pytest.mark.parametrize("seed", range(30))
def test_prefilter_and_prescore_equal_a_walk_through_binds_evictions_and_namespace_labels(seed):
    world = _World(seed)
    rng = world.rng
    snap = world.sched.snapshot
    for step in range(8):
        # pods alike to existing ones (the same labels, asked again), and new ones
        incoming = [world.make(spec_chance=0.4) for _ in range(4)]
        for p in incoming + incoming[:2]:
            want = _reference(world, p)
            assert _asked(world, p, explained=False) == want, (seed, step, p.name)
            assert _asked(world, p, explained=True) == want, (seed, step, p.name)
        r = rng.random()
        if r < 0.5:
            for p in incoming[: rng.randint(1, 4)]:
                world.sched.bind(p, rng.choice(world.names))
        elif r < 0.8:
            placed = [q for ni in snap.list() for q in ni.pods]
            for q in rng.sample(placed, min(len(placed), rng.randint(1, 3))):
                assert snap.evict(q)
        else:
            # a namespace's labels changed in place: the terms selecting it by labels change
            labels = world.sched.cluster.namespace_labels[rng.choice(NAMESPACES)]
            if labels.pop("team", None) is None:
                labels["team"] = "x"


@pytest.mark.parametrize("seed", range(6))
def test_domain_tallies_follow_binds_evictions_and_added_nodes(seed):
    """matching_by_value's counts per domain, kept across calls: brought up to date by a replay of
    the namespace's binds and evictions (a few between calls), or counted afresh (hundreds), and
    a node added with its pods; always what counting the placed pods gives."""
    from kschedcli.backend.snapshot import Snapshot
    from kschedcli.plugins.interpodaffinity.index import matching_by_value

    rng = random.Random(seed)
    nodes = [node(f"n{i}", labels={ZONE: rng.choice("ab")} if i % 4 else {}) for i in range(8)]
    count = [0]

    def make(node_name=""):
        count[0] += 1
        labels = {"app": rng.choice(APPS)}
        if rng.random() < 0.5:
            labels["tier"] = rng.choice(["front", "back"])
        return pod(f"q{count[0]}", ns=rng.choice(["default", "other"]), labels=labels, node_name=node_name)

    snap = Snapshot(nodes, [make(rng.choice(nodes).name) for _ in range(30)])
    owner = pod("o", spec={"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}})
    terms = []
    for t in (
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE},
        {"labelSelector": {"matchLabels": {"app": "db", "tier": "back"}}, "topologyKey": HOST},
        {
            "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["back"]}]},
            "topologyKey": ZONE,
            "namespaces": ["default", "other"],
        },
    ):
        owner.pod_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [{"weight": 1, "podAffinityTerm": t}]
        owner._cache.clear()
        terms.append(pod_terms(owner).preferred_affinity[0])

    def check():
        for t in terms:
            want: dict = {}
            for ni in snap.node_infos:
                n = sum(1 for p in ni.pods if t.matches(p, None))
                if n:
                    tv = ni.node.labels.get(t.topology_key)
                    want[tv] = want.get(tv, 0) + n
            assert matching_by_value(snap, snap.node_infos, t, t.topology_key) == want

    check()
    for round_ in range(6):
        binds = rng.choice([1, 3, 400])
        for _ in range(binds):
            snap.bind(make(), rng.choice(snap.node_infos).node.name)
        placed = [p for ni in snap.node_infos for p in ni.pods]
        for p in rng.sample(placed, 3):
            assert snap.evict(p)
        if round_ == 3:
            snap.add_node(node("extra", labels={ZONE: "c"}), [make("extra") for _ in range(5)])
        check()


@pytest.mark.parametrize("seed", range(10))
def test_score_array_is_each_nodes_score_or_declines_past_the_bound(seed):
    """score_array (numpy present) against score node by node on random topology scores, some
    of them past 2**50 in magnitude summed over the keys (then None: the lists take over), some
    past int64; domains no node has, nodes without the key."""
    np = pytest.importorskip("numpy")
    from kschedcli.plugins.interpodaffinity.plugin import PreScoreState

    world = _World(seed)
    rng = world.rng
    pl = world.pl
    snap = world.sched.snapshot
    p = pod("x")
    for _ in range(40):
        big = rng.choice([10, 1000, 2**40, 2**49, 2**62, 10**30])
        table: dict = {}
        for key in rng.sample(KEYS, rng.randint(1, 3)):
            domains = [ni.node.labels.get(key) for ni in snap.list()] + ["nowhere"]
            table[key] = {v: rng.randint(-big, big) for v in rng.sample(domains, rng.randint(1, 4)) if v is not None}
            if not table[key]:
                del table[key]
        if not table:
            continue
        state = CycleState()
        s = PreScoreState(p, {})
        s.topology_score = table
        state.write(PRE_SCORE_KEY, s)
        positions = sorted(rng.sample(range(len(snap.names)), rng.randint(1, len(snap.names))))
        state.score_positions = positions
        state.score_positions_array = (positions, np.array(positions, dtype=np.intp))
        got = pl.score_array(state, p, [snap.node_infos[i] for i in positions])
        bound = 0
        declines = False
        for values in table.values():
            bound += max(map(abs, values.values()))
            declines = declines or bound >= 2**50
        if declines:
            assert got is None
        else:
            assert got.tolist() == [pl.score(state, p, snap.node_infos[i])[0] for i in positions]


@pytest.mark.parametrize("seed", range(30))
def test_filter_array_is_each_nodes_filter(seed):
    """filter_array (numpy present) against filter node by node, for pods with required
    affinity and anti-affinity terms of their own (the first pod of a series among them) and
    pods that existing pods' anti-affinity keeps away, through binds and evictions."""
    np = pytest.importorskip("numpy")

    world = _World(100 + seed)
    rng = world.rng
    pl = world.pl
    snap = world.sched.snapshot
    checked = 0
    for _ in range(6):
        incoming = [world.make(spec_chance=0.9) for _ in range(6)]
        app = rng.choice(APPS)
        # affinity to pods like itself: none may exist yet (the first pod of a series)
        self_affine = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": app, "tier": "solo"}}, "topologyKey": ZONE}
                ]
            }
        }
        incoming.append(pod(f"s{world.count}", labels={"app": app, "tier": "solo"}, spec={"affinity": self_affine}))
        for p in incoming:
            state = CycleState()
            state.explained = False
            _, st = pl.pre_filter(state, p, snap.list())
            if st is not None:
                continue  # skipped, or unresolvable: filter is not asked
            got = pl.filter_array(state, p, np)
            want = [pl.filter(state, p, ni) is None for ni in snap.list()]
            assert got.tolist() == want, (seed, p.name)
            checked += 1
        for p in incoming[:2]:
            world.sched.bind(p, rng.choice(world.names))
        placed = [q for ni in snap.list() for q in ni.pods]
        if placed and rng.random() < 0.5:
            assert snap.evict(rng.choice(placed))
    assert checked
