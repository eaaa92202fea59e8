"""The incremental mode of a sequence of alike pods (framework/alike.py, Scheduler.schedule_alike):
`ksched capacity` places its copies from state kept across binds, and every copy must land where
the full cycle puts it. Each case runs capacity twice on fresh clusters, once incrementally and
once with every copy's full cycle, and compares placements and the message of the copy that fits
nowhere; the cases the mode covers must actually run it (few full cycles)."""

from __future__ import annotations

import random

import pytest
from builders import capacity_template as template
from builders import node, pod, scheduler

from kschedcli.whatif.capacity import Template, run_capacity

ZONE = "topology.kubernetes.io/zone"


def world(seed: int, n_nodes: int = 14, *, service: bool = True):
    """A small random cluster: three zones (a node or two without a zone label), uneven sizes, a few
    PreferNoSchedule taints and images, pods of `app: web` and `app: api` already bound, some with
    preferred anti-affinity to web pods; a Service selecting the web pods (system default spreading)."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n_nodes):
        labels = {"pool": rng.choice(["general", "general", "highmem"])}
        if rng.random() > 0.1:
            labels[ZONE] = f"zone-{rng.randrange(3)}"
        taints = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}] if rng.random() < 0.25 else []
        images = (
            [{"names": ["registry.example/web:1"], "sizeBytes": rng.randrange(100, 900) * 1024 * 1024}]
            if rng.random() < 0.3
            else []
        )
        cpu = str(rng.choice([2, 4, 8]))
        mem = f"{rng.choice([4, 8, 16])}Gi"
        nodes.append(node(f"n{i:02d}", cpu=cpu, memory=mem, labels=labels, taints=taints, images=images))
    bound = []
    for k in range(n_nodes * 2):
        app = rng.choice(["web", "api", "api"])
        spec = {}
        if app == "api" and rng.random() < 0.3:
            spec = {
                "affinity": {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": rng.choice([10, 50]),
                                "podAffinityTerm": {
                                    "labelSelector": {"matchLabels": {"app": "web"}},
                                    "topologyKey": rng.choice([ZONE, "kubernetes.io/hostname"]),
                                },
                            }
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
    return nodes, bound, services if service else []


def capacity(seed: int, templates: list[Template], *, incremental: bool, max_copies=None, n_nodes=14, service=True):
    nodes, bound, services = world(seed, n_nodes, service=service)
    sched = scheduler(nodes, bound)
    for s in services:
        sched.cluster.objects["Service"][("default", s["metadata"]["name"])] = s
    full = 0
    schedule = sched.schedule

    def counted(*a, **k):
        nonlocal full
        full += 1
        return schedule(*a, **k)

    sched.schedule = counted  # type: ignore[method-assign]
    report = run_capacity(sched, templates, max_copies=max_copies, incremental=incremental)
    return report, full


def spread(key: str, when: str, max_skew: int = 1, **extra) -> dict:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app": "web"}},
        **extra,
    }


CASES = {
    # system default spreading (the Service's selector), TaintToleration, ImageLocality, InterPodAffinity
    # scoring from the bound pods' preferred anti-affinity
    "plain": lambda: [template("web", {"app": "web"})],
    "zone-spread-hard": lambda: [
        template("web", {"app": "web"}, spec={"topologySpreadConstraints": [spread(ZONE, "DoNotSchedule")]})
    ],
    "host-spread-hard-and-zone-soft": lambda: [
        template(
            "web",
            {"app": "web"},
            spec={
                "topologySpreadConstraints": [
                    spread("kubernetes.io/hostname", "DoNotSchedule", 2),
                    spread(ZONE, "ScheduleAnyway"),
                ]
            },
        )
    ],
    "min-domains-and-node-selector": lambda: [
        template(
            "web",
            {"app": "web"},
            spec={
                "nodeSelector": {"pool": "general"},
                "topologySpreadConstraints": [spread(ZONE, "DoNotSchedule", 1, minDomains=2)],
            },
        )
    ],
    "preferred-node-affinity": lambda: [
        template(
            "web",
            {"app": "web"},
            spec={
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 40,
                                "preference": {
                                    "matchExpressions": [{"key": "pool", "operator": "In", "values": ["highmem"]}]
                                },
                            }
                        ]
                    }
                }
            },
        )
    ],
    "several-templates": lambda: [
        template("web", {"app": "web"}, cpu="700m"),
        template(
            "api", {"app": "api"}, cpu="200m", spec={"topologySpreadConstraints": [spread(ZONE, "ScheduleAnyway")]}
        ),
        template("web2", {"app": "web"}, cpu="100m"),
    ],
}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("case", sorted(CASES))
def test_incremental_copies_land_where_full_cycles_put_them(case, seed):
    inc, full_in_inc = capacity(seed, CASES[case](), incremental=True)
    ref, full_in_ref = capacity(seed, CASES[case](), incremental=False)
    assert [r.placements for r in inc.runs] == [r.placements for r in ref.runs]
    assert [r.stop_message for r in inc.runs] == [r.stop_message for r in ref.runs]
    assert [r.stopped_by for r in inc.runs] == [r.stopped_by for r in ref.runs]
    total = inc.replicas
    assert total > len(inc.runs) * 3, "too few copies to say anything"
    # the mode ran: per template, the first copy's full cycle and the stopping copy's (twice: verdict
    # and explanation) only
    assert full_in_inc <= 3 * len(inc.runs) < full_in_ref


def anti(key: str, app: str = "web", selector: dict | None = None) -> dict:
    term = {"labelSelector": {"matchLabels": selector or {"app": app}}, "topologyKey": key}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


ANTI_CASES = {
    # one per host: InterPodAffinity's tracker moves PreFilter's counts with each copy
    "host": lambda: [template("web", {"app": "web"}, spec=anti("kubernetes.io/hostname"))],
    # one per zone (then on the nodes without a zone), beside spreading
    "zone": lambda: [
        template(
            "web",
            {"app": "web", "tier": "solo"},
            spec={
                **anti(ZONE, selector={"tier": "solo"}),
                "topologySpreadConstraints": [spread("kubernetes.io/hostname", "ScheduleAnyway")],
            },
        )
    ],
    # away from the api pods per host (the copies do not match their own term)
    "other-app": lambda: [template("web", {"app": "web"}, cpu="900m", spec=anti("kubernetes.io/hostname", "api"))],
    # a preferred term: not covered, every copy's full cycle
    "preferred": lambda: [
        template(
            "web",
            {"app": "web"},
            spec={
                "affinity": {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 30,
                                "podAffinityTerm": {
                                    "labelSelector": {"matchLabels": {"app": "web"}},
                                    "topologyKey": "kubernetes.io/hostname",
                                },
                            }
                        ]
                    }
                }
            },
        )
    ],
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("case", sorted(ANTI_CASES))
def test_anti_affinity_copies_land_where_full_cycles_put_them(case, seed):
    inc, full_in_inc = capacity(seed, ANTI_CASES[case](), incremental=True)
    ref, full_in_ref = capacity(seed, ANTI_CASES[case](), incremental=False)
    assert [r.placements for r in inc.runs] == [r.placements for r in ref.runs]
    assert [r.stop_message for r in inc.runs] == [r.stop_message for r in ref.runs]
    placed = inc.runs[0].placements
    if case == "host":
        assert len(set(placed)) == len(placed) > 3
    if case == "zone":
        zone_of = {n.name: n.labels.get(ZONE) for n in world(seed)[0]}
        zones = [zone_of[p] for p in placed if zone_of[p] is not None]
        assert len(zones) == len(set(zones)) >= 2  # one copy per zone at most
    if case == "preferred":
        assert full_in_inc == full_in_ref  # not covered: every copy's full cycle
    elif len(placed) > 2:
        assert full_in_inc <= 3 < full_in_ref


def test_a_bind_the_mode_was_not_told_of_rebuilds_its_state():
    nodes, bound, _ = world(1)
    sched = scheduler(nodes, bound)
    t = template("web", {"app": "web"}, spec={"topologySpreadConstraints": [spread(ZONE, "DoNotSchedule")]})
    from kschedcli.whatif.capacity import copies

    it = copies(t, sched.cluster)
    placed = []
    for k in range(12):
        p = next(it)
        r = sched.schedule_alike(p)
        full = sched.schedule(p, with_details=False)
        assert r.selected_node == full.selected_node, k
        sched.bind(p, r.selected_node)
        placed.append(r.selected_node)
        if k == 5:
            # a pod of the same app bound behind the sequence's back (straight into the snapshot)
            other = pod("web-extra", labels={"app": "web"}, requests={"cpu": "100m"})
            sched.snapshot.bind(other, placed[0])
    assert len(placed) == 12
