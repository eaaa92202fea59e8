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
