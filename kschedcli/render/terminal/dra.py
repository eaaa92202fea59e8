"""The DRA breakdown: the pod's ResourceClaims, and per node which devices each request could take
and what excludes the others (a selector, another claim holding the device)."""

from __future__ import annotations

from typing import Any

from ..richsafe import Text
from .layout import hang, plural, section

NODES_SHOWN = 6  # nodes described without --node: the chosen one, then the first others


def _short(device: str) -> str:
    return device.rsplit("/", 1)[-1]


def _claim_line(c: dict) -> Text:
    t = Text("  ")
    t.append(f"claim {c['claim']}", style="bold")
    if c.get("allocated"):
        devs = c.get("devices") or []
        t.append(f"  allocated: {', '.join(devs) if devs else 'no device'}", style="muted")
        terms = (c.get("nodeSelector") or {}).get("nodeSelectorTerms") or []
        fields = [v for term in terms for f in term.get("matchFields") or [] for v in f.get("values") or []]
        if fields:
            t.append(f"; on {', '.join(fields)}", style="muted")
    else:
        parts = []
        for r in c.get("requests") or []:
            if "firstAvailable" in r:
                alts = " or ".join(_request_text(s) for s in r["firstAvailable"])
                parts.append(f"{r['request']}: first of {alts}")
            else:
                parts.append(f"{r['request']}: {_request_text(r)}")
        t.append("  to allocate: " + "; ".join(parts), style="muted")
    users = c.get("reservedFor") or []
    if users:
        t.append(
            f"; reserved for {', '.join(users[:4])}" + (f" +{len(users) - 4}" if len(users) > 4 else ""), style="muted"
        )
    return t


def _request_text(r: dict) -> str:
    n = "all" if r.get("mode") == "All" else str(r.get("count", 1))
    s = f"{n} × {r.get('deviceClass')}"
    if r.get("selectors"):
        s += " where " + " && ".join(r["selectors"])
    return s


def _rejections(rejected: list[dict]) -> list[str]:
    """The rejected devices grouped by what excludes them."""
    groups: dict[tuple, list[str]] = {}
    for x in rejected:
        if x["reason"] == "taken":
            key: tuple = (f"taken by claim {x['by']}",)
        elif x["reason"] in ("selector", "error"):
            why = x["error"] if x["reason"] == "error" else f"`{x['expression']}` is false"
            key = (f"{x['selector']}: {why}",)
        else:
            key = (x["reason"],)
        groups.setdefault(key, []).append(_short(x["device"]))
    out = []
    for (why,), devs in groups.items():
        shown = ", ".join(devs[:6]) + (f", … +{len(devs) - 6}" if len(devs) > 6 else "")
        out.append(f"{shown} — {why}")
    return out


def node_lines(doc: dict) -> list[Any]:
    fits = doc.get("verdict") == "fits"
    head = Text("  ")
    head.append(doc["node"], style="node bold")
    head.append("  " + doc.get("verdict", ""), style="ok" if fits else "bad")
    out: list[Any] = [head]
    for r in doc.get("requests") or []:
        want = "all" if r.get("mode") == "All" else str(r.get("count", 1))
        t = Text("    ")
        t.append(f"{r['claim']} {r['request']}", style="bold")
        n = len(r.get("qualifying") or [])
        t.append(f": wants {want}, {plural(n, 'device')} {'qualifies' if n == 1 else 'qualify'}", style="muted")
        if r.get("chosen"):
            t.append("; takes " + ", ".join(_short(d) for d in r["chosen"]), style="ok")
        elif r.get("qualifying"):
            t.append(" (" + ", ".join(_short(d) for d in r["qualifying"][:8]) + ")", style="muted")
        out.append(hang(t))
        if not r.get("qualifying") and not r.get("rejected"):
            out.append(Text("      no device on the node", style="muted"))
        for line in _rejections(r.get("rejected") or []):
            out.append(hang(Text("      " + line, style="muted")))
    return out


def dra_section(result, node: str | None = None) -> list[Any]:
    d = (result.details or {}).get("DynamicResources")
    if not d:
        return []
    out: list[Any] = [section("Dynamic resources", "the pod's claims, and the devices each node could give them")]
    for c in d.get("claims") or []:
        out.append(hang(_claim_line(c)))
    nodes = d.get("nodes") or []
    if node is not None:
        nodes = [n for n in nodes if n["node"] == node]
        if not nodes and d.get("nodes") is not None:
            out.append(Text(f"  {node}: not among the nodes described (the first {len(d['nodes'])})", style="muted"))
    shown = nodes if node is not None else nodes[:NODES_SHOWN]
    for n in shown:
        out.extend(node_lines(n))
    more = len(nodes) - len(shown) + (d.get("nodesOmitted") or 0 if node is None else 0)
    if more > 0:
        out.append(Text(f"  … {plural(more, 'more node')} (explain --node NAME, or -o json)", style="muted"))
    return out
