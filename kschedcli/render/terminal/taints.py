"""The taints breakdown: the taints the pod does not tolerate, by node, and what it tolerates."""

from __future__ import annotations

from typing import Any

from ..analysis import annotations_of
from ..richsafe import Text
from .layout import indent, name_list, new_table, plural, section


def taints_section(result) -> list[Any]:
    taints = annotations_of(result).get("taints") or {}
    if not taints:
        return []
    by_set: dict[tuple, list[str]] = {}
    for node, lst in taints.items():
        by_set.setdefault(tuple(t["taint"] for t in lst), []).append(node)
    out: list[Any] = [section("Taints", "that the pod does not tolerate (kube-scheduler names the first)")]
    table = new_table()
    table.add_column("Untolerated taints", style="warn", no_wrap=True)
    table.add_column("Nodes", style="node")
    for key in sorted(by_set, key=lambda k: (-len(by_set[k]), k)):
        nodes = by_set[key]
        table.add_row("\n".join(key) or "(none)", f"{plural(len(nodes), 'node')}: {name_list(nodes, 4)}")
    out.append(indent(table, 2))
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
