"""The live source with the real kubectl against tests/fake_apiserver.py, where it can hurt: credentials
in a kubeconfig or in what kubectl and its credential plugin print (never shown), an exec plugin that
fails or hangs (one line; the plugin's process gone afterwards, on a timeout and on an interrupt), a
`continue` token that never ends (bounded), RBAC forbidding a kind ksched can do without (a warning),
an answer kubectl cannot read (the list named), a --kubeconfig that is not there, a v1.33 server."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_apiserver import FakeAPIServer
from test_live import PENDING, served_list
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.inputs import live
from kschedcli.inputs.live import KINDS, OPTIONAL_KINDS, redact

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = shutil.which("kubectl", path="/usr/local/bin:/usr/bin:/bin")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="needs a real kubectl")


def objects() -> list[dict]:
    return json.loads(served_list())["items"]


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100", "NO_COLOR": "1"})


def one_line(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.stderr
    return lines[0]


@pytest.fixture
def env(tmp_path, monkeypatch):
    """kubectl alone on PATH (its discovery cache under a fresh HOME); returns a kubeconfig writer."""
    monkeypatch.setenv("PATH", f"{os.path.dirname(KUBECTL or '/usr/bin/kubectl')}{os.pathsep}/bin")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.chdir(ROOT)

    def kubeconfig(server: str, user: str = "{token: abc}") -> str:
        path = tmp_path / "kubeconfig"
        tls = ", insecure-skip-tls-verify: true" if server.startswith("https") else ""
        path.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c1, cluster: {{server: "{server}"{tls}}}}}]
contexts: [{{name: fake, context: {{cluster: c1, user: u1}}}}]
current-context: fake
users: [{{name: u1, user: {user}}}]
""")
        return str(path)

    return kubeconfig


def plugin(tmp_path: Path, body: str) -> str:
    """An exec credential plugin: a shell script that first notes its pid (and its children's)."""
    script = tmp_path / "plugin.sh"
    script.write_text(f"#!/bin/sh\necho $$ >> {tmp_path}/pids\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def exec_user(command: str) -> str:
    return f"{{exec: {{apiVersion: client.authentication.k8s.io/v1, command: {command}, interactiveMode: Never}}}}"


def gone(pid: int) -> bool:
    """The process has ended (a zombie waiting for init to reap it counts as ended)."""
    for _ in range(100):  # SIGKILL is delivered when the process next runs: give it that chance
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def pids(tmp_path: Path) -> list[int]:
    f = tmp_path / "pids"
    return [int(x) for x in f.read_text().split()] if f.exists() else []


# --- credentials ----------------------------------------------------------------------------------


def test_redact_masks_what_kubectl_masks():
    assert redact("https://bob:hunter2@10.0.0.1:6443/api") == "https://10.0.0.1:6443/api"
    assert redact('Get "https://bob:***@h:6443/api?timeout=32s": EOF') == 'Get "https://h:6443/api?timeout=32s": EOF'
    assert redact("Authorization: Bearer eyJhbGciOi.x.y") == "Authorization: Bearer REDACTED"
    assert redact("x bearer eyJhbGciOi.x.y; invalid bearer token") == "x bearer REDACTED; invalid bearer token"
    assert redact('"Authorization"="Basic Ym9iOmh1bnRlcjI="') == '"Authorization"="Basic REDACTED"'
    assert redact("token: sk-live-123 and password=hunter2&x=1") == "token: REDACTED and password=REDACTED&x=1"
    assert redact("key -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- end") == "key REDACTED end"
    assert redact('nodes is forbidden: User "jane" cannot list') == 'nodes is forbidden: User "jane" cannot list'


@needs_kubectl
def test_a_server_url_with_a_password_is_printed_without_it(env):
    with FakeAPIServer(objects()) as server:
        url = server.url.replace("http://", "http://bob:hunter2@")
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(url), "-v")
    assert r.exit_code == 0, r.output
    assert f"ksched: read the cluster of context fake ({server.url}) with kubectl" in r.stderr
    assert "hunter2" not in r.output and "bob" not in r.output


@needs_kubectl
@pytest.mark.parametrize("password", ["SUPER/SECRETPW11", "SUPERSECRET PW2", 'SUPER"SECRETPW12', "SUPER@SEC:RET"])
def test_a_server_url_kubectl_cannot_parse_is_printed_without_its_password(tmp_path, env, password):
    # a password holding /, a space, a quote or an @: the real kubectl refuses the URL with it in its
    # message (`host must be a URL or a host:port pair: "https://bob:...@127.0.0.1:1"`, Go-quoted)
    env("http://unused")  # kubectl alone on PATH
    kubeconfig = tmp_path / "kubeconfig-secret"
    server = json.dumps(f"https://bob:{password}@127.0.0.1:1")  # a JSON string is YAML
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: {server}}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
users: [{{name: u, user: {{token: abc}}}}]
""")
    r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", str(kubeconfig), "--request-timeout", "3s")
    line = one_line(r)
    assert line.startswith("ksched: kubectl: context x: ") and "127.0.0.1:1" in line, line
    assert "SUPER" not in r.output and "SEC" not in r.output and "PW" not in r.output and "bob" not in r.output


@needs_kubectl
def test_a_server_url_with_a_password_is_not_in_a_timeout(env):
    with FakeAPIServer(objects(), delay=3) as server:
        url = server.url.replace("http://", "http://bob:hunter2@")
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(url), "--request-timeout", "1s")
    assert one_line(r) == (
        f"ksched: kubectl: context fake: timed out waiting for the API server {server.url} (--request-timeout 1s)"
    )


@needs_kubectl
def test_a_failing_exec_plugin_is_told_by_command_and_exit_status_only(env, tmp_path):
    # no newline at the end: kubectl's own message then continues the plugin's last line
    command = plugin(
        tmp_path, "printf 'error: token sk-live-SECRET expired; Authorization: Bearer abc.def.ghi' >&2\nexit 3"
    )
    with FakeAPIServer(objects(), tls=True) as server:
        # a first read with a token leaves kubectl's discovery cache: the plugin then runs once, for the
        # first list, and kubectl's error follows what it printed
        assert run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url)).exit_code == 0
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url, exec_user(command)))
    err = one_line(r)
    assert (
        err == f"ksched: kubectl: context fake: getting credentials: exec: executable {command} failed with exit code 3"
    )
    assert "SECRET" not in r.output and "abc.def" not in r.output


# --- a credential plugin that hangs -----------------------------------------------------------------


@needs_kubectl
def test_a_hanging_exec_plugin_is_stopped_with_kubectl(env, tmp_path):
    command = plugin(tmp_path, f"sleep 300 &\necho $! >> {tmp_path}/pids\nwait")
    with FakeAPIServer(objects(), tls=True) as server:
        r = run(
            "explain",
            "fixtures/pods/web.yaml",
            "--kubeconfig",
            env(server.url, exec_user(command)),
            "--request-timeout",
            "1s",
        )
    # kubectl runs the plugin for its first request; a kubectl that is a version dispatcher (gcloud's)
    # asks the server's version, with the plugin, already for `kubectl config view`
    assert one_line(r) in (
        f"ksched: kubectl: context fake: the kubeconfig's credential plugin {command} did not finish in 6 s "
        "(--request-timeout 1s, plus 5 s): stopped it and kubectl",
        "ksched: kubectl: `kubectl config view` did nothing for 6 s (--request-timeout 1s, plus 5 s) while it "
        "waited for plugin.sh, sleep: stopped them",
    )
    started = pids(tmp_path)
    assert len(started) >= 2  # the plugin and its sleep (and those of `kubectl version`, run beside)
    assert all(gone(pid) for pid in started), started


@needs_kubectl
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_stops_kubectl_and_its_plugin(env, tmp_path, sig):
    command = plugin(tmp_path, f"sleep 300 &\necho $! >> {tmp_path}/pids\nwait")
    with FakeAPIServer(objects(), tls=True) as server:
        kubeconfig = env(server.url, exec_user(command))
        proc = subprocess.Popen(
            [sys.executable, "-m", "kschedcli", "explain", "fixtures/pods/web.yaml", "--kubeconfig", kubeconfig],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )
        try:
            for _ in range(1200):  # until a plugin and its sleep run
                if len(pids(tmp_path)) >= 2:
                    break
                time.sleep(0.05)
            started = pids(tmp_path)
            assert len(started) >= 2, started
            proc.send_signal(sig)
            proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode != 0
    assert all(gone(pid) for pid in started), started


# --- bounded lists ----------------------------------------------------------------------------------


@needs_kubectl
def test_a_continue_token_that_never_ends_stops_at_the_page_bound(env, monkeypatch):
    monkeypatch.setattr(live, "MAX_PAGES", 20)
    with FakeAPIServer(objects(), endless="Pod") as server:
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url))
        pages = [p for p in server.requests if p.startswith("/api/v1/pods?")]
    assert one_line(r) == (
        "ksched: kubectl: context fake: the list of pods did not end after 20 pages of 500 (the API server's "
        "`continue` token never ends?): stopped kubectl; ksched reads at most 10,000 objects of a kind"
    )
    assert 20 < len(pages) < 200  # kubectl was stopped soon after


@needs_kubectl
def test_a_continue_token_that_never_ends_stops_at_the_total_bound(env, monkeypatch):
    monkeypatch.setattr(live, "MAX_TOTAL_PAGES", 30)
    with FakeAPIServer(objects(), endless="Pod") as server:
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url))
    assert one_line(r) == (
        "ksched: kubectl: context fake: the lists did not end after 30 pages of 500 in all: stopped kubectl; "
        "ksched reads at most 15,000 objects"
    )


# --- RBAC, unreadable answers, the kubeconfig, older servers ------------------------------------------


@needs_kubectl
def test_forbidden_pdbs_warn_and_the_answer_goes_on(env, tmp_path):
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_bytes(served_list())
    with FakeAPIServer(objects(), forbid=("poddisruptionbudgets", "csinodes")) as server:
        r = run("explain", PENDING, "--kubeconfig", env(server.url), "-o", "json")
    assert r.exit_code == 0, r.output
    assert sorted(r.stderr.splitlines()) == [
        "ksched: warning: kubectl: context fake: forbidden: user 'jane' cannot list csinodes.storage.k8s.io; "
        "the answer ignores CSINodes (NodeVolumeLimits sees no per-node CSI limit)",
        "ksched: warning: kubectl: context fake: forbidden: user 'jane' cannot list poddisruptionbudgets.policy; "
        "the answer ignores PodDisruptionBudgets (preemption and drain see no budget to respect)",
    ]
    offline = run("explain", PENDING, "--cluster", str(snapshot), "-o", "json")
    assert json.loads(r.stdout) == json.loads(offline.stdout)


@needs_kubectl
@pytest.mark.parametrize("resource", ["nodes", "pods"])
def test_forbidden_nodes_or_pods_is_one_line(env, resource):
    with FakeAPIServer(objects(), forbid=resource) as server:
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url))
    assert one_line(r) == (
        f"ksched: kubectl: context fake: forbidden: user 'jane' cannot list {resource} in every namespace; "
        "ksched needs nodes and pods (or give a snapshot with --cluster FILE)"
    )


@needs_kubectl
def test_an_unreadable_answer_names_its_list(env):
    with FakeAPIServer(objects(), garbage="PodDisruptionBudget") as server:
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url))
    assert one_line(r) == (
        "ksched: kubectl: context fake: the API server's list of poddisruptionbudgets.policy: "
        "unexpected end of JSON input"
    )


@needs_kubectl
def test_a_missing_kubeconfig_is_named(env, tmp_path):
    missing = tmp_path / "no-such-kubeconfig"
    r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", str(missing))
    assert one_line(r) == f"ksched: {missing}: --kubeconfig: no such file"


@needs_kubectl
def test_a_v133_server_with_dra_beta_is_read_without_dra(env):
    # resource.k8s.io served at v1beta1 only (v1.33 with DRA on): its objects have another shape, and
    # ksched asks for v1 by name, so kubectl finds no such type and ksched goes on without them
    with FakeAPIServer(objects(), dra_version="v1beta1", version="v1.33.5") as server:
        r = run("explain", "fixtures/pods/web.yaml", "--kubeconfig", env(server.url), "-o", "json", "-v")
        lists = [p for p in server.requests if "limit=" in p]
    assert r.exit_code == 0, r.output
    assert "ksched: not read (not served by the API server): resourceclaims, resourceslices, deviceclasses" in (
        r.stderr
    )
    assert not any("resource.k8s.io" in p for p in lists)


# --- the snapshot commands of docs/snapshots.md ------------------------------------------------------


def _docs_commands() -> str:
    text = (ROOT / "docs/snapshots.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```sh\n")[1:]]
    [block] = [b for b in blocks if b.startswith("{")]
    return block


def test_the_docs_snapshot_commands_read_what_the_live_source_reads():
    kinds = re.findall(r"kubectl get (\S+) -A -o yaml", _docs_commands())
    assert [k.split(",") for k in kinds] == [list(KINDS + OPTIONAL_KINDS[:-3]), list(OPTIONAL_KINDS[-3:])]
    assert all(k.endswith(".v1.resource.k8s.io") for k in OPTIONAL_KINDS[-3:])


@needs_kubectl
@pytest.mark.parametrize(
    "version, without, dra",
    [("v1.33.5", ("resource.k8s.io",), "v1"), ("v1.33.5", (), "v1beta1"), ("v1.34.1", (), "v1"), ("v1.36.0", (), "v1")],
)
def test_the_docs_snapshot_commands_work_on_every_supported_release(env, tmp_path, version, without, dra):
    script = _docs_commands().replace("ksched explain pod.yaml --cluster snapshot.yaml\n", "")
    with FakeAPIServer(objects(), without=without, dra_version=dra, version=version) as server:
        kubeconfig = env(server.url)
        r = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            env={**os.environ, "KUBECONFIG": kubeconfig},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        live = run("explain", PENDING, "--kubeconfig", kubeconfig, "-o", "json", "--kubernetes-version", "v1.34.1")
    snapshot = str(tmp_path / "snapshot.yaml")
    offline = run("explain", PENDING, "--cluster", snapshot, "-o", "json", "--kubernetes-version", "v1.34.1")
    assert live.exit_code == offline.exit_code == 0, (live.output, offline.output)
    assert json.loads(live.stdout) == json.loads(offline.stdout)
    asked_dra = "resourceclaims" in (tmp_path / "snapshot.yaml").read_text() or any(
        "/apis/resource.k8s.io/v1/" in p for p in server.requests
    )
    assert asked_dra == (dra == "v1" and not without)
