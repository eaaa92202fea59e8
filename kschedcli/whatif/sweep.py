"""`ksched sweep`: does everything come back when a node, a zone, or K random nodes fail, and can
a node pool be upgraded one batch of nodes at a time?

A sweep is a list of scenarios over ONE loaded cluster. Each scenario is a set of edits applied to
that cluster and forgotten afterwards: never a reload, never a snapshot built again from scratch.

A failure scenario (`--fail node|zone|nodes=K`):
  1. the failed nodes and their pods leave the cluster; the scheduler's snapshot is derived from
     the loaded one (Snapshot.derive): every untouched node keeps its NodeInfo, shared, and a
     NodeInfo is copied only when a cycle binds to it or evicts from it;
  2. a failed node's pods come back only where a controller recreates them: ReplicaSet,
     StatefulSet, Job (any owner but a DaemonSet or a Node) pods get a replacement; DaemonSet pods
     do not move (their node is gone, so is their place), a static (mirror) pod neither; a pod
     without a controller is lost, a finding;
  3. the replacements are scheduled highest priority first (PrioritySort), preemption carried out
     as `schedule --preemption=carry-out` does (whatif/carryout.py).

A rolling scenario (`--rolling SELECTOR`) is one step of a node-pool upgrade: a batch of nodes
(`--max-unavailable`) drained as `ksched drain` drains (whatif/drain.py: kubectl's filters, the
eviction API's PodDisruptionBudget checks, the replacements rescheduled), then the upgraded nodes
come back empty and schedulable. Steps follow each other on the same cluster, as the upgrade does.

A scenario's findings are plain data (`Scenario.doc`), so the scenarios can run in other
processes (the local pool, Dask) and be put back in their order: results never depend on where or
in how many workers they ran.
"""

from __future__ import annotations

import copy
import itertools
import marshal
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..api.labels import parse_selector
from ..api.model import Pod
from ..backend.node_tree import ZONE_BETA
from ..backend.snapshot import NodeInfo, Snapshot, free_of, without_positions
from ..config.scheduler import SchedulerConfig
from ..errors import InputError, cut
from ..framework.result import CycleResult
from ..inputs.cluster import Cluster
from ..loader import freeze_lasting, no_gc, transient
from ..scheduling.scheduler import Scheduler, queue_sort
from .carryout import Decision, fit_reason, run_carrying_out
from .drain import MIRROR_POD_ANNOTATION, budgets_of, replacement_of
from .edits import is_daemonset_pod, owner_of

ZONE_LABEL = "topology.kubernetes.io/zone"
BARE = "bare pods (no controller)"
# --samples at most: far more random K-node sets than a sweep can use (each is a scenario run), and a
# bound, so that `--samples 1000000000` is one line, not a plan that never finishes being drawn
MAX_SAMPLES = 100_000
# --workers at most: each worker process loads the world (spawned, ~100 MB before the snapshot), so
# `--workers 10000` would start thousands of them; more processes than cores gain nothing
MAX_WORKERS = 128


@dataclass(frozen=True)
class ScenarioSpec:
    """One scenario: its family (node, zone, nodes, rolling), its name, the nodes it takes away."""

    family: str
    name: str
    nodes: tuple[str, ...]

    def label(self) -> str:
        if self.family == "zone":
            return f"zone {self.name}"
        if self.family == "node":
            return f"node {self.name}"
        if self.family == "rolling":
            return f"rolling step {self.name}"
        return f"nodes {self.name}"


@dataclass
class SweepPlan:
    """What to sweep: the scenarios, in their stable order, and how they were asked for."""

    scenarios: list[ScenarioSpec]
    family: str
    key: str | None = None  # --fail zone: the node label whose values are the zones
    seed: int | None = None
    max_unavailable: int = 1
    surge: str | None = None


# ---------------------------------------------------------------------------- planning


def _selected(cluster: Cluster, selector: str | None, flag: str) -> list[str]:
    if not selector:
        return [n.name for n in cluster.nodes]
    try:
        sel = parse_selector(selector)
    except ValueError as e:
        raise InputError(f"not a label selector: {e}", field=flag) from None
    found = [n.name for n in cluster.nodes if sel.matches(n.labels)]
    if not found:
        raise InputError(f"no node matches {cut(selector)}", field=flag)
    return found


def plan(
    cluster: Cluster,
    *,
    fail: str | None = None,
    fail_key: str | None = None,
    selector: str | None = None,
    samples: int = 20,
    seed: int | None = None,
    rolling: str | None = None,
    max_unavailable: int = 1,
    surge: str | None = None,
) -> SweepPlan:
    """The scenarios a sweep runs, in a stable order (node order, zone values sorted, samples in
    the order the seeded generator draws them, rolling steps in node order)."""
    if (fail is None) == (rolling is None):
        raise InputError("give one of --fail node|zone|nodes=K and --rolling SELECTOR", field="--fail")
    if surge is not None and rolling is None:
        raise InputError("only with --rolling (a node added before the upgrade's first step)", field="--surge")
    if surge is not None and not surge.strip():
        raise InputError("expected NODE[:COUNT] or a file of Node manifests, not an empty value", field="--surge")
    if fail_key is not None and fail != "zone":
        raise InputError("only with --fail zone", field="--fail-key")
    if fail_key is not None and not fail_key.strip():
        raise InputError("expected a node label key, not an empty value", field="--fail-key")
    if rolling is not None:
        if max_unavailable < 1:
            raise InputError("must be at least 1", field="--max-unavailable")
        names = _selected(cluster, rolling, "--rolling")
        steps = [tuple(names[i : i + max_unavailable]) for i in range(0, len(names), max_unavailable)]
        specs = [ScenarioSpec("rolling", f"{i + 1}/{len(steps)}", s) for i, s in enumerate(steps)]
        return SweepPlan(specs, "rolling", max_unavailable=max_unavailable, surge=surge)
    assert fail is not None
    names = _selected(cluster, selector, "--selector")
    if fail == "node":
        return SweepPlan([ScenarioSpec("node", n, (n,)) for n in names], "node")
    if fail == "zone":
        key = fail_key or ZONE_LABEL
        by_value: dict[str, list[str]] = {}
        labels = {n.name: n.labels for n in cluster.nodes}
        for n in names:
            v = labels[n].get(key)
            if v is not None:
                by_value.setdefault(v, []).append(n)
        if not by_value:
            hint = "" if fail_key else " (--fail-key LABEL names another failure domain; --fail node fails each node)"
            if not fail_key and any(ZONE_BETA in labels[n] for n in names):
                # a node exported from a cluster older than v1.17 carries only the beta label
                hint = f" (the nodes carry {ZONE_BETA}, the label it replaced: --fail-key {ZONE_BETA})"
            raise InputError(f"no node carries the label {cut(key, quote=False)}{hint}", field="--fail-key")
        return SweepPlan([ScenarioSpec("zone", v, tuple(by_value[v])) for v in sorted(by_value)], "zone", key=key)
    if fail.startswith("nodes="):
        k_text = fail.split("=", 1)[1]
        # ASCII digits only: str.isdigit() also takes '²' (which int() refuses) and '٣'
        if not (k_text.isascii() and k_text.isdigit()) or int(k_text) < 1:
            raise InputError(f"nodes=K takes a whole number of nodes at least 1, not {cut(k_text)}", field="--fail")
        k = int(k_text)
        if k > len(names):
            raise InputError(
                f"{cut(k_text, quote=False)} nodes asked to fail, the cluster (or selection) has {len(names)}",
                field="--fail",
            )
        if samples < 1:
            raise InputError("must be at least 1", field="--samples")
        if samples > MAX_SAMPLES:
            raise InputError(f"at most {MAX_SAMPLES:,} random sets, not {samples:,}", field="--samples")
        rng = random.Random(0 if seed is None else seed)
        order = {n: i for i, n in enumerate(names)}
        # distinct sets, never one twice: every one (in node order) when there are no more than
        # asked for; a sample of them all when they are few; else drawn, a repeat drawn again
        sets: list[tuple[str, ...]] = []
        total = math.comb(len(names), k)
        if total <= samples:
            sets = list(itertools.combinations(names, k))
        elif total <= 4 * samples:
            sets = rng.sample(list(itertools.combinations(names, k)), samples)
        else:
            drawn: set[tuple[str, ...]] = set()
            while len(sets) < samples:  # (each draw new with odds above 3 in 4)
                chosen = tuple(sorted(rng.sample(names, k), key=order.__getitem__))
                if chosen not in drawn:
                    drawn.add(chosen)
                    sets.append(chosen)
        specs = [ScenarioSpec("nodes", f"#{i + 1} ({', '.join(c)})", c) for i, c in enumerate(sets)]
        return SweepPlan(specs, "nodes", seed=seed)
    raise InputError(f"expected node, zone or nodes=K, not {cut(fail)}", field="--fail")


# ---------------------------------------------------------------------------- the loaded world


@dataclass
class Base:
    """The loaded cluster and what every scenario reads of it, worked out once."""

    cluster: Cluster
    config: SchedulerConfig
    snapshot: Snapshot  # never bound to or evicted from: scenarios derive theirs from it
    owner: dict[int, str]  # id(pod) -> `Kind ns/name` ("" for a bare pod)
    running: dict[str, int]  # owner -> its pods bound in the loaded cluster
    desired: dict[str, int]  # owner -> its controller's desired replicas (else its running pods)
    zone_of: dict[str, str]
    zone_key: str
    seed: int | None = None
    position: dict[int, int] = field(default_factory=dict)  # id(pod) -> its place in cluster.pods
    shortcuts: bool = True  # Cycles' answers from an earlier cycle (False: every cycle runs)
    # the columnar cycle where a cycle allows it (scheduling/columnar.py; False: every cycle in full)
    columnar: bool = True
    # over the scenarios run here: cycles the columnar cycle answered, and why it left the others
    columnar_ran: int = 0
    columnar_declined: Counter = field(default_factory=Counter)
    saved_cycles: int = 0  # cycles Cycles answered from an earlier one, over the scenarios run here
    # node sampling: each scenario's scheduler a freshly started kube-scheduler whose next start
    # index is this one (None: every node filtered, every feasible node scored)
    sampling: int | None = None
    # worked out on the loaded snapshot once, for findings counted as changes from them: each
    # PodDisruptionBudget (desiredHealthy above 0) with its selected pods' count; each zone's
    # headroom (schedulable nodes, free cpu, memory, pod slots)
    _budget_counts: list | None = field(default=None, repr=False)
    # model.Pod's templates for the replacements the scenarios make (each template's parsed
    # fields made once, shared by the replacements of pods with the same spec parts)
    pod_templates: dict = field(default_factory=dict, repr=False)
    _zone_room: dict | None = field(default=None, repr=False)

    def budget_counts(self) -> list:
        if self._budget_counts is None:
            snap = self.snapshot
            self._budget_counts = [
                (b, len(snap.pods_matching(b.namespace, b.selector))) for b in budgets_of(self.cluster) if b.desired > 0
            ]
        return self._budget_counts

    def zone_room(self) -> dict[str, list[int]]:
        if self._zone_room is None:
            zones: dict[str, list[int]] = {}
            for ni in self.snapshot.node_infos:
                _add_room(zones, ni, self.zone_key, 1)
            self._zone_room = zones
        return self._zone_room

    def template_of(self, pod: Pod) -> Any:
        """A key equal for pods whose replacements differ in name and uid only (the service
        account token's projected volume, whose name the API server makes up per pod, aside);
        None for a pod whose name reaches what the scheduler reads (generic ephemeral volumes,
        whose claims are named after the pod; resource claims). Worked out per scenario: a
        memo of every pod's key would hold a copy of every spec for the sweep's length."""
        return _template_key(pod)

    @classmethod
    def of(
        cls,
        cluster: Cluster,
        config: SchedulerConfig,
        seed: int | None = None,
        zone_key: str = ZONE_LABEL,
        sampling: int | None = None,
    ):
        snapshot = Scheduler(cluster, config).snapshot
        owner: dict[int, str] = {}
        running: dict[str, int] = {}
        # (a controller's owner looked up once for all its pods)
        owners: dict[tuple[str, Any, Any] | None, str] = {}
        for p in cluster.pods:
            ref = p.controller_ref()
            key = None if ref is None else (p.namespace, ref.get("kind"), ref.get("name"))
            o = owners.get(key)
            if o is None:
                o = owners[key] = owner_of(p, cluster)
            owner[id(p)] = o
            running[o or BARE] = running.get(o or BARE, 0) + 1
        desired = {o: _desired(cluster, o, n) for o, n in running.items()}
        zone_of = {n.name: n.labels.get(zone_key, "") for n in cluster.nodes}
        position = {id(p): i for i, p in enumerate(cluster.pods)}
        base = cls(cluster, config, snapshot, owner, running, desired, zone_of, zone_key, seed, position)
        base.sampling = sampling
        return base


def _template_key(pod: Pod) -> Any:
    spec = pod.raw.get("spec") or {}
    if spec.get("resourceClaims"):
        return None
    renamed: dict[str, str] = {}
    volumes = []
    for v in spec.get("volumes") or ():
        if not isinstance(v, dict) or "ephemeral" in v:
            return None
        if "projected" in v and isinstance(v.get("name"), str):
            renamed[v["name"]] = f"projected-{len(renamed)}"
            v = {**v, "name": renamed[v["name"]]}
        volumes.append(v)
    if renamed:
        spec = {**spec, "volumes": volumes}
        for field_ in ("containers", "initContainers", "ephemeralContainers"):
            cs = spec.get(field_)
            if not isinstance(cs, list):
                continue
            spec[field_] = [
                {
                    **c,
                    "volumeMounts": [
                        {**m, "name": renamed.get(str(m.get("name")), m.get("name"))} if isinstance(m, dict) else m
                        for m in c.get("volumeMounts") or ()
                    ],
                }
                if isinstance(c, dict) and c.get("volumeMounts")
                else c
                for c in cs
            ]
    spec = {k: v for k, v in spec.items() if k != "nodeName"}
    meta = pod.raw.get("metadata") or {}
    key = (
        pod.namespace,
        sorted(pod.labels.items()),
        sorted(pod.annotations.items()),
        pod.owner_refs,
        spec,
        meta.get("deletionGracePeriodSeconds"),
    )
    try:
        # the parts' bytes (marshal's format 2 writes every value whole, shared or not: equal
        # bytes, equal values of the same types), several times faster than their repr
        return marshal.dumps(key, 2)
    except ValueError:  # (a value of a type marshal does not write)
        return repr(key)


def _desired(cluster: Cluster, owner: str, running: int) -> int:
    """spec.replicas of a Deployment, StatefulSet or ReplicaSet the snapshot holds (a Job's
    parallelism); else the pods it runs now."""
    kind, _, key = owner.partition(" ")
    ns, _, name = key.partition("/")
    obj = cluster.get(kind, ns, name) if kind in ("Deployment", "StatefulSet", "ReplicaSet", "Job") else None
    spec = (obj or {}).get("spec") or {}
    v = spec.get("parallelism" if kind == "Job" else "replicas")
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return running


def _moves(pod: Pod) -> str:
    """What becomes of a failed node's pod: `daemonset`, `static`, `lost` (no controller) or
    `recreated`."""
    if is_daemonset_pod(pod):
        return "daemonset"
    ref = pod.controller_ref()
    if MIRROR_POD_ANNOTATION in pod.annotations or (ref is not None and ref.get("kind") == "Node"):
        return "static"
    if ref is None:
        return "lost"
    return "recreated"


# ---------------------------------------------------------------------------- one scenario


@dataclass
class Scenario:
    spec: ScenarioSpec
    doc: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.doc.get("ok"))


@dataclass(frozen=True)
class FirstPart:
    """A scenario's first part, run in one process for another to go on from (run_first_part,
    then run_failure's `after`): the scenario's name, and what each of its first attempts
    decided."""

    family: str
    name: str
    decisions: tuple[Decision, ...]


def run_failure(base: Base, spec: ScenarioSpec, *, after: FirstPart | None = None) -> dict[str, Any]:
    """The scenario's findings: the failed nodes gone, their pods' replacements scheduled (`after`:
    the first attempts' decisions applied from another process's first part, the others' cycles
    run here). What the scenario builds (its scheduler, its snapshot, its indexes) is transient:
    left unfrozen, so that it is freed with the scenario and a worker's memory stays flat over
    thousands."""
    if after is not None and (after.family, after.name) != (spec.family, spec.name):
        raise ValueError(f"the first part of {after.family} {after.name} goes on in {spec.label()}")
    with transient():
        doc = _run_failure(base, spec, None, after.decisions if after is not None else ())
    assert isinstance(doc, dict)
    return doc


def run_first_part(base: Base, spec: ScenarioSpec, share: float) -> FirstPart:
    """The scenario's first `share` of its queue's pods (0 < share < 1), each attempt's decision
    kept for run_failure(after=...) in another process. A scenario whose cycles depend on more
    than the cluster they meet is not cut (HTTP extenders, node sampling's rotating start,
    OpportunisticBatching's batches): its first part decides nothing, the rest runs it whole."""
    with transient():
        part = _run_failure(base, spec, share, ())
    assert isinstance(part, FirstPart)
    return part


def _run_failure(
    base: Base, spec: ScenarioSpec, share: float | None, replay: Sequence[Decision]
) -> dict[str, Any] | FirstPart:
    failed = set(spec.nodes)
    cluster = copy.copy(base.cluster)
    cluster.prebuilt_snapshot = None
    cluster.nodes = [n for n in base.cluster.nodes if n.name not in failed]
    # the failed nodes' pods, in the cluster's order (the queue's ties keep it)
    at = sorted(base.position[id(p)] for n in spec.nodes if (ni := base.snapshot.by_name.get(n)) for p in ni.pods)
    gone = [base.cluster.pods[i] for i in at]
    # every pod bound to a failed node is on its NodeInfo: the others, in their order
    cluster.pods = without_positions(base.cluster.pods, at)
    scheduler = Scheduler(cluster, base.config, base.snapshot.without_nodes(failed))
    try:
        if base.sampling is not None:
            scheduler.enable_sampling(base.sampling % max(1, len(scheduler.snapshot.names)))
        elif base.columnar:
            scheduler.enable_columnar()
        replacements: list[Pod] = []
        owner_of_new: dict[str, str] = {}
        lost: list[dict[str, str]] = []
        down: dict[str, int] = {}  # owner -> pods on the failed nodes
        stayed_down = {"daemonset": 0, "static": 0}
        shared: dict[Any, dict] = {}  # a template's key -> the `_cache` its replacements share
        for p in gone:
            o = base.owner[id(p)]
            what = _moves(p)
            if what in stayed_down:
                stayed_down[what] += 1
                continue
            down[o or BARE] = down.get(o or BARE, 0) + 1
            if what == "lost":
                lost.append({"pod": p.key, "node": p.node_name or ""})
                continue
            r = replacement_of(p, cluster, base.pod_templates)
            key = base.template_of(p)
            if key is not None:
                # what plugins derive from a pod's fields (requests, spread constraints and their
                # default selector, affinity terms, equivalence signatures) is worked out once for
                # the replacements of one template
                r._cache = shared.setdefault(key, r._cache)
            owner_of_new[r.uid] = o
            replacements.append(r)
        queue = queue_sort(replacements)
        cycles = Cycles(scheduler, base.shortcuts)
        if share is not None:
            if scheduler.extenders or scheduler.batches or scheduler.sampling is not None or len(queue) < 2:
                return FirstPart(spec.family, spec.name, ())
            stop = min(len(queue) - 1, max(1, int(len(queue) * share)))
            first = run_carrying_out(scheduler, queue, base.seed, with_details=False, cycle=cycles, stop_after=stop)
            return FirstPart(spec.family, spec.name, tuple(first.decisions))
        run = run_carrying_out(scheduler, queue, base.seed, with_details=False, cycle=cycles, replay=replay)
        base.saved_cycles += cycles.saved
        if scheduler.columnar is not None:
            base.columnar_ran += scheduler.columnar.ran
            base.columnar_declined.update(scheduler.columnar.declined_by)
        doc = _findings(base, spec, scheduler, run, owner_of_new, lost, down, stayed_down, len(gone))
        if scheduler.sampling is not None:
            doc["sampling"] = scheduler.sampling.run_doc(base.config.parallelism)
        return doc
    finally:
        # (its parts refer to one another: freed now by reference counting, not by the cyclic
        # collector's pass over everything the scenario built)
        scheduler.close()


class Cycles:
    """`Scheduler.schedule` for a scenario's queue, with kube-scheduler's outcome for a pod known
    without its cycle in one case: a pod of the same template (the replacements sharing their
    `_cache`) as a pod whose cycle found it unschedulable and nominated no node, when nothing a
    cycle reads has changed since (no bind, no eviction, the same nominations, the same sampling
    start index). The cycle is a function of those and of the pod's fields, which the two pods
    share but for name and uid, which no plugin reads: its result is the earlier one's, for this
    pod. Off with HTTP extenders (their answers are not ours to repeat) and under
    OpportunisticBatching (a cycle moves its batch). Each result is slimmed as it is decided: the
    findings read the verdict, the node, the message and the preemption only."""

    def __init__(self, scheduler: Scheduler, shortcuts: bool = True):
        self.scheduler = scheduler
        self.on = shortcuts and not scheduler.extenders and not scheduler.batches
        self.failed: dict[int, tuple[tuple, CycleResult]] = {}  # id(_cache) -> (state, result)
        self.saved = 0  # cycles answered from an earlier one

    def _state(self) -> tuple:
        s = self.scheduler
        nominated = s.nominator.signature()
        start = s.sampling.next_start if s.sampling is not None else None
        return (len(s.snapshot.changes), s.snapshot.generation, nominated, start)

    def __call__(self, pod: Pod, seed: int | None = None, *, with_details: bool = True) -> CycleResult:
        s = self.scheduler
        if not self.on:
            return _slim(s.schedule(pod, seed, with_details=with_details))
        key = id(pod._cache)
        before = self._state()
        known = self.failed.get(key)
        if known is not None and known[0] == before and not s.nominator.status_node(pod):
            self.saved += 1
            s.cycles += 1
            r = copy.copy(known[1])
            r.pod = pod
            return r
        r = _slim(s.schedule(pod, seed, with_details=with_details))
        p = r.preemption
        unschedulable = not r.schedulable and not r.error and (p is None or not p.nominated_node)
        if unschedulable and not s.nominator.status_node(pod) and self._state() == before:
            self.failed[key] = (before, r)
        return r


def _slim(r: CycleResult) -> CycleResult:
    """A result without its per-node tables (a scenario keeps every result until its findings)."""
    r.filters, r.scores, r.feasible, r.totals = {}, {}, [], {}
    return r


def _findings(
    base: Base,
    spec: ScenarioSpec,
    scheduler: Scheduler,
    run: Any,
    owner_of_new: dict[str, str],
    lost: list[dict[str, str]],
    down: dict[str, int],
    stayed_down: dict[str, int],
    pods_on_failed: int,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    last: dict[str, Any] = {}
    for r in run.results:
        last[r.pod.uid] = r
    by_key = {p.pod: p for p in run.placements}
    pending = []
    for uid, r in last.items():
        pl = by_key.get(r.pod.key)
        if pl is not None and pl.node is None and not pl.evicted:
            pending.append({"pod": r.pod.key, "owner": owner_of_new.get(uid, ""), "reason": fit_reason(r)})
    victims_of: dict[str, list[str]] = {}
    for e in run.evictions:
        victims_of.setdefault(e.preemptor, []).append(e.pod)
    node_of = {p.pod: p.node for p in run.placements}
    preempting = [
        {"pod": pod, "node": node_of.get(pod) or "", "victims": sorted(v)} for pod, v in sorted(victims_of.items())
    ]
    victims = sorted({e.pod for e in run.evictions})
    # workloads: pods taken down, pods back, the victims' owners losing theirs (a replacement
    # preempted in turn is simply not back)
    victim_owner: dict[str, int] = {}
    new_keys = {r.pod.key for r in run.results}
    wanted = {e.pod for e in run.evictions if e.pod not in new_keys}
    if wanted:
        for p in base.cluster.pods:
            if p.key in wanted:
                o = base.owner.get(id(p), "") or BARE
                victim_owner[o] = victim_owner.get(o, 0) + 1
    back: dict[str, int] = {}
    for uid, r in last.items():
        pl = by_key.get(r.pod.key)
        if pl is not None and pl.node:
            o = owner_of_new.get(uid, "") or BARE
            back[o] = back.get(o, 0) + 1
    workloads = []
    for o in sorted(set(down) | set(victim_owner)):
        running = base.running.get(o, 0)
        after = running - down.get(o, 0) - victim_owner.get(o, 0) + back.get(o, 0)
        workloads.append(
            {
                "workload": o,
                "desired": base.desired.get(o, running),
                "running": running,
                "down": down.get(o, 0) + victim_owner.get(o, 0),
                "after": after,
                # made worse by the scenario: below its desired replicas and below what ran before
                "belowDesired": after < running and after < base.desired.get(o, running),
            }
        )
    pdbs = _budgets_after(base, scheduler)
    headroom = _headroom(base, scheduler)
    # a rolling step: an eviction the API refuses, or a drain kubectl refuses, is not ok
    ok = not pending and not lost and not victims and not any((extra or {}).get(k) for k in ("blocked", "refused"))
    below = sum(1 for w in workloads if w["belowDesired"])
    doc: dict[str, Any] = {
        "family": spec.family,
        "name": spec.name,
        "nodes": list(spec.nodes),
        "ok": ok,
        "podsOnFailedNodes": pods_on_failed,
        "recreated": len(owner_of_new),
        "daemonSetPodsGone": stayed_down["daemonset"],
        "staticPodsGone": stayed_down["static"],
        "pending": pending,
        "lost": lost,
        "preempting": preempting,
        "victims": victims,
        "workloads": workloads,
        "workloadsBelowDesired": below,
        "budgetsBelowMinimum": pdbs,
        "headroom": headroom,
    }
    if extra:
        doc.update(extra)
    doc["severity"] = [
        len(pending) + len(lost) + len(victims) + len(doc.get("blocked") or []) + len(doc.get("refused") or []),
        below,
        len(pdbs),
        len(preempting),
    ]
    return doc


def _budgets_after(base: Base, scheduler: Scheduler) -> list[dict[str, Any]]:
    """The PodDisruptionBudgets whose selected running pods fall below status.desiredHealthy. A
    scenario's snapshot from the loaded one (Snapshot.without_nodes): each budget's count on the
    loaded snapshot, less the failed nodes' pods it selects, plus the pods bound since and less
    those evicted (the namespace lists' changes)."""
    snap = scheduler.snapshot
    removal = snap._removal
    if removal is not None and removal.parent is base.snapshot:
        moved: dict[str, list[tuple[Pod, int]]] = {}
        for ns, pods in removal.pods_by_ns.items():
            moved[ns] = [(p, -1) for p in pods]
        for ns, changed in snap.pod_log.items():
            moved.setdefault(ns, []).extend((p, sign) for p, _, sign in changed)
        found = []
        for b, count in base.budget_counts():
            for p, sign in moved.get(b.namespace, ()):
                if b.selector.matches(p.labels):
                    count += sign
            if count < b.desired:
                found.append({"budget": b.key, "desiredHealthy": b.desired, "healthy": count})
        return found
    out = []
    for b in budgets_of(base.cluster):
        if b.desired <= 0:
            continue
        count = sum(1 for p in snap.pods_matching(b.namespace, b.selector))
        if count < b.desired:
            out.append({"budget": b.key, "desiredHealthy": b.desired, "healthy": count})
    return out


def _headroom(base: Base, scheduler: Scheduler) -> list[dict[str, Any]]:
    """Free allocatable left per zone (schedulable nodes only): cpu in millicores, memory in bytes,
    room for pods. A scenario's snapshot from the loaded one (Snapshot.without_nodes, no node
    added): the loaded snapshot's sums, less the failed nodes' share, with the nodes bound to or
    evicted from since counted anew."""
    snap = scheduler.snapshot
    removal = snap._parent_removal()
    if removal is not None and removal.parent is base.snapshot:
        zones = {z: list(v) for z, v in base.zone_room().items()}
        parent = removal.parent
        for i in removal.positions:
            _add_room(zones, parent.node_infos[i], base.zone_key, -1)
        for k in sorted(set(snap.changes)):
            ni = snap.node_infos[k]
            _add_room(zones, parent.by_name[ni.node.name], base.zone_key, -1)
            _add_room(zones, ni, base.zone_key, 1)
        zones = {z: v for z, v in zones.items() if v[0]}
    else:
        zones = {}
        for ni in snap.node_infos:
            _add_room(zones, ni, base.zone_key, 1)
    return [
        {"zone": z, "nodes": v[0], "cpuMillis": v[1], "memoryBytes": v[2], "pods": v[3]}
        for z, v in sorted(zones.items())
    ]


def _add_room(zones: dict[str, list[int]], ni: NodeInfo, zone_key: str, sign: int) -> None:
    """Count a schedulable node's free cpu, memory and pod slots (each at least 0) in its zone's
    [nodes, cpu, memory, pods] (sign -1: take them back)."""
    if ni.node.unschedulable:
        return
    pods, cpu, mem, _ = free_of(ni)
    z = zones.setdefault(ni.node.labels.get(zone_key, ""), [0, 0, 0, 0])
    z[0] += sign
    z[1] += sign * max(cpu, 0)
    z[2] += sign * max(mem, 0)
    z[3] += sign * max(pods, 0)


# ---------------------------------------------------------------------------- rolling upgrade


def run_rolling(
    base: Base,
    specs: Sequence[ScenarioSpec],
    *,
    surge: str | None = None,
    on_step: Callable[[int], None] | None = None,
    delete_emptydir_data: bool = False,
    force: bool = False,
) -> list[dict]:
    """The steps of a node-pool upgrade, in order, on one copy of the cluster: each step's batch
    cordoned and drained as `ksched drain` does, then the nodes back (upgraded), schedulable and
    holding what stayed on them (DaemonSet and static pods, pods whose eviction was refused), for
    the next steps. `surge`: an --add-node value, the node(s) added before the first step.
    `delete_emptydir_data`, `force`: as `ksched drain`'s (kubectl drain's); a step whose drain
    kubectl refuses without them is not ok. Each step's schedulers and snapshots are transient
    (see run_failure)."""
    with transient():
        return _run_rolling(base, specs, surge, on_step, delete_emptydir_data, force)


def _run_rolling(
    base: Base,
    specs: Sequence[ScenarioSpec],
    surge: str | None,
    on_step: Callable[[int], None] | None,
    delete_emptydir_data: bool = False,
    force: bool = False,
) -> list[dict]:
    from .drain import BLOCKED, DELETED, EVICTED, drain

    cluster = copy.copy(base.cluster)
    cluster.prebuilt_snapshot = None
    cluster.nodes = list(base.cluster.nodes)
    cluster.pods = list(base.cluster.pods)
    if surge:
        from .edits import Edit, apply_edits

        try:
            apply_edits(cluster, [Edit("--add-node", surge)])
        except InputError as e:  # the flag the user gave: --surge, not --add-node
            field = "--surge" if e.field == "--add-node" else e.field
            raise InputError(e.message, source=e.source, where=e.where, field=field) from None
    docs = []
    next_start = [base.sampling]  # one kube-scheduler through the upgrade: its index carries
    for i, spec in enumerate(specs):
        original = {n.name: n for n in cluster.nodes if n.name in spec.nodes}
        start = next_start[0]

        def carried(sched: Scheduler, _results: Any) -> None:
            if sched.sampling is not None:
                next_start[0] = sched.sampling.next_start

        report = drain(
            cluster,
            base.config,
            list(spec.nodes),
            delete_emptydir_data=delete_emptydir_data,
            force=force,
            seed=base.seed,
            sampling=start,
            on_round=carried,
        )
        blocked, lost, refused = [], [], []
        down: dict[str, int] = {}
        owner_of_new: dict[str, str] = {}
        for no in report.nodes:
            refused += no.errors
            for o in no.pods:
                if o.action == BLOCKED:
                    blocked.append({"pod": o.pod.key, "node": o.node, "budget": o.pdb, "message": o.message})
                elif o.action == DELETED:
                    lost.append({"pod": o.pod.key, "node": o.node})
                if o.action in (EVICTED, DELETED):
                    key = o.owner or BARE
                    down[key] = down.get(key, 0) + 1
                if o.action == EVICTED and o.replacement is not None:
                    owner_of_new[o.replacement.uid] = o.owner
        run = _DrainRun(report)
        scheduler = Scheduler(cluster, base.config)
        extra = {"blocked": blocked, "refused": refused}
        on_nodes = sum(len(n.pods) for n in report.nodes)
        gone = {"daemonset": 0, "static": 0}
        doc = _findings(base, spec, scheduler, run, owner_of_new, lost, down, gone, on_nodes, extra)
        if start is not None:
            from ..scheduling.sampling import PARALLELISM_NOTE, NodeSampling

            workers = base.config.parallelism
            account = NodeSampling(start, PARALLELISM_NOTE.format(workers=workers) if workers != 1 else "")
            account.next_start = next_start[0] if next_start[0] is not None else start
            doc["sampling"] = account.run_doc(workers)
        docs.append(doc)
        # the upgraded nodes come back: their former objects, schedulable again
        cluster.nodes = [original.get(n.name, n) for n in cluster.nodes]
        if on_step is not None:
            on_step(i + 1)
    return docs


class _DrainRun:
    """A drain's evicted pods seen as a carried-out run (results, placements, evictions)."""

    def __init__(self, report: Any) -> None:
        from .carryout import Placement

        self.results = [o.result for o in report.evicted if o.result is not None]
        self.placements = [
            Placement(o.replacement.key, o.result.selected_node if o.result.schedulable else None, 1)
            for o in report.evicted
            if o.replacement is not None and o.result is not None
        ]
        self.evictions: list = []


# ---------------------------------------------------------------------------- the sweep


def sort_key(doc: dict[str, Any], index: int) -> tuple:
    return (*(-v for v in doc["severity"]), index)


def summary(docs: list[dict[str, Any]], plan_: SweepPlan, top: int = 10) -> dict[str, Any]:
    """The verdict, the worst scenarios first, and each workload's worst exposure (`top` of each,
    0: all)."""
    failing = [i for i, d in enumerate(docs) if not d["ok"]]
    worst = sorted(range(len(docs)), key=lambda i: sort_key(docs[i], i))
    worst = [i for i in worst if docs[i]["severity"] != [0, 0, 0, 0]]
    exposure: dict[str, dict[str, Any]] = {}
    for i, d in enumerate(docs):
        for w in d["workloads"]:
            o = w["workload"]
            lost_after = w["running"] - w["after"]
            key = (w["down"], lost_after)
            cur = exposure.get(o)
            if cur is None or key > (cur["down"], cur["lostAfterRescheduling"]):
                exposure[o] = {
                    "workload": o,
                    "running": w["running"],
                    "down": w["down"],
                    "lostAfterRescheduling": max(lost_after, 0),
                    "scenario": f"{d['family']} {d['name']}",
                    "index": i,
                }
    exp = sorted(exposure.values(), key=lambda e: (-e["lostAfterRescheduling"], -e["down"], e["workload"]))
    top = top or max(len(docs), len(exp))
    n1 = {"node": "N-1", "zone": "zone-loss", "nodes": "K-node", "rolling": "rolling-upgrade"}[plan_.family]
    return {
        "family": plan_.family,
        "scenarios": len(docs),
        "failing": len(failing),
        "verdict": f"{n1} safe" if not failing else f"not {n1} safe",
        "safe": not failing,
        "worst": [{"scenario": f"{docs[i]['family']} {docs[i]['name']}", "index": i} for i in worst[:top]],
        "worstOmitted": max(len(worst) - top, 0),
        "exposure": exp[:top],
        "exposureOmitted": max(len(exp) - top, 0),
    }


def run_specs(base: Base, specs: Sequence[ScenarioSpec], on_done: Callable[[int], None] | None = None) -> list[dict]:
    """Failure scenarios, one after another, in this process."""
    out = []
    for i, s in enumerate(specs):
        out.append(run_failure(base, s))
        if on_done is not None:
            on_done(i + 1)
    return out


# ---------------------------------------------------------------------------- in other processes


@dataclass(frozen=True)
class LoadArgs:
    """How a worker loads the very world the sweep's process loaded (whatif.world.load_inputs's
    arguments, read through the snapshot cache), and the sweep's seed and zone label."""

    files: tuple[str, ...]
    config: str | None
    edits: tuple[Any, ...]
    kubernetes_version: str | None
    server_version: str | None
    no_extenders: bool
    cache: bool
    seed: int | None
    zone_key: str = ZONE_LABEL
    sampling: int | None = None

    def load(self) -> Base:
        from .world import load_inputs

        cluster, config, _ = load_inputs(
            list(self.files),
            self.config,
            list(self.edits) or None,
            self.kubernetes_version,
            self.server_version,
            no_extenders=self.no_extenders,
            cache=self.cache,
        )
        return Base.of(cluster, config, self.seed, self.zone_key, self.sampling)


_LOADED: dict[LoadArgs, Base] = {}  # a worker process's world, loaded once
# (the LoadArgs, the cluster and configuration they read) of the process that forks a pool
# (run_pool's `read`): its forked workers take these rather than load them
_INHERITED: list[tuple[LoadArgs, Cluster, SchedulerConfig]] = []


def _loaded(args: LoadArgs) -> Base:
    """The worker's world, loaded on its first task (or, in a worker forked by a process that had
    read the files, the cluster and configuration it read: run_pool's `read`): the pods' source
    objects read as well (one read for all, which the first scenario's replacements would make),
    then all of it kept out of the cyclic collector's passes for the worker's life
    (freeze_lasting), which the first scenario's collection would otherwise make over every
    loaded pod."""
    base = _LOADED.get(args)
    if base is None:
        _LOADED.clear()
        with no_gc():  # (what is made here lasts: collections over it would find nothing)
            inherited = next((i for i in _INHERITED if i[0] == args), None)
            if inherited is not None:
                base = Base.of(inherited[1], inherited[2], args.seed, args.zone_key, args.sampling)
            else:
                base = args.load()
            _LOADED[args] = base
            for pod in base.cluster.pods[:1]:
                pod.raw  # noqa: B018 -- (read for its effect: every bound pod's source object loaded)
            freeze_lasting()
    return base


def run_chunk(args: LoadArgs, specs: Sequence[ScenarioSpec]) -> list[dict]:
    """A share of the scenarios, in a worker: the world loaded on its first share."""
    return run_specs(_loaded(args), specs)


def run_first(
    args: LoadArgs, spec: ScenarioSpec, share: float, specs: Sequence[ScenarioSpec] = (), workers: int = 0
) -> FirstPart:
    """A scenario's first part (run_first_part), in a worker. With the sweep's scenarios and
    workers, its share is worked out again from the loaded pods (pod_costs): the plan's costs
    were the nodes'."""
    base = _loaded(args)
    if specs and workers:
        costs = pod_costs(base, specs)
        refined = [t.share for t in tasks(specs, workers, costs) if t.share is not None and t.specs[0] == spec]
        share = refined[0] if refined else share
    return run_first_part(base, spec, share)


def pod_costs(base: Base, specs: Sequence[ScenarioSpec]) -> list[int]:
    """Each scenario's pods on its failed nodes in the loaded snapshot (its cycles, nearly: the
    DaemonSet and static pods among them stay down): tasks()'s costs in a worker."""
    by_name = base.snapshot.by_name
    return [sum(len(ni.pods) for n in spec.nodes if (ni := by_name.get(n)) is not None) for spec in specs]


def run_rest(args: LoadArgs, spec: ScenarioSpec, first: FirstPart) -> list[dict]:
    """A scenario from the end of its first part (run_failure's `after`), in a worker."""
    return [run_failure(_loaded(args), spec, after=first)]


def chunks(specs: Sequence[ScenarioSpec], workers: int) -> list[list[ScenarioSpec]]:
    """Contiguous shares, several per worker (a slow share does not hold the others up)."""
    n = max(1, min(len(specs), workers * 4))
    size = -(-len(specs) // n)
    return [list(specs[i : i + size]) for i in range(0, len(specs), size)]


@dataclass(frozen=True)
class Task:
    """One task of a sweep over workers: a share of contiguous scenarios (`specs`, from the plan's
    `start`), or a scenario's first part (`share` of its queue) whose rest follows in another task."""

    start: int
    specs: tuple[ScenarioSpec, ...]
    share: float | None = None


# a scenario is cut only where each part holds at least this share of it: a thinner part saves
# less than the set-up a second process spends on the scenario
MIN_PART = 0.1


def tasks(specs: Sequence[ScenarioSpec], workers: int, costs: Sequence[int] | None = None) -> list[Task]:
    """The sweep's tasks, in the order they are handed to the workers (each to the first one free).

    Many scenarios: contiguous shares (chunks). Fewer than two per worker, where whole scenarios
    would leave workers idle (three zones on two workers: two zones' time on one of them, while
    the other waits for the third), McNaughton's wrap-around rule over each scenario's cost
    (`costs`; by default its failed nodes): the workers filled in turn up to the mean load, a
    scenario that crosses a worker's end cut in two. Its first part starts the next worker, its
    rest ends this one, from the first part's decisions (run_first_part): three zones on two
    workers take a zone and a half's time. Results do not depend on the cut (the rest applies
    what the first part decided)."""
    if workers < 2 or len(specs) >= 2 * workers or len(specs) < 2:
        return _chunk_tasks(specs, workers)
    costs = [max(1, c) for c in (costs if costs is not None else [len(s.nodes) for s in specs])]
    limit = max(sum(costs) / workers, max(costs))
    planned: list[tuple[float, int, Task]] = []  # (start time, worker, task)
    worker, clock = 0, 0.0
    for i, (spec, cost) in enumerate(zip(specs, costs)):
        over = clock + cost - limit
        share = over / cost
        if over <= 1e-9 or share < MIN_PART or share > 1 - MIN_PART or worker + 1 >= workers:
            planned.append((clock, worker, Task(i, (spec,))))
            clock += cost
        else:
            # the first part opens the next worker; the rest (queued when the first part ends)
            # closes this one
            planned.append((0.0, worker + 1, Task(i, (spec,), share)))
            worker, clock = worker + 1, over
            continue
        if clock >= limit - 1e-9 and worker + 1 < workers:
            worker, clock = worker + 1, 0.0
    return [t for _, _, t in sorted(planned, key=lambda p: (p[0], p[1]))]


def _chunk_tasks(specs: Sequence[ScenarioSpec], workers: int) -> list[Task]:
    out, start = [], 0
    for part in chunks(specs, workers):
        out.append(Task(start, tuple(part)))
        start += len(part)
    return out


def _task_call(args: LoadArgs, t: Task, specs: Sequence[ScenarioSpec], workers: int) -> tuple:
    """What a worker runs for a task of tasks(): a share of scenarios, or a scenario's first part
    (its share worked out again there from the sweep's scenarios and workers)."""
    if t.share is None:
        return (run_chunk, args, t.specs)
    return (run_first, args, t.specs[0], t.share, tuple(specs), workers)


def _landed(t: Task, result: Any, out: list, rest: Callable[[Task, FirstPart], None]) -> int:
    """A finished task: a first part's rest handed to `rest` (to run on the first worker free),
    or its scenarios' documents put in their places in `out`. How many scenarios it finished."""
    if isinstance(result, FirstPart):
        rest(Task(t.start, t.specs), result)
        return 0
    out[t.start : t.start + len(result)] = result
    return len(result)


def run_pool(
    args: LoadArgs,
    specs: Sequence[ScenarioSpec],
    workers: int,
    on_done: Callable[[int], None] | None = None,
    read: tuple[Cluster, SchedulerConfig] | None = None,
) -> list[dict]:
    """The scenarios over a local pool of `workers` processes, put back in their order (tasks():
    shares of scenarios, or a few scenarios cut in two). The workers are spawned, each loading the
    world once through the snapshot cache; or, given `read` (the cluster and configuration this
    process read for `args` from the files themselves: the cache had no entry for them, or is not
    used), forked where the system forks, each taking those as they are: an entry just being
    written in the background would not be read by them, and each would parse the files again."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    out: list[dict | None] = [None] * len(specs)
    done = 0
    fork = read is not None and "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    plan_ = tasks(specs, workers)
    if fork and read is not None:
        _INHERITED[:] = [(args, *read)]  # (what the forked workers find in _loaded)
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(plan_)), mp_context=ctx) as pool:
            running: dict[Any, Task] = {pool.submit(*_task_call(args, t, specs, workers)): t for t in plan_}

            def rest(t: Task, first: FirstPart) -> None:
                running[pool.submit(run_rest, args, t.specs[0], first)] = t

            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in finished:
                    landed = _landed(running.pop(f), f.result(), out, rest)
                    done += landed
                    if landed and on_done is not None:
                        on_done(done)
    finally:
        _INHERITED.clear()
    return [d for d in out if d is not None]


# how long --dask waits for its scheduler: to connect (and hear its handshake), and for a worker
DASK_CONNECT_SECONDS = 10
DASK_WORKERS_SECONDS = 30


def _dask_client(client_class: Any, address: str) -> Any:
    """A Dask Client of the scheduler at `address`, or one InputError line within about
    DASK_CONNECT_SECONDS: distributed bounds the TCP connect but not the handshake read after it (a
    listener that never answers would hold the command forever), and something that is not a Dask
    scheduler can fail in any way (an HTTP server's reply read as a frame length of exabytes, a
    TLS address without a security context)."""
    import threading

    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = client_class(address, timeout=f"{DASK_CONNECT_SECONDS}s")
        except BaseException as e:  # noqa: BLE001 -- reported below, one line
            box["error"] = e

    t = threading.Thread(target=connect, name="ksched-dask-connect", daemon=True)
    t.start()
    t.join(DASK_CONNECT_SECONDS + 5)
    where = cut(address)
    if t.is_alive():
        raise InputError(f"no Dask scheduler answered at {where} within {DASK_CONNECT_SECONDS + 5} s", field="--dask")
    e = box.get("error")
    if e is not None:
        reason = " ".join(str(e).split()) or type(e).__name__
        if not isinstance(e, (OSError, TimeoutError, ValueError)):
            reason = f"not a Dask scheduler? {type(e).__name__}: {reason}"
        raise InputError(f"cannot reach the Dask scheduler at {where}: {cut(reason, 200, quote=False)}", field="--dask")
    return box["client"]


def run_dask(
    address: str, args: LoadArgs, specs: Sequence[ScenarioSpec], on_done: Callable[[int], None] | None = None
) -> list[dict]:
    """The scenarios on an existing Dask distributed cluster (`pip install 'ksched[dask]'`), each
    worker loading the world once; put back in their order."""
    try:
        from distributed import Client, as_completed  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise InputError("needs Dask: pip install 'ksched[dask]'", field="--dask") from None
    client = _dask_client(Client, address)
    try:
        try:
            client.wait_for_workers(1, timeout=DASK_WORKERS_SECONDS)
        except (OSError, TimeoutError):
            raise InputError(
                f"the Dask scheduler at {cut(address)} has no worker (none joined within {DASK_WORKERS_SECONDS} s)",
                field="--dask",
            ) from None
        workers = max(1, len(client.scheduler_info().get("workers") or {}))
        out: list[dict | None] = [None] * len(specs)
        running: dict[str, Task] = {}
        futures = []
        for t in tasks(specs, workers):
            f = client.submit(*_task_call(args, t, specs, workers), pure=False)
            running[f.key] = t
            futures.append(f)
        done = 0
        queue = as_completed(futures)

        def rest(t: Task, first: FirstPart) -> None:
            f = client.submit(run_rest, args, t.specs[0], first, pure=False)
            running[f.key] = t
            queue.add(f)

        for f in queue:
            t = running.pop(f.key)
            try:
                result = f.result()
            except InputError as e:  # a worker could not load the world (its files, its config)
                raise InputError(
                    f"on a Dask worker: {e.message}", source=e.source, where=e.where, field=e.field
                ) from None
            except Exception as e:  # noqa: BLE001 -- a worker lost or killed: one line, not the cluster's traceback
                reason = cut(" ".join(str(e).split()) or type(e).__name__, 200, quote=False)
                raise InputError(f"a Dask worker failed: {type(e).__name__}: {reason}", field="--dask") from None
            landed = _landed(t, result, out, rest)
            done += landed
            if landed and on_done is not None:
                on_done(done)
        return [d for d in out if d is not None]
    finally:
        client.close()
