"""The topology spread breakdown: hard constraints with the skew arithmetic per domain, soft ones scored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import RenderableType

from ..richsafe import Text
from .layout import ALSO, PASS, glue, indent, name_list, new_table, plural, prose, section

# the nodes of the snapshot per value of a topology key (the domains' members), for "4 of 7 nodes"
DomainNodes = Callable[[str], dict[str, list[str]]]


def domain_nodes_of(snapshot) -> DomainNodes:
    """A DomainNodes over the snapshot's nodes, each key's table built once, when first asked for."""
    cache: dict[str, dict[str, list[str]]] = {}

    def lookup(key: str) -> dict[str, list[str]]:
        if key not in cache:
            table: dict[str, list[str]] = {}
            for ni in snapshot.list():
                value = ni.node.labels.get(key)
                if value is not None:
                    table.setdefault(value, []).append(ni.node.name)
            cache[key] = table
        return cache[key]

    return lookup


def _not_asked(result, members: list[str]) -> str:
    """Why a domain has no arithmetic: the filters that rejected its nodes before PodTopologySpread's
    verdict mattered (its details cover the nodes it rejected and the feasible ones)."""
    plugins: list[str] = []
    for name in members:
        nf = result.filters.get(name) if result.filters else None
        ff = nf.first_failure if nf is not None else None
        if ff is None or ff.plugin == "PodTopologySpread":
            return "not detailed"
        if ff.plugin not in plugins:
            plugins.append(ff.plugin)
    return f"not asked: {', '.join(plugins)} rejected {'it' if len(members) == 1 else 'them'}" if plugins else ""


def spread_section(result, *, node: str | None = None, domain_nodes: DomainNodes | None = None) -> list[Any]:
    d = (result.details or {}).get("PodTopologySpread")
    if not d:
        return []
    out: list[Any] = []
    filt = d.get("filter")
    src = d.get("constraintsFrom", "")
    if filt and filt.get("constraints"):
        out.append(section("Topology spread", f"hard constraints (DoNotSchedule), from {src}" if src else ""))
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
                    out.append(
                        Text(
                            f"    minDomains {c.get('minDomains')} but only "
                            f"{c.get('eligibleDomains')} eligible "
                            "domains: the global minimum counts as 0",
                            style="warn",
                        )
                    )
                else:
                    eligible = plural(c.get("eligibleDomains") or 0, "eligible domain")
                    out.append(Text(f"    minDomains {c.get('minDomains')}: {eligible}, no effect", style="muted"))
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
            members = domain_nodes(c.get("topologyKey", "")) if domain_nodes is not None else {}
            partial = False
            domains = list(counts) if isinstance(counts, dict) else []
            for dom in by_domain:
                if dom not in domains:
                    domains.append(dom)
            table_rows: list[tuple[str, str, Text, str]] = []
            for dom in domains:
                entry = by_domain.get(dom)
                cnt = counts.get(dom) if isinstance(counts, dict) else None
                if entry is None:
                    why = "another domain" if node is not None else _not_asked(result, members.get(dom, []))
                    table_rows.append((dom, str(cnt if cnt is not None else ""), Text(why, style="muted"), ""))
                    continue
                r = entry["row"]
                calc = Text(glue(f"{r['matchNum']} + {r['selfMatch']} − {r['minMatch']} = {r['skew']} "))
                if r["passes"]:
                    calc.append(glue(f"≤ {r['maxSkew']} {PASS}"), style="ok")
                else:
                    calc.append(glue(f"> {r['maxSkew']} {ALSO}"), style="bad")
                nodes = sorted(entry["nodes"])
                size = len(members.get(dom, nodes)) if node is None else len(nodes)
                if size > len(nodes):
                    partial = True
                    asked = f"{len(nodes)} of {plural(size, 'node')}"
                else:
                    asked = nodes[0] if len(nodes) == 1 else plural(len(nodes), "node")
                table_rows.append((dom, str(cnt if cnt is not None else r["matchNum"]), calc, asked))
            # a domain per node (kubernetes.io/hostname): the node asked about is the domain itself
            with_nodes = any(asked not in ("", dom) for dom, _, _, asked in table_rows)
            table = new_table()
            table.add_column("Domain", style="node", no_wrap=True)
            table.add_column("Matching pods", justify="right", no_wrap=True)
            table.add_column("If placed here", justify="left")
            if with_nodes:
                table.add_column("Nodes asked about", style="muted")
            for dom, cnt_text, calc, asked in table_rows:
                cells: list[RenderableType] = [dom, cnt_text, prose(calc)]
                cells += [prose(asked, style="muted")] if with_nodes else []
                table.add_row(*cells)
            out.append(indent(table, 4))
            if partial:
                out.append(
                    Text(
                        "    a domain's other nodes were rejected by another filter (the matrix above shows which)",
                        style="muted",
                    )
                )
            omitted = c.get("domainsOmitted")
            if omitted:
                out.append(Text(f"    … {plural(omitted, 'more domain')}", style="muted"))
            if missing:
                out.append(
                    Text(
                        f"    without the {c.get('topologyKey')} label (rejected): {name_list(sorted(missing), 4)}",
                        style="warn",
                    )
                )
        if filt.get("nodesOmitted"):
            out.append(Text(f"    ({plural(filt['nodesOmitted'], 'more node')} not detailed)", style="muted"))
    sc = d.get("score")
    if sc and sc.get("constraints") and result.schedulable and node is None:
        if out:
            out.append(Text(""))
        out.append(
            section(
                "Topology spread",
                f"soft constraints (ScheduleAnyway) scored, from {src}"
                if src
                else "soft constraints (ScheduleAnyway) scored",
            )
        )
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
    """The constraint on one line; each `name value` part glued, so a wrap falls between parts."""
    t = Text("  ")
    t.append(c.get("topologyKey", "?"), style="bold")
    t.append("  " + glue(f"maxSkew {c.get('maxSkew')}") + f"  {c.get('whenUnsatisfiable', '')}", style="")
    t.append("  " + glue(f"selector {c.get('selector') or '(none)'}"), style="muted")
    if "selfMatch" in c:
        t.append("  " + glue("the pod " + ("matches it" if c["selfMatch"] else "does not match it")), style="muted")
    pol = []
    if c.get("nodeAffinityPolicy") and c.get("nodeAffinityPolicy") != "Honor":
        pol.append(glue(f"nodeAffinityPolicy {c['nodeAffinityPolicy']}"))
    if c.get("nodeTaintsPolicy") and c.get("nodeTaintsPolicy") != "Ignore":
        pol.append(glue(f"nodeTaintsPolicy {c['nodeTaintsPolicy']}"))
    if pol:
        t.append("  " + ", ".join(pol), style="muted")
    if weight is not None:
        t.append("  " + glue(f"weight {weight:.2f}"), style="muted")
    return t
