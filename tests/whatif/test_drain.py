"""`ksched drain` (kschedcli/whatif/drain.py): kubectl's drain filters, the eviction API's PDB check,
the replacements rescheduled in priority order, on hand-built clusters and the prod fixture."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from builders import node, pod
from typer.testing import CliRunner

from kschedcli.api.model import Pod
from kschedcli.cli.app import app
from kschedcli.config.scheduler import SchedulerConfig, build_profile
from kschedcli.errors import InputError
from kschedcli.inputs.cluster import Cluster
from kschedcli.plugins import REGISTRY
from kschedcli.whatif.drain import (
    BLOCKED,
    DELETED,
    EVICTED,
    PDB_MULTIPLE,
    REFUSED,
    SKIPPED_MIRROR,
    STAYS_DAEMONSET,
    drain,
)

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")


def config():
    return SchedulerConfig(profiles=[build_profile({"schedulerName": "default-scheduler"}, "t", REGISTRY)])


def owned(
    name,
    node_name,
    *,
    kind="ReplicaSet",
    owner="web-1",
    ns="shop",
    cpu="1",
    labels=None,
    priority=None,
    volumes=None,
    annotations=None,
    conditions=None,
):
    p = pod(name, ns=ns, node_name=node_name, requests={"cpu": cpu}, labels=labels or {"app": "web"}, priority=priority)
    raw = copy.deepcopy(p.raw)
    if kind:
        raw["metadata"]["ownerReferences"] = [{"kind": kind, "name": owner, "controller": True}]
    if volumes:
        raw["spec"]["volumes"] = volumes
    if annotations:
        raw["metadata"]["annotations"] = annotations
    if conditions:
        raw["status"]["conditions"] = conditions
    return Pod(raw)


def pdb(name, allowed, labels, ns="shop", desired=2, healthy=2, policy=None):
    spec = {"selector": {"matchLabels": labels}}
    if policy:
        spec["unhealthyPodEvictionPolicy"] = policy
    return {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
        "status": {"disruptionsAllowed": allowed, "desiredHealthy": desired, "currentHealthy": healthy},
    }


def cluster_of(nodes, pods, pdbs=()):
    c = Cluster()
    c.nodes = list(nodes)
    c.pods = list(pods)
    for b in pdbs:
        c.objects["PodDisruptionBudget"][(b["metadata"]["namespace"], b["metadata"]["name"])] = b
    return c


def actions(report, node_name):
    return {o.pod.key: o.action for n in report.nodes if n.name == node_name for o in n.pods}


def test_kubectl_filters_decide_what_is_evicted():
    pods = [
        owned("ds", "a", kind="DaemonSet", owner="agent"),
        owned("static", "a", kind="Node", owner="a", annotations={"kubernetes.io/config.mirror": "x"}),
        owned("web", "a"),
    ]
    c = cluster_of([node("a"), node("b")], pods)
    report = drain(c, config(), ["a"])
    assert actions(report, "a") == {"shop/ds": STAYS_DAEMONSET, "shop/static": SKIPPED_MIRROR, "shop/web": EVICTED}
    assert report.nodes[0].warnings == ["ignoring DaemonSet-managed Pods: shop/ds"]
    assert c.nodes[0].unschedulable  # cordoned
    [moved] = report.evicted
    assert moved.result.selected_node == "b"
    assert report.drainable()


def test_a_daemonset_pod_whose_daemonset_is_missing_is_an_orphan_when_the_snapshot_has_daemonsets():
    pods = [owned("ds", "a", kind="DaemonSet", owner="agent"), owned("orphan", "a", kind="DaemonSet", owner="gone")]
    c = cluster_of([node("a"), node("b")], pods)
    c.objects["DaemonSet"][("shop", "agent")] = {"kind": "DaemonSet", "metadata": {"name": "agent"}}
    report = drain(c, config(), ["a"])
    assert report.nodes[0].errors == ['cannot delete daemonsets.apps "gone" not found: shop/orphan']
    assert actions(report, "a") == {"shop/ds": STAYS_DAEMONSET, "shop/orphan": REFUSED}
    c = cluster_of([node("a"), node("b")], pods)
    c.objects["DaemonSet"][("shop", "agent")] = {"kind": "DaemonSet", "metadata": {"name": "agent"}}
    report = drain(c, config(), ["a"], force=True)
    assert actions(report, "a")["shop/orphan"] == DELETED  # deleted; no DaemonSet recreates it
    assert 'daemonsets.apps "gone" not found: shop/orphan' in report.nodes[0].warnings
    # without any DaemonSet object in the snapshot, every DaemonSet is taken to exist
    report = drain(cluster_of([node("a"), node("b")], pods), config(), ["a"])
    assert set(actions(report, "a").values()) == {STAYS_DAEMONSET}


def test_local_storage_and_bare_pods_are_errors_and_stop_the_node_as_kubectl():
    pods = [
        owned("cache", "a", volumes=[{"name": "tmp", "emptyDir": {}}]),
        owned("bare", "a", kind=None),
        owned("web", "a"),
    ]
    report = drain(cluster_of([node("a"), node("b")], pods), config(), ["a"])
    n = report.nodes[0]
    assert n.errors == [
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): shop/cache",
        "cannot delete Pods that declare no controller (use --force to override): shop/bare",
    ]
    assert set(actions(report, "a").values()) == {REFUSED}  # kubectl evicts nothing on the node
    assert not report.evicted and not report.drainable()
    report = drain(cluster_of([node("a"), node("b")], pods), config(), ["a"], delete_emptydir_data=True, force=True)
    assert actions(report, "a") == {"shop/cache": EVICTED, "shop/bare": DELETED, "shop/web": EVICTED}
    assert "deleting Pods with local storage: shop/cache" in report.nodes[0].warnings
    # a bare pod deleted by --force is gone: the node is drained but not everything moved
    assert not report.drainable() and [o.pod.key for o in report.evicted] == ["shop/cache", "shop/web"]


def test_a_budget_refuses_then_allows_once_a_replacement_is_placed():
    pods = [owned("web-a", "a"), owned("web-b", "a")]
    c = cluster_of([node("a"), node("b")], pods, [pdb("web", 1, {"app": "web"})])
    report = drain(c, config(), ["a"])
    assert report.rounds == 2 and report.drainable()
    assert [(o.pod.key, o.round, o.result.selected_node) for o in report.evicted] == [
        ("shop/web-a", 1, "b"),
        ("shop/web-b", 2, "b"),
    ]
    assert all(o.pdb == "shop/web" for o in report.evicted)


def test_a_budget_with_no_disruption_left_blocks_and_is_reported():
    pods = [owned("web-a", "a")]
    report = drain(
        cluster_of([node("a"), node("b")], pods, [pdb("web", 0, {"app": "web"}, desired=3, healthy=3)]), config(), ["a"]
    )
    [o] = report.nodes[0].pods
    assert o.action == BLOCKED and o.pdb == "shop/web"
    assert o.message == (
        "Cannot evict pod as it would violate the pod's disruption budget. "
        "The disruption budget web needs 3 healthy pods and has 3 currently"
    )
    assert not report.drainable() and "refused" in report.nodes[0].problems()[0]


def test_an_unready_pod_is_evicted_when_the_budget_is_healthy_and_two_budgets_refuse():
    unready = owned("web-a", "a", conditions=[{"type": "Ready", "status": "False"}])
    report = drain(cluster_of([node("a"), node("b")], [unready], [pdb("web", 0, {"app": "web"})]), config(), ["a"])
    assert actions(report, "a") == {"shop/web-a": EVICTED}
    report = drain(
        cluster_of(
            [node("a"), node("b")],
            [owned("web-a", "a")],
            [pdb("web", 1, {"app": "web"}), pdb("all", 1, {"app": "web"})],
        ),
        config(),
        ["a"],
    )
    [o] = report.nodes[0].pods
    assert o.action == BLOCKED and o.message == PDB_MULTIPLE


def test_replacements_go_highest_priority_first_and_the_rest_is_explained():
    pods = [owned("low", "a", cpu="3", priority=10), owned("high", "a", cpu="3", priority=1000)]
    report = drain(cluster_of([node("a"), node("b")], pods), config(), ["a"])
    assert [o.pod.key for o in report.evicted] == ["shop/high", "shop/low"]
    high, low = report.evicted
    assert high.result.selected_node == "b" and not low.result.schedulable
    assert low.result.message.startswith("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable")
    assert not report.drainable() and "fits nowhere" in report.nodes[0].problems()[0]


def test_preemption_is_reported_and_counts_only_when_allowed():
    pods = [owned("high", "a", cpu="3", priority=1000), owned("victim", "b", cpu="3", priority=1, owner="x")]
    report = drain(cluster_of([node("a"), node("b")], pods), config(), ["a"])
    [o] = report.evicted
    assert o.result.preemption.nominated_node == "b" and o.result.preemption.victims == ["shop/victim"]
    assert not report.drainable() and report.drainable(allow_preemption=True)


def test_selectors_pick_the_nodes_and_unknown_nodes_are_errors():
    c = cluster_of([node("a", labels={"pool": "old"}), node("b", labels={"pool": "old"}), node("c")], [])
    report = drain(c, config(), ["pool=old"])
    assert [n.name for n in report.nodes] == ["a", "b"] and report.drainable()
    with pytest.raises(InputError, match="no node named 'zz'"):
        drain(cluster_of([node("a")], []), config(), ["zz"])


# -------------------------------------------------------------------------- the CLI


def run(*args):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})


def test_cli_drain_on_prod_reports_the_budgets_and_validates():
    r = run("drain", "general-a-01", "-c", PROD, "--no-color")
    assert r.exit_code == 1
    assert "eviction of shop/api-5c6d7e8f9-00aa refused" in r.stdout
    assert "The disruption budget api needs 4 healthy pods and has 4 currently" in r.stdout
    assert "ignoring DaemonSet-managed Pods: kube-system/kube-proxy-ga01, monitoring/node-exporter-ga01" in r.stdout
    schema = json.loads(run("schema").stdout)
    r = run("drain", "pool=general", "-c", PROD, "--uncordon", "general-a-01", "-o", "json")
    doc = json.loads(r.stdout)
    assert not list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert doc["edits"][0]["flag"] == "--uncordon" and len(doc["drain"]["nodes"]) == 15
    assert r.exit_code == (0 if doc["drain"]["drainable"] else 1)


def test_cli_drain_that_can_move_everything_exits_0():
    r = run("drain", "highmem-b-01", "-c", PROD, "--no-color")
    assert r.exit_code == 0, r.stdout
    assert "✔ every node can be drained" in r.stdout
    doc = json.loads(run("drain", "highmem-b-01", "-c", PROD, "-o", "json").stdout)
    assert doc["drain"]["drainable"] and [e["verdict"] for e in doc["drain"]["evicted"]] == ["schedulable"]
    r = run("drain", "nope", "-c", PROD)
    assert r.exit_code == 2 and r.stderr.startswith("ksched: NODE: no node named 'nope'")
