"""What keeps a pod off each node, read from its cycle's statuses: the failing plugins per node,
grouped (nodes of a pool fail alike), for the candidate changes to aim at.

Every entry a cycle's filter table can hold is read: None (passed), a Status (its code says
whether it rejected), and result.NOT_ASKED (an HTTP extender's column for a node it was never
sent: a plugin rejected the node first). An extender's rejection is a blocker like a plugin's,
named by the extender (its URL): no pod change aims at it (what an extender looks at is its own
business), and the search reports who can lift it: the extender's owner."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..framework.status import SKIP, SUCCESS, Status
from ..result import CycleResult, FilterTable

# taints the cluster's own controllers keep (not-ready, unreachable, cordoned, under memory
# pressure, being deleted by the autoscaler, the control plane's): tolerating or removing one
# would put the pod where the cluster means no pod to go, never a fix
SYSTEM_TAINT_PREFIXES = (
    "node.kubernetes.io/",
    "node.cloudprovider.kubernetes.io/",
    "node-role.kubernetes.io/",
    "ToBeDeletedByClusterAutoscaler",
    "DeletionCandidateOfClusterAutoscaler",
    "karpenter.sh/disrupted",
    "karpenter.sh/disruption",
)


def is_system_taint(key: str) -> bool:
    return key.startswith(SYSTEM_TAINT_PREFIXES)


@dataclass
class Blocked:
    """The pod's cycle: for every node the plugins that rejected it (empty: feasible), and the
    nodes grouped by that set."""

    result: CycleResult
    names: list[str]
    failing: list[frozenset[str]]
    groups: dict[frozenset[str], list[int]] = field(default_factory=dict)
    # the filter extenders among the blockers (their names: URL prefixes), in calling order
    extenders: list[str] = field(default_factory=list)

    def nodes_failing_within(self, plugins: set[str] | frozenset[str]) -> list[int]:
        """Indexes of the nodes every failing plugin of which is in `plugins` (at least one)."""
        out: list[int] = []
        for fs, idx in self.groups.items():
            if fs and fs <= plugins:
                out.extend(idx)
        return sorted(out)

    def plugins(self) -> set[str]:
        return {p for fs in self.groups for p in fs}

    def rejected_by(self, extender: str) -> list[int]:
        """Indexes of the nodes `extender` rejected (whatever else rejected them)."""
        return [i for i, fs in enumerate(self.failing) if extender in fs]


def _rejects(st: object) -> bool:
    """Whether a filter table entry is a rejection: a Status other than Success (or Skip: the plugin
    did not run). None (passed) and NOT_ASKED (an extender never sent the node) are not."""
    return isinstance(st, Status) and st.code not in (SUCCESS, SKIP)


def blocked_of(result: CycleResult, node_names: list[str]) -> Blocked:
    """Every node's failing plugins. A node whose plugins all passed but that the PreFilter result
    left out (or that PreFilter rejected as a whole) fails the plugin PreFilter named."""
    n = len(node_names)
    sets: list[set[str]] = [set() for _ in range(n)]
    ft = result.filters
    if isinstance(ft, FilterTable) and len(ft.names) == n:
        for plugin, col in ft.columns.items():
            for i, st in enumerate(col):
                if _rejects(st):
                    sets[i].add(plugin)
        for i, f in enumerate(ft.first):
            if _rejects(f) and not sets[i]:
                sets[i].add(f.plugin or _prefilter_plugin(result))
    else:
        whole = _prefilter_plugin(result)
        for s in sets:
            s.add(whole)
    failing = [frozenset(s) for s in sets]
    groups: dict[frozenset[str], list[int]] = defaultdict(list)
    for i, fs in enumerate(failing):
        groups[fs].append(i)
    blockers = {p for fs in failing for p in fs}
    extenders = [e for e in result.filter_extenders if e in blockers]
    return Blocked(result, node_names, failing, dict(groups), extenders)


def _prefilter_plugin(result: CycleResult) -> str:
    st = result.pre_filter
    if st is not None and st.plugin:
        return st.plugin
    for name, s in result.pre_filter_plugins.items():
        if _rejects(s):
            return name
    return "PreFilter"
