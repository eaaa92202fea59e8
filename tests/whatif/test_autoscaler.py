"""`ksched scale-up` (kschedcli/whatif/autoscaler.py): cluster-autoscaler v1.34's filter-out-
schedulable, template nodes, binpacking estimate and expanders, on hand-built clusters; the CLI's
JSON (against the schema), table, exit status and bad input."""

from __future__ import annotations

import json
from importlib import resources as ilres

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from kschedcli import Session
from kschedcli.cli.app import app
from kschedcli.errors import InputError


def node(name, cpu="4", memory="16Gi", labels=None, taints=None, extra=None):
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", **(extra or {})}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def pod(name, cpu="1", memory="1Gi", node_name=None, labels=None, spec=None, owner=None, extra_requests=None):
    meta = {"name": name, "namespace": "default", "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": f"uid-{owner[1]}", "controller": True}
        ]
    requests = {"cpu": cpu, "memory": memory, **(extra_requests or {})}
    s = {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": requests}}], **(spec or {})}
    if node_name:
        s["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": s,
        "status": {
            "phase": "Running" if node_name else "Pending",
            **({"startTime": "2024-01-01T00:00:00Z"} if node_name else {}),
        },
    }


def group(name, template, current=1, max_size=10, price=None, priority=None):
    g = {"name": name, "templateNode": template, "minSize": 0, "maxSize": max_size, "currentSize": current}
    if price is not None:
        g["pricePerHour"] = price
    if priority is not None:
        g["priority"] = priority
    return g


def write(tmp_path, cluster, pods, groups):
    c, p, g = tmp_path / "cluster.yaml", tmp_path / "pods.yaml", tmp_path / "groups.yaml"
    c.write_text(yaml.safe_dump_all(cluster))
    p.write_text(yaml.safe_dump_all(pods))
    g.write_text(yaml.safe_dump({"nodeGroups": groups}))
    return str(c), str(p), str(g)


def run(tmp_path, cluster, pods, groups, expanders=None):
    c, p, g = write(tmp_path, cluster, pods, groups)
    return Session([c], kubernetes_version="v1.34").scale_up(p, node_groups=g, expanders=expanders)


def by_group(doc):
    return {g["name"]: g for g in doc["nodeGroups"]}


def test_pods_that_fit_existing_nodes_need_no_node(tmp_path):
    # 4 cpu node, 1 cpu taken: 3 more pods of 1 cpu fit; the 4th and 5th need a new node
    cluster = [node("a-1"), pod("used", node_name="a-1")]
    pods = [pod(f"w-{i}") for i in range(5)]
    d = run(tmp_path, cluster, pods, [group("a", "a-1")]).to_dict()
    assert d["fitsExistingNodes"] == ["default/w-0", "default/w-1", "default/w-2"]
    assert by_group(d)["a"]["newNodes"] == 1
    assert set(by_group(d)["a"]["podsHelped"]) == {"default/w-3", "default/w-4"}


def test_binpacking_counts_nodes_and_stops_at_the_group_max(tmp_path):
    # a full node; 9 pods of 1.5 cpu: two a 4-cpu node, so 5 nodes; max 4, current 1: only 3 nodes
    cluster = [node("a-1"), pod("used", cpu="4", node_name="a-1")]
    pods = [pod(f"w-{i}", cpu="1500m") for i in range(9)]
    su = run(
        tmp_path, cluster, pods, [group("a", "a-1", current=1, max_size=4), group("b", "a-1", current=1, max_size=20)]
    )
    d = su.to_dict()
    assert by_group(d)["a"]["newNodes"] == 3
    assert len(by_group(d)["a"]["podsHelped"]) == 6
    assert all("may add 3 nodes" in p["reason"] for p in by_group(d)["a"]["podsNotHelped"])
    assert by_group(d)["b"]["newNodes"] == 5
    assert su.exit_code() == 0  # group b helps every pod


def test_a_group_at_its_max_size_is_skipped(tmp_path):
    cluster = [node("a-1"), pod("used", cpu="4", node_name="a-1")]
    su = run(tmp_path, cluster, [pod("w")], [group("a", "a-1", current=3, max_size=3)])
    d = su.to_dict()
    assert by_group(d)["a"]["skipped"] == "max size reached (3)"
    assert by_group(d)["a"]["newNodes"] == 0
    assert d["unhelped"] == [{"pod": "default/w", "reasons": {"a": "max size reached (3)"}}]
    assert d["expanders"]["least-nodes"] is None
    assert su.exit_code() == 1


def test_pods_no_group_can_take_are_named_with_each_groups_reason(tmp_path):
    cluster = [
        node("plain-1"),
        node("gpu-1", taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}], labels={"pool": "gpu"}),
        pod("p1", cpu="4", node_name="plain-1"),
        pod("p2", cpu="4", node_name="gpu-1"),
    ]
    pods = [
        pod("huge", cpu="64"),
        pod("picky", spec={"nodeSelector": {"disk": "ssd"}}),
        pod("tolerant", spec={"tolerations": [{"key": "gpu", "operator": "Exists"}], "nodeSelector": {"pool": "gpu"}}),
    ]
    su = run(tmp_path, cluster, pods, [group("plain", "plain-1"), group("gpu", "gpu-1")])
    d = su.to_dict()
    unhelped = {u["pod"]: u["reasons"] for u in d["unhelped"]}
    assert set(unhelped) == {"default/huge", "default/picky"}
    assert "Insufficient cpu" in unhelped["default/huge"]["plain"]
    assert "NodeAffinity" in unhelped["default/picky"]["plain"]
    assert "TaintToleration" in unhelped["default/picky"]["gpu"] or "NodeAffinity" in unhelped["default/picky"]["gpu"]
    not_plain = {p["pod"]: p["reason"] for p in by_group(d)["plain"]["podsNotHelped"]}
    assert "NodeAffinity" in not_plain["default/tolerant"]
    assert by_group(d)["gpu"]["podsHelped"] == ["default/tolerant"]
    assert su.exit_code() == 1


def test_a_taint_keeps_pods_off_a_group(tmp_path):
    cluster = [
        node("t-1", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
        pod("used", cpu="4", node_name="t-1", spec={"tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
    ]
    d = run(tmp_path, cluster, [pod("w")], [group("t", "t-1")]).to_dict()
    assert by_group(d)["t"]["newNodes"] == 0
    assert "untolerated taint" in d["unhelped"][0]["reasons"]["t"]


def _daemon(name, node_name, cpu):
    return pod(name, cpu=cpu, memory="1Gi", node_name=node_name, owner=("DaemonSet", "agent"))


def test_daemonset_pods_of_the_example_node_take_room_on_every_new_node(tmp_path):
    # 4-cpu nodes; the agent's 1 cpu leaves 3: two pods of 1.5 cpu a new node
    cluster = [node("a-1"), _daemon("agent-a1", "a-1", "1"), pod("full", cpu="3", node_name="a-1")]
    pods = [pod(f"w-{i}", cpu="1500m") for i in range(4)]
    d = run(tmp_path, cluster, pods, [group("a", "a-1")]).to_dict()
    # without the agent two pods would share a node (2 nodes); with it, 3 cpu left: still 2 a node
    assert by_group(d)["a"]["newNodes"] == 2
    cluster[1] = _daemon("agent-a1", "a-1", "1500m")  # 2.5 cpu left: one pod a node
    d = run(tmp_path, cluster, pods, [group("a", "a-1")]).to_dict()
    assert by_group(d)["a"]["newNodes"] == 4
    # a plain pod of the example node is not copied to the new nodes
    cluster[1] = pod("not-a-daemon", cpu="1500m", node_name="a-1")
    d = run(tmp_path, cluster, pods, [group("a", "a-1")]).to_dict()
    assert by_group(d)["a"]["newNodes"] == 2


def test_required_anti_affinity_on_hostname_puts_one_pod_a_node(tmp_path):
    anti = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    }
    cluster = [node("w-1"), pod("db-old", cpu="100m", node_name="w-1", labels={"app": "db"}, spec=anti)]
    pods = [pod(f"db-{i}", cpu="100m", labels={"app": "db"}, spec=anti, owner=("StatefulSet", "db")) for i in range(5)]
    d = run(tmp_path, cluster, pods, [group("w", "w-1", current=1, max_size=5)]).to_dict()
    assert d["fitsExistingNodes"] == []
    g = by_group(d)["w"]
    assert g["newNodes"] == 4
    assert all(len(pods_on) == 1 for pods_on in g["newNodePods"])
    assert len(g["podsHelped"]) == 4 and len(g["podsNotHelped"]) == 1


def _two_groups(tmp_path, small_price=0.2, large_price=0.8, small_prio=None, large_prio=None, pods=None):
    cluster = [
        node("small-1", cpu="2", memory="8Gi"),
        node("large-1", cpu="8", memory="32Gi"),
        pod("s", cpu="2", memory="1Gi", node_name="small-1"),
        pod("l", cpu="8", memory="1Gi", node_name="large-1"),
    ]
    pods = pods or [pod(f"api-{i}", cpu="1", memory="2Gi", owner=("ReplicaSet", "api")) for i in range(8)]
    groups = [
        group("small", "small-1", price=small_price, priority=small_prio),
        group("large", "large-1", price=large_price, priority=large_prio),
    ]
    return run(tmp_path, cluster, pods, groups).to_dict()


def test_least_nodes_most_pods_and_least_waste(tmp_path):
    d = _two_groups(tmp_path)
    assert by_group(d)["small"]["newNodes"] == 4 and by_group(d)["large"]["newNodes"] == 1
    assert d["expanders"]["least-nodes"] == "large"
    assert d["expanders"]["most-pods"] == ["large", "small"]  # both help all 8: a tie
    # no cpu wasted on either (8 cpu asked of 4 × 2 and of 1 × 8), memory 16Gi of 32Gi on both: a tie
    assert d["expanders"]["least-waste"] == ["large", "small"]
    assert d["expanders"]["random"] == ["large", "small"]
    # with pods that leave more room on the large node, least-waste prefers small
    pods = [pod(f"api-{i}", cpu="1500m", memory="2Gi", owner=("ReplicaSet", "api")) for i in range(3)]
    d = _two_groups(tmp_path, pods=pods)
    # small: 3 nodes (1 pod each, 0.5 cpu left each), large: 1 node (3.5 cpu left)
    assert by_group(d)["small"]["newNodes"] == 3 and by_group(d)["large"]["newNodes"] == 1
    assert d["expanders"]["least-waste"] == "small"


def test_price_prefers_the_cheaper_group_and_priority_the_highest(tmp_path):
    d = _two_groups(tmp_path, small_price=0.2, large_price=0.8, small_prio=1, large_prio=5)
    assert d["expanders"]["price"] == "small"  # a 2-node cluster prefers 1-cpu nodes: 2 cpu fit it better than 8
    assert d["expanders"]["priority"] == "large"
    d = _two_groups(tmp_path, small_price=0.5, large_price=0.4, small_prio=5, large_prio=5)
    assert d["expanders"]["price"] == "large"
    assert d["expanders"]["priority"] == ["large", "small"]


def test_expander_chain(tmp_path):
    c, p, g = write(
        tmp_path,
        [node("small-1", cpu="2"), node("large-1", cpu="8", memory="32Gi")],
        [pod(f"api-{i}", cpu="1", memory="1Gi", owner=("ReplicaSet", "api")) for i in range(20)],
        [group("small", "small-1", price=0.2, priority=1), group("large", "large-1", price=0.8, priority=1)],
    )
    su = Session([c], kubernetes_version="v1.34").scale_up(p, node_groups=g, expanders=["priority", "least-nodes"])
    d = su.to_dict()
    assert set(d["expanders"]) == {"priority", "least-nodes"}
    assert d["chosen"]["groups"] == ["large"]


def test_unknown_expander_and_bad_group_file_are_bad_input(tmp_path):
    c, p, g = write(tmp_path, [node("a-1")], [pod("w")], [group("a", "a-1")])
    with pytest.raises(InputError, match="not an expander"):
        Session([c]).scale_up(p, node_groups=g, expanders=["cheapest"])
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"nodeGroups": [{"name": "a", "templateNode": "nope", "maxSize": 3}]}))
    with pytest.raises(InputError, match="no node 'nope'"):
        Session([c]).scale_up(p, node_groups=str(bad))
    bad.write_text(yaml.safe_dump({"nodeGroups": [{"name": "a", "templateNode": "a-1", "maxSize": -1}]}))
    with pytest.raises(InputError, match="maxSize"):
        Session([c]).scale_up(p, node_groups=str(bad))


def test_groups_inferred_from_node_pool_labels(tmp_path):
    cluster = [
        node("n-1", labels={"eks.amazonaws.com/nodegroup": "general"}),
        node("n-2", labels={"eks.amazonaws.com/nodegroup": "general"}),
        node("m-1", labels={"node.kubernetes.io/instance-type": "m5.large", "topology.kubernetes.io/zone": "z1"}),
        pod("a", cpu="4", node_name="n-1"),
        pod("b", cpu="4", node_name="n-2"),
        pod("c", cpu="4", node_name="m-1"),
    ]
    c, p, _ = write(tmp_path, cluster, [pod("w")], [])
    d = Session([c], kubernetes_version="v1.34").scale_up(p).to_dict()
    g = by_group(d)
    assert set(g) == {"general", "m5.large/z1"}
    assert g["general"]["currentSize"] == 2 and g["general"]["inferredFrom"] == "eks.amazonaws.com/nodegroup"
    assert g["general"]["newNodes"] == 1


def test_groups_inferred_from_the_beta_instance_type_and_zone_labels(tmp_path):
    # nodes exported from a cluster older than v1.17 carry only the beta labels
    beta = {"beta.kubernetes.io/instance-type": "n1-standard-4", "failure-domain.beta.kubernetes.io/zone": "b"}
    cluster = [node("w-1", labels=beta), node("w-2", labels=beta), pod("a", cpu="4", node_name="w-1")]
    c, p, _ = write(tmp_path, cluster, [pod("w", cpu="4")], [])
    g = by_group(Session([c], kubernetes_version="v1.34").scale_up(p).to_dict())
    assert set(g) == {"n1-standard-4/b"} and g["n1-standard-4/b"]["currentSize"] == 2
    assert g["n1-standard-4/b"]["inferredFrom"] == "node.kubernetes.io/instance-type+topology.kubernetes.io/zone"
    sd = Session([c], kubernetes_version="v1.34").scale_down().to_dict()
    assert [(n["node"], n["nodeGroup"]) for n in sd["nodes"] if n["removable"]] == [("w-2", "n1-standard-4/b")]


def test_a_control_plane_node_is_in_no_inferred_group(tmp_path):
    # an OpenShift or kubeadm master of the workers' instance type: cluster-autoscaler never
    # removes it, nor makes new ones from it
    labels = {"node.kubernetes.io/instance-type": "m5.xlarge", "topology.kubernetes.io/zone": "a"}
    for role in ("node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"):
        master = node("a-master", labels={**labels, role: ""})
        cluster = [master, node("w-1", labels=labels), node("w-2", labels=labels), pod("a", cpu="4", node_name="w-1")]
        c, p, _ = write(tmp_path, cluster, [pod("w", cpu="4")], [])
        g = by_group(Session([c], kubernetes_version="v1.34").scale_up(p).to_dict())
        assert g["m5.xlarge/a"]["currentSize"] == 2
        sd = Session([c], kubernetes_version="v1.34").scale_down().to_dict()
        verdicts = {n["node"]: n for n in sd["nodes"]}
        assert not verdicts["a-master"]["removable"]
        assert verdicts["a-master"]["reason"] == "in no node group (not autoscaled)"
        assert verdicts["w-2"]["removable"]


def _validator():
    schema = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def test_cli_json_validates_and_exit_status(tmp_path):
    c, p, g = write(
        tmp_path,
        [node("a-1"), pod("used", cpu="4", node_name="a-1")],
        [pod("w"), pod("huge", cpu="64")],
        [group("a", "a-1", price=0.2, priority=1)],
    )
    r = CliRunner().invoke(app, ["scale-up", p, "-c", c, "--node-groups", g, "-o", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    _validator().validate(doc)
    assert doc["unhelped"][0]["pod"] == "default/huge"
    r = CliRunner().invoke(app, ["scale-up", p, "-c", c, "--node-groups", g, "--expander", "nope"])
    assert r.exit_code == 2
    assert "not an expander" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("width", [80, 132, 200])
def test_table_at_widths_with_long_names(tmp_path, width, monkeypatch):
    long = "ip-10-0-0-1.eu-west-1.compute.internal-" + "x" * 21  # 60 characters
    assert len(long) == 60
    c, p, g = write(
        tmp_path,
        [node(long), pod("used", cpu="4", node_name=long)],
        [pod("w-" + "y" * 50), pod("huge", cpu="64")],
        [group("group-" + "z" * 54, long, price=0.2, priority=1)],
    )
    monkeypatch.setenv("COLUMNS", str(width))
    r = CliRunner().invoke(app, ["scale-up", p, "-c", c, "--node-groups", g, "--no-color"], terminal_width=width)
    assert r.exit_code == 1, r.output
    lines = r.stdout.splitlines()
    assert max(len(x) for x in lines) <= width
    assert any(("group-" + "z" * 54) in x for x in lines)
    assert any(("w-" + "y" * 50) in x for x in lines) or "default/huge" in r.stdout
    assert "Unhelped" in r.stdout


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("nodeGroups: 3", "nodeGroups: expected a list under nodeGroups"),
        ("nodeGroups: [{name: a, templateNode: a-1, maxSize: x}]", "node group a: maxSize: 'x' is not a whole number"),
        ("nodeGroups: [{name: a, templateNode: a-1, colour: x}]", "node group a: colour: unknown field"),
        ("nodeGroups: [{name: a, template: {metadata: {}}}]", "node group a: template.metadata.name: is required"),
        ("nodeGroups: [{name: a, templateNode: a-1}, {name: a, templateNode: a-1}]", "given twice"),
        ("nodeGroups: [{name: a}]", "give templateNode or template"),
        ("nodeGroups: [{name: a, templateNode: a-1, pricePerHour: -1}]", "pricePerHour: -1 is not a price"),
        ("nodeGroups: [{name: a, templateNode: a-1, pricePerHour: .nan}]", "pricePerHour: nan is not a price"),
        ("nodeGroups: [{name: a, templateNode: a-1, pricePerHour: .inf}]", "pricePerHour: inf is not a price"),
    ],
)
def test_bad_node_group_files_say_one_line(tmp_path, text, says):
    c, p, _ = write(tmp_path, [node("a-1")], [pod("w")], [])
    bad = tmp_path / "groups.yaml"
    bad.write_text(text)
    r = CliRunner().invoke(app, ["scale-up", p, "-c", c, "--node-groups", str(bad)])
    assert r.exit_code == 2
    assert says in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert "Traceback" not in r.output


def test_equivalence_groups_ignore_token_volumes_hostname_and_env():
    from kschedcli.api.model import Pod
    from kschedcli.whatif.autoscaler import equivalence_groups

    def replica(i, cpu="1"):
        raw = pod(f"r-{i}", cpu=cpu, owner=("ReplicaSet", "web"), labels={"app": "web"})
        raw["spec"]["volumes"] = [{"name": f"kube-api-access-{i}x", "projected": {"sources": []}}]
        raw["spec"]["hostname"] = f"r-{i}"
        c = raw["spec"]["containers"][0]
        c["env"] = [{"name": "POD", "value": str(i)}]
        c["volumeMounts"] = [{"name": f"kube-api-access-{i}x", "mountPath": "/var/run/secrets"}]
        return Pod(raw)

    groups = equivalence_groups([replica(0), replica(1), replica(2, cpu="2"), Pod(pod("alone")), replica(3)])
    assert [[p.name for p in g] for g in groups] == [["r-0", "r-1", "r-3"], ["r-2"], ["alone"]]


def test_expendable_daemonset_and_nominated_pods_trigger_no_scale_up(tmp_path):
    cluster = [node("a-1"), pod("used", cpu="3", node_name="a-1")]
    low = pod("low", cpu="2", spec={"priority": -20})
    daemon = pod("agent-x", cpu="2", owner=("DaemonSet", "agent"))
    waiting = pod("waiting", cpu="1")
    waiting["status"]["nominatedNodeName"] = "a-1"
    after = pod("after", cpu="1")  # the nominated pod holds the last free cpu of a-1
    su = run(tmp_path, cluster, [low, daemon, waiting, after], [group("a", "a-1")])
    d = su.to_dict()
    ignored = {u["pod"]: u["reason"] for u in d["ignored"]}
    assert ignored["default/low"].startswith("expendable")
    assert ignored["default/agent-x"].startswith("a DaemonSet's pod")
    assert ignored["default/waiting"].startswith("waits for preemption on a-1")
    assert d["fitsExistingNodes"] == []
    assert by_group(d)["a"]["podsHelped"] == ["default/after"]
    assert su.exit_code() == 1  # the expendable and the DaemonSet pod stay pending


# ---------------------------------------------------------------------------- scale-down


def down(tmp_path, cluster, groups=None, threshold=None):
    c, _, g = write(tmp_path, cluster, [pod("unused")], groups or [])
    return Session([c], kubernetes_version="v1.34").scale_down(node_groups=g if groups else None, threshold=threshold)


def verdicts(d):
    return {n["node"]: n for n in d["nodes"]}


POOL = {"eks.amazonaws.com/nodegroup": "pool"}


def test_scale_down_takes_nodes_one_after_another(tmp_path):
    # three 4-cpu nodes: n-1 busy; n-2 and n-3 hold 1.5 cpu each: n-2's pod moves to n-3, then
    # n-3's pod has nowhere to go (n-1 full, n-2 gone)
    rs = ("ReplicaSet", "web")
    cluster = [
        node("n-1", labels=POOL),
        node("n-2", labels=POOL),
        node("n-3", labels=POOL),
        pod("busy", cpu="3500m", node_name="n-1", owner=rs),
        pod("a", cpu="1500m", node_name="n-2", owner=rs),
        pod("b", cpu="1500m", node_name="n-3", owner=rs),
    ]
    su = down(tmp_path, cluster)
    d = su.to_dict()
    v = verdicts(d)
    assert d["removable"] == ["n-2"]
    assert v["n-2"]["moves"] == [{"pod": "default/a", "node": "n-3"}]
    assert v["n-1"]["reason"] == "above the 50% utilization threshold"
    assert v["n-3"]["reason"] == "no place to move pod default/b"
    assert su.exit_code() == 1  # a node can be removed (issue 32: 0 only when nothing is removable)
    _validator().validate(d)


def test_scale_down_blocking_pods_and_min_size(tmp_path):
    rs = ("ReplicaSet", "web")
    cluster = [node(f"n-{i}", labels=POOL) for i in range(1, 6)] + [
        pod("bare", node_name="n-1"),
        pod("sys", node_name="n-2", owner=rs),
        pod("scratch", node_name="n-3", owner=rs, spec={"volumes": [{"name": "s", "emptyDir": {}}]}),
        pod("pinned", node_name="n-4", owner=rs, labels={"app": "pinned"}),
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pinned", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "pinned"}}, "minAvailable": 1},
            "status": {"disruptionsAllowed": 0, "desiredHealthy": 1, "currentHealthy": 1, "expectedPods": 1},
        },
    ]
    cluster[6]["metadata"]["namespace"] = "kube-system"
    d = down(tmp_path, cluster).to_dict()
    v = verdicts(d)
    assert "not replicated" in v["n-1"]["reason"] and v["n-1"]["blockingPod"] == "default/bare"
    assert "kube-system pod without a PodDisruptionBudget" in v["n-2"]["reason"]
    assert "local storage" in v["n-3"]["reason"]
    assert "PodDisruptionBudget" in v["n-4"]["reason"]
    assert d["removable"] == ["n-5"]
    # a minimum size of 5 keeps every node
    groups = [{"name": "pool", "templateNode": "n-1", "minSize": 5, "maxSize": 10, "currentSize": 5}]
    d = down(tmp_path, cluster, groups).to_dict()
    assert d["removable"] == []
    assert verdicts(d)["n-5"]["reason"] == "node group pool at its minimum size (5)"


def test_scale_down_cli(tmp_path):
    c, _, _ = write(tmp_path, [node("n-1", labels=POOL), pod("busy", cpu="4", node_name="n-1")], [pod("x")], [])
    r = CliRunner().invoke(app, ["scale-down", "-c", c, "-o", "json"])
    assert r.exit_code == 0  # nothing removable
    assert json.loads(r.stdout)["removable"] == []
    r = CliRunner().invoke(app, ["scale-down", "-c", c, "--utilization-threshold", "2"])
    assert r.exit_code == 2 and "between 0 and 1" in r.output
    r = CliRunner().invoke(app, ["scale-down", "-c", c, "--no-color"], terminal_width=80)
    assert r.exit_code == 0 and "n-1" in r.stdout and "above the 50% utilization threshold" in r.stdout
