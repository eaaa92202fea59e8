"""NodeName: a pod naming spec.nodeName fits only that node."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..framework.interface import BatchFilterPlugin, ClusterEvent, EnqueueExtensions, Plugin
from ..framework.status import unresolvable

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin, BatchFilterPlugin, EnqueueExtensions):
    name = "NodeName"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = pod.raw.get("spec", {}).get("nodeName") if isinstance(pod.raw.get("spec"), dict) else None
        if wanted and wanted != node_info.node.name:
            return unresolvable(ERR_REASON)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        wanted = pod.raw.get("spec", {}).get("nodeName") if isinstance(pod.raw.get("spec"), dict) else None
        if not wanted:
            return [None] * len(nodes)
        st = unresolvable(ERR_REASON)
        return [None if ni.node.name == wanted else st for ni in nodes]

    def events_to_register(self) -> list[ClusterEvent]:
        return [ClusterEvent("Node", "Add", "the named node is added")]
