"""Scenario files (kschedcli/whatif/scenario.py, `ksched run`): validated against the published schema,
run through the same edits and sequence as the flags (same bytes), errors located in the file."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
SCENARIO = str(ROOT / "fixtures" / "scenarios" / "lose-zone-a.yaml")


def run(*args):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


def test_a_scenario_prints_what_the_same_flags_print():
    by_file = run("run", SCENARIO, "--no-color")
    by_flags = run(
        "schedule",
        str(ROOT / "fixtures" / "pods" / "rollout.yaml"),
        "-c",
        PROD,
        "--config",
        str(ROOT / "fixtures" / "config" / "most-allocated.yaml"),
        "--cordon",
        "topology.kubernetes.io/zone=us-east-1a",
        "--add-node",
        "general-b-01:2",
        "--no-color",
    )
    assert by_file.exit_code == by_flags.exit_code == 0
    assert by_file.stdout == by_flags.stdout
    assert "general-b-01-copy-1" in by_file.stdout


def test_scenario_json_validates_and_the_schema_is_published():
    doc = json.loads(run("run", SCENARIO, "-o", "json").stdout)
    result_schema = json.loads(run("schema").stdout)
    assert not list(jsonschema.Draft202012Validator(result_schema).iter_errors(doc))
    assert [e["flag"] for e in doc["edits"]] == ["--cordon", "--add-node"]
    scenario_schema = json.loads(run("schema", "--scenario").stdout)
    jsonschema.Draft202012Validator.check_schema(scenario_schema)
    import yaml

    with open(SCENARIO) as f:
        assert not list(jsonschema.Draft202012Validator(scenario_schema).iter_errors(yaml.safe_load(f)))


def write(tmp_path, text):
    f = tmp_path / "s.yaml"
    f.write_text(f"apiVersion: ksched.io/v1alpha1\nkind: Scenario\ncluster: [{PROD}]\n" + text)
    return str(f)


def test_inline_pods_and_the_pending_pods_default(tmp_path):
    f = write(
        tmp_path,
        "edits:\n- label: 'general-c-04:team=ml'\npods:\n"
        "- {kind: Pod, metadata: {name: ml, namespace: default},\n"
        "   spec: {nodeSelector: {team: ml}, containers: [{name: c, image: x}]}}\n",
    )
    r = run("run", f, "-o", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["results"][0]["selectedNode"] == "general-c-04"
    r = run("run", write(tmp_path, "edits: [{cordon: pool=general}]\n"), "-o", "json")
    assert {res["pod"] for res in json.loads(r.stdout)["results"]} == {
        "shop/checkout-6b8c9d7f5-h2j4k",
        "batch/reporting-28391745-x7k2q",
    }


def test_inline_workloads_become_their_pods(tmp_path):
    f = write(
        tmp_path,
        "edits: [{addNode: 'general-b-01:2'}]\npods:\n"
        "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: api2, namespace: shop}\n"
        "  spec:\n    replicas: 3\n    selector: {matchLabels: {app: api2}}\n"
        "    template:\n      metadata: {labels: {app: api2}}\n"
        "      spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '2'}}}]}\n",
    )
    r = run("run", f, "-o", "json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and len(doc["results"]) == 3
    assert all(res["pod"].startswith("shop/api2-") for res in doc["results"])
    [w] = doc["workloads"]
    assert (w["kind"], w["name"], w["results"]["schedulable"]) == ("Deployment", "api2", 3)
    result_schema = json.loads(run("schema").stdout)
    assert not list(jsonschema.Draft202012Validator(result_schema).iter_errors(doc))


def test_bad_scenarios_are_one_line_naming_the_place(tmp_path):
    r = run("run", write(tmp_path, "edits: [{drain: x}]\n"))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and ": edits[0]: " in r.stderr
    r = run("run", write(tmp_path, "edits: [{cordon: nowhere}]\n"))
    assert r.exit_code == 2 and r.stderr.startswith("ksched: ")
    assert "s.yaml: --cordon: no node named 'nowhere'" in r.stderr
    r = run("run", write(tmp_path, "pods: [7]\n"))
    assert r.exit_code == 2 and ": pods[0]: " in r.stderr
    f = tmp_path / "k.yaml"
    f.write_text("kind: Pod\n")
    r = run("run", str(f))
    assert r.exit_code == 2 and "expected kind Scenario" in r.stderr


@pytest.mark.parametrize(
    "text, message",
    [
        ("edits: [{cordon: null}]\n", "edits[0].cordon: expected a string, got null"),
        ("edits: [{cordon: 5}]\n", "edits[0].cordon: expected a string, got number 5"),
        ("edits: [{cordon: ''}]\n", "edits[0].cordon: must not be empty"),
        ("edits: [{cordon: a, uncordon: a}]\n", "edits[0]: one key per item, found 2: cordon, uncordon"),
        ("edits: [{}]\n", "edits[0]: an empty item: expected one key"),
        (
            "edits: [{drain: x}]\n",
            "edits[0]: unknown field drain: expected one of addNode, removeNode, cordon, uncordon, taint, label, evict",
        ),
        ("edits: [{cordn: a}]\n", "edits[0]: unknown field cordn; did you mean cordon?"),
        ("clusterz: []\n", "(root): unknown field clusterz; did you mean cluster?"),
        ("edits: [[1]]\n", "edits[0]: expected an object, got a list"),
        ("edits: nope\n", 'edits: expected a list, got string "nope"'),
    ],
)
def test_a_scenario_s_schema_errors_are_told_in_json_s_words(tmp_path, text, message):
    r = run("run", write(tmp_path, text))
    assert r.exit_code == 2 and r.stderr == f"ksched: {tmp_path / 's.yaml'}: {message}\n"


@pytest.mark.parametrize("value", ["1e9", "99999999999999999999999999", "2.0"])
def test_a_start_index_that_is_a_float_is_one_line(tmp_path, value):
    # JSON Schema's "integer" takes 1e9 and 2.0 (floats of whole value): the sampling start index then
    # was a float, and a slice of the node order a traceback
    r = run("run", write(tmp_path, f"sampling: true\nstartIndex: {value}\n"))
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.output
    assert "s.yaml: startIndex: " in r.stderr and "is not a whole number" in r.stderr
