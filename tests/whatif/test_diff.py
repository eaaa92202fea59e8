"""`ksched diff` (kschedcli/whatif/diff.py): the same pods in two worlds, on hand-built clusters and the
prod fixture; config diffs, cluster diffs, edits, --all, and the JSON against the schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from builders import node, pod
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.config.scheduler import SchedulerConfig, build_profile
from kschedcli.inputs.cluster import Cluster
from kschedcli.plugins import REGISTRY
from kschedcli.whatif.diff import diff

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
ROLLOUT = str(ROOT / "fixtures" / "pods" / "rollout.yaml")
MOST = str(ROOT / "fixtures" / "config" / "most-allocated.yaml")

LEAST = {"schedulerName": "default-scheduler"}
PACK = {
    "schedulerName": "default-scheduler",
    "pluginConfig": [
        {
            "name": "NodeResourcesFit",
            "args": {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                }
            },
        }
    ],
}


def config(profile):
    return SchedulerConfig(profiles=[build_profile(profile, "t", REGISTRY)])


def world():
    c = Cluster()
    c.nodes = [node("a"), node("b")]
    c.pods = [pod("busy", node_name="a", requests={"cpu": "2"})]
    return c


def new_pods(c):
    return [pod("p1", requests={"cpu": "1"}), pod("p2", requests={"cpu": "1"}, priority=100)]


def test_a_scoring_strategy_changes_the_nodes_and_the_spread():
    report = diff(("A", world(), config(LEAST)), ("B", world(), config(PACK)), new_pods)
    # spreading puts both on the empty node; packing on the busy one
    assert report.a.outcomes["default/p2"].node == "b" and report.b.outcomes["default/p2"].node == "a"
    assert [c.pod for c in report.changes] == ["default/p2", "default/p1"]  # priority order
    assert report.a.nodes_receiving == 1 and report.b.nodes_receiving == 1
    assert report.a.spread["cpu"].stdev == 0.0 and report.b.spread["cpu"].stdev == 50.0
    assert not report.same


def test_same_worlds_are_the_same_and_verdict_changes_count():
    report = diff(("A", world(), config(LEAST)), ("B", world(), config(LEAST)), new_pods)
    assert report.same and report.a.scheduled == 2
    small = Cluster()
    small.nodes = [node("a", cpu="1")]
    report = diff(("A", world(), config(LEAST)), ("B", small, config(LEAST)), new_pods)
    [first, second] = report.changes
    assert (first.b.verdict, first.b.node) == ("schedulable", "a")
    assert second.b.verdict == "unschedulable" and second.b.message.startswith("0/1 nodes are available")
    assert report.b.unschedulable == 1


def test_all_replaces_every_bound_pod_from_an_empty_cluster():
    def cluster():
        c = Cluster()
        c.nodes = [node("a"), node("b")]
        c.pods = [pod("x", node_name="a", requests={"cpu": "1"}), pod("y", node_name="b", requests={"cpu": "1"})]
        return c

    report = diff(("A", cluster(), config(LEAST)), ("B", cluster(), config(PACK)), None, mode="all")
    assert report.a.pods == 2 and report.a.nodes_used == 2 and report.b.nodes_used == 1


def run(*args):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})


def validate(doc):
    schema = json.loads(run("schema").stdout)
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]


def test_cli_config_diff_on_prod():
    r = run("diff", ROLLOUT, "-c", PROD, "--against-config", MOST, "--no-color")
    assert r.exit_code == 1, r.output
    assert "3 pods whose verdict or node differs" in r.stdout
    r = run("diff", ROLLOUT, "-c", PROD, "--against-config", MOST, "-o", "json")
    doc = json.loads(r.stdout)
    assert validate(doc) == [] and not doc["diff"]["same"] and doc["diff"]["pods"] == "pods"
    assert {c["pod"] for c in doc["diff"]["changes"]} >= {"shop/web-7d9f8b6c5d-r1"}


def test_cli_edit_diff_and_pending_pods():
    r = run("diff", "-c", PROD, "--cordon", "pool=general", "-o", "json")
    doc = json.loads(r.stdout)
    assert validate(doc) == [] and doc["diff"]["pods"] == "pending"
    assert doc["edits"][0]["flag"] == "--cordon" and r.exit_code == 1
    assert doc["diff"]["b"]["unschedulable"] > doc["diff"]["a"]["unschedulable"]
    r = run("diff", "-c", PROD, "--against-cluster", PROD, "-o", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["diff"]["same"]


def test_cli_diff_usage_errors():
    r = run("diff", "-c", PROD)
    assert r.exit_code == 2 and "nothing to compare" in r.stderr
    r = run("diff", ROLLOUT, "--all", "-c", PROD, "--against-config", MOST)
    assert r.exit_code == 2 and r.stderr.startswith("ksched: --all: ")
