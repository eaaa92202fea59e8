"""PodTopologySpread's bookkeeping: the cycle states PreFilter and PreScore leave behind (matching
pods per domain, the critical paths), the counting of a node's pods that match a constraint's
selector (with a cache of counters across cycles), and matchNodeInclusionPolicies, which says
whether a node's domain counts for a constraint.
"""

from __future__ import annotations

import weakref
from collections import Counter, OrderedDict
from typing import Any

from ..helper import find_untolerated_taint
from ..nodeaffinity import required_node_affinity_matches
from .common import HONOR, MAX_INT32, Constraint


class CriticalPaths:
    """The two domains with the fewest matching pods seen so far; paths[0] always holds the minimum.

    As kube-scheduler's criticalPaths: exact for the minimum under the one-node-at-a-time updates that
    preemption's dry runs make on a cloned state.
    """

    __slots__ = ("values", "nums")

    def __init__(self, values=None, nums=None):
        self.values = values if values is not None else ["", ""]
        self.nums = nums if nums is not None else [MAX_INT32, MAX_INT32]

    def update(self, value: str, num: int) -> None:
        vals, nums = self.values, self.nums
        if value == vals[0]:
            i = 0
        elif value == vals[1]:
            i = 1
        else:
            i = -1
        if i >= 0:
            nums[i] = num
            if nums[0] > nums[1]:
                vals[0], vals[1] = vals[1], vals[0]
                nums[0], nums[1] = nums[1], nums[0]
        elif num < nums[0]:
            vals[1], nums[1] = vals[0], nums[0]
            vals[0], nums[0] = value, num
        elif num < nums[1]:
            vals[1], nums[1] = value, num

    def clone(self) -> CriticalPaths:
        return CriticalPaths(list(self.values), list(self.nums))

    def as_list(self) -> list[dict]:
        return [{"domain": v, "matchNum": n} for v, n in zip(self.values, self.nums) if n != MAX_INT32]


class PreFilterState:
    """Per DoNotSchedule constraint: matching pods per domain and the critical paths."""

    __slots__ = ("constraints", "critical_paths", "counts")

    def __init__(
        self, constraints: list[Constraint], critical_paths: list[CriticalPaths], counts: list[dict[str, int]]
    ):
        self.constraints = constraints
        self.critical_paths = critical_paths
        self.counts = counts

    def min_match_num(self, i: int) -> int:
        """The global minimum for the skew; 0 while fewer domains than minDomains are eligible."""
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.critical_paths[i].nums[0]

    def clone(self) -> PreFilterState:
        # constraints never change within a cycle: shared
        return PreFilterState(
            self.constraints, [p.clone() for p in self.critical_paths], [dict(m) for m in self.counts]
        )


class PreScoreState:
    """Per ScheduleAnyway constraint: matching pods per domain of the feasible nodes, and the weights."""

    __slots__ = ("constraints", "ignored_nodes", "counts", "weights", "require_all", "counters", "node_counts")

    def __init__(self):
        self.constraints: list[Constraint] = []
        self.counters: list = []  # per constraint: node_info -> matching pods on that node
        self.ignored_nodes: set[str] = set()
        self.counts: list[dict[str, int]] = []
        self.weights: list[float] = []
        self.require_all = True
        # per hostname constraint, when known: node name -> matching pods, for the nodes that
        # hold any (every other node holds none); None: ask the counter node by node
        self.node_counts: list[dict[str, int] | None] = []

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore


def _has_all_keys(labels, constraints) -> bool:
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def _count_matching(node_info, namespace: str, selector) -> int:
    """countPodsMatchSelector: the node's pods in the namespace, not terminating, matching the selector."""
    if selector.is_empty():
        return 0
    match = selector.matches
    n = 0
    for p in node_info.pods:
        if p.namespace == namespace and not p.deleting and match(p.labels):
            n += 1
    return n


def _selector_key(selector) -> tuple:
    return (selector.is_nothing, tuple((r.key, r.op, r.values) for r in selector.requirements))


def _zero(_node_info) -> int:
    return 0


def _pod_counter(namespace: str, selector):
    """countPodsMatchSelector over a list of pods (those not terminating, in the namespace), the
    selector compiled once: `key=value` selectors compare the labels directly."""
    reqs = selector.requirements
    if reqs and all(r.op == "In" and len(r.values) == 1 for r in reqs):
        pairs = tuple((r.key, next(iter(r.values))) for r in reqs)
        if len(pairs) == 1:
            key, value = pairs[0]

            def count_one(pods) -> int:
                n = 0
                for p in pods:
                    if p.namespace == namespace and p.labels.get(key) == value and not p.deleting:
                        n += 1
                return n

            return count_one

        def match(labels) -> bool:
            for k, v in pairs:
                if labels.get(k) != v:
                    return False
            return True
    else:
        match = selector.matches

    def count_any(pods) -> int:
        n = 0
        for p in pods:
            if p.namespace == namespace and not p.deleting and match(p.labels):
                n += 1
        return n

    return count_any


class _Tally:
    """One selector's matching pods per node name, as of a snapshot's generation and change log."""

    __slots__ = (
        "counts",
        "as_of",
        "recounted",
        "changes_seen",
        "total",
        "snapshot",
        "log_seen",
        "domains",
        "by_position",
        "log",
        "recount",
    )

    def __init__(
        self, counts: dict[str, int], as_of: int, changes_seen: int, snapshot, log_seen: int, log: list | None = None
    ):
        self.counts = counts
        self.as_of = as_of
        # name -> (NodeInfo, its generation, count): nodes changed since, counted from their pods
        self.recounted: dict[str, tuple[Any, int, int]] = {}
        self.changes_seen = changes_seen
        self.total = sum(counts.values())
        self.snapshot = None if snapshot is None else weakref.ref(snapshot)
        # the log it follows (a pair log of its selector's, Snapshot.pair_log; None: the
        # namespace's pod_log), and how much of it it holds
        self.log = log
        self.log_seen = log_seen
        # countPodsMatchSelector over a node's pods for its selector (_pod_counter), made once
        self.recount: Any = None
        # topology key -> the counts summed per node's value of it (None where a node lacks it)
        self.domains: dict[str, dict[str | None, int]] = {}
        # the counts as an int64 array in the snapshot's node order (tally_array), kept up to
        # date with them once made
        self.by_position: Any = None


class _MatchCountCache:
    """Per-node counts of matching pods per (namespace, selector), kept across cycles.

    A selector seen for the first time is counted over the snapshot's label index (only the pods
    that carry its rarest key=value pair), tallied by node: that tally holds for every NodeInfo the
    snapshot owns whose generation is not newer than the tally (generations only grow, and every
    add/remove bumps one). When the same snapshot comes back, the pods bound and evicted in the
    namespace since (its pod_log) are replayed into the tally, which then holds as of the
    snapshot's generation again: the snapshot's own nodes change only through bind, evict and
    add_node, which log each pod. A replay longer than a few times the pods the tally counts is
    a tally taken again instead, and so is a tally of another snapshot. A node the tally does not
    hold (changed since, for a counter kept past binds, or a preemption clone) is counted from its
    own pods; such counts are kept for owned NodeInfos at their generation. Per topology key, the
    tally's counts summed by the nodes' values are kept with it (domain_sums). The least recently
    used selectors are dropped past `limit`: a sweep scenario's queue interleaves thousands of
    workloads, each selector coming back after the others', and a tally kept is brought up to
    date by a replay of the namespace's binds since, far cheaper than a count over the pods.
    """

    def __init__(self, limit: int = 4096, retally: float = 1.0):
        self.limit = limit
        # a tally is taken again when more pods of its namespace were bound or evicted since than
        # `retally` times four times the pods it counted (and 64): replaying them would cost more
        # (float("inf"): never; both ways count alike, they differ in cost)
        self.retally = retally
        self._tables: OrderedDict = OrderedDict()
        # id(selector) -> (the selector, its _selector_key): a pod template's selector is one object
        self._keys: dict[int, tuple] = {}

    def clear(self) -> None:
        self._tables.clear()
        self._keys.clear()

    def counter(self, snapshot, namespace: str, selector):
        """A callable node_info -> countPodsMatchSelector(node_info.pods, selector, namespace) (a
        _Counter; for a selector matching nothing, a function counting 0)."""
        if selector.is_nothing or selector.is_empty():
            return _zero
        keys = self._keys
        known = keys.get(id(selector))
        if known is None or known[0] is not selector:
            if len(keys) > 4 * self.limit:
                keys.clear()
            known = keys[id(selector)] = (selector, _selector_key(selector))  # (held: its id stays its own)
        key = (namespace, known[1])
        tables = self._tables
        entry: _Tally | None = tables.get(key)
        if entry is not None and snapshot is not None:
            same = entry.snapshot is not None and entry.snapshot() is snapshot
            if not same:
                del tables[key]  # another snapshot's: tallied again for this one
                entry = None
            elif entry.changes_seen != len(snapshot.changes):
                log = entry.log if entry.log is not None else snapshot.pod_log.get(namespace, ())
                if len(log) - entry.log_seen > 4 * (entry.total + 64) * self.retally:
                    del tables[key]  # tallied again: cheaper than the replay
                    entry = None
                else:
                    _replay(entry, log, selector, snapshot)
                    entry.as_of = snapshot.generation
                    entry.changes_seen = len(snapshot.changes)
        if entry is None:
            counts: dict[str, int] = {}
            as_of = 0
            if snapshot is not None:
                as_of = snapshot.generation
                # matching pods per node, tallied by Counter (C-level), in the order nodes are met
                counts = Counter([p.node_name for p in snapshot.pods_matching(namespace, selector) if not p.deleting])
            changes_at = len(snapshot.changes) if snapshot is not None else 0
            log = snapshot.selector_log(namespace, selector) if snapshot is not None else None
            if log is not None:
                log_at = len(log)
            else:
                log_at = len(snapshot.pod_log.get(namespace, ())) if snapshot is not None else 0
            entry = tables[key] = _Tally(counts, as_of, changes_at, snapshot, log_at, log)
            while len(tables) > self.limit:
                tables.popitem(last=False)
        else:
            tables.move_to_end(key)
        recount = entry.recount
        if recount is None:
            recount = entry.recount = _pod_counter(namespace, selector)
        return _Counter(entry, snapshot, recount)


class _Counter:
    """countPodsMatchSelector(node_info.pods, selector, namespace) for one selector, as of the
    moment _MatchCountCache.counter made it (its tally, the snapshot's changes then): called with
    a NodeInfo, it counts that node's matching pods; its methods read the tally by other ways. An
    object, not closures over each other (a reference cycle per counter the cyclic collector
    alone could free, and a sweep scenario makes three per cycle)."""

    __slots__ = ("entry", "snapshot", "tally", "as_of", "recounted", "changes_seen", "own", "recount")

    def __init__(self, entry: _Tally, snapshot, recount):
        self.entry = entry
        self.snapshot = snapshot
        self.tally = entry.counts
        self.as_of = entry.as_of
        self.recounted = entry.recounted
        self.changes_seen = entry.changes_seen
        self.own = snapshot.by_name if snapshot is not None else {}
        self.recount = recount

    def __call__(self, node_info) -> int:
        name = node_info.node.name
        mine = self.own.get(name) is node_info
        if mine and node_info.generation <= self.as_of:
            return self.tally.get(name, 0)
        recounted = self.recounted
        e = recounted.get(name)
        if e is not None and e[0] is node_info and e[1] == node_info.generation:
            return e[2]
        n = self.recount(node_info.pods)
        if mine:  # a clone (preemption) is counted, not kept
            recounted[name] = (node_info, node_info.generation, n)
        return n

    def holders(self) -> list:
        """The snapshot's NodeInfos that may hold a matching pod (every other counts 0), in
        node order: those of the tally and those changed since it was taken."""
        snapshot = self.snapshot
        if snapshot is None:
            return []
        index_of = snapshot.index_of
        positions = {index_of[name] for name in self.tally}
        positions.update(snapshot.changes[self.changes_seen :])
        nis = snapshot.node_infos
        return [nis[i] for i in sorted(positions)]

    def held_counts(self, nodes: list) -> list:
        """(NodeInfo, count) of each of `nodes` (the snapshot's own, as holders() gives them)
        whose count is not 0, in their order: the tally read directly where it holds."""
        out = []
        tally, as_of, own = self.tally, self.as_of, self.own
        for ni in nodes:
            name = ni.node.name
            n = tally.get(name, 0) if ni.generation <= as_of and own.get(name) is ni else self(ni)
            if n:
                out.append((ni, n))
        return out

    def held(self) -> list:
        """(NodeInfo, count) of every snapshot node holding a matching pod: the tally itself
        when no node changed since it was taken (in its order), else held_counts(holders())
        (in node order)."""
        snapshot = self.snapshot
        if snapshot is None:
            return []
        if len(snapshot.changes) == self.changes_seen:
            by_name = snapshot.by_name
            return [(by_name[name], n) for name, n in self.tally.items()]
        return self.held_counts(self.holders())

    def domain_sums(self, key: str) -> dict[str | None, int] | None:
        """Every snapshot node's count summed per its value of `key` (None where it lacks the
        key; values summing to 0 left out), while the tally holds every node (no bind or
        eviction since the counter was made); else None."""
        snapshot = self.snapshot
        if snapshot is None or len(snapshot.changes) != self.changes_seen:
            return None
        entry = self.entry
        sums = entry.domains.get(key)
        if sums is None:
            sums = {}
            by_name = snapshot.by_name
            for name, n in self.tally.items():
                value = by_name[name].node.labels.get(key)
                sums[value] = sums.get(value, 0) + n
            entry.domains[key] = sums
        return sums

    def tally_now(self) -> dict[str, int] | None:
        """The tally itself (node name -> its matching pods, no zero), while no bind or
        eviction came since the counter was made; else None. It is the cache's own, brought
        up to date in place by later counters: for a reader done within the cycle."""
        snapshot = self.snapshot
        if snapshot is None or len(snapshot.changes) != self.changes_seen:
            return None
        return self.tally

    def tally_array(self, np) -> Any:
        """tally_now() as an int64 array of `np` in the snapshot's node order (0 where a node
        holds none), or None when tally_now() is: made once, then kept with the tally."""
        tally = self.tally_now()
        if tally is None:
            return None
        snapshot = self.snapshot
        made = self.entry.by_position
        if made is None or len(made) != len(snapshot.node_infos):  # (none yet, or a node added since)
            made = self.entry.by_position = counts_by_position(snapshot, tally, np)
        return made


def counts_by_position(snapshot, counts: dict[str, int], np) -> Any:
    """Per-node counts (node name -> count) as an int64 array of `np` in the snapshot's node order,
    0 where a node has none."""
    out = np.zeros(len(snapshot.node_infos), dtype=np.int64)
    if counts:
        at = np.fromiter(map(snapshot.index_of.__getitem__, counts), dtype=np.intp, count=len(counts))
        out[at] = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    return out


def _replay(entry: _Tally, log, selector, snapshot) -> None:
    """Bring a tally up to date with the namespace's pods bound and evicted since it was last."""
    counts = entry.counts
    match = selector.matches
    total = entry.total
    domains = entry.domains.items()
    by_name = snapshot.by_name
    by_position = entry.by_position
    if by_position is not None and len(by_position) != len(snapshot.node_infos):
        by_position = entry.by_position = None  # (a node added since: made again when asked)
    for pod, node_name, sign in log[entry.log_seen :]:
        if not pod.deleting and match(pod.labels):
            left = counts.get(node_name, 0) + sign
            if left:
                counts[node_name] = left
            else:
                del counts[node_name]
            total += sign
            if by_position is not None:
                by_position[snapshot.index_of[node_name]] += sign
            for key, sums in domains:
                value = by_name[node_name].node.labels.get(key)
                left = sums.get(value, 0) + sign
                if left:
                    sums[value] = left
                else:
                    del sums[value]
    entry.total = total
    entry.log_seen = len(log)
    entry.recounted.clear()


def _eligibility_is_trivial(pod, constraints) -> bool:
    """matchNodeInclusionPolicies admits every node: no constraint honours taints, and the pod
    has no nodeSelector or required node affinity to honour."""
    if any(c.node_taints_policy == HONOR for c in constraints):
        return False
    return not pod.node_selector and pod.required_node_affinity is None


def _holders_by_counter(counters) -> dict[int, list]:
    """id(counter) -> the NodeInfos that may hold a pod it counts, each distinct counter asked once."""
    held: dict[int, list] = {}
    for f in counters:
        if id(f) not in held:
            held[id(f)] = f.holders()
    return held


_INCLUSION = "ksched.podtopologyspread.inclusion"


class _NodeEligibility:
    """matchNodeInclusionPolicies for one node, each check evaluated at most once for the pod's
    fields: kept in its `_cache` per node object (the pods sharing it, a template's replacements,
    have the same node selector, affinity and tolerations; a node object's labels and taints never
    change), the node held so that its id stays its own."""

    __slots__ = ("pod", "node", "_known")

    def __init__(self, pod, node):
        self.pod = pod
        self.node = node
        memo = pod._cache.get(_INCLUSION)
        if memo is None:
            memo = pod._cache[_INCLUSION] = {}
        known = memo.get(id(node))
        if known is None or known[0] is not node:
            known = memo[id(node)] = [node, None, None]  # the node, its affinity and taints checks
        self._known = known

    def includes(self, c: Constraint) -> bool:
        known = self._known
        if c.node_affinity_policy == HONOR:
            affinity = known[1]
            if affinity is None:
                affinity = known[1] = required_node_affinity_matches(self.pod, self.node)
            if not affinity:
                return False
        if c.node_taints_policy == HONOR:
            taints = known[2]
            if taints is None:
                taints = known[2] = find_untolerated_taint(self.node.taints, self.pod.tolerations) is None
            if not taints:
                return False
        return True
