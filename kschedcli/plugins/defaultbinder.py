"""DefaultBinder: binding is the in-memory assume of the Scheduler (see Scheduler.bind)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..framework.interface import BindPlugin, Plugin

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


class DefaultBinder(Plugin, BindPlugin):
    name = "DefaultBinder"

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.handle.snapshot.bind(pod, node_name)
        return None
