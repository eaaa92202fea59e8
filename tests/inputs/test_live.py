"""The live cluster (no --cluster): ksched runs the user's kubectl. Here a fake `kubectl` on PATH,
written by the test, answers as kubectl does: `config view --minify -o json` with the context, and
`get ... -o json` with a List built from fixtures/small-cluster.yaml plus a pending pod, or each of
kubectl's failures. It records the arguments it received."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.errors import SOURCE_LABELS, InputError
from kschedcli.inputs.live import KINDS, OPTIONAL_KINDS, parse_duration

ROOT = Path(__file__).resolve().parents[2]
PENDING = "shop/web-7d9f8b6c5d-m8n7b"  # fixtures/pods/web.yaml, served as a pending pod

FAKE_KUBECTL = r'''#!{python}
"""A fake kubectl for ksched's tests: FAKE_KUBECTL_MODE says how it answers; FAKE_KUBECTL_SERVER_VERSION
is the API server's version (none: `kubectl version` fails); FAKE_KUBECTL_NOT_SERVED names resource
types the server does not have, FAKE_KUBECTL_FORBID resources the user may not list."""
import json, os, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_KUBECTL_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
mode = os.environ.get("FAKE_KUBECTL_MODE", "ok")
def flag(name, default=None):
    return args[args.index(name) + 1] if name in args else default
context = flag("--context", "kind-small")
if args[:2] == ["config", "view"]:
    if mode == "no-config":
        sys.stderr.write("error: current-context must exist in order to minify\n"); sys.exit(1)
    if context not in ("kind-small", "prod"):
        sys.stderr.write("error: cannot locate context " + context + "\n"); sys.exit(1)
    json.dump({{"kind": "Config", "apiVersion": "v1", "current-context": context,
               "contexts": [{{"name": context, "context": {{"cluster": "c1", "user": "u1", "namespace": "shop"}}}}],
               "clusters": [{{"name": "c1", "cluster": {{"server": "https://10.0.0.1:6443"}}}}]}}, sys.stdout)
    sys.exit(0)
if args[0] == "version":
    server = os.environ["FAKE_KUBECTL_SERVER_VERSION"]
    client = {{"major": "1", "minor": "34", "gitVersion": "v1.34.1"}}
    if server == "none":
        json.dump({{"clientVersion": client}}, sys.stdout)
        sys.stderr.write("error: You must be logged in to the server (the server has asked for credentials)\n")
        sys.exit(1)
    server_info = {{"gitVersion": server, "platform": "linux/amd64"}}
    json.dump({{"clientVersion": client, "serverVersion": server_info}}, sys.stdout)
    sys.exit(0)
assert args[0] == "get", args
for kind in args[1].split(","):
    if kind.split(".")[0] in os.environ.get("FAKE_KUBECTL_NOT_SERVED", "").split(","):
        sys.stderr.write('error: the server doesn\'t have a resource type "' + kind.split(".")[0] + '"\n')
        sys.exit(1)
forbid = [k for k in args[1].split(",") if k.split(".")[0] in os.environ.get("FAKE_KUBECTL_FORBID", "").split(",")]
klog = ('E1124 05:13:59.830326    6665 memcache.go:265] "Unhandled Error" '
        'err="couldn\'t get current server API group list"\n')
if mode == "forbidden":
    sys.stdout.write('{{"apiVersion": "v1", "items": [], "kind": "List"}}\n')
    sys.stderr.write('Error from server (Forbidden): pods is forbidden: User "jane" cannot '
                     'list resource "pods" in API group "" at the cluster scope\n'); sys.exit(1)
if mode == "refused":
    sys.stderr.write(klog * 3 + "The connection to the server 10.0.0.1:6443 was refused - "
                     "did you specify the right host or port?\n")
    sys.exit(1)
if mode == "timeout":
    sys.stderr.write(klog + "Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded "
                     "while awaiting headers)\n"); sys.exit(1)
if mode == "leaky":                      # kubectl's -v=8 trace and an error with credentials in it
    sys.stderr.write('I1124 05:13:59.830326    6665 round_trippers.go:473]     Authorization: Bearer sk-trace-1\n'
                     'error: Get "https://bob:hunter2@10.0.0.1:6443/api": Authorization: Bearer sk-live-2 refused, '
                     'token=sk-query-3\n')
    sys.exit(1)
if mode == "says":                       # kubectl's last words: FAKE_KUBECTL_SAYS, as given
    sys.stderr.write(os.environ["FAKE_KUBECTL_SAYS"]); sys.exit(1)
if mode == "hang":
    time.sleep(600)
with open(os.environ["FAKE_KUBECTL_SERVE"], "rb") as f:
    data = f.read()
if mode == "garbage":
    data = data[: len(data) // 2]
out = sys.stdout.buffer
for i in range(0, len(data), 1000):      # in pieces, as a pipe delivers them
    out.write(data[i:i + 1000]); out.flush()
for kind in forbid:                      # kubectl prints what it could read, then the errors
    plural, _, group = kind.partition(".")
    if group.startswith("v1."):          # resource.version.group: the group is the rest
        group = group[3:]
        kind = plural + "." + group
    sys.stderr.write("Error from server (Forbidden): " + kind + ' is forbidden: User "jane" cannot list resource "'
                     + plural + '" in API group "' + group + '" at the cluster scope\n')
sys.exit(1 if forbid else 0)
'''


def served_list() -> bytes:
    """What the fake API server holds: the small cluster and one pending pod, as `kubectl get -o json`
    prints a List."""
    objs = [d for d in yaml.safe_load_all((ROOT / "fixtures/small-cluster.yaml").read_text()) if d]
    objs.append(yaml.safe_load((ROOT / "fixtures/pods/web.yaml").read_text()))
    doc = {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}
    return (json.dumps(doc, indent=4) + "\n").encode()


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fake kubectl first on PATH; returns a helper to read the calls it received."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "kubectl"
    script.write_text(FAKE_KUBECTL.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    serve = tmp_path / "served.json"
    serve.write_bytes(served_list())
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_KUBECTL_LOG", str(log))
    monkeypatch.setenv("FAKE_KUBECTL_SERVE", str(serve))
    monkeypatch.setenv("FAKE_KUBECTL_MODE", "ok")
    # no server version unless a test gives one: the release then comes from the nodes, as for the
    # snapshot file the live runs here are compared with
    monkeypatch.setenv("FAKE_KUBECTL_SERVER_VERSION", "none")
    monkeypatch.chdir(ROOT)

    class Fake:
        served = serve
        bin = bindir

        @staticmethod
        def calls() -> list[list[str]]:
            return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

        @staticmethod
        def gets() -> list[list[str]]:
            """The `kubectl get` calls (`kubectl version` runs beside them, in no fixed order)."""
            return [c for c in Fake.calls() if c[0] == "get"]

        @staticmethod
        def mode(m: str) -> None:
            monkeypatch.setenv("FAKE_KUBECTL_MODE", m)

    return Fake


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100", "NO_COLOR": "1"})


def one_line_error(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.output
    return lines[0]


def test_explain_reads_the_current_context_with_the_readme_kinds(fake):
    live = run("explain", "fixtures/pods/web.yaml")
    offline = run("explain", "fixtures/pods/web.yaml", "--cluster", str(fake.served))
    assert live.exit_code == 0, live.output
    assert live.stdout == offline.stdout and "node-b" in live.stdout
    config, *others = fake.calls()
    assert config == ["config", "view", "--minify", "-o", "json"]
    assert sorted(others) == [
        ["get", ",".join(KINDS + OPTIONAL_KINDS), "--all-namespaces", "-o", "json", "--request-timeout=30s"]
        + ["--chunk-size=500", "-v=6"],
        ["version", "-o", "json", "--request-timeout=30s"],
    ]


def test_context_kubeconfig_and_request_timeout_reach_kubectl(fake, tmp_path):
    kc = tmp_path / "kc.yaml"
    kc.write_text("")
    r = run(
        "explain", "fixtures/pods/web.yaml", "--context", "prod", "--kubeconfig", str(kc), "--request-timeout", "5s"
    )
    assert r.exit_code == 0, r.output
    config = fake.calls()[0]
    [get] = fake.gets()
    [version] = [c for c in fake.calls() if c[0] == "version"]
    assert config[-4:] == ["--kubeconfig", str(kc), "--context", "prod"]
    assert get[-7:] == ["--request-timeout=5s", "--chunk-size=500", "-v=6"] + [
        "--kubeconfig",
        str(kc),
        "--context",
        "prod",
    ]
    assert version[-5:] == ["--request-timeout=5s", "--kubeconfig", str(kc), "--context", "prod"]
    assert get[1].split(",") == list(KINDS + OPTIONAL_KINDS)


def test_a_pending_pod_by_name_as_against_a_snapshot(fake):
    by_key = run("explain", PENDING)
    assert by_key.exit_code == 0, by_key.output
    assert by_key.stdout == run("explain", PENDING, "-c", str(fake.served)).stdout
    by_ns = run("explain", "-n", "shop", "web-7d9f8b6c5d-m8n7b")
    bare = run("explain", "web-7d9f8b6c5d-m8n7b")
    assert by_ns.stdout == bare.stdout == by_key.stdout
    preempt = run("preempt", "-n", "shop", "web-7d9f8b6c5d-m8n7b")
    assert preempt.exit_code == 0 and PENDING in preempt.stdout
    missing = run("explain", "-n", "ml", "web-7d9f8b6c5d-m8n7b")
    assert "no pending pod named 'ml/web-7d9f8b6c5d-m8n7b'" in one_line_error(missing)


def test_schedule_takes_the_pending_pods_of_the_live_cluster(fake):
    r = run("schedule", "-o", "json")
    assert r.exit_code == 0, r.output
    assert [x["pod"] for x in json.loads(r.stdout)["results"]] == [PENDING]
    assert run("schedule", "-A", "-o", "json").stdout == r.stdout
    assert run("schedule", "-n", "shop", "-o", "json").stdout == r.stdout
    err = one_line_error(run("schedule", "-n", "ml"))
    assert err == "ksched: PODS: no PODS file given and no pending pod in namespace ml of the snapshot"


def test_save_snapshot_keeps_the_bytes_as_received(fake, tmp_path):
    saved = tmp_path / "saved.json"
    live = run("explain", PENDING, "--save-snapshot", str(saved), "-o", "json")
    assert live.exit_code == 0, live.output
    assert saved.read_bytes() == fake.served.read_bytes()
    later = run("explain", PENDING, "--cluster", str(saved), "-o", "json")
    assert later.stdout == live.stdout
    assert len(fake.calls()) == 3  # config view, get, version: the offline run asked kubectl nothing
    err = one_line_error(run("explain", PENDING, "--cluster", str(saved), "--save-snapshot", str(saved)))
    assert err == "ksched: --save-snapshot: --save-snapshot reads the live cluster: it does not go with --cluster"


def test_save_snapshot_never_writes_over_an_input_or_a_file_a_failed_read_would_lose(fake, tmp_path, monkeypatch):
    """--save-snapshot onto the pod file, the --kubeconfig file or the $KUBECONFIG file is refused
    before kubectl runs, each left as it was; a read that fails leaves an earlier snapshot in place
    and no partial file beside it; a good read replaces it, readable by its owner alone."""
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_bytes((ROOT / "fixtures/pods/web.yaml").read_bytes())
    kc = tmp_path / "kc.yaml"
    kc.write_text("")
    before = pod_file.read_bytes()
    err = one_line_error(run("explain", str(pod_file), "--save-snapshot", str(pod_file)))
    refused = "--save-snapshot: is also an input of this command: the snapshot would replace it"
    assert err == f"ksched: {pod_file}: {refused}"
    err = one_line_error(run("explain", PENDING, "--kubeconfig", str(kc), "--save-snapshot", str(kc)))
    assert err == f"ksched: {kc}: {refused}"
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'other'}{os.pathsep}{kc}")
    err = one_line_error(run("explain", PENDING, "--save-snapshot", str(kc)))
    assert err == f"ksched: {kc}: {refused}"
    monkeypatch.delenv("KUBECONFIG")
    assert pod_file.read_bytes() == before and kc.read_text() == ""
    assert not fake.gets()  # kubectl never asked
    saved = tmp_path / "saved.json"
    saved.write_text("an earlier snapshot")
    fake.mode("refused")
    err = one_line_error(run("explain", PENDING, "--save-snapshot", str(saved)))
    assert "connection refused" in err
    assert saved.read_text() == "an earlier snapshot"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".ksched")) == []
    fake.mode("ok")
    r = run("explain", PENDING, "--save-snapshot", str(saved), "-o", "json")
    assert r.exit_code == 0, r.output
    assert saved.read_bytes() == fake.served.read_bytes()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".ksched")) == []


def test_verbose_after_the_subcommand_names_the_context(fake):
    r = run("explain", "fixtures/pods/web.yaml", "-v")
    assert r.exit_code == 0
    assert "ksched: read the cluster of context kind-small (https://10.0.0.1:6443) with kubectl" in r.stderr
    assert "ksched: read 3 nodes, 4 bound pods" in r.stderr


@pytest.mark.parametrize(
    "mode, expected",
    [
        (
            "no-config",
            "ksched: kubectl: no current context in ~/.kube/config: name one with --context, or give a "
            "snapshot with --cluster FILE",
        ),
        (
            "forbidden",
            "ksched: kubectl: context kind-small: forbidden: user 'jane' cannot list pods in every namespace; "
            "ksched needs nodes and pods (or give a snapshot with --cluster FILE)",
        ),
        ("refused", "ksched: kubectl: context kind-small: connection refused by the API server 10.0.0.1:6443"),
        (
            "timeout",
            "ksched: kubectl: context kind-small: timed out waiting for the API server https://10.0.0.1:6443 "
            "(--request-timeout 30s)",
        ),
        ("garbage", None),
    ],
)
def test_kubectl_failures_are_one_line_and_exit_2(fake, monkeypatch, mode, expected):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    fake.mode(mode)
    err = one_line_error(run("explain", "fixtures/pods/web.yaml"))
    if expected is not None:
        assert err == expected
    else:  # what kubectl printed does not parse: the error names the live source, not a temporary file
        assert err.startswith("ksched: kubectl (context kind-small): "), err
        assert "ksched-live-" not in err


def test_credentials_in_what_kubectl_said_are_not_printed(fake):
    fake.mode("leaky")
    err = one_line_error(run("explain", "fixtures/pods/web.yaml"))
    assert err == (
        'ksched: kubectl: context kind-small: Get "https://10.0.0.1:6443/api": Authorization: Bearer REDACTED '
        "refused, token=REDACTED"
    )


@pytest.mark.parametrize(
    "said, shown",
    [
        # client-go's words for a server URL it cannot parse, a password holding /, a space or "
        (
            'error: host must be a URL or a host:port pair: "https://bob:SUPER/SECRETPW11@127.0.0.1:1"\n',
            'host must be a URL or a host:port pair: "https://127.0.0.1:1"',
        ),
        (
            'error: host must be a URL or a host:port pair: "https://bob:SUPERSECRET PW2@127.0.0.1:1"\n',
            'host must be a URL or a host:port pair: "https://127.0.0.1:1"',
        ),
        (
            'error: host must be a URL or a host:port pair: "https://bob:SUPER\\"SECRETPW12@127.0.0.1:1"\n',
            'host must be a URL or a host:port pair: "https://127.0.0.1:1"',
        ),
        # an @ and a : in the password, and a second URL on the line
        (
            'Unable to connect to the server: Get "https://bob:SUPER@SECRET:PW@h:6443/api": proxyconnect tcp: '
            '"http://eve:SUPER SECRET@proxy:3128": EOF\n',
            'Unable to connect to the server: Get "https://h:6443/api": proxyconnect tcp: "http://proxy:3128": EOF',
        ),
    ],
)
def test_a_password_in_a_url_kubectl_printed_is_never_shown_in_part(fake, said, shown, monkeypatch):
    fake.mode("says")
    monkeypatch.setenv("FAKE_KUBECTL_SAYS", said)
    err = one_line_error(run("explain", "fixtures/pods/web.yaml"))
    assert err == f"ksched: kubectl: context kind-small: {shown}"
    assert "SUPER" not in err and "SECRET" not in err and "bob" not in err


def test_an_unknown_context(fake):
    err = one_line_error(run("explain", "fixtures/pods/web.yaml", "--context", "staging"))
    assert err == "ksched: kubectl: --context: no context named 'staging' in the kubeconfig"


def test_kubectl_that_hangs_is_stopped(fake):
    fake.mode("hang")
    err = one_line_error(run("explain", "fixtures/pods/web.yaml", "--request-timeout", "20ms"))
    assert err == (
        "ksched: kubectl: context kind-small: kubectl did nothing for 5.02 s (--request-timeout 20ms, plus 5 s): "
        "stopped it"
    )


def test_kubectl_not_on_path(fake, monkeypatch, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    err = one_line_error(run("explain", "fixtures/pods/web.yaml"))
    assert err == "ksched: kubectl: not found on PATH: install kubectl, or give a snapshot with --cluster FILE"
    assert fake.calls() == []


def test_a_bad_request_timeout_is_a_usage_error(fake):
    err = one_line_error(run("explain", "fixtures/pods/web.yaml", "--request-timeout", "soon"))
    assert err == "ksched: --request-timeout: invalid duration 'soon' (a number of seconds, or e.g. 30s, 1m, 500ms)"
    assert fake.calls() == []


def test_durations_as_kubectl_reads_them():
    assert parse_duration("30") == 30 and parse_duration("0") == 0
    assert parse_duration("1m30s") == 90 and parse_duration("500ms") == 0.5 and parse_duration("1h") == 3600
    for bad in ("", "5x", "s", "1m 30s", "-1s"):
        with pytest.raises(InputError):
            parse_duration(bad)


def test_the_live_source_reads_exactly_the_readme_snapshot_kinds():
    commands = []
    for doc in ("README.md", "docs/usage/index.md", "docs/ci.md"):
        text = (ROOT / doc).read_text()
        found = re.findall(r"kubectl get (nodes,[a-z0-9.,]+) \\?\s*-A -o (?:yaml|json)", text)
        assert found, f"{doc}: no snapshot command"
        commands += found
    others = tuple(k for k in OPTIONAL_KINDS if ".resource.k8s.io" not in k)
    for kinds in commands:
        # the required kinds first; where the workloads and storage kinds follow, all of them, group-qualified
        listed = tuple(kinds.split(","))
        assert listed[: len(KINDS)] == KINDS and listed[len(KINDS) :] in ((), others)


def test_temporary_snapshots_are_labelled_not_leaked():
    # labels are only for ksched's own temporary files, never for the user's
    assert all("ksched-live-" in path for path in SOURCE_LABELS)


@pytest.mark.skipif(
    shutil.which("kubectl", path="/usr/local/bin:/usr/bin:/bin") is None,
    reason="needs a real kubectl to find the plugin",
)
def test_real_kubectl_runs_the_installed_plugin(tmp_path):
    plugin = Path(sys.executable).parent / "kubectl-ksched"
    if not plugin.exists():
        pytest.skip("kubectl-ksched is not installed next to this Python")
    kubectl = shutil.which("kubectl", path="/usr/local/bin:/usr/bin:/bin")
    env = {"PATH": f"{plugin.parent}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path), "NO_COLOR": "1"}
    r = subprocess.run([kubectl, "ksched", "version"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ksched ")
    h = subprocess.run([kubectl, "ksched", "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert "Usage: kubectl ksched" in h.stdout
    listed = subprocess.run([kubectl, "plugin", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert str(plugin) in listed.stdout


def test_the_read_reports_its_progress_in_bytes(fake):
    """On a terminal the CLI installs a Rich reporter on the core's progress hook; here a recording one."""
    from contextlib import contextmanager

    from kschedcli import progress

    seen: list[tuple[str, str, list[int]]] = []

    @contextmanager
    def reporter(description: str, total: int, unit: str):
        updates: list[int] = []

        class Task:
            def update(self, done: int) -> None:
                updates.append(done)

        seen.append((description, unit, updates))
        yield Task()

    # more than a pipe holds (64 KiB): kubectl's writes block until ksched reads, so the read takes
    # several pieces however the two processes are scheduled
    fake.served.write_bytes(fake.served.read_bytes() + b" " * 200_000)
    progress.set_reporter(reporter)
    try:
        r = run("explain", "fixtures/pods/web.yaml")
    finally:
        progress.set_reporter(None)
    assert r.exit_code == 0, r.output
    description, unit, updates = seen[0]
    assert (description, unit) == ("kubectl get (kind-small)", "bytes")
    size = len(fake.served.read_bytes())
    assert updates[-1] == size and len(updates) > 1 and updates == sorted(updates)
