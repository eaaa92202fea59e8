"""The live cluster as a snapshot: what the user's kubectl reads from the API server it points at.

ksched runs the user's own `kubectl` (`kubectl get KINDS -A -o json`, and `kubectl version` for the
API server's version, which chooses the kube-scheduler release to follow) rather than talking to the API
server itself: kubectl already honours everything in the user's kubeconfig (exec credential plugins
such as `aws eks get-token` or `gke-gcloud-auth-plugin`, OIDC, client certificates, proxies,
`--context`, `KUBECONFIG` with several files), and ksched needs nothing more of the API than one list
per kind. The bytes kubectl prints are written to a file as they arrive (the `--save-snapshot` file,
or a temporary one) and read by the same loader as a snapshot named with `--cluster`: a live run and
an offline run of the saved file see the same objects.

kubectl's failures become one line each (`ksched: kubectl: ...`, exit status 2): kubectl not found,
no kubeconfig or no current context, an unknown context, forbidden (naming the resource), connection
refused, a timeout. The OPTIONAL_KINDS are read when the server has them and the user may list them:
an older cluster without resource.k8s.io/v1, or RBAC that forbids VolumeAttachments, leaves them out
(named under -v), as a snapshot without them would.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field

from . import progress
from .errors import SOURCE_LABELS, InputError
from .snapshot_cache import content_hasher, know_content

# The kinds of the README's snapshot command (`kubectl get nodes,pods,... -A -o yaml`), and only
# those: what the cluster loader reads for the default plugins. tests/test_live.py holds the README to it.
KINDS = (
    "nodes",
    "pods",
    "pdb",
    "pv",
    "pvc",
    "sc",
    "csinodes",
    "csidrivers",
    "priorityclasses",
    "namespaces",
    "services",
    "replicasets",
    "statefulsets",
    "replicationcontrollers",
)
# Kinds the loader also reads, which a cluster may not serve (DRA before v1.34) or a user may not be
# allowed to list: workloads (a workload already running adds only the pods it is missing), storage
# capacity and attachments, DRA's claims, slices and classes. Group-qualified, so that a custom
# resource of the same plural in another group is never read in their place.
OPTIONAL_KINDS = (
    "deployments.apps",
    "daemonsets.apps",
    "jobs.batch",
    "cronjobs.batch",
    "csistoragecapacities.storage.k8s.io",
    "volumeattachments.storage.k8s.io",
    "resourceclaims.resource.k8s.io",
    "resourceslices.resource.k8s.io",
    "deviceclasses.resource.k8s.io",
)

DEFAULT_REQUEST_TIMEOUT = "30s"
SOURCE = "kubectl"  # how errors name the live source
_CHUNK = 1 << 20


@dataclass(frozen=True)
class LiveOptions:
    """Where the cluster is, as kubectl's own flags say it."""

    context: str | None = None
    kubeconfig: str | None = None
    request_timeout: str = DEFAULT_REQUEST_TIMEOUT
    save_snapshot: str | None = None


@dataclass(frozen=True)
class Target:
    """The kubeconfig context kubectl resolved: its name, server and default namespace."""

    context: str
    server: str
    namespace: str


@dataclass
class LiveRead:
    """What one read of the live cluster gave: the snapshot file, the context, the API server's
    version (None when `kubectl version` did not say), and the optional kinds left out, each with why."""

    path: str
    target: Target
    server_version: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)  # plural -> "not served" / "forbidden"


def parse_duration(text: str) -> float:
    """kubectl's --request-timeout: a bare number of seconds, or a Go duration (`30s`, `1m30s`,
    `500ms`); 0 means no timeout. Returns seconds."""
    value = text.strip()
    if re.fullmatch(r"\d+", value):
        return float(value)
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)", value)
    if not value or "".join(n + u for n, u in parts) != value:
        raise InputError(
            f"invalid duration {text!r} (a number of seconds, or e.g. 30s, 1m, 500ms)", field="--request-timeout"
        )
    return sum(float(n) * units[u] for n, u in parts)


def _kubectl_flags(opts: LiveOptions) -> list[str]:
    flags = []
    if opts.kubeconfig:
        flags += ["--kubeconfig", opts.kubeconfig]
    if opts.context:
        flags += ["--context", opts.context]
    return flags


def find_kubectl() -> str:
    path = shutil.which("kubectl")
    if path is None:
        raise InputError("not found on PATH: install kubectl, or give a snapshot with --cluster FILE", source=SOURCE)
    return path


_NO_RESOURCE_TYPE = re.compile(r'the server doesn\'t have a resource type "(?P<resource>[^"]+)"')


def _plural(kind: str) -> str:
    return kind.split(".", 1)[0]


# kubectl's log lines (klog: `E1124 05:13:59.830326    6665 memcache.go:265] ...`) repeat what its
# last line says
_KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] ")
_FORBIDDEN = re.compile(
    r'(?:Error from server \(Forbidden\): )?(?P<what>\S+) is forbidden: User "(?P<user>[^"]*)" '
    r'cannot (?P<verb>\w+) resource "(?P<resource>[^"]+)" in API group "(?P<group>[^"]*)"'
)
_REFUSED = re.compile(
    r"The connection to the server (?P<server>\S+) was refused|"
    r"dial tcp (?P<addr>\S+): connect: connection refused"
)
_TIMEOUT = re.compile(
    r"Client\.Timeout exceeded|context deadline exceeded|i/o timeout|"
    r"TLS handshake timeout|Error from server \(Timeout\)|request canceled|"
    r"the server was unable to return a response in the time allotted"
)
_NO_CONTEXT = re.compile(r"current-context (?:must exist|is not set)")
_UNKNOWN_CONTEXT = re.compile(
    r'cannot locate context (?P<a>\S+)|context "?(?P<b>[^"\s]+)"? does not exist|'
    r"context was not found for specified context: (?P<c>\S+)"
)
_MISSING_FILE = re.compile(r"stat (?P<path>.+): no such file or directory")


def _message_lines(stderr: str) -> list[str]:
    return [ln.strip() for ln in stderr.splitlines() if ln.strip() and not _KLOG.match(ln)]


def explain_failure(stderr: str, opts: LiveOptions, target: Target | None) -> InputError:
    """One line for what kubectl said when it failed."""
    lines = _message_lines(stderr)
    text = "\n".join(lines) or stderr
    where = f"context {target.context}" if target else (f"context {opts.context}" if opts.context else "")
    if _NO_RESOURCE_TYPE.search(text) and _TIMEOUT.search(stderr):
        text = stderr  # discovery timed out (kubectl logged it), so kubectl did not find the type
    m = _FORBIDDEN.search(text)
    if m:
        group = f".{m['group']}" if m["group"] else ""
        return InputError(
            f"forbidden: user {m['user']!r} cannot {m['verb']} {m['resource']}{group} in every "
            f"namespace; ksched reads {', '.join(KINDS)} (or give a snapshot with --cluster FILE)",
            source=SOURCE,
            where=where,
        )
    if _TIMEOUT.search(text):
        server = f" {target.server}" if target else ""
        return InputError(
            f"timed out waiting for the API server{server} (--request-timeout {opts.request_timeout})",
            source=SOURCE,
            where=where,
        )
    m = _REFUSED.search(text)
    if m:
        server = m["server"] or m["addr"]
        return InputError(f"connection refused by the API server {server}", source=SOURCE, where=where)
    if _NO_CONTEXT.search(text):
        return _no_context(opts)
    m = _UNKNOWN_CONTEXT.search(text)
    if m:
        name = m["a"] or m["b"] or m["c"]
        return InputError(f"no context named {name!r} in the kubeconfig", source=SOURCE, field="--context")
    m = _MISSING_FILE.search(text)
    if m:
        return InputError("no such file", source=m["path"], field="--kubeconfig")
    last = lines[-1] if lines else "failed without a message"
    last = re.sub(r"^error: ", "", last)
    return InputError(last, source=SOURCE, where=where)


def _no_context(opts: LiveOptions) -> InputError:
    config = opts.kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    return InputError(
        f"no current context in {config}: name one with --context, or give a snapshot with --cluster FILE",
        source=SOURCE,
    )


def resolve_target(kubectl: str, opts: LiveOptions) -> Target:
    """The context kubectl will use (`kubectl config view --minify`): reads only the kubeconfig, and
    fails plainly when there is none, where `kubectl get` would try localhost:8080."""
    try:
        r = subprocess.run(
            [kubectl, "config", "view", "--minify", "-o", "json", *_kubectl_flags(opts)],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise InputError("`kubectl config view` did not answer in 60 s", source=SOURCE) from None
    except OSError as e:
        raise InputError(f"cannot run {kubectl}: {e.strerror or e}", source=SOURCE) from None
    if r.returncode != 0:
        raise explain_failure(r.stderr, opts, None)
    try:
        config = json.loads(r.stdout)
        name = config.get("current-context") or ""
        context = next((c.get("context") or {} for c in config.get("contexts") or [] if c.get("name") == name), {})
        cluster = next(
            (c.get("cluster") or {} for c in config.get("clusters") or [] if c.get("name") == context.get("cluster")),
            {},
        )
    except (ValueError, AttributeError):
        raise InputError("`kubectl config view` printed something other than a kubeconfig", source=SOURCE) from None
    if not name:
        raise _no_context(opts)
    return Target(name, cluster.get("server") or "?", context.get("namespace") or "default")


def _deadline(opts: LiveOptions) -> float | None:
    """The longest ksched waits for `kubectl get`: as long as kubectl's own per-request timeouts allow
    (discovery and one list per kind), in case kubectl itself hangs. None: no limit."""
    per_request = parse_duration(opts.request_timeout)
    if per_request <= 0:
        return None
    return per_request * (len(KINDS) + len(OPTIONAL_KINDS) + 2) + 1.0


def get_command(kubectl: str, opts: LiveOptions, kinds: tuple[str, ...] | None = None) -> list[str]:
    return [
        kubectl,
        "get",
        ",".join(KINDS + OPTIONAL_KINDS if kinds is None else kinds),
        "--all-namespaces",
        "-o",
        "json",
        f"--request-timeout={opts.request_timeout}",
        *_kubectl_flags(opts),
    ]


def _read_into(proc: subprocess.Popen, out, task, digest) -> None:
    assert proc.stdout is not None
    received = 0
    while True:
        chunk = proc.stdout.read1(_CHUNK) if hasattr(proc.stdout, "read1") else proc.stdout.read(_CHUNK)
        if not chunk:
            return
        out.write(chunk)
        digest.update(chunk)
        received += len(chunk)
        task.update(received)


def _get_into(
    kubectl: str, opts: LiveOptions, kinds: tuple[str, ...], path: str, target: Target, digest
) -> tuple[int, str]:
    """Run `kubectl get KINDS` into `path` (the bytes exactly as kubectl printed them, also fed
    to `digest`); its exit status and what it said on stderr."""
    deadline = _deadline(opts)
    try:
        out = open(path, "wb")  # noqa: SIM115 - closed by the `with` below, once the error paths are set
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", source=path, field="--save-snapshot") from None
    stderr_chunks: list[bytes] = []
    with out, progress.task(f"kubectl get ({target.context})", total=0, unit="bytes") as task:
        try:
            proc = subprocess.Popen(
                get_command(kubectl, opts, kinds),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
        except OSError as e:
            raise InputError(f"cannot run {kubectl}: {e.strerror or e}", source=SOURCE) from None
        stderr = proc.stderr
        assert stderr is not None
        errs = threading.Thread(target=lambda: stderr_chunks.append(stderr.read()), daemon=True)
        errs.start()
        timer = None
        timed_out = threading.Event()
        if deadline is not None:

            def kill() -> None:
                timed_out.set()
                proc.kill()

            timer = threading.Timer(deadline, kill)
            timer.daemon = True
            timer.start()
        try:
            _read_into(proc, out, task, digest)
            code = proc.wait()
        finally:
            if timer is not None:
                timer.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        errs.join(5)
    if timed_out.is_set():
        raise InputError(
            f"kubectl get did not finish in {deadline:g} s (--request-timeout {opts.request_timeout} per request)",
            source=SOURCE,
            where=f"context {target.context}",
        )
    return code, b"".join(stderr_chunks).decode("utf-8", "replace")


def _start_version(kubectl: str, opts: LiveOptions) -> subprocess.Popen | None:
    """`kubectl version -o json`, run beside the read: the API server's version (serverVersion)."""
    try:
        return subprocess.Popen(
            [kubectl, "version", "-o", "json", f"--request-timeout={opts.request_timeout}", *_kubectl_flags(opts)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
    except OSError:
        return None


def _server_version(proc: subprocess.Popen | None, wait: bool) -> str | None:
    """The gitVersion kubectl's `version` printed for the server; None when it did not say (an
    old or restricted server, a failure): the release is then chosen from the nodes' kubelets."""
    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=30 if wait else 0.001)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    try:
        version = (json.loads(out or b"{}").get("serverVersion") or {}).get("gitVersion")
    except (ValueError, AttributeError):
        return None
    return version if isinstance(version, str) and version else None


def fetch(opts: LiveOptions, path: str) -> LiveRead:
    """Read the live cluster into `path`: the README's KINDS, which must all be read, and the
    OPTIONAL_KINDS the server has and the user may list."""
    kubectl = find_kubectl()
    target = resolve_target(kubectl, opts)
    read = LiveRead(path, target)
    version = _start_version(kubectl, opts)
    ok = False
    try:
        kinds: tuple[str, ...] = KINDS + OPTIONAL_KINDS
        while True:
            digest = content_hasher()
            code, stderr = _get_into(kubectl, opts, kinds, path, target, digest)
            if code == 0:
                break
            missing = _NO_RESOURCE_TYPE.search(stderr)
            optional = {_plural(k): k for k in kinds if k in OPTIONAL_KINDS}
            if missing and missing["resource"] in optional and not _TIMEOUT.search(stderr):
                # kubectl stops at the first type the server does not serve, before reading anything
                read.skipped[missing["resource"]] = "not served by the API server"
                kinds = tuple(k for k in kinds if k != optional[missing["resource"]])
                continue
            lines = [ln for ln in _message_lines(stderr) if not ln.startswith("Warning:")]
            forbidden = [_FORBIDDEN.search(ln) for ln in lines]
            if lines and all(m is not None and m["resource"] in optional for m in forbidden):
                # kubectl printed everything else it read: only optional kinds are missing from it
                read.skipped.update((m["resource"], "forbidden") for m in forbidden if m is not None)
                break
            raise explain_failure(stderr, opts, target)
        ok = True
    finally:
        read.server_version = _server_version(version, wait=ok)
    # the snapshot cache keys this file by what kubectl printed: the same bytes read again are
    # not parsed again (the context is part of the key: what names the source in messages)
    know_content(path, f"{target.context}|{target.server}", digest.digest())
    return read


def read_live_cluster(opts: LiveOptions) -> LiveRead:
    """Read the live cluster into a snapshot file. With --save-snapshot the file is the user's and
    its name appears in any later error; otherwise it is a temporary file, removed at exit, and
    errors name it `kubectl (context NAME)`."""
    parse_duration(opts.request_timeout)  # a bad value is a usage error before anything runs
    if opts.save_snapshot:
        return fetch(opts, opts.save_snapshot)
    folder = tempfile.mkdtemp(prefix="ksched-live-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "cluster.json")
    read = fetch(opts, path)
    SOURCE_LABELS[path] = f"{SOURCE} (context {read.target.context})"
    return read
