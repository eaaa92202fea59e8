"""What the views show, computed once from a cycle's result: node groups, resource, taint and node
affinity breakdowns, the cluster events that would make kube-scheduler retry the pod.

Everything here is plain data (JSON-ready); the terminal views and the JSON/YAML documents both
read it, so `-o json` carries what the tables show. It must be computed right after the cycle (before
the pod is bound), because it reads the snapshot as the cycle saw it.
"""

from __future__ import annotations

from typing import Any

from ..framework.status import SUCCESS

# Above this many nodes, the filter matrix groups nodes that got the same verdicts (unless --all-nodes).
GROUP_THRESHOLD = 12


# -------------------------------------------------------------------- formatting of quantities


def fmt_cpu(milli: int) -> str:
    """Millicores as kubectl writes them: 250m, 2, 2.26."""
    if milli % 1000 == 0:
        return str(milli // 1000)
    if milli < 1000:
        return f"{milli}m"
    return f"{milli / 1000:.3f}".rstrip("0").rstrip(".")


def fmt_bytes(n: int) -> str:
    """Bytes in binary units, short: 512Mi, 1.5Gi, 30Gi."""
    if n == 0:
        return "0"
    for unit, exp in (("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
        size = 1 << exp
        if abs(n) >= size:
            v = n / size
            if n % size == 0:
                return f"{n // size}{unit}"
            return f"{v:.1f}".rstrip("0").rstrip(".") + unit
    return str(n)


def fmt_quantity(resource: str, amount: int) -> str:
    if resource == "cpu":
        return fmt_cpu(amount)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return fmt_bytes(amount)
    return str(amount)


def fmt_requests(requests: dict[str, int]) -> str:
    return ", ".join(f"{k} {fmt_quantity(k, v)}" for k, v in requests.items())


def short_reason(reason: str) -> str:
    """A filter reason for a table cell: kube-scheduler's text without its `node(s) had|were` prefix."""
    if reason.startswith("node(s) "):
        reason = reason[8:]
        for verb in ("had ", "were "):
            if reason.startswith(verb):
                return reason[len(verb) :]
    return reason


# -------------------------------------------------------------------- node groups


def filter_columns(result) -> list[str]:
    """The filter table's columns in calling order: the profile's filter plugins, then the HTTP
    extenders that filtered (kube-scheduler asks them after the plugins)."""
    return [*result.filter_plugins, *getattr(result, "filter_extenders", ())]


def _status_key(st) -> tuple:
    if st is None:
        return (SUCCESS,)
    return (st.code, tuple(st.reasons))


def node_groups(result) -> list[dict]:
    """Nodes that got the same verdict from every filter plugin, feasible ones first, then by size.

    Each group: nodes (sorted), count, feasible, firstFailure {plugin, code, reasons} or None,
    alsoFailing [{plugin, code, reasons}] (plugins after the first failure that reject the node too),
    skipped [plugin] (PreFilter returned Skip: the plugin's Filter did not run)."""
    groups: dict[tuple, dict] = {}
    for name in sorted(result.filters):
        nf = result.filters[name]
        ff = nf.first_failure
        row = tuple((p, _status_key(nf.plugins.get(p)) if p in nf.plugins else ("-",)) for p in filter_columns(result))
        key = (_status_key(ff), ff.plugin if ff is not None else "", row)
        g = groups.get(key)
        if g is None:
            also = []
            for p in filter_columns(result):
                st = nf.plugins.get(p)
                if st is not None and not st.is_success() and (ff is None or p != ff.plugin):
                    also.append({"plugin": p, "code": st.code, "reasons": list(st.reasons)})
            g = groups[key] = {
                "nodes": [],
                "count": 0,
                "feasible": ff is None,
                "firstFailure": None
                if ff is None
                else {"plugin": ff.plugin, "code": ff.code, "reasons": list(ff.reasons)},
                "alsoFailing": also,
                "skipped": [p for p in filter_columns(result) if p not in nf.plugins],
            }
        g["nodes"].append(name)
        g["count"] += 1
    order = {p: i for i, p in enumerate(filter_columns(result))}

    def sort_key(g):
        ff = g["firstFailure"]
        return (
            not g["feasible"],
            -g["count"],
            order.get(ff["plugin"], 99) if ff else -1,
            ff["reasons"] if ff else [],
            g["nodes"][0],
        )

    return sorted(groups.values(), key=sort_key)


def failing_plugins(result) -> list[str]:
    """Filter plugins, in profile order, that rejected at least one node (not only as first failure)."""
    seen = set()
    for nf in result.filters.values():
        for p, st in nf.plugins.items():
            if st is not None and not st.is_success():
                seen.add(p)
        if nf.first_failure is not None and nf.first_failure.plugin:
            seen.add(nf.first_failure.plugin)
    return [p for p in filter_columns(result) if p in seen]


def rejecting_plugins(result) -> list[str]:
    """The plugins kube-scheduler records as having rejected the pod (its UnschedulablePlugins):
    the PreFilter (or PreEnqueue) that rejected it, else each node's first failing filter."""
    out: list[str] = []
    if result.pre_filter is not None and result.pre_filter.plugin:
        out.append(result.pre_filter.plugin)
    else:
        for nf in result.filters.values():
            ff = nf.first_failure
            if ff is not None and ff.plugin and ff.plugin not in out:
                out.append(ff.plugin)
    order = {p: i for i, p in enumerate(filter_columns(result))}
    return sorted(out, key=lambda p: (order.get(p, -1), p))


# -------------------------------------------------------------------- breakdowns


def resource_rows(pod, node_info, fit_plugin=None) -> list[dict]:
    """Per resource the pod requests (and pods): request, allocatable, requested, free, fits."""
    alloc = node_info.node.allocatable
    used = node_info.requested
    short = set()
    if fit_plugin is not None and hasattr(fit_plugin, "insufficient"):
        try:
            short = {i.resource for i in fit_plugin.insufficient(pod, node_info)}
        except Exception:  # explanations never fail the command
            short = set()
    rows = []
    npods = len(node_info.pods)
    rows.append(
        {
            "resource": "pods",
            "request": 1,
            "allocatable": alloc.allowed_pods,
            "requested": npods,
            "free": alloc.allowed_pods - npods,
            "fits": "pods" not in short,
        }
    )
    req = pod.requests
    names = ["cpu", "memory"]
    if req.ephemeral_storage:
        names.append("ephemeral-storage")
    names += sorted(k for k, v in req.scalars.items() if v)
    for r in names:
        want = req.get(r)
        have = alloc.get(r)
        u = used.get(r)
        fits = r not in short if fit_plugin is not None else (want == 0 or want <= have - u)
        rows.append(
            {"resource": r, "request": want, "allocatable": have, "requested": u, "free": have - u, "fits": fits}
        )
    return rows


ROOM_ELSEWHERE = 8  # nodes with room another plugin rejected, listed beside those short of it


def resources_breakdown(result, snapshot, framework, limit: int | None = None) -> dict[str, list[dict]]:
    """Resource rows for the nodes NodeResourcesFit rejected and for the selected node; for a pod
    that fits nowhere, also for the first few nodes (by name) where it has room but another plugin
    rejected it: the room is there, something else is in the way (room_rejected_by names it)."""
    fit = framework.plugins.get("NodeResourcesFit") if framework is not None else None
    names = []
    for name in sorted(result.filters):
        st = result.filters[name].plugins.get("NodeResourcesFit")
        if st is not None and not st.is_success():
            names.append(name)
    if result.selected_node and result.selected_node not in names:
        names.append(result.selected_node)
    names += list(room_rejected_by(result))
    out = {}
    for name in names[:limit] if limit else names:
        ni = snapshot.get(name)
        if ni is not None:
            out[name] = resource_rows(result.pod, ni, fit)
    return out


def room_rejected_by(result, limit: int = ROOM_ELSEWHERE) -> dict[str, str]:
    """For a pod that fits nowhere: up to `limit` nodes (by name) NodeResourcesFit passed, each with
    the plugin that rejected it."""
    if result.schedulable or "NodeResourcesFit" not in result.filter_plugins:
        return {}
    ft = result.filters
    columns = getattr(ft, "columns", None)
    if columns is None or "NodeResourcesFit" not in columns:
        return {}
    fit_col = columns["NodeResourcesFit"]
    out: dict[str, str] = {}
    for name in sorted(ft):
        i = ft.index[name]
        st = fit_col[i]
        first = ft.first[i]
        if (st is None or st.is_success()) and first is not None:
            out[name] = first.plugin
            if len(out) >= limit:
                break
    return out


def untolerated_taints(pod, node) -> list[dict]:
    out = []
    for t in node.taints:
        if t.effect not in ("NoSchedule", "NoExecute"):
            continue
        if any(tol.tolerates(t.key, t.value, t.effect) for tol in pod.tolerations):
            continue
        out.append({"key": t.key, "value": t.value, "effect": t.effect, "taint": str(t)})
    return out


def taints_breakdown(result, snapshot) -> dict[str, list[dict]]:
    """For nodes TaintToleration rejected: every NoSchedule/NoExecute taint the pod does not tolerate
    (kube-scheduler names only the first one)."""
    out = {}
    for name in sorted(result.filters):
        st = result.filters[name].plugins.get("TaintToleration")
        if st is None or st.is_success():
            continue
        ni = snapshot.get(name)
        if ni is not None:
            out[name] = untolerated_taints(result.pod, ni.node)
    return out


def _requirement_doc(r, labels: dict) -> dict:
    values = sorted(r.values) if r.op not in ("Gt", "Lt") else [str(v) for v in r.values]
    return {
        "key": r.key,
        "operator": r.op,
        "values": values,
        "nodeValue": labels.get(r.key),
        "matches": r.matches(labels),
    }


def node_affinity_breakdown(result, snapshot) -> dict[str, dict]:
    """For nodes NodeAffinity rejected: each nodeSelector pair and required term against the node's labels."""
    pod = result.pod
    out = {}
    for name in sorted(result.filters):
        st = result.filters[name].plugins.get("NodeAffinity")
        if st is None or st.is_success():
            continue
        ni = snapshot.get(name)
        if ni is None:
            continue
        labels = ni.node.labels
        d: dict[str, Any] = {}
        if pod.node_selector:
            d["nodeSelector"] = [
                {"key": k, "want": v, "nodeValue": labels.get(k), "matches": labels.get(k) == v}
                for k, v in sorted(pod.node_selector.items())
            ]
        req = pod.required_node_affinity
        if req is not None:
            terms = []
            for t in req.terms:
                exprs = [_requirement_doc(r, labels) for r in t.expressions]
                fields = [_requirement_doc(r, {"metadata.name": name}) for r in t.fields]
                terms.append({"matchExpressions": exprs, "matchFields": fields, "matches": t.matches(labels, name)})
            d["requiredTerms"] = terms
        if not d:
            d["enforced"] = True  # the profile's addedAffinity rejected it
        out[name] = d
    return out


# -------------------------------------------------------------------- retry events


def retry_events(result, framework) -> dict[str, list[dict]]:
    """Per rejecting plugin, the cluster events it registers (EventsToRegister): the changes after
    which kube-scheduler moves the pod back to the active queue to try again."""
    if framework is None or result.schedulable:
        return {}
    out = {}
    for name in rejecting_plugins(result):
        pl = framework.plugins.get(name)
        if pl is None:
            continue
        try:
            events = pl.events_to_register() or []
        except Exception:
            events = []
        out[name] = [{"resource": e.resource, "action": e.action, "hint": e.hint} for e in events]
    return out


# -------------------------------------------------------------------- putting it together


def pod_info(pod) -> dict:
    d = {
        "namespace": pod.namespace,
        "name": pod.name,
        "priority": pod.priority,
        "priorityClassName": pod.priority_class_name or None,
        "preemptionPolicy": pod.preemption_policy,
        "schedulerName": pod.scheduler_name,
        "requests": pod.requests.as_dict(),
    }
    return d


def annotate(result, session) -> dict:
    """Compute the view data for a result and keep it on the result (result.annotations)."""
    snapshot = session.scheduler.snapshot
    framework = session.scheduler.frameworks.get(result.profile)
    ann: dict[str, Any] = {"nodeCount": len(snapshot.list())}
    if framework is not None and not result.error:
        if not result.events:
            result.events = retry_events(result, framework)
        ann["nodeGroups"] = node_groups(result)
        ann["failingPlugins"] = failing_plugins(result)
        ann["resources"] = resources_breakdown(result, snapshot, framework)
        ann["roomRejectedBy"] = room_rejected_by(result)
        ann["taints"] = taints_breakdown(result, snapshot)
        ann["nodeAffinity"] = node_affinity_breakdown(result, snapshot)
        if result.selected_node:
            ann["selectedScore"] = result.totals.get(result.selected_node)
    result.annotations = ann
    return ann


def annotations_of(result) -> dict:
    return getattr(result, "annotations", None) or {}


def verdict_of(result) -> str:
    """schedulable | preemption | unschedulable | error."""
    if result.error:
        return "error"
    if result.schedulable:
        return "schedulable"
    p = result.preemption
    if p is not None and p.nominated_node:
        return "preemption"
    return "unschedulable"
