"""Fixes the pod's owner can make, that never evict the pod's own siblings, each saying who acts
(issue 28 items 2 and 6): a hand-built cluster where a Deployment's required anti-affinity keeps
its 4th replica off 3 nodes that each run one replica, and a real HTTP extender rejecting nodes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from extender_server import serve
from test_fixes import node, priority_class

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
LABELS = {"app": "web"}
ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": LABELS}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}
DEPLOY_UID = "11111111-1111-1111-1111-111111111111"
RS_UID = "22222222-2222-2222-2222-222222222222"


def run(*args: str, env=None):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "140", **(env or {})})


def template(priority_class_name=None):
    spec = {
        "containers": [{"name": "c", "image": "web:1", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}],
        "affinity": ANTI,
    }
    if priority_class_name:
        spec["priorityClassName"] = priority_class_name
    return {"metadata": {"labels": dict(LABELS)}, "spec": spec}


def deployment(replicas=4):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": DEPLOY_UID},
        "spec": {"replicas": replicas, "selector": {"matchLabels": dict(LABELS)}, "template": template()},
    }


def replica(i, node_name=None, *, with_uid=True, hash_="7d9f8c6b5"):
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"web-{hash_}", "controller": True}
    if with_uid:
        ref["uid"] = RS_UID
    t = template()
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{hash_}-{i}",
            "namespace": "default",
            "labels": {**LABELS, "pod-template-hash": hash_},
            "ownerReferences": [ref],
        },
        "spec": dict(t["spec"]),
        "status": {"phase": "Running" if node_name else "Pending"},
    }
    if node_name:
        raw["spec"]["nodeName"] = node_name
    return raw


def cluster_file(tmp_path, *, with_uid=True, extra=()):
    objects = [
        node("n1"),
        node("n2"),
        node("n3"),
        *(replica(i, f"n{i + 1}", with_uid=with_uid) for i in range(3)),
        # another team's class, high enough for preemption to evict anything here
        priority_class("team-b-critical", 100000),
        *extra,
    ]
    p = tmp_path / "cluster.yaml"
    p.write_text(yaml.safe_dump_all(objects))
    return p


def explain_json(pod_file, cluster, *extra):
    r = run("explain", str(pod_file), "--cluster", str(cluster), "-o", "json", "--fixes", "10", *extra)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("with_uid", [True, False])
def test_no_priority_raise_that_only_evicts_a_sibling_replica(tmp_path, with_uid):
    cluster = cluster_file(tmp_path, with_uid=with_uid)
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(replica(3, with_uid=with_uid)))
    doc = explain_json(pod_file, cluster)
    assert not doc["schedulable"]
    kinds = [s["kind"] for s in doc["suggestions"]]
    # main suggested giving it team-b-critical so that preemption evicts web-...-0 (a sibling)
    assert "priorityClass" not in kinds, doc["suggestions"]
    for s in doc["suggestions"]:
        assert not any(v.startswith("default/web-") for v in s["result"].get("victims", [])), s
    # what remains: a node added (the admin's); softening the pod's own term is not enough (the
    # running replicas' anti-affinity rejects it as well)
    assert kinds == ["addNode"] and doc["suggestions"][0]["actors"] == ["cluster-admin"]


def test_a_deployment_manifest_s_replica_siblings_are_known_by_its_selector(tmp_path):
    # the running replicas belong to an older ReplicaSet (another hash) the snapshot does not hold:
    # only the Deployment's selector ties them to the replica the manifest makes
    objects = [
        node("n1"),
        node("n2"),
        node("n3"),
        *(replica(i, f"n{i + 1}", hash_="5c4b3a2f1") for i in range(3)),
        priority_class("team-b-critical", 100000),
    ]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects))
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(yaml.safe_dump(deployment(replicas=4)))
    doc = explain_json(manifest, cluster)
    assert not doc["schedulable"]
    assert [s["kind"] for s in doc["suggestions"]] == ["addNode"], doc["suggestions"]


def test_another_workload_s_pods_may_still_be_evicted_by_a_priority_raise(tmp_path):
    # the same cluster, but the pod is another team's, wanting the room a low-priority pod takes
    other = replica(0, with_uid=True)
    other["metadata"] = {"name": "batch-0", "namespace": "default", "labels": {"app": "batch"}}
    other["spec"] = {
        "containers": [{"name": "c", "image": "b:1", "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}}],
        "nodeName": "n1",
    }
    cluster = cluster_file(tmp_path, extra=[other])
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x:1", "resources": {"requests": {"cpu": "3800m"}}}],
            "nodeSelector": {"kubernetes.io/hostname": "n1"},
        },
    }
    pod_file = tmp_path / "big.yaml"
    pod_file.write_text(yaml.safe_dump(pending))
    doc = explain_json(pod_file, cluster)
    prio = [s for s in doc["suggestions"] if s["kind"] == "priorityClass"]
    assert prio and prio[0]["result"]["victims"] == ["default/batch-0", "default/web-7d9f8c6b5-0"]
    assert prio[0]["actors"] == ["pod-owner"]


def test_the_table_says_who_acts(tmp_path):
    cluster = cluster_file(tmp_path)
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(replica(3)))
    r = run("explain", str(pod_file), "--cluster", str(cluster), "--fixes", "10")
    assert r.exit_code == 1, r.output
    assert "who acts: the cluster admin" in r.output
    assert "team-b-critical" not in r.output.split("What would make it fit")[1]


# -- an HTTP extender's rejections (issue 28 item 2) --------------------------------------------


def _config(tmp_path, url):
    p = tmp_path / "ext.yaml"
    p.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders:\n"
        f"- urlPrefix: {url}\n  filterVerb: filter\n  nodeCacheCapable: true\n"
    )
    return p


@pytest.fixture
def rejecting_extender():
    ext = serve(
        {"filter": lambda a: {"NodeNames": [], "FailedNodes": {n: "no licence seat left" for n in a["NodeNames"]}}}
    )
    yield ext
    ext.close()


def test_explain_with_an_extender_that_rejects_nodes_names_its_owner(tmp_path, rejecting_extender):
    import jsonschema

    ext = rejecting_extender
    args = ["explain", str(ROOT / "fixtures/pods/web.yaml"), "-c", str(ROOT / "fixtures/small-cluster.yaml")]
    args += ["--config", str(_config(tmp_path, ext.url))]
    r = run(*args)
    # main: AttributeError: '_NotAsked' object has no attribute 'code' (fixes/blocked.py)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 1, r.output
    words = " ".join(r.output.split())
    assert f"not the pod's to change: the extender {ext.url} rejected" in words
    assert "only the extender's owner can change that" in words
    r = run(*args, "-o", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    schema = json.loads((ROOT / "kschedcli/schemas/result.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    (reach,) = doc["outOfReach"]
    assert reach["actor"] == "extender-owner" and reach["extender"] == ext.url
    assert reach["reasons"] == ["no licence seat left"]
    assert reach["nodes"] == sorted(doc["extenders"][0]["failed"]) == ["node-a", "node-b"]
    # no suggestion pretends to change what the extender decides: each verified one was asked too
    for s in doc["suggestions"]:
        assert s["result"]["schedulable"] is False or s["result"]["selectedNode"] not in reach["nodes"]


def test_fix_search_reads_every_status_a_cycle_with_extenders_makes(rejecting_extender):
    from builders import node as bnode
    from builders import pod as bpod

    from kschedcli.config.extenders import parse_extenders
    from kschedcli.config.scheduler import SchedulerConfig, build_profile
    from kschedcli.config.versions import REFERENCE, choose
    from kschedcli.framework.result import NOT_ASKED
    from kschedcli.inputs.cluster import Cluster
    from kschedcli.plugins import REGISTRY
    from kschedcli.scheduling.scheduler import Scheduler
    from kschedcli.whatif.fixes.search import find_fixes
    from kschedcli.whatif.world import World

    cluster = Cluster()
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    cluster.nodes = [bnode("n1"), bnode("n2"), bnode("n3", taints=taint)]
    cluster.follow(choose(REFERENCE.name))
    prof = build_profile({"schedulerName": "default-scheduler"}, "test", REGISTRY)
    cfg = [{"urlPrefix": rejecting_extender.url, "filterVerb": "filter", "nodeCacheCapable": True}]
    config = SchedulerConfig(profiles=[prof], extenders=parse_extenders(cfg, "test"))
    sched = Scheduler(cluster, config)
    r = sched.schedule(bpod("p"))
    assert NOT_ASKED in r.filters.columns[rejecting_extender.url]  # n3: the taint rejected it first
    found = find_fixes(World(cluster, config, sched), r, 3)
    (reach,) = found.out_of_reach
    assert reach.nodes == ["n1", "n2"] and reach.extender == rejecting_extender.url
    for s in found.suggestions:
        assert s.verdict.selected_node not in ("n1", "n2")


def test_no_eviction_of_an_older_replica_set_s_replicas_of_the_same_deployment(tmp_path):
    # a rollout: the new template raised the priority; preemption would evict an old replica (a
    # sibling: the same Deployment through its older ReplicaSet), which kube-scheduler itself may
    # do, but "evict it" is no fix to suggest
    old = []
    for i in range(3):
        p = replica(i, f"n{i + 1}", with_uid=False, hash_="5c4b3a2f1")
        p["spec"]["priorityClassName"] = "web-low"
        old.append(p)
    new = replica(0, with_uid=False, hash_="7d9f8c6b5")
    new["spec"]["priorityClassName"] = "web-high"
    objects = [node("n1"), node("n2"), node("n3"), *old, priority_class("web-low", 10), priority_class("web-high", 20)]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objects))
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(new))
    doc = explain_json(pod_file, cluster)
    assert doc["preemption"]["nominatedNode"]  # kube-scheduler would preempt an old replica
    kinds = [s["kind"] for s in doc["suggestions"]]
    assert "evict" not in kinds, doc["suggestions"]  # main: evict default/web-5c4b3a2f1-0
    assert kinds == ["addNode"]


def test_blocked_reads_every_entry_a_filter_table_holds():
    from kschedcli.framework.result import NOT_ASKED, CycleResult, FilterTable
    from kschedcli.framework.status import SKIP, SUCCESS, UNRESOLVABLE, UNSCHEDULABLE, Status
    from kschedcli.whatif.fixes.blocked import blocked_of

    names = ["a", "b", "c", "d", "e"]
    ext = "http://ext/scheduler"
    taint = Status(UNSCHEDULABLE, "taint", plugin="TaintToleration")
    columns = {
        "TaintToleration": [None, Status(SUCCESS), Status(SKIP), taint, None],
        ext: [NOT_ASKED, None, Status(UNSCHEDULABLE, "busy", plugin=ext), NOT_ASKED, Status(UNRESOLVABLE, "no")],
    }
    first = [None, None, columns[ext][2], taint, columns[ext][4]]
    r = CycleResult(pod=None, profile="p", schedulable=False, pre_filter=None)
    r.filters = FilterTable(names, {n: i for i, n in enumerate(names)}, columns, first)
    r.filter_extenders = [ext]
    b = blocked_of(r, names)
    assert b.failing == [frozenset(), frozenset(), {ext}, {"TaintToleration"}, {ext}]
    assert b.extenders == [ext] and b.rejected_by(ext) == [2, 4]
    assert b.nodes_failing_within({"TaintToleration"}) == [3]
