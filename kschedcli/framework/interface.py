"""Plugin interfaces. A plugin implements an extension point by defining its method.

Methods (all optional; None means Success, as kube-scheduler's nil *Status):
  pre_enqueue(pod) -> Status | None
  pre_filter(state, pod, nodes) -> (PreFilterResult | None, Status | None)
  add_pod(state, pod, pod_to_add, node_info) / remove_pod(...) -> Status | None   (PreFilterExtensions)
  filter(state, pod, node_info) -> Status | None
  post_filter(state, pod, node_statuses) -> (PostFilterResult | None, Status)
  pre_score(state, pod, feasible_node_infos) -> Status | None
  score(state, pod, node_info) -> (int, Status | None)
  normalize_score(state, pod, scores: dict[node name, int]) -> Status | None
  events_to_register() -> list[ClusterEvent]

A plugin may also decide many nodes in one call, for speed; the framework then uses these, and they
must agree with filter/score node by node (tests/test_batch_columns.py holds them to it):
  filter_nodes(state, pod, node_infos) -> list[Status | None]        (in the order of node_infos)
  score_nodes(state, pod, node_infos) -> (list[int], Status | None)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runtime import Handle

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = (1 << 63) - 1

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

    def merge(self, other: "PreFilterResult | None") -> "PreFilterResult":
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
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

    def __init__(self, args: dict, handle: "Handle"):
        self.args = args
        self.handle = handle

    @classmethod
    def implements(cls, point: str) -> bool:
        method = EXTENSION_METHODS.get(point)
        return method is not None and callable(getattr(cls, method, None))

    def events_to_register(self) -> list[ClusterEvent]:
        return []
