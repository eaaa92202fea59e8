"""What the views show, computed once from a cycle's result: node groups, resource, taint and node
affinity breakdowns, the cluster events that would make kube-scheduler retry the pod.

Everything here is plain data (JSON-ready); the terminal views and the JSON/YAML documents both
read it, so `-o json` carries what the tables show. It must be computed right after the cycle (before
the pod is bound), because it reads the snapshot as the cycle saw it.
"""

from __future__ import annotations

from typing import Any

from ..framework.result import NOT_ASKED, FilterTable
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


def _grouping(result) -> tuple[list[str], list[tuple], Any]:
    """(node names sorted, each one's grouping key, row(k): the k-th node's (first failure,
    {plugin: status} of the plugins that ran)). A FilterTable is read column by column, each
    distinct status object classified once, and no row is made but a group's first."""
    ft = result.filters
    if not isinstance(ft, FilterTable):
        names = sorted(ft)
        rows = [ft[n] for n in names]
        keys = []
        for nf in rows:
            ff = nf.first_failure
            verdicts = tuple(
                (p, _status_key(nf.plugins.get(p)) if p in nf.plugins else ("-",)) for p in filter_columns(result)
            )
            keys.append((_status_key(ff), ff.plugin if ff is not None else "", verdicts))
        return names, keys, lambda k: (rows[k].first_failure, rows[k].plugins)
    classes: dict[tuple, int] = {}

    def classify(col: list, with_plugin: bool = False) -> list[int]:
        by_id = {}
        for st in set(col):
            if st is NOT_ASKED:  # an extender never sent the node: as a plugin that did not run
                by_id[id(st)] = classes.setdefault(("-",), len(classes))
                continue
            c = _status_key(st)
            if with_plugin:
                c = (c, st.plugin if st is not None else "")
            by_id[id(st)] = classes.setdefault(c, len(classes))
        return list(map(by_id.__getitem__, map(id, col)))

    order = sorted(range(len(ft.names)), key=ft.names.__getitem__)
    # a plugin whose PreFilter skipped it has no column: the same for every node, so not in the key
    ran = [p for p in filter_columns(result) if p in ft.columns]
    keyed = list(zip(classify(ft.first, True), *(classify(ft.columns[p]) for p in ran)))

    def row(k: int) -> tuple:
        i = order[k]
        return ft.first[i], {p: col[i] for p, col in ft.columns.items() if col[i] is not NOT_ASKED}

    return [ft.names[i] for i in order], [keyed[i] for i in order], row


def node_groups(result) -> list[dict]:
    """Nodes that got the same verdict from every filter plugin, feasible ones first, then by size.

    Each group: nodes (sorted), count, feasible, firstFailure {plugin, code, reasons} or None,
    alsoFailing [{plugin, code, reasons}] (plugins after the first failure that reject the node too),
    skipped [plugin] (PreFilter returned Skip: the plugin's Filter did not run)."""
    names, keys, row = _grouping(result)
    groups: dict[tuple, dict] = {}
    for k, (name, key) in enumerate(zip(names, keys)):
        g = groups.get(key)
        if g is None:
            ff, plugins = row(k)
            also = []
            for p in filter_columns(result):
                st = plugins.get(p)
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
                "skipped": [p for p in filter_columns(result) if p not in plugins],
            }
        g["nodes"].append(name)
    for g in groups.values():
        g["count"] = len(g["nodes"])
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


def first_failures(result) -> list[tuple[str, list[str], int]]:
    """(plugin, reasons, nodes) for each distinct first failure among the filtered nodes (the
    infeasible node groups' firstFailure, summed), in the order first met."""
    ft = result.filters
    firsts = ft.first if isinstance(ft, FilterTable) else [nf.first_failure for nf in ft.values()]
    counts: dict[int, int] = {}
    for f in firsts:
        if f is not None:
            counts[id(f)] = counts.get(id(f), 0) + 1
    objs = {id(f): f for f in set(firsts) if f is not None}
    merged: dict[tuple, list] = {}
    for k, n in counts.items():
        f = objs[k]
        key = (f.plugin, tuple(f.reasons))
        m = merged.get(key)
        if m is None:
            merged[key] = [f.plugin, list(f.reasons), n]
        else:
            m[2] += n
    return [(p, r, n) for p, r, n in merged.values()]


def _not_success(col) -> bool:
    for st in set(col):
        if st is not None and st is not NOT_ASKED and not st.is_success():
            return True
    return False


def rejected_nodes(result, plugin: str) -> list[str]:
    """The nodes (sorted) whose `plugin` filter returned a status other than Success."""
    ft = result.filters
    if isinstance(ft, FilterTable):
        col = ft.columns.get(plugin)
        if col is None:
            return []
        bad = {id(st) for st in set(col) if st is not None and st is not NOT_ASKED and not st.is_success()}
        if not bad:
            return []
        return sorted(n for n, st in zip(ft.names, col) if id(st) in bad)
    out = []
    for name in sorted(ft):
        st = ft[name].plugins.get(plugin)
        if st is not None and not st.is_success():
            out.append(name)
    return out


def failing_plugins(result) -> list[str]:
    """Filter plugins, in profile order, that rejected at least one node (not only as first failure)."""
    seen = set()
    ft = result.filters
    if isinstance(ft, FilterTable):
        seen = {p for p, col in ft.columns.items() if _not_success(col)}
        seen.update(f.plugin for f in set(ft.first) if f is not None and f.plugin)
    else:
        for nf in ft.values():
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
        ft = result.filters
        firsts = set(ft.first) if isinstance(ft, FilterTable) else {nf.first_failure for nf in ft.values()}
        out = list({ff.plugin for ff in firsts if ff is not None and ff.plugin})
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
    npods = node_info.pod_count()
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
    names = rejected_nodes(result, "NodeResourcesFit")
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
    out: dict[str, str] = {}
    for name, plugin in _room_rejected(result):
        if len(out) >= limit:
            break
        out[name] = plugin
    return out


def room_rejected_count(result) -> int:
    """How many nodes room_rejected_by would name without its limit."""
    return sum(1 for _ in _room_rejected(result))


def _room_rejected(result):
    if result.schedulable or "NodeResourcesFit" not in result.filter_plugins:
        return
    ft = result.filters
    columns = getattr(ft, "columns", None)
    if columns is None or "NodeResourcesFit" not in columns:
        return
    fit_col = columns["NodeResourcesFit"]
    for name in sorted(ft):
        i = ft.index[name]
        st = fit_col[i]
        first = ft.first[i]
        if (st is None or st.is_success()) and first is not None:
            yield name, first.plugin


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
    for name in rejected_nodes(result, "TaintToleration"):
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
    for name in rejected_nodes(result, "NodeAffinity"):
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


# What a view reads of the analysis; annotate computes only the parts asked for.
GROUPS = "groups"  # nodeGroups, failingPlugins
BREAKDOWNS = "breakdowns"  # resources, roomRejectedBy, taints, nodeAffinity
EVENTS = "events"  # result.events: the cluster events that would bring the pod back (retryOn)
FIRST_FAILURES = "firstFailures"  # the distinct first failures and their node counts (schedule's table)
ALL = frozenset({GROUPS, BREAKDOWNS, EVENTS})


def annotate(result, session, parts: frozenset[str] = ALL) -> dict:
    """Compute the view data for a result and keep it on the result (result.annotations): the
    `parts` its view shows. The breakdowns read the nodes as the cycle saw them: they are computed
    right after the cycle, before the pod is bound."""
    snapshot = session.scheduler.snapshot
    framework = session.scheduler.frameworks.get(result.profile)
    ann: dict[str, Any] = {"nodeCount": len(snapshot.list())}
    if framework is not None and not result.error:
        if EVENTS in parts and not result.events:
            result.events = retry_events(result, framework)
        if GROUPS in parts:
            ann["nodeGroups"] = node_groups(result)
            ann["failingPlugins"] = failing_plugins(result)
        if BREAKDOWNS in parts:
            ann["resources"] = resources_breakdown(result, snapshot, framework)
            ann["roomRejectedBy"] = room_rejected_by(result)
            omitted = room_rejected_count(result) - len(ann["roomRejectedBy"]) if ann["roomRejectedBy"] else 0
            if omitted > 0:
                ann["roomRejectedByOmitted"] = omitted
            ann["taints"] = taints_breakdown(result, snapshot)
            ann["nodeAffinity"] = node_affinity_breakdown(result, snapshot)
        if FIRST_FAILURES in parts:
            ann["firstFailures"] = first_failures(result)
        if result.selected_node:
            ann["selectedScore"] = result.totals.get(result.selected_node)
    result.annotations = ann
    return ann


def slim(result) -> None:
    """Drop a result's per-node tables once its view data is computed: a long sequence on a large
    cluster would otherwise hold every node's verdict of every cycle. The selected node's total stays."""
    sel = result.selected_node
    result.filters, result.scores, result.details = {}, {}, {}
    result.totals = {sel: result.totals[sel]} if sel in result.totals else {}


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
