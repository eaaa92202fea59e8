"""The framework runtime: one profile's plugins in order, run at each extension point."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .cycle_state import CycleState
from .equivalence import EquivalenceCache
from .interface import MAX_NODE_SCORE, Plugin, PreFilterResult
from .status import ERROR, SUCCESS, UNRESOLVABLE, UNSCHEDULABLE, Status

if TYPE_CHECKING:
    from ..cluster import Cluster
    from ..config import Profile
    from ..model import Pod
    from ..snapshot import NodeInfo, Snapshot


class Handle:
    """What plugins may reach beyond their args: the snapshot, the cluster's objects, the framework."""

    def __init__(self, snapshot: "Snapshot", cluster: "Cluster"):
        self.snapshot = snapshot
        self.cluster = cluster
        self.framework: "Framework | None" = None


class PreFilterOutcome:
    """All PreFilter results: the merged node subset, the rejecting status, each plugin's own status."""

    __slots__ = ("result", "status", "plugin_statuses", "plugins_with_nodes", "skipped")

    def __init__(self):
        self.result: PreFilterResult | None = None
        self.status: Status | None = None
        self.plugin_statuses: dict[str, Status] = {}
        self.plugins_with_nodes: set[str] = set()
        self.skipped: set[str] = set()


class Framework:
    def __init__(self, profile: "Profile", registry: dict[str, type[Plugin]], handle: Handle):
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

        def at(point: str) -> list[Plugin]:
            return [self.plugins[n] for n in profile.points.get(point, [])]

        self.pre_enqueue_plugins = at("preEnqueue")
        self.queue_sort_plugins = at("queueSort")
        self.pre_filter_plugins = at("preFilter")
        self.filter_plugins = at("filter")
        self.post_filter_plugins = at("postFilter")
        self.pre_score_plugins = at("preScore")
        self.score_plugins = at("score")
        self.weights = profile.score_weights
        # node-local plugin results shared between cycles of equivalent pods (see equivalence.py)
        self.equivalence = EquivalenceCache()

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    # -- PreEnqueue --------------------------------------------------------------
    def run_pre_enqueue(self, pod: "Pod") -> Status | None:
        for pl in self.pre_enqueue_plugins:
            st = pl.pre_enqueue(pod)
            if st is not None and not st.is_success():
                return st.with_plugin(pl.name)
        return None

    # -- PreFilter -----------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: "Pod") -> PreFilterOutcome:
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
                msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1
                       else f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously")
                out.status = Status(UNRESOLVABLE, msg)
                out.result = result
                break
        state.skip_filter_plugins = set(out.skipped)
        if out.status is None:
            out.result = result
        return out

    def run_pre_filter_add_pod(self, state: CycleState, pod: "Pod", pod_to_add: "Pod", node_info: "NodeInfo") -> Status | None:
        return self._run_pre_filter_extension("add_pod", "AddPod", state, pod, pod_to_add, node_info)

    def run_pre_filter_remove_pod(self, state: CycleState, pod: "Pod", pod_to_remove: "Pod", node_info: "NodeInfo") -> Status | None:
        return self._run_pre_filter_extension("remove_pod", "RemovePod", state, pod, pod_to_remove, node_info)

    def _run_pre_filter_extension(self, method: str, go_name: str, state: CycleState, pod: "Pod",
                                  other: "Pod", node_info: "NodeInfo") -> Status | None:
        """PreFilterExtensions.AddPod/RemovePod of every PreFilter plugin that did not Skip."""
        for pl in self.pre_filter_plugins:
            fn = getattr(pl, method, None)
            if fn is None or pl.name in state.skip_filter_plugins:
                continue
            st = fn(state, pod, other, node_info)
            if st is not None and not st.is_success():
                return Status(ERROR, f'running {go_name} on PreFilter plugin "{pl.name}": {st.message()}', plugin=pl.name)
        return None

    # -- Filter ----------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: "Pod", node_info: "NodeInfo") -> Status | None:
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

    def run_every_filter(self, state: CycleState, pod: "Pod", node_info: "NodeInfo") -> tuple[Status | None, dict[str, Status | None]]:
        """Every filter plugin's own verdict on the node, and the first failure in profile order."""
        skip = state.skip_filter_plugins
        first = None
        each: dict[str, Status | None] = {}
        for pl in self.filter_plugins:
            if pl.name in skip:
                continue
            st = pl.filter(state, pod, node_info)
            if st is not None and not st.is_success():
                if not st.is_rejected():
                    st = Status(ERROR, f'running "{pl.name}" filter plugin: {st.message()}')
                st.with_plugin(pl.name)
                if first is None:
                    first = st
            each[pl.name] = st
        return first, each

    def filter_view(self, state: CycleState, pod: "Pod") -> list:
        """The filter plugins this cycle runs, each with its equivalence-class table (or None)."""
        skip = state.skip_filter_plugins
        return self.equivalence.view("filter", [pl for pl in self.filter_plugins if pl.name not in skip], pod)

    def run_every_filter_view(self, state: CycleState, pod: "Pod", node_info: "NodeInfo",
                              view: list) -> tuple[Status | None, dict[str, Status | None]]:
        """run_every_filter over `filter_view(...)`: a node-local plugin's verdict is taken from
        its class table while the node is unchanged, and stored there otherwise."""
        first = None
        each: dict[str, Status | None] = {}
        name = node_info.node.name
        gen = node_info.generation
        for pl, pname, table, static in view:
            if table is not None:
                hit = table.get(name)
                if hit is not None and (static or hit[0] == gen):
                    st = hit[1]
                    if first is None and st is not None and st.code != SUCCESS:
                        first = st
                    each[pname] = st
                    continue
            st = pl.filter(state, pod, node_info)
            if st is not None and st.code != SUCCESS:
                if not st.is_rejected():
                    st = Status(ERROR, f'running "{pname}" filter plugin: {st.message()}')
                st.with_plugin(pname)
                if first is None:
                    first = st
            if table is not None and (st is None or st.code != ERROR):
                table[name] = (gen, st)
            each[pname] = st
        return first, each

    # -- PostFilter --------------------------------------------------------------------
    def run_post_filter(self, state: CycleState, pod: "Pod", node_statuses: "NodeStatuses"):
        result = None
        reasons: list[str] = []
        rejector = ""
        details: dict[str, object] = {}
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
    def run_pre_score(self, state: CycleState, pod: "Pod", nodes: list["NodeInfo"]) -> Status | None:
        skip: set[str] = set()
        for pl in self.pre_score_plugins:
            st = pl.pre_score(state, pod, nodes)
            if st is not None and st.is_skip():
                skip.add(pl.name)
                continue
            if st is not None and not st.is_success():
                return Status(ERROR, f'running PreScore plugin "{pl.name}": {st.message()}', plugin=pl.name)
        state.skip_score_plugins = skip
        return None

    def run_score(self, state: CycleState, pod: "Pod", nodes: list["NodeInfo"]):
        """Per plugin: {node: (raw, normalized, weight, weighted)}; raises on a plugin error.
        Node-local plugins' raw scores come from their equivalence-class tables when valid."""
        table: dict[str, dict[str, tuple[int, int, int, int]]] = {}
        plugins = [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]
        for pl, _, cache, static in self.equivalence.view("score", plugins, pod):
            raw: dict[str, int] = {}
            score = pl.score
            if cache is None:
                for ni in nodes:
                    s, st = score(state, pod, ni)
                    if st is not None and not st.is_success():
                        raise PluginError(pl.name, f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
                    raw[ni.node.name] = s
            else:
                get = cache.get
                for ni in nodes:
                    name = ni.node.name
                    hit = get(name)
                    if hit is not None and (static or hit[0] == ni.generation):
                        raw[name] = hit[1]
                        continue
                    s, st = score(state, pod, ni)
                    if st is not None and not st.is_success():
                        raise PluginError(pl.name, f'running Score plugins: plugin "{pl.name}" failed with: {st.message()}')
                    raw[name] = s
                    cache[name] = (ni.generation, s)
            normalized = dict(raw)
            if hasattr(pl, "normalize_score"):
                st = pl.normalize_score(state, pod, normalized)
                if st is not None and not st.is_success():
                    raise PluginError(pl.name, f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {st.message()}')
            w = self.weights.get(pl.name, 1)
            col = {}
            for name, s in normalized.items():
                if s > MAX_NODE_SCORE or s < 0:
                    raise PluginError(pl.name, f'applying score defaultWeights on Score plugins: plugin "{pl.name}" '
                                              f"returns an invalid score {s}, it should in the range of [0, {MAX_NODE_SCORE}] after normalizing")
                col[name] = (raw[name], s, w, s * w)
            table[pl.name] = col
        return table


class PluginError(Exception):
    def __init__(self, plugin: str, message: str):
        self.plugin = plugin
        super().__init__(message)


class NodeStatuses:
    """NodeToStatus: explicit per-node statuses plus one for nodes absent from it."""

    def __init__(self, absent: Status | None = None):
        self.explicit: dict[str, Status] = {}
        self.absent = absent or Status(UNRESOLVABLE)

    def set(self, node: str, st: Status) -> None:
        self.explicit[node] = st

    def get(self, node: str) -> Status:
        return self.explicit.get(node, self.absent)

    def __len__(self) -> int:
        return len(self.explicit)
