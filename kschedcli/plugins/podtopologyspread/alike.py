"""PodTopologySpread across a sequence of alike pods (framework/alike.py's tracker).

The counts PreFilter and PreScore would take afresh each cycle, kept and moved by each bound pod:
per DoNotSchedule constraint the matching pods per domain of every eligible node (and how many
domains hold each count, for the global minimum), per ScheduleAnyway constraint the matching pods
per domain over the eligible nodes and per node for hostname. A node's key is what Filter and
Score read of it: its domain per constraint (its own count for hostname, whose domain is the node),
and whether PreScore ignores it. The weights and the normalization, which depend on the feasible
nodes, are worked out per copy from the feasible keys and how many nodes each has.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ...errors import FieldError
from ...framework.interface import MAX_NODE_SCORE
from .common import HOSTNAME_KEY, SCHEDULE_ANYWAY, go_round, score_for_count, topology_normalizing_weight
from .counting import PreFilterState, _has_all_keys, _holders_by_counter, _NodeEligibility

if TYPE_CHECKING:
    from ...api.model import Pod
    from ...backend.snapshot import NodeInfo


def normalized_spread_score(score: int, lowest: int, highest: int) -> int:
    """NormalizeScore for a node that is not ignored: fewer matching pods, higher score."""
    if highest == 0:
        return MAX_NODE_SCORE
    return MAX_NODE_SCORE * (highest + lowest - score) // highest


class SpreadTracker:
    """framework.interface.AlikeTracker for PodTopologySpread."""

    def __init__(self, plugin, pre_filter: PreFilterState | None, pod: Pod):
        snapshot = plugin.handle.snapshot
        self.pod = pod
        self.namespace = pod.namespace
        self.hard = list(pre_filter.constraints) if pre_filter is not None else []
        self.hard_counts = [dict(m) for m in pre_filter.counts] if pre_filter is not None else []
        self.hard_hist = [Counter(m.values()) for m in self.hard_counts]
        self.self_match = [1 if c.selector.matches(pod.labels) else 0 for c in self.hard]
        self._mins: list[int] | None = None
        try:
            soft, _ = plugin.constraints_for(pod, SCHEDULE_ANYWAY)
        except FieldError:
            soft = []
        self.soft = list(soft)
        self.require_all = bool(pod.spread_constraints) or not plugin.system_defaulted
        self.soft_hostname = [c.topology_key == HOSTNAME_KEY for c in self.soft]
        self.skew_terms = [score_for_count(0, c.max_skew, 0.0) for c in self.soft]  # maxSkew - 1, as a float
        self._raw_memo: dict[tuple, int] = {}
        self._memo_weights: tuple = ()
        # ScheduleAnyway: matching pods per domain over every eligible node, per node for hostname
        self.soft_counts: list[dict[str, int]] = [{} for _ in self.soft]
        counters = plugin._counters(pod.namespace, self.soft) if self.soft else []
        held = _holders_by_counter(counters)
        for i, c in enumerate(self.soft):
            f = counters[i]
            m = self.soft_counts[i]
            for ni in held[id(f)]:
                labels = ni.node.labels
                if c.topology_key == HOSTNAME_KEY:
                    n = f(ni)
                    if n:
                        m[ni.node.name] = n
                    continue
                if self.require_all and not _has_all_keys(labels, self.soft):
                    continue
                if not _NodeEligibility(pod, ni.node).includes(c):
                    continue
                value = labels.get(c.topology_key, "")
                m[value] = m.get(value, 0) + f(ni)
        # a hostname domain is one node only if no two nodes share the label's value
        if any(c.topology_key == HOSTNAME_KEY for c in self.hard):
            values = [ni.node.labels.get(HOSTNAME_KEY) for ni in snapshot.node_infos]
            present = [v for v in values if v is not None]
            self.usable = len(present) == len(set(present))
        else:
            self.usable = True

    # -- keys ---------------------------------------------------------------------------
    def node_key(self, node_info: NodeInfo) -> Any:
        labels = node_info.node.labels
        hard: list[tuple | None] = []
        for i, c in enumerate(self.hard):
            v = labels.get(c.topology_key)
            if v is None:
                hard.append(None)
            elif c.topology_key == HOSTNAME_KEY:
                hard.append((True, self.hard_counts[i].get(v, 0)))
            else:
                hard.append((False, v))
        ignored = self.require_all and not _has_all_keys(labels, self.soft)
        soft: list[tuple | None] = []
        if not ignored:
            for i, c in enumerate(self.soft):
                v = labels.get(c.topology_key)
                if v is None:
                    soft.append(None)
                elif c.topology_key == HOSTNAME_KEY:
                    soft.append((True, self.soft_counts[i].get(node_info.node.name, 0)))
                else:
                    soft.append((False, v))
        return (tuple(hard), ignored, tuple(soft))

    def node_changed(self, node_info: NodeInfo, pod: Pod) -> None:
        if pod.namespace != self.namespace or pod.deleting:
            return
        node = node_info.node
        labels = node.labels
        elig = _NodeEligibility(self.pod, node)
        if self.hard and _has_all_keys(labels, self.hard):
            for i, c in enumerate(self.hard):
                if not c.selector.matches(pod.labels) or not elig.includes(c):
                    continue
                m, hist = self.hard_counts[i], self.hard_hist[i]
                v = labels[c.topology_key]
                old = m.get(v, 0)
                m[v] = old + 1
                hist[old] -= 1
                if not hist[old]:
                    del hist[old]
                hist[old + 1] += 1
            self._mins = None
        soft_counted = not self.require_all or _has_all_keys(labels, self.soft)
        for i, c in enumerate(self.soft):
            if not c.selector.matches(pod.labels):
                continue
            m = self.soft_counts[i]
            if c.topology_key == HOSTNAME_KEY:
                m[node.name] = m.get(node.name, 0) + 1
            elif soft_counted and elig.includes(c):
                v = labels.get(c.topology_key, "")
                m[v] = m.get(v, 0) + 1

    # -- Filter -------------------------------------------------------------------------
    def _minimums(self) -> list[int]:
        mins = self._mins
        if mins is None:
            mins = self._mins = [
                0 if len(m) < c.min_domains or not hist else min(hist)
                for c, m, hist in zip(self.hard, self.hard_counts, self.hard_hist)
            ]
        return mins

    def passes(self, key: Any, node_info: NodeInfo | None = None) -> bool:
        mins = self._minimums()
        for i, part in enumerate(key[0]):
            if part is None:
                return False
            c = self.hard[i]
            count = part[1] if part[0] else self.hard_counts[i].get(part[1], 0)
            if count + self.self_match[i] - mins[i] > c.max_skew:
                return False
        return True

    # -- Score --------------------------------------------------------------------------
    def normalized_scores(self, groups: list[tuple[Any, int, NodeInfo]]) -> list[int]:
        soft = self.soft
        hostname = self.soft_hostname
        # PreScore over the feasible nodes: the domains per constraint, and the nodes scored
        domains: list[set] = [set() for _ in soft]
        scored = 0
        for key, size, _ in groups:
            if key[1]:
                continue
            scored += size
            for i, part in enumerate(key[2]):
                if not hostname[i]:
                    domains[i].add("" if part is None else part[1])
        weights = tuple(
            topology_normalizing_weight(scored if hostname[i] else len(domains[i])) for i in range(len(soft))
        )
        memo = self._raw_memo
        if self._memo_weights != weights or len(memo) > 65536:
            memo.clear()
            self._memo_weights = weights
        soft_counts = self.soft_counts
        skews = self.skew_terms
        raws: list[int | None] = []
        for key, _, _ in groups:
            if key[1]:
                raws.append(None)
                continue
            sig = tuple(
                None if part is None else (part[1] if part[0] else soft_counts[i].get(part[1], 0))
                for i, part in enumerate(key[2])
            )
            raw = memo.get(sig)
            if raw is None:
                # Score: each constraint's count times its weight plus maxSkew - 1, rounded as Go's math.Round
                total = 0.0
                for i, cnt in enumerate(sig):
                    if cnt is not None:
                        total += float(cnt) * weights[i] + skews[i]
                raw = memo[sig] = go_round(total)
            raws.append(raw)
        present = [r for r in raws if r is not None]
        lowest = min(present) if present else 0
        highest = max(0, *present) if present else 0
        return [0 if r is None else normalized_spread_score(r, lowest, highest) for r in raws]
