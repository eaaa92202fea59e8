"""DefaultPreemption's many-node dry run (the per-node victim orders, the bisection over running
totals, the smallest-request shortcut, the PDB split from the first clean position) gives, node by
node, what the node-at-a-time dry run gives: the same victims in the same order, the same PDB
violation count, the same status. Random small clusters, seeded."""

import random

from builders import node, plugin, pod, scheduler

from kschedcli.api.model import Pod
from kschedcli.plugins.defaultpreemption.victims import Budgets, _VictimOrder

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


def _check_against_node_at_a_time(s, seen, counter):
    """Wrap the scheduler's many-node dry run: each node's outcome is held to the node-at-a-time
    dry run's (victims, PDB violations, status); `seen` collects the kinds of outcome."""
    dp = plugin(s, "DefaultPreemption")
    fit = plugin(s, "NodeResourcesFit")
    many_node = dp._resource_only_dry_run

    def checked(state, p, potential, budgets, less, positions=None):
        out = many_node(state, p, potential, budgets, less, positions=positions)
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
        counter[0] += len(potential)
        return out

    dp._resource_only_dry_run = checked


def test_many_node_dry_run_matches_the_node_at_a_time_dry_run():
    rng = random.Random(18)
    compared = [0]
    seen = set()  # which ways through the many-node dry run the cases took
    for _ in range(300):
        nodes, pods, pdbs, preemptor = _cluster(rng)
        s = scheduler(nodes, pods)
        for b in pdbs:
            s.cluster.objects["PodDisruptionBudget"][("default", b["metadata"]["name"])] = b
        _check_against_node_at_a_time(s, seen, compared)
        s.schedule(preemptor)
    assert compared[0] > 500, compared
    assert seen == {"none lower", "rejected", "violating", "clean"}


def test_many_node_dry_run_keeps_a_node_only_filters_resolvable_rejection():
    """A node-only filter (here NodeUnschedulable, made to answer Unschedulable, which evicting
    cannot change either) rejecting a node where preemption looks helpful: the many-node dry run
    reads its verdict off the cycle's column at the node's position, as the node-at-a-time run
    asks the filter."""
    from kschedcli.framework.status import Status

    rng = random.Random(5)
    compared = [0]
    seen = set()
    rejected_by_it = 0
    for _ in range(120):
        nodes, pods, _, preemptor = _cluster(rng)
        s = scheduler(nodes, pods)
        pl = plugin(s, "NodeUnschedulable")
        soft = {n.name for n in nodes if rng.random() < 0.4}
        verdict = Status("Unschedulable", "node is softly cordoned")
        pl.filter = lambda state, p, ni, soft=soft, verdict=verdict: verdict if ni.node.name in soft else None
        pl.filter_nodes = lambda state, p, nis, f=pl.filter: [f(state, p, ni) for ni in nis]
        _check_against_node_at_a_time(s, seen, compared)
        r = s.schedule(preemptor)
        if r.preemption is not None:
            rejected_by_it += sum("softly cordoned" in why for why in r.preemption.not_helpful.values())
    assert compared[0] > 200 and rejected_by_it > 20, (compared, rejected_by_it)


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


def test_diagnosis_and_the_nodes_preemption_cannot_help_match_a_node_at_a_time_reading():
    """The scheduler's per-node statuses (feasible nodes, first failures) and DefaultPreemption's
    split of the nodes into those where evicting may help and those it cannot (with why), as a
    node-at-a-time reading of every node's filters gives them: PreFilter narrowing to named
    nodes, unschedulable and tainted nodes, a node selector, nodes short of cpu."""
    from kschedcli.framework.cycle_state import CycleState
    from kschedcli.framework.status import UNSCHEDULABLE
    from kschedcli.plugins.defaultpreemption.plugin import _unresolvable_why

    rng = random.Random(1818)
    ways = set()
    for _ in range(60):
        nodes, pods = [], []
        for n in range(rng.randint(1, 12)):
            name = f"n{n}"
            taints = [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}] if rng.random() < 0.2 else None
            labels = {"pool": rng.choice(["a", "b"])}
            nodes.append(node(name, cpu="2", unschedulable=rng.random() < 0.15, taints=taints, labels=labels))
            for j in range(rng.randint(0, 3)):
                prio = rng.choice([0, 10, 1000])
                pods.append(pod(f"{name}-p{j}", requests={"cpu": "600m"}, node_name=name, priority=prio))
        spec = {}
        if rng.random() < 0.5:
            spec["nodeSelector"] = {"pool": "a"}
        if rng.random() < 0.3:
            names = rng.sample([n.name for n in nodes], rng.randint(1, len(nodes)))
            # one term per name (the API server takes one value per matchFields requirement)
            terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names]
            spec["affinity"] = {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
            }
        incoming = pod("in", requests={"cpu": rng.choice(["500m", "1500m"])}, priority=100, spec=spec)
        s = scheduler(nodes, pods)
        fw = s.frameworks["default-scheduler"]
        dp = plugin(s, "DefaultPreemption")
        seen = {}

        def post_filter(state, p, node_statuses, names=s.snapshot.names, seen=seen, real=dp.post_filter):
            seen["statuses"] = {n: node_statuses.get(n) for n in names}
            out = real(state, p, node_statuses)
            seen["detail"] = out[0].detail if out[0] is not None else None
            return out

        dp.post_filter = post_filter
        r = s.schedule(incoming)
        # node at a time: each node's filters in profile order
        state = CycleState()
        pf = fw.run_pre_filter(state, incoming)
        assert pf.status is None
        allowed = None if pf.result is None or pf.result.all_nodes() else pf.result.node_names
        want_first = {}
        for ni in s.snapshot.node_infos:
            st = fw.run_filter_plugins(state, incoming, ni)
            want_first[ni.node.name] = st
            assert (r.filters[ni.node.name].first_failure is None) == (st is None)
        assert r.feasible == [n for n, st in want_first.items() if st is None and (allowed is None or n in allowed)]
        if r.feasible:
            ways.add("feasible")
            continue
        got = seen["statuses"]
        for n, st in want_first.items():
            if allowed is not None and n not in allowed:
                assert got[n].message().startswith("node(s) didn't satisfy plugin(s)")
                ways.add("narrowed")
            else:
                assert (got[n].code, got[n].message(), got[n].plugin) == (st.code, st.message(), st.plugin)
        detail = seen["detail"]
        want_not_helpful = {n: _unresolvable_why(st) for n, st in got.items() if st.code != UNSCHEDULABLE}
        potential = [n for n, st in got.items() if st.code == UNSCHEDULABLE]
        assert detail.potential_nodes == len(potential)
        # the dry run's own rejections follow the nodes it could not help
        assert list(detail.not_helpful.items())[: len(want_not_helpful)] == list(want_not_helpful.items())
        assert {c.node for c in detail.candidates} <= set(potential)
        ways.add("some helpful" if potential else "none helpful")
        if want_not_helpful:
            ways.add("some not helpful")
    assert ways == {"feasible", "narrowed", "some helpful", "none helpful", "some not helpful"}, ways


def _pick_one_node_for_preemption(candidates, now_ns):
    """pickOneNodeForPreemption read criterion by criterion, candidate by candidate (the
    reference the plugin's column-wise choice is held to)."""
    from kschedcli.plugins.defaultpreemption.victims import earliest_start_of_most_important

    remaining = list(candidates)
    decided = {}
    criteria = [
        ("pdbViolations", lambda c: -c.pdb_violations),
        ("highestVictimPriority", lambda c: -c.pods[0].priority),
        ("victimPrioritySum", lambda c: -sum(p.priority + 2**31 for p in c.pods)),
        ("victimCount", lambda c: -len(c.pods)),
        ("latestStartTime", lambda c: earliest_start_of_most_important(c.pods, now_ns)),
    ]
    for name, score in criteria:
        if len(remaining) == 1:
            break
        best = max(score(c) for c in remaining)
        for c in remaining:
            if score(c) != best:
                decided[c.node] = name
        remaining = [c for c in remaining if score(c) == best]
    return remaining[0].node, [c.node for c in remaining], decided


def test_the_choice_among_many_candidates_matches_reading_them_one_by_one():
    from kschedcli.framework.result import Candidate

    rng = random.Random(7)
    now_ns = 1_800_000_000 * 10**9
    deciding = set()
    for _ in range(300):
        s = scheduler([node("n0")])
        dp = plugin(s, "DefaultPreemption")
        made = []
        for i in range(rng.randint(1, 40)):
            victims = [
                pod(f"v{i}-{j}", priority=rng.choice([0, 10, 100, -5]), start_time=rng.choice(STARTS + [None]))
                for j in range(rng.randint(1, 4))
            ]
            made.append((f"n{i}", victims, rng.choice([0, 0, 0, 1])))
        want = _pick_one_node_for_preemption([Candidate(*m) for m in made], now_ns)
        got_cands = [Candidate(*m) for m in made]
        best, ties = dp.select_candidate(got_cands, now_ns)
        got = (best.node, [c.node for c in ties], {c.node: c.decided_by for c in got_cands if c.decided_by})
        assert got == want
        deciding |= set(want[2].values())
    # (victimCount never decides: each victim adds MaxInt32 + 1 to the sum, so equal sums mean equal counts)
    assert deciding == {"pdbViolations", "highestVictimPriority", "victimPrioritySum", "latestStartTime"}
