"""Differences found by differential testing against kube-scheduler v1.34.1's own code.

Each test is a small hand-built reproduction of one difference, with the behaviour kube-scheduler has
and the Go file / function that has it.
"""

from builders import fresh_state, node, plugin, pod, scheduler


def _scores(sched, name, p, node_names):
    pl = plugin(sched, name)
    state = fresh_state()
    nodes = [sched.snapshot.get(n) for n in node_names]
    if hasattr(pl, "pre_score"):
        pl.pre_score(state, p, nodes)
    return {n: pl.score(state, p, sched.snapshot.get(n))[0] for n in node_names}


def test_fit_score_ignores_pod_level_requests_but_balanced_allocation_uses_them():
    # noderesources/fit.go: NewFit builds resourceAllocationScorer from nodeResourceStrategyTypeMap,
    # which leaves enablePodLevelResources false, so resource_allocation.go's calculatePodResourceRequest
    # skips spec.resources for NodeResourcesFit's Score (containers count 100m / 200Mi defaults).
    # balanced_allocation.go: NewBalancedAllocation sets the flag, so it scores the pod-level requests.
    p = pod(
        "p",
        containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "y"}],
        spec={
            "resources": {
                "requests": {"cpu": "2550m", "memory": "1920Mi"},
                "limits": {"cpu": "2550m", "memory": "1920Mi"},
            }
        },
    )
    s = scheduler([node("n1", cpu="7", memory="7680Mi"), node("n2", cpu="7", memory="7680Mi")])
    # cpu: (7000 - 200) * 100 // 7000 = 97; memory: (7680Mi - 400Mi) * 100 // 7680Mi = 94; mean 95
    assert _scores(s, "NodeResourcesFit", p, ["n1"]) == {"n1": 95}
    # BalancedAllocation: cpu 2550/7000 = 0.364, memory 1920/7680 = 0.25; std = 0.057 -> (1 - 0.057) * 100
    assert _scores(s, "NodeResourcesBalancedAllocation", p, ["n1"]) == {"n1": 94}


def test_image_locality_uses_the_size_first_recorded_for_an_image_name():
    # backend/cache/cache.go addNodeImageStates: one ImageStateSummary per image name, created by the
    # first node that lists it; later nodes only join its node set, so every node scores that size.
    img = "busybox:latest"
    s = scheduler(
        [
            node("n1", images=[{"names": [img], "sizeBytes": 1200 * 1024 * 1024}]),
            node("n2", images=[{"names": [img], "sizeBytes": 800 * 1024 * 1024}]),
        ]
    )
    p = pod("p", containers=[{"name": "a", "image": img}, {"name": "b", "image": "nginx:1.25"}])
    # both nodes: 1200Mi * 2/2 nodes, two containers -> (1200 - 23) * 100 // (2000 - 23) = 59
    assert _scores(s, "ImageLocality", p, ["n1", "n2"]) == {"n1": 59, "n2": 59}


def _filter(sched, name, p, node_name):
    pl = plugin(sched, name)
    state = fresh_state()
    _, st = pl.pre_filter(state, p, sched.snapshot.list())
    assert st is None
    return pl.filter(state, p, sched.snapshot.get(node_name))


def test_existing_pods_anti_affinity_match_label_keys_are_not_folded_in():
    # framework/types.go (newAffinityTerm / getAffinityTerms) reads labelSelector, namespaces and
    # namespaceSelector only; matchLabelKeys is merged by the API server at creation, never by the
    # scheduler. The existing pod's term app=api therefore matches the incoming app=api pod although
    # their pod-template-hash differs.
    host = "kubernetes.io/hostname"
    existing = pod(
        "old",
        labels={"app": "api", "pod-template-hash": "h1"},
        node_name="n1",
        spec={
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"app": "api"}},
                            "topologyKey": host,
                            "matchLabelKeys": ["pod-template-hash"],
                        }
                    ]
                }
            }
        },
    )
    s = scheduler([node("n1"), node("n2")], [existing])
    st = _filter(s, "InterPodAffinity", pod("new", labels={"app": "api", "pod-template-hash": "h2"}), "n1")
    assert st is not None and st.reasons == ["node(s) didn't satisfy existing pods anti-affinity rules"]


def test_node_selector_value_that_is_no_label_value_makes_the_term_match_nothing():
    # apimachinery labels.NewRequirement validates each value with validateLabelValue (after the Gt/Lt
    # integer check); component-helpers nodeaffinity.NewLazyErrorNodeSelector keeps the parse error
    # and the term never matches. "-2" is an integer but not a label value (must start alphanumeric).
    from kschedcli.api.labels import parse_node_selector

    for op, value in (("Gt", "-2"), ("In", "-1"), ("NotIn", "a b")):
        sel = parse_node_selector(
            {"nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": op, "values": [value]}]}]}, "f"
        )
        assert not sel.matches({"cores": "-1"}, "n1")
        assert sel.terms[0].errors
    ok = parse_node_selector(
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["2"]}]}]}, "f"
    )
    assert ok.matches({"cores": "4"}, "n1") and not ok.terms[0].errors
