"""The DRA state of a run: ResourceClaims as the scheduler's assume cache holds them (their status
changed by the binds of a sequence), the devices allocated to them, the device classes, and the
resource pools each node can reach.

kube-scheduler keeps the equivalent in its DRA manager (claim tracker, allocated-devices index,
ResourceSlice lister); here one tracker serves one plugin instance, and every bind of the run
reaches it (Scheduler.bind tells each BindObserver).
"""

from __future__ import annotations

from typing import Any

from ..api.labels import NodeSelector, parse_node_selector
from ..api.rawfields import as_list
from .cel import attributes_read
from .objects import ClaimSpec, DeviceClass, DeviceID, Pool, Slice, meta, selector_expression

MAX_RESERVED_FOR = 256  # ResourceClaimReservedForMaxSize


class Result:
    """One DeviceRequestAllocationResult."""

    __slots__ = ("request", "driver", "pool", "device", "admin_access")

    def __init__(self, request: str, driver: str, pool: str, device: str, admin_access: bool | None = None):
        self.request = request
        self.driver = driver
        self.pool = pool
        self.device = device
        self.admin_access = admin_access

    @property
    def id(self) -> DeviceID:
        return (self.driver, self.pool, self.device)

    def as_dict(self) -> dict:
        d: dict[str, str | bool] = {
            "request": self.request,
            "driver": self.driver,
            "pool": self.pool,
            "device": self.device,
        }
        if self.admin_access is not None:
            d["adminAccess"] = self.admin_access
        return d


class Allocation:
    """status.allocation: the devices and the node selector."""

    __slots__ = ("results", "node_selector", "selector", "assumed")

    def __init__(self, results: list[Result], node_selector: dict | None, assumed: bool = False):
        self.results = results
        self.node_selector = node_selector
        self.selector: NodeSelector | None = None
        if node_selector is not None:
            self.selector = parse_node_selector(node_selector, "status.allocation.nodeSelector", strict=True)
        self.assumed = assumed  # made by a bind of this run


class Claim:
    """One ResourceClaim: its spec (parsed once) and its status as it stands in the run."""

    __slots__ = ("raw", "namespace", "name", "uid", "spec", "allocation", "reserved_for", "selector_error")

    def __init__(self, raw: dict):
        m = meta(raw)
        self.raw = raw
        ns, name, uid = m.get("namespace"), m.get("name"), m.get("uid")
        self.namespace: str = ns if isinstance(ns, str) and ns else "default"
        self.name: str = name if isinstance(name, str) else ""
        self.uid: str = uid if isinstance(uid, str) else ""
        self.spec = ClaimSpec(raw)
        raw_status = raw.get("status")
        status: dict = raw_status if isinstance(raw_status, dict) else {}
        self.allocation: Allocation | None = None
        self.selector_error: str | None = None
        alloc = status.get("allocation")
        if isinstance(alloc, dict):
            raw_devices = alloc.get("devices")
            devices: dict = raw_devices if isinstance(raw_devices, dict) else {}
            results = []
            for r in _as_list(devices.get("results")):
                if isinstance(r, dict):
                    admin = r.get("adminAccess")
                    results.append(
                        Result(
                            str(r.get("request", "")),
                            str(r.get("driver", "")),
                            str(r.get("pool", "")),
                            str(r.get("device", "")),
                            admin if isinstance(admin, bool) else None,
                        )
                    )
            ns = alloc.get("nodeSelector")
            try:
                self.allocation = Allocation(results, ns if isinstance(ns, dict) else None)
            except Exception as e:  # NewNodeSelector's error: PreFilter reports it
                self.allocation = Allocation(results, None)
                self.selector_error = str(getattr(e, "message", e))
        self.reserved_for: list[dict] = [r for r in _as_list(status.get("reservedFor")) if isinstance(r, dict)]

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def reserved_for_pod(self, uid: str) -> bool:
        return any(r.get("uid") == uid for r in self.reserved_for)


class Tracker:
    """Claims, classes, slices of a cluster, and which devices are allocated to which claim."""

    def __init__(self, cluster: Any):
        objects: dict = getattr(cluster, "objects", None) or {}
        self.claims: dict[tuple[str, str], Claim] = {}
        for (_ns, _name), raw in (objects.get("ResourceClaim") or {}).items():
            if isinstance(raw, dict):
                c = Claim(raw)
                self.claims[(c.namespace, c.name)] = c
        self.classes: dict[str, DeviceClass] = {}
        for raw in (objects.get("DeviceClass") or {}).values():
            if isinstance(raw, dict):
                dc = DeviceClass(raw)
                self.classes[dc.name] = dc
        self.slices = [Slice(raw) for raw in (objects.get("ResourceSlice") or {}).values() if isinstance(raw, dict)]
        # node-local slices by node; the others (all nodes, a node selector, per device) are
        # matched against each node
        names = self._attributes_read()
        ordered = sorted(names) if names is not None else None
        for s in self.slices:
            for d in s.devices:
                d.project(ordered)
        self.local: dict[str, list[Slice]] = {}
        self.shared: list[Slice] = []
        for s in self.slices:
            if s.node_name:
                self.local.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)
        self._pools: dict[str, list[Pool]] = {}
        self.allocated: dict[DeviceID, str] = {}  # device -> the claim (ns/name) holding it
        # node -> the number of its signature (see node_signature); forgotten when a device of
        # one of its pools is allocated
        self._signatures: dict[str, int] = {}
        self._signature_ids: dict[tuple, int] = {}
        self._pool_nodes: dict[tuple[str, str], list[str]] = {}
        for c in self.claims.values():
            self._note_allocation(c)

    def _attributes_read(self) -> set[tuple[str, str]] | None:
        """Every attribute a selector or constraint of the cluster reads; None when some selector
        may read any."""
        exprs: list = [sel for dc in self.classes.values() for sel in dc.selectors]
        names: set[tuple[str, str]] = set()
        for c in self.claims.values():
            for req in c.spec.requests:
                for r in ([req.exactly] if req.exactly is not None else []) + req.first_available:
                    exprs.extend(r.selectors)
            for con in c.spec.constraints:
                for attr in (con.match_attribute, con.distinct_attribute):
                    if attr:
                        domain, sep, ident = attr.partition("/")
                        names.add((domain, ident) if sep else ("", attr))
        for sel in exprs:
            expr = selector_expression(sel)
            if not isinstance(expr, str):
                continue
            found = attributes_read(expr)
            if found is None:
                return None
            names |= found
        return names

    def _note_allocation(self, c: Claim) -> None:
        if c.allocation is None:
            return
        for r in c.allocation.results:
            if r.admin_access:  # admin access does not take the device
                continue
            self.allocated[r.id] = c.key

    def claim(self, namespace: str, name: str) -> Claim | None:
        return self.claims.get((namespace, name))

    def pools_for(self, node) -> list[Pool]:
        """GatherPools: the pools of the slices the node can reach, newest generation only, in
        the order the slices come (Go walks a map here: the order is arbitrary there)."""
        pools = self._pools.get(node.name)
        if pools is not None:
            return pools
        by_id: dict[tuple[str, str], Pool] = {}
        late: list[Slice] = []
        for s in self.local.get(node.name, ()):
            if s.per_device_node_selection is not None:  # DRAPartitionableDevices is off
                continue
            _add_slice(by_id, s, late)
        for s in self.shared:
            if s.per_device_node_selection is not None:
                continue
            if s.all_nodes or (s.node_selector is not None and _selector_matches(s.node_selector, node)):
                _add_slice(by_id, s, late)
        for s in late:
            _add_slice(by_id, s, None)
        pools = list(by_id.values())
        for p in pools:
            p.finish()
            self._pool_nodes.setdefault((p.driver, p.name), []).append(node.name)
        # pools with binding conditions come last
        pools.sort(key=lambda p: any(d.binding_conditions for _, d in p.devices))
        self._pools[node.name] = pools
        return pools

    def node_signature(self, node) -> int:
        """A number shared by the nodes on which the same claims get the same verdict: alike
        pools (device contents, in order) with the same devices taken."""
        n = self._signatures.get(node.name)
        if n is None:
            allocated = self.allocated
            key = tuple((p.signature, tuple(d.id in allocated for _, d in p.devices)) for p in self.pools_for(node))
            n = self._signature_ids.get(key)
            if n is None:
                n = self._signature_ids[key] = len(self._signature_ids)
            self._signatures[node.name] = n
        return n

    def node_signatures(self, nodes: list) -> list[int]:
        """node_signature of each NodeInfo of `nodes`, in their order."""
        known = self._signatures
        out = [known.get(ni.node.name, -1) for ni in nodes]
        if -1 in out:
            out = [s if s != -1 else self.node_signature(ni.node) for s, ni in zip(out, nodes)]
        return out

    def bind(self, pod, node_name: str, allocations: dict[tuple[str, str], tuple[list[Result], dict | None]]) -> None:
        """Reserve + PreBind of the pod on the node: the claims allocated now get their
        allocation, and every claim of the pod lists the pod in reservedFor."""
        for key, (results, node_selector) in allocations.items():
            c = self.claims.get(key)
            if c is None or c.allocation is not None:
                continue
            c.allocation = Allocation(results, node_selector, assumed=True)
            self._note_allocation(c)
            for r in results:
                for n in self._pool_nodes.get((r.driver, r.pool), ()):
                    self._signatures.pop(n, None)
        for pc_key in pod_claim_keys(pod, self):
            c = self.claims.get(pc_key)
            if c is not None and c.allocation is not None and not c.reserved_for_pod(pod.uid):
                c.reserved_for.append({"resource": "pods", "name": pod.name, "uid": pod.uid})


_as_list = as_list


def _add_slice(by_id: dict[tuple[str, str], Pool], s: Slice, late: list[Slice] | None) -> None:
    if late is not None and any(d.binding_conditions for d in s.devices):
        late.append(s)  # slices with binding conditions after the others
        return
    key = (s.driver, s.pool)
    pool = by_id.get(key)
    if pool is None:
        by_id[key] = Pool(s.driver, s.pool, s)
        return
    first = pool.slices[0].generation
    if s.generation < first:
        return  # outdated
    if s.generation > first:
        pool.slices = []
    pool.slices.append(s)


def _selector_matches(raw: dict, node) -> bool:
    try:
        return parse_node_selector(raw, "spec.nodeSelector", strict=True).matches(node.labels, node.name)
    except Exception:
        return False


def pod_claim_keys(pod, tracker: Tracker) -> list[tuple[str, str]]:
    """The (namespace, name) of every claim the pod names that exists (resourceclaim.Name)."""
    out = []
    status = pod.raw.get("status") if isinstance(pod.raw.get("status"), dict) else {}
    for pc in pod.resource_claims:
        if not isinstance(pc, dict):
            continue
        name = pc.get("resourceClaimName")
        if name is None and pc.get("resourceClaimTemplateName") is not None:
            for st in _as_list(status.get("resourceClaimStatuses")):
                if isinstance(st, dict) and st.get("name") == pc.get("name"):
                    name = st.get("resourceClaimName")
        if isinstance(name, str) and (pod.namespace, name) in tracker.claims:
            out.append((pod.namespace, name))
    return out
