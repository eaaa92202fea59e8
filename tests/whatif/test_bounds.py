"""Bounds and ambiguous input (issue 29): nodes added per command, capacity's count, node names
never read as files, scenario files holding other documents, long values cut in error lines, a
plugin named at its index in the user's file. Every case ends in one line and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: i}]\n"


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_line(r) -> str:
    assert r.exit_code == 2, r.output
    assert r.stdout == "" and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.output
    return r.stderr.strip()


# ---------------------------------------------------------------- nodes added per command


def test_the_node_bound_is_per_command_not_per_flag():
    # two flags of 6,000 each: each under the bound, together past it
    r = run("explain", WEB, "-c", SMALL, "--add-node", "node-a:6000", "--add-node", "node-b:6000")
    assert one_line(r) == (
        "ksched: --add-node: 'node-b:6000': would add 6,000 nodes, 12,000 with the edits before it; "
        "the edits of one command add at most 10,000 nodes (Kubernetes supports clusters of up to 5,000 nodes)"
    )
    # up to the bound in all is taken
    r = run("explain", WEB, "-c", SMALL, "--add-node", "node-a:5000", "--add-node", "node-b:5000", "-o", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["nodeCount"] == 10003, r.output[-300:]


def test_a_scenario_adding_nodes_step_by_step_meets_the_same_bound(tmp_path):
    steps = "".join("- addNode: node-a:2000\n" for _ in range(6))
    sc = tmp_path / "sc.yaml"
    sc.write_text(
        f"apiVersion: ksched.io/v1alpha1\nkind: Scenario\nmetadata: {{name: many}}\ncluster: [{SMALL}]\n"
        f"edits:\n{steps}pods: [{WEB}]\n"
    )
    msg = one_line(run("run", str(sc)))
    assert msg.endswith(
        "'node-a:2000': would add 2,000 nodes, 12,000 with the edits before it; the edits of one command "
        "add at most 10,000 nodes (Kubernetes supports clusters of up to 5,000 nodes)"
    )


def test_a_node_file_counts_against_the_bound(tmp_path):
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        "".join(
            f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: extra-{i}}}\n"
            'status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}\n'
            for i in range(3)
        )
    )
    msg = one_line(run("explain", WEB, "-c", SMALL, "--add-node", "node-a:9998", "--add-node", str(nodes)))
    assert msg.endswith(
        "would add 3 nodes, 10,001 with the edits before it; the edits of one command add at most 10,000 "
        "nodes (Kubernetes supports clusters of up to 5,000 nodes)"
    ), msg


# ---------------------------------------------------------------- capacity


def test_capacity_max_never_lifts_the_ceiling(tmp_path):
    big = tmp_path / "cluster.yaml"
    big.write_text(Path(SMALL).read_text().replace('pods: "110"', 'pods: "1000000000000"'))
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    # --max 1000000000000 on a pod that fits without limit would run for days
    for value in ("1000000000000", "150001"):
        assert one_line(run("capacity", str(pod), "-c", str(big), "--max", value)) == (
            f"ksched: --max: {int(value):,}: at most 150,000 copies of a template are counted "
            "(Kubernetes supports clusters of up to 150,000 pods)"
        )


NO_FIT = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled: [{name: NodeResourcesFit}]
"""


def test_capacity_counts_no_more_copies_than_the_nodes_allocatable_pods(tmp_path):
    # without NodeResourcesFit nothing checks a node's pod count: copies stop where no kubelet
    # would take another pod
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "7"}}\n'
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "5"}}\n'
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(NO_FIT)
    r = run("capacity", str(pod), "-c", str(cluster), "--config", str(cfg), "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert (doc["replicas"], doc["perTemplate"][0]["stoppedBy"], doc["stopMessage"]) == (12, "room", None)
    r = run("capacity", str(pod), "-c", str(cluster), "--config", str(cfg))
    assert "the nodes' allocatable pods, all taken" in r.stdout


# ---------------------------------------------------------------- --add-node: a name is never a file

OTHER_NODE = (
    "apiVersion: v1\nkind: Node\nmetadata: {name: from-file}\n"
    'status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}\n'
)


def test_a_node_name_wins_over_a_file_of_that_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "node-a").write_text(OTHER_NODE)
    r = run("explain", WEB, "-c", SMALL, "--add-node", "node-a", "-o", "json")
    assert r.exit_code == 0, r.output
    assert [e["nodes"] for e in json.loads(r.stdout)["edits"]] == [["node-a-copy-1"]]


def test_a_file_is_read_when_the_value_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "extra").write_text(OTHER_NODE)
    for value in ("@extra", "./extra"):
        r = run("explain", WEB, "-c", SMALL, "--add-node", value, "-o", "json")
        assert r.exit_code == 0, r.output
        assert [e["nodes"] for e in json.loads(r.stdout)["edits"]] == [["from-file"]]
    # a bare word names a node, and says how to read the file of that name
    assert one_line(run("explain", WEB, "-c", SMALL, "--add-node", "extra")) == (
        "ksched: --add-node: no node named 'extra' or matching it as a label selector "
        "(to read the file 'extra', write @extra)"
    )


# ---------------------------------------------------------------- scenario files


def test_a_scenario_file_holding_a_list_is_refused(tmp_path):
    sc = tmp_path / "list.yaml"
    sc.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: ksched.io/v1alpha1\n  kind: Scenario\n"
        f"  metadata: {{name: a}}\n  cluster: [{SMALL}]\n  pods: [{WEB}]\n"
    )
    assert one_line(run("run", str(sc))) == (
        f"ksched: {sc}: kind: expected one Scenario document, found a List (a scenario file holds the Scenario itself)"
    )
    cm = tmp_path / "cm.yaml"
    cm.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n")
    assert one_line(run("run", str(cm))) == f"ksched: {cm}: kind: expected kind Scenario, found 'ConfigMap'"


# ---------------------------------------------------------------- long values


def test_a_long_value_is_cut_in_the_error_line():
    value = "x" * 12_345
    msg = one_line(run("explain", WEB, "-c", SMALL, "--cordon", value))
    assert "… (12,345 characters)" in msg and len(msg) < 400, msg
    assert msg.startswith("ksched: --cordon: no node named '" + "x" * 80 + "'… (12,345 characters)")
    msg = one_line(run("explain", WEB, "-c", SMALL, "--evict", "y" * 5000))
    assert msg == "ksched: --evict: '" + "y" * 80 + "'… (5,000 characters): expected NAMESPACE/POD"


# ---------------------------------------------------------------- config


def test_a_plugin_the_release_lacks_is_named_at_its_index_in_the_file(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
        "      enabled: [{name: NodeResourcesFit}, {name: NodeDeclaredFeatures}]\n"
    )
    msg = one_line(run("explain", WEB, "-c", SMALL, "--config", str(cfg), "--kubernetes-version", "v1.34"))
    assert msg == (
        f"ksched: {cfg}: profiles[0].plugins.multiPoint.enabled[1].name: "
        'PreFilterPlugin "NodeDeclaredFeatures" does not exist'
    )


def test_a_long_kind_in_a_scenario_file_is_cut(tmp_path):
    sc = tmp_path / "sc.yaml"
    sc.write_text("apiVersion: ksched.io/v1alpha1\nkind: " + "Q" * 500 + "\n")
    assert one_line(run("run", str(sc))) == (
        f"ksched: {sc}: kind: expected kind Scenario, found '" + "Q" * 80 + "'… (500 characters)"
    )
