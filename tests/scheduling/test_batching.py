"""OpportunisticBatching (v1.35 on): a pod signed like the one before it takes the next node of that
pod's ranking, filtered alone and not scored, when the previous pod's node no longer fits it."""

from __future__ import annotations

from builders import node, pod, scheduler

from kschedcli.config.versions import RELEASES
from kschedcli.scheduling.batching import pod_signature

NO_SPREAD = {
    "schedulerName": "default-scheduler",
    "plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}},
}


def _nodes():
    # each node holds one 2-cpu pod; free cpu ranks them c, b, a
    return [node("a", cpu="2"), node("b", cpu="3"), node("c", cpu="3500m")]


def _replicas(n=3):
    return [pod(f"r{i}", requests={"cpu": "2", "memory": "1Gi"}, labels={"app": "r"}) for i in range(n)]


def test_identical_pods_take_the_previous_ranking_in_turn_from_v135():
    s = scheduler(_nodes(), profile=NO_SPREAD, release=RELEASES["v1.35"])
    first, second, third = s.run_sequence(_replicas())
    assert first.selected_node == "c" and set(first.filters) == {"a", "b", "c"} and first.scores
    # c is full now: the hint is b, the next of the first pod's ranking, filtered alone
    assert (second.selected_node, list(second.filters), second.feasible, second.top_nodes) == ("b", ["b"], ["b"], ["b"])
    assert not second.scores
    assert (third.selected_node, list(third.filters)) == ("a", ["a"])


def test_no_batching_before_v135_or_with_the_system_spread_defaults():
    for release, profile in ((RELEASES["v1.34"], NO_SPREAD), (RELEASES["v1.35"], None)):
        s = scheduler(_nodes(), profile=profile, release=release)
        results = s.run_sequence(_replicas())
        assert [r.selected_node for r in results] == ["c", "b", "a"]
        assert all(set(r.filters) == {"a", "b", "c"} for r in results)
        assert results[1].scores


def test_a_pod_signed_differently_breaks_the_batch():
    s = scheduler(_nodes(), profile=NO_SPREAD, release=RELEASES["v1.35"])
    other = pod("other", requests={"cpu": "2", "memory": "1Gi"}, labels={"app": "other"})
    r = s.run_sequence([_replicas(1)[0], other])
    assert set(r[1].filters) == {"a", "b", "c"} and r[1].scores


def test_signatures():
    s = scheduler(_nodes(), profile=NO_SPREAD, release=RELEASES["v1.35"])
    fw = s.frameworks["default-scheduler"]
    a, b = _replicas(2)
    assert pod_signature(fw, a) == pod_signature(fw, b) is not None
    affine = pod(
        "x",
        spec={
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "r"}}, "topologyKey": "kubernetes.io/hostname"}
                    ]
                }
            }
        },
    )
    assert pod_signature(fw, affine) is None
    default = scheduler(_nodes(), release=RELEASES["v1.35"]).frameworks["default-scheduler"]
    assert pod_signature(default, a) is None  # the system default spread constraints
