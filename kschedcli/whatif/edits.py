"""Cluster edits: what-if changes to the loaded cluster, applied in memory before any scheduling.

`--add-node`, `--remove-node`, `--cordon`, `--uncordon`, `--taint`, `--label` and `--evict` (and
a scenario file's `edits:`) become `Edit`s; `apply_edits` applies them in order to a Cluster's
typed nodes and pods, before the Scheduler builds its snapshot from them, and returns what each
did (`Applied`). The source objects are never modified: an edited node or pod is built again from
a changed copy of its object. Wherever a NODE is taken, a label selector (`kubectl -l` syntax)
selects every node it matches; a name of an existing node is always that node.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..api.labels import label_value_errors, parse_selector, qualified_name_errors
from ..api.model import Node, Pod
from ..errors import InputError, cut
from ..inputs.cluster import Cluster

HOSTNAME_LABEL = "kubernetes.io/hostname"
# the taint the node lifecycle controller keeps on a cordoned node (TaintNodesByCondition)
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# flag -> the key of the same edit in a scenario file
EDIT_FLAGS = {
    "--add-node": "addNode",
    "--remove-node": "removeNode",
    "--cordon": "cordon",
    "--uncordon": "uncordon",
    "--taint": "taint",
    "--label": "label",
    "--evict": "evict",
}


@dataclass(frozen=True)
class Edit:
    """One edit as given: the flag (`--cordon`) and its value (`pool=general`)."""

    flag: str
    value: str

    def __str__(self) -> str:
        return f"{self.flag} {self.value}"


@dataclass
class Applied:
    """What one edit did."""

    edit: Edit
    summary: str  # one line, for the terminal
    nodes: list[str] = field(default_factory=list)  # the nodes it changed, added or removed
    pods_added: list[str] = field(default_factory=list)
    pods_removed: list[str] = field(default_factory=list)
    replicas_lost: dict[str, int] = field(default_factory=dict)  # "Kind ns/name" -> pods removed

    def doc(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "flag": self.edit.flag,
            "value": self.edit.value,
            "summary": self.summary,
            "nodes": list(self.nodes),
        }
        if self.pods_added:
            d["podsAdded"] = list(self.pods_added)
        if self.pods_removed:
            d["podsRemoved"] = list(self.pods_removed)
        if self.replicas_lost:
            d["replicasLost"] = dict(self.replicas_lost)
        return d


def edits_doc(applied: list[Applied]) -> list[dict[str, Any]]:
    return [a.doc() for a in applied]


# ---------------------------------------------------------------------------- node selection


def select_nodes(cluster: Cluster, spec: str, flag: str) -> list[Node]:
    """The node named `spec`, else the nodes the label selector `spec` matches (at least one)."""
    for n in cluster.nodes:
        if n.name == spec:
            return [n]
    try:
        selector = parse_selector(spec)
    except ValueError as e:
        raise InputError(f"no node named {cut(spec)}, and not a label selector: {_short(str(e))}", field=flag) from None
    if not spec.strip():
        raise InputError("a node name or label selector is required", field=flag)
    found = [n for n in cluster.nodes if selector.matches(n.labels)]
    if not found:
        raise InputError(f"no node named {cut(spec)} or matching it as a label selector", field=flag)
    return found


def _short(reason: str, limit: int = 120) -> str:
    """A parse error's reason, which may quote the whole value, cut to `limit` characters."""
    return reason if len(reason) <= limit else reason[:limit] + "…"


def _node_names(nodes: list[Node]) -> list[str]:
    return [n.name for n in nodes]


SUMMARY_NAMES = 8  # names a summary line lists before `… +N more` (the JSON's `nodes` has them all)


def _listed(names: list[str]) -> str:
    if len(names) <= SUMMARY_NAMES:
        return ", ".join(names)
    return ", ".join(names[:SUMMARY_NAMES]) + f", … +{len(names) - SUMMARY_NAMES} more"


# ---------------------------------------------------------------------------- rebuilding objects


def _with_node_changes(node: Node, *, meta: dict | None = None, spec: dict | None = None) -> Node:
    """The node built again from a copy of its object whose metadata/spec take these keys."""
    raw = dict(node.raw)
    if meta is not None:
        raw["metadata"] = {**(raw.get("metadata") or {}), **meta}
    if spec is not None:
        raw["spec"] = {**(raw.get("spec") or {}), **spec}
    return Node(raw)


def _replace_nodes(cluster: Cluster, new_of: dict[int, Node]) -> None:
    """Put each rebuilt node (keyed by id of the node it replaces) in its place, in one pass."""
    if new_of:
        cluster.nodes = [new_of.get(id(n), n) for n in cluster.nodes]


def _taints_of(node: Node) -> list[dict]:
    return [t for t in ((node.raw.get("spec") or {}).get("taints") or []) if isinstance(t, dict)]


def owner_of(pod: Pod, cluster: Cluster) -> str:
    """The workload a pod belongs to, as `Kind namespace/name`: its controller, a ReplicaSet
    followed to its Deployment when the snapshot holds the ReplicaSet; `""` for a bare pod."""
    ref = pod.controller_ref()
    if ref is None:
        return ""
    kind, name = ref.get("kind") or "", ref.get("name") or ""
    if kind == "ReplicaSet":
        rs = cluster.get("ReplicaSet", pod.namespace, name)
        for o in ((rs or {}).get("metadata") or {}).get("ownerReferences") or []:
            if isinstance(o, dict) and o.get("controller") and o.get("kind") == "Deployment":
                return f"Deployment {pod.namespace}/{o.get('name') or ''}"
    return f"{kind} {pod.namespace}/{name}"


def is_daemonset_pod(pod: Pod) -> bool:
    ref = pod.controller_ref()
    return ref is not None and ref.get("kind") == "DaemonSet"


def _remove_pods(cluster: Cluster, doomed: set[int]) -> list[Pod]:
    removed = [p for p in cluster.pods if id(p) in doomed]
    cluster.pods = [p for p in cluster.pods if id(p) not in doomed]
    return removed


def _lost_replicas(cluster: Cluster, pods: list[Pod]) -> dict[str, int]:
    lost: dict[str, int] = {}
    for p in pods:
        owner = owner_of(p, cluster) or "bare pods (no controller)"
        lost[owner] = lost.get(owner, 0) + 1
    return dict(sorted(lost.items()))


# ---------------------------------------------------------------------------- the edits


# nodes the edits of ONE command (its --add-node flags and a scenario's addNode steps together) may
# add: twice the largest cluster Kubernetes supports (5,000 nodes), so a what-if can double any real
# cluster while a mistyped count (node:99999999999), or a hundred flags of 10,000 each, ends in one
# line, not a hang
MAX_ADDED_NODES = 10_000
_ADDED_NODES_WHY = "Kubernetes supports clusters of up to 5,000 nodes"


def add_node_file(value: str, exists=os.path.isfile) -> str | None:
    """The file an --add-node value names, None when it names nodes. A node name never reads a file:
    a file is `@PATH`, a name ending in .yaml, .yml or .json, or a value holding a path separator
    (which no node name holds) that names an existing file. A node of that exact name wins over all
    but `@PATH` (checked by the caller)."""
    if value.startswith("@") and len(value) > 1:
        return value[1:]
    if value.endswith((".yaml", ".yml", ".json")):
        return value
    if ("/" in value or os.sep in value) and exists(value):
        return value
    return None


def _too_many_added(value: str, flag: str, adding: int, before: int) -> InputError:
    total = f", {before + adding:,} with the edits before it" if before else ""
    return InputError(
        f"{cut(value)}: would add {adding:,} node{'s' if adding != 1 else ''}{total}; "
        f"the edits of one command add at most {MAX_ADDED_NODES:,} nodes ({_ADDED_NODES_WHY})",
        field=flag,
    )


def _add_node(cluster: Cluster, e: Edit, added_before: int = 0) -> Applied:
    value = e.value
    path = add_node_file(value)
    if path is not None and (value.startswith("@") or not any(n.name == value for n in cluster.nodes)):
        return _add_node_file(cluster, e, path, added_before)
    spec, count = value, 1
    head, sep, tail = value.rpartition(":")
    if sep and re.fullmatch(r"[-+]?[0-9]+", tail):
        spec, count = head, int(tail)
        if count < 1:
            raise InputError(f"{cut(value)}: COUNT must be at least 1", field=e.flag)
    try:
        sources = select_nodes(cluster, spec, e.flag)
    except InputError as err:
        if os.path.isfile(value):  # a file is read only when its value says so (add_node_file)
            raise InputError(f"{err.message} (to read the file {cut(value)}, write @{value})", field=e.flag) from None
        raise
    if added_before + count * len(sources) > MAX_ADDED_NODES:
        raise _too_many_added(value, e.flag, count * len(sources), added_before)
    taken = {n.name for n in cluster.nodes}
    by_node: dict[str, list[Pod]] = {}
    wanted = {n.name for n in sources}
    for p in cluster.pods:
        if p.node_name in wanted and is_daemonset_pod(p):
            by_node.setdefault(p.node_name, []).append(p)
    added_nodes: list[str] = []
    added_pods: list[str] = []
    for src in sources:
        k = 0
        for _ in range(count):
            k += 1
            while f"{src.name}-copy-{k}" in taken:
                k += 1
            name = f"{src.name}-copy-{k}"
            taken.add(name)
            labels = dict(src.labels)
            labels[HOSTNAME_LABEL] = name
            cluster.nodes.append(
                _with_node_changes(src, meta={"name": name, "uid": f"{src.uid}-copy-{k}", "labels": labels})
            )
            added_nodes.append(name)
            for p in by_node.get(src.name, ()):
                copy = _daemon_pod_copy(cluster, p, src.name, name)
                cluster.pods.append(copy)
                added_pods.append(copy.key)
    what = f"{len(added_nodes)} node{'s' if len(added_nodes) != 1 else ''}"
    summary = (
        f"added {what} copied from {_listed(_node_names(sources))}: {_listed(added_nodes)}"
        f" (with {len(added_pods)} DaemonSet pod{'s' if len(added_pods) != 1 else ''})"
    )
    return Applied(e, summary, nodes=added_nodes, pods_added=added_pods)


def _rename_node_terms(affinity: Any, old: str, new: str) -> Any:
    """A DaemonSet pod's required node affinity names its node (matchFields metadata.name): the
    copy's names the new node."""
    if not isinstance(affinity, dict):
        return affinity
    na = affinity.get("nodeAffinity")
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(na, dict) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, dict) else None
    if not isinstance(na, dict) or not isinstance(req, dict) or not isinstance(terms, list):
        return affinity
    new_terms = []
    for t in terms:
        if isinstance(t, dict) and isinstance(t.get("matchFields"), list):
            fields = [
                {**f, "values": [new if v == old else v for v in f.get("values") or []]}
                if isinstance(f, dict) and f.get("key") == "metadata.name"
                else f
                for f in t["matchFields"]
            ]
            t = {**t, "matchFields": fields}
        new_terms.append(t)
    return {
        **affinity,
        "nodeAffinity": {
            **na,
            "requiredDuringSchedulingIgnoredDuringExecution": {**req, "nodeSelectorTerms": new_terms},
        },
    }


def _daemon_pod_copy(cluster: Cluster, pod: Pod, old_node: str, new_node: str) -> Pod:
    ref = pod.controller_ref() or {}
    raw = dict(pod.raw)
    meta = dict(raw.get("metadata") or {})
    meta["name"] = f"{ref.get('name') or pod.name}-{new_node}"
    meta["uid"] = f"{pod.uid}-{new_node}"
    meta.pop("generateName", None)
    raw["metadata"] = meta
    spec = dict(raw.get("spec") or {})
    spec["nodeName"] = new_node
    if "affinity" in spec:
        spec["affinity"] = _rename_node_terms(spec["affinity"], old_node, new_node)
    raw["spec"] = spec
    return Pod(raw, cluster.priorities, cluster.default_priority)


def _add_node_file(cluster: Cluster, e: Edit, path: str, added_before: int = 0) -> Applied:
    from ..loader import iter_objects

    taken = {n.name for n in cluster.nodes}
    added: list[str] = []
    try:
        for obj, where in iter_objects(path, as_kubectl=True):
            if obj.get("kind") != "Node":
                raise InputError(
                    f"expected a Node, found {obj.get('kind') or 'an object without kind'}",
                    source=path,
                    where=where,
                    field=e.flag,
                )
            from ..api.validation import check_user_object

            check_user_object(obj, "Node", path, where)
            try:
                node = Node(obj)
            except InputError as err:
                raise err.located(source=path, where=where) from None
            if node.name in taken:
                raise InputError(f"node {node.name} is already in the cluster", source=path, where=where, field=e.flag)
            if added_before + len(added) + 1 > MAX_ADDED_NODES:
                raise _too_many_added(e.value, e.flag, len(added) + 1, added_before)
            taken.add(node.name)
            cluster.nodes.append(node)
            added.append(node.name)
    except OSError as err:
        raise InputError(err.strerror or "cannot read", source=path, field=e.flag) from None
    except InputError as err:
        if err.field:
            raise
        raise InputError(err.message, source=err.source, where=err.where, field=e.flag) from None
    if not added:
        raise InputError("no Node found", source=path, field=e.flag)
    what = f"added {len(added)} node{'s' if len(added) != 1 else ''} from {path}: {_listed(added)}"
    if not cluster.objects.get("DaemonSet"):
        return Applied(e, what + " (no DaemonSet pods: the snapshot holds no DaemonSet)", nodes=added)
    daemon_pods = _daemon_pods_for(cluster, set(added))
    cluster.pods.extend(daemon_pods)
    return Applied(
        e,
        what + f" (with {len(daemon_pods)} DaemonSet pod{'s' if len(daemon_pods) != 1 else ''})",
        nodes=added,
        pods_added=[p.key for p in daemon_pods],
    )


def _daemon_pods_for(cluster: Cluster, nodes: set[str]) -> list[Pod]:
    """The pods the snapshot's DaemonSets would run on these nodes (workloads: the DaemonSet
    controller's node checks and pod), bound to them: a daemon pod is pinned to its node."""
    from ..workloads.expansion import pods_for_workloads

    objects = [
        (obj, "snapshot", f"DaemonSet {ns}/{name}")
        for (ns, name), obj in sorted(cluster.objects.get("DaemonSet", {}).items())
    ]
    expansion = pods_for_workloads(objects, cluster, validation=("ignore", None))  # the snapshot's own
    wanted = {d.pod: d.node for w in expansion.workloads for d in w.daemon_nodes if d.pod and d.node in nodes}
    out = []
    for p in expansion.pods:
        node = wanted.get(p.key)
        if node is not None:
            raw = {**p.raw, "spec": {**(p.raw.get("spec") or {}), "nodeName": node}, "status": {"phase": "Running"}}
            out.append(Pod(raw, cluster.priorities, cluster.default_priority))
    return out


def _remove_node(cluster: Cluster, e: Edit) -> Applied:
    nodes = select_nodes(cluster, e.value, e.flag)
    names = set(_node_names(nodes))
    cluster.nodes = [n for n in cluster.nodes if n.name not in names]
    removed = _remove_pods(cluster, {id(p) for p in cluster.pods if p.node_name in names})
    lost = _lost_replicas(cluster, removed)
    summary = (
        f"removed {len(nodes)} node{'s' if len(nodes) != 1 else ''} ({_listed(_node_names(nodes))}) "
        f"and the {len(removed)} pod{'s' if len(removed) != 1 else ''} on them"
    )
    if lost:
        summary += ": " + ", ".join(f"{k} -{v}" for k, v in lost.items())
    return Applied(e, summary, nodes=_node_names(nodes), pods_removed=[p.key for p in removed], replicas_lost=lost)


def cordon(cluster: Cluster, nodes: list[Node]) -> list[str]:
    """spec.unschedulable and the taint the node lifecycle controller adds for it; the names
    of the nodes that were not cordoned already."""
    changed = []
    new_of: dict[int, Node] = {}
    for n in nodes:
        taints = _taints_of(n)
        has_taint = any(t.get("key") == UNSCHEDULABLE_TAINT and t.get("effect") == "NoSchedule" for t in taints)
        if n.unschedulable and has_taint:
            continue
        if not has_taint:
            taints = taints + [{"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}]
        new_of[id(n)] = _with_node_changes(n, spec={"unschedulable": True, "taints": taints})
        changed.append(n.name)
    _replace_nodes(cluster, new_of)
    return changed


def _cordon(cluster: Cluster, e: Edit) -> Applied:
    nodes = select_nodes(cluster, e.value, e.flag)
    changed = cordon(cluster, nodes)
    summary = f"cordoned {_listed(_node_names(nodes))}"
    if len(changed) < len(nodes):
        summary += f" ({len(nodes) - len(changed)} already cordoned)"
    return Applied(e, summary, nodes=_node_names(nodes))


def _uncordon(cluster: Cluster, e: Edit) -> Applied:
    nodes = select_nodes(cluster, e.value, e.flag)
    new_of: dict[int, Node] = {}
    for n in nodes:
        taints = [t for t in _taints_of(n) if t.get("key") != UNSCHEDULABLE_TAINT]
        new_of[id(n)] = _with_node_changes(n, spec={"unschedulable": False, "taints": taints})
    _replace_nodes(cluster, new_of)
    return Applied(e, f"uncordoned {_listed(_node_names(nodes))}", nodes=_node_names(nodes))


def _split_target(e: Edit, what: str) -> tuple[str, str]:
    target, sep, rest = e.value.partition(":")
    if not sep or not target or not rest:
        raise InputError(f"{cut(e.value)}: expected NODE:{what}", field=e.flag)
    return target, rest


def _check_key(key: str, e: Edit) -> None:
    errs = qualified_name_errors(key)
    if errs:
        raise InputError(f"invalid key {cut(key)}: {'; '.join(errs)}", field=e.flag)


def _taint(cluster: Cluster, e: Edit) -> Applied:
    """As `kubectl taint`: KEY[=VALUE]:EFFECT adds (replacing a taint of the same key and
    effect), KEY- removes every taint with the key, KEY:EFFECT- the one with that effect."""
    target, spec = _split_target(e, "KEY[=VALUE]:EFFECT")
    nodes = select_nodes(cluster, target, e.flag)
    if spec.endswith("-"):
        key, _, effect = spec[:-1].partition(":")
        _check_key(key, e)
        if effect and effect not in TAINT_EFFECTS:
            raise InputError(f"invalid taint effect {cut(effect)}: one of {', '.join(TAINT_EFFECTS)}", field=e.flag)
        removed_from = []
        new_of: dict[int, Node] = {}
        for n in nodes:
            taints = _taints_of(n)
            kept = [t for t in taints if not (t.get("key") == key and (not effect or t.get("effect") == effect))]
            if len(kept) != len(taints):
                new_of[id(n)] = _with_node_changes(n, spec={"taints": kept})
                removed_from.append(n.name)
        _replace_nodes(cluster, new_of)
        if not removed_from:
            raise InputError(f"taint {cut(spec[:-1])} not found on {_listed(_node_names(nodes))}", field=e.flag)
        return Applied(e, f"removed taint {spec[:-1]} from {_listed(removed_from)}", nodes=removed_from)
    kv, sep, effect = spec.rpartition(":")
    if not sep or effect not in TAINT_EFFECTS:
        raise InputError(
            f"{cut(e.value)}: expected NODE:KEY[=VALUE]:EFFECT, EFFECT one of {', '.join(TAINT_EFFECTS)}", field=e.flag
        )
    key, _, value = kv.partition("=")
    _check_key(key, e)
    errs = label_value_errors(value)
    if errs:
        raise InputError(f"invalid taint value {cut(value)}: {'; '.join(errs)}", field=e.flag)
    new = {"key": key, "effect": effect, **({"value": value} if value else {})}
    new_of = {}
    for n in nodes:
        taints = [t for t in _taints_of(n) if not (t.get("key") == key and t.get("effect") == effect)]
        new_of[id(n)] = _with_node_changes(n, spec={"taints": taints + [new]})
    _replace_nodes(cluster, new_of)
    return Applied(e, f"tainted {_listed(_node_names(nodes))} with {spec}", nodes=_node_names(nodes))


def _label(cluster: Cluster, e: Edit) -> Applied:
    """As `kubectl label`: KEY=VALUE sets (overwriting), KEY- removes."""
    target, spec = _split_target(e, "KEY=VALUE")
    nodes = select_nodes(cluster, target, e.flag)
    if spec.endswith("-") and "=" not in spec:
        key = spec[:-1]
        _check_key(key, e)
        removed: dict[int, Node] = {}
        for n in nodes:
            labels = {k: v for k, v in n.labels.items() if k != key}
            removed[id(n)] = _with_node_changes(n, meta={"labels": labels})
        _replace_nodes(cluster, removed)
        return Applied(e, f"removed label {key} from {_listed(_node_names(nodes))}", nodes=_node_names(nodes))
    key, sep, value = spec.partition("=")
    if not sep:
        raise InputError(f"{cut(e.value)}: expected NODE:KEY=VALUE or NODE:KEY-", field=e.flag)
    _check_key(key, e)
    errs = label_value_errors(value)
    if errs:
        raise InputError(f"invalid label value {cut(value)}: {'; '.join(errs)}", field=e.flag)
    new_of = {id(n): _with_node_changes(n, meta={"labels": {**n.labels, key: value}}) for n in nodes}
    _replace_nodes(cluster, new_of)
    return Applied(e, f"labelled {_listed(_node_names(nodes))} {key}={value}", nodes=_node_names(nodes))


def _evict(cluster: Cluster, e: Edit) -> Applied:
    ns, sep, name = e.value.partition("/")
    if not sep or not ns or not name:
        raise InputError(f"{cut(e.value)}: expected NAMESPACE/POD", field=e.flag)
    hits = {id(p) for p in cluster.pods if p.namespace == ns and p.name == name}
    if not hits:
        raise InputError(f"no pod {cut(e.value, quote=False)} bound to a node in the snapshot", field=e.flag)
    removed = _remove_pods(cluster, hits)
    node = removed[0].node_name
    return Applied(
        e,
        f"evicted {e.value} from {node}",
        nodes=[node],
        pods_removed=[p.key for p in removed],
        replicas_lost=_lost_replicas(cluster, removed),
    )


_APPLY = {
    "--add-node": _add_node,
    "--remove-node": _remove_node,
    "--cordon": _cordon,
    "--uncordon": _uncordon,
    "--taint": _taint,
    "--label": _label,
    "--evict": _evict,
}


def apply_edits(cluster: Cluster, edits: list[Edit]) -> list[Applied]:
    """Apply the edits in order; an InputError names the flag of the first that cannot apply."""
    out = []
    added = 0  # nodes added so far: MAX_ADDED_NODES bounds the edits of one command together
    for e in edits:
        fn = _APPLY.get(e.flag)
        if fn is None:
            raise InputError(f"unknown edit {e.flag!r}", field="edits")
        if e.flag == "--add-node":
            applied = _add_node(cluster, e, added)
            added += len(applied.nodes)
        else:
            applied = fn(cluster, e)
        out.append(applied)
    return out


def ordered_edits(values: dict[str, list[str]], argv: list[str] | None) -> list[Edit]:
    """The edits in command-line order. `values`: each flag's values in the order given (as the
    parser collects them); `argv`: the raw arguments, read only for the order of the flags.
    Without it (or if it does not account for every value) the flags go in EDIT_FLAGS order."""
    remaining = {f: list(v) for f, v in values.items() if v}
    out: list[Edit] = []
    if argv:
        seen: list[str] = []
        for tok in argv:
            if tok == "--":
                break
            flag = tok.split("=", 1)[0] if tok.startswith("--") else ""
            if flag in EDIT_FLAGS:
                seen.append(flag)
        counts = {f: seen.count(f) for f in remaining}
        if all(counts[f] == len(v) for f, v in remaining.items()):
            for flag in seen:
                if flag in remaining:
                    out.append(Edit(flag, remaining[flag].pop(0)))
            return out
    for flag in EDIT_FLAGS:
        for v in remaining.get(flag, ()):
            out.append(Edit(flag, v))
    return out
