"""Node sampling as kube-scheduler's schedule_one does it (findNodesThatPassFilters).

On a cluster of 100 nodes or more kube-scheduler does not filter every node: it walks the nodes in
its node tree's order (backend/node_tree.py) from where its previous cycle stopped
(`nextStartNodeIndex`), stops once it has found `numFeasibleNodesToFind` feasible nodes, and scores
only those. The start then advances by the number of nodes it processed (feasible ones kept plus
those with a failure status), modulo the number of nodes in the cluster.

ksched filters as a single worker (`parallelism: 1`) does: the nodes in node-tree order from the
start index, in chunks (each filter plugin's verdicts on a chunk in one call, node-local ones read
from their equivalence-class columns), until the feasible node one past the number to find; only
the nodes found are scored (`NodeSampling.filter_search`). With more workers the nodes kept depend
on goroutine timing; the single-worker order is the reference. The cycles this path does not take
(a PreFilterResult, HTTP extenders, a nominated node that failed its first try) filter every node
and read the search off the verdicts (`NodeSampling.search`): the same nodes found."""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress, islice, repeat
from operator import is_, itemgetter
from typing import Any

from ..backend.node_tree import node_tree_order
from ..framework.equivalence import UNKNOWN
from ..framework.runtime import first_failures
from ..framework.status import ERROR

# schedule_one.go's constants
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

# findNodesThatFitPod builds the nodes of a PreFilterResult by ranging over its node-name set, a
# Go map: their order is random, drawn anew each cycle
PRE_FILTER_ORDER_NOTE = (
    "kube-scheduler visits the PreFilterResult's {n} nodes in Go map order, random each cycle, and "
    "stopped before the last: which of them it finds varies; ksched visits them in node-tree order"
)

PARALLELISM_NOTE = (
    "the config does not set parallelism: 1; with {workers} filter workers kube-scheduler's nodes "
    "found depend on goroutine timing: the single-worker search is shown"
)


def num_feasible_nodes_to_find(profile_pct: int | None, global_pct: int, num_nodes: int) -> int:
    """numFeasibleNodesToFind: every node below 100; else the profile's percentage (its own when set,
    else the global one; 0 is adaptive: 50 - n/125, at least 5) of the nodes, at least 100."""
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    pct = profile_pct if profile_pct is not None else global_pct
    if pct == 0:
        pct = max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - num_nodes // 125)
    return max(MIN_FEASIBLE_NODES_TO_FIND, num_nodes * pct // 100)


def effective_percentage(profile_pct: int | None, global_pct: int) -> int:
    return profile_pct if profile_pct is not None else global_pct


@dataclass
class SamplingInfo:
    """One cycle's search: the start index before and after, the number to find, the nodes
    evaluated (kept and failed) and kept (`found`, in search order)."""

    start_index: int
    next_start_index: int
    num_feasible_nodes_to_find: int
    percentage_of_nodes_to_score: int
    evaluated_nodes: int
    feasible_nodes: int
    found: list[str] = field(default_factory=list)
    searched_nodes: int = 0  # the nodes the search could visit (a PreFilterResult's when there is one)
    note: str = ""
    # a PreFilterResult's nodes whose order decided the nodes found (PRE_FILTER_ORDER_NOTE)
    order_note: str = ""

    def doc(self, full: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "startIndex": self.start_index,
            "nextStartIndex": self.next_start_index,
            "numFeasibleNodesToFind": self.num_feasible_nodes_to_find,
            "percentageOfNodesToScore": self.percentage_of_nodes_to_score,
            "evaluatedNodes": self.evaluated_nodes,
            "feasibleNodes": self.feasible_nodes,
            "searchedNodes": self.searched_nodes,
        }
        if full:
            d["nodesFound"] = list(self.found)
        if self.order_note:
            d["note"] = self.order_note
        return d


class NodeSampling:
    """A scheduler's sampling state: its next start index, and the node tree's order of its
    snapshot's nodes (as positions in the snapshot's list)."""

    def __init__(self, start_index: int = 0, note: str = ""):
        self.first_start = start_index
        self.next_start = start_index
        self.note = note
        self._order: list[int] | None = None
        self._names: Sequence[str] | None = None
        self._positions: tuple[list[int], list[int], list[int], list[int]] | None = None
        self._ratio = 1.0  # the share of feasible nodes the last filter_search met

    def run_doc(self, parallelism: int) -> dict[str, Any]:
        """The run's account: where the search started and where the next cycle would start."""
        d: dict[str, Any] = {
            "startIndex": self.first_start,
            "nextStartIndex": self.next_start,
            "parallelism": parallelism,
        }
        if self.note:
            d["note"] = self.note
        return d

    def order(self, snapshot) -> list[int]:
        names: list[str] = snapshot.names
        if self._order is None or self._names is not names or len(self._order) != len(names):
            infos = snapshot.node_infos
            by_name = sorted(range(len(infos)), key=lambda i: names[i])
            tree = node_tree_order((names[i], infos[i].node.labels) for i in by_name)
            index_of = snapshot.index_of
            self._order = [index_of[n] for n in tree]
            self._names = names
            self._positions = None
        return self._order

    def positions(self, snapshot) -> tuple[list[int], list[int], list[int], list[int]]:
        """(order, at, by_rank, tiebreak) of the snapshot's nodes, kept with the order: the node-tree
        order (positions in the snapshot's list), each node's place in it, the nodes by name, and
        each node's rank by name reversed (n for the lowest name, 1 for the highest)."""
        order = self.order(snapshot)
        if self._positions is None:
            n = len(order)
            at = [0] * n
            for p, i in enumerate(order):
                at[i] = p
            names = snapshot.names
            in_order = all(map(operator.lt, names, islice(names, 1, None)))
            by_rank = list(range(n)) if in_order else sorted(range(n), key=names.__getitem__)
            tiebreak = [0] * n
            for r, i in enumerate(by_rank):
                tiebreak[i] = n - r
            self._positions = (order, at, by_rank, tiebreak)
        return self._positions

    def unchanged(self, snapshot, profile_pct: int | None, global_pct: int) -> SamplingInfo:
        """A cycle that searched no node (PreFilter rejected the pod, or it fit its nominated
        node): the start index stays."""
        n = len(snapshot.names)
        return SamplingInfo(
            self.next_start,
            self.next_start,
            num_feasible_nodes_to_find(profile_pct, global_pct, n),
            effective_percentage(profile_pct, global_pct),
            0,
            0,
            searched_nodes=n,
            note=self.note,
        )

    def search(
        self,
        snapshot,
        first: Sequence[Any],
        allowed,
        *,
        profile_pct: int | None,
        global_pct: int,
        has_filters: bool,
        one_is_enough: bool,
        tried: int | None = None,
    ) -> tuple[list[int], SamplingInfo]:
        """The search of one cycle over `first` (each snapshot node's first failure, None when it
        fits; the PreFilterResult's `allowed` names, or None): the positions of the nodes kept, in
        search order, and the account; the start index advances. `one_is_enough`: no score plugin
        and no filtering extender (kube-scheduler then looks for one node). `tried`: the position of
        the nominated node that failed when tried first (its status counts as processed once)."""
        order = self.order(snapshot)
        if allowed is not None:
            names = snapshot.names
            order = [i for i in order if names[i] in allowed]
        n = len(order)
        to_find = self.to_find(n, profile_pct, global_pct, one_is_enough)
        start = self.next_start
        found: list[int] = []
        failed = 0
        tried_seen = False
        stopped = False  # at the feasible node one past the number to find
        if not has_filters:
            found = [order[(start + i) % n] for i in range(min(to_find, n))] if n else []
        else:
            for k in range(n):
                i = order[(start + k) % n]
                st = first[i]
                if st is None:
                    if len(found) == to_find:
                        stopped = True
                        break  # the feasible node one past the number to find: neither counted nor kept
                    found.append(i)
                elif st.code == ERROR:
                    break  # the search is cancelled there; the node is not counted
                else:
                    failed += 1
                    tried_seen = tried_seen or i == tried
        processed = len(found) + failed + (1 if tried is not None and not tried_seen else 0)
        info = self._advance(
            snapshot, start, processed, found, to_find, n, effective_percentage(profile_pct, global_pct)
        )
        if allowed is not None and (stopped or (not has_filters and to_find < n)):
            info.order_note = PRE_FILTER_ORDER_NOTE.format(n=n)
        return found, info

    def _advance(
        self, snapshot, start: int, processed: int, found: list[int], to_find: int, searched: int, pct: int
    ) -> SamplingInfo:
        """The start index moves by the nodes processed, modulo every node; the cycle's account."""
        num_all = len(snapshot.names)
        self.next_start = (start + processed) % num_all if num_all else 0
        names = snapshot.names
        return SamplingInfo(
            start,
            self.next_start,
            to_find,
            pct,
            processed,
            len(found),
            [names[i] for i in found],
            searched_nodes=searched,
            note=self.note,
        )

    def advance_by(
        self,
        snapshot,
        start: int,
        processed: int,
        found: int,
        to_find: int,
        searched: int,
        profile_pct: int | None,
        global_pct: int,
        stop: int | None,
    ) -> SamplingInfo:
        """A search worked out elsewhere (scheduling/sampled_alike.py: `found` nodes kept, `processed`
        counted, `stop` the visiting position it ended at or None): the start index advances as
        filter_search's; the account without the nodes' names."""
        self._ratio = found / (processed if stop is not None else searched) if found and searched else 1.0
        num_all = len(snapshot.names)
        self.next_start = (start + processed) % num_all if num_all else 0
        return SamplingInfo(
            start,
            self.next_start,
            to_find,
            effective_percentage(profile_pct, global_pct),
            processed,
            found,
            searched_nodes=searched,
            note=self.note,
        )

    def to_find(self, n: int, profile_pct: int | None, global_pct: int, one_is_enough: bool) -> int:
        return 1 if one_is_enough else num_feasible_nodes_to_find(profile_pct, global_pct, n)

    def filter_search(
        self,
        fw,
        state,
        pod,
        snapshot,
        counted: dict[str, list],
        res,
        *,
        profile_pct: int | None,
        global_pct: int,
        one_is_enough: bool,
    ) -> SampledFilter:
        """findNodesThatPassFilters with one worker over every node of the snapshot: the nodes
        in node-tree order from the start index, filtered chunk by chunk (every filter plugin
        that did not Skip, on each node of the chunk) until the feasible node one past the number
        to find, or a node whose filters end in an error (the search is cancelled there, the node
        not counted), or the last node. `counted`: the nodes with nominated pods of at least the
        pod's priority (their two passes; `res.nominated` records them). The start index advances."""
        order = self.order(snapshot)
        n = len(order)
        to_find = self.to_find(n, profile_pct, global_pct, one_is_enough)
        start = self.next_start
        s = start % n
        seq = order[s:] + order[:s]  # the visiting order
        infos = snapshot.node_infos
        names = snapshot.names
        plugins = [pl for pl in fw.filter_plugins if pl.name not in state.skip_filter_plugins]
        columns: dict[str, list] = {pl.name: [] for pl in plugins}  # verdicts, in visiting order
        first: list = []
        found: list[int] = []
        failed = 0
        stop: int | None = None  # the visiting position the search ended at (not counted)
        error = None
        done = 0
        ratio = self._ratio  # the share of feasible nodes the last search met: the first chunk's size
        passes: list[tuple[int, dict]] = []  # nodes with nominated pods: their verdicts without them
        wholes: dict[str, list] = {}  # plugins' verdicts on every node, once filtered so (reused)
        while done < n and stop is None:
            need = to_find + 1 - len(found)  # the one past the number to find is filtered too
            if done and found:
                ratio = len(found) / done
            size = min(n - done, int(need / max(ratio, 0.01) * 1.1) + 16)
            positions = seq[done : done + size]
            cols, chunk_first = _chunk_verdicts(fw, state, pod, snapshot, plugins, positions, wholes)
            if counted:
                for k, i in enumerate(positions):
                    nominated = counted.get(names[i])
                    if nominated is None:
                        continue
                    alone = {p: col[k] for p, col in cols.items()}
                    f, per_plugin, second = fw.filter_node_with_nominated_pods(state, pod, infos[i], nominated, alone)
                    chunk_first[k] = f
                    for p, st in per_plugin.items():
                        cols[p][k] = st
                    res.nominated[names[i]] = _nominated_on(nominated, second)
                    passes.append((i, alone))
            # the chunk's feasible nodes (None: no failure), read at C level
            ok = list(compress(range(len(chunk_first)), map(is_, chunk_first, repeat(None))))
            if any(st.code == ERROR for st in set(chunk_first) if st is not None):
                cut = next(k for k, st in enumerate(chunk_first) if st is not None and st.code == ERROR)
                ok = [k for k in ok if k < cut]
                stop, error = done + cut, chunk_first[cut]
            if len(ok) > need - 1:
                cut = ok[need - 1]  # the feasible node one past: neither counted nor kept
                ok = ok[: need - 1]
                stop, error = done + cut, None
            end = len(chunk_first) if stop is None else stop - done
            found.extend(map(positions.__getitem__, ok))
            failed += end - len(ok)
            for p, col in cols.items():
                columns[p].extend(col)
            first.extend(chunk_first)
            done += len(positions)
        self._ratio = len(found) / (stop if stop is not None else n) if found else 1.0
        info = self._advance(
            snapshot, start, len(found) + failed, found, to_find, n, effective_percentage(profile_pct, global_pct)
        )
        if stop is None:
            # every node filtered: the table in the snapshot's order, as without sampling
            at = [0] * n  # each node's visiting position
            for k, i in enumerate(seq):
                at[i] = k
            get = itemgetter(*at) if n > 1 else (lambda col: tuple(col[a] for a in at))
            in_order = {p: list(get(col)) for p, col in columns.items()}
            # the cycle's own verdicts (as preemption reads them): without the nominated pods
            alone_in_order = {p: list(col) for p, col in in_order.items()} if passes else in_order
            for i, alone in passes:
                for p, st in alone.items():
                    alone_in_order[p][i] = st
            return SampledFilter(
                found, info, list(names), snapshot.index_of, in_order, list(get(first)), True, None, alone_in_order
            )
        # the nodes the search counted, in visiting order
        table_names = [names[i] for i in seq[:stop]]
        return SampledFilter(
            found,
            info,
            table_names,
            dict(zip(table_names, range(stop))),
            {p: col[:stop] for p, col in columns.items()},
            first[:stop],
            False,
            error,
        )


@dataclass
class SampledFilter:
    """filter_search's outcome: the positions of the nodes found (search order), the account, and
    the filter table of the nodes the search counted (`every_node`: all of them, in the snapshot's
    order), the error that cancelled the search (None); with every node, the plugins' own columns
    (the nodes with nominated pods hold their verdicts without them, as without sampling)."""

    found: list[int]
    info: SamplingInfo
    names: list[str]
    index: dict[str, int]
    columns: dict[str, list]
    first: list
    every_node: bool
    error: Any
    # every_node: the plugins' verdicts in the snapshot's order without the nominated pods
    alone_columns: dict[str, list] | None = None


def _nominated_on(nominated: list, second: bool):
    from ..framework.result import NominatedOnNode

    return NominatedOnNode([p.key for p in nominated], second, False)


def _chunk_verdicts(
    fw, state, pod, snapshot, plugins: list, positions: list[int], wholes: dict[str, list] | None = None
) -> tuple[dict[str, list], list]:
    """Every plugin's verdicts on the nodes at `positions` (the framework's tagging), and each
    node's first failure. A node-local plugin's are read from its equivalence-class column: a
    class met for the first time is filtered on every node, as without sampling (the next pods of
    the class read it); entries of nodes changed since are filtered again. Another plugin filters
    the chunk, or every node in one call when the chunk holds a quarter of them or more (the
    plugins' passes over the snapshot's own list are the cheaper then; the verdicts of the nodes
    not visited are dropped; kept in `wholes` for the search's next chunks, which read them)."""
    infos = snapshot.node_infos
    chunk = [infos[i] for i in positions]
    get = itemgetter(*positions) if len(positions) > 1 else (lambda col: [col[i] for i in positions])
    whole = len(positions) * 4 >= len(infos)
    cols: dict[str, list] = {}
    for pl in plugins:
        cache = fw.equivalence.column("filter", pl, pod)
        known = cache.current(snapshot) if cache is not None else None
        if cache is None:
            full = wholes.get(pl.name) if wholes is not None else None
            if full is None and whole:
                full = fw.filter_column(pl, state, pod, infos)
                if wholes is not None:
                    wholes[pl.name] = full
            cols[pl.name] = list(get(full)) if full is not None else fw.filter_column(pl, state, pod, chunk)
            continue
        if known is None:
            full = fw.filter_column(pl, state, pod, infos)
            if not _has_error(full):
                cache.store(snapshot, full)
            cols[pl.name] = list(get(full))
            continue
        col = list(get(known))
        if any(map(is_, col, repeat(UNKNOWN))):
            missing = list(compress(range(len(col)), map(is_, col, repeat(UNKNOWN))))
            if len(missing) <= 16:
                one = fw._filter_one
                fresh = [one(pl, state, pod, chunk[k]) for k in missing]
            else:
                fresh = fw.filter_column(pl, state, pod, [chunk[k] for k in missing])
            for k, st in zip(missing, fresh):
                col[k] = st
            if not _has_error(fresh):
                known = list(known)  # stored lists are replaced, never changed
                for k, st in zip(missing, fresh):
                    known[positions[k]] = st
                cache.store(snapshot, known)
        cols[pl.name] = col
    return cols, first_failures(list(cols.values()), len(positions))


def _has_error(col: list) -> bool:
    return any(st.code == ERROR for st in set(filter(None, col)))


TOP_WINNERS = 10  # the nodes an outlook names; the others are counted (winnersOmitted)


def outlook(scheduler, res, state, fw, allowed) -> dict[str, Any] | None:
    """`explain` on a cluster of 100 nodes or more: over every start index kube-scheduler's search
    could begin at, which node it would select, read from the one cycle `res` (every node
    filtered, every feasible node scored; `state` its CycleState after PreScore, `fw` its
    framework, `allowed` its PreFilterResult's node names or None) through the windows of
    feasible nodes each start finds. Each window's scores are normalized by the plugins' own
    NormalizeScore over that window; PreScore ran once over every feasible node (a plugin whose
    PreScore depends on the set scored, PodTopologySpread's topology values, sees every zone in a
    window of 100+ zone-interleaved nodes all the same). None when the cluster has fewer than 100
    nodes, or the pod fit its nominated node, or HTTP extenders ran."""
    from ..framework.result import FilterTable

    snap = scheduler.snapshot
    num_all = len(snap.names)
    ft = res.filters
    if num_all < MIN_FEASIBLE_NODES_TO_FIND or not isinstance(ft, FilterTable) or res.nominated_node_tried:
        return None
    if scheduler.extenders or res.error:
        return None
    order = NodeSampling().order(snap)
    pf_names = None
    if allowed is not None:
        # a PreFilterResult narrows the search to its nodes
        order = [i for i in order if snap.names[i] in allowed]
        pf_names = len(order)
    n = len(order)
    profile_pct = fw.profile.percentage_of_nodes_to_score
    global_pct = scheduler.config.percentage_of_nodes_to_score
    k = num_feasible_nodes_to_find(profile_pct, global_pct, n)
    if not fw.score_plugins:
        k = 1
    first = ft.first
    fpos = [p for p in range(n) if first[order[p]] is None]
    f = len(fpos)
    out: dict[str, Any] = {
        "nodes": num_all,
        "searchedNodes": n,
        "numFeasibleNodesToFind": k,
        "percentageOfNodesToScore": effective_percentage(profile_pct, global_pct),
        "feasibleNodes": f,
        "startPositions": n,
        "allNodesSelectedNode": res.selected_node,
    }
    if pf_names is not None:
        out["preFilterResultNodes"] = pf_names
    if f == 0:
        out.update(evaluatedNodes={"min": n, "max": n, "mean": float(n)}, winners=[], winnersOmitted=0)
        out["allNodesSelectedFromPercent"] = 0.0
        return out
    if f <= k:
        # every start finds every feasible node: the all-nodes answer, every node evaluated
        out.update(evaluatedNodes={"min": n, "max": n, "mean": float(n)})
        winners = {res.selected_node: n}
        out["spans"] = [(0, n, res.selected_node)]
    else:
        spans, evaluated = _windows(snap, res, state, fw, order, fpos, k, n)
        winners = {}
        for _, count, node in spans:
            winners[node] = winners.get(node, 0) + count
        out["evaluatedNodes"] = evaluated
        out["spans"] = spans
    ranked = sorted(winners.items(), key=lambda kv: (-kv[1], kv[0]))
    out["winners"] = [
        {"node": node, "startPositions": c, "percent": round(100 * c / n, 1)} for node, c in ranked[:TOP_WINNERS]
    ]
    out["winnersOmitted"] = max(0, len(ranked) - TOP_WINNERS)
    out["distinctWinners"] = len(ranked)
    out["allNodesSelectedFromPercent"] = round(100 * winners.get(res.selected_node, 0) / n, 1)
    return out


def _windows(snap, res, state, fw, order, fpos, k, n) -> tuple[list[tuple[int, int, str]], dict[str, Any]]:
    """Per window of k feasible nodes (in search order, cyclic): (the first start index that
    finds it, how many consecutive start indices do, the node selected); the nodes evaluated per
    start (min, max, mean)."""
    from ..framework.result import ScoreTable

    f = len(fpos)
    names_all = snap.names
    fnames = [names_all[order[p]] for p in fpos]  # feasible nodes in search order
    table = res.scores
    fixed = [0] * f  # weighted scores that need no per-window normalization
    varying: list[tuple[Any, list, int]] = []  # (normalizer, raw in search order, weight)
    if isinstance(table, ScoreTable) and table.columns:
        pos_of = table.index
        at = [pos_of[nm] for nm in fnames]
        for plugin, raw, normalized, w in table.columns:
            raw_f = [raw[i] for i in at]
            norm_f = [normalized[i] for i in at]
            normalizer = fw.normalizers.get(plugin)
            if normalizer is None:
                fixed = [a + b * w for a, b in zip(fixed, norm_f)]
            elif len(set(raw_f)) == 1 and len(set(norm_f)) == 1:
                continue  # equal on every feasible node: equal on any window, the choice unchanged
            else:
                varying.append((normalizer, raw_f, w))
    winners = _window_winners(fnames, fixed, varying, k, state, res.pod)
    spans: list[tuple[int, int, str]] = []
    ev_min, ev_max, ev_sum = n, 0, 0.0
    for j in range(f):
        # the starts that find window j: just after the previous feasible node, up to fpos[j]
        prev = fpos[j - 1] if j else fpos[-1] - n
        starts = fpos[j] - prev
        # each evaluates from its start up to (not including) the feasible node one past the window
        stop = fpos[(j + k) % f] + (n if j + k >= f else 0)
        lo, hi = stop - fpos[j], stop - prev - 1  # evaluated from s = fpos[j] and s = prev + 1
        ev_min, ev_max = min(ev_min, lo), max(ev_max, hi)
        ev_sum += (lo + hi) * starts / 2  # lo..hi, one value per start
        if winners is not None:
            winner = winners[j]
        else:
            idx = [(j + t) % f for t in range(k)]
            totals = [fixed[i] for i in idx]
            for normalizer, raw_f, w in varying:
                scores = {fnames[i]: raw_f[i] for i in idx}
                normalizer.normalize_score(state, res.pod, scores)
                vals = list(scores.values())
                totals = [a + b * w for a, b in zip(totals, vals)]
            best = max(totals)
            winner = min(fnames[i] for i, t in zip(idx, totals) if t == best)
        spans.append(((prev + 1) % n, starts, winner))
    return spans, {"min": ev_min, "max": ev_max, "mean": round(ev_sum / n, 1)}


# NormalizeScore of these in-tree plugins is a function of the node's raw score and of the lowest
# and highest raw scores of the nodes normalized together (DefaultNormalizeScore reads the
# highest only; PodTopologySpread leaves its ignored nodes out of both and sets them to 0)
RANGE_NORMALIZED = frozenset(
    {"TaintToleration", "NodeAffinity", "InterPodAffinity", "DynamicResources", "PodTopologySpread"}
)


def _by_range(normalizer, state, fnames: list[str]) -> bool:
    name = getattr(normalizer, "name", "")
    if name not in RANGE_NORMALIZED or not type(normalizer).__module__.startswith("kschedcli.plugins."):
        return False
    if name == "PodTopologySpread":
        from ..plugins.podtopologyspread.plugin import PRE_SCORE_KEY

        ignored = getattr(state.get(PRE_SCORE_KEY), "ignored_nodes", None)
        return not ignored or ignored.isdisjoint(fnames)
    return True


def _sliding(vals: list, k: int, better) -> list[int]:
    """For each window of k consecutive values (vals[j:j+k], j = 0 .. len(vals)-k), the position of
    its best value by `better(a, b)` (a at least as good as b; of equals, the later one): a
    monotonic queue, each position entering and leaving it once."""
    q: deque[int] = deque()
    out: list[int] = []
    for i, v in enumerate(vals):
        while q and better(v, vals[q[-1]]):
            q.pop()
        q.append(i)
        if q[0] <= i - k:
            q.popleft()
        if i >= k - 1:
            out.append(q[0])
    return out


def _window_winners(fnames: list[str], fixed: list[int], varying: list, k: int, state, pod) -> list[str] | None:
    """The node selected in each window of k feasible nodes (window j: fnames[j .. j+k-1],
    cyclic), found without normalizing each window: when every plugin whose normalized scores
    vary normalizes by range (RANGE_NORMALIZED), a window's normalized scores depend on its
    lowest and highest raw scores only (sliding minima and maxima). Consecutive windows with the
    same ranges form a run; every node of a run's windows has its raw score inside those ranges,
    so one NormalizeScore over the run's nodes gives each of them the score it gets in any of the
    windows; the best node per window (highest total, then lowest name) is a sliding maximum over
    the run. None when a plugin normalizes otherwise (each window is then normalized on its own)."""
    f = len(fnames)
    if any(not _by_range(normalizer, state, fnames) for normalizer, _, _ in varying):
        return None
    # per window, each varying plugin's (lowest, highest) raw score
    keys: list[tuple] = [()] * f
    for _, raw, _ in varying:
        ext = raw + raw[: k - 1]
        lows = _sliding(ext, k, operator.le)
        highs = _sliding(ext, k, operator.ge)
        keys = [(*key, ext[a], ext[b]) for key, a, b in zip(keys, lows, highs)]
    # a node's rank by name: of equal totals the lowest name wins, so the larger the better
    by_name = sorted(range(f), key=fnames.__getitem__)
    tiebreak = [0] * f
    for r, i in enumerate(by_name):
        tiebreak[i] = f - r
    scale = f + 1
    winners: list[str] = [""] * f
    j = 0
    while j < f:
        key = keys[j]
        end = j
        while end + 1 < f and keys[end + 1] == key:
            end += 1
        pos = [(j + t) % f for t in range(end - j + k)]  # the nodes of windows j .. end
        totals = [fixed[i] for i in pos]
        for normalizer, raw, w in varying:
            reps: dict[int, str] = {}
            for i in pos:
                reps.setdefault(raw[i], fnames[i])
            scores = {name: v for v, name in reps.items()}
            normalizer.normalize_score(state, pod, scores)
            norm = {v: scores[name] for v, name in reps.items()}
            totals = [t + w * norm[raw[i]] for t, i in zip(totals, pos)]
        ranked = [t * scale + tiebreak[i] for t, i in zip(totals, pos)]
        for t, best in enumerate(_sliding(ranked, k, operator.ge)):
            winners[j + t] = fnames[pos[best]]
        j = end + 1
    return winners
