"""DynamicResources (DRA, GA in v1.34): the pod's ResourceClaims, allocated from ResourceSlices.

As kube-scheduler's plugin: PreEnqueue and PreFilter look every claim up (missing, being deleted,
not owned by the pod) and check the device classes of the claims still to be allocated; Filter
keeps allocated claims to the nodes their allocation's nodeSelector names and runs the structured
allocator (kschedcli.dra.allocator) for the unallocated ones on each node; PostFilter's verdicts
(deallocation is reported, not applied). When a sequence binds the pod, its claims get the
allocation found on the chosen node and list the pod in reservedFor (Reserve and PreBind), so
later pods see those devices taken. DRAExtendedResource is off in v1.34 (alpha), so extended
resources are left to NodeResourcesFit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config.argsvalidation import parse_go_duration
from ..framework.interface import (
    BatchFilterPlugin,
    BindObserver,
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
from ..framework.result import Explainer
from ..framework.status import UNSCHEDULABLE, Status, error, skip, unresolvable
from .helper import default_normalize_score

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..config.versions import Release
    from ..dra.allocator import AllocationTimeout, Allocator
    from ..dra.tracker import Claim, Result, Tracker
    from ..framework.cycle_state import CycleState
    from ..framework.result import CycleResult
    from ..framework.runtime import Handle, NodeStatuses


_KEY = "DynamicResources"


class _ClaimsState:
    __slots__ = ("claims", "selectors", "unavailable", "allocator")

    def __init__(self, claims: list[Claim], selectors=None, allocator: Allocator | None = None):
        self.claims = claims  # the pod's ResourceClaims, in spec order
        self.selectors = selectors or {}  # claim index -> NodeSelector of its allocation
        self.unavailable: set[int] = set()
        self.allocator = allocator  # for the claims still to be allocated

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
        statuses = status.get("resourceClaimStatuses")
        for st in statuses if isinstance(statuses, list) else []:
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
    BatchFilterPlugin,
    PostFilterPlugin,
    ScorePlugin,
    ScoreExtensions,
    ReservePlugin,
    PreBindPlugin,
    BindObserver,
    Explainer,
):
    name = "DynamicResources"

    def __init__(self, args: dict, handle: Handle):
        super().__init__(args, handle)
        # without the DynamicResourceAllocation gate (v1.33) the plugin is registered but idle
        self.enabled = handle.release.gate("DynamicResourceAllocation")
        self.prioritized_list = handle.release.gate("DRAPrioritizedList")
        self._tracker: Tracker | None = None
        # Filter gives up on a node after filterTimeout (defaulted to 10s where the gate is on; 0
        # and v1.33: no timeout): counted in allocator steps (kschedcli.dra.allocator)
        timeout = parse_go_duration((args or {}).get("filterTimeout") or "0s") or 0
        self.timed = handle.release.gate("DRASchedulerFilterTimeout") and timeout > 0
        self._timeout = timeout

    @property
    def step_budget(self) -> int:
        from ..dra.allocator import STEPS_PER_SECOND, UNTIMED_STEPS

        return max(1, self._timeout * STEPS_PER_SECOND // 1_000_000_000) if self.timed else UNTIMED_STEPS

    @property
    def tracker(self) -> Tracker:
        """The run's claims, classes and slices, read from the cluster when first needed."""
        if self._tracker is None:
            from ..dra.tracker import Tracker  # the DRA engine: imported when a pod has claims

            self._tracker = Tracker(self.handle.cluster)
        return self._tracker

    @classmethod
    def implements(cls, point: str, release: Release | None = None) -> bool:
        """Scoring (and its NormalizeScore) came with v1.35."""
        if point == "score" and release is not None and not release.has("DynamicResourcesScore"):
            return False
        return super().implements(point, release)

    def _pod_claims(self, pod) -> list[Claim]:
        """foreachPodResourceClaim: every claim the pod references must exist, not be being
        deleted, and (for claims made from a template) be controlled by the pod."""
        out = []
        tracker = self.tracker
        for pc in pod.resource_claims:
            if not isinstance(pc, dict):
                continue
            name, check_owner = _claim_name(pod, pc)
            if name is None:  # no claim was generated for this entry: nothing to do
                continue
            claim = tracker.claim(pod.namespace, name)
            if claim is None:
                raise ValueError(f'could not find ResourceClaim "{pod.namespace}/{name}"')
            meta = _meta(claim.raw)
            if meta.get("deletionTimestamp") is not None:
                raise ValueError(f'resourceclaim "{meta.get("name", name)}" is being deleted')
            if check_owner:
                refs = meta.get("ownerReferences")
                owned = any(
                    isinstance(o, dict) and o.get("controller") and o.get("uid") == pod.uid
                    for o in (refs if isinstance(refs, list) else [])
                )
                fields = {"claim_ns": claim.namespace, "claim": claim.name, "pod_ns": pod.namespace, "pod": pod.name}
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
        to_allocate = []
        for i, claim in enumerate(claims):
            # resourceclaim.CanBeReserved is always true in v1.34.1: a claim may be shared by
            # any number of pods here (the API server bounds status.reservedFor)
            if claim.allocation is not None:
                if claim.selector_error is not None:
                    return None, error(claim.selector_error)
                if claim.allocation.selector is not None:
                    selectors[i] = claim.allocation.selector
                continue
            to_allocate.append(claim)
            st = self._check_requests(claim)
            if st is not None:
                return None, st
        from ..dra.allocator import Allocator

        allocator = Allocator(self.tracker, to_allocate, self.step_budget) if to_allocate else None
        state.write(_KEY, _ClaimsState(claims, selectors, allocator))
        return None, None

    def _check_requests(self, claim: Claim):
        """PreFilter's walk over an unallocated claim's requests: each names an existing class."""
        for req in claim.spec.requests:
            if req.exactly is not None:
                st = self._check_class(req.exactly.class_name, req.name)
                if st is not None:
                    return st
            elif req.first_available:
                if not self.prioritized_list:
                    return unresolvable(
                        f"resource claim {claim.key}, request {req.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                for sub in req.first_available:
                    st = self._check_class(sub.class_name, f"{req.name}/{sub.name}")
                    if st is not None:
                        return st
            else:
                return unresolvable(f"resource claim {claim.key}, request {req.name}: unknown request type")
        return None

    def _check_class(self, class_name: str, request_name: str):
        if not class_name:
            return error(f"request {request_name}: unsupported request type")
        if class_name not in self.tracker.classes:
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
        from ..dra.allocator import AllocationError, AllocationTimeout

        node = node_info.node
        unavailable = [i for i, sel in s.selectors.items() if not sel.matches(node.labels, node.name)]
        if s.allocator is not None:
            # the allocator runs before the unavailable claims are reported: its verdict wins.
            # Which devices it would take is found again for the node the pod is bound to (on_bind)
            try:
                if not s.allocator.feasible(node):
                    return unresolvable("cannot allocate all claims")
            except AllocationError as e:
                return error(e.message)
            except AllocationTimeout as e:
                return self._timed_out(e)
        if unavailable:
            s.unavailable.update(unavailable)
            return unresolvable("resourceclaim not available on the node")
        return None

    def _timed_out(self, e: AllocationTimeout) -> Status:
        if self.timed:  # kube-scheduler's words when its filterTimeout passes
            return unresolvable("timed out trying to allocate devices")
        # no timeout: kube-scheduler would search on; ksched does not pretend to know the outcome
        return error(
            f"ksched stopped allocating devices after {e.steps:,} steps; kube-scheduler has no "
            "filterTimeout here and would search on"
        )

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """Filter on every node at once: the same verdicts, nodes failing alike sharing one status."""
        if not self.enabled:
            return [None] * len(nodes)
        s = state.get(_KEY)
        if s is None or not s.claims:
            return [self.filter(state, pod, ni) for ni in nodes] if s is None else [None] * len(nodes)
        if s.selectors:
            return [self.filter(state, pod, ni) for ni in nodes]
        allocator = s.allocator
        if allocator is None:
            return [None] * len(nodes)
        from ..dra.allocator import AllocationError, AllocationTimeout

        # one verdict per node signature (alike nodes), then the column
        signatures = self.tracker.node_signatures(nodes)
        verdicts: dict[int, Status | None] = {}
        cannot = unresolvable("cannot allocate all claims")
        for sig, ni in zip(signatures, nodes):
            if sig not in verdicts:
                try:
                    verdicts[sig] = None if allocator.feasible(ni.node) else cannot
                except AllocationError as e:
                    verdicts[sig] = error(e.message)
                except AllocationTimeout as e:
                    verdicts[sig] = self._timed_out(e)
        return [verdicts[sig] for sig in signatures]

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
        # pod; whichever it finds, the verdict is the same
        for i in sorted(s.unavailable):
            reserved = s.claims[i].reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                return None, Status(UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        return None, Status(UNSCHEDULABLE, "still not schedulable")

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """v1.35's Score (with DRAPrioritizedList): per claim that Filter allocated on the node in
        this cycle, 8 minus the index of the prioritized-list subrequest it got. Not modelled:
        every node scores 0, as for claims without subrequests."""
        return 0, None

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        default_normalize_score(scores, reverse=False)
        return None

    # Reserve and PreBind write claim status through the API; a sequence's bind does it here
    # (on_bind), for every profile's plugin, as they share the cluster's claims.
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def on_bind(self, pod: Pod, node_name: str) -> None:
        """The pod was bound by a sequence: its unallocated claims get the allocation Filter
        finds on the node (the same search on the same state), and all its claims list it in
        reservedFor."""
        if not self.enabled or not pod.resource_claims:
            return
        ni = self.handle.snapshot.get(node_name)
        if ni is None:
            return
        try:
            claims = self._pod_claims(pod)
        except ValueError:
            return
        to_allocate = [c for c in claims if c.allocation is None]
        found: dict[tuple[str, str], tuple[list[Result], dict | None]] = {}
        if to_allocate:
            from ..dra.allocator import AllocationError, AllocationTimeout, Allocator

            try:
                allocations = Allocator(self.tracker, to_allocate, self.step_budget).allocate(ni.node)
            except (AllocationError, AllocationTimeout):
                return
            if allocations is None:
                return
            found = {(c.namespace, c.name): a for c, a in zip(to_allocate, allocations)}
        self.tracker.bind(pod, node_name, found)

    # -- explanation ----------------------------------------------------------------------
    def explain(self, state: CycleState, pod: Pod, result: CycleResult) -> dict | None:
        """The pod's claims and, per node (the chosen one first, at most MAX_NODES), which devices
        each request of the claims to allocate could take and why the others could not."""
        s = state.get(_KEY)
        if s is None or not s.claims:
            return None
        from ..dra.explain import MAX_NODES, claim_summary, explain_node

        out: dict = {"claims": [claim_summary(c) for c in s.claims]}
        if s.allocator is None or result.filters is None:
            return out
        filters = result.filters
        chosen = result.selected_node
        names = [chosen] if chosen is not None and chosen in filters else []
        for n in self.handle.snapshot.names:
            if len(names) > MAX_NODES:
                break
            if n != chosen and n in filters:
                names.append(n)
        nodes = []
        memo: dict = {}
        for name in names[:MAX_NODES]:
            st = filters[name].plugins.get("DynamicResources")
            ni = self.handle.snapshot.get(name)
            if ni is None:
                continue
            doc = {
                "node": name,
                "verdict": "fits" if st is None or st.is_success() else st.message(),
                # the devices taken are worked out for the chosen node only
                "requests": explain_node(
                    self.tracker,
                    s.allocator.claims,
                    ni.node,
                    self._allocation(s, ni.node, st) if name == chosen else None,
                    memo,
                ),
            }
            nodes.append(doc)
        out["nodes"] = nodes
        described = len(filters)
        if described > len(nodes):
            out["nodesOmitted"] = described - len(nodes)
        return out

    @staticmethod
    def _allocation(s: _ClaimsState, node, st: Status | None):
        """The devices the allocator takes on a node that passed its Filter (for the explanation)."""
        if s.allocator is None or (st is not None and not st.is_success()):
            return None
        from ..dra.allocator import AllocationError

        try:
            return s.allocator.allocate(node)
        except AllocationError:
            return None
