"""Plugin interfaces: kube-scheduler's interface.go as typing.Protocols, one per extension point.

A plugin subclasses `Plugin` (its name, args and handle) and the Protocols of the extension points
it implements, so the type checker holds its methods to their signatures. A profile places a plugin
only at the points it implements (`Plugin.implements`, checked when the configuration is read), and
the runtime calls the extension points' methods by those names. None as a Status means Success,
as kube-scheduler's nil *Status.

A plugin may also decide many nodes in one call, for speed (BatchFilterPlugin, BatchScorePlugin);
the framework then uses these, and they must agree with filter/score node by node
(tests/scheduling/test_batch_columns.py holds them to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo
    from ..config.versions import Release
    from .cycle_state import CycleState
    from .runtime import Handle, NodeStatuses
    from .status import Status

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = (1 << 63) - 1


class ScoresInRange(list):
    """Scores a plugin's score_nodes knows to lie in [0, MAX_NODE_SCORE] by how it made them:
    the framework's range check after NormalizeScore (kube-scheduler's "returns an invalid
    score") is passed over for them when no normalizer changed them."""

    __slots__ = ()


EXTENSION_METHODS = {
    "preEnqueue": "pre_enqueue",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "queueSort": "less",
}


class PreFilterResult:
    """A set of node names a PreFilter restricts the cycle to; None means all nodes."""

    __slots__ = ("node_names",)

    def __init__(self, node_names: set[str] | None):
        self.node_names = node_names

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return PreFilterResult(set(other.node_names))
        return PreFilterResult(self.node_names & other.node_names)


@dataclass
class ClusterEvent:
    """A cluster change that could make a rejected pod schedulable (EventsToRegister)."""

    resource: str
    action: str
    hint: str = ""


@dataclass
class PostFilterResult:
    nominated_node: str | None = None
    detail: Any = None


class Plugin:
    """Base of every plugin: its name and the profile-level handle."""

    name = ""

    def array_scores_in_range(self, state: Any) -> bool:
        """For the columnar cycle (scheduling/columnar.py): whether this cycle's scores from the
        plugin's score_array (or its static equivalence column), then its normalize_array where
        it normalizes, lie in [0, MAX_NODE_SCORE] by how they are made, so that the range check
        after NormalizeScore is passed over for them. False unless the plugin says so; scores
        made any other way are always checked."""
        return False

    def constant_array_scores(self, state: Any, pod: Pod) -> bool:
        """For the columnar cycle: whether this cycle's normalized scores are the same on every
        node of the snapshot (one value, whichever nodes are feasible), so that the cycle leaves
        them out of the sum: a constant added to every node's total changes neither the best
        nodes nor their ties. False unless the plugin knows it cheaply."""
        return False

    def __init__(self, args: dict, handle: Handle):
        self.args = args
        self.handle = handle

    @classmethod
    def implements(cls, point: str, release: Release | None = None) -> bool:
        """Whether the plugin extends `point` (in `release`, for a plugin whose extension points
        changed between releases: it overrides this)."""
        method = EXTENSION_METHODS.get(point)
        return method is not None and callable(getattr(cls, method, None))

    def events_to_register(self) -> list[ClusterEvent]:
        return []


# -- extension points ------------------------------------------------------------------------------
# Each Protocol names the plugin (`name`) as kube-scheduler's Plugin interface does, and the
# methods of one extension point. They are runtime-checkable so the runtime can ask once which of
# the optional forms (extensions, many-node methods) a plugin offers.


@runtime_checkable
class NamedPlugin(Protocol):
    """Plugin: every extension point's plugin has a name."""

    name: str


@runtime_checkable
class PreEnqueuePlugin(NamedPlugin, Protocol):
    """PreEnqueuePlugin: may keep a pod out of the active queue (a rejection ends the cycle)."""

    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(NamedPlugin, Protocol):
    """QueueSortPlugin: the scheduling queue's order."""

    def less(self, a: Pod, b: Pod) -> bool: ...


@runtime_checkable
class EnqueueExtensions(NamedPlugin, Protocol):
    """EnqueueExtensions: the cluster events that may make a pod this plugin rejected schedulable."""

    def events_to_register(self) -> list[ClusterEvent]: ...


@runtime_checkable
class PreFilterPlugin(NamedPlugin, Protocol):
    """PreFilterPlugin: runs once per cycle before Filter; may narrow the nodes, or Skip its Filter."""

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]: ...


@runtime_checkable
class PreFilterExtensions(NamedPlugin, Protocol):
    """PreFilterExtensions: update the PreFilter state as if a pod were added to or removed from a
    node (preemption's what-if runs)."""

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None: ...

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class FilterPlugin(NamedPlugin, Protocol):
    """FilterPlugin: can the pod run on this node?"""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(FilterPlugin, Protocol):
    """A Filter that also decides many nodes in one call: a verdict per node, in their order."""

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status | None]: ...


@runtime_checkable
class PostFilterPlugin(NamedPlugin, Protocol):
    """PostFilterPlugin: runs when no node is feasible (preemption); may nominate a node."""

    def post_filter(
        self, state: CycleState, pod: Pod, node_statuses: NodeStatuses
    ) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(NamedPlugin, Protocol):
    """PreScorePlugin: runs once over the feasible nodes before Score; may Skip its Score."""

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None: ...


@runtime_checkable
class ScorePlugin(NamedPlugin, Protocol):
    """ScorePlugin: ranks a feasible node (an integer, in [0, MAX_NODE_SCORE] once normalized)."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]: ...


@runtime_checkable
class BatchScorePlugin(ScorePlugin, Protocol):
    """A Score that also scores many nodes in one call: a score per node, in their order."""

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]: ...


@runtime_checkable
class ScoreExtensions(NamedPlugin, Protocol):
    """ScoreExtensions.NormalizeScore: rewrites the scores (node name -> score) in place."""

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None: ...


@runtime_checkable
class BatchNormalizePlugin(ScoreExtensions, Protocol):
    """A NormalizeScore that also works on a list: the scores of `names` in their order, a new
    list returned (what normalize_score would leave in a dict of them, in the same order)."""

    def normalize_scores(
        self, state: CycleState, pod: Pod, scores: list[int], names: list[str]
    ) -> tuple[list[int], Status | None]: ...


@runtime_checkable
class ReservePlugin(NamedPlugin, Protocol):
    """ReservePlugin: assumes what the pod will use on the chosen node. (A what-if run never fails
    after Reserve, so no Unreserve is ever called.)"""

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PermitPlugin(NamedPlugin, Protocol):
    """PermitPlugin: approves, rejects or delays (a timeout in seconds) the binding."""

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]: ...


@runtime_checkable
class PreBindPlugin(NamedPlugin, Protocol):
    """PreBindPlugin: work before the binding (volumes, claims)."""

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(NamedPlugin, Protocol):
    """BindPlugin: binds the pod to the node."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


@runtime_checkable
class PostBindPlugin(NamedPlugin, Protocol):
    """PostBindPlugin: informational, after a successful bind."""

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


# -- ksched's own hooks (no kube-scheduler counterpart; result.Explainer is one too) --------------


@runtime_checkable
class BindObserver(NamedPlugin, Protocol):
    """Told when a sequence binds a pod (in any profile), to assume what Reserve would have."""

    def on_bind(self, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class CacheHolder(NamedPlugin, Protocol):
    """Keeps a memo between cycles that `clear_caches` forgets (for timing one cycle cold)."""

    def clear_caches(self) -> None: ...


@runtime_checkable
class AlikeTracker(Protocol):
    """A plugin's state across a sequence of alike pods (framework/alike.py), for a plugin whose
    results on a node depend on other nodes' pods. It sorts the nodes by a key such that nodes of one
    key get the same Filter verdict and the same raw Score, and follows the binds."""

    def node_key(self, node_info: NodeInfo) -> Any: ...

    def node_changed(self, node_info: NodeInfo, pod: Pod) -> None:
        """`pod` was bound to the node (the node already holds it)."""
        ...

    def passes(self, key: Any, node_info: NodeInfo) -> bool:
        """Whether the Filter passes nodes of this key (`node_info`, one of them; asked only when the
        plugin's Filter runs)."""
        ...

    def normalized_scores(self, groups: list[tuple[Any, int, NodeInfo]]) -> list[int] | None:
        """The normalized Score of each (key, number of nodes, one of them) when exactly these are
        the feasible nodes (asked only when the plugin's Score runs); None when it cannot say (the
        full cycle then runs)."""
        ...


@runtime_checkable
class AlikeAware(NamedPlugin, Protocol):
    """Follows a sequence of alike pods itself: its tracker for this pod, or None when it cannot."""

    def alike_tracker(self, state: CycleState, pod: Pod) -> AlikeTracker | None: ...


@runtime_checkable
class UnchangedByAlike(NamedPlugin, Protocol):
    """Says when its Filter verdicts and raw Scores for `pod` stay the same on every node while pods
    alike to `pod` are bound."""

    def unchanged_by_alike(self, pod: Pod) -> bool: ...


class PreemptionExtenders(Protocol):
    """The HTTP extenders as the preemption evaluator calls them (callExtenders): given the
    candidates (result.Candidate), those left and their victims after every extender that
    supports preemption and is interested in the pod, or the error status. The handle holds one
    (Handle.extenders) when the configuration has extenders; kschedcli/scheduling/extenders.py is it."""

    def process_preemption(self, pod: Pod, candidates: list[Any]) -> tuple[list[Any], Status | None]: ...
