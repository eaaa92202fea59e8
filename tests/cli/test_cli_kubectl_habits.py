"""Pods named as kubectl users type them (-n, -f, -f -, -A), --version, -v after the command."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = "fixtures/small-cluster.yaml"
WEB = "fixtures/pods/web.yaml"


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def run(*args: str, stdin: str | None = None):
    return CliRunner().invoke(app, list(args), input=stdin, env={"COLUMNS": "100", "NO_COLOR": "1"})


def test_filename_and_stdin_give_the_same_explanation_as_the_argument():
    plain = run("explain", WEB, "-c", SMALL)
    assert plain.exit_code == 0
    assert run("explain", "-f", WEB, "-c", SMALL).stdout == plain.stdout
    assert run("explain", "--filename", "-", "-c", SMALL, stdin=(ROOT / WEB).read_text()).stdout == plain.stdout
    assert run("preempt", "-f", WEB, "-c", SMALL).stdout == run("preempt", WEB, "-c", SMALL).stdout
    assert run("schedule", "-f", WEB, "-c", SMALL).stdout == run("schedule", WEB, "-c", SMALL).stdout


def test_a_missing_filename_is_no_such_file_even_without_a_suffix():
    r = run("explain", "-f", "no-such-pod", "-c", SMALL)
    assert r.exit_code == 2 and r.stderr.strip() == "ksched: no-such-pod: no such file"


def test_namespace_and_name_as_kubectl_takes_them():
    prod = "fixtures/prod-cluster.yaml"
    pending = [ln for ln in run("schedule", "-c", prod, "-o", "json").stdout.split('"pod": "')[1:]]
    ns, name = pending[0].split('"')[0].split("/")
    keyed = run("explain", f"{ns}/{name}", "-c", prod)
    assert keyed.exit_code in (0, 1), keyed.output
    assert run("explain", "-n", ns, name, "-c", prod).stdout == keyed.stdout
    assert run("explain", "--namespace", ns, f"{ns}/{name}", "-c", prod).stdout == keyed.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["explain", WEB, "-f", WEB], f"ksched: -f: give the pod either as POD ({WEB!r}) or with -f, not both"),
        (
            ["explain", "-n", "shop", "-f", WEB],
            "ksched: --namespace: -n names the namespace of a pod given by NAME; the pod of a -f file carries its own",
        ),
        (["explain", "-n", "ml", "shop/web"], "ksched: --namespace: 'shop/web' is in namespace 'shop', not 'ml' (-n)"),
        (["explain"], "ksched: POD: which pod? Give a file (-f FILE, '-' for stdin), NAME or NAMESPACE/NAME"),
        (["schedule", "-n", "shop", "-A"], "ksched: --namespace: -n and -A (--all-namespaces) contradict each other"),
        (
            ["schedule", WEB, "-n", "shop"],
            "ksched: --namespace: -n picks pending pods of the cluster by namespace; "
            "it does not go with a file of pods",
        ),
    ],
)
def test_contradictions_are_usage_errors(args, message):
    r = run(*args, "-c", SMALL)
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == message


def test_version_flag_and_verbose_after_the_command():
    v = run("--version")
    assert v.exit_code == 0 and v.stdout == run("version").stdout
    assert v.stdout.startswith("ksched 0.1.0 (follows kube-scheduler v1.34.1)")
    before = run("-v", "explain", WEB, "-c", SMALL)
    after = run("explain", WEB, "-c", SMALL, "-v")
    assert after.exit_code == 0
    assert "ksched: read 3 nodes, 4 bound pods" in after.stderr
    assert before.stderr == after.stderr and before.stdout == after.stdout
    assert "ksched: read" not in run("explain", WEB, "-c", SMALL).stderr


def test_schedule_by_namespace_of_the_snapshot():
    prod = "fixtures/prod-cluster.yaml"
    every = run("schedule", "-c", prod, "-o", "json")
    assert run("schedule", "-A", "-c", prod, "-o", "json").stdout == every.stdout
    pods = [seg.split('"')[0] for seg in every.stdout.split('"pod": "')[1:]]
    ns = pods[0].split("/")[0]
    only = run("schedule", "-n", ns, "-c", prod, "-o", "json")
    got = [seg.split('"')[0] for seg in only.stdout.split('"pod": "')[1:]]
    assert got and set(got) == {p for p in pods if p.startswith(ns + "/")} and len(got) < len(pods)
