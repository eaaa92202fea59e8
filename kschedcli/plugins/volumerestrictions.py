"""VolumeRestrictions: inline disk conflicts (GCE PD, AWS EBS, iSCSI, Ceph RBD) with the node's pods,
and ReadWriteOncePod claims already used by a scheduled pod."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..config.versions import REFERENCE
from ..framework.interface import (
    ClusterEvent,
    EnqueueExtensions,
    FilterPlugin,
    Plugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
)
from ..framework.status import error, skip, unresolvable, unschedulable
from .volume.util import CatalogMixin, NotFoundError, pod_pvc_names

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
# v1.34.1's reason; each release's is versions.Release.message("VolumeRestrictions.ReadWriteOncePodConflict")
ERR_REASON_RWOP_CONFLICT = REFERENCE.message("VolumeRestrictions.ReadWriteOncePodConflict")
_STATE_KEY = "PreFilterVolumeRestrictions"
_CHECKED = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


class _State:
    """The pod's ReadWriteOncePod claim names and how many scheduled pods reference them."""

    __slots__ = ("rwop_claims", "conflicting_refs")

    def __init__(self, rwop_claims: frozenset[str], conflicting_refs: int):
        self.rwop_claims = rwop_claims
        self.conflicting_refs = conflicting_refs

    def refs_of(self, pod) -> int:
        # as kube-scheduler: by claim name only
        return sum(1 for n in pod_pvc_names(pod) if n in self.rwop_claims)

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicting_refs)


def _needs_check(vol) -> bool:
    return isinstance(vol, dict) and any(isinstance(vol.get(k), dict) for k in _CHECKED)


def _both_read_only(a: dict, b: dict) -> bool:
    return a.get("readOnly") is True and b.get("readOnly") is True


def _volume_conflict(vol: dict, existing_pod) -> bool:
    """isVolumeConflict: the same disk used read-write by the new pod or the existing one."""
    for ev in existing_pod.volumes:
        if not isinstance(ev, dict):
            continue
        a, b = vol.get("gcePersistentDisk"), ev.get("gcePersistentDisk")
        if (
            isinstance(a, dict)
            and isinstance(b, dict)
            and (a.get("pdName") or "") == (b.get("pdName") or "")
            and not _both_read_only(a, b)
        ):
            return True
        a, b = vol.get("awsElasticBlockStore"), ev.get("awsElasticBlockStore")
        if isinstance(a, dict) and isinstance(b, dict) and (a.get("volumeID") or "") == (b.get("volumeID") or ""):
            return True
        a, b = vol.get("iscsi"), ev.get("iscsi")
        if (
            isinstance(a, dict)
            and isinstance(b, dict)
            and (a.get("iqn") or "") == (b.get("iqn") or "")
            and not _both_read_only(a, b)
        ):
            return True
        a, b = vol.get("rbd"), ev.get("rbd")
        if isinstance(a, dict) and isinstance(b, dict):
            mons = set(a.get("monitors") or [])
            if (
                mons & set(b.get("monitors") or [])
                and (a.get("pool") or "rbd") == (b.get("pool") or "rbd")
                and (a.get("image") or "") == (b.get("image") or "")
                and not _both_read_only(a, b)
            ):
                return True
    return False


def used_pvc_keys(snapshot) -> set[str]:
    """Snapshot.IsPVCUsedByPods' set: every namespace/claim some scheduled pod references,
    rebuilt only when the snapshot changed."""
    cache = getattr(snapshot, "_ksched_used_pvcs", None)
    gen = snapshot.generation
    if cache is not None and cache[0] == gen:
        return cache[1]
    keys: set[str] = set()
    for ni in snapshot.node_infos:
        if ni.pvc_ref_counts:
            keys.update(ni.pvc_ref_counts)
    with contextlib.suppress(AttributeError):
        snapshot._ksched_used_pvcs = (gen, keys)
    return keys


class VolumeRestrictions(CatalogMixin, Plugin, PreFilterPlugin, PreFilterExtensions, FilterPlugin, EnqueueExtensions):
    name = "VolumeRestrictions"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        needs_check = any(_needs_check(v) for v in pod.volumes)
        cat = self._catalog()
        rwop = set()
        for name in pod_pvc_names(pod):
            try:
                claim = cat.pvc(pod.namespace, name)
            except NotFoundError as e:
                return None, unresolvable(str(e))
            if "ReadWriteOncePod" in claim.access_modes:
                rwop.add(claim.name)
        conflicts = 0
        if rwop:
            used = used_pvc_keys(self.handle.snapshot)
            conflicts = sum(1 for n in rwop if f"{pod.namespace}/{n}" in used)
        if not needs_check and conflicts == 0:
            return None, skip()
        state.write(_STATE_KEY, _State(frozenset(rwop), conflicts))
        return None, None

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(_STATE_KEY)
        if s is None:
            return error(f'cannot read "{_STATE_KEY}" from cycleState')
        s.conflicting_refs += s.refs_of(pod_to_add)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(_STATE_KEY)
        if s is None:
            return error(f'cannot read "{_STATE_KEY}" from cycleState')
        s.conflicting_refs -= s.refs_of(pod_to_remove)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        for v in pod.volumes:
            if not _needs_check(v):
                continue
            for ep in node_info.pods:
                if _volume_conflict(v, ep):
                    return unschedulable(ERR_REASON_DISK_CONFLICT)
        s = state.get(_STATE_KEY)
        if s is None:
            return error(f'cannot read "{_STATE_KEY}" from cycleState')
        if s.conflicting_refs > 0:
            return unschedulable(self.handle.release.message("VolumeRestrictions.ReadWriteOncePodConflict"))
        return None

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("Pod", "Delete", "a pod using the same disk or ReadWriteOncePod claim is deleted"),
            ClusterEvent("Node", "Add", "a new node appears"),
            ClusterEvent("PersistentVolumeClaim", "Add", "a claim the pod references is created"),
        ]
