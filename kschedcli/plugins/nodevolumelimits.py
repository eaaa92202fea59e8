"""NodeVolumeLimits (CSILimits): the CSI volumes a node may attach per driver, from CSINode
`allocatable.count`, counting the node's pods' volumes, VolumeAttachments and the new pod's volumes
(migrated in-tree volumes count under their CSI driver)."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ..framework.interface import (
    BatchFilterPlugin,
    ClusterEvent,
    EnqueueExtensions,
    Plugin,
    PreFilterPlugin,
    PreFilterResult,
)
from ..framework.status import Status, error, skip, unresolvable, unschedulable
from .volume import csi
from .volume.util import CatalogMixin, NotFoundError, VolumeError, migrated_plugins, pod_claim_name, volume_is_for_pod

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
_STATE_KEY = "PreFilterNodeVolumeLimits"
# (the incoming pod, its attachable volumes per migration case): NodeVolumeLimits._new_volumes
_NEW_VOLUMES_KEY = "NodeVolumeLimitsNewVolumes"
# kube-scheduler prefixes the handle of a not-yet-provisioned claim with a random string; any fixed
# string that cannot collide with a real volume handle behaves the same
_UNBOUND_PREFIX = "ksched-unbound-claim"


class _NotFoundLookup(Exception):
    """The new pod's claim is missing: the pod cannot be scheduled until it is created."""


def _int(v) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    return None


def volume_limits(csi_node: dict | None) -> dict[str, int]:
    """getVolumeLimits: driver -> allocatable.count, for drivers that report one."""
    out: dict[str, int] = {}
    if csi_node is None:
        return out
    for d in (csi_node.get("spec") or {}).get("drivers") or []:
        if not isinstance(d, dict):
            continue
        alloc = d.get("allocatable")
        if isinstance(alloc, dict):
            n = _int(alloc.get("count"))
            if n is not None:
                out[str(d.get("name") or "")] = n
    return out


_MAY_ATTACH = "ksched.nodevolumelimits.may_attach"
_ON_NODE = "ksched.nodevolumelimits.on_node"


def _may_count(v) -> bool:
    """Whether filterAttachableVolumes can count the volume on some node: a claim (a PVC or a
    generic ephemeral volume) or an in-tree volume that migrates to CSI; any other kind (config
    maps, secrets, projected, emptyDir, hostPath, ...) it passes over on every node, whatever the
    catalog and the CSINode hold."""
    if not isinstance(v, dict):
        return False
    return (
        isinstance(v.get("persistentVolumeClaim"), dict)
        or v.get("ephemeral") is not None
        or csi.inline_plugin(v) is not None
    )


def may_attach(pod: Pod) -> list:
    """The pod's volumes that may count, in their order (most pods: none). A function of the
    volumes list alone, kept in the pod's `_cache` by the list's identity (pods sharing a
    `_cache`, the replacements of one template, each hold their own list)."""
    volumes = pod._cache.get(_MAY_ATTACH)
    if volumes is None:
        volumes = pod._cache[_MAY_ATTACH] = {}
    hit = volumes.get(id(pod.volumes))
    if hit is not None and hit[0] is pod.volumes:
        return hit[1]
    found = [v for v in pod.volumes if _may_count(v)]
    volumes[id(pod.volumes)] = (pod.volumes, found)  # the list kept alive: its id stays its own
    return found


class NodeVolumeLimits(CatalogMixin, Plugin, PreFilterPlugin, BatchFilterPlugin, EnqueueExtensions):
    name = "NodeVolumeLimits"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        for v in pod.volumes:
            if not isinstance(v, dict):
                continue
            if (
                v.get("persistentVolumeClaim") is not None
                or v.get("ephemeral") is not None
                or csi.inline_plugin(v) is not None
            ):
                return None, None
        return None, skip()

    # -- counting --------------------------------------------------------------------------
    def _driver_info_from_class(self, csi_node, claim) -> tuple[str, str]:
        if not claim.storage_class:
            return "", ""
        try:
            sc = self._catalog().storage_class(claim.storage_class)
        except NotFoundError:
            return "", ""
        handle = f"{_UNBOUND_PREFIX}-{claim.namespace}/{claim.name}"
        prov = sc.provisioner
        if csi.plugin_by_name(prov):
            if not csi.limits_migration_on(csi_node, prov):
                return "", ""
            return csi.CSI_DRIVER[prov], handle
        return prov, handle

    def _driver_info(self, csi_node, claim) -> tuple[str, str]:
        """getCSIDriverInfo: the claim's CSI driver and volume handle, ("", "") when not a CSI volume."""
        if not claim.volume_name:
            return self._driver_info_from_class(csi_node, claim)
        try:
            pv = self._catalog().pv(claim.volume_name)
        except NotFoundError:
            return self._driver_info_from_class(csi_node, claim)
        if pv.csi is not None:
            return pv.csi
        plugin = csi.pv_plugin(pv)
        if plugin is None or not csi.limits_migration_on(csi_node, plugin):
            return "", ""
        try:
            driver, handle, _ = csi.pv_csi(pv)
        except VolumeError:
            return "", ""
        return driver, handle

    def _attachable(self, pod, csi_node, new_pod: bool, out: dict[str, str], volumes=None) -> None:
        """filterAttachableVolumes: volume unique name -> driver, into `out`. `volumes`: the pod's
        volumes to look at, in their order, when known to hold every one that may count
        (may_attach); by default all of them."""
        cat = self._catalog()
        for v in pod.volumes if volumes is None else volumes:
            if not isinstance(v, dict):
                continue
            ref = pod_claim_name(pod, v)
            if ref is None:
                plugin = csi.inline_plugin(v)
                if plugin is None or not csi.limits_migration_on(csi_node, plugin):
                    continue
                try:
                    driver, handle = csi.inline_csi(v, pod.namespace)
                except VolumeError as e:
                    raise VolumeError(f"converting volume({v.get('name') or ''}) from inline to csi: {e}") from None
                out[f"{driver}/{handle}"] = driver
                continue
            name, ephemeral = ref
            if not name:
                raise VolumeError("PersistentVolumeClaim had no name")
            try:
                claim = cat.pvc(pod.namespace, name)
            except NotFoundError as e:
                if new_pod:
                    raise _NotFoundLookup(f"looking up PVC {pod.namespace}/{name}: {e}") from None
                continue
            if ephemeral:
                volume_is_for_pod(pod, claim)
            driver, handle = self._driver_info(csi_node, claim)
            if not driver or not handle:
                continue
            out[f"{driver}/{handle}"] = driver

    def _attachments(self, state, node_name: str) -> dict[str, str]:
        """The node's VolumeAttachments: unique name -> attacher (indexed by node once per cycle)."""
        return self._attachment_table(state).get(node_name, {})

    def _attachment_index(self) -> dict[str, dict[str, str]]:
        index: dict[str, dict[str, str]] = {}
        cat = self._catalog()
        for va in self.handle.cluster.list("VolumeAttachment"):
            spec = va.get("spec") or {}
            attacher = spec.get("attacher") or ""
            pv_name = (spec.get("source") or {}).get("persistentVolumeName")
            if not attacher or pv_name is None:
                continue
            try:
                pv = cat.pv(pv_name)
            except NotFoundError:
                continue
            if pv.csi is None:
                continue
            index.setdefault(str(spec.get("nodeName") or ""), {})[f"{attacher}/{pv.csi[1]}"] = attacher
        return index

    def _on_node(self, cat, csi_node, node_info: NodeInfo):
        """What filter reads of the node besides the new pod: (catalog, CSINode, the drivers'
        limits, the unique names of its pods' attachable volumes -> driver) or (catalog, CSINode,
        the VolumeError counting them raised). Kept on the node until its pods change (NodeInfo.derive),
        for the catalog and CSINode it was worked out from; the catalog held weakly (a sweep's
        scenarios each have their own, and share the loaded snapshot's nodes)."""
        derived = node_info.derived
        entry = derived.get(_ON_NODE) if derived else None
        if entry is not None and entry[0]() is cat and entry[1] is csi_node:
            return entry

        def build(ni: NodeInfo):
            limits = self._csi_node_facts(csi_node)[0]
            attached: dict[str, str] = {}
            if limits:
                try:
                    for ep in ni.pods:
                        if ep.volumes and (volumes := may_attach(ep)):
                            self._attachable(ep, csi_node, False, attached, volumes)
                except VolumeError as e:
                    return (weakref.ref(cat), csi_node, e)
            per_driver: dict[str, int] = {}
            for driver in attached.values():
                per_driver[driver] = per_driver.get(driver, 0) + 1
            return (weakref.ref(cat), csi_node, limits, attached, per_driver)

        if entry is not None and derived is not None:
            derived.pop(_ON_NODE, None)  # another catalog's or CSINode's
        return node_info.derive(_ON_NODE, build)

    def _csi_node_facts(self, csi_node) -> tuple[dict[str, int], tuple[bool, bool]]:
        """What filter reads of a CSINode: its drivers' limits (volume_limits), and the case of
        the incoming pod's volumes on its node (_new_volumes). Worked out once per CSINode
        object (cluster objects are never changed in place), the object held so that its id
        stays its own."""
        facts = self._facts_table()
        found = facts.get(id(csi_node))
        if found is None or found[0] is not csi_node:
            case = (csi_node is None, csi_node is not None and csi.PORTWORX in migrated_plugins(csi_node))
            found = facts[id(csi_node)] = (csi_node, volume_limits(csi_node), case)
        return found[1], found[2]

    def _facts_table(self) -> dict[int, tuple]:
        """id(CSINode) -> (the CSINode, its limits, its case): _csi_node_facts' table."""
        facts = self.__dict__.get("_csi_node_facts_of")
        if facts is None:
            facts = self.__dict__["_csi_node_facts_of"] = {}
        return facts

    def _new_volumes(self, state: CycleState, pod: Pod, csi_node) -> dict[str, str] | Status:
        """The incoming pod's attachable volumes (unique name -> driver) on a node with this
        CSINode, or the status their lookup ends in. They depend on the node only through
        limits_migration_on: whether it has a CSINode, and whether that lists Portworx as
        migrated. Worked out once per cycle for each of those cases (the pod, the catalog
        and the cycle's state being the same for every node); each CSINode's case is kept (_csi_node_facts)."""
        memo = state.get(_NEW_VOLUMES_KEY)
        if memo is None or memo[0] is not pod:
            memo = (pod, {})
            state.write(_NEW_VOLUMES_KEY, memo)
        case = self._csi_node_facts(csi_node)[1]
        known = memo[1].get(case)
        if known is None:
            new_volumes: dict[str, str] = {}
            try:
                self._attachable(pod, csi_node, True, new_volumes, may_attach(pod))
                known = new_volumes
            except _NotFoundLookup as e:
                known = unresolvable(str(e))
            except VolumeError as e:
                known = error(str(e))
            memo[1][case] = known
        return known

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        node = node_info.node
        cat = self._catalog()
        csi_node = cat.csi_node(node.name)
        known = self._new_volumes(state, pod, csi_node)
        if isinstance(known, Status):
            return known
        if not known:
            return None
        new_volumes = known
        if not node_info.other_volumes:
            # every volume of the node's pods is a named claim or one that never attaches: none
            # fails to be counted, and the claims bound what is attached (most nodes pass here
            # without their pods being looked at)
            limits = self._csi_node_facts(csi_node)[0]
            if not limits:
                return None
            most = len(node_info.pvc_ref_counts) + len(self._attachments(state, node.name)) + len(new_volumes)
            if all(most <= limits.get(driver, most) for driver in new_volumes.values()):
                return None
        on_node = self._on_node(cat, csi_node, node_info)
        if len(on_node) == 3:
            return error(str(on_node[2]))
        limits, attached, attached_count = on_node[2], on_node[3], on_node[4]
        if not limits:
            return None
        elsewhere = self._attachments(state, node.name)
        if elsewhere:
            attached_count = dict(attached_count)
            for unique, driver in elsewhere.items():
                if unique not in attached:
                    attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for unique, driver in new_volumes.items():
            if unique not in attached:
                new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return unschedulable(ERR_REASON_MAX_VOLUME_COUNT)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]:
        """filter on each of `nodes`, in their order: what filter works out per CSINode case
        (the pod's new volumes) and per CSINode (its limits) looked up once per node, each node's
        CSINode read from one table, and a node whose claims bound what it attaches decided in
        the loop (filter's first test); any other node goes through filter itself."""
        if not pod.volumes:
            return [None] * len(nodes)
        csi_nodes = self._catalog().csi_nodes()
        facts_of = self._facts_table()
        per_case: dict[tuple[bool, bool], tuple] = {}  # case -> (new volumes or a status, how many, their drivers)
        attachments = None
        one = self.filter
        out: list[Status | None] = []
        append = out.append
        for ni in nodes:
            name = ni.node.name
            csi_node = csi_nodes.get(("", name))
            found = facts_of.get(id(csi_node))  # (_csi_node_facts' lookup, written out for the loop)
            if found is None or found[0] is not csi_node:
                limits, case = self._csi_node_facts(csi_node)
            else:
                _, limits, case = found
            known = per_case.get(case)
            if known is None:
                new = self._new_volumes(state, pod, csi_node)
                if isinstance(new, Status):
                    known = per_case[case] = (new, 0, ())
                else:
                    known = per_case[case] = (new, len(new), tuple(set(new.values())))
            new, count, drivers = known
            if not drivers:  # a status, or no attachable volume
                append(new if isinstance(new, Status) else None)
                continue
            if not ni.other_volumes:
                if not limits:
                    append(None)
                    continue
                if attachments is None:
                    attachments = self._attachment_table(state)
                most = len(ni.pvc_ref_counts) + count
                if attachments:
                    most += len(attachments.get(name, ()))
                if len(drivers) == 1:
                    limit = limits.get(drivers[0])
                    if limit is None or most <= limit:
                        append(None)
                        continue
                elif all(most <= limits.get(driver, most) for driver in drivers):
                    append(None)
                    continue
            append(one(state, pod, ni))
        return out

    def _attachment_table(self, state) -> dict[str, dict[str, str]]:
        """The cycle's VolumeAttachments by node (_attachments' index)."""
        index = state.get(_STATE_KEY)
        if index is None:
            index = self._attachment_index()
            state.write(_STATE_KEY, index)
        return index

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("CSINode", "Add", "a CSINode appears"),
            ClusterEvent("CSINode", "Update", "a driver's allocatable volume count grows"),
            ClusterEvent("Pod", "Delete", "a pod with attachable volumes is deleted"),
            ClusterEvent("PersistentVolumeClaim", "Add", "a claim the pod references is created"),
            ClusterEvent("VolumeAttachment", "Delete", "a volume attachment on the node is removed"),
        ]
