"""NodePorts: a hostPort the pod wants must be free on the node (by protocol and host IP)."""

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
from ..framework.status import skip, unschedulable

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.status import Status


ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_KEY = "PreFilterNodePorts"


def port_conflicts(used_ports: dict, ip: str, proto: str, port: int) -> bool:
    """HostPortInfo.CheckConflict: 0.0.0.0 conflicts with any IP on the same protocol and port."""
    ips = used_ports.get((proto or "TCP", port))
    if not ips:
        return False
    ip = ip or "0.0.0.0"
    if ip == "0.0.0.0":
        return True
    return ip in ips or "0.0.0.0" in ips


def fits_ports(wanted, node_info) -> bool:
    used = node_info.used_ports
    return not any(port_conflicts(used, ip, proto, port) for ip, proto, port in wanted)


class NodePorts(Plugin, PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    name = "NodePorts"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, skip()
        state.write(_KEY, list(pod.host_ports))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        wanted = state.read(_KEY)
        if not fits_ports(wanted, node_info):
            return unschedulable(ERR_REASON)
        return None

    def events_to_register(self) -> list[ClusterEvent]:
        return [
            ClusterEvent("Pod", "Delete", "a pod using a conflicting host port is deleted"),
            ClusterEvent("Node", "Add", "a node is added"),
        ]
