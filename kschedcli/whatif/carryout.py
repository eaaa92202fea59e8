"""`schedule --preemption=carry-out`: a sequence in which preemption is carried through, as
kube-scheduler goes on after a PostFilter nominates a node.

Each attempt is a real cycle (Scheduler.schedule). When one ends with a nominated node:
  - its victims are deleted from the cluster (the snapshot forgets them);
  - the pods of lower priority nominated to that node lose their nomination (kube-scheduler
    clears them when it prepares the candidate);
  - the preemptor is nominated to the node: it counts there for the pods filtered after it
    (those of lower or equal priority) and is queued for another attempt, which goes to that
    node first (the nominated-node fast path).
A preemptor is retried once the pods of the sequence have had their attempt, in the order the
preemptions happened: kube-scheduler requeues it when its victims are gone, after their graceful
termination, while the pods already in its queue go on. A retry that preempts again is carried
out the same way; every preemption deletes pods, so the sequence ends.

When an attempt finds no candidate at all, kube-scheduler clears the pod's nomination; when the
pod may not preempt (preemptionPolicy Never, a terminating victim), the nomination stays.

A run can be cut in two, each part in its own process (a sweep spreads a few long scenarios over
its workers so): the first part runs the first attempts and records what each decided (`Decision`:
the bind, the preemption carried out, the nomination cleared); the second, in a process that set
up the same scheduler and sequence, applies those decisions without their cycles and goes on. What
the cycles read afterwards (the snapshot, the nominations, the retries) is then the same as in one
run, and so is every later result.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..api.model import Pod
from ..framework.result import CycleResult
from ..scheduling.scheduler import Scheduler


@dataclass
class Eviction:
    pod: str  # namespace/name of the victim
    node: str
    preemptor: str  # namespace/name of the pod that preempted it
    cycle: int  # index, in the sequence's results, of the cycle that preempted


@dataclass
class Placement:
    pod: str
    node: str | None  # where it ended bound, None when it did not
    attempts: int
    evicted: bool = False  # bound, then evicted by a later preemption


@dataclass(frozen=True)
class Decision:
    """What one attempt decided, for another process to apply without its cycle (the pods named by
    uid, the same in any process that made the same sequence)."""

    pod: str  # the attempting pod's uid
    node: str | None = None  # bound there, or (with `victims`) preempted there and nominated
    preempted: bool = False
    # the victims (uid and namespace/name: a hand-written pod's uid need not be its own alone), in
    # the order they were deleted
    victims: tuple[tuple[str, str], ...] = ()
    cleared: bool = False  # the pod's nomination cleared (no candidate found)
    reason: str = ""  # why it did not fit (fit_reason), where it did not bind


@dataclass
class CarriedOutRun:
    results: list[CycleResult] = field(default_factory=list)  # every cycle, retries included, in order
    evictions: list[Eviction] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)  # one per pod of the sequence, in its order
    cleared: list[tuple[str, str]] = field(default_factory=list)  # (pod, node) nominations cleared
    decisions: list[Decision] = field(default_factory=list)  # with stop_after: each attempt's


def run_carrying_out(
    scheduler: Scheduler,
    pods: list[Pod],
    seed: int | None = None,
    *,
    on_result: Callable[[CycleResult], None] | None = None,
    with_details: bool = True,
    cycle: Callable[..., CycleResult] | None = None,
    stop_after: int | None = None,
    replay: Sequence[Decision] = (),
) -> CarriedOutRun:
    """Schedule the pods in turn, carrying preemptions out (see the module's docstring).
    `on_result(result)` sees each result as it is decided, before its bind or evictions;
    result.attempt is the pod's attempt number (1 for the first). with_details as
    Scheduler.schedule's (False: no plugin explanations, nothing decided changes). `cycle`: what
    runs a cycle, called as Scheduler.schedule is (default: the scheduler's own).

    `stop_after=K` (below len(pods)): only the first K pods' attempts, each one's Decision in
    run.decisions. `replay`: such a first part's decisions, applied in place of those pods' cycles
    (their results slim: verdict, node, message), the run then going on from the next pod."""
    if stop_after is not None and not 0 <= stop_after < len(pods):
        raise ValueError(f"stop_after={stop_after}: a first part stops before the last of {len(pods)} pods")
    if replay and (len(replay) >= len(pods) or stop_after is not None or on_result is not None):
        raise ValueError("a replayed first part goes on with the pods after it")
    run = CarriedOutRun()
    placement = {p.uid: Placement(p.key, None, 0) for p in pods}
    run.placements = list(placement.values())
    scheduler.nominate(pods)
    retries: deque[Pod] = deque()
    schedule = cycle if cycle is not None else scheduler.schedule
    attempts_of: dict[str, int] = {}

    record = stop_after is not None

    def attempt(pod: Pod) -> None:
        r = schedule(pod, seed, with_details=with_details)
        n = attempts_of[pod.uid] = attempts_of.get(pod.uid, 0) + 1
        r.attempt = n
        if on_result is not None:
            on_result(r)
        run.results.append(r)
        placement[pod.uid].attempts = n
        if r.schedulable and r.selected_node:
            scheduler.bind(pod, r.selected_node)
            placement[pod.uid].node = r.selected_node
            if record:
                run.decisions.append(Decision(pod.uid, r.selected_node))
            return
        p = r.preemption
        victims: list[Pod] = []
        cleared = False
        if p is not None and not r.error:
            if p.nominated_node:
                chosen = next((c for c in p.candidates if c.node == p.nominated_node), None)
                victims = list(chosen.pods) if chosen is not None else []
                _carry_out(scheduler, pod, p.nominated_node, victims, run, placement)
                retries.append(pod)
            elif not p.ineligible:
                scheduler.nominator.clear(pod)
                cleared = True
        if record:
            nominated = p.nominated_node if p is not None and not r.error else None
            run.decisions.append(
                Decision(
                    pod.uid,
                    nominated or None,
                    preempted=bool(nominated),
                    victims=tuple((v.uid, v.key) for v in victims),
                    cleared=cleared,
                    reason=fit_reason(r),
                )
            )

    def apply(pod: Pod, d: Decision) -> None:
        if d.pod != pod.uid:
            raise ValueError(f"a replayed decision for pod uid {d.pod} met {pod.key} ({pod.uid})")
        n = attempts_of[pod.uid] = attempts_of.get(pod.uid, 0) + 1
        bound = d.node is not None and not d.preempted
        # a slim result (the verdict, the node, why it did not fit as its message), its profile unknown
        r = CycleResult(pod=pod, profile="", schedulable=bound, pre_filter=None)
        r.selected_node = d.node if bound else None
        r.message = "" if bound else d.reason
        r.attempt = n
        run.results.append(r)
        placement[pod.uid].attempts = n
        if bound:
            assert d.node is not None
            scheduler.bind(pod, d.node)
            placement[pod.uid].node = d.node
        elif d.preempted:
            assert d.node is not None
            ni = scheduler.snapshot.by_name.get(d.node)
            on_node = {(v.uid, v.key): v for v in ni.pods} if ni is not None else {}
            victims = [on_node[k] for k in d.victims if k in on_node]
            _carry_out(scheduler, pod, d.node, victims, run, placement)
            retries.append(pod)
        elif d.cleared:
            scheduler.nominator.clear(pod)

    for i, pod in enumerate(pods):
        if i < len(replay):
            apply(pod, replay[i])
            continue
        if stop_after is not None and i == stop_after:
            return run
        attempt(pod)
    while retries:
        attempt(retries.popleft())
    return run


def fit_reason(r: Any) -> str:
    """Why an attempt's pod did not fit, as a run's findings say it: the scheduler's message, the
    preemption's where no filter said more."""
    if r.preemption is not None and r.preemption.message and not r.schedulable:
        return r.message or r.preemption.message
    return r.message or r.error or "unschedulable"


def _carry_out(
    scheduler: Scheduler, pod: Pod, node: str, victims: list[Pod], run: CarriedOutRun, placement: dict[str, Placement]
) -> None:
    cycle = len(run.results) - 1
    for v in victims:
        if scheduler.snapshot.evict(v):
            run.evictions.append(Eviction(v.key, node, pod.key, cycle))
            if v.uid in placement and placement[v.uid].node == node:
                placement[v.uid].node = None
                placement[v.uid].evicted = True
    nominator = scheduler.nominator
    for other in nominator.pods_for_node(node):
        if other.priority < pod.priority and other.uid != pod.uid:
            nominator.clear(other)
            run.cleared.append((other.key, node))
    nominator.nominate(pod, node)
