"""Node sampling as kube-scheduler's schedule_one does it (findNodesThatPassFilters).

On a cluster of 100 nodes or more kube-scheduler does not filter every node: it walks the nodes in
its node tree's order (backend/node_tree.py) from where its previous cycle stopped
(`nextStartNodeIndex`), stops once it has found `numFeasibleNodesToFind` feasible nodes, and scores
only those. The start then advances by the number of nodes it processed (feasible ones kept plus
those with a failure status), modulo the number of nodes in the cluster.

Every node's filter verdict is independent of the others', so ksched filters every node as it
always does and reads the search off the verdicts: which nodes a single worker (`parallelism: 1`)
would have visited, which it would have kept. With more workers the nodes kept depend on goroutine
timing; the single-worker order is the reference."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..backend.node_tree import node_tree_order

# schedule_one.go's constants
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

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
        return self._order

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
        num_all = len(snapshot.names)
        to_find = num_feasible_nodes_to_find(profile_pct, global_pct, n)
        if one_is_enough:
            to_find = 1
        start = self.next_start
        found: list[int] = []
        failed = 0
        tried_seen = False
        if not has_filters:
            found = [order[(start + i) % n] for i in range(min(to_find, n))] if n else []
        else:
            for k in range(n):
                i = order[(start + k) % n]
                if first[i] is None:
                    if len(found) == to_find:
                        break  # the feasible node one past the number to find: neither counted nor kept
                    found.append(i)
                else:
                    failed += 1
                    tried_seen = tried_seen or i == tried
        processed = len(found) + failed + (1 if tried is not None and not tried_seen else 0)
        self.next_start = (start + processed) % num_all if num_all else 0
        info = SamplingInfo(
            start,
            self.next_start,
            to_find,
            effective_percentage(profile_pct, global_pct),
            processed,
            len(found),
            [snapshot.names[i] for i in found],
            searched_nodes=n,
            note=self.note,
        )
        return found, info


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
