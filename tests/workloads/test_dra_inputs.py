"""ResourceClaims and ResourceClaimTemplates in the input beside the pods and workloads (a chart's
`helm template` output) are added to the cluster as `kubectl apply` would add them, checked where
the DRA allocator reads them: a pod naming a claim of the input is scheduled with it (before: the
claim left out, the pod rejected as its claim was not found). No claim is made from a template:
the resource claim controller's work is not done (as in the conformance cases), so kube-scheduler's
answer is that the claim is not created yet."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DRA = str(ROOT / "fixtures" / "dra" / "cluster.yaml")

SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}
CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "shared-gpu", "namespace": "ml"},
    "spec": SPEC,
}
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu", "namespace": "ml"},
    "spec": {"spec": SPEC},
}


def _deployment(claim: dict) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "infer", "namespace": "ml"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "infer"}},
            "template": {
                "metadata": {"labels": {"app": "infer"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "x",
                            "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]},
                        }
                    ],
                    "resourceClaims": [{"name": "gpu", **claim}],
                },
            },
        },
    }


def _schedule(path: Path) -> list:
    r = CliRunner().invoke(app, ["schedule", str(path), "-c", DRA, "-o", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)["results"]


def test_a_claim_of_the_input_is_the_clusters(tmp_path):
    chart = tmp_path / "chart.yaml"
    chart.write_text(yaml.safe_dump_all([CLAIM, _deployment({"resourceClaimName": "shared-gpu"})]))
    [r] = _schedule(chart)
    assert r["schedulable"] is True, r
    # without the claim in the input: not found, as before
    chart.write_text(yaml.safe_dump(_deployment({"resourceClaimName": "shared-gpu"})))
    [r] = _schedule(chart)
    assert not r["schedulable"] and r["message"] == 'could not find ResourceClaim "ml/shared-gpu"'


def test_no_claim_is_made_from_a_template(tmp_path):
    chart = tmp_path / "chart.yaml"
    chart.write_text(yaml.safe_dump_all([TEMPLATE, _deployment({"resourceClaimTemplateName": "one-gpu"})]))
    [r] = _schedule(chart)
    assert not r["schedulable"]
    assert r["message"].endswith("ResourceClaim not created yet")


def test_a_claim_or_template_with_a_wrong_type_is_one_line(tmp_path):
    for obj in (CLAIM, TEMPLATE):
        bad = json.loads(json.dumps(obj))
        spec = bad["spec"] if obj is CLAIM else bad["spec"]["spec"]
        spec["devices"]["requests"][0]["exactly"]["count"] = "two"
        chart = tmp_path / "chart.yaml"
        chart.write_text(yaml.safe_dump_all([bad, _deployment({"resourceClaimName": "shared-gpu"})]))
        r = CliRunner().invoke(app, ["schedule", str(chart), "-c", DRA])
        assert r.exit_code == 2, r.output
        assert len(r.stderr.splitlines()) == 1
        name = bad["metadata"]["name"]
        assert str(chart) in r.stderr and f"{bad['kind']} ml/{name}" in r.stderr and "count" in r.stderr
