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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

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


@dataclass
class CarriedOutRun:
    results: list[CycleResult] = field(default_factory=list)  # every cycle, retries included, in order
    evictions: list[Eviction] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)  # one per pod of the sequence, in its order
    cleared: list[tuple[str, str]] = field(default_factory=list)  # (pod, node) nominations cleared


def run_carrying_out(
    scheduler: Scheduler,
    pods: list[Pod],
    seed: int | None = None,
    *,
    on_result: Callable[[CycleResult], None] | None = None,
    with_details: bool = True,
    cycle: Callable[..., CycleResult] | None = None,
) -> CarriedOutRun:
    """Schedule the pods in turn, carrying preemptions out (see the module's docstring).
    `on_result(result)` sees each result as it is decided, before its bind or evictions;
    result.attempt is the pod's attempt number (1 for the first). with_details as
    Scheduler.schedule's (False: no plugin explanations, nothing decided changes). `cycle`: what
    runs a cycle, called as Scheduler.schedule is (default: the scheduler's own)."""
    run = CarriedOutRun()
    placement = {p.uid: Placement(p.key, None, 0) for p in pods}
    run.placements = list(placement.values())
    scheduler.nominate(pods)
    retries: deque[Pod] = deque()
    schedule = cycle if cycle is not None else scheduler.schedule
    attempts_of: dict[str, int] = {}

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
            return
        p = r.preemption
        if p is None or r.error:
            return
        if p.nominated_node:
            _carry_out(scheduler, pod, r, run, placement)
            retries.append(pod)
        elif not p.ineligible:
            scheduler.nominator.clear(pod)

    for pod in pods:
        attempt(pod)
    while retries:
        attempt(retries.popleft())
    return run


def _carry_out(
    scheduler: Scheduler, pod: Pod, r: CycleResult, run: CarriedOutRun, placement: dict[str, Placement]
) -> None:
    p = r.preemption
    assert p is not None and p.nominated_node
    node = p.nominated_node
    chosen = next((c for c in p.candidates if c.node == node), None)
    victims = list(chosen.pods) if chosen is not None else []
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
