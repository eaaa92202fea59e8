"""SchedulingGates: a gated pod never enters a scheduling cycle (PreEnqueue)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..framework.interface import ClusterEvent, EnqueueExtensions, Plugin, PreEnqueuePlugin
from ..framework.status import unresolvable

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..framework.status import Status


class SchedulingGates(Plugin, PreEnqueuePlugin, EnqueueExtensions):
    name = "SchedulingGates"

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.scheduling_gates:
            return None
        return unresolvable(f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")

    def events_to_register(self) -> list[ClusterEvent]:
        return [ClusterEvent("Pod", "UpdatePodSchedulingGatesEliminated", "the pod's last scheduling gate is removed")]
