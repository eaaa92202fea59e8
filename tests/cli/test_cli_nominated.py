"""Nominated pods through the command line: the JSON (validated against the shipped schema) and
the explain view say which nominated pods counted on which node and whether the second pass ran."""

from __future__ import annotations

import json
import textwrap
from importlib import resources as ilres

import jsonschema
from typer.testing import CliRunner

from kschedcli.cli.app import app

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
    metadata: {name: waiting, namespace: default, uid: u-waiting}
    spec: {priority: 1000, containers: [{name: c, image: a, resources: {requests: {cpu: "3"}}}]}
    status: {phase: Pending, nominatedNodeName: node-b}
    """)

PODS = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: next, namespace: default}
    spec: {priority: 10, containers: [{name: c, image: a, resources: {requests: {cpu: "2"}}}]}
    """)


def _files(tmp_path):
    c = tmp_path / "cluster.yaml"
    c.write_text(CLUSTER)
    p = tmp_path / "pods.yaml"
    p.write_text(PODS)
    return str(c), str(p)


def run(*args):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


def test_json_names_the_nominated_pods_counted_and_validates(tmp_path):
    cluster, pods = _files(tmp_path)
    r = run("schedule", pods, "-c", cluster, "--order", "file", "-o", "json", "--detail", "full")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    schema = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
    assert not errors, errors
    res = doc["results"][0]
    assert res["selectedNode"] == "node-a"
    assert res["nominatedPods"] == {"node-b": {"pods": ["default/waiting"], "secondPass": False, "firstTry": False}}
    assert res["filters"]["node-b"]["firstFailure"]["plugin"] == "NodeResourcesFit"
    assert "nominatedNodeTried" not in res


def test_explain_view_shows_the_nominated_pods_and_the_passes(tmp_path):
    cluster, pods = _files(tmp_path)
    r = run("explain", pods, "-c", cluster, "--no-color")
    assert r.exit_code == 0, r.output
    assert "Nominated pods" in r.stdout
    text = " ".join(r.stdout.split())
    assert ("node-b default/waiting first pass (with them): NodeResourcesFit: Insufficient cpu; no second pass") in text
    # the node view of node-b says it too
    r = run("explain", pods, "-c", cluster, "--no-color", "--node", "node-b")
    assert "default/waiting" in r.stdout


def test_verbose_load_counts_the_nominated_pods(tmp_path):
    cluster, pods = _files(tmp_path)
    r = CliRunner().invoke(app, ["-v", "explain", pods, "-c", cluster, "--no-color"])
    assert "1 nominated pod" in r.stderr and "nominated pods" not in r.stderr


def test_explain_of_the_nominated_pod_says_only_its_node_was_filtered(tmp_path):
    # default/waiting fits node-b, its nominated node: kube-scheduler filters that node alone
    # (evaluateNominatedNode) and the view must not claim the filters passed on both nodes
    cluster, _ = _files(tmp_path)
    r = run("explain", "default/waiting", "-c", cluster, "--no-color")
    assert r.exit_code == 0, r.output
    assert "Filters  the nominated node node-b × 13 plugins; the other 1 node not filtered\n" in r.stdout
    assert "  every filter plugin passed on node-b\n" in r.stdout
    assert "all 2 nodes" not in r.stdout and "passed on every node" not in r.stdout
