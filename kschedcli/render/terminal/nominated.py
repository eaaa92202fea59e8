"""The explain view's part on nominated pods: which pods waiting for a node (after a preemption)
counted when the pod was filtered there, and how the two filter passes went."""

from __future__ import annotations

from typing import Any

from ..richsafe import Text
from .layout import section


def _failure(result, node: str):
    filters = result.filters
    return filters[node].first_failure if node in filters else None


def _pass_text(st) -> tuple[str, str]:
    if st is None:
        return "passed", "ok"
    return f"{st.plugin or 'failed'}: {'; '.join(st.reasons) or st.code}", "bad"


def nominated_lines(result, node: str | None = None) -> list[Any]:
    """One line per node where nominated pods counted (only `node` when given), and the first try
    on the pod's own nominated node; nothing when neither happened."""
    out: list[Any] = []
    tried = result.nominated_node_tried
    rows = {n: v for n, v in result.nominated.items() if node is None or n == node}
    if not rows and (tried is None or (node is not None and node != tried)):
        return out
    out.append(
        section(
            "Nominated pods",
            f"waiting for the node they preempted on; those of priority ≥ "
            f"{result.pod.priority} count there as if running (scores never see them)",
        )
    )
    if tried is not None:
        t = Text("  ")
        t.append("first try ", style="muted")
        t.append(tried, style="node bold")
        t.append(" (the pod's status.nominatedNodeName): ", style="muted")
        if list(result.filters) == [tried] and result.selected_node == tried:
            t.append("fits, taken without filtering or scoring any other node", style="ok")
        else:
            t.append("does not fit; every node filtered", style="warn")
        out.append(t)
    for n in sorted(rows):
        v = rows[n]
        t = Text("  ")
        t.append(n, style="node bold")
        t.append("  " + ", ".join(v.pods) + "  ", style="")
        failure = _failure(result, n)
        if not v.second_pass:
            t.append("first pass (with them): ", style="muted")
            msg, style = _pass_text(failure)
            t.append(msg, style=style)
            t.append("; no second pass", style="muted")
        else:
            t.append("first pass (with them): ", style="muted")
            t.append("passed", style="ok")
            t.append("; second pass (without them): ", style="muted")
            msg, style = _pass_text(failure)
            t.append(msg, style=style)
        out.append(t)
    return out
