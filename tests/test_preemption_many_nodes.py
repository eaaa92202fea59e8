"""DefaultPreemption's many-node dry run (the per-node victim orders, the bisection over running
totals, the smallest-request shortcut, the PDB split from the first clean position) gives, node by
node, what the node-at-a-time dry run gives: the same victims in the same order, the same PDB
violation count, the same status. Random small clusters, seeded."""

import random

from builders import node, plugin, pod, scheduler

from kschedcli.model import Pod
from kschedcli.plugins.preemption_victims import Budgets, _VictimOrder

PRIORITIES = [0, 10, 10, 100, 500, 1000]
STARTS = [f"2025-01-0{d}T0{h}:00:00Z" for d in range(1, 4) for h in range(3)]


def _pdb(i, app, allowed, disrupted=None):
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": f"b{i}", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}},
    }


def _cluster(rng: random.Random):
    nodes, pods = [], []
    for n in range(rng.randint(2, 10)):
        name = f"n{n}"
        nodes.append(
            node(name, cpu=str(rng.randint(2, 6)), memory=f"{rng.randint(2, 8)}Gi", pods=str(rng.randint(2, 30)))
        )
        for j in range(rng.randint(0, 28) if rng.random() < 0.2 else rng.randint(8, 28)):
            req = {
                "cpu": f"{rng.choice([0, 50, 100, 250, 500, 1000])}m",
                "memory": f"{rng.choice([0, 64, 256, 1024])}Mi",
            }
            if rng.random() < 0.2:
                req["ephemeral-storage"] = f"{rng.choice([0, 1, 2])}Gi"
            start = None if rng.random() < 0.02 else rng.choice(STARTS)
            pods.append(
                pod(
                    f"{name}-p{j}",
                    requests=req,
                    node_name=name,
                    priority=rng.choice(PRIORITIES),
                    labels={"app": rng.choice(["a", "b", "c", "d"])},
                    start_time=start,
                )
            )
    pdbs = [
        _pdb(i, app, rng.choice([0, 0, 1, 2, 5]))
        for i, app in enumerate(rng.sample(["a", "b", "c"], rng.randint(0, 3)))
    ]
    requests = {"cpu": f"{rng.choice([0, 1000, 2000, 3000])}m", "memory": f"{rng.choice([0, 512, 2048])}Mi"}
    if rng.random() < 0.2:
        requests["ephemeral-storage"] = "1Gi"
    preemptor = Pod(
        {
            "kind": "Pod",
            "metadata": {"name": "big", "namespace": "default", "uid": "big"},
            "spec": {
                "priority": rng.choice([10, 100, 500, 1000, 2000]),
                "containers": [{"name": "c", "image": "app:1", "resources": {"requests": requests}}],
            },
            "status": {"phase": "Pending"},
        }
    )
    return nodes, pods, pdbs, preemptor


def test_many_node_dry_run_matches_the_node_at_a_time_dry_run():
    rng = random.Random(18)
    compared = 0
    seen = set()  # which ways through the many-node dry run the cases took
    for _ in range(300):
        nodes, pods, pdbs, preemptor = _cluster(rng)
        s = scheduler(nodes, pods)
        for b in pdbs:
            s.cluster.objects["PodDisruptionBudget"][("default", b["metadata"]["name"])] = b
        dp = plugin(s, "DefaultPreemption")
        fit = plugin(s, "NodeResourcesFit")
        many_node = dp._resource_only_dry_run

        def checked(state, p, potential, budgets, less, many_node=many_node, dp=dp, fit=fit):
            out = many_node(state, p, potential, budgets, less)
            assert out is not None
            for ni, (victims, n_violating, st) in zip(potential, out, strict=True):
                low = [q for q in ni.pods if q.priority < p.priority]
                if low:
                    want = dp._select_victims_by_arithmetic(state, p, ni, low, fit, budgets, less)
                else:
                    want = ([], 0, None)
                    assert st is not None and st.message() == "No preemption victims found for incoming pod"
                    seen.add("none lower")
                    continue
                assert [q.name for q in victims] == [q.name for q in want[0]]
                assert all(a is b for a, b in zip(victims, want[0]))
                assert n_violating == want[1]
                assert (st and (st.code, st.message(), st.plugin)) == (
                    want[2] and (want[2].code, want[2].message(), want[2].plugin)
                )
                seen.add("rejected" if st is not None else "violating" if n_violating else "clean")
            nonlocal compared
            compared += len(potential)
            return out

        dp._resource_only_dry_run = checked
        s.schedule(preemptor)
    assert compared > 500, compared
    assert seen == {"none lower", "rejected", "violating", "clean"}


def test_victim_order_keeps_totals_minima_and_the_first_clean_position():
    pods = [
        pod("a", requests={"cpu": "300m"}, node_name="n1", priority=10, labels={"app": "db"}, start_time=STARTS[0]),
        pod("b", requests={"cpu": "100m"}, node_name="n1", priority=10, labels={"app": "db"}, start_time=STARTS[1]),
        pod("c", requests={"cpu": "200m"}, node_name="n1", priority=50, labels={"app": "web"}, start_time=STARTS[2]),
    ]
    s = scheduler([node("n1", cpu="1")], pods)
    ni = s.snapshot.get("n1")
    order = _VictimOrder.build(ni)
    assert [p.name for p in order.pods] == ["c", "a", "b"]
    assert order.cpu_upto == [0, 200, 500, 600]
    assert order.min_cpu_from[:3] == [100, 100, 100] and order.min_cpu_from[3] == float("inf")
    assert order.caps == (1000, 8 * 1024**3, 0, 110)
    # one disruption allowed for db: from position 1 "b" would be the second db pod evicted
    budgets = Budgets([_pdb(0, "db", 1)])
    assert order.split(budgets, 1) == ((2,), (1,))
    assert order.clean_from == 2
    assert order.split(budgets, 2) == ((), range(2, 3))
    # no budget left at all: no position but the end is clean
    none_left = Budgets([_pdb(0, "db", 0)])
    assert order.split(none_left, 0) == ((1, 2), (0,))
    assert order.clean_from == 3


def test_budgets_remember_what_selects_a_labels_object_but_not_a_pods_disruption():
    a = pod("a", labels={"app": "db"}, node_name="n1")
    b = pod("b", labels={"app": "db"}, node_name="n1")
    c = pod("c", ns="other", labels={"app": "db"}, node_name="n1")
    b.labels = c.labels = a.labels  # as pods built from one template share it
    budgets = Budgets([_pdb(0, "db", 1, disrupted={"a": "2025-01-01T00:00:00Z"}), _pdb(1, "web", 1)])
    assert budgets.matching(a) == ()  # already counted as disrupted
    assert budgets.matching(b) == (0,)
    assert budgets.matching(c) == ()  # the budget is in another namespace
    a.labels = {"app": "web"}  # another labels object: asked anew
    assert budgets.matching(a) == (1,)
