"""`capacity --sampling` places alike copies incrementally (scheduling/sampled_alike.py): every copy
must land where the sampled cycle puts it (Scheduler.schedule with sampling on, the cycle per copy),
and the start index must move as it does. Each case runs capacity twice on fresh clusters of 100+
nodes, once incrementally and once with every copy's sampled cycle, and compares the placements,
the start index after each copy, the stopping copy's message; the cases the mode covers must run
it, those it does not must fall back to the cycle."""

from __future__ import annotations

import random

import pytest
from builders import capacity_template as template
from builders import node, pod, scheduler

from kschedcli.whatif.capacity import run_capacity

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOST = "kubernetes.io/hostname"


def world(seed: int, n_nodes: int):
    """A random cluster of `n_nodes`: zones in two regions (one zone name in both) and some nodes
    without zone labels, uneven sizes, PreferNoSchedule taints, images, a few cordoned nodes, pods
    of `app: web` and `app: api` bound (some with preferred anti-affinity to web pods), and a Service
    selecting the web pods (system default spreading)."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n_nodes):
        labels = {"pool": rng.choice(["general", "general", "highmem"])}
        if rng.random() > 0.08:
            labels[REGION] = rng.choice(["r1", "r2"])
            labels[ZONE] = f"zone-{rng.randrange(3)}"
        taints = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}] if rng.random() < 0.2 else []
        images = (
            [{"names": ["registry.example/web:1"], "sizeBytes": rng.randrange(100, 900) * 1024 * 1024}]
            if rng.random() < 0.3
            else []
        )
        nodes.append(
            node(
                f"n{i:03d}",
                cpu=str(rng.choice([1, 2, 4])),
                memory=f"{rng.choice([2, 4, 8])}Gi",
                labels=labels,
                taints=taints,
                images=images,
                unschedulable=rng.random() < 0.05,
            )
        )
    rng.shuffle(nodes)  # the node tree adds them by name all the same
    bound = []
    for k in range(n_nodes * 2):
        app = rng.choice(["web", "api", "api"])
        spec: dict = {}
        if app == "api" and rng.random() < 0.3:
            term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": rng.choice([ZONE, HOST])}
            spec = {
                "affinity": {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": rng.choice([10, 50]), "podAffinityTerm": term}
                        ]
                    }
                }
            }
        bound.append(
            pod(
                f"{app}-{k}",
                labels={"app": app},
                requests={"cpu": rng.choice(["100m", "250m", "500m"]), "memory": "256Mi"},
                node_name=rng.choice(nodes).name,
                spec=spec,
            )
        )
    services = [
        {"kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}}
    ]
    return nodes, bound, services


def spread(key: str, when: str, max_skew: int = 1) -> dict:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app": "web"}},
    }


def capacity(seed, templates, *, incremental, n_nodes=160, start=0, pct=0, profile_pct=None, max_copies=120):
    nodes, bound, services = world(seed, n_nodes)
    sched = scheduler(nodes, bound)
    for s in services:
        sched.cluster.objects["Service"][("default", s["metadata"]["name"])] = s
    sched.config.percentage_of_nodes_to_score = pct
    sched.frameworks["default-scheduler"].profile.percentage_of_nodes_to_score = profile_pct
    sched.enable_sampling(start)
    starts: list[int] = []

    def moved(_copies: int) -> None:
        assert sched.sampling is not None
        starts.append(sched.sampling.next_start)

    report = run_capacity(sched, templates, max_copies=max_copies, incremental=incremental, progress=moved)
    assert sched.sampling is not None
    taken = sum(s.taken for s in sched.sampled_alike.values())
    trace = (
        [r.placements for r in report.runs],
        [r.stop_message for r in report.runs],
        [r.stopped_by for r in report.runs],
        starts,
        sched.sampling.next_start,
    )
    return trace, taken, report.replicas


def preferred_pool() -> dict:
    pref = {
        "weight": 40,
        "preference": {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["highmem"]}]},
    }
    return {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [pref]}}}


# the cases the incremental mode covers
CASES = {
    # system default spreading (the Service), TaintToleration, ImageLocality, InterPodAffinity scoring
    # from the bound pods' preferred anti-affinity
    "plain": lambda: [template("web", {"app": "web"})],
    "zone-and-host-spread-soft": lambda: [
        template(
            "web",
            {"app": "web"},
            spec={"topologySpreadConstraints": [spread(ZONE, "ScheduleAnyway"), spread(HOST, "ScheduleAnyway", 2)]},
        )
    ],
    "preferred-node-affinity": lambda: [template("web", {"app": "web"}, spec=preferred_pool())],
    "no-spreading": lambda: [template("batch", {"app": "batch"}, cpu="150m")],
    "several-templates": lambda: [
        template("web", {"app": "web"}, cpu="700m"),
        template(
            "api", {"app": "api"}, cpu="200m", spec={"topologySpreadConstraints": [spread(ZONE, "ScheduleAnyway")]}
        ),
        template("web2", {"app": "web"}, cpu="100m"),
    ],
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("case", sorted(CASES))
def test_incremental_sampled_copies_land_where_sampled_cycles_put_them(case, seed):
    start = [0, 37, 101, 159][seed]
    inc, taken, copies = capacity(seed, CASES[case](), incremental=True, start=start)
    ref, taken_ref, _ = capacity(seed, CASES[case](), incremental=False, start=start)
    assert inc == ref
    assert copies > 20, "too few copies to say anything"
    # the mode ran: every copy but each template's first from the kept state
    assert taken_ref == 0 and taken >= copies - 2 * len(CASES[case]())


@pytest.mark.parametrize(
    ("n_nodes", "pct", "profile_pct"),
    [
        (60, 0, None),  # fewer than 100 nodes: every node searched, the all-nodes answer
        (260, 0, 10),  # the profile's own percentage: 100 of 260
        (260, 50, None),  # the global one: 130 of 260
        (130, 0, None),  # adaptive: 100 of 130, the window shifting by a few nodes a copy
    ],
)
def test_the_number_to_find_and_small_clusters(n_nodes, pct, profile_pct):
    kw = dict(n_nodes=n_nodes, pct=pct, profile_pct=profile_pct, start=n_nodes // 3)
    inc, taken, copies = capacity(7, CASES["plain"](), incremental=True, **kw)
    ref, _, _ = capacity(7, CASES["plain"](), incremental=False, **kw)
    assert inc == ref
    assert taken >= copies - 2


def test_copies_until_the_cluster_is_full_then_the_cycle_says_why():
    # nodes fill up (they leave the feasible sequence as they do) until no copy fits; the copy that
    # fits nowhere takes the sampled cycle, which searches every node; every other copy, the first
    # too, is placed from the state
    t = [template("big", {"app": "web"}, cpu="600m")]
    inc, taken, copies = capacity(3, t, incremental=True, n_nodes=140, max_copies=None)
    ref, _, _ = capacity(3, t, incremental=False, n_nodes=140, max_copies=None)
    assert inc == ref
    assert inc[2] == ["unschedulable"] and "Insufficient cpu" in (inc[1][0] or "")
    assert taken == copies


def anti(key: str) -> dict:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": key}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


# the cases it does not cover: each copy changes the verdicts of other nodes (a whole zone's under
# required anti-affinity, every node's under DoNotSchedule spreading as the minimum moves), or a
# PreFilterResult narrows the nodes searched: the sampled cycle runs for every copy
FALLBACK_CASES = {
    "zone-spread-hard": lambda: [
        template("web", {"app": "web"}, spec={"topologySpreadConstraints": [spread(ZONE, "DoNotSchedule", 3)]})
    ],
    "anti-affinity-per-zone": lambda: [template("web", {"app": "web"}, cpu="100m", spec=anti(ZONE))],
    "anti-affinity-per-host": lambda: [template("solo", {"app": "web"}, cpu="100m", spec=anti(HOST))],
    "prefilter-result": lambda: [
        template(
            "pinned",
            {"app": "pinned"},
            cpu="100m",
            spec={
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [f"n{i:03d}"]}]}
                                for i in range(0, 160, 2)
                            ]
                        }
                    }
                }
            },
        )
    ],
}


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("case", sorted(FALLBACK_CASES))
def test_cases_whose_reuse_is_not_valid_take_the_sampled_cycle(case, seed):
    inc, taken, copies = capacity(seed, FALLBACK_CASES[case](), incremental=True, start=11 + seed)
    ref, _, _ = capacity(seed, FALLBACK_CASES[case](), incremental=False, start=11 + seed)
    assert inc == ref
    assert copies > 2
    assert taken == 0


def test_the_result_carries_the_search_account():
    nodes, bound, _ = world(5, 160)
    sched = scheduler(nodes, bound)
    sched.enable_sampling(20)
    t = template("web", {"app": "web"})
    from kschedcli.whatif.capacity import copies

    results = []
    for p in copies(t, sched.cluster, 5):
        r = sched.schedule_alike(p)
        results.append(r)
        sched.bind(p, r.selected_node)
    assert sched.sampled_alike["default-scheduler"].taken == 5  # the first copy too
    for before, after in zip(results, results[1:]):
        assert after.sampling.start_index == before.sampling.next_start_index
    last = results[-1].sampling
    assert last.next_start_index == sched.sampling.next_start
    assert last.feasible_nodes == last.num_feasible_nodes_to_find == 100
    assert last.evaluated_nodes >= 100 and last.searched_nodes == 160
