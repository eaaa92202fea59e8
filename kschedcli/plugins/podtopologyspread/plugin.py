"""PodTopologySpread: spread matching pods evenly over topology domains (zones, hosts, ...).

PreFilter counts, once per cycle, the pods matching each DoNotSchedule constraint per domain over every
eligible node; Filter then checks `matching pods in the node's domain + self-match - global minimum`
against maxSkew. PreScore does the same counting for ScheduleAnyway constraints; Score turns the counts
into a node score that NormalizeScore inverts (fewer matching pods, higher score).
Pods without constraints get the profile's default constraints (System: hostname 3 and zone 5,
ScheduleAnyway) with a selector deduced from the Services and the controller that own them.
"""

from __future__ import annotations

import operator
import sys
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

from ...errors import FieldError
from ...framework.cycle_state import NotFound
from ...framework.interface import (
    MAX_NODE_SCORE,
    AlikeAware,
    BatchFilterPlugin,
    BatchNormalizePlugin,
    BatchScorePlugin,
    CacheHolder,
    ClusterEvent,
    EnqueueExtensions,
    Plugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
)
from ...framework.result import Explainer
from ...framework.status import error, skip, unresolvable, unschedulable
from ..helper import find_untolerated_taint, map_list, map_scores
from ..nodeaffinity import required_node_affinity_column
from .alike import SpreadTracker, normalized_spread_score
from .common import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME_KEY,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    NamespaceIndex,
    build_constraints,
    default_selector,
    go_round,
    score_for_count,
    topology_normalizing_weight,
)
from .counting import (
    CriticalPaths,
    PreFilterState,
    PreScoreState,
    _count_matching,
    _eligibility_is_trivial,
    _has_all_keys,
    _MatchCountCache,
    _NodeEligibility,
    counts_by_position,
)

if TYPE_CHECKING:
    from ...api.model import Pod
    from ...backend.snapshot import NodeInfo
    from ...framework.cycle_state import CycleState
    from ...framework.result import CycleResult
    from ...framework.status import Status


NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

_EXPLAIN_LIMIT = 200  # most domains / nodes listed per constraint in explain()


def _signature_score(counts: tuple, terms: list) -> int:
    """A node's score from its matching pods per constraint (None: the node lacks the key), the
    constraints' terms added in their order as Score does."""
    total = 0.0
    for cnt, (_, _, _, _, skew_term, weight) in zip(counts, terms):
        if cnt is not None:
            total += float(cnt) * weight + skew_term
    return go_round(total)


def _ignored_at(snapshot, ignored: set[str], at, np):
    """Whether each of the snapshot's nodes at positions `at` is one PreScore ignored (a boolean
    array of `np`)."""
    index_of = snapshot.index_of
    gone = np.zeros(len(snapshot.node_infos), dtype=bool)
    gone[[index_of[n] for n in ignored if n in index_of]] = True
    return gone[at]


class _SignatureScores(dict):
    """signature (a node's count per constraint) -> its score, worked out when first asked for."""

    def __init__(self, terms: list):
        super().__init__()
        self.terms = terms

    def __missing__(self, counts: tuple) -> int:
        score = self[counts] = _signature_score(counts, self.terms)
        return score


class PodTopologySpread(
    Plugin,
    PreFilterPlugin,
    PreFilterExtensions,
    BatchFilterPlugin,
    PreScorePlugin,
    BatchScorePlugin,
    BatchNormalizePlugin,
    EnqueueExtensions,
    Explainer,
    CacheHolder,
    AlikeAware,
):
    name = NAME

    def __init__(self, args, handle):
        super().__init__(args, handle)
        args = args or {}
        if (args.get("defaultingType") or "System") == "System":
            self.default_constraints = [dict(c) for c in SYSTEM_DEFAULT_CONSTRAINTS]
            self.system_defaulted = True
        else:
            self.default_constraints = [dict(c) for c in args.get("defaultConstraints") or []]
            self.system_defaulted = False
        self._match_counts = _MatchCountCache()
        self._services = NamespaceIndex("Service")  # DefaultSelector's Services by namespace

    def clear_caches(self) -> None:
        """Forget the per-node counts kept between cycles (for timing one cold cycle)."""
        self._match_counts.clear()

    def _counters(self, namespace: str, constraints: list[Constraint]) -> list:
        """One memoised counter per constraint; constraints sharing a selector share it."""
        snapshot = self.handle.snapshot
        by_sel: dict[int, object] = {}
        out = []
        for c in constraints:
            f = by_sel.get(id(c.selector))
            if f is None:
                f = by_sel[id(c.selector)] = self._match_counts.counter(snapshot, namespace, c.selector)
            out.append(f)
        return out

    # -- constraints ---------------------------------------------------------------
    def constraints_for(self, pod, action: str) -> tuple[list[Constraint], str]:
        """The pod's own constraints with this whenUnsatisfiable, else the defaults with a deduced selector.

        Returns (constraints, source) with source "pod", "default" or "". Raises FieldError.
        """
        if pod.spread_constraints:
            key = ("PodTopologySpread", action)
            cached = pod._cache.get(key)
            if cached is None:
                cached = pod._cache[key] = build_constraints(pod.spread_constraints, pod.labels, action)
            return cached, "pod"
        default_key = ("PodTopologySpread", id(self), action)
        cached = pod._cache.get(default_key)
        if cached is None:
            cached = pod._cache[default_key] = self._build_default_constraints(pod, action)
        return cached, "default" if cached else ""

    def _build_default_constraints(self, pod, action: str) -> list[Constraint]:
        cons = build_constraints(self.default_constraints, pod.labels, action, "defaultConstraints")
        if not cons:
            return []
        selector, text = default_selector(pod, self.handle.cluster, self._services)
        if selector.is_empty():
            return []
        for c in cons:
            c.selector = selector
            c.text = text
        return cons

    # -- PreFilter -------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        try:
            constraints, _ = self.constraints_for(pod, DO_NOT_SCHEDULE)
        except FieldError as e:
            return None, error(f"get constraints from pod: obtaining pod's hard topology spread constraints: {e}")
        if not constraints:
            return None, skip()
        state.write(PRE_FILTER_KEY, self._pre_filter_state(pod, constraints, nodes))
        return None, None

    def _pre_filter_state(self, pod, constraints: list[Constraint], nodes) -> PreFilterState:
        n = len(constraints)
        counts: list[dict[str, int]] = [{} for _ in range(n)]
        counters = self._counters(pod.namespace, constraints)
        snapshot = self.handle.snapshot
        if snapshot is not None and nodes is snapshot.node_infos and all(hasattr(f, "held") for f in counters):
            # Every eligible node makes its domain exist (count 0); only the nodes that may hold
            # a matching pod can add to a count.
            keys = [c.topology_key for c in constraints]
            plain = _eligibility_is_trivial(pod, constraints)
            columns = [snapshot.label_column(k) for k in keys]  # each node's value of each key
            # which nodes have every key, and (made when first needed) the domains of those nodes
            # per key in node order: kept for these keys while the snapshot's columns are the same
            # lists at the same length (Snapshot.add_node extends them in place)
            memo = self.__dict__.setdefault("_nodes_with_keys", {})
            known = memo.get(tuple(keys))
            if known is None or len(known[1]) != len(columns[0]) or any(a is not b for a, b in zip(known[0], columns)):
                has_keys = (
                    list(map(operator.is_not, columns[0], repeat(None)))
                    if len(columns) == 1
                    else [None not in values for values in zip(*columns)]
                )
                known = memo[tuple(keys)] = (columns, has_keys, [None] * n)
            has_keys, domains_of = known[1], known[2]
            # matchNodeInclusionPolicies without taints: the pod's required node affinity, decided
            # for every node at once (None: a constraint honours taints, decided node by node)
            affinity = (
                required_node_affinity_column(pod, snapshot)
                if not plain and not any(c.node_taints_policy == HONOR for c in constraints)
                else None
            )
            index_of = snapshot.index_of
            # numpy, where loaded (the columnar cycle's): the eligible nodes as an array per pod
            # fields (_inclusion_array), their domains kept with it, their counts summed by domain
            np = sys.modules.get("numpy")

            def eligible(i: int, ni, c: Constraint) -> bool:
                if plain:
                    return True
                if affinity is not None:
                    return affinity[i] or c.node_affinity_policy != HONOR
                return _NodeEligibility(pod, ni.node).includes(c)

            for m_i, c in enumerate(constraints):
                if plain or (affinity is not None and c.node_affinity_policy != HONOR):
                    domains = domains_of[m_i]
                    if domains is None:
                        domains = domains_of[m_i] = dict.fromkeys(compress(columns[m_i], has_keys), 0)
                    counts[m_i] = dict(domains)
                    continue
                include = self._inclusion_array(pod, constraints, c, True, plain, np) if np is not None else None
                if include is not None:
                    counts[m_i] = dict(self._eligible_domains(include, columns[m_i]))
                    continue
                if affinity is not None:
                    rows = list(map(operator.and_, has_keys, affinity))  # (bools)
                else:
                    rows = [h and _NodeEligibility(pod, ni.node).includes(c) for h, ni in zip(has_keys, nodes)]
                # every eligible node makes its domain exist, in node order
                counts[m_i] = dict.fromkeys(compress(columns[m_i], rows), 0)
            counted: dict[int, list] = {}  # per distinct counter: (NodeInfo, count) of its holders
            for i, c in enumerate(constraints):
                m = counts[i]
                f = counters[i]
                sums = f.domain_sums(keys[0]) if plain and n == 1 else None
                if sums is not None:
                    # one constraint, every node with its key eligible: the holders' counts summed
                    # per domain, kept with the tally
                    for value, held_here in sums.items():
                        if value is not None and value in m:
                            m[value] += held_here
                    continue
                if np is not None:
                    sums = self._eligible_sums(pod, constraints, c, f, True, plain, np)
                    if sums is not None:
                        # the eligible nodes' counts per domain (each such domain is one of m's)
                        for value, held_here in sums.items():
                            if value is not None:
                                m[value] += held_here
                        continue
                held = counted.get(id(f))
                if held is None:
                    held = counted[id(f)] = f.held()
                values = columns[i]
                for ni, held_here in held:
                    pos = index_of[ni.node.name]
                    if has_keys[pos] and eligible(pos, ni, c):
                        m[values[pos]] += held_here
        else:
            for ni in nodes:
                node = ni.node
                labels = node.labels
                if not _has_all_keys(labels, constraints):
                    continue
                elig = _NodeEligibility(pod, node)
                for i, c in enumerate(constraints):
                    if not elig.includes(c):
                        continue
                    m = counts[i]
                    value = labels[c.topology_key]
                    m[value] = m.get(value, 0) + counters[i](ni)
        paths = []
        for i in range(n):
            p = CriticalPaths()
            for value, num in counts[i].items():
                p.update(value, num)
            paths.append(p)
        return PreFilterState(constraints, paths, counts)

    # -- PreFilterExtensions (preemption's dry runs) -------------------------------------
    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod_to_add, pod, node_info, 1)

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod_to_remove, pod, node_info, -1)

    def _update_with_pod(self, state, updated, preemptor, node_info, delta: int):
        try:
            s = state.read(PRE_FILTER_KEY)
        except NotFound as e:
            return error(f'reading "{PRE_FILTER_KEY}" from cycleState: {e}')
        node = node_info.node if node_info is not None else None
        if s is None or node is None or updated.namespace != preemptor.namespace:
            return None
        labels = node.labels
        if not _has_all_keys(labels, s.constraints):
            return None
        elig = _NodeEligibility(preemptor, node)
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(updated.labels):
                continue
            if not elig.includes(c):
                continue
            v = labels[c.topology_key]
            m = s.counts[i]
            m[v] = m.get(v, 0) + delta
            s.critical_paths[i].update(v, m[v])
        return None

    # -- Filter ------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        try:
            s = state.read(PRE_FILTER_KEY)
        except NotFound as e:
            return error(f'reading "{PRE_FILTER_KEY}" from cycleState: {e}')
        if not s.constraints:
            return None
        labels = node_info.node.labels
        pod_labels = pod.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            skew = s.counts[i].get(value, 0) + self_match - s.min_match_num(i)
            if skew > c.max_skew:
                return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_array(self, state: CycleState, pod: Pod, np) -> Any:
        """Whether each of the snapshot's nodes passes filter, as a boolean array of `np` in its
        node order (scheduling/columnar.py): per constraint, a verdict per domain looked up by
        the label's code (a node without the key fails). None without PreFilter's state (filter's
        error, which the full cycle reports)."""
        s = state.get(PRE_FILTER_KEY)
        snapshot = self.handle.snapshot
        if s is None or snapshot is None:
            return None
        passes = np.ones(len(snapshot.node_infos), dtype=bool)
        for i, c in enumerate(s.constraints):
            offset = (1 if c.selector.matches(pod.labels) else 0) - s.min_match_num(i)
            codes, distinct = snapshot.label_codes(c.topology_key, np)
            counts = s.counts[i]
            verdicts = [counts.get(v, 0) + offset <= c.max_skew for v in distinct]
            passes &= np.array([*verdicts, False], dtype=bool)[codes]  # (code -1, no such label: fails)
        return passes

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """filter over many nodes: each constraint's self-match and global minimum worked out once."""
        try:
            s = state.read(PRE_FILTER_KEY)
        except NotFound as e:
            return [error(f'reading "{PRE_FILTER_KEY}" from cycleState: {e}')] * len(nodes)
        if not s.constraints:
            return [None] * len(nodes)
        checks = [
            (c.topology_key, s.counts[i], (1 if c.selector.matches(pod.labels) else 0) - s.min_match_num(i), c.max_skew)
            for i, c in enumerate(s.constraints)
        ]
        st_label = unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
        st_skew = unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        snapshot = self.handle.snapshot
        if snapshot is not None and nodes is snapshot.node_infos:
            # a verdict per constraint and domain, over the snapshot's label columns; the last
            # constraint first, so that a node keeps the first constraint it fails
            out: list[Status | None] = [None] * len(nodes)
            for key, counts, offset, max_skew in reversed(checks):
                col = snapshot.label_column(key)
                verdicts = {
                    v: st_label if v is None else (st_skew if counts.get(v, 0) + offset > max_skew else None)
                    for v in set(col)
                }
                out = [o if (f := verdicts[v]) is None else f for v, o in zip(col, out)]
            return out
        out = []
        for ni in nodes:
            labels = ni.node.labels
            verdict = None
            for key, counts, offset, max_skew in checks:
                value = labels.get(key)
                if value is None:
                    verdict = st_label
                    break
                if counts.get(value, 0) + offset > max_skew:
                    verdict = st_skew
                    break
            out.append(verdict)
        return out

    # -- PreScore / Score ----------------------------------------------------------------
    def pre_score(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo], all_nodes: list[NodeInfo] | None = None
    ) -> Status | None:
        all_nodes = all_nodes if all_nodes is not None else self.handle.snapshot.list()
        if not all_nodes:
            return skip()
        s = PreScoreState()
        # nodes without a zone label still get hostname spreading under the system defaults
        s.require_all = bool(pod.spread_constraints) or not self.system_defaulted
        try:
            s.constraints, _ = self.constraints_for(pod, SCHEDULE_ANYWAY)
        except FieldError as e:
            return error(f"calculating preScoreState: obtaining pod's soft topology spread constraints: {e}")
        if not s.constraints:
            return skip()
        constraints = s.constraints
        n = len(constraints)
        s.counts = [{} for _ in range(n)]
        sizes = [0] * n
        # numpy where the columnar cycle scores the snapshot's nodes at known positions
        made = state.score_positions_array
        np = sys.modules.get("numpy") if made is not None and made[0] is state.score_positions else None
        if s.require_all and state.score_positions is not None:
            self._domains_at(s, state.score_positions, sizes)
        elif s.require_all:
            for ni in nodes:
                labels = ni.node.labels
                if not _has_all_keys(labels, constraints):
                    s.ignored_nodes.add(ni.node.name)
                    continue
                for i, c in enumerate(constraints):
                    if c.topology_key == HOSTNAME_KEY:
                        continue  # per-node counts are taken in Score
                    value = labels.get(c.topology_key, "")
                    if value not in s.counts[i]:
                        s.counts[i][value] = 0
                        sizes[i] += 1
        else:
            # every node counts: each constraint's domains, in the order the nodes meet them (read
            # off the snapshot's label columns when the nodes are its own, at known positions)
            positions = state.score_positions
            for i, c in enumerate(constraints):
                if c.topology_key != HOSTNAME_KEY:  # per-node counts are taken in Score
                    key = c.topology_key
                    if np is not None and made is not None:
                        # the domains at those positions from the label's codes (the columnar
                        # cycle, which no explanation reads: in the order of the distinct values,
                        # not the order the nodes meet them), a node without the key in ""
                        codes, distinct = self.handle.snapshot.label_codes(key, np)
                        held = np.bincount(codes[made[1]] + 1, minlength=len(distinct) + 1)
                        values = ["" if k == 0 else distinct[k - 1] for k in np.flatnonzero(held).tolist()]
                    elif positions is not None:
                        values = list(map(self.handle.snapshot.label_column(key).__getitem__, positions))
                        if self.handle.snapshot.label_missing(key) and None in values:
                            values = ["" if v is None else v for v in values]
                    else:
                        values = [ni.node.labels.get(key, "") for ni in nodes]
                    s.counts[i] = dict.fromkeys(values, 0)
                    sizes[i] = len(s.counts[i])
        for i, c in enumerate(constraints):
            size = len(nodes) - len(s.ignored_nodes) if c.topology_key == HOSTNAME_KEY else sizes[i]
            s.weights.append(topology_normalizing_weight(size))

        s.counters = counters = self._counters(pod.namespace, constraints)
        holders = all_nodes
        s.node_counts = [None] * len(constraints)
        if all_nodes is self.handle.snapshot.node_infos and all(hasattr(f, "held") for f in counters):
            # nodes without a matching pod add nothing: visit only those that may hold one, each
            # counted once per distinct counter
            counted: dict[int, list] = {}

            def held(f) -> list:
                found = counted.get(id(f))
                if found is None:
                    found = counted[id(f)] = f.held()
                return found

            for i, c in enumerate(constraints):
                if c.topology_key == HOSTNAME_KEY:
                    # a cycle nobody explains reads the tally itself (its state dies with it)
                    tally = None if state.explained else counters[i].tally_now()
                    s.node_counts[i] = tally if tally is not None else {ni.node.name: n for ni, n in held(counters[i])}
            trivial = _eligibility_is_trivial(pod, constraints)
            eligibility: dict[int, _NodeEligibility] = {}
            for i, c in enumerate(constraints):
                m = s.counts[i]
                if not m:
                    continue  # no feasible node in any domain (always so for hostname)
                key = c.topology_key
                sums = counters[i].domain_sums(key) if trivial and not s.require_all else None
                if sums is None and np is not None:
                    # (the columnar cycle's: the eligible nodes' counts summed per domain in numpy)
                    sums = self._eligible_sums(pod, constraints, c, counters[i], s.require_all, trivial, np)
                if sums is not None:
                    # every node counts: the holders' counts summed per domain, kept with the tally
                    # (a node without the key counts in the domain "", as below)
                    for value, cnt in sums.items():
                        value = "" if value is None else value
                        if value in m:
                            m[value] += cnt
                    continue
                for ni, cnt in held(counters[i]):
                    labels = ni.node.labels
                    if s.require_all and not _has_all_keys(labels, constraints):
                        continue
                    value = labels.get(key, "")
                    if value not in m:
                        continue
                    if not trivial:
                        elig = eligibility.get(id(ni))
                        if elig is None:
                            elig = eligibility[id(ni)] = _NodeEligibility(pod, ni.node)
                        if not elig.includes(c):
                            continue
                    m[value] += cnt
            state.write(PRE_SCORE_KEY, s)
            return None
        for ni in holders:
            node = ni.node
            labels = node.labels
            if s.require_all and not _has_all_keys(labels, constraints):
                continue
            elig = _NodeEligibility(pod, node)
            for i, c in enumerate(constraints):
                m = s.counts[i]
                if not m:
                    continue  # no feasible node in any domain (always so for hostname)
                value = labels.get(c.topology_key, "")
                if value in m and elig.includes(c):
                    m[value] += counters[i](ni)
        state.write(PRE_SCORE_KEY, s)
        return None

    def _eligible_sums(
        self, pod: Pod, constraints: list[Constraint], c: Constraint, counter: Any, require_all: bool, trivial: bool, np
    ) -> dict[str | None, int] | None:
        """PreScore's counts of `c` per domain over the nodes it counts (every key of the
        constraints there when `require_all`; matchNodeInclusionPolicies admitting the node
        unless `trivial`), each node's count from the counter's tally laid out by position, summed
        by the key's codes (None: a node without the key). None where the tally does not hold
        every node (a bind since the counter was made)."""
        tally = counter.tally_array(np)
        if tally is None:
            return None
        snapshot = self.handle.snapshot
        include = self._inclusion_array(pod, constraints, c, require_all, trivial, np)
        codes, distinct = snapshot.label_codes(c.topology_key, np)
        weights = tally if include is None else tally * include
        # (float64 sums of integer counts, exact far past any pod count)
        summed = np.bincount(codes + 1, weights=weights, minlength=len(distinct) + 1)
        return {(None if k == 0 else distinct[k - 1]): int(summed[k]) for k in np.flatnonzero(summed).tolist()}

    def _inclusion_array(
        self, pod: Pod, constraints: list[Constraint], c: Constraint, require_all: bool, trivial: bool, np
    ) -> Any:
        """Which of the snapshot's nodes PreScore counts for `c`, as a boolean array (None: every
        node): those with every constraint's key when `require_all`, and, unless `trivial`, those
        matchNodeInclusionPolicies admits (the pod's required node affinity where the policy
        honours it, its tolerations of the node's NoSchedule and NoExecute taints where that one
        does). Kept on the plugin (it lives as long as its snapshot: a pod's `_cache` may outlive
        a scenario's) per pod fields (`_cache`, held so that its id stays its own) and nodes."""
        snapshot = self.handle.snapshot
        nodes = snapshot.node_infos
        affinity = not trivial and c.node_affinity_policy == HONOR
        taints = not trivial and c.node_taints_policy == HONOR
        keys = tuple(dict.fromkeys(k.topology_key for k in constraints)) if require_all else ()
        if not (affinity or taints or keys):
            return None
        memo = self.__dict__.setdefault("_inclusion_memo", {})
        mkey = (id(pod._cache), len(nodes), affinity, taints, keys)
        known = memo.get(mkey)
        if known is not None and known[0] is pod._cache and known[1] is snapshot:
            return known[2]
        include = np.ones(len(nodes), dtype=bool)
        for key in keys:
            include &= snapshot.label_codes(key, np)[0] >= 0
        if affinity:
            include &= np.array(required_node_affinity_column(pod, snapshot), dtype=bool)
        if taints:
            groups, first = snapshot.taint_groups()
            # each taint set's verdict, then the untainted nodes' (group -1 reads the last)
            tolerated = [find_untolerated_taint(ni.node.taints, pod.tolerations) is None for ni in first] + [True]
            include &= np.array(tolerated, dtype=bool)[np.array(groups, dtype=np.intp)]
        memo[mkey] = (pod._cache, snapshot, include)
        return include

    def _eligible_domains(self, include: Any, values: list) -> dict:
        """{domain: 0} for the values (a label column) of the nodes `include` admits, in node order:
        kept per inclusion array (held, so that its id stays its own) and column."""
        memo = self.__dict__.setdefault("_eligible_domains_memo", {})
        key = (id(include), id(values))
        known = memo.get(key)
        if known is None or known[0] is not include or known[1] is not values or len(values) != len(include):
            known = memo[key] = (include, values, dict.fromkeys(compress(values, include.tolist()), 0))
        return known[2]

    def _domains_at(self, s: PreScoreState, positions: list[int], sizes: list[int]) -> None:
        """PreScore's domains when every constraint's key is required, for the snapshot's nodes at
        `positions`, read off its label columns: a node lacking some key is ignored; each other
        node's value per constraint opens its domain, in the nodes' order."""
        snapshot = self.handle.snapshot
        constraints = s.constraints
        kept = positions
        flags: list | None = None
        for key in dict.fromkeys(c.topology_key for c in constraints):
            if snapshot.label_missing(key):
                has = map(operator.is_not, map(snapshot.label_column(key).__getitem__, positions), repeat(None))
                flags = list(has) if flags is None else list(map(operator.and_, flags, has))
        if flags is not None:
            s.ignored_nodes.update(map(snapshot.names.__getitem__, compress(positions, map(operator.not_, flags))))
            kept = list(compress(positions, flags))
        for i, c in enumerate(constraints):
            if c.topology_key != HOSTNAME_KEY:  # per-node counts are taken in Score
                s.counts[i] = dict.fromkeys(map(snapshot.label_column(c.topology_key).__getitem__, kept), 0)
                sizes[i] = len(s.counts[i])

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        try:
            s = state.read(PRE_SCORE_KEY)
        except NotFound as e:
            return 0, error(f'error reading "{PRE_SCORE_KEY}" from cycleState: {e}')
        node = node_info.node
        if node.name in s.ignored_nodes:
            return 0, None
        labels = node.labels
        total = 0.0
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            cnt = s.counters[i](node_info) if c.topology_key == HOSTNAME_KEY else s.counts[i].get(value, 0)
            total += score_for_count(cnt, c.max_skew, s.weights[i])
        return go_round(total), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        try:
            s = state.read(PRE_SCORE_KEY)
        except NotFound as e:
            return [0] * len(nodes), error(f'error reading "{PRE_SCORE_KEY}" from cycleState: {e}')
        ignored = s.ignored_nodes
        terms = []
        for i, c in enumerate(s.constraints):
            known = counter = None
            if c.topology_key == HOSTNAME_KEY:
                known = s.node_counts[i] if s.node_counts else None
                if known is None:
                    counter = s.counters[i]
            terms.append((c.topology_key, known, counter, s.counts[i], float(c.max_skew - 1), s.weights[i]))
        # a node's score follows from its count per constraint (None: no such label), worked
        # out a column per constraint; nodes sharing those counts (most: same zone, no match on
        # the node) share the arithmetic
        snapshot = self.handle.snapshot
        positions: list | None = state.score_positions
        # (the snapshot's own nodes at known positions: their names read off its list when needed)
        names: list[str] | None = None
        if positions is None:
            names = [ni.node.name for ni in nodes]
            if snapshot is not None:
                positions = list(map(snapshot.index_of.get, names))
        if (
            positions is not None
            and positions is not state.score_positions
            and (
                None in positions or not all(map(operator.is_, map(snapshot.node_infos.__getitem__, positions), nodes))
            )
        ):
            positions = None  # not the snapshot's own nodes
        all_labels = [ni.node.labels for ni in nodes] if positions is None else None
        columns = []
        col: list
        for key, known, counter, counts, _, _ in terms:
            if positions is not None and counter is None:
                # the values from the snapshot's label column; counts (None: no such label)
                # looked up without a Python step per node
                if known is not None:
                    if len(known) * 4 < len(positions):
                        # the few holders' counts laid out by position, read at the positions
                        by_position = [0] * len(snapshot.node_infos)
                        index_of = snapshot.index_of
                        for name, cnt in known.items():
                            by_position[index_of[name]] = cnt
                        col = list(map(by_position.__getitem__, positions))
                    else:
                        if names is None:
                            names = list(map(snapshot.names.__getitem__, positions))
                        col = list(map(known.get, names, repeat(0)))
                    if snapshot.label_missing(key):
                        values = list(map(snapshot.label_column(key).__getitem__, positions))
                        col = [None if v is None else c for v, c in zip(values, col)]
                else:
                    values = list(map(snapshot.label_column(key).__getitem__, positions))
                    lookup: dict = {**counts, None: None}
                    col = list(map(lookup.get, values, repeat(0)))
                columns.append(col)
                continue
            if all_labels is None:
                all_labels = [ni.node.labels for ni in nodes]
            if names is None:
                names = [ni.node.name for ni in nodes]
            if known is not None:
                col = [None if lb.get(key) is None else known.get(n, 0) for lb, n in zip(all_labels, names)]
            elif counter is not None:
                col = [None if lb.get(key) is None else counter(ni) for lb, ni in zip(all_labels, nodes)]
            else:
                col = [None if (v := lb.get(key)) is None else counts.get(v, 0) for lb in all_labels]
            columns.append(col)
        # each distinct signature scored when first met
        out = list(map(_SignatureScores(terms).__getitem__, zip(*columns))) if columns else [0] * len(nodes)
        if ignored:
            if names is None:
                assert positions is not None  # (names are made whenever positions are not known)
                names = list(map(snapshot.names.__getitem__, positions))
            out = [0 if n in ignored else sc for n, sc in zip(names, out)]
        return out, None

    def array_scores_in_range(self, state: CycleState) -> bool:
        # score_array's terms are counts times a positive weight plus maxSkew - 1: not negative
        # where every maxSkew is at least 1, and normalize_array then maps [lowest, highest]
        # into [0, 100]
        s = state.get(PRE_SCORE_KEY)
        return s is not None and all(c.max_skew >= 1 for c in s.constraints)

    def score_array(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Any:
        """score_nodes as an int64 array, for the snapshot's own nodes at
        CycleState.score_positions_array (scheduling/columnar.py), every hostname constraint's
        counts known from PreScore; None otherwise. Each constraint's term is added in float64 in
        the constraints' order, as Score adds them, then rounded half away from zero."""
        made = state.score_positions_array
        snapshot = self.handle.snapshot
        s = state.get(PRE_SCORE_KEY)
        if made is None or made[0] is not state.score_positions or s is None or snapshot is None:
            return None
        np = sys.modules.get("numpy")
        if np is None:
            return None
        at = made[1]
        fast = self._score_table(s, snapshot, at, np)
        if fast is not None:
            return fast
        total = np.zeros(len(at), dtype=np.float64)
        for i, c in enumerate(s.constraints):
            key = c.topology_key
            codes, values = snapshot.label_codes(key, np)
            # (where every node has the key, each node's term is added: no mask needed)
            if snapshot.label_missing(key) or key != HOSTNAME_KEY:
                codes = codes[at]
            if key == HOSTNAME_KEY:
                known = s.node_counts[i] if s.node_counts else None
                if known is None:
                    return None
                counter = s.counters[i] if s.counters else None
                tally_array = getattr(counter, "tally_array", None)
                by_position = None
                if tally_array is not None and known is counter.tally_now():  # type: ignore[union-attr]
                    by_position = tally_array(np)  # (PreScore's counts are the tally itself)
                if by_position is None:
                    by_position = counts_by_position(snapshot, known, np)
                counts = by_position[at]
            else:
                counts_of = s.counts[i]
                counts = np.array([counts_of.get(v, 0) for v in values] + [0], dtype=np.int64)[codes]
            term = counts.astype(np.float64) * s.weights[i] + float(c.max_skew - 1)
            total = total + term if not snapshot.label_missing(key) else np.where(codes >= 0, total + term, total)
        whole = np.floor(total)
        scores = whole.astype(np.int64) + (total - whole >= 0.5)
        if s.ignored_nodes:
            scores[_ignored_at(snapshot, s.ignored_nodes, at, np)] = 0
        return scores

    def _score_table(self, s: PreScoreState, snapshot: Any, at: Any, np) -> Any:
        """score_array where one or two constraints score and every node has their keys, none
        ignored: each node's value per constraint (its matching pods for hostname, its domain's
        code else) indexes a table of every combination's rounded score, made in float64 as
        score_array adds the terms (in the constraints' order) and rounds them. None elsewhere
        (or where the table would be large)."""
        constraints = s.constraints
        if not 1 <= len(constraints) <= 2 or s.ignored_nodes or not s.counters:
            return None
        tables = []
        indexes = []
        for i, c in enumerate(constraints):
            key = c.topology_key
            if snapshot.label_missing(key):
                return None
            skew = float(c.max_skew - 1)
            if key == HOSTNAME_KEY:
                counter = s.counters[i]
                known = s.node_counts[i] if s.node_counts else None
                tally_array = getattr(counter, "tally_array", None)
                if known is None or tally_array is None or known is not counter.tally_now():
                    return None
                held = tally_array(np)[at]
                top = int(held.max()) if len(held) else 0
                if top < 0 or top > 4096:
                    return None
                tables.append(np.arange(top + 1, dtype=np.int64).astype(np.float64) * s.weights[i] + skew)
                indexes.append(held)
            else:
                codes, values = snapshot.label_codes(key, np)
                counts_of = s.counts[i]
                counts = np.array([counts_of.get(v, 0) for v in values], dtype=np.int64)
                tables.append(counts.astype(np.float64) * s.weights[i] + skew)
                indexes.append(codes[at])
        if len(tables) == 1:
            total, index = tables[0], indexes[0]
        else:
            if len(tables[0]) * len(tables[1]) > 1 << 16:
                return None
            total = (tables[0][:, None] + tables[1][None, :]).ravel()
            index = indexes[0] * len(tables[1]) + indexes[1]
        whole = np.floor(total)
        rounded = whole.astype(np.int64) + (total - whole >= 0.5)
        return rounded.take(index)

    def normalize_array(self, state: CycleState, pod: Pod, scores: Any, at: Any) -> Any:
        """normalize_scores on an int64 array of the scores of the snapshot's nodes at positions
        `at`: the nodes PreScore ignored score 0 and take no part in the extremes."""
        s = state.get(PRE_SCORE_KEY)
        np = sys.modules.get("numpy")
        if s is None or np is None or not len(scores):
            return None
        if s.ignored_nodes:
            kept = ~_ignored_at(self.handle.snapshot, s.ignored_nodes, at, np)
            lowest = int(scores[kept].min()) if kept.any() else 0
            highest = max(0, int(scores[kept].max())) if kept.any() else 0
        else:
            kept = None
            lowest, highest = int(scores.min()), max(0, int(scores.max()))
        if highest == 0:
            out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        else:
            out = MAX_NODE_SCORE * (highest + lowest - scores) // highest
        if kept is not None:
            out = np.where(kept, out, 0)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        try:
            s = state.read(PRE_SCORE_KEY)
        except NotFound as e:
            return error(f'error reading "{PRE_SCORE_KEY}" from cycleState: {e}')
        if s is None:
            return None
        ignored = s.ignored_nodes
        if not ignored and scores:
            # the usual case: no node ignored, so every score takes part
            lowest, highest = min(scores.values()), max(0, max(scores.values()))
            map_scores(scores, lambda sc: normalized_spread_score(sc, lowest, highest))
            return None
        min_score = None
        max_score = 0
        for name, sc in scores.items():
            if name in ignored:
                continue
            if min_score is None or sc < min_score:
                min_score = sc
            if sc > max_score:
                max_score = sc
        lowest = 0 if min_score is None else min_score  # None only when every node is ignored
        for name, sc in scores.items():
            scores[name] = 0 if name in ignored else normalized_spread_score(sc, lowest, max_score)
        return None

    def normalize_scores(
        self, state: CycleState, pod: Pod, scores: list[int], names: list[str]
    ) -> tuple[list[int], Status | None]:
        """normalize_score on a list (the scores of `names`, in their order)."""
        try:
            s = state.read(PRE_SCORE_KEY)
        except NotFound as e:
            return list(scores), error(f'error reading "{PRE_SCORE_KEY}" from cycleState: {e}')
        if s is None:
            return list(scores), None
        if not s.ignored_nodes and scores:
            # the few distinct scores: their extremes, and each one's normalized score, once
            distinct = set(scores)
            lowest, highest = min(distinct), max(0, max(distinct))
            return map_list(scores, lambda sc: normalized_spread_score(sc, lowest, highest), distinct), None
        table = dict(zip(names, scores))
        st = self.normalize_score(state, pod, table)
        return (list(table.values()) if len(table) == len(names) else [table[n] for n in names]), st

    # -- a sequence of alike pods (framework/alike.py) -------------------------------------
    def alike_tracker(self, state: CycleState, pod: Pod) -> SpreadTracker | None:
        pf = state.get(PRE_FILTER_KEY)
        tracker = SpreadTracker(self, pf if isinstance(pf, PreFilterState) else None, pod)
        return tracker if tracker.usable else None

    # -- queueing ------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent(
                "Pod",
                "Add|UpdatePodLabel|UpdatePodToleration|Delete",
                "a pod matching a spread constraint's selector is added, relabelled or deleted "
                "in the pod's namespace, or the pod gains a toleration (nodeTaintsPolicy: Honor)",
            ),
            ClusterEvent(
                "Node",
                "Add|Delete|UpdateNodeLabel|UpdateNodeTaint",
                "a node carrying every topology key is added or deleted, or its topology labels or taints change",
            ),
        ]

    # -- explanation ---------------------------------------------------------------------
    def explain(self, state: CycleState, pod: Pod, result: CycleResult) -> dict | None:
        out: dict = {}
        pf = state.get(PRE_FILTER_KEY)
        if isinstance(pf, PreFilterState) and pf.constraints:
            out["filter"] = self._explain_filter(pf, pod, result)
        ps = state.get(PRE_SCORE_KEY)
        if isinstance(ps, PreScoreState) and ps.constraints:
            out["score"] = self._explain_score(ps, pod, result)
        if not out:
            return None
        source = (
            "pod"
            if pod.spread_constraints
            else ("system defaults" if self.system_defaulted else "defaultConstraints (List)")
        )
        out["constraintsFrom"] = source
        return out

    def _interesting_nodes(self, result) -> list[str]:
        """Nodes PodTopologySpread rejected, then the feasible ones, in node order."""
        names = []
        feasible = set(result.feasible) if result is not None else set()
        columns = getattr(result.filters, "columns", None) if result is not None else None
        if columns is not None:  # a FilterTable: read this plugin's column, not every row
            col = columns.get(NAME)
            if col is None:
                return [n for n in result.filters if n in feasible]
            # the statuses failing a node, each distinct one looked at once
            failing = {st for st in set(col) if st is not None and not st.is_success()}
            wanted = map(operator.or_, map(failing.__contains__, col), map(feasible.__contains__, result.filters))
            return list(compress(result.filters, wanted))
        for name, nf in result.filters.items() if result is not None else ():
            st = nf.plugins.get(NAME) if nf.plugins else None
            if name in feasible or (st is not None and not st.is_success()):
                names.append(name)
        return names

    def _explain_filter(self, s: PreFilterState, pod, result) -> dict:
        snapshot = self.handle.snapshot
        nodes = self._interesting_nodes(result)
        positions = list(map(snapshot.index_of.get, nodes))
        cons_out = []
        for i, c in enumerate(s.constraints):
            counts = s.counts[i]
            min_match = s.min_match_num(i)
            d = c.describe()
            d["selfMatch"] = 1 if c.selector.matches(pod.labels) else 0
            d["eligibleDomains"] = len(counts)
            d["globalMinimum"] = s.critical_paths[i].nums[0] if counts else None
            d["criticalPaths"] = s.critical_paths[i].as_list()
            d["minDomainsApplies"] = len(counts) < c.min_domains
            d["minMatch"] = min_match
            relevant: list = []
            if len(counts) > _EXPLAIN_LIMIT:  # the domains to keep in a cut table
                col = snapshot.label_column(c.topology_key)
                relevant = [v for p in positions if p is not None and (v := col[p]) is not None]
                relevant += [p["domain"] for p in d["criticalPaths"]]
            d["domains"], omitted = _domain_table(counts, relevant)
            if omitted:
                d["domainsOmitted"] = omitted
            cons_out.append(d)
        per_node: dict[str, list] = {}
        # per constraint: its key, the nodes' values of it (the snapshot's label column), its counts,
        # self-match and minimum match
        per_constraint = [
            (c, snapshot.label_column(c.topology_key), s.counts[i], cons_out[i]["selfMatch"], cons_out[i]["minMatch"])
            for i, c in enumerate(s.constraints)
        ]
        # a node's rows follow from its values of the keys: nodes of the same domains (most
        # nodes of a zone) share one list of rows, made once (read only from here on)
        shown = nodes[:_EXPLAIN_LIMIT]
        at: list[int] = positions[: len(shown)]  # type: ignore[assignment]  # (None: filtered out next)
        if None in at:  # (a name the snapshot does not have is left out)
            shown = [n for n, p in zip(shown, at) if p is not None]
            at = [p for p in at if p is not None]
        domains = list(zip(*[list(map(values.__getitem__, at)) for _, values, _, _, _ in per_constraint]))
        made = {k: self._filter_rows(per_constraint, k) for k in dict.fromkeys(domains)}
        per_node.update(zip(shown, map(made.__getitem__, domains)))
        out: dict[str, Any] = {"constraints": cons_out, "nodes": per_node}
        if len(nodes) > _EXPLAIN_LIMIT:
            out["nodesOmitted"] = len(nodes) - _EXPLAIN_LIMIT
        return out

    @staticmethod
    def _filter_rows(per_constraint: list, domains: tuple) -> list[dict]:
        """A node's rows of the filter explanation: per constraint, its domain's skew."""
        rows: list[dict] = []
        for (c, _, counts, self_match, min_match), value in zip(per_constraint, domains):
            if value is None:
                rows.append({"topologyKey": c.topology_key, "missingLabel": True, "passes": False})
                continue
            match = counts.get(value, 0)
            skew = match + self_match - min_match
            rows.append(
                {
                    "topologyKey": c.topology_key,
                    "domain": value,
                    "matchNum": match,
                    "selfMatch": self_match,
                    "minMatch": min_match,
                    "skew": skew,
                    "maxSkew": c.max_skew,
                    "passes": skew <= c.max_skew,
                }
            )
        return rows

    def _explain_score(self, s: PreScoreState, pod, result) -> dict:
        snapshot = self.handle.snapshot
        cons_out = []
        feasible = list(result.feasible) if result is not None else []
        for i, c in enumerate(s.constraints):
            d = c.describe()
            d["weight"] = s.weights[i]
            if c.topology_key == HOSTNAME_KEY:
                counts = {}
                known = s.node_counts[i] if s.node_counts else None  # PreScore's counts, when it kept them
                by_name = snapshot.by_name
                index_of = snapshot.index_of
                hosts = snapshot.label_column(HOSTNAME_KEY)  # each node's hostname label (None: none)
                ignored = s.ignored_nodes
                shown = feasible[:_EXPLAIN_LIMIT]
                positions: list[Any] = list(map(index_of.get, shown)) if known is not None and not ignored else [None]
                if None not in positions:
                    # PreScore's counts, every shown node the snapshot's: read in C-level passes
                    if snapshot.label_missing(HOSTNAME_KEY):
                        labelled = list(map(hosts.__getitem__, positions))
                        shown = [n for n, h in zip(shown, labelled) if h is not None]
                    assert known is not None
                    counts = dict(zip(shown, map(known.get, shown, repeat(0))))
                    shown = []
                for name in shown:
                    pos = index_of.get(name)
                    if pos is None or name in ignored or hosts[pos] is None:
                        continue
                    if known is not None:
                        counts[name] = known.get(name, 0)
                    else:
                        ni = by_name[name]
                        counts[name] = (
                            s.counters[i](ni) if s.counters else _count_matching(ni, pod.namespace, c.selector)
                        )
                d["perNode"] = counts
                if len(feasible) > _EXPLAIN_LIMIT:  # the feasible nodes past the limit, not counted
                    d["perNodeOmitted"] = len(feasible) - _EXPLAIN_LIMIT
            else:
                d["domains"], omitted = _domain_table(s.counts[i], [])
                if omitted:
                    d["domainsOmitted"] = omitted
            cons_out.append(d)
        out: dict[str, Any] = {"constraints": cons_out}
        if s.ignored_nodes:
            out["ignoredNodes"] = sorted(s.ignored_nodes)
        if not s.require_all:
            out["missingTopologyLabelsAllowed"] = True
        return out


def _domain_table(counts: dict[str, int], relevant: list[str]) -> tuple[dict[str, int], int]:
    """Domain -> matching pods; past the limit, only the domains named in `relevant`."""
    if len(counts) <= _EXPLAIN_LIMIT:
        return {k: counts[k] for k in sorted(counts)}, 0
    keep: dict[str, int] = {}
    for v in relevant:
        if v in counts and len(keep) < _EXPLAIN_LIMIT:
            keep[v] = counts[v]
    return {k: keep[k] for k in sorted(keep)}, len(counts) - len(keep)
