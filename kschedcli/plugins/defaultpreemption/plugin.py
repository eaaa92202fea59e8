"""DefaultPreemption: the PostFilter that looks for pods to evict so that an unschedulable pod fits.

The steps follow kube-scheduler's preemption Evaluator:
  1. eligibility: preemptionPolicy Never, or a terminating victim on the already nominated node;
  2. the nodes where preemption might help: those whose filter status is Unschedulable (an
     UnschedulableAndUnresolvable node stays out whatever is evicted);
  3. a dry run on each such node (SelectVictimsOnNode): remove every lower-priority pod, check the
     filters, then reprieve pods one by one (PDB-violating ones first, each group from the most
     important down) while the preemptor still fits;
  4. the choice among candidates (pickOneNodeForPreemption): fewest PDB violations, lowest
     highest-victim priority, smallest priority sum, fewest victims, latest start of the most
     important victims, then the first.
kube-scheduler stops the dry run once it has enough candidates (minCandidateNodesPercentage /
minCandidateNodesAbsolute, from a random offset); ksched evaluates every potential node, as the
conformance corpus does, and reports the count kube-scheduler would have aimed for. With
sample_candidates(seed) (`--preemption-sampling`) it bounds the dry run as kube-scheduler does,
the offset drawn from a source seeded by --seed, the nodes taken one at a time from it.
The victims' order of importance, the PDB budgets and each node's ordered pods live in
preemption_victims.
"""

from __future__ import annotations

import math
import operator
import random
import time
from bisect import bisect_right
from itertools import compress
from typing import TYPE_CHECKING, Any

from ...api.model import Resource
from ...framework.fit_error import fit_error_message
from ...framework.interface import Plugin, PostFilterPlugin, PostFilterResult, PreEnqueuePlugin
from ...framework.result import Candidate, Explainer, NodeWhys, PreemptionResult
from ...framework.runtime import NodeStatuses
from ...framework.status import ERROR, SUCCESS, UNRESOLVABLE, UNSCHEDULABLE, Status
from .victims import (
    Budgets,
    _VictimOrder,
    earliest_start_of_most_important,
    more_important,
    sort_by_importance,
    terminating_by_preemption,
)

if TYPE_CHECKING:
    from ...api.model import Pod
    from ...framework.cycle_state import CycleState
    from ...framework.interface import FilterPlugin
    from ...framework.result import CycleResult
    from ...framework.runtime import Framework


NEVER_MSG = "not eligible due to preemptionPolicy=Never."
TERMINATING_MSG = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS_MSG = "No preemption victims found for incoming pod"
NOT_HELPFUL_MSG = "Preemption is not helpful for scheduling"
NO_CANDIDATE_MSG = "no candidate node for preemption"

# pickOneNodeForPreemption's criteria, in order; a candidate's decided_by names the one it lost on
CRITERIA = ("pdbViolations", "highestVictimPriority", "victimPrioritySum", "victimCount", "latestStartTime")

_INT32_OFFSET = 1 << 31  # math.MaxInt32 + 1: keeps every summed priority non-negative


def aggregate_errors(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as is, several deduplicated in brackets."""
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


class _DryRunError(Exception):
    def __init__(self, status: Status):
        super().__init__(status.message())
        self.status = status


def _run_extensions(runners, go_name: str, state, pod, p, ni) -> None:
    """The PreFilter extensions' AddPod/RemovePod of p on the dry run's node; a failure ends the dry run."""
    for pl, fn in runners:
        st = fn(state, pod, p, ni)
        if st is not None and not st.is_success():
            raise _DryRunError(Status(ERROR, f'running {go_name} on PreFilter plugin "{pl.name}": {st.message()}'))


_VICTIM_ORDER = "DefaultPreemption.victim-order"
_MISSING: Any = object()


# -- the plugin ------------------------------------------------------------------------------------


class DefaultPreemption(Plugin, PreEnqueuePlugin, PostFilterPlugin, Explainer):
    name = "DefaultPreemption"

    # -- arithmetic kube-scheduler uses to bound the dry run
    def calculate_num_candidates(self, num_nodes: int) -> int:
        pct = int(self.args.get("minCandidateNodesPercentage", 10))
        absolute = int(self.args.get("minCandidateNodesAbsolute", 100))
        n = (num_nodes * pct) // 100
        if n < absolute:
            n = absolute
        if n > num_nodes:
            n = num_nodes
        return n

    # kube-scheduler's bounded dry run (opt-in): a random source for the offsets, None to
    # evaluate every potential node (ksched's default, the conformance corpus's convention)
    candidate_sampling: random.Random | None = None

    def sample_candidates(self, seed: int) -> None:
        """Bound the dry run as kube-scheduler does: from a random offset (drawn from a source
        seeded with `seed`, one draw per preemption), stop once numCandidates candidates are found."""
        self.candidate_sampling = random.Random(seed)

    # -- PostFilter
    def pre_enqueue(self, pod: Pod) -> Status | None:
        # v1.34 registers DefaultPreemption at PreEnqueue to hold pods whose async preemption is
        # still evicting victims; ksched evicts nothing, so no pod is ever held.
        return None

    def post_filter(
        self, state: CycleState, pod: Pod, node_statuses: NodeStatuses
    ) -> tuple[PostFilterResult | None, Status | None]:
        now_ns = time.time_ns()
        detail = PreemptionResult(nominated_node=None, victims=[], equally_good=[], message="")

        why = self.eligibility(pod, node_statuses)
        if why:
            detail.ineligible = why
            return PostFilterResult(None, detail), Status(UNSCHEDULABLE, "preemption: " + why)

        snapshot = self.handle.snapshot
        all_nodes = snapshot.list()
        if not all_nodes:
            return PostFilterResult(None, detail), Status(ERROR, "preemption: no nodes available")

        # NodeToStatus.NodesForStatusCode(Unschedulable): the nodes where evicting may help; the
        # others are noted with why not
        names = snapshot.names
        statuses = node_statuses.in_order(names)
        # nodes failing alike share one status: each distinct one is looked at once
        distinct = set(statuses)
        why_of = {st: _unresolvable_why(st) for st in distinct if st.code != UNSCHEDULABLE}
        if why_of:
            whys = list(map(why_of.get, statuses))  # None where preemption may help
            # the potential nodes' snapshot positions: their nodes and names read off the lists
            at = list(compress(range(len(names)), map(operator.not_, whys)))
            potential = list(map(all_nodes.__getitem__, at))
            potential_names = list(map(names.__getitem__, at))
            detail.not_helpful = NodeWhys(names, whys)
        else:
            potential = list(all_nodes)
            potential_names = list(names)
            at = list(range(len(names)))
        detail.potential_nodes = len(potential)
        detail.num_candidates = self.calculate_num_candidates(len(potential)) if potential else 0

        dry = NodeStatuses(Status(UNRESOLVABLE, NOT_HELPFUL_MSG))
        candidates: list[Candidate] = []
        if potential:
            rng = self.candidate_sampling
            if rng is None:
                non_violating, violating, errors = self.dry_run(state, pod, potential, dry, now_ns, potential_names, at)
                detail.evaluated_nodes = len(potential)
            else:
                # GetOffsetAndNumCandidates: a random offset among the potential nodes
                offset = rng.randrange(len(potential))
                detail.sampling_offset = offset
                non_violating, violating, errors, detail.evaluated_nodes = self.sampled_dry_run(
                    state, pod, potential, dry, now_ns, potential_names, at, offset, detail.num_candidates
                )
            candidates = non_violating + violating
            for name, st in dry.explicit.items():
                detail.not_helpful[name] = _dry_run_why(st)
            if errors and not candidates:
                msg = aggregate_errors(errors)
                return PostFilterResult(None, detail), Status(ERROR, "preemption: " + msg)

        if not candidates:
            msg = fit_error_message(len(all_nodes), "", dry, "")
            return PostFilterResult(None, detail), Status(UNSCHEDULABLE, "preemption: " + msg)

        extenders = self.handle.extenders
        if extenders is not None:
            # callExtenders: the HTTP extenders may drop candidates or change their victims
            before = {c.node for c in candidates}
            candidates, failed = extenders.process_preemption(pod, candidates)
            if failed is not None:
                return PostFilterResult(None, detail), Status(ERROR, "preemption: " + failed.message())
            for name in sorted(before - {c.node for c in candidates}):
                detail.not_helpful[name] = "dropped by an extender (ProcessPreemption)"
            if not candidates:
                detail.candidates = []
                return PostFilterResult(None, detail), Status(UNSCHEDULABLE, "preemption: " + NO_CANDIDATE_MSG)

        best, ties = self.select_candidate(candidates, now_ns)
        detail.candidates = candidates
        detail.equally_good = ties
        detail.nominated_node = best.node
        detail.victims = list(best.victims)
        return PostFilterResult(best.node, detail), None

    # -- 1. eligibility
    def eligibility(self, pod, node_statuses) -> str:
        """PodEligibleToPreemptOthers: "" when the pod may preempt, else why not."""
        if pod.preemption_policy == "Never":
            return NEVER_MSG
        nominated = self.handle.nominator.status_node(pod)
        if nominated:
            if node_statuses.get(nominated).code == UNRESOLVABLE:
                return ""
            ni = self.handle.snapshot.get(nominated)
            if ni is not None:
                for p in ni.pods:
                    if p.priority < pod.priority and terminating_by_preemption(p):
                        return TERMINATING_MSG
        return ""

    # -- 3. the dry run
    def budgets(self) -> Budgets:
        """The cluster's PDBs, indexed once for as long as they stay the same objects."""
        raw = self.handle.cluster.list("PodDisruptionBudget")
        cached = getattr(self, "_budgets", None)
        if cached is not None and len(cached[0]) == len(raw) and all(a is b for a, b in zip(cached[0], raw)):
            return cached[1]
        budgets = Budgets(raw)
        self._budgets = (raw, budgets)
        return budgets

    def dry_run(self, state, pod, potential, dry: NodeStatuses, now_ns: int, names=None, positions=None):
        """SelectVictimsOnNode on every potential node: (candidates without PDB violations,
        candidates with some, error messages); the other nodes' statuses go into `dry`. The
        nodes' names and snapshot positions may be given (else read off the nodes)."""
        budgets = self.budgets()
        less = more_important(now_ns)
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        errors: list[str] = []
        outcomes = self._outcomes(state, pod, potential, budgets, less, positions)
        if names is None:
            names = [ni.node.name for ni in potential]
        # (the names come from the snapshot's list: a candidate keeps one without reading the node)
        for name, (victims, n_violating, st) in zip(names, outcomes):
            if st is None and victims:
                c = Candidate(name, victims, n_violating)
                (non_violating if n_violating == 0 else violating).append(c)
                continue
            if st is None:
                st = Status(ERROR, f'expected at least one victim pod on node "{name}"')
            if st.code == ERROR:
                errors.append(st.message())
            dry.set(name, st)
        return non_violating, violating, errors

    def sampled_dry_run(
        self, state, pod, potential, dry: NodeStatuses, now_ns: int, names, positions, offset: int, wanted: int
    ):
        """DryRunPreemption as kube-scheduler bounds it, its nodes taken one at a time: from
        `offset` on, around the potential nodes, stopping once `wanted` candidates are found with
        at least one that violates no PDB (each kind kept to `wanted`, as its candidateList).
        Returns (candidates without PDB violations, with some, error messages, nodes evaluated);
        the evaluated nodes' other statuses go into `dry`. The nodes are worked out in chunks of
        `wanted` (the chunk's nodes past the stop are not looked at)."""
        budgets = self.budgets()
        less = more_important(now_ns)
        n = len(potential)
        # the lists from the offset on, around (slices: no Python step per node)
        rotated = potential[offset:] + potential[:offset]
        rotated_names = names[offset:] + names[:offset]
        rotated_at = positions[offset:] + positions[:offset] if positions is not None else None
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        errors: list[str] = []
        evaluated = 0
        chunk = max(1, wanted)
        for start in range(0, n, chunk):
            end = start + chunk
            at = rotated_at[start:end] if rotated_at is not None else None
            outcomes = self._outcomes(state, pod, rotated[start:end], budgets, less, at)
            for name, (victims, n_violating, st) in zip(rotated_names[start:end], outcomes):
                evaluated += 1
                if st is None and victims:
                    kind = non_violating if n_violating == 0 else violating
                    if len(kind) < wanted:
                        kind.append(Candidate(name, victims, n_violating))
                    if non_violating and len(non_violating) + len(violating) >= wanted:
                        return non_violating, violating, errors, evaluated
                    continue
                if st is None:
                    st = Status(ERROR, f'expected at least one victim pod on node "{name}"')
                if st.code == ERROR:
                    errors.append(st.message())
                dry.set(name, st)
        return non_violating, violating, errors, evaluated

    def _outcomes(self, state, pod, potential, budgets: Budgets, less, positions):
        """SelectVictimsOnNode's (victims, PDB-violating victims, status or None) per potential
        node, in their order (a list, or an iterator working them out as it goes)."""
        # nodes with nominated pods of at least the pod's priority: the exact dry run, those pods
        # counted in both passes; the others by the quicker paths
        counted = self.handle.nominator.counted_by_node(pod)
        plain = [ni for ni in potential if ni.node.name not in counted] if counted else potential
        if plain is not potential:
            positions = None
        outcomes = self._resource_only_dry_run(state, pod, plain, budgets, less, positions=positions) if plain else []
        if outcomes is None:
            outcomes = (self.select_victims_on_node(state, pod, ni, budgets, less) for ni in plain)
        if counted:
            by_node = dict(zip((ni.node.name for ni in plain), outcomes, strict=True))
            outcomes = [
                by_node[ni.node.name]
                if ni.node.name not in counted
                else self.select_victims_with_nominated(state, pod, ni, budgets, less, counted[ni.node.name])
                for ni in potential
            ]
        return outcomes

    def _resource_only_dry_run(self, state, pod, potential, budgets: Budgets, less, positions=None):
        """SelectVictimsOnNode on every potential node at once, when only NodeResourcesFit among
        the filters that run can change its verdict with the node's pods, no PreFilter extension
        follows them, and the pod asks for no extended resource: each node's (victims,
        PDB-violating victims, status or None), or None when that does not hold.

        The node-only filters' verdicts are this cycle's (or asked once per plugin for all the
        nodes): they ignore the pods. Each node's pods are kept in importance order with running
        request totals (until its pods change), so the lower-priority pods are a suffix of that
        order, the node without them a subtraction and each reprieve a comparison."""
        fw = self.handle.framework
        assert fw is not None  # plugins run inside their profile's framework
        fit, rest = _reprieve_filters(fw, state)
        if (
            fit is None
            or rest
            or not fit_is_in_tree(fit)
            or fw.pre_filter_extensions("remove_pod", state)
            or fw.pre_filter_extensions("add_pod", state)
        ):
            return None
        req = fit.prefilter_requests(state)
        if req is None or req.scalars:
            return None
        skip = state.skip_filter_plugins
        # per node: the first failing node-only filter before NodeResourcesFit, and after it (None
        # when no potential node fails one: the usual case, a node-only failure being unresolvable)
        before: list | None = None
        after: list | None = None
        seen_fit = False
        known = state.filter_columns or {}  # this cycle's verdicts, in snapshot order
        for pl in fw.filter_plugins:
            if pl.name in skip:
                continue
            if pl is fit:
                seen_fit = True
                continue
            col = known.get(pl.name)
            if col is not None:
                if positions is None:
                    index_of = self.handle.snapshot.index_of
                    positions = [index_of[ni.node.name] for ni in potential]
                verdicts = list(map(col.__getitem__, positions))
            else:
                verdicts = fw.filter_column(pl, state, pod, potential)
            failing = [(i, st) for i, st in enumerate(verdicts) if st is not None] if any(verdicts) else ()
            for i, st in failing:
                if st.code == SUCCESS:
                    continue
                if seen_fit:
                    if after is None:
                        after = [None] * len(potential)
                    into = after
                else:
                    if before is None:
                        before = [None] * len(potential)
                    into = before
                if into[i] is None:
                    into[i] = st
        cpu, mem, eph = req.milli_cpu, req.memory, req.ephemeral_storage
        ask_cpu, ask_mem, ask_eph = cpu > 0, mem > 0, eph > 0
        neg_prio = -pod.priority
        inf = math.inf
        general = self._select_victims_by_arithmetic
        build = _VictimOrder.build
        out: list[tuple[list, int, Status | None]] = []
        # the outcome of every node without lower-priority pods (shared, never changed)
        no_victims: tuple[list, int, Status | None] = ([], 0, Status(UNRESOLVABLE, NO_VICTIMS_MSG))
        append = out.append
        for i, ni in enumerate(potential):
            derived = ni.derived
            order = derived.get(_VICTIM_ORDER, _MISSING) if derived else _MISSING
            if order is _MISSING:
                order = ni.derive(_VICTIM_ORDER, build)
            if order is None:  # a pod without a start time: Go's own sort decides
                low = [p for p in ni.pods if p.priority < -neg_prio]
                append(general(state, pod, ni, low, fit, budgets, less) if low else no_victims)
                continue
            # (one unpacking: thousands of nodes go through here each cycle)
            (
                neg_priority,
                n,
                last_tie,
                cap_cpu,
                cap_mem,
                cap_eph,
                max_pods,
                cpu_upto,
                mem_upto,
                eph_upto,
                min_cpu,
                min_mem,
                min_eph,
                reqs,
                pods,
            ) = order.packed
            k = bisect_right(neg_priority, neg_prio)  # the first pod of lower priority
            if k == n:
                append(no_victims)
                continue
            if n - k > 12 and last_tie >= k:
                # ties among more pods than Go's insertion sort handles: its own sort decides
                append(general(state, pod, ni, [p for p in ni.pods if p.priority < -neg_prio], fit, budgets, less))
                continue
            if before is not None and before[i] is not None:
                append(([], 0, before[i]))
                continue
            # what the pods before k may request in all once the preemptor is in (a resource it
            # does not ask for is never compared), and the room left for pods
            lim_cpu = cap_cpu - cpu if ask_cpu else inf
            lim_mem = cap_mem - mem if ask_mem else inf
            lim_eph = cap_eph - eph if ask_eph else inf
            if not (k < max_pods and cpu_upto[k] <= lim_cpu and mem_upto[k] <= lim_mem and eph_upto[k] <= lim_eph):
                used = ni.requested  # what the node's pods request, less the lower-priority ones
                reduced = Resource(
                    used.milli_cpu - (cpu_upto[n] - cpu_upto[k]),
                    used.memory - (mem_upto[n] - mem_upto[k]),
                    used.ephemeral_storage - (eph_upto[n] - eph_upto[k]),
                )
                st = fit.filter_on(state, ni.node, reduced, k)
                if not st.is_rejected():
                    st = Status(ERROR, f'running "{fit.name}" filter plugin: {st.message()}')
                append(([], 0, st.with_plugin(fit.name)))
                continue
            if after is not None and after[i] is not None:
                append(([], 0, after[i]))
                continue
            room = max_pods - 1 - k  # pods that may still come back
            pdb = order.pdb
            if pdb is None or pdb[0] is not budgets:
                order.match_budgets(budgets)
            if k >= order.clean_from:
                # no pod from k on violates a budget, so they come back in order: the reprieve
                # keeps the longest run of pods k.. whose running totals fit (requests are never
                # negative), found by bisection; past it only a pod small enough for what is
                # left can come back
                t = k + room if room < n - k else n
                if t > k and ask_cpu:
                    t = bisect_right(cpu_upto, lim_cpu, k, t + 1) - 1
                if t > k and ask_mem:
                    t = bisect_right(mem_upto, lim_mem, k, t + 1) - 1
                if t > k and ask_eph:
                    t = bisect_right(eph_upto, lim_eph, k, t + 1) - 1
                room -= t - k
                free_cpu = lim_cpu - cpu_upto[t]
                free_mem = lim_mem - mem_upto[t]
                free_eph = lim_eph - eph_upto[t]
                if room <= 0 or min_cpu[t] > free_cpu or min_mem[t] > free_mem or min_eph[t] > free_eph:
                    append((pods[t:], 0, None))  # none of the rest fits: all are victims
                    continue
                victims = []
                for j in range(t, n):
                    c, m, e = reqs[j]
                    if c <= free_cpu and m <= free_mem and e <= free_eph:
                        room -= 1
                        free_cpu -= c
                        free_mem -= m
                        free_eph -= e
                        j += 1
                        if room <= 0 or min_cpu[j] > free_cpu or min_mem[j] > free_mem or min_eph[j] > free_eph:
                            victims += pods[j:]  # none of the rest fits any more
                            break
                    else:
                        victims.append(pods[j])
                append((victims, 0, None))
                continue
            violating, fine = order.split(budgets, k)
            free_cpu = lim_cpu - cpu_upto[k]
            free_mem = lim_mem - mem_upto[k]
            free_eph = lim_eph - eph_upto[k]
            # some pods from k on violate a budget: they come back first, then the others
            victims = []
            n_violating = 0
            for group, violates in ((violating, True), (fine, False)):
                for j in group:
                    c, m, e = reqs[j]
                    if room > 0 and c <= free_cpu and m <= free_mem and e <= free_eph:
                        room -= 1
                        free_cpu -= c
                        free_mem -= m
                        free_eph -= e
                    else:
                        victims.append(pods[j])
                        n_violating += violates
            if violating and fine:
                sort_by_importance(victims, less)
            append((victims, n_violating, None))
        return out

    def select_victims_on_node(self, state, pod, node_info, budgets: Budgets, less):
        """SelectVictimsOnNode on copies of the node and the cycle state.
        Returns (victims in kube-scheduler's order, PDB-violating victims, status or None)."""
        potential = [p for p in node_info.pods if p.priority < pod.priority]
        if not potential:
            return [], 0, Status(UNRESOLVABLE, NO_VICTIMS_MSG)
        fw = self.handle.framework
        assert fw is not None
        removers = fw.pre_filter_extensions("remove_pod", state)
        adders = fw.pre_filter_extensions("add_pod", state)
        fit, rest = _reprieve_filters(fw, state)
        if fit is not None and not rest and not adders and not removers and fit_is_in_tree(fit):
            return self._select_victims_by_arithmetic(state, pod, node_info, potential, fit, budgets, less)
        if removers or adders:
            state = state.clone()  # the extensions change it; without them it is only read

        def remove(p):
            ni.remove_pod(p)
            _run_extensions(removers, "RemovePod", state, pod, p, ni)

        # The node without every lower-priority pod, built from the pods that stay (removing
        # them one by one is quadratic); the PreFilter extensions still see each removal in
        # order. They read the node, never its pod list, so the node they are shown already
        # lacks all of them.
        ni = node_info.without(set(map(id, potential)))
        try:
            for p in potential:
                _run_extensions(removers, "RemovePod", state, pod, p, ni)
            st = fw.run_filter_plugins(state, pod, ni)
            if st is not None:
                return [], 0, st
            sort_by_importance(potential, less)
            violating, fine = budgets.split(potential)
            victims = []
            n_violating = 0
            # A reprieve only asks whether every filter still passes, so the order of the filters
            # does not matter there. The node-only filters passed just above and cannot change
            # with the node's pods; NodeResourcesFit goes first, on the node alone: it does not
            # read what the PreFilter extensions keep, so when it fails their AddPod/RemovePod
            # pair (exact inverses, erring only when the state is missing, which the removals
            # above would have shown) is skipped.

            def reprieve(p) -> bool:
                ni.add_pod(p)
                if fit is not None:
                    st = fit.filter(state, pod, ni)
                    if st is not None and not st.is_success():
                        ni.remove_pod(p)
                        victims.append(p)
                        return False
                _run_extensions(adders, "AddPod", state, pod, p, ni)
                for pl in rest:
                    st = pl.filter(state, pod, ni)
                    if st is not None and not st.is_success():
                        remove(p)
                        victims.append(p)
                        return False
                return True

            for p in violating:
                if not reprieve(p):
                    n_violating += 1
            for p in fine:
                reprieve(p)
        except _DryRunError as e:
            return [], 0, e.status
        if violating and fine:
            sort_by_importance(victims, less)
        return victims, n_violating, None

    def select_victims_with_nominated(self, state, pod, node_info, budgets: Budgets, less, nominated):
        """SelectVictimsOnNode on a node with nominated pods of at least the pod's priority: every
        filter check is RunFilterPluginsWithNominatedPods (those pods added to the node without
        the victims, then, if every filter passed, the node alone)."""
        potential = [p for p in node_info.pods if p.priority < pod.priority]
        if not potential:
            return [], 0, Status(UNRESOLVABLE, NO_VICTIMS_MSG)
        fw = self.handle.framework
        assert fw is not None
        removers = fw.pre_filter_extensions("remove_pod", state)
        adders = fw.pre_filter_extensions("add_pod", state)
        state = state.clone()
        ni = node_info.without(set(map(id, potential)))

        def fits() -> Status | None:
            return fw.run_filter_plugins_with_nominated_pods(state, pod, ni, nominated)

        try:
            for p in potential:
                _run_extensions(removers, "RemovePod", state, pod, p, ni)
            st = fits()
            if st is not None:
                return [], 0, st
            sort_by_importance(potential, less)
            violating, fine = budgets.split(potential)
            victims = []
            n_violating = 0
            for group in (violating, fine):
                for p in group:
                    ni.add_pod(p)
                    _run_extensions(adders, "AddPod", state, pod, p, ni)
                    if fits() is not None:
                        ni.remove_pod(p)
                        _run_extensions(removers, "RemovePod", state, pod, p, ni)
                        victims.append(p)
                        n_violating += group is violating
        except _DryRunError as e:
            return [], 0, e.status
        if violating and fine:
            sort_by_importance(victims, less)
        return victims, n_violating, None

    # -- 4. the choice
    def _select_victims_by_arithmetic(self, state, pod, node_info, potential, fit, budgets: Budgets, less):
        """SelectVictimsOnNode when only NodeResourcesFit, among the filters that run, can change
        its verdict with the node's pods and no PreFilter extension follows them: the node
        without the lower-priority pods, and each reprieve, are resource sums and pod counts.
        The node-only filters are asked about the node as it is (their verdict ignores its pods),
        every filter in profile order as the framework runs them."""
        fw = self.handle.framework
        assert fw is not None
        used = node_info.requested.clone()
        for p in potential:
            used.add(p.requests, -1)
        npods = len(node_info.pods) - len(potential)
        skip = state.skip_filter_plugins
        fit_on = fit.filter_on if fit is not None else _no_fit
        for pl in fw.filter_plugins:
            if pl.name in skip:
                continue
            st = fit_on(state, node_info.node, used, npods) if pl is fit else pl.filter(state, pod, node_info)
            if st is not None and not st.is_success():
                if not st.is_rejected():
                    st = Status(ERROR, f'running "{pl.name}" filter plugin: {st.message()}')
                return [], 0, st.with_plugin(pl.name)
        sort_by_importance(potential, less)
        violating, fine = budgets.split(potential)
        victims = []
        n_violating = 0
        fits = fit.reprieve_check(state, node_info.node)
        for group in (violating, fine):
            for p in group:
                used.add(p.requests, 1)
                if fits(used, npods + 1):
                    npods += 1
                else:
                    used.add(p.requests, -1)
                    victims.append(p)
                    if group is violating:
                        n_violating += 1
        if violating and fine:
            sort_by_importance(victims, less)
        return victims, n_violating, None

    def select_candidate(self, candidates: list[Candidate], now_ns: int):
        """pickOneNodeForPreemption over every candidate. Returns the chosen one and every candidate
        tying with it on all criteria (itself included); the others get decided_by set."""
        if len(candidates) == 1:
            return candidates[0], [candidates[0]]

        remaining = list(candidates)
        for k, criterion in enumerate(CRITERIA):
            # each criterion as a score, higher is better
            if k == 0:
                scores = [-c.pdb_violations for c in remaining]
            elif k == 1:
                scores = [-c.pods[0].priority for c in remaining]
            elif k == 2:
                # the sum of (priority + MaxInt32 + 1) over the victims
                scores = [-(sum([p.priority for p in c.pods]) + len(c.pods) * _INT32_OFFSET) for c in remaining]
            elif k == 3:
                scores = [-len(c.pods) for c in remaining]
            else:
                scores = [earliest_start_of_most_important(c.pods, now_ns) for c in remaining]
            best = max(scores)
            if min(scores) == best:
                continue
            kept = []
            for c, s in zip(remaining, scores):
                if s == best:
                    kept.append(c)
                else:
                    c.decided_by = criterion
            remaining = kept
            if len(remaining) == 1:
                break
        return remaining[0], remaining

    # -- explanation
    def explain(self, state: CycleState, pod: Pod, result: CycleResult) -> dict | None:
        p = result.preemption
        if p is None or p.potential_nodes is None:
            return None
        return {
            "potentialNodes": p.potential_nodes,
            "minCandidateNodesPercentage": int(self.args.get("minCandidateNodesPercentage", 10)),
            "minCandidateNodesAbsolute": int(self.args.get("minCandidateNodesAbsolute", 100)),
            "numCandidates": p.num_candidates,
            "evaluatedNodes": p.evaluated_nodes,
            "candidatesFound": len(p.candidates),
            **({"samplingOffset": p.sampling_offset} if p.sampling_offset is not None else {}),
        }


# filters whose verdict depends on the node and the incoming pod only, never on the node's pods
NODE_ONLY_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"})


def fit_is_in_tree(pl) -> bool:
    """The NodeResourcesFit plugin is ksched's own (a registry may replace it)."""
    from ..noderesources.fit import NodeResourcesFit

    return type(pl) is NodeResourcesFit


def _no_fit(*_: object) -> None:
    raise AssertionError("the arithmetic path runs only with NodeResourcesFit")


def _reprieve_filters(fw: Framework, state: CycleState) -> tuple[Any, list[FilterPlugin]]:
    """(NodeResourcesFit or None, the other filters a reprieve must still run), in profile order.
    (Any: a registry may replace NodeResourcesFit; fit_is_in_tree says whether it is ksched's.)"""
    skip = state.skip_filter_plugins
    fit: Any = None
    rest: list[FilterPlugin] = []
    for pl in fw.filter_plugins:
        if pl.name in skip or pl.name in NODE_ONLY_FILTERS:
            continue
        if pl.name == "NodeResourcesFit":
            fit = pl
        else:
            rest.append(pl)
    return fit, rest


def _unresolvable_why(st: Status) -> str:
    msg = st.message()
    who = f"{st.plugin}: " if st.plugin else ""
    if msg:
        return f"{who}{msg} ({st.code}: evicting pods cannot change it)"
    return f"{who}{st.code}: evicting pods cannot change it"


def _dry_run_why(st: Status) -> str:
    msg = st.message()
    if st.code == ERROR:
        return f"error: {msg}"
    if msg == NO_VICTIMS_MSG:
        return msg
    who = f"{st.plugin}: " if st.plugin else ""
    return f"still rejected with every lower-priority pod evicted: {who}{msg}"
