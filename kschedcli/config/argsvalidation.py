"""Plugin args validation, as kube-scheduler's validation_pluginargs.go. Returns (subfield, message) or None."""

from __future__ import annotations

from typing import Any

from ..api.labels import parse_node_selector, parse_node_selector_term, qualified_name_errors
from ..errors import InputError

MAX_CUSTOM_PRIORITY_SCORE = 10


def _shape(shape, p: str, release: Any = None):
    if not shape:
        return p, "Required value: at least one point must be specified"
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            unsorted = (
                release.message("Args.ShapeNotSorted")
                if release is not None
                else "values must be sorted in increasing order"
            )
            return f"{p}[{i}].utilization", f"Invalid value: {shape[i].get('utilization', 0)}: {unsorted}"
    for i, pt in enumerate(shape):
        u, s = pt.get("utilization", 0), pt.get("score", 0)
        if not 0 <= u <= 100:
            return f"{p}[{i}].utilization", f"Invalid value: {u}: not in valid range [0, 100]"
        if not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            return f"{p}[{i}].score", f"Invalid value: {s}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
    return None


def validate_args(plugin: str, a: Any, release: Any = None):
    """(sub-path, message) of the first problem kube-scheduler's validation finds in a plugin's
    args, else None; `release` (versions.Release): the wording of that release (default v1.34's)."""
    if plugin == "DefaultPreemption":
        pct, ab = a.get("minCandidateNodesPercentage"), a.get("minCandidateNodesAbsolute")
        if not 0 <= pct <= 100:
            return "minCandidateNodesPercentage", f"Invalid value: {pct}: not in valid range [0, 100]"
        if ab < 0:
            return "minCandidateNodesAbsolute", f"Invalid value: {ab}: not in valid range [0, inf)"
        if pct == 0 and ab == 0:
            return (
                "minCandidateNodesPercentage",
                "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
            )
    elif plugin == "InterPodAffinity":
        w = a.get("hardPodAffinityWeight")
        if not 0 <= w <= 100:
            return "hardPodAffinityWeight", f"Invalid value: {w}: not in valid range [0, 100]"
    elif plugin == "PodTopologySpread":
        dt, cons = a.get("defaultingType"), a.get("defaultConstraints") or []
        if dt not in ("System", "List"):
            # field.NotSupported with the values in validation_pluginargs.go's order (not sorted)
            return "defaultingType", f'Unsupported value: {_q(dt)}: supported values: "System", "List"'
        if dt == "System" and cons:
            return "defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty'
        for i, c in enumerate(cons):
            p = f"defaultConstraints[{i}]"
            if (c.get("maxSkew") or 0) <= 0:
                return f"{p}.maxSkew", f"Invalid value: {c.get('maxSkew', 0)}: not in valid range (0, inf)"
            if not c.get("topologyKey"):
                return f"{p}.topologyKey", "Required value: can not be empty"
            bad = qualified_name_errors(c["topologyKey"])
            if bad:
                return f"{p}.topologyKey", f"Invalid value: {_q(c['topologyKey'])}: {bad[0]}"
            wu = c.get("whenUnsatisfiable")
            if not wu:
                return f"{p}.whenUnsatisfiable", "Required value: can not be empty"
            if wu not in ("DoNotSchedule", "ScheduleAnyway"):
                return (
                    f"{p}.whenUnsatisfiable",
                    f'Unsupported value: {_q(wu)}: supported values: "DoNotSchedule", "ScheduleAnyway"',
                )
            if c.get("labelSelector") is not None:
                return (
                    f"{p}.labelSelector",
                    "Forbidden: constraint must not define a selector, as they deduced for each pod",
                )
            for o in cons[:i]:
                if o.get("topologyKey") == c.get("topologyKey") and o.get("whenUnsatisfiable") == wu:
                    return p, f'Duplicate value: "{{{c["topologyKey"]}, {wu}}}"'
    elif plugin == "NodeResourcesBalancedAllocation":
        seen = set()
        for i, r in enumerate(a.get("resources") or []):
            if r.get("name") in seen:
                return f"resources[{i}].name", f"Duplicate value: {_q(r.get('name') or '')}"
            seen.add(r.get("name"))
            if r.get("weight") != 1:
                return f"resources[{i}].weight", f"Invalid value: {r.get('weight')}: must be 1"
    elif plugin == "NodeResourcesFit":
        for i, r in enumerate(a.get("ignoredResources") or []):
            bad = qualified_name_errors(r)
            if bad:
                return f"ignoredResources[{i}]", f"Invalid value: {_q(r)}: {bad[0]}"
        for i, g in enumerate(a.get("ignoredResourceGroups") or []):
            if "/" in g:
                return f"ignoredResourceGroups[{i}]", f"Invalid value: {_q(g)}: resource group name can't contain '/'"
            bad = qualified_name_errors(g)
            if bad:
                return f"ignoredResourceGroups[{i}]", f"Invalid value: {_q(g)}: {bad[0]}"
        ss = a.get("scoringStrategy") or {}
        t = ss.get("type") or ""
        if t not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
            return (
                "scoringStrategy.type",
                f'Unsupported value: {_q(t)}: supported values: "LeastAllocated", "MostAllocated", '
                '"RequestedToCapacityRatio"',
            )
        for i, r in enumerate(ss.get("resources") or []):
            w = r.get("weight")
            if not 0 < w <= 100:
                return (
                    f"scoringStrategy.resources[{i}].weight",
                    f"Invalid value: {w}: resource weight of {r.get('name')} not in valid range (0, 100]",
                )
        rtcr = ss.get("requestedToCapacityRatio")
        if rtcr is not None:
            bad = _shape(rtcr.get("shape") or [], "scoringStrategy.shape", release)
            if bad:
                return bad
        elif t == "RequestedToCapacityRatio":
            return (
                "scoringStrategy.requestedToCapacityRatio",
                "Required value: needed for the RequestedToCapacityRatio strategy",
            )
    elif plugin == "VolumeBinding":
        bts = a.get("bindTimeoutSeconds") or 0
        if bts < 0:
            return (
                "bindTimeoutSeconds",
                f"Invalid value: {bts}: invalid BindTimeoutSeconds, should not be a negative value",
            )
        if a.get("shape") is not None:
            # (the internal UtilizationShapePoint, without json tags: its fields' Go names)
            shape = [
                {"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)} if isinstance(p, dict) else p
                for p in a["shape"]
            ]
            return "shape", (
                f"Invalid value: {_json(shape)}: unexpected field `shape`, remove it or turn on the "
                f"feature gate StorageCapacityScoring"
            )
    elif plugin == "DynamicResources":
        ft = a.get("filterTimeout")
        if ft is not None:
            d = parse_go_duration(ft)
            if d is None:
                return "filterTimeout", f"time: invalid duration {_q(str(ft))}"
            if d < 0:
                return "filterTimeout", f"Invalid value: {_q(str(ft))}: must be zero or positive"
    elif plugin == "NodeAffinity":
        added = a.get("addedAffinity") or {}
        try:
            req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
            if req is not None:
                parse_node_selector(req, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution", strict=True)
            # NewPreferredSchedulingTerms skips weight-0 and empty terms before parsing; its paths
            # index the list directly (no ".preference")
            for i, t in enumerate(added.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
                pref = t.get("preference") or {}
                if not t.get("weight") or not (pref.get("matchExpressions") or pref.get("matchFields")):
                    continue
                parse_node_selector_term(
                    pref, f"addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]", strict=True
                )
        except InputError as e:
            return e.field, e.message
    return None


def _q(v: str) -> str:
    """Go's %q for the plain strings these messages quote."""
    return _json(v)


def _json(v) -> str:
    import json

    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


_DURATION_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}


def parse_go_duration(s) -> int | None:
    """time.ParseDuration, in nanoseconds (None when Go rejects it): [-+]?([0-9]*(\\.[0-9]*)?[a-z\u00b5\u03bc]+)+,
    or "0"."""
    import re

    if not isinstance(s, str) or not s:
        return None
    sign = 1
    body = s
    if body[0] in "+-":
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return 0
    if not body:
        return None
    total = 0
    pos = 0
    unit_re = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]+)")
    while pos < len(body):
        m = unit_re.match(body, pos)
        if m is None or (not m.group(1) and not m.group(2)):
            return None
        unit = _DURATION_UNITS.get(m.group(3))
        if unit is None:
            return None
        whole = int(m.group(1) or "0")
        frac = m.group(2) or ""
        total += whole * unit + (int(frac) * unit // 10 ** len(frac) if frac else 0)
        pos = m.end()
    if total > (1 << 63) - 1:
        return None
    return sign * total
