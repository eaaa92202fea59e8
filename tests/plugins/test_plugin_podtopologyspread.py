import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders import fresh_state, node, plugin, pod, scheduler, score_nodes_is_each_score

from kschedcli.api.model import Pod
from kschedcli.framework.interface import ClusterEvent
from kschedcli.framework.status import ERROR, SKIP, UNRESOLVABLE, UNSCHEDULABLE
from kschedcli.plugins.podtopologyspread.common import go_log, go_round, topology_normalizing_weight
from kschedcli.plugins.podtopologyspread.counting import CriticalPaths
from kschedcli.plugins.podtopologyspread.plugin import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_KEY,
)

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def zone_node(name, zone, **kw):
    labels = {ZONE: zone, **kw.pop("labels", {})}
    return node(name, labels=labels, **kw)


def spread(key, max_skew=1, when="DoNotSchedule", selector=None, **extra):
    c = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": selector if selector is not None else {"matchLabels": {"app": "web"}},
    }
    c.update(extra)
    return c


def web(name, node_name=None, ns="default", labels=None, constraints=None, spec=None, meta=None):
    s = dict(spec or {})
    if constraints is not None:
        s["topologySpreadConstraints"] = constraints
    p = pod(name, ns=ns, node_name=node_name, labels=labels if labels is not None else {"app": "web"}, spec=s)
    if meta:
        p.raw["metadata"].update(meta)
        p = Pod(p.raw)
    return p


def run_filter(sched, p):
    """PreFilter then Filter on every node: {node: status or None}, plus the PreFilter status."""
    pl = plugin(sched, "PodTopologySpread")
    state = fresh_state()
    _, st = pl.pre_filter(state, p, sched.snapshot.list())
    if st is not None:
        return st, {}, state
    return None, {ni.node.name: pl.filter(state, p, ni) for ni in sched.snapshot.list()}, state


def run_score(sched, p, names=None):
    pl = plugin(sched, "PodTopologySpread")
    state = fresh_state()
    nodes = [ni for ni in sched.snapshot.list() if names is None or ni.node.name in names]
    st = pl.pre_score(state, p, nodes)
    if st is not None:
        return st, None, None
    raw = {ni.node.name: pl.score(state, p, ni)[0] for ni in nodes}
    norm = dict(raw)
    assert pl.normalize_score(state, p, norm) is None
    return None, raw, norm


# --------------------------------------------------------------------------- Filter


# the pods of the ReplicaSet web-rs (app=web): the system defaults spread them by its selector
WEB_RS_OWNER = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-rs", "controller": True}]


def with_web_rs(sched):
    """The ReplicaSet web-rs (selector app=web) among the scheduler's cluster objects."""
    sched.cluster.objects["ReplicaSet"][("default", "web-rs")] = {
        "kind": "ReplicaSet",
        "metadata": {"name": "web-rs", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
    }


def test_filter_rejects_the_crowded_zone_with_the_exact_reason():
    nodes = [zone_node("a1", "a"), zone_node("a2", "a"), zone_node("b1", "b")]
    pods = [web("w1", "a1"), web("w2", "a2")]
    sched = scheduler(nodes, pods)
    pf, res, _ = run_filter(sched, web("new", constraints=[spread(ZONE)]))
    assert pf is None
    # zone a: 2 + 1 - 0 = 3 > 1; zone b: 0 + 1 - 0 = 1
    assert res["a1"].code == UNSCHEDULABLE
    assert res["a1"].reasons == [ERR_REASON_CONSTRAINTS_NOT_MATCH]
    assert res["a2"].code == UNSCHEDULABLE
    assert res["b1"] is None


def test_filter_missing_topology_label_is_unresolvable():
    nodes = [zone_node("a1", "a"), node("bare")]
    sched = scheduler(nodes)
    _, res, _ = run_filter(sched, web("new", constraints=[spread(ZONE)]))
    assert res["a1"] is None
    assert res["bare"].code == UNRESOLVABLE
    assert res["bare"].reasons == [ERR_REASON_NODE_LABEL_NOT_MATCH]


def test_prefilter_skips_without_hard_constraints_or_default_selector():
    sched = scheduler([zone_node("a1", "a")])
    pl = plugin(sched, "PodTopologySpread")
    # no constraints, no Service/controller: the system defaults get no selector
    _, st = pl.pre_filter(fresh_state(), web("plain"), sched.snapshot.list())
    assert st.code == SKIP
    # only soft constraints: nothing for PreFilter
    _, st = pl.pre_filter(
        fresh_state(), web("soft", constraints=[spread(ZONE, when="ScheduleAnyway")]), sched.snapshot.list()
    )
    assert st.code == SKIP


def test_filter_without_prefilter_state_is_an_error():
    sched = scheduler([zone_node("a1", "a")])
    st = plugin(sched, "PodTopologySpread").filter(fresh_state(), web("p"), sched.snapshot.list()[0])
    assert st.code == ERROR
    assert st.reasons == [f'reading "{PRE_FILTER_KEY}" from cycleState: not found']


def test_other_namespaces_and_terminating_pods_do_not_count():
    nodes = [zone_node("a1", "a"), zone_node("b1", "b")]
    pods = [
        web("other-ns", "a1", ns="team-x"),
        web("dying", "a1", meta={"deletionTimestamp": "2025-01-01T00:00:00Z"}),
        web("w1", "b1"),
    ]
    assert pods[1].deleting
    sched = scheduler(nodes, pods)
    _, res, state = run_filter(sched, web("new", constraints=[spread(ZONE)]))
    s = state.read(PRE_FILTER_KEY)
    assert s.counts[0] == {"a": 0, "b": 1}
    assert res["a1"] is None
    # b: 1 + 1 - 0 = 2 > 1
    assert res["b1"].code == UNSCHEDULABLE


def test_min_domains_makes_the_global_minimum_zero():
    nodes = [zone_node("a1", "a"), zone_node("b1", "b")]
    pods = [web("w1", "a1"), web("w2", "b1")]
    sched = scheduler(nodes, pods)
    # each zone holds 1: without minDomains the min is 1 and 1 + 1 - 1 = 1 passes
    _, res, _ = run_filter(sched, web("new", constraints=[spread(ZONE)]))
    assert res == {"a1": None, "b1": None}
    # minDomains 3 > 2 eligible domains: min is 0, 1 + 1 - 0 = 2 > 1
    _, res, state = run_filter(sched, web("new2", constraints=[spread(ZONE, minDomains=3)]))
    assert res["a1"].code == UNSCHEDULABLE and res["b1"].code == UNSCHEDULABLE
    assert state.read(PRE_FILTER_KEY).min_match_num(0) == 0


def test_node_affinity_policy_honor_excludes_nodes_the_pod_cannot_use():
    nodes = [
        zone_node("a1", "a", labels={"disk": "ssd"}),
        zone_node("b1", "b", labels={"disk": "hdd"}),
        zone_node("c1", "c", labels={"disk": "ssd"}),
    ]
    pods = [web("w1", "a1"), web("w2", "c1")]
    sched = scheduler(nodes, pods)
    sel = {"nodeSelector": {"disk": "ssd"}}
    # Honor (default): zone b is not a domain; min is 1 over {a, c}: a passes 1 + 1 - 1
    _, res, state = run_filter(sched, web("new", constraints=[spread(ZONE)], spec=sel))
    assert state.read(PRE_FILTER_KEY).counts[0] == {"a": 1, "c": 1}
    assert res["a1"] is None
    # Ignore: zone b (0 pods) counts, min 0: a fails 1 + 1 - 0 = 2
    _, res, state = run_filter(sched, web("new2", constraints=[spread(ZONE, nodeAffinityPolicy="Ignore")], spec=sel))
    assert state.read(PRE_FILTER_KEY).counts[0] == {"a": 1, "b": 0, "c": 1}
    assert res["a1"].code == UNSCHEDULABLE
    assert res["b1"] is None


def test_node_taints_policy_honor_excludes_tainted_nodes():
    taint = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    nodes = [zone_node("a1", "a"), zone_node("b1", "b", taints=taint)]
    pods = [web("w1", "a1")]
    sched = scheduler(nodes, pods)
    # Ignore (default): zone b counts with 0, so zone a fails 1 + 1 - 0
    _, res, _ = run_filter(sched, web("new", constraints=[spread(ZONE)]))
    assert res["a1"].code == UNSCHEDULABLE
    # Honor: the tainted node is no domain; only zone a with min 1: 1 + 1 - 1 passes
    _, res, state = run_filter(sched, web("new2", constraints=[spread(ZONE, nodeTaintsPolicy="Honor")]))
    assert state.read(PRE_FILTER_KEY).counts[0] == {"a": 1}
    assert res["a1"] is None
    # a toleration brings the node back
    tol = {"tolerations": [{"key": "dedicated", "operator": "Exists"}]}
    _, res, state = run_filter(sched, web("new3", constraints=[spread(ZONE, nodeTaintsPolicy="Honor")], spec=tol))
    assert state.read(PRE_FILTER_KEY).counts[0] == {"a": 1, "b": 0}


def test_match_label_keys_narrow_the_selector_to_the_pods_revision():
    nodes = [zone_node("a1", "a"), zone_node("b1", "b")]
    old = {"app": "web", "pod-template-hash": "old"}
    new = {"app": "web", "pod-template-hash": "new"}
    pods = [web("o1", "a1", labels=old), web("o2", "a1", labels=old), web("n1", "b1", labels=new)]
    sched = scheduler(nodes, pods)
    c = spread(ZONE, matchLabelKeys=["pod-template-hash"])
    _, res, state = run_filter(sched, web("new", labels=new, constraints=[c]))
    assert state.read(PRE_FILTER_KEY).counts[0] == {"a": 0, "b": 1}
    assert res["a1"] is None and res["b1"].code == UNSCHEDULABLE
    # a key the pod lacks adds nothing
    _, _, state = run_filter(sched, web("new2", labels={"app": "web"}, constraints=[c]))
    assert state.read(PRE_FILTER_KEY).counts[0] == {"a": 2, "b": 1}


def test_empty_selector_counts_no_pods_but_the_pod_matches_itself():
    nodes = [zone_node("a1", "a"), zone_node("b1", "b")]
    pods = [web("w1", "a1"), web("w2", "a1")]
    sched = scheduler(nodes, pods)
    _, res, state = run_filter(sched, web("new", constraints=[spread(ZONE, selector={})]))
    s = state.read(PRE_FILTER_KEY)
    assert s.counts[0] == {"a": 0, "b": 0}
    assert res == {"a1": None, "b1": None}
    # nil selector matches nothing at all, the pod itself included
    c = spread(ZONE)
    c["labelSelector"] = None
    _, res, state = run_filter(sched, web("new2", constraints=[c]))
    s = state.read(PRE_FILTER_KEY)
    assert s.counts[0] == {"a": 0, "b": 0}
    assert not s.constraints[0].selector.matches({"app": "web"})
    assert res == {"a1": None, "b1": None}


# --------------------------------------------------------------------------- preemption support


def test_add_and_remove_pod_update_a_cloned_state_only():
    nodes = [zone_node("a1", "a"), zone_node("b1", "b")]
    pods = [web("w1", "a1"), web("w2", "a1"), web("w3", "b1")]
    sched = scheduler(nodes, pods)
    p = web("new", constraints=[spread(ZONE)])
    _, res, state = run_filter(sched, p)
    assert res["a1"].code == UNSCHEDULABLE  # 2 + 1 - 1 = 2
    pl = plugin(sched, "PodTopologySpread")
    a1 = sched.snapshot.get("a1")
    clone = state.clone()
    for victim in list(a1.pods):
        assert pl.remove_pod(clone, p, victim, a1) is None
    s = clone.read(PRE_FILTER_KEY)
    assert s.counts[0] == {"a": 0, "b": 1}
    assert s.critical_paths[0].nums[0] == 0 and s.critical_paths[0].values[0] == "a"
    assert pl.filter(clone, p, a1) is None
    # the original state is untouched
    assert state.read(PRE_FILTER_KEY).counts[0] == {"a": 2, "b": 1}
    assert pl.filter(state, p, a1).code == UNSCHEDULABLE
    # pods of another namespace are ignored; adding back a matching one restores the count
    assert pl.add_pod(clone, p, web("x", "a1", ns="other"), a1) is None
    assert pl.add_pod(clone, p, pods[0], a1) is None
    assert clone.read(PRE_FILTER_KEY).counts[0] == {"a": 1, "b": 1}


def test_critical_paths_keep_the_minimum():
    cp = CriticalPaths()
    for v, n in (("a", 3), ("b", 1), ("c", 2), ("d", 5)):
        cp.update(v, n)
    assert (cp.values[0], cp.nums[0]) == ("b", 1)
    assert (cp.values[1], cp.nums[1]) == ("c", 2)
    cp.update("b", 4)  # tracked path grows: the other becomes the minimum
    assert (cp.values[0], cp.nums[0]) == ("c", 2)
    cp.update("d", 0)  # untracked path drops below both
    assert cp.values == ["d", "c"] and cp.nums == [0, 2]


# --------------------------------------------------------------------------- Score


def test_score_arithmetic_and_normalization():
    nodes = [zone_node("a1", "a"), zone_node("b1", "b"), zone_node("b2", "b")]
    pods = [web("w1", "a1"), web("w2", "a1"), web("w3", "b1")]
    sched = scheduler(nodes, pods)
    p = web("new", constraints=[spread(ZONE, max_skew=2, when="ScheduleAnyway")])
    st, raw, norm = run_score(sched, p)
    assert st is None
    w = math.log(2 + 2)  # two zones among the feasible nodes
    assert raw["a1"] == go_round(2 * w + 1)  # 3.77 -> 4
    assert raw["b1"] == raw["b2"] == go_round(1 * w + 1)  # 2.39 -> 2
    assert (raw["a1"], raw["b1"]) == (4, 2)
    # 100 * (max + min - s) / max
    assert norm == {"a1": 100 * (4 + 2 - 4) // 4, "b1": 100, "b2": 100}


def test_score_hostname_counts_per_node_and_ignores_nodes_missing_keys():
    nodes = [zone_node("a1", "a"), zone_node("a2", "a"), node("nozone")]
    pods = [web("w1", "a1")]
    sched = scheduler(nodes, pods)
    p = web("new", constraints=[spread(HOST, when="ScheduleAnyway"), spread(ZONE, when="ScheduleAnyway")])
    st, raw, norm = run_score(sched, p)
    assert st is None
    wh = topology_normalizing_weight(2)  # 3 feasible - 1 ignored
    wz = topology_normalizing_weight(1)
    assert raw["a1"] == go_round(1 * wh + 1 * wz)
    assert raw["a2"] == go_round(0 * wh + 1 * wz)
    assert raw["nozone"] == 0
    assert norm["nozone"] == 0  # ignored nodes get 0
    assert norm["a2"] == 100 and norm["a1"] < 100


def test_prescore_skips_without_soft_constraints():
    sched = scheduler([zone_node("a1", "a"), zone_node("b1", "b")])
    st, _, _ = run_score(sched, web("hard", constraints=[spread(ZONE)]))
    assert st.code == SKIP


def test_system_defaults_use_the_replicaset_selector_and_allow_missing_zone():
    nodes = [zone_node("a1", "a"), node("nozone")]
    pods = [web("w1", "a1", meta={"ownerReferences": WEB_RS_OWNER}), web("w2", "a1", labels={"app": "other"})]
    sched = scheduler(nodes, pods)
    with_web_rs(sched)
    p = web("new", meta={"ownerReferences": WEB_RS_OWNER})
    pl = plugin(sched, "PodTopologySpread")
    cons, source = pl.constraints_for(p, "ScheduleAnyway")
    assert source == "default"
    assert [(c.topology_key, c.max_skew) for c in cons] == [(HOST, 3), (ZONE, 5)]
    assert cons[0].text == "app=web"
    st, raw, norm = run_score(sched, p)
    assert st is None
    # System defaulting: the node without a zone label still gets hostname spreading (not ignored)
    # zone domains: "a" and "" (the unlabelled node's empty value)
    wh = topology_normalizing_weight(2)
    wz = topology_normalizing_weight(2)
    assert raw["a1"] == go_round(1 * wh + 2 + 1 * wz + 4) == 9
    assert raw["nozone"] == go_round(0 * wh + 2)
    assert norm["nozone"] == 100
    # no hard defaults: PreFilter skips
    _, st = pl.pre_filter(fresh_state(), p, sched.snapshot.list())
    assert st.code == SKIP


def test_list_defaults_with_a_service_selector_filter_hard():
    prof = {
        "schedulerName": "default-scheduler",
        "pluginConfig": [
            {
                "name": "PodTopologySpread",
                "args": {
                    "defaultingType": "List",
                    "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}],
                },
            }
        ],
    }
    nodes = [zone_node("a1", "a"), zone_node("b1", "b")]
    pods = [web("w1", "a1"), web("w2", "a1")]
    sched = scheduler(nodes, pods, profile=prof)
    # without a Service nothing selects the pod: skipped
    _, st = plugin(sched, "PodTopologySpread").pre_filter(fresh_state(), web("first"), sched.snapshot.list())
    assert st.code == SKIP
    sched.cluster.objects["Service"][("default", "web")] = {
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}},
    }
    sched.cluster.objects["Service"][("default", "nil")] = {
        "kind": "Service",
        "metadata": {"name": "nil", "namespace": "default"},
        "spec": {},
    }
    pf, res, _ = run_filter(sched, web("new"))
    assert pf is None
    assert res["a1"].code == UNSCHEDULABLE and res["b1"] is None


# --------------------------------------------------------------------------- misc


def test_go_round_and_log():
    assert go_round(2.5) == 3 and go_round(3.5) == 4 and go_round(0.49999999999999994) == 0
    for n in range(2, 5000):
        assert abs(go_log(float(n)) - math.log(n)) <= math.ulp(math.log(n))


def test_events_to_register():
    ev = plugin(scheduler([]), "PodTopologySpread").events_to_register()
    assert all(isinstance(e, ClusterEvent) for e in ev)
    assert {e.resource for e in ev} == {"Pod", "Node"}
    node_ev = next(e for e in ev if e.resource == "Node")
    assert "UpdateNodeTaint" in node_ev.action and "UpdateNodeLabel" in node_ev.action


def test_explain_shows_domains_and_per_node_skew():
    nodes = [zone_node("a1", "a"), zone_node("a2", "a"), zone_node("b1", "b")]
    pods = [web("w1", "a1"), web("w2", "a2")]
    sched = scheduler(nodes, pods)
    p = web("new", constraints=[spread(ZONE)])
    res = sched.schedule(p)
    assert res.selected_node == "b1"
    d = res.details["PodTopologySpread"]
    c = d["filter"]["constraints"][0]
    assert c["domains"] == {"a": 2, "b": 0}
    assert c["minMatch"] == 0 and c["selfMatch"] == 1 and c["selector"] == "app=web"
    row = d["filter"]["nodes"]["a1"][0]
    assert (row["matchNum"], row["skew"], row["passes"]) == (2, 3, False)
    assert d["filter"]["nodes"]["b1"][0]["passes"] is True


def test_score_over_many_nodes_is_each_nodes_own_score():
    """score_nodes (a column of terms per constraint, summed column by column, each distinct sum
    rounded once) gives every node what `score` gives it: random clusters with nodes lacking a
    topology key, one to three ScheduleAnyway constraints (hostname, zone, rack; maxSkew 1-5),
    the system defaults, over every node, at positions, and on nodes not the snapshot's."""
    import random

    rng = random.Random(31)
    keys = [HOST, ZONE, "example.com/rack"]
    apps = ["web", "db"]
    scored = 0
    for case in range(40):
        nodes = []
        for i in range(rng.randint(2, 14)):
            labels = {k: f"{k[-4:]}-{rng.randint(0, 3)}" for k in keys[1:] if rng.random() < 0.85}
            nodes.append(node(f"n{i}", labels=labels))
        pods = [
            pod(f"p{i}", labels={"app": rng.choice(apps)}, node_name=rng.choice(nodes).name)
            for i in range(rng.randint(0, 30))
        ]
        s = scheduler(nodes, pods)
        pl = plugin(s, "PodTopologySpread")
        constraints = [
            spread(
                k,
                max_skew=rng.randint(1, 5),
                when="ScheduleAnyway",
                selector={"matchLabels": {"app": rng.choice(apps)}},
            )
            for k in rng.sample(keys, rng.randint(1, 3))
        ]
        spec = {"topologySpreadConstraints": constraints} if case % 4 else {}  # system defaults
        incoming = pod("in", labels={"app": rng.choice(apps)}, spec=spec)
        nis = s.snapshot.node_infos
        state = fresh_state()
        if pl.pre_score(state, incoming, nis) is not None:
            continue
        each = score_nodes_is_each_score(pl, state, incoming, nis, rng)
        scored += len(set(each)) > 1
    assert scored > 20


def test_system_defaults_over_many_nodes_with_labels_missing_are_each_nodes_own_score():
    """The system defaults (hostname, then zone; every node counts) by score_nodes, against score
    node by node: random clusters whose nodes may lack the zone or even the hostname label (a
    node without it gets no hostname term), pods of a ReplicaSet spread over them."""
    import random

    rng = random.Random(35)
    scored = 0
    for _ in range(30):
        nodes = []
        for i in range(rng.randint(3, 16)):
            n = node(f"n{i}", labels={ZONE: f"z{rng.randint(0, 2)}"} if rng.random() < 0.8 else {})
            if rng.random() < 0.2:
                del n.labels[HOST]
            nodes.append(n)
        pods = [
            web(f"w{i}", rng.choice(nodes).name, meta={"ownerReferences": WEB_RS_OWNER})
            for i in range(rng.randint(0, 25))
        ]
        s = scheduler(nodes, pods)
        with_web_rs(s)
        pl = plugin(s, "PodTopologySpread")
        incoming = web("new", meta={"ownerReferences": WEB_RS_OWNER})
        nis = s.snapshot.node_infos
        state = fresh_state()
        assert pl.pre_score(state, incoming, nis) is None
        each = score_nodes_is_each_score(pl, state, incoming, nis, rng)
        scored += len(set(each)) > 1
    assert scored > 15


def test_domain_counts_follow_binds_and_evictions_with_empty_and_missing_zones():
    """The matching pods per zone that PreScore (system defaults: every node counts, a node without
    the key in the domain "") and PreFilter (one hard zone constraint: nodes with the key only)
    work out, cycle after cycle with binds and evictions between, against counting every node's
    pods: nodes may carry an empty zone value or none at all."""
    import random

    from kschedcli.plugins.podtopologyspread.plugin import PRE_SCORE_KEY

    rng = random.Random(31)
    nodes = []
    for i in range(14):
        r = rng.random()
        nodes.append(node(f"n{i}", labels={} if r < 0.15 else {ZONE: "" if r < 0.3 else f"z{i % 3}"}))
    labels = [{"app": "web"}, {"app": "other"}]
    pods = [web(f"w{i}", rng.choice(nodes).name, labels=rng.choice(labels)) for i in range(30)]
    s = scheduler(nodes, pods)
    with_web_rs(s)
    pl = plugin(s, "PodTopologySpread")
    soft = web("new", meta={"ownerReferences": WEB_RS_OWNER})
    hard = web("hard", constraints=[spread(ZONE, max_skew=5)])

    def per_zone(missing):
        out: dict = {}
        for ni in s.snapshot.node_infos:
            zone = ni.node.labels.get(ZONE, missing)
            if zone is None:
                continue
            n = sum(1 for p in ni.pods if p.namespace == "default" and p.labels.get("app") == "web")
            out[zone] = out.get(zone, 0) + n
        return out

    count = 0
    for step in range(25):
        state = fresh_state()
        assert pl.pre_score(state, soft, s.snapshot.node_infos) is None
        zone_counts = state.read(PRE_SCORE_KEY).counts[1]
        assert zone_counts == per_zone(""), step
        state = fresh_state()
        assert pl.pre_filter(state, hard, s.snapshot.node_infos)[1] is None
        assert state.read(PRE_FILTER_KEY).counts[0] == per_zone(None), step
        for _ in range(rng.randint(1, 4)):
            count += 1
            placed = [p for ni in s.snapshot.node_infos for p in ni.pods]
            if placed and rng.random() < 0.35:
                assert s.snapshot.evict(rng.choice(placed))
            else:
                s.snapshot.bind(web(f"b{count}", labels=rng.choice(labels)), rng.choice(nodes).name)
