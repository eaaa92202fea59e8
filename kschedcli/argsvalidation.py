"""Plugin args validation, as kube-scheduler's validation_pluginargs.go. Returns (subfield, message) or None."""
from __future__ import annotations

from .errors import InputError
from .labels import parse_node_selector, parse_node_selector_term, valid_label_key

MAX_CUSTOM_PRIORITY_SCORE = 10


def _shape(shape, p: str):
    if not shape:
        return p, "Required value: at least one point must be specified"
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            return f"{p}[{i}].utilization", f"Invalid value: {shape[i].get('utilization', 0)}: values must be sorted in increasing order"
    for i, pt in enumerate(shape):
        u, s = pt.get("utilization", 0), pt.get("score", 0)
        if not 0 <= u <= 100:
            return f"{p}[{i}].utilization", f"Invalid value: {u}: not in valid range [0, 100]"
        if not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            return f"{p}[{i}].score", f"Invalid value: {s}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
    return None


def validate_args(plugin: str, a: dict):
    if plugin == "DefaultPreemption":
        pct, ab = a.get("minCandidateNodesPercentage"), a.get("minCandidateNodesAbsolute")
        if not 0 <= pct <= 100:
            return "minCandidateNodesPercentage", f"Invalid value: {pct}: not in valid range [0, 100]"
        if ab < 0:
            return "minCandidateNodesAbsolute", f"Invalid value: {ab}: not in valid range [0, inf)"
        if pct == 0 and ab == 0:
            return "minCandidateNodesPercentage", "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute"
    elif plugin == "InterPodAffinity":
        w = a.get("hardPodAffinityWeight")
        if not 0 <= w <= 100:
            return "hardPodAffinityWeight", f"Invalid value: {w}: not in valid range [0, 100]"
    elif plugin == "PodTopologySpread":
        dt, cons = a.get("defaultingType"), a.get("defaultConstraints") or []
        if dt not in ("System", "List"):
            return "defaultingType", f'Unsupported value: "{dt}": supported values: "List", "System"'
        if dt == "System" and cons:
            return "defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty'
        for i, c in enumerate(cons):
            p = f"defaultConstraints[{i}]"
            if (c.get("maxSkew") or 0) <= 0:
                return f"{p}.maxSkew", f"Invalid value: {c.get('maxSkew', 0)}: not in valid range (0, inf)"
            if not c.get("topologyKey"):
                return f"{p}.topologyKey", "Required value: can not be empty"
            if not valid_label_key(c["topologyKey"]):
                return f"{p}.topologyKey", f"Invalid value: {c['topologyKey']!r}: not a valid label name"
            wu = c.get("whenUnsatisfiable")
            if not wu:
                return f"{p}.whenUnsatisfiable", "Required value: can not be empty"
            if wu not in ("DoNotSchedule", "ScheduleAnyway"):
                return f"{p}.whenUnsatisfiable", f'Unsupported value: "{wu}": supported values: "DoNotSchedule", "ScheduleAnyway"'
            if c.get("labelSelector") is not None:
                return f"{p}.labelSelector", "Forbidden: constraint must not define a selector, as they deduced for each pod"
            for o in cons[:i]:
                if o.get("topologyKey") == c.get("topologyKey") and o.get("whenUnsatisfiable") == wu:
                    return p, f"Duplicate value: \"{{{c['topologyKey']}, {wu}}}\""
    elif plugin == "NodeResourcesBalancedAllocation":
        seen = set()
        for i, r in enumerate(a.get("resources") or []):
            if r.get("name") in seen:
                return f"resources[{i}].name", f"Duplicate value: {r.get('name')!r}"
            seen.add(r.get("name"))
            if r.get("weight") != 1:
                return f"resources[{i}].weight", f"Invalid value: {r.get('weight')}: must be 1"
    elif plugin == "NodeResourcesFit":
        for i, r in enumerate(a.get("ignoredResources") or []):
            if not valid_label_key(r):
                return f"ignoredResources[{i}]", f"Invalid value: {r!r}: not a valid resource name"
        for i, g in enumerate(a.get("ignoredResourceGroups") or []):
            if "/" in g:
                return f"ignoredResourceGroups[{i}]", f"Invalid value: {g!r}: resource group name can't contain '/'"
            if not valid_label_key(g):
                return f"ignoredResourceGroups[{i}]", f"Invalid value: {g!r}: not a valid resource group name"
        ss = a.get("scoringStrategy") or {}
        t = ss.get("type")
        if t not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
            return "scoringStrategy.type", f'Unsupported value: "{t}": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        for i, r in enumerate(ss.get("resources") or []):
            w = r.get("weight")
            if not 0 < w <= 100:
                return f"scoringStrategy.resources[{i}].weight", f"Invalid value: {w}: resource weight of {r.get('name')} not in valid range (0, 100]"
        rtcr = ss.get("requestedToCapacityRatio")
        if rtcr is not None:
            bad = _shape(rtcr.get("shape") or [], "scoringStrategy.shape")
            if bad:
                return bad
        elif t == "RequestedToCapacityRatio":
            return "scoringStrategy.requestedToCapacityRatio", "Required value: needed for the RequestedToCapacityRatio strategy"
    elif plugin == "VolumeBinding":
        if (a.get("bindTimeoutSeconds") or 0) < 0:
            return "bindTimeoutSeconds", "Invalid value: invalid BindTimeoutSeconds, should not be a negative value"
        if a.get("shape") is not None:
            return "shape", "Invalid value: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
    elif plugin == "NodeAffinity":
        added = a.get("addedAffinity") or {}
        try:
            req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
            if req is not None:
                parse_node_selector(req, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution")
            for i, t in enumerate(added.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
                parse_node_selector_term(t.get("preference") or {}, f"addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference")
        except InputError as e:
            return e.field, e.message
    return None
