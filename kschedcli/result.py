"""The result model: what one scheduling cycle decided and why. Renderers read only this."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .framework.status import Status


@dataclass
class PluginScore:
    raw: int
    normalized: int
    weight: int
    weighted: int


@dataclass
class NodeFilter:
    first_failure: Status | None
    plugins: dict[str, Status | None]


@dataclass
class Candidate:
    node: str
    victims: list[str]
    pdb_violations: int
    victim_priorities: list[int] = field(default_factory=list)
    decided_by: str = ""          # the criterion that ranked it below the nominated node
    pods: list[Any] = field(default_factory=list, repr=False, compare=False)  # the victims (model.Pod)


@dataclass
class PreemptionResult:
    nominated_node: str | None
    victims: list[str]
    equally_good: list[Candidate]
    message: str
    candidates: list[Candidate] = field(default_factory=list)
    not_helpful: dict[str, str] = field(default_factory=dict)   # node -> why preemption cannot help
    ineligible: str = ""
    # the dry run's extent: nodes where preemption might help, how many candidates kube-scheduler
    # would look for (minCandidateNodesPercentage / minCandidateNodesAbsolute), how many ksched tried
    potential_nodes: int | None = None
    num_candidates: int = 0
    evaluated_nodes: int = 0


@dataclass
class CycleResult:
    pod: Any                                  # model.Pod
    profile: str
    schedulable: bool
    pre_filter: Status | None
    pre_filter_plugins: dict[str, Status] = field(default_factory=dict)
    pre_filter_skipped: list[str] = field(default_factory=list)
    filters: dict[str, NodeFilter] = field(default_factory=dict)
    feasible: list[str] = field(default_factory=list)
    scores: dict[str, dict[str, PluginScore]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    score_plugins: list[str] = field(default_factory=list)
    top_nodes: list[str] = field(default_factory=list)
    selected_node: str | None = None
    message: str = ""
    preemption: PreemptionResult | None = None
    filter_plugins: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)   # per-plugin explanations (spread arithmetic, ...)
    events: dict[str, list[str]] = field(default_factory=dict)  # plugin -> cluster events that may help
    error: str = ""
