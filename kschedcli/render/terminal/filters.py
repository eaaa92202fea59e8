"""The filter matrix: nodes × the filter plugins that rejected some node, grouped when many."""

from __future__ import annotations

from typing import Any

from ...framework.result import FilterTable
from ...scheduling.analysis import (
    GROUP_THRESHOLD,
    annotations_of,
    failing_plugins,
    filter_columns,
    node_groups,
    short_reason,
)
from ..richsafe import Text
from .layout import ALSO, FIRST, PASS, SKIP, glue, indent, new_table, node_label, plural, section


def _verdict_cell(kind: str, reasons: str) -> Text:
    if kind == "skip":
        return Text(SKIP, style="muted")
    if kind == "pass":
        return Text(PASS, style="ok")
    if kind == "first":
        return Text.assemble((FIRST + " ", "bad"), (reasons, "bad"))
    return Text.assemble((ALSO + " ", "also"), (reasons, "also"))


def _kind(st: Any, plugin: str, first: str | None, ran: bool) -> tuple[str, str]:
    if not ran:
        return "skip", ""
    if st is None:
        return "pass", ""
    # a Status, or its JSON form (a result read back)
    code: Any = st.get("code") if isinstance(st, dict) else st.code
    reasons: Any = st.get("reasons") if isinstance(st, dict) else st.reasons
    if code == "Success":
        return "pass", ""
    text = ", ".join(short_reason(r) for r in reasons) or code
    return ("first" if plugin == first else "also"), text


def matrix_rows(result, *, all_nodes: bool = False) -> tuple[list[str], list[tuple[list[str], list[tuple[str, str]]]]]:
    """(failing plugins, rows): each row is (nodes, [(kind, reasons) per failing plugin]), one row per
    node when few or with --all-nodes, else one per group of nodes with the same verdicts."""
    ann = annotations_of(result)
    failing = ann.get("failingPlugins")
    if failing is None:
        failing = failing_plugins(result)
    rows = []
    if all_nodes or len(result.filters) <= GROUP_THRESHOLD:
        for name in sorted(result.filters):
            nf = result.filters[name]
            first = nf.first_failure.plugin if nf.first_failure is not None else None
            cells = []
            for p in failing:
                st = nf.plugins.get(p) if p in nf.plugins else (nf.first_failure if p == first else None)
                cells.append(_kind(st, p, first, p in nf.plugins or p == first))
            rows.append(([name], cells))
    else:
        for g in ann.get("nodeGroups") or node_groups(result):
            ff = g["firstFailure"]
            first = ff["plugin"] if ff else None
            also = {a["plugin"]: a for a in g["alsoFailing"]}
            cells = []
            for p in failing:
                st = ff if p == first else also.get(p)
                cells.append(_kind(st, p, first, p == first or p not in g["skipped"]))
            rows.append((g["nodes"], cells))
    return failing, rows


def filter_matrix(result, *, all_nodes: bool = False, width: int = 80) -> list[Any]:
    """Nodes × the filter plugins that rejected some node, in profile order; grouped when many.
    When the matrix is wider than the terminal, each row becomes a block of lines."""
    out: list[Any] = []
    ann = annotations_of(result)
    n = ann.get("nodeCount", len(result.filters))
    if result.pre_filter is not None:
        st = result.pre_filter
        out.append(section("Filters", "no node was filtered"))
        t = Text("  ")
        t.append(f"{'PreEnqueue' if st.plugin == 'SchedulingGates' else 'PreFilter'} ", style="muted")
        t.append(st.plugin or "?", style="plugin")
        t.append(f" rejected the pod ({st.code}): ", style="muted")
        t.append(st.message(), style="bad")
        out.append(t)
        return out
    if not result.filters:
        return out
    failing, rows = matrix_rows(result, all_nodes=all_nodes)
    grouped = not (all_nodes or len(result.filters) <= GROUP_THRESHOLD)
    ft = result.filters
    ran_somewhere = ft.ran() if isinstance(ft, FilterTable) else {p for nf in ft.values() for p in nf.plugins}
    columns = filter_columns(result)
    skipped = [p for p in result.filter_plugins if p not in ran_somewhere]
    passed = [p for p in columns if p in ran_somewhere and p not in failing]
    tried = getattr(result, "nominated_node_tried", None)
    if tried and len(result.filters) == 1 and n > 1 and not failing:
        # evaluateNominatedNode: the nominated node fit on its first try, no other node was filtered
        out.append(
            section(
                "Filters",
                f"the nominated node {tried} × {plural(len(result.filter_plugins), 'plugin')}; "
                f"the other {plural(n - 1, 'node')} not filtered",
            )
        )
        out.append(Text.assemble(("  every filter plugin passed on ", "muted"), (tried, "")))
        if passed:
            out.append(Text.assemble(("  passed there: ", "muted"), (", ".join(passed), "")))
        if skipped:
            out.append(Text.assemble(("  not run (PreFilter returned Skip): ", "muted"), (", ".join(skipped), "")))
        return out
    out.append(
        section(
            "Filters",
            f"{plural(n, 'node')} × {plural(len(result.filter_plugins), 'plugin')}"
            + (
                f" + {plural(len(columns) - len(result.filter_plugins), 'extender')}"
                if len(columns) > len(result.filter_plugins)
                else ""
            )
            + (", alike nodes grouped" if grouped else ""),
        )
    )
    notes: list[Any] = []
    if passed:
        notes.append(Text.assemble(("  passed on every node: ", "muted"), (", ".join(passed), "")))
    if skipped:
        notes.append(Text.assemble(("  not run (PreFilter returned Skip): ", "muted"), (", ".join(skipped), "")))
    if not failing:
        out.append(Text.assemble(("  every filter plugin passed on all ", "muted"), (plural(n, "node"), "")))
        return out + notes

    # the matrix's natural width: does it fit?
    node_w = max(len(node_label(nodes, grouped).plain) for nodes, _ in rows)
    col_w = [max([len(p)] + [len(c[1]) + 2 for _, cells in rows for c in [cells[i]]]) for i, p in enumerate(failing)]
    natural = 2 + node_w + sum(w + 2 for w in col_w) + 2
    if natural <= width:
        table = new_table()
        table.add_column("Nodes" if grouped else "Node", no_wrap=True)
        for p in failing:
            table.add_column(p, overflow="fold")
        for nodes, cells in rows:
            table.add_row(node_label(nodes, grouped), *[_verdict_cell(k, r) for k, r in cells])
        out.append(indent(table, 2))
    else:
        for nodes, cells in rows:
            out.append(Text.assemble("  ", node_label(nodes, grouped)))
            shown = [(p, k, r) for p, (k, r) in zip(failing, cells, strict=True) if k in ("first", "also")]
            if not shown:
                out.append(Text.assemble(("    " + PASS + " ", "ok"), ("feasible", "ok")))
            for p, k, r in shown:
                t = Text("    ")
                t.append(FIRST if k == "first" else ALSO, style="bad" if k == "first" else "also")
                t.append(" ")
                t.append(p, style="plugin")
                t.append(": ")
                t.append(r, style="bad" if k == "first" else "also")
                out.append(t)
    out.extend(notes)
    legend = Text("  ")  # each mark glued to its words: the legend wraps between entries only
    legend.append(FIRST, style="bad")
    legend.append(glue(" first failure (what kube-scheduler reports)") + "  ", style="muted")
    legend.append(ALSO, style="also")
    legend.append(glue(" also rejects") + "  ", style="muted")
    legend.append(PASS, style="ok")
    legend.append(glue(" passes") + "  ", style="muted")
    legend.append(glue(SKIP + " not run"), style="muted")
    out.append(legend)
    if grouped:
        out.append(Text("  --all-nodes lists every node, --node NAME explains one", style="muted"))
    return out
