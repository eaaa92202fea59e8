"""The terminal views (Rich): `ksched explain`, `ksched preempt`, `ksched schedule`.

Every view reads the result model and the data of render/analysis.py, never the scheduler's internals,
so what the table shows is what `-o json` carries. Plain text (no colour codes) when stdout is not a
terminal, with --no-color or when NO_COLOR is set; the width follows the terminal (COLUMNS when piped).
"""
from __future__ import annotations

import os
from typing import Any, Iterable

from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

from .analysis import (GROUP_THRESHOLD, annotations_of, fmt_cpu, fmt_quantity, fmt_requests,
                       node_groups, resource_rows, short_reason, untolerated_taints, verdict_of)

THEME = Theme({
    "ok": "green",
    "bad": "bold red",
    "warn": "yellow",
    "also": "red",
    "muted": "dim",
    "node": "cyan",
    "plugin": "magenta",
    "title": "bold",
    "pod": "bold cyan",
    "num": "bold",
})

PASS, FIRST, ALSO, SKIP = "✓", "▶", "✗", "–"

# Short column headers for the score table when the terminal is narrow.
SHORT_PLUGIN = {
    "TaintToleration": "Taint",
    "NodeAffinity": "NodeAff",
    "NodeResourcesFit": "Fit",
    "PodTopologySpread": "Spread",
    "InterPodAffinity": "PodAff",
    "NodeResourcesBalancedAllocation": "Balanced",
    "ImageLocality": "Image",
    "VolumeBinding": "Volume",
    "DynamicResources": "DRA",
}


def make_console(no_color: bool = False, *, record: bool = False, width: int | None = None,
                 force_terminal: bool | None = None, file=None) -> Console:
    no_color = no_color or "NO_COLOR" in os.environ and os.environ.get("NO_COLOR", "") != ""
    return Console(file=file, theme=THEME, no_color=no_color, record=record, width=width,
                   force_terminal=force_terminal, highlight=False, emoji=False, soft_wrap=False)


# ----------------------------------------------------------------------------- small pieces

def _indent(renderable, n: int = 2) -> Padding:
    return Padding(renderable, (0, 0, 0, n), expand=False)


class Hang:
    """Text wrapped to the width with every line indented by n spaces, without trailing padding."""

    def __init__(self, text: Text, n: int, rest: int | None = None):
        self.text = text
        self.n = n
        self.rest = n + 2 if rest is None else rest

    def __rich_console__(self, console, options):
        first = self.text.wrap(console, max(10, options.max_width - self.n), overflow="fold")
        lines = [first[0]] if len(first) else []
        if len(first) > 1:
            rest = self.text[len(first[0].plain):]
            rest = rest[len(rest.plain) - len(rest.plain.lstrip(" ")):]
            lines += list(rest.wrap(console, max(10, options.max_width - self.rest), overflow="fold"))
        out = Text(no_wrap=True, overflow="ignore")
        for i, line in enumerate(lines):
            line.rstrip()
            if i:
                out.append("\n")
            out.append(" " * (self.n if i == 0 else self.rest))
            out.append_text(line)
        yield out

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement
        m = Measurement.get(console, options, self.text)
        return Measurement(m.minimum + self.n, m.maximum + self.n)


def _hang(item):
    """A Text that starts with spaces wraps under its first character, not at the margin."""
    if isinstance(item, Text):
        plain = item.plain
        n = len(plain) - len(plain.lstrip(" "))
        if n < len(plain):
            return Hang(item[n:], n)
    return item


def _names(nodes: list[str], limit: int = 3) -> str:
    if len(nodes) <= limit:
        return ", ".join(nodes)
    return f"{', '.join(nodes[:limit - 1])}, … +{len(nodes) - limit + 1} more"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _section(title: str, subtitle: str = "") -> Text:
    """A section title (bold) and what it shows (dim)."""
    t = Text()
    t.append(title, style="title")
    if subtitle:
        t.append("  " + subtitle, style="muted")
    return t


def _table(*, expand: bool = False) -> Table:
    return Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=expand,
                 header_style="bold", padding=(0, 1))


def pod_line(result) -> Text:
    pod = result.pod
    t = Text()
    t.append(pod.key, style="pod")
    t.append("  priority ", style="muted")
    t.append(str(pod.priority))
    if pod.priority_class_name:
        t.append(f" ({pod.priority_class_name})", style="muted")
    t.append("  profile ", style="muted")
    t.append(result.profile)
    r = Text("requests ", style="muted")
    r.append(fmt_requests(pod.requests.as_dict()) or "none", style="")
    if (pod.non0_cpu, pod.non0_mem) != (pod.requests.milli_cpu, pod.requests.memory):
        r.append(f"  (scoring counts cpu {fmt_cpu(pod.non0_cpu)}, memory {fmt_quantity('memory', pod.non0_mem)}"
                 " for containers without requests)", style="muted")
    if pod.preemption_policy == "Never":
        r.append("  preemptionPolicy ", style="muted")
        r.append("Never", style="")
    return Group(_hang(t), _hang(r))


def verdict(result, *, allow_preemption_hint: bool = True) -> Group:
    v = verdict_of(result)
    parts: list[Any] = []
    if v == "error":
        parts.append(Text.assemble(("✘ Error  ", "bad"), (result.error, "")))
        return Group(*[_hang(x) for x in parts])
    if v == "schedulable":
        t = Text()
        t.append("✔ Schedulable", style="ok bold")
        t.append(" → ", style="muted")
        t.append(result.selected_node or "", style="node bold")
        total = result.totals.get(result.selected_node)
        if total is not None:
            t.append(f"  score {total}", style="muted")
        parts.append(t)
        ann = annotations_of(result)
        n = ann.get("nodeCount", len(result.filters))
        sub = Text(f"  {len(result.feasible)} of {_plural(n, 'node')} feasible", style="muted")
        if len(result.feasible) == 1:
            sub.append("; with one feasible node kube-scheduler skips scoring", style="muted")
        parts.append(sub)
        if len(result.top_nodes) > 1:
            tie = Text("  tie: ", style="warn")
            tie.append(_names(result.top_nodes, 6), style="node")
            tie.append(f" share the top score; kube-scheduler picks one at random (ksched shows "
                       f"{result.selected_node})", style="muted")
            parts.append(tie)
        return Group(*[_hang(x) for x in parts])
    if v == "preemption":
        p = result.preemption
        t = Text()
        t.append("⚠ Needs preemption", style="warn bold")
        t.append(" → ", style="muted")
        t.append(p.nominated_node, style="node bold")
        t.append(f" would be nominated, evicting {_plural(len(p.victims), 'pod')}", style="")
        parts.append(t)
        parts.append(Text("  " + result.message))
        return Group(*[_hang(x) for x in parts])
    t = Text("✘ Unschedulable", style="bad")
    parts.append(t)
    parts.append(Text("  " + result.message))
    return Group(*[_hang(x) for x in parts])


# ----------------------------------------------------------------------------- the filter matrix

def _verdict_cell(kind: str, reasons: str) -> Text:
    if kind == "skip":
        return Text(SKIP, style="muted")
    if kind == "pass":
        return Text(PASS, style="ok")
    if kind == "first":
        return Text.assemble((FIRST + " ", "bad"), (reasons, "bad"))
    return Text.assemble((ALSO + " ", "also"), (reasons, "also"))


def _kind(st, plugin: str, first: str | None, ran: bool) -> tuple[str, str]:
    if not ran:
        return "skip", ""
    if st is None:
        return "pass", ""
    code = st.get("code") if isinstance(st, dict) else st.code
    reasons = st.get("reasons") if isinstance(st, dict) else st.reasons
    if code == "Success":
        return "pass", ""
    text = ", ".join(short_reason(r) for r in reasons) or code
    return ("first" if plugin == first else "also"), text


def matrix_rows(result, *, all_nodes: bool = False) -> tuple[list[str], list[tuple[list[str], list[tuple[str, str]]]]]:
    """(failing plugins, rows): each row is (nodes, [(kind, reasons) per failing plugin]), one row per
    node when few or with --all-nodes, else one per group of nodes with the same verdicts."""
    ann = annotations_of(result)
    failing = ann.get("failingPlugins")
    if failing is None:
        from .analysis import failing_plugins
        failing = failing_plugins(result)
    rows = []
    if all_nodes or len(result.filters) <= GROUP_THRESHOLD:
        for name in sorted(result.filters):
            nf = result.filters[name]
            first = nf.first_failure.plugin if nf.first_failure is not None else None
            cells = []
            for p in failing:
                st = nf.plugins.get(p) if p in nf.plugins else (nf.first_failure if p == first else None)
                cells.append(_kind(st, p, first, p in nf.plugins or p == first))
            rows.append(([name], cells))
    else:
        for g in ann.get("nodeGroups") or node_groups(result):
            ff = g["firstFailure"]
            first = ff["plugin"] if ff else None
            also = {a["plugin"]: a for a in g["alsoFailing"]}
            cells = []
            for p in failing:
                st = ff if p == first else also.get(p)
                cells.append(_kind(st, p, first, p == first or p not in g["skipped"]))
            rows.append((g["nodes"], cells))
    return failing, rows


def _node_label(nodes: list[str], grouped: bool) -> Text:
    label = Text()
    if not grouped or len(nodes) == 1:
        label.append(nodes[0], style="node")
    else:
        label.append(f"{len(nodes)} nodes", style="num")
        label.append("  " + _names(nodes), style="muted")
    return label


def filter_matrix(result, *, all_nodes: bool = False, width: int = 80) -> list[Any]:
    """Nodes × the filter plugins that rejected some node, in profile order; grouped when many.
    When the matrix is wider than the terminal, each row becomes a block of lines."""
    out: list[Any] = []
    ann = annotations_of(result)
    n = ann.get("nodeCount", len(result.filters))
    if result.pre_filter is not None:
        st = result.pre_filter
        out.append(_section("Filters", "no node was filtered"))
        t = Text("  ")
        t.append(f"{'PreEnqueue' if st.plugin == 'SchedulingGates' else 'PreFilter'} ", style="muted")
        t.append(st.plugin or "?", style="plugin")
        t.append(f" rejected the pod ({st.code}): ", style="muted")
        t.append(st.message(), style="bad")
        out.append(t)
        return out
    if not result.filters:
        return out
    failing, rows = matrix_rows(result, all_nodes=all_nodes)
    grouped = not (all_nodes or len(result.filters) <= GROUP_THRESHOLD)
    ran_somewhere = {p for nf in result.filters.values() for p in nf.plugins}
    skipped = [p for p in result.filter_plugins if p not in ran_somewhere]
    passed = [p for p in result.filter_plugins if p in ran_somewhere and p not in failing]
    out.append(_section("Filters", f"{_plural(n, 'node')} × {_plural(len(result.filter_plugins), 'plugin')}"
                        + (", alike nodes grouped" if grouped else "")))
    notes: list[Any] = []
    if passed:
        notes.append(Text.assemble(("  passed on every node: ", "muted"), (", ".join(passed), "")))
    if skipped:
        notes.append(Text.assemble(("  not run (PreFilter returned Skip): ", "muted"), (", ".join(skipped), "")))
    if not failing:
        out.append(Text.assemble(("  every filter plugin passed on all ", "muted"), (_plural(n, "node"), "")))
        return out + notes

    # the matrix's natural width: does it fit?
    node_w = max(len(_node_label(nodes, grouped).plain) for nodes, _ in rows)
    col_w = [max([len(p)] + [len(c[1]) + 2 for _, cells in rows for c in [cells[i]]]) for i, p in enumerate(failing)]
    natural = 2 + node_w + sum(w + 2 for w in col_w) + 2
    if natural <= width:
        table = _table()
        table.add_column("Nodes" if grouped else "Node", no_wrap=True)
        for p in failing:
            table.add_column(p, overflow="fold")
        for nodes, cells in rows:
            table.add_row(_node_label(nodes, grouped), *[_verdict_cell(k, r) for k, r in cells])
        out.append(_indent(table, 2))
    else:
        for nodes, cells in rows:
            out.append(Text.assemble("  ", _node_label(nodes, grouped)))
            shown = [(p, k, r) for p, (k, r) in zip(failing, cells) if k in ("first", "also")]
            if not shown:
                out.append(Text.assemble(("    " + PASS + " ", "ok"), ("feasible", "ok")))
            for p, k, r in shown:
                t = Text("    ")
                t.append(FIRST if k == "first" else ALSO, style="bad" if k == "first" else "also")
                t.append(" ")
                t.append(p, style="plugin")
                t.append(": ")
                t.append(r, style="bad" if k == "first" else "also")
                out.append(t)
    out.extend(notes)
    legend = Text("  ")
    legend.append(FIRST, style="bad")
    legend.append(" first failure (what kube-scheduler reports)  ", style="muted")
    legend.append(ALSO, style="also")
    legend.append(" also rejects  ", style="muted")
    legend.append(PASS, style="ok")
    legend.append(" passes  ", style="muted")
    legend.append(SKIP + " not run", style="muted")
    out.append(legend)
    if grouped:
        out.append(Text("  --all-nodes lists every node, --node NAME explains one", style="muted"))
    return out


# ----------------------------------------------------------------------------- scores

def _score_plugins(result) -> list[str]:
    present = set()
    for per in result.scores.values():
        present.update(per)
    return [p for p in result.score_plugins if p in present]


def _ranked(result) -> list[tuple[int, str]]:
    rows = sorted(result.totals.items(), key=lambda kv: (-kv[1], kv[0]))
    ranked = []
    rank = 0
    prev = None
    for i, (name, total) in enumerate(rows, start=1):
        if total != prev:
            rank = i
            prev = total
        ranked.append((rank, name))
    return ranked


def score_table(result, console_width: int, *, top: int = 10, raw: bool = False) -> list[Any]:
    out: list[Any] = []
    if not result.schedulable:
        return out
    if not result.scores:
        if len(result.feasible) == 1:
            out.append(_section("Scores", "one feasible node: kube-scheduler does not score"))
        elif not result.score_plugins:
            out.append(_section("Scores", "the profile has no score plugin: the first feasible node by name"))
        return out
    plugins = _score_plugins(result)
    ranked = _ranked(result)
    shown = ranked[:top] if top > 0 else ranked
    weights = {}
    for per in result.scores.values():
        for p, s in per.items():
            weights[p] = s.weight
    sub = f"{'top ' + str(len(shown)) + ' of ' if len(shown) < len(ranked) else ''}{_plural(len(ranked), 'feasible node')}, best first"
    sub += ("; raw → normalized × weight = weighted" if raw else "; weighted scores (--raw for raw and normalized)")
    out.append(_section("Scores", sub))
    skipped = [p for p in result.score_plugins if p not in plugins]
    if raw:
        table = _table()
        table.add_column("#", justify="right", style="muted")
        table.add_column("Node", style="node")
        table.add_column("Plugin", style="")
        table.add_column("Raw", justify="right")
        table.add_column("Normalized", justify="right")
        table.add_column("Weight", justify="right")
        table.add_column("Weighted", justify="right", style="bold")
        for rank, name in shown:
            per = result.scores[name]
            first = True
            for p in plugins:
                s = per.get(p)
                if s is None:
                    continue
                table.add_row(str(rank) if first else "", name if first else "", p, str(s.raw), str(s.normalized),
                              str(s.weight), str(s.weighted))
                first = False
            table.add_row("", "", Text("total", style="bold"), "", "", "", Text(str(result.totals[name]), style="bold"),
                          end_section=True)
        out.append(_indent(table, 2))
    else:
        full = sum(len(p) + 5 for p in plugins) + 40 <= console_width
        table = _table()
        table.add_column("#", justify="right", style="muted")
        table.add_column("Node", style="node", no_wrap=True)
        for p in plugins:
            name = p if full else SHORT_PLUGIN.get(p, p)
            table.add_column(f"{name}\n×{weights.get(p, 1)}", justify="right")
        table.add_column("Total", justify="right", style="bold")
        top_set = set(result.top_nodes)
        for rank, name in shown:
            per = result.scores[name]
            mark = "▶" if name == result.selected_node else ("=" if name in top_set else "")
            row_style = "ok" if name == result.selected_node else ""
            table.add_row(f"{mark}{rank}", Text(name, style="node " + row_style if row_style else "node"),
                          *[str(per[p].weighted) if p in per else "" for p in plugins],
                          str(result.totals[name]))
        out.append(_indent(table, 2))
        if not full:
            legend = ", ".join(f"{SHORT_PLUGIN[p]}={p}" for p in plugins if p in SHORT_PLUGIN)
            out.append(Text("  " + legend, style="muted"))
    if len(shown) < len(ranked):
        out.append(Text(f"  … {len(ranked) - len(shown)} more feasible nodes (--top 0 shows all)", style="muted"))
    if skipped:
        out.append(Text("  not scored (PreScore returned Skip): " + ", ".join(skipped), style="muted"))
    return out


# ----------------------------------------------------------------------------- breakdowns

def _res_cell(row: dict) -> Text:
    r = row["resource"]
    free = fmt_quantity(r, row["free"])
    alloc = fmt_quantity(r, row["allocatable"])
    if row["fits"]:
        return Text.assemble((free, "ok"), (f" of {alloc}", "muted"))
    return Text.assemble((ALSO + " " + free, "bad"), (f" of {alloc}", "muted"))


def resources_section(result, *, all_nodes: bool = False, limit: int = 8) -> list[Any]:
    ann = annotations_of(result)
    res = ann.get("resources") or {}
    if not res:
        return []
    names = list(res)
    selected = result.selected_node if result.selected_node in res else None
    failing = [n for n in names if n != selected]

    def closeness(name):
        rows = res[name]
        return (sum(1 for r in rows if not r["fits"]), name)
    failing.sort(key=closeness)
    order = ([selected] if selected else []) + failing
    shown = order if all_nodes else order[:limit]
    rows0 = res[shown[0]]
    out: list[Any] = []
    what = "free allocatable for the pod's requests"
    if failing:
        what += f"; {_plural(len(failing), 'node')} lack resources, closest to fitting first"
    out.append(_section("Resources", what))
    table = _table()
    table.add_column("Node", style="node", no_wrap=True)
    for r in rows0:
        if r["resource"] == "pods":
            table.add_column("pods\nfree slots", justify="right")
        else:
            table.add_column(f"{r['resource']}\nneeds {fmt_quantity(r['resource'], r['request'])}", justify="right")
    for name in shown:
        label = Text(name, style="node")
        if name == selected:
            label.append(" (selected)", style="ok")
        table.add_row(label, *[_res_cell(r) for r in res[name]])
    out.append(_indent(table, 2))
    if len(shown) < len(order):
        out.append(Text(f"  … {len(order) - len(shown)} more nodes (--all-nodes lists them)", style="muted"))
    return out


def taints_section(result) -> list[Any]:
    taints = annotations_of(result).get("taints") or {}
    if not taints:
        return []
    by_set: dict[tuple, list[str]] = {}
    for node, lst in taints.items():
        by_set.setdefault(tuple(t["taint"] for t in lst), []).append(node)
    out: list[Any] = [_section("Taints", "that the pod does not tolerate (kube-scheduler names the first)")]
    table = _table()
    table.add_column("Untolerated taints", style="warn", no_wrap=True)
    table.add_column("Nodes", style="node")
    for key in sorted(by_set, key=lambda k: (-len(by_set[k]), k)):
        nodes = by_set[key]
        table.add_row("\n".join(key) or "(none)", f"{_plural(len(nodes), 'node')}: {_names(nodes, 4)}")
    out.append(_indent(table, 2))
    tols = result.pod.tolerations
    t = Text("  the pod tolerates: ", style="muted")
    t.append("; ".join(_toleration(x) for x in tols) or "nothing")
    out.append(t)
    return out


def _toleration(t) -> str:
    key = t.key or "*"
    s = f"{key} {t.operator}"
    if t.operator == "Equal":
        s = f"{key}={t.value}"
    s += f":{t.effect}" if t.effect else " (any effect)"
    if t.seconds is not None:
        s += f" for {t.seconds}s"
    return s


def _req_text(r: dict) -> str:
    if r["operator"] in ("Exists", "DoesNotExist"):
        want = f"{r['key']} {r['operator']}"
    else:
        want = f"{r['key']} {r['operator']} {','.join(r['values'])}"
    have = r["nodeValue"]
    return f"{want} (node: {'unset' if have is None else have})"


def node_affinity_section(result) -> list[Any]:
    """Per requirement of the pod (nodeSelector pairs, required terms' expressions): on how many of the
    nodes NodeAffinity rejected it fails, and the values those nodes have."""
    na = annotations_of(result).get("nodeAffinity") or {}
    if not na:
        return []
    rows: dict[str, dict[str, list[str]]] = {}
    order: list[str] = []
    enforced: list[str] = []
    nterms = 0
    for node, d in na.items():
        if d is None:
            continue
        for sel in d.get("nodeSelector", []):
            if not sel["matches"]:
                key = f"nodeSelector {sel['key']}={sel['want']}"
                if key not in rows:
                    rows[key] = {}
                    order.append(key)
                v = "unset" if sel["nodeValue"] is None else sel["nodeValue"]
                rows[key].setdefault(v, []).append(node)
        terms = d.get("requiredTerms") or []
        nterms = max(nterms, len(terms))
        if terms and not any(t["matches"] for t in terms):
            for i, t in enumerate(terms):
                for r in t["matchExpressions"] + t["matchFields"]:
                    if r["matches"]:
                        continue
                    if r["operator"] in ("Exists", "DoesNotExist"):
                        want = f"{r['key']} {r['operator']}"
                    else:
                        want = f"{r['key']} {r['operator']} {','.join(r['values'])}"
                    key = f"term {i}: {want}"
                    if key not in rows:
                        rows[key] = {}
                        order.append(key)
                    v = "unset" if r["nodeValue"] is None else r["nodeValue"]
                    rows[key].setdefault(v, []).append(node)
                if not t["matchExpressions"] and not t["matchFields"]:
                    key = f"term {i}: (empty: matches no node)"
                    rows.setdefault(key, {}).setdefault("", []).append(node)
                    if key not in order:
                        order.append(key)
        if d.get("enforced"):
            enforced.append(node)
    sub = f"the pod's requirements and the nodes they fail on ({_plural(len(na), 'node')} rejected)"
    out: list[Any] = [_section("Node affinity", sub)]
    table = _table()
    table.add_column("Requirement", style="warn")
    table.add_column("Fails on", justify="right", no_wrap=True)
    table.add_column("Those nodes have", style="muted")
    for key in order:
        vals = rows[key]
        n = sum(len(v) for v in vals.values())
        have = ", ".join(f"{v} ×{len(nodes)}" if len(nodes) > 1 else f"{v} ({nodes[0]})"
                         for v, nodes in sorted(vals.items(), key=lambda kv: (-len(kv[1]), kv[0])) if v)
        table.add_row(key, _plural(n, "node"), have)
    if order:
        out.append(_indent(table, 2))
    if nterms > 1:
        out.append(Text("  required terms are ORed: a node must match every expression of one term", style="muted"))
    if enforced:
        out.append(Text(f"  {_plural(len(enforced), 'node')} rejected by the profile's addedAffinity "
                        f"(scheduler-enforced): {_names(enforced)}", style="warn"))
    return out


def spread_section(result, *, node: str | None = None) -> list[Any]:
    d = (result.details or {}).get("PodTopologySpread")
    if not d:
        return []
    out: list[Any] = []
    filt = d.get("filter")
    src = d.get("constraintsFrom", "")
    if filt and filt.get("constraints"):
        out.append(_section("Topology spread", f"hard constraints (DoNotSchedule), from {src}" if src else ""))
        per_node = filt.get("nodes") or {}
        for i, c in enumerate(filt["constraints"]):
            out.append(_constraint_header(c))
            crit = c.get("criticalPaths") or []
            t = Text("    critical paths (global minimum, second minimum): ", style="muted")
            t.append(", ".join(f"{p.get('domain')} ({p.get('matchNum')})" for p in crit) or "none")
            t.append(f"   minMatch {c.get('minMatch')}", style="")
            out.append(t)
            if c.get("minDomains", 1) > 1 or c.get("minDomainsApplies"):
                if c.get("minDomainsApplies"):
                    out.append(Text(f"    minDomains {c.get('minDomains')} but only {c.get('eligibleDomains')} eligible "
                                    "domains: the global minimum counts as 0", style="warn"))
                else:
                    out.append(Text(f"    minDomains {c.get('minDomains')}: {c.get('eligibleDomains')} eligible domains, "
                                    "no effect", style="muted"))
            # per domain: the nodes asked about there, and matchNum + selfMatch - minMatch against maxSkew
            by_domain: dict[str, dict] = {}
            missing: list[str] = []
            for name, rows in per_node.items():
                if node is not None and name != node:
                    continue
                row = rows[i] if i < len(rows) else None
                if row is None:
                    continue
                if row.get("missingLabel"):
                    missing.append(name)
                    continue
                e = by_domain.setdefault(row["domain"], {"row": row, "nodes": []})
                e["nodes"].append(name)
            counts = c.get("domains") or {}
            table = _table()
            table.add_column("Domain", style="node")
            table.add_column("Matching pods", justify="right")
            table.add_column("If placed here", justify="left")
            table.add_column("Nodes asked about", style="muted")
            domains = list(counts) if isinstance(counts, dict) else []
            for dom in by_domain:
                if dom not in domains:
                    domains.append(dom)
            for dom in domains:
                e = by_domain.get(dom)
                cnt = counts.get(dom) if isinstance(counts, dict) else None
                if e is None:
                    table.add_row(dom, str(cnt if cnt is not None else ""), Text("", style="muted"), "")
                    continue
                r = e["row"]
                calc = Text(f"{r['matchNum']} + {r['selfMatch']} − {r['minMatch']} = {r['skew']} ")
                if r["passes"]:
                    calc.append(f"≤ {r['maxSkew']} {PASS}", style="ok")
                else:
                    calc.append(f"> {r['maxSkew']} {ALSO}", style="bad")
                nodes = sorted(e["nodes"])
                table.add_row(dom, str(cnt if cnt is not None else r["matchNum"]), calc,
                              nodes[0] if len(nodes) == 1 else _plural(len(nodes), "node"))
            out.append(_indent(table, 4))
            omitted = c.get("domainsOmitted")
            if omitted:
                out.append(Text(f"    … {omitted} more domains", style="muted"))
            if missing:
                out.append(Text(f"    without the {c.get('topologyKey')} label (rejected): {_names(sorted(missing), 4)}",
                                style="warn"))
        if filt.get("nodesOmitted"):
            out.append(Text(f"    ({filt['nodesOmitted']} more nodes not detailed)", style="muted"))
    sc = d.get("score")
    if sc and sc.get("constraints") and result.schedulable and node is None:
        if out:
            out.append(Text(""))
        out.append(_section("Topology spread", f"soft constraints (ScheduleAnyway) scored, from {src}" if src else
                            "soft constraints (ScheduleAnyway) scored"))
        for c in sc["constraints"]:
            out.append(_constraint_header(c, weight=c.get("weight")))
            counts = c.get("perNode") or c.get("domains") or {}
            if counts:
                items = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]))
                shown = items[:8]
                t = Text("    matching pods: ", style="muted")
                t.append(", ".join(f"{k} {v}" for k, v in shown))
                if len(items) > len(shown):
                    t.append(f", … {len(items) - len(shown)} more", style="muted")
                out.append(t)
        out.append(Text("    fewer matching pods in a node's domain score higher", style="muted"))
    return out


def _constraint_header(c: dict, weight: float | None = None) -> Text:
    t = Text("  ")
    t.append(c.get("topologyKey", "?"), style="bold")
    t.append(f"  maxSkew {c.get('maxSkew')}  {c.get('whenUnsatisfiable', '')}", style="")
    t.append(f"  selector {c.get('selector') or '(none)'}", style="muted")
    if "selfMatch" in c:
        t.append("  the pod " + ("matches it" if c["selfMatch"] else "does not match it"), style="muted")
    pol = []
    if c.get("nodeAffinityPolicy") and c.get("nodeAffinityPolicy") != "Honor":
        pol.append(f"nodeAffinityPolicy {c['nodeAffinityPolicy']}")
    if c.get("nodeTaintsPolicy") and c.get("nodeTaintsPolicy") != "Ignore":
        pol.append(f"nodeTaintsPolicy {c['nodeTaintsPolicy']}")
    if pol:
        t.append("  " + ", ".join(pol), style="muted")
    if weight is not None:
        t.append(f"  weight {weight:.2f}", style="muted")
    return t


def _pods_text(entry: dict, limit: int = 4) -> str:
    pods = entry.get("pods") or []
    parts = []
    for p in pods[:limit]:
        where = p.get("domain") or p.get("node")
        parts.append(f"{p.get('pod')} ({where})" if where else str(p.get("pod")))
    more = len(pods) - limit + (entry.get("morePods") or 0)
    s = ", ".join(parts) if parts else "no pod"
    if more > 0:
        s += f", … +{more} more"
    return s


def _term_header(kind: str, term: dict) -> Text:
    t = Text("  ")
    t.append(kind, style="bold")
    t.append(f" term {term.get('term', '')}: ", style="muted")
    t.append(f"{term.get('selector') or '(everything)'}")
    ns = term.get("namespaces")
    if ns == "*":
        t.append(" in every namespace", style="muted")
    elif ns:
        t.append(f" in {', '.join(ns)}", style="muted")
    if term.get("namespaceSelector"):
        t.append(f" + namespaces with {term['namespaceSelector']}", style="muted")
    t.append(f", per {term.get('topologyKey')}", style="muted")
    if term.get("weight"):
        t.append(f", weight {term['weight']}", style="muted")
    return t


def affinity_section(result) -> list[Any]:
    d = (result.details or {}).get("InterPodAffinity")
    if not d:
        return []
    out: list[Any] = [_section("Inter-pod affinity", "which existing pods satisfy or violate each term, and where")]
    for term in d.get("requiredAffinity") or []:
        out.append(_term_header("required affinity", term))
        doms = [x for x in term.get("domains") or [] if "domain" in x]
        t = Text("    satisfied in: ", style="muted")
        if doms:
            t.append(", ".join(f"{x['domain']} ({x['count']})" for x in doms), style="ok")
            t.append(" — nodes elsewhere are rejected", style="muted")
        else:
            if d.get("firstPodOfSeries"):
                t.append("no matching pod anywhere, but the pod matches its own terms: allowed anywhere "
                         "with the topology key (first pod of a series)", style="warn")
            else:
                t.append("no matching pod anywhere: every node is rejected", style="bad")
        out.append(t)
        out.append(Text("    matching pods: " + _pods_text(term), style="muted"))
    for term in d.get("requiredAntiAffinity") or []:
        out.append(_term_header("required anti-affinity", term))
        doms = [x for x in term.get("domains") or [] if "domain" in x]
        t = Text("    blocked: ", style="muted")
        t.append(", ".join(f"{x['domain']} ({x['count']})" for x in doms) or "nowhere",
                 style="bad" if doms else "ok")
        out.append(t)
        out.append(Text("    matching pods: " + _pods_text(term), style="muted"))
    ex = d.get("existingAntiAffinity")
    if ex:
        t = Text("  ")
        t.append("existing pods' anti-affinity", style="bold")
        t.append(" against this pod: ", style="muted")
        doms = [x for x in ex.get("domains") or [] if "domain" in x]
        t.append(", ".join(f"{x.get('topologyKey', '')}={x['domain']} ({x['count']})" for x in doms) or "none",
                 style="bad" if doms else "ok")
        out.append(t)
        out.append(Text("    from: " + _pods_text(ex), style="muted"))
    sc = d.get("score")
    if sc and result.schedulable:
        for kind, key in (("preferred affinity", "preferredAffinity"), ("preferred anti-affinity", "preferredAntiAffinity")):
            for term in sc.get(key) or []:
                out.append(_term_header(kind, term))
                out.append(Text("    matching pods: " + _pods_text(term), style="muted"))
        if sc.get("existingPodsTerms"):
            out.append(Text("  existing pods' preferred terms: " + _pods_text(sc["existingPodsTerms"]), style="muted"))
        ts = sc.get("topologyScore") or {}
        for key, vals in ts.items():
            items = [f"{k} {v:+d}" if isinstance(v, int) else f"{k} {v}" for k, v in vals.items()]
            out.append(Text(f"    raw score per {key}: " + ", ".join(items[:8]) +
                            (f", … {len(items) - 8} more" if len(items) > 8 else ""), style="muted"))
    if len(out) == 1:
        return []
    return out


def other_details_section(result, shown: set[str]) -> list[Any]:
    """Plugins' explanations the views above do not lay out (volumes, ...), as key: value lines."""
    out: list[Any] = []
    for name in sorted(result.details or {}):
        if name in shown or name == "DefaultPreemption":
            continue
        d = result.details[name]
        lines = Text()
        for k, v in (d.items() if isinstance(d, dict) else []):
            if v in (None, [], {}):
                continue
            lines.append(f"  {k}: ", style="muted")
            lines.append(_brief(v) + "\n")
        if lines:
            out.append(_section(name, ""))
            lines.rstrip()
            out.append(lines)
    return out


def _brief(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(_brief(x) for x in v[:8]) + (f", … +{len(v) - 8}" if len(v) > 8 else "")
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_brief(x)}" for k, x in list(v.items())[:8]) + "}"
    return str(v)


def retry_section(result) -> list[Any]:
    events = result.events or {}
    if result.schedulable or not events:
        return []
    out: list[Any] = [_section("What would make kube-scheduler retry it",
                               "events the rejecting plugins register")]
    for plugin, evs in events.items():
        out.append(Text.assemble("  ", (plugin, "plugin")))
        for e in evs:
            t = Text("    ")
            if isinstance(e, dict):
                t.append(f"{e.get('resource')} {e.get('action')}")
                if e.get("hint"):
                    t.append(f" — {e['hint']}", style="muted")
            else:
                t.append(str(e))
            out.append(t)
        if not evs:
            out.append(Text("    (none registered)", style="muted"))
    if result.preemption is not None and result.preemption.nominated_node:
        out.append(Text("  and the pod is retried on the nominated node once its victims are gone", style="muted"))
    return out


# ----------------------------------------------------------------------------- preemption

def preemption_summary(result) -> list[Any]:
    p = result.preemption
    if p is None or result.schedulable:
        return []
    out: list[Any] = []
    if p.nominated_node:
        out.append(_section("Preemption", f"{_plural(len(p.candidates), 'candidate')}"
                            + (f", {_plural(len(p.not_helpful), 'node')} where it cannot help" if p.not_helpful else "")
                            + " · ksched preempt shows every candidate"))
        t = Text("  nominate ")
        t.append(p.nominated_node, style="node bold")
        t.append(", evict: ", style="muted")
        t.append(", ".join(p.victims) or "nothing")
        out.append(t)
        pri = _victim_priorities(p)
        if pri:
            out.append(Text(f"  victim priorities: {', '.join(str(x) for x in pri)}", style="muted"))
        if len(p.equally_good) > 1:
            out.append(Text("  equally good: " + ", ".join(c.node for c in p.equally_good), style="warn"))
    else:
        out.append(_section("Preemption", "cannot make room"))
        msg = p.ineligible or _preemption_part(result.message) or p.message
        by_why: dict[str, list[str]] = {}
        for n in sorted(p.not_helpful):
            by_why.setdefault(p.not_helpful[n], []).append(n)
        if by_why:
            for why in sorted(by_why, key=lambda w: (-len(by_why[w]), w)):
                nodes = by_why[why]
                out.append(Text.assemble(("  " + _plural(len(nodes), "node") + ": ", "num"), (why, "warn"),
                                         (f"  ({_names(nodes, 2)})", "muted")))
        else:
            out.append(Text("  " + (msg or "no candidate node"), style="warn"))
    return out


def _victim_priorities(p) -> list[int]:
    for c in p.candidates:
        if c.node == p.nominated_node:
            return list(c.victim_priorities)
    return []


def _preemption_part(message: str) -> str:
    i = message.find("preemption: ")
    return message[i:] if i >= 0 else ""


def _criteria(c) -> dict:
    prios = list(c.victim_priorities)
    return {"pdb": c.pdb_violations, "highest": max(prios) if prios else None,
            "sum": sum(prios) if prios else 0, "count": len(c.victims)}


CRITERION_TEXT = {
    "pdbViolations": "more PDB violations",
    "highestVictimPriority": "higher top victim priority",
    "victimPrioritySum": "higher victim priority sum",
    "victimCount": "more victims",
    "latestStartTime": "victims started earlier",
}


def _decided(p, c) -> Text:
    if c.node == p.nominated_node:
        return Text("nominated", style="ok")
    if any(e.node == c.node for e in p.equally_good):
        return Text("tie with the nominated node", style="warn")
    return Text(CRITERION_TEXT.get(c.decided_by, c.decided_by or ""), style="muted")


def preempt_blocks(result, width: int = 80) -> list[list[Any]]:
    """`ksched preempt`: the dry run, the nominated node and its victims in eviction order, every
    candidate with its victims and the criterion that ranked it lower, the nodes where it cannot help."""
    p = result.preemption
    blocks: list[list[Any]] = []
    if result.schedulable:
        return [[Text("  the pod fits without preemption; nothing would be evicted", style="ok")]]
    if p is None:
        return [[Text("  preemption was not attempted (no PostFilter plugin in the profile, or the pod was "
                      "rejected before filtering)", style="warn")]]
    if p.ineligible:
        blocks.append([_section("Preemption", "the pod cannot preempt"), Text("  " + p.ineligible, style="warn")])
    det = (result.details or {}).get("DefaultPreemption") or {}
    if det:
        blocks.append([_section("Dry run", f"{det.get('potentialNodes')} nodes where preemption might help, "
                                f"{det.get('evaluatedNodes')} evaluated, {det.get('candidatesFound')} candidates found "
                                f"(kube-scheduler stops at {det.get('numCandidates')}: "
                                f"minCandidateNodesPercentage {det.get('minCandidateNodesPercentage')}%, "
                                f"minCandidateNodesAbsolute {det.get('minCandidateNodesAbsolute')})")])
    if p.nominated_node:
        nominated = next((c for c in p.candidates if c.node == p.nominated_node), None)
        block: list[Any] = [_section("Nominated node", "status.nominatedNodeName; the victims are evicted in this order")]
        t = Text("  ")
        t.append(p.nominated_node, style="node bold")
        if nominated is not None:
            t.append(f"  {_plural(nominated.pdb_violations, 'PDB violation')}", style="warn" if nominated.pdb_violations else "muted")
        block.append(t)
        table = _table()
        table.add_column("#", justify="right", style="muted")
        table.add_column("Victim")
        table.add_column("Priority", justify="right")
        pods = list(getattr(nominated, "pods", []) or []) if nominated else []
        if pods:
            table.add_column("Started", style="muted")
        for i, v in enumerate(p.victims, start=1):
            prio = nominated.victim_priorities[i - 1] if nominated and i - 1 < len(nominated.victim_priorities) else ""
            row = [str(i), v, str(prio)]
            if pods:
                pod = next((x for x in pods if x.key == v), None)
                row.append(pod.start_time if pod is not None else "")
            table.add_row(*row)
        block.append(_indent(table, 4))
        if len(p.equally_good) > 1:
            block.append(Text("  equally good (kube-scheduler's choice among them is arbitrary): "
                              + ", ".join(c.node for c in p.equally_good), style="warn"))
        blocks.append(block)
    if p.candidates:
        block = [_section("Candidates", "as kube-scheduler ranks them: fewest PDB violations, lowest top victim "
                          "priority, lowest priority sum, fewest victims, latest start")]
        cands = _ordered_candidates(p)
        node_w = max(len(c.node) for c in cands)
        vic_w = max((len(v) for c in cands for v in c.victims), default=6)
        dec_w = max(len(_decided(p, c).plain) for c in cands)
        natural = 2 + node_w + vic_w + 4 * 7 + dec_w + 14
        if natural <= width:
            table = _table()
            table.add_column("Node", style="node", no_wrap=True)
            table.add_column("Victims", no_wrap=True)
            table.add_column("PDB\nviol.", justify="right")
            table.add_column("Top\nprio", justify="right")
            table.add_column("Prio\nsum", justify="right")
            table.add_column("Count", justify="right")
            table.add_column("Decided by", no_wrap=True)
            for c in cands:
                cr = _criteria(c)
                table.add_row(Text(c.node, style="node bold" if c.node == p.nominated_node else "node"),
                              "\n".join(c.victims) or "(none)", str(cr["pdb"]),
                              "" if cr["highest"] is None else str(cr["highest"]), str(cr["sum"]), str(cr["count"]),
                              _decided(p, c))
            block.append(_indent(table, 2))
        else:
            for c in cands:
                cr = _criteria(c)
                t = Text("  ")
                t.append(c.node, style="node bold" if c.node == p.nominated_node else "node")
                t.append("  ")
                t.append_text(_decided(p, c))
                block.append(t)
                block.append(Text(f"    PDB violations {cr['pdb']}, top priority {cr['highest']}, "
                                  f"priority sum {cr['sum']}, {_plural(cr['count'], 'victim')}", style="muted"))
                block.append(Text("    evicts " + (", ".join(c.victims) or "nothing")))
        blocks.append(block)
    if p.not_helpful:
        block = [_section("Where preemption cannot help", _plural(len(p.not_helpful), "node"))]
        by_why: dict[str, list[str]] = {}
        for n in sorted(p.not_helpful):
            by_why.setdefault(p.not_helpful[n], []).append(n)
        for why in sorted(by_why, key=lambda w: (-len(by_why[w]), w)):
            nodes = by_why[why]
            block.append(Text.assemble("  ", _node_label(nodes, True)))
            block.append(Text("    " + why, style="warn"))
        blocks.append(block)
    if not p.nominated_node:
        msg = _preemption_part(result.message) or p.message
        if msg:
            blocks.append([Text.assemble(("kube-scheduler: ", "muted"), (msg, ""))])
    return blocks


def _ordered_candidates(p) -> list:
    """Nominated first, then ties, then the others by the ranking criteria."""
    def key(c):
        cr = _criteria(c)
        tier = 0 if c.node == p.nominated_node else (1 if any(e.node == c.node for e in p.equally_good) else 2)
        return (tier, cr["pdb"], cr["highest"] if cr["highest"] is not None else 0, cr["sum"], cr["count"], c.node)
    return sorted(p.candidates, key=key)


# ----------------------------------------------------------------------------- one node

def node_view(result, session, name: str) -> list[list[Any]]:
    """--node NAME: every filter plugin's verdict on the node, its resources, taints, pods, spread and scores."""
    blocks: list[list[Any]] = []
    out: list[Any] = []
    ni = session.scheduler.snapshot.get(name)
    nf = result.filters.get(name)
    node = ni.node if ni is not None else None
    head = Text()
    head.append("Node ", style="title")
    head.append(name, style="node bold")
    if node is not None:
        zone = node.labels.get("topology.kubernetes.io/zone")
        itype = node.labels.get("node.kubernetes.io/instance-type")
        bits = [b for b in (zone, itype, f"{len(ni.pods)} pods") if b]
        head.append("  " + "  ".join(bits), style="muted")
        if node.unschedulable:
            head.append("  cordoned", style="warn")
    out.append(head)
    if result.pre_filter is not None:
        out.append(Text(f"  no node was filtered: {result.pre_filter.plugin} rejected the pod at "
                        f"{'PreEnqueue' if result.pre_filter.plugin == 'SchedulingGates' else 'PreFilter'}",
                        style="warn"))
    elif nf is not None:
        table = _table()
        table.add_column("", no_wrap=True)
        table.add_column("Filter plugin", style="plugin", no_wrap=True)
        table.add_column("Verdict")
        first = nf.first_failure.plugin if nf.first_failure is not None else None
        for p in result.filter_plugins:
            if p not in nf.plugins and p != first:
                table.add_row(Text(SKIP, style="muted"), p, Text("not run (PreFilter returned Skip)", style="muted"))
                continue
            st = nf.plugins.get(p) if p in nf.plugins else nf.first_failure
            if st is None or st.is_success():
                table.add_row(Text(PASS, style="ok"), p, Text("passes", style="ok"))
            else:
                mark = Text(FIRST, style="bad") if p == first else Text(ALSO, style="also")
                table.add_row(mark, p, Text(f"{st.message()}  ({st.code})", style="bad" if p == first else "also"))
        out.append(_indent(table, 2))
        if first is None:
            out.append(Text("  feasible", style="ok"))
        elif first not in result.filter_plugins:
            out.append(Text(f"  {nf.first_failure.message()}", style="bad"))
    if ni is not None:
        fw = session.scheduler.frameworks.get(result.profile)
        fit = fw.plugins.get("NodeResourcesFit") if fw is not None else None
        rows = resource_rows(result.pod, ni, fit)
        blocks.append(out)
        out = []
        out.append(_section("Resources", "allocatable, requested by the pods already there, and the pod's request"))
        table = _table()
        table.add_column("Resource")
        table.add_column("Allocatable", justify="right")
        table.add_column("Requested", justify="right")
        table.add_column("Free", justify="right")
        table.add_column("Pod needs", justify="right")
        table.add_column("")
        for r in rows:
            q = lambda v: fmt_quantity(r["resource"], v)  # noqa: E731
            table.add_row(r["resource"], q(r["allocatable"]), q(r["requested"]), q(r["free"]), q(r["request"]),
                          Text(PASS, style="ok") if r["fits"] else Text(f"{ALSO} short by {q(r['request'] - r['free'])}", style="bad"))
        out.append(_indent(table, 2))
        taints = untolerated_taints(result.pod, node)
        if node.taints:
            t = Text("  taints: ", style="muted")
            for i, taint in enumerate(node.taints):
                if i:
                    t.append(", ")
                bad = any(x["taint"] == str(taint) for x in taints)
                t.append(str(taint), style="bad" if bad else "")
            if taints:
                t.append("  (red: not tolerated)", style="muted")
            out.append(t)
        na = (annotations_of(result).get("nodeAffinity") or {}).get(name)
        if na:
            blocks.append(node_affinity_section(_OnlyNode(result, name)))
        blocks.append(out)
        out = []
        blocks.append(_node_pods(ni))
    blocks.append(out)
    blocks.append(spread_section(result, node=name))
    out = []
    per = result.scores.get(name)
    if per:
        ranked = dict((n, r) for r, n in _ranked(result))
        out.append(_section("Scores", f"rank {ranked.get(name)} of {len(result.scores)}, total {result.totals.get(name)}"))
        table = _table()
        table.add_column("Score plugin", style="plugin")
        table.add_column("Raw", justify="right")
        table.add_column("Normalized", justify="right")
        table.add_column("Weight", justify="right")
        table.add_column("Weighted", justify="right", style="bold")
        for p in _score_plugins(result):
            s = per.get(p)
            if s is not None:
                table.add_row(p, str(s.raw), str(s.normalized), str(s.weight), str(s.weighted))
        out.append(_indent(table, 2))
    blocks.append(out)
    out = []
    p = result.preemption
    if p is not None and not result.schedulable:
        cand = next((c for c in p.candidates if c.node == name), None)
        if cand is not None:
            t = Text("  preemption: ", style="title")
            t.append("nominated; " if name == p.nominated_node else "candidate; ")
            t.append(f"would evict {', '.join(cand.victims)}")
            if cand.decided_by and name != p.nominated_node:
                t.append(f"  (lost on {cand.decided_by})", style="muted")
            out.append(t)
        elif name in p.not_helpful:
            out.append(Text.assemble(("  preemption cannot help: ", "title"), (p.not_helpful[name], "warn")))
    blocks.append(out)
    return [b for b in blocks if b]


def _node_pods(ni, limit: int = 10) -> list[Any]:
    if not ni.pods:
        return [_section("Pods on the node", "none")]
    pods = sorted(ni.pods, key=lambda p: (-p.priority, p.key))
    out: list[Any] = [_section("Pods on the node", f"{len(pods)}, highest priority first")]
    table = _table()
    table.add_column("Pod")
    table.add_column("Priority", justify="right")
    table.add_column("Requests", style="muted")
    for p in pods[:limit]:
        table.add_row(p.key, str(p.priority), fmt_requests(p.requests.as_dict()))
    out.append(_indent(table, 2))
    if len(pods) > limit:
        out.append(Text(f"  … {len(pods) - limit} more", style="muted"))
    return out




class _OnlyNode:
    """A view of a result whose annotations hold one node's node-affinity rows."""

    def __init__(self, result, name: str):
        self._r = result
        ann = dict(annotations_of(result))
        ann["nodeAffinity"] = {name: ann.get("nodeAffinity", {}).get(name)}
        self.annotations = ann

    def __getattr__(self, item):
        return getattr(self._r, item)


# ----------------------------------------------------------------------------- commands

def _print_all(console: Console, blocks: Iterable[list[Any]]) -> None:
    first = True
    for block in blocks:
        if not block:
            continue
        if not first:
            console.print()
        for item in block:
            console.print(_hang(item))
        first = False


def explain_renderables(result, session, console: Console, *, node: str | None = None, all_nodes: bool = False,
                        top: int = 10, raw: bool = False) -> list[list[Any]]:
    blocks: list[list[Any]] = [[pod_line(result)], [verdict(result)]]
    if result.error:
        return blocks
    if node is not None:
        blocks.extend(node_view(result, session, node))
        return blocks
    blocks.append(filter_matrix(result, all_nodes=all_nodes, width=console.width))
    blocks.append(score_table(result, console.width, top=top, raw=raw))
    blocks.append(resources_section(result, all_nodes=all_nodes))
    blocks.append(taints_section(result))
    blocks.append(node_affinity_section(result))
    blocks.append(spread_section(result))
    blocks.append(affinity_section(result))
    blocks.append(other_details_section(result, {"PodTopologySpread", "InterPodAffinity"}))
    blocks.append(preemption_summary(result))
    blocks.append(retry_section(result))
    return blocks


def render_explain(result, session, console: Console | None = None, *, node: str | None = None,
                   all_nodes: bool = False, top: int = 10, raw: bool = False, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    _print_all(console, explain_renderables(result, session, console, node=node, all_nodes=all_nodes,
                                            top=top, raw=raw))


def preempt_renderables(result, session, console: Console) -> list[list[Any]]:
    return [[pod_line(result)], [verdict(result)], *preempt_blocks(result, console.width)]


def render_preempt(result, session, console: Console | None = None, *, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    _print_all(console, preempt_renderables(result, session, console))


def _outcome(r) -> Text:
    v = verdict_of(r)
    if v == "schedulable":
        return Text.assemble(("✔ ", "ok"), (r.selected_node or "", "node"))
    if v == "preemption":
        return Text.assemble(("⚠ ", "warn"), (r.preemption.nominated_node, "node"))
    if v == "error":
        return Text("✘ error", style="bad")
    return Text("✘ unschedulable", style="bad")


def _why(r) -> str:
    """One short line: the score and ties, the victims, or the largest groups of rejected nodes."""
    if r.error:
        return r.error
    if r.schedulable:
        extra = f"score {r.totals[r.selected_node]}" if r.selected_node in r.totals else "only feasible node"
        if len(r.top_nodes) > 1:
            extra += f", tied with {len(r.top_nodes) - 1} more"
        return extra
    if r.preemption is not None and r.preemption.nominated_node:
        return "evicts " + ", ".join(r.preemption.victims)
    if r.pre_filter is not None:
        return f"{r.pre_filter.plugin}: {r.pre_filter.message()}"
    groups = [g for g in (annotations_of(r).get("nodeGroups") or node_groups(r)) if not g["feasible"]]
    by_first: dict[str, int] = {}
    for g in groups:
        ff = g["firstFailure"]
        key = f"{ff['plugin']}: " + ", ".join(short_reason(x) for x in ff["reasons"])
        by_first[key] = by_first.get(key, 0) + g["count"]
    items = sorted(by_first.items(), key=lambda kv: (-kv[1], kv[0]))
    text = "; ".join(f"{n}× {k}" for k, n in items[:2])
    if len(items) > 2:
        text += f"; +{len(items) - 2} more reasons"
    return text


def schedule_renderables(results, session, console: Console) -> list[list[Any]]:
    counts = {"schedulable": 0, "preemption": 0, "unschedulable": 0, "error": 0}
    rows = []
    for i, r in enumerate(results, start=1):
        counts[verdict_of(r)] += 1
        rows.append((str(i), r.pod.key, str(r.pod.priority), _outcome(r), _why(r)))
    fixed = 2 + sum(max((len(x[k]) if isinstance(x[k], str) else len(x[k].plain)) for x in rows) + 3
                    for k in range(4)) if rows else 0
    inline = fixed + max((len(x[4]) for x in rows), default=0) <= console.width or console.width - fixed >= 40
    table = _table()
    table.add_column("#", justify="right", style="muted")
    table.add_column("Pod", style="pod", no_wrap=inline, overflow="fold")
    table.add_column("Prio", justify="right", no_wrap=True)
    table.add_column("Result", no_wrap=True)
    if inline:
        table.add_column("Why", style="muted")
    for row in rows:
        if inline:
            table.add_row(*row)
        else:
            table.add_row(*row[:4])
            table.add_row("", Text(row[4], style="muted"), "", "", end_section=False)
    ann_nodes = annotations_of(results[0]).get("nodeCount") if results else None
    n = ann_nodes if ann_nodes is not None else len(session.scheduler.snapshot.list())
    head = _section("Schedule", f"{_plural(len(results), 'pod')}, one after another, on {_plural(n, 'node')}; "
                                "each one placed is bound before the next")
    summary = Text()
    summary.append(f"✔ {counts['schedulable']} scheduled", style="ok")
    summary.append("   ")
    summary.append(f"⚠ {counts['preemption']} need preemption (nominated node)", style="warn")
    summary.append("   ")
    summary.append(f"✘ {counts['unschedulable']} unschedulable", style="bad" if counts["unschedulable"] else "")
    if counts["error"]:
        summary.append(f"   ✘ {counts['error']} errors", style="bad")
    hint = Text("ksched explain NAMESPACE/NAME or POD-FILE explains one pod", style="muted")
    return [[head, _indent(table, 2), summary, hint]]


def render_schedule(results, session, console: Console | None = None, *, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    _print_all(console, schedule_renderables(results, session, console))
