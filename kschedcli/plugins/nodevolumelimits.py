"""NodeVolumeLimits: NOT IMPLEMENTED YET (placeholder so the framework knows the plugin's extension points)."""
from __future__ import annotations

from ..framework.interface import Plugin
from ..framework.status import skip


class NodeVolumeLimits(Plugin):
    name = "NodeVolumeLimits"

    def pre_filter(self, state, pod, nodes):
        return None, skip()

    def filter(self, state, pod, node_info):
        return None
