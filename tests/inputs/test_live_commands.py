"""The live cluster for every command, the kinds read and the API server's version, through the fake
kubectl of test_live.py (a script on PATH serving fixtures/small-cluster.yaml plus a pending pod)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import test_live
from fake_apiserver import RESOURCES
from test_live import PENDING, run

from kschedcli.inputs.cluster import OTHER_KINDS
from kschedcli.inputs.live import KINDS, OPTIONAL_KINDS

ROOT = Path(__file__).resolve().parents[2]
fake = test_live.fake  # the fixture, found by name here too

WEB = "fixtures/pods/web.yaml"
CONFIG = "fixtures/config/most-allocated.yaml"


def _kind_of(name: str) -> str:
    """The Kind kubectl lists for a name as ksched passes it (plural, short name, plural.group)."""
    plural = name.split(".", 1)[0]
    for _group, _version, p, kind, _namespaced, short in RESOURCES:
        if plural == p or plural in short:
            return kind
    raise AssertionError(f"{name}: not a resource of tests/fake_apiserver.py")


def test_every_kind_the_loader_reads_is_read_from_the_live_cluster():
    read = [_kind_of(k) for k in KINDS + OPTIONAL_KINDS]
    assert len(read) == len(set(read))
    assert set(read) == OTHER_KINDS | {"Node", "Pod"}


def test_the_readme_lists_the_optional_kinds_after_the_required_ones():
    # README's commands work on every supported release: the optional kinds group-qualified after the
    # required ones, DRA's asked for at v1 in a command of its own, run only where the server has it
    readme = (ROOT / "README.md").read_text()
    [first] = re.findall(r"kubectl get (nodes,[a-z0-9.,]+) -A -o yaml", readme)
    [dra] = re.findall(r"grep -qx resource.k8s.io/v1; then\n.*\n\s*kubectl get ([a-z0-9.,]+) -A -o yaml", readme)
    optional = tuple(first.split(","))[-6:] + tuple(dra.split(","))
    assert optional == OPTIONAL_KINDS


def as_json(r) -> dict:
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def test_the_api_server_version_chooses_the_release(fake, monkeypatch):
    monkeypatch.setenv("FAKE_KUBECTL_SERVER_VERSION", "v1.33.7-eks-4f4795d")
    doc = as_json(run("explain", WEB, "-o", "json"))
    assert doc["kubernetesVersion"] == "v1.33.0"
    assert doc["kubernetesVersionChosenBy"] == {
        "source": "cluster",
        "reason": "the cluster's API server is v1.33.7-eks-4f4795d",
    }
    flag = as_json(run("explain", WEB, "-o", "json", "--kubernetes-version", "v1.35"))
    assert flag["kubernetesVersion"] == "v1.35.7" and flag["kubernetesVersionChosenBy"]["source"] == "flag"


def test_without_a_server_version_the_nodes_choose_and_verbose_says_so(fake):
    r = run("explain", WEB, "-o", "json", "-v")
    assert json.loads(r.stdout)["kubernetesVersionChosenBy"]["source"] != "cluster"
    assert "with kubectl, API server version unknown" in r.stderr


def test_types_the_server_does_not_serve_are_skipped_and_named(fake, monkeypatch):
    monkeypatch.setenv("FAKE_KUBECTL_NOT_SERVED", "resourceclaims,resourceslices,deviceclasses")
    monkeypatch.setenv("FAKE_KUBECTL_SERVER_VERSION", "v1.33.1")
    r = run("explain", WEB, "-v")
    assert r.exit_code == 0, r.output
    assert "ksched: not read (not served by the API server): resourceclaims, resourceslices, deviceclasses" in (
        r.stderr
    )
    gets = [g[1].split(",") for g in fake.gets()]
    # kubectl stops at the first unknown type; resource.k8s.io's kinds are served together, so one more try
    assert len(gets) == 2
    assert gets[0] == list(KINDS + OPTIONAL_KINDS)
    assert gets[-1] == list(KINDS) + [k for k in OPTIONAL_KINDS if not k.endswith(".resource.k8s.io")]


def test_a_required_type_the_server_does_not_serve_is_an_error(fake, monkeypatch):
    monkeypatch.setenv("FAKE_KUBECTL_NOT_SERVED", "csinodes")
    r = run("explain", WEB)
    assert r.exit_code == 2 and r.stderr.splitlines() == [
        'ksched: kubectl: context kind-small: the server doesn\'t have a resource type "csinodes"'
    ]


def test_optional_kinds_the_user_may_not_list_are_skipped_and_named(fake, monkeypatch):
    monkeypatch.setenv("FAKE_KUBECTL_FORBID", "volumeattachments,resourceslices")
    r = run("explain", WEB, "-v")
    assert r.exit_code == 0, r.output
    assert "ksched: not read (forbidden): volumeattachments, resourceslices" in r.stderr
    assert len(fake.gets()) == 1
    offline = run("explain", WEB, "--cluster", str(fake.served))
    assert r.stdout == offline.stdout


def test_a_required_kind_forbidden_beside_optional_ones_is_an_error(fake, monkeypatch):
    monkeypatch.setenv("FAKE_KUBECTL_FORBID", "volumeattachments,pods")
    r = run("explain", WEB)
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith("ksched: kubectl: context kind-small: forbidden: user 'jane' cannot list pods")


def _same_live_and_offline(fake, *args: str) -> None:
    live = run(*args)
    offline = run(*args, "--cluster", str(fake.served))
    assert live.exit_code == offline.exit_code and live.exit_code in (0, 1), live.output
    assert live.stdout == offline.stdout and live.stdout
    assert len(fake.gets()) == 1  # the live run read the cluster once; the offline one not at all


def test_drain_reads_the_live_cluster(fake):
    _same_live_and_offline(fake, "drain", "node-a")


def test_diff_reads_the_live_cluster_for_both_worlds(fake):
    live = run("diff", WEB, "--against-config", CONFIG, "-o", "json")
    assert live.exit_code in (0, 1), live.output
    doc = json.loads(live.stdout)
    text = json.dumps(doc)
    assert "kubectl (context kind-small) --config (defaults)" in text and "ksched-live-" not in text
    assert len(fake.gets()) == 1
    offline = run("diff", WEB, "--against-config", CONFIG, "-o", "json", "--cluster", str(fake.served))
    assert json.loads(offline.stdout)["diff"]["changes"] == doc["diff"]["changes"]


def test_capacity_reads_the_live_cluster(fake):
    _same_live_and_offline(fake, "capacity", WEB, "--max", "3")


def test_capacity_with_save_snapshot(fake, tmp_path):
    saved = tmp_path / "s.json"
    r = run("capacity", WEB, "--max", "2", "--save-snapshot", str(saved), "-o", "json")
    assert r.exit_code == 0, r.output
    assert saved.read_bytes() == fake.served.read_bytes()


def _scenario(tmp_path: Path, cluster: str | None) -> str:
    path = tmp_path / "scenario.yaml"
    lines = ["apiVersion: ksched.io/v1alpha1", "kind: Scenario", "metadata: {name: live}"]
    if cluster:
        lines.append(f"cluster: [{cluster}]")
    lines += ["edits:", "- cordon: node-a", "pods:", f"- {ROOT / WEB}"]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_run_reads_the_live_cluster_when_the_scenario_names_no_snapshot(fake, tmp_path):
    live = run("run", _scenario(tmp_path, None), "-o", "json")
    assert live.exit_code in (0, 1), live.output
    assert len(fake.gets()) == 1
    offline = run("run", _scenario(tmp_path, str(fake.served)), "-o", "json")
    assert json.loads(live.stdout) == json.loads(offline.stdout)
    assert len(fake.gets()) == 1


def test_run_cluster_and_context_replace_the_scenarios_snapshot(fake, tmp_path):
    scenario = _scenario(tmp_path, "does-not-exist.yaml")
    by_file = run("run", scenario, "--cluster", str(fake.served), "-o", "json")
    assert by_file.exit_code in (0, 1), by_file.output
    assert fake.gets() == []
    live = run("run", scenario, "--context", "prod", "-o", "json")
    assert json.loads(live.stdout) == json.loads(by_file.stdout)
    [get] = fake.gets()
    assert get[-2:] == ["--context", "prod"]
    both = run("run", scenario, "--cluster", str(fake.served), "--context", "prod")
    assert both.exit_code == 2 and both.stderr.strip() == (
        "ksched: --context: --context reads the live cluster: it does not go with --cluster"
    )


def test_commands_without_cluster_fail_as_one_line_when_kubectl_cannot_read(fake, monkeypatch):
    fake.mode("refused")
    for args in (("drain", "node-a"), ("capacity", WEB), ("diff", WEB, "--against-config", CONFIG)):
        r = run(*args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.splitlines() == [
            "ksched: kubectl: context kind-small: connection refused by the API server 10.0.0.1:6443"
        ], args


def test_pending_pod_by_name_follows_the_server_version(fake, monkeypatch):
    monkeypatch.setenv("FAKE_KUBECTL_SERVER_VERSION", "v1.36.0")
    doc = as_json(run("explain", PENDING, "-o", "json"))
    assert doc["kubernetesVersion"] == "v1.36.2" and doc["pod"] == PENDING
