"""Sampled cycles of alike pods, incrementally: `ksched capacity --sampling`.

With node sampling (scheduling/sampling.py) each copy's cycle searches the nodes in node-tree order
from the scheduler's next start index, keeps the first `numFeasibleNodesToFind` feasible ones, and
PreScore, Score and NormalizeScore see those only; the start index then moves past the nodes
processed. Between two copies of a template only the node the last copy went to changes its filter
verdicts and node-local scores (and the trackers' counts of its domains), and the start index
moves. So this keeps framework/alike.py's state (each node's verdict of the node-local filters,
its sum of the scores that need no normalization, its group: the trackers' keys and the raw
scores of the normalized plugins) and, per copy:

- the search: the feasible nodes' positions in node-tree order are kept sorted; the first one at or
  after the start index (a bisection) begins the window of the nodes found, the one
  `numFeasibleNodesToFind` further is where the search stops (neither counted nor kept), and the
  nodes processed are the positions between (all of them when too few are feasible);
- the scores over the window: each group present in it and how many of its nodes (a count at C
  level), each normalized plugin's NormalizeScore over the raw scores present (once per set), each
  tracker's normalized scores for exactly those groups (PodTopologySpread's PreScore sees the
  domains and the number of nodes of the window), and the best total: a node's local sum plus
  its group's share, ties to the lowest name (ksched's choice without --seed).

The node chosen and the start index after it are those of the sampled cycle (Scheduler.schedule
with sampling on); anything else falls back to it, for the whole template: a filter whose verdicts
depend on other nodes' pods (PodTopologySpread's DoNotSchedule constraints, inter-pod
(anti-)affinity terms of the pod: one copy changes the verdicts of a whole domain), a
PreFilterResult, a seed, nominated pods, HTTP extenders, an error, a plugin framework/alike.py
does not know. The copy that fits nowhere gets the sampled cycle too (it advances the start index
by every node). tests/scheduling/test_sampled_alike.py holds the placements and start indices
equal to the sampled cycles.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from operator import add
from typing import TYPE_CHECKING, Any

from ..framework.alike import AlikeCycles, _has_out_of_range, _Unsupported

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..framework.runtime import Framework
    from .sampling import NodeSampling


class SampledAlikeCycles(AlikeCycles):
    """One profile's incremental state for alike pods under node sampling (see the module's doc)."""

    def __init__(self, fw: Framework, sampling: NodeSampling, global_pct: int):
        super().__init__(fw)
        self.sampling = sampling
        self.global_pct = global_pct
        self.taken = 0  # copies placed from the state (for tests and benchmarks)
        # the last copy's search: (start, processed, found, to find, searched, stop position or None)
        self._last: tuple[int, int, int, int, int, int | None] | None = None

    def place_sampled(self, pod: Pod):
        """(node, (start, processed, found, to_find, searched)) of the sampled cycle, None when no node
        fits (the cycle then runs: it searches every node), or FALLBACK."""
        self._last = None
        node = self.place(pod)
        return node, self._last

    # -- building ---------------------------------------------------------------------
    def _build(self, pod: Pod) -> None:
        if not self.fw.filter_plugins:
            raise _Unsupported("no filter plugin (the search reads no verdict)")
        count = len(self.snapshot.node_infos)
        self._keying = False  # the groups are keyed once the node order is known
        self.gid = [0] * count
        self.lkey = [0] * count
        self.gkeys: list[tuple] = []
        self.grep: list[int] = []  # a node of each group
        self.gids: dict[tuple, int] = {}
        super()._build(pod)
        if self.filter_trackers:
            # a verdict that depends on other nodes' pods: one copy changes those of a domain
            raise _Unsupported("a filter tracker")
        snapshot = self.snapshot
        order = self.sampling.order(snapshot)
        n = len(order)
        self.order = order
        self.n = n
        names = snapshot.names
        rank = sorted(range(n), key=names.__getitem__)
        self.scale = n + 1
        self.tiebreak = [0] * n
        for r, i in enumerate(rank):
            self.tiebreak[i] = n - r  # of equal totals the lowest name wins: the larger the better
        # the feasible nodes' positions in node-tree order (sorted) and their snapshot positions
        alive = self.alive
        self.fseq = [p for p, i in enumerate(order) if alive[i]]
        self.fnode = [order[p] for p in self.fseq]
        self.at = [0] * n  # each node's position in node-tree order
        for p, i in enumerate(order):
            self.at[i] = p
        self.to_find = self.sampling.to_find(
            n, self.fw.profile.percentage_of_nodes_to_score, self.global_pct, not self.fw.score_plugins
        )
        self._keying = True
        for i in self._alive_indexes():
            self._key_node(i)

    def _enter(self, i: int) -> None:
        if self._keying:
            self._key_node(i)

    def _key_node(self, i: int) -> None:
        """Node i's group (its trackers' keys and raw normalized scores, as an id) and its local sum
        as a key ranked with its name."""
        ni = self.snapshot.node_infos[i]
        key = (tuple(tr.node_key(ni) for tr in self.trackers), self.raw_keys[i])
        g = self.gids.get(key)
        if g is None:
            g = self.gids[key] = len(self.gkeys)
            self.gkeys.append(key)
            self.grep.append(i)
        self.gid[i] = g
        self.lkey[i] = self.local_sum[i] * self.scale + self.tiebreak[i]

    def _node_changed(self, i: int, pod: Pod) -> None:
        was = self.alive[i]
        super()._node_changed(i, pod)
        if was and not self.alive[i]:
            p = self.at[i]
            j = bisect_left(self.fseq, p)
            del self.fseq[j]
            del self.fnode[j]

    # -- one copy ---------------------------------------------------------------------
    def _choose(self) -> str | None:
        fseq, fnode = self.fseq, self.fnode
        f = len(fseq)
        if not f:
            return None  # the sampled cycle runs: it searches every node and finds none
        n, k = self.n, self.to_find
        start = self.sampling.next_start % n
        j = bisect_left(fseq, start)
        if f > k:
            end = j + k
            win = fnode[j:end] if end <= f else fnode[j:] + fnode[: end - f]
            stop = fseq[end % f]
            processed = (stop - start) % n
        else:
            win = fnode
            stop = None
            processed = n
        best = win[0] if len(win) == 1 else self._best(win)  # one node found: chosen without scoring
        self._last = (start, processed, len(win), k, n, stop)
        return self.snapshot.names[best]

    def _best(self, win: list[int]) -> int:
        gid = self.gid
        gids = list(map(gid.__getitem__, win))
        present = Counter(gids)
        lkey = self.lkey
        if not self.normalized and not self.score_trackers:
            keys = list(map(lkey.__getitem__, win))
        else:
            share = self._shares(present)
            if len(share) == 1 or len(set(share.values())) == 1:
                keys = list(map(lkey.__getitem__, win))
            else:
                scale = self.scale
                offs = {g: v * scale for g, v in share.items()}
                keys = list(map(add, map(lkey.__getitem__, win), map(offs.__getitem__, gids)))
        return win[keys.index(max(keys))]

    def _shares(self, present: Counter) -> dict[int, int]:
        """Each present group's weighted normalized scores over the window."""
        groups = list(present)
        gkeys = self.gkeys
        totals = [0] * len(groups)
        names = self.snapshot.names
        reps = [names[self.grep[g]] for g in groups]
        for pos, (pl, w) in enumerate(self.normalized):
            raws = [gkeys[g][1][pos] for g in groups]
            norm = self._normalized_raws(pos, pl, raws, reps)
            totals = [t + w * norm[r] for t, r in zip(totals, raws)]
        nis = self.snapshot.node_infos
        grep = self.grep
        for k, tr, w in self.score_trackers:
            vals = tr.normalized_scores([(gkeys[g][0][k], present[g], nis[grep[g]]) for g in groups])
            if vals is None or _has_out_of_range(vals):
                raise _Unsupported("a normalized score out of range")
            totals = [t + w * v for t, v in zip(totals, vals)]
        return dict(zip(groups, totals))

    def _normalized_raws(self, pos: int, pl, raws: list, reps: list[str]) -> dict[Any, int]:
        """raw score -> the plugin's normalized score over the distinct raw scores present (one
        node of each, `reps`: the in-tree normalizations read only the values' range)."""
        by_raw: dict[Any, str] = {}
        for r, name in zip(raws, reps):
            by_raw.setdefault(r, name)
        key = (pos, tuple(sorted(by_raw)))
        norm = self._norm_memo.get(key)
        if norm is None:
            scores = {name: r for r, name in by_raw.items()}
            st = pl.normalize_score(self.state, self.pod, scores)
            if st is not None and not st.is_success():
                raise _Unsupported(pl.name)
            norm = {r: scores[name] for r, name in by_raw.items()}
            if _has_out_of_range(list(norm.values())):
                raise _Unsupported("a normalized score out of range")
            if len(self._norm_memo) > 4096:
                self._norm_memo.clear()
            self._norm_memo[key] = norm
        return norm
