"""Bound pods read from the snapshot cache are made when first read (kschedcli/inputs/lazy_pods.py): a
cluster read back holds none until something reads them, every list that holds a pod holds the
same object, and cycles, edits and releases over it give what they give over the parsed cluster."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import node, pod, pod_level_requests_pod
from test_snapshot_pickle import _value

from kschedcli.api.model import Pod
from kschedcli.backend.snapshot import NodeInfo, PrebuiltSnapshot, Snapshot
from kschedcli.config.scheduler import default_config
from kschedcli.config.versions import RELEASES, choose
from kschedcli.inputs.cache_pickle import dumps, loads
from kschedcli.inputs.cluster import Cluster, _with_prebuilt_snapshot, load_cluster, parse_pending_pods
from kschedcli.inputs.lazy_pods import ImageStates, LazyNodeInfo, PodGroups, PodStore, defer_image_states, store_pods
from kschedcli.loader import iter_objects
from kschedcli.plugins import REGISTRY
from kschedcli.plugins.interpodaffinity.index import ExistingTermsIndex, existing_terms_for
from kschedcli.plugins.interpodaffinity.terms import pod_terms
from kschedcli.render.document import result_doc
from kschedcli.scheduling.scheduler import Scheduler
from kschedcli.whatif.edits import Edit, apply_edits

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
POD_FILES = sorted((ROOT / "fixtures" / "pods").glob("*.yaml"))


_TERM = {
    "labelSelector": {"matchLabels": {"app": "web"}},
    "namespaces": ["shop"],
    "topologyKey": "kubernetes.io/hostname",
}
_ZONE = {
    "labelSelector": {"matchLabels": {"app": "cart"}},
    "namespaces": ["shop"],
    "topologyKey": "topology.kubernetes.io/zone",
}
# shared by the pods of each parity, as the loader shares a template's parts between its replicas
_AFFINITY = [
    {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": _ZONE}]}},
    {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": _ZONE}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]},
    },
]


def _bound_with_affinity(i: int, node_name: str) -> Pod:
    raw = {
        "kind": "Pod",
        "metadata": {"name": f"guard-{i}", "namespace": "default", "labels": {"app": "guard"}},
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "c", "image": "guard", "resources": {"requests": {"cpu": "10m"}}}],
            "affinity": _AFFINITY[i % 2],
        },
    }
    return Pod(raw)


def _prod() -> Cluster:
    """The prod fixture with bound pods carrying (anti-)affinity on its first nodes."""
    cluster = load_cluster([PROD])
    cluster.pods += [_bound_with_affinity(i, cluster.nodes[i % 3].name) for i in range(6)]
    return cluster


def _read_back(cluster: Cluster) -> Cluster:
    return loads(dumps(_with_prebuilt_snapshot(cluster)))


def _made(cluster: Cluster) -> int:
    return sum(p is not None for p in cluster._pod_store.made)


def _slots(p: Pod) -> dict:
    return {s: _value(getattr(p, s)) for s in Pod.__slots__ if s not in ("_raw", "_cache", "_key")}


def _pending(cluster: Cluster) -> list[Pod]:
    out = []
    for f in POD_FILES:
        out += parse_pending_pods(list(iter_objects(str(f), as_kubectl=True)), str(f), cluster)
    return out


def _results(cluster: Cluster, version: str | None = None) -> list[dict]:
    cluster.follow(choose(version, cluster.nodes))
    sched = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
    return [result_doc(sched.schedule(p)) for p in _pending(cluster)]


def test_a_cluster_read_back_makes_no_pod_until_one_is_read():
    cluster = _read_back(_prod())
    assert cluster._pods is None and isinstance(cluster._pod_store, PodStore)
    assert cluster.bound_pod_count() > 50 and _made(cluster) == 0
    pre = cluster.prebuilt_snapshot.snapshot
    assert all(type(ni) is LazyNodeInfo for ni in pre.node_infos)
    first = next(ni for ni in pre.node_infos if ni.pods)
    assert _made(cluster) == len(first.pods) < cluster.bound_pod_count()  # only that node's pods


def test_the_pods_read_back_equal_the_parsed_ones_and_every_list_holds_the_same_objects():
    parsed = _prod()
    cluster = _read_back(_prod())
    cluster.follow(choose(None, cluster.nodes))
    snap = Scheduler(cluster, default_config(REGISTRY, cluster.version.release)).snapshot
    # the snapshot's lists first (node by node, namespace by namespace), then the cluster's
    by_node = {ni.name: list(ni.pods) for ni in snap.node_infos}
    affinity = {ni.name: list(ni.pods_with_affinity) for ni in snap.node_infos}
    anti = {ni.name: list(ni.pods_with_required_anti_affinity) for ni in snap.node_infos}
    namespaces = {p.namespace for p in parsed.pods}
    by_ns = {ns: list(snap._pods_by_namespace.get(ns)) for ns in namespaces}
    pods = cluster.pods
    assert [p.key for p in pods] == [p.key for p in parsed.pods]
    assert all(_slots(a) == _slots(b) for a, b in zip(pods, parsed.pods, strict=True))
    assert [p.raw for p in pods] == [p.raw for p in parsed.pods]
    assert len({id(p) for p in pods}) == len(pods)
    for ni in snap.node_infos:
        on_node = [p for p in pods if p.node_name == ni.name]
        assert all(a is b for a, b in zip(by_node[ni.name], on_node, strict=True))
        assert [p for p in on_node if p.has_affinity()] == affinity[ni.name]
        assert [p for p in on_node if p.has_required_anti_affinity()] == anti[ni.name]
        assert type(ni) is NodeInfo  # all three lists made: a plain NodeInfo again
    assert any(affinity.values()) and any(anti.values())
    for ns, lst in by_ns.items():
        assert all(a is b for a, b in zip(lst, [p for p in pods if p.namespace == ns], strict=True))
    # parts pods shared when parsed are shared when made (one object, not one per pod)
    shared = [(i, j) for i, a in enumerate(parsed.pods) for j in range(i) if a.containers is parsed.pods[j].containers]
    assert shared and all(pods[i].containers is pods[j].containers for i, j in shared)


@pytest.mark.parametrize("version", [None, "v1.33", "v1.35"])
def test_cycles_over_a_cluster_read_back_give_what_they_give_over_the_parsed_one(version):
    expected = _results(_prod(), version)
    cluster = _read_back(_prod())
    assert _results(cluster, version) == expected
    assert len(expected) >= len(POD_FILES)


def test_a_cycle_makes_only_the_pods_it_reads():
    cluster = _read_back(_prod())
    cluster.follow(choose(None, cluster.nodes))
    sched = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
    sched.schedule(_pending(cluster)[0])
    assert cluster._pods is None  # the cluster's list was not needed
    assert 0 < _made(cluster) < cluster.bound_pod_count()


def test_edits_over_a_cluster_read_back_give_what_they_give_over_the_parsed_one():
    def edited(cluster: Cluster) -> list[dict]:
        victim = sorted(cluster.pods, key=lambda p: p.key)[3]
        apply_edits(cluster, [Edit("--evict", victim.key), Edit("--cordon", cluster.nodes[0].name)])
        return _results(cluster)

    assert edited(_read_back(_prod())) == edited(_prod())


def test_binds_and_evictions_on_nodes_whose_pods_were_never_read():
    cluster = _read_back(_prod())
    cluster.follow(choose(None, cluster.nodes))
    snap = Scheduler(cluster, default_config(REGISTRY, cluster.version.release)).snapshot
    ni = max(snap.node_infos, key=lambda n: n.pod_count())
    assert type(ni) is LazyNodeInfo
    n_before = ni.pod_count()
    assert type(ni) is LazyNodeInfo  # counted without making its pods
    new = pod("newcomer", node_name="")
    snap.bind(new, ni.name)
    assert len(snap.by_name[ni.name].pods) == n_before + 1 and snap.by_name[ni.name].pods[-1] is new
    old = snap.by_name[ni.name].pods[0]
    assert snap.evict(old) and old not in snap.by_name[ni.name].pods
    assert old is next(p for p in cluster.pods if p.key == old.key)  # the cluster's object too


def test_a_release_that_changes_a_stored_pod_changes_the_same_object_and_drops_the_prebuilt_snapshot():
    c = Cluster()
    c.nodes = [node("n1"), node("n2")]
    c.pods = [pod("a", node_name="n2"), pod_level_requests_pod(), pod("b", node_name="n1")]
    cluster = _read_back(c)
    cluster.follow(choose("v1.33"))  # no PodLevelResources: the pod asks for 100m, not 2
    assert cluster.prebuilt_snapshot is None and _made(cluster) == 1  # only that pod was made
    assert [p.name for p in cluster.pods] == ["a", "p", "b"]
    sched = Scheduler(cluster, default_config(REGISTRY, RELEASES["v1.33"]))
    assert sched.snapshot.by_name["n1"].requested.milli_cpu == 100
    assert sched.snapshot.by_name["n1"].pods[0] is cluster.pods[1]


def test_a_stored_pod_referenced_elsewhere_in_the_entry_stays_one_object():
    c = Cluster()
    c.nodes = [node("n1")]
    c.pods = [pod("a", node_name="n1"), pod("b", node_name="n1")]
    c.objects["Extra"][("", "x")] = {"pod": c.pods[1]}
    cluster = _read_back(c)
    assert cluster.objects["Extra"][("", "x")]["pod"] is cluster.pods[1]


def test_pods_bound_to_a_node_the_snapshot_lacks_are_kept_and_made_when_taken():
    c = Cluster()
    c.nodes = [node("n1")]
    c.pods = [pod("a", node_name="gone"), pod("b", node_name="n1")]
    cluster = _read_back(c)
    cluster.follow(choose(None, cluster.nodes))
    snap = Scheduler(cluster, default_config(REGISTRY, cluster.version.release)).snapshot
    assert [p.name for p in snap.unplaced_pods] == ["a"] and snap.unplaced_pods[0] is cluster.pods[0]


def test_pod_groups_make_a_namespace_once_and_read_like_a_dict():
    pods = [pod("a", ns="x", node_name="n1"), pod("b", ns="y", node_name="n1")]
    store = PodStore.of(pods, [0, 1], None)
    back = loads(dumps(PodGroups.of({"x": [pods[0]], "y": [pods[1]]}, store, {id(p): i for i, p in enumerate(pods)})))
    got = back.get("x")
    assert [p.name for p in got] == ["a"] and back.get("x") is got and back["x"] is got
    assert back.get("z") is None and back.get("z", ()) == ()
    assert back.setdefault("z", []) == [] and "z" in back
    assert [p.name for p in back.setdefault("y", [])] == ["b"]
    assert {k: [p.name for p in v] for k, v in back.items()} == {"x": ["a"], "y": ["b"], "z": []}


def _terms_view(idx: ExistingTermsIndex) -> tuple:
    """An index's entries and holders by value, in order."""
    entries = [(e.kind, e.term.describe(), idx.counts(e)) for e in idx.entries.values()]
    holders = [
        ([t.describe() for t in et.required_anti_affinity], sorted(held.items())) for et, held in idx.positions.items()
    ]
    return entries, holders


def test_the_existing_terms_index_is_stored_and_taken_up_equal_to_one_built_afresh():
    cluster = _read_back(_prod())
    cluster.follow(choose(None, cluster.nodes))
    (stored,) = cluster.prebuilt_snapshot.indexes
    sched = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
    idx = existing_terms_for(sched.snapshot)
    assert idx is stored and idx.entries
    fresh = ExistingTermsIndex(sched.snapshot)
    fresh.refresh()
    assert _terms_view(idx) == _terms_view(fresh)
    assert all(key == (e.kind, id(e.term)) for key, e in idx.entries.items())  # this process's ids
    guard = next(p for p in cluster.pods if p.name == "guard-1")
    assert pod_terms(guard) in idx.positions  # the pod's terms are the index's objects


def test_a_cycle_after_the_read_makes_no_pod_only_the_stored_index_refers_to():
    cluster = _read_back(_prod())
    cluster.follow(choose(None, cluster.nodes))
    sched = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
    web = next(p for p in _pending(cluster) if p.labels.get("app") == "web")

    def guards_made() -> list[str]:
        return sorted(p.name for p in cluster._pod_store.made if p is not None and p.name.startswith("guard-"))

    assert sched.schedule(web, with_details=False).schedulable
    assert guards_made() == []
    r = sched.schedule(web)  # the explanation names the pods whose anti-affinity matched: their nodes' are made
    assert "anti-affinity" in str(result_doc(r)["filters"])
    made = {p.key for p in cluster._pod_store.made if p is not None}
    assert guards_made() == [f"guard-{i}" for i in range(6)]
    holders = {cluster.nodes[i].name for i in range(3)}
    assert made == {p.key for p in cluster.pods if p.node_name in holders or p.namespace == web.namespace}


def test_a_sequence_over_a_cluster_read_back_binds_as_over_the_parsed_one():
    def sequence(cluster: Cluster) -> list[dict]:
        cluster.follow(choose(None, cluster.nodes))
        sched = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
        return [result_doc(r) for r in sched.run_sequence(_pending(cluster) * 3)]

    assert sequence(_read_back(_prod())) == sequence(_prod())


def test_making_many_pods_pauses_the_collector_and_keeps_them_out_of_its_passes():
    import gc

    pods = [pod(f"p{i}", node_name="n1") for i in range(2500)]
    store = loads(dumps(PodStore.of(pods, list(range(len(pods))), None)))
    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    few = store.take(range(10))
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # a few pods: left to the collector
    made = store.all()
    assert gc.isenabled() and gc.get_freeze_count() > frozen + 2500
    assert made[:10] == few and [p.name for p in made] == [p.name for p in pods]


_STATES = NodeInfo.__dict__["image_states"]  # the slot, under LazyNodeInfo's property


def _image_names(cluster: Cluster) -> list[str]:
    return sorted({name for n in cluster.nodes for names, _ in n.images for name in names})


def test_the_nodes_image_states_are_held_once_and_each_nodes_made_when_first_read():
    parsed = _prod()
    fresh = Snapshot(parsed.nodes, parsed.pods)
    cluster = _read_back(_prod())
    pre = cluster.prebuilt_snapshot.snapshot
    held = {id(_STATES.__get__(ni)) for ni in pre.node_infos}
    assert len(held) == 1 and type(_STATES.__get__(pre.node_infos[0])) is ImageStates
    names = _image_names(parsed)
    assert len(names) >= 3 and any(None in fresh.image_column(name) for name in names)  # some nodes lack some
    # the image columns (what ImageLocality reads) come from the one table: no node's map is made
    assert [pre.image_column(name) for name in names] == [fresh.image_column(name) for name in names]
    assert all(type(_STATES.__get__(ni)) is ImageStates for ni in pre.node_infos)
    # a node's own pod count without its pods made
    assert [ni.pod_count() for ni in pre.node_infos] == [len(ni.pods) for ni in fresh.node_infos]
    assert _made(cluster) == 0
    for ni, want in zip(pre.node_infos, fresh.node_infos, strict=True):
        states = ni.image_states
        assert states == want.image_states and list(states) == list(want.image_states)
        assert _STATES.__get__(ni) is states  # made once
    # making a node's pods (a plain NodeInfo again) makes its map first
    other = _read_back(_prod()).prebuilt_snapshot.snapshot
    ni = next(ni for ni in other.node_infos if ni.node.images)
    assert len(ni.pods) >= 0 and type(ni) is NodeInfo
    assert ni.image_states == fresh.by_name[ni.name].image_states


def test_a_cycle_over_the_held_image_states_scores_images_as_over_the_parsed_cluster():
    def scored(cluster: Cluster) -> list[dict]:
        cluster.follow(choose(None, cluster.nodes))
        sched = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
        image = cluster.nodes[0].images[0][0][0]
        p = pod("imaged", containers=[{"name": "c", "image": image, "resources": {"requests": {"cpu": "10m"}}}])
        return [result_doc(sched.schedule(p))]

    expected = scored(_prod())
    assert "ImageLocality" in str(expected)
    assert scored(_read_back(_prod())) == expected


def test_image_states_that_are_not_what_the_images_give_stay_a_map_per_node():
    cluster = _prod()
    prebuilt = PrebuiltSnapshot(cluster.nodes, cluster.pods)
    snap = prebuilt.snapshot
    # two pairs for one name (as a node added in place has: its count is not recounted on the others)
    ni = next(ni for ni in snap.node_infos if ni.node.images)
    name = next(iter(ni.image_states))
    ni.image_states = {**ni.image_states, name: (ni.image_states[name][0], ni.image_states[name][1] + 1)}
    store = store_pods(prebuilt, cluster.pods)
    assert store is not None
    cluster.prebuilt_snapshot, cluster._pod_store, cluster._pods = prebuilt, store, None
    assert all(type(n) is LazyNodeInfo and type(_STATES.__get__(n)) is dict for n in snap.node_infos)
    assert "_image_state_of" not in snap.__dict__
    assert not defer_image_states(snap)
    # read back, the maps are as stored
    back = loads(dumps(cluster)).prebuilt_snapshot.snapshot
    assert [n.image_states for n in back.node_infos] == [n.image_states for n in snap.node_infos]


def test_a_node_added_to_a_snapshot_read_back_counts_images_as_over_the_parsed_one():
    def added(cluster: Cluster) -> list:
        pre = cluster.prebuilt_snapshot
        snap = pre.snapshot if pre is not None else Snapshot(cluster.nodes, cluster.pods)
        names = _image_names(cluster)
        template = cluster.nodes[0]
        extra = node("added-1", images=[{"names": list(template.images[0][0]), "sizeBytes": template.images[0][1]}])
        snap.add_node(extra, [])
        snap.__dict__.pop("_holders", None)
        return [snap.image_column(name) for name in names] + [snap.by_name["added-1"].image_states]

    assert added(_read_back(_prod())) == added(_prod())


def test_equal_allocatable_amounts_are_one_object_read_back_with_the_parsed_values():
    parsed = _prod()
    cluster = _read_back(_prod())
    amounts = [n.allocatable.as_dict() | {"pods": n.allocatable.allowed_pods} for n in cluster.nodes]
    assert amounts == [n.allocatable.as_dict() | {"pods": n.allocatable.allowed_pods} for n in parsed.nodes]
    distinct = {id(n.allocatable) for n in cluster.nodes}
    assert len(distinct) == len({str(a) for a in amounts}) < len(cluster.nodes)


@pytest.mark.parametrize("read_back", [False, True])
def test_image_holders_of_a_derived_snapshot_are_its_image_columns_held_entries(read_back):
    """Snapshot.image_holders (ImageLocality's score array in a sweep scenario) against
    image_column, on snapshots derived by without_nodes from a parsed cluster's snapshot and from
    one read back (one pair per name, `_image_state_of`): removed nodes listing some images (their
    counts change), others not, none; the nodes holding each name and the states they hold."""
    import numpy as np

    cluster = _read_back(_prod()) if read_back else _prod()
    parent = cluster.prebuilt_snapshot.snapshot if read_back else Scheduler(cluster, default_config(REGISTRY)).snapshot
    assert ("_image_state_of" in parent.__dict__) is read_back
    names = _image_names(_prod())
    holding = [ni.name for ni in parent.node_infos if ni.node.images]
    bare = [ni.name for ni in parent.node_infos if not ni.node.images]
    for removed in ({holding[0]}, {holding[-1], *bare[:1]}, set(bare[:2]), set()):
        derived = parent.without_nodes(removed)
        for name in [*names, "not/listed:anywhere"]:
            column = derived.image_column(name)
            at, states = derived.image_holders(name, np)
            assert at.tolist() == [i for i, st in enumerate(column) if st is not None], (removed, name)
            assert states == [st for st in column if st is not None], (removed, name)
    assert parent.image_holders(names[0], np) is None  # (not derived: image_column)
