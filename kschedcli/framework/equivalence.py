"""Equivalence classes: node-local plugin results shared between cycles.

Several in-tree plugins decide a node from the pod's own fields and the node alone. Two pods
that agree on those fields get the same verdict on a node, and the verdict stays valid while
the node does not change: forever for what depends only on the Node object (labels, taints,
images), and while `NodeInfo.generation` is unchanged for what depends on the pods on it
(requested resources, used host ports). In a sequence each bind changes one node, so the other
nodes' results are reused by the next pod of the same workload (the seeds' equivalence-class
cache). Each plugin has its own class key, built only from the pod fields that plugin reads.

Only the plugins listed here are cached; any other plugin, and every plugin of a profile whose
registry replaced the in-tree implementation, runs on every node as usual.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import Any

from ..api.model import scoring_requests

STATIC = "static"  # depends on the Node object only
BY_GENERATION = "gen"  # depends on the pods on the node


def _dump(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str, separators=(",", ":"))


def _spec(pod) -> dict:
    raw = pod.raw if isinstance(pod.raw, dict) else {}
    spec = raw.get("spec")
    return spec if isinstance(spec, dict) else {}


def sig_tolerations(pod) -> tuple:
    return tuple((t.key, t.operator, t.value, t.effect, repr(t.seconds)) for t in pod.tolerations)


def sig_node_name(pod) -> Any:
    return _dump(_spec(pod).get("nodeName"))


def sig_node_affinity(pod) -> str:
    spec = _spec(pod)
    aff = spec.get("affinity")
    na = aff.get("nodeAffinity") if isinstance(aff, dict) else None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(na, dict) else None
    return _dump(["nodeSelector" in spec, spec.get("nodeSelector"), req])


def sig_preferred_node_affinity(pod) -> str:
    aff = _spec(pod).get("affinity")
    na = aff.get("nodeAffinity") if isinstance(aff, dict) else None
    return _dump(na.get("preferredDuringSchedulingIgnoredDuringExecution") if isinstance(na, dict) else None)


def sig_host_ports(pod) -> tuple:
    return tuple(pod.host_ports)


def sig_effective_requests(pod) -> tuple:
    """What NodeResourcesFit's Filter reads of the pod: its effective requests (PreFilter state)."""
    r = pod.requests
    return (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pods, tuple(sorted(r.scalars.items())))


def _scoring_requests(pod, use_requested: bool, pod_level: bool) -> tuple:
    return tuple(sorted(scoring_requests(pod, use_requested, pod_level).items()))


def sig_fit_score_requests(pod) -> tuple:
    """What NodeResourcesFit's Score reads of the pod: requests with non-zero defaults, containers only."""
    return _scoring_requests(pod, False, False)


def sig_balanced_requests(pod) -> tuple:
    """What BalancedAllocation reads of the pod: requests as they are, pod-level ones included."""
    return _scoring_requests(pod, True, True)


def sig_images(pod) -> tuple:
    return tuple(c.image for c in pod.init_containers) + ("|",) + tuple(c.image for c in pod.containers)


# plugin name -> (validity, class key of the pod)
FILTERS: dict[str, tuple[str, Callable]] = {
    "NodeUnschedulable": (STATIC, sig_tolerations),
    "NodeName": (STATIC, sig_node_name),
    "TaintToleration": (STATIC, sig_tolerations),
    "NodeAffinity": (STATIC, sig_node_affinity),
    "NodePorts": (BY_GENERATION, sig_host_ports),
    "NodeResourcesFit": (BY_GENERATION, sig_effective_requests),
}
SCORES: dict[str, tuple[str, Callable]] = {
    "TaintToleration": (STATIC, sig_tolerations),
    "NodeAffinity": (STATIC, sig_preferred_node_affinity),
    "ImageLocality": (STATIC, sig_images),
    "NodeResourcesFit": (BY_GENERATION, sig_fit_score_requests),
    "NodeResourcesBalancedAllocation": (BY_GENERATION, sig_balanced_requests),
}
# the in-tree modules these entries describe (a plugin registered under the same name from
# elsewhere is not cached)
_IN_TREE_PREFIX = "kschedcli.plugins."


UNKNOWN = object()  # a column entry not computed yet (None is a verdict: Success)


class Column:
    """One plugin's results on every node of the snapshot (in its order) for one class of pods.

    `values` is replaced, never changed in place, once handed out: results of earlier cycles
    keep the list they were given. `seen` is how many of the snapshot's changes it reflects."""

    # `array`: the values as numpy arrays, with the list they were made from (Framework's
    # static_filter_array and static_score_array), for the columnar cycle
    __slots__ = ("values", "seen", "static", "_partial", "array")

    def __init__(self, static: bool):
        self.values: list | None = None
        self.seen = 0
        self.static = static
        # (positions, values there, length): a store of some nodes only, laid out on first read
        # (a single cycle never reads it back)
        self._partial: tuple[list[int], list, int] | None = None
        self.array: tuple | None = None

    def current(self, snapshot) -> list | None:
        """The values brought up to date: entries of nodes changed since are UNKNOWN again
        (for results that depend on the pods on the node)."""
        partial = self._partial
        if partial is not None:
            positions, raw, n = partial
            laid: list = [UNKNOWN] * n
            deque(map(laid.__setitem__, positions, raw), 0)  # laid[positions[k]] = raw[k]
            self.values = laid
            self._partial = None
        vals = self.values
        if vals is None or len(vals) != len(snapshot.node_infos):  # none yet, or nodes added since
            return None
        changes = snapshot.changes
        if not self.static and self.seen < len(changes):
            vals = list(vals)
            for i in changes[self.seen :]:
                vals[i] = UNKNOWN
            self.values = vals
        self.seen = len(changes)
        return vals

    def store(self, snapshot, values: list) -> None:
        self.values = values
        self._partial = None
        self.array = None
        self.seen = len(snapshot.changes)

    def store_at(self, snapshot, positions: list[int], values: list, n: int) -> None:
        """store() of a column of `n` entries known only at `positions` (UNKNOWN elsewhere);
        neither list is changed from here on."""
        self.values = None
        self._partial = (positions, values, n)
        self.array = None
        self.seen = len(snapshot.changes)


_UNSET: Any = object()


class EquivalenceCache:
    """Per profile: (extension point, plugin, class key) -> Column."""

    def __init__(self, max_classes: int = 1024):
        self.max_classes = max_classes
        self._columns: dict[tuple, Column] = {}
        self.enabled = True
        # (point, plugin) -> (validity, signature, its key in a pod's _cache), or None when the
        # plugin's results are not shared: worked out once per plugin
        self._kinds: dict[tuple, tuple[str, Any, str] | None] = {}

    def clear(self) -> None:
        self._columns.clear()

    def column(self, point: str, pl, pod) -> Column | None:
        """The plugin's column for this pod's class, or None when its results are not shared."""
        if not self.enabled:
            return None
        kind = self._kinds.get((point, pl), _UNSET)
        if kind is _UNSET:
            entry = (FILTERS if point == "filter" else SCORES).get(pl.name)
            if entry is None or not type(pl).__module__.startswith(_IN_TREE_PREFIX):
                kind = None
            else:
                kind = (entry[0], entry[1], f"ksched.class.{entry[1].__name__}")
            self._kinds[(point, pl)] = kind
        if kind is None:
            return None
        validity, signature, ck = kind
        sig = pod._cache.get(ck)
        if sig is None:
            try:
                sig = pod._cache[ck] = signature(pod)
            except Exception:  # an odd pod: no sharing for it
                return None
        key = (point, pl.name, sig)
        col = self._columns.pop(key, None)
        if col is None:
            col = Column(validity == STATIC)
            if len(self._columns) >= self.max_classes:
                self._columns.pop(next(iter(self._columns)))
        self._columns[key] = col  # most recently used last
        return col
