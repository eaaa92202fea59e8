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
refused, a timeout. The OPTIONAL_KINDS are read when the server has them: an older cluster without
resource.k8s.io/v1 leaves them out (named under -v), as a snapshot without them would. Only nodes and
pods must be listable: RBAC that forbids any other kind leaves it out with a one-line warning saying
what the answer then ignores.

Nothing ksched prints carries a credential: URLs lose their userinfo, bearer tokens and keys are
masked (`redact`), and a credential plugin's failure is told by its command and exit status only,
as kubectl itself tells it, never by what the plugin printed. Every kubectl runs in a session of
its own; when ksched stops it (no progress for --request-timeout plus STALL_GRACE seconds, a list
past its bounds, an interrupt) the whole process group goes, a credential plugin kubectl started with it.
A list is bounded: kubectl asks CHUNK_SIZE objects a page, and ksched stops kubectl when one list
passes MAX_PAGES pages or all lists together MAX_TOTAL_PAGES (a `continue` token that never ends).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import unquote

from .. import progress
from ..errors import SOURCE_LABELS, InputError
from ..masking import strip_userinfo
from .cache import content_hasher, know_content

# The kinds of the README's snapshot command (`kubectl get nodes,pods,... -A -o yaml`), and only
# those: what the cluster loader reads for the default plugins. tests/inputs/test_live.py holds the README to it.
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
# resource of the same plural in another group is never read in their place; DRA's also
# version-qualified: resource.k8s.io/v1 is served from v1.34, and a v1.33 server that serves only
# v1beta1/v1beta2 (objects of another shape) answers "doesn't have a resource type" and is read without them.
OPTIONAL_KINDS = (
    "deployments.apps",
    "daemonsets.apps",
    "jobs.batch",
    "cronjobs.batch",
    "csistoragecapacities.storage.k8s.io",
    "volumeattachments.storage.k8s.io",
    "resourceclaims.v1.resource.k8s.io",
    "resourceslices.v1.resource.k8s.io",
    "deviceclasses.v1.resource.k8s.io",
)

# the kinds a user must be allowed to list: without them there is no cluster to place a pod on
REQUIRED_KINDS = ("nodes", "pods")
# kind as asked -> (resource, API group, what the answer ignores without it); a kind the user may not
# list (RBAC's 403) is left out, with a warning saying this
KIND_INFO = {
    "nodes": ("nodes", "", "nodes"),
    "pods": ("pods", "", "pods"),
    "pdb": ("poddisruptionbudgets", "policy", "PodDisruptionBudgets (preemption and drain see no budget to respect)"),
    "pv": ("persistentvolumes", "", "PersistentVolumes (VolumeBinding, VolumeZone, NodeVolumeLimits see none)"),
    "pvc": ("persistentvolumeclaims", "", "PersistentVolumeClaims (a pod's claim is not found)"),
    "sc": ("storageclasses", "storage.k8s.io", "StorageClasses (a claim's class is not found)"),
    "csinodes": ("csinodes", "storage.k8s.io", "CSINodes (NodeVolumeLimits sees no per-node CSI limit)"),
    "csidrivers": ("csidrivers", "storage.k8s.io", "CSIDrivers (NodeVolumeLimits sees no CSI driver)"),
    "priorityclasses": (
        "priorityclasses",
        "scheduling.k8s.io",
        "PriorityClasses (a pod file naming one is an error: no PriorityClass found)",
    ),
    "namespaces": ("namespaces", "", "Namespaces (their labels, for a namespaceSelector of pod affinity)"),
    "services": ("services", "", "Services (the default spreading of PodTopologySpread)"),
    "replicasets": ("replicasets", "apps", "ReplicaSets (the default spreading of PodTopologySpread)"),
    "statefulsets": ("statefulsets", "apps", "StatefulSets (the default spreading of PodTopologySpread)"),
    "replicationcontrollers": (
        "replicationcontrollers",
        "",
        "ReplicationControllers (the default spreading of PodTopologySpread)",
    ),
    "deployments.apps": ("deployments", "apps", "Deployments (a workload already running)"),
    "daemonsets.apps": ("daemonsets", "apps", "DaemonSets (a workload already running)"),
    "jobs.batch": ("jobs", "batch", "Jobs (a workload already running)"),
    "cronjobs.batch": ("cronjobs", "batch", "CronJobs (a workload already running)"),
    "csistoragecapacities.storage.k8s.io": (
        "csistoragecapacities",
        "storage.k8s.io",
        "CSIStorageCapacities (VolumeBinding assumes capacity everywhere)",
    ),
    "volumeattachments.storage.k8s.io": (
        "volumeattachments",
        "storage.k8s.io",
        "VolumeAttachments (NodeVolumeLimits counts no attachment)",
    ),
    "resourceclaims.v1.resource.k8s.io": ("resourceclaims", "resource.k8s.io", "ResourceClaims (DynamicResources)"),
    "resourceslices.v1.resource.k8s.io": ("resourceslices", "resource.k8s.io", "ResourceSlices (DynamicResources)"),
    "deviceclasses.v1.resource.k8s.io": ("deviceclasses", "resource.k8s.io", "DeviceClasses (DynamicResources)"),
}

DEFAULT_REQUEST_TIMEOUT = "30s"
# kubectl's page size (its default, passed so that the bounds below hold): the API server answers a
# list of N objects in N/CHUNK_SIZE pages, each naming the next with a `continue` token
CHUNK_SIZE = 500
# a list that has not ended after MAX_PAGES pages (500,000 objects, over three times the 150,000
# pods Kubernetes is tested with), or all lists together after MAX_TOTAL_PAGES (1,000,000 objects),
# is a `continue` token that never ends: kubectl is stopped, exit status 2
MAX_PAGES = 1000
MAX_TOTAL_PAGES = 2000
# kubectl bounds each request with --request-timeout; a kubectl that has neither logged an answer
# nor printed a byte for that long plus STALL_GRACE seconds waits on something else (a credential
# plugin that hangs) and is stopped
STALL_GRACE = 5.0
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
    """The kubeconfig context kubectl resolved: its name, server (without userinfo) and default
    namespace, and its user's exec credential plugin (the command only), if any."""

    context: str
    server: str
    namespace: str
    plugin: str | None = None


@dataclass
class LiveRead:
    """What one read of the live cluster gave: the snapshot file, the context, the API server's
    version (None when `kubectl version` did not say), and the optional kinds left out, each with why."""

    path: str
    target: Target
    server_version: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)  # plural -> "not served" / "forbidden"
    warnings: list[str] = field(default_factory=list)  # one line each, printed whatever -v says


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


# --- credentials never printed ------------------------------------------------------------------

_AUTH_HEADER = re.compile(
    r"(?i)(?P<head>\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)(?:(?P<scheme>\w+)\s+)?[^\s\"',]+"
)
_BEARER = re.compile(r"(?i)(?P<head>\bbearer\s+)(?!REDACTED\b|tokens?\b|auth\w*\b)[A-Za-z0-9._~+/=:-]{6,}")
_TOKEN_FIELD = re.compile(
    r"(?i)(?P<head>\b(?:[a-z]+[_-])?(?:token|password|passwd|secret|client-key-data|client_key_data)"
    r"[\"']?\s*[:=]\s*[\"']?)(?!REDACTED\b)[^\s\"'&,;]+"
)
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)


def redact(text: str) -> str:
    """`text` (something kubectl said, a URL of the kubeconfig) without credentials: URLs lose
    their userinfo (`https://user:pass@host` is `https://host`, as kubectl names a server; found
    as masking.userinfo_spans finds it, a password holding `/`, `@`, spaces or quotes included), and
    Authorization headers, bearer tokens, token=/password= fields and private keys read REDACTED."""
    text = _PRIVATE_KEY.sub("REDACTED", text)
    text = strip_userinfo(text)
    text = _AUTH_HEADER.sub(lambda m: f"{m['head']}{m['scheme'] + ' ' if m['scheme'] else ''}REDACTED", text)
    text = _BEARER.sub(lambda m: f"{m['head']}REDACTED", text)
    return _TOKEN_FIELD.sub(lambda m: f"{m['head']}REDACTED", text)


# --- kubectl's own processes --------------------------------------------------------------------


def _popen(cmd: list[str], **kwargs) -> subprocess.Popen:
    """kubectl in a session (and process group) of its own: stopping it stops everything it
    started, a credential plugin first of all."""
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True, **kwargs)


def _stop(proc: subprocess.Popen) -> None:
    """End kubectl's whole process group (the group outlives kubectl while a plugin it started
    runs), and reap kubectl."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _group_members(pgid: int) -> list[tuple[str, list[str]]]:
    """The processes still in process group `pgid` besides its leader, each as (name, argv)
    (Linux's /proc; none elsewhere): what kubectl was waiting for when it was stopped."""
    found: list[tuple[str, list[str]]] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == pgid:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("utf-8", "replace")
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) != pgid:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
        except (OSError, ValueError, IndexError):
            continue
        found.append((name, argv))
    return found


def _stalled(
    what: str, stall: float, opts: LiveOptions, members: list[tuple[str, list[str]]], target: Target | None
) -> InputError:
    """One line for a kubectl that did nothing for `stall` seconds and was stopped, with the
    processes it had started (by name only: their arguments may hold a credential)."""
    bound = f"{stall:g} s (--request-timeout {opts.request_timeout}, plus {STALL_GRACE:g} s)"
    where = f"context {target.context}" if target else (f"context {opts.context}" if opts.context else "")
    plugin = target.plugin if target else None
    if plugin and any(plugin in argv or os.path.basename(plugin) == name for name, argv in members):
        return InputError(
            f"the kubeconfig's credential plugin {redact(plugin)} did not finish in {bound}: stopped it and kubectl",
            source=SOURCE,
            where=where,
        )
    others = sorted({name for name, _ in members if not name.startswith("kubectl")})
    if others:
        return InputError(
            f"{what} did nothing for {bound} while it waited for {', '.join(others)}: stopped them",
            source=SOURCE,
            where=where,
        )
    return InputError(f"{what} did nothing for {bound}: stopped it", source=SOURCE, where=where)


# --- what kubectl said --------------------------------------------------------------------------

# kubectl's log lines (klog: `E1124 05:13:59.830326    6665 memcache.go:265] ...`) repeat what its
# last line says
_KLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] ")
# one answer of the API server as kubectl logs it at -v=6 (the older and the structured form)
_RESPONSE = re.compile(
    r"^[IWEF]\d{4} .*?\] "
    r'(?:GET (?P<url>\S+) (?:\d{3}|) ?|"Response" verb="GET" url="(?P<url2>[^"]+)" status=)'
)
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
# client-go's words when a kubeconfig's exec credential plugin fails (what the plugin printed went
# to stderr before them, and is never repeated: it may hold a token)
_PLUGIN_FAILED = re.compile(
    r"getting credentials: exec: executable (?P<cmd>.+?) (?P<how>failed with exit code \d+|not found)"
)
_PLUGIN_OTHER = re.compile(r"getting credentials: ")


def _message_lines(stderr: str) -> list[str]:
    """kubectl's messages: not its log lines, nor what continues one (at -v=6 kubectl logs each
    error Status as indented JSON over several lines)."""
    lines = []
    in_log = False
    for ln in stderr.splitlines():
        if _KLOG.match(ln):
            in_log = True
            continue
        if in_log and (not ln.strip() or ln[:1].isspace() or ln[:1] in '{}[]"'):
            continue
        in_log = False
        if ln.strip():
            lines.append(ln.strip())
    return lines


def _kubectl_lines(stderr: str, target: Target | None) -> str:
    """What kubectl itself said, as far as it can be told from what a credential plugin it ran
    wrote to the same stderr: with a plugin in the kubeconfig, only kubectl's known error lines."""
    lines = _message_lines(stderr)
    if target is not None and target.plugin:
        known = ("error: ", "Error from server", "Unable to connect", "The connection to the server", "Warning: ")
        lines = [ln for ln in lines if ln.startswith(known) and "getting credentials" not in ln] or lines[-1:]
    return "\n".join(lines)


def explain_failure(stderr: str, opts: LiveOptions, target: Target | None) -> InputError:
    """One line for what kubectl said when it failed, without a credential in it."""
    where = f"context {target.context}" if target else (f"context {opts.context}" if opts.context else "")
    m = _PLUGIN_FAILED.search(stderr)
    if m:  # kubectl's own words: the plugin's command and exit status, never its output
        return InputError(
            f"getting credentials: exec: executable {redact(m['cmd'])} {m['how']}", source=SOURCE, where=where
        )
    if _PLUGIN_OTHER.search(stderr):
        plugin = f" ({redact(target.plugin)})" if target and target.plugin else ""
        return InputError(
            f"getting credentials from the kubeconfig's exec plugin{plugin} failed (what it printed is not "
            "shown: it may hold a credential)",
            source=SOURCE,
            where=where,
        )
    text = _kubectl_lines(stderr, target) or stderr
    lines = text.splitlines()
    if _NO_RESOURCE_TYPE.search(text) and _TIMEOUT.search(stderr):
        text = stderr  # discovery timed out (kubectl logged it), so kubectl did not find the type
    m = _FORBIDDEN.search(text)
    if m:
        group = f".{m['group']}" if m["group"] else ""
        return InputError(
            f"forbidden: user {m['user']!r} cannot {m['verb']} {m['resource']}{group} in every "
            f"namespace; ksched needs {' and '.join(REQUIRED_KINDS)} (or give a snapshot with --cluster FILE)",
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
        server = redact(m["server"] or m["addr"])
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
    return InputError(redact(last), source=SOURCE, where=where)


def _no_context(opts: LiveOptions) -> InputError:
    config = opts.kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
    return InputError(
        f"no current context in {config}: name one with --context, or give a snapshot with --cluster FILE",
        source=SOURCE,
    )


def _check_kubeconfig(opts: LiveOptions) -> None:
    """--kubeconfig FILE must be a readable file: kubectl reads a missing one as an empty
    kubeconfig and reports "no current context"."""
    path = opts.kubeconfig
    if not path:
        return
    if not os.path.exists(path):
        raise InputError("no such file", source=path, field="--kubeconfig")
    if os.path.isdir(path):
        raise InputError("is a directory, not a kubeconfig file", source=path, field="--kubeconfig")
    if not os.access(path, os.R_OK):
        raise InputError("cannot read (permission denied)", source=path, field="--kubeconfig")


def resolve_target(kubectl: str, opts: LiveOptions) -> Target:
    """The context kubectl will use (`kubectl config view --minify`): reads only the kubeconfig, and
    fails plainly when there is none, where `kubectl get` would try localhost:8080."""
    _check_kubeconfig(opts)
    try:
        proc = _popen(
            [kubectl, "config", "view", "--minify", "-o", "json", *_kubectl_flags(opts)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    except OSError as e:
        raise InputError(f"cannot run {kubectl}: {e.strerror or e}", source=SOURCE) from None
    stall = _stall_after(opts)
    try:
        out, err = proc.communicate(timeout=stall)
    except subprocess.TimeoutExpired:
        assert stall is not None
        members = _group_members(proc.pid)
        _stop(proc)
        raise _stalled("`kubectl config view`", stall, opts, members, None) from None
    finally:
        _stop(proc)
    if proc.returncode != 0:
        raise explain_failure(err, opts, None)
    try:
        config = json.loads(out)
        name = config.get("current-context") or ""
        context = next((c.get("context") or {} for c in config.get("contexts") or [] if c.get("name") == name), {})
        cluster = next(
            (c.get("cluster") or {} for c in config.get("clusters") or [] if c.get("name") == context.get("cluster")),
            {},
        )
        user = next(
            (u.get("user") or {} for u in config.get("users") or [] if u.get("name") == context.get("user")), {}
        )
        plugin = (user.get("exec") or {}).get("command") if isinstance(user.get("exec"), dict) else None
    except (ValueError, AttributeError):
        raise InputError("`kubectl config view` printed something other than a kubeconfig", source=SOURCE) from None
    if not name:
        raise _no_context(opts)
    server = redact(str(cluster.get("server") or "?"))
    return Target(name, server, context.get("namespace") or "default", plugin if isinstance(plugin, str) else None)


def _stall_after(opts: LiveOptions) -> float | None:
    """How long kubectl may go without logging an answer or printing a byte before ksched stops
    it: its own --request-timeout, which bounds each request it sends, plus STALL_GRACE. None: no
    limit (--request-timeout 0)."""
    per_request = parse_duration(opts.request_timeout)
    if per_request <= 0:
        return None
    return per_request + STALL_GRACE


def get_command(kubectl: str, opts: LiveOptions, kinds: tuple[str, ...] | None = None) -> list[str]:
    return [
        kubectl,
        "get",
        ",".join(KINDS + OPTIONAL_KINDS if kinds is None else kinds),
        "--all-namespaces",
        "-o",
        "json",
        f"--request-timeout={opts.request_timeout}",
        f"--chunk-size={CHUNK_SIZE}",
        # each answer logged (method, URL, status: no header, no body), for the page bounds and
        # to see kubectl is not stuck
        "-v=6",
        *_kubectl_flags(opts),
    ]


class _Watch:
    """What kubectl has done so far, from its -v=6 log of answers: pages per list, when it last did
    something, which bound stopped it."""

    def __init__(self) -> None:
        self.pages: dict[str, int] = {}
        self.total = 0
        self.last = time.monotonic()
        self.stopped: str | None = None  # why ksched stopped kubectl
        self.last_list: str | None = None

    def answer(self, url: str) -> str | None:
        """Count one logged answer; a reason to stop kubectl once a bound is passed."""
        path, _, query = url.partition("?")
        if "limit=" not in query:
            return None  # discovery
        resource = "/".join(p for p in path.split("/")[3:] if p)  # after scheme://host/
        self.last_list = resource
        self.pages[resource] = self.pages.get(resource, 0) + 1
        self.total += 1
        if self.pages[resource] > MAX_PAGES:
            return (
                f"the list of {_resource_name(resource)} did not end after {MAX_PAGES} pages of {CHUNK_SIZE} "
                f"(the API server's `continue` token never ends?): stopped kubectl; ksched reads at most "
                f"{MAX_PAGES * CHUNK_SIZE:,} objects of a kind"
            )
        if self.total > MAX_TOTAL_PAGES:
            return (
                f"the lists did not end after {MAX_TOTAL_PAGES} pages of {CHUNK_SIZE} in all: stopped kubectl; "
                f"ksched reads at most {MAX_TOTAL_PAGES * CHUNK_SIZE:,} objects"
            )
        return None


def _resource_name(path: str) -> str:
    """`apis/policy/v1/poddisruptionbudgets` -> `poddisruptionbudgets.policy`; `api/v1/pods` -> `pods`."""
    parts = [unquote(p) for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        return parts[2] if parts[2] != "namespaces" or len(parts) < 5 else parts[4]
    if parts[:1] == ["apis"] and len(parts) >= 4:
        return f"{parts[3]}.{parts[1]}"
    return "/".join(parts)


def _read_into(proc: subprocess.Popen, out, task, digest, watch: _Watch) -> None:
    assert proc.stdout is not None
    received = 0
    while True:
        chunk = proc.stdout.read1(_CHUNK) if hasattr(proc.stdout, "read1") else proc.stdout.read(_CHUNK)
        if not chunk:
            return
        watch.last = time.monotonic()
        out.write(chunk)
        digest.update(chunk)
        received += len(chunk)
        task.update(received)


def _get_into(
    kubectl: str, opts: LiveOptions, kinds: tuple[str, ...], path: str, target: Target, digest
) -> tuple[int, str, _Watch]:
    """Run `kubectl get KINDS` into `path` (the bytes exactly as kubectl printed them, also fed
    to `digest`); its exit status, what it said on stderr, and what it was seen doing."""
    stall = _stall_after(opts)
    try:
        out = open(path, "wb")  # noqa: SIM115 - closed by the `with` below, once the error paths are set
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", source=path, field="--save-snapshot") from None
    stderr_lines: list[bytes] = []
    watch = _Watch()
    waiting_for: list[tuple[str, list[str]]] = []
    with out, progress.task(f"kubectl get ({target.context})", total=0, unit="bytes") as task:
        try:
            proc = _popen(get_command(kubectl, opts, kinds), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise InputError(f"cannot run {kubectl}: {e.strerror or e}", source=SOURCE) from None
        done = threading.Event()

        def stop(why: str) -> None:
            if watch.stopped is None:
                watch.stopped = why
                if why == "stalled":
                    waiting_for.extend(_group_members(proc.pid))
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)

        def read_errors() -> None:
            stderr = proc.stderr
            assert stderr is not None
            for line in iter(stderr.readline, b""):
                watch.last = time.monotonic()
                m = _RESPONSE.match(line.decode("utf-8", "replace"))
                if m is not None:
                    bound = watch.answer(m["url"] or m["url2"])
                    if bound is not None:
                        stop(bound)
                    continue  # kubectl's log of each answer: counted, not kept
                stderr_lines.append(line)

        def watchdog() -> None:
            assert stall is not None
            while not done.wait(min(1.0, stall)):
                if time.monotonic() - watch.last > stall:
                    stop("stalled")
                    return

        errs = threading.Thread(target=read_errors, daemon=True)
        errs.start()
        dog = threading.Thread(target=watchdog, daemon=True) if stall is not None else None
        if dog is not None:
            dog.start()
        try:
            _read_into(proc, out, task, digest, watch)
            code = proc.wait()
        finally:
            done.set()
            _stop(proc)  # the group: whatever kubectl left running (or an interrupt left behind)
        errs.join(5)
    where = f"context {target.context}"
    if watch.stopped == "stalled":
        assert stall is not None
        raise _stalled("kubectl", stall, opts, waiting_for, target)
    if watch.stopped is not None:
        raise InputError(watch.stopped, source=SOURCE, where=where)
    return code, b"".join(stderr_lines).decode("utf-8", "replace"), watch


def _start_version(kubectl: str, opts: LiveOptions) -> subprocess.Popen | None:
    """`kubectl version -o json`, run beside the read: the API server's version (serverVersion)."""
    try:
        return _popen(
            [kubectl, "version", "-o", "json", f"--request-timeout={opts.request_timeout}", *_kubectl_flags(opts)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def _server_version(proc: subprocess.Popen | None, wait: float) -> str | None:
    """The gitVersion kubectl's `version` printed for the server; None when it did not say (an
    old or restricted server, a failure): the release is then chosen from the nodes' kubelets."""
    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=wait or 0.001)
    except subprocess.TimeoutExpired:
        _stop(proc)
        return None
    finally:
        _stop(proc)  # a plugin `kubectl version` started, still running
    try:
        version = (json.loads(out or b"{}").get("serverVersion") or {}).get("gitVersion")
    except (ValueError, AttributeError):
        return None
    return version if isinstance(version, str) and version else None


def _forbidden_kind(m: re.Match, kinds: tuple[str, ...]) -> str | None:
    """The kind asked for that a Forbidden line is about."""
    for kind in kinds:
        resource, group, _ = KIND_INFO.get(kind, (_plural(kind), "", ""))
        if m["resource"] in (resource, kind, _plural(kind)) and m["group"] in (group, ""):
            return kind
    return None


def _unparsable(kubectl: str, opts: LiveOptions, kinds: tuple[str, ...], target: Target, message: str) -> InputError:
    """kubectl failed on an answer it could not read without saying whose: ask each kind alone to
    name the list it was."""
    for kind in kinds:
        with tempfile.TemporaryDirectory(prefix="ksched-live-") as folder:
            code, stderr, watch = _get_into(
                kubectl, opts, (kind,), os.path.join(folder, "one.json"), target, content_hasher()
            )
        if code != 0 and watch.pages:  # the list was answered, and kubectl could not read it
            alone = explain_failure(stderr, opts, target).message
            resource, group, _ = KIND_INFO.get(kind, (_plural(kind), "", ""))
            name = f"{resource}.{group}" if group else resource
            return InputError(
                f"the API server's list of {name}: {alone}", source=SOURCE, where=f"context {target.context}"
            )
    return InputError(message, source=SOURCE, where=f"context {target.context}")


def fetch(opts: LiveOptions, path: str) -> LiveRead:
    """Read the live cluster into `path`: the nodes and pods, which must be read, and the other
    kinds the server has and the user may list."""
    kubectl = find_kubectl()
    target = resolve_target(kubectl, opts)
    read = LiveRead(path, target)
    version = _start_version(kubectl, opts)
    ok = False
    try:
        kinds: tuple[str, ...] = KINDS + OPTIONAL_KINDS
        while True:
            digest = content_hasher()
            code, stderr, watch = _get_into(kubectl, opts, kinds, path, target, digest)
            if code == 0:
                break
            missing = _NO_RESOURCE_TYPE.search(stderr)
            optional = {_plural(k): k for k in kinds if k in OPTIONAL_KINDS}
            if missing and missing["resource"] in optional and not _TIMEOUT.search(stderr):
                # kubectl stops at the first type the server does not serve, before reading anything;
                # the kinds of one API group version are served together (resource.k8s.io/v1 from v1.34)
                group = KIND_INFO[optional[missing["resource"]]][1]
                gone = [
                    k for k in kinds if k in OPTIONAL_KINDS and KIND_INFO[k][1] == group and group == "resource.k8s.io"
                ]
                gone = gone or [optional[missing["resource"]]]
                for k in gone:
                    read.skipped[_plural(k)] = "not served by the API server"
                kinds = tuple(k for k in kinds if k not in gone)
                continue
            lines = [ln for ln in _kubectl_lines(stderr, target).splitlines() if not ln.startswith("Warning:")]
            forbidden = [_FORBIDDEN.search(ln) for ln in lines]
            denied = [_forbidden_kind(m, kinds) if m is not None else None for m in forbidden]
            if lines and all(k is not None and k not in REQUIRED_KINDS for k in denied):
                # kubectl printed everything else it read: only kinds ksched can do without are missing
                for m, kind in zip(forbidden, denied):
                    assert m is not None and kind is not None
                    resource, group, ignored = KIND_INFO.get(kind, (_plural(kind), "", kind))
                    read.skipped[_plural(kind)] = "forbidden"
                    name = f"{resource}.{group}" if group else resource
                    read.warnings.append(
                        f"ksched: warning: {SOURCE}: context {target.context}: forbidden: user {m['user']!r} "
                        f"cannot list {name}; the answer ignores {ignored}"
                    )
                break
            failure = explain_failure(stderr, opts, target)
            known = (_FORBIDDEN, _TIMEOUT, _REFUSED, _NO_RESOURCE_TYPE, _PLUGIN_OTHER, _NO_CONTEXT, _UNKNOWN_CONTEXT)
            if len(kinds) > 1 and watch.pages and not any(p.search(stderr) for p in known):
                # lists were answered, and kubectl could not read one of them without saying which
                raise _unparsable(kubectl, opts, kinds, target, failure.message)
            raise failure
        ok = True
    finally:
        read.server_version = _server_version(version, wait=(_stall_after(opts) or 30.0) if ok else 0.0)
    # the snapshot cache keys this file by what kubectl printed: the same bytes read again are
    # not parsed again (the context is part of the key: what names the source in messages)
    know_content(path, f"{target.context}|{target.server}", digest.digest())
    return read


@contextlib.contextmanager
def _stop_on_termination():
    """SIGTERM and SIGHUP (a CI job cancelled, a terminal closed) end ksched as an interrupt does,
    through the code that stops kubectl's process groups: kubectl, in sessions of its own, gets
    neither signal from the terminal. Only in the main thread, where Python runs signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, _frame):
        raise SystemExit(128 + signum)

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            previous[sig] = signal.signal(sig, terminate)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, handler)


def kubeconfig_files(opts: LiveOptions) -> list[str]:
    """The kubeconfig files kubectl reads for these options: --kubeconfig, else every file of
    $KUBECONFIG, else ~/.kube/config."""
    if opts.kubeconfig:
        return [opts.kubeconfig]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [p for p in env.split(os.pathsep) if p]
    return [os.path.expanduser("~/.kube/config")]


def _fetch_saved(opts: LiveOptions, target: str) -> LiveRead:
    """fetch() into the user's --save-snapshot file: checked first (inputs/sources.py; never the
    kubeconfig the read uses), written as a new file beside it and put in its place only once
    kubectl has read everything, so that a failed read leaves the file as it was. The new file
    is readable by its owner alone (pod specs may carry credentials in their environment)."""
    from .cache import content_moved
    from .sources import check_output_file

    check_output_file(target, kubeconfig_files(opts), "--save-snapshot", "the snapshot")
    folder = os.path.dirname(os.path.abspath(target))
    try:
        fd, partial = tempfile.mkstemp(prefix=".ksched-snapshot-", suffix=".partial", dir=folder)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", source=target, field="--save-snapshot") from None
    os.close(fd)
    try:
        with _stop_on_termination():
            read = fetch(opts, partial)
        try:
            os.replace(partial, target)
        except OSError as e:
            raise InputError(f"cannot write: {e.strerror or e}", source=target, field="--save-snapshot") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(partial)  # (gone once in place)
    content_moved(partial, target)
    read.path = target
    return read


def read_live_cluster(opts: LiveOptions) -> LiveRead:
    """Read the live cluster into a snapshot file. With --save-snapshot the file is the user's and
    its name appears in any later error; otherwise it is a temporary file, removed at exit, and
    errors name it `kubectl (context NAME)`."""
    parse_duration(opts.request_timeout)  # a bad value is a usage error before anything runs
    if opts.save_snapshot:
        return _fetch_saved(opts, opts.save_snapshot)
    folder = tempfile.mkdtemp(prefix="ksched-live-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "cluster.json")
    with _stop_on_termination():
        read = fetch(opts, path)
    SOURCE_LABELS[path] = f"{SOURCE} (context {read.target.context})"
    return read
