"""Snapshot.derive: the snapshot of an edited cluster built from the unedited one's NodeInfos (only the
touched nodes again) gives exactly what a snapshot built from scratch gives, and never changes the
snapshot it was derived from."""

from __future__ import annotations

import copy
import json

import pytest
from builders import node, pod, scheduler

from kschedcli.framework.cycle_state import CycleState
from kschedcli.render.document import explain_doc
from kschedcli.scheduling.scheduler import Scheduler
from kschedcli.whatif.edits import Edit, apply_edits

BIG_IMAGE = [{"names": ["registry/app:1"], "sizeBytes": 900 * 1024 * 1024}]


def cluster_pods():
    web = {"app": "web"}
    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": web},
            }
        ]
    }
    return [
        pod("w1", requests={"cpu": "1"}, node_name="a1", labels=web, spec=spread),
        pod("w2", requests={"cpu": "1"}, node_name="a1", labels=web),
        pod("w3", requests={"cpu": "2"}, node_name="b1", labels=web),
        pod(
            "db",
            requests={"cpu": "1"},
            node_name="b2",
            labels={"app": "db"},
            spec={
                "affinity": {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
                        ]
                    }
                }
            },
        ),
        pod(
            "ds-a1",
            node_name="a1",
            requests={"cpu": "100m"},
            spec={"hostNetwork": True},
            containers=[{"name": "c", "image": "ds:1", "ports": [{"containerPort": 9100, "hostPort": 9100}]}],
        ),
    ]


def cluster_nodes():
    taint = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    return [
        node("a1", labels={"zone": "a", "pool": "p"}, images=BIG_IMAGE),
        node("a2", labels={"zone": "a", "pool": "p"}, unschedulable=True),
        node("b1", labels={"zone": "b", "pool": "p"}, images=BIG_IMAGE),
        node("b2", labels={"zone": "b", "pool": "q"}, taints=taint),
        node("c1", cpu="2", labels={"zone": "c", "pool": "q"}),
    ]


def incoming():
    return pod(
        "new",
        requests={"cpu": "1"},
        labels={"app": "web"},
        containers=[{"name": "c", "image": "registry/app:1", "resources": {"requests": {"cpu": "1"}}}],
        spec={
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ],
            "affinity": {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 50,
                            "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"},
                        }
                    ]
                }
            },
        },
    )


EDITS = {
    "add-node": [Edit("--add-node", "a1")],
    "add-nodes": [Edit("--add-node", "b1:2")],
    "remove-node": [Edit("--remove-node", "a1")],
    "cordon": [Edit("--cordon", "b1")],
    "uncordon": [Edit("--uncordon", "a2")],
    "remove-taint": [Edit("--taint", "b2:dedicated:NoSchedule-")],
    "add-taint": [Edit("--taint", "c1:k=v:NoSchedule")],
    "label": [Edit("--label", "c1:zone=a")],
    "evict": [Edit("--evict", "default/w3")],
    "several": [Edit("--evict", "default/w1"), Edit("--uncordon", "a2"), Edit("--add-node", "c1")],
}


def _doc(sched: Scheduler) -> str:
    return json.dumps(explain_doc(sched.schedule(incoming(), 0)), sort_keys=True)


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_derived_snapshot_explains_as_a_full_rebuild(kind):
    base = scheduler(cluster_nodes(), cluster_pods())
    # the session has bound a pod since it was built: that node is not shared (its pods differ)
    base.bind(pod("bound", requests={"cpu": "1"}, labels={"app": "web"}), "c1")
    base.schedule(incoming(), 0)  # caches warmed on the unedited snapshot
    before = [(ni.node.name, [p.key for p in ni.pods], dict(ni.image_states)) for ni in base.snapshot.list()]
    edited = copy.copy(base.cluster)
    edited.nodes, edited.pods = list(edited.nodes), list(edited.pods)
    apply_edits(edited, EDITS[kind])

    rebuilt = Scheduler(edited, base.config)
    derived = Scheduler(edited, base.config, base.snapshot.derive(edited.nodes, edited.pods))
    assert _doc(derived) == _doc(rebuilt)
    assert derived.snapshot.names == rebuilt.snapshot.names
    for d, r in zip(derived.snapshot.list(), rebuilt.snapshot.list()):
        assert (d.node.name, [p.key for p in d.pods], d.image_states, d.requested.milli_cpu, d.used_ports) == (
            r.node.name,
            [p.key for p in r.pods],
            r.image_states,
            r.requested.milli_cpu,
            r.used_ports,
        )
    after = [(ni.node.name, [p.key for p in ni.pods], dict(ni.image_states)) for ni in base.snapshot.list()]
    assert after == before


def test_derived_snapshot_shares_untouched_nodes_and_copies_them_before_a_bind():
    base = scheduler(cluster_nodes(), cluster_pods())
    edited = copy.copy(base.cluster)
    edited.nodes, edited.pods = list(edited.nodes), list(edited.pods)
    apply_edits(edited, [Edit("--uncordon", "a2")])
    snap = base.snapshot.derive(edited.nodes, edited.pods)
    shared = [d is b for d, b in zip(snap.list(), base.snapshot.list())]
    assert shared == [True, False, True, True, True]  # a2 changed; no image count moved

    a1_pods = list(base.snapshot.get("a1").pods)
    snap.bind(pod("x", requests={"cpu": "1"}), "a1")
    assert snap.get("a1") is not base.snapshot.get("a1")
    assert base.snapshot.get("a1").pods == a1_pods
    assert [p.name for p in snap.get("a1").pods] == [p.name for p in a1_pods] + ["x"]
    w3 = next(p for p in base.snapshot.get("b1").pods if p.name == "w3")
    assert snap.evict(w3)
    assert [p.name for p in base.snapshot.get("b1").pods] == ["w3"]
    assert snap.get("b1").pods == []


def test_an_added_node_with_an_image_copies_the_nodes_whose_image_count_moved():
    base = scheduler(cluster_nodes(), cluster_pods())
    edited = copy.copy(base.cluster)
    edited.nodes, edited.pods = list(edited.nodes), list(edited.pods)
    apply_edits(edited, [Edit("--add-node", "a1")])
    snap = base.snapshot.derive(edited.nodes, edited.pods)
    shared = [d is b for d, b in zip(snap.list(), base.snapshot.list())]
    assert shared == [False, True, False, True, True]
    assert snap.get("a1").image_states["registry/app:1"][1] == 3
    assert base.snapshot.get("a1").image_states["registry/app:1"][1] == 2


def _nodes_with_image_sizes():
    small = [{"names": ["registry/app:1", "registry/app@sha256:1"], "sizeBytes": 500 * 1024 * 1024}]
    other = [{"names": ["registry/other:2"], "sizeBytes": 300 * 1024 * 1024}]
    return [
        node("a1", labels={"zone": "a"}, images=BIG_IMAGE + other),
        node("a2", labels={"zone": "a"}, unschedulable=True, images=other),
        node("b1", labels={"zone": "b"}, images=small),
        node("b2", labels={"zone": "b"}, images=small + other),
        node("c1", cpu="2", labels={"zone": "c"}),
    ]


def _state(snap):
    return (
        snap.names,
        [(ni.node.name, [p.key for p in ni.pods], ni.image_states, ni.requested.milli_cpu) for ni in snap.list()],
        {ns: [p.key for p in pods] for ns, pods in snap._pods_by_namespace.items() if pods},
        [p.key for p in snap.unplaced_pods],
    )


@pytest.mark.parametrize("removed", [{"a1"}, {"b1"}, {"a1", "b2"}, {"c1"}, {"a1", "a2", "b1", "b2"}])
def test_without_nodes_is_the_snapshot_of_the_cluster_without_them(removed):
    """Snapshot.without_nodes (ksched sweep's scenario snapshot) equals a snapshot built from scratch
    of the cluster less those nodes and their pods: image sizes from the first node left listing
    a name, counts one fewer per removed holder; the base is never changed."""
    base = scheduler(_nodes_with_image_sizes(), cluster_pods())
    before = _state(base.snapshot)
    edited = copy.copy(base.cluster)
    edited.nodes = [n for n in base.cluster.nodes if n.name not in removed]
    edited.pods = [p for p in base.cluster.pods if p.node_name not in removed]
    rebuilt = Scheduler(edited, base.config)
    snap = base.snapshot.without_nodes(removed)
    assert _state(snap) == _state(rebuilt.snapshot)
    derived = Scheduler(edited, base.config, snap)
    assert _doc(derived) == _doc(rebuilt)
    # binds and evictions on the scenario's snapshot stay there
    derived.bind(pod("x", requests={"cpu": "1"}), snap.names[0])
    for ni in list(snap.list()):
        for p in list(ni.pods):
            snap.evict(p)
    assert _state(base.snapshot) == before
    if removed == {"a1"}:  # the first holder gone: the size is the next one's
        assert snap.get("b1").image_states["registry/app:1"] == (500 * 1024 * 1024, 2)


def test_a_node_added_in_place_filters_as_a_full_rebuild():
    """Snapshot.add_node (cluster-autoscaler's estimator adding a template node): after cycles
    that built the plugins' indexes, a node with a pod of required anti-affinity appended in place
    gives the filter verdicts of a scheduler built from scratch with that node."""
    anti = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "new"}}, "topologyKey": "zone"}
                ]
            }
        }
    }
    extra = node("d1", labels={"zone": "d", "pool": "p"}, images=BIG_IMAGE)
    guard = pod("guard", requests={"cpu": "100m"}, node_name="d1", labels={"app": "guard"}, spec=anti)
    grown = scheduler(cluster_nodes(), cluster_pods())
    grown.schedule(incoming(), 0)  # indexes and columns built over the five nodes
    before = len(grown.snapshot.node_infos)
    grown.snapshot.add_node(extra, [guard])
    assert len(grown.snapshot.node_infos) == before + 1
    full = scheduler([*cluster_nodes(), extra], [*cluster_pods(), copy.copy(guard)])

    def verdicts(sched):
        fw = sched.framework_for(incoming())
        p = pod("x", requests={"cpu": "1"}, labels={"app": "new"})
        state = CycleState()
        assert fw.run_pre_filter(state, p).status is None
        return {
            ni.node.name: (lambda st: None if st is None else st.reasons)(fw.run_filter_plugins(state, p, ni))
            for ni in sched.snapshot.node_infos
        }

    got, want = verdicts(grown), verdicts(full)
    assert got == want
    assert want["d1"] is not None  # the added pod's anti-affinity keeps the pod off zone d


def _columns(snap):
    """What plugins read off a snapshot besides its NodeInfos: the per-node columns, the label
    indexes, the existing pods' terms aggregate (by node name, not position)."""
    import numpy as np

    from kschedcli.plugins.interpodaffinity.index import existing_terms_for

    idx = existing_terms_for(snap)
    names = snap.names
    arrays = snap.free_arrays(np)
    return (
        [snap.label_column(k) for k in ("zone", "pool", "missing")],
        {
            name: snap.image_column(name)
            for name in ("registry/app:1", "registry/app@sha256:1", "registry/other:2", "none:1")
        },
        [list(c) for c in snap.free_columns()],
        None if arrays is None else [a.tolist() for a in arrays],
        snap.taint_groups()[0],
        # (a value whose pods were all evicted keeps an empty list where the index was built before)
        {
            (ns, k): {v: [p.key for p in held] for v, held in snap._key_index(ns, k).items() if held}
            for ns in ("default", "other")
            for k in ("app", "tier")
        },
        sorted(
            (
                e.kind,
                e.term.topology_key,
                sorted(idx.counts(e).items(), key=repr),
                [names[i] for i in sorted(idx.positions[e.owner])],
            )
            for e in idx.entries.values()
        ),
    )


@pytest.mark.parametrize("removed", [{"a1"}, {"b2"}, {"a1", "b2"}, {"c1"}, {"a1", "a2", "b1", "b2"}])
def test_without_nodes_columns_and_indexes_equal_a_rebuild(removed):
    """A without_nodes snapshot takes its columns, label indexes and the existing terms' aggregate
    from its parent's (less the removed nodes and pods); they equal a rebuilt snapshot's, before and
    after binds and evictions on it, whether they are first asked for before or after those."""
    anti = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
                ]
            }
        }
    }
    extra = [
        pod("db2", requests={"cpu": "1"}, node_name="c1", labels={"app": "db", "tier": "x"}, spec=anti),
        pod("o1", ns="other", node_name="a1", labels={"app": "web", "tier": "y"}),
        pod("o2", ns="other", node_name="b1", labels={"app": "web"}),
    ]
    base = scheduler(_nodes_with_image_sizes(), cluster_pods() + extra)
    _columns(base.snapshot)  # the parent's built first: the derived ones come from them
    edited = copy.copy(base.cluster)
    edited.nodes = [n for n in base.cluster.nodes if n.name not in removed]
    edited.pods = [p for p in base.cluster.pods if p.node_name not in removed]
    rebuilt = Scheduler(edited, base.config)
    late = base.snapshot.without_nodes(removed)  # asked for only after the changes below
    snap = base.snapshot.without_nodes(removed)
    assert _columns(snap) == _columns(rebuilt.snapshot)
    for s in (snap, late, rebuilt.snapshot):
        target = s.names[-1]
        s.bind(pod("x", requests={"cpu": "1"}, labels={"app": "web", "tier": "x"}), target)
        s.bind(pod("y", ns="other", labels={"app": "db"}, spec=anti), target)
        for ni in list(s.list())[:1]:
            for p in list(ni.pods)[:2]:
                s.evict(p)
    assert _columns(snap) == _columns(rebuilt.snapshot)
    assert _columns(late) == _columns(rebuilt.snapshot)
