"""Inter-pod affinity terms as the scheduler holds them (framework.AffinityTerm / PodInfo's term lists).

A pod's terms are parsed once and cached on the pod. `matchLabelKeys` / `mismatchLabelKeys` are not read:
kube-scheduler v1.34.1 never looks at them (framework/types.go builds AffinityTerms from labelSelector,
namespaces and namespaceSelector only); the API server folds them into labelSelector when it creates the
pod, so objects read back from a cluster already carry those requirements.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...api.labels import NOTHING, LabelSelector, parse_label_selector
from ...errors import FieldError

_CACHE_KEY = TERMS_CACHE_KEY = "InterPodAffinity.terms"  # pod._cache key of pod_terms
_EMPTY: Mapping[str, str] = {}


class AffinityTerm:
    """One processed pod (anti-)affinity term; `weight` is 0 for required terms."""

    __slots__ = ("namespaces", "selector", "topology_key", "ns_selector", "weight", "all_namespaces")

    def __init__(
        self,
        namespaces: frozenset[str],
        selector: LabelSelector,
        topology_key: str,
        ns_selector: LabelSelector,
        weight: int = 0,
    ):
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.ns_selector = ns_selector
        self.weight = weight
        # an empty namespaceSelector ({}) selects every namespace, whatever the labels
        self.all_namespaces = ns_selector.is_empty()

    def matches(self, pod, ns_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches: the pod's namespace is listed or selected, and its labels match."""
        if (
            pod.namespace in self.namespaces
            or self.all_namespaces
            or (not self.ns_selector.is_nothing and self.ns_selector.matches(ns_labels or _EMPTY))
        ):
            return self.selector.matches(pod.labels)
        return False

    def with_namespaces_resolved(self, namespace_labels: Mapping[str, Mapping[str, str]]) -> AffinityTerm:
        """The incoming pod's term with a non-empty namespaceSelector unrolled into its namespaces
        (mergeAffinityTermNamespacesIfNotEmpty); the selector becomes Nothing."""
        if self.all_namespaces:
            return self
        names = set(self.namespaces)
        sel = self.ns_selector
        if not sel.is_nothing:
            names.update(ns for ns, labels in namespace_labels.items() if sel.matches(labels))
        return AffinityTerm(frozenset(names), self.selector, self.topology_key, NOTHING, self.weight)

    def compile(self):
        """A fast `pod -> bool` equal to `matches(pod, None)`, for the hot loops over every pod.
        Meant for the incoming pod's resolved terms (namespaceSelector unrolled or empty)."""
        sel = self.selector
        if sel.is_nothing:
            return lambda p: False
        if not self.all_namespaces and not self.ns_selector.is_nothing and self.ns_selector.matches(_EMPTY):
            # a selector that matches empty namespace labels (e.g. DoesNotExist): keep the general path
            return lambda p: self.matches(p, None)
        ns = self.namespaces
        all_ns = self.all_namespaces
        eq = tuple((r.key, next(iter(r.values))) for r in sel.requirements if r.op == "In" and len(r.values) == 1)
        rest = tuple(r for r in sel.requirements if not (r.op == "In" and len(r.values) == 1))
        if not rest and len(eq) == 1:
            k, v = eq[0]
            if all_ns:
                return lambda p: p.labels.get(k) == v
            if len(ns) == 1:
                (only,) = ns
                return lambda p: p.namespace == only and p.labels.get(k) == v
            return lambda p: p.namespace in ns and p.labels.get(k) == v
        if not rest and not eq:
            return (lambda p: True) if all_ns else (lambda p: p.namespace in ns)

        def match(p) -> bool:
            if not all_ns and p.namespace not in ns:
                return False
            labels = p.labels
            for key, val in eq:
                if labels.get(key) != val:
                    return False
            for r in rest:
                if not r.matches(labels):
                    return False
            return True

        return match

    def describe(self) -> dict:
        d: dict[str, Any] = {"topologyKey": self.topology_key, "selector": selector_string(self.selector)}
        if self.all_namespaces:
            d["namespaces"] = "*"
        else:
            d["namespaces"] = sorted(self.namespaces)
            if not self.ns_selector.is_nothing:
                d["namespaceSelector"] = selector_string(self.ns_selector)
        if self.weight:
            d["weight"] = self.weight
        return d

    def __repr__(self) -> str:
        return f"AffinityTerm({self.describe()})"


class PodTerms:
    """PodInfo's four term lists for one pod."""

    __slots__ = (
        "required_affinity",
        "required_anti_affinity",
        "preferred_affinity",
        "preferred_anti_affinity",
        "error",
        "index_entries",
    )

    def __init__(
        self,
        required_affinity=(),
        required_anti_affinity=(),
        preferred_affinity=(),
        preferred_anti_affinity=(),
        error: str = "",
    ):
        self.required_affinity: tuple[AffinityTerm, ...] = tuple(required_affinity)
        self.required_anti_affinity: tuple[AffinityTerm, ...] = tuple(required_anti_affinity)
        self.preferred_affinity: tuple[AffinityTerm, ...] = tuple(preferred_affinity)
        self.preferred_anti_affinity: tuple[AffinityTerm, ...] = tuple(preferred_anti_affinity)
        self.error = error
        # the terms as interpodaffinity_index walks them (worked out there on first use)
        self.index_entries: tuple | None = None


NO_TERMS = PodTerms()


def selector_string(sel: LabelSelector) -> str:
    """labels.Selector.String()-like rendering: `a=b,c in (d,e),!f`; `<none>` for Nothing."""
    if sel.is_nothing:
        return "<none>"
    parts = []
    for r in sel.requirements:
        vals = sorted(r.values) if r.op in ("In", "NotIn") else list(r.values)
        if r.op == "In" and len(vals) == 1:
            parts.append(f"{r.key}={vals[0]}")
        elif r.op == "NotIn" and len(vals) == 1:
            parts.append(f"{r.key}!={vals[0]}")
        elif r.op in ("In", "NotIn"):
            parts.append(f"{r.key} {r.op.lower()} ({','.join(vals)})")
        elif r.op == "Exists":
            parts.append(r.key)
        elif r.op == "DoesNotExist":
            parts.append(f"!{r.key}")
        else:
            parts.append(f"{r.key} {r.op.lower()} {vals[0] if vals else ''}")
    return ",".join(parts)


def _new_term(pod, raw, field: str, weight: int) -> AffinityTerm:
    if not isinstance(raw, dict):
        raise FieldError(field, "must be an object")
    raw_sel = raw.get("labelSelector")
    selector = parse_label_selector(raw_sel, f"{field}.labelSelector")
    raw_ns = raw.get("namespaces") or []
    if not isinstance(raw_ns, list):
        raise FieldError(f"{field}.namespaces", "must be a list")
    raw_ns_sel = raw.get("namespaceSelector")
    # getNamespacesFromPodAffinityTerm: neither namespaces nor namespaceSelector means the pod's own namespace
    namespaces = frozenset((pod.namespace,)) if not raw_ns and raw_ns_sel is None else frozenset(str(n) for n in raw_ns)
    ns_selector = parse_label_selector(raw_ns_sel, f"{field}.namespaceSelector")
    return AffinityTerm(namespaces, selector, str(raw.get("topologyKey") or ""), ns_selector, weight)


def _required(pod, section: dict | None, field: str) -> tuple[AffinityTerm, ...]:
    if not section:
        return ()
    raw_terms = section.get("requiredDuringSchedulingIgnoredDuringExecution") or []
    if not isinstance(raw_terms, list):
        raise FieldError(f"{field}.requiredDuringSchedulingIgnoredDuringExecution", "must be a list")
    return tuple(
        _new_term(pod, t, f"{field}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", 0)
        for i, t in enumerate(raw_terms)
    )


def _preferred(pod, section: dict | None, field: str) -> tuple[AffinityTerm, ...]:
    if not section:
        return ()
    raw_terms = section.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    if not isinstance(raw_terms, list):
        raise FieldError(f"{field}.preferredDuringSchedulingIgnoredDuringExecution", "must be a list")
    out = []
    for i, wt in enumerate(raw_terms):
        f = f"{field}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        if not isinstance(wt, dict):
            raise FieldError(f, "must be an object")
        w = wt.get("weight") or 0
        if isinstance(w, bool) or not isinstance(w, int):
            raise FieldError(f"{f}.weight", f"{w!r} is not an integer")
        out.append(_new_term(pod, wt.get("podAffinityTerm") or {}, f"{f}.podAffinityTerm", w))
    return tuple(out)


def pod_terms(pod) -> PodTerms:
    """The pod's processed terms (framework.NewPodInfo), cached on the pod.

    Like PodInfo.Update, a list whose selectors fail to parse is left empty and the error is kept
    (`PodTerms.error`, the text PreFilter reports for an incoming pod). Replicas share one parse:
    the terms depend only on the affinity sections and the namespace."""
    cached = pod._cache.get(_CACHE_KEY)
    if cached is not None:
        return cached
    if pod.pod_affinity is None and pod.pod_anti_affinity is None:
        pod._cache[_CACHE_KEY] = NO_TERMS
        return NO_TERMS
    aff, anti = pod.pod_affinity, pod.pod_anti_affinity
    # replicas loaded from one snapshot share their affinity objects (cluster.py): know them by
    # identity first (the entry holds the objects, so their ids stay theirs), by value otherwise
    by_id = _MEMO_BY_ID.get((pod.namespace, id(aff), id(anti)))
    if by_id is not None and by_id[0] is aff and by_id[1] is anti:
        pod._cache[_CACHE_KEY] = by_id[2]
        return by_id[2]
    key = (pod.namespace, repr((aff, anti)))
    terms = _MEMO.get(key)
    if terms is None:
        terms = _parse_terms(pod)
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[key] = terms
    if len(_MEMO_BY_ID) >= _MEMO_LIMIT:
        _MEMO_BY_ID.clear()
    _MEMO_BY_ID[(pod.namespace, id(aff), id(anti))] = (aff, anti, terms)
    pod._cache[_CACHE_KEY] = terms
    return terms


_MEMO: dict = {}
_MEMO_BY_ID: dict = {}
_MEMO_LIMIT = 50_000


def _parse_terms(pod) -> PodTerms:
    lists: list[tuple[AffinityTerm, ...]] = []
    errors = []
    for label, fn, section, field in (
        ("requiredAffinityTerms", _required, pod.pod_affinity, "spec.affinity.podAffinity"),
        ("requiredAntiAffinityTerms", _required, pod.pod_anti_affinity, "spec.affinity.podAntiAffinity"),
        ("preferredAffinityTerms", _preferred, pod.pod_affinity, "spec.affinity.podAffinity"),
        ("preferredAntiAffinityTerms", _preferred, pod.pod_anti_affinity, "spec.affinity.podAntiAffinity"),
    ):
        try:
            lists.append(fn(pod, section, field))
        except FieldError as e:
            lists.append(())
            errors.append(f"{label}: {e}")
    err = errors[0] if len(errors) == 1 else ("[" + ", ".join(errors) + "]" if errors else "")
    required, required_anti, preferred, preferred_anti = lists
    return PodTerms(required, required_anti, preferred, preferred_anti, error=err)
