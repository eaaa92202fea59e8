"""`schedule --preemption=carry-out`: victims deleted, the preemptor nominated (counting on its
node for the pods after it) and retried; one preemption changes where the later pods go."""

from __future__ import annotations

import json
import textwrap
from importlib import resources as ilres

import jsonschema
from builders import node, pod, scheduler
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.whatif.carryout import run_carrying_out

T0, T1 = "2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z"


def cluster():
    nodes = [node("node-a", cpu="4"), node("node-b", cpu="4")]
    bound = [
        pod("low1", requests={"cpu": "2"}, priority=0, node_name="node-a", start_time=T0),
        pod("low2", requests={"cpu": "2"}, priority=0, node_name="node-a", start_time=T1),
        pod("mid", requests={"cpu": "3500m"}, priority=500, node_name="node-b", start_time=T0),
    ]
    return nodes, bound


def sequence():
    return [
        pod("pre", requests={"cpu": "2500m"}, priority=1000),
        pod("later", requests={"cpu": "1"}, priority=100),
        pod("blocked", requests={"cpu": "2"}, priority=100),
    ]


def test_report_mode_leaves_the_cluster_as_it_was():
    s = scheduler(*cluster())
    results = s.run_sequence(sequence())
    assert [r.preemption.nominated_node if r.preemption else r.selected_node for r in results] == [
        "node-a",
        "node-a",
        "node-a",
    ]  # every one only reports a preemption
    assert not any(r.schedulable for r in results)
    assert len(s.snapshot.get("node-a").pods) == 2


def test_carry_out_evicts_nominates_and_retries():
    s = scheduler(*cluster())
    run = run_carrying_out(s, sequence())
    # pre preempts on node-a (lowest top victim priority), its victims are deleted
    assert [(e.pod, e.node, e.preemptor, e.cycle) for e in run.evictions] == [
        ("default/low1", "node-a", "default/pre", 0),
        ("default/low2", "node-a", "default/pre", 0),
    ]
    pre, later, blocked, retry = run.results
    # later fits on node-a next to the nominated pre (4 - 2.5 cpu), where report mode preempted
    assert later.schedulable and later.selected_node == "node-a"
    assert later.nominated["node-a"].pods == ["default/pre"]
    # blocked would fit on node-a without pre's nomination (3 cpu free); with it, 0.5
    assert not blocked.schedulable
    assert blocked.filters["node-a"].first_failure.reasons == ["Insufficient cpu"]
    assert blocked.nominated["node-a"].pods == ["default/pre"]
    # the retry goes to the nominated node first and binds there
    assert retry.pod.name == "pre" and retry.attempt == 2
    assert retry.nominated_node_tried == "node-a" and retry.selected_node == "node-a"
    assert list(retry.filters) == ["node-a"]
    assert [(p.pod, p.node, p.attempts) for p in run.placements] == [
        ("default/pre", "node-a", 2),
        ("default/later", "node-a", 1),
        ("default/blocked", None, 1),
    ]
    assert sorted(p.name for p in s.snapshot.get("node-a").pods) == ["later", "pre"]
    assert len(s.nominator) == 0


def _nominated(name, node_name, priority, cpu):
    from kschedcli.api.model import Pod

    raw = pod(name, requests={"cpu": cpu}, priority=priority).raw
    raw["status"]["nominatedNodeName"] = node_name
    return Pod(raw)


def test_carry_out_clears_lower_priority_nominations_on_the_chosen_node():
    nodes, bound = cluster()
    s = scheduler(nodes, bound)
    s.nominate([_nominated("waiting-low", "node-a", 10, "1"), _nominated("waiting-high", "node-a", 5000, "1")])
    run = run_carrying_out(s, [pod("pre", requests={"cpu": "2500m"}, priority=1000)])
    assert run.cleared == [("default/waiting-low", "node-a")]
    assert [p.name for p in s.nominator.pods_for_node("node-a")] == ["waiting-high"]
    assert run.placements[0].node == "node-a"


CLUSTER = textwrap.dedent("""\
    apiVersion: v1
    kind: Node
    metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: low1, namespace: default}
    spec: {nodeName: node-a, priority: 0, containers: [{name: c, image: a, resources: {requests: {cpu: "2"}}}]}
    status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: low2, namespace: default}
    spec: {nodeName: node-a, priority: 0, containers: [{name: c, image: a, resources: {requests: {cpu: "2"}}}]}
    status: {phase: Running, startTime: "2025-01-01T00:00:01Z"}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: mid, namespace: default}
    spec: {nodeName: node-b, priority: 500, containers: [{name: c, image: a, resources: {requests: {cpu: 3500m}}}]}
    status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
    """)

PODS = "---\n".join(
    textwrap.dedent(f"""\
    apiVersion: v1
    kind: Pod
    metadata: {{name: {name}, namespace: default}}
    spec: {{priority: {prio}, containers: [{{name: c, image: a, resources: {{requests: {{cpu: {cpu}}}}}}}]}}
    """)
    for name, prio, cpu in (("pre", 1000, "2500m"), ("later", 100, "1"), ("blocked", 100, "2"))
)


def _files(tmp_path):
    (tmp_path / "c.yaml").write_text(CLUSTER)
    (tmp_path / "p.yaml").write_text(PODS)
    return str(tmp_path / "c.yaml"), str(tmp_path / "p.yaml")


def test_cli_json_has_evictions_and_final_placements(tmp_path):
    c, p = _files(tmp_path)
    r = CliRunner().invoke(app, ["schedule", p, "-c", c, "--order", "file", "-o", "json", "--preemption", "carry-out"])
    assert r.exit_code == 1, r.output  # blocked ends unplaced
    doc = json.loads(r.stdout)
    schema = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())
    assert not [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
    assert [(x["pod"], x["attempt"]) for x in doc["results"]] == [
        ("default/pre", 1),
        ("default/later", 1),
        ("default/blocked", 1),
        ("default/pre", 2),
    ]
    assert doc["evictions"] == [
        {"pod": "default/low1", "node": "node-a", "preemptor": "default/pre", "cycle": 0},
        {"pod": "default/low2", "node": "node-a", "preemptor": "default/pre", "cycle": 0},
    ]
    assert doc["placements"] == [
        {"pod": "default/pre", "node": "node-a", "attempts": 2, "evicted": False},
        {"pod": "default/later", "node": "node-a", "attempts": 1, "evicted": False},
        {"pod": "default/blocked", "node": None, "attempts": 1, "evicted": False},
    ]
    # the default keeps today's behaviour: nothing carried out, no such fields
    r = CliRunner().invoke(app, ["schedule", p, "-c", c, "--order", "file", "-o", "json"])
    doc = json.loads(r.stdout)
    assert "evictions" not in doc and len(doc["results"]) == 3
    assert all("attempt" not in x for x in doc["results"])


def test_cli_table_shows_evictions_retry_and_placement(tmp_path):
    c, p = _files(tmp_path)
    r = CliRunner().invoke(
        app,
        ["schedule", p, "-c", c, "--order", "file", "--preemption", "carry-out", "--no-color"],
        env={"COLUMNS": "120"},
    )
    text = " ".join(r.stdout.split())
    assert "#1 default/pre preempted on node-a: evicted default/low1, default/low2" in text
    assert "#4 default/pre retried (attempt 2): ✔ bound to node-a" in text
    assert "Final placement" in text and "default/blocked ✘ not placed" in text


def _outcome(s, run):
    from kschedcli.whatif.carryout import fit_reason

    return (
        [(r.pod.key, r.schedulable, r.selected_node, r.attempt, fit_reason(r)) for r in run.results],
        [(e.pod, e.node, e.preemptor, e.cycle) for e in run.evictions],
        [(p.pod, p.node, p.attempts, p.evicted) for p in run.placements],
        run.cleared,
        {ni.node.name: sorted(p.key for p in ni.pods) for ni in s.snapshot.node_infos},
        sorted((p.key, n) for n in ("node-a", "node-b") for p in s.nominator.pods_for_node(n)),
    )


def test_a_run_cut_after_any_attempt_goes_on_as_the_whole_run():
    """The first K attempts' decisions (a bind, a preemption carried out, a nomination cleared)
    applied on another scheduler of the same cluster, the run going on there: every result,
    eviction, placement, the nodes' pods and the nominations as in one run."""

    def seq():
        # `waiting` holds a nomination on node-b that keeps `small` off it, until its attempt
        # finds no candidate (5 cpu fits nowhere) and clears it
        return [
            _nominated("waiting", "node-b", 2000, "5"),
            *sequence(),
            pod("small", requests={"cpu": "500m"}, priority=50),
            pod("tiny", requests={"cpu": "100m"}, priority=0),
        ]

    s = scheduler(*cluster())
    whole = _outcome(s, run_carrying_out(s, seq()))
    assert whole[3] == [] and any(e for e in whole[1])
    n = len(seq())
    kinds = set()
    for k in range(n):
        a = scheduler(*cluster())
        first = run_carrying_out(a, seq(), stop_after=k)
        assert len(first.decisions) == k
        kinds.update((d.node is not None, d.preempted, d.cleared) for d in first.decisions)
        b = scheduler(*cluster())
        rest = run_carrying_out(b, seq(), replay=first.decisions)
        assert _outcome(b, rest) == whole, k
    # a bind, a preemption, a clear: each kind of decision was replayed
    assert {(True, False, False), (True, True, False), (False, False, True)} <= kinds


def test_a_replayed_preemption_evicts_the_victim_it_names_when_uids_repeat():
    """Two hand-written pods on one node share a uid: the first part's preemption named one of
    them (uid and name), and the rest evicts that one, not the other."""

    def world():
        nodes = [node("node-a", cpu="4")]
        low1 = pod("low1", requests={"cpu": "1"}, priority=0, node_name="node-a", start_time=T0)
        low2 = pod("low2", requests={"cpu": "3"}, priority=0, node_name="node-a", start_time=T1)
        for p in (low1, low2):
            p.uid = "same-uid"
        return nodes, [low2, low1]  # (the victim listed first on its node)

    def seq():
        return [pod("pre", requests={"cpu": "2500m"}, priority=1000), pod("after", requests={"cpu": "10m"})]

    s = scheduler(*world())
    whole = _outcome(s, run_carrying_out(s, seq()))
    assert whole[1][0][:2] == ("default/low2", "node-a")
    a = scheduler(*world())
    first = run_carrying_out(a, seq(), stop_after=1)
    b = scheduler(*world())
    assert _outcome(b, run_carrying_out(b, seq(), replay=first.decisions)) == whole
