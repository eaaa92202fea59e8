"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate the unschedulable taint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..framework.interface import BatchFilterPlugin, ClusterEvent, EnqueueExtensions, Plugin
from ..framework.status import unresolvable
from .helper import tolerates

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"


class NodeUnschedulable(Plugin, BatchFilterPlugin, EnqueueExtensions):
    name = "NodeUnschedulable"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not node_info.node.unschedulable:
            return None
        if tolerates(pod.tolerations, "node.kubernetes.io/unschedulable", "", "NoSchedule"):
            return None
        return unresolvable(ERR_REASON_UNSCHEDULABLE)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        if tolerates(pod.tolerations, "node.kubernetes.io/unschedulable", "", "NoSchedule"):
            return [None] * len(nodes)
        st = unresolvable(ERR_REASON_UNSCHEDULABLE)
        snapshot = getattr(self.handle, "snapshot", None)
        if snapshot is not None and nodes is snapshot.node_infos:
            out: list[Status | None] = [None] * len(nodes)
            for i in snapshot.unschedulable_positions():
                out[i] = st
            return out
        return [st if ni.node.unschedulable else None for ni in nodes]

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("Node", "Add|UpdateNodeTaint", "a node is added or uncordoned"),
            ClusterEvent(
                "Pod", "UpdatePodToleration", "the pod gains a toleration for node.kubernetes.io/unschedulable"
            ),
        ]
