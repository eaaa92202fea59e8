"""NodeUnschedulable: cordoned nodes reject pods that do not tolerate the unschedulable taint."""
from __future__ import annotations

from ..framework.interface import ClusterEvent, Plugin
from ..framework.status import unresolvable
from .helper import tolerates

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"


class NodeUnschedulable(Plugin):
    name = "NodeUnschedulable"

    def filter(self, state, pod, node_info):
        if not node_info.node.unschedulable:
            return None
        if tolerates(pod.tolerations, "node.kubernetes.io/unschedulable", "", "NoSchedule"):
            return None
        return unresolvable(ERR_REASON_UNSCHEDULABLE)

    def filter_nodes(self, state, pod, nodes):
        if tolerates(pod.tolerations, "node.kubernetes.io/unschedulable", "", "NoSchedule"):
            return [None] * len(nodes)
        st = unresolvable(ERR_REASON_UNSCHEDULABLE)
        return [st if ni.node.unschedulable else None for ni in nodes]

    def events_to_register(self):
        return [ClusterEvent("Node", "Add|UpdateNodeTaint", "a node is added or uncordoned"),
                ClusterEvent("Pod", "UpdatePodToleration", "the pod gains a toleration for node.kubernetes.io/unschedulable")]
