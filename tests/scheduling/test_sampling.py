"""Node sampling (issue 33): kube-scheduler's findNodesThatPassFilters with one worker, on
hand-built clusters. The recorded cases are conformance's sampling/ (check_sampling.py)."""

from __future__ import annotations

import json

import pytest
from builders import node, pod, scheduler
from typer.testing import CliRunner

from kschedcli.backend.node_tree import node_tree_order, zone_key
from kschedcli.config.scheduler import load_config
from kschedcli.plugins import REGISTRY
from kschedcli.scheduling.sampling import num_feasible_nodes_to_find

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def _n(i: int) -> str:
    return f"n{i:03d}"


def test_node_tree_takes_zones_in_turn_with_zoneless_nodes_and_regions():
    nodes = [
        ("a1", {ZONE: "z1", REGION: "r1"}),
        ("a2", {ZONE: "z1", REGION: "r1"}),
        ("a3", {ZONE: "z1", REGION: "r1"}),
        ("b1", {ZONE: "z1", REGION: "r2"}),  # the same zone name in another region: another zone
        ("c1", {}),  # no zone labels: the zone ''
        ("c2", None),
        ("d1", {"failure-domain.beta.kubernetes.io/zone": "z2"}),  # the beta label counts
    ]
    assert node_tree_order(nodes) == ["a1", "b1", "c1", "d1", "a2", "c2", "a3"]
    assert zone_key({ZONE: "z"}) == ":\x00:z"
    assert zone_key({REGION: "r"}) == "r:\x00:"
    assert zone_key({}) == ""
    # the GA label wins when present, even empty
    assert zone_key({ZONE: "", "failure-domain.beta.kubernetes.io/zone": "old"}) == ""


@pytest.mark.parametrize(
    ("profile", "global_", "n", "want"),
    [
        (None, 0, 99, 99),  # fewer than 100: every node
        (None, 0, 120, 100),  # adaptive 50 %: 60, at least 100
        (None, 0, 300, 144),  # 50 - 300/125 = 48 %
        (None, 0, 5000, 500),  # 50 - 40 = 10 %
        (None, 0, 10000, 500),  # at least 5 %
        (None, 10, 300, 100),
        (50, 10, 400, 200),  # the profile's own percentage first
        (None, 100, 200, 200),
    ],
)
def test_num_feasible_nodes_to_find(profile, global_, n, want):
    assert num_feasible_nodes_to_find(profile, global_, n) == want


def _cluster(n: int, small: set[int] = frozenset(), roomy: int | None = None, zones: int = 1):
    nodes = []
    for i in range(n):
        cpu = "1" if i in small else ("64" if i == roomy else "4")
        nodes.append(node(_n(i), cpu=cpu, labels={ZONE: f"z{i % zones}"}))
    return nodes


def test_stop_rule_the_one_past_is_neither_counted_nor_kept():
    # 120 nodes, 100 to find; the roomiest node (the all-nodes answer) is the 101st feasible one
    sched = scheduler(_cluster(120, roomy=100))
    sched.enable_sampling()
    p = pod("p", requests={"cpu": "500m"})
    r = sched.schedule(p)
    s = r.sampling
    assert (s.start_index, s.num_feasible_nodes_to_find, s.evaluated_nodes, s.feasible_nodes) == (0, 100, 100, 100)
    assert s.next_start_index == 100
    assert _n(100) not in r.feasible and r.selected_node != _n(100)
    assert len(r.feasible) == 100
    # without sampling the roomy node wins
    assert scheduler(_cluster(120, roomy=100)).schedule(p).selected_node == _n(100)
    # the next cycle starts there and wraps around
    r2 = sched.schedule(pod("q", requests={"cpu": "500m"}))
    assert (r2.sampling.start_index, r2.sampling.next_start_index) == (100, 80)
    assert r2.selected_node == _n(100)
    assert r2.sampling.found[:21] == [_n(i) for i in range(100, 120)] + [_n(0)]


def test_failed_nodes_count_as_evaluated():
    # nodes 0..9 too small for 2 cpu: they get a failure status (counted), then 100 kept
    sched = scheduler(_cluster(150, small=set(range(10))))
    sched.enable_sampling(start_index=0)
    r = sched.schedule(pod("p", requests={"cpu": "2"}))
    s = r.sampling
    assert (s.num_feasible_nodes_to_find, s.evaluated_nodes, s.feasible_nodes, s.next_start_index) == (
        100,
        110,
        100,
        110,
    )
    assert s.found[0] == _n(10) and s.found[-1] == _n(109)


def test_start_index_and_zone_order():
    # three zones: the search walks z0, z1, z2, z0, ... from the start index
    sched = scheduler(_cluster(150, zones=3))
    sched.enable_sampling(start_index=4)
    r = sched.schedule(pod("p", requests={"cpu": "100m"}))
    order = node_tree_order((_n(i), {ZONE: f"z{i % 3}"}) for i in range(150))
    assert order[:4] == [_n(0), _n(1), _n(2), _n(3)]  # names in order already interleave here
    assert r.sampling.found == order[4:104]


def test_zone_blocks_are_interleaved():
    # zone z0 holds n000..n099, z1 n100..n149: the tree alternates while both have nodes
    nodes = [node(_n(i), labels={ZONE: "z0" if i < 100 else "z1"}) for i in range(150)]
    sched = scheduler(nodes)
    sched.enable_sampling()
    r = sched.schedule(pod("p", requests={"cpu": "100m"}))
    assert r.sampling.found[:4] == [_n(0), _n(100), _n(1), _n(101)]
    assert r.sampling.found[-2:] == [_n(49), _n(149)]  # 100 found: 50 pairs
    assert r.sampling.next_start_index == 100  # the 101st, n050, neither counted nor kept


def test_prefilter_result_searches_its_nodes_and_advances_over_all():
    sched = scheduler(_cluster(120, small={3}))
    sched.enable_sampling(start_index=7)
    names = [_n(i) for i in (1, 2, 3, 4, 5)]
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names
                    ]
                }
            }
        }
    }
    r = sched.schedule(pod("p", requests={"cpu": "2"}, spec=spec))
    s = r.sampling
    # five nodes searched (fewer than 100: all to find), from 7 % 5 = 2; n003 fails and counts
    assert (s.searched_nodes, s.num_feasible_nodes_to_find, s.evaluated_nodes, s.feasible_nodes) == (5, 5, 5, 4)
    assert s.found == [_n(4), _n(5), _n(1), _n(2)]
    assert s.next_start_index == (7 + 5) % 120
    # every node of the set visited: their order (Go map order in kube-scheduler) changes nothing
    assert "note" not in s.doc() and not s.order_note


def _by_name_affinity(names):
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in names]
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    }


def test_a_large_prefilter_result_cut_short_says_its_order_is_kube_schedulers_map_order():
    sched = scheduler(_cluster(300, zones=3))
    sched.enable_sampling(start_index=40)
    names = [_n(i) for i in range(0, 300, 2)]  # 150 nodes: 100 to find, the search stops inside the set
    r = sched.schedule(pod("p", requests={"cpu": "1"}, spec=_by_name_affinity(names)))
    s = r.sampling
    assert (s.searched_nodes, s.num_feasible_nodes_to_find, s.evaluated_nodes) == (150, 100, 100)
    assert s.next_start_index == 140
    # the set in node-tree order from 40 % 150: ksched's deterministic reference
    order = [n for n in node_tree_order((_n(i), {ZONE: f"z{i % 3}"}) for i in range(300)) if n in set(names)]
    assert s.found == (order[40:] + order[:40])[:100]
    assert "Go map order" in s.doc()["note"] and "150 nodes" in s.order_note


def test_prefilter_rejection_and_gates_keep_the_start_index():
    sched = scheduler(_cluster(120))
    sched.enable_sampling(start_index=33)
    gated = pod("g", spec={"schedulingGates": [{"name": "wait"}]})
    r = sched.schedule(gated)
    assert (r.sampling.start_index, r.sampling.next_start_index, r.sampling.evaluated_nodes) == (33, 33, 0)


def test_profile_percentage_over_the_global_one(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "parallelism: 1\npercentageOfNodesToScore: 50\nprofiles:\n"
        "- schedulerName: default-scheduler\n  percentageOfNodesToScore: 10\n"
        "- schedulerName: other\n"
    )
    config = load_config(str(cfg), REGISTRY)
    assert config.parallelism == 1 and config.percentage_of_nodes_to_score == 50
    assert [p.percentage_of_nodes_to_score for p in config.profiles] == [10, None]
    from kschedcli.inputs.cluster import Cluster
    from kschedcli.scheduling.scheduler import Scheduler

    cluster = Cluster()
    cluster.nodes = _cluster(400)
    cluster.pods = []
    sched = Scheduler(cluster, config)
    sched.enable_sampling()
    a = sched.schedule(pod("a", requests={"cpu": "100m"}))
    b = sched.schedule(pod("b", requests={"cpu": "100m"}, spec={"schedulerName": "other"}))
    assert (a.sampling.percentage_of_nodes_to_score, a.sampling.num_feasible_nodes_to_find) == (10, 100)
    assert (b.sampling.percentage_of_nodes_to_score, b.sampling.num_feasible_nodes_to_find) == (50, 200)
    assert (a.sampling.next_start_index, b.sampling.start_index, b.sampling.next_start_index) == (100, 100, 300)


def test_fewer_than_100_nodes_changes_nothing_but_the_account():
    nodes = _cluster(60, small={5}, roomy=40)
    plain = scheduler(nodes)
    sampled = scheduler(_cluster(60, small={5}, roomy=40))
    sampled.enable_sampling(start_index=17)
    for i in range(5):
        p = pod(f"p{i}", requests={"cpu": "2"})
        a, b = plain.schedule(p), sampled.schedule(p)
        assert a.selected_node == b.selected_node and sorted(a.feasible) == sorted(b.feasible)
        assert (b.sampling.num_feasible_nodes_to_find, b.sampling.evaluated_nodes) == (60, 60)
        assert b.sampling.start_index == b.sampling.next_start_index == 17
        plain.bind(p, a.selected_node)
        sampled.bind(p, b.selected_node)


def test_a_profile_without_score_plugins_looks_for_one_node():
    profile = {"schedulerName": "default-scheduler", "plugins": {"score": {"disabled": [{"name": "*"}]}}}
    sched = scheduler(_cluster(150, small={0, 1}), profile=profile)
    sched.enable_sampling()
    r = sched.schedule(pod("p", requests={"cpu": "2"}))
    s = r.sampling
    assert (s.num_feasible_nodes_to_find, s.evaluated_nodes, s.feasible_nodes, s.next_start_index) == (1, 3, 1, 3)
    assert r.selected_node == _n(2)


def _write_cluster(path, n):
    items = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": _n(i), "labels": {ZONE: f"z{i % 2}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for i in range(n)
    ]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def _pods(path, k):
    docs = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]},
        }
        for i in range(k)
    ]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))


def test_cli_sampling_document_and_parallelism_note(tmp_path, monkeypatch):
    from kschedcli.cli.app import app

    monkeypatch.setenv("KSCHED_NO_CACHE", "1")
    _write_cluster(tmp_path / "c.json", 130)
    _pods(tmp_path / "p.json", 3)
    args = [
        "schedule",
        str(tmp_path / "p.json"),
        "--cluster",
        str(tmp_path / "c.json"),
        "--order",
        "file",
        "-o",
        "json",
    ]
    runner = CliRunner()
    plain = runner.invoke(app, args)
    assert plain.exit_code == 0, plain.output
    assert "sampling" not in plain.stdout
    r = runner.invoke(app, [*args, "--sampling", "--start-index", "125"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["sampling"]["parallelism"] == 16 and "goroutine timing" in doc["sampling"]["note"]
    assert "goroutine timing" in r.stderr
    starts = [(x["sampling"]["startIndex"], x["sampling"]["nextStartIndex"]) for x in doc["results"]]
    assert starts == [(125, 95), (95, 65), (65, 35)]
    assert doc["sampling"]["startIndex"] == 125 and doc["sampling"]["nextStartIndex"] == 35
    cfg = tmp_path / "one.yaml"
    cfg.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 1\n")
    r = runner.invoke(app, [*args, "--sampling", "--config", str(cfg), "--detail", "full"])
    doc = json.loads(r.stdout)
    assert "note" not in doc["sampling"] and "goroutine" not in r.stderr
    assert len(doc["results"][0]["sampling"]["nodesFound"]) == 100


def test_session_questions_sample(tmp_path, monkeypatch):
    from kschedcli import Session

    monkeypatch.setenv("KSCHED_NO_CACHE", "1")
    _write_cluster(tmp_path / "c.json", 130)
    _pods(tmp_path / "p.json", 2)
    notes: list[str] = []
    s = Session(str(tmp_path / "c.json"), messages=notes.append)
    run = s.schedule(str(tmp_path / "p.json"), order="file", sampling=True, start_index=10)
    assert [r.sampling.start_index for r in run.results] == [10, 110]
    assert any("goroutine timing" in n for n in notes)
    assert all(r.sampling is None for r in s.schedule(str(tmp_path / "p.json")).results)
    with pytest.raises(Exception, match="start-index"):
        s.schedule(str(tmp_path / "p.json"), sampling=True, start_index=-1)
    # a scenario's `sampling: true` and `startIndex`
    sc = tmp_path / "s.yaml"
    sc.write_text(
        "apiVersion: ksched.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\ncluster: [c.json]\n"
        "pods: [p.json]\norder: file\nsampling: true\nstartIndex: 120\n"
    )
    run = Session(messages=notes.append).run_scenario(str(sc))
    assert [(r.sampling.start_index, r.sampling.next_start_index) for r in run.results] == [(120, 90), (90, 60)]
    assert run.to_dict()["sampling"]["nextStartIndex"] == 60
    # capacity: every copy (two templates, three copies each) takes a sampled cycle, the index
    # moving by 100 each time
    cap = s.capacity([str(tmp_path / "p.json")], max_copies=3, sampling=True)
    sampled = cap.world.scheduler.sampling
    assert sampled is not None and sampled.next_start == (6 * 100) % 130


def _varied_cluster():
    # 160 nodes in two zones; free cpu and a preferred label vary, so both the non-normalized
    # (NodeResourcesFit) and the normalized (NodeAffinity) scores differ from window to window
    nodes = []
    for i in range(160):
        labels = {ZONE: f"z{i % 2}", "tier": str(i % 7)}
        nodes.append(node(_n(i), cpu=str(2 + (i * 37) % 11), labels=labels))
    busy = [pod(f"b{i}", requests={"cpu": "1"}, node_name=_n(i)) for i in range(0, 160, 3)]
    return nodes, busy


def test_outlook_matches_a_sampled_cycle_from_every_start_index():
    from kschedcli.scheduling.sampling import outlook

    spec = {
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 5,
                        "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["3"]}]},
                    },
                    {
                        "weight": 2,
                        "preference": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["5"]}]},
                    },
                ]
            }
        }
    }
    p = pod("p", requests={"cpu": "4"}, spec=spec)  # fits only where 4 cpu are free: some nodes fail
    profile = {"schedulerName": "default-scheduler"}
    nodes, busy = _varied_cluster()
    sched = scheduler(nodes, busy, profile=profile)
    r = sched.schedule(p)
    assert sched.last_scored is not None
    o = outlook(sched, r, *sched.last_scored)
    assert o is not None and o["feasibleNodes"] > o["numFeasibleNodesToFind"] == 100
    by_start = {}
    for first, count, name in o["spans"]:
        for i in range(count):
            by_start[(first + i) % o["searchedNodes"]] = name
    assert len(by_start) == 160 and o["distinctWinners"] >= 2  # sampling changes the answer somewhere
    evaluated = []
    for start in range(160):
        s2 = scheduler(*_varied_cluster(), profile=profile)
        s2.enable_sampling(start)
        r2 = s2.schedule(p)
        assert r2.selected_node == by_start[start], start
        evaluated.append(r2.sampling.evaluated_nodes)
    assert (o["evaluatedNodes"]["min"], o["evaluatedNodes"]["max"]) == (min(evaluated), max(evaluated))
    assert o["evaluatedNodes"]["mean"] == round(sum(evaluated) / 160, 1)
    share = sum(1 for s in range(160) if by_start[s] == r.selected_node)
    assert o["allNodesSelectedFromPercent"] == round(100 * share / 160, 1)


def _mixed_cluster(n: int = 300):
    # three zones; every fifth node too small for 2 cpu, every seventh tainted: failures of two
    # plugins along the search, and free cpu varying so that the scores differ
    nodes = []
    for i in range(n):
        taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if i % 7 == 3 else None
        cpu = "1" if i % 5 == 0 else str(3 + (i * 13) % 9)
        nodes.append(node(_n(i), cpu=cpu, labels={ZONE: f"z{i % 3}"}, taints=taints))
    return nodes


def test_the_sampled_cycle_filters_only_the_nodes_its_search_counts():
    sched = scheduler(_mixed_cluster())
    sched.enable_sampling(start_index=250)
    r = sched.schedule(pod("p", requests={"cpu": "2"}))
    s = r.sampling
    assert s.num_feasible_nodes_to_find == 144 and s.feasible_nodes == 144
    # the table holds the nodes the search counted, no other: kept ones and failed ones
    assert len(r.filters) == s.evaluated_nodes < 300
    assert sorted(n for n in r.filters if r.filters[n].first_failure is None) == sorted(s.found)
    assert {r.filters[n].first_failure.plugin for n in r.filters if r.filters[n].first_failure} == {
        "NodeResourcesFit",
        "TaintToleration",
    }
    assert sorted(r.feasible) == sorted(s.found)


_SELF_ANTI = {
    "affinity": {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
}


def _ipa_filtered(sched) -> list[str]:
    """The names of the nodes InterPodAffinity's filter_nodes is given from now on, call after call
    (its verdicts are not shared between pods: each node it filters is one it was asked for)."""
    ipa = sched.frameworks["default-scheduler"].plugins["InterPodAffinity"]
    seen: list[str] = []
    original = ipa.filter_nodes

    def counting(state, pod_, nodes):
        seen.extend(ni.node.name for ni in nodes)
        return original(state, pod_, nodes)

    ipa.filter_nodes = counting
    return seen


def test_a_plugin_without_shared_results_filters_the_chunks_visited():
    # 1,000 nodes, 10 % to find: the search visits a few chunks of ~150 nodes; InterPodAffinity's
    # verdicts are not shared between pods, so it filters those chunks only
    sched = scheduler(_mixed_cluster(1000))
    sched.config.percentage_of_nodes_to_score = 10
    sched.enable_sampling(start_index=900)
    seen = _ipa_filtered(sched)
    r = sched.schedule(pod("p", requests={"cpu": "2"}, labels={"app": "x"}, spec=_SELF_ANTI))
    s = r.sampling
    assert (s.num_feasible_nodes_to_find, s.feasible_nodes) == (100, 100)
    assert s.evaluated_nodes <= len(seen) == len(set(seen)) < 400
    assert set(r.filters) <= set(seen)


def test_a_plugin_filtered_on_every_node_once_per_search_whatever_its_chunks():
    # 300 nodes, 144 to find, three nodes in five too small: the search takes two chunks of a
    # quarter of the nodes or more, each of which filters every node with InterPodAffinity (its
    # verdicts not shared between pods): the second reads the first's, every node filtered once
    nodes = [node(_n(i), cpu="1" if i % 5 < 3 else "4", labels={ZONE: f"z{i % 3}"}) for i in range(300)]
    sched = scheduler(nodes)
    sched.enable_sampling(start_index=40)
    seen = _ipa_filtered(sched)
    r = sched.schedule(pod("p", requests={"cpu": "2"}, labels={"app": "x"}, spec=_SELF_ANTI))
    s = r.sampling
    assert (s.num_feasible_nodes_to_find, s.feasible_nodes, s.evaluated_nodes) == (144, 120, 300)
    assert len(seen) == len(set(seen)) == 300


def test_the_sampled_search_equals_every_node_filtered_and_read_off(monkeypatch):
    from kschedcli.scheduling.scheduler import Scheduler

    def run(alone: bool):
        monkeypatch.setattr(Scheduler, "_samples_alone", lambda self, fw, allowed, first_try: alone)
        sched = scheduler(_mixed_cluster())
        sched.enable_sampling(start_index=17)
        out = []
        for i in range(60):
            p = pod(f"p{i}", requests={"cpu": "12" if i % 10 == 9 else ("2" if i % 3 else "5")})
            r = sched.schedule(p)
            s = r.sampling
            out.append((r.selected_node, s.start_index, s.next_start_index, s.evaluated_nodes, s.found, r.message))
            if r.selected_node:
                sched.bind(p, r.selected_node)
        return out

    fast, every = run(True), run(False)
    assert fast == every
    assert any(x[0] is None for x in fast)  # some pods fit nowhere: every node searched


def test_a_pod_that_fits_nowhere_gets_every_nodes_verdict_under_sampling():
    plain = scheduler(_mixed_cluster())
    sampled = scheduler(_mixed_cluster())
    sampled.enable_sampling(start_index=99)
    p = pod("big", requests={"cpu": "64"})
    a, b = plain.schedule(p), sampled.schedule(p)
    assert not b.schedulable and b.message == a.message
    assert list(b.filters) == list(a.filters) and len(b.filters) == 300
    assert b.sampling.evaluated_nodes == 300 and b.sampling.next_start_index == 99


@pytest.mark.parametrize("seed", range(6))
def test_window_winners_by_range_equal_each_window_normalized(seed):
    import random

    from kschedcli.framework.cycle_state import CycleState
    from kschedcli.scheduling.sampling import _window_winners

    rng = random.Random(seed)
    f, k = rng.randint(20, 60), rng.randint(1, 19)
    sched = scheduler(_cluster(3))
    fw = sched.frameworks["default-scheduler"]
    names = [f"m{rng.randrange(10**6):06d}-{i}" for i in range(f)]
    fixed = [rng.randrange(0, 300, 7) for _ in range(f)]  # coarse: ties between nodes happen
    varying = [
        (fw.normalizers["NodeAffinity"], [rng.choice([0, 0, 3, 5, 8]) for _ in range(f)], 2),
        (fw.normalizers["TaintToleration"], [rng.choice([0, 0, 0, 1, 2]) for _ in range(f)], 3),
    ]
    state, p = CycleState(), pod("p")
    got = _window_winners(names, fixed, varying, k, state, p)
    for j in range(f):
        idx = [(j + t) % f for t in range(k)]
        totals = [fixed[i] for i in idx]
        for normalizer, raw, w in varying:
            scores = {names[i]: raw[i] for i in idx}
            normalizer.normalize_score(state, p, scores)
            totals = [a + w * b for a, b in zip(totals, scores.values())]
        best = max(totals)
        assert got[j] == min(names[i] for i, t in zip(idx, totals) if t == best), (j, k)


@pytest.mark.parametrize("question", ["capacity", "drain", "diff"])
def test_the_parallelism_note_on_every_sampled_question(tmp_path, monkeypatch, question):
    from kschedcli import Options, Session

    monkeypatch.setenv("KSCHED_NO_CACHE", "1")
    _write_cluster(tmp_path / "c.json", 130)
    _pods(tmp_path / "p.json", 2)
    one = tmp_path / "one.yaml"
    one.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 1\n")

    def ask(config, sampling):
        notes: list[str] = []
        s = Session(str(tmp_path / "c.json"), options=Options(config=config, cache=False), messages=notes.append)
        if question == "capacity":
            s.capacity([str(tmp_path / "p.json")], max_copies=2, sampling=sampling)
        elif question == "drain":
            s.drain([_n(0)], sampling=sampling)
        else:
            s.diff(str(tmp_path / "p.json"), against_config=str(one), sampling=sampling)
        return [n for n in notes if "goroutine timing" in n]

    # the default parallelism (16): said once; with parallelism: 1 or without sampling: not at all
    assert len(ask(None, True)) == 1 and "16 filter workers" in ask(None, True)[0]
    assert ask(None, False) == []
    assert ask(str(one), True) == []  # (diff: both sides with parallelism 1)


def test_nominated_pods_and_preemption_under_the_sampled_search(monkeypatch):
    from kschedcli.scheduling.scheduler import Scheduler

    nodes = _mixed_cluster()
    roomy = [i for i in range(300) if i % 5 and 3 + (i * 13) % 9 >= 10]
    busy = [pod(f"b{i}", requests={"cpu": "2"}, node_name=_n(i), priority=1) for i in roomy]

    def run(alone: bool):
        monkeypatch.setattr(Scheduler, "_samples_alone", lambda self, fw, allowed, first_try: alone)
        sched = scheduler(nodes, busy)
        sched.enable_sampling(start_index=123)
        waiting = pod("w", requests={"cpu": "3"}, priority=100)
        waiting.raw["status"]["nominatedNodeName"] = _n(roomy[0])
        waiting = type(waiting)(waiting.raw)
        sched.nominate([waiting])
        out = []
        for name, cpu in (("big", "10"), ("small", "2")):
            r = sched.schedule(pod(name, requests={"cpu": cpu}, priority=50))
            pre = r.preemption
            out.append(
                (
                    r.selected_node,
                    r.message,
                    sorted((n, x.second_pass) for n, x in r.nominated.items()),
                    (pre.nominated_node, pre.victims) if pre else None,
                    r.sampling.evaluated_nodes,
                    r.sampling.next_start_index,
                )
            )
        return out

    fast, every = run(True), run(False)
    assert fast == every
    big, small = fast
    assert big[0] is None and big[3] is not None and big[3][0]  # preemption found a node
    assert big[4] == 300 and small[4] < 300
