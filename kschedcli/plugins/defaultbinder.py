"""DefaultBinder: binding is the in-memory assume of the Scheduler (see Scheduler.bind)."""
from __future__ import annotations

from ..framework.interface import Plugin


class DefaultBinder(Plugin):
    name = "DefaultBinder"

    def bind(self, state, pod, node_name: str):
        self.handle.snapshot.bind(pod, node_name)
        return None
