"""What would make it fit (kschedcli/fixes): pods blocked by each cause, the expected change found,
ranked first when it is the smallest, and verified the way a user would check it: the patch applied
to the pod file (or the edits given as flags) and `ksched explain` run on it gives exactly the
suggestion's result."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.whatif.fixes.mergepatch import apply_merge_patch, create_merge_patch


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


def node(name, cpu="4", memory="8Gi", labels=None, taints=None, unschedulable=False):
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    spec: dict = {"taints": taints or []}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def pod(name, cpu="1", memory="1Gi", node_name=None, labels=None, ns="default", **spec):
    c = {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if "ports" in spec:
        c["ports"] = spec.pop("ports")
    s = {"containers": [c], **spec}
    if node_name:
        s["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
        "spec": s,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def priority_class(name, value):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


class Case:
    def __init__(self, tmp_path, objects, pending):
        self.dir = tmp_path
        self.cluster = tmp_path / "cluster.yaml"
        self.cluster.write_text(yaml.safe_dump_all(objects))
        self.pod = pending
        self.pod_file = tmp_path / "pod.yaml"
        self.pod_file.write_text(yaml.safe_dump(pending))

    def explain(self, pod_file, *extra):
        r = run("explain", str(pod_file), "--cluster", str(self.cluster), "-o", "json", *extra)
        assert r.exit_code in (0, 1), r.output
        return json.loads(r.stdout)

    def suggestions(self, n=10):
        doc = self.explain(self.pod_file, "--fixes", str(n))
        assert not doc["schedulable"]
        return doc["suggestions"]

    def check(self, s, i=0):
        """Apply the suggestion as a user would; explain must say what the suggestion said."""
        f = self.pod_file
        if "patch" in s:
            f = self.dir / f"changed-{i}.yaml"
            f.write_text(yaml.safe_dump(apply_merge_patch(self.pod, s["patch"])))
        flags = [w for e in s.get("edits", ()) for w in e.split(" ", 1)]
        doc = self.explain(f, "--fixes", "0", *flags)
        got = {
            "schedulable": doc["schedulable"],
            "selectedNode": doc["selectedNode"],
            "feasibleNodes": doc["feasibleNodes"],
        }
        if "nominatedNode" in s["result"]:
            got["nominatedNode"] = doc["preemption"]["nominatedNode"]
            got["victims"] = doc["preemption"]["victims"]
        assert "suggestions" not in doc
        assert got == s["result"], s["summary"]

    def check_all(self, suggestions):
        for i, s in enumerate(suggestions):
            assert s["verified"] is True
            self.check(s, i)


def kinds(suggestions):
    return [s["kind"] for s in suggestions]


def test_merge_patch_round_trip():
    a = {"spec": {"tolerations": [{"key": "a"}], "nodeSelector": {"x": "1", "y": "2"}, "priority": 5}}
    b = {"spec": {"tolerations": [{"key": "a"}, {"key": "b"}], "nodeSelector": {"x": "1"}}}
    p = create_merge_patch(a, b)
    assert p == {"spec": {"tolerations": [{"key": "a"}, {"key": "b"}], "nodeSelector": {"y": None}, "priority": None}}
    assert apply_merge_patch(a, p) == b
    assert a["spec"]["priority"] == 5  # the original is left alone
    assert apply_merge_patch({"a": [1]}, {"a": {"b": 1}}) == {"a": {"b": 1}}


def test_a_taint_alone_in_the_way_is_tolerated_first(tmp_path):
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    case = Case(
        tmp_path,
        [node("small", cpu="1"), node("big-1", taints=[taint]), node("big-2", taints=[taint])],
        pod("p", cpu="2"),
    )
    found = case.suggestions()
    assert found[0]["kind"] == "toleration"
    assert found[0]["patch"] == {
        "spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]}
    }
    assert found[0]["result"]["feasibleNodes"] == ["big-1", "big-2"]
    assert "removeTaint" in kinds(found) and "addNode" not in kinds(found)  # a copy of small is too small
    case.check_all(found)


def test_the_cluster_own_taints_are_never_tolerated_nor_removed(tmp_path):
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    case = Case(tmp_path, [node("n1", taints=[not_ready])], pod("p"))
    found = case.suggestions()
    assert "toleration" not in kinds(found) and "removeTaint" not in kinds(found)


def test_a_toleration_patch_carries_the_whole_list(tmp_path):
    taint = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
    mine = {"key": "other", "operator": "Exists", "effect": "NoExecute"}
    case = Case(tmp_path, [node("n1", taints=[taint])], pod("p", tolerations=[mine]))
    found = case.suggestions()
    assert found[0]["patch"]["spec"]["tolerations"][0] == mine
    assert len(found[0]["patch"]["spec"]["tolerations"]) == 2
    case.check_all(found)


def test_a_node_selector_entry_no_node_has_is_dropped(tmp_path):
    case = Case(
        tmp_path,
        [node("n1", labels={"disk": "hdd"}), node("n2", labels={"disk": "hdd", "zone": "a"})],
        pod("p", nodeSelector={"disk": "ssd", "zone": "a"}),
    )
    found = case.suggestions()
    assert found[0]["kind"] == "nodeSelector"
    assert found[0]["patch"] == {"spec": {"nodeSelector": {"disk": None}}}
    assert found[0]["result"]["selectedNode"] == "n2"
    case.check_all(found)


def test_a_required_node_affinity_requirement_is_dropped(tmp_path):
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z9"]}]}]
            }
        }
    }
    case = Case(tmp_path, [node("n1", labels={"zone": "z1"})], pod("p", affinity=affinity))
    found = case.suggestions()
    assert found[0]["kind"] == "nodeAffinity"
    assert found[0]["patch"] == {"spec": {"affinity": {"nodeAffinity": None}}} or found[0]["patch"] == {
        "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}}
    }
    case.check_all(found)


def test_a_request_is_lowered_to_the_largest_free_amount(tmp_path):
    case = Case(
        tmp_path,
        [node("n1"), node("n2"), pod("a", cpu="3", node_name="n1"), pod("b", cpu="2500m", node_name="n2")],
        pod("p", cpu="2"),
    )
    found = case.suggestions()
    lower = [s for s in found if s["kind"] == "resources"]
    # n2 has 1.5 cpu free, the most of any node: the request goes down to that, memory untouched
    assert lower[0]["patch"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1500m", "memory": "1Gi"}
    assert lower[0]["result"]["selectedNode"] == "n2"
    case.check_all(found)


def test_a_request_is_lowered_when_it_is_the_only_way(tmp_path):
    case = Case(tmp_path, [node("n1"), pod("a", cpu="3", node_name="n1")], pod("p", cpu="2"))
    found = case.suggestions()
    lowered = [s for s in found if s["kind"] == "resources"]
    assert lowered[0]["patch"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1"
    assert lowered[0]["result"]["selectedNode"] == "n1"
    case.check_all(found)


def test_a_spread_constraint_is_relaxed(tmp_path):
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    case = Case(
        tmp_path,
        [
            node("a1", labels={"zone": "a"}),
            node("b1", labels={"zone": "b"}, cpu="1"),
            pod("w1", node_name="a1", labels={"app": "web"}, cpu="100m"),
            pod("filler", node_name="b1", cpu="1"),
        ],
        pod("p", labels={"app": "web"}, cpu="100m", topologySpreadConstraints=spread),
    )
    found = case.suggestions()
    assert found[0]["kind"] == "topologySpread"
    assert found[0]["patch"]["spec"]["topologySpreadConstraints"][0]["maxSkew"] == 2
    assert found[0]["result"]["selectedNode"] == "a1"
    case.check_all(found)


def test_a_required_anti_affinity_term_is_softened(tmp_path):
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    case = Case(
        tmp_path,
        [node("n1"), pod("db-0", node_name="n1", labels={"app": "db"})],
        pod("p", labels={"app": "db"}, affinity=anti),
    )
    found = case.suggestions()
    soft = [s for s in found if s["kind"] == "podAntiAffinity"]
    assert soft, kinds(found)
    anti_after = soft[0]["patch"]["spec"]["affinity"]["podAntiAffinity"]
    assert anti_after["requiredDuringSchedulingIgnoredDuringExecution"] is None
    assert anti_after["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"] == 100
    # a new node is a new hostname domain: smaller than giving up the spreading
    assert kinds(found)[0] == "addNode"
    case.check_all(found)


def test_host_ports_in_use_are_freed(tmp_path):
    port = [{"containerPort": 80, "hostPort": 8080}]
    case = Case(tmp_path, [node("n1"), pod("web", node_name="n1", ports=port)], pod("p", ports=port))
    found = case.suggestions()
    assert found[0]["kind"] == "hostPorts"
    assert found[0]["patch"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80}]
    case.check_all(found)


def test_a_higher_priority_class_lets_preemption_nominate(tmp_path):
    case = Case(
        tmp_path,
        [
            node("n1", cpu="2"),
            pod("low", node_name="n1", cpu="2", priorityClassName="low-prio"),
            priority_class("low-prio", 10),
            priority_class("high-prio", 1000),
            priority_class("system-high", 2000),
        ],
        pod("p", cpu="2", priorityClassName="low-prio"),
    )
    found = case.suggestions()
    prio = [s for s in found if s["kind"] == "priorityClass"]
    assert prio[0]["patch"] == {"spec": {"priorityClassName": "high-prio"}}
    assert prio[0]["result"]["nominatedNode"] == "n1" and prio[0]["result"]["victims"] == ["default/low"]
    assert all("system-" not in s["summary"] for s in found)
    case.check_all(found)


def test_a_cordoned_node_is_uncordoned(tmp_path):
    case = Case(tmp_path, [node("n1", unschedulable=True, taints=[])], pod("p"))
    found = case.suggestions()
    assert found[0]["kind"] == "uncordon" and found[0]["edits"] == ["--uncordon n1"]
    assert "toleration" not in kinds(found)  # never onto a cordoned node by tolerating it
    case.check_all(found)


def test_a_pod_that_needs_preemption_gets_its_victims_evicted(tmp_path):
    case = Case(
        tmp_path,
        [node("n1", cpu="2"), pod("low", node_name="n1", cpu="2"), priority_class("high-prio", 1000)],
        pod("p", cpu="2", priorityClassName="high-prio"),
    )
    doc = case.explain(case.pod_file, "--fixes", "10")
    assert doc["verdict"] == "preemption"
    found = doc["suggestions"]
    evict = [s for s in found if s["kind"] == "evict"]
    assert evict[0]["edits"] == ["--evict default/low"] and evict[0]["result"]["selectedNode"] == "n1"
    assert "priorityClass" not in kinds(found)
    case.check_all(found)


def test_two_changes_only_when_no_single_one_suffices(tmp_path):
    # the pod asks more than the node holds: no copy of the node has room; only both requests cut fits
    case = Case(
        tmp_path,
        [node("n1", cpu="4", memory="8Gi"), pod("a", node_name="n1", cpu="3", memory="6Gi")],
        pod("p", cpu="5", memory="9Gi"),
    )
    found = case.suggestions()
    assert found and found[0]["kind"] == "resources"
    req = found[0]["patch"]["spec"]["containers"][0]["resources"]["requests"]
    assert req == {"cpu": "1", "memory": "2Gi"}
    case.check_all(found)


def test_a_taint_and_a_short_request_on_one_node_make_a_pair(tmp_path):
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    case = Case(
        tmp_path,
        [node("n1", taints=[taint]), pod("a", node_name="n1", cpu="2", tolerations=[{"operator": "Exists"}])],
        pod("p", cpu="3"),
    )
    found = case.suggestions()
    assert found[0]["kind"] == "toleration+resources", kinds(found)
    spec = found[0]["patch"]["spec"]
    assert spec["tolerations"][0]["key"] == "dedicated"
    assert spec["containers"][0]["resources"]["requests"]["cpu"] == "2"
    case.check_all(found)


def test_a_cordoned_node_short_of_room_needs_uncordon_and_a_smaller_request(tmp_path):
    case = Case(
        tmp_path,
        [
            node(
                "n1", unschedulable=True, taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
            ),
            pod("a", node_name="n1", cpu="3"),
        ],
        pod("p", cpu="2"),
    )
    found = case.suggestions()
    pair = [s for s in found if s["kind"] == "uncordon+resources"]
    assert pair and pair[0]["edits"] == ["--uncordon n1"] and "patch" in pair[0]
    case.check_all(found)


def test_a_single_change_is_never_combined(tmp_path):
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    case = Case(tmp_path, [node("n1", taints=[taint])], pod("p"))
    assert all("+" not in k for k in kinds(case.suggestions()))


def test_a_change_the_api_server_would_refuse_is_never_suggested(tmp_path):
    from kschedcli.loader import iter_objects
    from kschedcli.whatif.fixes.model import Change
    from kschedcli.whatif.fixes.search import _Search
    from kschedcli.whatif.world import open_world

    case = Case(tmp_path, [node("n1", cpu="1")], pod("p", cpu="2"))
    session = open_world([str(case.cluster)], None)
    [(raw, _)] = list(iter_objects(str(case.pod_file)))
    p = session.cluster.parse_pod(raw, "pod.yaml", "")
    result = session.scheduler.schedule(p)
    search = _Search(session, result, None, [], "Pod")

    def no_containers(raw):  # a pod without containers fits anywhere, and the API server refuses it
        raw["spec"]["containers"] = []

    def fine(raw):
        raw["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"

    assert search.verify([Change("resources", "no containers", no_containers)]) is None
    assert search.verify([Change("resources", "1 cpu", fine)]) is not None


def test_fixes_zero_and_schedulable_pods_add_nothing(tmp_path):
    case = Case(tmp_path, [node("n1", cpu="1")], pod("p", cpu="2"))
    assert "suggestions" not in case.explain(case.pod_file, "--fixes", "0")
    ok = tmp_path / "ok.yaml"
    ok.write_text(yaml.safe_dump(pod("q", cpu="500m")))
    assert "suggestions" not in case.explain(ok)


@pytest.mark.parametrize("n", [1, 2])
def test_fixes_n_is_a_limit(tmp_path, n):
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    case = Case(tmp_path, [node("n1", taints=[taint]), node("n2", cpu="1")], pod("p", cpu="2"))
    assert len(case.suggestions(n)) == n


def test_the_table_shows_the_section(tmp_path):
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    case = Case(tmp_path, [node("n1", taints=[taint])], pod("p"))
    r = run("explain", str(case.pod_file), "--cluster", str(case.cluster))
    assert r.exit_code == 1
    assert "What would make it fit" in r.stdout
    assert "tolerate the taint dedicated=batch:NoSchedule" in r.stdout
    r = run("explain", str(case.pod_file), "--cluster", str(case.cluster), "--fixes", "0")
    assert "What would make it fit" not in r.stdout


def test_a_workload_patch_is_under_its_pod_template(tmp_path):
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    p = pod("p")
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": p["spec"]},
        },
    }
    case = Case(tmp_path, [node("n1", taints=[taint])], deploy)
    found = case.suggestions()
    assert "tolerations" in found[0]["patch"]["spec"]["template"]["spec"]
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(apply_merge_patch(deploy, found[0]["patch"])))
    doc = case.explain(changed, "--fixes", "0")
    assert doc["schedulable"] and doc["selectedNode"] == found[0]["result"]["selectedNode"]


def test_a_later_replica_is_verified_with_the_replicas_before_it_changed_alike(tmp_path):
    taint = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": pod("p", cpu="3")["spec"]},
        },
    }
    case = Case(tmp_path, [node("n1"), node("n2", taints=[taint]), node("n3", taints=[taint])], deploy)
    doc = case.explain(case.pod_file, "--replica", "2", "--fixes", "5")
    assert not doc["schedulable"]
    tol = next(s for s in doc["suggestions"] if s["kind"] == "toleration")
    # replicas 0 and 1 tolerate the taint too and take two of the three nodes first
    assert len(tol["result"]["feasibleNodes"]) == 1
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(apply_merge_patch(deploy, tol["patch"])))
    again = case.explain(changed, "--replica", "2", "--fixes", "0")
    got = {k: again[k] for k in ("schedulable", "selectedNode", "feasibleNodes")}
    assert got == tol["result"]


def test_reporting_fixture_the_highmem_toleration_comes_first():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    r = run(
        "explain",
        str(root / "fixtures" / "pods" / "reporting.yaml"),
        "--cluster",
        str(root / "fixtures" / "prod-cluster.yaml"),
        "-o",
        "json",
    )
    doc = json.loads(r.stdout)
    first = doc["suggestions"][0]
    assert first["kind"] == "toleration" and "workload=highmem:NoSchedule" in first["summary"]
    assert first["result"]["feasibleNodes"] == ["highmem-a-01", "highmem-b-01", "highmem-c-01"]
