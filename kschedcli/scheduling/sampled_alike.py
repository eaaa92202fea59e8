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

from bisect import bisect_left, insort
from itertools import filterfalse
from typing import TYPE_CHECKING, Any

from ..framework.alike import AlikeCycles, _has_out_of_range, _Unsupported

# a group whose window holds less than 1/_SCAN of its nodes has them read; else its best nodes are
# looked at in turn until one is in the window
_SCAN = 16

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
        t = self._template
        if t is None or pod._cache is not t._cache:
            # a new template: unlike framework/alike.py's, its first copy is placed from the state
            # too (the state is built for it): the build costs less than the sampled cycle it
            # would take first, and a template run here is a sequence of copies
            self._template = pod
            self._built = self._unsupported = False
        node = self.place(pod)
        return node, self._last

    # -- building ---------------------------------------------------------------------
    def _build(self, pod: Pod) -> None:
        if not self.fw.filter_plugins:
            raise _Unsupported("no filter plugin (the search reads no verdict)")
        count = len(self.snapshot.node_infos)
        self._keying = False  # the groups are keyed once the node order is known
        self.gid = [0] * count
        self.gkeys: list[tuple] = []
        self.grep: list[int] = []  # a node of each group
        self.gids: dict[tuple, int] = {}
        # per group, its nodes' positions in the order of their lkey (a node's local sum ranked with
        # its name: unique), the best last
        self.gbest: list[list[int]] = []
        self.live: dict[int, None] = {}  # the groups with a feasible node, in the order made
        self.gpos: list[list[int]] = []  # per group, its nodes' positions in node-tree order, sorted
        # the normalized plugins whose raw scores differ between groups (one raw score on every
        # group is one normalized score on any window: the choice unchanged), as positions
        self.varying: list[int] = []
        super()._build(pod)
        if self.filter_trackers:
            # a verdict that depends on other nodes' pods: one copy changes those of a domain
            raise _Unsupported("a filter tracker")
        snapshot = self.snapshot
        order, at, by_rank, tiebreak = self.sampling.positions(snapshot)
        n = len(order)
        self.order = order
        self.n = n
        self.at = at  # each node's position in node-tree order
        self.by_rank = by_rank
        self.tiebreak = tiebreak
        self.scale = n + 1
        # the feasible nodes' positions in node-tree order, sorted
        alive = self.alive
        self.fseq = [p for p, i in enumerate(order) if alive[i]]
        self.lk_at = [0] * n  # per position, its node's lkey
        self.to_find = self.sampling.to_find(
            n, self.fw.profile.percentage_of_nodes_to_score, self.global_pct, not self.fw.score_plugins
        )
        self._keying = True
        gbest, gpos, lk_at = self.gbest, self.gpos, self.lk_at
        for i in self._alive_indexes():
            g, lk, p = self._key_of(i)
            gbest[g].append(p)
            gpos[g].append(p)
        for g in range(len(self.gkeys)):
            gbest[g].sort(key=lk_at.__getitem__)
            gpos[g].sort()

    def _enter(self, i: int) -> None:
        if self._keying:
            g, lk, p = self._key_of(i)
            insort(self.gbest[g], p, key=self.lk_at.__getitem__)
            insort(self.gpos[g], p)

    def _key_of(self, i: int) -> tuple[int, int, int]:
        """Node i into its group (its trackers' keys and raw normalized scores, as an id), its lkey
        (its local sum ranked with its name) kept at its position: (group, lkey, position)."""
        ni = self.snapshot.node_infos[i]
        key = (tuple(tr.node_key(ni) for tr in self.trackers), self.raw_keys[i])
        g = self.gids.get(key)
        if g is None:
            g = self.gids[key] = len(self.gkeys)
            if self.gkeys:
                first = self.gkeys[0][1]
                self.varying = [q for q in range(len(first)) if q in self.varying or key[1][q] != first[q]]
            self.gkeys.append(key)
            self.grep.append(i)
            self.gbest.append([])
            self.gpos.append([])
        self.gid[i] = g
        p = self.at[i]
        lk = self.lk_at[p] = self.local_sum[i] * self.scale + self.tiebreak[i]
        self.live[g] = None
        return g, lk, p

    def _leave(self, i: int) -> None:
        """Out of its group's ordered lists (framework/alike.py's heaps are not kept here): the
        bind may change its key and its local sum."""
        g = self.gid[i]
        p = self.at[i]
        best, pos = self.gbest[g], self.gpos[g]
        lk_at = self.lk_at
        del best[bisect_left(best, lk_at[p], key=lk_at.__getitem__)]
        del pos[bisect_left(pos, p)]
        if not pos:
            del self.live[g]

    def _drop(self, i: int) -> None:
        super()._drop(i)
        del self.fseq[bisect_left(self.fseq, self.at[i])]

    # -- one copy ---------------------------------------------------------------------
    def _choose(self) -> str | None:
        fseq = self.fseq
        f = len(fseq)
        if not f:
            return None  # the sampled cycle runs: it searches every node and finds none
        n, k = self.n, self.to_find
        start = self.sampling.next_start % n
        if f > k:
            # the window: node-tree positions from the start up to the feasible one past the
            # number to find (cyclic)
            at_stop = fseq[(bisect_left(fseq, start) + k) % f]
            stop: int | None = at_stop
            processed = (at_stop - start) % n
            found = k
        else:
            stop = None  # every node searched, every feasible one found
            processed = n
            found = f
        best = self._best(start, stop)
        self._last = (start, processed, found, k, n, stop)
        return self.snapshot.names[best]

    def _best(self, start: int, stop: int | None) -> int:
        """The best node of the window (highest total, then lowest name). Per group present: its
        count in the window (two bisections) and its share (the normalized scores over the window).
        A group's best lkey anywhere plus its share bounds its best total in the window: the groups
        are looked into in the order of that bound, only while it can beat the best so far; inside
        one, its nodes best first until one is in the window (about size / count of them), or, with
        few in the window, those read."""
        gpos, gbest, lk_at = self.gpos, self.gbest, self.lk_at
        wrapped = stop is not None and stop <= start
        groups: list[int] = []
        counts: list[int] = []
        spans: list[tuple[int, int]] = []
        if stop is None:
            groups = list(self.live)
            counts = [len(gpos[g]) for g in groups]
        else:
            for g in self.live:
                pos = gpos[g]
                lo = bisect_left(pos, start)
                hi = bisect_left(pos, stop)
                cnt = len(pos) - lo + hi if wrapped else hi - lo
                if cnt > 0:
                    groups.append(g)
                    counts.append(cnt)
                    spans.append((lo, hi))
        scale = self.scale
        if len(groups) > 1 and (self.varying or self.score_trackers):
            shares = self._shares(groups, counts, scale)
        else:
            shares = [0] * len(groups)
        # each group's bound: its best lkey anywhere plus its share
        bounds = [lk_at[gbest[g][-1]] + share for g, share in zip(groups, shares)]
        best = -1
        # membership of a position in the window, at C level: the window's range's, or when it wraps
        # that of the positions it leaves out
        if wrapped:
            outside = range(stop, start).__contains__  # type: ignore[arg-type]
        else:
            inside = range(start, stop if stop is not None else self.n).__contains__
        for x in sorted(range(len(groups)), key=bounds.__getitem__, reverse=True):
            if bounds[x] <= best:
                break  # totals are unique (the name ranks): no group after it can beat the best
            g, cnt = groups[x], counts[x]
            pos = gpos[g]
            size = len(pos)
            if cnt == size:
                top = bounds[x]
            elif cnt * _SCAN >= size:
                # its nodes best first, the first in the window
                first = filterfalse(outside, reversed(gbest[g])) if wrapped else filter(inside, reversed(gbest[g]))
                top = lk_at[next(first)] + shares[x]
            else:
                lo, hi = spans[x]
                top = max(map(lk_at.__getitem__, pos[lo:] + pos[:hi] if wrapped else pos[lo:hi])) + shares[x]
            if top > best:
                best = top
        return self.by_rank[self.n - best % scale]

    def _shares(self, groups: list[int], counts: list[int], scale: int) -> list[int]:
        """Each present group's weighted normalized scores over the window, times `scale`."""
        gkeys = self.gkeys
        totals = [0] * len(groups)
        reps: list[str] = []
        normalized = self.normalized
        for pos in self.varying:
            raws = [gkeys[g][1][pos] for g in groups]
            if raws.count(raws[0]) == len(raws):
                continue  # one raw score: one normalized score for every node, the choice unchanged
            if not reps:
                names = self.snapshot.names
                reps = [names[self.grep[g]] for g in groups]
            pl, w = normalized[pos]
            w *= scale
            norm = self._normalized_raws(pos, pl, raws, reps)
            totals = [t + w * norm[r] for t, r in zip(totals, raws)]
        nis = self.snapshot.node_infos
        grep = self.grep
        for k, tr, w in self.score_trackers:
            vals = tr.normalized_scores([(gkeys[g][0][k], c, nis[grep[g]]) for g, c in zip(groups, counts)])
            if vals is None or _has_out_of_range(vals):
                raise _Unsupported("a normalized score out of range")
            w *= scale
            totals = [t + w * v for t, v in zip(totals, vals)]
        return totals

    def _normalized_raws(self, pos: int, pl, raws: list, reps: list[str]) -> dict[Any, int]:
        """raw score -> the plugin's normalized score over the distinct raw scores present (one
        node of each, `reps`: the in-tree normalizations read only the values' range)."""
        by_raw: dict[Any, str] = {}
        for r, name in zip(raws, reps):
            by_raw.setdefault(r, name)
        return self._normalized_reps(pos, pl, by_raw)
