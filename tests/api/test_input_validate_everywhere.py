"""Issue 11, class 8 carried through: --validate on every command that reads user files (capacity,
drain, diff, run as explain/schedule/preempt), reaching pods, workloads, --add-node files and the
KubeSchedulerConfiguration, which is checked against its field tree as pods are (its plugins' args
as their args types)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")
CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
TYPO_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  nodeSelecter: {pool: gpu}\n  containers:\n"
    "  - name: c\n    image: i\n"
)
TYPO_NODE = (
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: extra\n  lables: {a: b}\nstatus:\n"
    "  allocatable: {cpu: '4', memory: 8Gi, pods: '110'}\n"
)


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize(
    "body,message",
    [
        ("profilez: []\n", "profilez: unknown field; did you mean profiles?"),
        (
            "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: NodeResourcesFit\n"
            "    args: {scoringStrategy: {typ: MostAllocated}}\n",
            "profiles[0].pluginConfig[0].args.scoringStrategy.typ: unknown field; did you mean type?",
        ),
        (
            "profiles:\n- schedulerName: default-scheduler\n  plugins: {score: {enabled: [{name: ImageLocality, "
            "wieght: 2}]}}\n",
            "profiles[0].plugins.score.enabled[0].wieght: unknown field; did you mean weight?",
        ),
        ("parallelism: many\n", 'parallelism: expected an integer, got string "many"'),
    ],
)
def test_the_config_is_checked_against_its_field_tree(tmp_path, body, message):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CONFIG_HEAD + body)
    r = invoke("explain", WEB, "-c", SMALL, "--config", str(cfg))
    assert r.exit_code == 2 and r.stderr == f"ksched: {cfg}: {message}\n", r.output


def test_config_unknown_fields_follow_validate(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CONFIG_HEAD + "profilez: []\n")
    warn = invoke("explain", WEB, "-c", SMALL, "--config", str(cfg), "--validate=warn")
    assert warn.exit_code == 0, warn.output
    assert warn.stderr == f"ksched: warning: {cfg}: profilez: unknown field; did you mean profiles?\n"
    quiet = invoke("drain", "node-a", "-c", SMALL, "--config", str(cfg), "--validate=ignore", "-o", "json")
    assert quiet.exit_code in (0, 1) and quiet.stderr == "", quiet.output


def test_capacity_templates_follow_validate(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(TYPO_POD)
    strict = invoke("capacity", str(pod), "-c", SMALL, "--max", "3")
    assert strict.exit_code == 2
    assert strict.stderr.endswith("spec.nodeSelecter: unknown field; did you mean nodeSelector?\n"), strict.output
    warn = invoke("capacity", str(pod), "-c", SMALL, "--max", "3", "--validate", "warn", "-o", "json")
    assert warn.exit_code == 0, warn.output
    assert warn.stderr.count("ksched: warning:") == 1  # once, not once per batch of copies


def test_drain_and_added_node_files_follow_validate(tmp_path):
    node = tmp_path / "node.yaml"
    node.write_text(TYPO_NODE)
    strict = invoke("drain", "node-a", "-c", SMALL, "--add-node", str(node))
    assert strict.exit_code == 2
    assert strict.stderr == (f"ksched: {node}: Node extra: metadata.lables: unknown field; did you mean labels?\n"), (
        strict.output
    )
    ignore = invoke("drain", "node-a", "-c", SMALL, "--add-node", str(node), "--validate", "false", "-o", "json")
    assert ignore.exit_code in (0, 1) and ignore.stderr == "", ignore.output
    bad = invoke("drain", "node-a", "-c", SMALL, "--validate", "maybe")
    assert bad.exit_code == 2 and "--validate: 'maybe': must be one of" in bad.stderr


def test_diff_pods_follow_validate_and_warn_once(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(TYPO_POD)
    strict = invoke("diff", str(pod), "-c", SMALL, "--cordon", "node-a")
    assert strict.exit_code == 2 and "spec.nodeSelecter: unknown field" in strict.stderr, strict.output
    warn = invoke("diff", str(pod), "-c", SMALL, "--cordon", "node-a", "--validate=warn", "-o", "json")
    assert warn.exit_code in (0, 1), warn.output
    assert warn.stderr.count("ksched: warning:") == 1  # one file, two worlds: one warning


def test_run_follows_validate_in_its_pod_files(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(TYPO_POD)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"apiVersion: ksched.io/v1alpha1\nkind: Scenario\nmetadata: {{name: s}}\ncluster: [{SMALL}]\npods: [pod.yaml]\n"
    )
    strict = invoke("run", str(scenario))
    assert strict.exit_code == 2 and "spec.nodeSelecter: unknown field" in strict.stderr, strict.output
    warn = invoke("run", str(scenario), "--validate", "warn", "-o", "json")
    assert warn.exit_code in (0, 1) and warn.stderr.count("ksched: warning:") == 1, warn.output
