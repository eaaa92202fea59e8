"""Candidate changes to the pod, from what rejected it where: each a function that changes a copy
of the pod's object (the object as the user gave it) and a one-line summary. None is trusted:
fixes/search.py keeps only those a cycle confirms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...api.rawfields import as_dict, as_list
from .blocked import Blocked, is_system_taint
from .model import Change

if TYPE_CHECKING:
    from ...api.model import Pod
    from ...backend.snapshot import Snapshot

_MI = 1 << 20
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


_dict = as_dict
_list = as_list


def _spec(raw: dict) -> dict:
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        spec = raw["spec"] = {}
    return spec


def _listed(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (f", … +{len(names) - n} more" if len(names) > n else "")


def _opening(count: int, names: list[str]) -> str:
    return f"{count} nodes like {names[0]}" if count > 1 else names[0]


def _carried(nodes: int, taints: int) -> str:
    return f"{nodes} node{' carries' if nodes == 1 else 's carry'} {'them' if taints > 1 else 'it'}"


# ------------------------------------------------------------------------------- taints


def taint_changes(blocked: Blocked, pod: Pod, snapshot: Snapshot) -> list[Change]:
    """Tolerate the taints that alone keep the pod off some nodes: one change per distinct set of
    untolerated taints among those nodes (a pool's taints), never a taint the cluster's own
    controllers keep (not-ready, cordoned, ...)."""
    nodes = snapshot.list()
    by_set: dict[tuple, list[str]] = {}
    for i in blocked.nodes_failing_within({"TaintToleration"}):
        found = untolerated(pod, nodes[i].node)
        if not found or any(is_system_taint(k) for k, _, _ in found):
            continue
        by_set.setdefault(tuple(found), []).append(blocked.names[i])
    out = []
    for taints, names in sorted(by_set.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        tols = [_toleration(k, v, e) for k, v, e in taints]
        words = ", ".join(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in taints)
        out.append(
            Change(
                "toleration",
                f"tolerate the taint{'s' if len(taints) > 1 else ''} {words} ({_carried(len(names), len(taints))})",
                mutate=_add_tolerations(tols),
                opens=len(names),
            )
        )
    return out


def untolerated(pod: Pod, node) -> list[tuple[str, str, str]]:
    out = []
    for t in node.taints:
        if t.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tol.tolerates(t.key, t.value, t.effect) for tol in pod.tolerations):
            out.append((t.key, t.value, t.effect))
    return sorted(set(out))


def _toleration(key: str, value: str, effect: str) -> dict:
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def _add_tolerations(tols: list[dict]):
    def mutate(raw: dict) -> None:
        spec = _spec(raw)
        have = spec.get("tolerations")
        spec["tolerations"] = (list(have) if isinstance(have, list) else []) + [dict(t) for t in tols]

    return mutate


# ------------------------------------------------------------------------ node selection


def node_selection_changes(blocked: Blocked, pod: Pod, raw: dict) -> list[Change]:
    """Drop one nodeSelector entry, or one expression of a required node-affinity term (the term,
    when that was its last; the requirement, when that was its last term)."""
    if not blocked.nodes_failing_within({"NodeAffinity"}) and "NodeAffinity" not in blocked.plugins():
        return []
    spec = _dict(raw.get("spec"))
    out = []
    for key in sorted(_dict(spec.get("nodeSelector"))):
        out.append(
            Change(
                "nodeSelector", f"drop the nodeSelector entry {key}={spec['nodeSelector'][key]}", _drop_selector(key)
            )
        )
    na = _dict(_dict(spec.get("affinity")).get("nodeAffinity"))
    terms = _list(_dict(na.get(REQUIRED)).get("nodeSelectorTerms"))
    for ti, term in enumerate(terms):
        if not isinstance(term, dict):
            continue
        for part in ("matchExpressions", "matchFields"):
            for ei, expr in enumerate(_list(term.get(part))):
                if not isinstance(expr, dict):
                    continue
                what = f"{expr.get('key')} {expr.get('operator')} {list(expr.get('values') or [])}".rstrip(" []")
                where = f" of term {ti + 1}" if len(terms) > 1 else ""
                out.append(
                    Change(
                        "nodeAffinity",
                        f"drop the required node-affinity requirement {what}{where}",
                        _drop_affinity_expression(ti, part, ei),
                    )
                )
    return out


def _drop_selector(key: str):
    def mutate(raw: dict) -> None:
        sel = dict(_spec(raw).get("nodeSelector") or {})
        sel.pop(key, None)
        _spec(raw)["nodeSelector"] = sel

    return mutate


def _drop_affinity_expression(ti: int, part: str, ei: int):
    def mutate(raw: dict) -> None:
        spec = _spec(raw)
        aff = dict(spec["affinity"])
        na = dict(aff["nodeAffinity"])
        req = dict(na[REQUIRED])
        terms = [dict(t) for t in req["nodeSelectorTerms"]]
        exprs = list(terms[ti][part])
        del exprs[ei]
        if exprs:
            terms[ti][part] = exprs
        else:
            terms[ti].pop(part)
        if not terms[ti].get("matchExpressions") and not terms[ti].get("matchFields"):
            del terms[ti]  # an empty term matches no node
        if terms:
            req["nodeSelectorTerms"] = terms
            na[REQUIRED] = req
        else:
            na.pop(REQUIRED)
        aff["nodeAffinity"] = na
        spec["affinity"] = aff

    return mutate


# ------------------------------------------------------------------------------ resources

_BYTES = ("memory", "ephemeral-storage")


def resource_changes(blocked: Blocked, pod: Pod, raw: dict, snapshot: Snapshot, fit) -> list[Change]:
    """Lower one request to the largest amount some node has free, among the nodes where only that
    resource is short (cpu to the millicore, memory and storage to the MiB below)."""
    if fit is None or not hasattr(fit, "insufficient"):
        return []
    nodes = snapshot.list()
    best: dict[str, tuple[int, str]] = {}  # resource -> (largest free amount, its node)
    for i in blocked.nodes_failing_within({"NodeResourcesFit"}):
        short = fit.insufficient(pod, nodes[i])
        if len(short) != 1 or short[0].resource == "pods":
            continue
        r = short[0].resource
        free = short[0].capacity - short[0].used
        if free > 0 and (r not in best or free > best[r][0]):
            best[r] = (free, blocked.names[i])
    out = []
    for r, (free, node) in sorted(best.items()):
        amount = _round_down(r, free)
        if amount <= 0:
            continue
        mutate = _lower_request(pod, raw, r, amount)
        if mutate is None:
            continue
        want = pod.requests.get(r)
        out.append(
            Change(
                "resources",
                f"lower the {r} request from {fmt_quantity(r, want)} to {fmt_quantity(r, amount)} "
                f"(what {node} has free)",
                mutate,
                opens=1,
            )
        )
    return out


def fmt_quantity(resource: str, amount: int) -> str:
    """An amount as kubectl writes it: cpu in cores or millicores, bytes in binary units."""
    if resource == "cpu":
        if amount % 1000 == 0:
            return str(amount // 1000)
        return f"{amount}m" if amount < 1000 else f"{amount / 1000:.3f}".rstrip("0").rstrip(".")
    if resource in _BYTES or resource.startswith("hugepages-"):
        for unit, exp in (("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
            if amount >= 1 << exp:
                v = amount / (1 << exp)
                return f"{v:.0f}{unit}" if amount % (1 << exp) == 0 else f"{v:.1f}{unit}"
    return str(amount)


def _round_down(resource: str, amount: int) -> int:
    if resource in _BYTES:
        return amount - amount % _MI
    return amount


def _quantity(resource: str, amount: int) -> str:
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if resource in _BYTES:
        if amount % (1 << 30) == 0:
            return f"{amount >> 30}Gi"
        if amount % _MI == 0:
            return f"{amount >> 20}Mi"
    return str(amount)


def _lower_request(pod: Pod, raw: dict, resource: str, target: int):
    """A change making the pod's effective request for `resource` `target`: the pod-level request
    when it has one, else the largest app container's (requests only go down, so they stay within
    limits; extended resources and hugepages, whose request must equal the limit, both)."""
    spec = raw.get("spec") or {}
    want = pod.requests.get(resource)
    cut = want - target
    if cut <= 0:
        return None
    both = resource not in ("cpu", *_BYTES)
    pod_level = _dict(_dict(spec.get("resources")).get("requests"))
    if resource in pod.pod_level_requests and resource in pod_level:
        new = pod.pod_level_requests[resource] - cut
        if new <= 0:
            return None

        def pod_level_mutate(raw: dict) -> None:
            s = _spec(raw)
            res = dict(s.get("resources") or {})
            res["requests"] = {**(res.get("requests") or {}), resource: _quantity(resource, new)}
            if both and resource in (res.get("limits") or {}):
                res["limits"] = {**res["limits"], resource: _quantity(resource, new)}
            s["resources"] = res

        return pod_level_mutate
    from ...api import quantity

    def amount_of(c: dict) -> int:
        res = _dict(c.get("resources"))
        q = _dict(res.get("requests")).get(resource, _dict(res.get("limits")).get(resource))
        if q is None:
            return 0
        nanos = quantity.parse(q, resource)
        return quantity.milli_value(nanos) if resource == "cpu" else quantity.value(nanos)

    containers = _list(spec.get("containers"))
    amounts = [amount_of(c) if isinstance(c, dict) else 0 for c in containers]
    if not amounts or max(amounts) <= 0:
        return None
    k = amounts.index(max(amounts))
    new = amounts[k] - cut
    if new <= 0:
        return None

    def mutate(raw: dict) -> None:
        s = _spec(raw)
        cs = [dict(c) for c in s["containers"]]
        res = dict(cs[k].get("resources") or {})
        res["requests"] = {**(res.get("requests") or {}), resource: _quantity(resource, new)}
        if both and resource in (res.get("limits") or {}):
            res["limits"] = {**res["limits"], resource: _quantity(resource, new)}
        cs[k]["resources"] = res
        s["containers"] = cs

    return mutate


def lower_requests_together(pod: Pod, raw: dict, amounts: dict[str, int], node: str) -> Change | None:
    """One change lowering several requests to what one node has free (for when no single request
    suffices)."""
    steps = []
    for r, free in sorted(amounts.items()):
        amount = _round_down(r, free)
        m = _lower_request(pod, raw, r, amount) if amount > 0 else None
        if m is None:
            return None
        steps.append((r, amount, m))

    def mutate(raw: dict) -> None:
        for _, _, m in steps:
            m(raw)

    words = " and ".join(
        f"{r} from {fmt_quantity(r, pod.requests.get(r))} to {fmt_quantity(r, a)}" for r, a, _ in steps
    )
    return Change("resources", f"lower the requests: {words} (what {node} has free)", mutate, opens=1)


# -------------------------------------------------------------------------- host ports


def host_port_changes(blocked: Blocked, pod: Pod, raw: dict) -> list[Change]:
    """Ask for no host port (the containers keep their container ports) when the ports alone are
    in the way somewhere. Not for hostNetwork pods: their ports are the host's."""
    if pod.host_network or not blocked.nodes_failing_within({"NodePorts"}):
        return []
    ports = sorted({f"{hp}/{proto}" for _, proto, hp in pod.host_ports})
    if not ports:
        return []
    opened = blocked.nodes_failing_within({"NodePorts"})

    def mutate(raw: dict) -> None:
        s = _spec(raw)
        for group in ("containers", "initContainers"):
            cs = s.get(group)
            if not isinstance(cs, list):
                continue
            new = []
            for c in cs:
                c = dict(c)
                if isinstance(c.get("ports"), list):
                    c["ports"] = [{k: v for k, v in p.items() if k not in ("hostPort", "hostIP")} for p in c["ports"]]
                new.append(c)
            s[group] = new

    return [
        Change(
            "hostPorts",
            f"free the host port{'s' if len(ports) > 1 else ''} {', '.join(ports)} "
            f"(in use on {_opening(len(opened), [blocked.names[i] for i in opened])})",
            mutate,
            opens=len(opened),
        )
    ]


# --------------------------------------------------------------------- topology spread


def spread_changes(blocked: Blocked, pod: Pod, raw: dict) -> list[Change]:
    """For each DoNotSchedule constraint: maxSkew one higher, minDomains dropped (when set), or
    ScheduleAnyway (the constraint then only weighs on the score)."""
    if "PodTopologySpread" not in blocked.plugins():
        return []
    cs = (raw.get("spec") or {}).get("topologySpreadConstraints")
    if not isinstance(cs, list):
        return []
    out = []
    for i, c in enumerate(cs):
        if not isinstance(c, dict) or c.get("whenUnsatisfiable") != "DoNotSchedule":
            continue
        key = c.get("topologyKey")
        skew = c.get("maxSkew")
        if isinstance(skew, int) and not isinstance(skew, bool):
            out.append(
                Change(
                    "topologySpread",
                    f"raise maxSkew of the spread over {key} from {skew} to {skew + 1}",
                    _spread_set(i, "maxSkew", skew + 1),
                )
            )
        if c.get("minDomains") is not None:
            out.append(
                Change(
                    "topologySpread", f"drop minDomains of the spread over {key}", _spread_set(i, "minDomains", None)
                )
            )
        out.append(
            Change(
                "topologySpread",
                f"make the spread over {key} ScheduleAnyway (a preference)",
                _spread_set(i, "whenUnsatisfiable", "ScheduleAnyway", drop="minDomains"),
            )
        )
    return out


def _spread_set(i: int, key: str, value: Any, drop: str | None = None):
    def mutate(raw: dict) -> None:
        s = _spec(raw)
        cs = [dict(c) for c in s["topologySpreadConstraints"]]
        if value is None:
            cs[i].pop(key, None)
        else:
            cs[i][key] = value
        if drop:
            cs[i].pop(drop, None)  # minDomains is allowed only with DoNotSchedule
        s["topologySpreadConstraints"] = cs

    return mutate


# ------------------------------------------------------------------- inter-pod affinity


def affinity_changes(blocked: Blocked, pod: Pod, raw: dict) -> list[Change]:
    """Make one required pod (anti-)affinity term preferred (weight 100): the scheduler still
    favours it, no longer insists."""
    if "InterPodAffinity" not in blocked.plugins():
        return []
    aff = (raw.get("spec") or {}).get("affinity")
    if not isinstance(aff, dict):
        return []
    out = []
    for kind, word in (("podAntiAffinity", "anti-affinity"), ("podAffinity", "affinity")):
        part = aff.get(kind)
        terms = part.get(REQUIRED) if isinstance(part, dict) else None
        if not isinstance(terms, list):
            continue
        for i, t in enumerate(terms):
            if not isinstance(t, dict):
                continue
            sel = _dict(t.get("labelSelector"))
            labels = ",".join(f"{k}={v}" for k, v in sorted(_dict(sel.get("matchLabels")).items()))
            what = f" ({labels} per {t.get('topologyKey')})" if labels else f" (per {t.get('topologyKey')})"
            out.append(Change(kind, f"make the required pod {word} term{what} preferred", _soften(kind, i)))
    return out


def _soften(kind: str, i: int):
    def mutate(raw: dict) -> None:
        s = _spec(raw)
        aff = dict(s["affinity"])
        part = dict(aff[kind])
        req = list(part[REQUIRED])
        term = req.pop(i)
        if req:
            part[REQUIRED] = req
        else:
            part.pop(REQUIRED)
        part[PREFERRED] = list(part.get(PREFERRED) or []) + [{"weight": 100, "podAffinityTerm": term}]
        aff[kind] = part
        s["affinity"] = aff

    return mutate


# ------------------------------------------------------------------------- priority


def priority_changes(pod: Pod, priorities: dict[str, tuple[int, str | None]]) -> list[Change]:
    """The PriorityClasses of the cluster above the pod's priority, lowest first (the system-
    classes are the cluster's own, never a workload's fix)."""
    classes = sorted(
        (value, name)
        for name, (value, _) in priorities.items()
        if value > pod.priority and not name.startswith("system-")
    )
    out = []
    for value, name in classes:
        out.append(
            Change(
                "priorityClass",
                f"give it the PriorityClass {name} (priority {value}, from {pod.priority}): preemption can evict "
                "lower-priority pods",
                _priority_class(name),
            )
        )
    return out


def _priority_class(name: str):
    def mutate(raw: dict) -> None:
        s = _spec(raw)
        s["priorityClassName"] = name
        # Priority admission refuses a pod whose priority (or preemption policy) is set and differs
        # from its class's: the class decides both
        s.pop("priority", None)
        if s.get("preemptionPolicy") == "Never":
            s.pop("preemptionPolicy")

    return mutate


# ------------------------------------------------------------------- one node's blockers


def change_for_node(plugin: str, pod: Pod, raw: dict, node_info, fit) -> Change | None:
    """The pod change that lifts `plugin`'s rejection on this one node, when there is a simple
    one (for pairing two such changes aimed at the same node)."""
    node = node_info.node
    if plugin == "TaintToleration":
        taints = untolerated(pod, node)
        if not taints or any(is_system_taint(k) for k, _, _ in taints):
            return None
        words = ", ".join(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in taints)
        return Change(
            "toleration",
            f"tolerate the taint{'s' if len(taints) > 1 else ''} {words} (of {node.name})",
            mutate=_add_tolerations([_toleration(k, v, e) for k, v, e in taints]),
        )
    if plugin == "NodeResourcesFit" and fit is not None and hasattr(fit, "insufficient"):
        short = fit.insufficient(pod, node_info)
        if len(short) != 1 or short[0].resource == "pods":
            return None
        r = short[0].resource
        amount = _round_down(r, short[0].capacity - short[0].used)
        mutate = _lower_request(pod, raw, r, amount) if amount > 0 else None
        if mutate is None:
            return None
        return Change(
            "resources",
            f"lower the {r} request from {fmt_quantity(r, pod.requests.get(r))} to {fmt_quantity(r, amount)} "
            f"(what {node.name} has free)",
            mutate,
        )
    if plugin == "NodeAffinity" and pod.required_node_affinity is None:
        wrong = [k for k, v in sorted(pod.node_selector.items()) if node.labels.get(k) != v]
        if len(wrong) != 1:
            return None
        return Change(
            "nodeSelector",
            f"drop the nodeSelector entry {wrong[0]}={pod.node_selector[wrong[0]]}",
            _drop_selector(wrong[0]),
        )
    return None
