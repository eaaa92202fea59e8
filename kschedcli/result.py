"""The result model: what one scheduling cycle decided and why. Renderers read only this."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
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


class _NodeTable(Mapping):
    """A read-only mapping over node names (in `names` order), the values made when read."""

    __slots__ = ("names", "index")

    def __init__(self, names: list[str], index: dict[str, int]):
        self.names = names
        self.index = index

    def __contains__(self, name) -> bool:
        return name in self.index

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class FilterTable(_NodeTable):
    """node name -> NodeFilter for every evaluated node, kept as one column per filter plugin
    (each a list in node order) and the nodes' first failures; rows are made when read."""

    __slots__ = ("columns", "first")

    def __init__(self, names: list[str], index: dict[str, int], columns: dict[str, list], first: list):
        super().__init__(names, index)
        self.columns = columns
        self.first = first

    def __getitem__(self, name: str) -> NodeFilter:
        i = self.index[name]
        return NodeFilter(self.first[i], {p: col[i] for p, col in self.columns.items()})


class ScoreTable(_NodeTable):
    """node name -> {plugin: PluginScore} for every scored node, kept as columns per plugin:
    (plugin, raw scores, normalized scores, weight), the lists in `names` order."""

    __slots__ = ("columns",)

    def __init__(self, names: list[str], columns: list[tuple[str, list, list, int]]):
        super().__init__(names, {n: i for i, n in enumerate(names)})
        self.columns = columns

    def __getitem__(self, name: str) -> dict[str, PluginScore]:
        i = self.index[name]
        return {pl: PluginScore(raw[i], norm[i], w, norm[i] * w) for pl, raw, norm, w in self.columns}


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
    filters: Mapping[str, NodeFilter] = field(default_factory=dict)
    feasible: list[str] = field(default_factory=list)
    scores: Mapping[str, dict[str, PluginScore]] = field(default_factory=dict)
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
