"""The Kubernetes releases ksched reproduces, what differs between them, and how one is chosen.

One `Release` per supported minor version: the exact kube-scheduler release whose code was read,
its default feature gates (the ones the scheduler and its plugins read), its default profile, the
changes in plugin behaviour that are not behind a gate, and the texts that changed. Plugins ask the
release they run under (`handle.release`) instead of carrying a copy of themselves per version.
This module imports nothing of the framework or the plugins: both may import it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import InputError

# The feature gates the scheduler reads, with each release's default (pkg/features/kube_features.go
# of that release; gates that are on in every supported release and never change behaviour here,
# such as SidecarContainers, are left out).
_GATES: dict[str, tuple[bool, bool, bool, bool]] = {
    #                                          v1.33  v1.34  v1.35  v1.36
    "DynamicResourceAllocation": (False, True, True, True),
    "DRAPrioritizedList": (False, True, True, True),
    "DRAAdminAccess": (False, True, True, True),
    "DRASchedulerFilterTimeout": (False, True, True, True),
    "DRAExtendedResource": (False, False, False, True),
    "DRAConsumableCapacity": (False, False, False, True),
    "DRAPartitionableDevices": (False, False, False, True),
    "DRADeviceTaints": (False, False, False, True),
    "DRADeviceBindingConditions": (False, False, False, True),
    "PodLevelResources": (False, True, True, True),
    "InPlacePodLevelResourcesVerticalScaling": (False, False, False, True),
    "VolumeAttributesClass": (False, True, True, True),
    "NominatedNodeNameForExpectation": (False, False, True, True),
    "ClearingNominatedNodeNameAfterBinding": (False, False, True, True),
    "OpportunisticBatching": (False, False, True, True),
    "NodeDeclaredFeatures": (False, False, False, True),
    "GangScheduling": (False, False, False, False),
    "TopologyAwareWorkloadScheduling": (False, False, False, False),
    "TaintTolerationComparisonOperators": (False, False, False, False),
}

# Behaviour that changed between releases without a feature gate: name -> first minor that has it.
CHANGES: dict[str, int] = {
    # NodeResourcesFit: a request above the node's whole allocatable is UnschedulableAndUnresolvable
    # (preemption cannot help), not Unschedulable (InsufficientResource.Unresolvable, v1.34)
    "FitUnresolvableAboveAllocatable": 34,
    # NodePorts and NodeInfo.UsedPorts count restartable init containers' (sidecars') host ports
    # (schedutil.GetHostPorts, v1.34); before, only regular containers' ports
    "SidecarHostPorts": 34,
    # DynamicResources scores nodes (prioritized-list subrequests) and the default profile gives
    # it weight 2 (v1.35)
    "DynamicResourcesScore": 35,
    # NodeResourcesBalancedAllocation scores the change in balance the pod makes, not the balance
    # with the pod (balancedResourceScorer, v1.36)
    "BalancedAllocationScoresChange": 36,
}

# Reason texts that changed: key -> ((first minor, text), ...), newest last. `{}` fields are
# filled by the plugin (str.format).
_MESSAGES: dict[str, tuple[tuple[int, str], ...]] = {
    "Args.ShapeNotSorted": (
        (33, "utilization values must be sorted in increasing order"),
        (34, "values must be sorted in increasing order"),
    ),
    "VolumeRestrictions.ReadWriteOncePodConflict": (
        (33, "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"),
        (
            34,
            "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
            "in-use by another pod",
        ),
    ),
    "TaintToleration.Untolerated": (
        (33, "node(s) had untolerated taint {{{key}: {value}}}"),
        (35, "node(s) had untolerated taint(s)"),
    ),
    "DynamicResources.NotOwner": (
        (33, "ResourceClaim {claim_ns}/{claim} was not created for pod {pod_ns}/{pod} (pod is not owner)"),
        (36, "ResourceClaim {claim_ns}/{claim} was not created for Pod {pod_ns}/{pod} (Pod is not owner)"),
    ),
    "DynamicResources.OtherNamespace": (
        (33, "ResourceClaim {claim_ns}/{claim} was not created for pod {pod_ns}/{pod} (pod is not owner)"),
        (36, "ResourceClaim {claim_ns}/{claim} is not in the same namespace as Pod {pod_ns}/{pod}"),
    ),
}

_MINORS = (33, 34, 35, 36)
_PATCH_RELEASES = {33: "v1.33.0", 34: "v1.34.1", 35: "v1.35.7", 36: "v1.36.2"}

# getDefaultPlugins() before applyFeatureGates: the same list in every supported release
_BASE_MULTIPOINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)

# plugins a release's registry does not have (a configuration naming one fails as kube-scheduler's does)
_ABSENT_PLUGINS: dict[int, frozenset[str]] = {
    33: frozenset({"NodeDeclaredFeatures"}),
    34: frozenset({"NodeDeclaredFeatures"}),
    35: frozenset(),
    36: frozenset(),
}


@dataclass(frozen=True)
class Release:
    """One supported kube-scheduler release, with its default feature gates."""

    minor: int
    gates: Mapping[str, bool] = field(repr=False)

    @property
    def name(self) -> str:
        """The minor version, as the flag takes it: v1.34."""
        return f"v1.{self.minor}"

    @property
    def patch_release(self) -> str:
        """The exact release whose code ksched reproduces: v1.34.1."""
        return _PATCH_RELEASES[self.minor]

    def gate(self, name: str) -> bool:
        return self.gates[name]

    def has(self, change: str) -> bool:
        """Whether this release has the behaviour change `change` (a key of CHANGES)."""
        return self.minor >= CHANGES[change]

    def message(self, message_id: str, **fields: str) -> str:
        text = ""
        for first, t in _MESSAGES[message_id]:
            if self.minor >= first:
                text = t
        return text.format(**fields) if fields else text

    def knows_plugin(self, name: str) -> bool:
        return name not in _ABSENT_PLUGINS[self.minor]

    def default_multipoint(self) -> tuple[tuple[str, int], ...]:
        """getDefaultPlugins() with this release's applyFeatureGates: NodeDeclaredFeatures
        appended, DynamicResources inserted before DefaultPreemption (weight 2 from v1.35)."""
        plugins = list(_BASE_MULTIPOINT)
        if self.gate("NodeDeclaredFeatures"):
            plugins.append(("NodeDeclaredFeatures", 0))
        if self.gate("DynamicResourceAllocation"):
            i = [n for n, _ in plugins].index("DefaultPreemption")
            plugins.insert(i, ("DynamicResources", 2 if self.has("DynamicResourcesScore") else 0))
        return tuple(plugins)

    def default_dynamic_resources_args(self) -> dict | None:
        """SetDefaults_DynamicResourcesArgs (no such args before v1.34)."""
        if self.minor < 34:
            return None
        args = {"filterTimeout": "10s"} if self.gate("DRASchedulerFilterTimeout") else {}
        if self.gate("DRADeviceBindingConditions"):
            args["bindingTimeout"] = "10m0s"
        return args


RELEASES: dict[str, Release] = {
    f"v1.{m}": Release(m, {g: on[i] for g, on in _GATES.items()}) for i, m in enumerate(_MINORS)
}
SUPPORTED: tuple[str, ...] = tuple(RELEASES)
REFERENCE = RELEASES["v1.34"]  # the release ksched followed before it took a version
NEWEST = RELEASES[SUPPORTED[-1]]
OLDEST = RELEASES[SUPPORTED[0]]

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


class UnsupportedVersion(InputError):
    """A version ksched does not reproduce: one line naming the supported ones, exit 2."""


def minor_of(text: str) -> tuple[int, int] | None:
    """(major, minor) of a version string such as v1.34, 1.34.2, v1.35.0-eks-1234 or v1.30.1+k3s1."""
    m = _VERSION.match(text.strip()) if isinstance(text, str) else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def parse(text: str) -> Release:
    """The release the flag names: v1.34 or 1.34, a patch release (v1.34.3) meaning its minor."""
    mm = minor_of(text)
    release = RELEASES.get(f"v{mm[0]}.{mm[1]}") if mm else None
    if release is None:
        raise UnsupportedVersion(
            f"unsupported Kubernetes version {text!r}: ksched reproduces {', '.join(SUPPORTED)}",
            field="--kubernetes-version",
        )
    return release


@dataclass(frozen=True)
class Choice:
    """The release a run follows and why: how it was chosen (`source`: flag, cluster, nodes,
    default) and, in words, from what."""

    release: Release
    source: str
    reason: str
    # the cluster's release is not one ksched reproduces: the answer follows the nearest one, and
    # may differ from what the cluster's own kube-scheduler does (one line for people)
    warning: str | None = None

    def describe(self) -> str:
        """One line for people: which release and why."""
        return f"follows kube-scheduler {self.release.patch_release} ({self.source}: {self.reason})"

    def as_doc(self) -> dict:
        """For JSON: `{"source": flag|cluster|nodes|default, "reason": ..., "warning": ...}` (the
        warning only when there is one)."""
        doc = {"source": self.source, "reason": self.reason}
        if self.warning:
            doc["warning"] = self.warning
        return doc


def kubelet_versions(nodes: Iterable) -> list[str]:
    """The nodes' status.nodeInfo.kubeletVersion, where they have one (model.Node.kubelet_version)."""
    return [node.kubelet_version for node in nodes if node.kubelet_version]


def choose(flag: str | None, nodes: Iterable = (), server_version: str | None = None) -> Choice:
    """The release to follow: the flag's; else the live cluster's API server version (what the
    kubectl source passes as `server_version`); else the newest kubelet minor version among the
    snapshot's nodes; a version outside the supported ones falls to the nearest supported (an
    older one to the oldest, a newer or unreadable one to the newest), with a warning.
    A snapshot whose nodes carry no kubelet version (hand-written ones) follows REFERENCE, the
    release ksched has always reproduced, so such snapshots keep their answers."""
    if flag is not None:
        release = parse(flag)
        return Choice(release, "flag", f"--kubernetes-version {flag}")
    if server_version:
        return _from_version(server_version, "cluster", f"the cluster's API server is {server_version}")
    # each distinct version read once (thousands of nodes report a handful): the newest is the same
    seen = [mm for mm in map(minor_of, set(kubelet_versions(nodes))) if mm is not None]
    if seen:
        major, minor = max(seen)
        return _from_version(f"v{major}.{minor}", "nodes", f"the newest kubelet among the nodes is v{major}.{minor}")
    return Choice(REFERENCE, "default", "no node reports a kubelet version")


def _from_version(version: str, source: str, why: str) -> Choice:
    mm = minor_of(version)
    release = RELEASES.get(f"v{mm[0]}.{mm[1]}") if mm else None
    if release is not None:
        return Choice(release, source, why)
    span = f"{SUPPORTED[0]} to {SUPPORTED[-1]}"
    tail = "and may differ from what the cluster's own kube-scheduler does"
    if mm is None:
        nearest, which = NEWEST, "newest"
        warning = (
            f"the cluster's version {version!r} is not one ksched can read: the answer follows kube-scheduler "
            f"{nearest.patch_release}, the newest it reproduces ({span}), {tail}"
        )
    else:
        older = mm < (1, OLDEST.minor)
        nearest, which = (OLDEST, "oldest") if older else (NEWEST, "newest")
        whose = "its API server" if source == "cluster" else "its newest kubelet"
        warning = (
            f"the cluster runs Kubernetes v{mm[0]}.{mm[1]} ({whose}), {'older' if older else 'newer'} than any "
            f"release ksched reproduces ({span}): the answer follows kube-scheduler {nearest.patch_release}, "
            f"the nearest, {tail}"
        )
    return Choice(nearest, source, f"{why}, not a supported release: the {which} supported", warning)
