"""The per-term aggregate InterPodAffinity keeps of the existing pods' terms, and DefaultPreemption's
faster reprieve, each checked against a straightforward re-statement of kube-scheduler's loops on
random small clusters (including binds between cycles, which the aggregate follows incrementally)."""

import random

from builders import fresh_state, node, plugin, pod, scheduler

from kschedcli.plugins.defaultpreemption.victims import Budgets, more_important, sort_by_importance
from kschedcli.plugins.interpodaffinity.plugin import PRE_FILTER_KEY, PRE_SCORE_KEY, SAMPLE_LIMIT
from kschedcli.plugins.interpodaffinity.terms import pod_terms

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ["web", "db", "cache"]


def _term(rng):
    t = {"labelSelector": {"matchLabels": {"app": rng.choice(APPS)}}, "topologyKey": rng.choice([ZONE, HOST, "rack"])}
    if rng.random() < 0.2:
        t["namespaces"] = ["default", "other"]
    return t


def _affinity(rng):
    a = {}
    for section in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.6:
            s = {}
            if rng.random() < 0.5:
                s["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(rng)]
            if rng.random() < 0.7:
                s["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng)} for _ in range(rng.randint(1, 2))
                ]
            a[section] = s
    return {"affinity": a} if a else None


def _cluster(rng, n_nodes=6, n_pods=40):
    nodes = []
    for i in range(n_nodes):
        labels = {}
        if rng.random() < 0.8:
            labels[ZONE] = rng.choice("ab")
        if rng.random() < 0.5:
            labels["rack"] = rng.choice("xyz")
        nodes.append(node(f"n{i}", labels=labels))
    # a few shared specs, as replicas of a workload have
    specs = [_affinity(rng) for _ in range(5)]
    pods = []
    for i in range(n_pods):
        spec = rng.choice(specs)
        pods.append(
            pod(
                f"p{i}",
                ns=rng.choice(["default", "other"]),
                node_name=f"n{rng.randrange(n_nodes)}",
                labels={"app": rng.choice(APPS)},
                spec=spec,
                requests={"cpu": "10m"},
            )
        )
    return nodes, pods, specs


def _reference_pre_score(sched, p, hard):
    """The existing pods' side of PreScore, pod by pod, as kube-scheduler loops."""
    ns_labels = sched.cluster.namespace_labels.get(p.namespace) or {"kubernetes.io/metadata.name": p.namespace}
    score, sample, total = {}, [], 0
    for ni in sched.snapshot.list():
        labels = ni.node.labels
        for ep in ni.pods_with_affinity:
            et = pod_terms(ep)
            for kind, lst in (
                ("requiredAffinity", et.required_affinity if hard > 0 else ()),
                ("preferredAffinity", et.preferred_affinity),
                ("preferredAntiAffinity", et.preferred_anti_affinity),
            ):
                for i, t in enumerate(lst):
                    tv = labels.get(t.topology_key)
                    if tv is None or not t.matches(p, ns_labels):
                        continue
                    w = hard if kind == "requiredAffinity" else (t.weight if kind == "preferredAffinity" else -t.weight)
                    d = score.setdefault(t.topology_key, {})
                    d[tv] = d.get(tv, 0) + w
                    total += 1
                    if len(sample) < SAMPLE_LIMIT:
                        sample.append(
                            {
                                "pod": ep.key,
                                "node": ni.node.name,
                                "term": f"{kind}[{i}]",
                                "topologyKey": t.topology_key,
                                "domain": tv,
                                "weight": w,
                            }
                        )
    return score, sample, total


def _reference_existing_anti(sched, p):
    ns_labels = sched.cluster.namespace_labels.get(p.namespace) or {"kubernetes.io/metadata.name": p.namespace}
    counts, sample, total = {}, [], 0
    for ni in sched.snapshot.list():
        labels = ni.node.labels
        for ep in ni.pods_with_required_anti_affinity:
            for i, t in enumerate(pod_terms(ep).required_anti_affinity):
                if t.matches(p, ns_labels):
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        counts[(t.topology_key, tv)] = counts.get((t.topology_key, tv), 0) + 1
                    total += 1
                    if len(sample) < SAMPLE_LIMIT:
                        sample.append(
                            {
                                "pod": ep.key,
                                "node": ni.node.name,
                                "term": i,
                                "topologyKey": t.topology_key,
                                "domain": tv,
                            }
                        )
    return counts, sample, total


def _check_cycle(sched, p):
    pl = plugin(sched, "InterPodAffinity")
    # PreFilter: existing pods' required anti-affinity
    state = fresh_state()
    pl.pre_filter(state, p, sched.snapshot.list())
    counts, sample, total = _reference_existing_anti(sched, p)
    pf = state.get(PRE_FILTER_KEY)
    if pf is not None:
        assert pf.existing_anti_counts == counts
        ex = pf.trace["existing"]
        assert ex.items == sample
        assert ex.more == total - len(sample)
    else:
        assert not counts
    # PreScore: without the incoming pod's own preferred terms, only the existing pods count
    state = fresh_state()
    st = pl.pre_score(state, p, sched.snapshot.list())
    score, sample, total = _reference_pre_score(sched, p, pl.hard_pod_affinity_weight)
    ps = state.get(PRE_SCORE_KEY)
    if ps is None:
        assert st is not None and not score
        return 0
    assert ps.topology_score == score
    assert ps.trace["existing"].items == sample
    assert ps.trace["existing"].more == total - len(sample)
    return total


def test_aggregated_existing_terms_match_the_pod_by_pod_loops_across_binds():
    rng = random.Random(7)
    seen_scores = 0
    for round_ in range(8):
        nodes, pods, specs = _cluster(rng, n_pods=30 + 10 * round_)
        sched = scheduler(nodes, pods)
        for k in range(6):
            incoming = pod(f"in{k}", ns=rng.choice(["default", "other"]), labels={"app": rng.choice(APPS)})
            seen_scores += _check_cycle(sched, incoming)
            # bind a pod with terms: the aggregate must follow the changed node only
            newcomer = pod(
                f"new{round_}-{k}", labels={"app": rng.choice(APPS)}, spec=rng.choice(specs), requests={"cpu": "10m"}
            )
            sched.bind(newcomer, f"n{rng.randrange(len(nodes))}")
    assert seen_scores > 0  # the random clusters did exercise matching terms


def test_sample_is_bounded_and_counts_the_rest():
    nodes = [node("n0", labels={ZONE: "a"}), node("n1", labels={ZONE: "b"})]
    spec = {
        "affinity": {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 3,
                        "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE},
                    }
                ]
            }
        }
    }
    pods = [pod(f"p{i}", node_name=f"n{i % 2}", labels={"app": "x"}, spec=spec) for i in range(SAMPLE_LIMIT + 5)]
    sched = scheduler(nodes, pods)
    state = fresh_state()
    pl = plugin(sched, "InterPodAffinity")
    assert pl.pre_score(state, pod("in", labels={"app": "web"}), sched.snapshot.list()) is None
    ps = state.get(PRE_SCORE_KEY)
    assert ps.topology_score == {ZONE: {"a": 3 * 13, "b": 3 * 12}}
    assert len(ps.trace["existing"].items) == SAMPLE_LIMIT
    assert ps.trace["existing"].more == 5
    assert ps.trace["existing"].items[0]["pod"] == "default/p0"
    assert ps.trace["existing"].items[1]["pod"] == "default/p2"  # node order, then pod order


# -- preemption's reprieve -----------------------------------------------------------------------


def _reference_select_victims(fw, state, p, node_info, budgets, less):
    """SelectVictimsOnNode as kube-scheduler writes it: every filter in order on every reprieve."""
    potential = [q for q in node_info.pods if q.priority < p.priority]
    ni = node_info.clone()
    state = state.clone()
    for q in potential:
        ni.remove_pod(q)
        fw.run_pre_filter_remove_pod(state, p, q, ni)
    st = fw.run_filter_plugins(state, p, ni)
    if st is not None:
        return None, st.message()
    sort_by_importance(potential, less)
    violating, fine = budgets.split(potential)
    victims, n_violating = [], 0
    for group in (violating, fine):
        for q in group:
            ni.add_pod(q)
            fw.run_pre_filter_add_pod(state, p, q, ni)
            if fw.run_filter_plugins(state, p, ni) is None:
                continue
            ni.remove_pod(q)
            fw.run_pre_filter_remove_pod(state, p, q, ni)
            victims.append(q)
            if group is violating:
                n_violating += 1
    if violating and fine:
        sort_by_importance(victims, less)
    return ([q.key for q in victims], n_violating), None


def test_reprieve_matches_running_every_filter_in_order():
    rng = random.Random(11)
    compared = 0
    for _ in range(25):
        nodes = [
            node(f"n{i}", cpu=str(rng.randint(2, 4)), pods=str(rng.randint(4, 12)), labels={ZONE: rng.choice("ab")})
            for i in range(4)
        ]
        pods = []
        for i in range(rng.randint(6, 24)):
            spec = None
            if rng.random() < 0.3:  # anti-affinity among the existing pods: an IPA filter that pods change
                spec = {
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchLabels": {"app": "big"}},
                                    "topologyKey": rng.choice([ZONE, HOST]),
                                }
                            ]
                        }
                    }
                }
            if rng.random() < 0.2:
                spec = dict(
                    spec or {},
                    containers=[
                        {
                            "name": "c",
                            "image": "a",
                            "resources": {"requests": {"cpu": "100m"}},
                            "ports": [{"containerPort": 80, "hostPort": 8080}],
                        }
                    ],
                )
            pods.append(
                pod(
                    f"p{i}",
                    node_name=f"n{rng.randrange(4)}",
                    priority=rng.choice([0, 10, 2000]),
                    labels={"app": rng.choice(["web", "db"])},
                    requests={"cpu": f"{rng.randint(1, 12) * 100}m"},
                    start_time=f"2025-01-0{rng.randint(1, 9)}T00:00:00Z",
                    spec=spec,
                )
            )
        spec = {}
        if rng.random() < 0.5:
            spec["containers"] = [
                {
                    "name": "c",
                    "image": "a",
                    "resources": {"requests": {"cpu": f"{rng.randint(5, 30)}00m"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080}],
                }
            ]
        incoming = pod(
            "big", priority=1000, labels={"app": "big"}, requests={"cpu": f"{rng.randint(5, 30)}00m"}, spec=spec or None
        )
        compared += len(_compare_with_reference(nodes, pods, incoming, []))
    assert compared > 10


def _compare_with_reference(nodes, pods, incoming, pdbs, arithmetic=False) -> list:
    """select_victims_on_node against _reference_select_victims on every node with a lower-priority
    pod; returns (node_info, victims) of the nodes where both found victims."""
    sched = scheduler(nodes, pods)
    fw = sched.frameworks["default-scheduler"]
    dp = plugin(sched, "DefaultPreemption")
    state = fresh_state()
    fw.run_pre_filter(state, incoming)
    if arithmetic:
        assert not fw.pre_filter_extensions("add_pod", state)  # the arithmetic path applies
    budgets = Budgets(pdbs)
    less = more_important(0)
    found = []
    for ni in sched.snapshot.list():
        if not any(q.priority < incoming.priority for q in ni.pods):
            continue
        victims, n_viol, st = dp.select_victims_on_node(state, incoming, ni, budgets, less)
        ref, ref_msg = _reference_select_victims(fw, state, incoming, ni, budgets, less)
        if ref is None:
            assert st is not None and st.message() == ref_msg
            continue
        assert st is None and ([q.key for q in victims], n_viol) == ref
        found.append((ni, victims))
    return found


def test_resource_only_reprieve_matches_running_every_filter():
    """With nothing but NodeResourcesFit able to change its verdict (no ports, no inter-pod terms),
    the reprieve is plain arithmetic: it must still keep exactly the pods the full walk keeps,
    pod-count limits and PDB-violating pods included."""
    rng = random.Random(5)
    compared = tight = 0
    for _ in range(40):
        nodes = [
            node(f"n{i}", cpu=str(rng.randint(2, 4)), memory=f"{rng.randint(2, 6)}Gi", pods=str(rng.randint(3, 8)))
            for i in range(3)
        ]
        pods = [
            pod(
                f"p{i}",
                node_name=f"n{rng.randrange(3)}",
                priority=rng.choice([0, 10, 2000]),
                labels={"app": rng.choice(["web", "db"])},
                requests={"cpu": f"{rng.randint(1, 12) * 100}m", "memory": f"{rng.randint(1, 8) * 128}Mi"},
                start_time=f"2025-01-0{rng.randint(1, 9)}T00:00:00Z",
            )
            for i in range(rng.randint(6, 20))
        ]
        incoming = pod(
            "big",
            priority=1000,
            requests={"cpu": f"{rng.randint(5, 30)}00m", "memory": f"{rng.randint(1, 16) * 128}Mi"},
        )
        pdbs = (
            [
                {
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}},
                    "status": {"disruptionsAllowed": rng.randint(0, 2)},
                }
            ]
            if rng.random() < 0.5
            else []
        )
        for ni, victims in _compare_with_reference(nodes, pods, incoming, pdbs, arithmetic=True):
            compared += 1
            if len(ni.pods) - len(victims) + 1 >= ni.node.allocatable.allowed_pods:
                tight += 1
    assert compared > 30 and tight > 3


def test_dry_run_over_every_potential_node_matches_the_full_walk():
    """The dry run's many-node path (node-only filters decided a column at a time, each node's pods
    kept in importance order with running totals, the node without the lower-priority pods found by
    subtraction) keeps exactly the victims the full walk keeps on every potential node, and reports
    the same reason where there are none. Covers ties among more than 12 pods and pods without a
    start time (Go's own sort decides both), PDBs, tight pod counts, and a profile that runs
    TaintToleration after NodeResourcesFit (the taint then only shows once the pods are gone)."""
    import time

    from kschedcli.framework.cycle_state import CycleState

    taint_after_fit = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "filter": {
                "disabled": [{"name": "*"}],
                "enabled": [{"name": "NodeResourcesFit"}, {"name": "TaintToleration"}],
            }
        },
    }
    rng = random.Random(17)
    compared = no_start = many_ties = tainted = 0
    for trial in range(80):
        profile = taint_after_fit if trial % 3 == 2 else None
        nodes = [
            node(
                f"n{i}",
                cpu=str(rng.randint(2, 8)),
                memory=f"{rng.randint(2, 16)}Gi",
                pods=str(rng.choice([5, 9, 40])),
                taints=[{"key": "t", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.3 else None,
            )
            for i in range(4)
        ]
        no_start_here = rng.random() < 0.2
        pods = [
            pod(
                f"p{i}",
                node_name=f"n{rng.randrange(4)}",
                priority=rng.choice([0, 10, 2000]),
                labels={"app": rng.choice(["web", "db"])},
                requests={"cpu": f"{rng.randint(1, 6) * 100}m", "memory": f"{rng.randint(1, 8) * 128}Mi"},
                start_time=(
                    None if no_start_here and rng.random() < 0.3 else f"2025-01-0{rng.randint(1, 3)}T00:00:00Z"
                ),
            )
            for i in range(rng.randint(10, 70))
        ]
        incoming = pod(
            "big",
            priority=1000,
            requests={"cpu": f"{rng.randint(5, 60)}00m", "memory": f"{rng.randint(1, 16) * 256}Mi"},
        )
        pdbs = (
            [
                {
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}},
                    "status": {"disruptionsAllowed": rng.randint(0, 3)},
                }
            ]
            if rng.random() < 0.5
            else []
        )
        sched = scheduler(nodes, pods, profile=profile)
        for b in pdbs:
            sched.cluster.objects["PodDisruptionBudget"][("default", b["metadata"]["name"])] = b
        res = sched.schedule(incoming)
        if res.preemption is None or not res.preemption.potential_nodes:
            continue
        fw = sched.frameworks["default-scheduler"]
        state = CycleState()
        fw.run_pre_filter(state, incoming)
        budgets, less = Budgets(pdbs), more_important(time.time_ns())
        found = {c.node: (c.victims, c.pdb_violations) for c in res.preemption.candidates}
        # without this cycle's filter columns to read, the node-only filters are asked again
        from kschedcli.framework.runtime import NodeStatuses

        assert state.filter_columns is None
        potential = [
            sched.snapshot.get(n)
            for n, v in res.filters.items()
            if v.first_failure is not None and v.first_failure.code == "Unschedulable"
        ]
        dp = fw.plugins["DefaultPreemption"]
        nv, v, _ = dp.dry_run(state, incoming, potential, NodeStatuses(), time.time_ns())
        assert {c.node: (c.victims, c.pdb_violations) for c in nv + v} == found
        for name, verdict in res.filters.items():
            if verdict.first_failure is None or verdict.first_failure.code != "Unschedulable":
                continue
            ni = sched.snapshot.get(name)
            low = [q for q in ni.pods if q.priority < incoming.priority]
            if not low:
                assert name not in found
                continue
            ref, ref_msg = _reference_select_victims(fw, state, incoming, ni, budgets, less)
            compared += 1
            no_start += any(not q.start_time for q in ni.pods)
            many_ties += len(low) > 12
            if ref is None:
                assert name not in found and ref_msg in res.preemption.not_helpful[name]
                tainted += "taint" in ref_msg
            else:
                assert found.get(name) == ref, name
    assert compared > 60 and no_start > 5 and many_ties > 5 and tainted > 2, (compared, no_start, many_ties, tainted)
