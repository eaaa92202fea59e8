"""The inter-pod affinity breakdown: which existing pods satisfy or violate each term, and where."""

from __future__ import annotations

from typing import Any

from ..richsafe import Text
from .layout import section


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
    out: list[Any] = [section("Inter-pod affinity", "which existing pods satisfy or violate each term, and where")]
    for term in d.get("requiredAffinity") or []:
        out.append(_term_header("required affinity", term))
        doms = [x for x in term.get("domains") or [] if "domain" in x]
        t = Text("    satisfied in: ", style="muted")
        if doms:
            t.append(", ".join(f"{x['domain']} ({x['count']})" for x in doms), style="ok")
            t.append(" — nodes elsewhere are rejected", style="muted")
        else:
            if d.get("firstPodOfSeries"):
                t.append(
                    "no matching pod anywhere, but the pod matches its own terms: allowed anywhere "
                    "with the topology key (first pod of a series)",
                    style="warn",
                )
            else:
                t.append("no matching pod anywhere: every node is rejected", style="bad")
        out.append(t)
        out.append(Text("    matching pods: " + _pods_text(term), style="muted"))
    for term in d.get("requiredAntiAffinity") or []:
        out.append(_term_header("required anti-affinity", term))
        doms = [x for x in term.get("domains") or [] if "domain" in x]
        t = Text("    blocked: ", style="muted")
        t.append(", ".join(f"{x['domain']} ({x['count']})" for x in doms) or "nowhere", style="bad" if doms else "ok")
        out.append(t)
        out.append(Text("    matching pods: " + _pods_text(term), style="muted"))
    ex = d.get("existingAntiAffinity")
    if ex:
        t = Text("  ")
        t.append("existing pods' anti-affinity", style="bold")
        t.append(" against this pod: ", style="muted")
        doms = [x for x in ex.get("domains") or [] if "domain" in x]
        t.append(
            ", ".join(f"{x.get('topologyKey', '')}={x['domain']} ({x['count']})" for x in doms) or "none",
            style="bad" if doms else "ok",
        )
        out.append(t)
        out.append(Text("    from: " + _pods_text(ex), style="muted"))
    sc = d.get("score")
    if sc and result.schedulable:
        for kind, key in (
            ("preferred affinity", "preferredAffinity"),
            ("preferred anti-affinity", "preferredAntiAffinity"),
        ):
            for term in sc.get(key) or []:
                out.append(_term_header(kind, term))
                out.append(Text("    matching pods: " + _pods_text(term), style="muted"))
        if sc.get("existingPodsTerms"):
            out.append(Text("  existing pods' preferred terms: " + _pods_text(sc["existingPodsTerms"]), style="muted"))
        ts = sc.get("topologyScore") or {}
        for key, vals in ts.items():
            items = [f"{k} {v:+d}" if isinstance(v, int) else f"{k} {v}" for k, v in vals.items()]
            out.append(
                Text(
                    f"    raw score per {key}: "
                    + ", ".join(items[:8])
                    + (f", … {len(items) - 8} more" if len(items) > 8 else ""),
                    style="muted",
                )
            )
    if len(out) == 1:
        return []
    return out
