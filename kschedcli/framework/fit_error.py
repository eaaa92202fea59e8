"""FitError's message (framework/types.go): why no node was available for a pod.

The scheduler writes it into a cycle's result, and DefaultPreemption into its own status when no
candidate is left; both build it here, so a plugin needs nothing from the scheduler."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runtime import NodeStatuses

NO_NODE_AVAILABLE = "0/{} nodes are available:"


def fit_error_message(num_nodes: int, prefilter_msg: str, statuses: NodeStatuses | None, post_filter_msg: str) -> str:
    """FitError.Error(): reasons counted over nodes, each `count reason`, sorted as strings."""
    msg = NO_NODE_AVAILABLE.format(num_nodes)
    if prefilter_msg:
        msg += f" {prefilter_msg}."
    elif statuses is not None:
        counts: dict[str, int] = {}
        # nodes failing alike often share one status: count each status object's nodes first
        # (a Status hashes by identity)
        for st, n in Counter(statuses.values()).items():
            for r in st.reasons:
                counts[r] = counts.get(r, 0) + n
        absent = num_nodes - len(statuses)
        if absent > 0:
            for r in statuses.absent.reasons:
                counts[r] = counts.get(r, 0) + absent
        parts = sorted(f"{v} {k}" for k, v in counts.items())
        if parts:
            msg += f" {', '.join(parts)}."
    if post_filter_msg:
        msg += f" {post_filter_msg}"
    return msg
