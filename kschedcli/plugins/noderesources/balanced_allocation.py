"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay close together."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...framework.interface import BatchScorePlugin, Plugin, PreScorePlugin
from ...framework.status import skip
from .resource_allocation import balanced_scorer, pod_request_list, resource_vectors

if TYPE_CHECKING:
    from ...framework.cycle_state import CycleState
    from ...framework.status import Status
    from ...model import Pod
    from ...snapshot import NodeInfo


_KEY = "PreScoreNodeResourcesBalancedAllocation"


class NodeResourcesBalancedAllocation(Plugin, PreScorePlugin, BatchScorePlugin):
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, args, handle):
        super().__init__(args, handle)
        self.resources = args.get("resources") or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        reqs = pod_request_list(pod, self.resources, use_requested=True)
        if all(r == 0 for r in reqs):
            return skip()
        state.write(_KEY, reqs)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        reqs = state.get(_KEY)
        if reqs is None:
            reqs = pod_request_list(pod, self.resources, use_requested=True)
            if all(r == 0 for r in reqs):
                return 0, None
        requested, allocatable = resource_vectors(node_info, self.resources, reqs, use_requested=True)
        return balanced_scorer(requested, allocatable), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        """score over many nodes; cpu and memory (the default) computed directly in float64 as
        balancedResourceScorer does, anything else node by node."""
        reqs = state.get(_KEY)
        if reqs is None or [r["name"] for r in self.resources] != ["cpu", "memory"]:
            return [self.score(state, pod, ni)[0] for ni in nodes], None
        pc, pm = reqs
        out = []
        for ni in nodes:
            alloc = ni.node.allocatable
            ca, ma = alloc.milli_cpu, alloc.memory
            used = ni.requested
            if ca and ma:
                fc = float(used.milli_cpu + pc) / float(ca)
                if fc > 1:
                    fc = 1.0
                fm = float(used.memory + pm) / float(ma)
                if fm > 1:
                    fm = 1.0
                out.append(int((1 - abs((fc - fm) / 2)) * 100.0))
            else:
                out.append(100)   # fewer than two fractions: no deviation
        return out, None
