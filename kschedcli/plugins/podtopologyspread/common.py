"""PodTopologySpread building blocks: parsed constraints, the default selector, Go float helpers.

Kept apart from the plugin so the arithmetic and the constraint building can be tested on their own.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from typing import Any

from ...api.labels import NOTHING, LabelSelector, Requirement, parse_label_selector
from ...errors import FieldError

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
MAX_INT32 = (1 << 31) - 1

# kube-scheduler's built-in defaults when defaultingType is System (hostname first, as it lists them).
SYSTEM_DEFAULT_CONSTRAINTS = (
    {"topologyKey": HOSTNAME_KEY, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE_KEY, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)


class Constraint:
    """One topology spread constraint as the plugin uses it: the selector parsed and merged."""

    __slots__ = (
        "max_skew",
        "topology_key",
        "selector",
        "min_domains",
        "node_affinity_policy",
        "node_taints_policy",
        "when_unsatisfiable",
        "text",
    )

    def __init__(
        self,
        max_skew: int,
        topology_key: str,
        selector: LabelSelector,
        min_domains: int,
        node_affinity_policy: str,
        node_taints_policy: str,
        when_unsatisfiable: str,
        text: str,
    ):
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.node_affinity_policy = node_affinity_policy
        self.node_taints_policy = node_taints_policy
        self.when_unsatisfiable = when_unsatisfiable
        self.text = text

    def describe(self) -> dict:
        return {
            "topologyKey": self.topology_key,
            "maxSkew": self.max_skew,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "selector": self.text,
            "minDomains": self.min_domains,
            "nodeAffinityPolicy": self.node_affinity_policy,
            "nodeTaintsPolicy": self.node_taints_policy,
        }

    def __repr__(self) -> str:
        return f"Constraint({self.topology_key}, maxSkew={self.max_skew}, {self.when_unsatisfiable}, {self.text!r})"


# ------------------------------------------------------------------ selector text (labels.Selector.String)


def _requirement_text(key: str, op: str, values) -> str:
    vals = sorted(values)
    if op == "=":
        return f"{key}={vals[0]}"
    if op == "Exists":
        return key
    if op == "DoesNotExist":
        return f"!{key}"
    word = "in" if op == "In" else "notin"
    return f"{key} {word} ({','.join(vals)})"


def _join_text(items: list[tuple[str, str]]) -> str:
    return ",".join(t for _, t in sorted(items, key=lambda kt: kt[0]))


def _raw_selector_items(sel: Any) -> list[tuple[str, str]]:  # a selector parse_label_selector accepted
    items: list[tuple[str, str]] = []
    for k, v in (sel.get("matchLabels") or {}).items():
        items.append((k, _requirement_text(k, "=", ["" if v is None else str(v)])))
    for e in sel.get("matchExpressions") or []:
        items.append(
            (e.get("key"), _requirement_text(e.get("key"), e.get("operator"), [str(v) for v in e.get("values") or []]))
        )
    return items


def _str_labels(d) -> dict[str, str]:
    return {str(k): "" if v is None else str(v) for k, v in (d or {}).items()}


# ------------------------------------------------------------------ building constraints


def _sorted_requirements(reqs) -> tuple[Requirement, ...]:
    return tuple(sorted(reqs, key=lambda r: r.key))


def merge_label_set(match_labels: Mapping[str, str], selector: LabelSelector) -> LabelSelector:
    """mergeLabelSetWithSelector: key=value requirements added to the selector's own (Nothing stays Nothing)."""
    if selector.is_nothing:
        return selector
    reqs = [Requirement(k, "In", frozenset((v,))) for k, v in match_labels.items()]
    return LabelSelector(_sorted_requirements(reqs + list(selector.requirements)))


def build_constraints(
    raw_constraints: list, pod_labels: Mapping[str, str], action: str, field: str = "spec.topologySpreadConstraints"
) -> list[Constraint]:
    """filterTopologySpreadConstraints: the constraints with this whenUnsatisfiable, parsed.

    matchLabelKeys: the incoming pod's values for those keys are merged into the selector (keys the pod
    lacks are left out); both feature gates (MatchLabelKeys, NodeInclusionPolicy) are on in v1.34.
    Raises FieldError for an invalid selector.
    """
    out: list[Constraint] = []
    for i, c in enumerate(raw_constraints):
        if not isinstance(c, dict) or c.get("whenUnsatisfiable") != action:
            continue
        raw_sel = c.get("labelSelector")
        selector = parse_label_selector(raw_sel, f"{field}[{i}].labelSelector")
        items = _raw_selector_items(raw_sel) if isinstance(raw_sel, dict) else []
        keys = c.get("matchLabelKeys") or []
        if keys:
            merged = {}
            for k in keys:
                if k in pod_labels:
                    merged[k] = pod_labels[k]
            if merged and not selector.is_nothing:
                selector = merge_label_set(merged, selector)
                items = [(k, _requirement_text(k, "=", [v])) for k, v in merged.items()] + items
        text = "<nothing>" if selector.is_nothing else (_join_text(items) or "<everything>")
        min_domains = c.get("minDomains")
        out.append(
            Constraint(
                max_skew=int(c.get("maxSkew") or 0),
                topology_key=c.get("topologyKey") or "",
                selector=selector,
                min_domains=1 if min_domains is None else int(min_domains),
                node_affinity_policy=c.get("nodeAffinityPolicy") or HONOR,
                node_taints_policy=c.get("nodeTaintsPolicy") or IGNORE,
                when_unsatisfiable=action,
                text=text,
            )
        )
    return out


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: "" -> ("", ""), "v1" -> ("", "v1"), "g/v" -> ("g", "v"); else None."""
    if not api_version or api_version == "/":
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


class NamespaceIndex:
    """A kind's objects by namespace (a missing metadata.namespace meaning `default`), indexed
    once and kept while the cluster lists the very same objects (checked object by object, at C
    speed): a cycle reads its pod's namespace without a Python step per object of the cluster."""

    __slots__ = ("kind", "objects", "by_namespace")

    def __init__(self, kind: str):
        self.kind = kind
        self.objects: list[dict] = []
        self.by_namespace: dict[str, list[dict]] = {}

    def of(self, cluster, namespace: str) -> list[dict]:
        objs = cluster.list(self.kind)
        if len(objs) != len(self.objects) or not all(map(operator.is_, objs, self.objects)):
            by_namespace: dict[str, list[dict]] = {}
            for o in objs:
                by_namespace.setdefault(_ns_of(o), []).append(o)
            self.objects, self.by_namespace = objs, by_namespace
        return self.by_namespace.get(namespace, [])


def default_selector(pod, cluster, services: NamespaceIndex | None = None) -> tuple[LabelSelector, str]:
    """helper.DefaultSelector: Services selecting the pod, then its controller (RC, RS, StatefulSet).
    `services`: an index of the cluster's Services kept by the caller across cycles."""
    label_set: dict[str, str] = {}
    in_namespace = (
        services.of(cluster, pod.namespace)
        if services is not None
        else objects_in_namespace(cluster, "Service", pod.namespace)
    )
    for svc in in_namespace:
        sel = (svc.get("spec") or {}).get("selector")
        if sel is None:
            continue  # a nil selector selects nothing
        sel = _str_labels(sel)
        if all(pod.labels.get(k) == v for k, v in sel.items()):
            label_set.update(sel)
    reqs = [Requirement(k, "In", frozenset((v,))) for k, v in label_set.items()]
    items = [(k, _requirement_text(k, "=", [v])) for k, v in label_set.items()]

    owner = pod.controller_ref()
    gv = _parse_group_version(str(owner.get("apiVersion") or "")) if owner else None
    if owner is not None and gv is not None:
        kind = owner.get("kind")
        name = owner.get("name") or ""
        if gv == ("", "v1") and kind == "ReplicationController":
            rc = get_in_namespace(cluster, "ReplicationController", pod.namespace, name)
            if rc is not None:
                label_set.update(_str_labels((rc.get("spec") or {}).get("selector")))
                reqs = [Requirement(k, "In", frozenset((v,))) for k, v in label_set.items()]
                items = [(k, _requirement_text(k, "=", [v])) for k, v in label_set.items()]
        elif gv == ("apps", "v1") and kind in ("ReplicaSet", "StatefulSet"):
            obj = get_in_namespace(cluster, kind, pod.namespace, name)
            if obj is not None:
                raw_sel = (obj.get("spec") or {}).get("selector")
                try:
                    other = parse_label_selector(raw_sel, f"{kind}.spec.selector")
                except FieldError:
                    other = NOTHING
                if not other.is_nothing:
                    reqs.extend(other.requirements)
                    items.extend(_raw_selector_items(raw_sel))
    return LabelSelector(_sorted_requirements(reqs)), _join_text(items)


def _ns_of(obj: dict) -> str:
    return ((obj.get("metadata") or {}).get("namespace")) or "default"


def objects_in_namespace(cluster, kind: str, namespace: str) -> list[dict]:
    """Namespaced objects of a kind; a missing metadata.namespace means `default`, as the API server does."""
    return [o for o in cluster.list(kind) if _ns_of(o) == namespace]


def get_in_namespace(cluster, kind: str, namespace: str, name: str) -> dict | None:
    obj = cluster.get(kind, namespace, name)
    if obj is None and namespace == "default":
        obj = cluster.get(kind, "", name)
    return obj


# ------------------------------------------------------------------ Go float arithmetic

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01
_HALF_SQRT2 = math.sqrt(2) / 2


def go_log(x: float) -> float:
    """Go's math.Log (pure-Go on amd64: the FreeBSD e_log.c algorithm), bit for bit for finite x > 0."""
    if x <= 0 or math.isinf(x) or math.isnan(x):
        return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))
    f1, ki = math.frexp(x)
    if f1 < _HALF_SQRT2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_round(x: float) -> int:
    """Go's math.Round (half away from zero), converted to int as int64(...)."""
    if x < 0:
        return -go_round(-x)
    fl = math.floor(x)
    return int(fl) + (1 if x - fl >= 0.5 else 0)


_weights: dict[int, float] = {}


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): smaller topologies' counts are not watered down by bigger ones."""
    w = _weights.get(size)
    if w is None:
        w = _weights[size] = go_log(float(size + 2))
    return w


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    return float(count) * weight + float(max_skew - 1)
