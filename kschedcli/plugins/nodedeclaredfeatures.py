"""NodeDeclaredFeatures (in the default profile from v1.36, behind the NodeDeclaredFeatures gate):
a pod that needs a node feature the API cannot express otherwise goes only to nodes that declare
it in `status.declaredFeatures`.

The features a pod needs are inferred as component-helpers/nodedeclaredfeatures does for
scheduling; of its registry only two features can be required by a new pod:
RestartAllContainersOnContainerExits (a container's restartPolicyRules with the action
RestartAllContainers) and UserNamespacesHostNetworkSupport (hostNetwork with hostUsers false).
The others (in-place resize of pod-level resources and of init containers, websockets to the
kubelet) matter only to updates. Without the gate (v1.35) the plugin is registered but idle.
"""

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
from ..framework.status import skip, unresolvable

if TYPE_CHECKING:
    from ..api.model import Node, Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.runtime import Handle
    from ..framework.status import Status

ERR_REASON = "node(s) didn't match Pod's required features"
_KEY = "PreFilterNodeDeclaredFeatures"


def required_features(pod: Pod) -> frozenset[str]:
    """InferForPodScheduling over the feature registry."""
    raw_spec = pod.raw.get("spec")
    spec: dict = raw_spec if isinstance(raw_spec, dict) else {}
    need: set[str] = set()
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            rules = c.get("restartPolicyRules") if isinstance(c, dict) else None
            if any(isinstance(r, dict) and r.get("action") == "RestartAllContainers" for r in rules or ()):
                need.add("RestartAllContainersOnContainerExits")
    if spec.get("hostNetwork") is True and spec.get("hostUsers") is False:
        need.add("UserNamespacesHostNetworkSupport")
    return frozenset(need)


def declared_features(node: Node) -> frozenset[str]:
    raw_status = node.raw.get("status")
    status: dict = raw_status if isinstance(raw_status, dict) else {}
    return frozenset(f for f in status.get("declaredFeatures") or () if isinstance(f, str))


class NodeDeclaredFeatures(Plugin, PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = "NodeDeclaredFeatures"

    def __init__(self, args: dict, handle: Handle):
        super().__init__(args, handle)
        self.enabled = handle.release.gate("NodeDeclaredFeatures")

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not self.enabled:
            return None, skip()
        need = required_features(pod)
        if not need:
            return None, skip()
        state.write(_KEY, need)
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        if not state.read(_KEY) <= declared_features(node_info.node):
            return unresolvable(ERR_REASON)
        return None

    def events_to_register(self) -> list[ClusterEvent]:
        if not self.enabled:
            return []
        return [
            ClusterEvent("Node", "Add|UpdateNodeDeclaredFeature", "a node declares the features the pod needs"),
            ClusterEvent("Pod", "Update", "the pod's feature requirements change"),
        ]
