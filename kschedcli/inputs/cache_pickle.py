"""How the snapshot cache (snapshot_cache.py) pickles a parsed cluster and reads it back.

Pods and nodes are most of an entry (150,000 pods at 5,000 nodes). pickle's default for an
object with __slots__ stores a dict of slot names to values and sets them one attribute at a
time; here such an object is stored as the tuple of its slot values and restored by a function
that unpacks the tuple into every slot in one statement, which reads an entry back about a third
faster. The restoring functions are written from the classes' __slots__ when this module is
imported, so they follow any slot added or removed (the cache key holds ksched's code, so an
entry written by other code is never read).

An entry is read only once its MAC (snapshot_cache.py) shows this user's ksched wrote it; even so,
`loads` (and lazy_pods.PodStore, for the pods' records) unpickle with `Unpickler`, which resolves
only the globals ksched's own entries hold (`ALLOWED`): the model's classes, the restoring
functions below and a few containers of the standard library. Anything else (os.system,
builtins.eval, getattr, ...) is refused, and the entry is a miss.
"""

from __future__ import annotations

import copyreg
import importlib
import io
import marshal
import pickle
import zlib
from array import array
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..api.labels import LabelSelector, NodeSelector, NodeSelectorTerm, Requirement
from ..api.model import Container, Node, Pod, Taint, Toleration
from ..api.resources import Resource

_PROTOCOL = 5


def _restorer(cls: type) -> Any:
    """`restore(values)`: a new `cls` with its __slots__ set from `values`, in __slots__ order."""
    slots: tuple[str, ...] = getattr(cls, "__slots__")  # noqa: B009 - typed as tuple
    targets = "".join(f"obj.{name}, " for name in slots)
    source = f"def restore(values):\n    obj = new(cls)\n    {targets}= values\n    return obj\n"
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec(source, namespace)  # a fixed template over the class's own slot names
    restore = namespace["restore"]
    restore.__module__ = __name__
    restore.__qualname__ = restore.__name__ = f"restore_{cls.__name__.lower()}"
    return restore


restore_pod = _restorer(Pod)
restore_node = _restorer(Node)
# the model's other objects an entry holds thousands of (a node's requested amounts, the pods'
# shared containers, tolerations and selectors), restored the same way
restore_resource = _restorer(Resource)
restore_container = _restorer(Container)
restore_taint = _restorer(Taint)
restore_toleration = _restorer(Toleration)
restore_requirement = _restorer(Requirement)
restore_labelselector = _restorer(LabelSelector)
restore_nodeselector = _restorer(NodeSelector)
restore_nodeselectorterm = _restorer(NodeSelectorTerm)


def stored_pod(store: Any, i: int) -> Pod:
    """Pod `i` of `store` (lazy_pods.PodStore): how an entry refers to a pod the store holds."""
    return store.get(i)


def _reducer(cls: type, restore: Any) -> Any:
    slots: tuple[str, ...] = getattr(cls, "__slots__")  # noqa: B009 - typed as tuple

    def reduce(obj: Any) -> Any:
        try:
            values = tuple([getattr(obj, name) for name in slots])
        except AttributeError:  # a slot never set: pickle's own way keeps it unset
            return obj.__reduce_ex__(_PROTOCOL)
        return restore, (values,)

    return reduce


_DISPATCH: dict[Any, Any] = {
    **copyreg.dispatch_table,
    **{
        cls: _reducer(cls, restore)
        for cls, restore in (
            (Pod, restore_pod),
            (Node, restore_node),
            (Resource, restore_resource),
            (Container, restore_container),
            (Taint, restore_taint),
            (Toleration, restore_toleration),
            (Requirement, restore_requirement),
            (LabelSelector, restore_labelselector),
            (NodeSelector, restore_nodeselector),
            (NodeSelectorTerm, restore_nodeselectorterm),
        )
    },
}


class RawStore:
    """Bound pods' (or nodes') source objects, marshalled together (and compressed: a third of an entry
    otherwise, checksummed and copied on every read) and rebuilt when one of them is first read
    (model.Pod.raw): a cached explain reads none of them, and rebuilding them is most of what
    reading an entry costs. Marshalled as one list, objects the pods share stay shared.

    Read from a cache entry, `blob` is the entry's part holding them (cache.py: its MAC checked when
    one is first read, not before), whose `raws()` gives the list."""

    __slots__ = ("blob", "raws")

    def __init__(self, blob: Any):
        self.blob = blob
        self.raws: list | None = None

    @classmethod
    def of(cls, raws: list) -> RawStore:
        return cls(zlib.compress(marshal.dumps(raws), 1))

    def get(self, i: int) -> dict:
        return self.all()[i]

    def all(self) -> list:
        """Every source object, in order."""
        raws = self.raws
        if raws is None:
            blob = self.blob
            raws = self.raws = marshal.loads(zlib.decompress(blob)) if type(blob) is bytes else blob.raws()
            self.blob = b""
        return raws

    def blob_bytes(self) -> bytes:
        """The compressed marshal of the source objects (what an entry stores)."""
        raws = self.raws
        if raws is None:
            blob = self.blob
            if type(blob) is bytes:
                return blob
            raws = self.raws = blob.raws()
            self.blob = b""
        return RawStore.of(raws).blob

    def __reduce__(self) -> Any:
        return RawStore, (self.blob_bytes(),)


class RawList:
    """A list of source objects kept marshalled (a RawStore) until first read: the files' pending
    pods (Cluster.pending, each (object, file, location)), which only `explain NAMESPACE/NAME`
    reads; a cache entry holds them in a part of their own, checked when first read. Iterates,
    indexes and compares as the list."""

    __slots__ = ("store", "_items")

    def __init__(self, store: RawStore):
        self.store = store
        self._items: list | None = None

    @classmethod
    def of(cls, items: list) -> RawList | list:
        """`items` kept marshalled; `items` itself when marshal cannot write them."""
        try:
            return cls(RawStore.of(items))
        except ValueError:
            return items

    def items(self) -> list:
        found = self._items
        if found is None:
            found = self._items = self.store.all()
        return found

    def __iter__(self) -> Any:
        return iter(self.items())

    def __len__(self) -> int:
        return len(self.items())

    def __getitem__(self, i: Any) -> Any:
        return self.items()[i]

    def __eq__(self, other: object) -> bool:
        return self.items() == (other.items() if type(other) is RawList else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RawList({self.items()!r})"

    def __reduce__(self) -> Any:
        return RawList, (self.store,)


def defer_raws(objs: Sequence[Pod | Node]) -> None:
    """Keep the pods' or nodes' source objects in one RawStore (each one's `raw` read from it on
    first use). Left as they are when one cannot be marshalled."""
    raws = [o.raw for o in objs]
    try:
        store = RawStore.of(raws)
    except ValueError:  # an object marshal does not write (the loader makes none)
        return
    for i, o in enumerate(objs):
        o._raw = (store, i)


def entry_part(i: int, what: str) -> Any:
    """Stands, in an entry's first part, for its part `i` (cache.py): the unpickler reading an entry
    resolves this name to its own `part` method, which gives the part's handle (or, for the pods'
    records, its bytes, their MAC checked). Never called: outside an entry it is an error."""
    raise pickle.UnpicklingError(f"part {i} ({what}) of a cache entry read outside it")


class _PartRef:
    """A part of the entry being written (`what` it holds), in the first part's pickle."""

    __slots__ = ("i", "what")

    def __init__(self, i: int, what: str):
        self.i = i
        self.what = what


class KindParts:
    """A kind of Cluster.objects in a cache entry: its objects of each namespace in a part of their
    own (`names`: the namespaces; `parts`: the parts' handles, cache.py), each checked and
    unpickled when first read; `order`: the namespace of each object (a position in
    `names`), in the kind's order."""

    __slots__ = ("spaces", "names", "parts", "order", "chunks")

    def __init__(self, names: tuple, parts: tuple, order: Any):
        self.spaces = names
        self.names = {ns: j for j, ns in enumerate(names)}
        self.parts = parts
        self.order = order
        self.chunks: dict[int, dict] = {}

    def chunk(self, namespace: str) -> dict:
        """The objects of `namespace` ({(namespace, name): object}; {} when none)."""
        j = self.names.get(namespace)
        return {} if j is None else self._chunk(j)

    def _chunk(self, j: int) -> dict:
        found = self.chunks.get(j)
        if found is None:
            found = self.chunks[j] = self.parts[j].load(self.spaces[j])
        return found

    def whole(self) -> dict:
        """Every object of the kind, in its order."""
        its = [iter(self._chunk(j).items()) for j in range(len(self.parts))]
        return dict(next(its[j]) for j in self.order)


class _KindOut:
    """A kind of Cluster.objects being written: KindParts(*args) in the entry."""

    __slots__ = ("args",)

    def __init__(self, args: tuple):
        self.args = args


class LazyKinds(defaultdict):
    """Cluster.objects read from a cache entry: kind -> {(namespace, name): object}, each kind
    (KindParts) made when first read; `lookup` reads one object, making its namespace's objects
    of that kind only. An explain reads a few objects (those its plugins look up), not the
    CSINodes of every node nor every ReplicaSet of the cluster."""

    def _made(self, kind: str, v: Any) -> Any:
        if type(v) is KindParts:
            v = v.whole()
            dict.__setitem__(self, kind, v)
        return v

    def lookup(self, kind: str, namespace: str, name: str) -> Any:
        """self[kind].get((namespace, name)), the kind not made whole for it."""
        v = dict.get(self, kind)
        if v is None:
            return None
        if type(v) is KindParts:
            return v.chunk(namespace).get((namespace, name))
        return v.get((namespace, name))

    def table(self, kind: str, namespace: str) -> Any:
        """A mapping holding every object of `kind` in `namespace` under (namespace, name) (and
        perhaps others'), for many lookups: lookup's, its namespace's objects made only."""
        v = dict.get(self, kind)
        if v is None:
            return {}
        if type(v) is KindParts:
            return v.chunk(namespace)
        return v

    def __getitem__(self, kind: str) -> Any:
        v = dict.get(self, kind, _MISSING)
        if v is _MISSING:
            return defaultdict.__getitem__(self, kind)  # a new {} (defaultdict(dict))
        return self._made(kind, v)

    def get(self, kind: str, default: Any = None) -> Any:
        v = dict.get(self, kind, _MISSING)
        return default if v is _MISSING else self._made(kind, v)

    def setdefault(self, kind: str, default: Any = None) -> Any:
        v = dict.get(self, kind, _MISSING)
        if v is _MISSING:
            dict.__setitem__(self, kind, default)
            return default
        return self._made(kind, v)

    def pop(self, kind: str, *default: Any) -> Any:
        v = dict.pop(self, kind, *default)
        return v.whole() if type(v) is KindParts else v

    def values(self) -> Any:
        return [self[k] for k in self]

    def items(self) -> Any:
        return [(k, self[k]) for k in self]

    def __repr__(self) -> str:
        return f"LazyKinds({dict(self.items())!r})"

    def __eq__(self, other: object) -> bool:
        return dict(self.items()) == other

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> Any:
        return defaultdict, (dict,), None, None, iter(self.items())


_MISSING = object()


class _Pickler(pickle.Pickler):
    """Pods and nodes as tuples of their slots; a pod of `store` (lazy_pods.PodStore) as a
    reference to it, so that it stays one object (made from the store when this is read).
    With `parts` (a list, cache.py's entry parts): the pods' records, the source objects
    (RawStore) and each kind of `kinds` (Cluster.objects) written to a part of their own, appended
    to `parts` as (bytes, checked up front?), and referred to by position (entry_part)."""

    def __init__(self, file: io.BytesIO, store: Any, parts: list | None = None, kinds: Any = None):
        super().__init__(file, protocol=_PROTOCOL)
        self.dispatch_table = _DISPATCH
        self.stored = {} if store is None else {id(p): i for i, p in enumerate(store.made) if p is not None}
        self.store = store
        self.parts = parts
        self.kinds = kinds
        self.pending: Any = None  # the RawStore of the cluster's pending pods (RawList), when it has one

    def _part(self, data: Any, eager: bool, what: str) -> _PartRef:
        assert self.parts is not None
        self.parts.append((data, eager))
        return _PartRef(len(self.parts) - 1, what)

    def _records(self, pieces: list) -> _PartRef:
        """The pods' records, a part per namespace (checked when first read), as one reference."""
        assert self.parts is not None
        first = len(self.parts)
        self.parts.extend((piece, False) for piece in pieces)
        return _PartRef(first, f"records:{len(pieces)}")

    def _kind(self, kind: str, objs: dict) -> Any:
        """A kind of Cluster.objects as KindParts: a part per namespace."""
        chunks: dict[str, dict] = {}
        at: dict[str, int] = {}
        order = array("I")
        for k, o in objs.items():
            ns = k[0] if type(k) is tuple and k and type(k[0]) is str else ""
            chunk = chunks.get(ns)
            if chunk is None:
                chunk = chunks[ns] = {}
                at[ns] = len(at)
            chunk[k] = o
            order.append(at[ns])
        refs = []
        for chunk in chunks.values():
            out = io.BytesIO()
            pickle.Pickler(out, protocol=_PROTOCOL).dump(chunk)
            refs.append(self._part(out.getvalue(), False, f"kind:{kind}"))
        return _KindOut((tuple(chunks), tuple(refs), order))

    def reducer_override(self, obj: Any) -> Any:
        t = type(obj)
        if t is Pod:
            i = self.stored.get(id(obj))
            if i is not None:
                return stored_pod, (self.store, i)
        elif self.parts is None:
            return NotImplemented
        elif t is _PartRef:
            return entry_part, (obj.i, obj.what)
        elif t is _KindOut:
            return KindParts, obj.args
        elif t is RawStore:
            if self.store is not None and obj is self.store.raws:
                what = "raws:pods"
            elif obj is self.pending:
                what = "raws:pending"
            else:
                what = "raws:nodes"
            # checked when first read (none is, by an explain): a damaged part is read from the files
            return RawStore, (self._part(obj.blob_bytes(), False, what),)
        elif obj is self.kinds and self.kinds is not None:
            return LazyKinds, (dict,), None, None, iter([(kind, self._kind(kind, objs)) for kind, objs in obj.items()])
        elif self.store is not None and obj is self.store:
            return obj.__reduce_parts__(self._records)
        return NotImplemented


def dumps_parts(obj: Any) -> list[tuple[Any, bool]]:
    """dumps(obj) as a cache entry's parts, each (bytes, its MAC checked before anything is read?):
    the first, checked first, the two pickles of dumps with the large parts left out and referred to
    (entry_part): the pods' records (checked up front: every command reads some), the pods' and
    nodes' source objects (checked when first read), each kind of Cluster.objects (checked up
    front, unpickled when first read)."""
    out = io.BytesIO()
    store = getattr(obj, "_pod_store", None)
    kinds = getattr(obj, "objects", None)
    parts: list[tuple[Any, bool]] = [(b"", True)]
    pickler = _Pickler(out, store, parts, kinds if isinstance(kinds, defaultdict) else None)
    pending = getattr(obj, "pending", None)
    pickler.pending = pending.store if type(pending) is RawList else None
    pickler.dump(store)
    pickler.dump(obj)
    parts[0] = (out.getvalue(), True)
    return parts


def dumps(obj: Any) -> bytes:
    """Two pickles written with one memo: the PodStore of `obj._pod_store` (or None), then `obj`,
    its pods and nodes as tuples of their slots. What the store holds is stored once, and read
    back as the same objects (loads reads both with one memo)."""
    out = io.BytesIO()
    store = getattr(obj, "_pod_store", None)
    pickler = _Pickler(out, store)
    pickler.dump(store)
    pickler.dump(obj)
    return out.getvalue()


class _Reader:
    """A file over a buffer (the mapped entry): the unpickler's reads are slices of it, not copies."""

    __slots__ = ("view", "at")

    def __init__(self, view: memoryview):
        self.view = view
        self.at = 0

    def read(self, n: int = -1) -> memoryview:
        start = self.at
        end = len(self.view) if n < 0 else min(len(self.view), start + n)
        self.at = end
        return self.view[start:end]

    def readinto(self, buf: Any) -> int:
        chunk = self.read(len(buf))
        buf[: len(chunk)] = chunk
        return len(chunk)

    def seek(self, at: int) -> None:
        self.at = at

    def readline(self) -> memoryview:
        start = self.at
        end = bytes(self.view[start : start + 4096]).find(b"\n")
        self.at = len(self.view) if end < 0 else start + end + 1
        return self.view[start : self.at]


# Every global an entry of ksched refers to, as (module, name): found by unpickling the entries of
# every fixture and recorded conformance case and of genbig.py's snapshots, with their pods' records
# and source objects read (tests/inputs/test_snapshot_pickle.py checks that they still need no other), and
# the containers of the standard library pickle writes by name. Classes and functions of ksched's
# model only: nothing that reads a file, runs a program or evaluates anything.
ALLOWED = frozenset(
    [
        ("builtins", "dict"),
        ("builtins", "list"),
        ("builtins", "tuple"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "range"),
        ("builtins", "bytearray"),
        ("builtins", "complex"),
        ("collections", "Counter"),
        ("collections", "defaultdict"),
        ("collections", "OrderedDict"),
        ("array", "array"),
        ("array", "_array_reconstructor"),
        ("kschedcli.inputs.cluster", "Cluster"),
        ("kschedcli.api.labels", "LabelSelector"),
        ("kschedcli.api.labels", "NodeSelector"),
        ("kschedcli.api.labels", "NodeSelectorTerm"),
        ("kschedcli.api.labels", "Requirement"),
        ("kschedcli.inputs.lazy_pods", "LazyNodeInfo"),
        ("kschedcli.inputs.lazy_pods", "PodGroups"),
        ("kschedcli.inputs.lazy_pods", "PodStore"),
        ("kschedcli.inputs.lazy_pods", "_restore_lazy_node_info"),
        ("kschedcli.inputs.lazy_pods", "ImageStates"),
        ("kschedcli.api.model", "Container"),
        ("kschedcli.api.model", "Node"),
        ("kschedcli.api.model", "Pod"),
        ("kschedcli.api.model", "Taint"),
        ("kschedcli.api.model", "Toleration"),
        ("kschedcli.plugins.interpodaffinity.index", "ExistingTermsIndex"),
        ("kschedcli.plugins.interpodaffinity.index", "TermEntry"),
        ("kschedcli.plugins.interpodaffinity.index", "_IN_POSITIONS"),
        ("kschedcli.plugins.interpodaffinity.terms", "AffinityTerm"),
        ("kschedcli.plugins.interpodaffinity.terms", "PodTerms"),
        ("kschedcli.api.resources", "Resource"),
        ("kschedcli.backend.snapshot", "NodeInfo"),
        ("kschedcli.backend.snapshot", "PrebuiltSnapshot"),
        ("kschedcli.backend.snapshot", "Snapshot"),
        ("kschedcli.inputs.cache_pickle", "RawStore"),
        ("kschedcli.inputs.cache_pickle", "RawList"),
        ("kschedcli.inputs.cache_pickle", "restore_node"),
        ("kschedcli.inputs.cache_pickle", "restore_pod"),
        ("kschedcli.inputs.cache_pickle", "restore_resource"),
        ("kschedcli.inputs.cache_pickle", "restore_container"),
        ("kschedcli.inputs.cache_pickle", "restore_taint"),
        ("kschedcli.inputs.cache_pickle", "restore_toleration"),
        ("kschedcli.inputs.cache_pickle", "restore_requirement"),
        ("kschedcli.inputs.cache_pickle", "restore_labelselector"),
        ("kschedcli.inputs.cache_pickle", "restore_nodeselector"),
        ("kschedcli.inputs.cache_pickle", "restore_nodeselectorterm"),
        ("kschedcli.inputs.cache_pickle", "stored_pod"),
        ("kschedcli.inputs.cache_pickle", "entry_part"),
        ("kschedcli.inputs.cache_pickle", "LazyKinds"),
        ("kschedcli.inputs.cache_pickle", "KindParts"),
        ("kschedcli.config.versions", "Choice"),
        ("kschedcli.config.versions", "Release"),
    ]
)
_FOUND: dict[tuple[str, str], Any] = {}
_ENTRY_PART = ("kschedcli.inputs.cache_pickle", "entry_part")


class Unpickler(pickle.Unpickler):
    """pickle's Unpickler resolving the globals of ALLOWED only: any other is an UnpicklingError.
    `part(i, what)`, when set (cache.py, reading an entry's first part), is what entry_part names."""

    part: Any = None

    def find_class(self, module: str, name: str) -> Any:
        where = (module, name)
        if where == _ENTRY_PART and self.part is not None:
            return self.part
        found = _FOUND.get(where)
        if found is None:
            if where not in ALLOWED:
                raise pickle.UnpicklingError(f"global {module}.{name} is not one a ksched cache entry holds")
            found = _FOUND[where] = getattr(importlib.import_module(module), name)
        return found


def loads_parts(data: memoryview, part: Any) -> Any:
    """What dumps_parts wrote, from its first part `data`; `part(i, what)` gives the others."""
    unpickler = Unpickler(_Reader(data))  # type: ignore[arg-type]  # reads return slices
    unpickler.part = part
    try:
        unpickler.load()
        return unpickler.load()
    finally:
        del unpickler


def loads(data: bytes | memoryview) -> Any:
    """What dumps wrote (globals of ALLOWED only)."""
    with memoryview(data) as view:
        unpickler = Unpickler(_Reader(view))  # type: ignore[arg-type]  # reads return slices
        try:
            unpickler.load()  # the store: the second pickle refers to it
            return unpickler.load()
        finally:
            del unpickler  # it holds its last read, a slice of `data`: let go of it here
