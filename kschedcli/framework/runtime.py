"""The framework runtime: one profile's plugins in order, run at each extension point."""

from __future__ import annotations

import operator
from collections import deque
from itertools import compress, repeat
from operator import is_
from typing import TYPE_CHECKING, Any, cast

from ..config.versions import REFERENCE, Release
from .cycle_state import CycleState
from .equivalence import UNKNOWN, EquivalenceCache
from .interface import (
    MAX_NODE_SCORE,
    BatchFilterPlugin,
    BatchNormalizePlugin,
    BatchScorePlugin,
    FilterPlugin,
    Plugin,
    PostFilterPlugin,
    PostFilterResult,
    PreemptionExtenders,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ScoreExtensions,
    ScorePlugin,
    ScoresInRange,
)
from .status import ERROR, SUCCESS, UNRESOLVABLE, UNSCHEDULABLE, Status

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..backend.nominator import Nominator
    from ..backend.snapshot import NodeInfo, Snapshot
    from ..config.scheduler import Profile
    from ..inputs.cluster import Cluster


class Handle:
    """What plugins may reach beyond their args: the snapshot, the cluster's objects, the framework,
    and the kube-scheduler release whose behaviour they follow."""

    def __init__(
        self, snapshot: Snapshot, cluster: Cluster, release: Release = REFERENCE, nominator: Nominator | None = None
    ):
        self.snapshot = snapshot
        self.cluster = cluster
        self.release = release
        self.framework: Framework | None = None
        if nominator is None:
            from ..backend.nominator import Nominator

            nominator = Nominator()
        # the pods waiting for a node they preempted on (NominatedPodsForNode)
        self.nominator = nominator
        # the configured HTTP extenders, as preemption calls them (None: none configured)
        self.extenders: PreemptionExtenders | None = None


class PreFilterOutcome:
    """All PreFilter results: the merged node subset, the rejecting status, each plugin's own status."""

    __slots__ = ("result", "status", "plugin_statuses", "plugins_with_nodes", "skipped")

    def __init__(self):
        self.result: PreFilterResult | None = None
        self.status: Status | None = None
        self.plugin_statuses: dict[str, Status] = {}
        self.plugins_with_nodes: set[str] = set()
        self.skipped: set[str] = set()


_OFFERS: dict[tuple[type, type], bool] = {}


def offers(pl: Any, form: type) -> bool:
    """isinstance(pl, form) for a runtime-checkable Protocol `form`, asked once per plugin class:
    the structural check looks up every member of the protocol, and a what-if sweep builds a
    framework per scenario."""
    key = (type(pl), form)
    found = _OFFERS.get(key)
    if found is None:
        found = _OFFERS[key] = isinstance(pl, form)
    return found


class Framework:
    def __init__(self, profile: Profile, registry: dict[str, type[Plugin]], handle: Handle):
        self.profile = profile
        self.handle = handle
        handle.framework = self
        self.plugins: dict[str, Plugin] = {}
        names: list[str] = []
        for pt in profile.points.values():
            for n in pt:
                if n not in names:
                    names.append(n)
        for n in names:
            self.plugins[n] = registry[n](profile.args.get(n, {}), handle)

        def at(point: str) -> list[Any]:
            # the configuration placed at `point` only plugins that implement it (Plugin.implements)
            return [self.plugins[n] for n in profile.points.get(point, [])]

        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = at("preEnqueue")
        self.queue_sort_plugins: list[QueueSortPlugin] = at("queueSort")
        self.pre_filter_plugins: list[PreFilterPlugin] = at("preFilter")
        self.filter_plugins: list[FilterPlugin] = at("filter")
        self.post_filter_plugins: list[PostFilterPlugin] = at("postFilter")
        self.pre_score_plugins: list[PreScorePlugin] = at("preScore")
        self.score_plugins: list[ScorePlugin] = at("score")
        # the optional forms each plugin offers, asked once (structural checks are not cheap)
        self.pre_filter_extensions_of: dict[str, PreFilterExtensions] = {
            pl.name: cast(PreFilterExtensions, pl) for pl in self.pre_filter_plugins if offers(pl, PreFilterExtensions)
        }
        self.batch_filters: dict[str, BatchFilterPlugin] = {
            pl.name: cast(BatchFilterPlugin, pl) for pl in self.filter_plugins if offers(pl, BatchFilterPlugin)
        }
        self.batch_scorers: dict[str, BatchScorePlugin] = {
            pl.name: cast(BatchScorePlugin, pl) for pl in self.score_plugins if offers(pl, BatchScorePlugin)
        }
        self.normalizers: dict[str, ScoreExtensions] = {
            pl.name: cast(ScoreExtensions, pl) for pl in self.score_plugins if offers(pl, ScoreExtensions)
        }
        self.batch_normalizers: dict[str, BatchNormalizePlugin] = {
            pl.name: cast(BatchNormalizePlugin, pl) for pl in self.score_plugins if offers(pl, BatchNormalizePlugin)
        }
        self.weights = profile.score_weights
        # node-local plugin results shared between cycles of equivalent pods (see equivalence.py)
        self.equivalence = EquivalenceCache()

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    # -- PreEnqueue --------------------------------------------------------------
    def run_pre_enqueue(self, pod: Pod) -> Status | None:
        for pl in self.pre_enqueue_plugins:
            st = pl.pre_enqueue(pod)
            if st is not None and not st.is_success():
                return st.with_plugin(pl.name)
        return None

    # -- PreFilter -----------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Pod) -> PreFilterOutcome:
        out = PreFilterOutcome()
        nodes = self.handle.snapshot.list()
        result: PreFilterResult | None = None
        for pl in self.pre_filter_plugins:
            r, st = pl.pre_filter(state, pod, nodes)
            if st is not None and st.is_skip():
                out.skipped.add(pl.name)
                continue
            if st is not None and not st.is_success():
                st.with_plugin(pl.name)
                out.plugin_statuses[pl.name] = st
                if st.code == UNRESOLVABLE:
                    out.status = st
                    break
                if st.code == UNSCHEDULABLE:
                    out.status = st
                    continue
                out.status = Status(ERROR, f'running PreFilter plugin "{pl.name}": {st.message()}', plugin=pl.name)
                break
            out.plugin_statuses[pl.name] = Status(SUCCESS, plugin=pl.name)
            if r is not None and not r.all_nodes():
                out.plugins_with_nodes.add(pl.name)
            result = r if result is None else result.merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                names = sorted(out.plugins_with_nodes)
                msg = (
                    f"node(s) didn't satisfy plugin {names[0]}"
                    if len(names) == 1
                    else f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                )
                out.status = Status(UNRESOLVABLE, msg)
                out.result = result
                break
        state.skip_filter_plugins = set(out.skipped)
        if out.status is None:
            out.result = result
        return out

    def run_pre_filter_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension("add_pod", "AddPod", state, pod, pod_to_add, node_info)

    def run_pre_filter_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension("remove_pod", "RemovePod", state, pod, pod_to_remove, node_info)

    def pre_filter_extensions(self, method: str, state: CycleState) -> list[tuple[PreFilterExtensions, Any]]:
        """(plugin, its add_pod or remove_pod) of every PreFilter plugin that did not Skip."""
        skip = state.skip_filter_plugins
        extensions = self.pre_filter_extensions_of
        return [
            (ext, getattr(ext, method))
            for pl in self.pre_filter_plugins
            if pl.name not in skip and (ext := extensions.get(pl.name)) is not None
        ]

    def _run_pre_filter_extension(
        self, method: str, go_name: str, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo
    ) -> Status | None:
        """PreFilterExtensions.AddPod/RemovePod of every PreFilter plugin that did not Skip."""
        for pl, fn in self.pre_filter_extensions(method, state):
            st = fn(state, pod, other, node_info)
            if st is not None and not st.is_success():
                return Status(
                    ERROR, f'running {go_name} on PreFilter plugin "{pl.name}": {st.message()}', plugin=pl.name
                )
        return None

    # -- Filter ----------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """kube-scheduler's RunFilterPlugins: stop at the first plugin that does not pass."""
        skip = state.skip_filter_plugins
        for pl in self.filter_plugins:
            if pl.name in skip:
                continue
            st = pl.filter(state, pod, node_info)
            if st is not None and not st.is_success():
                if not st.is_rejected():
                    st = Status(ERROR, f'running "{pl.name}" filter plugin: {st.message()}')
                return st.with_plugin(pl.name)
        return None

    def add_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: list[Pod]
    ) -> tuple[CycleState, NodeInfo] | Status:
        """addGENominatedPods: copies of the cycle state and the node with the given nominated pods
        added (each through the PreFilter extensions' AddPod), or the error status of an AddPod."""
        state_out = state.clone()
        node_out = node_info.clone()
        for p in nominated:
            node_out.add_pod(p)
            st = self.run_pre_filter_add_pod(state_out, pod, p, node_out)
            if st is not None:
                return st
        return state_out, node_out

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: list[Pod]
    ) -> Status | None:
        """RunFilterPluginsWithNominatedPods: with `nominated` (the node's nominated pods of at least
        the pod's priority) the filters run twice, first with those pods added, then, only if every
        filter passed, without them; without nominated pods, once."""
        if not nominated:
            return self.run_filter_plugins(state, pod, node_info)
        added = self.add_nominated_pods(state, pod, node_info, nominated)
        if isinstance(added, Status):
            return added
        st = self.run_filter_plugins(added[0], pod, added[1])
        if st is not None:
            return st
        return self.run_filter_plugins(state, pod, node_info)

    def filter_node_with_nominated_pods(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        nominated: list[Pod],
        without: dict[str, Status | None] | None = None,
    ) -> tuple[Status | None, dict[str, Status | None], bool]:
        """The two passes on one node, every filter plugin (that did not Skip) run on its own:
        (the node's first failure, each plugin's status, whether the second pass ran).

        The first failure is the first pass's, or, when that passed, the second pass's. A plugin's
        status is its status with the nominated pods, or, where that is Success, without them.
        `without`: the plugins' statuses without the nominated pods when already known."""
        skip = state.skip_filter_plugins
        plugins = [pl for pl in self.filter_plugins if pl.name not in skip]
        one = self._filter_one

        def alone() -> dict[str, Status | None]:
            if without is not None:
                return dict(without)
            return {pl.name: one(pl, state, pod, node_info) for pl in plugins}

        if not nominated:
            statuses = alone()
            return _first_failure(statuses), statuses, False
        added = self.add_nominated_pods(state, pod, node_info, nominated)
        if isinstance(added, Status):
            return added, alone(), False
        with_state, with_node = added
        first_pass = {pl.name: one(pl, with_state, pod, with_node) for pl in plugins}
        failure = _first_failure(first_pass)
        second_pass = alone()
        statuses = {
            name: (st if st is not None and st.code != SUCCESS else second_pass.get(name))
            for name, st in first_pass.items()
        }
        if failure is not None:
            return failure, statuses, False
        return _first_failure(second_pass), statuses, True

    def run_filter_columns(self, state: CycleState, pod: Pod) -> tuple[dict[str, list], list]:
        """Every filter plugin that did not Skip, on every node of the snapshot: its verdicts as a
        column in node order, and each node's first failure in profile order (None: feasible).

        A node-local plugin's column comes from its equivalence-class cache (entries of nodes
        changed since are recomputed); a plugin with `filter_nodes` decides the nodes in one call;
        any other runs node by node."""
        snapshot = self.handle.snapshot
        nodes = snapshot.node_infos
        skip = state.skip_filter_plugins
        columns: dict[str, list] = {}
        # each column's distinct failing statuses, looked at once (nodes failing alike share one)
        distinct: list[set] = []
        for pl in self.filter_plugins:
            if pl.name in skip:
                continue
            cache = self.equivalence.column("filter", pl, pod)
            col = cache.current(snapshot) if cache is not None else None
            if cache is not None and col is not None:
                refreshed = UNKNOWN in col
                if refreshed:
                    col = list(col)
                    # the nodes changed since, found by a C-level pass
                    for i in list(compress(range(len(col)), map(is_, col, repeat(UNKNOWN)))):
                        col[i] = self._filter_one(pl, state, pod, nodes[i])
                seen = set(filter(None, col))
                if refreshed and not _has_error(seen):
                    cache.store(snapshot, col)
                columns[pl.name] = col
                distinct.append(seen)
                continue
            col, seen = self._filter_column(pl, state, pod, nodes)
            if cache is not None and not _has_error(seen):
                cache.store(snapshot, col)
            columns[pl.name] = col
            distinct.append(seen)
        state.filter_columns = columns
        return columns, first_failures(list(columns.values()), len(nodes), distinct)

    # -- the columnar cycle's columns (scheduling/columnar.py) ------------------------------------
    def static_filter_array(self, pl: FilterPlugin, state: CycleState, pod: Pod, np) -> Any:
        """A filter plugin's verdicts on every node of the snapshot as a boolean array of `np`
        (True: passes), for a plugin whose results per class of pods depend on the node alone
        (a STATIC equivalence column): the column itself, made as run_filter_columns makes it
        when there is none yet. None for any other plugin, or when a verdict is an error."""
        cache = self.equivalence.column("filter", pl, pod)
        if cache is None or not cache.static:
            return None
        snapshot = self.handle.snapshot
        col = cache.current(snapshot)
        if col is None:
            col, seen = self._filter_column(pl, state, pod, snapshot.node_infos)
            if _has_error(seen):
                return None
            cache.store(snapshot, col)
        made = cache.array
        if made is None or made[0] is not col:
            if UNKNOWN in col or _has_error(set(filter(None, col))):
                return None
            made = cache.array = (col, passes_array(col, np))
        return made[1]

    def static_score_array(
        self, pl: ScorePlugin, state: CycleState, pod: Pod, nodes: list[NodeInfo], positions: list[int], at: Any, np
    ) -> Any:
        """A score plugin's raw scores of the snapshot's nodes at `positions` (`at`: the same as
        an array of `np`; `nodes`: those NodeInfos) as an int64 array, for a plugin whose scores
        per class of pods depend on the node alone (a STATIC equivalence column): read off the
        column, the nodes it does not hold yet scored and added as run_score adds them. None for
        any other plugin; raises PluginError as run_score does."""
        cache = self.equivalence.column("score", pl, pod)
        if cache is None or not cache.static:
            return None
        snapshot = self.handle.snapshot
        own = snapshot.node_infos
        vals = cache.current(snapshot)
        if vals is None:
            raw = self._score_nodes(pl, state, pod, nodes, positions)
            values = np.zeros(len(own), dtype=np.int64)
            values[at] = raw
            known = np.zeros(len(own), dtype=bool)
            known[at] = True
            # the column laid out now (store_at would lay it out on first read, and its array
            # would be made again from that list)
            laid: list = [UNKNOWN] * len(own)
            deque(map(laid.__setitem__, positions, raw), 0)
            cache.store(snapshot, laid)
            cache.array = (laid, values, known)
            return values[at]
        made = cache.array
        if made is None or made[0] is not vals:
            known = np.fromiter(map(operator.is_not, vals, repeat(UNKNOWN)), dtype=bool, count=len(vals))
            values = np.fromiter((0 if v is UNKNOWN else v for v in vals), dtype=np.int64, count=len(vals))
            made = cache.array = (vals, values, known)
        _, values, known = made
        known_at = known[at]
        missing = at[~known_at] if not known_at.all() else at[:0]
        if len(missing):
            where = missing.tolist()
            fresh = self._score_nodes(pl, state, pod, [own[k] for k in where])
            vals = list(vals)
            for k, v in zip(where, fresh):
                vals[k] = v
            cache.store(snapshot, vals)
            values = values.copy()
            values[missing] = fresh
            known = known.copy()
            known[missing] = True
            cache.array = (vals, values, known)
        return values[at]

    def filter_column(self, pl: FilterPlugin, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list:
        """One filter plugin's verdicts on `nodes`, as the framework reports them (plugin named,
        a non-rejection wrapped as an error)."""
        return self._filter_column(pl, state, pod, nodes)[0]

    def _filter_column(self, pl: FilterPlugin, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list, set]:
        """filter_column, and the column's distinct statuses."""
        batch = self.batch_filters.get(pl.name)
        if batch is not None:
            col = batch.filter_nodes(state, pod, nodes)
            return col, _tag_column(col, pl.name)
        one = self._filter_one
        col = [one(pl, state, pod, ni) for ni in nodes]
        return col, set(filter(None, col))

    @staticmethod
    def _filter_one(pl: FilterPlugin, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        st = pl.filter(state, pod, node_info)
        if st is not None and st.code != SUCCESS:
            if not st.is_rejected():
                st = Status(ERROR, f'running "{pl.name}" filter plugin: {st.message()}')
            st.with_plugin(pl.name)
        return st

    # -- PostFilter --------------------------------------------------------------------
    def run_post_filter(
        self, state: CycleState, pod: Pod, node_statuses: NodeStatuses
    ) -> tuple[PostFilterResult | None, Status, dict[str, Any]]:
        result = None
        reasons: list[str] = []
        rejector = ""
        details: dict[str, Any] = {}
        for pl in self.post_filter_plugins:
            r, st = pl.post_filter(state, pod, node_statuses)
            if r is not None and r.detail is not None:
                details[pl.name] = r.detail
            if st is None or st.is_success():
                return r, Status(SUCCESS, plugin=pl.name), details
            if st.code == UNRESOLVABLE:
                return r, st.with_plugin(pl.name), details
            if not st.is_rejected():
                return None, Status(ERROR, *st.reasons, plugin=pl.name), details
            if r is not None and r.nominated_node is not None:
                result = r
            reasons.extend(st.reasons)
            rejector = rejector or pl.name
        return result, Status(UNSCHEDULABLE, *reasons, plugin=rejector), details

    # -- Score ---------------------------------------------------------------------------
    def run_pre_score(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo], positions: list[int] | None = None
    ) -> Status | None:
        """`positions`: the nodes' positions in the snapshot's node order, when they are its own
        NodeInfos (CycleState.score_positions for the plugins, during their calls)."""
        skip: set[str] = set()
        state.score_positions = positions
        try:
            return self._run_pre_score(state, pod, nodes, skip)
        finally:
            state.score_positions = None

    def _run_pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo], skip: set[str]) -> Status | None:
        for pl in self.pre_score_plugins:
            st = pl.pre_score(state, pod, nodes)
            if st is not None and st.is_skip():
                skip.add(pl.name)
                continue
            if st is not None and not st.is_success():
                state.skip_score_plugins = skip  # as RunPreScorePlugins records them on the way out
                return Status(ERROR, f'running PreScore plugin "{pl.name}": {st.message()}', plugin=pl.name)
        state.skip_score_plugins = skip
        return None

    def run_score(
        self,
        state: CycleState,
        pod: Pod,
        nodes: list[NodeInfo],
        *,
        cached: bool = True,
        names: list | None = None,
        positions: list[int] | None = None,
    ) -> list[tuple[str, list, list, int]]:
        """Per plugin that did not Skip: (name, raw scores, normalized scores, weight), the lists in
        the order of `nodes`; raises PluginError. Node-local plugins' raw scores come from their
        equivalence-class columns when known (cached=False: never, for nodes that are not the
        snapshot's); a plugin with `score_nodes` scores the nodes in one call. `names`: the nodes'
        names, `positions` their positions in the snapshot's order, when the caller has them."""
        snapshot = self.handle.snapshot
        index_of = snapshot.index_of
        own = snapshot.node_infos
        # the feasible nodes are the snapshot's in its order: all of them when as many
        every_node = len(nodes) == len(own) and (not nodes or (nodes[0] is own[0] and nodes[-1] is own[-1]))
        if every_node:
            nodes = own  # the same nodes; plugins recognise the snapshot's list (taint groups, ...)
        if names is None:
            names = snapshot.names if every_node else [ni.node.name for ni in nodes]
        out = []
        if not cached:
            positions = None
        elif every_node:
            positions = list(range(len(own)))
        elif positions is None:
            positions = list(map(index_of.__getitem__, names))
        for pl in self.score_plugins:
            if pl.name in state.skip_score_plugins:
                continue
            cache = self.equivalence.column("score", pl, pod) if cached else None
            if cache is not None:
                vals = cache.current(snapshot)
                if vals is None:
                    # nothing known yet: score the nodes; on every node the column is the raw
                    # scores themselves (neither is changed in place from here on)
                    raw = self._score_nodes(pl, state, pod, nodes, positions)
                    if every_node:
                        cache.store(snapshot, raw)
                    else:
                        assert positions is not None
                        cache.store_at(snapshot, positions, raw, len(own))
                    out.append(self._normalized(pl, state, pod, nodes, raw, names))
                    continue
                assert positions is not None
                # every node: the column itself, copied (C-level); nodes changed since are found
                # only when the column holds one
                raw = list(vals) if every_node else list(map(vals.__getitem__, positions))
                missing = list(compress(range(len(raw)), map(is_, raw, repeat(UNKNOWN)))) if UNKNOWN in raw else ()
                if missing:
                    fresh = self._score_nodes(pl, state, pod, [nodes[k] for k in missing])
                    vals = list(vals)
                    for k, v in zip(missing, fresh):
                        raw[k] = vals[positions[k]] = v
                    cache.store(snapshot, vals)
            else:
                raw = self._score_nodes(pl, state, pod, nodes, positions)
            out.append(self._normalized(pl, state, pod, nodes, raw, names))
        return out

    def _normalized(
        self, pl: ScorePlugin, state: CycleState, pod: Pod, nodes: list[NodeInfo], raw: list, names: list
    ) -> tuple[str, list, list, int]:
        """(name, raw scores, normalized scores, weight) of one plugin; raises PluginError.
        `names`: the nodes' names."""
        batch = self.batch_normalizers.get(pl.name)
        normalizer = self.normalizers.get(pl.name)
        if batch is not None:
            normalized, st = batch.normalize_scores(state, pod, raw, names)
            if st is not None and not st.is_success():
                raise PluginError(
                    pl.name, f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {st.message()}'
                )
        elif normalizer is not None:
            scores = dict(zip(names, raw))
            st = normalizer.normalize_score(state, pod, scores)
            if st is not None and not st.is_success():
                raise PluginError(
                    pl.name, f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {st.message()}'
                )
            # NormalizeScore rewrites the values in place: the keys keep their order
            normalized = list(scores.values()) if len(scores) == len(names) else [scores[n] for n in names]
        else:
            normalized = raw
        if (
            normalized
            and type(normalized) is not ScoresInRange
            and (
                # (a column of one score, as from a plugin with nothing to tell the nodes apart
                # by: that score checked alone)
                not 0 <= normalized[0] <= MAX_NODE_SCORE
                if normalized.count(normalized[0]) == len(normalized)
                else max(normalized) > MAX_NODE_SCORE or min(normalized) < 0
            )
        ):
            bad = next(s for s in normalized if s > MAX_NODE_SCORE or s < 0)
            raise PluginError(
                pl.name,
                f'applying score defaultWeights on Score plugins: plugin "{pl.name}" '
                f"returns an invalid score {bad}, it should in the range of [0, "
                f"{MAX_NODE_SCORE}] after normalizing",
            )
        return (pl.name, raw, normalized, self.weights.get(pl.name, 1))

    def _score_nodes(
        self, pl: ScorePlugin, state: CycleState, pod: Pod, nodes: list[NodeInfo], positions: list[int] | None = None
    ) -> list[int]:
        """The plugin's scores of `nodes`; `positions`: theirs in the snapshot's node order, when
        they are its own NodeInfos (CycleState.score_positions for the plugin, during the call)."""
        batch = self.batch_scorers.get(pl.name)
        if batch is None:
            one = self._score_one
            return [one(pl, state, pod, ni) for ni in nodes]
        state.score_positions = positions
        try:
            raw, st = batch.score_nodes(state, pod, nodes)
        finally:
            state.score_positions = None
        if st is not None and not st.is_success():
            raise PluginError(pl.name, f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
        return raw

    def score_nodes(
        self, pl: ScorePlugin, state: CycleState, pod: Pod, nodes: list[NodeInfo], positions: list[int] | None = None
    ) -> list[int]:
        """One score plugin's raw scores of `nodes`, in their order, as run_score makes them for
        a plugin without an equivalence column; raises PluginError."""
        return self._score_nodes(pl, state, pod, nodes, positions)

    def normalized(
        self, pl: ScorePlugin, state: CycleState, pod: Pod, nodes: list[NodeInfo], raw: list, names: list
    ) -> tuple[str, list, list, int]:
        """(name, raw scores, normalized scores, weight) of one plugin as run_score makes them;
        raises PluginError (a normalization's error, a score out of range)."""
        return self._normalized(pl, state, pod, nodes, raw, names)

    @staticmethod
    def _score_one(pl: ScorePlugin, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s, st = pl.score(state, pod, node_info)
        if st is not None and not st.is_success():
            raise PluginError(pl.name, f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
        return s


def passes_array(col: list, np) -> Any:
    """A column of filter verdicts as a boolean array of `np` (numpy): True where the node
    passes (None, or an explicit Success status, which first_failures reads as None)."""
    passes = np.fromiter(map(is_, col, repeat(None)), dtype=bool, count=len(col))
    if not passes.all() and any(st.code == SUCCESS for st in set(filter(None, col))):
        passes |= np.fromiter((st is not None and st.code == SUCCESS for st in col), dtype=bool, count=len(col))
    return passes


def first_failures(columns: list[list], n: int, distinct: list[set] | None = None) -> list:
    """Each node's first failure in profile order over `columns` (verdicts in node order): its
    first entry that is not None, explicit Success statuses (plugins rarely return them) read as
    None. `distinct`: each column's set of statuses, when known. The columns are laid over each
    other from the last one on, each earlier one's failures taking the place of the later ones'
    (a column that fails no node is passed over; one that fails every node decides them all)."""
    if distinct is None:
        distinct = [set(filter(None, col)) for col in columns]
    first: list | None = None
    for col, failing in zip(reversed(columns), reversed(distinct)):
        if not failing:  # a column of passes only changes nothing
            continue
        if any(st.code == SUCCESS for st in failing):
            col = [None if st is not None and st.code == SUCCESS else st for st in col]
            if not any(col):
                continue
        first = list(col) if first is None else _overlay(first, col, n)
    return [None] * n if first is None else first


def _overlay(later: list, col: list, n: int) -> list:
    """Each node's entry of `col` where it fails the node, else its entry of `later` (a status is
    never false). `later` may be changed in place."""
    failing = list(compress(range(n), col))  # (C-level; `None in col` would compare each status)
    if len(failing) == n:
        return list(col)
    if len(failing) * 4 > n:
        return [mine or later for later, mine in zip(later, col)]
    for i in failing:  # few: each takes the column's status
        later[i] = col[i]
    return later


def _first_failure(statuses: dict[str, Status | None]) -> Status | None:
    """RunFilterPlugins' verdict from every plugin's own status (in profile order)."""
    for st in statuses.values():
        if st is not None and st.code != SUCCESS:
            return st
    return None


def _has_error(distinct: set) -> bool:
    return any(st.code == ERROR for st in distinct)


def _tag_column(col: list, plugin: str) -> set:
    """What the framework does to each plugin's verdict: name the plugin, wrap an error. Nodes
    failing alike often share one status object: each is handled once. Returns the column's
    distinct statuses (after the wrapping)."""
    distinct = set(filter(None, col))
    wrapped: dict[int, Status] = {}
    for st in distinct:
        if st.code != SUCCESS:
            if st.is_rejected():
                st.with_plugin(plugin)
            else:
                wrapped[id(st)] = Status(ERROR, f'running "{plugin}" filter plugin: {st.message()}', plugin=plugin)
    if wrapped:
        for i, st in enumerate(col):
            if st is not None and id(st) in wrapped:
                col[i] = wrapped[id(st)]
        distinct = set(filter(None, col))
    return distinct


class PluginError(Exception):
    def __init__(self, plugin: str, message: str):
        self.plugin = plugin
        super().__init__(message)


class NodeStatuses:
    """NodeToStatus: explicit per-node statuses plus one for nodes absent from it.

    The filter pass gives its statuses as a list in the snapshot's node order; the dict of them
    by node name is made only when something asks for it by name (most cycles never do)."""

    __slots__ = ("_explicit", "absent", "_names", "_in_order")

    def __init__(self, absent: Status | None = None):
        self._explicit: dict[str, Status] | None = {}
        self.absent = absent or Status(UNRESOLVABLE)
        self._names: list[str] | None = None
        self._in_order: list[Status | None] | None = None

    def set_in_order(self, names: list[str], statuses: list[Status | None]) -> None:
        """Every status at once: statuses[i] is node names[i]'s (None: it has none). Neither list
        is changed afterwards."""
        self._names, self._in_order = names, statuses
        self._explicit = None

    @property
    def explicit(self) -> dict[str, Status]:
        if self._explicit is None:
            names, statuses = self._names, self._in_order
            assert names is not None and statuses is not None
            # (a status is never false: compress keeps the nodes that have one)
            self._explicit = cast("dict[str, Status]", dict(compress(zip(names, statuses), statuses)))
            self._names = self._in_order = None
        return self._explicit

    @explicit.setter
    def explicit(self, value: dict[str, Status]) -> None:
        self._explicit = value
        self._names = self._in_order = None

    def in_order(self, names: list[str]) -> list[Status]:
        """The statuses of the nodes `names`, in that order (absent for nodes without one)."""
        if self._explicit is None and self._names is names:
            statuses = self._in_order
            assert statuses is not None
            if None not in statuses:
                return cast("list[Status]", statuses)
            absent = self.absent
            return [absent if st is None else st for st in statuses]
        explicit = self._explicit if self._explicit is not None else self.explicit
        if list(explicit) == names:  # every node, in that order
            return list(explicit.values())
        get, absent = explicit.get, self.absent
        return [get(n, absent) for n in names]

    def values(self) -> list[Status]:
        """The explicit statuses."""
        if self._explicit is None:
            return list(filter(None, self._in_order or ()))
        return list(self._explicit.values())

    def set(self, node: str, st: Status) -> None:
        self.explicit[node] = st

    def get(self, node: str) -> Status:
        return self.explicit.get(node, self.absent)

    def __len__(self) -> int:
        if self._explicit is None:
            return len(self._in_order or ()) - (self._in_order or ()).count(None)
        return len(self._explicit)
