"""`explain --node NAME`: one node's filter verdicts, resources, taints, pods, spread, scores, preemption."""

from __future__ import annotations

from typing import Any

from ...scheduling.analysis import annotations_of, filter_columns, fmt_requests, resource_rows, untolerated_taints
from ..richsafe import Text
from .layout import ALSO, FIRST, PASS, SKIP, TableOrStack, glue, indent, new_table, plural, prose, quantities, section
from .nodeaffinity import node_affinity_section
from .preemption import CRITERION_TEXT
from .scores import ranking, score_plugins
from .spread import spread_section


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
        bits = [b for b in (zone, itype, plural(len(ni.pods), "pod")) if b]
        head.append("  " + "  ".join(bits), style="muted")
        if node.unschedulable:
            head.append("  cordoned", style="warn")
    out.append(head)
    if result.pre_filter is not None:
        out.append(
            Text(
                f"  no node was filtered: {result.pre_filter.plugin} rejected the pod at "
                f"{'PreEnqueue' if result.pre_filter.plugin == 'SchedulingGates' else 'PreFilter'}",
                style="warn",
            )
        )
    elif nf is not None:
        table = new_table()
        table.add_column("", no_wrap=True)
        table.add_column("Filter plugin", style="plugin", no_wrap=True)
        table.add_column("Verdict")
        first = nf.first_failure.plugin if nf.first_failure is not None else None
        for p in filter_columns(result):
            if p not in nf.plugins and p != first:
                table.add_row(Text(SKIP, style="muted"), p, Text("not run (PreFilter returned Skip)", style="muted"))
                continue
            st = nf.plugins.get(p) if p in nf.plugins else nf.first_failure
            if st is None or st.is_success():
                table.add_row(Text(PASS, style="ok"), p, Text("passes", style="ok"))
            else:
                mark = Text(FIRST, style="bad") if p == first else Text(ALSO, style="also")
                # prose: a word longer than the column (a long taint key) breaks, never cut
                verdict = Text(f"{st.message()}  ({st.code})", style="bad" if p == first else "also")
                table.add_row(mark, p, prose(verdict))
        out.append(indent(table, 2))
        if first is None:
            out.append(Text("  feasible", style="ok"))
        elif first not in filter_columns(result):
            out.append(Text(f"  {nf.first_failure.message()}", style="bad"))
    if ni is not None and node is not None:
        fw = session.scheduler.frameworks.get(result.profile)
        fit = fw.plugins.get("NodeResourcesFit") if fw is not None else None
        rows = resource_rows(result.pod, ni, fit)
        blocks.append(out)
        out = []
        out.append(section("Resources", "allocatable, requested by the pods already there, and the pod's request"))
        table = new_table()
        table.add_column("Resource", no_wrap=True)
        table.add_column("Allocatable", justify="right", no_wrap=True)
        table.add_column("Requested", justify="right", no_wrap=True)
        table.add_column("Free", justify="right", no_wrap=True)
        table.add_column("Pod\nneeds", justify="right", no_wrap=True)
        table.add_column("")
        for r in rows:
            short = r["request"] - r["free"]
            # one precision across the row: cpu 7.910, 0.150, 7.760, 7.000
            q = quantities(r["resource"], (r["allocatable"], r["requested"], r["free"], r["request"], short))
            verdict = Text(PASS, style="ok") if r["fits"] else Text(glue(f"{ALSO} short by {q(short)}"), style="bad")
            table.add_row(
                r["resource"], q(r["allocatable"]), q(r["requested"]), q(r["free"]), q(r["request"]), prose(verdict)
            )
        out.append(indent(table, 2))
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
        ranked = dict((n, r) for r, n in ranking(result))
        out.append(
            section("Scores", f"rank {ranked.get(name)} of {len(result.scores)}, total {result.totals.get(name)}")
        )
        table = new_table()
        table.add_column("Score plugin", style="plugin")
        table.add_column("Raw", justify="right")
        table.add_column("Normalized", justify="right")
        table.add_column("Weight", justify="right")
        table.add_column("Weighted", justify="right", style="bold")
        for p in score_plugins(result):
            s = per.get(p)
            if s is not None:
                table.add_row(p, str(s.raw), str(s.normalized), str(s.weight), str(s.weighted))
        out.append(indent(table, 2))
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
                why = CRITERION_TEXT.get(cand.decided_by, cand.decided_by)
                t.append("  " + glue(f"(ranked lower: {why})"), style="muted")
            out.append(t)
        elif name in p.not_helpful:
            out.append(Text.assemble(("  preemption cannot help: ", "title"), (p.not_helpful[name], "warn")))
    blocks.append(out)
    return [b for b in blocks if b]


def _node_pods(ni, limit: int = 10) -> list[Any]:
    if not ni.pods:
        return [section("Pods on the node", "none")]
    pods = sorted(ni.pods, key=lambda p: (-p.priority, p.key))
    out: list[Any] = [section("Pods on the node", f"{len(pods)}, highest priority first")]
    table = new_table()
    table.add_column("Pod", no_wrap=True)
    table.add_column("Priority", justify="right", no_wrap=True)
    table.add_column("Requests", style="muted")
    stacked: list[Any] = []  # where a pod name and its requests do not fit side by side
    for p in pods[:limit]:
        requests = fmt_requests(p.requests.as_dict())
        table.add_row(p.key, str(p.priority), prose(requests, style="muted"))
        stacked.append(Text(p.key))
        stacked.append(Text(f"  priority {p.priority}" + (f", requests {requests}" if requests else ""), style="muted"))
    out.append(indent(TableOrStack(table, stacked), 2))
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
