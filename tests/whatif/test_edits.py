"""Cluster edits (kschedcli/whatif/edits.py): each edit on small hand-built clusters, their order, their
errors, and the CLI flags on the fixtures (stated in the output, validated JSON)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from builders import node, pod
from typer.testing import CliRunner

from kschedcli.api.labels import parse_selector
from kschedcli.api.model import Pod
from kschedcli.cli.app import app
from kschedcli.config.scheduler import SchedulerConfig, build_profile
from kschedcli.errors import InputError
from kschedcli.inputs.cluster import Cluster
from kschedcli.plugins import REGISTRY
from kschedcli.scheduling.scheduler import Scheduler
from kschedcli.whatif.edits import Edit, apply_edits, ordered_edits

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")


def ds_pod(name, node_name, ds="agent"):
    raw = {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "kube-system",
            "uid": name,
            "ownerReferences": [{"kind": "DaemonSet", "name": ds, "controller": True}],
        },
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                        ]
                    }
                }
            },
        },
        "status": {"phase": "Running"},
    }
    return Pod(raw)


def rs_pod(name, node_name, rs="web-1234", ns="shop"):
    p = pod(name, ns=ns, node_name=node_name, requests={"cpu": "1"})
    raw = copy.deepcopy(p.raw)
    raw["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": rs, "controller": True}]
    return Pod(raw)


def cluster_of(nodes, pods=()):
    c = Cluster()
    c.nodes = list(nodes)
    c.pods = list(pods)
    return c


def three_nodes():
    nodes = [
        node(
            "a1",
            labels={"pool": "general", "zone": "a"},
            taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}],
            images=[{"names": ["app:1"], "sizeBytes": 100}],
        ),
        node("a2", labels={"pool": "general", "zone": "b"}),
        node("g1", labels={"pool": "gpu", "zone": "a"}),
    ]
    pods = [ds_pod("agent-x", "a1"), rs_pod("web-1", "a1"), rs_pod("web-2", "a2"), pod("bare", node_name="a1")]
    c = cluster_of(nodes, pods)
    deployment = {"kind": "Deployment", "name": "web", "controller": True}
    c.objects["ReplicaSet"][("shop", "web-1234")] = {
        "kind": "ReplicaSet",
        "metadata": {"name": "web-1234", "namespace": "shop", "ownerReferences": [deployment]},
    }
    return c


def scheduler_of(c):
    profile = build_profile({"schedulerName": "default-scheduler"}, "t", REGISTRY)
    return Scheduler(c, SchedulerConfig(profiles=[profile]))


def apply(c, *pairs):
    return apply_edits(c, [Edit(f, v) for f, v in pairs])


# -------------------------------------------------------------------------- label selectors


@pytest.mark.parametrize(
    "text,labels,want",
    [
        ("pool=general", {"pool": "general"}, True),
        ("pool==general", {"pool": "gpu"}, False),
        ("pool!=gpu", {}, True),
        ("pool", {"pool": ""}, True),
        ("!pool", {"pool": "x"}, False),
        ("zone in (a, b),pool notin (gpu)", {"zone": "b", "pool": "general"}, True),
        ("zone in (a,b), pool notin (gpu)", {"zone": "c", "pool": "general"}, False),
        ("rank>2", {"rank": "3"}, True),
        ("rank<2", {"rank": "3"}, False),
        ("pool=", {"pool": ""}, True),
        ("", {"x": "y"}, True),
    ],
)
def test_selector_strings_match_as_labels_parse(text, labels, want):
    assert parse_selector(text).matches(labels) is want


@pytest.mark.parametrize("text", ["pool in ()", "pool in (a", "a=b c=d", "pool=a,", "rank>x", "-bad-=x", "=x"])
def test_malformed_selector_strings_are_refused(text):
    with pytest.raises(ValueError):
        parse_selector(text)


# -------------------------------------------------------------------------- each edit


def test_add_node_copies_the_node_and_only_its_daemonset_pods():
    c = three_nodes()
    a1_raw = copy.deepcopy(c.nodes[0].raw)
    [applied] = apply(c, ("--add-node", "a1:2"))
    names = [n.name for n in c.nodes]
    assert names == ["a1", "a2", "g1", "a1-copy-1", "a1-copy-2"]
    copy1 = c.nodes[3]
    assert copy1.labels["kubernetes.io/hostname"] == "a1-copy-1" and copy1.labels["pool"] == "general"
    assert copy1.allocatable.milli_cpu == 4000 and [str(t) for t in copy1.taints] == ["k=v:NoSchedule"]
    assert copy1.images == c.nodes[0].images
    assert c.nodes[0].raw == a1_raw  # the source object is not modified
    added = [p for p in c.pods if p.node_name.startswith("a1-copy")]
    assert sorted(p.key for p in added) == ["kube-system/agent-a1-copy-1", "kube-system/agent-a1-copy-2"]
    terms = added[0].required_node_affinity
    assert terms is not None
    assert applied.nodes == ["a1-copy-1", "a1-copy-2"] and len(applied.pods_added) == 2
    # the copies are real nodes: a pod tolerating k fits there, and the copied DaemonSet pod counts
    sched = scheduler_of(c)
    assert sched.snapshot.get("a1-copy-1").requested.milli_cpu == 100


def test_add_node_numbers_on_and_takes_a_selector():
    c = three_nodes()
    apply(c, ("--add-node", "a1"), ("--add-node", "pool=general"))
    # the selector also matches the first copy (it carries the pool label)
    assert [n.name for n in c.nodes][3:] == ["a1-copy-1", "a1-copy-2", "a2-copy-1", "a1-copy-1-copy-1"]


def test_add_node_from_a_file(tmp_path):
    c = three_nodes()
    f = tmp_path / "new.yaml"
    f.write_text(
        "kind: Node\nmetadata: {name: fresh, labels: {pool: new}}\n"
        "status: {allocatable: {cpu: '8', memory: 16Gi, pods: '110'}}\n"
    )
    [applied] = apply(c, ("--add-node", str(f)))
    assert c.nodes[-1].name == "fresh" and applied.nodes == ["fresh"]
    f.write_text("kind: Node\nmetadata: {name: a1}\n")
    with pytest.raises(InputError, match="already in the cluster") as e:
        apply(three_nodes(), ("--add-node", str(f)))
    assert e.value.field == "--add-node"


def test_add_node_file_gets_the_pods_of_the_daemonsets_that_select_it(tmp_path):
    c = three_nodes()
    template = {
        "metadata": {"labels": {"app": "agent"}},
        "spec": {
            "nodeSelector": {"pool": "new"},
            "containers": [{"name": "a", "image": "agent:1", "resources": {"requests": {"cpu": "100m"}}}],
        },
    }
    c.objects["DaemonSet"][("kube-system", "agent")] = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template},
    }
    f = tmp_path / "new.yaml"
    f.write_text(
        "kind: Node\nmetadata: {name: fresh, labels: {pool: new}}\n"
        "status: {allocatable: {cpu: '8', memory: 16Gi, pods: '110'}}\n---\n"
        "kind: Node\nmetadata: {name: other, labels: {pool: old}}\n"
        "status: {allocatable: {cpu: '8', memory: 16Gi, pods: '110'}}\n"
    )
    [applied] = apply(c, ("--add-node", str(f)))
    # only the node the DaemonSet's selector takes gets its pod, bound there; no pod for the old nodes
    added = [p for p in c.pods if p.key in applied.pods_added]
    placed = [(p.node_name, p.namespace, p.controller_ref()["name"]) for p in added]
    assert placed == [("fresh", "kube-system", "agent")]
    assert "with 1 DaemonSet pod" in applied.summary
    sched = scheduler_of(c)
    assert sched.snapshot.get("fresh").requested.milli_cpu == 100
    assert sched.snapshot.get("other").requested.milli_cpu == 0


def test_remove_node_takes_its_pods_and_names_the_workloads():
    c = three_nodes()
    [applied] = apply(c, ("--remove-node", "a1"))
    assert [n.name for n in c.nodes] == ["a2", "g1"]
    assert sorted(p.key for p in c.pods) == ["shop/web-2"]
    assert applied.replicas_lost == {
        "DaemonSet kube-system/agent": 1,
        "Deployment shop/web": 1,
        "bare pods (no controller)": 1,
    }
    assert "3 pods" in applied.summary


def test_cordon_sets_unschedulable_and_its_taint_and_uncordon_clears_both():
    c = three_nodes()
    apply(c, ("--cordon", "zone=a"))
    a1, g1 = c.nodes[0], c.nodes[2]
    assert a1.unschedulable and g1.unschedulable and not c.nodes[1].unschedulable
    assert "node.kubernetes.io/unschedulable:NoSchedule" in [str(t) for t in g1.taints]
    sched = scheduler_of(c)
    r = sched.schedule(pod("new", requests={"cpu": "1"}))
    assert r.selected_node == "a2"
    assert r.filters["g1"].first_failure.plugin == "NodeUnschedulable"
    apply(c, ("--uncordon", "g1"))
    assert not c.nodes[2].unschedulable and not c.nodes[2].taints


def test_taint_adds_replaces_and_removes_as_kubectl():
    c = three_nodes()
    apply(c, ("--taint", "a1:k=w:NoSchedule"), ("--taint", "pool=general:dedicated:NoExecute"))
    assert [str(t) for t in c.nodes[0].taints] == ["k=w:NoSchedule", "dedicated:NoExecute"]
    assert [str(t) for t in c.nodes[1].taints] == ["dedicated:NoExecute"]
    apply(c, ("--taint", "a1:k-"), ("--taint", "a2:dedicated:NoExecute-"))
    assert [str(t) for t in c.nodes[0].taints] == ["dedicated:NoExecute"] and not c.nodes[1].taints
    with pytest.raises(InputError, match="not found") as e:
        apply(c, ("--taint", "g1:k-"))
    assert e.value.field == "--taint"
    for bad in ("a1:k=v:Sometimes", "a1:k=v", "a1", "a1:Bad Key:NoSchedule"):
        with pytest.raises(InputError):
            apply(three_nodes(), ("--taint", bad))


def test_label_sets_and_removes():
    c = three_nodes()
    apply(c, ("--label", "g1:pool=general"), ("--label", "a1:zone-"))
    assert c.nodes[2].labels["pool"] == "general" and "zone" not in c.nodes[0].labels
    # the new label is seen by the next edit's selector
    apply(c, ("--cordon", "pool=general"))
    assert all(n.unschedulable for n in c.nodes)


def test_evict_removes_one_bound_pod():
    c = three_nodes()
    [applied] = apply(c, ("--evict", "shop/web-2"))
    assert "shop/web-2" not in [p.key for p in c.pods]
    assert applied.replicas_lost == {"Deployment shop/web": 1} and applied.nodes == ["a2"]
    with pytest.raises(InputError, match="no pod shop/nope"):
        apply(c, ("--evict", "shop/nope"))


@pytest.mark.parametrize(
    "flag,value,message",
    [
        ("--cordon", "nowhere", "no node named 'nowhere'"),
        ("--cordon", "pool in (", "not a label selector"),
        ("--add-node", "a1:0", "COUNT must be at least 1"),
        ("--add-node", "a1:-1", "COUNT must be at least 1"),
        ("--label", "a1:bad key=x", "invalid key"),
        ("--evict", "web-2", "expected NAMESPACE/POD"),
    ],
)
def test_bad_edits_name_their_flag(flag, value, message):
    with pytest.raises(InputError, match=message) as e:
        apply(three_nodes(), (flag, value))
    assert e.value.field == flag


def test_edits_apply_in_command_line_order():
    values = {"--cordon": ["a", "b"], "--uncordon": ["a"]}
    order = ordered_edits(values, ["--cordon", "a", "--uncordon=a", "-c", "x", "--cordon", "b"])
    assert [str(e) for e in order] == ["--cordon a", "--uncordon a", "--cordon b"]
    # without the raw arguments: a fixed order, every value kept
    assert [str(e) for e in ordered_edits(values, None)] == ["--cordon a", "--cordon b", "--uncordon a"]


# -------------------------------------------------------------------------- the CLI


def run(*args):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(run("schema").stdout)
    return jsonschema.Draft202012Validator(schema)


def test_cli_states_the_edits_and_their_order_matters():
    r = run("schedule", "-c", PROD, "--cordon", "pool=general", "--uncordon", "general-b-01", "--no-color")
    assert r.exit_code in (0, 1), r.output
    assert "Cluster edits" in r.stdout and "1. --cordon pool=general" in r.stdout
    assert "2. --uncordon general-b-01" in r.stdout
    placed = [line for line in r.stdout.splitlines() if "✔ " in line and "scheduled" not in line]
    assert placed and all("general-b-01" in line or "highmem" in line or "gpu" in line for line in placed)
    r2 = run("schedule", "-c", PROD, "--uncordon", "general-b-01", "--cordon", "pool=general", "--no-color")
    assert "1. --uncordon general-b-01" in r2.stdout
    assert "✔ 0 scheduled" in r2.stdout


def test_cli_json_carries_the_edits_and_validates(validator):
    r = run("schedule", "-c", PROD, "--add-node", "general-b-01:2", "--remove-node", "highmem-a-01", "-o", "json")
    doc = json.loads(r.stdout)
    assert not list(validator.iter_errors(doc))
    assert [e["flag"] for e in doc["edits"]] == ["--add-node", "--remove-node"]
    assert doc["edits"][0]["nodes"] == ["general-b-01-copy-1", "general-b-01-copy-2"]
    assert doc["edits"][1]["podsRemoved"]
    r = run(
        "explain",
        str(ROOT / "fixtures" / "pods" / "web.yaml"),
        "-c",
        SMALL,
        "--label",
        "kubernetes.io/os=linux:team=x",
        "-o",
        "json",
    )
    doc = json.loads(r.stdout)
    assert not list(validator.iter_errors(doc)) and doc["edits"][0]["flag"] == "--label"
    assert doc["edits"][0]["nodes"] and doc["nodeCount"] == len(doc["filters"])
    r = run("explain", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", SMALL, "--label", "pool=general:team=x")
    assert r.exit_code == 2 and r.stderr.startswith("ksched: --label: no node named 'pool=general'")


def test_cli_capacity_takes_edits(validator):
    web = str(ROOT / "fixtures" / "pods" / "web.yaml")
    before = json.loads(run("capacity", web, "-c", PROD, "-o", "json").stdout)
    after = json.loads(run("capacity", web, "-c", PROD, "--add-node", "general-b-01:3", "-o", "json").stdout)
    assert not list(validator.iter_errors(after)) and after["edits"][0]["flag"] == "--add-node"
    assert after["replicas"] > before["replicas"] and after["perNode"]["general-b-01-copy-1"] > 0
    assert "edits" not in before


def test_a_summary_lists_a_few_nodes_and_the_json_all():
    doc = json.loads(run("schedule", "-c", PROD, "--cordon", "pool=general", "-o", "json").stdout)
    [edit] = doc["edits"]
    assert len(edit["nodes"]) == 15 and ", … +7 more (1 already cordoned)" in edit["summary"]


def test_cli_without_edits_prints_no_edits():
    r = run("schedule", "-c", PROD, "-o", "json")
    assert "edits" not in json.loads(r.stdout)
    r = run("schedule", "-c", PROD, "--no-color")
    assert "Cluster edits" not in r.stdout


def test_cli_add_node_file_errors_name_the_flag(tmp_path):
    r = run("schedule", "-c", PROD, "--add-node", str(tmp_path / "missing.yaml"))
    assert r.exit_code == 2 and r.stderr.endswith(": --add-node: no such file\n")


def test_cli_bad_edit_is_one_line_exit_2():
    r = run("explain", "shop/checkout-6b8c9d7f5-h2j4k", "-c", PROD, "--taint", "general-a-01:k=v:Maybe")
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("ksched: --taint: ")


def test_a_mistyped_add_node_count_is_refused_not_run():
    # node:99999999999 would build nodes until memory ran out: refused in one line instead
    small, web = SMALL, str(ROOT / "fixtures" / "pods" / "web.yaml")
    r = CliRunner().invoke(app, ["explain", web, "-c", small, "--add-node", "node-a:99999999999"])
    assert r.exit_code == 2 and r.stderr.strip() == (
        "ksched: --add-node: 'node-a:99999999999': would add 99,999,999,999 nodes; the edits of one command "
        "add at most 10,000 nodes (Kubernetes supports clusters of up to 5,000 nodes)"
    ), r.output
    # a selector's nodes count too: every node of the cluster, 5,000 times
    r = CliRunner().invoke(app, ["explain", web, "-c", small, "--add-node", "kubernetes.io/os=linux:5000"])
    assert r.exit_code == 2 and "would add 15,000 nodes" in r.stderr, r.output
    r = CliRunner().invoke(app, ["explain", web, "-c", small, "--add-node", "node-a:10000", "-o", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["nodeCount"] == 10003, r.output[-500:]
