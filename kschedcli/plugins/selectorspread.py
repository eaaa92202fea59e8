"""SelectorSpread: spread the pods of one Service / ReplicationController / ReplicaSet /
StatefulSet over nodes, and over zones when nodes have them.

Not part of kube-scheduler v1.34.1: the plugin was removed in v1.26 (PodTopologySpread's system
default constraints replaced it). ksched offers it as v1.25 scored it, for a configuration that
enables it by name (it is in no default profile; an enabled score plugin without a weight gets 1):
  PreScore  the pod's default selector (helper.DefaultSelector: the selectors of the Services that
            select the pod, merged, plus its controlling RC / RS / StatefulSet's); nothing at all
            for a pod with topologySpreadConstraints of its own (its scores stay 0);
  Score     the pods on the node in the pod's namespace, not being deleted, that the selector
            matches (an empty selector matches none);
  Normalize 100 × (max − count) / max per node (100 when no node has a match); when some scored
            node has a zone (topology.kubernetes.io/zone or region, the beta labels first), a
            zoned node's score is 1/3 of that plus 2/3 of the same figure over zone totals;
            truncated to an integer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..framework.interface import MAX_NODE_SCORE, Plugin, PreScorePlugin, ScoreExtensions, ScorePlugin
from ..framework.result import Explainer
from ..framework.status import ERROR, Status
from .podtopologyspread.common import default_selector

if TYPE_CHECKING:
    from ..api.labels import LabelSelector
    from ..api.model import Node, Pod
    from ..backend.snapshot import NodeInfo
    from ..framework.cycle_state import CycleState
    from ..framework.result import CycleResult

# 2/3 of the weighting to zone spreading, 1/3 to node spreading, when zones are known
ZONE_WEIGHTING = 2.0 / 3.0

_STATE_KEY = "PreScoreSelectorSpread"

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"

NOT_IN_RELEASE = "not part of kube-scheduler v1.34.1 (removed in v1.26); ksched scores it as v1.25 did"


def zone_key(node: Node) -> str:
    """topology.GetZoneKey: "region:\\x00:zone" from the beta labels, else the GA ones; "" without either."""
    labels = node.labels
    zone = labels[LABEL_BETA_ZONE] if LABEL_BETA_ZONE in labels else labels.get(LABEL_ZONE, "")
    region = labels[LABEL_BETA_REGION] if LABEL_BETA_REGION in labels else labels.get(LABEL_REGION, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


def skip_selector_spread(pod: Pod) -> bool:
    """The pod spreads itself: its own topologySpreadConstraints (the PodTopologySpread plugin's
    default constraints do not count)."""
    return len(pod.spread_constraints) != 0


def count_matching_pods(namespace: str, selector: LabelSelector, node_info: NodeInfo) -> int:
    if not node_info.pods or selector.is_empty():
        return 0
    return sum(1 for p in node_info.pods if p.namespace == namespace and not p.deleting and selector.matches(p.labels))


class _PreScoreState:
    __slots__ = ("selector", "text")

    def __init__(self, selector: LabelSelector, text: str):
        self.selector = selector
        self.text = text

    def clone(self) -> _PreScoreState:
        return self  # read-only


class SelectorSpread(Plugin, PreScorePlugin, ScorePlugin, ScoreExtensions, Explainer):
    name = "SelectorSpread"
    # what the output says whenever a profile enables it
    not_in_release = NOT_IN_RELEASE

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        if skip_selector_spread(pod):
            return None
        selector, text = default_selector(pod, self.handle.cluster)
        state.write(_STATE_KEY, _PreScoreState(selector, text))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        if skip_selector_spread(pod):
            return 0, None
        s = state.get(_STATE_KEY)
        if s is None:
            return 0, Status(ERROR, f'reading "{_STATE_KEY}" from cycleState: not found')
        name = node_info.node.name
        ni = self.handle.snapshot.get(name)  # v1.25 reads the node from the snapshot by name
        if ni is None:
            return 0, Status(ERROR, _not_in_snapshot(name))
        return count_matching_pods(pod.namespace, s.selector, ni), None

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        if skip_selector_spread(pod):
            return None
        snapshot = self.handle.snapshot
        zone_of: dict[str, str] = {}
        counts_by_zone: dict[str, int] = {}
        max_by_node = 0
        for name, count in scores.items():
            max_by_node = max(max_by_node, count)
            ni = snapshot.get(name)
            if ni is None:
                return Status(ERROR, _not_in_snapshot(name))
            zone = zone_of[name] = zone_key(ni.node)
            if zone:
                counts_by_zone[zone] = counts_by_zone.get(zone, 0) + count
        max_by_zone = max(counts_by_zone.values(), default=0)
        have_zones = bool(counts_by_zone)
        top = float(MAX_NODE_SCORE)
        for name, count in scores.items():
            f = top
            if max_by_node > 0:
                f = top * (float(max_by_node - count) / float(max_by_node))
            zone = zone_of[name]
            if have_zones and zone:
                zone_score = top
                if max_by_zone > 0:
                    zone_score = top * (float(max_by_zone - counts_by_zone[zone]) / float(max_by_zone))
                f = (f * (1.0 - ZONE_WEIGHTING)) + (ZONE_WEIGHTING * zone_score)
            scores[name] = int(f)
        return None

    # -- ksched's explanation
    def explain(self, state: CycleState, pod: Pod, result: CycleResult) -> dict[str, Any] | None:
        out: dict[str, Any] = {"note": NOT_IN_RELEASE}
        if skip_selector_spread(pod):
            out["skipped"] = "the pod has topologySpreadConstraints: every node scores 0"
            return out
        s = state.get(_STATE_KEY)
        if s is not None:
            out["selector"] = s.text or "(empty: matches no pod)"
        return out


def _not_in_snapshot(name: str) -> str:
    return f'getting node "{name}" from Snapshot: nodeinfo not found for node name "{name}"'
