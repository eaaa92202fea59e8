"""The score table: feasible nodes best first, weighted scores per plugin (or raw, normalized, weight)."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len

from ...framework.result import ScoreTable
from ..richsafe import Text
from .layout import TableOrStack, glue, indent, new_table, plural, section

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
    "SelectorSpread": "SelSpread",
}


def _weights(scores) -> dict[str, int]:
    """plugin -> weight, of every plugin some node has a score of (the last node's weight)."""
    if isinstance(scores, ScoreTable):
        return scores.weights()
    weights = {}
    for per in scores.values():
        for p, s in per.items():
            weights[p] = s.weight
    return weights


def score_plugins(result) -> list[str]:
    """The score table's columns: the plugins that scored, then the HTTP extenders that did."""
    present = _weights(result.scores)
    return [p for p in [*result.score_plugins, *getattr(result, "score_extenders", ())] if p in present]


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
    weights = _weights(result.scores)
    top_of = f"top {len(shown)} of " if len(shown) < len(ranked) else ""
    sub = f"{top_of}{plural(len(ranked), 'feasible node')}, best first"
    sub += (
        "; " + glue("raw → normalized × weight = weighted")
        if raw
        else "; weighted scores " + glue("(--raw for raw and normalized)")
    )
    out.append(section("Scores", sub))
    skipped = [p for p in result.score_plugins if p not in plugins]
    if raw:
        table = _raw_table(result, shown, plugins, console_width - 2)
        # where a node name does not fit beside the numbers: each name on a line of its own
        out.append(indent(TableOrStack(table, _raw_stacked(result, shown, plugins, console_width - 2)), 2))
    else:
        node_w = max((len(name) for _, name in shown), default=0)
        full = sum(len(p) + 5 for p in plugins) + max(40, node_w + 5) <= console_width
        table = new_table()
        table.add_column("#", justify="right", style="muted")
        table.add_column("Node", style="node", no_wrap=True)
        for p in plugins:
            name = p if full else SHORT_PLUGIN.get(p, p)
            table.add_column(f"{name}\n×{weights.get(p, 1)}", justify="right")
        table.add_column("Total", justify="right", style="bold")
        top_set = set(result.top_nodes)
        stacked: list[Any] = []  # where a node name and the scores do not fit side by side
        for rank, name in shown:
            per = result.scores[name]
            mark = "▶" if name == result.selected_node else ("=" if name in top_set else "")
            row_style = "ok" if name == result.selected_node else ""
            node = Text(name, style="node " + row_style if row_style else "node")
            table.add_row(
                f"{mark}{rank}",
                node,
                *[str(per[p].weighted) if p in per else "" for p in plugins],
                str(result.totals[name]),
            )
            stacked.append(Text.assemble((f"{mark}{rank}".rjust(3) + "  ", "muted"), node))
            scores = ", ".join(
                glue(f"{SHORT_PLUGIN.get(p, p)} ×{weights.get(p, 1)} {per[p].weighted}") for p in plugins if p in per
            )
            stacked.append(
                Text.assemble(("       ", ""), (scores, "muted"), ("; ", "muted"), glue(f"total {result.totals[name]}"))
            )
        out.append(indent(TableOrStack(table, stacked), 2))
        if not full:
            legend = ", ".join(f"{SHORT_PLUGIN[p]}={p}" for p in plugins if p in SHORT_PLUGIN)
            out.append(Text("  " + legend, style="muted"))
    if len(shown) < len(ranked):
        out.append(
            Text(f"  … {plural(len(ranked) - len(shown), 'more feasible node')} (--top 0 shows all)", style="muted")
        )
    if raw and result.pre_score_skipped is not None:
        # PreScore as it ran: every plugin that returned Skip (its Score not run), from the cycle
        said = ", ".join(result.pre_score_skipped) if result.pre_score_skipped else "none"
        out.append(Text("  PreScore returned Skip (Score not run): " + said, style="muted"))
    elif skipped:
        out.append(Text("  not scored (PreScore returned Skip): " + ", ".join(skipped), style="muted"))
    return out


_RAW_HEADS = (("Raw", "raw"), ("Normalized", "normalized"), ("Weight", "weight"), ("Weighted", "weighted"))
_RAW_SHORT = ("Raw", "Norm.", "Wt", "Score")
_GAP = 3  # between the columns of the stacked raw table


def _raw_table(result, shown: list[tuple[int, str]], plugins: list[str], width: int):
    """Raw, normalized, weight and weighted score per plugin and node. A Node column when it fits;
    narrower, each node heads its own rows; narrower still, short headers. Plugin names are never cut;
    where a node name does not fit beside the numbers, _raw_stacked takes over (TableOrStack)."""
    rows = {name: [(p, result.scores[name][p]) for p in plugins if p in result.scores[name]] for _, name in shown}
    numbers = [max([len(h)] + [len(str(getattr(s, a))) for r in rows.values() for _, s in r]) for h, a in _RAW_HEADS]
    plugin_w = max([len("total")] + [len(p) for r in rows.values() for p, _ in r])
    node_w = max(len(name) for _, name in shown)
    rank_w = max(len(str(rank)) for rank, _ in shown)
    with_node_column = rank_w + node_w + plugin_w + sum(numbers) + 6 * 3 <= width
    short = not with_node_column and rank_w + max(node_w, plugin_w + 2) + sum(numbers) + 5 * 3 > width
    table = new_table()
    table.add_column("#", justify="right", style="muted")
    if with_node_column:
        table.add_column("Node", style="node", no_wrap=True)
    table.add_column("Plugin" if with_node_column else "Node / plugin", no_wrap=True)
    for head in _RAW_SHORT if short else [h for h, _ in _RAW_HEADS]:
        table.add_column(head, justify="right", no_wrap=True, style="bold" if head in ("Weighted", "Score") else "")
    for rank, name in shown:
        lead = [str(rank), Text(name, style="node")] if with_node_column else [str(rank)]
        if not with_node_column:
            table.add_row(str(rank), Text(name, style="node"), "", "", "", "")
            lead = [""]
        for p, s in rows[name]:
            table.add_row(
                *lead,
                p if with_node_column else "  " + p,
                str(s.raw),
                str(s.normalized),
                str(s.weight),
                str(s.weighted),
            )
            lead = ["", ""] if with_node_column else [""]
        table.add_row(
            *([""] * (2 if with_node_column else 1)),
            Text("total" if with_node_column else "  total", style="bold"),
            "",
            "",
            "",
            Text(str(result.totals[name]), style="bold"),
            end_section=True,
        )
    return table


def _raw_stacked(result, shown: list[tuple[int, str]], plugins: list[str], width: int) -> list[Text]:
    """The raw table laid out line by line for names too long to sit beside the numbers: each node's
    rank and name on a line of its own, across the number columns, and its plugins' rows under it,
    aligned from node to node; the headers short only when the long ones do not fit. No number and
    no name is cut."""
    rows = {
        name: [(p, [str(getattr(result.scores[name][p], a)) for _, a in _RAW_HEADS]) for p in plugins if p in per]
        for _, name in shown
        for per in (result.scores[name],)
    }
    totals = {name: str(result.totals[name]) for _, name in shown}
    rank_w = max(len("#"), *(len(str(rank)) for rank, _ in shown))
    plugin_w = 2 + max([len("total")] + [len(p) for r in rows.values() for p, _ in r])
    values = [[v[k] for r in rows.values() for _, v in r] + (list(totals.values()) if k == 3 else []) for k in range(4)]

    def widths(heads) -> list[int]:
        return [max([len(h)] + [len(v) for v in values[k]]) for k, h in enumerate(heads)]

    heads = [h for h, _ in _RAW_HEADS]
    if rank_w + _GAP + plugin_w + sum(_GAP + w for w in widths(heads)) > width:
        heads = list(_RAW_SHORT)
    num_w = widths(heads)
    lead = " " * (rank_w + _GAP)

    def numbers(cells: list[str], last_style: str = "") -> Text:
        t = Text()
        for k, (cell, w) in enumerate(zip(cells, num_w, strict=True)):
            t.append(" " * _GAP + cell.rjust(w), style=last_style if k == 3 else "")
        return t

    header = Text("#".rjust(rank_w) + " " * _GAP + "Node / plugin".ljust(plugin_w), style="bold")
    header.append_text(numbers(heads))
    header.stylize("bold")
    out: list[Text] = [header, Text("─" * cell_len(header.plain))]
    for n, (rank, name) in enumerate(shown):
        if n:
            out.append(Text(""))
        line = Text(str(rank).rjust(rank_w) + " " * _GAP, style="muted")
        line.append(name, style="node")
        out.append(line)
        for p, cells in rows[name]:
            row = Text(lead + "  " + p.ljust(plugin_w - 2))
            row.append_text(numbers(cells, "bold"))
            out.append(row)
        total = Text(lead + "  " + "total".ljust(plugin_w - 2), style="bold")
        total.append_text(numbers(["", "", "", totals[name]], "bold"))
        out.append(total)
    return out
