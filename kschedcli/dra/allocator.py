"""The structured-parameters allocator of k8s.io/dynamic-resource-allocation (v1.34.1).

kube-scheduler v1.34.1's default gates (DRAAdminAccess, DRAPrioritizedList and
DRAResourceClaimDeviceStatus on; partitionable devices, device taints, binding conditions and
consumable capacity off) select the "experimental" implementation; with those features off it
behaves as written here:

- the node's pools (tracker.pools_for); devices of any allocated claim are taken;
- the claims are allocated together, one after the other, each request's devices in turn
  (`ExactCount` takes `count` devices, `All` every matching device of the node's pools, which
  must all be free), subrequests of `firstAvailable` tried in order; a depth-first search over
  the candidates in pool order that stops at the first complete solution;
- a device qualifies when its class's selectors, then the request's selectors, accept it (CEL),
  it has no binding conditions and consumes no counters, and the claim's constraints hold
  (`matchAttribute`; `distinctAttribute` as the Go code compares it);
- problems with the input (a CEL error, an `All` request over an incomplete or invalid pool, too
  many devices for one claim) are errors that stop the cycle, as there.
"""

from __future__ import annotations

from typing import Any

from .cel import CelError, selector
from .objects import Device, DeviceID, Pool, Request, Slice, selector_expression
from .tracker import Claim, Result, Tracker

ALLOCATION_RESULTS_MAX_SIZE = 32


class AllocationError(Exception):
    """An error of Allocate: the Filter reports it as an Error status."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class AllocationTimeout(Exception):
    """One node's search took more steps than its budget (kube-scheduler's Filter gives up after
    DynamicResources' filterTimeout and reports the node Unschedulable)."""

    def __init__(self, steps: int):
        super().__init__(steps)
        self.steps = steps


# allocateOne calls ksched takes to stand for one second of filterTimeout. The search is the same
# as kube-scheduler's, step for step, but a clock cannot be: a count keeps the verdict deterministic.
# kube-scheduler's Go takes some tens of times more steps in a second, so a search that ends between
# ksched's budget and kube-scheduler's is reported timed out where kube-scheduler would finish it;
# at the default 10s the budget is 1,000,000 steps, about 5 s of ksched's time
STEPS_PER_SECOND = 100_000
# the budget where kube-scheduler has none (filterTimeout 0, or v1.33 without the gate): ksched stops
# there rather than search for hours, and says so
UNTIMED_STEPS = 1_000_000


class _RequestData:
    __slots__ = ("request", "parent", "klass", "num_devices", "all_devices", "key")

    def __init__(self, request: Request, parent: str, key: tuple[int, int, int]):
        self.request = request
        self.parent = parent  # the name of the request holding this subrequest, "" if none
        self.klass: Any = None  # the DeviceClass
        self.num_devices = 0
        self.all_devices: list[tuple[Slice, Device]] = []
        self.key = key


class _Constraint:
    """A device constraint over some of a claim's requests (all of them when none are named)."""

    __slots__ = ("requests", "attribute")

    def __init__(self, requests: list[str], attribute: str):
        self.requests = set(requests)
        self.attribute = attribute

    def applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)


class _MatchAttribute(_Constraint):
    __slots__ = ("value", "count")

    def __init__(self, requests: list[str], attribute: str):
        super().__init__(requests, attribute)
        self.value: Any = None
        self.count = 0

    def add(self, request: str, sub: str, device: Device) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        if attr is None or attr[0] not in ("int", "bool", "string", "version"):
            return False
        if self.count == 0:
            self.value = attr
            self.count = 1
            return True
        if attr != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str, device: Device) -> None:
        if self.applies(request, sub):
            self.count -= 1


class _DistinctAttribute(_Constraint):
    """distinctAttribute as v1.34.1 evaluates it: values are compared by pointer, so two devices
    never collide; only a device without the attribute fails it."""

    __slots__ = ("holders",)

    def __init__(self, requests: list[str], attribute: str):
        super().__init__(requests, attribute)
        self.holders: dict[str, Device] = {}

    def add(self, request: str, sub: str, device: Device) -> bool:
        if not self.applies(request, sub):
            return True
        attr = lookup_attribute(device, self.attribute)
        if attr is None:
            return False
        if self.holders and any(d is device for d in self.holders.values()):
            return False
        self.holders[request] = device
        return True

    def remove(self, request: str, sub: str, device: Device) -> None:
        if self.applies(request, sub):
            self.holders.pop(request, None)


def lookup_attribute(device: Device, name: str) -> tuple[str, Any] | None:
    """lookupAttribute: the fully qualified name, or the bare name when the domain is the driver."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != device.driver:
        return None
    return device.attributes.get(ident)


class Allocator:
    """One cycle's allocator: the claims to allocate and the devices taken when it started."""

    def __init__(self, tracker: Tracker, claims: list[Claim], budget: int = UNTIMED_STEPS):
        self.tracker = tracker
        self.claims = claims
        self.allocated = tracker.allocated
        self.budget = budget  # allocateOne calls one node's search may take (AllocationTimeout past it)
        self.invocations = 0
        # node signature -> verdict (True, False, or the AllocationError or AllocationTimeout): the
        # claims are the same for every node of the cycle, so alike nodes need one search
        self._verdicts: dict[int, bool | AllocationError | AllocationTimeout] = {}

    def feasible(self, node) -> bool:
        """Whether the claims can all be allocated on `node`; raises AllocationError, or
        AllocationTimeout when the search outgrows the budget."""
        sig = self.tracker.node_signature(node)
        v = self._verdicts.get(sig)
        if v is None:
            try:
                v = _Run(self, node).run() is not None
            except (AllocationError, AllocationTimeout) as e:
                v = e
            self._verdicts[sig] = v
        if isinstance(v, (AllocationError, AllocationTimeout)):
            raise v
        return v

    def allocate(self, node) -> list[tuple[list[Result], dict | None]] | None:
        """The allocation of every claim on `node` ((results, node selector) per claim), or None
        when they cannot all be allocated there; raises AllocationError."""
        return _Run(self, node).run()


class _Run:
    """One Allocate call on one node."""

    def __init__(self, alloc: Allocator, node):
        self.alloc = alloc
        self.node = node
        self.claims = alloc.claims
        self.pools: list[Pool] = alloc.tracker.pools_for(node)
        self.allocated = alloc.allocated
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[tuple[Result, Slice]]] = [[] for _ in self.claims]
        self.constraints: list[list[Any]] = []
        self.matches: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        self.steps_left = alloc.budget

    def run(self) -> list[tuple[list[Result], dict | None]] | None:
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, req in enumerate(claim.spec.requests):
                if req.first_available:
                    least = None
                    for si, sub in enumerate(req.first_available):
                        if sub.capacity is not None:
                            raise AllocationError(
                                f"claim {claim.key}, subrequest {sub.name}: has capacity requests, "
                                "but the DRAConsumableCapacity feature is disabled"
                            )
                        data = self._validate(claim, sub, req.name, (ci, ri, si))
                        self.request_data[(ci, ri, si)] = data
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    min_devices += least or 0
                else:
                    ex = req.exactly or Request(req.name, {})
                    if ex.capacity is not None:
                        raise AllocationError(
                            f"claim {claim.key}, request {req.name}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
                    data = self._validate(claim, ex, "", (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = data
                    min_devices += data.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim.key}: number of requested devices {min_devices} exceeds the claim "
                    f"limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            cons: list[Any] = []
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute is not None:
                    cons.append(_MatchAttribute(c.requests, c.match_attribute))
                elif c.distinct_attribute is not None:
                    cons.append(_DistinctAttribute(c.requests, c.distinct_attribute))
                else:
                    raise AllocationError(
                        f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(cons)
        done = self._allocate_one(0, 0, 0, 0, False)
        if done is _EXCEEDED:  # the first claim alone is too large: Go returns that error
            raise AllocationError("allocation max size exceeded")
        if not done:
            return None
        out = []
        for devices in self.results:
            out.append(([r for r, _ in devices], self._node_selector(devices)))
        return out

    def _validate(self, claim: Claim, request: Request, parent: str, key: tuple[int, int, int]) -> _RequestData:
        data = _RequestData(request, parent, key)
        name = request.name
        for i, sel in enumerate(request.selectors):
            if not isinstance(sel, dict) or not isinstance(sel.get("cel"), dict):
                raise AllocationError(
                    f"claim {claim.key}, request {name}, selector #{i}: "
                    "CEL expression empty (unsupported selector type?)"
                )
        if not request.class_name:
            raise AllocationError(
                f"claim {claim.key}, request {name}: missing device class name (unsupported request type?)"
            )
        klass = self.alloc.tracker.classes.get(request.class_name)
        if klass is None:
            raise AllocationError(
                f"claim {claim.key}, request {name}: could not retrieve device class {request.class_name}: "
                f'deviceclass.resource.k8s.io "{request.class_name}" not found'
            )
        data.klass = klass
        if request.mode == "ExactCount":
            data.num_devices = request.count
        elif request.mode == "All":
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {claim.key}, request {name}: asks for all devices, but resource pool "
                        f"{pool.driver}/{pool.name} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {claim.key}, request {name}: asks for all devices, but resource pool "
                        f"{pool.driver}/{pool.name} is currently invalid"
                    )
                for s, d in pool.devices:
                    if self._selectable(claim, data, d):
                        data.all_devices.append((s, d))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(f"claim {claim.key}, request {name}: unsupported count mode {request.mode}")
        return data

    def _selectable(self, claim: Claim, data: _RequestData, device: Device) -> bool:
        if device.binding_conditions:  # DRADeviceBindingConditions is off
            return False
        mk = (device.id, data.key)
        v = self.matches.get(mk)
        if v is not None:
            return v
        ok = self._selectors_match(claim, device, data.klass, data.klass.selectors) and self._selectors_match(
            claim, device, None, data.request.selectors
        )
        self.matches[mk] = ok
        return ok

    def _selectors_match(self, claim: Claim, device: Device, klass, selectors: list) -> bool:
        for i, sel in enumerate(selectors):
            expr = selector_expression(sel)
            s = selector(expr if isinstance(expr, str) else "")
            owner = f"class {klass.name}" if klass is not None else f"claim {claim.key}"
            try:
                if not s.matches(device):
                    return False
            except CelError as e:
                kind = "compile" if e.compile_error else "runtime"
                raise AllocationError(f"{owner}: selector #{i}: CEL {kind} error: {e.message}") from None
        return True

    def _in_use(self, dev_id: DeviceID) -> bool:
        return dev_id in self.allocated or bool(self.allocating.get(dev_id))

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne: True once every claim is allocated; raises AllocationError, and returns
        the sentinel _EXCEEDED when the claim would hold too many devices."""
        self.alloc.invocations += 1
        self.steps_left -= 1
        if self.steps_left < 0:  # allocateOne's check of its context, with steps for the clock
            raise AllocationTimeout(self.alloc.budget)
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            done = self._allocate_one(ci + 1, 0, 0, 0, False)
            return False if done is _EXCEEDED else done
        data = self.request_data[(ci, ri, si)]
        if not in_sub and data.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                done = self._allocate_one(ci, ri, sub, di, True)
                if done is _EXCEEDED:
                    sub += 1
                    continue
                all_exceeded = False
                if done:
                    self.selected_sub[(ci, ri)] = sub
                    return True
                sub += 1
            return _EXCEEDED if all_exceeded else False
        request = data.request
        do_all = request.mode == "All"
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            return _EXCEEDED
        if do_all:
            s, d = data.all_devices[di]
            undo = self._allocate_device(ci, data, s, d, True)
            if undo is None:
                return False
            done = self._allocate_one(ci, ri, si, di + 1, in_sub)
            if done is _EXCEEDED or not done:
                undo()
            return done
        admin = bool(request.admin_access)
        for pool in self.pools:
            if pool.invalid:
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            for s, d in pool.devices:
                dev_id = d.id
                if admin:
                    if ci in self.allocating.get(dev_id, ()):
                        continue
                elif dev_id in self.allocated or self.allocating.get(dev_id):
                    continue
                if not self._selectable(claim, data, d):
                    continue
                undo = self._allocate_device(ci, data, s, d, False)
                if undo is None:
                    continue
                done = self._allocate_one(ci, ri, si, di + 1, in_sub)
                if done is True:
                    return True
                undo()
                if done is _EXCEEDED:
                    return done
        return False

    def _allocate_device(self, ci: int, data: _RequestData, s: Slice, d: Device, must: bool):
        """allocateDevice: the undo function when the device is taken for the request, None when
        it cannot be."""
        request = data.request
        admin = bool(request.admin_access)
        if admin and ci in self.allocating.get(d.id, ()):
            return None
        if not admin and self._in_use(d.id):
            return None
        if d.consumes_counters:  # DRAPartitionableDevices is off
            return None
        base, sub = (data.parent, request.name) if data.parent else (request.name, "")
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, d):
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].key}, request {request.name}: cannot add device "
                        f"{d.id[0]}/{d.id[1]}/{d.id[2]} because a claim constraint would not be satisfied"
                    )
                for c2 in cons[:i]:
                    c2.remove(base, sub, d)
                return None
        holders = self.allocating.setdefault(d.id, set())
        holders.add(ci)
        name = f"{data.parent}/{request.name}" if data.parent else request.name
        self.results[ci].append((Result(name, d.id[0], d.id[1], d.id[2], True if admin else None), s))
        n = len(self.results[ci]) - 1

        def undo() -> None:
            for c in cons:
                c.remove(base, sub, d)
            holders.discard(ci)
            del self.results[ci][n:]

        return undo

    def _node_selector(self, devices: list[tuple[Result, Slice]]) -> dict | None:
        """createNodeSelector: the node alone when a device is local to it; else the slices'
        selector requirements together; None when available everywhere."""
        fields: list[dict] = []
        exprs: list[dict] = []
        for _, s in devices:
            if s.node_name:
                return {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [self.node.name]}]}
                    ]
                }
            if s.node_selector is not None:
                terms = s.node_selector.get("nodeSelectorTerms")
                terms = terms if isinstance(terms, list) else []
                if len(terms) == 1 and isinstance(terms[0], dict):
                    _merge(terms[0].get("matchFields"), fields)
                    _merge(terms[0].get("matchExpressions"), exprs)
                elif len(terms) > 1:
                    raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if fields or exprs:
            term: dict = {}
            if exprs:
                term["matchExpressions"] = exprs
            if fields:
                term["matchFields"] = fields
            return {"nodeSelectorTerms": [term]}
        return None


_EXCEEDED: Any = object()  # allocateOne's errAllocationResultMaxSizeExceeded


def _merge(src, dst: list) -> None:
    for r in src if isinstance(src, list) else []:
        if not isinstance(r, dict):
            continue
        if not any(
            e.get("key") == r.get("key") and e.get("operator") == r.get("operator") and _values(e) == _values(r)
            for e in dst
        ):
            dst.append(r)


def _values(r: dict) -> set:
    v = r.get("values")
    return {x for x in v if isinstance(x, str)} if isinstance(v, list) else set()
