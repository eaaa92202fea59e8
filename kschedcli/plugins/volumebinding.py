"""VolumeBinding: the pod's PersistentVolumeClaims must be bindable on the node.

Bound claims need their PV's node affinity to match the node. Unbound WaitForFirstConsumer claims
need an available PV that matches (size, class, access modes, volume mode, selector, node affinity)
or dynamic provisioning allowed on the node (provisioner, allowedTopologies, CSIStorageCapacity).
Unbound Immediate claims make the pod unschedulable in PreFilter.

Like kube-scheduler's volume binder, the plugin keeps an assume cache: when a pod is bound (Reserve,
or `on_bind` from Scheduler.bind), the PVs chosen for its claims are assumed pre-bound to them and
claims to provision get the selected-node annotation, so later pods of a sequence see that.
Volume capacity scoring needs the StorageCapacityScoring feature gate, off in v1.34: Score is skipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api import quantity
from ..api.labels import parse_label_selector
from ..backend.vectors import numpy_for
from ..errors import FieldError
from ..framework.interface import (
    BatchFilterPlugin,
    BindObserver,
    ClusterEvent,
    EnqueueExtensions,
    Plugin,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from ..framework.result import Explainer
from ..framework.status import UNRESOLVABLE, Status, error, skip, unresolvable
from .volume import csi
from .volume.util import (
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    PV,
    CatalogMixin,
    Claim,
    NotFoundError,
    VolumeError,
    affinity_array,
    check_access_modes,
    match_topology_selector_terms,
    parse_claim_selector,
    parse_pv_affinity,
    pod_claim_name,
    volume_is_for_pod,
)

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.result import CycleResult


ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
_STATE_KEY = "VolumeBinding"


class PodVolumeClaims:
    """The pod's claims split as GetPodVolumeClaims does, with the PVs of the delayed claims' classes."""

    __slots__ = ("bound", "unbound_delay", "unbound_immediate", "candidates")

    def __init__(self):
        self.bound: list[Claim] = []
        self.unbound_delay: list[Claim] = []
        self.unbound_immediate: list[Claim] = []
        # claim key -> the PVs that can match it (for claims without a selected node)
        self.candidates: dict[str, Candidates] = {}


class PodVolumes:
    __slots__ = ("static_bindings", "dynamic_provisions")

    def __init__(self, static_bindings=None, dynamic_provisions=None):
        self.static_bindings: list[tuple[PV, Claim]] = static_bindings or []
        self.dynamic_provisions: list[tuple[Claim, dict | None]] = dynamic_provisions or []


_UNREAD: Any = object()  # (_check_bound_claims: the CSINode not looked up yet)


class _State:
    __slots__ = ("claims", "by_node", "has_static_bindings", "all_bound")

    def __init__(self, claims: PodVolumeClaims | None):
        self.claims = claims
        self.by_node: dict[str, PodVolumes] = {}
        self.has_static_bindings = False
        self.all_bound = False

    def clone(self):
        return self  # shared across preemption's copies, as kube-scheduler's stateData


class Candidates:
    """The PVs that pass FindMatchingVolume's node-independent checks for one claim, indexed so each
    node only looks at the PVs its labels can match: PVs without node affinity, PVs whose affinity is
    one `key In (values)` requirement (by key and value), and the rest (evaluated in full)."""

    __slots__ = ("prebound", "universal", "by_label", "others", "problem")

    def __init__(self, problem: str | None = None):
        self.prebound: list[PV] = []
        self.universal: list[PV] = []
        self.by_label: dict[str, dict[str, list[PV]]] = {}
        self.others: list[PV] = []
        self.problem = problem

    def add(self, pv: PV) -> None:
        terms = pv.affinity.terms
        if terms is None:
            self.universal.append(pv)
            return
        if len(terms) == 1 and terms[0][1] and len(terms[0][0]) == 1 and terms[0][0][0].op == "In":
            r = terms[0][0][0]
            by_value = self.by_label.setdefault(r.key, {})
            for v in r.values:
                by_value.setdefault(v, []).append(pv)
            return
        self.others.append(pv)

    def seal(self) -> None:
        def key(pv):
            return pv.capacity, pv.name

        self.universal.sort(key=key)
        self.others.sort(key=key)
        for by_value in self.by_label.values():
            for lst in by_value.values():
                lst.sort(key=key)

    def find(self, labels, excluded: set[str]) -> PV | None:
        """FindMatchingVolume on one node: a PV pre-bound to the claim decides alone; else the
        smallest matching PV (ties: by name)."""
        for pv in self.prebound:
            if pv.name not in excluded:
                return pv if pv.affinity.matches(labels) else None
        best = None

        def consider(pv):
            nonlocal best
            if best is None or (pv.capacity, pv.name) < (best.capacity, best.name):
                best = pv

        for pv in self.universal:
            if pv.name not in excluded:
                consider(pv)
                break
        for key, by_value in self.by_label.items():
            v = labels.get(key)
            if v is None:
                continue
            for pv in by_value.get(v, ()):
                if pv.name not in excluded:
                    consider(pv)
                    break
        for pv in self.others:
            if pv.name not in excluded and pv.affinity.matches(labels):
                consider(pv)
                break
        return best


def _matching_candidates(claim: Claim, pvs: list[PV]) -> Candidates:
    """FindMatchingVolume's node-independent checks; the node loop adds exclusion and node affinity."""
    try:
        selector = parse_claim_selector(claim)
    except VolumeError as e:
        return Candidates(str(e))
    request = claim.request or 0
    out = Candidates()
    for pv in pvs:
        if pv.claim_ref is not None and not pv.bound_to(claim):
            continue
        if pv.capacity < request:
            continue
        if pv.volume_mode != claim.volume_mode:
            continue
        if pv.vac != claim.vac:
            continue
        if pv.deleting:
            continue
        if pv.bound_to(claim):
            out.prebound.append(pv)
            continue
        if pv.phase != "Available":
            continue
        if selector is not None and not selector.matches(pv.labels):
            continue
        if pv.storage_class != claim.storage_class:
            continue
        if not check_access_modes(claim, pv):
            continue
        out.add(pv)
    out.seal()
    return out


def _quantity(v) -> int | None:
    if v is None:
        return None
    try:
        return quantity.value(quantity.parse(v))
    except FieldError:
        return None


class VolumeBinding(
    CatalogMixin,
    Plugin,
    PreFilterPlugin,
    BatchFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ReservePlugin,
    PreBindPlugin,
    EnqueueExtensions,
    Explainer,
    BindObserver,
):
    name = "VolumeBinding"

    def __init__(self, args, handle):
        super().__init__(args, handle)
        # the binder's assume caches: objects changed by assumed bindings, by key
        self._assumed_pvs: dict[str, PV] = {}
        self._assumed_pvcs: dict[tuple[str, str], Claim] = {}
        self._translated: dict[str, tuple[PV, object]] = {}

    # -- assume-cache reads ----------------------------------------------------------------------
    def _pvc(self, namespace: str, name: str) -> Claim:
        c = self._assumed_pvcs.get((namespace, name))
        return c if c is not None else self._catalog().pvc(namespace, name)

    def _pv(self, name: str) -> PV:
        p = self._assumed_pvs.get(name)
        return p if p is not None else self._catalog().pv(name)

    def _pvs_of_class(self, storage_class: str) -> list[PV]:
        out = []
        for pv in self._catalog().pvs():
            pv = self._assumed_pvs.get(pv.name, pv)
            if pv.storage_class == storage_class:
                out.append(pv)
        return out

    # -- PreFilter -----------------------------------------------------------------------------
    def _check_claims_exist(self, pod) -> tuple[bool, str | None]:
        """podHasPVCs: whether the pod uses claims, and why one of them is unusable."""
        cat = self._catalog()
        has = False
        for v in pod.volumes:
            ref = pod_claim_name(pod, v)
            if ref is None:
                continue
            has = True
            name, ephemeral = ref
            try:
                claim = cat.pvc(pod.namespace, name)
            except NotFoundError as e:
                if ephemeral:
                    return has, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                return has, str(e)
            if claim.phase == "Lost":
                return has, (
                    f'persistentvolumeclaim "{claim.name}" bound to non-existent persistentvolume "{claim.volume_name}"'
                )
            if claim.deleting:
                return has, f'persistentvolumeclaim "{claim.name}" is being deleted'
            if ephemeral:
                try:
                    volume_is_for_pod(pod, claim)
                except VolumeError as e:
                    return has, str(e)
        return has, None

    def _delay_binding(self, claim: Claim) -> bool:
        if not claim.storage_class:
            return False
        try:
            sc = self._catalog().storage_class(claim.storage_class)
        except NotFoundError:
            return False
        return sc.wait_for_first_consumer

    def _pod_volume_claims(self, pod) -> PodVolumeClaims:
        """GetPodVolumeClaims, through the assume cache; raises VolumeError."""
        pvc = PodVolumeClaims()
        for v in pod.volumes:
            ref = pod_claim_name(pod, v)
            if ref is None:
                continue
            name, ephemeral = ref
            try:
                claim = self._pvc(pod.namespace, name)
            except NotFoundError as e:
                raise VolumeError(f'error getting PVC "{pod.namespace}/{name}": {e}') from None
            if ephemeral:
                volume_is_for_pod(pod, claim)
            if claim.fully_bound():
                pvc.bound.append(claim)
            elif self._delay_binding(claim) and not claim.volume_name:
                pvc.unbound_delay.append(claim)
            else:
                pvc.unbound_immediate.append(claim)
        by_class: dict[str, list[PV]] = {}
        for claim in pvc.unbound_delay:
            if claim.storage_class not in by_class:
                by_class[claim.storage_class] = self._pvs_of_class(claim.storage_class)
            if ANN_SELECTED_NODE not in claim.annotations:
                pvc.candidates[claim.key] = _matching_candidates(claim, by_class[claim.storage_class])
        return pvc

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        has, problem = self._check_claims_exist(pod)
        if problem is not None:
            return None, unresolvable(problem)
        if not has:
            state.write(_STATE_KEY, _State(None))
            return None, skip()
        try:
            claims = self._pod_volume_claims(pod)
        except VolumeError as e:
            return None, error(str(e))
        if claims.unbound_immediate:
            return None, unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(_STATE_KEY, _State(claims))
        return None, None

    # -- Filter --------------------------------------------------------------------------------
    def _translated_affinity(self, pv: PV):
        hit = self._translated.get(pv.name)
        if hit is not None and hit[0] is pv:
            return hit[1]
        try:
            _driver, _handle, aff = csi.pv_csi(pv)
        except VolumeError as e:
            raise VolumeError(f"could not translate pv: {e}") from None
        parsed = parse_pv_affinity(aff)
        self._translated[pv.name] = (pv, parsed)
        return parsed

    def _check_bound_claims(self, claims: list[Claim], node) -> tuple[bool, bool]:
        """(node affinity satisfied, every PV found); raises VolumeError."""
        csi_node: Any = _UNREAD  # looked up only for a PV of an in-tree plugin (migration)
        for claim in claims:
            try:
                pv = self._pv(claim.volume_name)
            except NotFoundError:
                return True, False
            affinity = pv.affinity
            plugin = csi.pv_plugin(pv)
            if plugin is not None:
                if csi_node is _UNREAD:
                    csi_node = self._catalog().csi_node(node.name)
                if csi.binding_migration_on(csi_node, plugin):
                    affinity = self._translated_affinity(pv)
            if not affinity.matches(node.labels):
                return False, True
        return True, True

    def _has_enough_capacity(self, provisioner: str, claim: Claim, sc, node) -> tuple[bool, dict | None]:
        if claim.request is None:
            return True, None
        cluster = self.handle.cluster
        driver = self._catalog().csi_driver(provisioner)
        if driver is None or (driver.get("spec") or {}).get("storageCapacity") is not True:
            return True, None
        size = quantity.value(claim.request)
        for cap in cluster.list("CSIStorageCapacity"):
            if cap.get("storageClassName") != sc.name:
                continue
            limit = _quantity(cap.get("maximumVolumeSize"))
            if cap.get("maximumVolumeSize") is None:
                limit = _quantity(cap.get("capacity"))
            if limit is None or limit < size:
                continue
            topo = cap.get("nodeTopology")
            if topo is None:
                continue
            try:
                if not parse_label_selector(topo, "nodeTopology").matches(node.labels):
                    continue
            except FieldError:
                continue
            return True, cap
        return False, None

    def _check_provisions(self, claims: list[Claim], node) -> tuple[bool, bool, list]:
        """checkVolumeProvisions: (provisioning possible, enough storage, provisions); raises VolumeError."""
        cat = self._catalog()
        out = []
        for claim in claims:
            if not claim.storage_class:
                raise VolumeError(f'no class for claim "{claim.key}"')
            try:
                sc = cat.storage_class(claim.storage_class)
            except NotFoundError:
                raise VolumeError(f'failed to find storage class "{claim.storage_class}"') from None
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(sc.allowed_topologies, node.labels):
                return False, True, []
            ok, cap = self._has_enough_capacity(sc.provisioner, claim, sc, node)
            if not ok:
                return True, False, []
            out.append((claim, cap))
        return True, True, out

    def find_pod_volumes(self, claims: PodVolumeClaims, node) -> tuple[PodVolumes, list[str]]:
        """FindPodVolumes: the bindings and provisions on this node, or the reasons it cannot host them."""
        bound_ok = unbound_ok = storage_ok = pvs_found = True
        static: list[tuple[PV, Claim]] = []
        dynamic: list = []

        def done():
            reasons = []
            if not bound_ok:
                reasons.append(ERR_REASON_NODE_CONFLICT)
            if not unbound_ok:
                reasons.append(ERR_REASON_BIND_CONFLICT)
            if not storage_ok:
                reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
            if not pvs_found:
                reasons.append(ERR_REASON_PV_NOT_EXIST)
            return PodVolumes(static, dynamic), reasons

        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound, node)
        if claims.unbound_delay:
            to_match, to_provision = [], []
            for claim in claims.unbound_delay:
                selected = claim.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.name:
                        unbound_ok = False
                        return done()
                    to_provision.append(claim)
                else:
                    to_match.append(claim)
            if to_match:
                # smallest requests first (stable, as Go's sort on these short lists)
                to_match.sort(key=lambda c: c.request or 0)
                chosen: set[str] = set()
                unbound_ok = True
                for claim in to_match:
                    cands = claims.candidates.get(claim.key) or Candidates()
                    if cands.problem is not None:
                        raise VolumeError(cands.problem)
                    pv = cands.find(node.labels, chosen)
                    if pv is None:
                        to_provision.append(claim)
                        unbound_ok = False
                        continue
                    chosen.add(pv.name)
                    static.append((pv, claim))
            if to_provision:
                unbound_ok, storage_ok, dynamic = self._check_provisions(to_provision, node)
        return done()

    def _bound_affinities(self, s: _State) -> list | None:
        """The node affinities of the PVs of a pod whose claims are all bound (no delayed or
        immediate claim), each PV found and of no in-tree plugin (whose affinity would depend on
        each node's CSINode); None for any other pod. A node passes Filter if and only if it
        matches every one of them (_check_bound_claims)."""
        claims = s.claims
        if claims is None or claims.unbound_delay or claims.unbound_immediate:
            return None
        out = []
        for claim in claims.bound:
            try:
                pv = self._pv(claim.volume_name)
            except NotFoundError:
                return None
            if csi.pv_plugin(pv) is not None:
                return None
            out.append(pv.affinity)
        return out

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """filter over many nodes: for a pod whose claims are all bound (_bound_affinities), the
        PVs worked out once and each node decided by its values of the keys the affinities read
        (nodes alike share one status); any other pod node by node."""
        s = state.get(_STATE_KEY)
        affinities = self._bound_affinities(s) if s is not None else None
        if s is None or affinities is None:
            return [self.filter(state, pod, ni) for ni in nodes]
        conflict = Status(UNRESOLVABLE, ERR_REASON_NODE_CONFLICT)
        by_node = s.by_node
        snapshot = getattr(self.handle, "snapshot", None)
        # (numpy where it pays: a large cluster's nodes, once a process has made enough passes)
        np = numpy_for(len(nodes)) if snapshot is not None and nodes is snapshot.node_infos else None
        if np is not None:
            # the snapshot's own nodes: the affinities as arrays over its label columns (filter_array)
            mask = _affinities_array(affinities, snapshot, np)
            for i in np.flatnonzero(mask).tolist():
                by_node[nodes[i].node.name] = PodVolumes([], [])
            return list(map((conflict, None).__getitem__, mask.tolist()))
        keys = list(dict.fromkeys(r.key for a in affinities for reqs, _ in a.terms or () for r in reqs))
        verdicts: dict[tuple, Status | None] = {}
        out: list[Status | None] = []
        for ni in nodes:
            labels = ni.node.labels
            sig = tuple(map(labels.get, keys))  # (a label's value is a string: None is its absence)
            if sig not in verdicts:
                verdicts[sig] = None if all(a.matches(labels) for a in affinities) else conflict
            verdict = verdicts[sig]
            if verdict is None:
                by_node[ni.node.name] = PodVolumes([], [])
            out.append(verdict)
        return out

    def filter_array(self, state: CycleState, pod: Pod, np: Any) -> Any:
        """Filter's pass (True) or fail on every node of the snapshot as a boolean array, for the
        columnar cycle (scheduling/columnar.py): every node for a pod without claims, the PVs'
        affinities as arrays for a pod whose claims are all bound; None for any other pod."""
        s = state.get(_STATE_KEY)
        snapshot = getattr(self.handle, "snapshot", None)
        if s is None or snapshot is None:
            return None
        if s.claims is None:
            return np.ones(len(snapshot.node_infos), dtype=bool)
        affinities = self._bound_affinities(s)
        if affinities is None:
            return None
        return _affinities_array(affinities, snapshot, np)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(_STATE_KEY)
        if s is None:
            return error("not found")
        if s.claims is None:
            return None
        node = node_info.node
        try:
            volumes, reasons = self.find_pod_volumes(s.claims, node)
        except VolumeError as e:
            return error(str(e))
        if reasons:
            return Status(UNRESOLVABLE, *reasons)
        s.by_node[node.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return None

    # -- Score (StorageCapacityScoring is off by default in v1.34) --------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        return skip()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        return 0, None

    # -- Reserve / PreBind / bind ---------------------------------------------------------------------
    def _all_bound(self, pod) -> bool:
        for v in pod.volumes:
            ref = pod_claim_name(pod, v)
            if ref is None:
                continue
            try:
                claim = self._pvc(pod.namespace, ref[0])
            except NotFoundError:
                return False
            if not claim.fully_bound():
                return False
        return True

    def assume_pod_volumes(self, pod, node_name: str, volumes: PodVolumes) -> bool:
        """AssumePodVolumes: PVs pre-bound to their claims, claims to provision annotated with the node.
        Returns whether every claim was already fully bound."""
        if self._all_bound(pod):
            return True
        for pv, claim in volumes.static_bindings:
            new, dirty = pv.bound_copy(claim)
            if dirty:
                self._assumed_pvs[new.name] = new
        for claim, _cap in volumes.dynamic_provisions:
            self._assumed_pvcs[(claim.namespace, claim.name)] = claim.with_annotation(ANN_SELECTED_NODE, node_name)
        return False

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(_STATE_KEY)
        if s is None:
            return error("not found")
        volumes = s.by_node.get(node_name)
        s.all_bound = True if volumes is None else self.assume_pod_volumes(pod, node_name, volumes)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        # the API updates and the wait for the PV controller are outside a what-if run
        return None

    def on_bind(self, pod: Pod, node_name: str) -> None:
        """The pod was bound by a sequence: assume its volume bindings (Reserve's effect)."""
        fw = self.handle.framework
        if fw is not None and fw.name != pod.scheduler_name:
            return  # another profile's plugin has its own assume cache
        ni = self.handle.snapshot.get(node_name)
        if ni is None:
            return
        has, problem = self._check_claims_exist(pod)
        if not has or problem is not None:
            return
        try:
            claims = self._pod_volume_claims(pod)
            if claims.unbound_immediate:
                return
            volumes, reasons = self.find_pod_volumes(claims, ni.node)
        except VolumeError:
            return
        if not reasons:
            self.assume_pod_volumes(pod, node_name, volumes)

    # -- reporting -------------------------------------------------------------------------------------
    def explain(self, state: CycleState, pod: Pod, result: CycleResult) -> dict | None:
        s = state.get(_STATE_KEY)
        if s is None or s.claims is None:
            return None
        c = s.claims
        d: dict = {"boundClaims": [x.key for x in c.bound], "claimsToBind": [x.key for x in c.unbound_delay]}
        vols = s.by_node.get(result.selected_node) if result.selected_node else None
        if vols is not None:
            d["bindOnSelectedNode"] = [f"{cl.key} -> {pv.name}" for pv, cl in vols.static_bindings]
            d["provisionOnSelectedNode"] = [cl.key for cl, _ in vols.dynamic_provisions]
        return {k: v for k, v in d.items() if v}

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("StorageClass", "Add|Update", "a StorageClass is created or its allowedTopologies change"),
            ClusterEvent("PersistentVolumeClaim", "Add|Update", "a claim the pod references is created or changes"),
            ClusterEvent("PersistentVolume", "Add|Update", "a PersistentVolume is created or changes"),
            ClusterEvent("Node", "Add|UpdateNodeLabel", "a node matching the volumes' topology appears"),
            ClusterEvent("CSINode", "Add|Update", "a CSINode's migrated-plugins annotation changes"),
            ClusterEvent("CSIDriver", "Update", "a CSI driver stops tracking storage capacity"),
            ClusterEvent("CSIStorageCapacity", "Add|Update", "storage capacity grows"),
        ]


def _affinities_array(affinities: list, snapshot: Any, np: Any) -> Any:
    """Whether each of the snapshot's nodes satisfies every one of the PVs' node affinities, as a
    boolean array in its node order."""
    mask = np.ones(len(snapshot.node_infos), dtype=bool)
    for a in affinities:
        mask &= affinity_array(a, snapshot, np)
    return mask
