"""Preemption's candidate sampling (opt-in, --preemption-sampling): kube-scheduler's
DryRunPreemption from a random offset, stopping once numCandidates candidates are found with at
least one that violates no PDB; by default every potential node is tried."""

from __future__ import annotations

import json
import random
import textwrap

from builders import node, plugin, pod, scheduler
from typer.testing import CliRunner

from kschedcli.api.model import Pod
from kschedcli.cli.app import app


def full_nodes(n: int, pdb_guarded: frozenset[int] = frozenset()):
    """n nodes of 2 cpus, each full with one low-priority pod (labelled app=db on the guarded ones)."""
    nodes = [node(f"n{i:02d}", cpu="2") for i in range(n)]
    pods = [
        pod(
            f"low{i:02d}",
            requests={"cpu": "2"},
            node_name=f"n{i:02d}",
            priority=0,
            start_time="2025-01-01T00:00:00Z",
            labels={"app": "db" if i in pdb_guarded else "web"},
        )
        for i in range(n)
    ]
    return nodes, pods


def preemptor() -> Pod:
    return Pod(
        {
            "kind": "Pod",
            "metadata": {"name": "big", "namespace": "default", "uid": "big"},
            "spec": {
                "priority": 1000,
                "containers": [{"name": "c", "image": "a", "resources": {"requests": {"cpu": "2"}}}],
            },
            "status": {"phase": "Pending"},
        }
    )


def sampled(nodes, pods, seed: int, absolute: int, pdbs=()):
    s = scheduler(nodes, pods)
    for b in pdbs:
        s.cluster.objects["PodDisruptionBudget"][(b["metadata"]["namespace"], b["metadata"]["name"])] = b
    plugin(s, "DefaultPreemption").args = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": absolute}
    s.enable_preemption_sampling(seed)
    return s, s.schedule(preemptor())


def test_every_potential_node_by_default():
    nodes, pods = full_nodes(20)
    s = scheduler(nodes, pods)
    plugin(s, "DefaultPreemption").args = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5}
    p = s.schedule(preemptor()).preemption
    assert (p.num_candidates, p.evaluated_nodes, len(p.candidates), p.sampling_offset) == (5, 20, 20, None)


def test_sampling_stops_at_num_candidates_from_the_seeded_offset():
    nodes, pods = full_nodes(20)
    s, res = sampled(nodes, pods, seed=7, absolute=5)
    p = res.preemption
    offset = random.Random(7).randrange(20)
    names = s.snapshot.names
    assert p.sampling_offset == offset
    assert (p.num_candidates, p.evaluated_nodes) == (5, 5)
    # the nodes from the offset on, around the node list, in that order
    assert [c.node for c in p.candidates] == [names[(offset + i) % 20] for i in range(5)]
    # every candidate ties (one victim of priority 0, same start): the first found is nominated
    assert p.nominated_node == names[offset]
    assert res.details["DefaultPreemption"]["samplingOffset"] == offset
    assert res.details["DefaultPreemption"]["evaluatedNodes"] == 5


def test_each_preemption_draws_a_new_offset():
    nodes, pods = full_nodes(20)
    s, first = sampled(nodes, pods, seed=3, absolute=2)
    second = s.schedule(preemptor())
    rng = random.Random(3)
    assert (first.preemption.sampling_offset, second.preemption.sampling_offset) == (
        rng.randrange(20),
        rng.randrange(20),
    )


def test_pdb_violating_candidates_do_not_stop_the_dry_run():
    # the nodes right after the offset hold only PDB-guarded victims: the dry run goes on past
    # numCandidates of them until one candidate violates no PDB, keeping numCandidates of each kind
    offset = random.Random(11).randrange(20)
    guarded = frozenset((offset + i) % 20 for i in range(4))
    nodes, pods = full_nodes(20, guarded)
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "db"}}},
        "status": {"disruptionsAllowed": 0},
    }
    s, res = sampled(nodes, pods, seed=11, absolute=2, pdbs=[budget])
    p = res.preemption
    names = s.snapshot.names
    assert p.evaluated_nodes == 5
    violating = [c.node for c in p.candidates if c.pdb_violations]
    clean = [c.node for c in p.candidates if not c.pdb_violations]
    assert violating == [names[(offset + i) % 20] for i in range(2)]  # capped at numCandidates
    assert clean == [names[(offset + 4) % 20]]
    assert p.nominated_node == clean[0]


def test_no_candidate_evaluates_every_node_and_says_so_as_before():
    nodes, _ = full_nodes(6)
    high = [
        pod(f"high{i}", requests={"cpu": "2"}, node_name=f"n{i:02d}", priority=5000, start_time="2025-01-01T00:00:00Z")
        for i in range(6)
    ]
    plain = scheduler(nodes, high).schedule(preemptor())
    _, res = sampled(nodes, high, seed=1, absolute=2)
    assert res.preemption.evaluated_nodes == 6
    assert res.preemption.candidates == []
    assert res.message == plain.message


CLUSTER = textwrap.dedent("""\
    apiVersion: v1
    kind: Node
    metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
    status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
    status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: low-a, namespace: default, uid: u-a}
    spec: {nodeName: node-a, priority: 0, containers: [{name: c, image: a, resources: {requests: {cpu: "2"}}}]}
    status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
    ---
    apiVersion: v1
    kind: Pod
    metadata: {name: low-b, namespace: default, uid: u-b}
    spec: {nodeName: node-b, priority: 0, containers: [{name: c, image: a, resources: {requests: {cpu: "2"}}}]}
    status: {phase: Running, startTime: "2025-01-01T00:00:00Z"}
    """)

POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: big, namespace: default}
    spec: {priority: 1000, containers: [{name: c, image: a, resources: {requests: {cpu: "2"}}}]}
    """)


def _details(out: str) -> dict:
    return json.loads(out)["details"]["DefaultPreemption"]


def test_cli_flag_on_explain_and_schedule(tmp_path):
    (tmp_path / "c.yaml").write_text(CLUSTER)
    (tmp_path / "p.yaml").write_text(POD)
    runner = CliRunner()
    base = ["explain", str(tmp_path / "p.yaml"), "-c", str(tmp_path / "c.yaml"), "-o", "json", "--no-cache"]
    plain = runner.invoke(app, base)
    assert "samplingOffset" not in _details(plain.stdout)
    assert _details(plain.stdout)["evaluatedNodes"] == 2
    on = runner.invoke(app, [*base, "--preemption-sampling", "--seed", "5"])
    d = _details(on.stdout)
    # 2 potential nodes, numCandidates 2 (minCandidateNodesAbsolute 100, at most every node)
    assert (d["samplingOffset"], d["evaluatedNodes"], d["numCandidates"]) == (random.Random(5).randrange(2), 2, 2)
    run = runner.invoke(
        app,
        [
            "schedule",
            str(tmp_path / "p.yaml"),
            "-c",
            str(tmp_path / "c.yaml"),
            "-o",
            "json",
            "--detail",
            "full",
            "--no-cache",
            "--preemption-sampling",
            "--seed",
            "5",
        ],
    )
    assert '"samplingOffset"' in run.stdout
