"""What a fix is: a change to the pod or to the cluster, and what the cycle that verified it decided.

Renderers read these (render/terminal/fixes.py, render/document.py); the search that makes them is
fixes/search.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# kinds of change, in the order they are preferred when they do as well: first what widens where the
# pod may go without changing what it runs with, then what it asks for, then cluster changes that
# add room, last what weighs on other workloads (their pods evicted, a taint that guarded them gone)
KIND_RANK = {
    "toleration": 1,
    "nodeSelector": 2,
    "nodeAffinity": 2,
    "topologySpread": 3,
    "uncordon": 4,
    "resources": 5,
    "hostPorts": 6,
    "addNode": 7,
    "podAffinity": 8,
    "podAntiAffinity": 8,
    "priorityClass": 9,
    "removeTaint": 10,
    "evict": 11,
}


def needs_fixing(result) -> bool:
    """Unschedulable, or schedulable only through preemption (an error is not a fit problem)."""
    return not result.schedulable and not result.error


@dataclass
class Change:
    """One candidate change. A pod change is `mutate` (a function changing a copy of the pod's
    object in place); a cluster change is `edits` (flag, value) as the command line spells them."""

    kind: str
    summary: str
    mutate: Callable[[dict], None] | None = None
    edits: list[tuple[str, str]] = field(default_factory=list)
    # the nodes the change is expected to open, from the cycle's statuses (a hint for ordering;
    # the verifying cycle decides)
    opens: int = 0
    size: int = 1  # how many changes it makes (several requests lowered together count each)
    # 0 for the first candidate of its kind, 1 for the second, ...: one of each kind is tried (and
    # shown) before a second of any (a second toleration says little the first did not)
    repeat: int = 0

    @property
    def rank(self) -> int:
        return KIND_RANK.get(self.kind, 99)


@dataclass
class Verdict:
    """What the verifying cycle decided: the fields `ksched explain -o json` carries under the same
    names (feasibleNodes sorted, as there)."""

    schedulable: bool
    selected_node: str | None
    feasible_nodes: list[str]
    nominated_node: str | None = None  # preemption's, when the change works through it
    victims: list[str] = field(default_factory=list)

    def doc(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schedulable": self.schedulable,
            "selectedNode": self.selected_node,
            "feasibleNodes": list(self.feasible_nodes),
        }
        if self.nominated_node is not None:
            d["nominatedNode"] = self.nominated_node
            d["victims"] = list(self.victims)
        return d


@dataclass
class Suggestion:
    """A change a real cycle confirmed: `changes` (one, or two when no single one sufficed), the
    merge patch against the pod as given (pod changes) or the edits (cluster changes)."""

    changes: list[Change]
    verdict: Verdict
    patch: dict | None = None
    edits: list[str] = field(default_factory=list)  # "--flag value", as the command line spells them

    @property
    def kind(self) -> str:
        return "+".join(c.kind for c in self.changes)

    @property
    def summary(self) -> str:
        return "; ".join(c.summary for c in self.changes)

    def sort_key(self) -> tuple:
        v = self.verdict
        return (
            sum(c.size for c in self.changes),
            max(c.repeat for c in self.changes),
            max(c.rank for c in self.changes),
            0 if v.schedulable else 1,
            -len(v.feasible_nodes),
            self.summary,
        )

    def doc(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "summary": self.summary}
        if self.patch is not None:
            d["patch"] = self.patch
        if self.edits:
            d["edits"] = list(self.edits)
        d["result"] = self.verdict.doc()
        d["verified"] = True
        return d


@dataclass
class FixSearch:
    """The search's outcome: the suggestions kept (best first) and how much it tried."""

    suggestions: list[Suggestion]
    candidates: int = 0  # changes considered
    verified: int = 0  # cycles run to check them
    combined: bool = False  # no single change sufficed: pairs were tried
    notes: list[str] = field(default_factory=list)  # why some kinds were not tried

    def doc(self) -> list[dict[str, Any]]:
        return [s.doc() for s in self.suggestions]
