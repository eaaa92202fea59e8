"""Shared helpers of the volume plugins: typed views of PVCs, PVs and StorageClasses (with the
API server's defaulting and the DefaultStorageClass admission applied), PV node affinity, topology
selector terms, and the lookups every volume plugin does through its listers.

The views are built once per source object and cached per cluster (keyed by the object's identity),
so the per-node loops of the filters stay dictionary lookups.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...api import quantity
from ...api.labels import LabelSelector, Requirement, parse_label_selector, valid_label_key, valid_label_value
from ...api.rawfields import as_dict, as_list
from ...errors import FieldError

if TYPE_CHECKING:
    from ...framework.runtime import Handle

# -- well-known names -----------------------------------------------------------------------
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"

# API resource names as apierrors.NewNotFound prints them
RESOURCE_PVC = "persistentvolumeclaim"
RESOURCE_PV = "persistentvolume"
RESOURCE_SC = "storageclass.storage.k8s.io"


class NotFoundError(Exception):
    """An informer lister's NotFound error: `<resource> "<name>" not found`."""

    def __init__(self, resource: str, name: str):
        self.resource = resource
        self.name = name
        super().__init__(f'{resource} "{name}" not found')


class VolumeError(Exception):
    """Any other error a volume plugin turns into an Error status."""


# -- small helpers on raw dicts ---------------------------------------------------------------


_d = as_dict
_l = as_list


def _str(v) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def _storage(rl) -> int | None:
    """resources[storage] in nanos, None when absent or unparseable."""
    q = _d(rl).get("storage")
    if q is None:
        return None
    try:
        return quantity.parse(q)
    except FieldError:
        return None


def pod_claim_name(pod, vol) -> tuple[str, bool] | None:
    """(claim name, is_ephemeral) for PVC volumes and generic ephemeral volumes (whose claim is named
    `<pod>-<volume>`, ephemeral.VolumeClaimName); None for every other volume type."""
    if not isinstance(vol, dict):
        return None
    pvc = vol.get("persistentVolumeClaim")
    if isinstance(pvc, dict):
        return _str(pvc.get("claimName")), False
    if vol.get("ephemeral") is not None:
        return f"{pod.name}-{_str(vol.get('name'))}", True
    return None


def pod_pvc_names(pod) -> list[str]:
    """Names of the pod's `persistentVolumeClaim` volumes (not ephemeral ones), in order."""
    out = []
    for v in pod.volumes:
        if isinstance(v, dict) and isinstance(v.get("persistentVolumeClaim"), dict):
            out.append(_str(v["persistentVolumeClaim"].get("claimName")))
    return out


# -- views ----------------------------------------------------------------------------------------


class Claim:
    """A PersistentVolumeClaim as the scheduler reads it."""

    __slots__ = (
        "raw",
        "namespace",
        "name",
        "uid",
        "annotations",
        "storage_class",
        "volume_name",
        "phase",
        "deleting",
        "access_modes",
        "request",
        "volume_mode",
        "vac",
        "selector",
        "owner_refs",
    )

    def __init__(self, raw: dict, default_class: str | None):
        self.raw = raw
        meta = _d(raw.get("metadata"))
        spec = _d(raw.get("spec"))
        status = _d(raw.get("status"))
        self.namespace = _str(meta.get("namespace")) or "default"
        self.name = _str(meta.get("name"))
        self.uid = _str(meta.get("uid"))
        self.annotations = {str(k): _str(v) for k, v in _d(meta.get("annotations")).items()}
        self.owner_refs = _l(meta.get("ownerReferences"))
        self.deleting = meta.get("deletionTimestamp") is not None
        # GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName;
        # a claim with neither got the default class from the DefaultStorageClass admission plugin.
        if ANN_BETA_STORAGE_CLASS in self.annotations:
            self.storage_class = self.annotations[ANN_BETA_STORAGE_CLASS]
        elif spec.get("storageClassName") is not None:
            self.storage_class = _str(spec.get("storageClassName"))
        else:
            self.storage_class = default_class or ""
        self.volume_name = _str(spec.get("volumeName"))
        self.phase = _str(status.get("phase")) or "Pending"
        self.access_modes = [_str(m) for m in _l(spec.get("accessModes"))]
        self.request = _storage(_d(spec.get("resources")).get("requests"))
        self.volume_mode = _str(spec.get("volumeMode")) or "Filesystem"
        self.vac = _str(spec.get("volumeAttributesClassName"))
        self.selector = spec.get("selector")

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def fully_bound(self) -> bool:
        """isPVCFullyBound: a volume name and the bind-completed annotation."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations

    def controlled_by(self, pod) -> bool:
        for o in self.owner_refs:
            if isinstance(o, dict) and o.get("controller") and _str(o.get("uid")) == pod.uid:
                return True
        return False

    def with_annotation(self, key: str, value: str) -> Claim:
        """A copy with one more annotation (what AssumePodVolumes writes for dynamic provisioning)."""
        meta = dict(_d(self.raw.get("metadata")))
        meta["annotations"] = {**_d(meta.get("annotations")), key: value}
        c = Claim.__new__(Claim)
        for s in Claim.__slots__:
            setattr(c, s, getattr(self, s))
        c.raw = {**self.raw, "metadata": meta}
        c.annotations = {**self.annotations, key: value}
        return c


def volume_is_for_pod(pod, claim: Claim) -> None:
    """ephemeral.VolumeIsForPod."""
    if claim.namespace != pod.namespace or not claim.controlled_by(pod):
        raise VolumeError(
            f"PVC {claim.namespace}/{claim.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
        )


class PVAffinity:
    """VolumeNodeAffinity.Required as CheckNodeAffinity evaluates it: against the node's labels only
    (the node it builds has no name, so matchFields never reject), empty terms skipped, a term with
    a parse error never matching."""

    __slots__ = ("terms",)

    def __init__(self, terms: list[tuple[tuple[Requirement, ...], bool]] | None):
        self.terms = terms  # None: no required affinity (matches everything)

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.terms is None:
            return True
        for reqs, ok in self.terms:
            if ok and all(r.matches(labels) for r in reqs):
                return True
        return False


def affinity_array(affinity: PVAffinity, snapshot: Any, np: Any) -> Any:
    """affinity.matches(labels) of every node of the snapshot, as a boolean array of `np` in node
    order: each requirement decided once per distinct value of its key (Snapshot.label_codes; a
    requirement reads its own key only), terms ANDed within and ORed across."""
    n = len(snapshot.node_infos)
    if affinity.terms is None:
        return np.ones(n, dtype=bool)
    out = np.zeros(n, dtype=bool)
    for reqs, ok in affinity.terms:
        if not ok:
            continue
        term = np.ones(n, dtype=bool)
        for r in reqs:
            codes, distinct = snapshot.label_codes(r.key, np)
            # (code -1, a node without the key: the table's last entry)
            table = np.array([r.matches({r.key: v}) for v in distinct] + [r.matches({})], dtype=bool)
            term &= table[codes]
        out |= term
    return out


def _parse_label_requirement(e) -> Requirement:
    if not isinstance(e, dict):
        raise ValueError("not an object")
    key, op = e.get("key"), e.get("operator")
    values = [_str(v) for v in _l(e.get("values"))]
    if not valid_label_key(key):
        raise ValueError("invalid key")
    if op in ("In", "NotIn"):
        if not values or not all(valid_label_value(v) for v in values):
            raise ValueError("bad values")
        return Requirement(key, op, frozenset(values))
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise ValueError("values with exists")
        return Requirement(key, op, frozenset())
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise ValueError("one value")
        try:
            return Requirement(key, op, (int(values[0]),))
        except ValueError:
            raise ValueError("not an integer") from None
    raise ValueError("bad operator")


def parse_pv_affinity(node_affinity) -> PVAffinity:
    na = node_affinity if isinstance(node_affinity, dict) else None
    if na is None or not isinstance(na.get("required"), dict):
        return PVAffinity(None)
    terms = []
    for t in _l(na["required"].get("nodeSelectorTerms")):
        t = _d(t)
        exprs, fields = _l(t.get("matchExpressions")), _l(t.get("matchFields"))
        if not exprs and not fields:
            continue  # an empty term selects nothing
        ok = True
        reqs: list[Requirement] = []
        try:
            for e in exprs:
                reqs.append(_parse_label_requirement(e))
            for f in fields:
                if not isinstance(f, dict) or f.get("operator") not in ("In", "NotIn") or len(_l(f.get("values"))) != 1:
                    raise ValueError("bad field requirement")
        except ValueError:
            ok = False
        terms.append((tuple(reqs), ok))
    return PVAffinity(terms)


class PV:
    """A PersistentVolume as the scheduler reads it."""

    __slots__ = (
        "raw",
        "name",
        "labels",
        "annotations",
        "storage_class",
        "claim_ref",
        "capacity",
        "volume_mode",
        "vac",
        "deleting",
        "phase",
        "access_modes",
        "affinity",
        "csi",
        "spec",
    )

    def __init__(self, raw: dict):
        self.raw = raw
        meta = _d(raw.get("metadata"))
        spec = _d(raw.get("spec"))
        self.spec = spec
        status = _d(raw.get("status"))
        self.name = _str(meta.get("name"))
        self.labels = {str(k): _str(v) for k, v in _d(meta.get("labels")).items()}
        self.annotations = {str(k): _str(v) for k, v in _d(meta.get("annotations")).items()}
        self.storage_class = (
            self.annotations[ANN_BETA_STORAGE_CLASS]
            if ANN_BETA_STORAGE_CLASS in self.annotations
            else _str(spec.get("storageClassName"))
        )
        cr = spec.get("claimRef")
        self.claim_ref = cr if isinstance(cr, dict) else None
        cap = _storage(spec.get("capacity"))
        self.capacity = cap if cap is not None else 0
        self.volume_mode = _str(spec.get("volumeMode")) or "Filesystem"
        self.vac = _str(spec.get("volumeAttributesClassName"))
        self.deleting = meta.get("deletionTimestamp") is not None
        self.phase = _str(status.get("phase"))
        self.access_modes = [_str(m) for m in _l(spec.get("accessModes"))]
        self.affinity = parse_pv_affinity(spec.get("nodeAffinity"))
        csi = spec.get("csi")
        self.csi = (_str(csi.get("driver")), _str(csi.get("volumeHandle"))) if isinstance(csi, dict) else None

    def bound_to(self, claim: Claim) -> bool:
        """IsVolumeBoundToClaim: claimRef names the claim (and its uid, when the ref has one)."""
        cr = self.claim_ref
        if cr is None:
            return False
        if claim.name != _str(cr.get("name")) or claim.namespace != _str(cr.get("namespace")):
            return False
        uid = _str(cr.get("uid"))
        return not uid or uid == claim.uid

    def bound_copy(self, claim: Claim) -> tuple[PV, bool]:
        """GetBindVolumeToClaim: the PV with its claimRef set to the claim; whether anything changed."""
        dirty = False
        was_bound = self.bound_to(claim)
        meta = dict(_d(self.raw.get("metadata")))
        spec = dict(self.spec)
        cr = self.claim_ref
        if (
            cr is None
            or _str(cr.get("name")) != claim.name
            or _str(cr.get("namespace")) != claim.namespace
            or _str(cr.get("uid")) != claim.uid
        ):
            spec["claimRef"] = {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "namespace": claim.namespace,
                "name": claim.name,
                "uid": claim.uid,
                "resourceVersion": _str(_d(claim.raw.get("metadata")).get("resourceVersion")),
            }
            dirty = True
        ann = dict(_d(meta.get("annotations")))
        if not was_bound and ANN_BOUND_BY_CONTROLLER not in ann:
            ann[ANN_BOUND_BY_CONTROLLER] = "yes"
            meta["annotations"] = ann
            dirty = True
        return PV({**self.raw, "metadata": meta, "spec": spec}), dirty


class StorageClass:
    __slots__ = ("raw", "name", "provisioner", "binding_mode", "allowed_topologies")

    def __init__(self, raw: dict):
        self.raw = raw
        meta = _d(raw.get("metadata"))
        self.name = _str(meta.get("name"))
        self.provisioner = _str(raw.get("provisioner"))
        # API defaulting: volumeBindingMode Immediate
        self.binding_mode = _str(raw.get("volumeBindingMode")) or "Immediate"
        self.allowed_topologies = _l(raw.get("allowedTopologies"))

    @property
    def wait_for_first_consumer(self) -> bool:
        return self.binding_mode == "WaitForFirstConsumer"


def match_topology_selector_terms(terms: list, labels: Mapping[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match all; an empty term matches nothing."""
    if not terms:
        return True
    for t in terms:
        exprs = _l(_d(t).get("matchLabelExpressions"))
        if not exprs:
            continue
        ok = True
        for e in exprs:
            e = _d(e)
            key = e.get("key")
            values = [_str(v) for v in _l(e.get("values"))]
            if not valid_label_key(key) or not values or not all(valid_label_value(v) for v in values):
                ok = False  # an invalid requirement makes the term unusable
                break
            if labels.get(key) not in values:
                ok = False
                break
        if ok:
            return True
    return False


def parse_claim_selector(claim: Claim) -> LabelSelector | None:
    if claim.selector is None:
        return None
    try:
        return parse_label_selector(claim.selector, "spec.selector")
    except FieldError as e:
        raise VolumeError(f"error creating internal label selector for claim: {claim.key}: {e.message}") from None


def check_access_modes(claim: Claim, pv: PV) -> bool:
    have = set(pv.access_modes)
    return all(m in have for m in claim.access_modes)


# -- the per-cluster catalog ---------------------------------------------------------------------


class Catalog:
    """Typed, cached views of the cluster's storage objects (what the plugins' listers return)."""

    def __init__(self, cluster):
        # held weakly: the catalog is the value of a WeakKeyDictionary keyed by its cluster, which a
        # strong reference would keep alive for good (a sweep's scenarios each copy the cluster)
        self._cluster = weakref.ref(cluster)
        self._views: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    @property
    def cluster(self):
        cluster = self._cluster()
        if cluster is None:
            raise ReferenceError("the cluster this catalog views is gone")
        return cluster

    def _view(self, kind: str, ns: str, name: str, build):
        raw = self.cluster.get(kind, ns, name)
        if raw is None:
            return None
        return self._view_of(kind, ns, name, raw, build)

    def _view_of(self, kind: str, ns: str, name: str, raw: dict, build):
        key = (kind, ns, name)
        hit = self._views.get(key)
        if hit is not None and hit[0] is raw:
            return hit[1]
        v = build(raw)
        self._views[key] = (raw, v)
        return v

    def default_class(self) -> str | None:
        return self.cluster.default_storage_class()

    def pvc(self, namespace: str, name: str) -> Claim:
        v = self._view("PersistentVolumeClaim", namespace, name, lambda raw: Claim(raw, self._default_for(raw)))
        if v is None:
            raise NotFoundError(RESOURCE_PVC, name)
        return v

    def _default_for(self, raw: dict) -> str | None:
        spec = _d(raw.get("spec"))
        ann = _d(_d(raw.get("metadata")).get("annotations"))
        if spec.get("storageClassName") is not None or ANN_BETA_STORAGE_CLASS in ann:
            return None
        return self.default_class()

    def pv(self, name: str) -> PV:
        v = self._view("PersistentVolume", "", name, PV)
        if v is None:
            raise NotFoundError(RESOURCE_PV, name)
        return v

    def storage_class(self, name: str) -> StorageClass:
        v = self._view("StorageClass", "", name, StorageClass)
        if v is None:
            raise NotFoundError(RESOURCE_SC, name)
        return v

    def pvs(self) -> list[PV]:
        """Every PV, by name (the informer's order is unspecified)."""
        out = []
        for raw in self.cluster.list("PersistentVolume"):
            meta = _d(raw.get("metadata"))
            out.append(self._view_of("PersistentVolume", _str(meta.get("namespace")), _str(meta.get("name")), raw, PV))
        out.sort(key=lambda p: p.name)
        return out

    def csi_node(self, node_name: str) -> dict | None:
        return self.cluster.get("CSINode", "", node_name)

    def csi_nodes(self) -> Mapping[tuple[str, str], dict]:
        """For many nodes' CSINodes: each under ("", node name)."""
        return self.cluster.table("CSINode", "")

    def csi_driver(self, name: str) -> dict | None:
        return self.cluster.get("CSIDriver", "", name)


_CATALOGS: weakref.WeakKeyDictionary[Any, Catalog] = weakref.WeakKeyDictionary()


def catalog(cluster) -> Catalog:
    c = _CATALOGS.get(cluster)
    if c is None:
        c = Catalog(cluster)
        _CATALOGS[cluster] = c
    return c


def migrated_plugins(csi_node: dict | None) -> set[str]:
    """The CSINode's storage.alpha.kubernetes.io/migrated-plugins annotation as a set."""
    if csi_node is None:
        return set()
    ann = _d(_d(csi_node.get("metadata")).get("annotations"))
    v = _str(ann.get(ANN_MIGRATED_PLUGINS))
    return set(v.split(",")) if v else set()


class CatalogMixin:
    """Gives a plugin `_catalog()`: the catalog of its handle's cluster, looked up once."""

    handle: Handle  # the plugin's (Plugin.__init__ sets it)

    def _catalog(self) -> Catalog:
        cluster = self.handle.cluster
        cached = self.__dict__.get("_volume_catalog")
        if cached is None or cached._cluster() is not cluster:
            cached = catalog(cluster)
            self.__dict__["_volume_catalog"] = cached
        return cached
