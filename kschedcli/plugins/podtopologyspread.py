"""PodTopologySpread: NOT IMPLEMENTED YET (placeholder so the framework knows the plugin's extension points)."""
from __future__ import annotations

from ..framework.interface import Plugin
from ..framework.status import skip


class PodTopologySpread(Plugin):
    name = "PodTopologySpread"

    def pre_filter(self, state, pod, nodes):
        return None, skip()

    def filter(self, state, pod, node_info):
        return None

    def pre_score(self, state, pod, nodes):
        return skip()

    def score(self, state, pod, node_info):
        return 0, None
