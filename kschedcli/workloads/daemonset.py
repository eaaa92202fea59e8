"""The DaemonSet controller's view of nodes: which nodes should run a daemon pod
(NodeShouldRunDaemonPod), the tolerations it adds, the node affinity that pins its pod."""

from __future__ import annotations

from dataclasses import dataclass

from ..api.model import Pod
from ..plugins.helper import find_untolerated_taint
from ..plugins.nodeaffinity import required_node_affinity_matches


@dataclass
class DaemonNode:
    """One node as the DaemonSet controller sees it: whether it should run a daemon pod, and why not."""

    node: str
    eligible: bool
    reason: str = ""  # why the controller leaves the node out
    existing: bool = False  # the snapshot already runs the daemon pod there
    pod: str = ""  # the new pod pinned to it (NAMESPACE/NAME)


# -- the DaemonSet controller's node checks -----------------------------------------------------------

_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


def daemon_tolerations(tolerations: list[dict], host_network: bool) -> list[dict]:
    """AddOrUpdateDaemonPodTolerations: each toleration added, replacing one of the same key,
    operator, value and effect (AddOrUpdateTolerationInPodSpec), in order."""
    out = list(tolerations)
    wanted = list(_DAEMON_TOLERATIONS)
    if host_network:
        wanted.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    for key, effect in wanted:
        tol = {"key": key, "operator": "Exists", "effect": effect}
        same = [
            i
            for i, t in enumerate(out)
            if t.get("key", "") == key
            and t.get("effect", "") == effect
            and (t.get("operator") or "Equal") == "Exists"
            and (t.get("value") or "") == ""
        ]
        if same:
            out = [tol if i in same else t for i, t in enumerate(out)]
        else:
            out.append(tol)
    return out


def pin_to_node(affinity, node_name: str) -> dict:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes the one term
    `matchFields metadata.name In [node]`; the rest of the affinity is kept."""
    term = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    affinity = dict(affinity) if isinstance(affinity, dict) else {}
    na = affinity.get("nodeAffinity")
    na = dict(na) if isinstance(na, dict) else {}
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    na["requiredDuringSchedulingIgnoredDuringExecution"] = {**req, **term} if isinstance(req, dict) else term
    affinity["nodeAffinity"] = na
    return affinity


def should_run_daemon_pod(probe: Pod, node, template_node: str) -> str:
    """NodeShouldRunDaemonPod's shouldRun: "" when the node should run the daemon pod, else why not."""
    if template_node and template_node != node.name:
        return f"the pod template names node {template_node}"
    if not required_node_affinity_matches(probe, node):
        return "node(s) didn't match Pod's node affinity/selector"
    taint = find_untolerated_taint(node.taints, probe.tolerations)
    if taint is not None:
        return f"untolerated taint {{{taint.key}: {taint.value}}}"
    return ""
