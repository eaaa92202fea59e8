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

import operator
from bisect import bisect_left, insort
from itertools import islice
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
        node = self.place(pod)
        return node, self._last

    # -- building ---------------------------------------------------------------------
    def _build(self, pod: Pod) -> None:
        if not self.fw.filter_plugins:
            raise _Unsupported("no filter plugin (the search reads no verdict)")
        count = len(self.snapshot.node_infos)
        self._keying = False  # the groups are keyed once the node order is known
        self._bulk = False
        self.gid = [0] * count
        self.lkey = [0] * count
        self.gkeys: list[tuple] = []
        self.grep: list[int] = []  # a node of each group
        self.gids: dict[tuple, int] = {}
        self.gneg: list[list[int]] = []  # per group, its nodes' -lkey, sorted (best first)
        self.gnegpos: list[list[int]] = []  # the same nodes' positions in node-tree order
        self.live: dict[int, None] = {}  # the groups with a feasible node, in the order made
        self.gpos: list[list[int]] = []  # per group, its nodes' positions in node-tree order, sorted
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
        in_order = all(map(operator.lt, names, islice(names, 1, None)))
        rank = list(range(n)) if in_order else sorted(range(n), key=names.__getitem__)
        self.by_rank = rank
        self.scale = n + 1
        self.tiebreak = [0] * n
        for r, i in enumerate(rank):
            self.tiebreak[i] = n - r  # of equal totals the lowest name wins: the larger the better
        # the feasible nodes' positions in node-tree order, sorted
        alive = self.alive
        self.fseq = [p for p, i in enumerate(order) if alive[i]]
        self.at = [0] * n  # each node's position in node-tree order
        for p, i in enumerate(order):
            self.at[i] = p
        self.to_find = self.sampling.to_find(
            n, self.fw.profile.percentage_of_nodes_to_score, self.global_pct, not self.fw.score_plugins
        )
        self._keying = True
        self._bulk = True  # appended, then sorted once
        for i in self._alive_indexes():
            self._key_node(i)
        self._bulk = False
        for g in range(len(self.gkeys)):
            pairs = sorted(zip(self.gneg[g], self.gnegpos[g]))
            self.gneg[g] = [a for a, _ in pairs]
            self.gnegpos[g] = [b for _, b in pairs]
            self.gpos[g].sort()

    def _enter(self, i: int) -> None:
        if self._keying:
            self._key_node(i)

    def _key_node(self, i: int) -> None:
        """Node i into its group (its trackers' keys and raw normalized scores, as an id), with its
        local sum as a key ranked with its name."""
        ni = self.snapshot.node_infos[i]
        key = (tuple(tr.node_key(ni) for tr in self.trackers), self.raw_keys[i])
        g = self.gids.get(key)
        if g is None:
            g = self.gids[key] = len(self.gkeys)
            self.gkeys.append(key)
            self.grep.append(i)
            self.gneg.append([])
            self.gnegpos.append([])
            self.gpos.append([])
        self.gid[i] = g
        lk = self.lkey[i] = self.local_sum[i] * self.scale + self.tiebreak[i]
        neg = self.gneg[g]
        if self._bulk:
            neg.append(-lk)
            self.gnegpos[g].append(self.at[i])
            self.gpos[g].append(self.at[i])
        else:
            j = bisect_left(neg, -lk)
            neg.insert(j, -lk)
            self.gnegpos[g].insert(j, self.at[i])
            insort(self.gpos[g], self.at[i])
        self.live[g] = None

    def _node_changed(self, i: int, pod: Pod) -> None:
        was = self.alive[i]
        if was and self._keying:
            # out of its group: the bind may change its key and its local sum
            g = self.gid[i]
            neg, pos = self.gneg[g], self.gpos[g]
            j = bisect_left(neg, -self.lkey[i])
            del neg[j]
            del self.gnegpos[g][j]
            del pos[bisect_left(pos, self.at[i])]
            if not pos:
                del self.live[g]
        super()._node_changed(i, pod)
        if was and not self.alive[i]:
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
        """The best node of the window (highest total, then lowest name): per group present, its count
        in the window and its best local sum there."""
        scale, n = self.scale, self.n
        gneg, gpos = self.gneg, self.gpos
        wrapped = stop is not None and stop <= start
        present: dict[int, int] = {}
        tops: dict[int, int] = {}
        for g in self.live:
            pos = gpos[g]
            size = len(pos)
            if stop is None:
                present[g] = size
                tops[g] = -gneg[g][0]
                continue
            lo, hi = bisect_left(pos, start), bisect_left(pos, stop)
            cnt = size - lo + hi if wrapped else hi - lo
            if cnt <= 0:
                continue
            present[g] = cnt
            if cnt == size:
                tops[g] = -gneg[g][0]
                continue
            top = None
            if cnt * _SCAN >= size:
                # the group's best nodes first, until one is in the window: about size / cnt of them
                for t, p in enumerate(self.gnegpos[g]):
                    if (p >= start or p < stop) if wrapped else (start <= p < stop):
                        top = -gneg[g][t]
                        break
            if top is None:
                # its nodes in the window, read at C level
                order, lkey = self.order, self.lkey
                inside = pos[lo:] + pos[:hi] if wrapped else pos[lo:hi]
                top = max(map(lkey.__getitem__, map(order.__getitem__, inside)))
            tops[g] = top
        if len(tops) == 1 or (not self.normalized and not self.score_trackers):
            best = max(tops.values())
        else:
            share = self._shares(present)
            best = max(top + share[g] * scale for g, top in tops.items())
        return self.by_rank[n - best % scale]

    def _shares(self, present: dict[int, int]) -> dict[int, int]:
        """Each present group's weighted normalized scores over the window."""
        groups = list(present)
        gkeys = self.gkeys
        totals = [0] * len(groups)
        reps: list[str] = []
        for pos, (pl, w) in enumerate(self.normalized):
            raws = [gkeys[g][1][pos] for g in groups]
            if raws.count(raws[0]) == len(raws):
                continue  # one raw score: one normalized score for every node, the choice unchanged
            if not reps:
                names = self.snapshot.names
                reps = [names[self.grep[g]] for g in groups]
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
        return self._normalized_reps(pos, pl, by_raw)
