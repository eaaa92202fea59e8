"""InterPodAffinity on small hand-built clusters: reasons and codes to the character, counts and
scores worked out by hand, preemption's add/remove on cloned state, and the label index."""

import random

from builders import fresh_state, node, plugin, pod, scheduler, score_nodes_is_each_score

from kschedcli.framework.status import ERROR, SKIP, UNRESOLVABLE, UNSCHEDULABLE
from kschedcli.plugins.interpodaffinity.plugin import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    PRE_FILTER_KEY,
    SAMPLE_LIMIT,
)
from kschedcli.plugins.interpodaffinity.terms import pod_terms

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def term(labels, key=HOST, **extra):
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **extra}


def affinity(required=(), anti=(), preferred=(), preferred_anti=()):
    a = {}
    if required or preferred:
        a["podAffinity"] = {}
        if required:
            a["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = list(required)
        if preferred:
            a["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in preferred
            ]
    if anti or preferred_anti:
        a["podAntiAffinity"] = {}
        if anti:
            a["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = list(anti)
        if preferred_anti:
            a["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in preferred_anti
            ]
    return {"affinity": a}


def zoned_nodes():
    return [
        node("a1", labels={ZONE: "a"}),
        node("a2", labels={ZONE: "a"}),
        node("b1", labels={ZONE: "b"}),
        node("nozone"),
    ]


def filter_all(sched, p, state=None):
    pl = plugin(sched, "InterPodAffinity")
    state = state or fresh_state()
    _, st = pl.pre_filter(state, p, sched.snapshot.list())
    if st is not None:
        return st
    return {ni.node.name: pl.filter(state, p, ni) for ni in sched.snapshot.list()}


def verdicts(res):
    return {n: None if st is None else (st.code, st.reasons[0]) for n, st in res.items()}


def scores_of(sched, p, nodes=None):
    pl = plugin(sched, "InterPodAffinity")
    state = fresh_state()
    st = pl.pre_score(state, p, sched.snapshot.list())
    if st is not None:
        return st
    names = nodes or [ni.node.name for ni in sched.snapshot.list()]
    raw = {n: pl.score(state, p, sched.snapshot.get(n))[0] for n in names}
    norm = dict(raw)
    assert pl.normalize_score(state, p, norm) is None
    # the list form the framework calls gives what the dict form leaves
    assert pl.normalize_scores(state, p, list(raw.values()), names) == (list(norm.values()), None)
    return raw, norm


# ------------------------------------------------------------------------------- Filter


def test_required_affinity_zone_reason_and_code():
    s = scheduler(zoned_nodes(), [pod("db", labels={"app": "db"}, node_name="a2")])
    p = pod("web", labels={"app": "web"}, spec=affinity(required=[term({"app": "db"}, ZONE)]))
    v = verdicts(filter_all(s, p))
    assert v == {
        "a1": None,
        "a2": None,
        "b1": (UNRESOLVABLE, "node(s) didn't match pod affinity rules"),
        "nozone": (UNRESOLVABLE, "node(s) didn't match pod affinity rules"),
    }


def test_required_anti_affinity_hostname_is_unschedulable():
    s = scheduler(zoned_nodes(), [pod("w1", labels={"app": "web"}, node_name="a1")])
    p = pod("w2", labels={"app": "web"}, spec=affinity(anti=[term({"app": "web"})]))
    v = verdicts(filter_all(s, p))
    assert v["a1"] == (UNSCHEDULABLE, "node(s) didn't match pod anti-affinity rules")
    assert v["a2"] is None and v["b1"] is None and v["nozone"] is None


def test_anti_affinity_on_zone_spares_nodes_without_the_key():
    s = scheduler(zoned_nodes(), [pod("w1", labels={"app": "web"}, node_name="a1")])
    p = pod("w2", labels={"app": "web"}, spec=affinity(anti=[term({"app": "web"}, ZONE)]))
    v = verdicts(filter_all(s, p))
    assert v == {
        "a1": (UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY),
        "a2": (UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY),
        "b1": None,
        "nozone": None,
    }


def test_existing_pods_anti_affinity_symmetry():
    guard = pod("guard", labels={"app": "guard"}, node_name="b1", spec=affinity(anti=[term({"app": "web"}, ZONE)]))
    s = scheduler(zoned_nodes(), [guard])
    p = pod("web", labels={"app": "web"})  # no affinity of its own
    v = verdicts(filter_all(s, p))
    assert v == {
        "a1": None,
        "a2": None,
        "b1": (UNSCHEDULABLE, "node(s) didn't satisfy existing pods anti-affinity rules"),
        "nozone": None,
    }
    # a pod the existing term does not select is not held back, and PreFilter skips
    assert filter_all(s, pod("other", labels={"app": "api"})).code == SKIP


def test_affinity_checked_before_anti_affinity():
    s = scheduler([node("n1", labels={ZONE: "a"})], [pod("w1", labels={"app": "web"}, node_name="n1")])
    p = pod("x", labels={"app": "x"}, spec=affinity(required=[term({"app": "db"}, ZONE)], anti=[term({"app": "web"})]))
    assert verdicts(filter_all(s, p))["n1"] == (UNRESOLVABLE, ERR_REASON_AFFINITY)


def test_first_pod_of_self_affine_series():
    s = scheduler(zoned_nodes(), [pod("other", labels={"app": "api"}, node_name="a1")])
    p = pod("web-0", labels={"app": "web"}, spec=affinity(required=[term({"app": "web"}, ZONE)]))
    v = verdicts(filter_all(s, p))
    # no pod matches yet, the pod matches its own term: every node with the key is allowed
    assert v == {"a1": None, "a2": None, "b1": None, "nozone": (UNRESOLVABLE, ERR_REASON_AFFINITY)}
    # once a replica exists, only its zone qualifies
    s.bind(pod("web-1", labels={"app": "web"}), "b1")
    v = verdicts(filter_all(s, p))
    assert v == {
        "a1": (UNRESOLVABLE, ERR_REASON_AFFINITY),
        "a2": (UNRESOLVABLE, ERR_REASON_AFFINITY),
        "b1": None,
        "nozone": (UNRESOLVABLE, ERR_REASON_AFFINITY),
    }


def test_self_affinity_that_does_not_match_itself_fails_everywhere():
    s = scheduler(zoned_nodes())
    p = pod("web", labels={"app": "web"}, spec=affinity(required=[term({"app": "cache"}, ZONE)]))
    assert set(verdicts(filter_all(s, p)).values()) == {(UNRESOLVABLE, ERR_REASON_AFFINITY)}


def test_all_affinity_terms_must_match_the_same_pod():
    s = scheduler(
        zoned_nodes(),
        [pod("db", labels={"app": "db"}, node_name="a1"), pod("cache", labels={"tier": "cache"}, node_name="b1")],
    )
    p = pod(
        "web", labels={"app": "web"}, spec=affinity(required=[term({"app": "db"}, ZONE), term({"tier": "cache"}, ZONE)])
    )
    # no single pod matches both terms, and the pod does not match them itself
    assert set(verdicts(filter_all(s, p)).values()) == {(UNRESOLVABLE, ERR_REASON_AFFINITY)}
    s.bind(pod("both", labels={"app": "db", "tier": "cache"}), "a2")
    v = verdicts(filter_all(s, p))
    assert v["a1"] is None and v["a2"] is None and v["b1"] == (UNRESOLVABLE, ERR_REASON_AFFINITY)


def test_namespaces_default_list_and_namespace_selector():
    s = scheduler(
        zoned_nodes(),
        [
            pod("q", ns="data", labels={"app": "queue"}, node_name="a1"),
            pod("q", ns="data-staging", labels={"app": "queue"}, node_name="b1"),
        ],
    )
    s.cluster.namespace_labels["data"] = {"kubernetes.io/metadata.name": "data", "env": "prod"}
    s.cluster.namespace_labels["data-staging"] = {"kubernetes.io/metadata.name": "data-staging", "env": "staging"}
    same_ns = pod("c", ns="shop", labels={"app": "c"}, spec=affinity(required=[term({"app": "queue"})]))
    assert set(verdicts(filter_all(s, same_ns)).values()) == {(UNRESOLVABLE, ERR_REASON_AFFINITY)}
    listed = pod(
        "c",
        ns="shop",
        labels={"app": "c"},
        spec=affinity(required=[term({"app": "queue"}, namespaces=["data-staging"])]),
    )
    assert [n for n, v in verdicts(filter_all(s, listed)).items() if v is None] == ["b1"]
    selected = pod(
        "c",
        ns="shop",
        labels={"app": "c"},
        spec=affinity(required=[term({"app": "queue"}, namespaceSelector={"matchLabels": {"env": "prod"}})]),
    )
    assert [n for n, v in verdicts(filter_all(s, selected)).items() if v is None] == ["a1"]
    everywhere = pod(
        "c", ns="shop", labels={"app": "c"}, spec=affinity(required=[term({"app": "queue"}, namespaceSelector={})])
    )
    assert [n for n, v in verdicts(filter_all(s, everywhere)).items() if v is None] == ["a1", "b1"]


def test_existing_anti_affinity_namespace_selector_uses_incoming_namespace_labels():
    guard = pod(
        "guard",
        ns="ops",
        labels={"app": "guard"},
        node_name="a1",
        spec=affinity(anti=[term({"app": "web"}, namespaceSelector={"matchLabels": {"team": "blue"}})]),
    )
    s = scheduler(zoned_nodes(), [guard])
    s.cluster.namespace_labels["blue-ns"] = {"kubernetes.io/metadata.name": "blue-ns", "team": "blue"}
    s.cluster.namespace_labels["red-ns"] = {"kubernetes.io/metadata.name": "red-ns", "team": "red"}
    assert verdicts(filter_all(s, pod("w", ns="blue-ns", labels={"app": "web"})))["a1"] == (
        UNSCHEDULABLE,
        ERR_REASON_EXISTING_ANTI_AFFINITY,
    )
    assert filter_all(s, pod("w", ns="red-ns", labels={"app": "web"})).code == SKIP


def test_match_label_keys_and_mismatch_label_keys_are_ignored_by_the_scheduler():
    # kube-scheduler v1.34.1 builds AffinityTerms from labelSelector / namespaces / namespaceSelector only
    # (framework/types.go newAffinityTerm); the API server folds the keys in at pod creation.
    s = scheduler(
        zoned_nodes(),
        [
            pod("v1", labels={"app": "web", "rev": "1"}, node_name="a1"),
            pod("v2", labels={"app": "web", "rev": "2"}, node_name="b1"),
        ],
    )
    for keys in ({"matchLabelKeys": ["rev"]}, {"mismatchLabelKeys": ["rev"]}):
        p = pod("n", labels={"app": "web", "rev": "2"}, spec=affinity(anti=[term({"app": "web"}, **keys)]))
        v = verdicts(filter_all(s, p))
        assert v["a1"] == (UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY) and v["b1"] == (
            UNSCHEDULABLE,
            ERR_REASON_ANTI_AFFINITY,
        )


def test_invalid_selector_is_unresolvable_at_prefilter():
    # Pods are validated when loaded; a selector that still fails to parse here is reported as
    # kube-scheduler's PreFilter does for NewPodInfo errors.
    s = scheduler(zoned_nodes())
    bad = pod("bad", spec=affinity(required=[term({"app": "x"})]))
    bad.pod_affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["x"]}]},
                "topologyKey": HOST,
            }
        ]
    }
    st = filter_all(s, bad)
    assert st.code == UNRESOLVABLE and st.reasons[0].startswith("parsing pod: requiredAffinityTerms: ")


def test_prefilter_skip_and_missing_state_error():
    s = scheduler(zoned_nodes(), [pod("w", labels={"app": "web"}, node_name="a1")])
    pl = plugin(s, "InterPodAffinity")
    assert pl.pre_filter(fresh_state(), pod("plain"), s.snapshot.list())[1].code == SKIP
    st = pl.filter(fresh_state(), pod("plain"), s.snapshot.get("a1"))
    assert st.code == ERROR and st.reasons == ['error reading "PreFilterInterPodAffinity" from cycleState: not found']


# ------------------------------------------------------------------------------- preemption's dry run


def test_add_and_remove_pod_on_cloned_state():
    victim = pod("w1", labels={"app": "web"}, node_name="a1")
    s = scheduler(zoned_nodes(), [victim])
    pl = plugin(s, "InterPodAffinity")
    p = pod("w2", labels={"app": "web"}, spec=affinity(anti=[term({"app": "web"}, ZONE)]))
    state = fresh_state()
    assert pl.pre_filter(state, p, s.snapshot.list())[1] is None
    a1 = s.snapshot.get("a1")
    assert pl.filter(state, p, a1).reasons == [ERR_REASON_ANTI_AFFINITY]
    clone = state.clone()
    assert pl.remove_pod(clone, p, victim, a1) is None
    assert pl.filter(clone, p, a1) is None
    assert pl.filter(clone, p, s.snapshot.get("a2")) is None
    # the original state is untouched
    assert pl.filter(state, p, a1).reasons == [ERR_REASON_ANTI_AFFINITY]
    assert state.read(PRE_FILTER_KEY).anti_counts == {(ZONE, "a"): 1}
    assert clone.read(PRE_FILTER_KEY).anti_counts == {}
    # adding a pod with anti-affinity against the incoming pod blocks its zone
    hater = pod("h", labels={"app": "h"}, spec=affinity(anti=[term({"app": "web"}, ZONE)]))
    assert pl.add_pod(clone, p, hater, s.snapshot.get("b1")) is None
    assert pl.filter(clone, p, s.snapshot.get("b1")).reasons == [ERR_REASON_EXISTING_ANTI_AFFINITY]
    assert pl.filter(clone, p, s.snapshot.get("nozone")) is None


def test_removing_the_only_match_reenables_first_pod_rule():
    db = pod("db", labels={"app": "web"}, node_name="a1")
    s = scheduler(zoned_nodes(), [db])
    pl = plugin(s, "InterPodAffinity")
    p = pod("web", labels={"app": "web"}, spec=affinity(required=[term({"app": "web"}, ZONE)]))
    state = fresh_state()
    pl.pre_filter(state, p, s.snapshot.list())
    assert pl.filter(state, p, s.snapshot.get("b1")).code == UNRESOLVABLE
    pl.remove_pod(state, p, db, s.snapshot.get("a1"))
    assert state.read(PRE_FILTER_KEY).affinity_counts == {}
    assert pl.filter(state, p, s.snapshot.get("b1")) is None


# ------------------------------------------------------------------------------- scoring


def test_preferred_weights_negative_scores_and_min_max_normalization():
    existing = [
        pod("db", labels={"app": "db"}, node_name="a1"),
        pod("db2", labels={"app": "db"}, node_name="b1"),
        pod("noisy", labels={"app": "noisy"}, node_name="a2"),
    ]
    s = scheduler(zoned_nodes(), existing)
    p = pod(
        "web",
        labels={"app": "web"},
        spec=affinity(preferred=[(8, term({"app": "db"}, ZONE))], preferred_anti=[(30, term({"app": "noisy"}, HOST))]),
    )
    raw, norm = scores_of(s, p)
    # zone a: +8 (db on a1); zone b: +8 (db2); host a2: -30
    assert raw == {"a1": 8, "a2": -22, "b1": 8, "nozone": 0}
    # min -22, max 8, diff 30: 100 * (s + 22) / 30, truncated
    assert norm == {"a1": 100, "a2": 0, "b1": 100, "nozone": int(100 * (22 / 30))}
    assert norm["nozone"] == 73


def test_existing_pods_terms_and_hard_pod_affinity_weight():
    def make(args=None):
        prof = {"schedulerName": "default-scheduler"}
        if args is not None:
            prof["pluginConfig"] = [{"name": "InterPodAffinity", "args": args}]
        return scheduler(
            zoned_nodes(),
            [
                pod(
                    "fan",
                    labels={"app": "fan"},
                    node_name="a1",
                    spec=affinity(required=[term({"app": "web"}, ZONE)], preferred=[(5, term({"app": "web"}, HOST))]),
                ),
                pod(
                    "hater",
                    labels={"app": "hater"},
                    node_name="b1",
                    spec=affinity(preferred_anti=[(7, term({"app": "web"}, ZONE))]),
                ),
            ],
            profile=prof,
        )

    p = pod("web", labels={"app": "web"})
    raw, norm = scores_of(make(), p)
    # zone a: hard weight 1 (fan's required term); host a1: +5; zone b: -7
    assert raw == {"a1": 6, "a2": 1, "b1": -7, "nozone": 0}
    assert norm == {"a1": 100, "a2": int(100 * (8 / 13)), "b1": 0, "nozone": int(100 * (7 / 13))}
    raw, _ = scores_of(make({"hardPodAffinityWeight": 10}), p)
    assert raw == {"a1": 15, "a2": 10, "b1": -7, "nozone": 0}
    raw, _ = scores_of(make({"hardPodAffinityWeight": 0}), p)
    assert raw == {"a1": 5, "a2": 0, "b1": -7, "nozone": 0}
    # ignoring existing pods' preferred terms skips PreScore for a pod without preferred terms
    assert scores_of(make({"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": True}), p).code == SKIP


def test_prescore_skips_when_nothing_matches_and_normalize_keeps_equal_scores_at_zero():
    s = scheduler(zoned_nodes(), [pod("x", labels={"app": "x"}, node_name="a1")])
    p = pod("web", labels={"app": "web"}, spec=affinity(preferred=[(10, term({"app": "db"}, ZONE))]))
    assert scores_of(s, p).code == SKIP
    s.bind(pod("db", labels={"app": "db"}), "nozone")  # matches, but the node has no zone
    assert scores_of(s, p).code == SKIP
    s.bind(pod("db2", labels={"app": "db"}), "a1")
    raw, norm = scores_of(s, p, ["a1", "a2"])  # both in zone a
    assert raw == {"a1": 10, "a2": 10} and norm == {"a1": 0, "a2": 0}


def test_full_cycle_prefers_the_affine_zone():
    s = scheduler(zoned_nodes(), [pod("db", labels={"app": "db"}, node_name="b1")])
    p = pod("web", labels={"app": "web"}, spec=affinity(preferred=[(100, term({"app": "db"}, ZONE))]))
    res = s.schedule(p)
    assert res.scores["b1"]["InterPodAffinity"].normalized == 100
    assert res.scores["a1"]["InterPodAffinity"].normalized == 0
    assert res.scores["b1"]["InterPodAffinity"].weight == 2


# ------------------------------------------------------------------------------- extras


def test_events_to_register():
    pl = plugin(scheduler([node("n")]), "InterPodAffinity")
    ev = {(e.resource, e.action) for e in pl.events_to_register()}
    assert ev == {("Pod", "Add|UpdatePodLabel|Delete"), ("Node", "Add|UpdateNodeLabel")}


def test_explain_names_pods_and_domains_bounded():
    existing = [pod(f"w{i}", labels={"app": "web"}, node_name="a1") for i in range(SAMPLE_LIMIT + 5)]
    s = scheduler(zoned_nodes(), existing)
    p = pod("new", labels={"app": "web"}, spec=affinity(anti=[term({"app": "web"}, ZONE)]))
    res = s.schedule(p)
    d = res.details["InterPodAffinity"]
    t = d["requiredAntiAffinity"][0]
    assert t["topologyKey"] == ZONE and t["selector"] == "app=web"
    assert len(t["pods"]) == SAMPLE_LIMIT and t["podsOmitted"] == 5
    assert t["pods"][0] == {"pod": "default/w0", "node": "a1", "domain": "a"}
    assert t["domains"] == [{"domain": "a", "count": SAMPLE_LIMIT + 5}]


def test_pod_terms_are_shared_between_identical_replicas_but_not_across_namespaces():
    spec = affinity(anti=[term({"app": "web"})])
    a, b, c = pod("a", spec=spec), pod("b", spec=spec), pod("c", ns="other", spec=spec)
    assert pod_terms(a) is pod_terms(b)
    assert pod_terms(c).required_anti_affinity[0].namespaces == frozenset({"other"})


def test_label_index_gives_the_same_counts_as_a_full_scan():
    rng = random.Random(7)
    nodes = [node(f"n{i}", labels={ZONE: f"z{i % 3}"} if i % 5 else {}) for i in range(30)]
    apps = ["web", "db", "cache", "api"]
    existing = [
        pod(
            f"p{j}",
            ns=rng.choice(["default", "x"]),
            labels={"app": rng.choice(apps), "tier": rng.choice("ab")},
            node_name=f"n{rng.randrange(30)}",
        )
        for j in range(200)
    ]
    s = scheduler(nodes, existing)
    pl = plugin(s, "InterPodAffinity")
    sel = {
        "matchExpressions": [
            {"key": "app", "operator": "In", "values": ["web", "db"]},
            {"key": "tier", "operator": "NotIn", "values": ["b"]},
        ]
    }
    p = pod(
        "inc",
        labels={"app": "web", "tier": "a"},
        spec=affinity(
            required=[{"labelSelector": sel, "topologyKey": ZONE, "namespaceSelector": {}}, term({"tier": "a"}, HOST)],
            anti=[term({"app": "cache"}, ZONE, namespaces=["x"]), {"labelSelector": {}, "topologyKey": HOST}],
        ),
    )
    for step in range(3):
        indexed, scanned = fresh_state(), fresh_state()
        pl.pre_filter(indexed, p, s.snapshot.list())
        pl.pre_filter(scanned, p, list(s.snapshot.list()))  # a copy: the index does not apply
        a, b = indexed.read(PRE_FILTER_KEY), scanned.read(PRE_FILTER_KEY)
        assert a.affinity_counts == b.affinity_counts and a.affinity_counts
        assert a.anti_counts == b.anti_counts and a.anti_counts
        # bind more pods: the index must follow
        for k in range(10):
            s.bind(pod(f"new{step}-{k}", labels={"app": rng.choice(apps), "tier": "a"}), f"n{rng.randrange(30)}")


def test_score_over_many_nodes_is_each_nodes_own_score():
    """score_nodes (each node's domain read off the snapshot's label columns, at the scored
    positions or over every node) gives every node the score `score` gives it: random clusters
    with nodes lacking a topology key, existing pods' preferred and required terms, the incoming
    pod's preferred affinity and anti-affinity over hostname, zone and rack; binds in between."""
    rng = random.Random(560)
    keys = [HOST, ZONE, "example.com/rack"]
    apps = ["web", "db", "cache"]

    def some_terms():
        return [
            (rng.randint(1, 100), term({"app": rng.choice(apps)}, rng.choice(keys))) for _ in range(rng.randint(0, 2))
        ]

    for _ in range(25):
        nodes = []
        for i in range(rng.randint(2, 12)):
            labels = {k: f"{k[-4:]}-{rng.randint(0, 2)}" for k in keys[1:] if rng.random() < 0.8}
            nodes.append(node(f"n{i}", labels=labels))
        pods = []
        for i, n in enumerate(nodes):
            for j in range(rng.randint(0, 3)):
                spec = affinity(preferred=some_terms(), preferred_anti=some_terms()) if rng.random() < 0.5 else None
                pods.append(pod(f"p{i}-{j}", labels={"app": rng.choice(apps)}, node_name=n.name, spec=spec))
        s = scheduler(nodes, pods)
        pl = plugin(s, "InterPodAffinity")
        for round_ in range(2):
            incoming = pod(
                "in",
                labels={"app": rng.choice(apps)},
                spec=affinity(preferred=some_terms(), preferred_anti=some_terms()),
            )
            nis = s.snapshot.node_infos
            state = fresh_state()
            if pl.pre_score(state, incoming, nis) is not None:
                continue  # nothing to score
            score_nodes_is_each_score(pl, state, incoming, nis, rng)
            if round_ == 0:
                s.bind(pod("bound", labels={"app": rng.choice(apps)}), rng.choice(nodes).name)


def test_normalize_scores_on_a_list_is_normalize_score_on_the_dict():
    """NormalizeScore's list form (many nodes sharing few scores) against its dict form, on
    negative, equal and mixed scores."""
    import random

    pl = plugin(scheduler(zoned_nodes()), "InterPodAffinity")
    p = pod("web", labels={"app": "web"})
    rng = random.Random(7)
    for scores in ([3, 3, 3], [-5, 0, 7, 7, -5], [0], [rng.randrange(-300, 300) for _ in range(500)]):
        state = fresh_state()
        s = type("S", (), {"topology_score": {ZONE: {"a": 1}}})()
        state.write("PreScoreInterPodAffinity", s)
        names = [f"n{i}" for i in range(len(scores))]
        table = dict(zip(names, scores))
        assert pl.normalize_score(state, p, table) is None
        assert pl.normalize_scores(state, p, list(scores), names) == (list(table.values()), None)


def test_preferred_terms_counted_from_the_label_index_as_from_every_nodes_pods(monkeypatch):
    """The incoming pod's preferred terms, counted per node from the label index: the same
    scores per topology value and the same samples (pods named in node order, then how many
    more) as looking at every pod of every node that may hold one."""
    from kschedcli.plugins.interpodaffinity import plugin as ipa

    rng = random.Random(11)
    nodes = [node(f"n{i}", labels={ZONE: f"z{i % 3}"} if i % 7 else {}) for i in range(25)]
    apps = ["web", "db", "cache"]
    existing = [
        pod(
            f"p{j}",
            ns=rng.choice(["default", "x"]),
            labels={"app": rng.choice(apps)},
            node_name=f"n{rng.randrange(25)}",
        )
        for j in range(160)
    ]
    s = scheduler(nodes, existing)
    pl = plugin(s, "InterPodAffinity")
    p = pod(
        "inc",
        labels={"app": "web"},
        spec=affinity(
            preferred=[(30, term({"app": "web"}, ZONE)), (5, term({"app": "db"}, HOST, namespaces=["x", "default"]))],
            preferred_anti=[(70, term({"app": "web"}, HOST)), (9, term({"app": "cache"}, ZONE, namespaceSelector={}))],
        ),
    )

    def pre_scored():
        state = fresh_state()
        assert pl.pre_score(state, p, s.snapshot.list()) is None
        st = state.read(ipa.PRE_SCORE_KEY)
        samples = {k: [(x.items, x.more) for x in v] for k, v in st.trace.items() if isinstance(v, list)}
        return st.topology_score, samples

    for step in range(3):
        indexed = pre_scored()
        with monkeypatch.context() as m:
            m.setattr(ipa, "matching_by_node", lambda *a: None)
            scanned = pre_scored()
        assert indexed == scanned
        assert any(more for items in indexed[1].values() for _, more in items)  # samples were cut
        for k in range(15):
            s.bind(pod(f"new{step}-{k}", labels={"app": rng.choice(apps)}), f"n{rng.randrange(25)}")
