"""ImageLocality: favour nodes that already hold the pod's images, scaled by how widely spread they are."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ..framework.interface import MAX_NODE_SCORE, BatchScorePlugin, Plugin

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class ImageLocality(Plugin, BatchScorePlugin):
    name = "ImageLocality"

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        """score over many nodes: the normalized image names and thresholds worked out once."""
        containers = pod.init_containers + pod.containers
        max_threshold = MAX_CONTAINER_THRESHOLD * len(containers)
        if max_threshold == MIN_THRESHOLD:
            return [0] * len(nodes), None
        names = [normalized_image_name(c.image) for c in containers]
        total = float(len(self.handle.snapshot.node_infos))
        span = max_threshold - MIN_THRESHOLD

        def score_of(held: tuple) -> int:
            # held: each container image's state on the node (None: not there)
            s = 0
            for st in held:
                if st is not None:
                    s += int(float(st[0]) * (float(st[1]) / total))
            if s < MIN_THRESHOLD:
                return 0
            return MAX_NODE_SCORE * (min(s, max_threshold) - MIN_THRESHOLD) // span

        # a node's score follows from the image states it holds, which are shared objects (one
        # per image name): nodes holding the same ones share the arithmetic
        positions = state.score_positions
        snapshot = self.handle.snapshot
        if positions is not None and len(names) == 1:
            # one image: its states at the scored nodes' positions, each distinct one scored once
            states = list(map(snapshot.image_column(names[0]).__getitem__, positions))
            by_state = {st: score_of((st,)) for st in set(states)}
            return list(map(by_state.__getitem__, states)), None
        if positions is not None:
            # the scored nodes are the snapshot's: read its per-image columns at their positions
            held = list(zip(*[list(map(snapshot.image_column(name).__getitem__, positions)) for name in names]))
        else:
            held = list(zip(*[[ni.image_states.get(name) for ni in nodes] for name in names]))
        memo = {h: score_of(h) for h in set(held)}
        return list(map(memo.__getitem__, held)), None

    def array_scores_in_range(self, state: CycleState) -> bool:
        # score_array: the scaled sums of _scores_of (0 below the threshold, at most 100 above)
        return True

    def constant_array_scores(self, state: CycleState, pod: Pod) -> bool:
        # every node's score for the pod's images the same (most often 0: no node holds them
        # enough), as _scores_of made them for the snapshot
        snapshot = getattr(self.handle, "snapshot", None)
        np = sys.modules.get("numpy")
        if snapshot is None or np is None:
            return False
        containers = pod.init_containers + pod.containers
        max_threshold = MAX_CONTAINER_THRESHOLD * len(containers)
        if max_threshold == MIN_THRESHOLD:
            return True  # (score_array's zeros)
        if len(containers) >= 2**10:
            return False
        names = tuple(normalized_image_name(c.image) for c in containers)
        memo = self._memo(snapshot)
        constant = memo[4].get(names)
        if constant is None:
            if self._scores_of(snapshot, names, max_threshold, np) is None:
                return False
            constant = memo[4][names]
        return constant

    def score_array(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Any:
        """score_nodes as an int64 array, for the snapshot's own nodes at
        CycleState.score_positions_array (scheduling/columnar.py): each image's share on every
        node of the snapshot kept as an array per image name, the pod's shares summed and scaled
        in integers. None otherwise, or when a share is too large for int64 sums."""
        made = state.score_positions_array
        snapshot = getattr(self.handle, "snapshot", None)
        np = sys.modules.get("numpy")
        if snapshot is None or np is None or made is None or made[0] is not state.score_positions:
            return None
        at = made[1]
        containers = pod.init_containers + pod.containers
        max_threshold = MAX_CONTAINER_THRESHOLD * len(containers)
        if max_threshold == MIN_THRESHOLD:
            return np.zeros(len(at), dtype=np.int64)
        if len(containers) >= 2**10:
            return None  # (shares below 2**52 each: their sum stays in int64)
        names = tuple(normalized_image_name(c.image) for c in containers)
        scores = self._scores_of(snapshot, names, max_threshold, np)
        return None if scores is None else scores[at].astype(np.int64)

    def _scores_of(self, snapshot: Any, names: tuple[str, ...], max_threshold: int, np: Any) -> Any:
        """Every node's score for a pod of these normalized image names (one per container), an
        int8 array in the snapshot's node order (scores are 0 to 100): the images' shares summed
        and scaled in integers. Kept per tuple of names with the shares (a bind changes no
        image); None when a share is too large to sum."""
        memo = self._memo(snapshot)
        known = memo[3].get(names)
        if known is not None:
            return known
        total: Any = None
        for name in names:
            shares = self._shares(snapshot, name, np)
            if shares is None:
                return None
            total = shares if total is None else total + shares
        if total is None:  # no container: every sum below the threshold
            scores = np.zeros(len(snapshot.node_infos), dtype=np.int8)
        else:
            scaled = (
                MAX_NODE_SCORE * (np.minimum(total, max_threshold) - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
            )
            scores = np.where(total < MIN_THRESHOLD, 0, scaled).astype(np.int8)
        memo[3][names] = scores
        memo[4][names] = bool(scores.min() == scores.max()) if len(scores) else True
        return scores

    def _memo(self, snapshot: Any) -> tuple[Any, int, dict[str, Any], dict, dict]:
        """What is kept for the snapshot: (it, its node count, shares per image name, scores per
        tuple of names); made again for another snapshot or another node count (add_node)."""
        n = len(snapshot.node_infos)
        memo = self.__dict__.get("_share_memo")
        if memo is None or memo[0] is not snapshot or memo[1] != n:
            memo = self.__dict__["_share_memo"] = (snapshot, n, {}, {}, {})
        return memo

    def _shares(self, snapshot: Any, name: str, np: Any) -> Any:
        """Each node's share of image `name` (int(size * nodes holding it / nodes), 0 where the
        node lacks it) as an int64 array in the snapshot's node order; None when one is too
        large to sum in int64. Kept per image for the snapshot's life (a bind changes no image)."""
        memo = self._memo(snapshot)
        n = memo[1]
        shares = memo[2].get(name)
        if shares is None:
            held = snapshot.image_holders(name, np)  # (a sweep scenario's snapshot: its holders only)
            states = snapshot.image_column(name) if held is None else held[1]
            total = float(n)
            of = {st: 0 if st is None else int(float(st[0]) * (float(st[1]) / total)) for st in set(states)}
            if max(map(abs, of.values()), default=0) >= 2**52:
                shares = False
            elif held is None:
                shares = np.fromiter(map(of.__getitem__, states), dtype=np.int64, count=len(states))
            else:
                shares = np.zeros(n, dtype=np.int64)
                shares[held[0]] = np.fromiter(map(of.__getitem__, states), dtype=np.int64, count=len(states))
            memo[2][name] = shares
        return shares if shares is not False else None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        total = len(self.handle.snapshot.node_infos)
        states = node_info.image_states
        s = 0
        for c in pod.init_containers + pod.containers:
            st = states.get(normalized_image_name(c.image))
            if st is not None:
                size, num_nodes = st
                s += int(float(size) * (float(num_nodes) / float(total)))
        n = len(pod.init_containers) + len(pod.containers)
        max_threshold = MAX_CONTAINER_THRESHOLD * n
        s = max(MIN_THRESHOLD, min(s, max_threshold)) if s >= MIN_THRESHOLD else MIN_THRESHOLD
        if max_threshold == MIN_THRESHOLD:
            return 0, None
        return MAX_NODE_SCORE * (s - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD), None
