"""The nominator: pods nominated to a node weigh on the pods filtered there (two passes, the
priority rule), the nominated-node fast path, and preemption's dry run with nominated pods."""

from __future__ import annotations

import textwrap

from builders import node, pod, scheduler

from kschedcli.api.model import Pod
from kschedcli.inputs.cluster import load_cluster


def nominated(name, node_name, priority, cpu="1", labels=None, spec=None):
    """A pending pod waiting for node_name (status.nominatedNodeName)."""
    raw = pod(name, requests={"cpu": cpu}, priority=priority, labels=labels, spec=spec).raw
    raw["status"]["nominatedNodeName"] = node_name
    return Pod(raw)


def two_nodes(*bound):
    return [node("node-a", cpu="4"), node("node-b", cpu="4")], list(bound)


def test_a_nominated_pod_of_higher_priority_counts_in_the_node_resources():
    nodes, pods = two_nodes()
    s = scheduler(nodes, pods)
    s.nominate([nominated("big", "node-b", 1000, cpu="3")])
    r = s.schedule(pod("incoming", requests={"cpu": "2"}, priority=100))
    assert r.feasible == ["node-a"]
    ff = r.filters["node-b"].first_failure
    assert (ff.plugin, ff.reasons) == ("NodeResourcesFit", ["Insufficient cpu"])
    assert r.filters["node-b"].plugins["NodeResourcesFit"].reasons == ["Insufficient cpu"]
    assert r.nominated["node-b"].pods == ["default/big"]
    assert r.nominated["node-b"].second_pass is False  # the first pass failed
    assert "node-a" not in r.nominated


def test_priority_rule_equal_counts_lower_is_ignored():
    nodes, pods = two_nodes()
    s = scheduler(nodes, pods)
    s.nominate([nominated("mid", "node-b", 100, cpu="3")])
    equal = s.schedule(pod("equal", requests={"cpu": "2"}, priority=100))
    assert equal.feasible == ["node-a"]
    higher = s.schedule(pod("higher", requests={"cpu": "2"}, priority=101))
    assert higher.feasible == ["node-a", "node-b"]
    assert higher.nominated == {}


def test_the_pod_itself_is_not_counted_on_its_own_node():
    nodes, pods = two_nodes()
    s = scheduler(nodes, pods)
    me = nominated("me", "node-b", 1000, cpu="3")
    s.nominate([me])
    r = s.schedule(me)
    assert r.selected_node == "node-b"
    assert r.nominated == {}


def test_second_pass_without_the_nominated_pods_decides_pod_affinity():
    # the incoming pod needs a pod labelled app=db on its node: only a nominated one is there, so
    # the first pass (with it) passes and the second (without it) rejects the node
    nodes, pods = two_nodes()
    s = scheduler(nodes, pods)
    s.nominate([nominated("db", "node-b", 1000, labels={"app": "db"})])
    affinity = {
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    }
    r = s.schedule(pod("web", requests={"cpu": "100m"}, priority=10, labels={"app": "web"}, spec=affinity))
    assert r.feasible == []
    b = r.filters["node-b"]
    assert b.first_failure.plugin == "InterPodAffinity"
    assert b.plugins["InterPodAffinity"].code == "UnschedulableAndUnresolvable"
    assert r.nominated["node-b"].second_pass is True
    # a pod of lower priority than the nominated one is counted; one of higher is not, and then
    # the node fails in its single pass as node-a does
    r2 = s.schedule(pod("web2", requests={"cpu": "100m"}, priority=5000, labels={"app": "web"}, spec=affinity))
    assert r2.nominated == {}


def test_anti_affinity_sees_the_nominated_pod_in_the_first_pass():
    nodes, pods = two_nodes()
    s = scheduler(nodes, pods)
    s.nominate([nominated("db", "node-b", 1000, labels={"app": "db"})])
    anti = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    }
    r = s.schedule(pod("db2", requests={"cpu": "100m"}, priority=10, labels={"app": "db"}, spec=anti))
    assert r.feasible == ["node-a"]
    assert r.filters["node-b"].first_failure.plugin == "InterPodAffinity"


def test_host_ports_of_a_nominated_pod_are_taken():
    nodes, pods = two_nodes()
    s = scheduler(nodes, pods)
    port = {"containers": [{"name": "c", "image": "a", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    s.nominate([nominated("proxy", "node-a", 1000, spec=port)])
    r = s.schedule(pod("proxy2", priority=1, spec=port))
    assert r.feasible == ["node-b"]
    assert r.filters["node-a"].first_failure.plugin == "NodePorts"


def test_fast_path_takes_the_nominated_node_without_scoring():
    nodes = [node("node-a", cpu="8"), node("node-b", cpu="4")]
    s = scheduler(nodes, [pod("busy", requests={"cpu": "2"}, node_name="node-b")])
    me = nominated("me", "node-b", 1000, cpu="1")
    r = s.schedule(me)
    assert r.selected_node == "node-b"  # node-a would score better
    assert list(r.filters) == ["node-b"]
    assert r.feasible == r.top_nodes == ["node-b"]
    assert dict(r.scores) == {}
    assert r.nominated_node_tried == "node-b"


def test_fast_path_falls_back_to_every_node_when_the_nominated_node_does_not_fit():
    nodes = [node("node-a", cpu="8"), node("node-b", cpu="4")]
    s = scheduler(nodes, [pod("busy", requests={"cpu": "4"}, node_name="node-b")])
    r = s.schedule(nominated("me", "node-b", 1000, cpu="1"))
    assert sorted(r.filters) == ["node-a", "node-b"]
    assert r.selected_node == "node-a"
    # a nomination naming a node that does not exist: no first try
    r2 = s.schedule(nominated("me2", "node-zz", 1000, cpu="1"))
    assert r2.nominated_node_tried is None and r2.selected_node == "node-a"


def test_fast_path_first_try_status_survives_a_prefilter_narrowing():
    # NodeAffinity's PreFilter narrows the nodes to node-a by metadata.name; the nominated node
    # node-b keeps the status of its first try instead of "didn't satisfy plugin(s)"
    nodes = [node("node-a", cpu="4"), node("node-b", cpu="1")]
    s = scheduler(nodes)
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}
                    ]
                }
            }
        }
    }
    r = s.schedule(nominated("me", "node-b", 1000, cpu="2", spec=spec))
    assert r.selected_node == "node-a"
    ff = r.filters["node-b"].first_failure
    assert ff.plugin in ("NodeAffinity", "NodeResourcesFit")
    assert "didn't satisfy plugin" not in ff.message()


def _full_node_with_low_pods():
    nodes = [node("node-a", cpu="4")]
    bound = [
        pod("low1", requests={"cpu": "2"}, priority=0, node_name="node-a", start_time="2025-01-01T00:00:00Z"),
        pod("low2", requests={"cpu": "2"}, priority=0, node_name="node-a", start_time="2025-01-01T00:00:01Z"),
    ]
    return nodes, bound


def test_preemption_dry_run_counts_nominated_pods_of_at_least_the_preemptor_priority():
    nodes, bound = _full_node_with_low_pods()
    s = scheduler(nodes, bound)
    r = s.schedule(pod("pre", requests={"cpu": "3"}, priority=500))
    assert r.preemption.nominated_node == "node-a"
    assert r.preemption.victims == ["default/low1", "default/low2"]

    s = scheduler(*_full_node_with_low_pods())
    s.nominate([nominated("waiting", "node-a", 1000, cpu="2")])
    r = s.schedule(pod("pre", requests={"cpu": "3"}, priority=500))
    assert r.preemption.nominated_node is None
    assert r.preemption.message.endswith("preemption: 0/1 nodes are available: 1 Insufficient cpu.")

    # a nominated pod of lower priority than the preemptor is not counted
    s = scheduler(*_full_node_with_low_pods())
    s.nominate([nominated("waiting", "node-a", 100, cpu="2")])
    r = s.schedule(pod("pre", requests={"cpu": "3"}, priority=500))
    assert r.preemption.nominated_node == "node-a"


def test_preemption_reprieve_counts_the_nominated_pods():
    # evicting both low pods frees 4 cpu; the nominated pod takes 1, the preemptor 2: one low
    # pod (2 cpu) cannot come back, the other can't either (1 cpu left); with 3 free one could
    nodes = [node("node-a", cpu="6")]
    bound = [
        pod("low1", requests={"cpu": "2"}, priority=0, node_name="node-a", start_time="2025-01-01T00:00:00Z"),
        pod("low2", requests={"cpu": "2"}, priority=0, node_name="node-a", start_time="2025-01-01T00:00:01Z"),
        pod("keep", requests={"cpu": "2"}, priority=900, node_name="node-a", start_time="2025-01-01T00:00:00Z"),
    ]
    s = scheduler(nodes, bound)
    r = s.schedule(pod("pre", requests={"cpu": "2"}, priority=500))
    assert r.preemption.victims == ["default/low2"]
    s = scheduler(nodes, bound)
    s.nominate([nominated("waiting", "node-a", 1000, cpu="1")])
    r = s.schedule(pod("pre", requests={"cpu": "2"}, priority=500))
    assert r.preemption.victims == ["default/low1", "default/low2"]


def test_terminating_pod_on_the_nominated_node_makes_the_preemptor_ineligible():
    nodes = [node("node-a", cpu="2"), node("node-b", cpu="2")]
    dying = pod("dying", requests={"cpu": "2"}, priority=0, node_name="node-a")
    dying.raw["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    dying.raw["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
    dying = Pod(dying.raw)
    other = pod("other", requests={"cpu": "2"}, priority=0, node_name="node-b")
    s = scheduler(nodes, [dying, other])
    r = s.schedule(nominated("pre", "node-a", 1000, cpu="2"))
    assert r.preemption.message.endswith("preemption: not eligible due to a terminating pod on the nominated node.")
    # the same pod without a nomination may preempt
    r = s.schedule(pod("pre2", requests={"cpu": "2"}, priority=1000))
    assert r.preemption.nominated_node in ("node-a", "node-b")


def test_sequence_pods_weigh_while_waiting_and_not_once_bound():
    nodes, pods = two_nodes()
    s = scheduler(nodes, pods)
    first = pod("first", requests={"cpu": "2"}, priority=100)
    waiting = nominated("waiting", "node-b", 1000, cpu="3")
    after = pod("after", requests={"cpu": "2"}, priority=100)
    results = s.run_sequence([first, waiting, after])
    assert results[0].feasible == ["node-a"]  # node-b held for `waiting`
    assert results[1].selected_node == "node-b"  # its fast path
    assert results[2].nominated == {}  # bound: no longer nominated
    assert results[2].feasible == ["node-a"] and results[2].selected_node == "node-a"


def test_loader_keeps_nominated_pending_pods_and_the_scheduler_skips_gated_and_foreign(tmp_path):
    f = tmp_path / "cluster.yaml"
    f.write_text(
        textwrap.dedent("""\
        apiVersion: v1
        kind: Node
        metadata: {name: node-a}
        status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: held, namespace: default}
        spec: {priority: 10, containers: [{name: c, image: a, resources: {requests: {cpu: "3"}}}]}
        status: {phase: Pending, nominatedNodeName: node-a}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: gated, namespace: default}
        spec: {priority: 10, schedulingGates: [{name: wait}], containers: [{name: c, image: a}]}
        status: {phase: Pending, nominatedNodeName: node-a}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: foreign, namespace: default}
        spec: {priority: 10, schedulerName: other, containers: [{name: c, image: a}]}
        status: {phase: Pending, nominatedNodeName: node-a}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: plain, namespace: default}
        spec: {containers: [{name: c, image: a}]}
        status: {phase: Pending}
        """)
    )
    cluster = load_cluster([str(f)])
    assert [p.name for p in cluster.nominated_pods] == ["held", "gated", "foreign"]
    assert cluster.skipped["pending pods (not in the scheduler's cache)"] == 1
    from kschedcli.config.scheduler import SchedulerConfig, build_profile
    from kschedcli.plugins import REGISTRY
    from kschedcli.scheduling.scheduler import Scheduler

    prof = build_profile({"schedulerName": "default-scheduler"}, "test", REGISTRY)
    s = Scheduler(cluster, SchedulerConfig(profiles=[prof]))
    assert [p.name for p in s.nominator.pods_for_node("node-a")] == ["held"]
    r = s.schedule(pod("next", requests={"cpu": "2"}, priority=10))
    assert r.feasible == [] and r.nominated["node-a"].pods == ["default/held"]


def test_terminating_rule_does_not_apply_when_the_nominated_node_is_unresolvable():
    taint = [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]
    nodes = [node("node-a", cpu="2", taints=taint), node("node-b", cpu="2")]
    dying = pod("dying", requests={"cpu": "2"}, priority=0, node_name="node-a")
    dying.raw["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    dying.raw["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
    s = scheduler(nodes, [Pod(dying.raw), pod("other", requests={"cpu": "2"}, priority=0, node_name="node-b")])
    r = s.schedule(nominated("pre", "node-a", 1000, cpu="2"))
    assert r.filters["node-a"].first_failure.code == "UnschedulableAndUnresolvable"
    assert r.preemption.nominated_node == "node-b"
    assert r.preemption.victims == ["default/other"]
