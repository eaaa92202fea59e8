"""ImageLocality: favour nodes that already hold the pod's images, scaled by how widely spread they are."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
