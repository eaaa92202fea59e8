"""VolumeZone: the zone/region labels of the pod's bound PersistentVolumes must match the node's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..framework.interface import (
    ClusterEvent,
    EnqueueExtensions,
    FilterPlugin,
    Plugin,
    PreFilterPlugin,
    PreFilterResult,
)
from ..framework.result import Explainer
from ..framework.status import UNRESOLVABLE, Status, skip, unresolvable
from .volume.util import (
    LABEL_BETA_REGION,
    LABEL_BETA_ZONE,
    LABEL_REGION,
    LABEL_ZONE,
    CatalogMixin,
    NotFoundError,
    pod_pvc_names,
)

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.result import CycleResult


ERR_REASON_CONFLICT = "node(s) had no available volume zone"
_STATE_KEY = "PreFilterVolumeZone"
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_TO_GA = {LABEL_BETA_ZONE: LABEL_ZONE, LABEL_BETA_REGION: LABEL_REGION}


def label_zones(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: `__`-separated zones; None when one of them is empty."""
    zones = set()
    for z in value.split("__"):
        z = z.strip()
        if not z:
            return None
        zones.add(z)
    return frozenset(zones)


def pv_topologies(pv) -> list[tuple[str, str, frozenset[str]]]:
    """(pv name, label key, allowed values) for each topology label the PV carries."""
    out = []
    for key in TOPOLOGY_LABELS:
        if key in pv.labels:
            zones = label_zones(pv.labels[key])
            if zones is not None:
                out.append((pv.name, key, zones))
    return out


class VolumeZone(CatalogMixin, Plugin, PreFilterPlugin, FilterPlugin, EnqueueExtensions, Explainer):
    name = "VolumeZone"

    def _topologies(self, pod) -> tuple[list | None, Status | None]:
        cat = self._catalog()
        out: list = []
        for name in pod_pvc_names(pod):
            if not name:
                return None, unresolvable("PersistentVolumeClaim had no name")
            try:
                claim = cat.pvc(pod.namespace, name)
            except NotFoundError as e:
                return None, unresolvable(str(e))
            if not claim.volume_name:
                if not claim.storage_class:
                    return None, unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                try:
                    sc = cat.storage_class(claim.storage_class)
                except NotFoundError as e:
                    return None, unresolvable(str(e))
                if sc.wait_for_first_consumer:
                    continue  # not bound yet: VolumeBinding decides
                return None, unresolvable("PersistentVolume had no name")
            try:
                pv = cat.pv(claim.volume_name)
            except NotFoundError as e:
                return None, unresolvable(str(e))
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        topologies, st = self._topologies(pod)
        if st is not None:
            return None, st
        if not topologies:
            return None, skip()
        state.write(_STATE_KEY, topologies)
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        topologies = state.get(_STATE_KEY)
        if topologies is None:
            topologies, st = self._topologies(pod)
            if st is not None:
                return st
        labels = node_info.node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None  # a node without topology labels (single-zone cluster) fits
        for _pv, key, values in topologies:
            v = labels.get(key)
            if v is None:
                v = labels.get(_TO_GA.get(key, key))
            if v is None or v not in values:
                return Status(UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None

    def explain(self, state: CycleState, pod: Pod, result: CycleResult) -> dict | None:
        topologies = state.get(_STATE_KEY)
        if not topologies:
            return None
        return {"volumeTopologies": [f"{pv}: {key} in ({', '.join(sorted(values))})" for pv, key, values in topologies]}

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("StorageClass", "Add", "a WaitForFirstConsumer StorageClass is created"),
            ClusterEvent("Node", "Add|UpdateNodeLabel", "a node with the volume's zone labels appears"),
            ClusterEvent("PersistentVolumeClaim", "Add|Update", "a claim the pod references is created or bound"),
            ClusterEvent("PersistentVolume", "Add|Update", "a PV's topology labels change"),
        ]
