"""The live source with the real kubectl (when installed) against a local HTTP server that answers
like an API server (tests/fake_apiserver.py): discovery, the lists, RBAC's 403, a slow server, a
closed port. Checks that ksched reads what kubectl reads, and that kubectl's own failure messages
become ksched's one-line errors."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from fake_apiserver import RESOURCES, FakeAPIServer
from test_live import PENDING, served_list
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = shutil.which("kubectl", path="/usr/local/bin:/usr/bin:/bin")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="needs a real kubectl")


@pytest.fixture
def env(tmp_path, monkeypatch):
    """kubectl alone on PATH (its discovery cache under a fresh HOME); returns a kubeconfig writer."""
    monkeypatch.setenv("PATH", f"{os.path.dirname(KUBECTL)}{os.pathsep}/bin")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.chdir(ROOT)

    def kubeconfig(server: str) -> str:
        path = tmp_path / "kubeconfig"
        path.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c1, cluster: {{server: "{server}"}}}}]
contexts: [{{name: fake, context: {{cluster: c1, user: u1}}}}]
current-context: fake
users: [{{name: u1, user: {{token: abc}}}}]
""")
        return str(path)

    return kubeconfig


def objects() -> list[dict]:
    return json.loads(served_list())["items"]


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100", "NO_COLOR": "1"})


def test_explain_against_the_api_server_as_against_the_snapshot(env, tmp_path):
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_bytes(served_list())
    with FakeAPIServer(objects()) as server:
        live = run("explain", "-n", "shop", PENDING.split("/")[1], "--kubeconfig", env(server.url), "-o", "json")
        assert live.exit_code == 0, live.output
        lists = [p.split("?")[0] for p in server.requests if "limit=" in p]
    assert len(lists) == len(RESOURCES) and "/apis/policy/v1/poddisruptionbudgets" in lists
    offline = run("explain", PENDING, "--cluster", str(snapshot), "-o", "json")
    assert json.loads(live.stdout) == json.loads(offline.stdout)


def test_rbac_forbidden_names_the_resource(env):
    with FakeAPIServer(objects(), forbid="pods") as server:
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url))
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, r.output
    assert r.stderr.startswith(
        "ksched: kubectl: context fake: forbidden: user 'jane' cannot list pods in every namespace"
    )


def test_a_slow_api_server_times_out(env):
    with FakeAPIServer(objects(), delay=3) as server:
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url), "--request-timeout", "1s")
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, r.output
    assert r.stderr.strip() == (
        f"ksched: kubectl: context fake: timed out waiting for the API server {server.url} (--request-timeout 1s)"
    )


def test_a_closed_port_is_connection_refused(env):
    with FakeAPIServer([]) as server:
        url = server.url
    r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(url), "--request-timeout", "5s")
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, r.output
    assert r.stderr.strip() == f"ksched: kubectl: context fake: connection refused by the API server {url[7:]}"


def test_an_older_server_without_dra_and_its_version(env):
    # kubectl stops at resource.k8s.io's first kind; ksched reads on without those kinds and follows
    # the server's release
    with FakeAPIServer(objects(), without=("resource.k8s.io",), version="v1.33.5") as server:
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url), "-o", "json", "-v")
    assert r.exit_code == 0, r.output
    assert "ksched: not read (not served by the API server): resourceclaims, resourceslices, deviceclasses" in (
        r.stderr
    )
    assert ", API server v1.33.5" in r.stderr
    doc = json.loads(r.stdout)
    assert doc["kubernetesVersion"] == "v1.33.0" and doc["kubernetesVersionChosenBy"]["source"] == "cluster"


def test_rbac_forbidding_optional_kinds_reads_the_rest(env, tmp_path):
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_bytes(served_list())
    with FakeAPIServer(objects(), forbid=("volumeattachments", "deviceclasses")) as server:
        live = run("explain", PENDING, "--kubeconfig", env(server.url), "-o", "json", "-v")
    assert live.exit_code == 0, live.output
    assert "ksched: not read (forbidden): volumeattachments, deviceclasses" in live.stderr
    warnings = [ln for ln in live.stderr.splitlines() if ln.startswith("ksched: warning: ")]
    assert len(warnings) == 2 and all("the answer ignores " in w for w in warnings)
    offline = run("explain", PENDING, "--cluster", str(snapshot), "-o", "json")
    assert json.loads(live.stdout) == json.loads(offline.stdout)
