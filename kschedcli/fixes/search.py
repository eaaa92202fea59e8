"""The search for fixes: candidate changes from the cycle's statuses (pod_changes, cluster_changes),
each verified by a real cycle, kept when that cycle places the pod, ranked by how small and how
safe they are (model.KIND_RANK). Two changes are combined only when no single one sufficed.

Work is shared: a changed pod is scheduled by the session's own scheduler, so every plugin whose
results depend on fields the change left alone answers from the equivalence-class columns the
first cycle filled (framework/equivalence.py); only the changed plugins run again. A cluster
change needs its own snapshot (the edits applied to a copy of the cluster, as `ksched explain
--flag value` would), derived from the session's: only the nodes the edits touched are built again.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..edits import UNSCHEDULABLE_TAINT, Edit, apply_edits
from ..errors import InputError
from ..scheduler import Scheduler
from ..validation import check_user_object
from . import cluster_changes as cc
from . import pod_changes as pc
from .blocked import blocked_of
from .mergepatch import create_merge_patch
from .model import EXTENDER_OWNER, Change, FixSearch, OutOfReach, Suggestion, Verdict, needs_fixing
from .owners import Owner

if TYPE_CHECKING:
    from ..engine import Session
    from ..model import Pod
    from ..result import CycleResult

# where a workload keeps its pod template (a pod change is a patch of it)
TEMPLATE_PATHS = {
    "Deployment": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
PAIR_POOL = 6  # the best single candidates that failed, paired with each other


def find_fixes(
    session: Session,
    result: CycleResult,
    limit: int = 3,
    *,
    seed: int | None = None,
    before: list[Pod] | None = None,
    given_kind: str = "Pod",
    max_cycles: int | None = None,
) -> FixSearch:
    """Up to `limit` verified suggestions for the pod of `result`, best first. `before`: the
    replicas of the same workload scheduled and bound before it (a cluster change replays them);
    `given_kind`: what the user gave (a Pod, or the workload whose template a pod change patches).
    `max_cycles`: how many verifying cycles at most (default: twice `limit`, and four more)."""
    if limit <= 0 or not needs_fixing(result):
        return FixSearch([])
    search = _Search(session, result, seed, list(before or ()), given_kind)
    return search.run(limit, max_cycles if max_cycles is not None else 2 * limit + 4)


class _Search:
    def __init__(self, session: Session, result: CycleResult, seed, before: list, given_kind: str):
        self.session = session
        self.result = result
        self.pod = result.pod
        self.raw: dict = result.pod.raw if isinstance(result.pod.raw, dict) else {}
        self.seed = seed
        self.before = before
        self.template = TEMPLATE_PATHS.get(given_kind, ())
        self.scheduler = session.scheduler
        self.snapshot = self.scheduler.snapshot
        self.blocked = blocked_of(result, self.snapshot.names)
        self.cycles = 0
        self.seen_patches: list[Any] = []
        # the pods sharing the pod's owner: never evicted by a fix (fixes/owners.py)
        self.owner = Owner(self.pod, session.cluster, given_kind)
        self._pods_by_key: dict[str, Pod] | None = None

    def _pod_by_key(self, key: str, node: str | None) -> Pod | None:
        ni = self.snapshot.get(node) if node else None
        if ni is not None:  # victims are on the nominated node: look there first
            for p in ni.pods:
                if p.key == key:
                    return p
        if self._pods_by_key is None:
            self._pods_by_key = {p.key: p for p in (*self.session.cluster.pods, *self.before)}
        return self._pods_by_key.get(key)

    def siblings(self, keys: Sequence[str], node: str | None = None) -> list[str]:
        """The pods among `keys` (namespace/name, on `node` when known) that share the pod's owner."""
        out = []
        for k in keys:
            p = self._pod_by_key(k, node)
            if p is not None and self.owner.same(p):
                out.append(k)
        return out

    def out_of_reach(self) -> list[OutOfReach]:
        """The nodes an HTTP extender rejected: its owner's to open, never a suggestion's."""
        ft = self.result.filters
        out = []
        for ext in self.blocked.extenders:
            idx = self.blocked.rejected_by(ext)
            col = ft.columns.get(ext, []) if ft is not None and hasattr(ft, "columns") else []
            reasons = sorted(
                {
                    r
                    for i in idx
                    if i < len(col) and col[i] is not None
                    for r in (getattr(col[i], "reasons", None) or [])
                }
            )
            out.append(OutOfReach(EXTENDER_OWNER, ext, [self.blocked.names[i] for i in idx], reasons))
        return out

    # -- candidates ------------------------------------------------------------------------
    def candidates(self) -> list[Change]:
        b, pod, raw, snap = self.blocked, self.pod, self.raw, self.snapshot
        fw = self.scheduler.frameworks.get(self.result.profile)
        fit = fw.plugins.get("NodeResourcesFit") if fw is not None else None
        out: list[Change] = []
        preempting = self.result.preemption is not None and bool(self.result.preemption.nominated_node)
        if raw:
            out += pc.taint_changes(b, pod, snap)
            out += pc.node_selection_changes(b, pod, raw)
            out += pc.spread_changes(b, pod, raw)
            out += pc.resource_changes(b, pod, raw, snap, fit)
            out += pc.host_port_changes(b, pod, raw)
            out += pc.affinity_changes(b, pod, raw)
            if not preempting:
                out += pc.priority_changes(pod, self.session.cluster.priorities)
        out += cc.uncordon_changes(b, snap)
        out += cc.add_node_changes(b, pod, snap)
        out += cc.remove_taint_changes(b, pod, snap)
        p = self.result.preemption
        out += cc.evict_changes(self.result, set(self.siblings(self._victims(), p.nominated_node if p else None)))
        # stable: within a kind, the generators' own order (most nodes opened first)
        out.sort(key=lambda c: (c.rank, -c.opens))
        count: dict[str, int] = {}
        for c in out:
            c.repeat = count.get(c.kind, 0)
            count[c.kind] = c.repeat + 1
        return sorted(out, key=lambda c: (c.repeat, c.rank, -c.opens))

    def _victims(self) -> list[str]:
        p = self.result.preemption
        return list(p.victims) if p is not None and p.victims else []

    def pair_candidates(self, failed: list[Change]) -> list[list[Change]]:
        """Pairs, for when no single change sufficed: requests lowered together to what one node
        has free (cpu and memory both short, say), then the best failed singles two by two."""
        out: list[list[Change]] = []
        together = self._requests_together()
        if together is not None:
            out.append([together])
        out += self._node_pairs()
        pool = [c for c in failed if c.kind != "priorityClass"][:PAIR_POOL]
        for i, a in enumerate(pool):
            for c in pool[i + 1 :]:
                if a.kind != c.kind:
                    out.append([a, c])
        return out

    def _node_pairs(self, groups: int = 3) -> list[list[Change]]:
        """For the largest groups of nodes that two plugins reject: the two changes that lift both
        on one node of the group (say a toleration of its taint and a request cut to its room).
        Being cordoned is one change (uncordon) with the cordon's own taint."""
        fw = self.scheduler.frameworks.get(self.result.profile)
        fit = fw.plugins.get("NodeResourcesFit") if fw is not None else None
        nodes = self.snapshot.list()
        out: list[list[Change]] = []
        ranked = sorted(self.blocked.groups.items(), key=lambda kv: (-len(kv[1]), sorted(kv[0])))
        for failing, idx in ranked:
            if len(out) >= groups or not self.raw:
                break
            for i in idx[:3]:
                pair = self._pair_for(failing, nodes[i], fit)
                if pair is not None:
                    out.append(pair)
                    break
        return out

    def _pair_for(self, failing: frozenset[str], node_info, fit) -> list[Change] | None:
        node = node_info.node
        plugins = set(failing)
        changes: list[Change] = []
        if "NodeUnschedulable" in plugins:
            if not node.unschedulable:
                return None
            plugins.discard("NodeUnschedulable")
            others = [t for t in pc.untolerated(self.pod, node) if t[0] != UNSCHEDULABLE_TAINT]
            if not others:
                plugins.discard("TaintToleration")
            changes.append(Change("uncordon", f"uncordon {node.name}", edits=[("--uncordon", node.name)]))
        for plugin in sorted(plugins):
            c = pc.change_for_node(plugin, self.pod, self.raw, node_info, fit)
            if c is None:
                return None
            changes.append(c)
        return sorted(changes, key=lambda c: c.rank) if len(changes) == 2 else None

    def _requests_together(self) -> Change | None:
        fw = self.scheduler.frameworks.get(self.result.profile)
        fit = fw.plugins.get("NodeResourcesFit") if fw is not None else None
        if fit is None or not hasattr(fit, "insufficient") or not self.raw:
            return None
        nodes = self.snapshot.list()
        best: tuple[float, str, dict[str, int]] | None = None
        for i in self.blocked.nodes_failing_within({"NodeResourcesFit"}):
            short = fit.insufficient(self.pod, nodes[i])
            if len(short) < 2 or any(s.resource == "pods" for s in short):
                continue
            free = {s.resource: s.capacity - s.used for s in short}
            if any(v <= 0 for v in free.values()):
                continue
            # the node asking the smallest cut of the pod's requests
            ratio = min(v / max(self.pod.requests.get(r), 1) for r, v in free.items())
            name = self.blocked.names[i]
            if best is None or ratio > best[0]:
                best = (ratio, name, free)
        if best is None:
            return None
        change = pc.lower_requests_together(self.pod, self.raw, best[2], best[1])
        if change is not None:
            change.size = len(best[2])
        return change

    # -- the search ------------------------------------------------------------------------
    def run(self, limit: int, max_cycles: int) -> FixSearch:
        cands = self.candidates()
        kept: list[Suggestion] = []
        failed: list[Change] = []
        for c in cands:
            if len(kept) >= limit or self.cycles >= max_cycles:
                break
            s = self.verify([c])
            if s is not None:
                kept.append(s)
            else:
                failed.append(c)
        combined = False
        if not kept:
            combined = True
            for pair in self.pair_candidates(failed):
                if len(kept) >= limit or self.cycles >= max_cycles:
                    break
                s = self.verify(pair)
                if s is not None:
                    kept.append(s)
        kept.sort(key=Suggestion.sort_key)
        return FixSearch(
            kept, candidates=len(cands), verified=self.cycles, combined=combined, out_of_reach=self.out_of_reach()
        )

    def verify(self, changes: list[Change]) -> Suggestion | None:
        """Run the cycle with the changes made; the suggestion when it places the pod (or, for a
        priority class, when preemption nominates a node)."""
        pod_changes = [c for c in changes if c.mutate is not None]
        edits = [Edit(flag, value) for c in changes for flag, value in c.edits]
        new_raw = self.raw
        patch = None
        if pod_changes:
            new_raw = copy.deepcopy(self.raw)
            for c in pod_changes:
                assert c.mutate is not None
                c.mutate(new_raw)
            patch = create_merge_patch(self.raw, new_raw)
            if not patch or patch in self.seen_patches:
                return None
            try:
                # what the API server would refuse is never suggested
                check_user_object(new_raw, "Pod", "suggestion", "", "ignore")
            except InputError:
                return None
        through_preemption = any(c.kind == "priorityClass" for c in changes)
        try:
            if edits or (pod_changes and self.before):
                # the replicas bound before the pod come from the same template: changed alike
                r = self._run_edited(new_raw, edits, through_preemption, pod_changes)
            else:
                r = self._run_changed(new_raw, through_preemption)
        except InputError:
            return None
        if r is None:
            return None
        p = r.preemption
        if not r.schedulable and not (through_preemption and p is not None and p.nominated_node):
            return None
        if not r.schedulable and p is not None and self.siblings(p.victims, p.nominated_node):
            # it works only by evicting the pod's own siblings: after the change they have its
            # priority (the template is theirs too), and their controller makes them again
            return None
        if patch is not None:
            self.seen_patches.append(patch)
        verdict = Verdict(r.schedulable, r.selected_node, sorted(r.feasible))
        if not r.schedulable and p is not None:
            verdict.nominated_node = p.nominated_node
            verdict.victims = list(p.victims)
        return Suggestion(
            changes, verdict, patch=self._wrap(patch) if patch is not None else None, edits=[str(e) for e in edits]
        )

    def _wrap(self, patch: dict) -> dict:
        for key in reversed(self.template):
            patch = {key: patch}
        return patch

    def _pod(self, cluster, raw: dict, through_preemption: bool) -> Pod:
        pod = cluster.parse_pod(raw, "suggestion", "")
        pod.scheduler_name = self.pod.scheduler_name  # --profile's choice, if any
        if not through_preemption:
            # only a cycle that places the pod is kept, and PostFilter runs only when none does:
            # its dry run would be wasted work
            pod.preemption_policy = "Never"
        return pod

    def _run_changed(self, raw: dict, through_preemption: bool) -> CycleResult:
        pod = self._pod(self.session.cluster, raw, through_preemption)
        self.cycles += 1
        with _quiet(self.scheduler):
            return self.scheduler.schedule(pod, self.seed, with_details=False)

    def _run_edited(
        self, raw: dict, edits: list[Edit], through_preemption: bool, pod_changes: Sequence[Change] = ()
    ) -> CycleResult | None:
        cluster = copy.copy(self.session.cluster)
        cluster.nodes = list(cluster.nodes)
        cluster.pods = list(cluster.pods)
        if edits:
            apply_edits(cluster, edits)
        # the session's snapshot with only the touched nodes built again
        scheduler = Scheduler(cluster, self.session.config, self.snapshot.derive(cluster.nodes, cluster.pods))
        self.cycles += 1
        if self.before:
            raws = [copy.deepcopy(p.raw) for p in self.before]
            for c in pod_changes:
                assert c.mutate is not None
                for r in raws:
                    c.mutate(r)
            again = [cluster.parse_pod(r, "suggestion", "") for r in raws]
            for old, new in zip(self.before, again):
                new.scheduler_name = old.scheduler_name
            scheduler.run_sequence(again, self.seed, keep=False)
        return scheduler.schedule(self._pod(cluster, raw, through_preemption), self.seed, with_details=False)


@contextmanager
def _quiet(scheduler: Scheduler):
    """A verifying cycle leaves the session's scheduler as it found it: no OpportunisticBatching
    hint stored for, or spent by, a pod that is not scheduled."""
    batches = scheduler.batches
    scheduler.batches = {}
    try:
        yield
    finally:
        scheduler.batches = batches
