"""DynamicResources (DRA, GA in v1.34): the pod's ResourceClaims.

Modelled as kube-scheduler's plugin does it: PreEnqueue and PreFilter look every claim up (missing,
being deleted, not owned by the pod), PreFilter checks the device classes of claims still to be
allocated, Filter keeps allocated claims to the nodes their allocation's nodeSelector names, and
PostFilter's verdicts. Allocating devices for an unallocated claim (the structured-parameters
allocator over ResourceSlices) is not modelled: such a pod is rejected at PreFilter with a reason
that says so, rather than judged wrongly. DRAExtendedResource is off in v1.34 (alpha), so extended
resources are left to NodeResourcesFit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InputError
from ..framework.interface import (
    FilterPlugin,
    Plugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from ..framework.status import UNSCHEDULABLE, Status, error, skip, unresolvable
from ..labels import parse_node_selector
from .helper import default_normalize_score

if TYPE_CHECKING:
    from ..framework.cycle_state import CycleState
    from ..framework.runtime import Handle, NodeStatuses
    from ..model import Pod
    from ..snapshot import NodeInfo
    from ..versions import Release


_KEY = "DynamicResources"
NOT_MODELLED = "ksched does not model ResourceClaims yet: the pod's claims cannot be evaluated"


class _ClaimsState:
    __slots__ = ("claims", "selectors", "unavailable")

    def __init__(self, claims, selectors=None):
        self.claims = claims  # the pod's ResourceClaim objects, in spec order
        self.selectors = selectors or {}  # claim index -> NodeSelector of its allocation
        self.unavailable: set[int] = set()

    def clone(self):
        return self


def _meta(obj) -> dict:
    m = obj.get("metadata") if isinstance(obj, dict) else None
    return m if isinstance(m, dict) else {}


def _claim_name(pod, pc: dict):
    """resourceclaim.Name: (name or None, must check owner) or raises ValueError(message)."""
    if pc.get("resourceClaimName") is not None:
        return pc["resourceClaimName"], False
    if pc.get("resourceClaimTemplateName") is not None:
        status = pod.raw.get("status") if isinstance(pod.raw.get("status"), dict) else {}
        for st in status.get("resourceClaimStatuses") or []:
            if isinstance(st, dict) and st.get("name") == pc.get("name"):
                return st.get("resourceClaimName"), True
        raise ValueError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
    raise ValueError(
        f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pc.get("name", "")}": '
        f"none of the supported fields are set"
    )


class DynamicResources(
    Plugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    ScorePlugin,
    ScoreExtensions,
    ReservePlugin,
    PreBindPlugin,
):
    name = "DynamicResources"

    def __init__(self, args: dict, handle: Handle):
        super().__init__(args, handle)
        # without the DynamicResourceAllocation gate (v1.33) the plugin is registered but idle
        self.enabled = handle.release.gate("DynamicResourceAllocation")

    @classmethod
    def implements(cls, point: str, release: Release | None = None) -> bool:
        """Scoring (and its NormalizeScore) came with v1.35."""
        if point == "score" and release is not None and not release.has("DynamicResourcesScore"):
            return False
        return super().implements(point, release)

    def _pod_claims(self, pod) -> list[dict]:
        """foreachPodResourceClaim: every claim the pod references must exist, not be being
        deleted, and (for claims made from a template) be controlled by the pod."""
        out = []
        cluster = self.handle.cluster
        for pc in pod.resource_claims:
            if not isinstance(pc, dict):
                continue
            name, check_owner = _claim_name(pod, pc)
            if name is None:  # no claim was generated for this entry: nothing to do
                continue
            claim = cluster.get("ResourceClaim", pod.namespace, name) if cluster is not None else None
            if claim is None and cluster is not None and pod.namespace == "default":
                # a claim written without metadata.namespace lands in "default", as the API server puts it
                claim = cluster.get("ResourceClaim", "", name)
            if claim is None:
                raise ValueError(f'could not find ResourceClaim "{pod.namespace}/{name}"')
            meta = _meta(claim)
            if meta.get("deletionTimestamp") is not None:
                raise ValueError(f'resourceclaim "{meta.get("name", name)}" is being deleted')
            if check_owner:
                owned = any(
                    isinstance(o, dict) and o.get("controller") and o.get("uid") == pod.uid
                    for o in meta.get("ownerReferences") or []
                )
                fields = {
                    "claim_ns": meta.get("namespace") or pod.namespace,
                    "claim": meta.get("name", name),
                    "pod_ns": pod.namespace,
                    "pod": pod.name,
                }
                release = self.handle.release
                if fields["claim_ns"] != pod.namespace:
                    raise ValueError(release.message("DynamicResources.OtherNamespace", **fields))
                if not owned:
                    raise ValueError(release.message("DynamicResources.NotOwner", **fields))
            out.append(claim)
        return out

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enabled or not pod.resource_claims:
            return None
        try:
            self._pod_claims(pod)
        except ValueError as e:
            return unresolvable(str(e))
        return None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, skip()
        state.write(_KEY, _ClaimsState([]))
        if not pod.resource_claims:
            return None, skip()
        try:
            claims = self._pod_claims(pod)
        except ValueError as e:
            return None, unresolvable(str(e))
        if not claims:
            return None, skip()
        selectors = {}
        to_allocate = 0
        for i, claim in enumerate(claims):
            status = raw_status if isinstance(raw_status := claim.get("status"), dict) else {}
            alloc = status.get("allocation")
            if alloc is not None:
                ns = alloc.get("nodeSelector") if isinstance(alloc, dict) else None
                if ns is not None:
                    try:
                        selectors[i] = parse_node_selector(ns, "status.allocation.nodeSelector", strict=True)
                    except InputError as e:
                        return None, error(f"{e.field}: {e.message}")
                continue
            to_allocate += 1
            st = self._check_requests(claim)
            if st is not None:
                return None, st
        state.write(_KEY, _ClaimsState(claims, selectors))
        if to_allocate:
            return None, unresolvable(NOT_MODELLED)
        return None, None

    def _check_requests(self, claim):
        """PreFilter's walk over an unallocated claim's requests: each names an existing class."""
        meta = _meta(claim)
        ref = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        spec = raw_spec if isinstance(raw_spec := claim.get("spec"), dict) else {}
        devices = raw_devices if isinstance(raw_devices := spec.get("devices"), dict) else {}
        for req in devices.get("requests") or []:
            if not isinstance(req, dict):
                continue
            rname = req.get("name", "")
            if req.get("exactly") is not None:
                st = self._check_class((req["exactly"] or {}).get("deviceClassName", ""), rname)
                if st is not None:
                    return st
            elif req.get("firstAvailable"):
                for sub in req["firstAvailable"]:
                    sub = sub if isinstance(sub, dict) else {}
                    st = self._check_class(sub.get("deviceClassName", ""), f"{rname}/{sub.get('name', '')}")
                    if st is not None:
                        return st
            else:
                return unresolvable(f"resource claim {ref}, request {rname}: unknown request type")
        return None

    def _check_class(self, class_name: str, request_name: str):
        if not class_name:
            return error(f"request {request_name}: unsupported request type")
        cluster = self.handle.cluster
        if cluster is None or cluster.get("DeviceClass", "", class_name) is None:
            return unresolvable(f"request {request_name}: device class {class_name} does not exist")
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        try:
            s = state.read(_KEY)
        except KeyError as e:
            return error(str(e))
        if not s.claims:
            return None
        node = node_info.node
        bad = [i for i, sel in s.selectors.items() if not sel.matches(node.labels, node.name)]
        if bad:
            s.unavailable.update(bad)
            return unresolvable("resourceclaim not available on the node")
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, node_statuses: NodeStatuses
    ) -> tuple[PostFilterResult | None, Status | None]:
        if not self.enabled:
            return None, Status(UNSCHEDULABLE, "plugin disabled")
        try:
            s = state.read(_KEY)
        except KeyError as e:
            # PreFilter never ran (an earlier PreFilter rejected the pod): kube-scheduler errors too
            return None, error(str(e))
        if not s.claims:
            return None, Status(UNSCHEDULABLE, "no new claims to deallocate")
        # Go walks a set in random order and deallocates the first claim reserved for no other
        # pod; in index order here
        for i in sorted(s.unavailable):
            status = s.claims[i].get("status") if isinstance(s.claims[i].get("status"), dict) else {}
            reserved = status.get("reservedFor") or []
            if not reserved or (
                len(reserved) == 1 and isinstance(reserved[0], dict) and reserved[0].get("uid") == pod.uid
            ):
                return None, Status(UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        return None, Status(UNSCHEDULABLE, "still not schedulable")

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """v1.35's Score (with DRAPrioritizedList): per claim that Filter allocated on the node in
        this cycle, 8 minus the index of the prioritized-list subrequest it got. Claims allocated
        before the cycle do not count, and ksched allocates no devices (see the module's note:
        such a pod stops at PreFilter), so every node it scores gets 0, as for pods without claims."""
        return 0, None

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        default_normalize_score(scores, reverse=False)
        return None

    # Reserve and PreBind write claim status through the API; nothing to model offline, but the
    # plugin implements those extension points, which configuration validation checks.
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None
