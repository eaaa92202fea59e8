"""The cluster as the scheduler's informers see it: typed nodes and pods plus the other objects."""

from __future__ import annotations

import builtins  # Cluster.list shadows the name in its class body
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from marshal import dumps as _marshal_dumps
from sys import intern as _intern
from typing import Any

from .. import progress
from ..api.model import Node, Pod, meta_of
from ..api.validation import snapshot_object_problem
from ..config.versions import REFERENCE, Choice, Release
from ..errors import InputError
from ..loader import iter_located, iter_objects, no_gc
from ..loader import where as located_at
from .lookup import is_pending_pod

# kinds kept as plain dicts, keyed (namespace, name)
OTHER_KINDS = {
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "PodDisruptionBudget",
    "Service",
    "ReplicaSet",
    "StatefulSet",
    "ReplicationController",
    "Namespace",
    "PriorityClass",
    "ResourceClaim",
    "DeviceClass",
    "ResourceSlice",
    "CSIStorageCapacity",
    "VolumeAttachment",
    # workloads: read by kschedcli.workloads.expansion (a workload of the snapshot creates only missing pods)
    "Deployment",
    "DaemonSet",
    "Job",
    "CronJob",
}

BUILTIN_PRIORITY_CLASSES = {"system-cluster-critical": (2000000000, None), "system-node-critical": (2000001000, None)}
NAMESPACED_KINDS = {
    "PersistentVolumeClaim",
    "PodDisruptionBudget",
    "Service",
    "ReplicaSet",
    "StatefulSet",
    "ReplicationController",
    "ResourceClaim",
    "CSIStorageCapacity",
    "Deployment",
    "DaemonSet",
    "Job",
    "CronJob",
}
BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Cluster:
    def __init__(self):
        self.nodes: list[Node] = []
        # bound, non-terminal pods (`pods`); read from the snapshot cache, the PodStore they are
        # made from when first read (lazy_pods.py), `_pods` None until then
        self._pods: list[Pod] | None = []
        self._pod_store: Any = None
        self.nominated_pods: list[Pod] = []  # pending pods with status.nominatedNodeName
        self.objects: dict[str, dict[tuple[str, str], dict]] = defaultdict(dict)
        self.ignored: Counter = Counter()  # kinds ksched does not use
        self.skipped: Counter = Counter()  # pods the scheduler never sees (terminal, pending)
        self.priorities: dict[str, tuple[int, str | None]] = dict(BUILTIN_PRIORITY_CLASSES)
        self.default_priority: tuple[str, int, str | None] | None = None
        self.namespace_labels: dict[str, dict[str, str]] = {
            ns: {"kubernetes.io/metadata.name": ns} for ns in BUILTIN_NAMESPACES
        }
        self.sources: list[str] = []
        # every pending pod object of the files, in order, with its file and location (loader.where):
        # what `explain NAMESPACE/NAME` looks up (lookup.py), without reading the files again
        self.pending: list[tuple[dict, str, tuple]] = []
        self.version: Choice = Choice(REFERENCE, "default", "no node reports a kubelet version")
        self.release: Release | None = None  # the release its pods follow (follow()); None: as written
        self.from_cache = False  # read from the snapshot cache (load_cluster_cached)
        # the scheduler's snapshot of these nodes and pods, built ahead (snapshot.PrebuiltSnapshot:
        # the snapshot cache stores one); dropped when following a release changes a pod
        self.prebuilt_snapshot: Any = None

    @property
    def pods(self) -> list[Pod]:
        pods = self._pods
        if pods is None:
            pods = self._pods = self._pod_store.all()
        return pods

    @pods.setter
    def pods(self, pods: list[Pod]) -> None:
        self._pods = pods

    def bound_pod_count(self) -> int:
        """len(self.pods), without making the pods a cached cluster has not read yet."""
        return len(self._pod_store) if self._pods is None else len(self._pods)

    def take_prebuilt_snapshot(self) -> Any:
        """The prebuilt scheduler's snapshot of these nodes and pods (snapshot.PrebuiltSnapshot.take),
        or None; pods still in the store are those it was built from."""
        if self.prebuilt_snapshot is None:
            return None
        return self.prebuilt_snapshot.take(self.nodes, self._pods)

    def follow(self, version: Choice) -> None:
        """Follow the release `version` chose: hold every pod as a cluster of that release does
        (model.Pod.follow_release), pods parsed from now on too."""
        self.version = version
        self.release = version.release
        changed = False
        # pods still in the store: only those with a field follow_release may replace
        for pod in self._pod_store.follower_pods() if self._pods is None else self._pods:
            # the fields follow_release may replace, tested here: most pods have none of them
            if (pod.pod_level_requests or pod.resource_claims or pod.host_ports) and pod.follow_release(
                version.release
            ):
                changed = True
        if changed:
            self.prebuilt_snapshot = None  # built from the pods as they were

    # -- lookups used by plugins --------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        lookup = getattr(self.objects, "lookup", None)  # read from the cache: cache_pickle.LazyKinds
        if lookup is not None:
            return lookup(kind, namespace, name)
        return self.objects[kind].get((namespace, name))

    def table(self, kind: str, namespace: str) -> Mapping[tuple[str, str], dict]:
        """For many lookups of one kind in one namespace: a mapping holding each of those objects
        under (namespace, name), as `get` finds them (perhaps other namespaces' too)."""
        table = getattr(self.objects, "table", None)  # read from the cache: cache_pickle.LazyKinds
        if table is not None:
            return table(kind, namespace)
        return self.objects.get(kind) or {}

    def list(self, kind: str, namespace: str | None = None) -> list[dict]:
        objs = self.objects.get(kind, {})
        if namespace is None:
            return list(objs.values())
        return [o for (ns, _), o in objs.items() if ns == namespace]

    def default_storage_class(self) -> str | None:
        """GetDefaultClass (DefaultStorageClass admission): among classes annotated default (GA or
        beta annotation), the newest by creationTimestamp, ties broken by the smallest name."""
        from datetime import datetime

        def created(sc: dict) -> float:
            ts = (sc.get("metadata") or {}).get("creationTimestamp")
            if not isinstance(ts, str) or not ts:
                return float("-inf")
            try:
                return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
            except ValueError:
                return float("-inf")

        defaults = []
        for (_, name), sc in self.objects.get("StorageClass", {}).items():
            ann = (sc.get("metadata") or {}).get("annotations") or {}
            if "true" in (
                ann.get("storageclass.kubernetes.io/is-default-class"),
                ann.get("storageclass.beta.kubernetes.io/is-default-class"),
            ):
                defaults.append((-created(sc), name))
        return min(defaults)[1] if defaults else None

    def pending_pods(self) -> builtins.list[tuple[dict, str, str]]:
        """The files' pending pods as lookup.pending_pods gives them: (object, file, where in it)."""
        return [(obj, path, located_at(obj, loc)) for obj, path, loc in self.pending]

    def parse_pod(self, raw: dict, source: str, where: str) -> Pod:
        try:
            pod = Pod(raw, self.priorities, self.default_priority)
        except InputError as e:
            raise e.located(source=source, where=where) from None
        if self.release is not None:
            pod.follow_release(self.release)
        return pod


# Fields of a bound pod that no scheduler code reads (kubelet-only container settings, status
# details); dropped while reading a snapshot so 150,000 pods stay small. Pending pods are kept whole.
_CONTAINER_UNUSED = frozenset(
    (
        "env",
        "envFrom",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "lifecycle",
        "volumeMounts",
        "volumeDevices",
        "command",
        "args",
        "securityContext",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "workingDir",
        "imagePullPolicy",
        "stdin",
        "stdinOnce",
        "tty",
    )
)
_STATUS_UNUSED = frozenset(("hostIP", "hostIPs", "podIP", "podIPs", "observedGeneration"))
_CONTAINER_STATUS_KEPT = ("name", "resources", "allocatedResources")
# conditions every running pod has; others (DisruptionTarget, PodResizePending, ...) are kept
_ROUTINE_CONDITIONS = frozenset(
    ("Ready", "Initialized", "ContainersReady", "PodReadyToStartContainers", "PodScheduled")
)
_VOLUME_CONTENT_UNUSED = ("projected", "configMap", "secret", "downwardAPI")
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _slim_containers(cs):
    if type(cs) is not list:
        return cs
    return [{k: v for k, v in c.items() if k not in _CONTAINER_UNUSED} if type(c) is dict else c for c in cs]


# Equal parts of bound pods are shared: the pods of one workload repeat the same containers,
# tolerations, affinity, labels, owner... once per pod. One object per distinct value keeps the
# snapshot small, makes the loader's worker results compact (shared objects travel once), and
# lets Pod construction reuse what it derived from identical parts (model._template_key).
# Values are keyed by their marshal serialisation, which tells True from 1 from 1.0 and keeps key
# order (equal bytes, equal values of the same types): a shared object is indistinguishable from
# the one it replaces. The scheduler never modifies a pod's raw object.
_SHARED: dict[bytes, object] = {}
_SHARED_MAX = 100000
# the parts shared, where they are lists or objects; the strings shared
_SHARED_SPEC = frozenset(
    (
        "containers",
        "initContainers",
        "ephemeralContainers",
        "tolerations",
        "affinity",
        "nodeSelector",
        "topologySpreadConstraints",
        "securityContext",
        "overhead",
        "resources",
        "schedulingGates",
        "resourceClaims",
        "dnsConfig",
        "imagePullSecrets",
        "readinessGates",
        "hostAliases",
        "os",
    )
)
_STRING_SPEC = frozenset(
    (
        "nodeName",
        "schedulerName",
        "dnsPolicy",
        "restartPolicy",
        "serviceAccount",
        "serviceAccountName",
        "priorityClassName",
        "preemptionPolicy",
        "runtimeClassName",
        "subdomain",
    )
)
_SHARED_META = frozenset(("labels", "annotations", "ownerReferences"))
_STRING_META = frozenset(("namespace", "generateName"))
_STRING_STATUS = frozenset(("phase", "qosClass"))
_CONTAINER_KEYS = frozenset(("containers", "initContainers", "ephemeralContainers"))


_EMPTY_LIST: list = []
_EMPTY_DICT: dict = {}


def _shared(v):
    if not v:
        return _EMPTY_LIST if type(v) is list else _EMPTY_DICT
    try:
        key = _marshal_dumps(v)
    except ValueError:  # a value marshal does not take (a YAML timestamp): kept as it is
        return v
    s = _SHARED.get(key)
    if s is None:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        _SHARED[key] = v
        return v
    return s


def reset_shared() -> None:
    """Forget the shared values (the objects stay with the pods that hold them)."""
    _SHARED.clear()


def _slim_volumes(vols: list) -> list:
    slim_vols = []
    for v in vols:
        if type(v) is dict:
            for src in _VOLUME_CONTENT_UNUSED:
                if type(v.get(src)) is dict:
                    v = {**v, src: {}}
        slim_vols.append(v)
    return slim_vols


def slim_object(obj: dict) -> dict:
    """The loader's transform for snapshots: a pod bound to a node, without the fields above,
    its parts shared with equal parts of the pods read before it (see _SHARED). Any other object
    is returned as it is. Shapes the scheduler validates are left alone; the source object is not
    modified."""
    if obj.get("kind") != "Pod":
        return obj
    spec = obj.get("spec")
    if type(spec) is not dict or not spec.get("nodeName"):
        return obj
    out = dict(obj)
    for k in ("apiVersion", "kind"):
        v = out.get(k)
        if type(v) is str:
            out[k] = _intern(v)
    spec = dict(spec)
    out["spec"] = spec
    for k in spec.keys() & _SHARED_SPEC:
        v = spec[k]
        if type(v) is list or type(v) is dict:
            if k in _CONTAINER_KEYS:
                v = _slim_containers(v)
            spec[k] = _shared(v)
    for k in spec.keys() & _STRING_SPEC:
        v = spec[k]
        if type(v) is str:
            spec[k] = _intern(v)
    vols = spec.get("volumes")
    if type(vols) is list:
        spec["volumes"] = _slim_volumes(vols)
    meta = obj.get("metadata")
    if type(meta) is dict:
        if "managedFields" in meta or _LAST_APPLIED in (meta.get("annotations") or ()):
            meta = {k: v for k, v in meta.items() if k != "managedFields"}
            ann = meta.get("annotations")
            if type(ann) is dict and _LAST_APPLIED in ann:
                meta["annotations"] = {k: v for k, v in ann.items() if k != _LAST_APPLIED}
        else:
            meta = dict(meta)
        for k in meta.keys() & _SHARED_META:
            v = meta[k]
            if type(v) is dict or type(v) is list:
                meta[k] = _shared(v)
        for k in meta.keys() & _STRING_META:
            v = meta[k]
            if type(v) is str:
                meta[k] = _intern(v)
        out["metadata"] = meta
    status = obj.get("status")
    if type(status) is dict:
        status = dict(status)
        for k in status.keys() & _STATUS_UNUSED:
            del status[k]
        conds = status.get("conditions")
        if type(conds) is list:
            status["conditions"] = _shared(
                [
                    c
                    for c in conds
                    if not (type(c) is dict and c.get("type") in _ROUTINE_CONDITIONS and c.get("status") == "True")
                ]
            )
        for key in ("containerStatuses", "initContainerStatuses"):
            css = status.get(key)
            if type(css) is list:
                status[key] = _shared(
                    [{k: c[k] for k in _CONTAINER_STATUS_KEPT if k in c} if type(c) is dict else c for c in css]
                )
        for k in status.keys() & _STRING_STATUS:
            v = status[k]
            if type(v) is str:
                status[k] = _intern(v)
        out["status"] = status
    return out


slim_object.reset = reset_shared  # type: ignore[attr-defined]  # called by the loader's workers


def load_cluster(paths: Iterable[str]) -> Cluster:
    """Read snapshot files into a Cluster. Two passes: priority classes and namespaces first,
    because pod defaulting depends on them. Bound pods keep only the fields the scheduler reads
    (`slim_object`), so their `raw` is a trimmed copy of the source object."""
    with no_gc():
        try:
            cluster = _load_cluster(paths)
        finally:
            reset_shared()
        if len(cluster.pods) > 2000:
            # the snapshot lives as long as the process: keep it out of every collection. Frozen
            # before collection resumes, which would otherwise first pass over all of it
            import gc

            gc.freeze()
    return cluster


def load_cluster_cached(paths: Iterable[str], *, cache: bool = True) -> Cluster:
    """load_cluster through the snapshot cache (inputs/cache.py): a good entry for these files in
    place of reading them; else read, and stored for the next command. cache=False: read, and
    nothing stored."""
    from . import cache as snapshot_cache

    files = list(paths)
    with no_gc():
        cluster, hit = snapshot_cache.cached(files, load_cluster, prepare=_with_prebuilt_snapshot, use=cache)
        if hit and cluster.bound_pod_count() > 2000:
            import gc

            gc.freeze()  # as load_cluster does: the snapshot lives as long as the process
    cluster.from_cache = hit
    if hit and cluster.sources != files and len(cluster.sources) == len(files):
        # an entry keyed by content (a live read) was parsed from another temporary file: name this one
        renamed = dict(zip(cluster.sources, files))
        cluster.pending = [(obj, renamed.get(path, path), loc) for obj, path, loc in cluster.pending]
        cluster.sources = files
    return cluster


def _with_prebuilt_snapshot(cluster: Cluster) -> Cluster:
    """The cluster as the snapshot cache stores it: the scheduler's snapshot of its nodes and pods
    built (the reader's Scheduler takes it instead of grouping and summing every pod), the bound
    pods' and nodes' source objects kept marshalled until one is read (snapshot_pickle.defer_raws),
    the bound pods kept in a PodStore, each made when first read (lazy_pods.py)."""
    from ..backend.snapshot import PrebuiltSnapshot
    from .cache_pickle import RawList, defer_raws
    from .lazy_pods import store_pods

    if cluster.pending:
        cluster.pending = RawList.of(list(cluster.pending))  # type: ignore[assignment]  # read as a list
    prebuilt = cluster.prebuilt_snapshot = PrebuiltSnapshot(cluster.nodes, cluster.pods)
    _share_equal(cluster.nodes, prebuilt.snapshot)
    defer_raws(cluster.nodes)
    for pod in cluster.pods:
        pod._cache = {}  # what building the snapshot kept there is not needed again: not stored
        pod._key = None  # namespace/name, made again when asked for (an explain asks for none)
    prebuilt.build_indexes()  # what they keep in the pods' caches is stored with the pods
    store = store_pods(prebuilt, cluster.pods)
    if store is not None:
        cluster._pod_store, cluster._pods = store, None
        return cluster
    prebuilt.indexes = []  # they refer to the pods' caches, not stored
    defer_raws(cluster.pods)
    for pod in cluster.pods:
        pod._cache = {}
    return cluster


def _share_equal(nodes: list[Node], snapshot: Any) -> None:
    """Equal values of the nodes held once, as one object, so that an entry stores them once and a
    reader makes them once: each image (names and size; at 5,000 nodes 173,000 images of 2,100
    kinds, 36 MB of names), the names the snapshot's image states are keyed by, the labels' keys and
    values, the allocatable amounts. The values are unchanged; only who holds which copy."""
    images: dict = {}
    words: dict[str, str] = {}
    amounts: dict[tuple, Any] = {}  # nodes of one type have the same allocatable (nothing changes one in place)
    for node in nodes:
        node.images = [images.setdefault(image, image) for image in node.images]
        node.labels = {words.setdefault(k, k): words.setdefault(v, v) for k, v in node.labels.items()}
        a = node.allocatable
        key = (a.milli_cpu, a.memory, a.ephemeral_storage, a.allowed_pods, *a.scalars.items())
        node.allocatable = amounts.setdefault(key, a)
    for names, _ in images:
        for name in names:
            words.setdefault(name, name)
    if snapshot is not None:
        for ni in snapshot.node_infos:
            ni.image_states = {words.get(name, name): state for name, state in ni.image_states.items()}


def _is_terminal(status) -> bool:
    status = status or {}
    return isinstance(status, dict) and status.get("phase") in ("Succeeded", "Failed")


def _is_nominated(status) -> bool:
    return isinstance(status, dict) and bool(status.get("nominatedNodeName"))


def _is_bound(spec) -> bool:
    spec = spec or {}
    return isinstance(spec, dict) and bool(spec.get("nodeName"))


class _Prebuilt:
    """Nodes and bound pods built from the objects the loader's worker processes deliver, while
    they read on (loader.load_documents' on_items). Nothing is raised here: an object that does
    not build is built again in order by _load_cluster, which reports it. Pods are built before
    the PriorityClasses are all known, so _load_cluster admits their priority again."""

    def __init__(self, templates: dict):
        self.templates = templates
        self.built: dict[int, tuple[dict, Node | Pod]] = {}

    def __call__(self, objs: list) -> None:
        built, templates = self.built, self.templates
        for obj in objs:
            try:
                if type(obj) is not dict:
                    continue
                kind = obj.get("kind")
                if kind == "Pod":
                    if _is_terminal(obj.get("status")) or not _is_bound(obj.get("spec")):
                        continue
                    built[id(obj)] = (obj, Pod(obj, None, None, templates))
                elif kind == "Node":
                    built[id(obj)] = (obj, Node(obj))
            except Exception:  # noqa: BLE001 - built again, and reported, in order
                pass

    def get(self, obj: dict):
        hit = self.built.pop(id(obj), None)
        return hit[1] if hit is not None and hit[0] is obj else None


def _same_object(obj: dict) -> tuple | None:
    """What makes two listings of an object the same object in the same state: its namespace,
    name, uid and resourceVersion (None without a uid and a resourceVersion, as in a snapshot
    written by hand). Two exports that overlap (`-A` and `-n kube-system`) list it twice."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return None
    uid, version = meta.get("uid"), meta.get("resourceVersion")
    if not uid or not version or not isinstance(uid, str) or not isinstance(version, str):
        return None
    return (meta.get("namespace"), meta.get("name"), uid, version)


def _load_cluster(paths: Iterable[str]) -> Cluster:
    cluster = Cluster()
    raw_nodes: list[tuple[dict, str, tuple]] = []  # (object, file, location: loader.where)
    raw_pods: list[tuple[dict, str, tuple]] = []
    templates: dict = {}  # what pods with the same (shared) parts derive alike: model.Pod
    prebuilt = _Prebuilt(templates)
    pending_seen: set[tuple] = set()  # _same_object of the pending pods listed
    for path in paths:
        cluster.sources.append(path)
        for obj, loc in iter_located(path, slim_object, prebuilt):
            kind = obj.get("kind")
            if not isinstance(kind, str) or not kind:
                raise InputError("object has no kind", source=path, where=located_at(obj, loc))
            if kind == "Node":
                raw_nodes.append((obj, path, loc))
            elif kind == "Pod":
                raw_pods.append((obj, path, loc))
                if is_pending_pod(obj):
                    same = _same_object(obj)
                    if same is None or same not in pending_seen:
                        cluster.pending.append((obj, path, loc))
                    if same is not None:
                        pending_seen.add(same)
            elif kind in OTHER_KINDS:
                problem = snapshot_object_problem(obj, kind)
                if problem is not None:
                    where = located_at(obj, loc)
                    raise InputError(problem.message, source=path, where=where, field=problem.field)
                ns, name = meta_of(obj)
                if not ns and kind in NAMESPACED_KINDS:
                    ns = "default"  # as the API server stores an object created without a namespace
                cluster.objects[kind][(ns, name)] = obj
            else:
                cluster.ignored[kind] += 1
    for (_, name), pc in cluster.objects.get("PriorityClass", {}).items():
        value = pc.get("value", 0)
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{value!r} is not an integer", source="", where=f"PriorityClass {name}", field="value")
        cluster.priorities[name] = (value, pc.get("preemptionPolicy"))
        if pc.get("globalDefault"):
            cluster.default_priority = (name, value, pc.get("preemptionPolicy"))
    for (_, name), ns_obj in cluster.objects.get("Namespace", {}).items():
        labels = dict((ns_obj.get("metadata") or {}).get("labels") or {})
        labels["kubernetes.io/metadata.name"] = name
        cluster.namespace_labels[name] = labels
    seen_nodes: dict[str, tuple | None] = {}
    for obj, path, loc in raw_nodes:
        node = prebuilt.get(obj)
        if node is None:
            try:
                node = Node(obj)
            except InputError as e:
                raise e.located(source=path, where=located_at(obj, loc)) from None
        if node.name in seen_nodes:
            same = _same_object(obj)
            if same is not None and seen_nodes[node.name] == same:
                continue  # the same object listed twice (overlapping exports): one node
            raise InputError(f"node {node.name} appears twice", source=path, where=located_at(obj, loc))
        seen_nodes[node.name] = _same_object(obj)
        cluster.nodes.append(node)
    priorities, default_priority = cluster.priorities, cluster.default_priority
    seen_pods: dict[str, tuple | None] = {}
    with progress.task("Reading pods", total=len(raw_pods), unit="pods") as task:
        for n, (obj, path, loc) in enumerate(raw_pods):
            if not n & 4095:
                task.update(n)
            pod = prebuilt.get(obj)  # prebuilt pods are bound and not terminal
            if pod is None:
                if _is_terminal(obj.get("status")):
                    cluster.skipped["terminal pods"] += 1
                    continue
                if not _is_bound(obj.get("spec")):
                    if not _is_nominated(obj.get("status")):
                        cluster.skipped["pending pods (not in the scheduler's cache)"] += 1
                        continue
                    # waiting for the node it preempted on: the scheduler's nominator holds it
                    try:
                        pod = Pod(obj, priorities, default_priority)
                    except InputError as e:
                        raise e.located(source=path, where=located_at(obj, loc)) from None
                    cluster.nominated_pods.append(pod)
                    cluster.namespace_labels.setdefault(pod.namespace, {"kubernetes.io/metadata.name": pod.namespace})
                    continue
            try:
                if pod is None:
                    pod = Pod(obj, priorities, default_priority, templates)
                elif type(obj["spec"].get("priority")) is not int:
                    # admitted without the PriorityClasses: again, now that all are known (an
                    # integer spec.priority, as the API server sets it, does not depend on them)
                    pod.admit_priority(obj["spec"], priorities, default_priority)
            except InputError as e:
                raise e.located(source=path, where=located_at(obj, loc)) from None
            key = pod.key
            if key in seen_pods and (obj.get("metadata") or {}).get("name"):
                same = _same_object(obj)
                if same is not None and seen_pods[key] == same:
                    continue  # the same object listed twice (overlapping exports): one pod
                # the API server keeps one pod per namespace and name (a snapshot read twice, or
                # two snapshots of one cluster, would count its pods twice)
                raise InputError(f"pod {key} appears twice", source=path, where=located_at(obj, loc))
            seen_pods[key] = _same_object(obj)
            cluster.pods.append(pod)
            if pod.namespace not in cluster.namespace_labels:
                cluster.namespace_labels[pod.namespace] = {"kubernetes.io/metadata.name": pod.namespace}
    return cluster


def load_pending_pods(
    path: str, cluster: Cluster, validate: str | None = None, warnings: list[str] | None = None
) -> list[Pod]:
    """The pods to schedule. Every object must be a Pod, as the API server would take it
    (validation.check_user_object; `validate`: strict, warn or ignore for unknown fields)."""
    return parse_pending_pods(list(iter_objects(path, as_kubectl=True)), path, cluster, validate, warnings)


def parse_pending_pods(
    objects: list[tuple[dict, str]],
    path: str,
    cluster: Cluster,
    validate: str | None = None,
    warnings: list[str] | None = None,
) -> list[Pod]:
    """The pods to schedule from the (object, where) pairs read from `path`, parsed against the
    cluster's PriorityClasses. Every object must be a Pod the API server would take. (A pod that
    names its node still goes through a cycle: NodeName filters the rest.)"""
    from ..api.validation import check_user_object

    pods = []
    for obj, where in objects:
        if obj.get("kind") != "Pod":
            raise InputError(
                f"expected a Pod, found {obj.get('kind') or 'an object without kind'}", source=path, where=where
            )
        check_user_object(obj, "Pod", path, where, validate, warnings)
        pods.append(cluster.parse_pod(obj, path, where))
    if not pods:
        raise InputError("no Pod found", source=path)
    return pods
