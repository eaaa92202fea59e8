"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..api.model import taint_signature
from ..framework.interface import (
    BatchFilterPlugin,
    BatchNormalizePlugin,
    BatchScorePlugin,
    ClusterEvent,
    EnqueueExtensions,
    Plugin,
    PreScorePlugin,
)
from ..framework.status import unresolvable
from .helper import default_normalize_array, default_normalize_list, default_normalize_score, find_untolerated_taint

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


_PRESCORE_KEY = "PreScoreTaintToleration"


def _per_taint_set(nodes, decide, untainted, snapshot=None, positions=None) -> list:
    """decide(node_info) for each node, worked out once per distinct taint set (nodes of a pool
    share theirs); `untainted` for nodes without taints. `positions`: the nodes' in the
    snapshot's order, when they are its own."""
    if snapshot is not None and (positions is not None or nodes is snapshot.node_infos):
        groups, first = snapshot.taint_groups()
        # each group's decision, then the untainted one last: group -1 reads it
        decided = [*map(decide, first), untainted]
        if decided.count(untainted) == len(decided):  # every group decided alike (by identity or ==)
            return [untainted] * (len(positions) if positions is not None else len(nodes))
        if positions is not None:
            return list(map(decided.__getitem__, map(groups.__getitem__, positions)))
        return list(map(decided.__getitem__, groups))
    memo: dict[tuple, object] = {}
    out = []
    for ni in nodes:
        node = ni.node
        if not node.taints:
            out.append(untainted)
            continue
        sig = taint_signature(node)
        if sig in memo:
            out.append(memo[sig])
        else:
            out.append(memo.setdefault(sig, decide(ni)))
    return out


class TaintToleration(
    Plugin, BatchFilterPlugin, PreScorePlugin, BatchScorePlugin, BatchNormalizePlugin, EnqueueExtensions
):
    name = "TaintToleration"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        t = find_untolerated_taint(node_info.node.taints, pod.tolerations)
        if t is None:
            return None
        # the reason names the taint until v1.35, which says only `node(s) had untolerated taint(s)`
        return unresolvable(self.handle.release.message("TaintToleration.Untolerated", key=t.key, value=t.value))

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        return _per_taint_set(
            nodes, lambda ni: self.filter(state, pod, ni), None, getattr(self.handle, "snapshot", None)
        )

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        state.write(_PRESCORE_KEY, [t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule")])
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        tols = state.read(_PRESCORE_KEY)
        n = 0
        for t in node_info.node.taints:
            if t.effect == "PreferNoSchedule" and not any(x.tolerates(t.key, t.value, t.effect) for x in tols):
                n += 1
        return n, None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        return _per_taint_set(
            nodes,
            lambda ni: self.score(state, pod, ni)[0],
            0,
            getattr(self.handle, "snapshot", None),
            state.score_positions,
        ), None

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        default_normalize_score(scores, reverse=True)
        return None

    def array_scores_in_range(self, state: CycleState) -> bool:
        # the static column's scores count intolerable PreferNoSchedule taints (not negative);
        # normalize_array reverses them into [0, 100]
        return True

    def constant_array_scores(self, state: CycleState, pod: Pod) -> bool:
        # the pod's count of intolerable PreferNoSchedule taints the same for every taint set
        # of the snapshot's nodes (and 0, where some node has none): normalized, all 100 or all
        # 0. Kept on the plugin (it lives as long as its snapshot: a pod's `_cache` may outlive a
        # scenario's) per pod fields (`_cache`, held so that its id stays its own) and grouping.
        snapshot = getattr(self.handle, "snapshot", None)
        if snapshot is None:
            return False
        grouping = snapshot.taint_groups()
        memo = self.__dict__.setdefault("_constant_memo", {})
        key = id(pod._cache)
        known = memo.get(key)
        if known is None or known[0] is not grouping or known[2] is not pod._cache:
            groups, first = grouping
            counts = {self.score(state, pod, ni)[0] for ni in first}
            if len(counts) <= 1 and counts != {0} and -1 in groups:
                counts.add(0)  # (the untainted nodes' count)
            known = memo[key] = (grouping, len(counts) <= 1, pod._cache)
        return known[1]

    def normalize_array(self, state: CycleState, pod: Pod, scores, at):
        """normalize_score on an int64 array (scheduling/columnar.py)."""
        return default_normalize_array(sys.modules["numpy"], scores, reverse=True)

    def normalize_scores(
        self, state: CycleState, pod: Pod, scores: list[int], names: list[str]
    ) -> tuple[list[int], Status | None]:
        return default_normalize_list(scores, reverse=True), None

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("Node", "Add|UpdateNodeTaint", "a node without the taint appears, or the taint is removed"),
            ClusterEvent("Pod", "UpdatePodToleration", "the pod gains a matching toleration"),
        ]
