"""The result model: what one scheduling cycle decided and why. Renderers read only this."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .interface import NamedPlugin
from .status import Status

if TYPE_CHECKING:
    from ..api.model import Pod
    from .cycle_state import CycleState


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
class NominatedOnNode:
    """The nominated pods counted on one node (the two passes of RunFilterPluginsWithNominatedPods)."""

    pods: list[str]  # namespace/name of each, in the order they were nominated
    second_pass: bool  # the first pass (with them) passed, so the filters ran again without
    first_try: bool = False  # the node was the pod's own nominated node, tried before the others


class _NodeTable(Mapping):
    """A read-only mapping over node names (in `names` order), the values made when read."""

    __slots__ = ("names", "_index")

    def __init__(self, names: list[str], index: dict[str, int] | None):
        """`index`: name -> position in `names` (None: made on first use)."""
        self.names = names
        self._index = index

    @property
    def index(self) -> dict[str, int]:
        index = self._index
        if index is None:
            index = self._index = {n: i for i, n in enumerate(self.names)}
        return index

    def __contains__(self, name) -> bool:
        return name in self.index

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class _NotAsked:
    """A column's entry for a node its extender was never sent (it failed before)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_ASKED"


NOT_ASKED: Any = _NotAsked()


class FilterTable(_NodeTable):
    """node name -> NodeFilter for every evaluated node, kept as one column per filter plugin
    (each a list in node order; an extender's column after them, NOT_ASKED where it was not
    asked) and the nodes' first failures; rows are made when read."""

    __slots__ = ("columns", "first")

    def __init__(self, names: list[str], index: dict[str, int], columns: dict[str, list], first: list):
        super().__init__(names, index)
        self.columns = columns
        self.first = first

    def __getitem__(self, name: str) -> NodeFilter:
        i = self.index[name]
        return NodeFilter(self.first[i], {p: col[i] for p, col in self.columns.items() if col[i] is not NOT_ASKED})

    def ran(self) -> set[str]:
        """The plugins (and extenders) with an entry for some node: {p for nf in self.values() for
        p in nf.plugins}, without making the rows."""
        return {p for p, col in self.columns.items() if any(v is not NOT_ASKED for v in col)}


class ScoreTable(_NodeTable):
    """node name -> {plugin: PluginScore} for every scored node, kept as columns per plugin:
    (plugin, raw scores, normalized scores, weight), the lists in `names` order."""

    __slots__ = ("columns",)

    def __init__(
        self, names: list[str], columns: list[tuple[str, list, list, int]], index: dict[str, int] | None = None
    ):
        """`index`: name -> position in `names`, when the caller has it (the snapshot's)."""
        super().__init__(names, index)
        self.columns = columns

    def __getitem__(self, name: str) -> dict[str, PluginScore]:
        i = self.index[name]
        return {pl: PluginScore(raw[i], norm[i], w, norm[i] * w) for pl, raw, norm, w in self.columns}

    def weights(self) -> dict[str, int]:
        """plugin -> weight of every plugin some node has a score of (each row has them all), in
        column order, without making the rows."""
        return {pl: w for pl, _, _, w in self.columns} if self.names else {}


class TotalsTable(_NodeTable):
    """node name -> total score for every scored node: the totals as a list in the score table's
    order, looked up through its index (made when first read, and shared)."""

    __slots__ = ("table", "in_order")

    def __init__(self, table: ScoreTable, in_order: list[int]):
        super().__init__(table.names, None)
        self.table = table
        self.in_order = in_order

    @property
    def index(self) -> dict[str, int]:
        return self.table.index

    def __getitem__(self, name: str) -> int:
        return self.in_order[self.table.index[name]]


class Candidate:
    """A node where evicting `pods` (model.Pod, in kube-scheduler's victim order) lets the pod
    fit. Their keys and priorities are read from the pods when first asked for: a dry run over
    thousands of nodes makes a candidate for each, and most are never shown."""

    __slots__ = ("node", "pods", "pdb_violations", "decided_by", "_victims", "_priorities")

    def __init__(self, node: str, pods: list, pdb_violations: int, decided_by: str = ""):
        self.node = node
        self.pods = pods
        self.pdb_violations = pdb_violations
        self.decided_by = decided_by  # the criterion that ranked it below the nominated node
        self._victims: list[str] | None = None
        self._priorities: list[int] | None = None

    @property
    def victims(self) -> list[str]:
        """namespace/name of each pod to evict."""
        if self._victims is None:
            self._victims = [p.key for p in self.pods]
        return self._victims

    @property
    def victim_priorities(self) -> list[int]:
        if self._priorities is None:
            self._priorities = [p.priority for p in self.pods]
        return self._priorities

    def __repr__(self) -> str:
        return f"Candidate({self.node}, victims={self.victims}, pdb_violations={self.pdb_violations})"


class NodeWhys(MutableMapping):
    """node name -> why preemption cannot help there, for the nodes whose entry in `whys` (in
    the order of `names`) is not None, made into a dict when first read: most cycles' results
    are never shown, and at 5,000 nodes the dict is a large part of PostFilter's own work. Entries
    set before that are laid over it then."""

    __slots__ = ("_names", "_whys", "_later", "_made")

    def __init__(self, names: list[str], whys: list):
        self._names = names
        self._whys = whys
        self._later: dict[str, str] = {}
        self._made: dict[str, str] | None = None

    def _dict(self) -> dict[str, str]:
        made = self._made
        if made is None:
            made = self._made = dict(compress(zip(self._names, self._whys), self._whys))  # (a why is never empty)
            made.update(self._later)
            self._names = self._whys = []
        return made

    def __setitem__(self, name: str, why: str) -> None:
        if self._made is None:
            self._later[name] = why
        else:
            self._made[name] = why

    def __getitem__(self, name: str) -> str:
        return self._dict()[name]

    def __delitem__(self, name: str) -> None:
        del self._dict()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())


@dataclass
class PreemptionResult:
    nominated_node: str | None
    victims: list[str]
    equally_good: list[Candidate]
    message: str
    candidates: list[Candidate] = field(default_factory=list)
    not_helpful: MutableMapping[str, str] = field(default_factory=dict)  # node -> why preemption cannot help
    ineligible: str = ""
    # the dry run's extent: nodes where preemption might help, how many candidates kube-scheduler
    # would look for (minCandidateNodesPercentage / minCandidateNodesAbsolute), how many ksched tried
    potential_nodes: int | None = None
    num_candidates: int = 0
    evaluated_nodes: int = 0
    # with kube-scheduler's candidate sampling on (--preemption-sampling): the dry run's offset
    sampling_offset: int | None = None


@dataclass
class ExtenderCall:
    """One HTTP extender's part in a cycle (kschedcli/scheduling/extenders.py): `verb` filter, prioritize,
    preempt or bind; `outcome` ok, error (the cycle failed with it), ignored (an ignorable
    extender's error: skipped, as kube-scheduler skips it), not-interested (no managed resource
    asked for: not called) or not-called (bind: ksched binds nothing). `detail` is the call's
    JSON-ready account (nodes sent, passed, failed with messages, scores, candidates)."""

    extender: str  # its name: the urlPrefix
    verb: str
    outcome: str
    error: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class CycleResult:
    pod: Any  # model.Pod
    profile: str
    schedulable: bool
    pre_filter: Status | None
    pre_filter_plugins: dict[str, Status] = field(default_factory=dict)
    pre_filter_skipped: list[str] = field(default_factory=list)
    filters: Mapping[str, NodeFilter] = field(default_factory=dict)
    feasible: list[str] = field(default_factory=list)
    scores: Mapping[str, dict[str, PluginScore]] = field(default_factory=dict)
    totals: Mapping[str, int] = field(default_factory=dict)  # (a TotalsTable when scored)
    score_plugins: list[str] = field(default_factory=list)
    top_nodes: list[str] = field(default_factory=list)
    selected_node: str | None = None
    message: str = ""
    preemption: PreemptionResult | None = None
    filter_plugins: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # per-plugin explanations (spread arithmetic, ...)
    events: dict[str, list[str]] = field(default_factory=dict)  # plugin -> cluster events that may help
    error: str = ""
    # nodes where nominated pods of at least the pod's priority counted, in the order they were filtered
    nominated: dict[str, NominatedOnNode] = field(default_factory=dict)
    nominated_node_tried: str | None = None  # status.nominatedNodeName, filtered first (evaluateNominatedNode)
    attempt: int | None = None  # the pod's attempt in a sequence carrying preemption out (1 for the first)
    suggestions: Any = None  # fixes.FixSearch: what would make it fit, when asked for (explain --fixes)
    # HTTP extenders: each call of the cycle in order; the extenders whose filter verdicts are
    # columns of `filters` and whose scores are columns of `scores` (after the plugins')
    extender_calls: list[ExtenderCall] = field(default_factory=list)
    filter_extenders: list[str] = field(default_factory=list)
    score_extenders: list[str] = field(default_factory=list)
    # --no-extenders: the extenders left out, each {"extender": name, "verbs": {verb: path}}
    extenders_left_out: list[dict[str, Any]] = field(default_factory=list)
    # PreScore: the plugins that returned Skip for the pod (their Score did not run), None when
    # PreScore did not run (fewer than two feasible nodes, no score plugin, a cycle cut short);
    # the PreScore status that ended the cycle, else None
    pre_score_skipped: list[str] | None = None
    pre_score: Status | None = None
    # a bound pod given as input, scheduled as if created again (cli_common): its former node and
    # nominated node, and whether it was taken out of the snapshot
    input_unbound: dict[str, Any] | None = None
    # node sampling (scheduling/sampling.py SamplingInfo): the cycle's search, None when every
    # node is filtered and every feasible node scored
    sampling: Any = None
    # explain on 100+ nodes: what sampling would select over every start index (sampling.outlook)
    sampling_outlook: dict[str, Any] | None = None


@runtime_checkable
class Explainer(NamedPlugin, Protocol):
    """A plugin that adds its account of a finished cycle to the result (`details[plugin name]`);
    None or an empty value adds nothing. It never changes the verdict. (ksched's own hook.)"""

    def explain(self, state: CycleState, pod: Pod, result: CycleResult) -> Any: ...
