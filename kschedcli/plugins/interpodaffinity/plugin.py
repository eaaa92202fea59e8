"""InterPodAffinity: required pod affinity / anti-affinity (both ways) and preferred terms' scoring.

PreFilter counts, per topology pair (key, value), the existing pods that match the incoming pod's
required affinity terms (a pod counts only if it matches all of them), its required anti-affinity
terms, and the existing pods whose required anti-affinity terms match the incoming pod. Filter then
only looks the node's topology values up in those counts. PreScore sums weights per topology pair
from the incoming pod's preferred terms and the existing pods' required (hardPodAffinityWeight) and
preferred terms; Score adds the sums for the node's values; NormalizeScore maps [min, max] to [0, 100].
"""

from __future__ import annotations

import sys
from itertools import repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any

from ...framework.interface import (
    MAX_NODE_SCORE,
    AlikeAware,
    BatchFilterPlugin,
    BatchNormalizePlugin,
    BatchScorePlugin,
    ClusterEvent,
    EnqueueExtensions,
    Plugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    UnchangedByAlike,
)
from ...framework.result import Explainer
from ...framework.status import error, skip, unresolvable, unschedulable
from ..helper import map_list
from .alike import AffinityTracker, tracks
from .index import (
    KIND_NAMES,
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    existing_terms_for,
    matching_by_node,
    matching_by_value,
    nodes_holding,
)
from .terms import AffinityTerm, pod_terms

if TYPE_CHECKING:
    from ...api.model import Pod
    from ...backend.snapshot import NodeInfo
    from ...framework.cycle_state import CycleState
    from ...framework.result import CycleResult
    from ...framework.status import Status


PRE_FILTER_KEY = "PreFilterInterPodAffinity"
PRE_SCORE_KEY = "PreScoreInterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

# explain(): how many pods are named per term, and how many topology domains per count table
SAMPLE_LIMIT = 20
DOMAIN_LIMIT = 20

Pair = tuple  # (topology key, topology value)


# ----------------------------------------------------------------------------- counting helpers


def _add(counts: dict, node_labels, key: str, value: int) -> None:
    """topologyToMatchedTermCount.update: only nodes with the key count; zero entries disappear."""
    tv = node_labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = counts.get(pair, 0) + value
    if n == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = n


def matches_all(terms, pod) -> bool:
    """podMatchesAllAffinityTerms: false for no terms. The incoming pod's namespaceSelectors are
    already unrolled into namespaces, so no namespace labels are needed."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod, None):
            return False
    return True


class _Sample:
    """Up to SAMPLE_LIMIT (pod, node, domain) entries and how many more there were."""

    __slots__ = ("items", "more")

    def __init__(self):
        self.items: list[dict] = []
        self.more = 0

    def add(self, entry_fn) -> None:
        if len(self.items) < SAMPLE_LIMIT:
            self.items.append(entry_fn())
        else:
            self.more += 1

    def doc(self) -> dict:
        d: dict[str, Any] = {"pods": self.items}
        if self.more:
            d["podsOmitted"] = self.more
        return d


class _LazySample:
    """A _Sample of the existing pods' matching terms, gathered only when explain() asks: `total`
    entries match in all; `fill(sample)` adds them in node/pod/term order until the sample is full."""

    __slots__ = ("_fill", "_total", "_done")

    def __init__(self, total: int, fill):
        self._total = total
        self._fill = fill
        self._done: _Sample | None = None

    def _sample(self) -> _Sample:
        if self._done is None:
            smp = _Sample()
            if self._total:
                self._fill(smp)
            smp.more = max(self._total - len(smp.items), 0)
            self._done = smp
        return self._done

    @property
    def items(self) -> list:
        return self._sample().items

    @property
    def more(self) -> int:
        return self._sample().more

    def doc(self) -> dict:
        return self._sample().doc()


# ----------------------------------------------------------------------------- cycle states


class PreFilterState:
    """preFilterState: the three count tables, the incoming pod's resolved terms, its namespace labels."""

    __slots__ = (
        "existing_anti_counts",
        "affinity_counts",
        "anti_counts",
        "pod",
        "affinity_terms",
        "anti_terms",
        "ns_labels",
        "trace",
    )

    def __init__(self, pod, affinity_terms, anti_terms, ns_labels):
        self.pod = pod
        self.affinity_terms: tuple[AffinityTerm, ...] = affinity_terms
        self.anti_terms: tuple[AffinityTerm, ...] = anti_terms
        self.ns_labels = ns_labels
        self.existing_anti_counts: dict[Pair, int] = {}
        self.affinity_counts: dict[Pair, int] = {}
        self.anti_counts: dict[Pair, int] = {}
        self.trace: dict | None = None  # samples for explain(); shared by clones

    def clone(self) -> PreFilterState:
        c = PreFilterState(self.pod, self.affinity_terms, self.anti_terms, self.ns_labels)
        c.existing_anti_counts = dict(self.existing_anti_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_counts = dict(self.anti_counts)
        c.trace = self.trace
        return c

    def update_with_pod(self, other, node, multiplier: int) -> None:
        """A pod added to (1) or removed from (-1) the node, as preemption's dry run does."""
        labels = node.labels
        for t in pod_terms(other).required_anti_affinity:
            if t.matches(self.pod, self.ns_labels):
                _add(self.existing_anti_counts, labels, t.topology_key, multiplier)
        if matches_all(self.affinity_terms, other):
            for t in self.affinity_terms:
                _add(self.affinity_counts, labels, t.topology_key, multiplier)
        for t in self.anti_terms:
            if t.matches(other, None):
                _add(self.anti_counts, labels, t.topology_key, multiplier)


class PreScoreState:
    """preScoreState: topology key -> value -> summed weight. Never changed after PreScore."""

    __slots__ = ("topology_score", "pod", "ns_labels", "trace")

    def __init__(self, pod, ns_labels):
        self.pod = pod
        self.ns_labels = ns_labels
        self.topology_score: dict[str, dict[str, int]] = {}
        self.trace: dict | None = None

    def clone(self) -> PreScoreState:
        return self


# ----------------------------------------------------------------------------- the plugin


class InterPodAffinity(
    Plugin,
    PreFilterPlugin,
    PreFilterExtensions,
    BatchFilterPlugin,
    PreScorePlugin,
    BatchScorePlugin,
    BatchNormalizePlugin,
    EnqueueExtensions,
    Explainer,
    UnchangedByAlike,
    AlikeAware,
):
    name = "InterPodAffinity"

    def __init__(self, args, handle):
        super().__init__(args, handle)
        w = (args or {}).get("hardPodAffinityWeight")
        self.hard_pod_affinity_weight = 1 if w is None else int(w)
        self.ignore_preferred_terms_of_existing_pods = bool((args or {}).get("ignorePreferredTermsOfExistingPods"))

    # -- namespaces -------------------------------------------------------------------
    def _all_namespace_labels(self, pod) -> dict:
        cluster = getattr(self.handle, "cluster", None)
        known = cluster.namespace_labels if cluster is not None else {}
        if pod.namespace in known:
            return known
        # the incoming pod's namespace exists in any cluster that admitted it
        merged = dict(known)
        merged[pod.namespace] = {"kubernetes.io/metadata.name": pod.namespace}
        return merged

    def _namespace_labels(self, pod) -> dict:
        """GetNamespaceLabelsSnapshot for the pod's namespace."""
        return self._all_namespace_labels(pod)[pod.namespace]

    def unchanged_by_alike(self, pod: Pod) -> bool:
        """A pod without affinity terms: pods alike to it bring no terms, so neither the existing
        pods' terms it meets nor the counts they read change as they are bound."""
        t = pod_terms(pod)
        return not (
            t.error
            or t.required_affinity
            or t.required_anti_affinity
            or t.preferred_affinity
            or t.preferred_anti_affinity
        )

    def alike_tracker(self, state: CycleState, pod: Pod) -> AffinityTracker | None:
        """A pod whose only terms are required anti-affinity: its copies move PreFilter's counts."""
        if not tracks(pod):
            return None
        tracker = AffinityTracker(self, state, pod, PRE_FILTER_KEY, PRE_SCORE_KEY)
        return tracker if tracker.usable else None

    # -- PreFilter ----------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        terms = pod_terms(pod)
        if terms.error:
            return None, unresolvable(f"parsing pod: {terms.error}")
        if not (terms.required_affinity or terms.required_anti_affinity):
            # no terms of its own: nothing to count unless an existing pod's required
            # anti-affinity term matches it (most pods); else skipped as below
            met = existing_terms_for(self.handle.snapshot).entries_matching(pod, self._namespace_labels(pod))
            if not any(e.kind == REQUIRED_ANTI_AFFINITY for _, e in met):
                return None, skip()
        all_ns: dict = {}  # read only to resolve the terms below
        if terms.required_affinity or terms.required_anti_affinity:
            all_ns = self._all_namespace_labels(pod)
        aff = tuple(t.with_namespaces_resolved(all_ns) for t in terms.required_affinity)
        anti = tuple(t.with_namespaces_resolved(all_ns) for t in terms.required_anti_affinity)
        s = PreFilterState(pod, aff, anti, self._namespace_labels(pod))
        trace: dict[str, Any] = {"affinity": [_Sample() for _ in aff], "anti": [_Sample() for _ in anti]}
        s.trace = trace

        trace["existing"] = self._count_existing_anti_affinity(s, pod)
        if aff or anti:
            self._count_incoming(s, nodes, trace)

        if not s.existing_anti_counts and not aff and not anti:
            return None, skip()
        state.write(PRE_FILTER_KEY, s)
        return None, None

    def _count_existing_anti_affinity(self, s: PreFilterState, pod) -> _LazySample:
        """Existing pods' required anti-affinity terms that match the incoming pod, per topology
        pair; aggregated per distinct term (see ExistingTermsIndex)."""
        counts = s.existing_anti_counts
        snapshot = self.handle.snapshot
        idx = existing_terms_for(snapshot)
        ns_labels = s.ns_labels
        matched = set()
        total = 0
        for key, e in idx.entries_matching(pod, ns_labels):
            if e.kind != REQUIRED_ANTI_AFFINITY:
                continue
            matched.add(key)
            tk = e.term.topology_key
            for tv, n in idx.counts(e).items():
                total += n
                if tv is not None:
                    pair = (tk, tv)
                    counts[pair] = counts.get(pair, 0) + n

        def fill(sample: _Sample) -> None:
            for ni in idx.holders(matched):
                labels = ni.node.labels
                for ep in ni.pods_with_required_anti_affinity:
                    for i, t in enumerate(pod_terms(ep).required_anti_affinity):
                        if (REQUIRED_ANTI_AFFINITY, id(t)) in matched:
                            if len(sample.items) >= SAMPLE_LIMIT:
                                return
                            sample.items.append(
                                {
                                    "pod": ep.key,
                                    "node": ni.node.name,
                                    "term": i,
                                    "topologyKey": t.topology_key,
                                    "domain": labels.get(t.topology_key),
                                }
                            )

        return _LazySample(total, fill)

    def _count_incoming(self, s: PreFilterState, nodes, trace) -> None:
        """getIncomingAffinityAntiAffinityCounts: existing pods against the incoming pod's terms.
        Only nodes that may hold a matching pod are scanned (see interpodaffinity_index)."""
        snapshot = self.handle.snapshot
        aff = s.affinity_terms
        if aff:
            affc = s.affinity_counts
            aff_all = _all_of([t.compile() for t in aff])
            samples = trace["affinity"]
            for ni in nodes_holding(snapshot, nodes, aff):
                hits = list(filter(aff_all, ni.pods))
                if not hits:
                    continue
                labels = ni.node.labels
                for i, t in enumerate(aff):
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        pair = (t.topology_key, tv)
                        affc[pair] = affc.get(pair, 0) + len(hits)
                    _sample_pods(samples[i], hits, ni, tv)
        antic = s.anti_counts
        for i, t in enumerate(s.anti_terms):
            pred = t.compile()
            sample = trace["anti"][i]
            key = t.topology_key
            for ni in nodes_holding(snapshot, nodes, [t]):
                hits = list(filter(pred, ni.pods))
                if not hits:
                    continue
                tv = ni.node.labels.get(key)
                if tv is not None:
                    antic[(key, tv)] = antic.get((key, tv), 0) + len(hits)
                _sample_pods(sample, hits, ni, tv)

    # -- PreFilterExtensions --------------------------------------------------------------
    def _pre_filter_state(self, state):
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return None, error(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        return s, None

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
        s, st = self._pre_filter_state(state)
        if st is not None:
            return st
        s.update_with_pod(pod_to_add, node_info.node, 1)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status | None:
        s, st = self._pre_filter_state(state)
        if st is not None:
            return st
        s.update_with_pod(pod_to_remove, node_info.node, -1)
        return None

    # -- Filter -------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s, st = self._pre_filter_state(state)
        if st is not None:
            return st
        labels = node_info.node.labels
        if not satisfies_pod_affinity(s, labels):
            return unresolvable(ERR_REASON_AFFINITY)
        if not satisfies_pod_anti_affinity(s, labels):
            return unschedulable(ERR_REASON_ANTI_AFFINITY)
        if not satisfies_existing_pods_anti_affinity(s, labels):
            return unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY)
        return None

    def filter_array(self, state: CycleState, pod: Pod, np: Any) -> Any:
        """Whether each of the snapshot's nodes passes filter, as a boolean array of `np` in its
        node order (scheduling/columnar.py): each check's domains that fail it (or, for the
        pod's affinity, pass it) looked up by the label's code; a node without a required
        affinity term's key fails. None without PreFilter's state (filter's error, which the
        full cycle reports)."""
        s = state.get(PRE_FILTER_KEY)
        snapshot = getattr(self.handle, "snapshot", None)
        if s is None or snapshot is None:
            return None

        def holding(key: str, counts: dict) -> Any:
            # nodes whose value of `key` has a positive count in `counts` (keyed (key, value))
            codes, code_of = snapshot.label_code_index(key, np)
            lookup = np.zeros(len(code_of) + 1, dtype=bool)  # (code -1, no such label: the last, False)
            at = [code_of[v] for (k, v), n in counts.items() if k == key and n > 0 and v in code_of]
            if at:
                lookup[np.array(at, dtype=np.intp)] = True
            return lookup[codes]

        passes = np.ones(len(snapshot.node_infos), dtype=bool)
        if s.affinity_terms:
            has_keys = np.ones(len(passes), dtype=bool)
            held = np.ones(len(passes), dtype=bool)
            for t in s.affinity_terms:
                has_keys &= snapshot.label_code_index(t.topology_key, np)[0] >= 0
                held &= holding(t.topology_key, s.affinity_counts)
            if not s.affinity_counts and matches_all(s.affinity_terms, s.pod):
                held[:] = True  # the first pod of a series that matches its own terms
            passes &= has_keys & held
        if s.anti_counts:
            for key in {t.topology_key for t in s.anti_terms}:
                passes &= ~holding(key, s.anti_counts)
        for key in {k for (k, _), n in s.existing_anti_counts.items() if n > 0}:
            passes &= ~holding(key, s.existing_anti_counts)
        return passes

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """filter over many nodes: the existing pods' anti-affinity is checked from the topology
        pairs that hold a match (few) instead of from each node's labels."""
        s, st = self._pre_filter_state(state)
        if st is not None:
            return [st] * len(nodes)
        blocked: dict[str, set[str]] = {}
        for (key, value), n in (s.existing_anti_counts or {}).items():
            if n > 0:
                blocked.setdefault(key, set()).add(value)
        check_affinity = bool(s.affinity_terms)
        check_anti = bool(s.anti_counts)
        if not (check_affinity or check_anti or blocked):
            return [None] * len(nodes)
        st_affinity = unresolvable(ERR_REASON_AFFINITY)
        st_anti = unschedulable(ERR_REASON_ANTI_AFFINITY)
        st_existing = unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY)
        blocked_items = list(blocked.items())
        snapshot = self.handle.snapshot
        if nodes is snapshot.node_infos and not check_affinity:
            # every node at once, from the snapshot's label columns: the domains holding a
            # match, per topology key; the first check that fails names the node's status
            anti: dict[str, set[str]] = {}
            if check_anti:
                for t in s.anti_terms:
                    key = t.topology_key
                    held = anti.setdefault(key, set())
                    held.update(tv for (k, tv), n in s.anti_counts.items() if k == key and n > 0)
            out: list[Status | None] = [None] * len(nodes)
            for checks, st in ((blocked_items, st_existing), (list(anti.items()), st_anti)):
                for key, values in checks:
                    if values:
                        out = [st if v in values else o for v, o in zip(snapshot.label_column(key), out)]
            return out
        out = []
        for ni in nodes:
            labels = ni.node.labels
            if check_affinity and not satisfies_pod_affinity(s, labels):
                out.append(st_affinity)
            elif check_anti and not satisfies_pod_anti_affinity(s, labels):
                out.append(st_anti)
            elif blocked_items and any(labels.get(k) in vs for k, vs in blocked_items):
                out.append(st_existing)
            else:
                out.append(None)
        return out

    # -- PreScore -------------------------------------------------------------------------
    def pre_score(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo], all_nodes: list[NodeInfo] | None = None
    ) -> Status | None:
        has_constraints = _has_preferred(pod.pod_affinity) or _has_preferred(pod.pod_anti_affinity)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return skip()
        snapshot = self.handle.snapshot

        terms = pod_terms(pod)
        if terms.error:
            return error(f"failed to parse pod: {terms.error}")
        hard = self.hard_pod_affinity_weight
        if not has_constraints:
            # no preferred terms of its own: nothing to score unless an existing pod's term that
            # PreScore weighs matches it; else skipped as below
            met = existing_terms_for(snapshot).entries_matching(pod, self._namespace_labels(pod))
            if not any(_weighed(e.kind, hard) for _, e in met):
                return skip()
        all_ns = self._all_namespace_labels(pod) if has_constraints else {}  # {}: no preferred terms to resolve
        pref_aff = tuple(t.with_namespaces_resolved(all_ns) for t in terms.preferred_affinity)
        pref_anti = tuple(t.with_namespaces_resolved(all_ns) for t in terms.preferred_anti_affinity)
        s = PreScoreState(pod, self._namespace_labels(pod))
        trace: dict[str, Any] = {
            "preferredAffinity": [_Sample() for _ in pref_aff],
            "preferredAntiAffinity": [_Sample() for _ in pref_anti],
        }
        s.trace = trace
        score = s.topology_score
        ns_labels = s.ns_labels

        def bump(key: str, tv: str, delta: int) -> None:
            vals = score.get(key)
            if vals is None:
                score[key] = {tv: delta}
            else:
                vals[tv] = vals.get(tv, 0) + delta

        # the incoming pod's preferred terms against every existing pod (nodes that may hold a match)
        explained = state.explained
        if has_constraints:
            all_nodes = snapshot.list()
            for sign, lst, samples in (
                (1, pref_aff, trace["preferredAffinity"]),
                (-1, pref_anti, trace["preferredAntiAffinity"]),
            ):
                for i, t in enumerate(lst):
                    pred = t.compile()
                    key = t.topology_key
                    sample = samples[i]
                    if not explained:
                        # no samples to take: the matching pods' count per domain, at once
                        per_value = matching_by_value(snapshot, all_nodes, t, key)
                        if per_value is not None:
                            w = sign * t.weight
                            vals = score.get(key)
                            if vals is None:
                                vals = {tv: w * n for tv, n in per_value.items() if tv is not None}
                                if vals:
                                    score[key] = vals
                            else:
                                for tv, n in per_value.items():
                                    if tv is not None:
                                        vals[tv] = vals.get(tv, 0) + w * n
                            continue
                    held = matching_by_node(snapshot, all_nodes, t)
                    if held is None:
                        for ni in nodes_holding(snapshot, all_nodes, [t]):
                            tv = ni.node.labels.get(key)
                            if tv is None or not ni.pods:
                                continue
                            hits = list(filter(pred, ni.pods))
                            if hits:
                                bump(key, tv, sign * t.weight * len(hits))
                                _sample_pods(sample, hits, ni, tv)
                        continue
                    # the matching pods' count per node, in node order: a node's pods are looked
                    # at only while the sample has room
                    for ni, n in held:
                        tv = ni.node.labels.get(key)
                        if tv is None:
                            continue
                        bump(key, tv, sign * t.weight * n)
                        if not explained:
                            continue
                        if len(sample.items) < SAMPLE_LIMIT:
                            _sample_pods(sample, list(filter(pred, ni.pods)), ni, tv)
                        else:
                            sample.more += n
        # the existing pods' required and preferred terms against the incoming pod, per distinct
        # term (replicas share theirs): its carriers' count per topology value times its weight
        idx = existing_terms_for(snapshot)
        matched: dict = {}
        total = 0
        for key, e in idx.entries_matching(pod, ns_labels):
            kind = e.kind
            if not _weighed(kind, hard):
                continue
            t = e.term
            w = hard if kind == REQUIRED_AFFINITY else (t.weight if kind == PREFERRED_AFFINITY else -t.weight)
            matched[key] = w
            tk = t.topology_key
            vals = score.get(tk)
            if vals is None:
                vals = score[tk] = {}
            for tv, n in idx.counts(e).items():
                if tv is not None:
                    vals[tv] = vals.get(tv, 0) + w * n
                    total += n
            if not vals:
                del score[tk]  # (no carrier's node has the key: bump would not have made it)

        def fill(sample: _Sample) -> None:
            for ni in idx.holders(matched):
                labels = ni.node.labels
                if not labels:
                    continue
                for ep in ni.pods_with_affinity:
                    et = pod_terms(ep)
                    for kind, lst in (
                        (REQUIRED_AFFINITY, et.required_affinity),
                        (PREFERRED_AFFINITY, et.preferred_affinity),
                        (PREFERRED_ANTI_AFFINITY, et.preferred_anti_affinity),
                    ):
                        for i, t in enumerate(lst):
                            w = matched.get((kind, id(t)))
                            if w is None:
                                continue
                            tv = labels.get(t.topology_key)
                            if tv is None:
                                continue
                            if len(sample.items) >= SAMPLE_LIMIT:
                                return
                            sample.items.append(
                                {
                                    "pod": ep.key,
                                    "node": ni.node.name,
                                    "term": f"{KIND_NAMES[kind]}[{i}]",
                                    "topologyKey": t.topology_key,
                                    "domain": tv,
                                    "weight": w,
                                }
                            )

        trace["existing"] = _LazySample(total, fill)

        if not score:
            return skip()
        state.write(PRE_SCORE_KEY, s)
        return None

    # -- Score ----------------------------------------------------------------------------
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        labels = node_info.node.labels
        total = 0
        for key, values in s.topology_score.items():
            tv = labels.get(key)
            if tv is not None:
                total += values.get(tv, 0)
        return total, None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        """score over many nodes: per topology key scored, each node's domain's score read off the
        snapshot's label column (at CycleState.score_positions, or every node), summed key by key."""
        s = state.get(PRE_SCORE_KEY)
        snapshot = getattr(self.handle, "snapshot", None)
        positions = state.score_positions
        if s is None:
            return [0] * len(nodes), error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        if snapshot is None or (positions is None and nodes is not snapshot.node_infos):
            return [self.score(state, pod, ni)[0] for ni in nodes], None
        at = itemgetter(*positions) if positions is not None and len(positions) > 1 else None
        totals: list[int] | None = None
        for key, values in s.topology_score.items():
            col = snapshot.label_column(key)
            if positions is not None:
                col = list(at(col)) if at is not None else [col[i] for i in positions]
            # (a node without the key: None, which no domain's score is kept under)
            scores = list(map(values.get, col, repeat(0)))
            totals = scores if totals is None else list(map(add, totals, scores))
        return (totals if totals is not None else [0] * len(nodes)), None

    def array_scores_in_range(self, state: CycleState) -> bool:
        # normalize_array maps [lowest, highest] into [0, 100]; with nothing scored, every node's
        # score is 0
        return True

    def score_array(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Any:
        """score_nodes as an int64 array, for the snapshot's own nodes at
        CycleState.score_positions_array (scheduling/columnar.py): per topology key scored, each
        node's domain's score looked up by its label's code. None otherwise, or when a domain's
        score is too large for the float64 arithmetic of normalize_array to stay exact."""
        s = state.get(PRE_SCORE_KEY)
        made = state.score_positions_array
        snapshot = getattr(self.handle, "snapshot", None)
        np = sys.modules.get("numpy")
        if s is None or snapshot is None or np is None or made is None or made[0] is not state.score_positions:
            return None
        at = made[1]
        total = np.zeros(len(at), dtype=np.int64)
        bound = 0
        for key, values in s.topology_score.items():
            codes, code_of = snapshot.label_code_index(key, np)
            try:
                scored = np.fromiter(values.values(), dtype=np.int64, count=len(values))
            except OverflowError:
                return None  # (a score past int64: past the bound below too)
            if len(scored):
                bound += max(int(scored.max()), -int(scored.min()))  # the largest magnitude
            if bound >= 2**50:
                return None
            # each domain's score at its code; a value no node has goes to a slot no code reads
            # (len(code_of)), and code -1 (no such label) reads the last slot, never written: 0
            sink = len(code_of)
            lookup = np.zeros(sink + 2, dtype=np.int64)
            where = np.fromiter(map(code_of.get, values, repeat(sink)), dtype=np.intp, count=len(values))
            lookup[where] = scored
            total += lookup.take(codes.take(at))
        return total

    def normalize_array(self, state: CycleState, pod: Pod, scores: Any, at: Any) -> Any:
        """normalize_score on an int64 array (its values below 2**52 in magnitude, as score_array
        makes them: their differences convert to float64 exactly), the same IEEE operations."""
        s = state.get(PRE_SCORE_KEY)
        np = sys.modules.get("numpy")
        if s is None or np is None:
            return None
        if not s.topology_score or not len(scores):
            return scores
        lo = int(scores.min())
        diff = int(scores.max()) - lo
        if diff <= 0:
            return np.zeros(len(scores), dtype=np.int64)
        return (float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / float(diff))).astype(np.int64)

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        if not s.topology_score or not scores:
            return None
        lo = min(scores.values())
        hi = max(scores.values())
        diff = hi - lo
        for name, v in scores.items():
            f = 0.0
            if diff > 0:
                f = float(MAX_NODE_SCORE) * (float(v - lo) / float(diff))
            scores[name] = int(f)
        return None

    def normalize_scores(
        self, state: CycleState, pod: Pod, scores: list[int], names: list[str]
    ) -> tuple[list[int], Status | None]:
        """normalize_score on a list (the scores of `names`, in their order): the same arithmetic,
        once per distinct score (nodes of one domain share theirs)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return list(scores), error(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        if not s.topology_score or not scores:
            return list(scores), None
        distinct = set(scores)
        lo = min(distinct)
        diff = max(distinct) - lo

        def normalized(v: int) -> int:
            f = 0.0
            if diff > 0:
                f = float(MAX_NODE_SCORE) * (float(v - lo) / float(diff))
            return int(f)

        return map_list(scores, normalized, distinct), None

    # -- queueing -------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent(
                "Pod",
                "Add|UpdatePodLabel|Delete",
                "a bound pod matching the pod's affinity appears (or gets matching labels), "
                "or a pod its anti-affinity (or whose anti-affinity) rejects it goes away",
            ),
            ClusterEvent(
                "Node",
                "Add|UpdateNodeLabel",
                "a node gets the topology key of the pod's (anti-)affinity terms, or moves domain",
            ),
        ]

    # -- explanation ----------------------------------------------------------------------
    def explain(self, state: CycleState, pod: Pod, result: CycleResult) -> dict | None:
        out: dict = {}
        pf = state.get(PRE_FILTER_KEY)
        if pf is not None and pf.trace is not None:
            if pf.affinity_terms:
                out["requiredAffinity"] = [
                    {
                        "term": i,
                        **t.describe(),
                        **pf.trace["affinity"][i].doc(),
                        **_domains(pf.affinity_counts, t.topology_key),
                    }
                    for i, t in enumerate(pf.affinity_terms)
                ]
                if not pf.affinity_counts:
                    out["firstPodOfSeries"] = matches_all(pf.affinity_terms, pod)
            if pf.anti_terms:
                out["requiredAntiAffinity"] = [
                    {"term": i, **t.describe(), **pf.trace["anti"][i].doc(), **_domains(pf.anti_counts, t.topology_key)}
                    for i, t in enumerate(pf.anti_terms)
                ]
            if pf.existing_anti_counts or pf.trace["existing"].items:
                out["existingAntiAffinity"] = {**pf.trace["existing"].doc(), **_domains(pf.existing_anti_counts, None)}
        ps = state.get(PRE_SCORE_KEY)
        if ps is not None and ps.trace is not None:
            terms = pod_terms(pod)
            sc: dict = {}
            for name, lst in (
                ("preferredAffinity", terms.preferred_affinity),
                ("preferredAntiAffinity", terms.preferred_anti_affinity),
            ):
                if lst:
                    sc[name] = [{"term": i, **t.describe(), **ps.trace[name][i].doc()} for i, t in enumerate(lst)]
            if ps.trace["existing"].items:
                sc["existingPodsTerms"] = ps.trace["existing"].doc()
            sc["topologyScore"], omitted = _bounded_topology_score(ps.topology_score)
            if omitted:
                sc["topologyScoreOmitted"] = omitted
            out["score"] = sc
        return out or None


# ----------------------------------------------------------------------------- filter checks


def satisfies_existing_pods_anti_affinity(s: PreFilterState, node_labels) -> bool:
    counts = s.existing_anti_counts
    if counts:
        for pair in node_labels.items():
            if counts.get(pair, 0) > 0:
                return False
    return True


def satisfies_pod_anti_affinity(s: PreFilterState, node_labels) -> bool:
    counts = s.anti_counts
    if counts:
        for t in s.anti_terms:
            tv = node_labels.get(t.topology_key)
            if tv is not None and counts.get((t.topology_key, tv), 0) > 0:
                return False
    return True


def satisfies_pod_affinity(s: PreFilterState, node_labels) -> bool:
    pods_exist = True
    counts = s.affinity_counts
    for t in s.affinity_terms:
        tv = node_labels.get(t.topology_key)
        if tv is None:
            return False  # every topology key must be on the node
        if counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a series with affinity to itself: no pod anywhere matches the terms,
    # but the pod matches its own terms, and the node has every topology key.
    return not counts and matches_all(s.affinity_terms, s.pod)


# ----------------------------------------------------------------------------- helpers


def _weighed(kind: int, hard: int) -> bool:
    """Whether PreScore weighs an existing pod's term of this kind: its preferred terms, and its
    required affinity terms when hardPodAffinityWeight is positive."""
    return kind != REQUIRED_ANTI_AFFINITY and (kind != REQUIRED_AFFINITY or hard > 0)


def _all_of(preds):
    if len(preds) == 1:
        return preds[0]

    def every(p) -> bool:
        for f in preds:
            if not f(p):
                return False
        return True

    return every


def _sample_pods(sample: _Sample, hits, ni, tv) -> None:
    room = SAMPLE_LIMIT - len(sample.items)
    for p in hits[: max(room, 0)]:
        sample.items.append({"pod": p.key, "node": ni.node.name, "domain": tv})
    if len(hits) > room:
        sample.more += len(hits) - max(room, 0)


def _has_preferred(section) -> bool:
    return bool(section) and bool(section.get("preferredDuringSchedulingIgnoredDuringExecution"))


def _domains(counts: dict, key: str | None) -> dict:
    """{"domains": the count table's entries (for one topology key, or all), largest first, at most
    DOMAIN_LIMIT; "domainsOmitted": how many more there were, when any}."""
    rows = [(k, v, n) for (k, v), n in counts.items() if key is None or k == key]
    rows.sort(key=lambda r: (-r[2], r[0], r[1]))
    out: dict = {
        "domains": [
            {"topologyKey": k, "domain": v, "count": n} if key is None else {"domain": v, "count": n}
            for k, v, n in rows[:DOMAIN_LIMIT]
        ]
    }
    if len(rows) > DOMAIN_LIMIT:
        out["domainsOmitted"] = len(rows) - DOMAIN_LIMIT
    return out


def _bounded_topology_score(ts: dict) -> tuple[dict, dict]:
    """Per topology key, the DOMAIN_LIMIT domains of largest raw score; and per key, how many
    domains were left out (keys with none absent)."""
    out = {}
    omitted = {}
    for key in sorted(ts):
        vals = sorted(ts[key].items(), key=lambda kv: (-abs(kv[1]), kv[0]))
        out[key] = dict(vals[:DOMAIN_LIMIT])
        if len(vals) > DOMAIN_LIMIT:
            omitted[key] = len(vals) - DOMAIN_LIMIT
    return out, omitted
