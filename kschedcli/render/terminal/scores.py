"""The score table: feasible nodes best first, weighted scores per plugin (or raw, normalized, weight)."""
from __future__ import annotations

from typing import Any

from rich.text import Text

from .layout import indent, new_table, plural, section

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


def score_plugins(result) -> list[str]:
    present = set()
    for per in result.scores.values():
        present.update(per)
    return [p for p in result.score_plugins if p in present]


def ranking(result) -> list[tuple[int, str]]:
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
            out.append(section("Scores", "one feasible node: kube-scheduler does not score"))
        elif not result.score_plugins:
            out.append(section("Scores", "the profile has no score plugin: the first feasible node by name"))
        return out
    plugins = score_plugins(result)
    ranked = ranking(result)
    shown = ranked[:top] if top > 0 else ranked
    weights = {}
    for per in result.scores.values():
        for p, s in per.items():
            weights[p] = s.weight
    shown_of = f"top {len(shown)} of " if len(shown) < len(ranked) else ""
    sub = f"{shown_of}{plural(len(ranked), 'feasible node')}, best first"
    sub += ("; raw → normalized × weight = weighted" if raw else "; weighted scores (--raw for raw and normalized)")
    out.append(section("Scores", sub))
    skipped = [p for p in result.score_plugins if p not in plugins]
    if raw:
        table = new_table()
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
        out.append(indent(table, 2))
    else:
        full = sum(len(p) + 5 for p in plugins) + 40 <= console_width
        table = new_table()
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
        out.append(indent(table, 2))
        if not full:
            legend = ", ".join(f"{SHORT_PLUGIN[p]}={p}" for p in plugins if p in SHORT_PLUGIN)
            out.append(Text("  " + legend, style="muted"))
    if len(shown) < len(ranked):
        out.append(Text(f"  … {len(ranked) - len(shown)} more feasible nodes (--top 0 shows all)", style="muted"))
    if skipped:
        out.append(Text("  not scored (PreScore returned Skip): " + ", ".join(skipped), style="muted"))
    return out

