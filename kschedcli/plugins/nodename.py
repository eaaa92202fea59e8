"""NodeName: a pod naming spec.nodeName fits only that node."""
from __future__ import annotations

from ..framework.interface import ClusterEvent, Plugin
from ..framework.status import unresolvable

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    name = "NodeName"

    def filter(self, state, pod, node_info):
        wanted = pod.raw.get("spec", {}).get("nodeName") if isinstance(pod.raw.get("spec"), dict) else None
        if wanted and wanted != node_info.node.name:
            return unresolvable(ERR_REASON)
        return None

    def filter_nodes(self, state, pod, nodes):
        wanted = pod.raw.get("spec", {}).get("nodeName") if isinstance(pod.raw.get("spec"), dict) else None
        if not wanted:
            return [None] * len(nodes)
        st = unresolvable(ERR_REASON)
        return [None if ni.node.name == wanted else st for ni in nodes]

    def events_to_register(self):
        return [ClusterEvent("Node", "Add", "the named node is added")]
