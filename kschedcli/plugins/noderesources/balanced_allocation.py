"""NodeResourcesBalancedAllocation: favour nodes whose resource fractions stay close together."""
from __future__ import annotations

from ...framework.interface import Plugin
from ...framework.status import skip
from .resource_allocation import balanced_scorer, pod_request_list, resource_vectors

_KEY = "PreScoreNodeResourcesBalancedAllocation"


class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, args, handle):
        super().__init__(args, handle)
        self.resources = args.get("resources") or [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

    def pre_score(self, state, pod, nodes):
        reqs = pod_request_list(pod, self.resources, use_requested=True)
        if all(r == 0 for r in reqs):
            return skip()
        state.write(_KEY, reqs)
        return None

    def score(self, state, pod, node_info):
        reqs = state.get(_KEY)
        if reqs is None:
            reqs = pod_request_list(pod, self.resources, use_requested=True)
            if all(r == 0 for r in reqs):
                return 0, None
        requested, allocatable = resource_vectors(node_info, self.resources, reqs, use_requested=True)
        return balanced_scorer(requested, allocatable), None
