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

# who makes a change of each kind (issue 28): the pod's owner changes the pod (for a workload, its
# pod template: every replica changes alike); what changes nodes, their taints or other workloads'
# pods is the cluster admin's. An HTTP extender's verdict is its owner's: no change is suggested
# for it, the search names the owner (FixSearch.out_of_reach)
POD_OWNER = "pod-owner"
CLUSTER_ADMIN = "cluster-admin"
EXTENDER_OWNER = "extender-owner"
ACTOR_OF_KIND = {
    "uncordon": CLUSTER_ADMIN,
    "addNode": CLUSTER_ADMIN,
    "removeTaint": CLUSTER_ADMIN,
    "evict": CLUSTER_ADMIN,
}
ACTOR_WORDS = {POD_OWNER: "the pod's owner", CLUSTER_ADMIN: "the cluster admin", EXTENDER_OWNER: "the extender's owner"}


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

    @property
    def actor(self) -> str:
        """Who makes it: POD_OWNER for a pod change, else CLUSTER_ADMIN."""
        return ACTOR_OF_KIND.get(self.kind, POD_OWNER if self.mutate is not None else CLUSTER_ADMIN)


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

    @property
    def actors(self) -> list[str]:
        """Who has to act, each once, in the changes' order."""
        return list(dict.fromkeys(c.actor for c in self.changes))

    @property
    def who(self) -> str:
        """Who has to act, in words ("the pod's owner and the cluster admin")."""
        return " and ".join(ACTOR_WORDS.get(a, a) for a in self.actors)

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
        d: dict[str, Any] = {"kind": self.kind, "summary": self.summary, "actors": self.actors}
        if self.patch is not None:
            d["patch"] = self.patch
        if self.edits:
            d["edits"] = list(self.edits)
        d["result"] = self.verdict.doc()
        d["verified"] = True
        return d


@dataclass
class OutOfReach:
    """Nodes only someone other than the pod's owner can open, for which ksched suggests nothing
    (an HTTP extender rejected them: what it looks at is its own)."""

    actor: str
    extender: str
    nodes: list[str]
    reasons: list[str]  # the extender's messages, each once, sorted

    @property
    def summary(self) -> str:
        n = len(self.nodes)
        shown = ", ".join(self.nodes[:3]) + (f", … +{n - 3} more" if n > 3 else "")
        why = "; ".join(f'"{r}"' for r in self.reasons[:3]) + (" …" if len(self.reasons) > 3 else "")
        return (
            f"the extender {self.extender} rejected {n} node{'s' if n != 1 else ''} ({shown})"
            + (f": {why}" if why else "")
            + f"; only {ACTOR_WORDS[self.actor]} can change that"
        )

    def doc(self) -> dict[str, Any]:
        return {
            "actor": self.actor,
            "extender": self.extender,
            "nodes": list(self.nodes),
            "reasons": list(self.reasons),
            "summary": self.summary,
        }


@dataclass
class FixSearch:
    """The search's outcome: the suggestions kept (best first) and how much it tried."""

    suggestions: list[Suggestion]
    candidates: int = 0  # changes considered
    verified: int = 0  # cycles run to check them
    combined: bool = False  # no single change sufficed: pairs were tried
    notes: list[str] = field(default_factory=list)  # why some kinds were not tried
    # nodes no suggestion aims at, and who could open them (an extender's owner)
    out_of_reach: list[OutOfReach] = field(default_factory=list)

    def doc(self) -> list[dict[str, Any]]:
        return [s.doc() for s in self.suggestions]

    def out_of_reach_doc(self) -> list[dict[str, Any]]:
        return [o.doc() for o in self.out_of_reach]
