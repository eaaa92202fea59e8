"""The victims' side of DefaultPreemption: the order of importance kube-scheduler sorts pods in
(util.MoreImportantPod, Go's sort.Slice ties), the PodDisruptionBudgets a victim may violate
(filterPodsWithPDBViolation), and a node's pods kept in that order with the running totals of
their requests, which the many-node dry run reads instead of re-sorting each node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ...api.labels import parse_label_selector
from .gosort import go_sort_slice

if TYPE_CHECKING:
    from ...api.labels import LabelSelector
    from ...api.model import Pod

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
        # (namespace, id(labels)) -> (labels, budgets selecting them): pods built from the same
        # template share their labels object, so most pods are a hit
        self._selecting: dict[tuple[str, int], tuple[dict, tuple[int, ...]]] = {}
        self._any_disrupted = False  # whether some budget already counts a pod as disrupted
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
            if disrupted and isinstance(disrupted, dict):
                self._any_disrupted = True
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
        not already count it as disrupted. What selects a set of labels is remembered (the
        budgets do not change)."""
        labels = pod.labels
        if not labels or not self.items:
            return ()
        key = (pod.namespace, id(labels))
        hit = self._selecting.get(key)
        if hit is None or hit[0] is not labels:
            items = self.items
            found = tuple(i for i in self._matching_candidates(pod) if items[i].selector.matches(labels))
            hit = self._selecting[key] = (labels, found)
        found = hit[1]
        if found and self._any_disrupted:
            name = pod.name
            found = tuple(i for i in found if name not in self.items[i].disrupted)
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
    """A node's pods sorted as MoreImportantPod sorts them, with their requests, the totals of
    every prefix and the smallest request of every suffix: a preemptor's lower-priority pods are
    the suffix past the last pod of its priority or above. Only built when every pod has a start
    time (else the order depends on when the clock is read); `last_tie` is the last position
    whose pod ties with the next one (-1 for none), which Go's sort may order differently above
    12 pods."""

    __slots__ = (
        "pods",
        "n",
        "neg_priority",
        "requests",
        "cpu_upto",
        "mem_upto",
        "eph_upto",
        "min_cpu_from",
        "min_mem_from",
        "min_eph_from",
        "caps",
        "last_tie",
        "pdb",
        "clean_from",
        "packed",
    )
    pods: list[Pod]
    n: int
    neg_priority: list[int]
    requests: list[tuple[int, int, int]]
    cpu_upto: list[int]
    mem_upto: list[int]
    eph_upto: list[int]
    min_cpu_from: list[float]
    min_mem_from: list[float]
    min_eph_from: list[float]
    # (cpu, memory, ephemeral storage) the node's allocatable leaves to its pods of this order
    # and an incoming one together, as bisection targets of the running totals; and its pod limit
    caps: tuple[int, int, int, int]
    last_tie: int
    # (the budgets, each pod's matching budgets or None, splits by k) and the first k from which
    # no pod violates a budget (a pod that does not from k does not from any later k either: the
    # pods before it then use up less of each budget)
    pdb: tuple[Budgets, list[tuple[int, ...]] | None, dict[int, tuple]] | None
    clean_from: int
    # the fields above that never change, in one tuple for the dry run's loop over the nodes:
    # (neg_priority, n, last_tie, the caps' four, cpu_upto, mem_upto, eph_upto, min_cpu_from,
    # min_mem_from, min_eph_from, requests, pods)
    packed: tuple

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
        v.n = len(order)
        v.neg_priority = [keys[i][0] for i in order]
        reqs = [p.requests for p in v.pods]
        cpus = [r.milli_cpu for r in reqs]
        mems = [r.memory for r in reqs]
        ephs = [r.ephemeral_storage for r in reqs]
        v.requests = list(zip(cpus, mems, ephs))
        v.cpu_upto = _prefix_sums(cpus)
        v.mem_upto = _prefix_sums(mems)
        v.eph_upto = _prefix_sums(ephs)
        v.min_cpu_from = _suffix_minima(cpus)
        v.min_mem_from = _suffix_minima(mems)
        v.min_eph_from = _suffix_minima(ephs)
        alloc, used = node_info.node.allocatable, node_info.requested
        v.caps = (
            alloc.milli_cpu - used.milli_cpu + v.cpu_upto[-1],
            alloc.memory - used.memory + v.mem_upto[-1],
            alloc.ephemeral_storage - used.ephemeral_storage + v.eph_upto[-1],
            alloc.allowed_pods,
        )
        v.last_tie = -1
        for j in range(len(order) - 1):
            if keys[order[j]] == keys[order[j + 1]]:
                v.last_tie = j
        v.pdb = None
        v.clean_from = 0
        v.packed = (
            v.neg_priority,
            v.n,
            v.last_tie,
            *v.caps,
            v.cpu_upto,
            v.mem_upto,
            v.eph_upto,
            v.min_cpu_from,
            v.min_mem_from,
            v.min_eph_from,
            v.requests,
            v.pods,
        )
        return v

    def match_budgets(self, budgets: Budgets) -> None:
        """Each pod's matching budgets and `clean_from`, kept for these budgets."""
        n = self.n
        found = [budgets.matching(p) for p in self.pods] if budgets.items else None
        self.pdb = (budgets, found, {})
        self.clean_from = 0
        if found is None:
            return
        last = max((j for j, m in enumerate(found) if m), default=-1)
        self.clean_from = last + 1
        for k in range(last + 1):
            if not budgets.split_positions(self.pods, range(k, n), found)[0]:
                self.clean_from = k
                break

    def split(self, budgets: Budgets, k: int) -> tuple:
        """Budgets.split of the pods from position k on, as positions: (violating, fine); kept
        for these budgets and k."""
        if self.pdb is None or self.pdb[0] is not budgets:
            self.match_budgets(budgets)
        if k >= self.clean_from:
            return (), range(k, self.n)
        _, found, splits = self.pdb  # type: ignore[misc]
        got = splits.get(k)
        if got is None:
            v, f = budgets.split_positions(self.pods, range(k, self.n), found)
            got = splits[k] = (tuple(v), tuple(f))
        return got


def _prefix_sums(xs: list[int]) -> list[int]:
    """out[i] = sum(xs[:i]), for i up to len(xs)."""
    out = [0]
    total = 0
    for x in xs:
        total += x
        out.append(total)
    return out


def _suffix_minima(xs: list[int]) -> list[float]:
    """out[i] = min(xs[i:]), for i up to len(xs) (out[len(xs)] is infinite)."""
    out: list[float] = [math.inf] * (len(xs) + 1)
    low: float = math.inf
    for i in range(len(xs) - 1, -1, -1):
        x = xs[i]
        if x < low:
            low = x
        out[i] = low
    return out
