"""The node affinity breakdown: the pod's requirements and the nodes they fail on."""

from __future__ import annotations

from typing import Any

from ..analysis import annotations_of
from ..richsafe import Text
from .layout import indent, name_list, new_table, plural, section


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
    sub = f"the pod's requirements and the nodes they fail on ({plural(len(na), 'node')} rejected)"
    out: list[Any] = [section("Node affinity", sub)]
    table = new_table()
    table.add_column("Requirement", style="warn")
    table.add_column("Fails on", justify="right", no_wrap=True)
    table.add_column("Those nodes have", style="muted")
    for key in order:
        vals = rows[key]
        n = sum(len(v) for v in vals.values())
        have = ", ".join(
            f"{v} ×{len(nodes)}" if len(nodes) > 1 else f"{v} ({nodes[0]})"
            for v, nodes in sorted(vals.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            if v
        )
        table.add_row(key, plural(n, "node"), have)
    if order:
        out.append(indent(table, 2))
    if nterms > 1:
        out.append(Text("  required terms are ORed: a node must match every expression of one term", style="muted"))
    if enforced:
        out.append(
            Text(
                f"  {plural(len(enforced), 'node')} rejected by the profile's addedAffinity "
                f"(scheduler-enforced): {name_list(enforced)}",
                style="warn",
            )
        )
    return out
