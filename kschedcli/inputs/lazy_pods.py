"""Bound pods read from the snapshot cache only when something reads them.

A cached entry at 5,000 nodes holds 150,000 bound pods; an `explain` reads a few thousand of them
(its namespace's, the holders of terms it matches), yet creating them all was half of reading the
entry. Here each pod is kept as its own small pickle (a PodStore record) and made when first
asked for, once: every list that holds it (the cluster's pods, its node's, its namespace's) gets
the same object. Those lists are made on first use:

- `Cluster.pods` (cluster.py) from `PodStore.all()`;
- a node's `pods`, `pods_with_affinity` and `pods_with_required_anti_affinity`: the NodeInfo is a
  LazyNodeInfo until all three are made, then a plain NodeInfo again;
- the snapshot's pods by namespace (PodGroups), namespace by namespace.

A pod's parts shared with other pods (a template's containers, requests, tolerations; its node's
name) are kept once, in `PodStore.shared`, and referenced from the records, so that pods made
from the store share them as the pods the entry was written from did. A pod's cache is stored
with it: it holds what the indexes built ahead with the snapshot (snapshot.build_ahead) keep
there, the same objects the stored indexes refer to (InterPodAffinity's PodTerms).
"""

from __future__ import annotations

import io
import pickle
from array import array
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Any

from ..api.model import Pod
from ..backend.snapshot import NodeInfo
from ..loader import freeze_lasting, no_gc
from .cache_pickle import _DISPATCH, Unpickler  # the records come from a cache entry: its globals only

# the slots a record holds, in order; `_raw` is the store's (raws, index), `_key` made when asked for
_RECORD_SLOTS = tuple(s for s in Pod.__slots__ if s not in ("_raw", "_key"))
_ATOMS = (type(None), bool, int, float)
_FREEZE_AFTER = 2000  # pods made at once (cluster.load_cluster freezes a snapshot of more than 2,000 pods)


def _maker() -> Any:
    """`make(values, raw)`: a Pod with the record's slots set from `values` in one statement."""
    targets = "".join(f"obj.{name}, " for name in _RECORD_SLOTS)
    source = (
        "def make(values, raw):\n"
        "    obj = new(cls)\n"
        "    obj._raw = raw\n"
        "    obj._key = None\n"
        f"    {targets}= values\n"
        "    return obj\n"
    )
    namespace: dict[str, Any] = {"new": object.__new__, "cls": Pod}
    exec(source, namespace)  # a fixed template over the class's own slot names
    return namespace["make"]


_make_pod = _maker()


class PodStore:
    """The bound pods of a cached cluster, one pickled record each (in `blob` at `offsets`), a Pod
    made from its record when first asked for. Positions are the store's order, which groups the
    pods by namespace (`chunks`: where each namespace's start, in the writer); `order` gives the
    cluster's order (Cluster.pods) as positions.

    Read from a cache entry, `blob` is the entry's records (cache._Records): a namespace's records
    have a part of their own, its MAC checked when a pod of it is first made (an explain makes
    those of its pod's namespace, a hundredth of them at 5,000 nodes)."""

    __slots__ = ("blob", "offsets", "shared", "raws", "order", "followers", "made", "chunks")

    def __init__(self, blob: Any, offsets: array, shared: list, raws: Any, order: array, followers: array):
        self.blob = blob
        self.offsets = offsets
        self.shared = shared  # values records share, by index (a record's persistent ids)
        self.raws = raws  # snapshot_pickle.RawStore of the pods' source objects, in store order; or None
        self.order = order
        # positions of the pods Cluster.follow may change (pod-level requests, claims, host ports)
        self.followers = followers
        self.made: list[Pod | None] = [None] * (len(offsets) - 1)
        self.chunks: Sequence[int] = (0,)

    def __len__(self) -> int:
        return len(self.made)

    def __reduce__(self) -> Any:
        blob = self.blob if type(self.blob) is bytes else self.blob.whole()
        return PodStore, (blob, self.offsets, self.shared, self.raws, self.order, self.followers)

    def __reduce_parts__(self, part: Any) -> Any:
        """__reduce__ in a cache entry (cache_pickle._Pickler): each namespace's records in a part of
        their own (`part(pieces)`: their reference), read back as views of the mapped entry, never
        copied, each namespace's MAC checked when one of its pods is first made."""
        blob = self.blob if type(self.blob) is bytes else self.blob.whole()
        offsets = self.offsets
        cuts = [offsets[c] for c in self.chunks if 0 < c < len(self.made)]
        bounds = [0, *cuts, len(blob)]
        ref = part([memoryview(blob)[a:b] for a, b in zip(bounds, bounds[1:])])
        return PodStore, (ref, offsets, self.shared, self.raws, self.order, self.followers)

    def get(self, i: int) -> Pod:
        pod = self.made[i]
        if pod is None:
            pod = self.take((i,))[0]
        return pod

    def take(self, positions: Iterable[int]) -> list[Pod]:
        """The pods at `positions`, in that order, made where not made yet. The cyclic collector
        is paused meanwhile, and what many pods allocated is kept out of its later passes (as
        loading a snapshot does, cluster.load_cluster): they live as long as the process."""
        made, offsets, raws = self.made, self.offsets, self.raws
        load = self.shared.__getitem__
        blob = self.blob
        # a cache entry's records: a view of the mapped entry, each namespace's MAC checked before
        # a record of it is read (cache._Records.check), then the record's bytes copied (a few
        # hundred: read from a BytesIO, in C, rather than through a reader written in Python)
        check = None
        view: Any = None
        if type(blob) is bytes:
            f: Any = io.BytesIO(blob)
        else:
            view = blob.view
            check = blob.check
        out = []
        n = 0
        with no_gc():
            for i in positions:
                pod = made[i]
                if pod is None:
                    at = offsets[i]
                    if check is not None:
                        check(at)
                        f = io.BytesIO(view[at : offsets[i + 1]])
                    else:
                        f.seek(at)
                    reader = Unpickler(f)
                    reader.persistent_load = load  # type: ignore[method-assign]
                    pod = made[i] = _make_pod(reader.load(), None if raws is None else (raws, i))
                    n += 1
                out.append(pod)
            if n > _FREEZE_AFTER:
                freeze_lasting()
        return out

    def all(self) -> list[Pod]:
        """Every pod, in the cluster's order."""
        if None in self.made:
            self.take(range(len(self.made)))
        made = self.made
        return [made[i] for i in self.order]

    def follower_pods(self) -> list[Pod]:
        return self.take(self.followers)

    @classmethod
    def of(cls, pods: Sequence[Pod], order: Sequence[int], raws: Any) -> PodStore:
        """The store of `pods` (in store order); `order`: the cluster's order as positions; `raws`:
        the RawStore their `_raw` points into (a pod's own source object when None)."""
        counts: dict[int, int] = {}
        for p in pods:
            # a pod's own values, and those its cache holds (what indexes built ahead refer to)
            for v in [*[getattr(p, name) for name in _RECORD_SLOTS], *p._cache.values()]:
                if type(v) not in _ATOMS:
                    counts[id(v)] = counts.get(id(v), 0) + 1
        shared: list = []
        index: dict[int, int] = {}

        def persistent_id(obj: Any) -> int | None:
            i = id(obj)
            if counts.get(i, 0) < 2:
                return None
            k = index.get(i)
            if k is None:
                k = index[i] = len(shared)
                shared.append(obj)
            return k

        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=5)
        pickler.dispatch_table = _DISPATCH  # the model's objects as tuples of their slots
        pickler.persistent_id = persistent_id  # type: ignore[method-assign]
        offsets = array("q")
        followers = array("q")
        for i, p in enumerate(pods):
            offsets.append(out.tell())
            pickler.dump(tuple([getattr(p, name) for name in _RECORD_SLOTS]))
            pickler.clear_memo()
            if p.pod_level_requests or p.resource_claims or p.host_ports:
                followers.append(i)
        offsets.append(out.tell())
        store = cls(out.getvalue(), offsets, shared, raws, array("q", order), followers)
        store.made = list(pods)  # the writer's own pods stand for themselves
        return store


class LazyNodeInfo(NodeInfo):
    """A NodeInfo whose pod lists are made when one is first read (or set), each from the (store,
    positions) or (store, start, stop) its slot holds; a plain NodeInfo again from then on."""

    __slots__ = ()

    @property
    def pods(self) -> list[Pod]:
        return _made(self, _PODS)

    @pods.setter
    def pods(self, value: list[Pod]) -> None:
        _set(self, _PODS, value)

    @property
    def pods_with_affinity(self) -> list[Pod]:
        return _made(self, _AFFINITY)

    @pods_with_affinity.setter
    def pods_with_affinity(self, value: list[Pod]) -> None:
        _set(self, _AFFINITY, value)

    @property
    def pods_with_required_anti_affinity(self) -> list[Pod]:
        return _made(self, _ANTI)

    @pods_with_required_anti_affinity.setter
    def pods_with_required_anti_affinity(self, value: list[Pod]) -> None:
        _set(self, _ANTI, value)

    def pod_count(self) -> int:
        v = _PODS.__get__(self)
        return len(_at(v)) if type(v) is tuple else len(v)

    @property
    def image_states(self) -> dict[str, tuple[int, int]]:
        v = _IMAGE_STATES.__get__(self)
        if type(v) is ImageStates:
            v = v.of(self.node)
            _IMAGE_STATES.__set__(self, v)
        return v

    @image_states.setter
    def image_states(self, value: dict[str, tuple[int, int]]) -> None:
        _IMAGE_STATES.__set__(self, value)

    def __reduce__(self) -> Any:
        return _restore_lazy_node_info, (tuple(d.__get__(self) for d in _SLOTS),)


# NodeInfo's own slot descriptors (LazyNodeInfo's properties hide them by name)
_SLOTS = tuple(NodeInfo.__dict__[name] for name in NodeInfo.__slots__)
_PODS, _AFFINITY, _ANTI = (
    NodeInfo.__dict__[n] for n in ("pods", "pods_with_affinity", "pods_with_required_anti_affinity")
)
_LISTS = (_PODS, _AFFINITY, _ANTI)
_IMAGE_STATES = NodeInfo.__dict__["image_states"]


class ImageStates:
    """The image states of a cached snapshot's nodes (snapshot.py: normalized image name -> (size,
    how many nodes list it), one pair per name, shared by every node listing it), held once for
    the snapshot in place of a map per node: a LazyNodeInfo's map is made from its node's images
    when first read. At 5,000 nodes, 173,000 entries an explain never reads (ImageLocality reads
    the snapshot's image columns: Snapshot.image_column, from `_image_state_of` and `_holders`)."""

    __slots__ = ("state_of",)

    def __init__(self, state_of: dict[str, tuple[int, int]]):
        self.state_of = state_of

    def of(self, node: Any) -> dict[str, tuple[int, int]]:
        """The image states of `node` (as Snapshot._image_states makes them)."""
        state_of = self.state_of
        return {name: state_of[name] for names, _ in node.images for name in names}

    def __reduce__(self) -> Any:
        return ImageStates, (self.state_of,)


def defer_image_states(snap: Any) -> bool:
    """Hold the image states of `snap`'s nodes (LazyNodeInfos) once (ImageStates), with the image
    columns' index (the snapshot's `_holders`, and `_image_state_of`: the one pair of each name).
    Done only when every node's map is exactly what its images give, in the same order, with
    the pair each name has on every node; else nothing changes (False)."""
    state_of: dict[str, tuple[int, int]] = {}
    nis = snap.node_infos
    for ni in nis:
        states = _IMAGE_STATES.__get__(ni)
        if type(ni) is not LazyNodeInfo or type(states) is not dict:
            return False
        for name, state in states.items():
            if state_of.setdefault(name, state) is not state:
                return False
    held = ImageStates(state_of)
    for ni in nis:
        states = _IMAGE_STATES.__get__(ni)
        made = held.of(ni.node)
        if made != states or list(made) != list(states):
            return False
    for ni in nis:
        _IMAGE_STATES.__set__(ni, held)
    # positions as arrays: read back five times faster than lists (346,000 of them at 5,000 nodes)
    code = "H" if len(nis) <= 0xFFFF else "I"
    snap.__dict__["_holders"] = {name: array(code, at) for name, at in snap._image_holders().items()}
    snap.__dict__["_image_state_of"] = state_of
    return True


def _node_info_maker() -> Any:
    """`make(values)`: a NodeInfo with its slots set from `values` in one statement (a NodeInfo's
    attributes are its slots: LazyNodeInfo's properties would make the pods)."""
    targets = "".join(f"obj.{name}, " for name in NodeInfo.__slots__)
    source = f"def make(values):\n    obj = new(cls)\n    {targets}= values\n    return obj\n"
    namespace: dict[str, Any] = {"new": object.__new__, "cls": NodeInfo}
    exec(source, namespace)  # a fixed template over the class's own slot names
    return namespace["make"]


_make_node_info = _node_info_maker()


def _restore_lazy_node_info(values: tuple) -> LazyNodeInfo:
    ni = _make_node_info(values)
    ni.__class__ = LazyNodeInfo  # the same slots: its lists are (store, positions)
    return ni


def _made(ni: NodeInfo, slot: Any) -> list[Pod]:
    """The list in `slot`, the node's three lists made first (the others are subsets of its pods,
    made with them): a plain NodeInfo from then on, whose slots are read without a property."""
    for d in _LISTS:
        v = d.__get__(ni)
        if type(v) is tuple:
            d.__set__(ni, v[0].take(_at(v)))
    states = _IMAGE_STATES.__get__(ni)
    if type(states) is ImageStates:
        _IMAGE_STATES.__set__(ni, states.of(ni.node))
    ni.__class__ = NodeInfo
    return slot.__get__(ni)


def _set(ni: NodeInfo, slot: Any, value: list[Pod]) -> None:
    _made(ni, slot)
    slot.__set__(ni, value)


def lazy_node_info(ni: NodeInfo, store: PodStore, position: dict[int, int], empty: tuple | None = None) -> LazyNodeInfo:
    """`ni` (in the writer) as a LazyNodeInfo whose lists are its pods' positions in `store`;
    `empty`, (store, ()), held for every empty list (most nodes' pods with affinity: one object
    in the entry, not one per node)."""
    for slot in _LISTS:
        at = _positions(slot.__get__(ni), position)
        if not at and empty is not None:
            slot.__set__(ni, empty)
        elif type(at) is range:  # (store, start, stop): three numbers in the entry, no range to rebuild
            slot.__set__(ni, (store, at.start, at.stop))
        else:
            slot.__set__(ni, (store, at))
    ni.__class__ = LazyNodeInfo
    return ni  # type: ignore[return-value]


def _at(v: tuple) -> Sequence[int]:
    """The positions a LazyNodeInfo's list slot holds: (store, positions) or (store, start, stop)."""
    return range(v[1], v[2]) if len(v) == 3 else v[1]


def _positions(pods: Iterable[Pod], position: dict[int, int]) -> Sequence[int]:
    at = [position[id(p)] for p in pods]
    if at and at == list(range(at[0], at[0] + len(at))):
        return range(at[0], at[0] + len(at))  # a node's pods, grouped together by the store
    return tuple(at)


class PodGroups(dict):
    """The snapshot's pods by namespace, each namespace's list made from the store when first
    read (the values are lists, or the (store, positions) they are made from)."""

    def _made(self, key: str, v: Any) -> Any:
        if type(v) is tuple:
            v = v[0].take(v[1])
            dict.__setitem__(self, key, v)
        return v

    def get(self, key: str, default: Any = None) -> Any:
        v = dict.get(self, key, _MISSING)
        return default if v is _MISSING else self._made(key, v)

    def __getitem__(self, key: str) -> Any:
        return self._made(key, dict.__getitem__(self, key))

    def setdefault(self, key: str, default: Any = None) -> Any:
        v = dict.get(self, key, _MISSING)
        if v is _MISSING:
            dict.__setitem__(self, key, default)
            return default
        return self._made(key, v)

    def values(self) -> Any:
        return [self[k] for k in self]

    def items(self) -> Any:
        return [(k, self[k]) for k in self]

    def __reduce__(self) -> Any:
        return PodGroups, (dict(dict.items(self)),)

    @classmethod
    def of(cls, by_namespace: dict[str, list[Pod]], store: PodStore, position: dict[int, int]) -> PodGroups:
        return cls({ns: (store, _positions(pods, position)) for ns, pods in by_namespace.items()})


_MISSING = object()


def store_pods(prebuilt: Any, pods: Sequence[Pod]) -> PodStore | None:
    """Keep `pods` (the cluster's bound pods, which `prebuilt`, a snapshot.PrebuiltSnapshot, was
    built from) in a PodStore, in the order of the snapshot's nodes, and the snapshot's pod lists
    as positions in it; their source objects go to one RawStore (snapshot_pickle.defer_raws). The
    snapshot's free columns are worked out first (every node's pod count). None, nothing changed,
    when the pods are not exactly the snapshot's, or their source objects cannot be deferred."""
    from .cache_pickle import defer_raws

    snap = prebuilt.snapshot
    # by namespace (a command reads its pod's namespace's pods), each in the cluster's order
    groups: dict[str, list[Pod]] = {}
    for p in pods:
        groups.setdefault(p.namespace, []).append(p)
    in_order = [p for group in groups.values() for p in group]
    chunks = list(accumulate([len(group) for group in groups.values()], initial=0))[:-1]
    position = {id(p): i for i, p in enumerate(in_order)}
    placed = [p for ni in snap.node_infos for p in ni.pods]
    placed.extend(snap.unplaced_pods)
    if len(placed) != len(pods) or len(position) != len(pods) or not all(id(p) in position for p in placed):
        return None
    defer_raws(in_order)
    if not all(type(p._raw) is tuple for p in in_order):
        return None
    raws = in_order[0]._raw[0] if in_order else None
    snap.free_columns()
    store = PodStore.of(in_order, [position[id(p)] for p in pods], raws)
    store.chunks = chunks
    empty = (store, ())
    for ni in snap.node_infos:
        lazy_node_info(ni, store, position, empty)
    snap._pods_by_namespace = PodGroups.of(snap._pods_by_namespace, store, position)
    snap.unplaced_pods = (store, _positions(snap.unplaced_pods, position))
    defer_image_states(snap)
    prebuilt.pods = ()
    prebuilt.store = store
    return store
