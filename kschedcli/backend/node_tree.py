"""The order kube-scheduler's cache lists nodes in: its node tree (backend/cache/node_tree.go).

The tree groups nodes by zone key (region and zone labels, as utilnode.GetZoneKey makes it); zones
keep the order in which their first node was added, the nodes of a zone the order in which they
were added. The snapshot's node list takes one node of each zone in turn: the first node of every
zone, then the second of every zone that has one, and so on. A freshly started kube-scheduler adds
the nodes as its informer lists them, by name."""

from __future__ import annotations

from collections.abc import Iterable

ZONE = "topology.kubernetes.io/zone"
ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
REGION_BETA = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: dict[str, str] | None) -> str:
    """GetZoneKey: '' for a node with neither region nor zone; else region, a separator with a NUL
    character (so that a colon in a label cannot make two keys equal), zone. The GA label wins
    over the beta one when the node has the GA label at all, even empty."""
    if not labels:
        return ""
    zone = labels[ZONE] if ZONE in labels else labels.get(ZONE_BETA, "")
    region = labels[REGION] if REGION in labels else labels.get(REGION_BETA, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


def node_tree_order(nodes: Iterable[tuple[str, dict[str, str] | None]]) -> list[str]:
    """nodeTree.list() after adding (name, labels) in the order given: zones in turn."""
    zones: dict[str, list[str]] = {}
    for name, labels in nodes:
        zones.setdefault(zone_key(labels), []).append(name)
    columns = list(zones.values())
    out: list[str] = []
    depth = max((len(c) for c in columns), default=0)
    for i in range(depth):
        out.extend(c[i] for c in columns if i < len(c))
    return out
