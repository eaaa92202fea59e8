"""DefaultPreemption: eligibility, the dry run (victims and reprieve), PDBs, each candidate criterion,
the no-candidate FitError text, and Go's unstable sort order."""

import random

from builders import node, plugin, pod, scheduler

from kschedcli.api.model import Pod
from kschedcli.plugins.defaultpreemption.gosort import go_sort_slice
from kschedcli.plugins.defaultpreemption.plugin import aggregate_errors
from kschedcli.plugins.defaultpreemption.victims import Budgets, more_important, sort_by_importance


def bound(name, node_name, cpu, priority, start="2025-01-01T00:00:00Z", labels=None, **extra):
    return pod(
        name, requests={"cpu": cpu}, node_name=node_name, priority=priority, start_time=start, labels=labels, **extra
    )


def preemptor(cpu="2", priority=1000, spec=None, status=None):
    raw = {
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default", "uid": "big"},
        "spec": {
            "priority": priority,
            "containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}],
            **(spec or {}),
        },
        "status": {"phase": "Pending", **(status or {})},
    }
    return Pod(raw)


def pdb(name, match_labels, allowed, disrupted=None, ns="default"):
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": match_labels}},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}},
    }


def run(nodes, pods, p, pdbs=()):
    s = scheduler(nodes, pods)
    for b in pdbs:
        s.cluster.objects["PodDisruptionBudget"][(b["metadata"]["namespace"], b["metadata"]["name"])] = b
    return s.schedule(p)


def by_node(res):
    return {c.node: c for c in res.preemption.candidates}


# -- eligibility ---------------------------------------------------------------------------------


def test_preemption_policy_never_is_not_eligible():
    res = run([node("n1", cpu="2")], [bound("low", "n1", "2", 0)], preemptor(spec={"preemptionPolicy": "Never"}))
    assert res.preemption.nominated_node is None
    assert res.preemption.ineligible == "not eligible due to preemptionPolicy=Never."
    assert res.message == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


def test_terminating_victim_on_nominated_node_blocks_a_new_preemption():
    dying = Pod(
        {
            "kind": "Pod",
            "metadata": {
                "name": "dying",
                "namespace": "default",
                "uid": "dying",
                "deletionTimestamp": "2025-01-01T00:00:00Z",
            },
            "spec": {
                "nodeName": "n1",
                "priority": 0,
                "containers": [{"name": "c", "image": "a", "resources": {"requests": {"cpu": "2"}}}],
            },
            "status": {
                "phase": "Running",
                "startTime": "2025-01-01T00:00:00Z",
                "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
            },
        }
    )
    p = preemptor(status={"nominatedNodeName": "n1"})
    res = run([node("n1", cpu="2")], [dying], p)
    assert res.preemption.ineligible == "not eligible due to a terminating pod on the nominated node."
    # without the preemption condition the pod is just being deleted: preemption goes ahead
    dying.raw["status"]["conditions"] = []
    res = run([node("n1", cpu="2")], [dying], p)
    assert res.preemption.nominated_node == "n1"


# -- nodes where preemption cannot help ------------------------------------------------------------


def test_no_lower_priority_pods_gives_fit_error_text():
    res = run(
        [node("n1", cpu="2"), node("n2", cpu="2")],
        [bound("a", "n1", "2", 5000), bound("b", "n2", "2", 1000)],
        preemptor(),
    )
    assert res.preemption.nominated_node is None
    assert res.preemption.message == (
        "no new claims to deallocate, preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    assert res.preemption.not_helpful == {
        "n1": "No preemption victims found for incoming pod",
        "n2": "No preemption victims found for incoming pod",
    }


def test_unresolvable_node_is_excluded_and_counted_as_not_helpful():
    nodes = [node("n1", cpu="2", labels={"disk": "ssd"}), node("n2", cpu="2")]
    p = preemptor(spec={"nodeSelector": {"disk": "ssd"}})
    res = run(nodes, [bound("a", "n1", "2", 5000), bound("b", "n2", "2", 0)], p)
    # n2 has a victim but fails NodeAffinity: preemption never looks at it
    assert res.preemption.nominated_node is None
    assert res.preemption.message.endswith(
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )
    assert "NodeAffinity" in res.preemption.not_helpful["n2"]


def test_node_still_full_without_lower_pods_reports_the_filter_reason():
    # the higher-priority pod stays: evicting the lower one leaves 1 cpu for a 2 cpu pod
    res = run([node("n1", cpu="2")], [bound("hi", "n1", "1", 5000), bound("lo", "n1", "1", 0)], preemptor(cpu="2"))
    assert res.preemption.message.endswith("preemption: 0/1 nodes are available: 1 Insufficient cpu.")
    assert "NodeResourcesFit: Insufficient cpu" in res.preemption.not_helpful["n1"]
    # a node smaller than the pod is UnschedulableAndUnresolvable: never tried
    res = run([node("n1", cpu="1")], [bound("a", "n1", "1", 0)], preemptor(cpu="2"))
    assert res.preemption.message.endswith(
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


# -- the dry run ---------------------------------------------------------------------------------------


def test_reprieve_keeps_the_more_important_pods():
    pods = [
        bound("p100", "n1", "1", 100),
        bound("p300", "n1", "1", 300),
        bound("p200", "n1", "1", 200),
        bound("keep", "n1", "1", 5000),
    ]
    res = run([node("n1", cpu="4")], pods, preemptor(cpu="2"))
    # the three lower pods are removed; reprieved from the most important down, p300 fits back,
    # then neither p200 nor p100 leaves the preemptor its 2 cpu
    assert res.preemption.victims == ["default/p200", "default/p100"]
    assert by_node(res)["n1"].victim_priorities == [200, 100]


def test_pdb_violating_pods_are_reprieved_first():
    pods = [
        bound("guarded", "n1", "1", 100, labels={"app": "db"}),
        bound("free", "n1", "1", 100, labels={"app": "web"}),
    ]
    res = run([node("n1", cpu="2")], pods, preemptor(cpu="1"), pdbs=[pdb("db", {"app": "db"}, 0)])
    assert res.preemption.victims == ["default/free"]
    assert res.preemption.candidates[0].pdb_violations == 0


def test_disrupted_pods_do_not_consume_the_budget():
    pods = [bound("a", "n1", "1", 100, labels={"app": "db"}), bound("b", "n1", "1", 100, labels={"app": "db"})]
    budgets = Budgets([pdb("db", {"app": "db"}, 1, disrupted={"a": "2025-01-01T00:00:00Z"})])
    violating, fine = budgets.split(pods)
    assert (violating, [p.name for p in fine]) == ([], ["a", "b"])
    violating, fine = Budgets([pdb("db", {"app": "db"}, 1)]).split(pods)
    assert ([p.name for p in violating], [p.name for p in fine]) == (["b"], ["a"])
    # another namespace, an empty selector: no match
    assert Budgets([pdb("db", {"app": "db"}, 0, ns="other")]).split(pods)[0] == []
    empty = pdb("all", {}, 0)
    assert Budgets([empty]).split(pods)[0] == []


# -- candidate choice: one test per criterion ----------------------------------------------------


def test_fewest_pdb_violations_wins():
    pods = [bound("db", "n1", "2", 10, labels={"app": "db"}), bound("web", "n2", "2", 500)]
    res = run([node("n1", cpu="2"), node("n2", cpu="2")], pods, preemptor(), pdbs=[pdb("db", {"app": "db"}, 0)])
    assert res.preemption.nominated_node == "n2"
    c = by_node(res)
    assert (c["n1"].pdb_violations, c["n1"].decided_by) == (1, "pdbViolations")
    assert [e.node for e in res.preemption.equally_good] == ["n2"]


def test_lowest_highest_victim_priority_wins():
    pods = [bound("a", "n1", "2", 200), bound("b", "n2", "2", 100)]
    res = run([node("n1", cpu="2"), node("n2", cpu="2")], pods, preemptor())
    assert res.preemption.nominated_node == "n2"
    assert by_node(res)["n1"].decided_by == "highestVictimPriority"


def test_smallest_priority_sum_wins():
    pods = [
        bound("a1", "n1", "1", 100),
        bound("a2", "n1", "1", 90),
        bound("b1", "n2", "1", 100),
        bound("b2", "n2", "1", 50),
    ]
    res = run([node("n1", cpu="2"), node("n2", cpu="2")], pods, preemptor())
    assert res.preemption.nominated_node == "n2"
    assert res.preemption.victims == ["default/b1", "default/b2"]
    assert by_node(res)["n1"].decided_by == "victimPrioritySum"


def test_fewest_victims_wins_when_offset_sums_tie():
    # with the MaxInt32+1 offset per victim, [0] and [0, MinInt32] have the same sum
    low = -(1 << 31)
    pods = [bound("a", "n1", "2", 0), bound("b1", "n2", "1", 0), bound("b2", "n2", "1", low)]
    res = run([node("n1", cpu="2"), node("n2", cpu="2")], pods, preemptor())
    assert res.preemption.nominated_node == "n1"
    assert by_node(res)["n2"].decided_by == "victimCount"


def test_latest_start_time_wins():
    pods = [
        bound("old", "n1", "2", 100, start="2025-01-01T00:00:00Z"),
        bound("new", "n2", "2", 100, start="2025-06-01T12:00:00Z"),
    ]
    res = run([node("n1", cpu="2"), node("n2", cpu="2")], pods, preemptor())
    assert res.preemption.nominated_node == "n2"
    assert by_node(res)["n1"].decided_by == "latestStartTime"


def test_complete_tie_lists_every_equally_good_candidate():
    pods = [bound("a", "n1", "2", 100), bound("b", "n2", "2", 100), bound("c", "n3", "2", 700)]
    res = run([node("n1", cpu="2"), node("n2", cpu="2"), node("n3", cpu="2")], pods, preemptor())
    assert res.preemption.nominated_node == "n1"
    assert [(c.node, c.victims) for c in res.preemption.equally_good] == [("n1", ["default/a"]), ("n2", ["default/b"])]
    assert by_node(res)["n3"].decided_by == "highestVictimPriority"
    assert res.message == "0/3 nodes are available: 3 Insufficient cpu."


def test_pods_without_start_time_tie_on_start():
    pods = [bound("a", "n1", "2", 100, start=None), bound("b", "n2", "2", 100, start=None)]
    res = run([node("n1", cpu="2"), node("n2", cpu="2")], pods, preemptor())
    assert {c.node for c in res.preemption.equally_good} == {"n1", "n2"}


# -- arithmetic and helpers --------------------------------------------------------------------------


def test_candidate_count_arithmetic():
    s = scheduler([node("n1")])
    pl = plugin(s, "DefaultPreemption")
    assert [pl.calculate_num_candidates(n) for n in (50, 1000, 5000)] == [50, 100, 500]
    pl.args = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 10}
    assert pl.calculate_num_candidates(5000) == 10
    res = run([node("n1", cpu="2")], [bound("a", "n1", "2", 0)], preemptor())
    assert res.details["DefaultPreemption"]["numCandidates"] == 1
    assert res.details["DefaultPreemption"]["potentialNodes"] == 1


def test_aggregate_errors_text():
    assert aggregate_errors(["x"]) == "x"
    assert aggregate_errors(["x", "x"]) == "x"
    assert aggregate_errors(["x", "y", "x"]) == "[x, y]"


def test_go_sort_slice_matches_go_on_ties():
    # Go 1.21+: sort.Slice of one "x" and 12 "test" entries by content (known output)
    notes = [(-1, "x")] + [(i, "test") for i in range(12)]
    go_sort_slice(notes, lambda a, b: a[1] < b[1])
    assert [i for i, _ in notes] == [5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, -1]
    rng = random.Random(7)
    for _ in range(300):
        xs = [rng.randint(0, 9) for _ in range(rng.randint(0, 200))]
        ys = list(xs)
        go_sort_slice(ys, lambda a, b: a < b)
        assert ys == sorted(xs)


def test_victims_without_start_time_keep_kube_schedulers_order():
    # every time.Now() is later than the previous one: of two such pods the first asked is "older",
    # so Go's insertion sort reverses equal-priority pods without a start time
    pods = [bound(f"p{i}", "n1", "1", 100, start=None) for i in range(3)] + [bound("hi", "n1", "1", 200, start=None)]
    sort_by_importance(pods, more_important(0))
    assert [p.name for p in pods] == ["hi", "p2", "p1", "p0"]
    timed = [
        bound("late", "n1", "1", 100, start="2025-02-01T00:00:00Z"),
        bound("early", "n1", "1", 100, start="2025-01-01T00:00:00Z"),
    ]
    sort_by_importance(timed, more_important(0))
    assert [p.name for p in timed] == ["early", "late"]


def test_dry_run_uses_prefilter_remove_pod_and_leaves_the_cluster_alone():
    # the preemptor's required anti-affinity is met only once InterPodAffinity's PreFilter state forgets
    # the victim (RemovePod); each node's dry run starts from the same untouched state
    anti = {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    }
    pods = [bound("x1", "n1", "100m", 10, labels={"app": "x"}), bound("x2", "n2", "100m", 20, labels={"app": "x"})]
    s = scheduler([node("n1"), node("n2")], pods)
    res = s.schedule(preemptor(cpu="1", spec=anti))
    assert res.message == "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."
    assert res.preemption.nominated_node == "n1"
    assert by_node(res)["n2"].decided_by == "highestVictimPriority"
    assert [p.name for p in s.snapshot.get("n1").pods] == ["x1"]
    assert s.snapshot.get("n1").requested.milli_cpu == 100
