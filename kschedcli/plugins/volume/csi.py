"""In-tree volume plugins and their CSI drivers (csi-translation-lib), as far as the scheduler's
volume plugins use them: which in-tree plugin a volume or PV belongs to, whether its migration is
on for a node, and the CSI driver / volume handle / node affinity the translation produces."""

from __future__ import annotations

import copy
import re
from urllib.parse import urlparse

from .util import LABEL_BETA_REGION, LABEL_BETA_ZONE, LABEL_REGION, LABEL_ZONE, PV, VolumeError, migrated_plugins

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
CINDER = "kubernetes.io/cinder"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
VSPHERE = "kubernetes.io/vsphere-volume"
PORTWORX = "kubernetes.io/portworx-volume"

# volume source field -> (in-tree plugin name, CSI driver name)
SOURCES = {
    "gcePersistentDisk": (GCE_PD, "pd.csi.storage.gke.io"),
    "awsElasticBlockStore": (AWS_EBS, "ebs.csi.aws.com"),
    "cinder": (CINDER, "cinder.csi.openstack.org"),
    "azureDisk": (AZURE_DISK, "disk.csi.azure.com"),
    "azureFile": (AZURE_FILE, "file.csi.azure.com"),
    "vsphereVolume": (VSPHERE, "csi.vsphere.vmware.com"),
    "portworxVolume": (PORTWORX, "pxd.portworx.com"),
}
CSI_DRIVER = {plugin: driver for plugin, driver in SOURCES.values()}
TOPOLOGY_KEY = {
    AWS_EBS: "topology.ebs.csi.aws.com/zone",
    GCE_PD: "topology.gke.io/zone",
    CINDER: "topology.cinder.csi.openstack.org/zone",
}
# CSIMigrationPortworx is GA (locked on) in v1.34
_MIGRATION_ON = {AWS_EBS, GCE_PD, AZURE_DISK, CINDER, PORTWORX}
MULTI_ZONE_DELIMITER = "__"
UNSPECIFIED = "UNSPECIFIED"


def _source(obj: dict) -> tuple[str, dict] | None:
    for key in SOURCES:
        v = obj.get(key)
        if isinstance(v, dict):
            return key, v
    return None


def inline_plugin(vol) -> str | None:
    """GetInTreePluginNameFromSpec(nil, vol); None when the volume is not migratable."""
    s = _source(vol) if isinstance(vol, dict) else None
    return SOURCES[s[0]][0] if s else None


def pv_plugin(pv: PV) -> str | None:
    s = _source(pv.spec)
    return SOURCES[s[0]][0] if s else None


def plugin_by_name(name: str) -> bool:
    """IsMigratableIntreePluginByName."""
    return name in CSI_DRIVER


def limits_migration_on(csi_node: dict | None, plugin: str) -> bool:
    """nodevolumelimits' isCSIMigrationOn: needs a CSINode; Portworx also needs the node's annotation."""
    if csi_node is None or not plugin:
        return False
    if plugin in (AWS_EBS, GCE_PD, AZURE_DISK, CINDER):
        return True
    if plugin != PORTWORX:
        return False
    return plugin in migrated_plugins(csi_node)


def binding_migration_on(csi_node: dict | None, plugin: str) -> bool:
    """volumebinding: isCSIMigrationOnForPlugin and isPluginMigratedToCSIOnNode."""
    return plugin in _MIGRATION_ON and plugin in migrated_plugins(csi_node)


# -- volume handles ---------------------------------------------------------------------------------

_AWS_VOL = re.compile(r"^vol-[^/]*$")
_AZURE_ACCOUNT = re.compile(r"azure-storage-account-(.+)-secret")


def ebs_volume_id(kubernetes_id: str) -> str:
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlparse(kubernetes_id).path.strip("/")
    if not _AWS_VOL.match(aws_id):
        raise VolumeError(
            f"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume ({kubernetes_id})"
        )
    return aws_id


def _go_set(items) -> str:
    return "map[" + " ".join(f"{i}:{{}}" for i in sorted(items)) + "]"


def _gce_region(zones: list[str]) -> str:
    regions = set()
    for z in zones:
        parts = z.split("-")
        if len(parts) != 3:
            raise VolumeError(f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {z}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise VolumeError(f"multiple or no regions gotten from zones, got: {_go_set(regions)}")
    return next(iter(regions))


def _azure_disk_handle(src: dict) -> str:
    kind = src.get("kind") or "Shared"  # API defaulting of AzureDiskVolumeSource.kind
    if str(kind).lower() != "managed":
        raise VolumeError(f"kind({kind}) is not supported in csi migration")
    return str(src.get("diskURI") or "")


def inline_csi(vol: dict, pod_namespace: str) -> tuple[str, str]:
    """TranslateInTreeInlineVolumeToCSI: (driver, volume handle); raises VolumeError."""
    found = _source(vol)
    assert found is not None  # the callers ask only about migratable volumes (inline_plugin)
    key, src = found
    plugin, driver = SOURCES[key]
    if plugin == AWS_EBS:
        return driver, ebs_volume_id(str(src.get("volumeID") or ""))
    if plugin == GCE_PD:
        return driver, f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{src.get('pdName') or ''}"
    if plugin == AZURE_DISK:
        return driver, _azure_disk_handle(src)
    if plugin == AZURE_FILE:
        secret = str(src.get("secretName") or "")
        m = _AZURE_ACCOUNT.search(secret)
        account = m.group(1) if m else secret
        ns = pod_namespace or "default"
        return driver, f"#{account}#{src.get('shareName') or ''}#{vol.get('name') or ''}#{ns}"
    if plugin == VSPHERE:
        return driver, str(src.get("volumePath") or "")
    return driver, str(src.get("volumeID") or "")  # cinder, portworx


def pv_csi(pv: PV) -> tuple[str, str, dict | None]:
    """TranslateInTreePVToCSI: (driver, volume handle, translated spec.nodeAffinity); raises VolumeError."""
    found = _source(pv.spec)
    assert found is not None  # the callers ask only about migratable PVs
    key, src = found
    plugin, driver = SOURCES[key]
    affinity = pv.spec.get("nodeAffinity")
    if plugin == AWS_EBS:
        handle = ebs_volume_id(str(src.get("volumeID") or ""))
    elif plugin == GCE_PD:
        zones_label = pv.labels.get(LABEL_BETA_ZONE, "") or pv.labels.get(LABEL_ZONE, "")
        zones = zones_label.split(MULTI_ZONE_DELIMITER)
        pd = src.get("pdName") or ""
        if len(zones) == 1 and zones[0]:
            handle = f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{pd}"
        elif len(zones) > 1:
            try:
                region = _gce_region(zones)
            except VolumeError as e:
                raise VolumeError(f"failed to get region from zones: {e}") from None
            handle = f"projects/{UNSPECIFIED}/regions/{region}/disks/{pd}"
        else:
            handle = f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd}"
    elif plugin == AZURE_DISK:
        handle = _azure_disk_handle(src)
    elif plugin == AZURE_FILE:
        raise VolumeError("Azure File PV translation is not modelled")
    elif plugin == VSPHERE:
        handle = str(src.get("volumePath") or "")
    else:
        handle = str(src.get("volumeID") or "")
    if plugin in TOPOLOGY_KEY:
        affinity = _translate_topology(pv, affinity, TOPOLOGY_KEY[plugin])
    return driver, handle, affinity


# -- node affinity translation (translateTopologyFromInTreeToCSI) -----------------------------------


def _terms(aff) -> list:
    if not isinstance(aff, dict) or not isinstance(aff.get("required"), dict):
        return []
    t = aff["required"].get("nodeSelectorTerms")
    return t if isinstance(t, list) else []


def _key_exists(aff, key: str) -> bool:
    return any(
        isinstance(r, dict) and r.get("key") == key
        for t in _terms(aff)
        if isinstance(t, dict)
        for r in (t.get("matchExpressions") or [])
    )


def _topology_labels(pv: PV, aff) -> tuple[str, str]:
    if _key_exists(aff, LABEL_ZONE):
        return LABEL_ZONE, LABEL_REGION
    if _key_exists(aff, LABEL_BETA_ZONE):
        return LABEL_BETA_ZONE, LABEL_BETA_REGION
    if LABEL_ZONE in pv.labels:
        return LABEL_ZONE, LABEL_REGION
    if LABEL_BETA_ZONE in pv.labels:
        return LABEL_BETA_ZONE, LABEL_BETA_REGION
    return LABEL_ZONE, LABEL_REGION


def _values(aff, key: str) -> list[str]:
    vals: set[str] = set()
    for t in _terms(aff):
        for r in (t.get("matchExpressions") or []) if isinstance(t, dict) else []:
            if isinstance(r, dict) and r.get("key") == key:
                vals.update(str(v) for v in r.get("values") or [])
    return sorted(vals)


def _replace(aff, old: str, new: str) -> None:
    for t in _terms(aff):
        for r in (t.get("matchExpressions") or []) if isinstance(t, dict) else []:
            if isinstance(r, dict) and r.get("key") == old:
                r["key"] = new


def _add(aff, key: str, zones: list[str]):
    zones = sorted({z.strip() for z in zones if z.strip()})
    if not zones:
        return aff
    aff = aff if isinstance(aff, dict) else {}
    if not isinstance(aff.get("required"), dict):
        aff["required"] = {}
    terms = aff["required"].get("nodeSelectorTerms")
    if not isinstance(terms, list) or not terms:
        terms = [{}]
        aff["required"]["nodeSelectorTerms"] = terms
    for t in terms:
        t.setdefault("matchExpressions", [])
        t["matchExpressions"] = list(t["matchExpressions"] or []) + [{"key": key, "operator": "In", "values": zones}]
    return aff


def _translate_topology(pv: PV, affinity, csi_key: str):
    aff = copy.deepcopy(affinity) if isinstance(affinity, dict) else None
    zone_label, region_label = _topology_labels(pv, aff)
    if _values(aff, zone_label):
        _replace(aff, zone_label, csi_key)
    elif zone_label in pv.labels:
        aff = _add(aff, csi_key, pv.labels[zone_label].split(MULTI_ZONE_DELIMITER))
    if region_label == LABEL_BETA_REGION and _values(aff, region_label):
        _replace(aff, region_label, LABEL_REGION)
    return aff
