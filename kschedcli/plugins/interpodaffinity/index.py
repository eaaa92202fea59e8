"""Which nodes hold a pod with a given label: lets InterPodAffinity look at a few nodes, not every pod.

kube-scheduler scans every pod of the cluster for the incoming pod's terms each cycle. The counts only
depend on the pods that match, so this index narrows the scan to the nodes holding a pod that carries
one of the label values an `In`/`=` requirement asks for; the term is still checked on each of their
pods. The index follows the snapshot node by node (NodeInfo identity and generation), so binds and any
other change are picked up at the next cycle by re-reading only the nodes that changed.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left
from collections import Counter, OrderedDict, deque
from itertools import compress, repeat
from operator import attrgetter, is_not, ne

from ...backend.snapshot import build_ahead, latest_generation
from .terms import TERMS_CACHE_KEY, pod_terms

_INDEXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


_generation = attrgetter("generation")


class _NodeTracker:
    """An aggregate of per-node contributions kept in step with the snapshot: a node is read
    again (`_reindex`) when its NodeInfo object or generation changed since it was last read;
    a new node list starts everything afresh (`_reset`)."""

    # changes_seen (trackers seeded for a Snapshot.without_nodes derivation only): how much of the
    # snapshot's change log (Snapshot.changes, the positions each bind, eviction and added node
    # changed) has been read
    __slots__ = ("_snapshot", "node_infos", "objs", "gens", "seen", "changes_seen", "__weakref__")
    changes_seen: int | None

    def __init__(self, snapshot):
        self.snapshot = snapshot
        self.node_infos: list = []  # the snapshot's list last indexed (compared by identity)
        self.objs: list = []
        self.gens: list = []
        self.seen = -1  # the last generation any NodeInfo had when this was brought up to date
        self._reset(0)

    # The tracker is the value of a WeakKeyDictionary keyed by its snapshot: it holds the snapshot
    # weakly, or the entry would keep its own key alive, and with it every snapshot ever indexed
    # (a sweep derives one per scenario).
    @property
    def snapshot(self):
        snap = self._snapshot()
        if snap is None:
            raise ReferenceError("the snapshot this index follows is gone")
        return snap

    @snapshot.setter
    def snapshot(self, snapshot) -> None:
        self._snapshot = weakref.ref(snapshot)

    def __getstate__(self) -> dict:
        # stored with its snapshot (PrebuiltSnapshot.build_indexes): the snapshot itself, not the weakref
        state = {
            name: getattr(self, name)
            for cls in type(self).__mro__
            for name in getattr(cls, "__slots__", ())
            if name not in ("_snapshot", "__weakref__") and hasattr(self, name)
        }
        state["snapshot"] = self.snapshot
        return state

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def _reset(self, n: int) -> None:
        raise NotImplementedError

    def _reindex(self, i: int, ni) -> None:
        raise NotImplementedError

    def seeded(self, snapshot):
        """This tracker's state carried over to `snapshot` (derived from this one's, Snapshot.derive):
        only the positions whose NodeInfo differs are read again. For a snapshot made by
        Snapshot.without_nodes, the removed nodes' contributions are taken back and the positions
        after them shifted down (nodes appended since come after). None when nodes were removed
        otherwise."""
        removed = getattr(snapshot, "removed_positions", None) or []
        extra = len(snapshot.node_infos) - len(self.objs) + len(removed)
        if extra < 0:
            return None
        c = type(self).__new__(type(self))
        c.snapshot = snapshot
        c.node_infos = snapshot.node_infos
        c.objs = self.objs + [None] * extra
        c.gens = self.gens + [None] * extra
        c.seen = -1
        c._copy_state(self, extra)
        if removed:
            for i in removed:
                c._take_back(i)
            gone = set(removed)
            c.objs = [o for i, o in enumerate(c.objs) if i not in gone]
            c.gens = [g for i, g in enumerate(c.gens) if i not in gone]
            c._shift(removed)
        # a copy made for new image states holds the same node and pods: nothing to read again
        nis = snapshot.node_infos
        for i, orig in getattr(snapshot, "copies", {}).items():
            if i < len(c.objs) and c.objs[i] is orig and c.gens[i] == orig.generation == nis[i].generation:
                c.objs[i] = nis[i]
        return c

    def _copy_state(self, other, extra: int) -> None:
        raise NotImplementedError

    # whether a Snapshot.without_nodes derivation's index is always seeded from its parent's (built
    # for it if need be): the existing terms' index, which every cycle of a pod with terms reads;
    # the label index is seeded only when the parent has one (else built for the derivation alone)
    seeded_from_parent = False

    def _take_back(self, i: int) -> None:
        """The contribution of the node at position i (as last read) taken back: it is gone."""
        raise NotImplementedError

    def _shift(self, removed: list[int]) -> None:
        """Positions renumbered for the removed ones (sorted) gone: a later one moves down by the
        number of removed positions before it; the per-position lists lose the removed entries."""
        raise NotImplementedError

    def _grow(self, extra: int) -> None:
        """Room for `extra` nodes appended, holding nothing yet."""
        raise NotImplementedError

    def refresh(self) -> None:
        nis = self.snapshot.node_infos
        latest = latest_generation()
        if latest == self.seen and nis is self.node_infos and len(nis) == len(self.objs):
            return  # no NodeInfo anywhere has changed since
        self.seen = latest
        seen = getattr(self, "changes_seen", None)
        if seen is not None:
            if nis is self.node_infos and len(nis) == len(self.objs):
                # only the positions the snapshot's binds and evictions changed since
                changes = self.snapshot.changes
                self.changes_seen = len(changes)
                if seen + 1 == len(changes):  # (a cycle's bind)
                    i = changes[seen]
                    ni = nis[i]
                    if self.objs[i] is not ni or self.gens[i] != ni.generation:
                        self._reindex_one(i, ni)
                elif seen < len(changes):
                    self._refresh_at(sorted(set(changes[seen:])))
                return
            self.changes_seen = None  # nodes added: every position compared from now on
        if nis is self.node_infos and len(nis) > len(self.objs):
            # nodes appended in place (Snapshot.add_node): only the new positions are read
            extra = len(nis) - len(self.objs)
            self.objs.extend([None] * extra)
            self.gens.extend([None] * extra)
            self._grow(extra)
        if nis is not self.node_infos or len(nis) != len(self.objs):
            self.node_infos = nis
            self.objs = [None] * len(nis)
            self.gens = [None] * len(nis)
            self._reset(len(nis))
        objs, gens = self.objs, self.gens
        # the positions whose NodeInfo is another object or of another generation, found by C-level
        # passes (5,000 nodes: a Python loop over them was most of a cluster-autoscaler estimate)
        positions = range(len(nis))
        now = list(map(_generation, nis))
        moved = set(compress(positions, map(ne, gens, now)))
        moved.update(compress(positions, map(is_not, objs, nis)))
        changed = [(i, nis[i]) for i in sorted(moved)]
        self._reindex_many(changed)
        for i, ni in changed:
            objs[i] = ni
            gens[i] = now[i]

    def _refresh_at(self, positions: list[int]) -> None:
        nis, objs, gens = self.node_infos, self.objs, self.gens
        changed = [(i, nis[i]) for i in positions if objs[i] is not nis[i] or gens[i] != nis[i].generation]
        self._reindex_many(changed)
        for i, ni in changed:
            objs[i] = ni
            gens[i] = ni.generation

    def _reindex_many(self, changed: list) -> None:
        for i, ni in changed:
            self._reindex(i, ni)

    def _reindex_one(self, i: int, ni) -> None:
        """_refresh_at([i]) for a position known to have changed."""
        self._reindex_many([(i, ni)])
        self.objs[i] = ni
        self.gens[i] = ni.generation


class PodLabelIndex(_NodeTracker):
    __slots__ = ("keys", "index")

    def _reset(self, n: int) -> None:
        self.keys: list[frozenset] = [frozenset()] * n
        self.index: dict[tuple[str, str], set[int]] = {}

    def _copy_state(self, other, extra: int) -> None:
        self.keys = other.keys + [frozenset()] * extra
        self.index = {kv: set(held) for kv, held in other.index.items()}

    def _grow(self, extra: int) -> None:
        self.keys.extend([frozenset()] * extra)

    def _take_back(self, i: int) -> None:
        index = self.index
        for kv in self.keys[i]:
            s = index[kv]
            s.discard(i)
            if not s:
                del index[kv]
        self.keys[i] = frozenset()

    def _shift(self, removed: list[int]) -> None:
        gone = set(removed)
        self.keys = [k for i, k in enumerate(self.keys) if i not in gone]
        first = removed[0]
        for kv, held in self.index.items():
            if max(held) > first:
                self.index[kv] = {i - bisect_left(removed, i) for i in held}

    def _reindex(self, i: int, ni) -> None:
        pairs: set[tuple[str, str]] = set()
        for p in ni.pods:
            pairs.update(p.labels.items())
        new = frozenset(pairs)
        old = self.keys[i]
        index = self.index
        for kv in old - new:
            s = index.get(kv)
            if s is not None:
                s.discard(i)
                if not s:
                    del index[kv]
        for kv in new - old:
            s = index.get(kv)
            if s is None:
                index[kv] = {i}
            else:
                s.add(i)
        self.keys[i] = new

    def candidates(self, selector) -> set[int] | None:
        """Positions of the nodes that may hold a pod the selector matches; None: any node may."""
        if selector.is_nothing:
            return set()
        best: set[int] | None = None
        index = self.index
        for r in selector.requirements:
            if r.op != "In":
                continue
            vals = list(r.values)
            if len(vals) == 1:
                s = index.get((r.key, vals[0]), set())
            else:
                s = set()
                for v in vals:
                    s |= index.get((r.key, v), set())
            if best is None or len(s) < len(best):
                best = s
                if not best:
                    break
        return best


def _up_to_date(registry, cls, snapshot):
    """The snapshot's index of this kind, built once (from the index of the snapshot it was derived
    from, when there is one) and refreshed for changed nodes."""
    idx = registry.get(snapshot)
    if idx is None:
        parent = getattr(snapshot, "derived_from", None)
        removal = getattr(snapshot, "_removal", None)
        # (Snapshot.without_nodes) the parent's index, built once and brought up to date, less the
        # removed nodes: what differs from it since is in the snapshot's change log
        without = removal is not None and removal.parent is parent and cls.seeded_from_parent
        parent_idx = registry.get(parent) if parent is not None else None
        if parent is not None and (without or (parent_idx is None and _carried(registry, parent))):
            parent_idx = _up_to_date(registry, cls, parent)  # (or carried over a chain of derivations)
        if parent_idx is not None:
            idx = parent_idx.seeded(snapshot)
            if idx is not None and without:
                idx.changes_seen = 0
        if idx is None:
            idx = cls(snapshot)
        registry[snapshot] = idx
    idx.refresh()
    return idx


def _carried(registry, snapshot) -> bool:
    """Whether some snapshot `snapshot` derives from, directly or not, has its index."""
    parent = getattr(snapshot, "derived_from", None)
    while parent is not None:
        if registry.get(parent) is not None:
            return True
        parent = getattr(parent, "derived_from", None)
    return False


def carry_over(snapshot) -> None:
    """Bring the snapshot's indexes up to date from those of the snapshots it derives from, where
    they have them: afterwards `snapshot.derived_from` may be cut (scale-down does, so that a
    chain of removals does not keep every snapshot alive)."""
    for registry, cls in ((_INDEXES, PodLabelIndex), (_TERM_INDEXES, ExistingTermsIndex)):
        if registry.get(snapshot) is None and _carried(registry, snapshot):
            _up_to_date(registry, cls, snapshot)


def index_for(snapshot) -> PodLabelIndex:
    """The snapshot's pod-label index, brought up to date."""
    return _up_to_date(_INDEXES, PodLabelIndex, snapshot)


def nodes_to_scan(snapshot, nodes: list, selectors) -> list:
    """The NodeInfos of `nodes` that may hold a pod matching every one of `selectors`, in order.

    `nodes` must be the snapshot's own node list for the index to apply; otherwise all are returned."""
    if snapshot is None or nodes is not getattr(snapshot, "node_infos", None):
        return list(nodes)
    idx = index_for(snapshot)
    allowed: set[int] | None = None
    for sel in selectors:
        c = idx.candidates(sel)
        if c is None:
            continue
        allowed = set(c) if allowed is None else allowed & c
    if allowed is None:
        return list(nodes)
    return [nodes[i] for i in sorted(allowed)]


def nodes_holding(snapshot, nodes: list, terms) -> list:
    """The NodeInfos of `nodes` that may hold a pod matching every one of `terms` (the incoming
    pod's terms, namespaceSelector unrolled), in order: found from the snapshot's per-namespace
    label index when each term lists its namespaces, else as `nodes_to_scan` finds them."""
    if snapshot is None or nodes is not getattr(snapshot, "node_infos", None):
        return list(nodes)
    if any(t.all_namespaces or not t.ns_selector.is_nothing for t in terms):
        return nodes_to_scan(snapshot, nodes, [t.selector for t in terms])
    index_of = snapshot.index_of
    allowed: set[int] | None = None
    for t in terms:
        holding = {index_of[p.node_name] for ns in t.namespaces for p in snapshot.pods_matching(ns, t.selector)}
        allowed = holding if allowed is None else allowed & holding
    if allowed is None:
        return list(nodes)
    return [nodes[i] for i in sorted(allowed)]


def matching_by_node(snapshot, nodes: list, t) -> list | None:
    """(NodeInfo, how many of its pods match `t`) of every node holding a pod that matches the
    incoming pod's term `t` (AffinityTerm.matches with its namespaces listed, as
    with_namespaces_resolved leaves them), in node order, found from the snapshot's per-namespace
    label index; None when `nodes` are not the snapshot's own or the term selects namespaces
    otherwise (every namespace, a namespaceSelector): the caller looks at the nodes' pods."""
    if snapshot is None or nodes is not getattr(snapshot, "node_infos", None):
        return None
    if t.all_namespaces or not t.ns_selector.is_nothing:
        return None
    held = Counter([p.node_name for ns in t.namespaces for p in snapshot.pods_matching(ns, t.selector)])
    index_of = snapshot.index_of
    return [(nodes[i], held[snapshot.names[i]]) for i in sorted(map(index_of.__getitem__, held))]


def matching_by_value(snapshot, nodes: list, t, key: str) -> dict | None:
    """How many pods matching the incoming pod's term `t` each value of the nodes' label `key`
    holds (None: nodes without it; values holding none left out), as matching_by_node's counts
    summed per value of their nodes; None where matching_by_node gives None. Kept per
    (namespace, selector, key) across cycles (see _DomainTally): not to be changed."""
    if snapshot is None or nodes is not getattr(snapshot, "node_infos", None):
        return None
    if t.all_namespaces or not t.ns_selector.is_nothing:
        return None
    if len(t.namespaces) == 1:
        (ns,) = t.namespaces
        return _domain_tally(snapshot, ns, t.selector, key)
    out: dict = {}
    for ns in t.namespaces:
        for tv, n in _domain_tally(snapshot, ns, t.selector, key).items():
            out[tv] = out.get(tv, 0) + n
    return out


class _DomainTally:
    """The pods of one namespace matching one selector, counted per value of one node label
    (no zero), as of `log_seen` entries of the snapshot's pod_log for the namespace."""

    __slots__ = ("sums", "log", "log_seen", "total")

    def __init__(self, sums: dict, log: list | None, log_seen: int):
        self.sums = sums
        # the log it follows (a pair log of its selector's; None: the namespace's pod_log), and
        # how much of it it holds
        self.log = log
        self.log_seen = log_seen
        self.total = sum(sums.values())


# snapshot -> {(namespace, selector's requirements, label key): _DomainTally}, least recently
# used first
_DOMAIN_TALLIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_DOMAIN_TALLY_LIMIT = 4096


def _domain_tally(snapshot, namespace: str, selector, key: str) -> dict:
    """The namespace's placed pods matching `selector` per value of their nodes' label `key`.

    Counted over the snapshot's label index the first time; kept, and brought up to date from
    then on by replaying the pods the snapshot bound and evicted in the namespace since (its
    pod_log, which every change of its nodes' pods goes through: bind, evict, add_node), unless
    the replay would be longer than a count afresh."""
    if selector.is_nothing:
        return {}
    tables = _DOMAIN_TALLIES.get(snapshot)
    if tables is None:
        tables = _DOMAIN_TALLIES[snapshot] = OrderedDict()
    k = (namespace, tuple((r.key, r.op, r.values) for r in selector.requirements), key)
    entry = tables.get(k)
    if entry is not None:
        log = entry.log if entry.log is not None else snapshot.pod_log.get(namespace, ())
        if len(log) - entry.log_seen > 4 * (entry.total + 64):
            del tables[k]
            entry = None
        else:
            tables.move_to_end(k)
            if entry.log_seen != len(log):
                _replay(entry, log, selector, snapshot, key)
            return entry.sums
    col = snapshot.label_column(key)
    index_of = snapshot.index_of
    pods = snapshot.pods_matching(namespace, selector)
    sums = dict(Counter(map(col.__getitem__, map(index_of.__getitem__, map(_NODE_NAME, pods)))))
    followed = snapshot.selector_log(namespace, selector)
    log = followed if followed is not None else snapshot.pod_log.get(namespace, ())
    tables[k] = _DomainTally(sums, followed, len(log))
    while len(tables) > _DOMAIN_TALLY_LIMIT:
        tables.popitem(last=False)
    return sums


def _replay(entry: _DomainTally, log, selector, snapshot, key: str) -> None:
    sums = entry.sums
    match = selector.matches
    by_name = snapshot.by_name
    total = entry.total
    for pod, node_name, sign in log[entry.log_seen :]:
        if match(pod.labels):
            tv = by_name[node_name].node.labels.get(key)
            left = sums.get(tv, 0) + sign
            if left:
                sums[tv] = left
            else:
                del sums[tv]
            total += sign
    entry.total = total
    entry.log_seen = len(log)


_NODE_NAME = attrgetter("node_name")


# ----------------------------------------------------------------------------- existing pods' terms

# kinds of the existing pods' terms, as PodTerms lists them
REQUIRED_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY, REQUIRED_ANTI_AFFINITY = range(4)
KIND_NAMES = ("requiredAffinity", "preferredAffinity", "preferredAntiAffinity", "requiredAntiAffinity")

_TERM_INDEXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Marker:
    """A module constant that pickles as itself (the snapshot cache may store an index)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __reduce__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name


_IN_POSITIONS = _Marker("_IN_POSITIONS")  # ExistingTermsIndex.contribs: see _reset

_NAMESPACE = attrgetter("namespace")
_POD_AFFINITY = attrgetter("pod_affinity")
_POD_ANTI = attrgetter("pod_anti_affinity")


class TermEntry:
    """One distinct term object carried by existing pods (replicas share it, see pod_terms), and
    the PodTerms it belongs to (`owner`: the carriers are the pods holding that PodTerms; a term
    object belongs to one PodTerms). `counts`: how many carriers per topology value of their
    nodes (None: the node lacks the key), worked out when first asked for
    (ExistingTermsIndex.counts; None until then), then kept up to date."""

    __slots__ = ("term", "kind", "counts", "owner")

    def __init__(self, term, kind: int, owner):
        self.term = term
        self.kind = kind
        self.owner = owner
        self.counts: dict | None = None


class ExistingTermsIndex(_NodeTracker):
    """The existing pods' (anti-)affinity terms aggregated per distinct term, so that PreScore and
    PreFilter look at a few hundred terms instead of every pod with affinity. Follows the snapshot
    node by node (NodeInfo identity and generation), like PodLabelIndex.

    Each distinct PodTerms (replicas share one) keeps the node positions of its carriers; a
    term's counts per topology value are worked out from them for the terms an incoming pod
    matches only (most never do), and kept up to date from then on."""

    __slots__ = (
        "contribs",
        "entries",
        "positions",
        "by_namespace",
        "_probes",
        "_bulk_groups",
        "_single_reads",
        "_matching",
    )

    def _reset(self, n: int) -> None:
        # per position: None (no pod with affinity), _IN_POSITIONS (added in bulk: the node's
        # labels and counts are read back when it changes) or (node labels, {PodTerms: pods},
        # the node's pods with affinity then: a tuple, compared by identity, Pod having no __eq__)
        self.contribs: list = [None] * n
        self.entries: dict = {}  # (kind, id(term)) -> TermEntry
        self.positions: dict = {}  # PodTerms -> {node position: pods carrying it there}
        # namespace -> the entries whose term may match a pod of it (entries_in); extended as
        # entries come, emptied when one goes
        self.by_namespace: dict = {}
        # namespace -> [its by_namespace list, how many of its entries are indexed, (key, value) ->
        # their positions in it, the positions of those without such a requirement] (entries_matching)
        self._probes: dict = {}
        self._bulk_groups: dict | None = None  # see _groups_at
        self._single_reads = 0  # (the same)
        self._matching: dict = {}  # see entries_matching

    def _copy_state(self, other, extra: int) -> None:
        self.contribs = other.contribs + [None] * extra  # replaced per position, never changed
        self.entries = {}
        for key, e in other.entries.items():
            c = self.entries[key] = TermEntry(e.term, e.kind, e.owner)
            c.counts = None if e.counts is None else dict(e.counts)
        self.positions = {et: dict(held) for et, held in other.positions.items()}
        self.by_namespace = {}
        self._probes = {}
        self._matching = {}
        self._bulk_groups = None
        self._single_reads = 0

    def _grow(self, extra: int) -> None:
        self.contribs.extend([None] * extra)

    seeded_from_parent = True

    def _take_back(self, i: int) -> None:
        old = self.contribs[i]
        if old is _IN_POSITIONS:
            self._add(i, self.objs[i].node.labels, self._groups_at(i), -1)
        elif old is not None:
            self._add(i, old[0], old[1], -1)
        self.contribs[i] = None

    def _shift(self, removed: list[int]) -> None:
        gone = set(removed)
        self._bulk_groups = None  # (keyed by the old positions)
        self._single_reads = 0
        self.contribs = [x for i, x in enumerate(self.contribs) if i not in gone]
        first = removed[0]
        for et, held in self.positions.items():
            if max(held) > first:
                self.positions[et] = {i - bisect_left(removed, i): m for i, m in held.items()}

    def adopt(self, snapshot) -> None:
        """Take this index up again for `snapshot`, the one it was built over (built ahead and stored
        with it, see _built_ahead), read back in another process: its NodeInfos' new generations,
        its entries keyed by their terms' ids here."""
        self.gens = [None if ni is None else ni.generation for ni in self.objs]
        self.seen = -1
        self.entries = {(e.kind, id(e.term)): e for e in self.entries.values()}
        self.by_namespace = {}
        self._probes = {}
        self._matching = {}
        self._bulk_groups = None
        self._single_reads = 0
        _TERM_INDEXES[snapshot] = self

    def entries_in(self, namespace: str) -> list:
        """(key, entry) of the entries whose term may match a pod of `namespace`, in the entries'
        order: those listing it, those of every namespace and those with a namespaceSelector
        (which AffinityTerm.matches decides); the others cannot match it. Worked out once per
        namespace while no entry comes or goes."""
        found = self.by_namespace.get(namespace)
        if found is None:
            found = self.by_namespace[namespace] = [
                (key, e) for key, e in self.entries.items() if _may_match_in(namespace, e.term)
            ]
        return found

    def entries_matching(self, pod, ns_labels) -> list:
        """entries_in(pod.namespace) narrowed to the entries whose term matches the pod
        (AffinityTerm.matches), in the same order. A term whose selector requires a label
        `key=value` can only match a pod carrying it: such terms are found through the pod's own
        labels (a probe index kept beside each namespace's list, extended as the list grows),
        the others are each asked.

        The answer depends on the pod's namespace and labels, the namespace's labels and the
        entries of entries_in(namespace) only: it is kept per namespace and labels (alike pods,
        and PreFilter's question asked again by PreScore) while that list is the same object (an
        entry going replaces it) and the namespace's labels are equal; entries come at the list's
        end, and those come since are asked then. The list returned is shared: not to be changed."""
        found = self.entries_in(pod.namespace)
        key = (pod.namespace, tuple(pod.labels.items()))
        known = self._matching.get(key)
        if known is not None and known[0] is found and known[2] == (ns_labels or _NO_LABELS):
            if known[1] == len(found):
                return known[3]
            out = known[3] + [kv for kv in found[known[1] :] if kv[1].term.matches(pod, ns_labels)]
            self._matching[key] = (found, len(found), known[2], out)
            return out
        out = self._entries_matching(pod, ns_labels, found)
        if len(self._matching) >= _MATCHING_LIMIT:
            self._matching.clear()
        self._matching[key] = (found, len(found), dict(ns_labels or _NO_LABELS), out)
        return out

    def _entries_matching(self, pod, ns_labels, found: list) -> list:
        probes = self._probes.get(pod.namespace)
        if probes is None or probes[0] is not found:
            probes = self._probes[pod.namespace] = [found, 0, {}, []]
        if probes[1] != len(found):
            by_pair, general = probes[2], probes[3]
            for i in range(probes[1], len(found)):
                sel = found[i][1].term.selector
                if sel.is_nothing:
                    continue  # matches no pod
                pairs = sel.equality_pairs()
                if pairs:
                    by_pair.setdefault(pairs[0], []).append(i)
                else:
                    general.append(i)
            probes[1] = len(found)
        by_pair = probes[2]
        at = list(probes[3])
        for pair in pod.labels.items():
            hit = by_pair.get(pair)
            if hit is not None:
                at += hit
        if not at:
            return []
        at.sort()
        return [kv for kv in map(found.__getitem__, at) if kv[1].term.matches(pod, ns_labels)]

    def _new_entries(self, et) -> None:
        """The entries of a PodTerms that has carriers again: added to `entries` (at its end,
        their keys being new) and to each namespace's list kept by entries_in (at its end: the
        entries' order), where their terms may match."""
        entries = self.entries
        memo = self.by_namespace
        for key, t, _ in _flat_terms(et):
            if key in entries:  # (not expected: a key keeps its place, the lists would not)
                memo.clear()
            e = entries[key] = TermEntry(t, key[0], et)
            for namespace, found in memo.items():
                if _may_match_in(namespace, t):
                    found.append((key, e))

    def holders(self, keys) -> list:
        """The snapshot's NodeInfos carrying any of the terms `keys`, in node order."""
        positions = self.positions
        owners = {id(e.owner): e.owner for e in map(self.entries.__getitem__, keys)}.values()
        nis = self.snapshot.node_infos
        return [nis[i] for i in sorted({i for et in owners for i in positions[et]})]

    def counts(self, e: TermEntry) -> dict:
        """How many pods carry the entry's term per topology value of their nodes (None: the
        node lacks the key), in node order of the first carrier of each value."""
        counts = e.counts
        if counts is None:
            counts = e.counts = {}
            tk = e.term.topology_key
            objs = self.objs
            for i, m in sorted(self.positions[e.owner].items()):
                tv = objs[i].node.labels.get(tk)
                counts[tv] = counts.get(tv, 0) + m
        return counts

    def _reindex(self, i: int, ni) -> None:
        self._reindex_many([(i, ni)])

    def _reindex_one(self, i: int, ni) -> None:
        """A bind or eviction on the node at position i: most bring or take a pod without terms,
        which leaves the node's pods with affinity as they were (nothing to do), else see
        _reindex_many."""
        old = self.contribs[i]
        if old.__class__ is tuple and old[0] is ni.node.labels and old[2] == tuple(ni.pods_with_affinity):
            self.objs[i] = ni
            self.gens[i] = ni.generation
            return
        super()._reindex_one(i, ni)

    def _reindex_many(self, changed: list) -> None:
        """Take back each changed node's old contribution and add its pods' terms again, node by
        node in order; when none had one (the first build), see `_add_new`.

        Within one call every pod is alive, so pods sharing their namespace and affinity objects
        (by identity) share the PodTerms pod_terms would give them: it is asked once per such
        group (and the others cached as it would cache them)."""
        contribs = self.contribs
        if all(contribs[i] is None for i, _ in changed):
            self._add_new(changed)
            return
        terms_of: dict = {}  # (namespace, id(podAffinity), id(podAntiAffinity)) -> PodTerms
        for i, ni in changed:
            old = contribs[i]
            labels = ni.node.labels
            if old is _IN_POSITIONS:
                # objs[i] is still the NodeInfo read then (refresh replaces it after this)
                old = (self.objs[i].node.labels, self._groups_at(i))
            if old is not None and old[0] is not labels:
                self._add(i, old[0], old[1], -1)
                old = None
            pods = ni.pods_with_affinity
            held = tuple(pods)
            if old is not None and len(old) > 2:
                before_held = old[2]
                if before_held == held:
                    continue  # the same pods with affinity (by identity) on the same labels: unchanged
                if len(held) == len(before_held) + 1 and held[:-1] == before_held:
                    # one pod with affinity bound here since: its PodTerms is one more
                    added = pod_terms(held[-1])
                    grown = dict(old[1])
                    grown[added] = grown.get(added, 0) + 1
                    contribs[i] = (labels, grown, held)
                    self._add(i, labels, {added: 1}, 1)
                    continue
            if not pods:
                if old is not None:
                    self._add(i, labels, old[1], -1)
                contribs[i] = None
                continue
            groups: dict = {}  # PodTerms -> how many of the node's pods carry it
            for ep in pods:
                cache = ep._cache
                et = cache.get(TERMS_CACHE_KEY)
                if et is None:
                    k = (ep.namespace, id(ep.pod_affinity), id(ep.pod_anti_affinity))
                    et = terms_of.get(k)
                    if et is None:
                        et = terms_of[k] = pod_terms(ep)
                    else:
                        cache[TERMS_CACHE_KEY] = et  # what pod_terms(ep) keeps from now on
                groups[et] = groups.get(et, 0) + 1
            contribs[i] = (labels, groups, held)
            if old is None:
                self._add(i, labels, groups, 1)
                continue
            # the node's labels are the same: only what changed is added or taken back, so that
            # a PodTerms the node alone carries keeps its entries (and their place)
            before = old[1]
            delta = {et: m - before.get(et, 0) for et, m in groups.items()}
            for et, m in before.items():
                if et not in groups:
                    delta[et] = -m
            delta = {et: d for et, d in delta.items() if d}
            if delta:
                self._add(i, labels, delta, 1)

    def _add_new(self, changed: list) -> None:
        """The contributions of nodes that had none (every node on the first build), made per
        distinct PodTerms over all its carriers rather than pod by pod: the pods are grouped and
        counted by C-level maps, touching no node's labels; the entries and positions are met in
        the order the node-by-node walk meets them (node order, then pod order). How many of a
        node's pods carry each PodTerms is read back from `positions` if the node changes."""
        contribs = self.contribs
        pods: list = []
        at: list = []  # each pod's node position
        for i, ni in changed:
            held = ni.pods_with_affinity
            if held:
                pods += held
                at += repeat(i, len(held))
                contribs[i] = _IN_POSITIONS
            else:
                contribs[i] = None
        if not pods:
            return
        bulk = self._bulk_groups  # (see _groups_at) the positions added here are entered below
        if bulk is not None:
            for i, _ in changed:
                bulk.pop(i, None)
        # the PodTerms of each pod: its group's (namespace and affinity objects, by identity),
        # asked of pod_terms once per group, for the group's first pod
        keys = list(zip(map(_NAMESPACE, pods), map(id, map(_POD_AFFINITY, pods)), map(id, map(_POD_ANTI, pods))))
        first_of = dict(zip(reversed(keys), reversed(pods)))
        terms_of = {k: pod_terms(ep) for k, ep in first_of.items()}
        ets = list(map(terms_of.__getitem__, keys))
        # each PodTerms' carriers' positions, in node order (PodTerms in the order met)
        carriers: dict = {et: [] for et in ets}
        deque(map(list.append, map(carriers.__getitem__, ets), at), 0)
        entries = self.entries
        positions = self.positions
        nodes_at: dict | None = None
        for et, where in carriers.items():
            held = dict(Counter(where))
            if bulk is not None:
                for i, m in held.items():
                    g = bulk.get(i)
                    if g is None:
                        bulk[i] = {et: m}
                    else:
                        g[et] = m
            known = positions.get(et)
            if known is None:
                positions[et] = held
                self._new_entries(et)
                continue
            known.update(held)  # positions of nodes that had no contribution: new to it
            for key, _, tk in _flat_terms(et):
                counts = entries[key].counts
                if counts is not None:  # worked out already: kept up to date
                    if nodes_at is None:
                        nodes_at = dict(changed)
                    for i, m in held.items():
                        tv = nodes_at[i].node.labels.get(tk)
                        counts[tv] = counts.get(tv, 0) + m

    def _groups_at(self, i: int) -> dict:
        """How many of the pods the node at position i had when last read carry each PodTerms,
        for a position added in bulk (contribs _IN_POSITIONS). Every such position's groups are
        read off `positions` in one pass, the first time one is asked for (a pass per position
        costs as much each: a sweep's binds reach thousands of them); positions added in bulk
        later are entered by _add_new; dropped when positions are renumbered. A position's entry
        is read while it is _IN_POSITIONS only, during which `positions` holds what it had then.
        (The order of the groups is never relied on: they are only taken back.) The first few
        positions asked for are read one by one (a pass over the PodTerms each), as a sweep's
        node failure binds a few dozen pods: the one pass over every position pays only past
        about a hundred of them (a zone failure's thousands)."""
        bulk = self._bulk_groups
        if bulk is None and self._single_reads < _SINGLE_READS:
            self._single_reads += 1
            return {et: held[i] for et, held in self.positions.items() if i in held}
        if bulk is None:
            contribs = self.contribs
            bulk = self._bulk_groups = {}
            for et, held in self.positions.items():
                for j, m in held.items():
                    if contribs[j] is _IN_POSITIONS:
                        g = bulk.get(j)
                        if g is None:
                            bulk[j] = {et: m}
                        else:
                            g[et] = m
        return bulk.get(i, {})

    def _add(self, i: int, labels, groups: dict, sign: int) -> None:
        """Add (sign 1) or take back (-1) the contribution of the node at position i: its
        carriers' positions, and the counts of the entries that have theirs worked out. A
        PodTerms' entries exist while it has carriers."""
        entries = self.entries
        positions = self.positions
        for et, m in groups.items():
            at = positions.get(et)
            if at is None:
                at = positions[et] = {}
                self._new_entries(et)
            left = at.get(i, 0) + sign * m
            if left:
                at[i] = left
            else:
                del at[i]
                if not at:
                    del positions[et]
                    for key, _, _ in _flat_terms(et):
                        del entries[key]
                    self.by_namespace.clear()
                    continue
            for key, _, tk in _flat_terms(et):
                counts = entries[key].counts
                if counts is None:
                    continue
                tv = labels.get(tk)
                left = counts.get(tv, 0) + sign * m
                if left:
                    counts[tv] = left
                else:
                    del counts[tv]


_NO_LABELS: dict = {}
# positions whose groups _groups_at reads one by one before it reads them all in one pass
_SINGLE_READS = 96
_MATCHING_LIMIT = 20_000  # (namespace, labels) answers kept by entries_matching


def _may_match_in(namespace: str, t) -> bool:
    """Whether the term may match a pod of `namespace` (AffinityTerm.matches decides): it lists
    the namespace, selects every namespace, or has a namespaceSelector."""
    return namespace in t.namespaces or t.all_namespaces or not t.ns_selector.is_nothing


def _flat_terms(et) -> tuple:
    """A PodTerms' terms in the order the index meets them: per kind (REQUIRED_AFFINITY,
    PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY, REQUIRED_ANTI_AFFINITY), each as its entry key,
    the term and its topology key; worked out once per PodTerms."""
    flat = et.index_entries
    if flat is None:
        flat = et.index_entries = tuple(
            ((kind, id(t)), t, t.topology_key)
            for kind, lst in (
                (REQUIRED_AFFINITY, et.required_affinity),
                (PREFERRED_AFFINITY, et.preferred_affinity),
                (PREFERRED_ANTI_AFFINITY, et.preferred_anti_affinity),
                (REQUIRED_ANTI_AFFINITY, et.required_anti_affinity),
            )
            for t in lst
        )
    return flat


def existing_terms_for(snapshot) -> ExistingTermsIndex:
    """The snapshot's aggregate of existing pods' terms, brought up to date."""
    return _up_to_date(_TERM_INDEXES, ExistingTermsIndex, snapshot)


def _built_ahead(snapshot) -> ExistingTermsIndex:
    """existing_terms_for(snapshot), built ahead to be stored with the snapshot (snapshot.build_ahead):
    the first cycle after reading it back does not walk every pod with affinity. Its PodTerms'
    index_entries hold this process's ids of their terms: left to be worked out again."""
    idx = existing_terms_for(snapshot)
    for et in idx.positions:
        et.index_entries = None
    # every carrier's cache holds its PodTerms, stored with it: the bulk build asked pod_terms
    # for each group's first pod only (the others find it in pod_terms' memo, empty where read)
    terms_of: dict = {}
    for ni in snapshot.node_infos:
        for ep in ni.pods_with_affinity:
            k = (ep.namespace, id(ep.pod_affinity), id(ep.pod_anti_affinity))
            et = ep._cache.get(TERMS_CACHE_KEY)
            if et is None:
                ep._cache[TERMS_CACHE_KEY] = terms_of.get(k) or pod_terms(ep)
            else:
                terms_of.setdefault(k, et)
    return idx


build_ahead(_built_ahead)
