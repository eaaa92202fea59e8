"""What the snapshot cache stores with a parsed cluster and how it is read back
(kschedcli/inputs/cache_pickle.py): pods and nodes restored slot for slot, bound pods' source objects
rebuilt when first read, the scheduler's snapshot built ahead and taken only for the very nodes
and pods it was built from (not after an edit or a release that changes a pod)."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import pytest
from builders import node, pod, pod_level_requests_pod

from kschedcli.api.model import Node, Pod
from kschedcli.backend.snapshot import PrebuiltSnapshot, Snapshot, latest_generation
from kschedcli.config.scheduler import default_config
from kschedcli.config.versions import RELEASES, choose
from kschedcli.inputs.cache_pickle import RawStore, defer_raws, dumps, loads
from kschedcli.inputs.cluster import Cluster, _with_prebuilt_snapshot, load_cluster
from kschedcli.plugins import REGISTRY
from kschedcli.scheduling.scheduler import Scheduler
from kschedcli.whatif.edits import Edit, apply_edits

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")


def _value(v):
    """A value to compare: objects with __slots__ (containers, tolerations, resources) by their slots."""
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _value(x) for k, x in v.items()}
    slots = getattr(type(v), "__slots__", None)
    if slots is not None and not isinstance(v, (str, int, float)):
        return type(v).__name__, {s: _value(getattr(v, s, "<unset>")) for s in slots}
    return v


def _same_fields(a, b) -> bool:
    return _value(a) == _value(b)


def test_pods_and_nodes_come_back_slot_for_slot():
    cluster = load_cluster([PROD])
    back = loads(dumps(cluster))
    assert len(back.pods) == len(cluster.pods) > 50
    assert all(_same_fields(a, b) for a, b in zip(cluster.pods, back.pods, strict=True))
    assert all(_same_fields(a, b) for a, b in zip(cluster.nodes, back.nodes, strict=True))
    assert [p.raw for p in back.pods] == [p.raw for p in cluster.pods]
    assert [p.requests.milli_cpu for p in back.pods] == [p.requests.milli_cpu for p in cluster.pods]
    # parts pods share in memory are shared when read back (one object, not one per pod)
    shared = [
        (i, j) for i, a in enumerate(cluster.pods) for j in range(i) if a.containers is cluster.pods[j].containers
    ]
    assert shared and all(back.pods[i].containers is back.pods[j].containers for i, j in shared)


def test_a_pod_with_a_slot_never_set_is_pickled_as_pickle_would():
    p = pod("p")
    del p.non0_mem
    back = loads(dumps(p))
    assert back.name == "p" and not hasattr(back, "non0_mem")


def test_bound_pods_source_objects_are_rebuilt_when_first_read():
    pods = [pod("a", node_name="n1", labels={"app": "x"}), pod("b", node_name="n1")]
    raws = [p.raw for p in pods]
    defer_raws(pods)
    assert all(type(p._raw) is tuple for p in pods)
    back = loads(dumps(pods))
    store = back[0]._raw[0]
    assert isinstance(store, RawStore) and store.raws is None  # nothing rebuilt by reading the entry
    assert back[1].raw == raws[1] and store.raws is not None  # the first read rebuilds them
    assert back[0].raw == raws[0] and back[0].raw is back[0].raw
    back[0].raw = {"kind": "Pod"}  # a pod's object can still be replaced
    assert back[0].raw == {"kind": "Pod"}
    # a store already rebuilt pickles what it holds
    again = loads(dumps(back))
    assert again[1].raw == raws[1]


def test_objects_marshal_cannot_write_are_left_in_place():
    p = pod("a", node_name="n1")
    p.raw = {"kind": "Pod", "odd": object()}
    defer_raws([p])
    assert type(p._raw) is dict


def _cluster(pods) -> Cluster:
    c = Cluster()
    c.nodes = [node("n1"), node("n2")]
    c.pods = pods
    return c


def test_the_prebuilt_snapshot_is_taken_once_for_the_same_objects_with_fresh_generations():
    c = _cluster([pod("a", node_name="n1", requests={"cpu": "1"}), pod("b", node_name="n2")])
    pre = PrebuiltSnapshot(c.nodes, c.pods)
    built = pre.snapshot
    before = latest_generation()
    snap = pre.take(c.nodes, c.pods)
    assert snap is built and snap.by_name["n1"].requested.milli_cpu == 1000
    assert all(ni.generation > before for ni in snap.node_infos) and snap.generation > before
    assert pre.take(c.nodes, c.pods) is None  # one scheduler binds into it: the next builds its own


def test_the_prebuilt_snapshot_is_not_taken_for_other_nodes_or_pods():
    c = _cluster([pod("a", node_name="n1")])
    assert PrebuiltSnapshot(c.nodes, c.pods).take(c.nodes, c.pods + [pod("b", node_name="n2")]) is None
    assert PrebuiltSnapshot(c.nodes, c.pods).take(c.nodes, [pod("a", node_name="n1")]) is None
    assert PrebuiltSnapshot(c.nodes, c.pods).take([node("n1"), c.nodes[1]], c.pods) is None


def _read_back(cluster: Cluster) -> Cluster:
    return loads(dumps(_with_prebuilt_snapshot(cluster)))


def _sums(snapshot: Snapshot) -> list:
    return [(ni.name, len(ni.pods), ni.requested.milli_cpu, ni.non0_mem, ni.image_states) for ni in snapshot.node_infos]


def test_a_scheduler_over_a_cluster_read_back_takes_its_snapshot_and_it_equals_a_fresh_one():
    cluster = _read_back(load_cluster([PROD]))
    cluster.follow(choose(None, cluster.nodes))
    assert cluster.prebuilt_snapshot is not None
    sched = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
    assert cluster.prebuilt_snapshot.snapshot is None  # taken
    assert _sums(sched.snapshot) == _sums(Snapshot(cluster.nodes, cluster.pods))
    other = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
    assert other.snapshot is not sched.snapshot


def test_after_an_edit_the_scheduler_builds_its_own_snapshot():
    cluster = _read_back(load_cluster([PROD]))
    cluster.follow(choose(None, cluster.nodes))
    victim = cluster.pods[0]
    apply_edits(cluster, [Edit("--evict", f"{victim.namespace}/{victim.name}")])
    sched = Scheduler(cluster, default_config(REGISTRY, cluster.version.release))
    assert cluster.prebuilt_snapshot.snapshot is not None  # not taken
    assert victim not in sched.snapshot.by_name[victim.node_name].pods


def test_a_release_that_changes_a_pod_drops_the_prebuilt_snapshot():
    cluster = _read_back(_cluster([pod_level_requests_pod()]))
    cluster.follow(choose("v1.34"))
    assert cluster.prebuilt_snapshot is not None
    cluster.follow(choose("v1.33"))  # no PodLevelResources: the pod asks for 100m, not 2
    assert cluster.prebuilt_snapshot is None
    sched = Scheduler(cluster, default_config(REGISTRY, RELEASES["v1.33"]))
    assert sched.snapshot.by_name["n1"].requested.milli_cpu == 100


def test_pickle_reads_an_entry_without_this_module_imported_first():
    # the restoring functions are found by name, as pickle finds any global
    data = dumps([pod("a"), node("n1")])
    assert b"cache_pickle" in data and b"restore_pod" in data
    unpickler = pickle.Unpickler(io.BytesIO(data))
    assert unpickler.load() is None  # no PodStore: the objects follow, pickled with the same memo
    a, n = unpickler.load()
    assert isinstance(a, Pod) and isinstance(n, Node) and a.name == "a" and n.name == "n1"


def test_nodes_source_objects_wait_too_and_the_release_is_chosen_without_them():
    raw = dict(node("n1").raw)
    raw["status"] = {**raw["status"], "nodeInfo": {"kubeletVersion": "v1.33.4"}}
    nodes = [Node(raw), node("n2")]
    assert [n.kubelet_version for n in nodes] == ["v1.33.4", ""]
    defer_raws(nodes)
    back = loads(dumps(nodes))
    store = back[0]._raw[0]
    assert choose(None, back).release is RELEASES["v1.33"]
    assert store.raws is None  # choosing read no node's object
    assert back[0].raw == raw and back[1].name == "n2"


class _Gadget:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return open, (self.path, "w")


def test_a_pickle_naming_any_other_global_is_refused_and_runs_nothing(tmp_path):
    from kschedcli.inputs.cache_pickle import Unpickler

    for gadget in (_Gadget(str(tmp_path / "made")), getattr, eval):
        with pytest.raises(pickle.UnpicklingError):
            loads(pickle.dumps(None) + pickle.dumps(gadget))
        with pytest.raises(pickle.UnpicklingError):
            Unpickler(io.BytesIO(pickle.dumps(gadget))).load()
    assert not (tmp_path / "made").exists()


def test_the_entries_of_the_fixtures_need_no_global_beyond_the_allowed_ones():
    # every fixture snapshot, as the cache stores it (indexes built ahead, pods in a PodStore), read
    # back by the restricted unpickler with every pod made and every source object rebuilt
    import glob

    import kschedcli.cli.app  # noqa: F401 - the plugins: what they build ahead is stored too

    root = Path(__file__).resolve().parents[2] / "fixtures"
    files = [root / "small-cluster.yaml", root / "prod-cluster.yaml"]
    files += sorted(Path(p) for p in glob.glob(str(root / "scenarios" / "**" / "*.yaml"), recursive=True))
    read = 0
    for f in files:
        try:
            cluster = load_cluster([str(f)])
        except Exception:  # noqa: BLE001 - not a cluster snapshot
            continue
        back = loads(dumps(_with_prebuilt_snapshot(cluster)))
        assert [p.key for p in back.pods] == [p.key for p in load_cluster([str(f)]).pods]
        assert all(isinstance(o.raw, dict) for o in [*back.pods, *back.nodes])
        read += 1
    assert read >= 2


def test_the_models_other_objects_come_back_slot_for_slot_through_their_restorers():
    from kschedcli.api.labels import LabelSelector, NodeSelector, NodeSelectorTerm, Requirement
    from kschedcli.api.model import Container, Taint, Toleration
    from kschedcli.api.resources import Resource
    from kschedcli.inputs import cache_pickle

    cluster = load_cluster([PROD])
    objs: dict[type, list] = {}

    def collect(o, depth=0):
        if depth > 6:
            return
        if type(o) in (Resource, Container, Taint, Toleration, Requirement, LabelSelector, NodeSelector):
            objs.setdefault(type(o), []).append(o)
        if type(o) in (list, tuple):
            for v in o:
                collect(v, depth + 1)
        elif type(o) is dict:
            for v in o.values():
                collect(v, depth + 1)
        elif hasattr(type(o), "__slots__") and type(o).__module__.startswith("kschedcli.api"):
            for s in type(o).__slots__:
                if s not in ("_raw", "_cache") and hasattr(o, s):
                    collect(getattr(o, s), depth + 1)

    collect([*cluster.pods, *cluster.nodes])
    assert {Resource, Container, Taint, Toleration} <= objs.keys()
    for cls, found in objs.items():
        assert cls in cache_pickle._DISPATCH  # a tuple of its slots, not pickle's dict of them
        back = loads(dumps(found))
        assert all(_same_fields(a, b) for a, b in zip(found, back, strict=True)), cls
    # a selector term (its requirements and their values), written by the restorers, reads back equal
    term = NodeSelectorTerm.__new__(NodeSelectorTerm)
    term.expressions, term.fields, term.raw, term.errors = [Requirement("k", "In", ["a"])], [], {"x": 1}, []
    selector = NodeSelector([term])
    assert _same_fields(loads(dumps(selector)), selector)
