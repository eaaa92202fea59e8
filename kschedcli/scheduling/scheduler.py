"""One scheduling cycle as kube-scheduler's schedule_one runs it, and sequences of cycles."""

from __future__ import annotations

import random
from itertools import compress, repeat
from operator import add, eq, mul, not_
from typing import TYPE_CHECKING, Any

from .. import progress
from ..api.model import Pod
from ..backend import vectors
from ..backend.nominator import Nominator
from ..backend.snapshot import Snapshot
from ..config.scheduler import SchedulerConfig
from ..framework.alike import FALLBACK, AlikeCycles
from ..framework.cycle_state import CycleState
from ..framework.fit_error import fit_error_message
from ..framework.interface import BindObserver, CacheHolder
from ..framework.result import NOT_ASKED, CycleResult, Explainer, FilterTable, NominatedOnNode, ScoreTable, TotalsTable
from ..framework.runtime import Framework, Handle, NodeStatuses, PluginError
from ..framework.status import ERROR, UNRESOLVABLE, Status
from ..inputs.cluster import Cluster
from ..loader import freeze_lasting, no_gc
from ..plugins import REGISTRY
from .batching import OpportunisticBatch
from .extender_client import ExtenderError
from .extenders import ExtenderSet
from .sampled_alike import SampledAlikeCycles
from .sampling import PARALLELISM_NOTE, NodeSampling

if TYPE_CHECKING:
    from .columnar import ColumnarCycle


class Scheduler:
    """Frameworks for every profile over one snapshot; `schedule` runs a cycle, `bind` assumes."""

    def __init__(self, cluster: Cluster, config: SchedulerConfig, snapshot: Snapshot | None = None):
        self.cluster = cluster
        self.config = config
        if snapshot is None and cluster.prebuilt_snapshot is not None:
            snapshot = cluster.take_prebuilt_snapshot()
        if snapshot is None:
            with no_gc():
                snapshot = Snapshot(cluster.nodes, cluster.pods)
                if len(snapshot.node_infos) > 200:
                    # the snapshot lives as long as the scheduler: keep it out of collections
                    # (frozen before they resume, which would otherwise first pass over it)
                    freeze_lasting()
        self.snapshot = snapshot
        self.nominator = Nominator()
        # the HTTP extenders of the configuration (none under --no-extenders)
        self.extenders: ExtenderSet | None = ExtenderSet(config.extenders, self.snapshot) if config.extenders else None
        self.frameworks: dict[str, Framework] = {}
        for prof in config.profiles:
            handle = Handle(self.snapshot, cluster, config.release, self.nominator)
            handle.extenders = self.extenders
            self.frameworks[prof.scheduler_name] = Framework(prof, REGISTRY, handle)
        # ksched's own plugin hooks, found once (structural checks are not cheap)
        self.explainers: dict[str, list[Explainer]] = {
            name: [pl for pl in fw.plugins.values() if isinstance(pl, Explainer)]
            for name, fw in self.frameworks.items()
        }
        # OpportunisticBatching (v1.35 on): each profile's batch, and the cycles run so far
        self.batches: dict[str, OpportunisticBatch] = (
            {name: OpportunisticBatch() for name in self.frameworks}
            if config.release.gate("OpportunisticBatching")
            else {}
        )
        self.cycles = 0
        # the columnar cycle (enable_columnar): None runs every cycle in full
        self.columnar: ColumnarCycle | None = None
        # (the filter pass's feasible list, their positions in the snapshot): for the cycle's scoring
        self._feasible_at: tuple[list, list[int]] | None = None
        # node sampling (enable_sampling): None filters and scores every feasible node
        self.sampling: NodeSampling | None = None
        # the last cycle that scored: (its CycleState, framework, PreFilterResult's nodes or None),
        # for the sampling outlook of `explain` (sampling.outlook)
        self.last_scored: tuple[CycleState, Framework, Any] | None = None
        self.bind_observers: list[BindObserver] = [
            pl for fw in self.frameworks.values() for pl in fw.plugins.values() if isinstance(pl, BindObserver)
        ]
        # per profile, the incremental state of a sequence of alike pods (schedule_alike)
        self.alike = {name: AlikeCycles(fw) for name, fw in self.frameworks.items()}
        # the same under node sampling, per profile (made on first use)
        self.sampled_alike: dict[str, SampledAlikeCycles] = {}
        self.nominate(getattr(cluster, "nominated_pods", ()))

    def close(self) -> None:
        """Let go of what the scheduler made, for one made for a single what-if scenario (a
        sweep's): its frameworks, handles, plugins, nominator and caches refer to one another, so
        that otherwise only the cyclic collector frees them, passing over everything the
        scenario built (a zone failure of 5,000 nodes: most of a second). Each drops its
        references (what the scheduler was given, its cluster, configuration and snapshot, is not
        changed); reference counting then frees them as the caller lets go. Unusable after."""
        made: list[Any] = []
        for fw in self.frameworks.values():
            made.extend(fw.plugins.values())
            made.extend((fw.handle, fw.equivalence, fw))
        made.extend((self.nominator, self.columnar, self.sampling, *self.alike.values(), *self.sampled_alike.values()))
        for obj in made:
            _let_go(obj)
        _let_go(self)

    def enable_columnar(self) -> bool:
        """Run the cycles asked for without details in numpy columns where they allow it
        (scheduling/columnar.py): the same verdicts and nodes. False when numpy is missing."""
        np = vectors.numpy_module()
        if np is None:
            return False
        from .columnar import ColumnarCycle

        self.columnar = ColumnarCycle(self, np)
        return True

    def enable_sampling(self, start_index: int = 0) -> None:
        """Sample nodes as kube-scheduler does (scheduling/sampling.py), its next start index at
        `start_index` (0 for a freshly started kube-scheduler)."""
        workers = self.config.parallelism
        note = PARALLELISM_NOTE.format(workers=workers) if workers != 1 else ""
        self.sampling = NodeSampling(start_index, note)

    def enable_preemption_sampling(self, seed: int = 0) -> None:
        """Bound preemption's dry run as kube-scheduler does (DefaultPreemption's
        minCandidateNodesPercentage / minCandidateNodesAbsolute from a random offset), the offsets
        drawn from a source seeded with `seed`; by default every potential node is evaluated."""
        for fw in self.frameworks.values():
            for pl in fw.plugins.values():
                sample = getattr(pl, "sample_candidates", None)
                if sample is not None:
                    sample(seed)

    def framework_for(self, pod: Pod) -> Framework | None:
        return self.frameworks.get(pod.scheduler_name)

    def nominate(self, pods) -> None:
        """Hold the pods carrying status.nominatedNodeName in the nominator, in order; kube-scheduler's
        queue never holds a pod with scheduling gates or of a scheduler name no profile has."""
        self.nominator.add_all(
            p for p in pods if p.nominated_node_name and not p.scheduling_gates and p.scheduler_name in self.frameworks
        )

    def schedule(self, pod: Pod, seed: int | None = None, *, with_details: bool = True) -> CycleResult:
        """One cycle. with_details=False leaves out the plugins' explanations (result.details), which
        change nothing decided: for callers that read only the verdict and the node.

        The cyclic collector is paused during the cycle: what a cycle allocates is either freed by
        reference counting as it goes or kept (the result, the snapshot's indexes built on first
        use), so its passes over the cycle's working set would find nothing; the one that follows
        sees only what survived. The indexes the first cycle builds live as long as the snapshot:
        on a large snapshot they are frozen with it (out of every later collection)."""
        first = self.cycles == 0
        with no_gc():
            res = self._schedule_extended(pod, seed, with_details)
            if first and len(self.snapshot.node_infos) > 200:
                freeze_lasting()  # before collection resumes, which would otherwise first pass over them
        return res

    def _schedule_extended(self, pod: Pod, seed: int | None, with_details: bool) -> CycleResult:
        ext = self.extenders
        if ext is None:
            res = self._schedule(pod, seed, with_details)
            if self.config.extenders_left_out:
                res.extenders_left_out = [
                    {"extender": e.name, "verbs": e.verbs()} for e in self.config.extenders_left_out
                ]
            return res
        ext.begin_cycle()
        res = self._schedule(pod, seed, with_details)
        if res.schedulable and res.selected_node:
            ext.report_binder(pod)
        res.extender_calls = list(ext.calls)
        return res

    def _schedule(self, pod: Pod, seed: int | None, with_details: bool) -> CycleResult:
        fw = self.framework_for(pod)
        if fw is None:
            return CycleResult(
                pod=pod,
                profile=pod.scheduler_name,
                schedulable=False,
                pre_filter=None,
                error=f"no profile named {pod.scheduler_name!r} (spec.schedulerName); kube-scheduler ignores the pod",
            )
        res = CycleResult(
            pod=pod,
            profile=fw.name,
            schedulable=False,
            pre_filter=None,
            filter_plugins=[p.name for p in fw.filter_plugins],
            score_plugins=[p.name for p in fw.score_plugins],
        )
        nodes = self.snapshot.list()
        num_nodes = len(nodes)
        if not nodes:
            res.error = res.message = "no nodes available to schedule pods"
            return res

        gate = fw.run_pre_enqueue(pod)
        if gate is not None:
            # the pod never gets a cycle; report PreEnqueue's verdict in place of PreFilter
            res.pre_filter = gate
            res.message = gate.message()
            if self.sampling is not None:
                res.sampling = self.sampling.unchanged(
                    self.snapshot, fw.profile.percentage_of_nodes_to_score, self.config.percentage_of_nodes_to_score
                )
            return res

        columnar = self.columnar
        if columnar is not None and not with_details and columnar.applies(fw):
            fast = columnar.run(fw, pod, seed)
            if fast is not None:
                return fast
        self.cycles += 1
        cycle = self.cycles
        batch = self.batches.get(fw.name)
        hint = signature = None
        state = CycleState()
        pf = fw.run_pre_filter(state, pod)
        res.pre_filter_plugins = pf.plugin_statuses
        res.pre_filter_skipped = sorted(pf.skipped)
        statuses = NodeStatuses()
        feasible = []
        fresh = False  # the feasible nodes are an extender's node objects, not the snapshot's
        if pf.status is not None and pf.status.code == ERROR:
            res.pre_filter = pf.status
            res.error = pf.status.message()
            res.message = pf.status.message()
            return res
        sampling = self.sampling
        allowed = None
        self.last_scored = None
        self._feasible_at = None
        profile_pct = fw.profile.percentage_of_nodes_to_score
        global_pct = self.config.percentage_of_nodes_to_score
        if pf.status is not None:
            res.pre_filter = pf.status
            statuses.absent = pf.status
            prefilter_msg = pf.status.message()
            if sampling is not None:
                res.sampling = sampling.unchanged(self.snapshot, profile_pct, global_pct)
        else:
            prefilter_msg = ""
            narrowing: list[str] = []
            if pf.result is not None and not pf.result.all_nodes():
                allowed = pf.result.node_names
                narrowing = sorted(pf.plugins_with_nodes)
                statuses.absent = Status(
                    UNRESOLVABLE,
                    "node(s) didn't satisfy plugin(s) [{}]".format(" ".join(narrowing)),
                    plugin=narrowing[0] if narrowing else "",
                )
            counted = {
                n: pods for n, pods in self.nominator.counted_by_node(pod).items() if n in self.snapshot.index_of
            }
            nominated_node = self.nominator.status_node(pod)
            if batch is not None:
                # GetNodeHint; evaluateNominatedNode tries the hint when the pod has no nominated
                # node (the hint is spent all the same)
                hint, signature = batch.hint(fw, state, pod, cycle)
                if not nominated_node and hint is not None:
                    nominated_node = hint
            first_try = None
            if nominated_node and nominated_node in self.snapshot.index_of:
                # evaluateNominatedNode: the node the pod preempted on, alone, before any other
                first_try = self._filter_nominated_node(fw, state, pod, nominated_node, counted, res)
                rejected_by = first_try[0].plugin if first_try[0] is not None and first_try[0].is_rejected() else ""
                if allowed is not None and rejected_by and rejected_by not in narrowing:
                    # its diagnosis shares the set of unschedulable plugins with the cycle's: the
                    # nodes the PreFilter result leaves out are then said to fail that plugin too
                    statuses.absent = Status(
                        UNRESOLVABLE,
                        "node(s) didn't satisfy plugin(s) [{}]".format(" ".join(sorted({*narrowing, rejected_by}))),
                        plugin=narrowing[0] if narrowing else "",
                    )
            if first_try is not None and first_try[0] is None:
                feasible = [self.snapshot.by_name[nominated_node]]
                if sampling is not None:
                    res.sampling = sampling.unchanged(self.snapshot, profile_pct, global_pct)
                    res.sampling.evaluated_nodes = res.sampling.feasible_nodes = 1
                if self.extenders:
                    # the extenders judge it too; their error there is only logged
                    try:
                        feasible, fresh = self._extender_filter(pod, feasible, statuses, res)
                    except ExtenderError:
                        feasible = []
            if not feasible and sampling is not None and self._samples_alone(fw, allowed, first_try):
                feasible = self._filter_sampled(sampling, fw, state, pod, statuses, counted, res)
            elif not feasible:
                earlier = dict(statuses.explicit)  # the nominated node's extender verdict stays
                feasible = self._filter_all(
                    fw, state, pod, allowed, statuses, counted, res, nominated_node if first_try is not None else None
                )
                for name, st in earlier.items():
                    statuses.explicit.setdefault(name, st)
                if sampling is not None:
                    feasible = self._sample(sampling, fw, res, feasible, allowed, first_try, nominated_node)
                if self.extenders and not res.error:
                    try:
                        feasible, fresh = self._extender_filter(pod, feasible, statuses, res)
                    except ExtenderError as e:
                        res.error = str(e)
        every_node = feasible is self.snapshot.node_infos
        known_at = self._feasible_at
        self._feasible_at = None
        # the feasible nodes' snapshot positions, when they are the filter pass's (or sampling's) own list
        positions = known_at[1] if known_at is not None and known_at[0] is feasible and not fresh else None
        if every_node:
            res.feasible = list(self.snapshot.names)
        elif positions is not None:
            res.feasible = list(map(self.snapshot.names.__getitem__, positions))
        else:
            res.feasible = [ni.node.name for ni in feasible]
        if res.sampling is not None:
            res.sampling.feasible_nodes = len(feasible)  # after the extenders, as ScheduleResult counts
        if res.error:
            res.message = res.error
            return res

        if not feasible:
            post_msg = ""
            if fw.post_filter_plugins:
                from ..framework.result import PreemptionResult

                pr, st, details = fw.run_post_filter(state, pod, statuses)
                post_msg = st.message()
                detail = details.get("DefaultPreemption")
                if detail is not None:
                    detail.message = post_msg
                    res.preemption = detail
                else:
                    res.preemption = PreemptionResult(
                        nominated_node=pr.nominated_node if pr else None, victims=[], equally_good=[], message=post_msg
                    )
            res.message = fit_error_message(num_nodes, prefilter_msg, statuses, post_msg)
            if with_details:
                self._collect_details(fw, state, pod, res)
            return res

        res.schedulable = True
        if len(feasible) == 1:
            res.top_nodes = [feasible[0].node.name]
            res.selected_node = feasible[0].node.name
            if batch is not None:
                batch.store(signature, hint, res.selected_node, [], cycle)
            if with_details:
                self._collect_details(fw, state, pod, res)
            return res
        # kube-scheduler runs no PreScore at all for a profile without Score plugins and without extenders
        pre_score_st = fw.run_pre_score(state, pod, feasible, positions) if fw.score_plugins or self.extenders else None
        if fw.score_plugins or self.extenders:
            res.pre_score_skipped = sorted(state.skip_score_plugins)
            res.pre_score = pre_score_st
        try:
            if pre_score_st is not None:
                raise PluginError(pre_score_st.plugin, pre_score_st.message())
            table = fw.run_score(state, pod, feasible, cached=not fresh, names=res.feasible, positions=positions)
            self.last_scored = (state, fw, allowed)
        except PluginError as e:
            res.schedulable = False
            res.error = res.message = str(e)
            return res
        if self.extenders:
            columns = self.extenders.prioritize(pod, feasible)
            res.score_extenders = [c[0] for c in columns]
            table = table + columns
        names = res.feasible
        weights = [w for _, _, _, w in table]
        if weights and min(weights) >= 0 and sum(weights) <= 16:
            # each node's weighted sum in one pass: a column of weight w taken w times
            totals = list(map(sum, zip(*[normalized for _, _, normalized, w in table for _ in range(w)])))
            if not totals:
                totals = [0] * len(names)
        else:
            totals = [0] * len(names)
            for _, _, normalized, w in table:
                totals = list(map(add, totals, normalized if w == 1 else map(mul, normalized, repeat(w))))
        res.scores = ScoreTable(names, table, self.snapshot.index_of if every_node else None)
        res.totals = TotalsTable(res.scores, totals)
        best = max(totals) if totals else 0
        if totals.count(best) == 1:  # one node has the top score: found without a pass in Python
            res.top_nodes = [names[totals.index(best)]]
        else:
            res.top_nodes = sorted(compress(names, map(eq, totals, repeat(best))))
        if seed is None or len(res.top_nodes) == 1:
            res.selected_node = res.top_nodes[0]
        else:
            res.selected_node = reservoir_pick(res.top_nodes, seed)
        if batch is not None:
            # the other feasible nodes, best first (ties by name: kube-scheduler's are random)
            ranking = sorted((n for n in names if n != res.selected_node), key=lambda n: (-res.totals[n], n))
            batch.store(signature, hint, res.selected_node, ranking, cycle)
        if with_details:
            self._collect_details(fw, state, pod, res)
        return res

    def schedule_alike(self, pod: Pod, seed: int | None = None) -> CycleResult:
        """schedule(pod, seed, with_details=False) for a pod alike to the pods scheduled before it
        (a copy differing in name only, sharing their `_cache`, as `ksched capacity` makes them):
        the same node, found from the state the sequence keeps (framework/alike.py). A placed
        pod's result holds its verdict and node only; a pod that fits nowhere, and any case the
        incremental mode does not cover (a seed, nominated pods, HTTP extenders, ...), get the full cycle."""
        fw = self.framework_for(pod)
        if fw is not None and seed is None and not self.nominator and not self.batches and not self.extenders:
            if self.sampling is not None:
                return self._schedule_alike_sampled(fw, pod)
            node = self.alike[fw.name].place(pod)
            if node is not None and node != FALLBACK:
                self.cycles += 1
                return CycleResult(
                    pod=pod, profile=fw.name, schedulable=True, pre_filter=None, selected_node=node, top_nodes=[node]
                )
        return self.schedule(pod, seed, with_details=False)

    def _schedule_alike_sampled(self, fw: Framework, pod: Pod) -> CycleResult:
        """schedule_alike under node sampling: the sampled cycle's node and start index, from the
        state the sequence keeps (scheduling/sampled_alike.py); the result's `sampling` holds the
        counts (not the nodes found). The sampled cycle runs where that state does not serve."""
        sampling = self.sampling
        assert sampling is not None
        seq = self.sampled_alike.get(fw.name)
        if seq is None or seq.sampling is not sampling:
            seq = self.sampled_alike[fw.name] = SampledAlikeCycles(
                fw, sampling, self.config.percentage_of_nodes_to_score
            )
        node, search = seq.place_sampled(pod)
        if node is None or node == FALLBACK or search is None:
            return self.schedule(pod, None, with_details=False)
        start, processed, found, to_find, searched, stop = search
        self.cycles += 1
        seq.taken += 1
        res = CycleResult(
            pod=pod, profile=fw.name, schedulable=True, pre_filter=None, selected_node=node, top_nodes=[node]
        )
        res.sampling = sampling.advance_by(
            self.snapshot,
            start,
            processed,
            found,
            to_find,
            searched,
            fw.profile.percentage_of_nodes_to_score,
            self.config.percentage_of_nodes_to_score,
            stop,
        )
        return res

    def _filter_nominated_node(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        node_name: str,
        counted: dict[str, list[Pod]],
        res: CycleResult,
    ) -> tuple[Status | None, dict[str, Status | None]]:
        """The first try on the pod's nominated node: (its first failure, each plugin's status);
        when it fits, the cycle's filters are that node's only."""
        ni = self.snapshot.by_name[node_name]
        nominated = counted.get(node_name, [])
        first, plugins, second = fw.filter_node_with_nominated_pods(state, pod, ni, nominated)
        if nominated:
            res.nominated[node_name] = NominatedOnNode([p.key for p in nominated], second, True)
        res.nominated_node_tried = node_name
        if first is None:
            res.filters = FilterTable([node_name], {node_name: 0}, {p: [st] for p, st in plugins.items()}, [None])
        return first, plugins

    def _filter_all(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        allowed,
        statuses: NodeStatuses,
        counted: dict[str, list[Pod]],
        res: CycleResult,
        tried: str | None,
    ) -> list:
        """findNodesThatPassFilters over every node: the feasible NodeInfos; the nodes' statuses go
        into `statuses` and the table into `res`."""
        nodes = self.snapshot.list()
        # every plugin runs on every node, those kube-scheduler never filters included (their
        # own verdicts are reported; the node's verdict is the PreFilter narrowing)
        columns, first = fw.run_filter_columns(state, pod)
        names = self.snapshot.names
        index_of = self.snapshot.index_of
        if counted:
            # nodes with nominated pods of at least the pod's priority: the two passes, exactly;
            # the others keep the columns' verdicts
            columns = {p: list(col) for p, col in columns.items()}
            first = list(first)
            for node_name, nominated in counted.items():
                i = index_of[node_name]
                alone = {p: col[i] for p, col in columns.items()}
                f, plugins, second = fw.filter_node_with_nominated_pods(state, pod, nodes[i], nominated, alone)
                first[i] = f
                for p, st in plugins.items():
                    columns[p][i] = st
                res.nominated[node_name] = NominatedOnNode([p.key for p in nominated], second, node_name == tried)
        absent = statuses.absent
        if allowed is not None:
            # a node the PreFilter result leaves out keeps the status of the first try, if it had one
            first = [f if n in allowed or n == tried else absent for n, f in zip(names, first)]
        # C-level passes over the nodes (a status is never false, None always is); the feasible
        # nodes' snapshot positions are kept for scoring (their names and columns read off by them)
        at = list(compress(range(len(nodes)), map(not_, first)))
        # (every node: the snapshot's own list, which plugins recognise)
        feasible = nodes if len(at) == len(nodes) else list(map(nodes.__getitem__, at))
        self._feasible_at = (feasible, at)
        if allowed is None:
            statuses.set_in_order(names, first)
        else:
            statuses.explicit = {n: f for n, f in zip(names, first) if f is not None and f is not absent}
        if any(f.code == ERROR for f in set(filter(None, first))):
            # the diagnosis keeps the last node's error
            res.error = next(f for f in reversed(first) if f is not None and f.code == ERROR).message()
        res.filters = FilterTable(names, index_of, columns, first)
        return feasible

    # -- node sampling (scheduling/sampling.py) -------------------------------------------------
    def _samples_alone(self, fw: Framework, allowed, first_try) -> bool:
        """Whether the sampled cycle filters only the nodes its search visits: not with a
        PreFilterResult, HTTP extenders or a nominated node that failed its first try (those
        cycles filter every node and read the search off the verdicts, `_sample`)."""
        return allowed is None and first_try is None and not self.extenders and bool(fw.filter_plugins)

    def _filter_sampled(
        self,
        sampling: NodeSampling,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        statuses: NodeStatuses,
        counted: dict[str, list[Pod]],
        res: CycleResult,
    ) -> list:
        """findNodesThatPassFilters with one worker: the nodes in node-tree order from the start
        index until enough are found (NodeSampling.filter_search); the filter table and the
        statuses hold the nodes the search counted (every node when it found too few). The nodes
        found, in the snapshot's order."""
        out = sampling.filter_search(
            fw,
            state,
            pod,
            self.snapshot,
            counted,
            res,
            profile_pct=fw.profile.percentage_of_nodes_to_score,
            global_pct=self.config.percentage_of_nodes_to_score,
            one_is_enough=not fw.score_plugins,
        )
        res.sampling = out.info
        res.filters = FilterTable(out.names, out.index, out.columns, out.first)
        if out.every_node:
            state.filter_columns = out.alone_columns  # in the snapshot's order, as preemption reads them
            statuses.set_in_order(out.names, out.first)
        else:
            statuses.explicit = {name: f for name, f in zip(out.names, out.first) if f is not None}
        if out.error is not None:
            res.error = out.error.message()
        own = self.snapshot.node_infos
        if len(out.found) == len(own):
            return own
        at = sorted(out.found)
        feasible = list(map(own.__getitem__, at))
        # their positions, for PreScore and Score (read off the snapshot's columns)
        self._feasible_at = (feasible, at)
        return feasible

    def _sample(
        self,
        sampling: NodeSampling,
        fw: Framework,
        res: CycleResult,
        feasible: list,
        allowed,
        first_try,
        nominated_node: str | None,
    ) -> list:
        """The nodes kube-scheduler's search keeps of the feasible ones (every node was filtered;
        the verdicts are read in its order from its start index); the account goes into
        `res.sampling`. They are returned in the snapshot's order (scoring does not depend on it)."""
        ft = res.filters
        if not isinstance(ft, FilterTable):
            return feasible
        tried = None
        if first_try is not None and first_try[0] is not None and nominated_node:
            tried = self.snapshot.index_of[nominated_node]
        found, info = sampling.search(
            self.snapshot,
            ft.first,
            allowed,
            profile_pct=fw.profile.percentage_of_nodes_to_score,
            global_pct=self.config.percentage_of_nodes_to_score,
            has_filters=bool(fw.filter_plugins),
            one_is_enough=not fw.score_plugins
            and not (self.extenders and (self.extenders.has_filters() or self.extenders.has_prioritizers())),
            tried=tried,
        )
        res.sampling = info
        own = self.snapshot.node_infos
        if len(found) == len(own):
            self._feasible_at = (own, list(range(len(own))))
            return own
        at = sorted(found)
        feasible = [own[i] for i in at]
        self._feasible_at = (feasible, at)
        return feasible

    def _extender_filter(self, pod: Pod, feasible: list, statuses: NodeStatuses, res: CycleResult) -> tuple[list, bool]:
        """findNodesThatPassExtenders on the feasible nodes; their verdicts become columns of the
        filter table (after the plugins') and the first failures of the nodes they rejected."""
        assert self.extenders is not None
        kept, fresh, verdicts = self.extenders.filter(pod, feasible, statuses)
        ft = res.filters
        if verdicts and isinstance(ft, FilterTable):
            columns = dict(ft.columns)
            first = list(ft.first)
            for name, column in verdicts.items():
                col = [NOT_ASKED] * len(ft.names)
                for node_name, st in column.items():
                    i = ft.index.get(node_name)
                    if i is None:
                        continue
                    col[i] = st
                    if st is not None:
                        first[i] = st
                columns[name] = col
                if name not in res.filter_extenders:
                    res.filter_extenders.append(name)
            res.filters = FilterTable(ft.names, ft.index, columns, first)
        return kept, fresh

    def _collect_details(self, fw: Framework, state: CycleState, pod: Pod, res: CycleResult) -> None:
        for pl in self.explainers[fw.name]:
            try:
                d = pl.explain(state, pod, res)
            except Exception:  # explanations never change the verdict
                d = None
            if d:
                res.details[pl.name] = d

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.snapshot.get(node_name) is None:
            # a node an HTTP extender answered with (Nodes.items) that the cluster does not have:
            # kube-scheduler's cache keeps the pod on a NodeInfo without a Node, which never enters
            # its snapshot; the pod is bound to that name, nothing the next cycles see changes
            self.nominator.remove(pod)
            return
        self.snapshot.bind(pod, node_name)
        self.nominator.remove(pod)  # bound: no longer waiting for a node
        for pl in self.bind_observers:
            pl.on_bind(pod, node_name)
        for seq in self.alike.values():
            seq.bound(pod, node_name)
        for sampled in self.sampled_alike.values():
            sampled.bound(pod, node_name)

    def run_sequence(
        self, pods: list[Pod], seed: int | None = None, *, on_result=None, keep: bool = True, with_details: bool = True
    ) -> list[CycleResult]:
        """Schedule the pods in turn, binding each before the next. `on_result(result)` sees each
        result as it is decided, before its bind; keep=False returns none of them (a long sequence on a large
        cluster holds every node's verdict of every cycle otherwise); with_details as schedule's."""
        out = []
        # the pods of the sequence that carry a nomination weigh on the pods before them
        self.nominate(pods)
        with progress.task("Scheduling", total=len(pods), unit="pods") as task:
            for i, pod in enumerate(pods):
                r = self.schedule(pod, seed, with_details=with_details)
                if on_result is not None:
                    on_result(r)  # before the bind, so it still sees the cluster the pod saw
                if r.schedulable and r.selected_node:
                    self.bind(pod, r.selected_node)
                if keep:
                    out.append(r)
                task.update(i + 1)
        return out

    def clear_caches(self) -> None:
        """Forget the results shared between cycles (equivalence classes); for timing one cycle."""
        for seq in self.alike.values():
            seq.reset()
        for sampled in self.sampled_alike.values():
            sampled.reset()
        for fw in self.frameworks.values():
            fw.equivalence.clear()
            for pl in fw.plugins.values():
                if isinstance(pl, CacheHolder):
                    pl.clear_caches()  # a plugin's own memo kept between cycles


def reservoir_pick(tied: list[str], seed: int) -> str:
    """selectHost's reservoir sampling over the nodes sharing the top score (by name), seeded:
    the k-th tied node replaces the choice with probability 1/k."""
    rng = random.Random(seed)
    chosen = tied[0]
    for i, n in enumerate(tied[1:], start=2):
        if rng.randrange(i) == 0:
            chosen = n
    return chosen


def queue_sort(pods: list[Pod]) -> list[Pod]:
    """PrioritySort: higher priority first, then earlier creation (stable for ties)."""
    return sorted(pods, key=lambda p: (-p.priority, p.creation_timestamp or ""))


def _let_go(obj: Any) -> None:
    """Drop an object's attributes (its __dict__, its slots), leaving it empty."""
    if obj is None:
        return
    d = getattr(obj, "__dict__", None)
    if d is not None:
        d.clear()
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                delattr(obj, name)
