"""`ksched preempt`: the dry run, the nominated node and its victims in eviction order, every candidate
and the criterion that ranked it lower, and the nodes where preemption cannot help."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ..richsafe import Text
from .header import pod_line, verdict, version_block
from .layout import indent, make_console, new_table, node_label, plural, print_blocks, section
from .preemption import CRITERION_TEXT, criteria, preemption_part


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
        return [
            [
                Text(
                    "  preemption was not attempted (no PostFilter plugin in the profile, or the pod was "
                    "rejected before filtering)",
                    style="warn",
                )
            ]
        ]
    if p.ineligible:
        blocks.append([section("Preemption", "the pod cannot preempt"), Text("  " + p.ineligible, style="warn")])
    det = (result.details or {}).get("DefaultPreemption") or {}
    if det:
        blocks.append([section("Dry run", _dry_run_text(det))])
    if p.nominated_node:
        nominated = next((c for c in p.candidates if c.node == p.nominated_node), None)
        block: list[Any] = [
            section("Nominated node", "status.nominatedNodeName; the victims are evicted in this order")
        ]
        t = Text("  ")
        t.append(p.nominated_node, style="node bold")
        if nominated is not None:
            t.append(
                f"  {plural(nominated.pdb_violations, 'PDB violation')}",
                style="warn" if nominated.pdb_violations else "muted",
            )
        block.append(t)
        table = new_table()
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
        block.append(indent(table, 4))
        if len(p.equally_good) > 1:
            block.append(
                Text(
                    "  equally good (kube-scheduler's choice among them is arbitrary): "
                    + ", ".join(c.node for c in p.equally_good),
                    style="warn",
                )
            )
        blocks.append(block)
    if p.candidates:
        block = [
            section(
                "Candidates",
                "as kube-scheduler ranks them: fewest PDB violations, lowest top victim "
                "priority, lowest priority sum, fewest victims, latest start",
            )
        ]
        cands = _ordered_candidates(p)
        node_w = max(len(c.node) for c in cands)
        vic_w = max((len(v) for c in cands for v in c.victims), default=6)
        dec_w = max(len(_decided(p, c).plain) for c in cands)
        natural = 2 + node_w + vic_w + 4 * 7 + dec_w + 14
        if natural <= width:
            table = new_table()
            table.add_column("Node", style="node", no_wrap=True)
            table.add_column("Victims", no_wrap=True)
            table.add_column("PDB\nviol.", justify="right")
            table.add_column("Top\nprio", justify="right")
            table.add_column("Prio\nsum", justify="right")
            table.add_column("Count", justify="right")
            table.add_column("Decided by", no_wrap=True)
            for c in cands:
                cr = criteria(c)
                table.add_row(
                    Text(c.node, style="node bold" if c.node == p.nominated_node else "node"),
                    "\n".join(c.victims) or "(none)",
                    str(cr["pdb"]),
                    "" if cr["highest"] is None else str(cr["highest"]),
                    str(cr["sum"]),
                    str(cr["count"]),
                    _decided(p, c),
                )
            block.append(indent(table, 2))
        else:
            for c in cands:
                cr = criteria(c)
                t = Text("  ")
                t.append(c.node, style="node bold" if c.node == p.nominated_node else "node")
                t.append("  ")
                t.append_text(_decided(p, c))
                block.append(t)
                block.append(
                    Text(
                        f"    PDB violations {cr['pdb']}, top priority {cr['highest']}, "
                        f"priority sum {cr['sum']}, {plural(cr['count'], 'victim')}",
                        style="muted",
                    )
                )
                block.append(Text("    evicts " + (", ".join(c.victims) or "nothing")))
        blocks.append(block)
    if p.not_helpful:
        block = [section("Where preemption cannot help", plural(len(p.not_helpful), "node"))]
        by_why: dict[str, list[str]] = {}
        for n in sorted(p.not_helpful):
            by_why.setdefault(p.not_helpful[n], []).append(n)
        for why in sorted(by_why, key=lambda w: (-len(by_why[w]), w)):
            nodes = by_why[why]
            block.append(Text.assemble("  ", node_label(nodes, True)))
            block.append(Text("    " + why, style="warn"))
        blocks.append(block)
    if not p.nominated_node:
        msg = preemption_part(result.message) or p.message
        if msg:
            blocks.append([Text.assemble(("kube-scheduler: ", "muted"), (msg, ""))])
    return blocks


def _dry_run_text(det: dict) -> str:
    """How many nodes the dry run looked at and why it stopped where it did. kube-scheduler stops once
    it holds numCandidates candidates (minCandidateNodesPercentage of the potential nodes, at least
    minCandidateNodesAbsolute, at most all of them): when that is all of them, it evaluates every one."""
    potential, evaluated = det.get("potentialNodes"), det.get("evaluatedNodes")
    found, limit = det.get("candidatesFound"), det.get("numCandidates")
    pct, absolute = det.get("minCandidateNodesPercentage"), det.get("minCandidateNodesAbsolute")
    text = (
        f"{plural(potential or 0, 'node')} where preemption might help, {evaluated} evaluated, "
        f"{plural(found or 0, 'candidate')} found "
    )
    settings = f"minCandidateNodesPercentage {pct}%, minCandidateNodesAbsolute {absolute}"
    if isinstance(limit, int) and isinstance(potential, int) and limit >= potential:
        return text + f"(kube-scheduler evaluates every one: {settings} ask for {limit} or more)"
    return text + f"(kube-scheduler stops once it has {plural(limit or 0, 'candidate')}: {settings})"


def _ordered_candidates(p) -> list:
    """Nominated first, then ties, then the others by the ranking criteria."""

    def key(c):
        cr = criteria(c)
        tier = 0 if c.node == p.nominated_node else (1 if any(e.node == c.node for e in p.equally_good) else 2)
        return (tier, cr["pdb"], cr["highest"] if cr["highest"] is not None else 0, cr["sum"], cr["count"], c.node)

    return sorted(p.candidates, key=key)


def preempt_renderables(result, session, console: Console) -> list[list[Any]]:
    return [[pod_line(result)], [verdict(result)], *preempt_blocks(result, console.width)]


def render_preempt(result, session, console: Console | None = None, *, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    print_blocks(console, [*preempt_renderables(result, session, console), version_block(session)])
