"""SchedulingGates: a gated pod never enters a scheduling cycle (PreEnqueue)."""
from __future__ import annotations

from ..framework.interface import ClusterEvent, Plugin
from ..framework.status import unresolvable


class SchedulingGates(Plugin):
    name = "SchedulingGates"

    def pre_enqueue(self, pod):
        if not pod.scheduling_gates:
            return None
        return unresolvable(f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]")

    def events_to_register(self):
        return [ClusterEvent("Pod", "UpdatePodSchedulingGatesEliminated", "the pod's last scheduling gate is removed")]
