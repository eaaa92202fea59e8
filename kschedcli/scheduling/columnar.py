"""A cycle kept in numpy columns, for long runs that read only a cycle's verdict and node.

`Scheduler.schedule` builds, for every cycle, what an explanation needs: each plugin's verdict
and score on each node, as lists and status objects. A sweep's scenario (whatif/sweep.py) runs
tens of thousands of cycles and reads only whether each pod fit and where; at thousands of
nodes most of a cycle's time goes into those per-node lists. The columnar cycle decides the
same pods the same way with a handful of array operations over the nodes:

- PreFilter and PreScore run as in every cycle (the plugins' own code, their state in the
  CycleState, marked `explained = False`: what plugins gather only for an explanation is left
  out);
- a filter plugin whose verdicts per class of pods depend on the node alone (NodeUnschedulable,
  NodeName, TaintToleration, NodeAffinity) is read from its equivalence-class column as a
  boolean array; NodeResourcesFit compares the snapshot's int64 free columns
  (`fits_array`), PodTopologySpread and InterPodAffinity look a verdict per domain up by the
  label's code, and VolumeBinding decides a pod whose claims are all bound by its PVs'
  affinities (`filter_array`). These run first: when no node passes them all, the pod is
  unschedulable whatever the others say, and the full cycle is left to tell why before any
  node-by-node pass. Any other filter plugin (NodePorts, NodeVolumeLimits, ...) runs as in
  the full cycle, on the nodes every plugin before it in the profile passed (its verdict on
  another node is never that node's first failure, the one the full cycle reports);
- a score plugin gives its raw scores as an array (`score_array`: NodeResourcesFit,
  BalancedAllocation, PodTopologySpread, InterPodAffinity, ImageLocality), from its static
  equivalence column (TaintToleration, NodeAffinity), or through its own list scorer; its
  normalization as an array (`normalize_array`) or through its own; the weighted sum, its best
  nodes and the tie broken by name as `Scheduler._schedule` breaks it.

It answers only where the whole cycle is one it can run: no HTTP extender, no node sampling, no
OpportunisticBatching, no nominated pod, a PreFilter that succeeded without narrowing the nodes,
no filter error, at least one feasible node, and every score in range. Anything else returns
None and the caller runs the full cycle, which also reports an unschedulable pod's statuses and
runs PostFilter (`declined_by` counts why). Each array's arithmetic is the plugins' own, in the
same integer or IEEE float64 operations, so the node chosen is the one the full cycle chooses:
`tests/scheduling/test_columnar.py` runs both on random clusters, cycle by cycle, and sweeps
with and without it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..framework.cycle_state import CycleState
from ..framework.interface import MAX_NODE_SCORE, Plugin
from ..framework.result import CycleResult
from ..framework.runtime import Framework, PluginError, passes_array
from ..framework.status import ERROR

if TYPE_CHECKING:
    from ..api.model import Pod
    from .scheduler import Scheduler

FIT = "NodeResourcesFit"


class ColumnarCycle:
    """Scheduler.schedule(pod, with_details=False) for the cycles it can run (see the module)."""

    def __init__(self, scheduler: Scheduler, np: Any):
        self.scheduler = scheduler
        self.np = np
        self.ran = 0  # cycles answered here
        self.declined = 0  # cycles left to the full cycle
        self.declined_by: Counter[str] = Counter()  # why: "nominated", "PreFilter", a plugin's name, ...
        self._plugin_names: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}  # per profile: filter, score

    def applies(self, fw: Framework) -> bool:
        s = self.scheduler
        return s.extenders is None and s.sampling is None and fw.name not in s.batches

    def run(self, fw: Framework, pod: Pod, seed: int | None) -> CycleResult | None:
        """The cycle's result (slim: no per-node tables), or None for the full cycle to run."""
        try:
            res = self._run(fw, pod, seed)
        except (OverflowError, PluginError) as e:
            # a value beyond int64, or a plugin's error: the full cycle reports it
            res = type(e).__name__
        if isinstance(res, str):
            self.declined += 1
            self.declined_by[res] += 1
            return None
        self.ran += 1
        return res

    def _run(self, fw: Framework, pod: Pod, seed: int | None) -> CycleResult | str:
        """The result, or why the full cycle must run."""
        s = self.scheduler
        np = self.np
        if s.nominator or s.nominator.status_node(pod):
            return "nominated pods"
        snapshot = s.snapshot
        nodes = snapshot.node_infos
        state = CycleState()
        state.explained = False
        pf = fw.run_pre_filter(state, pod)
        if pf.status is not None or (pf.result is not None and not pf.result.all_nodes()):
            return "PreFilter"
        skip = state.skip_filter_plugins
        plugins = [pl for pl in fw.filter_plugins if pl.name not in skip]
        # the plugins that decide every node at once first: when no node passes them all, the
        # pod is unschedulable whatever the others say (the full cycle tells why)
        arrays = [self._filter_array(fw, pl, state, pod) for pl in plugins]
        probe = None
        for verdicts in arrays:
            if verdicts is not None:
                if probe is None:
                    probe = verdicts.copy()  # (the plugins' arrays are theirs: anded into a copy)
                else:
                    probe &= verdicts
        if probe is None:
            probe = np.ones(len(nodes), dtype=bool)
        if not probe.any():
            return "unschedulable"
        # with every plugin's verdicts at hand the mask is the probe; else it is made again in the
        # profile's order, each other plugin run on the nodes the plugins before it passed
        node_by_node = any(verdicts is None for verdicts in arrays)
        mask = np.ones(len(nodes), dtype=bool) if node_by_node else probe
        for pl, verdicts in zip(plugins, arrays) if node_by_node else ():
            if verdicts is not None:
                mask &= verdicts
                continue
            # any other plugin, on the nodes every plugin before it passes (the profile's order):
            # its error on one of them would be that node's first failure, which the full cycle
            # reports; on the other nodes the full cycle's verdict is an earlier plugin's
            left = np.flatnonzero(mask)
            if not len(left):
                break
            col = fw.filter_column(pl, state, pod, list(map(nodes.__getitem__, left.tolist())))
            failing = set(filter(None, col))
            if failing:
                if any(st.code == ERROR for st in failing):
                    return "error"
                mask[left[~passes_array(col, np)]] = False
        at = np.flatnonzero(mask)
        if not len(at):
            return "unschedulable"  # unschedulable: the full cycle tells why and runs PostFilter
        names_of = self._plugin_names.get(fw.name)
        if names_of is None:
            names_of = self._plugin_names[fw.name] = (
                tuple(p.name for p in fw.filter_plugins),
                tuple(p.name for p in fw.score_plugins),
            )
        res = CycleResult(
            pod=pod,
            profile=fw.name,
            schedulable=True,
            pre_filter=None,
            filter_plugins=list(names_of[0]),
            score_plugins=list(names_of[1]),
        )
        res.pre_filter_plugins = pf.plugin_statuses
        res.pre_filter_skipped = sorted(pf.skipped)
        names = snapshot.names
        if len(at) == 1:
            res.top_nodes = [names[int(at[0])]]
            res.selected_node = res.top_nodes[0]
            return self._decided(res)
        positions: Any = _Lazy(len(at), at.tolist)
        feasible: Any = (
            nodes if len(at) == len(nodes) else _Lazy(len(at), lambda: list(map(nodes.__getitem__, positions)))
        )
        total = None  # the weighted sum (no plugin's array changed in place)
        if fw.score_plugins:
            state.score_positions_array = (positions, at)  # (the plugins' PreScore may read it)
            st = fw.run_pre_score(state, pod, feasible, positions)
            res.pre_score_skipped = sorted(state.skip_score_plugins)
            res.pre_score = st
            if st is not None:
                return "PreScore"  # PreScore's error: the full cycle reports it
            for scorer in fw.score_plugins:
                if scorer.name in state.skip_score_plugins or _plugin(scorer).constant_array_scores(state, pod):
                    continue
                normalized = self._scores(fw, scorer, state, pod, feasible, positions, at)
                if normalized is None:
                    return scorer.name
                weight = fw.weights.get(scorer.name, 1)
                part = normalized if weight == 1 else weight * normalized
                total = part if total is None else total + part
        if total is None:
            total = np.zeros(len(at), dtype=np.int64)
        best = total.max()
        ties = at[total == best]
        if len(ties) == 1:
            res.top_nodes = [names[int(ties[0])]]
        else:
            ranks = snapshot.name_ranks(np)
            res.top_nodes = list(map(names.__getitem__, ties[np.argsort(ranks[ties])].tolist()))
        if seed is None or len(res.top_nodes) == 1:
            res.selected_node = res.top_nodes[0]
        else:
            from .scheduler import reservoir_pick

            res.selected_node = reservoir_pick(res.top_nodes, seed)
        return self._decided(res)

    def _filter_array(self, fw: Framework, pl: Any, state: CycleState, pod: Pod) -> Any:
        """The filter plugin's verdicts on every node of the snapshot as a boolean array, where it
        has them so (None: it runs node by node)."""
        np = self.np
        fits = getattr(pl, "fits_array", None)
        if pl.name == FIT and fits is not None:
            return fits(state, pod, np)
        own = getattr(pl, "filter_array", None)
        if own is not None:
            return own(state, pod, np)
        return fw.static_filter_array(pl, state, pod, np)

    def _decided(self, res: CycleResult) -> CycleResult:
        """A cycle answered here counts as the scheduler's cycle (a declined one is counted by
        the full cycle that runs instead), and leaves none of the full cycle's per-cycle state."""
        s = self.scheduler
        s.cycles += 1
        s.last_scored = None
        s._feasible_at = None
        return res

    def _scores(
        self, fw: Framework, pl: Any, state: CycleState, pod: Pod, feasible: Any, positions: Any, at: Any
    ) -> Any:
        """One score plugin's normalized scores of the feasible nodes, an int64 array; None when
        one is out of range (the full cycle raises the framework's error)."""
        np = self.np
        state.score_positions = positions
        state.score_positions_array = (positions, at)
        # in range as made: the plugin's own arrays, where it says they are (Plugin.array_scores_in_range)
        in_range = pl.array_scores_in_range(state)
        try:
            make = getattr(pl, "score_array", None)
            raw = make(state, pod, feasible) if make is not None else None
            if raw is None:
                raw = fw.static_score_array(pl, state, pod, feasible, positions, at, np)
            if raw is None:
                raw = np.array(fw.score_nodes(pl, state, pod, feasible, positions), dtype=np.int64)
                in_range = False
            if pl.name in fw.batch_normalizers or pl.name in fw.normalizers:
                normalize = getattr(pl, "normalize_array", None)
                normalized = normalize(state, pod, raw, at) if normalize is not None else None
                if normalized is None:
                    names = list(map(fw.handle.snapshot.names.__getitem__, positions))
                    out = fw.normalized(pl, state, pod, feasible, raw.tolist(), names)[2]
                    normalized = np.array(out, dtype=np.int64)
                    in_range = False
            else:
                normalized = raw
        finally:
            state.score_positions = None
        if not in_range and len(normalized) and (normalized.min() < 0 or normalized.max() > MAX_NODE_SCORE):
            return None
        return normalized


def _plugin(pl: Any) -> Plugin:
    """A profile's plugin as the Plugin it is (the extension points' Protocols name only their
    own methods)."""
    return pl


class _Lazy(Sequence):
    """A list made only when a plugin reads it (`make()`), its length known before: the feasible
    positions (CycleState.score_positions; the array scorers read the array itself) and the
    feasible NodeInfos (PreScore and the array scorers read only how many there are)."""

    __slots__ = ("_length", "_make", "_list")

    def __init__(self, length: int, make: Callable[[], list]):
        self._length = length
        self._make = make
        self._list: list | None = None

    def _made(self) -> list:
        made = self._list
        if made is None:
            made = self._list = self._make()
        return made

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, i):
        return self._made()[i]

    def __iter__(self):
        return iter(self._made())
