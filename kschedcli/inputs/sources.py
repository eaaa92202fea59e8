"""What the command line names, as kubectl users say it: the cluster (snapshot files with
`--cluster`, else the live cluster kubectl points at) and the pods (a file, `-f FILE`, `-f -`,
`NAME`, `NAMESPACE/NAME`, `-n NAMESPACE NAME`, `-A`).

The commands in cli.py stay thin: they pass their options here and get back snapshot files and
pod references the rest of ksched already reads. Nothing here imports Typer or Rich.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import InputError


@dataclass(frozen=True)
class PodRef:
    """One pod to explain: a file ('-' for stdin) or the name of a pending pod of the cluster."""

    text: str
    is_file: bool


class ClusterFiles(list[str]):
    """The snapshot files to read; when they hold what kubectl read from a live cluster, also its API
    server's version, which chooses the release to follow (unless --kubernetes-version)."""

    def __init__(self, files, server_version: str | None = None):
        super().__init__(files)
        self.server_version = server_version


SNAPSHOT_EXTENSIONS = (".json", ".yaml", ".yml")  # kubectl's FileExtensions for -f DIR


def _files_of_directories(paths: list[str]) -> list[str]:
    """The snapshot files named, a directory standing for its files as `kubectl apply -f DIR`
    takes them: those ending .json, .yaml or .yml directly in it (not in its subdirectories),
    in name order; a directory `kubectl cluster-info dump --output-directory` wrote, for its
    objects (_dump_namespaces). A directory holding none is an error."""
    out: list[str] = []
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            out.append(path)
            continue
        try:
            found = _object_files(path)
            for folder in _dump_namespaces(path):
                found += [f for f in _object_files(folder) if not _is_dump_events(f)]
        except OSError as e:
            where = e.filename if isinstance(e.filename, str) else path
            raise InputError(f"cannot list the directory: {e.strerror or e}", source=where, field="--cluster") from None
        if not found:
            raise InputError(
                "a directory with no .json, .yaml or .yml file in it (its subdirectories are not read)",
                source=path,
                field="--cluster",
            )
        out += found
    return out


def _is_entry(path: str) -> bool:
    """Something a directory's read takes when its name ends right: anything there but a
    directory (a subdirectory is not read; a pod's folder of logs in a cluster-info dump may be
    named `x.json`). A FIFO, a device, a dangling or looping symbolic link are taken, so that
    their reader names them, rather than left out without a word."""
    return os.path.lexists(path) and not os.path.isdir(path)


def _object_files(folder: str) -> list[str]:
    """The files of `folder` a snapshot read takes, in name order."""
    return [
        os.path.join(folder, n)
        for n in sorted(os.listdir(folder))
        if n.endswith(SNAPSHOT_EXTENSIONS) and _is_entry(os.path.join(folder, n))
    ]


# the lists `kubectl cluster-info dump --output-directory` writes in each namespace folder besides
# pods and events
_DUMP_LISTS = ("replication-controllers", "services", "daemonsets", "deployments", "replicasets")


def _dump_namespaces(path: str) -> list[str]:
    """The namespace folders of `path` when `kubectl cluster-info dump --output-directory` wrote it
    (`nodes.json` in it, and per namespace a folder with `pods.json`, `services.json`, ... and a
    folder of logs per pod), in name order; else none. The JSON or YAML dump alike. A folder with
    the dump's lists but no pods file is an error (kubectl writes one for every namespace): its
    pods would otherwise be left out without a word."""
    if not any(_is_entry(os.path.join(path, "nodes" + ext)) for ext in SNAPSHOT_EXTENSIONS):
        return []
    out = []
    for f in (os.path.join(path, n) for n in sorted(os.listdir(path))):
        if not os.path.isdir(f):
            continue
        if any(_is_entry(os.path.join(f, "pods" + ext)) for ext in SNAPSHOT_EXTENSIONS):
            out.append(f)
        elif any(_is_entry(os.path.join(f, n + ext)) for n in _DUMP_LISTS for ext in SNAPSHOT_EXTENSIONS):
            raise InputError(
                "a namespace folder of a `kubectl cluster-info dump` directory without its pods.json "
                "(or pods.yaml) file: its pods are not known",
                source=f,
                field="--cluster",
            )
    return out


def _is_dump_events(path: str) -> bool:
    """A namespace's events in a cluster-info dump: no object kube-scheduler reads, and often the
    largest file."""
    return os.path.splitext(os.path.basename(path))[0] == "events"


def cluster_files(
    cluster: list[str] | None,
    context: str | None = None,
    kubeconfig: str | None = None,
    request_timeout: str = "30s",
    save_snapshot: str | None = None,
    verbose: bool = False,
) -> ClusterFiles:
    """The snapshot files to read: those named with --cluster, else one holding what kubectl read
    from the live cluster (kept with --save-snapshot), with its API server's version."""
    if cluster:
        live_flags = (("--context", context), ("--kubeconfig", kubeconfig), ("--save-snapshot", save_snapshot))
        given = [flag for flag, value in live_flags if value]
        if given:
            raise InputError(f"{given[0]} reads the live cluster: it does not go with --cluster", field=given[0])
        return ClusterFiles(_files_of_directories(cluster))
    from .live import LiveOptions, read_live_cluster  # kubectl's code only when the cluster is live

    live = LiveOptions(context, kubeconfig, request_timeout, save_snapshot)
    read = read_live_cluster(live)
    for warning in read.warnings:  # a kind RBAC forbids: what the answer ignores
        print(warning, file=sys.stderr)
    if verbose:
        target = read.target
        saved = f", saved to {live.save_snapshot}" if live.save_snapshot else ""
        server = f", API server {read.server_version}" if read.server_version else ", API server version unknown"
        print(
            f"ksched: read the cluster of context {target.context} ({target.server}) with kubectl{server}{saved}",
            file=sys.stderr,
        )
        for why in sorted(set(read.skipped.values())):
            kinds = ", ".join(k for k, w in read.skipped.items() if w == why)
            print(f"ksched: not read ({why}): {kinds}", file=sys.stderr)
    return ClusterFiles([read.path], read.server_version)


def server_version(files: list[str]) -> str | None:
    """The live cluster's API server version, when `files` came from kubectl (ClusterFiles)."""
    return getattr(files, "server_version", None)


def pod_ref(pod: str | None, filename: str | None, namespace: str | None) -> PodRef:
    """POD as typed: `-f FILE` (or `-f -`), a file, `NAMESPACE/NAME`, or `NAME` with `-n NAMESPACE`."""
    if filename is not None:
        if pod is not None:
            raise InputError(f"give the pod either as POD ({pod!r}) or with -f, not both", field="-f")
        if namespace is not None:
            raise InputError(
                "-n names the namespace of a pod given by NAME; the pod of a -f file carries its own",
                field="--namespace",
            )
        return PodRef(filename, True)
    if pod is None:
        raise InputError("which pod? Give a file (-f FILE, '-' for stdin), NAME or NAMESPACE/NAME", field="POD")
    if namespace is None:
        return PodRef(pod, False)
    if "/" in pod:
        ns, _, name = pod.partition("/")
        if ns != namespace:
            raise InputError(f"{pod!r} is in namespace {ns!r}, not {namespace!r} (-n)", field="--namespace")
        return PodRef(pod, False)
    return PodRef(f"{namespace}/{pod}", False)


def pods_source(
    pods: str | None, filename: str | None, namespace: str | None, all_namespaces: bool
) -> tuple[str | None, str | None]:
    """schedule's pods: (a file of pods, or None for the pending pods of the cluster; the namespace
    those are taken from, None for every namespace)."""
    if filename is not None and pods is not None:
        raise InputError(f"give the pods either as PODS ({pods!r}) or with -f, not both", field="-f")
    path = filename if filename is not None else pods
    if namespace is not None and all_namespaces:
        raise InputError("-n and -A (--all-namespaces) contradict each other", field="--namespace")
    if path is not None and namespace is not None:
        raise InputError(
            "-n picks pending pods of the cluster by namespace; it does not go with a file of pods", field="--namespace"
        )
    return path, namespace


def in_namespace(found: list[tuple[dict, str, str]], namespace: str | None) -> list[tuple[dict, str, str]]:
    """The pending pods (object, file, where) of one namespace; all of them for None."""
    if namespace is None:
        return found

    def ns_of(obj: dict) -> str:
        meta = obj.get("metadata")
        return (meta.get("namespace") if isinstance(meta, dict) else None) or "default"

    return [x for x in found if ns_of(x[0]) == namespace]


# -- files ksched writes (--report FILE.html, --save-snapshot FILE) ---------------------------------
# checked before anything is read or asked: a file it can replace (its folder there and writable;
# not a directory, a device, a FIFO or a socket) that is none of the command's inputs, so that
# ksched never writes over what it reads. An input given as a directory stands for the files in it
# that a read of it takes (those ending .json, .yaml or .yml, directly in it): writing one of them
# is writing an input too.


def _same(a: str, b: str) -> bool:
    if os.path.abspath(a) == os.path.abspath(b) or os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _read_from(directory: str, path: str) -> bool:
    """Whether `path` is (or, written, would be) one of the files a read of `directory` takes."""
    if not path.endswith(SNAPSHOT_EXTENSIONS):
        return False
    folder = os.path.dirname(os.path.abspath(path)) or "."
    try:
        namespaces = _dump_namespaces(directory)
    except OSError:
        namespaces = []
    return any(_same(folder, f) for f in [directory, *namespaces])


def check_output_file(path: str, inputs: Iterable[str], field: str, what: str) -> None:
    """`path` (the value of option `field`, which writes `what` there) is a file ksched may replace
    and none of `inputs` (the command's other values as given: a file, @FILE, a directory, or
    anything else). Else one InputError line naming `field`."""
    if not path.strip():
        raise InputError("expected a file name, not an empty value", field=field)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"cannot write {what}: no such directory {folder}", source=path, field=field)
    if os.path.isdir(path):
        raise InputError("is a directory, not a file", source=path, field=field)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        st = None  # not there yet (or a dangling or looping link, which is replaced)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"is not a regular file (a device, a FIFO or a socket): {what} is written as a new file that replaces it",
            source=path,
            field=field,
        )
    for value in inputs:
        for candidate in {value, value[1:]} if value.startswith("@") else {value}:
            if not candidate or candidate == "-":
                continue
            if _same(candidate, path):
                raise InputError(f"is also an input of this command: {what} would replace it", source=path, field=field)
            if os.path.isdir(candidate) and _read_from(candidate, path):
                raise InputError(
                    f"is one of the files of {candidate}, an input of this command: {what} would replace it",
                    source=path,
                    field=field,
                )
    if not os.access(folder, os.W_OK):
        raise InputError(f"cannot write {what}: {folder}: permission denied", source=path, field=field)
