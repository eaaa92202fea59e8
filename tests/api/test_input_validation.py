"""Objects the API server would refuse: issue 11's classes 2 (types and sizes that raised tracebacks),
7 (what the API server refuses is refused, with its message) and 8 (unknown fields: an error with a
did-you-mean in pod files, by --validate; counted under -v in snapshots, never fatal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.api import quantity
from kschedcli.api.fieldtree import check_object
from kschedcli.cli.app import app
from kschedcli.loader import load_documents

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small-cluster.yaml"


def pod_yaml(spec_extra: str = "", meta_extra: str = "", name: str = "p", requests: str = "cpu: 100m") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n{meta_extra}spec:\n  containers:\n"
        f"  - name: c\n    image: i\n    resources:\n      requests: {{{requests}}}\n{spec_extra}"
    )


def explain(tmp_path: Path, text: str, *extra: str, cluster: Path | str = SMALL):
    f = tmp_path / "pod.yaml"
    f.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(app, ["explain", str(f), "-c", str(cluster), *extra])
    return r, str(f)


def one_line(r, f: str) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert len(r.stderr.splitlines()) == 1 and r.stdout == "", r.output
    assert r.stderr.startswith(f"ksched: {f}: "), r.stderr
    return r.stderr[len(f"ksched: {f}: ") :].rstrip("\n")


# ----------------------------------------------------------------------------- 8: unknown fields


def test_a_misspelt_field_is_an_error_with_a_did_you_mean(tmp_path):
    r, f = explain(tmp_path, pod_yaml("  nodeSelecter: {pool: gpu}\n"))
    assert one_line(r, f) == "Pod default/p: spec.nodeSelecter: unknown field; did you mean nodeSelector?"


def test_validate_warn_and_ignore(tmp_path):
    text = pod_yaml("  nodeSelecter: {pool: gpu}\n")
    warn, f = explain(tmp_path, text, "--validate", "warn")
    assert warn.exit_code == 0
    assert warn.stderr == (
        f"ksched: warning: {f}: Pod default/p: spec.nodeSelecter: unknown field; did you mean nodeSelector?\n"
    )
    for mode in ("ignore", "false"):
        quiet, _ = explain(tmp_path, text, f"--validate={mode}")
        assert quiet.exit_code == 0 and quiet.stderr == ""
    bad, _ = explain(tmp_path, text, "--validate", "maybe")
    assert bad.exit_code == 2 and "--validate: 'maybe': must be one of strict (or true), warn, ignore" in bad.stderr


def test_type_errors_are_errors_in_every_mode(tmp_path):
    r, f = explain(tmp_path, pod_yaml("  nodeSelector: {gpu: true}\n"), "--validate=ignore")
    assert one_line(r, f) == (
        'Pod default/p: spec.nodeSelector.gpu: expected a string, got boolean true (quote it if it is text: "true")'
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            "    env: [{name: DB_PASSWORD, value: 8675309}]\n",
            "env[0].value: expected a string, got a number (quote it if it is text)",
        ),
        ("    env: s3cr3t-value\n", "env: expected a list, got a string"),
        ("    env: [{name: T, valueFrom: tok3n-value}]\n", "env[0].valueFrom: expected an object, got a string"),
        ("    args: --password=hunter2\n", "args: expected a list, got a string"),
        ("    command: [run, {password: hunter2}]\n", "command[1]: expected a string, got an object"),
    ],
)
def test_type_errors_in_env_args_and_command_never_show_the_value(tmp_path, extra, message):
    # values there are often secrets: the problem names the JSON type only (as kubectl's does)
    r, f = explain(tmp_path, pod_yaml() + extra)
    line = one_line(r, f)
    assert line == f"Pod default/p: spec.containers[0].{message}"
    for secret in ("8675309", "s3cr3t", "tok3n", "hunter2"):
        assert secret not in r.output


def test_field_trees_know_the_api_types():
    pod = yaml.safe_load(pod_yaml())
    assert check_object(pod, "Pod") == []
    pod["spec"]["containers"][0]["resources"]["requestz"] = {}
    pod["spec"]["ephemeralContainers"] = [{"name": "d", "targetContainerName": "c"}]  # inline common part
    pod["metadata"]["labels"] = {"a": "b"}
    [p] = check_object(pod, "Pod")
    assert (p.field, p.unknown) == ("spec.containers[0].resources.requestz", True)
    assert p.message == "unknown field; did you mean requests?"
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "imagePullPolcy": "x"}]}}},
    }
    assert [(p.field, p.message) for p in check_object(deployment, "Deployment")] == [
        ("spec.template.spec.containers[0].imagePullPolcy", "unknown field; did you mean imagePullPolicy?")
    ]


def test_snapshot_unknown_fields_are_counted_under_verbose_never_fatal(tmp_path):
    docs = [d for d in yaml.safe_load_all(SMALL.read_text()) if d]
    for d in docs:
        if d["kind"] == "Node":
            d.setdefault("status", {})["futureField"] = {"x": 1}
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump_all(docs))
    pod = ROOT / "fixtures" / "pods" / "web.yaml"
    quiet = CliRunner().invoke(app, ["explain", str(pod), "-c", str(snap), "-o", "json"])
    loud = CliRunner().invoke(app, ["-v", "explain", str(pod), "-c", str(snap), "-o", "json"])
    assert quiet.exit_code == loud.exit_code == 0 and quiet.stdout == loud.stdout and quiet.stderr == ""
    assert "ksched: fields this ksched does not know, not read: Node status.futureField ×3\n" in loud.stderr


# ----------------------------------------------------------------------------- 7: what the API server refuses


@pytest.mark.parametrize(
    "text,message",
    [
        (
            pod_yaml(requests='cpu: "-1"'),
            'spec.containers[0].resources.requests.cpu: Invalid value: "-1": must be greater than or equal to 0',
        ),
        (pod_yaml("  priority: 3000000000\n"), "spec.priority: number 3000000000 is out of range for int32"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n", "spec.containers: Required value"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [null]}\n",
            "spec.containers[0].name: Required value",
        ),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: null\n", "spec.containers: Required value"),
        (
            pod_yaml("  tolerations: [{key: a, operator: Exists, effect: NoExecute, tolerationSeconds: soon}]\n"),
            'spec.tolerations[0].tolerationSeconds: expected an integer, got string "soon"',
        ),
        (pod_yaml(name="Web_1"), 'metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist'),
        (
            pod_yaml(meta_extra="  labels: {version: 1.10}\n"),
            'metadata.labels.version: expected a string, got number 1.1 (quote it if it is text: "1.10")',
        ),
        (pod_yaml("  priority: '--5'\n"), 'spec.priority: expected an integer, got string "--5"'),
        (pod_yaml("  priority: '²'\n"), 'spec.priority: expected an integer, got string "²"'),
        (pod_yaml(requests="cpu: [1]"), "spec.containers[0].resources.requests.cpu: expected a quantity"),
    ],
)
def test_pods_the_api_server_refuses_are_one_line(tmp_path, text, message):
    r, f = explain(tmp_path, text)
    got = one_line(r, f)
    assert got.split(": ", 1)[1].startswith(message), got


@pytest.mark.parametrize("name", ["123", "yes", "2024-01-01"])
def test_names_yaml_reads_as_numbers_booleans_or_dates(tmp_path, name):
    r, f = explain(tmp_path, pod_yaml(name=name))
    if name == "2024-01-01":  # kubectl's YAML reading hands a date on as its text: a valid name
        assert r.exit_code == 0 and "default/2024-01-01" in r.stdout, r.output
    else:
        assert "metadata.name: expected a string, got " in one_line(r, f)
    # a node of the snapshot so named (read as PyYAML reads it): one line too (was a TypeError
    # while sorting nodes)
    snap = tmp_path / "snap.yaml"
    snap.write_text(SMALL.read_text().replace("name: node-a", f"name: {name}", 1))
    r2 = CliRunner().invoke(app, ["explain", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", str(snap)])
    assert r2.exit_code == 2 and "metadata.name: expected a string, got " in r2.stderr, r2.output


def test_snapshot_label_values_must_be_strings_and_allocatable_not_negative(tmp_path):
    text = SMALL.read_text()
    for old, new, expect in [
        (
            "allocatable: {cpu: 3920m",
            'allocatable: {cpu: "-4"',
            'status.allocatable.cpu: Invalid value: "-4": must be greater than or equal to 0',
        ),
        ("  labels:\n", "  labels:\n    gpu: true\n", "metadata.labels.gpu: expected a string"),
    ]:
        snap = tmp_path / "snap.yaml"
        snap.write_text(text.replace(old, new, 1))
        r = CliRunner().invoke(app, ["explain", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", str(snap)])
        assert r.exit_code == 2 and expect in r.stderr and len(r.stderr.splitlines()) == 1, r.output


def test_duplicate_bound_pods_are_refused(tmp_path):
    docs = [d for d in yaml.safe_load_all(SMALL.read_text()) if d]
    bound = next(d for d in docs if d["kind"] == "Pod" and d["spec"].get("nodeName"))
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump_all(docs + [bound]))
    r = CliRunner().invoke(app, ["explain", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", str(snap)])
    ns = bound["metadata"].get("namespace") or "default"
    assert r.exit_code == 2 and f"pod {ns}/{bound['metadata']['name']} appears twice" in r.stderr


# ----------------------------------------------------------------------------- 2: sizes


def test_quantities_of_any_length_read_as_go_reads_them():
    assert quantity.parse("9" * 5000) == quantity.parse("9" * 100) == 10**40  # capped, as any huge value
    assert quantity.parse("0." + "0" * 5000 + "1") == 1  # rounded up to 1n
    assert quantity.parse("1" + "0" * 5000 + "e-4990") == 10**19  # 10^10
    assert quantity.parse(10**400) == 10**40


def test_a_capacity_of_ten_to_the_400_schedules(tmp_path):
    snap = tmp_path / "snap.yaml"
    text = SMALL.read_text()
    assert "allocatable: {cpu: 3920m" in text
    snap.write_text(text.replace("allocatable: {cpu: 3920m", "allocatable: {cpu: 1" + "0" * 400, 1))
    web = str(ROOT / "fixtures" / "pods" / "web.yaml")
    r = CliRunner().invoke(app, ["explain", web, "-c", str(snap), "-o", "json"])
    assert r.exit_code == 0, r.output  # was an OverflowError in NodeResourcesBalancedAllocation
    assert json.loads(r.stdout)["verdict"] == "schedulable"


def test_numbers_past_pythons_digit_limit_are_one_line(tmp_path):
    f = tmp_path / "big.json"
    f.write_text('{"kind": "Pod", "spec": {"priority": ' + "9" * 5000 + "}}")
    with pytest.raises(Exception, match="more than 4,300 digits"):
        load_documents(str(f))
    g = tmp_path / "big.yaml"
    g.write_text("kind: Pod\nspec:\n  priority: " + "9" * 5000 + "\n")
    with pytest.raises(Exception, match="more than 4,300 digits"):
        load_documents(str(g))


def test_lone_surrogates_in_names_print_in_table_and_json(tmp_path):
    docs = [d for d in yaml.safe_load_all(SMALL.read_text()) if d]
    node = next(d for d in docs if d["kind"] == "Node")
    old = node["metadata"]["name"]
    node["metadata"]["name"] = "bad\ud800name"
    for d in docs:  # its pods move with it (else they are on a node the snapshot lacks, and a warning says so)
        if d["kind"] == "Pod" and d["spec"].get("nodeName") == old:
            d["spec"]["nodeName"] = "bad\ud800name"
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    for out in ("table", "json"):
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "kschedcli",
                "explain",
                str(ROOT / "fixtures" / "pods" / "web.yaml"),
                "-c",
                str(snap),
                "--all-nodes",
                "-o",
                out,
            ],
            capture_output=True,
            env=env,
            timeout=120,
        )
        assert p.returncode == 0 and p.stderr == b"", p.stderr
        assert b"bad?name" in p.stdout


def test_the_same_objects_in_two_overlapping_exports_are_read_once(tmp_path):
    """`kubectl get pods -A` and `kubectl get pods -n shop` joined with -c: a node or pod listed
    twice with the same uid and resourceVersion is one object; listed in two states (another
    resourceVersion) or without a uid it is still refused."""
    docs = [d for d in yaml.safe_load_all(SMALL.read_text()) if d]
    for i, d in enumerate(docs):
        d["metadata"].update(uid=f"uid-{i}", resourceVersion=str(100 + i))
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "waiting", "namespace": "default", "uid": "uid-w", "resourceVersion": "7"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": "Pending"},
    }
    whole = tmp_path / "whole.yaml"
    whole.write_text(yaml.safe_dump_all([*docs, pending]))
    part = tmp_path / "part.yaml"
    part.write_text(yaml.safe_dump_all([d for d in docs if d["kind"] in ("Node", "Pod")][:4] + [pending]))
    web = str(ROOT / "fixtures" / "pods" / "web.yaml")

    def run(*args):
        return CliRunner().invoke(app, list(args))

    once = run("explain", web, "-c", str(whole), "-o", "json")
    twice = run("explain", web, "-c", str(whole), "-c", str(part), "-o", "json")
    assert once.exit_code == twice.exit_code == 0, twice.output
    assert json.loads(twice.stdout) == json.loads(once.stdout)
    # the snapshot's pending pod is scheduled once
    r = run("schedule", "-c", str(whole), "-c", str(part), "-o", "json")
    assert r.exit_code in (0, 1), r.output
    assert [p["pod"] for p in json.loads(r.stdout)["results"]] == ["default/waiting"]
    # another state of the same object: which one holds is not known
    bound = next(d for d in docs if d["kind"] == "Pod" and d["spec"].get("nodeName"))
    later = {**bound, "metadata": {**bound["metadata"], "resourceVersion": "999"}}
    part.write_text(yaml.safe_dump_all([later]))
    r = run("explain", web, "-c", str(whole), "-c", str(part))
    ns = bound["metadata"].get("namespace") or "default"
    assert r.exit_code == 2 and f"pod {ns}/{bound['metadata']['name']} appears twice" in r.stderr
    node = next(d for d in docs if d["kind"] == "Node")
    part.write_text(yaml.safe_dump_all([{**node, "metadata": {**node["metadata"], "resourceVersion": "999"}}]))
    r = run("explain", web, "-c", str(whole), "-c", str(part))
    assert r.exit_code == 2 and f"node {node['metadata']['name']} appears twice" in r.stderr
