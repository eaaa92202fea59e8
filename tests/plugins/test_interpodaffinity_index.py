"""InterPodAffinity's index of the existing pods' terms (interpodaffinity_index.ExistingTermsIndex)
must hold what walking every pod of every node gives: per distinct term, its carriers' count per
topology value and the nodes holding them. Built in bulk (the first build), kept up to date
through binds and evictions (with and without counts worked out), and carried over to a derived
snapshot. Seeded random clusters, small enough to be quick."""

from __future__ import annotations

import copy
import random

import pytest
from builders import node, pod

from kschedcli.backend.snapshot import Snapshot
from kschedcli.plugins.interpodaffinity.index import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    existing_terms_for,
    index_for,
)
from kschedcli.plugins.interpodaffinity.terms import pod_terms

ZONES = ["a", "b", "c"]
APPS = ["web", "api", "db", "cache"]
KEYS = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack"]


def _term(rng):
    t = {"topologyKey": rng.choice(KEYS), "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}}}
    if rng.random() < 0.2:
        t["namespaces"] = ["default", "other"]
    return t


def _term_any_namespace(rng):
    """A term of another namespace, of every namespace ({}), or of those a selector picks; some
    select pods by expressions or select every pod."""
    t = _term(rng)
    r = rng.random()
    if r < 0.15:
        t["labelSelector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}
    elif r < 0.25:
        t["labelSelector"] = {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["back"]}]}
    elif r < 0.3:
        t["labelSelector"] = {}
    elif r < 0.35:
        t["labelSelector"] = {"matchLabels": {"app": "web", "tier": "back"}}
    t["namespaces"] = ["other"]
    r = rng.random()
    if r < 0.3:
        t["namespaceSelector"] = {}
    elif r < 0.6:
        t["namespaceSelector"] = {"matchLabels": {"team": "x"}}
    return t


def _affinity(rng):
    """A random podAffinity / podAntiAffinity section with required and preferred terms."""
    aff: dict = {}
    for section in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.5:
            continue
        s: dict = {}
        if rng.random() < 0.6:
            s["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(rng) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.6:
            s["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng)} for _ in range(rng.randint(1, 2))
            ]
        if s:
            aff[section] = s
    return aff


def _nodes(rng, n):
    out = []
    for i in range(n):
        labels = {"topology.kubernetes.io/zone": rng.choice(ZONES)}
        if rng.random() < 0.7:  # some nodes lack the rack key
            labels["rack"] = f"r{rng.randrange(3)}"
        out.append(node(f"n{i}", labels=labels))
    return out


class _Pods:
    """Random bound pods; replicas of one template share their affinity objects (as the snapshot
    loader shares equal parts), others carry equal copies."""

    def __init__(self, rng):
        self.rng = rng
        self.templates = [_affinity(rng) for _ in range(6)]
        self.count = 0

    def make(self, node_name):
        rng = self.rng
        self.count += 1
        spec = {}
        r = rng.random()
        if r < 0.6:
            aff = rng.choice(self.templates)
            spec["affinity"] = aff if rng.random() < 0.8 else copy.deepcopy(aff)
        elif r < 0.7:
            spec["affinity"] = _affinity(rng)
        ns = "other" if rng.random() < 0.2 else "default"
        return pod(f"p{self.count}", ns=ns, node_name=node_name, labels={"app": rng.choice(APPS)}, spec=spec)


_KINDS = (
    ("required_affinity", REQUIRED_AFFINITY),
    ("preferred_affinity", PREFERRED_AFFINITY),
    ("preferred_anti_affinity", PREFERRED_ANTI_AFFINITY),
    ("required_anti_affinity", REQUIRED_ANTI_AFFINITY),
)


def _walked(snapshot):
    """Every pod of every node, walked: (kind, id(term)) -> ({topology value: carriers}, node positions)."""
    out: dict = {}
    for i, ni in enumerate(snapshot.node_infos):
        for p in ni.pods:
            et = pod_terms(p)
            for attr, kind in _KINDS:
                for t in getattr(et, attr):
                    counts, held = out.setdefault((kind, id(t)), ({}, set()))
                    tv = ni.node.labels.get(t.topology_key)
                    counts[tv] = counts.get(tv, 0) + 1
                    held.add(i)
    return out


def _check(snapshot, work_out=None):
    """The index against the walk; `work_out(entries)`: the entries whose counts to ask for."""
    idx = existing_terms_for(snapshot)
    want = _walked(snapshot)
    assert set(idx.entries) == set(want)
    keys = list(idx.entries) if work_out is None else work_out(list(idx.entries))
    for key in keys:
        e = idx.entries[key]
        assert e.kind == key[0] and id(e.term) == key[1]
        assert idx.counts(e) == want[key][0], key
        assert [snapshot.node_infos.index(ni) for ni in idx.holders([key])] == sorted(want[key][1])
    _check_entries_in(idx)
    return idx


def _check_entries_in(idx):
    """entries_in(namespace), kept from the earlier checks while no entry came or went: every
    entry whose term matches a pod of the namespace, in the entries' order."""
    order = list(idx.entries)
    for ns in ("default", "other", "elsewhere"):
        got = [key for key, _ in idx.entries_in(ns)]
        assert got == [k for k in order if k in set(got)]
        for app in APPS:
            probe = pod("probe", ns=ns, labels={"app": app})
            for ns_labels in ({}, {"team": "x"}):
                matching = {k for k, e in idx.entries.items() if e.term.matches(probe, ns_labels)}
                assert matching <= set(got), (ns, app)
        # entries_matching: exactly those of entries_in that match the pod, in their order (terms
        # requiring app=X found through the pod's labels, the others each asked)
        for labels in [{"app": a} for a in APPS] + [{}, {"tier": "front"}, {"app": "web", "tier": "back"}]:
            probe = pod("probe", ns=ns, labels=labels)
            for ns_labels in ({}, {"team": "x"}):
                want = [k for k, e in idx.entries_in(ns) if e.term.matches(probe, ns_labels)]
                assert [k for k, _ in idx.entries_matching(probe, ns_labels)] == want, (ns, labels)


@pytest.mark.parametrize("seed", range(40))
def test_index_follows_binds_and_evictions(seed):
    rng = random.Random(seed)
    nodes = _nodes(rng, rng.randint(3, 12))
    maker = _Pods(rng)
    pods = [maker.make(rng.choice(nodes).name) for _ in range(rng.randint(0, 40))]
    snap = Snapshot(nodes, pods)
    # the first build, every count asked for or half of them (the others stay to work out)
    half = (lambda keys: keys) if seed % 2 else (lambda keys: rng.sample(keys, len(keys) // 2))
    _check(snap, half)
    for _ in range(rng.randint(1, 4)):
        for _ in range(rng.randint(1, 5)):
            target = rng.choice(nodes).name
            p = maker.make("")
            snap.bind(p, target)
        placed = [p for ni in snap.node_infos for p in ni.pods]
        for p in rng.sample(placed, min(len(placed), rng.randint(0, 3))):
            assert snap.evict(p)
        _check(snap, half)
    _check(snap)


@pytest.mark.parametrize("seed", range(20))
def test_index_carried_to_a_derived_snapshot(seed):
    rng = random.Random(1000 + seed)
    nodes = _nodes(rng, rng.randint(3, 10))
    maker = _Pods(rng)
    pods = [maker.make(rng.choice(nodes).name) for _ in range(rng.randint(5, 40))]
    snap = Snapshot(nodes, pods)
    _check(snap, lambda keys: keys[: len(keys) // 2])
    # an edit: one node's labels changed, pods removed and added, a node added
    edited = list(nodes)
    k = rng.randrange(len(edited))
    edited[k] = node(edited[k].name, labels={"topology.kubernetes.io/zone": "z", "rack": "r9"})
    edited.append(node("extra", labels={"topology.kubernetes.io/zone": "a"}))
    kept = [p for p in pods if rng.random() < 0.8]
    kept += [maker.make(rng.choice(edited).name) for _ in range(rng.randint(0, 5))]
    derived = snap.derive(edited, kept)
    _check(derived)
    _check(snap)  # the first snapshot's index is its own


@pytest.mark.parametrize("seed", range(20))
def test_index_carried_to_a_snapshot_less_some_nodes(seed):
    """Snapshot.without_nodes (scale-down's removal trials, sweep's scenarios): the removed nodes'
    contributions taken back, later positions shifted down; a chain of such snapshots, each bound
    to before the next is made from it, as scale-down does when a removal succeeds."""
    rng = random.Random(2000 + seed)
    nodes = _nodes(rng, rng.randint(4, 12))
    maker = _Pods(rng)
    pods = [maker.make(rng.choice(nodes).name) for _ in range(rng.randint(5, 40))]
    snap = Snapshot(nodes, pods)
    _check(snap, lambda keys: keys[: len(keys) // 2])
    index_for(snap)
    for _ in range(rng.randint(1, 3)):
        names = [ni.node.name for ni in snap.node_infos]
        if len(names) < 2:
            break
        gone = set(rng.sample(names, rng.randint(1, min(2, len(names) - 1))))
        derived = snap.without_nodes(gone, images=bool(seed % 2))
        assert existing_terms_for(snap).seeded(derived) is not None  # carried over, not built again
        _check(derived, lambda keys: keys[::2])
        _labels_match(derived)
        for _ in range(rng.randint(0, 4)):
            derived.bind(maker.make(""), rng.choice(derived.node_infos).node.name)
        _check(derived)
        _labels_match(derived)
        snap = derived


def _labels_match(snapshot):
    """The pod-label index against the snapshot's pods: (label, value) -> the positions holding one."""
    idx = index_for(snapshot)
    want: dict = {}
    for i, ni in enumerate(snapshot.node_infos):
        for p in ni.pods:
            for kv in p.labels.items():
                want.setdefault(kv, set()).add(i)
    assert idx.index == want


def test_bulk_build_adds_to_terms_held_elsewhere():
    """Binding a pod with a term already carried on another node, onto a node that had no pod
    with affinity (built in bulk), keeps the other node among the term's holders."""
    aff = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}
            ]
        }
    }
    nodes = [node("n0"), node("n1"), node("n2")]
    first = pod("a", node_name="n0", labels={"app": "web"}, spec={"affinity": aff})
    snap = Snapshot(nodes, [first])
    idx = existing_terms_for(snap)
    (key,) = idx.entries
    assert idx.counts(idx.entries[key]) == {"n0": 1}
    snap.bind(pod("b", labels={"app": "web"}, spec={"affinity": aff}), "n2")
    idx = existing_terms_for(snap)
    assert [ni.node.name for ni in idx.holders([key])] == ["n0", "n2"]
    assert idx.counts(idx.entries[key]) == {"n0": 1, "n2": 1}
    assert snap.evict(first)
    idx = existing_terms_for(snap)
    assert [ni.node.name for ni in idx.holders([key])] == ["n2"]
    assert idx.counts(idx.entries[key]) == {"n2": 1}


def test_index_state_pickles():
    """The snapshot cache may store an index with its snapshot: its marks come back as themselves."""
    import pickle

    from kschedcli.plugins.interpodaffinity import index as ix

    rng = random.Random(7)
    nodes = _nodes(rng, 6)
    maker = _Pods(rng)
    snap = Snapshot(nodes, [maker.make(rng.choice(nodes).name) for _ in range(30)])
    idx = existing_terms_for(snap)
    contribs = pickle.loads(pickle.dumps(idx.contribs))
    assert ix._IN_POSITIONS in idx.contribs
    assert [c is ix._IN_POSITIONS for c in contribs] == [c is ix._IN_POSITIONS for c in idx.contribs]


@pytest.mark.parametrize("seed", range(20))
def test_entries_by_namespace_follow_binds_and_evictions(seed):
    """The entries a namespace's pods may match (entries_in), with terms naming other namespaces,
    every namespace, or a namespaceSelector: after every bind and eviction they hold every entry
    that matches such a pod (an entry coming or going empties what was kept)."""
    rng = random.Random(500 + seed)
    nodes = _nodes(rng, rng.randint(3, 10))
    count = [0]

    def make(node_name):
        count[0] += 1
        section = rng.choice(["podAffinity", "podAntiAffinity"])
        kind = rng.choice(["requiredDuringSchedulingIgnoredDuringExecution", "preferred"])
        t = _term_any_namespace(rng) if rng.random() < 0.5 else _term(rng)
        terms = [t] if kind.startswith("required") else [{"weight": 5, "podAffinityTerm": t}]
        key = kind if kind.startswith("required") else "preferredDuringSchedulingIgnoredDuringExecution"
        spec = {"affinity": {section: {key: terms}}} if rng.random() < 0.7 else {}
        ns = rng.choice(["default", "other"])
        return pod(f"q{count[0]}", ns=ns, node_name=node_name, labels={"app": rng.choice(APPS)}, spec=spec)

    snap = Snapshot(nodes, [make(rng.choice(nodes).name) for _ in range(rng.randint(0, 15))])
    _check(snap)
    for _ in range(6):
        snap.bind(make(""), rng.choice(nodes).name)
        _check(snap)
        placed = [p for ni in snap.node_infos for p in ni.pods]
        if placed and rng.random() < 0.5:
            assert snap.evict(rng.choice(placed))
            _check(snap)


def test_a_node_carrying_a_terms_alone_keeps_its_entries_when_it_changes():
    """A bind to the only node carrying a PodTerms adds what changed: the PodTerms' entries stay
    (in their place) and the namespaces' lists kept by entries_in are not worked out again."""
    aff = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(random.Random(1))]}}
    nodes = [
        node("n0", labels={"topology.kubernetes.io/zone": "a"}),
        node("n1", labels={"topology.kubernetes.io/zone": "b"}),
    ]
    snap = Snapshot(nodes, [pod("solo", node_name="n0", labels={"app": "web"}, spec={"affinity": aff})])
    idx = _check(snap)
    keys = list(idx.entries)
    kept = idx.entries_in("default")
    snap.bind(pod("plain", labels={"app": "web"}), "n0")
    snap.bind(pod("twin", labels={"app": "web"}, spec={"affinity": copy.deepcopy(aff)}), "n0")
    idx = _check(snap)
    assert list(idx.entries)[: len(keys)] == keys
    assert idx.entries_in("default") is kept
    assert len(kept) == len(idx.entries)


def _bulk_groups_hold_positions(idx):
    """Every position added in bulk: the groups read back for it are what `positions` holds there."""
    from kschedcli.plugins.interpodaffinity import index as ix

    for i, c in enumerate(idx.contribs):
        if c is ix._IN_POSITIONS:
            assert idx._groups_at(i) == {et: held[i] for et, held in idx.positions.items() if i in held}, i


@pytest.mark.parametrize("single_reads", [0, 2, 96])
@pytest.mark.parametrize("seed", range(20))
def test_groups_read_back_for_bulk_positions_follow_later_bulk_additions(seed, single_reads, monkeypatch):
    """_groups_at reads the first positions' groups one by one (`_SINGLE_READS` of them), then
    every bulk position's in one pass, and keeps them: binds onto nodes that had no pod with
    affinity (added in bulk again, while the kept groups exist), onto bulk nodes (read back) and
    evictions leave what a walk gives, and the kept groups right."""
    from kschedcli.plugins.interpodaffinity import index as ix

    monkeypatch.setattr(ix, "_SINGLE_READS", single_reads)
    rng = random.Random(3000 + seed)
    nodes = _nodes(rng, rng.randint(4, 12))
    maker = _Pods(rng)
    snap = Snapshot(nodes, [maker.make(rng.choice(nodes[: len(nodes) // 2]).name) for _ in range(rng.randint(5, 30))])
    idx = _check(snap)
    for _ in range(rng.randint(3, 8)):
        r = rng.random()
        if r < 0.7:
            snap.bind(maker.make(""), rng.choice(nodes).name)
        else:
            placed = [p for ni in snap.node_infos for p in ni.pods]
            if placed:
                assert snap.evict(rng.choice(placed))
        idx = _check(snap)
        _bulk_groups_hold_positions(idx)


def test_a_node_whose_pods_with_affinity_are_swapped_is_read_again():
    """A node read again only when its pods with affinity differ: one evicted and another with
    other terms bound in its place between two refreshes (as many as before) is seen; a pod
    without terms bound changes nothing."""
    rng = random.Random(5)
    aff = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(rng)]}}
    other = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(rng)]}}
    nodes = [node("n0", labels={"topology.kubernetes.io/zone": "a"}), node("n1")]
    first = pod("a", node_name="n0", labels={"app": "web"}, spec={"affinity": aff})
    snap = Snapshot(nodes, [first])
    _check(snap)
    snap.bind(pod("b", labels={"app": "web"}, spec={"affinity": copy.deepcopy(aff)}), "n0")
    _check(snap)
    snap.bind(pod("plain", labels={"app": "web"}), "n0")
    _check(snap)
    assert snap.evict(first)
    snap.bind(pod("c", labels={"app": "db"}, spec={"affinity": other}), "n0")
    idx = _check(snap)
    assert len(idx.entries) == 2
