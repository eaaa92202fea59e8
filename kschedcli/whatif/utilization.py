"""Requested against allocatable, node by node: what `--report` draws as the cluster's utilization
(docs/reports.md). Each node's row names its zone and its node pool (the labels capacity groups
copies by), and per resource the amounts the scheduler sums (NodeInfo.requested) against the
node's allocatable: CPU in millicores, memory in bytes, pods as a count of the node's pods
against its pod slots, and every extended resource some node offers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..backend.snapshot import NodeInfo, Snapshot
from ..inputs.cluster import Cluster
from .capacity import POOL_LABELS, ZONE_LABEL

NONE = "(none)"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"  # a node without the zone or pool label


def pool_of(labels: dict[str, str]) -> str:
    """The node's pool: the first node-pool label it carries (its instance type only when it carries
    none), else (none)."""
    for key in (*(k for k in POOL_LABELS if k != INSTANCE_TYPE), INSTANCE_TYPE):
        if key in labels:
            return labels[key]
    return NONE


def node_usage(infos: Iterable[NodeInfo], label_keys: Iterable[str] = ()) -> dict[str, Any]:
    """The utilization document of these nodes, in their order: `resources`, the columns (cpu,
    memory, pods, then the extended resources by name), and `nodes`, one row each (with
    `labels`, the values of `label_keys` the node carries, when keys are given)."""
    keys = list(label_keys)
    infos = list(infos)
    extended = sorted({name for ni in infos for name in ni.allocatable.scalars})
    rows = []
    for ni in infos:
        alloc, req, labels = ni.allocatable, ni.requested, ni.node.labels
        used: dict[str, list[int]] = {
            "cpu": [req.milli_cpu, alloc.milli_cpu],
            "memory": [req.memory, alloc.memory],
            "pods": [len(ni.pods), alloc.allowed_pods],
        }
        for name in extended:
            used[name] = [req.scalars.get(name, 0), alloc.scalars.get(name, 0)]
        row = {
            "name": ni.node.name,
            "zone": labels.get(ZONE_LABEL, NONE),
            "pool": pool_of(labels),
            "unschedulable": bool(ni.node.unschedulable),
            "resources": used,
        }
        if keys:
            row["labels"] = {k: labels[k] for k in keys if k in labels}
        rows.append(row)
    return {"resources": ["cpu", "memory", "pods", *extended], "nodes": rows}


def cluster_usage(cluster: Cluster) -> dict[str, Any]:
    """The utilization of the cluster as read: its nodes with the pods bound to them."""
    return node_usage(Snapshot(cluster.nodes, cluster.pods).list())
