"""The victims' side of DefaultPreemption: the order of importance kube-scheduler sorts pods in
(util.MoreImportantPod, Go's sort.Slice ties), the PodDisruptionBudgets a victim may violate
(filterPodsWithPDBViolation), and a node's pods kept in that order with the running totals of
their requests, which the many-node dry run reads instead of re-sorting each node.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..labels import parse_label_selector
from .preemption_gosort import go_sort_slice

if TYPE_CHECKING:
    from ..labels import LabelSelector
    from ..model import Pod

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# -- pods' importance ----------------------------------------------------------------------------


def start_time_ns(pod) -> int | None:
    """status.startTime as Unix nanoseconds; None when unset (kube-scheduler then uses time.Now())."""
    cache = pod._cache
    if "start_ns" in cache:
        return cache["start_ns"]
    ns = None
    s = pod.start_time
    if isinstance(s, str) and s:
        try:
            dt = datetime.fromisoformat(s.replace("z", "Z").replace("Z", "+00:00"))
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=UTC)
            delta = dt - _EPOCH
            ns = (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
        except ValueError:
            ns = None
    cache["start_ns"] = ns
    return ns


def more_important(now_ns: int):
    """util.MoreImportantPod: higher priority first, then the earlier start.

    A pod without status.startTime counts as starting "now", and kube-scheduler reads the clock anew
    on every call: of two such pods the first one asked about is always the earlier. The comparison
    is reproduced as is (it is what decides the order of such victims)."""

    def less(p1, p2) -> bool:
        if p1.priority != p2.priority:
            return p1.priority > p2.priority
        t1, t2 = start_time_ns(p1), start_time_ns(p2)
        if t1 is None and t2 is None:
            return True
        return (now_ns if t1 is None else t1) < (now_ns if t2 is None else t2)

    less.now_ns = now_ns  # type: ignore[attr-defined]  # sort_by_importance reads the clock it used
    return less


def sort_by_importance(pods: list, less) -> None:
    """sort.Slice(pods, MoreImportantPod) in place.

    When the order is a strict one (every pod has a start time and no two share priority and start)
    or the list is short enough for Go's insertion sort (stable), any stable sort gives Go's result;
    otherwise Go's own algorithm decides where the ties land."""
    starts = [start_time_ns(p) for p in pods]
    prios = [p.priority for p in pods]
    if None not in starts:
        keys = list(zip([-x for x in prios], starts))
        if len(pods) <= 12 or len(set(keys)) == len(keys):
            order = sorted(range(len(pods)), key=keys.__getitem__)
            pods[:] = [pods[i] for i in order]
            return
    now_ns = less.now_ns

    def index_less(i: int, j: int) -> bool:
        # MoreImportantPod on precomputed fields (see more_important)
        if prios[i] != prios[j]:
            return prios[i] > prios[j]
        t1, t2 = starts[i], starts[j]
        if t1 is None and t2 is None:
            return True
        return (now_ns if t1 is None else t1) < (now_ns if t2 is None else t2)

    order = list(range(len(pods)))
    go_sort_slice(order, index_less)
    pods[:] = [pods[i] for i in order]


def earliest_start_of_most_important(victims, now_ns: int) -> int:
    """util.GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    first = victims[0]
    earliest = start_time_ns(first)
    earliest = now_ns if earliest is None else earliest
    top = first.priority
    for p in victims:
        t = start_time_ns(p)
        t = now_ns if t is None else t
        if p.priority == top:
            if t < earliest:
                earliest = t
        elif p.priority > top:
            top = p.priority
            earliest = t
    return earliest


def terminating_by_preemption(pod) -> bool:
    """A pod being deleted because the scheduler preempted it (DisruptionTarget condition)."""
    if not pod.deleting:
        return False
    status = pod.raw.get("status") if isinstance(pod.raw, dict) else None
    conditions = (status or {}).get("conditions") if isinstance(status, dict) else None
    for c in conditions or []:
        if isinstance(c, dict) and c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


# -- PodDisruptionBudgets --------------------------------------------------------------------------


@dataclass
class _Budget:
    key: str
    selector: LabelSelector
    allowed: int
    disrupted: frozenset


class Budgets:
    """The cluster's PDBs, indexed by namespace, for filterPodsWithPDBViolation."""

    def __init__(self, raw_pdbs):
        self.items: list[_Budget] = []
        self.by_ns: dict[str, list[int]] = {}  # budgets without a key=value term
        self.by_label: dict[tuple[str, str, str], list[int]] = {}  # (ns, key, value) -> budgets
        self.keys_by_ns: dict[str, list[str]] = {}  # the label keys by_label uses
        self._matches: dict[int, tuple] = {}  # id(pod) -> (pod, matching budgets)
        for raw in raw_pdbs:
            if not isinstance(raw, dict):
                continue
            meta = raw.get("metadata") or {}
            spec = raw.get("spec") or {}
            status = raw.get("status") or {}
            ns = meta.get("namespace") or "default"
            try:
                sel = parse_label_selector(spec.get("selector"), "spec.selector")
            except Exception:
                continue  # an invalid selector matches no pod
            if sel.is_empty() or sel.is_nothing:
                continue  # a nil or empty selector matches nothing
            allowed = status.get("disruptionsAllowed") or 0
            if isinstance(allowed, bool) or not isinstance(allowed, int):
                allowed = 0
            disrupted = status.get("disruptedPods") or {}
            idx = len(self.items)
            self.items.append(
                _Budget(
                    f"{ns}/{meta.get('name', '')}",
                    sel,
                    allowed,
                    frozenset(disrupted) if isinstance(disrupted, dict) else frozenset(),
                )
            )
            # index by one key=value requirement when there is one: a pod lacking that label
            # cannot match, so it never needs to see the budget
            pairs = sel.equality_pairs()
            if pairs:
                self.by_label.setdefault((ns, *pairs[0]), []).append(idx)
                keys = self.keys_by_ns.setdefault(ns, [])
                if pairs[0][0] not in keys:
                    keys.append(pairs[0][0])
            else:
                self.by_ns.setdefault(ns, []).append(idx)

    def __len__(self) -> int:
        return len(self.items)

    def _matching_candidates(self, pod) -> list[int]:
        """The budgets that may select the pod (each is checked against it afterwards)."""
        ns = pod.namespace
        found = list(self.by_ns.get(ns, ()))
        keys = self.keys_by_ns.get(ns)
        if keys:
            labels = pod.labels
            for k in keys:
                v = labels.get(k)
                if v is not None:
                    hit = self.by_label.get((ns, k, v))
                    if hit:
                        found.extend(hit)
        return found

    def matching(self, pod) -> tuple[int, ...]:
        """The budgets whose disruptions evicting the pod would use: those selecting it that do
        not already count it as disrupted. Remembered per pod (the budgets do not change)."""
        hit = self._matches.get(id(pod))
        if hit is not None and hit[0] is pod:
            return hit[1]
        found: tuple[int, ...] = ()
        labels = pod.labels
        if labels and self.items:
            items = self.items
            found = tuple(
                i
                for i in self._matching_candidates(pod)
                if items[i].selector.matches(labels) and pod.name not in items[i].disrupted
            )
        self._matches[id(pod)] = (pod, found)
        return found

    def split(self, pods):
        """(violating, non-violating), each in the given order: a pod violates when evicting it,
        after the pods before it, takes some matching budget below zero."""
        violating, fine = self.split_positions(pods, range(len(pods)))
        return [pods[i] for i in violating], [pods[i] for i in fine]

    def split_positions(self, pods, positions, matches=None):
        """split over pods[i] for i in positions, as positions; `matches`, when given, holds
        matching(pods[i]) at i."""
        if not self.items:
            return [], list(positions)
        remaining: dict[int, int] = {}
        items = self.items
        if matches is None:
            matches = [self.matching(p) for p in pods]
        violating: list[int] = []
        fine: list[int] = []
        for i in positions:
            found = matches[i]
            if not found:
                fine.append(i)
                continue
            violated = False
            for b in found:
                left = remaining.get(b, items[b].allowed) - 1
                remaining[b] = left
                if left < 0:
                    violated = True
            (violating if violated else fine).append(i)
        return violating, fine


# -- a node's pods in order of importance -------------------------------------------------------


class _VictimOrder:
    """A node's pods sorted as MoreImportantPod sorts them, with their requests and the totals
    of every suffix: a preemptor's lower-priority pods are the suffix past the last pod of its
    priority or above. Only built when every pod has a start time (else the order depends on
    when the clock is read); `last_tie` is the last position whose pod ties with the next one
    (-1 for none), which Go's sort may order differently above 12 pods."""

    __slots__ = ("pods", "neg_priority", "requests", "cpu_upto", "mem_upto", "eph_upto", "last_tie", "_budgets")
    pods: list[Pod]
    neg_priority: list[int]
    requests: list[tuple[int, int, int]]
    cpu_upto: list[int]
    mem_upto: list[int]
    eph_upto: list[int]
    last_tie: int
    # (the budgets, each pod's matching budgets or None, the last matched position, splits by k)
    _budgets: tuple[Budgets, list[tuple[int, ...]] | None, int, dict[int, tuple]] | None

    @classmethod
    def build(cls, node_info) -> _VictimOrder | None:
        pods = node_info.pods
        starts = [start_time_ns(p) for p in pods]
        if None in starts:
            return None
        keys = [(-p.priority, t) for p, t in zip(pods, starts)]
        order = sorted(range(len(pods)), key=keys.__getitem__)
        v = cls()
        v.pods = [pods[i] for i in order]
        v.neg_priority = [keys[i][0] for i in order]
        reqs = [p.requests for p in v.pods]
        v.requests = [(r.milli_cpu, r.memory, r.ephemeral_storage) for r in reqs]
        v.cpu_upto = _prefix_sums([r.milli_cpu for r in reqs])
        v.mem_upto = _prefix_sums([r.memory for r in reqs])
        v.eph_upto = _prefix_sums([r.ephemeral_storage for r in reqs])
        v.last_tie = -1
        for j in range(len(order) - 1):
            if keys[order[j]] == keys[order[j + 1]]:
                v.last_tie = j
        v._budgets = None
        return v

    def split(self, budgets: Budgets, k: int) -> tuple:
        """Budgets.split of the pods from position k on, as positions: (violating, fine); kept
        for these budgets and k."""
        b = self._budgets
        if b is None or b[0] is not budgets:
            found = [budgets.matching(p) for p in self.pods] if budgets.items else None
            last = -1
            for j, m in enumerate(found or ()):
                if m:
                    last = j
            b = self._budgets = (budgets, found, last, {})
        _, found, last, splits = b
        if last < k:
            return (), range(k, len(self.pods))
        got = splits.get(k)
        if got is None:
            v, f = budgets.split_positions(self.pods, range(k, len(self.pods)), found)
            # no pod violating: the others are all of them, in order
            got = splits[k] = (tuple(v), tuple(f)) if v else ((), range(k, len(self.pods)))
        return got


def _prefix_sums(xs: list[int]) -> list[int]:
    """out[i] = sum(xs[:i]), for i up to len(xs)."""
    out = [0]
    total = 0
    for x in xs:
        total += x
        out.append(total)
    return out
