"""Filter and score plugins with small hand-built clusters: reasons to the character, formulas by hand."""

from builders import fresh_state, node, plugin, pod, scheduler

from kschedcli.framework.fit_error import fit_error_message
from kschedcli.framework.runtime import NodeStatuses
from kschedcli.framework.status import UNRESOLVABLE, UNSCHEDULABLE, Status


def _filter(sched, name, p, node_name):
    pl = plugin(sched, name)
    state = fresh_state()
    if hasattr(pl, "pre_filter"):
        _, st = pl.pre_filter(state, p, sched.snapshot.list())
        if st is not None and st.is_skip():
            return "skip"
    return pl.filter(state, p, sched.snapshot.get(node_name))


def test_node_unschedulable_and_toleration():
    s = scheduler([node("n1", unschedulable=True)])
    st = _filter(s, "NodeUnschedulable", pod("p"), "n1")
    assert (st.code, st.reasons) == (UNRESOLVABLE, ["node(s) were unschedulable"])
    tolerant = pod(
        "q",
        spec={
            "tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
        },
    )
    assert _filter(s, "NodeUnschedulable", tolerant, "n1") is None


def test_taint_toleration_filter_reason_and_prefer_no_schedule_score():
    s = scheduler(
        [
            node("n1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
            node("n2", taints=[{"key": "spot", "value": "", "effect": "PreferNoSchedule"}]),
            node("n3"),
        ]
    )
    st = _filter(s, "TaintToleration", pod("p"), "n1")
    assert st.reasons == ["node(s) had untolerated taint {gpu: true}"]
    pl = plugin(s, "TaintToleration")
    state = fresh_state()
    p = pod("p")
    pl.pre_score(state, p, [])
    scores = {n: pl.score(state, p, s.snapshot.get(n))[0] for n in ("n2", "n3")}
    assert scores == {"n2": 1, "n3": 0}
    pl.normalize_score(state, p, scores)
    assert scores == {"n2": 0, "n3": 100}


def test_node_affinity_match_fields_prefilter_result_and_conflict():
    s = scheduler([node("a"), node("b"), node("c")])
    pl = plugin(s, "NodeAffinity")
    p = pod(
        "p",
        spec={
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
                        ]
                    }
                }
            }
        },
    )
    r, st = pl.pre_filter(fresh_state(), p, s.snapshot.list())
    assert st is None and r.node_names == {"b"}
    res = s.schedule(p)
    assert res.feasible == ["b"]
    assert res.filters["a"].first_failure.reasons == ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]


def test_node_selector_mismatch_reason():
    s = scheduler([node("a", labels={"disk": "ssd"}), node("b")])
    p = pod("p", spec={"nodeSelector": {"disk": "ssd"}})
    assert _filter(s, "NodeAffinity", p, "a") is None
    assert _filter(s, "NodeAffinity", p, "b").reasons == ["node(s) didn't match Pod's node affinity/selector"]
    assert _filter(s, "NodeAffinity", pod("q"), "b") == "skip"


def test_added_affinity_is_enforced():
    prof = {
        "schedulerName": "default-scheduler",
        "pluginConfig": [
            {
                "name": "NodeAffinity",
                "args": {
                    "addedAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}
                            ]
                        }
                    }
                },
            }
        ],
    }
    s = scheduler([node("a", labels={"pool": "batch"}), node("b")], profile=prof)
    assert _filter(s, "NodeAffinity", pod("p"), "b").reasons == [
        "node(s) didn't match scheduler-enforced node affinity"
    ]


def test_node_ports_wildcard_ip_conflicts_with_specific_ip():
    existing = pod(
        "e",
        node_name="n1",
        containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}]}],
    )
    s = scheduler([node("n1")], [existing])
    wants_any = pod("p", containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}])
    wants_other_ip = pod(
        "q", containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.2"}]}]
    )
    wants_udp = pod(
        "r", containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "UDP"}]}]
    )
    st = _filter(s, "NodePorts", wants_any, "n1")
    assert (st.code, st.reasons) == (UNSCHEDULABLE, ["node(s) didn't have free ports for the requested pod ports"])
    assert _filter(s, "NodePorts", wants_other_ip, "n1") is None
    assert _filter(s, "NodePorts", wants_udp, "n1") is None


def test_fit_reports_every_insufficient_resource_in_order():
    existing = pod("e", node_name="n1", requests={"cpu": "3", "memory": "7Gi"})
    s = scheduler([node("n1", cpu="4", memory="8Gi", extra={"example.com/foo": "1"})], [existing])
    p = pod("p", requests={"cpu": "2", "memory": "2Gi", "example.com/foo": "2"})
    st = _filter(s, "NodeResourcesFit", p, "n1")
    assert st.reasons == ["Insufficient cpu", "Insufficient memory", "Insufficient example.com/foo"]
    # 2 example.com/foo exceed the node's whole allocatable: preemption cannot help
    assert st.code == UNRESOLVABLE
    st = _filter(s, "NodeResourcesFit", pod("q", requests={"cpu": "2"}), "n1")
    assert st.code == UNSCHEDULABLE


def test_fit_too_many_pods():
    s = scheduler([node("n1", pods="1")], [pod("e", node_name="n1")])
    assert _filter(s, "NodeResourcesFit", pod("p"), "n1").reasons == ["Too many pods"]


def test_ignored_resources():
    prof = {
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResourceGroups": ["example.com"]}}],
    }
    s = scheduler([node("n1")], profile=prof)
    assert _filter(s, "NodeResourcesFit", pod("p", requests={"example.com/foo": "1"}), "n1") is None


def test_least_allocated_and_balanced_scores_by_hand():
    # node: 4 cpu, 8Gi; existing 1 cpu / 2Gi; pod 1 cpu / 2Gi
    existing = pod("e", node_name="n1", requests={"cpu": "1", "memory": "2Gi"})
    s = scheduler([node("n1"), node("n2")], [existing])
    p = pod("p", requests={"cpu": "1", "memory": "2Gi"})
    res = s.schedule(p)
    fit = res.scores["n1"]["NodeResourcesFit"]
    # cpu (4000-2000)*100/4000 = 50, memory (8-4)*100/8 = 50 -> 50
    assert fit.raw == 50
    # n2: cpu (4000-1000)*100/4000=75, mem 75 -> 75
    assert res.scores["n2"]["NodeResourcesFit"].raw == 75
    # balanced: fractions equal -> std 0 -> 100
    assert res.scores["n1"]["NodeResourcesBalancedAllocation"].raw == 100
    assert res.selected_node == "n2"


def test_most_allocated_and_requested_to_capacity_ratio():
    prof = {
        "schedulerName": "default-scheduler",
        "pluginConfig": [
            {
                "name": "NodeResourcesFit",
                "args": {
                    "scoringStrategy": {
                        "type": "MostAllocated",
                        "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
                    }
                },
            }
        ],
    }
    s = scheduler([node("n1"), node("n2")], [pod("e", node_name="n1", requests={"cpu": "2"})], profile=prof)
    res = s.schedule(pod("p", requests={"cpu": "1", "memory": "1Gi"}))
    # n1: cpu 3000*100/4000=75 (w3), mem (1Gi+200Mi nonzero of e)... memory uses non-zero requests
    n1 = res.scores["n1"]["NodeResourcesFit"].raw
    mem = ((1 << 30) + 200 * 1024 * 1024) * 100 // (8 << 30)
    assert n1 == (75 * 3 + mem) // 4
    prof["pluginConfig"][0]["args"]["scoringStrategy"] = {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 1}],
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
    }
    s = scheduler([node("n1"), node("n2")], [pod("e", node_name="n1", requests={"cpu": "2"})], profile=prof)
    res = s.schedule(pod("p", requests={"cpu": "1"}))
    assert res.scores["n1"]["NodeResourcesFit"].raw == 75
    assert res.scores["n2"]["NodeResourcesFit"].raw == 25


def test_image_locality_scales_by_spread():
    big = 500 * 1024 * 1024
    imgs = [{"names": ["registry/app:1"], "sizeBytes": big}]
    s = scheduler([node("n1", images=imgs), node("n2")])
    res = s.schedule(pod("p", containers=[{"name": "c", "image": "registry/app:1"}]))
    # spread 1/2 -> 250Mi; (250-23)*100/(1000-23) = 23
    assert res.scores["n1"]["ImageLocality"].raw == 23
    assert res.scores["n2"]["ImageLocality"].raw == 0


def test_fit_error_message_groups_and_sorts_reasons():
    st = NodeStatuses()
    st.set("a", Status(UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory"))
    st.set("b", Status(UNSCHEDULABLE, "Insufficient cpu"))
    st.set("c", Status(UNRESOLVABLE, "node(s) were unschedulable"))
    msg = fit_error_message(3, "", st, "preemption: x")
    assert msg == (
        "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, "
        "2 Insufficient cpu. preemption: x"
    )


def test_sequence_binds_each_pod_before_the_next():
    s = scheduler([node("n1", cpu="2"), node("n2", cpu="1")])
    pods = [pod(f"p{i}", requests={"cpu": "1"}) for i in range(4)]
    results = s.run_sequence(pods)
    assert [r.schedulable for r in results] == [True, True, True, False]
    assert results[3].message.startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_scheduling_gates_block_the_cycle():
    s = scheduler([node("n1")])
    res = s.schedule(pod("p", spec={"schedulingGates": [{"name": "a"}, {"name": "b"}]}))
    assert not res.schedulable
    assert res.pre_filter.plugin == "SchedulingGates"
    assert res.message == "waiting for scheduling gates: [a b]"
