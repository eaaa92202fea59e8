"""SelectorSpread (v1.25's, offered by name): scores worked out by hand from the formula
100 × (max − count) / max per node, 1/3 of that plus 2/3 of the zone figure on zoned nodes."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders import fresh_state, node, plugin, pod, scheduler

from kschedcli.api.model import Pod
from kschedcli.config.scheduler import build_profile
from kschedcli.errors import InputError
from kschedcli.plugins import REGISTRY
from kschedcli.plugins.selectorspread import NOT_IN_RELEASE, zone_key

ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
ENABLED = {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "SelectorSpread"}]}}}


def web(name, node_name=None, ns="default", labels=None, spec=None, meta=None):
    p = pod(name, ns=ns, node_name=node_name, labels={"app": "web"} if labels is None else labels, spec=spec)
    if meta:
        p.raw["metadata"].update(meta)
        p = Pod(p.raw)
    return p


def with_service(sched, selector=None, ns="default", name="web"):
    sched.cluster.objects["Service"][(ns, name)] = {
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"app": "web"} if selector is None else selector},
    }
    return sched


def run_score(sched, p):
    """PreScore, Score and NormalizeScore on every node: (raw counts, normalized scores)."""
    pl = plugin(sched, "SelectorSpread")
    state = fresh_state()
    nodes = sched.snapshot.list()
    assert pl.pre_score(state, p, nodes) is None
    raw = {}
    for ni in nodes:
        s, st = pl.score(state, p, ni)
        assert st is None
        raw[ni.node.name] = s
    norm = dict(raw)
    assert pl.normalize_score(state, p, norm) is None
    return raw, norm


def bound_pods():
    return [
        web("w1", "a1"),
        web("w2", "a1"),
        web("w3", "b1"),
        web("db", "a2", labels={"app": "db"}),  # not selected
        web("elsewhere", "a2", ns="other"),  # another namespace
        web("leaving", "a2", meta={"deletionTimestamp": "2024-01-01T00:00:00Z"}),  # being deleted
    ]


def test_counts_per_node_without_zones():
    nodes = [node("a1"), node("a2"), node("b1")]
    sched = with_service(scheduler(nodes, bound_pods(), profile=ENABLED))
    raw, norm = run_score(sched, web("new"))
    assert raw == {"a1": 2, "a2": 0, "b1": 1}
    # max 2: a1 100×0/2 = 0, a2 100×2/2 = 100, b1 100×1/2 = 50
    assert norm == {"a1": 0, "a2": 100, "b1": 50}


def test_zone_weighting_two_thirds():
    nodes = [node("a1", labels={ZONE: "a"}), node("a2", labels={ZONE: "a"}), node("b1", labels={ZONE: "b"})]
    sched = with_service(scheduler(nodes, bound_pods(), profile=ENABLED))
    raw, norm = run_score(sched, web("new"))
    assert raw == {"a1": 2, "a2": 0, "b1": 1}
    # zone totals a = 2, b = 1 (max 2); node figure / zone figure:
    #   a1: 0 / 0 -> 0;  a2: 100 / 0 -> 100/3 = 33.3 -> 33;  b1: 50 / 50 -> 50
    assert norm == {"a1": 0, "a2": 33, "b1": 50}


def test_a_node_without_zone_keeps_its_node_figure_when_others_have_zones():
    nodes = [node("a1", labels={ZONE: "a"}), node("a2"), node("b1", labels={ZONE: "b"})]
    pods = [web("w1", "a1"), web("w2", "a1"), web("w3", "a1"), web("w4", "a2")]
    sched = with_service(scheduler(nodes, pods, profile=ENABLED))
    raw, norm = run_score(sched, web("new"))
    assert raw == {"a1": 3, "a2": 1, "b1": 0}
    # max node 3, zones a = 3, b = 0 (a2 has no zone: not counted); a1: 0 / 0 -> 0;
    # a2 (no zone): 100×2/3 = 66.7 -> 66; b1: 100 / 100 -> 100
    assert norm == {"a1": 0, "a2": 66, "b1": 100}


def test_no_match_anywhere_gives_every_node_the_maximum():
    nodes = [node("a1", labels={ZONE: "a"}), node("b1")]
    sched = with_service(scheduler(nodes, [], profile=ENABLED))
    raw, norm = run_score(sched, web("new"))
    assert raw == {"a1": 0, "b1": 0}
    assert norm == {"a1": 100, "b1": 100}


def test_without_service_or_controller_the_empty_selector_counts_nothing():
    nodes = [node("a1"), node("b1")]
    sched = scheduler(nodes, bound_pods()[:3], profile=ENABLED)
    raw, norm = run_score(sched, web("new"))
    assert raw == {"a1": 0, "b1": 0}
    assert norm == {"a1": 100, "b1": 100}


def test_replicaset_owner_selector():
    nodes = [node("a1"), node("b1")]
    pods = [web("w1", "a1", labels={"app": "web", "tier": "x"}), web("w2", "b1", labels={"app": "web"})]
    sched = scheduler(nodes, pods, profile=ENABLED)
    sched.cluster.objects["ReplicaSet"][("default", "rs")] = {
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"tier": "x"}}},
    }
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "controller": True, "uid": "u"}
    raw, norm = run_score(sched, web("new", labels={"app": "web", "tier": "x"}, meta={"ownerReferences": [owner]}))
    assert raw == {"a1": 1, "b1": 0}
    assert norm == {"a1": 0, "b1": 100}


def test_pod_with_its_own_spread_constraints_scores_zero_everywhere():
    nodes = [node("a1", labels={ZONE: "a"}), node("b1", labels={ZONE: "b"})]
    sched = with_service(scheduler(nodes, bound_pods()[:3], profile=ENABLED))
    c = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {}}
    raw, norm = run_score(sched, web("new", spec={"topologySpreadConstraints": [c]}))
    assert raw == {"a1": 0, "b1": 0} and norm == {"a1": 0, "b1": 0}


def test_zone_key_prefers_the_beta_labels_and_includes_the_region():
    assert zone_key(node("n", labels={ZONE: "a", BETA_ZONE: "old"})) == ":\x00:old"
    assert zone_key(node("n", labels={"topology.kubernetes.io/region": "r", ZONE: "a"})) == "r:\x00:a"
    assert zone_key(node("n")) == ""


def test_enabled_by_name_with_default_weight_and_said_to_be_outside_the_release():
    nodes = [node("a1", labels={ZONE: "a"}), node("a2", labels={ZONE: "a"}), node("b1", labels={ZONE: "b"})]
    sched = with_service(scheduler(nodes, bound_pods(), profile=ENABLED))
    r = sched.schedule(web("new"))
    per = r.scores["a2"]["SelectorSpread"]
    assert (per.raw, per.normalized, per.weight, per.weighted) == (0, 33, 1, 33)
    assert r.scores["a1"]["SelectorSpread"].normalized == 0
    assert r.details["SelectorSpread"]["note"] == NOT_IN_RELEASE
    assert "v1.34.1" in NOT_IN_RELEASE
    assert r.details["SelectorSpread"]["selector"] == "app=web"
    # a weight given in the config is used
    weighted = {
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": "SelectorSpread", "weight": 3}]}},
    }
    sched = with_service(scheduler(nodes, bound_pods(), profile=weighted))
    assert sched.schedule(web("new")).scores["a2"]["SelectorSpread"].weighted == 99
    # enabled at score alone, its PreScore never runs: Score fails as v1.25's did
    score_only = {"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [{"name": "SelectorSpread"}]}}}
    r = with_service(scheduler(nodes, bound_pods(), profile=score_only)).schedule(web("new"))
    assert r.error == (
        'running Score plugins: plugin "SelectorSpread" failed with: '
        'reading "PreScoreSelectorSpread" from cycleState: not found'
    )


def test_not_in_any_default_profile_and_no_filter():
    sched = scheduler([node("a1")])
    assert "SelectorSpread" not in sched.frameworks["default-scheduler"].plugins
    prof = build_profile(ENABLED, "test", REGISTRY)
    assert "SelectorSpread" in prof.points["score"] and "SelectorSpread" in prof.points["preScore"]
    assert "SelectorSpread" not in prof.points["filter"]
    try:
        build_profile(
            {"schedulerName": "x", "plugins": {"filter": {"enabled": [{"name": "SelectorSpread"}]}}}, "t", REGISTRY
        )
    except InputError as e:
        assert "does not extend FilterPlugin" in str(e)
    else:
        raise AssertionError("SelectorSpread accepted as a filter")
