"""DefaultPreemption: NOT IMPLEMENTED YET (placeholder)."""
from __future__ import annotations

from ..framework.interface import Plugin
from ..framework.status import Status, UNSCHEDULABLE


class DefaultPreemption(Plugin):
    name = "DefaultPreemption"

    def post_filter(self, state, pod, node_statuses):
        return None, Status(UNSCHEDULABLE, "preemption: not implemented")
