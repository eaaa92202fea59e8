"""DynamicResources (DRA). Pods without resource claims skip it; its PostFilter still speaks.

Claims and devices are not modelled yet: a pod that references ResourceClaims is rejected at
PreFilter with a clear reason rather than being judged wrongly.
"""
from __future__ import annotations

from ..framework.interface import Plugin
from ..framework.status import Status, UNSCHEDULABLE, error, skip, unresolvable

_KEY = "DynamicResources"


class _ClaimsState:
    __slots__ = ("claims",)

    def __init__(self, claims):
        self.claims = claims

    def clone(self):
        return self


class DynamicResources(Plugin):
    name = "DynamicResources"

    def pre_enqueue(self, pod):
        return None

    def pre_filter(self, state, pod, nodes):
        state.write(_KEY, _ClaimsState([]))
        claims = [c for c in pod.resource_claims if isinstance(c, dict)]
        extended = [n for c in pod.containers for n in c.requests if n.startswith("deviceclass.resource.kubernetes.io/")]
        if not claims and not extended:
            return None, skip()
        state.write(_KEY, _ClaimsState(claims))
        return None, unresolvable("ksched does not model ResourceClaims yet: the pod's claims cannot be evaluated")

    def filter(self, state, pod, node_info):
        try:
            s = state.read(_KEY)
        except KeyError as e:
            return error(str(e))
        if not s.claims:
            return None
        return unresolvable("ksched does not model ResourceClaims yet")

    def post_filter(self, state, pod, node_statuses):
        try:
            s = state.read(_KEY)
        except KeyError as e:
            # PreFilter never ran (an earlier PreFilter rejected the pod): kube-scheduler errors too
            return None, error(str(e))
        if not s.claims:
            return None, Status(UNSCHEDULABLE, "no new claims to deallocate")
        return None, Status(UNSCHEDULABLE, "no new claims to deallocate")
