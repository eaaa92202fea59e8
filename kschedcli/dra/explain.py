"""Why a pod's claims can or cannot be allocated on a node: for each request, which of the node's
devices qualify and, for every other device, what excludes it (the claim holding it, the first
selector that rejects it, a CEL error, a feature that is off). ksched's own account; it evaluates
the same selectors the allocator does (their verdicts are cached) and changes nothing."""

from __future__ import annotations

from typing import Any

from .cel import CelError, selector
from .objects import Device, Request, selector_expression
from .tracker import Claim, Result, Tracker

# nodes described in one explanation: the chosen node first, then the others in snapshot order
MAX_NODES = 50


def device_name(d: Device) -> str:
    return "/".join(d.id)


def claim_summary(claim: Claim) -> dict:
    out: dict[str, Any] = {"claim": claim.key}
    if claim.allocation is not None:
        out["allocated"] = True
        out["devices"] = ["/".join(r.id) for r in claim.allocation.results]
        if claim.allocation.node_selector is not None:
            out["nodeSelector"] = claim.allocation.node_selector
    else:
        out["allocated"] = False
        reqs = []
        for req in claim.spec.requests:
            if req.exactly is not None:
                reqs.append(_request_doc(req.name, req.exactly))
            else:
                reqs.append(
                    {
                        "request": req.name,
                        "firstAvailable": [_request_doc(f"{req.name}/{s.name}", s) for s in req.first_available],
                    }
                )
        out["requests"] = reqs
    out["reservedFor"] = [str(r.get("name", "")) for r in claim.reserved_for]
    return out


def _request_doc(name: str, r: Request) -> dict:
    doc: dict[str, Any] = {"request": name, "deviceClass": r.class_name, "mode": r.mode}
    if r.mode == "ExactCount":
        doc["count"] = r.count
    exprs = [_expression(s) for s in r.selectors]
    if exprs:
        doc["selectors"] = exprs
    if r.admin_access:
        doc["adminAccess"] = True
    return doc


def _expression(sel: Any) -> str:
    expr = selector_expression(sel)
    return expr if isinstance(expr, str) else ""


def _first_rejecting(
    tracker: Tracker, claim: Claim, request: Request, d: Device, memo: dict | None = None
) -> dict | None:
    """The first selector (class, then request) that does not select the device, or its error
    (kept in `memo` per request and device content: alike devices get the same answer)."""
    if memo is not None:
        key = (id(request), d.content)
        if key not in memo:
            memo[key] = _first_rejecting(tracker, claim, request, d)
        return memo[key]
    klass = tracker.classes.get(request.class_name)
    groups = [(f"class {request.class_name}", klass.selectors if klass is not None else [])]
    groups.append((f"claim {claim.key}", request.selectors))
    for owner, selectors in groups:
        for i, sel in enumerate(selectors):
            expr = _expression(sel)
            try:
                if selector(expr).matches(d):
                    continue
                return {"reason": "selector", "selector": f"{owner}: selector #{i}", "expression": expr}
            except CelError as e:
                kind = "compile" if e.compile_error else "runtime"
                return {
                    "reason": "error",
                    "selector": f"{owner}: selector #{i}",
                    "expression": expr,
                    "error": f"CEL {kind} error: {e.message}",
                }
    return None


def _requests(claim: Claim) -> list[tuple[str, Request]]:
    out = []
    for req in claim.spec.requests:
        if req.exactly is not None:
            out.append((req.name, req.exactly))
        for s in req.first_available:
            out.append((f"{req.name}/{s.name}", s))
    return out


def explain_node(
    tracker: Tracker,
    claims: list[Claim],
    node,
    allocation: list[tuple[list[Result], dict | None]] | None,
    memo: dict | None = None,
) -> list[dict]:
    """Per request of the claims to allocate: the devices that qualify on `node`, those chosen
    (when the node is feasible) and why each other device does not."""
    pools = tracker.pools_for(node)
    chosen: dict[tuple[str, str], list[str]] = {}
    for c, (results, _) in zip(claims, allocation or []):
        for r in results:
            chosen.setdefault((c.key, r.request), []).append("/".join(r.id))
    out = []
    for c in claims:
        for name, request in _requests(c):
            qualifying: list[str] = []
            rejected: list[dict] = []
            for pool in pools:
                for _, d in pool.devices:
                    # a device the selectors reject is explained by them, taken or not
                    entry: dict[str, Any] | None
                    if d.binding_conditions:
                        entry = {"reason": "binding conditions (DRADeviceBindingConditions is off)"}
                    else:
                        entry = _first_rejecting(tracker, c, request, d, memo)
                        entry = dict(entry) if entry is not None else None
                    holder = tracker.allocated.get(d.id)
                    if entry is None and holder is not None and not request.admin_access:
                        entry = {"reason": "taken", "by": holder}
                    elif entry is None and d.consumes_counters:
                        entry = {"reason": "consumes counters (DRAPartitionableDevices is off)"}
                    if entry is None:
                        qualifying.append(device_name(d))
                    else:
                        rejected.append({"device": device_name(d), **entry})
            doc: dict[str, Any] = {"claim": c.key, "request": name, "mode": request.mode}
            if request.mode == "ExactCount":
                doc["count"] = request.count
            doc["qualifying"] = qualifying
            if (c.key, name) in chosen:
                doc["chosen"] = chosen[(c.key, name)]
            doc["rejected"] = rejected
            out.append(doc)
    return out
