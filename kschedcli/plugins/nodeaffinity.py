"""NodeAffinity: nodeSelector, required/preferred node affinity, and the profile's addedAffinity."""

from __future__ import annotations

import sys
import weakref
from typing import TYPE_CHECKING

from ..api.labels import parse_node_selector, parse_node_selector_term
from ..framework.interface import (
    BatchFilterPlugin,
    ClusterEvent,
    EnqueueExtensions,
    Plugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from ..framework.status import error, skip, unresolvable
from .helper import default_normalize_array, default_normalize_score

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def required_node_affinity_matches(pod, node) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): nodeSelector AND required terms."""
    labels = node.labels
    for k, v in pod.node_selector.items():
        if labels.get(k) != v:
            return False
    req = pod.required_node_affinity
    return req is None or req.matches(labels, node.name)


# snapshot -> (nodeSelector items, the required affinity's terms as written) -> the column:
# PodTopologySpread asks for every pod, and pods of many templates share their affinity. A
# snapshot's nodes are never changed or removed in place, only appended (Snapshot.add_node), so
# a column is extended, never recomputed.
_COLUMNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def required_node_affinity_column(pod, snapshot) -> list[bool]:
    """required_node_affinity_matches(pod, node) for each of the snapshot's nodes, in order: kept
    per snapshot, node selector and affinity (shared: not to be changed). A node's answer
    follows from its values of the labels the selector and the terms name (when no term reads a
    field, the node's name): nodes sharing those values share one match."""
    selector = pod.node_selector
    req = pod.required_node_affinity
    memo = _COLUMNS.get(snapshot)
    if memo is None:
        memo = _COLUMNS[snapshot] = {}
    key = (tuple(sorted(selector.items())), None if req is None else req.signature())
    nis = snapshot.node_infos
    column: list[bool] | None = memo.get(key)
    if column is None:
        column = memo[key] = []
    if len(column) < len(nis):
        fields = req is not None and any(t.fields for t in req.terms)
        keys = sorted({*selector, *(r.key for t in req.terms for r in t.expressions)} if req is not None else selector)
        if column or fields or not keys:
            column.extend(required_node_affinity_matches(pod, ni.node) for ni in nis[len(column) :])
        else:
            decided: dict[tuple, bool] = {}
            for ni, values in zip(nis, zip(*(snapshot.label_column(k) for k in keys))):
                match = decided.get(values)
                if match is None:
                    match = decided[values] = required_node_affinity_matches(pod, ni.node)
                column.append(match)
    return column


class NodeAffinity(
    Plugin, PreFilterPlugin, BatchFilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions
):
    name = "NodeAffinity"

    def __init__(self, args, handle):
        super().__init__(args, handle)
        added = args.get("addedAffinity") or {}
        req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.added_selector = parse_node_selector(req, "addedAffinity", strict=True) if req is not None else None
        # NewPreferredSchedulingTerms: a non-empty list makes the scorer exist (so PreScore never
        # skips), even when every term has weight 0 and so never counts
        pref = added.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        self.added_preferred = (
            [
                (t.get("weight", 0), parse_node_selector_term(t.get("preference") or {}, "addedAffinity", strict=True))
                for t in pref
                if t.get("weight", 0) and _non_empty_term(t.get("preference"))
            ]
            if pref
            else None
        )

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        req = pod.required_node_affinity
        no_affinity = req is None
        if no_affinity and self.added_selector is None and not _has_node_selector(pod):
            return None, skip()
        if req is None or not req.terms:
            return None, None
        names: set[str] | None = None
        for term in req.terms:
            # from the raw matchFields, as Go reads them (a requirement that fails to parse still counts)
            term_names = None
            for r in term.raw.get("matchFields") or []:
                if isinstance(r, dict) and r.get("key") == "metadata.name" and r.get("operator") == "In":
                    s = {str(v) for v in r.get("values") or []}
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return None, None
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, unresolvable(ERR_REASON_CONFLICT)
        if names:
            return PreFilterResult(names), None
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if self.added_selector is not None and not self.added_selector.matches(node.labels, node.name):
            return unresolvable(ERR_REASON_ENFORCED)
        if not required_node_affinity_matches(pod, node):
            return unresolvable(ERR_REASON_POD)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """filter over many nodes; the nodes failing for one reason share its status."""
        added = self.added_selector
        selector = tuple(pod.node_selector.items())
        req = pod.required_node_affinity
        enforced = pod_mismatch = None
        if added is None and req is None and len(selector) == 1:
            # one nodeSelector label, the usual pinning to a pool
            ((k, v),) = selector
            pod_mismatch = unresolvable(ERR_REASON_POD)
            snapshot = getattr(self.handle, "snapshot", None)
            values = (
                snapshot.label_column(k)
                if snapshot is not None and nodes is snapshot.node_infos
                else [ni.node.labels.get(k) for ni in nodes]
            )
            return [None if x == v else pod_mismatch for x in values]
        out: list[Status | None] = []
        for ni in nodes:
            node = ni.node
            labels = node.labels
            if added is not None and not added.matches(labels, node.name):
                if enforced is None:
                    enforced = unresolvable(ERR_REASON_ENFORCED)
                out.append(enforced)
                continue
            for k, v in selector:
                if labels.get(k) != v:
                    break
            else:
                if req is None or req.matches(labels, node.name):
                    out.append(None)
                    continue
            if pod_mismatch is None:
                pod_mismatch = unresolvable(ERR_REASON_POD)
            out.append(pod_mismatch)
        return out

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        # node_affinity.go PreScore skips only when the pod has no preferred list at all (nil) and
        # the args add none; an empty list, or terms of weight 0, still score (0 everywhere)
        prefs = [(w, t) for w, t in pod.preferred_node_affinity if w]
        bad = _preferred_terms_error(pod) if _has_preferred_list(pod) else None
        if bad is not None:
            return error(bad)
        if not _has_preferred_list(pod) and self.added_preferred is None:
            return skip()
        state.write("PreScoreNodeAffinity", prefs)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        node = node_info.node
        count = 0
        if self.added_preferred:
            count += sum(w for w, t in self.added_preferred if t.matches(node.labels, node.name))
        prefs = state.get("PreScoreNodeAffinity")
        if prefs is None:
            bad = _preferred_terms_error(pod) if _has_preferred_list(pod) else None
            if bad is not None:
                return 0, error(bad)
            prefs = [(w, t) for w, t in pod.preferred_node_affinity if w]
        count += sum(w for w, t in prefs if t.matches(node.labels, node.name))
        return count, None

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        default_normalize_score(scores, reverse=False)
        return None

    def normalize_array(self, state: CycleState, pod: Pod, scores, at):
        """normalize_score on an int64 array (scheduling/columnar.py)."""
        return default_normalize_array(sys.modules["numpy"], scores, reverse=False)

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("Node", "Add|UpdateNodeLabel", "a node gets labels matching the pod's node affinity/selector")
        ]


def _has_node_selector(pod) -> bool:
    spec = raw_spec if isinstance(raw_spec := pod.raw.get("spec"), dict) else {}
    return spec.get("nodeSelector") is not None


def _has_preferred_list(pod) -> bool:
    spec = raw_spec if isinstance(raw_spec := pod.raw.get("spec"), dict) else {}
    aff = raw_aff if isinstance(raw_aff := spec.get("affinity"), dict) else {}
    na = raw_na if isinstance(raw_na := aff.get("nodeAffinity"), dict) else {}
    return na.get("preferredDuringSchedulingIgnoredDuringExecution") is not None


def _non_empty_term(term) -> bool:
    return isinstance(term, dict) and bool(term.get("matchExpressions") or term.get("matchFields"))


def _preferred_terms_error(pod) -> str | None:
    """NewPreferredSchedulingTerms on the pod's preferred terms: the aggregated parse errors of the
    terms it keeps (weight != 0, non-empty preference), or None when they all parse."""
    msgs: list[str] = []
    for i, (w, t) in enumerate(pod.preferred_node_affinity):
        if not w or not _non_empty_term(t.raw):
            continue
        for path, msg in t.errors:
            m = f"[{i}].{path}: {msg}"
            if m not in msgs:
                msgs.append(m)
    if not msgs:
        return None
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
