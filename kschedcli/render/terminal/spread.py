"""The topology spread breakdown: hard constraints with the skew arithmetic per domain, soft ones scored."""
from __future__ import annotations

from typing import Any

from rich.text import Text

from .layout import ALSO, PASS, indent, name_list, new_table, plural, section


def spread_section(result, *, node: str | None = None) -> list[Any]:
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
                    out.append(Text(f"    minDomains {c.get('minDomains')} but only {c.get('eligibleDomains')} "
                                    "eligible "
                                    "domains: the global minimum counts as 0", style="warn"))
                else:
                    out.append(Text(f"    minDomains {c.get('minDomains')}: {c.get('eligibleDomains')} eligible "
                                    "domains, "
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
            table = new_table()
            table.add_column("Domain", style="node")
            table.add_column("Matching pods", justify="right")
            table.add_column("If placed here", justify="left")
            table.add_column("Nodes asked about", style="muted")
            domains = list(counts) if isinstance(counts, dict) else []
            for dom in by_domain:
                if dom not in domains:
                    domains.append(dom)
            for dom in domains:
                entry = by_domain.get(dom)
                cnt = counts.get(dom) if isinstance(counts, dict) else None
                if entry is None:
                    table.add_row(dom, str(cnt if cnt is not None else ""), Text("", style="muted"), "")
                    continue
                r = entry["row"]
                calc = Text(f"{r['matchNum']} + {r['selfMatch']} − {r['minMatch']} = {r['skew']} ")
                if r["passes"]:
                    calc.append(f"≤ {r['maxSkew']} {PASS}", style="ok")
                else:
                    calc.append(f"> {r['maxSkew']} {ALSO}", style="bad")
                nodes = sorted(entry["nodes"])
                table.add_row(dom, str(cnt if cnt is not None else r["matchNum"]), calc,
                              nodes[0] if len(nodes) == 1 else plural(len(nodes), "node"))
            out.append(indent(table, 4))
            omitted = c.get("domainsOmitted")
            if omitted:
                out.append(Text(f"    … {omitted} more domains", style="muted"))
            if missing:
                out.append(Text(f"    without the {c.get('topologyKey')} label (rejected): "
                                f"{name_list(sorted(missing), 4)}",
                                style="warn"))
        if filt.get("nodesOmitted"):
            out.append(Text(f"    ({filt['nodesOmitted']} more nodes not detailed)", style="muted"))
    sc = d.get("score")
    if sc and sc.get("constraints") and result.schedulable and node is None:
        if out:
            out.append(Text(""))
        out.append(section("Topology spread", f"soft constraints (ScheduleAnyway) scored, from {src}" if src else
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

