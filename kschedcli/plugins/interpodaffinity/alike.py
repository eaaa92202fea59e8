"""InterPodAffinity across a sequence of alike pods (framework/alike.py's tracker), for a pod whose
only terms are required anti-affinity (a StatefulSet or Deployment kept one per host or zone).

PreFilter's three count tables are kept and moved by each bound pod as preemption's AddPod moves
them (PreFilterState.update_with_pod). Scoring does not change as such pods are bound: they bring
only required anti-affinity terms, which Score does not read, and the pod has no preferred terms;
the raw scores are taken once. A node's key is what Filter and Score read of it: its value of each
topology key the tables hold (for hostname, whose domain is the node, the counts at the node
instead) and its raw score. Filter itself is asked of one node of each key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...framework.cycle_state import CycleState
from .terms import pod_terms

if TYPE_CHECKING:
    from ...api.model import Pod
    from ...backend.snapshot import NodeInfo

HOSTNAME_KEY = "kubernetes.io/hostname"


def tracks(pod: Pod) -> bool:
    """The pods a tracker follows: required anti-affinity terms and no other."""
    t = pod_terms(pod)
    return bool(
        not t.error
        and t.required_anti_affinity
        and not (t.required_affinity or t.preferred_affinity or t.preferred_anti_affinity)
    )


class AffinityTracker:
    """framework.interface.AlikeTracker for InterPodAffinity."""

    def __init__(self, plugin, state: CycleState, pod: Pod, pre_filter_key: str, pre_score_key: str):
        self.plugin = plugin
        self.pod = pod
        self.usable = tracks(pod)
        pf = state.get(pre_filter_key)
        self.state = CycleState()
        self.pre_filter = pf.clone() if pf is not None else None
        if self.pre_filter is not None:
            self.state.write(pre_filter_key, self.pre_filter)
        ps = state.get(pre_score_key)
        if ps is not None:
            self.state.write(pre_score_key, ps)  # read-only after PreScore, unchanged by such pods
        snapshot = plugin.handle.snapshot
        keys: set[str] = set()
        if self.pre_filter is not None:
            s = self.pre_filter
            for table in (s.existing_anti_counts, s.affinity_counts, s.anti_counts):
                keys.update(k for k, _ in table)
            keys.update(t.topology_key for t in s.affinity_terms + s.anti_terms)
        # the pod's own terms: its copies add pairs of these keys to existing_anti_counts
        keys.update(t.topology_key for t in pod_terms(pod).required_anti_affinity)
        self.keys = sorted(keys)
        if HOSTNAME_KEY in keys:
            values = [ni.node.labels.get(HOSTNAME_KEY) for ni in snapshot.node_infos]
            present = [v for v in values if v is not None]
            self.usable = self.usable and len(present) == len(set(present))
        # Score's raw value per node, when it runs: worked out once (see the module's doc)
        self.raw: dict[str, int] | None = None
        if ps is not None:
            self.raw = {}
            for ni in snapshot.node_infos:
                score, st = plugin.score(self.state, pod, ni)
                if st is not None and not st.is_success():
                    self.usable = False
                    break
                self.raw[ni.node.name] = score

    def node_key(self, node_info: NodeInfo) -> Any:
        labels = node_info.node.labels
        s = self.pre_filter
        parts: list[Any] = []
        for k in self.keys:
            v = labels.get(k)
            if v is None or k != HOSTNAME_KEY or s is None:
                parts.append(v)
            else:
                pair = (k, v)
                parts.append(
                    (s.existing_anti_counts.get(pair, 0), s.affinity_counts.get(pair, 0), s.anti_counts.get(pair, 0))
                )
        raw = None if self.raw is None else self.raw.get(node_info.node.name, 0)
        return (tuple(parts), raw)

    def node_changed(self, node_info: NodeInfo, pod: Pod) -> None:
        if self.pre_filter is not None:
            self.pre_filter.update_with_pod(pod, node_info.node, 1)

    def passes(self, key: Any, node_info: NodeInfo) -> bool:
        st = self.plugin.filter(self.state, self.pod, node_info)
        return st is None or st.is_success()

    def normalized_scores(self, groups: list[tuple[Any, int, NodeInfo]]) -> list[int] | None:
        scores = {ni.node.name: key[1] for key, _, ni in groups}
        st = self.plugin.normalize_score(self.state, self.pod, scores)
        if st is not None and not st.is_success():
            return None  # the full cycle reports it
        return [scores[ni.node.name] for _, _, ni in groups]
