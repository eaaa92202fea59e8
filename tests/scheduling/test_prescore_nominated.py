"""Issue 28, items 10 and 11: PreScore in the record (which plugins returned Skip, its status), in
-o json and under --raw; and a nominated pod that does not fit its nominated node: kube-scheduler's
diagnosis keeps that node's failing plugin among the unschedulable plugins, so the nodes a
PreFilterResult leaves out fail `node(s) didn't satisfy plugin(s) [...]` with it too
(schedule_one.go: findNodesThatFitPod, evaluateNominatedNode sharing Diagnosis.UnschedulablePlugins)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_prescore_skips_in_json():
    r = invoke("explain", WEB, "-c", SMALL, "-o", "json")
    doc = json.loads(r.stdout)
    assert doc["preScore"] is None
    assert doc["preScoreSkipped"] == ["InterPodAffinity", "NodeAffinity", "PodTopologySpread", "VolumeBinding"]
    # the plugins that skipped are exactly the score plugins absent from the score table
    scored = set(doc["scores"]["node-a"]["plugins"])
    assert set(doc["scorePlugins"]) - scored == set(doc["preScoreSkipped"])


def test_prescore_not_run_with_one_feasible_node(tmp_path):
    pod = tmp_path / "p.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeName: node-a\n"
        "  containers: [{name: c, image: i}]\n"
    )
    r = invoke("explain", str(pod), "-c", SMALL, "-o", "json", "--as-bound")
    doc = json.loads(r.stdout)
    assert doc["feasibleNodes"] == ["node-a"]
    assert doc["preScoreSkipped"] is None and doc["preScore"] is None


def test_prescore_skips_under_raw():
    r = invoke("explain", WEB, "-c", SMALL, "--raw")
    text = " ".join(r.stdout.split())
    assert (
        "PreScore returned Skip (Score not run): InterPodAffinity, NodeAffinity, PodTopologySpread, VolumeBinding"
        in text
    )
    plain = invoke("explain", WEB, "-c", SMALL)
    assert "PreScore returned Skip (Score not run)" not in plain.stdout


NODES = """\
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
spec:
  taints: [{key: dedicated, value: db, effect: NoSchedule}]
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-c, labels: {kubernetes.io/hostname: node-c}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""

# NodeAffinity's PreFilter narrows to node-a and node-b (one metadata.name term each); node-a, the
# nominated node, lacks cpu; node-b is tainted; node-c is left out by the PreFilterResult
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [node-a]}]
        - matchFields: [{key: metadata.name, operator: In, values: [node-b]}]
  containers:
  - name: c
    image: i
    resources: {requests: {cpu: "2"}}
"""


def _explain(tmp_path, pod_text):
    (tmp_path / "c.yaml").write_text(NODES)
    (tmp_path / "p.yaml").write_text(pod_text)
    r = invoke("explain", str(tmp_path / "p.yaml"), "-c", str(tmp_path / "c.yaml"), "-o", "json")
    assert r.exit_code == 1, r.output
    return json.loads(r.stdout)


def test_nominated_node_failure_joins_the_prefilter_narrowing(tmp_path):
    doc = _explain(tmp_path, POD + "status:\n  nominatedNodeName: node-a\n")
    assert doc["filters"]["node-c"]["firstFailure"]["reasons"] == [
        "node(s) didn't satisfy plugin(s) [NodeAffinity NodeResourcesFit]"
    ]
    assert doc["message"].startswith(
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) "
        "[NodeAffinity NodeResourcesFit], 1 node(s) had untolerated taint {dedicated: db}."
    )


def test_without_a_nominated_node_only_the_prefilter_plugins(tmp_path):
    doc = _explain(tmp_path, POD)
    assert doc["filters"]["node-c"]["firstFailure"]["reasons"] == ["node(s) didn't satisfy plugin(s) [NodeAffinity]"]


def test_nominated_node_rejected_by_a_prefilter_plugin_adds_nothing(tmp_path):
    # node-c nominated: rejected by NodeAffinity itself, already in the set
    doc = _explain(tmp_path, POD + "status:\n  nominatedNodeName: node-c\n")
    assert doc["filters"]["node-c"]["firstFailure"]["reasons"] == ["node(s) didn't match Pod's node affinity/selector"]
    assert "didn't satisfy plugin(s) [NodeAffinity]" not in json.dumps(doc["filters"])
