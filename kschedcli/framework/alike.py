"""Cycles of alike pods, incrementally: ksched's mode for many copies of one template.

`ksched capacity` schedules copies of a pod that differ in name only, each bound before the next.
Each copy's cycle would be the one before it but for the node the last copy went to: every
node-local verdict and score of the other nodes is unchanged, and what is not node-local
(PodTopologySpread's counts per domain) changed by the one pod bound. This module keeps, per
profile, the state of such a sequence and places the next copy from it:

- each node's verdicts of the node-local filters (recomputed on the bound node only; a node they
  reject stays rejected, since binding only adds pods), and the verdicts of plugins whose results
  do not change when alike pods are bound (`UnchangedByAlike`: InterPodAffinity for a pod without
  affinity terms);
- the nodes grouped so that, within a group, every non-local plugin (an `AlikeAware` plugin's
  tracker: PodTopologySpread, and InterPodAffinity for a pod whose only terms are required
  anti-affinity) and every plugin whose scores are normalized across nodes (raw scores that never
  change: TaintToleration, NodeAffinity, InterPodAffinity) treats the nodes alike: the group's key is
  the trackers' keys and those raw scores;
- per node, the sum of the weighted scores that need no normalization (NodeResourcesFit,
  NodeResourcesBalancedAllocation, ImageLocality), recomputed on the bound node only, and per group
  the nodes ordered by that sum (a heap: best sum, then the lowest name).

A copy's cycle is then per group, not per node: which groups pass the trackers' filters, each
normalized plugin's scores over the feasible groups (its NormalizeScore called once per set of
distinct raw scores, with one node for each: the in-tree normalizations read only the values'
range), and the best node of each feasible group. The node chosen is the one the full cycle
chooses: the highest total, ties to the lowest name (ksched's choice without --seed). Everything
else (a seed, nominated pods, a PreFilter that narrows the nodes or fails, a plugin this module
does not know, an error, a change to the cluster it was not told of) falls back to the full cycle,
which also runs for the copy that fits nowhere. tests/whatif/test_capacity_incremental.py holds the
placements equal to full cycles.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from .cycle_state import CycleState
from .equivalence import BY_GENERATION, FILTERS, SCORES
from .interface import MAX_NODE_SCORE, AlikeAware, UnchangedByAlike
from .status import ERROR, SUCCESS

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from .runtime import Framework

FALLBACK = "fallback"  # place(): run the full cycle instead
_IN_TREE_PREFIX = "kschedcli.plugins."


class _Unsupported(Exception):
    """The sequence cannot be run incrementally (the full cycle runs instead)."""


def _local(table: dict, pl) -> str | None:
    entry = table.get(pl.name)
    if entry is None or not type(pl).__module__.startswith(_IN_TREE_PREFIX):
        return None
    return entry[0]


def _passes(st) -> bool:
    if st is None or st.code == SUCCESS:
        return True
    if st.code == ERROR:
        raise _Unsupported("a filter error")
    return False


class _Group:
    __slots__ = ("key", "heap", "size")

    def __init__(self, key):
        self.key = key
        self.heap: list[tuple[int, str, int, int]] = []  # (-local sum, name, node index, version)
        self.size = 0


class AlikeCycles:
    """One profile's incremental state for a sequence of alike pods (see the module's doc)."""

    def __init__(self, fw: Framework):
        self.fw = fw
        self.snapshot = fw.handle.snapshot
        self._template: Pod | None = None  # the pod whose copies are being placed
        self._built = False
        self._unsupported = False
        self._seen = 0  # the snapshot's changes the state reflects

    # -- the sequence ----------------------------------------------------------------
    def place(self, pod: Pod) -> str | None:
        """The node the full cycle would choose for `pod`, None when no node fits, or FALLBACK."""
        t = self._template
        if t is None or pod._cache is not t._cache:
            # a new template: its first copy takes the full cycle; the state is built for its second
            self._template = pod
            self._built = self._unsupported = False
            return FALLBACK
        if self._unsupported:
            return FALLBACK
        if self._built and self._seen != len(self.snapshot.changes):
            self._built = False  # the cluster changed behind our back
        try:
            if not self._built:
                self._build(pod)
            return self._choose()
        except _Unsupported:
            self._unsupported = True
            self._built = False
            return FALLBACK

    def bound(self, pod: Pod, node_name: str) -> None:
        """A pod was bound (the snapshot already holds it): bring the state up to date."""
        if not self._built:
            return
        t = self._template
        if t is None or pod._cache is not t._cache or self._seen + 1 != len(self.snapshot.changes):
            self._built = False  # not one of ours: build again for the next copy
            return
        self._seen += 1
        try:
            self._node_changed(self.snapshot.index_of[node_name], pod)
        except _Unsupported:
            self._unsupported = True
            self._built = False

    def reset(self) -> None:
        self._template = None
        self._built = self._unsupported = False

    # -- building ---------------------------------------------------------------------
    def _build(self, pod: Pod) -> None:
        fw = self.fw
        snapshot = self.snapshot
        nodes = snapshot.list()
        if not nodes or fw.run_pre_enqueue(pod) is not None:
            raise _Unsupported("no cycle")
        state = CycleState()
        pf = fw.run_pre_filter(state, pod)
        if pf.status is not None or (pf.result is not None and not pf.result.all_nodes()):
            raise _Unsupported("PreFilter rejects or narrows")
        self.state = state
        self.pod = pod

        gen_filters: list[Any] = []
        static_filters: list[Any] = []
        tracked_filters: list[Any] = []
        for pl in fw.filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            kind = _local(FILTERS, pl)
            if kind == BY_GENERATION:
                gen_filters.append(pl)
            elif kind is not None or (isinstance(pl, UnchangedByAlike) and pl.unchanged_by_alike(pod)):
                static_filters.append(pl)
            elif isinstance(pl, AlikeAware):
                tracked_filters.append(pl)
            else:
                raise _Unsupported(pl.name)
        self.gen_filters = gen_filters

        # the nodes the node-local and unchanging filters accept (for good: binding adds pods only)
        alive = [True] * len(nodes)
        for pl in static_filters + gen_filters:
            col = fw.filter_column(pl, state, pod, nodes)
            for i, st in enumerate(col):
                if alive[i] and not _passes(st):
                    alive[i] = False
        feasible_nodes = [ni for ni, a in zip(nodes, alive) if a]

        # PreScore over the nodes the filters may accept (the trackers work their part out per copy)
        if fw.score_plugins:
            st = fw.run_pre_score(state, pod, feasible_nodes or nodes)
            if st is not None:
                raise _Unsupported("PreScore error")
        sum_plugins: list[tuple[Any, int]] = []
        gen_sum_plugins: list[tuple[Any, int]] = []
        normalized: list[tuple[Any, int]] = []
        tracked_scores: list[tuple[Any, int]] = []
        for sp in fw.score_plugins:
            if sp.name in state.skip_score_plugins:
                continue
            w = fw.weights.get(sp.name, 1)
            kind = _local(SCORES, sp)
            has_norm = sp.name in fw.normalizers
            if kind is not None and not has_norm:
                (gen_sum_plugins if kind == BY_GENERATION else sum_plugins).append((sp, w))
            elif (kind is not None and kind != BY_GENERATION) or (
                isinstance(sp, UnchangedByAlike) and sp.unchanged_by_alike(pod)
            ):
                normalized.append((sp, w))
            elif isinstance(sp, AlikeAware):
                tracked_scores.append((sp, w))
            else:
                raise _Unsupported(sp.name)

        # the trackers of the plugins whose Filter or Score runs
        tracked: dict[str, Any] = {}
        for pl in tracked_filters + [sp for sp, _ in tracked_scores]:
            if pl.name not in tracked:
                tr = pl.alike_tracker(state, pod)
                if tr is None:
                    raise _Unsupported(pl.name)
                tracked[pl.name] = tr
        self.trackers = list(tracked.values())
        position = {name: k for k, name in enumerate(tracked)}
        self.filter_trackers = [(position[pl.name], tracked[pl.name]) for pl in tracked_filters]
        score_trackers = [(position[pl.name], tracked[pl.name], w) for pl, w in tracked_scores]
        self.gen_sum_plugins = gen_sum_plugins
        self.normalized = normalized
        self.score_trackers = score_trackers

        n = len(nodes)
        self.alive = alive
        self.static_sum = [0] * n
        self.local_sum = [0] * n
        self.raw_keys: list[tuple] = [()] * n
        for pl, w in sum_plugins:
            for i, s in zip(self._alive_indexes(), self._scores(pl, feasible_nodes)):
                self.static_sum[i] += w * s
        raws = [self._scores(pl, feasible_nodes) for pl, _ in normalized]
        for k, i in enumerate(self._alive_indexes()):
            self.raw_keys[i] = tuple(r[k] for r in raws)
        gen_cols = [(self._scores(pl, feasible_nodes), w) for pl, w in gen_sum_plugins]
        for k, i in enumerate(self._alive_indexes()):
            self.local_sum[i] = self.static_sum[i] + sum(col[k] * w for col, w in gen_cols)

        self._norm_memo: dict = {}
        self.groups: dict[tuple, _Group] = {}
        self.group_of: list[_Group | None] = [None] * n
        self.version = [0] * n
        for i in self._alive_indexes():
            self._enter(i)
        self._seen = len(snapshot.changes)
        self._built = True

    def _alive_indexes(self) -> list[int]:
        return [i for i, a in enumerate(self.alive) if a]

    def _scores(self, pl, nodes: list[NodeInfo]) -> list[int]:
        from .runtime import PluginError

        try:
            vals = self.fw._score_nodes(pl, self.state, self.pod, nodes)
        except PluginError as e:
            raise _Unsupported(pl.name) from e
        if _has_out_of_range(vals) and pl.name not in self.fw.normalizers:
            raise _Unsupported("a score out of range: the full cycle reports it")
        return vals

    def _enter(self, i: int) -> None:
        """Put node i in the group of its current key."""
        ni = self.snapshot.node_infos[i]
        key = (tuple(tr.node_key(ni) for tr in self.trackers), self.raw_keys[i])
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = _Group(key)
        g.size += 1
        self.group_of[i] = g
        heapq.heappush(g.heap, (-self.local_sum[i], ni.node.name, i, self.version[i]))

    def _node_changed(self, i: int, pod: Pod) -> None:
        """A bind on node i: the trackers follow it; a live node leaves its group, is filtered
        again by the plugins whose verdict depends on the node's pods (out for good when one
        fails), and enters the group of its new key with its new local sum."""
        ni = self.snapshot.node_infos[i]
        for tr in self.trackers:
            tr.node_changed(ni, pod)
        if not self.alive[i]:
            return
        self._leave(i)
        fw, state = self.fw, self.state
        for pl in self.gen_filters:
            if not _passes(fw._filter_one(pl, state, pod, ni)):
                self._drop(i)
                return
        s = self.static_sum[i]
        for pl, w in self.gen_sum_plugins:
            s += w * self._scores(pl, [ni])[0]
        self.local_sum[i] = s
        self._enter(i)

    def _leave(self, i: int) -> None:
        """Take live node i out of its group (its heap entry made stale)."""
        g = self.group_of[i]
        if g is not None:
            g.size -= 1
            if not g.size:
                del self.groups[g.key]
        self.group_of[i] = None
        self.version[i] += 1

    def _drop(self, i: int) -> None:
        """Node i, out of its group, fails a filter: no copy fits it any more."""
        self.alive[i] = False

    # -- one copy ---------------------------------------------------------------------
    def _choose(self) -> str | None:
        checks = self.filter_trackers
        groups = self.groups.values()
        # each group's best node (highest local sum, then lowest name), stale heap entries dropped
        version, group_of = self.version, self.group_of
        tops = []
        for g in groups:
            heap = g.heap
            while True:
                top = heap[0]
                i = top[2]
                if version[i] == top[3] and group_of[i] is g:
                    break
                heapq.heappop(heap)
            tops.append(top)
        if checks:
            nis = self.snapshot.node_infos
            kept = [(g, t) for g, t in zip(groups, tops) if all(tr.passes(g.key[0][k], nis[t[2]]) for k, tr in checks)]
            feasible, tops = [g for g, _ in kept], [t for _, t in kept]
        else:
            feasible = list(groups)
        if not feasible:
            return None
        if len(feasible) == 1 and feasible[0].size == 1:
            return tops[0][1]  # one feasible node: chosen without scoring
        totals = [-t[0] for t in tops]
        for pos, (pl, w) in enumerate(self.normalized):
            norm = self._normalized(pos, pl, feasible, tops)
            totals = [t + w * norm[g.key[1][pos]] for t, g in zip(totals, feasible)]
        for k, tr, w in self.score_trackers:
            nis = self.snapshot.node_infos
            vals = tr.normalized_scores([(g.key[0][k], g.size, nis[t[2]]) for g, t in zip(feasible, tops)])
            if vals is None or _has_out_of_range(vals):
                raise _Unsupported("a normalized score out of range")
            totals = [t + w * v for t, v in zip(totals, vals)]
        best = max(totals)
        return min(t[1] for t, total in zip(tops, totals) if total == best)

    def _normalized(self, pos: int, pl, feasible: list[_Group], tops: list) -> dict:
        """raw score -> the plugin's normalized score, over the raw scores of the feasible groups.
        NormalizeScore reads only the range of the values: the plugin is asked once per set of
        distinct raw scores, with one node for each."""
        reps: dict = {}
        for g, t in zip(feasible, tops):
            reps.setdefault(g.key[1][pos], t[1])
        return self._normalized_reps(pos, pl, reps)

    def _normalized_reps(self, pos: int, pl, reps: dict) -> dict:
        """raw score -> normalized score, `reps` naming one node for each distinct raw score
        (memoized per plugin position and set of raw scores)."""
        key = (pos, tuple(sorted(reps)))
        norm = self._norm_memo.get(key)
        if norm is None:
            scores = {name: raw for raw, name in reps.items()}
            st = pl.normalize_score(self.state, self.pod, scores)
            if st is not None and not st.is_success():
                raise _Unsupported(pl.name)
            norm = {raw: scores[name] for raw, name in reps.items()}
            if _has_out_of_range(list(norm.values())):
                raise _Unsupported("a normalized score out of range")
            if len(self._norm_memo) > 4096:
                self._norm_memo.clear()
            self._norm_memo[key] = norm
        return norm


def _has_out_of_range(vals: list[int]) -> bool:
    return bool(vals) and (max(vals) > MAX_NODE_SCORE or min(vals) < 0)
