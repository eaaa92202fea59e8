"""VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone on small hand-built clusters."""

import gc
import weakref

import pytest
from builders import fresh_state, node, pod

from kschedcli.api.model import meta_of
from kschedcli.config.scheduler import SchedulerConfig, build_profile
from kschedcli.framework.status import ERROR, SKIP, UNRESOLVABLE, UNSCHEDULABLE
from kschedcli.inputs.cluster import Cluster
from kschedcli.plugins import REGISTRY
from kschedcli.scheduling.scheduler import Scheduler

BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
RWOP = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)


def sched(nodes, pods=(), objects=()):
    cluster = Cluster()
    cluster.nodes = list(nodes)
    cluster.pods = list(pods)
    for o in objects:
        ns, name = meta_of(o)
        if o["kind"] == "PersistentVolumeClaim" and not ns:
            ns = "default"
        cluster.objects[o["kind"]][(ns, name)] = o
    prof = build_profile({"schedulerName": "default-scheduler"}, "test", REGISTRY)
    return Scheduler(cluster, SchedulerConfig(profiles=[prof]))


def sc(name, mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner", topologies=None, default=False):
    o = {"kind": "StorageClass", "metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}
    if topologies is not None:
        o["allowedTopologies"] = topologies
    if default:
        o["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return o


def pvc(
    name,
    ns="default",
    size="10Gi",
    cls="local",
    modes=("ReadWriteOnce",),
    volume=None,
    annotations=None,
    no_class=False,
):
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if not no_class:
        spec["storageClassName"] = cls
    ann = dict(annotations or {})
    if volume:
        spec["volumeName"] = volume
        ann.setdefault("pv.kubernetes.io/bind-completed", "yes")
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "annotations": ann},
        "spec": spec,
        "status": {"phase": "Bound" if volume else "Pending"},
    }


def pv(
    name,
    size="10Gi",
    cls="local",
    hosts=None,
    zones=None,
    claim=None,
    phase="Available",
    modes=("ReadWriteOnce",),
    labels=None,
    source=None,
):
    spec = {"accessModes": list(modes), "capacity": {"storage": size}, "storageClassName": cls}
    spec.update(source or {"local": {"path": "/mnt/" + name}})
    if hosts:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": list(hosts)}]}
                ]
            }
        }
    if zones:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)}
                        ]
                    }
                ]
            }
        }
    if claim:
        ns, cname = claim.split("/")
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": cname, "uid": f"uid-{cname}"}
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {"phase": "Bound" if claim and phase == "Available" else phase},
    }


def claim_pod(name, *claims, node_name=None, ns="default", priority=None, extra_volumes=()):
    vols = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    return pod(name, ns=ns, node_name=node_name, priority=priority, spec={"volumes": vols + list(extra_volumes)})


def run(s, plugin_name, p, node_name, state=None):
    pl = s.frameworks["default-scheduler"].plugins[plugin_name]
    state = state or fresh_state()
    _, st = pl.pre_filter(state, p, s.snapshot.list())
    if st is not None and st.code != "Success":
        return "prefilter", st
    return "filter", pl.filter(state, p, s.snapshot.get(node_name))


def zone_node(name, zone, region="r1", extra=None):
    return node(
        name, labels={"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": region, **(extra or {})}
    )


# -- VolumeRestrictions -------------------------------------------------------------------------------


def test_restrictions_missing_claim_is_unresolvable_with_apiserver_text():
    s = sched([node("n1")])
    where, st = run(s, "VolumeRestrictions", claim_pod("p", "data-db-1"), "n1")
    assert where == "prefilter"
    assert (st.code, st.reasons) == (UNRESOLVABLE, ['persistentvolumeclaim "data-db-1" not found'])


def test_restrictions_read_write_once_pod_in_use_and_preemption_bookkeeping():
    claim = pvc("ledger", modes=("ReadWriteOncePod",), volume="pv1")
    user = claim_pod("user", "ledger", node_name="n1")
    s = sched([node("n1"), node("n2")], [user], [claim, pv("pv1", claim="default/ledger")])
    pl = s.frameworks["default-scheduler"].plugins["VolumeRestrictions"]
    state = fresh_state()
    p = claim_pod("p", "ledger")
    _, st = pl.pre_filter(state, p, s.snapshot.list())
    assert st is None
    for n in ("n1", "n2"):  # in use anywhere: every node is rejected
        f = pl.filter(state, p, s.snapshot.get(n))
        assert (f.code, f.reasons) == (UNSCHEDULABLE, [RWOP])
    # preemption's what-if removal of the user frees the claim
    assert pl.remove_pod(state, p, user, s.snapshot.get("n1")) is None
    assert pl.filter(state, p, s.snapshot.get("n1")) is None
    pl.add_pod(state, p, user, s.snapshot.get("n1"))
    assert pl.filter(state, p, s.snapshot.get("n2")).reasons == [RWOP]


def test_restrictions_unused_rwop_claim_and_plain_claims_skip():
    s = sched([node("n1")], [], [pvc("solo", modes=("ReadWriteOncePod",)), pvc("plain")])
    assert run(s, "VolumeRestrictions", claim_pod("p", "solo"), "n1")[1].code == SKIP
    assert run(s, "VolumeRestrictions", claim_pod("q", "plain"), "n1")[1].code == SKIP


def test_restrictions_inline_disk_conflicts():
    gce_rw = {"name": "d", "gcePersistentDisk": {"pdName": "disk-1"}}
    gce_ro = {"name": "d", "gcePersistentDisk": {"pdName": "disk-1", "readOnly": True}}
    ebs = {"name": "e", "awsElasticBlockStore": {"volumeID": "vol-1"}}
    rbd_a = {"name": "r", "rbd": {"monitors": ["m1", "m2"], "image": "img"}}
    rbd_b = {"name": "r", "rbd": {"monitors": ["m2"], "pool": "rbd", "image": "img"}}
    existing = [
        pod("ro", node_name="n1", spec={"volumes": [gce_ro]}),
        pod("e", node_name="n2", spec={"volumes": [ebs]}),
        pod("r", node_name="n3", spec={"volumes": [rbd_a]}),
    ]
    s = sched([node("n1"), node("n2"), node("n3")], existing)

    def verdict(vol, n):
        where, st = run(s, "VolumeRestrictions", pod("p", spec={"volumes": [vol]}), n)
        assert where == "filter"
        return None if st is None else (st.code, st.reasons)

    conflict = (UNSCHEDULABLE, ["node(s) had no available disk"])
    assert verdict(gce_ro, "n1") is None  # read-only everywhere is fine
    assert verdict(gce_rw, "n1") == conflict
    assert verdict(ebs, "n2") == conflict  # EBS conflicts even read-only
    assert verdict(ebs, "n1") is None
    assert verdict(rbd_b, "n3") == conflict  # overlapping monitor, same (defaulted) pool and image


# -- NodeVolumeLimits ---------------------------------------------------------------------------------


def _csinode(name, count, driver="ebs.csi.aws.com", annotations=None):
    return {
        "kind": "CSINode",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {"drivers": [{"name": driver, "nodeID": name, "allocatable": {"count": count}}]},
    }


def _csi_pv(name, handle, claim):
    return pv(name, cls="gp3", claim=claim, source={"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": handle}})


def test_csi_limits_count_attached_volumes_per_driver():
    objs = [sc("gp3", provisioner="ebs.csi.aws.com"), _csinode("n1", 2), _csinode("n2", 3)]
    existing = []
    for i in range(2):
        objs += [pvc(f"c{i}", cls="gp3", volume=f"pv{i}"), _csi_pv(f"pv{i}", f"vol-{i}", f"default/c{i}")]
        existing.append(claim_pod(f"e{i}", f"c{i}", node_name="n1"))
    objs.append(pvc("new", cls="gp3"))  # unbound: counted through its class's provisioner
    s = sched([node("n1"), node("n2")], existing, objs)
    p = claim_pod("p", "new")
    st = run(s, "NodeVolumeLimits", p, "n1")[1]
    assert (st.code, st.reasons) == (UNSCHEDULABLE, ["node(s) exceed max volume count"])
    assert run(s, "NodeVolumeLimits", p, "n2")[1] is None
    # a volume already attached on the node does not count twice
    assert run(s, "NodeVolumeLimits", claim_pod("q", "c0"), "n1")[1] is None


def test_csi_limits_volume_attachments_and_nodes_without_csinode():
    objs = [
        sc("gp3", provisioner="ebs.csi.aws.com"),
        _csinode("n1", 1),
        pvc("new", cls="gp3"),
        _csi_pv("pv-attached", "vol-a", "other/x"),
        {
            "kind": "VolumeAttachment",
            "metadata": {"name": "va"},
            "spec": {
                "attacher": "ebs.csi.aws.com",
                "nodeName": "n1",
                "source": {"persistentVolumeName": "pv-attached"},
            },
        },
    ]
    s = sched([node("n1"), node("n2")], [], objs)
    p = claim_pod("p", "new")
    assert run(s, "NodeVolumeLimits", p, "n1")[1].reasons == ["node(s) exceed max volume count"]
    assert run(s, "NodeVolumeLimits", p, "n2")[1] is None  # no CSINode: no limit
    # a VolumeAttachment of a volume the node's pods use counts once: with a limit of 2, a pod
    # using it and its attachment leave room for one new volume, not none
    objs[1] = _csinode("n1", 2)
    objs += [pvc("x", ns="other", cls="gp3", volume="pv-attached")]
    s = sched([node("n1")], [claim_pod("user", "x", ns="other", node_name="n1")], objs)
    assert run(s, "NodeVolumeLimits", p, "n1")[1] is None


def test_csi_limits_inline_in_tree_volume_migrates_to_its_driver():
    ebs = {"name": "e", "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-9"}}
    attached = {"name": "x", "awsElasticBlockStore": {"volumeID": "vol-1"}}
    existing = [pod("e1", node_name="n1", spec={"volumes": [attached]})]
    s = sched([node("n1")], existing, [_csinode("n1", 1)])
    p = pod("p", spec={"volumes": [ebs]})
    assert run(s, "NodeVolumeLimits", p, "n1")[1].reasons == ["node(s) exceed max volume count"]
    same = pod("q", spec={"volumes": [{"name": "y", "awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}]})
    assert run(s, "NodeVolumeLimits", same, "n1")[1] is None  # same EBS volume id after translation
    assert run(s, "NodeVolumeLimits", pod("r"), "n1")[1].code == SKIP


# -- VolumeZone ----------------------------------------------------------------------------------------


def test_volume_zone_labels_beta_and_multi_zone():
    objs = [
        sc("std", mode="Immediate", provisioner="pd.csi.storage.gke.io"),
        pvc("a", cls="std", volume="pv-a"),
        pv("pv-a", cls="std", claim="default/a", labels={"topology.kubernetes.io/zone": "z1__z2"}),
        pvc("b", cls="std", volume="pv-b"),
        pv("pv-b", cls="std", claim="default/b", labels={"failure-domain.beta.kubernetes.io/zone": "z3"}),
    ]
    s = sched([zone_node("n1", "z1"), zone_node("n2", "z3"), node("bare")], [], objs)
    conflict = (UNRESOLVABLE, ["node(s) had no available volume zone"])
    st = run(s, "VolumeZone", claim_pod("p", "a"), "n1")[1]
    assert st is None
    st = run(s, "VolumeZone", claim_pod("p", "a"), "n2")[1]
    assert (st.code, st.reasons) == conflict
    # a beta PV label is matched against the node's GA label
    assert run(s, "VolumeZone", claim_pod("q", "b"), "n2")[1] is None
    assert run(s, "VolumeZone", claim_pod("q", "b"), "bare")[1] is None  # a node without topology labels fits


def test_volume_zone_unbound_claims():
    objs = [
        sc("wffc", provisioner="x"),
        sc("now", mode="Immediate", provisioner="x"),
        pvc("later", cls="wffc"),
        pvc("imm", cls="now"),
    ]
    s = sched([zone_node("n1", "z1")], [], objs)
    assert run(s, "VolumeZone", claim_pod("p", "later"), "n1")[1].code == SKIP
    where, st = run(s, "VolumeZone", claim_pod("p", "imm"), "n1")
    assert (where, st.code, st.reasons) == ("prefilter", UNRESOLVABLE, ["PersistentVolume had no name"])


# -- VolumeBinding -----------------------------------------------------------------------------------


def test_binding_bound_pv_node_affinity_and_missing_pv():
    objs = [
        sc("local"),
        pvc("data", volume="pv1"),
        pv("pv1", hosts=["n2"], claim="default/data"),
        pvc("ghost", volume="gone"),
    ]
    s = sched([node("n1"), node("n2")], [], objs)
    st = run(s, "VolumeBinding", claim_pod("p", "data"), "n1")[1]
    assert (st.code, st.reasons) == (UNRESOLVABLE, [NODE_CONFLICT])
    assert run(s, "VolumeBinding", claim_pod("p", "data"), "n2")[1] is None
    st = run(s, "VolumeBinding", claim_pod("q", "ghost"), "n2")[1]
    assert st.reasons == ["node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"]


def test_binding_prefilter_statuses():
    objs = [
        sc("now", mode="Immediate", provisioner="x"),
        pvc("imm", cls="now"),
        {**pvc("lost", volume="pvx"), "status": {"phase": "Lost"}},
    ]
    s = sched([node("n1")], [], objs)
    assert run(s, "VolumeBinding", claim_pod("p"), "n1")[1].code == SKIP
    st = run(s, "VolumeBinding", claim_pod("p", "imm"), "n1")[1]
    assert (st.code, st.reasons) == (UNRESOLVABLE, ["pod has unbound immediate PersistentVolumeClaims"])
    st = run(s, "VolumeBinding", claim_pod("p", "nope"), "n1")[1]
    assert st.reasons == ['persistentvolumeclaim "nope" not found']
    st = run(s, "VolumeBinding", claim_pod("p", "lost"), "n1")[1]
    assert st.reasons == ['persistentvolumeclaim "lost" bound to non-existent persistentvolume "pvx"']


def test_binding_wait_for_first_consumer_static_pvs():
    objs = [
        sc("local"),
        pvc("scratch", size="100Gi"),
        pv("small", size="10Gi", hosts=["n1"]),  # too small
        pv("ro", size="500Gi", hosts=["n2"], modes=("ReadOnlyMany",)),  # wrong access mode
        pv("hdd", size="500Gi", cls="hdd", hosts=["n3"]),  # wrong class
        pv("big", size="200Gi", hosts=["n4", "n5"]),
        pv("bigger", size="300Gi", hosts=["n5"]),
    ]
    s = sched([node(f"n{i}") for i in range(1, 6)], [], objs)
    p = claim_pod("p", "scratch")
    for n in ("n1", "n2", "n3"):
        st = run(s, "VolumeBinding", p, n)[1]
        assert (st.code, st.reasons) == (UNRESOLVABLE, [BIND_CONFLICT])
    pl = s.frameworks["default-scheduler"].plugins["VolumeBinding"]
    state = fresh_state()
    pl.pre_filter(state, p, s.snapshot.list())
    assert pl.filter(state, p, s.snapshot.get("n5")) is None
    chosen = state.read("VolumeBinding").by_node["n5"].static_bindings
    assert [(v.name, c.name) for v, c in chosen] == [("big", "scratch")]  # the smallest that fits


def test_binding_prebound_pv_decides_alone():
    objs = [
        sc("local"),
        pvc("c"),
        pv("mine", hosts=["n2"], claim="default/c", phase="Available"),
        pv("free", hosts=["n1", "n2"]),
    ]
    objs[2]["status"]["phase"] = "Available"
    s = sched([node("n1"), node("n2")], [], objs)
    p = claim_pod("p", "c")
    assert run(s, "VolumeBinding", p, "n1")[1].reasons == [BIND_CONFLICT]
    assert run(s, "VolumeBinding", p, "n2")[1] is None


def test_binding_dynamic_provisioning_allowed_topologies_and_capacity():
    topo = [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["za"]}]}]
    objs = [
        sc("ssd", provisioner="pd.csi.storage.gke.io", topologies=topo),
        pvc("d", cls="ssd", size="30Gi"),
        sc("capped", provisioner="cap.csi"),
        pvc("e", cls="capped", size="30Gi"),
        {"kind": "CSIDriver", "metadata": {"name": "cap.csi"}, "spec": {"storageCapacity": True}},
        {
            "kind": "CSIStorageCapacity",
            "metadata": {"name": "c1", "namespace": "kube-system"},
            "storageClassName": "capped",
            "capacity": "20Gi",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "za"}},
        },
        {
            "kind": "CSIStorageCapacity",
            "metadata": {"name": "c2", "namespace": "kube-system"},
            "storageClassName": "capped",
            "capacity": "1Ti",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "zb"}},
        },
    ]
    s = sched([zone_node("a", "za"), zone_node("b", "zb")], [], objs)
    assert run(s, "VolumeBinding", claim_pod("p", "d"), "a")[1] is None
    assert run(s, "VolumeBinding", claim_pod("p", "d"), "b")[1].reasons == [BIND_CONFLICT]
    st = run(s, "VolumeBinding", claim_pod("q", "e"), "a")[1]
    assert (st.code, st.reasons) == (UNRESOLVABLE, ["node(s) did not have enough free storage"])
    assert run(s, "VolumeBinding", claim_pod("q", "e"), "b")[1] is None


def test_binding_default_storage_class_for_claims_without_class():
    objs = [sc("std", provisioner="x.csi", default=True), pvc("c", no_class=True)]
    s = sched([node("n1")], [], objs)
    # with the admission default the claim is WaitForFirstConsumer and provisionable, not "unbound immediate"
    assert run(s, "VolumeBinding", claim_pod("p", "c"), "n1")[1] is None


def test_binding_sequence_assumes_static_bindings():
    objs = [sc("local"), pvc("a"), pvc("b"), pv("only", hosts=["n1", "n2"])]
    s = sched([node("n1"), node("n2")], [], objs)
    first, second = claim_pod("p1", "a"), claim_pod("p2", "b")
    r1, r2 = s.run_sequence([first, second])
    assert r1.schedulable
    # the PV is now pre-bound to claim a: claim b finds nothing
    assert not r2.schedulable
    assert {n: f.first_failure.reasons for n, f in r2.filters.items()} == {"n1": [BIND_CONFLICT], "n2": [BIND_CONFLICT]}
    # a third pod using claim a still finds its (assumed) PV
    assert s.schedule(claim_pod("p3", "a")).schedulable


def test_binding_sequence_assumes_selected_node_for_provisioning():
    objs = [sc("ssd", provisioner="x.csi"), pvc("shared", cls="ssd")]
    s = sched([node("n1"), node("n2")], [], objs)
    r1 = s.schedule(claim_pod("p1", "shared"))
    assert r1.schedulable and set(r1.feasible) == {"n1", "n2"}
    s.bind(r1.pod, r1.selected_node)
    r2 = s.schedule(claim_pod("p2", "shared"))
    assert r2.feasible == [r1.selected_node]
    other = "n2" if r1.selected_node == "n1" else "n1"
    assert r2.filters[other].first_failure.reasons == [BIND_CONFLICT]


def test_binding_in_tree_pv_translated_when_node_migrated():
    gce = {"gcePersistentDisk": {"pdName": "disk-1"}}
    objs = [
        sc("std", mode="Immediate", provisioner="kubernetes.io/gce-pd"),
        pvc("c", cls="std", volume="pd"),
        pv("pd", cls="std", claim="default/c", source=gce, labels={"topology.kubernetes.io/zone": "z1"}),
        {
            "kind": "CSINode",
            "metadata": {
                "name": "mig",
                "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"},
            },
            "spec": {"drivers": []},
        },
    ]
    # the translated PV requires the CSI topology label topology.gke.io/zone
    s = sched(
        [
            zone_node("mig", "z1"),
            zone_node("mig2", "z1", extra={"topology.gke.io/zone": "z1"}),
            zone_node("plain", "z1"),
        ],
        [],
        objs,
    )
    s.cluster.objects["CSINode"][("", "mig2")] = {**objs[-1], "metadata": {**objs[-1]["metadata"], "name": "mig2"}}
    p = claim_pod("p", "c")
    assert run(s, "VolumeBinding", p, "mig")[1].reasons == [NODE_CONFLICT]
    assert run(s, "VolumeBinding", p, "mig2")[1] is None
    assert run(s, "VolumeBinding", p, "plain")[1] is None  # not migrated: the PV has no node affinity


def test_binding_filter_error_for_missing_storage_class_of_claim_to_provision():
    objs = [
        sc("local"),
        {
            **pvc("c"),
            "metadata": {
                "name": "c",
                "namespace": "default",
                "uid": "u",
                "annotations": {"volume.kubernetes.io/selected-node": "n1"},
            },
        },
    ]
    s = sched([node("n1"), node("n2")], [], objs)
    p = claim_pod("p", "c")
    assert run(s, "VolumeBinding", p, "n2")[1].reasons == [BIND_CONFLICT]  # selected for another node
    assert run(s, "VolumeBinding", p, "n1")[1].reasons == [BIND_CONFLICT]  # no-provisioner class
    res = s.schedule(p)
    assert res.filters["n1"].first_failure.code == UNRESOLVABLE
    s.cluster.objects["StorageClass"].clear()
    res = s.schedule(claim_pod("q", "c"))
    # the claim is not WaitForFirstConsumer any more: unbound immediate
    assert res.pre_filter.reasons == ["pod has unbound immediate PersistentVolumeClaims"]
    assert res.pre_filter.code != ERROR


def test_default_storage_class_is_newest_then_smallest_name():
    def klass(name, ts=None, beta=False):
        o = sc(name, default=not beta)
        if beta:
            o["metadata"]["annotations"] = {"storageclass.beta.kubernetes.io/is-default-class": "true"}
        if ts:
            o["metadata"]["creationTimestamp"] = ts
        return o

    s = sched(
        [node("n1")],
        [],
        [
            klass("zeta", "2025-01-01T00:00:00Z"),
            klass("alpha", "2025-01-01T00:00:00Z"),
            klass("old", "2024-01-01T00:00:00Z"),
            sc("plain"),
        ],
    )
    assert s.cluster.default_storage_class() == "alpha"
    s = sched(
        [node("n1")], [], [klass("old", "2024-01-01T00:00:00Z"), klass("beta-new", "2025-06-01T00:00:00Z", beta=True)]
    )
    assert s.cluster.default_storage_class() == "beta-new"
    assert sched([node("n1")], [], [sc("plain")]).cluster.default_storage_class() is None


def test_csi_limits_translation_errors_are_error_statuses():
    # AzureDisk kind defaults to Shared, which CSI migration does not support
    s = sched([node("n1"), node("n2")], [], [_csinode("n1", 5, driver="disk.csi.azure.com")])
    p = pod("p", spec={"volumes": [{"name": "az", "azureDisk": {"diskName": "d", "diskURI": "uri"}}]})
    st = run(s, "NodeVolumeLimits", p, "n1")[1]
    assert (st.code, st.reasons) == (
        ERROR,
        ["converting volume(az) from inline to csi: kind(Shared) is not supported in csi migration"],
    )
    assert run(s, "NodeVolumeLimits", p, "n2")[1] is None  # no CSINode: migration off, nothing counted
    managed = pod(
        "q", spec={"volumes": [{"name": "az", "azureDisk": {"diskName": "d", "diskURI": "uri", "kind": "Managed"}}]}
    )
    assert run(s, "NodeVolumeLimits", managed, "n1")[1] is None


def test_binding_regional_gce_pv_translation_error():
    gce = {"gcePersistentDisk": {"pdName": "d1"}}
    objs = [
        sc("std", mode="Immediate", provisioner="kubernetes.io/gce-pd"),
        pvc("c", cls="std", volume="pd"),
        pv(
            "pd",
            cls="std",
            claim="default/c",
            source=gce,
            labels={"topology.kubernetes.io/zone": "us-central1-a__us-east1-b"},
        ),
        {
            "kind": "CSINode",
            "metadata": {
                "name": "n1",
                "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"},
            },
            "spec": {"drivers": []},
        },
    ]
    s = sched([zone_node("n1", "us-central1-a")], [], objs)
    st = run(s, "VolumeBinding", claim_pod("p", "c"), "n1")[1]
    assert st.code == ERROR
    assert st.reasons == [
        "could not translate pv: failed to get region from zones: multiple or no regions gotten "
        "from zones, got: map[us-central1:{} us-east1:{}]"
    ]


def test_csi_limits_look_only_at_volumes_that_may_count_and_agree_with_every_volume_walked(monkeypatch):
    """The existing pods' volumes that can never count (config maps, secrets, projected, emptyDir,
    hostPath) are passed over (nodevolumelimits.may_attach): on nodes with and without room, an
    existing pod's translation error, a missing claim, the verdicts are those of walking every
    volume of every pod, as the filter did."""
    from kschedcli.plugins import nodevolumelimits

    plain = [
        {"name": "cm", "configMap": {"name": "c"}},
        {"name": "tok", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
        {"name": "tmp", "emptyDir": {}},
        {"name": "host", "hostPath": {"path": "/x"}},
    ]
    objs = [sc("gp3", provisioner="ebs.csi.aws.com"), pvc("new", cls="gp3"), pvc("new2", cls="gp3")]
    nodes, existing = [], []
    for n in range(6):
        nodes.append(node(f"n{n}"))
        objs.append(_csinode(f"n{n}", 3))
        for i in range(n):
            c = f"c{n}-{i}"
            objs += [pvc(c, cls="gp3", volume=f"pv-{c}"), _csi_pv(f"pv-{c}", f"vol-{c}", f"default/{c}")]
            vols = plain[: i % 5] + (
                [{"name": "ebs", "awsElasticBlockStore": {"volumeID": f"vol-i{n}"}}] if i == 2 else []
            )
            existing.append(claim_pod(f"e{n}-{i}", c, node_name=f"n{n}", extra_volumes=vols))
        existing.append(pod(f"plain{n}", node_name=f"n{n}", spec={"volumes": plain}))
    # an existing pod whose claim is missing counts nothing; one whose in-tree volume cannot be
    # translated is an error on its node
    existing.append(claim_pod("gone", "missing", node_name="n1"))
    bad = {"name": "b", "awsElasticBlockStore": {"volumeID": "aws://zone/not-a-volume"}}
    existing.append(pod("bad", node_name="n5", spec={"volumes": [bad]}))
    s = sched(nodes, existing, objs)
    newcomers = [
        claim_pod("p", "new", extra_volumes=plain),
        claim_pod("q", "new", "new2"),
        pod("r", spec={"volumes": [*plain, {"name": "e", "awsElasticBlockStore": {"volumeID": "vol-i3"}}]}),
        claim_pod("s", "c2-0"),  # already attached on n2
    ]

    def verdicts():
        out = []
        for p in newcomers:
            for ni in s.snapshot.node_infos:
                st = run(s, "NodeVolumeLimits", p, ni.node.name)[1]
                out.append(None if st is None else (st.code, tuple(st.reasons)))
        return out

    fast = verdicts()
    assert ("Unschedulable", ("node(s) exceed max volume count",)) in fast
    assert any(v is not None and v[0] == ERROR for v in fast)
    assert fast.count(None) > len(fast) // 3
    assert [v["name"] for v in nodevolumelimits.may_attach(existing[-4])] == ["v0"]  # e5-4: its claim
    assert nodevolumelimits.may_attach(existing[-3]) == []  # plain5
    # every volume walked, as before
    monkeypatch.setattr(nodevolumelimits, "may_attach", lambda p: list(p.volumes))
    assert verdicts() == fast


def test_may_attach_follows_each_pods_own_volumes_under_a_shared_cache():
    """Pods sharing a `_cache` (a template's replacements) each get their own volumes' answer."""
    from kschedcli.plugins.nodevolumelimits import may_attach

    a = claim_pod("a", "ca", extra_volumes=[{"name": "cm", "configMap": {"name": "c"}}])
    b = pod("b", spec={"volumes": [{"name": "cm", "configMap": {"name": "c"}}]})
    b._cache = a._cache
    assert [v["name"] for v in may_attach(a)] == ["v0"]
    assert may_attach(b) == []
    assert [v["name"] for v in may_attach(a)] == ["v0"]


def test_csi_limits_node_count_kept_until_the_nodes_pods_change():
    """What a node's pods attach is worked out once per node (NodeInfo.derive) and worked out again
    when a pod is bound to or removed from it, or when another cluster's catalog reads it."""
    objs = [sc("gp3", provisioner="ebs.csi.aws.com"), _csinode("n1", 2)]
    for i in range(3):
        objs += [pvc(f"c{i}", cls="gp3", volume=f"pv{i}"), _csi_pv(f"pv{i}", f"vol-{i}", f"default/c{i}")]
    objs.append(pvc("new", cls="gp3"))
    s = sched([node("n1")], [claim_pod("e0", "c0", node_name="n1")], objs)
    p = claim_pod("p", "new")
    assert run(s, "NodeVolumeLimits", p, "n1")[1] is None  # 1 attached + 1 new <= 2
    assert run(s, "NodeVolumeLimits", p, "n1")[1] is None  # the node's count as kept
    e1 = claim_pod("e1", "c1", node_name="n1")
    s.bind(e1, "n1")
    st = run(s, "NodeVolumeLimits", p, "n1")[1]
    assert (st.code, st.reasons) == (UNSCHEDULABLE, ["node(s) exceed max volume count"])
    assert run(s, "NodeVolumeLimits", claim_pod("q", "c1"), "n1")[1] is None  # already attached there
    s.snapshot.get("n1").remove_pod(e1)
    assert run(s, "NodeVolumeLimits", p, "n1")[1] is None
    # another cluster (a scenario's copy) whose CSINode allows one volume: its own count
    other = sched(
        [node("n1")],
        [claim_pod("e0", "c0", node_name="n1")],
        [o for o in objs if o["kind"] != "CSINode"] + [_csinode("n1", 1)],
    )
    pl = other.frameworks["default-scheduler"].plugins["NodeVolumeLimits"]
    pl.handle.snapshot = s.snapshot  # the same NodeInfo, read through the other catalog
    st = pl.filter(fresh_state(), p, s.snapshot.get("n1"))
    assert (st.code, st.reasons) == (UNSCHEDULABLE, ["node(s) exceed max volume count"])
    # the node keeps what it worked out for that catalog, not the catalog (nor its cluster) itself
    gone = weakref.ref(pl._catalog())
    del pl, other
    gc.collect()
    assert gone() is None
    assert run(s, "NodeVolumeLimits", p, "n1")[1] is None


def test_csi_limits_one_state_over_many_nodes_decides_as_a_fresh_state_per_node():
    """NodeVolumeLimits works out the incoming pod's attachable volumes once per cycle for each
    case the node can change them in (no CSINode; one listing Portworx as migrated or not): one
    cycle's state over nodes of every case decides each node as a fresh state does."""
    px_migrated = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/portworx-volume"}
    nodes = [node(f"n{i}") for i in range(9)]
    objs = [sc("gp3", provisioner="ebs.csi.aws.com"), pvc("new", cls="gp3"), pvc("bound", cls="gp3", volume="pvb")]
    objs.append(_csi_pv("pvb", "vol-b", "default/bound"))
    for i in range(9):
        if i % 3 == 0:
            continue  # no CSINode
        objs.append(
            _csinode(f"n{i}", 1 + i % 2, driver="pxd.portworx.com", annotations=px_migrated if i % 3 == 1 else None)
        )
    # (n1 holds px-1 already: the volume it takes out of its count must not be gone for the next node)
    existing = [pod("px-e", node_name="n1", spec={"volumes": [{"name": "v", "portworxVolume": {"volumeID": "px-1"}}]})]
    s = sched(nodes, existing, objs)
    px = {"name": "v", "portworxVolume": {"volumeID": "px-1"}}
    az = {"name": "az", "azureDisk": {"diskName": "d", "diskURI": "uri"}}
    pods = [
        pod("px", spec={"volumes": [px]}),
        pod("px2", spec={"volumes": [px, {"name": "w", "portworxVolume": {"volumeID": "px-2"}}]}),
        pod("az", spec={"volumes": [az]}),
        claim_pod("claims", "new", "bound"),
        claim_pod("missing", "nope"),
    ]
    for p in pods:
        shared = fresh_state()
        one = [run(s, "NodeVolumeLimits", p, f"n{i}", shared) for i in range(9)]
        each = [run(s, "NodeVolumeLimits", p, f"n{i}") for i in range(9)]
        assert [(k, st and (st.code, st.reasons)) for k, st in one] == [
            (k, st and (st.code, st.reasons)) for k, st in each
        ], p.name
        assert _batch_verdicts(s, [p]) == [st and (st.code, tuple(st.reasons)) for _, st in each], p.name
    verdicts = {f"n{i}": run(s, "NodeVolumeLimits", pods[1], f"n{i}")[1] for i in range(9)}
    assert any(v is not None for v in verdicts.values()) and any(v is None for v in verdicts.values())


def _random_affinity(rng):
    def expr():
        op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus"])
        key = rng.choice(["topology.kubernetes.io/zone", "rank", "disk"])
        if op in ("In", "NotIn"):
            return {"key": key, "operator": op, "values": rng.sample(["a", "b", "c", "ssd", "1", "5"], 2)}
        if op in ("Gt", "Lt"):
            return {"key": "rank", "operator": op, "values": [str(rng.randint(0, 9))]}
        return {"key": key, "operator": op}

    terms = []
    for _ in range(rng.randint(1, 3)):
        terms.append({"matchExpressions": [expr() for _ in range(rng.randint(0, 2))]})
    return {"required": {"nodeSelectorTerms": terms}} if rng.random() < 0.9 else None


def test_binding_filter_nodes_and_array_equal_the_node_by_node_filter(monkeypatch):
    """VolumeBinding's batch Filter (filter_nodes) and its columnar form (filter_array) against
    Filter node by node: random PV affinities (several terms, every operator, a malformed one,
    labels missing, numbers and non-numbers under Gt/Lt), pods of one to three bound claims,
    a claim bound to a missing PV and one waiting for its first consumer (node by node)."""
    import random

    import numpy as np

    from kschedcli.backend import vectors
    from kschedcli.plugins import volumebinding

    # (the snapshot's own nodes as arrays at this size too)
    monkeypatch.setattr(vectors, "MIN_NODES", 1)
    monkeypatch.setattr(vectors, "IMPORT_AFTER_NODES", 0)
    as_arrays = []  # the affinities read as arrays (filter_array, and filter_nodes on the snapshot's nodes)
    real_affinity_array = volumebinding.affinity_array
    monkeypatch.setattr(volumebinding, "affinity_array", lambda *a: as_arrays.append(1) or real_affinity_array(*a))
    rng = random.Random(5)
    nodes = []
    for i in range(40):
        labels = {}
        if rng.random() < 0.8:
            labels["topology.kubernetes.io/zone"] = rng.choice(["a", "b", "c"])
        if rng.random() < 0.7:
            labels["rank"] = rng.choice(["1", "3", "5", "8", "x", "-2"])
        if rng.random() < 0.4:
            labels["disk"] = "ssd"
        nodes.append(node(f"n{i:02d}", labels=labels))
    objs = [sc("local"), sc("wait"), pvc("waiting", cls="wait"), pvc("ghost", volume="gone")]
    for k in range(30):
        spec = pv(f"pv{k}", claim=f"default/c{k}", source={"csi": {"driver": "d", "volumeHandle": f"h{k}"}})
        aff = _random_affinity(rng)
        if aff is not None:
            spec["spec"]["nodeAffinity"] = aff
        objs += [spec, pvc(f"c{k}", volume=f"pv{k}")]
    s = sched(nodes, [], objs)
    pl = s.frameworks["default-scheduler"].plugins["VolumeBinding"]
    infos = s.snapshot.list()
    arrays = 0
    seen = set()
    for j in range(120):
        claims = [f"c{k}" for k in rng.sample(range(30), rng.randint(1, 3))]
        if j % 10 == 0:
            claims.append(rng.choice(["ghost", "waiting"]))
        p = claim_pod(f"p{j}", *claims)
        one, many = fresh_state(), fresh_state()
        _, st = pl.pre_filter(one, p, infos)
        pl.pre_filter(many, p, infos)
        if st is not None and st.code != "Success":
            continue
        want = [pl.filter(one, p, ni) for ni in infos]
        # the snapshot's own nodes (its label columns read as arrays), and a list of them (node by node)
        listed = fresh_state()
        pl.pre_filter(listed, p, infos)
        for state, nodes in ((many, infos), (listed, list(infos))):
            before = len(as_arrays)
            got = pl.filter_nodes(state, p, nodes)
            assert (len(as_arrays) > before) == (nodes is infos and j % 10 != 0)
            assert [(w.code, w.reasons) if w else None for w in want] == [
                (g.code, g.reasons) if g else None for g in got
            ]
            assert {
                k: (v.static_bindings, v.dynamic_provisions) for k, v in one.get("VolumeBinding").by_node.items()
            } == {k: (v.static_bindings, v.dynamic_provisions) for k, v in state.get("VolumeBinding").by_node.items()}
        mask = pl.filter_array(many, p, np)
        if j % 10 == 0:
            assert mask is None  # (a missing PV, a claim to bind: node by node)
            continue
        arrays += 1
        assert mask.tolist() == [w is None for w in want]
        seen.add((mask.all(), mask.any()))
    assert arrays > 90
    assert seen == {(True, True), (False, True), (False, False)}  # (every node, some, none)


def test_binding_filter_nodes_leaves_numpy_unimported_on_a_small_cluster(monkeypatch):
    """VolumeBinding's batch Filter over a small cluster's nodes (a single explain's) reads their
    labels, never importing numpy for it (its import costs more than such a pass)."""
    from kschedcli.backend import vectors

    monkeypatch.setattr(vectors, "_walked", 0)
    monkeypatch.setattr(vectors, "_imported", lambda: None)
    monkeypatch.setattr(vectors, "_import", lambda: pytest.fail("numpy imported for a small cluster"))
    objs = [sc("local"), pv("pv0", hosts=["n1"], claim="default/c0"), pvc("c0", volume="pv0")]
    s = sched([node("n0"), node("n1")], [], objs)
    pl = s.frameworks["default-scheduler"].plugins["VolumeBinding"]
    p = claim_pod("p", "c0")
    state = fresh_state()
    pl.pre_filter(state, p, s.snapshot.list())
    got = pl.filter_nodes(state, p, s.snapshot.node_infos)
    assert [st and st.reasons for st in got] == [[NODE_CONFLICT], None]


def _limit_verdicts(s, newcomers):
    """NodeVolumeLimits' verdict for each newcomer on each node, one CycleState per newcomer."""
    out = []
    for p in newcomers:
        state = fresh_state()
        for ni in s.snapshot.node_infos:
            st = run(s, "NodeVolumeLimits", p, ni.node.name, state)[1]
            out.append(None if st is None else (st.code, tuple(st.reasons)))
    return out


def _batch_verdicts(s, newcomers):
    """_limit_verdicts from NodeVolumeLimits' batch Filter (filter_nodes) over every node, a
    CycleState per newcomer (PreFilter's status on every node where it does not pass)."""
    pl = s.frameworks["default-scheduler"].plugins["NodeVolumeLimits"]
    out = []
    for p in newcomers:
        state = fresh_state()
        _, st = pl.pre_filter(state, p, s.snapshot.list())
        nodes = s.snapshot.node_infos
        if st is not None and st.code != "Success":
            out += [(st.code, tuple(st.reasons))] * len(nodes)
            continue
        out += [None if v is None else (v.code, tuple(v.reasons)) for v in pl.filter_nodes(state, p, nodes)]
    return out


def test_csi_limits_batch_filter_over_two_drivers_agrees_node_by_node():
    """Pods with volumes of two CSI drivers, on nodes whose CSINodes limit one, both or neither of
    them, holding volumes of either: filter_nodes' quick test per node (its claims, its
    VolumeAttachments and the new volumes against every driver's limit) gives filter's verdicts,
    and a node with room for one driver's volumes but not the other's fails."""
    import random

    rng = random.Random(11)
    drivers = ("ebs.csi.aws.com", "efs.csi.aws.com")
    objs = [sc("gp3", provisioner=drivers[0])]
    nodes, existing = [], []

    def volume(c, d):
        src = {"csi": {"driver": d, "volumeHandle": f"vol-{c}"}}
        return [pvc(c, cls="gp3", volume=f"pv-{c}"), pv(f"pv-{c}", cls="gp3", claim=f"default/{c}", source=src)]

    for n in range(40):
        nodes.append(node(f"n{n}"))
        listed = [
            {"name": d, "nodeID": f"n{n}", "allocatable": {"count": rng.randint(1, 6)}}
            for d in drivers
            if rng.random() < 0.8
        ]
        if rng.random() < 0.9:
            objs.append({"kind": "CSINode", "metadata": {"name": f"n{n}"}, "spec": {"drivers": listed}})
        for i in range(rng.randint(0, 4)):
            c = f"c{n}-{i}"
            objs += volume(c, rng.choice(drivers))
            existing.append(claim_pod(f"e{c}", c, node_name=f"n{n}"))
    for k in range(4):
        objs += volume(f"new{k}", drivers[k % 2])
    s = sched(nodes, existing, objs)
    newcomers = [
        claim_pod("both", "new0", "new1"),
        claim_pod("three", "new0", "new1", "new3"),
        claim_pod("one", "new1"),
    ]
    verdicts = _limit_verdicts(s, newcomers)
    assert _batch_verdicts(s, newcomers) == verdicts
    assert None in verdicts and ("Unschedulable", ("node(s) exceed max volume count",)) in verdicts


def test_csi_limits_bound_by_the_nodes_claims_agrees_with_counting_every_pod(monkeypatch):
    """A node whose pods' volumes are all named claims or never attach passes when its claims,
    its VolumeAttachments and the new volumes stay within every limit (NodeInfo.other_volumes,
    pvc_ref_counts): on random clusters, before and after binds and removals, the verdicts are
    those of counting every pod's volumes on every node; other_volumes is the count its pods give."""
    import random

    from kschedcli.backend.snapshot import _pvc_keys
    from kschedcli.plugins import nodevolumelimits

    counted = []  # the nodes whose pods were counted one by one
    on_node = nodevolumelimits.NodeVolumeLimits._on_node
    monkeypatch.setattr(
        nodevolumelimits.NodeVolumeLimits, "_on_node", lambda self, *a: counted.append(1) or on_node(self, *a)
    )
    rng = random.Random(7)
    plain = [{"name": "cm", "configMap": {"name": "c"}}, {"name": "tmp", "emptyDir": {}}]
    odd = [
        {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-inline"}},
        {"name": "noname", "persistentVolumeClaim": {}},
        {"name": "empty", "persistentVolumeClaim": {"claimName": ""}},
        {"name": "nfs", "nfs": {"server": "s", "path": "/"}},
    ]
    bounded = 0
    for trial in range(12):
        objs = [sc("gp3", provisioner="ebs.csi.aws.com")]
        nodes, existing = [], []
        for n in range(8):
            nodes.append(node(f"n{n}"))
            count = rng.choice([1, 2, 3, 4, 6, None])
            if count is not None:
                objs.append(_csinode(f"n{n}", count))
            if rng.random() < 0.3:
                spec = {
                    "attacher": "ebs.csi.aws.com",
                    "nodeName": f"n{n}",
                    "source": {"persistentVolumeName": f"pv-x{n}"},
                }
                objs.append({"kind": "VolumeAttachment", "metadata": {"name": f"va{n}"}, "spec": spec})
                objs += [pvc(f"x{n}", cls="gp3", volume=f"pv-x{n}"), _csi_pv(f"pv-x{n}", f"vol-x{n}", f"default/x{n}")]
        claims = [f"c{trial}-{i}" for i in range(14)]
        for c in claims[:10]:  # (the others are missing)
            objs += [pvc(c, cls="gp3", volume=f"pv-{c}"), _csi_pv(f"pv-{c}", f"vol-{c}", f"default/{c}")]
        for i in range(16):
            named = rng.sample(claims, rng.randint(0, 2))
            extra = rng.sample(plain, rng.randint(0, 2)) + ([rng.choice(odd)] if rng.random() < 0.35 else [])
            existing.append(claim_pod(f"e{i}", *named, node_name=f"n{rng.randrange(8)}", extra_volumes=extra))
        s = sched(nodes, existing, objs)
        newcomers = [claim_pod(f"p{j}", *rng.sample(claims, rng.randint(1, 3))) for j in range(4)]
        for step in range(3):
            for ni in s.snapshot.node_infos:
                assert ni.other_volumes == sum(_pvc_keys(p)[1] for p in ni.pods)
            counted.clear()
            fast = _limit_verdicts(s, newcomers)
            bounded += len(fast) - len(counted)
            kept = [ni.other_volumes for ni in s.snapshot.node_infos]
            for ni in s.snapshot.node_infos:
                ni.other_volumes = 1  # every node's pods counted one by one
            slow = _limit_verdicts(s, newcomers)
            assert _batch_verdicts(s, newcomers) == slow, (trial, step)  # (every node through filter)
            for ni, n in zip(s.snapshot.node_infos, kept):
                ni.other_volumes = n
            assert fast == slow, (trial, step)
            assert _batch_verdicts(s, newcomers) == fast, (trial, step)
            # binds and removals move the counts
            ni = rng.choice(s.snapshot.node_infos)
            if ni.pods and rng.random() < 0.5:
                ni.remove_pod(rng.choice(ni.pods))
            else:
                added = claim_pod(
                    f"b{trial}-{step}", *rng.sample(claims, 2), node_name=ni.node.name, extra_volumes=[rng.choice(odd)]
                )
                ni.add_pod(added)
    assert bounded > 100
