"""One report per command, built from the answer's `-o json` document and its utilization (the
Session answer's `utilization()`): explain, capacity, diff, sweep and scale-up."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from . import charts
from .page import Page, h, span, table_html
from .utilization import group_of, utilization_section

TOP_ROWS = 25  # rows of a score, scenario or pod table before "+N more"
FILTER_GROUPS = 60  # node groups of the filter matrix
BARS = 40  # bars of one chart


def _fmt_failure(ff: dict | None) -> str:
    if not ff:
        return ""
    return f"{ff.get('plugin', '')}: {'; '.join(ff.get('reasons') or []) or ff.get('code', '')}"


def _names(names: list[str], shown: int = 3) -> str:
    if len(names) <= shown:
        return ", ".join(names)
    return ", ".join(names[:shown]) + f", … +{len(names) - shown} more"


def _bars_figure(page: Page, values: list[dict], caption: str, table: str, **kw: Any) -> None:
    """A bar chart of at most BARS categories (the first), the rest counted in the caption."""
    cats = list(dict.fromkeys(v["category"] for v in values))
    if not cats:
        return
    kept = set(cats[:BARS])
    shown = [v for v in values if v["category"] in kept]
    if len(cats) > BARS:
        caption += f"; the first {BARS} drawn, +{len(cats) - BARS} more in the table"
    page.figure(charts.to_svg(charts.bars(shown, title=caption, **kw)), caption, table)


# ----------------------------------------------------------------------------------------- explain


def explain_report(page: Page, doc: dict, usage: dict) -> None:
    verdict = doc.get("verdict", "")
    nodes = doc.get("nodeCount", len(doc.get("filters") or {}))
    feasible = doc.get("feasibleNodes") or []
    if verdict == "schedulable":
        text = f"schedulable → {doc.get('selectedNode')} (score {doc.get('selectedScore')}); "
        text += f"{len(feasible)} of {nodes} nodes feasible"
    elif verdict == "preemption":
        nominated = (doc.get("preemption") or {}).get("nominatedNode")
        text = f"fits only by preemption (on {nominated}): {doc.get('message', '')}"
    else:
        text = f"{verdict}: {doc.get('message', '')}"
    page.verdict(text, verdict == "schedulable")
    req = doc.get("requests") or {}
    facts = [
        ("pod", doc.get("pod")),
        ("profile", doc.get("profile")),
        ("priority", f"{doc.get('priority')} ({doc.get('priorityClassName') or 'no class'})"),
        ("requests", ", ".join(f"{k} {_amount(k, v)}" for k, v in req.items()) or "none"),
    ]
    page.add(table_html(["", ""], facts))
    _filter_matrix(page, doc)
    _score_table(page, doc)
    _spread(page, doc)
    _affinity(page, doc)
    selected = doc.get("selectedNode")
    nominated = (doc.get("preemption") or {}).get("nominatedNode")
    filtered = set(doc.get("filters") or {})
    feasible_set = set(feasible)
    prefilter_rejected = bool(doc.get("preFilter"))

    def fit(name: str) -> str:
        if name in (selected, nominated):
            return "selected"
        if name in feasible_set:
            return "feasible"
        if name in filtered or prefilter_rejected:
            return "filtered"
        return "not in this run"

    utilization_section(
        page,
        usage,
        fit=fit,
        note="The cluster as the pod met it (before it is bound). The first column is the pod's fit on the "
        "node: selected (or nominated by preemption), feasible, filtered out, or not evaluated (node sampling).",
    )


def _amount(resource: str, value: Any) -> str:
    from .utilization import amount

    return amount(resource, value) if isinstance(value, int) else str(value)


def _filter_matrix(page: Page, doc: dict) -> None:
    groups = doc.get("nodeGroups") or []
    plugins = doc.get("filterPlugins") or []
    page.heading("Filters", ident="filters")
    if doc.get("preFilter"):
        page.para(f"PreFilter rejected the pod: {_fmt_failure(doc['preFilter'])}")
    if not groups:
        page.para("No node was filtered.", "note")
        return
    page.para(
        "Alike nodes grouped, as the terminal groups them: ▶ the first failure (what kube-scheduler reports), "
        "✗ also rejects, ✓ passes, – not run.",
        "note",
    )
    rows = []
    for g in groups:
        first = (g.get("firstFailure") or {}).get("plugin")
        also = {a.get("plugin") if isinstance(a, dict) else a for a in g.get("alsoFailing") or []}
        skipped = set(g.get("skipped") or [])
        cells: list[Any] = [
            f"{g.get('count', len(g['nodes']))} node(s): {_names(g['nodes'])}",
            "feasible" if g.get("feasible") else _fmt_failure(g.get("firstFailure")),
        ]
        for p in plugins:
            if p == first:
                cells.append(span("▶", "mark-first"))
            elif p in also:
                cells.append(span("✗", "mark-first"))
            elif p in skipped:
                cells.append("–")
            else:
                cells.append(span("✓", "mark-pass"))
        rows.append(cells)
    page.table(["nodes", "verdict", *plugins], rows, keep=FILTER_GROUPS, what="node groups", cls="matrix")


def _score_table(page: Page, doc: dict) -> None:
    scores = doc.get("scores") or {}
    if not scores:
        return
    plugins = doc.get("scorePlugins") or []
    used = [p for p in plugins if any(p in (s.get("plugins") or {}) for s in scores.values())]
    page.heading("Scores", ident="scores")
    page.para("Weighted scores, best first (normalized × weight); ▶ the selected node.", "note")
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1].get("total", 0), kv[0]))
    rows = []
    for name, s in ranked:
        ps = s.get("plugins") or {}
        mark = "▶ " if name == doc.get("selectedNode") else ""
        rows.append([mark + name, *(ps[p]["weighted"] if p in ps else "–" for p in used), s.get("total", "")])
    headers = ["node", *(f"{p} ×{_weight(scores, p)}" for p in used), "total"]
    page.table(headers, rows, keep=TOP_ROWS, what="feasible nodes", numeric=range(1, len(headers)))


def _weight(scores: dict, plugin: str) -> Any:
    for s in scores.values():
        p = (s.get("plugins") or {}).get(plugin)
        if p is not None:
            return p.get("weight", "")
    return ""


def _spread(page: Page, doc: dict) -> None:
    d = (doc.get("details") or {}).get("PodTopologySpread") or {}
    constraints = (d.get("filter") or {}).get("constraints") or []
    scoring = (d.get("score") or {}).get("constraints") or []
    if not constraints and not scoring:
        return
    page.heading("Topology spread", ident="spread")
    for c in constraints:
        domains = c.get("domains") or {}
        title = (
            f"{c.get('topologyKey')} maxSkew {c.get('maxSkew')} ({c.get('whenUnsatisfiable')}), "
            f"pods matching {c.get('selector')}: global minimum {c.get('globalMinimum', c.get('minMatch'))}"
        )
        values = [{"category": k, "value": v} for k, v in sorted(domains.items())]
        table = table_html(["domain", "matching pods"], [[k, v] for k, v in sorted(domains.items())], numeric=[1])
        if values:
            _bars_figure(page, values, title, table, category="domain", value="matching pods")
        else:
            page.para(title)
    if scoring:
        rows = [
            [c.get("topologyKey"), c.get("maxSkew"), c.get("whenUnsatisfiable"), c.get("selector")] for c in scoring
        ]
        page.table(
            ["topologyKey", "maxSkew", "whenUnsatisfiable", "selector"], rows, caption="Preferred constraints (scoring)"
        )


def _affinity(page: Page, doc: dict) -> None:
    d = (doc.get("details") or {}).get("InterPodAffinity") or {}
    node_aff = (doc.get("breakdowns") or {}).get("nodeAffinity") or {}
    if not d and not node_aff:
        return
    page.heading("Affinity", ident="affinity")
    for kind in ("requiredAffinity", "requiredAntiAffinity"):
        for term in d.get(kind) or []:
            caption = (
                f"{'Affinity' if kind == 'requiredAffinity' else 'Anti-affinity'} term {term.get('term')}: "
                f"{term.get('topologyKey')}, pods matching {term.get('selector')} "
                f"in {', '.join(term.get('namespaces') or [])}"
            )
            rows = [[x.get("domain"), x.get("count")] for x in term.get("domains") or []]
            page.table(["domain", "matching pods"], rows, caption=caption, numeric=[1], keep=TOP_ROWS, what="domains")
    rest = {k: v for k, v in d.items() if k not in ("requiredAffinity", "requiredAntiAffinity")}
    if rest or node_aff:
        text = json.dumps({"InterPodAffinity": rest, "nodeAffinity": node_aff}, indent=1, sort_keys=True)
        page.add(
            f"<details><summary>The rest of the affinity breakdown</summary><pre><code>{h(text)}</code></pre></details>"
        )


# ---------------------------------------------------------------------------------------- capacity


def capacity_report(page: Page, doc: dict, usage: dict) -> None:
    total = doc.get("replicas", 0)
    page.verdict(f"{total:,} more cop{'y' if total == 1 else 'ies'} fit in total", total > 0)
    by_node = {n["name"]: n for n in usage["nodes"]}
    for t in doc.get("perTemplate") or []:
        page.heading(f"{t.get('template')}: {t.get('replicas', 0):,} copies", ident=None)
        page.para(f"From {t.get('source')}; stopped by {t.get('stoppedBy')}: {t.get('stopMessage') or '-'}", "note")
        limits = _limits(t.get("stop") or {}, by_node)
        for key, counts in (t.get("perLabel") or {}).items():
            values = [{"category": v, "value": n} for v, n in counts.items()]
            rows = [[v, n, limits.get((key, v), "")] for v, n in counts.items()]
            # the groups that took no copy, with what limits them
            seen = set(counts)
            for (k, v), why in sorted(limits.items()):
                if k == key and v not in seen:
                    rows.append([v, 0, why])
                    values.append({"category": v, "value": 0})
            table = table_html([key, "copies", "what limits it (nodes by first failure)"], rows, numeric=[1])
            _bars_figure(page, values, f"Copies per {key}", table, category=key, value="copies")
            page.add(table)
    utilization_section(page, usage, note="After the copies that fit are bound.")


def _limits(stop: dict, by_node: dict[str, dict]) -> dict[tuple[str, str], str]:
    """Per label value, the first failures of the copy that fit nowhere, counted over its nodes."""
    per: dict[tuple[str, str], Counter] = {}
    for node, f in (stop.get("filters") or {}).items():
        n = by_node.get(node)
        ff = f.get("firstFailure")
        if n is None or not ff:
            continue
        reason = _fmt_failure(ff)
        for key, value in (n.get("labels") or {}).items():
            per.setdefault((key, value), Counter())[reason] += 1
    return {
        k: "; ".join(f"{r} ({c})" for r, c in sorted(v.items(), key=lambda x: (-x[1], x[0]))) for k, v in per.items()
    }


# -------------------------------------------------------------------------------------------- diff


def diff_report(page: Page, doc: dict, usage: dict) -> None:
    d = doc.get("diff") or {}
    changes = d.get("changes") or []
    a, b = d.get("a") or {}, d.get("b") or {}
    page.verdict(
        "every pod gets the same verdict and node" if d.get("same") else f"{len(changes):,} pod(s) differ",
        bool(d.get("same")),
    )
    rows = [["world", a.get("world"), b.get("world")]]
    for key in ("nodes", "pods", "scheduled", "needPreemption", "unschedulable", "nodesUsed", "nodesReceivingPods"):
        rows.append([key, a.get(key), b.get(key)])
    for res in ("cpu", "memory"):
        ua, ub = (a.get("utilisation") or {}).get(res) or {}, (b.get("utilisation") or {}).get(res) or {}
        rows.append(
            [
                f"{res} utilisation mean ± stdev %",
                f"{ua.get('mean')} ± {ua.get('stdev')}",
                f"{ub.get('mean')} ± {ub.get('stdev')}",
            ]
        )
    page.table(["", "A", "B"], rows)
    ua_nodes = {n["name"]: n for n in usage["a"]["nodes"]}
    ub_nodes = {n["name"]: n for n in usage["b"]["nodes"]}

    def where(node: str | None, nodes: dict[str, dict]) -> str:
        if node is None:
            return "(no node)"
        n = nodes.get(node)
        return group_of(n) if n is not None else "(not in this world)"

    # what moved, per zone and pool
    page.heading("What moved, per zone and pool", ident="moved")
    left: Counter = Counter()
    arrived: Counter = Counter()
    moves: Counter = Counter()
    for c in changes:
        ga = where((c.get("a") or {}).get("node"), ua_nodes) if c.get("a") else "(not in A)"
        gb = where((c.get("b") or {}).get("node"), ub_nodes) if c.get("b") else "(not in B)"
        moves[(ga, gb)] += 1
        if ga != gb:
            left[ga] += 1
            arrived[gb] += 1
    if not changes:
        page.para("Nothing moved.", "note")
    else:
        cats = sorted(set(left) | set(arrived))
        values = [
            {"category": g, "series": s, "value": n}
            for g in cats
            for s, n in (("left", left[g]), ("arrived", arrived[g]))
        ]
        table = table_html(
            ["zone · pool", "pods that left", "pods that arrived"],
            [[g, left[g], arrived[g]] for g in cats],
            numeric=[1, 2],
        )
        if cats:
            _bars_figure(
                page,
                values,
                "Pods that left and arrived, per zone and pool (A → B)",
                table,
                category="zone · pool",
                value="pods",
                series="pods",
                series_order=["left", "arrived"],
            )
        rows = [[ga, gb, n] for (ga, gb), n in sorted(moves.items(), key=lambda x: (-x[1], x[0]))]
        page.table(
            ["from (A)", "to (B)", "pods"],
            rows,
            numeric=[2],
            keep=TOP_ROWS,
            what="moves",
            caption="Moves between zones and pools",
        )
        prow = []
        for c in changes:
            oa, ob = c.get("a") or {}, c.get("b") or {}
            prow.append(
                [
                    c.get("pod"),
                    f"{oa.get('verdict', '-')} {oa.get('node') or ''}",
                    f"{ob.get('verdict', '-')} {ob.get('node') or ''}",
                ]
            )
        page.table(
            ["pod", "A", "B"], prow, keep=TOP_ROWS * 4, what="pods", folded=f"The {len(changes):,} pods that differ"
        )
    # before/after utilization per zone and pool
    page.heading("Utilization per zone and pool, A and B", ident="before-after")
    for res in ("cpu", "memory"):
        ratio_a = _group_ratios(usage["a"]["nodes"], res)
        ratio_b = _group_ratios(usage["b"]["nodes"], res)
        cats = sorted(set(ratio_a) | set(ratio_b))
        values = [
            {"category": g, "series": s, "value": v}
            for g in cats
            for s, v in (("A", ratio_a.get(g, 0.0)), ("B", ratio_b.get(g, 0.0)))
        ]
        table = table_html(
            ["zone · pool", f"{res} A", f"{res} B"],
            [[g, f"{ratio_a.get(g, 0):.0%}", f"{ratio_b.get(g, 0):.0%}"] for g in cats],
            numeric=[1, 2],
        )
        _bars_figure(
            page,
            values,
            f"{res}: requested / allocatable per zone and pool after each world's run",
            table,
            category="zone · pool",
            value=f"{res} requested / allocatable",
            series="world",
            series_order=["A", "B"],
            percent=True,
        )
    utilization_section(page, usage["b"], heading="World B's utilization after its run", key="util-b")


def _group_ratios(nodes: list[dict], res: str) -> dict[str, float]:
    sums: dict[str, list[int]] = {}
    for n in nodes:
        s = sums.setdefault(group_of(n), [0, 0])
        s[0] += n["resources"][res][0]
        s[1] += n["resources"][res][1]
    return {g: (r / a if a else 0.0) for g, (r, a) in sums.items()}


# ------------------------------------------------------------------------------------------- sweep


def sweep_report(page: Page, doc: dict, usage: dict) -> None:
    s = doc.get("summary") or {}
    scenarios = doc.get("scenarios") or []
    page.verdict(
        f"{s.get('verdict')}: {s.get('failing', 0)} of {s.get('scenarios', 0)} scenarios lose pods", bool(s.get("safe"))
    )
    page.heading("Scenarios × pods lost", ident="scenarios")
    ranked = sorted(
        scenarios, key=lambda x: (-(len(x.get("pending") or []) + len(x.get("lost") or [])), x.get("name", ""))
    )
    values = []
    for x in ranked:
        name = f"{x.get('family')} {x.get('name')}"
        values.append({"category": name, "series": "not rescheduled", "value": len(x.get("pending") or [])})
        values.append({"category": name, "series": "lost (no controller)", "value": len(x.get("lost") or [])})
    rows = [
        [
            f"{x.get('family')} {x.get('name')}",
            "yes" if x.get("ok") else "no",
            len(x.get("nodes") or []),
            x.get("podsOnFailedNodes", 0),
            x.get("recreated", 0),
            len(x.get("pending") or []),
            len(x.get("lost") or []),
            x.get("workloadsBelowDesired", 0),
        ]
        for x in ranked
    ]
    table = table_html(
        [
            "scenario",
            "ok",
            "nodes failed",
            "pods on them",
            "recreated",
            "not rescheduled",
            "lost",
            "workloads below desired",
        ],
        rows,
        numeric=range(2, 8),
        keep=TOP_ROWS * 4,
        what="scenarios",
    )
    _bars_figure(
        page,
        values,
        "Pods each scenario leaves without a node, worst first",
        table,
        category="scenario",
        value="pods",
        series="pods",
        series_order=["not rescheduled", "lost (no controller)"],
        stacked=True,
    )
    page.add(table)
    exposure = s.get("exposure") or []
    if exposure:
        page.heading("Workloads exposed", ident="exposure")
        rows = [
            [e.get("workload"), e.get("running"), e.get("down"), e.get("lostAfterRescheduling"), e.get("scenario")]
            for e in exposure
        ]
        page.table(
            ["workload", "running", "down", "lost after rescheduling", "worst scenario"], rows, numeric=[1, 2, 3]
        )
        if s.get("exposureOmitted"):
            page.para(f"+{s['exposureOmitted']} more workloads not listed (--top)", "note")
    utilization_section(page, usage, note="The cluster before any scenario.")


# ---------------------------------------------------------------------------------------- scale-up


def scale_up_report(page: Page, doc: dict, usage: dict) -> None:
    groups = doc.get("nodeGroups") or []
    pending = doc.get("pending") or []
    added = sum(g.get("newNodes", 0) for g in groups)
    page.verdict(
        f"{len(doc.get('fitsExistingNodes') or [])} pod(s) fit existing nodes; {len(pending)} wait for new nodes",
        not doc.get("unhelped"),
    )
    page.heading("Nodes added per node group", ident="groups")
    values = [{"category": g.get("name"), "value": g.get("newNodes", 0)} for g in groups]
    rows = [
        [
            g.get("name"),
            g.get("templateNode"),
            g.get("currentSize"),
            g.get("maxSize") if g.get("maxSize") is not None else "-",
            g.get("newNodes", 0),
            len(g.get("podsHelped") or []),
            g.get("skipped") or "",
        ]
        for g in groups
    ]
    table = table_html(
        ["node group", "template node", "current size", "max size", "new nodes", "pods helped", "skipped"],
        rows,
        numeric=[2, 3, 4, 5],
    )
    _bars_figure(
        page,
        values,
        f"New nodes per node group (binpacking estimate; {added} in all groups' estimates)",
        table,
        category="node group",
        value="new nodes",
    )
    page.add(table)
    exp = doc.get("expanders") or {}
    reasons = doc.get("expanderReasons") or {}
    rows = [
        [name, ", ".join(choice) if isinstance(choice, list) else (choice or "-"), reasons.get(name, "")]
        for name, choice in exp.items()
    ]
    page.table(["expander", "chooses", "why"], rows, caption="What each expander would choose")
    if doc.get("unhelped"):
        page.table(
            ["pod"],
            [[p if isinstance(p, str) else p.get("pod") for p in doc["unhelped"]]],
            caption="Pods no node group helps",
            keep=TOP_ROWS,
            what="pods",
        )
    utilization_section(page, usage, note="The existing nodes, before the scale-up.")


VIEWS = {
    "explain": explain_report,
    "capacity": capacity_report,
    "diff": diff_report,
    "sweep": sweep_report,
    "scale-up": scale_up_report,
}
