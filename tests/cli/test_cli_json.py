"""`-o json` / `-o yaml`: the contract a CI gate reads. Real outputs of the fixtures are validated
against the shipped JSON Schema (`ksched schema`), carry what the tables show, and are
byte-for-byte deterministic (also across processes with different hash seeds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources as ilres
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")

FORMAT_FIELDS = [
    "pod",
    "profile",
    "schedulable",
    "preFilter",
    "filters",
    "feasibleNodes",
    "scores",
    "topNodes",
    "selectedNode",
    "message",
    "preemption",
]


def pod(name: str) -> str:
    return str(ROOT / "fixtures" / "pods" / f"{name}.yaml")


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})


def as_json(*args: str):
    r = run(*args, "-o", "json")
    assert r.exit_code in (0, 1), r.output
    return r.exit_code, json.loads(r.stdout)


@pytest.fixture(scope="module")
def validator():
    r = run("schema")
    assert r.exit_code == 0
    schema = json.loads(r.stdout)
    shipped = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())
    assert schema == shipped
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


CASES = [("explain", "web", SMALL)] + [
    (cmd, p, PROD)
    for cmd in ("explain", "preempt")
    for p in ("checkout", "reporting", "payments", "web-spread", "cart")
]


@pytest.mark.parametrize("cmd,name,cluster", CASES)
def test_real_outputs_validate_against_the_schema(validator, cmd, name, cluster):
    code, doc = as_json(cmd, pod(name), "--cluster", cluster)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
    assert not errors, errors[:5]
    assert list(doc)[: len(FORMAT_FIELDS)] == FORMAT_FIELDS
    assert doc["kubernetesVersion"] == "v1.34.1"
    assert code == (0 if doc["verdict"] == "schedulable" else 1)


def test_schedule_output_validates_and_keeps_the_conformance_shape(validator):
    r = run("schedule", pod("rollout"), "--cluster", PROD, "--order", "file", "-o", "json", "--detail", "full")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert not list(validator.iter_errors(doc))
    assert doc["kubernetesVersion"] == "v1.34.1"
    assert [x["pod"] for x in doc["results"]] == [
        "shop/web-7d9f8b6c5d-r1",
        "shop/web-7d9f8b6c5d-r2",
        "shop/cart-64d8f7b9c-p4t7w",
        "batch/reporting-28391745-x7k2q",
        "payments/payments-worker-7f6d5c4b3-9xk2p",
    ]
    for res in doc["results"]:
        assert list(res)[: len(FORMAT_FIELDS)] == FORMAT_FIELDS
    assert [x["verdict"] for x in doc["results"]] == ["schedulable"] * 3 + ["unschedulable", "preemption"]
    # each result is explained as its cycle saw the cluster: web r2's resources exclude nothing bound later,
    # and r1 bound before r2 changes the spread counts r2 sees
    r1, r2 = doc["results"][0], doc["results"][1]
    assert r1["selectedNode"] != r2["selectedNode"]
    spread = r2["details"]["PodTopologySpread"]["filter"]["constraints"][0]["domains"]
    assert sum(spread.values()) == 8  # 7 running web pods + r1


def test_json_carries_what_the_tables_show():
    _, doc = as_json("explain", pod("reporting"), "--cluster", PROD)
    assert doc["verdict"] == "unschedulable" and doc["nodeCount"] == 20
    assert doc["priority"] == 100 and doc["priorityClassName"] == "batch-low"
    assert doc["requests"] == {"cpu": 6000, "memory": 24 * 2**30}
    groups = doc["nodeGroups"]
    assert [g["count"] for g in groups] == [13, 3, 2, 1, 1]
    assert groups[0]["firstFailure"] == {
        "plugin": "NodeResourcesFit",
        "code": "Unschedulable",
        "reasons": ["Insufficient cpu", "Insufficient memory"],
    }
    cordoned = next(g for g in groups if g["nodes"] == ["general-c-05"])
    assert cordoned["firstFailure"]["plugin"] == "NodeUnschedulable"
    assert [a["plugin"] for a in cordoned["alsoFailing"]] == ["TaintToleration"]
    assert doc["failingPlugins"] == ["NodeUnschedulable", "TaintToleration", "NodeResourcesFit"]
    cpu = next(r for r in doc["breakdowns"]["resources"]["general-a-01"] if r["resource"] == "cpu")
    assert cpu == {
        "resource": "cpu",
        "request": 6000,
        "allocatable": 7910,
        "requested": 5650,
        "free": 2260,
        "fits": False,
    }
    assert doc["breakdowns"]["taints"]["highmem-a-01"] == [
        {"key": "workload", "value": "highmem", "effect": "NoSchedule", "taint": "workload=highmem:NoSchedule"}
    ]
    assert list(doc["retryOn"]) == ["NodeResourcesFit", "NodeUnschedulable", "TaintToleration"]
    assert {
        "resource": "Pod",
        "action": "Delete|UpdatePodScaleDown",
        "hint": "an assigned pod is deleted or scaled down",
    } in doc["retryOn"]["NodeResourcesFit"]
    # the message is kube-scheduler's, with the preemption suffix
    assert doc["message"].startswith("0/20 nodes are available: 1 node(s) had untolerated taint")
    assert doc["preemption"]["nominatedNode"] is None

    _, doc = as_json("explain", pod("payments"), "--cluster", PROD)
    p = doc["preemption"]
    assert doc["verdict"] == "preemption"
    assert p["nominatedNode"] == "general-c-02" and p["victims"] == ["batch/etl-adhoc-024"]
    lost = {c["node"]: c.get("lostOn") for c in p["candidates"]}
    assert lost["general-c-02"] is None and lost["general-a-01"] == "pdbViolations"
    assert lost["general-a-02"] == "latestStartTime"
    assert p["notHelpful"]["general-c-04"] == "No preemption victims found for incoming pod"
    assert doc["details"]["DefaultPreemption"]["candidatesFound"] == 12

    _, doc = as_json("explain", pod("checkout"), "--cluster", PROD)
    assert doc["selectedNode"] == "general-c-02" and doc["selectedScore"] == doc["scores"]["general-c-02"]["total"]
    assert "retryOn" not in doc


def test_yaml_is_the_same_document():
    r = run("explain", pod("cart"), "--cluster", PROD, "-o", "yaml")
    assert r.exit_code == 0
    _, doc = as_json("explain", pod("cart"), "--cluster", PROD)
    assert yaml.safe_load(r.stdout) == doc


def test_output_is_byte_for_byte_deterministic():
    for args in (
        ["explain", pod("payments"), "--cluster", PROD, "-o", "json"],
        ["explain", pod("cart"), "--cluster", PROD, "-o", "yaml"],
        ["explain", pod("reporting"), "--cluster", PROD],
        ["preempt", pod("payments"), "--cluster", PROD],
        ["schedule", pod("rollout"), "--cluster", PROD, "-o", "json"],
    ):
        assert run(*args).stdout == run(*args).stdout


def test_deterministic_across_processes_and_hash_seeds():
    outs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "COLUMNS": "100"}
        for args in (
            ["explain", pod("payments"), "--cluster", PROD, "-o", "json"],
            ["explain", pod("web-spread"), "--cluster", PROD],
        ):
            p = subprocess.run(
                [sys.executable, "-m", "kschedcli", *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
            )
            assert p.returncode == 1 or p.returncode == 0, p.stderr
            outs.add((args[1], p.stdout))
    assert len(outs) == 2


def test_a_ci_gate_reads_the_json():
    """The README's worked example: fail the build when a pod does not fit, print why."""
    gate = (
        "import json,sys\n"
        "doc = json.load(sys.stdin)\n"
        "bad = [r for r in doc['results'] if r['verdict'] != 'schedulable']\n"
        "for r in bad:\n"
        "    why = r['preemption']['nominatedNode'] if r['verdict'] == 'preemption' else r['message']\n"
        "    print(r['pod'], r['verdict'], why)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    r = run("schedule", pod("rollout"), "--cluster", PROD, "-o", "json")
    p = subprocess.run([sys.executable, "-c", gate], input=r.stdout, capture_output=True, text=True)
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0] == "payments/payments-worker-7f6d5c4b3-9xk2p preemption general-c-02"
    assert lines[1].startswith("batch/reporting-28391745-x7k2q unschedulable 0/20 nodes are available:")


@pytest.mark.parametrize("detail", ["full", "compact"])
def test_schedule_json_streams_the_same_bytes_as_the_whole_document(detail):
    """schedule -o json is written result by result (by orjson); it must equal the standard library's
    dump of run_doc at once."""
    import json as _json

    from typer.testing import CliRunner

    from kschedcli.cli.app import app
    from kschedcli.inputs.cluster import load_pending_pods
    from kschedcli.render.document import run_doc
    from kschedcli.scheduling.analysis import ALL, EVENTS, GROUPS, annotate
    from kschedcli.whatif.world import open_world

    args = ["schedule", pod("rollout"), "-c", PROD, "--order", "file", "-o", "json", "--detail", detail]
    streamed = CliRunner().invoke(app, args).stdout
    session = open_world([PROD], None)
    pods = load_pending_pods(pod("rollout"), session.cluster)
    parts = ALL if detail == "full" else frozenset({GROUPS, EVENTS})
    results = session.scheduler.run_sequence(
        pods, on_result=lambda r: annotate(r, session, parts), with_details=detail == "full"
    )
    whole = run_doc(results, version=session.version, detail=detail)
    assert streamed == _json.dumps(whole, indent=2, ensure_ascii=False) + "\n"
    assert ('"filters"' in streamed) == (detail == "full")
