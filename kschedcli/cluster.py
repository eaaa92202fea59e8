"""The cluster as the scheduler's informers see it: typed nodes and pods plus the other objects."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

from .errors import InputError
from .loader import iter_objects
from .model import Node, Pod, meta_of

# kinds kept as plain dicts, keyed (namespace, name)
OTHER_KINDS = {
    "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
    "PodDisruptionBudget", "Service", "ReplicaSet", "StatefulSet", "ReplicationController",
    "Namespace", "PriorityClass", "ResourceClaim", "DeviceClass", "ResourceSlice",
    "CSIStorageCapacity", "VolumeAttachment",
}

BUILTIN_PRIORITY_CLASSES = {
    "system-cluster-critical": (2000000000, None),
    "system-node-critical": (2000001000, None),
}
BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Cluster:
    def __init__(self):
        self.nodes: list[Node] = []
        self.pods: list[Pod] = []                 # bound, non-terminal pods
        self.objects: dict[str, dict[tuple[str, str], dict]] = defaultdict(dict)
        self.ignored: Counter = Counter()         # kinds ksched does not use
        self.skipped: Counter = Counter()         # pods the scheduler never sees (terminal, pending)
        self.priorities: dict[str, tuple[int, str | None]] = dict(BUILTIN_PRIORITY_CLASSES)
        self.default_priority: tuple[str, int, str | None] | None = None
        self.namespace_labels: dict[str, dict[str, str]] = {
            ns: {"kubernetes.io/metadata.name": ns} for ns in BUILTIN_NAMESPACES}
        self.sources: list[str] = []

    # -- lookups used by plugins --------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        return self.objects[kind].get((namespace, name))

    def list(self, kind: str, namespace: str | None = None) -> list[dict]:
        objs = self.objects.get(kind, {})
        if namespace is None:
            return list(objs.values())
        return [o for (ns, _), o in objs.items() if ns == namespace]

    def default_storage_class(self) -> str | None:
        best = None
        for (_, name), sc in sorted(self.objects.get("StorageClass", {}).items()):
            ann = (sc.get("metadata") or {}).get("annotations") or {}
            if ann.get("storageclass.kubernetes.io/is-default-class") == "true":
                best = name
        return best

    def parse_pod(self, raw: dict, source: str, where: str) -> Pod:
        try:
            return Pod(raw, self.priorities, self.default_priority)
        except InputError as e:
            raise e.located(source=source, where=where) from None


def load_cluster(paths: Iterable[str]) -> Cluster:
    """Read snapshot files into a Cluster. Two passes: priority classes and namespaces first,
    because pod defaulting depends on them."""
    cluster = Cluster()
    raw_nodes: list[tuple[dict, str, str]] = []
    raw_pods: list[tuple[dict, str, str]] = []
    for path in paths:
        cluster.sources.append(path)
        for obj, where in iter_objects(path):
            kind = obj.get("kind")
            if not isinstance(kind, str) or not kind:
                raise InputError("object has no kind", source=path, where=where)
            if kind == "Node":
                raw_nodes.append((obj, path, where))
            elif kind == "Pod":
                raw_pods.append((obj, path, where))
            elif kind in OTHER_KINDS:
                ns, name = meta_of(obj)
                if kind == "PersistentVolumeClaim" and not ns:
                    ns = "default"
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
    for (_, name), ns in cluster.objects.get("Namespace", {}).items():
        labels = dict(((ns.get("metadata") or {}).get("labels") or {}))
        labels["kubernetes.io/metadata.name"] = name
        cluster.namespace_labels[name] = labels
    seen_nodes = set()
    for obj, path, where in raw_nodes:
        try:
            node = Node(obj)
        except InputError as e:
            raise e.located(source=path, where=where) from None
        if node.name in seen_nodes:
            raise InputError(f"node {node.name} appears twice", source=path, where=where)
        seen_nodes.add(node.name)
        cluster.nodes.append(node)
    for obj, path, where in raw_pods:
        status = obj.get("status") or {}
        if isinstance(status, dict) and status.get("phase") in ("Succeeded", "Failed"):
            cluster.skipped["terminal pods"] += 1
            continue
        spec = obj.get("spec") or {}
        if not (isinstance(spec, dict) and spec.get("nodeName")):
            cluster.skipped["pending pods (not in the scheduler's cache)"] += 1
            continue
        pod = cluster.parse_pod(obj, path, where)
        cluster.pods.append(pod)
        cluster.namespace_labels.setdefault(pod.namespace, {"kubernetes.io/metadata.name": pod.namespace})
    return cluster


def load_pending_pods(path: str, cluster: Cluster) -> list[Pod]:
    """The pods to schedule. Every object must be a Pod."""
    pods = []
    for obj, where in iter_objects(path):
        if obj.get("kind") != "Pod":
            raise InputError(f"expected a Pod, found {obj.get('kind') or 'an object without kind'}",
                             source=path, where=where)
        pod = cluster.parse_pod(obj, path, where)
        if pod.node_name:
            # A pod that names its node still goes through a cycle: NodeName filters the rest.
            pass
        pods.append(pod)
    if not pods:
        raise InputError("no Pod found", source=path)
    return pods
