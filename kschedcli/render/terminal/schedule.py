"""`ksched schedule`: one row per pod in queue order, its outcome and why, and the counts."""

from __future__ import annotations

import re
from typing import Any

from rich.cells import cell_len
from rich.console import Console, Group

from ...scheduling.analysis import annotations_of, first_failures, short_reason, verdict_of
from ...textsafe import safe_name
from ..richsafe import Text
from .extenders import skipped_note
from .header import config_source, setup_text, version_block
from .layout import GLUE, bind_numbers, glue, glue_message, make_console, plural, print_blocks, section, wrap_lines


def _outcome(r) -> Text:
    v = verdict_of(r)
    if v == "schedulable":
        return Text.assemble(("✔ ", "ok"), (safe_name(r.selected_node or ""), "node"))
    if v == "preemption":
        return Text.assemble(("⚠ ", "warn"), (safe_name(r.preemption.nominated_node), "node"))
    if v == "error":
        return Text("✘ error", style="bad")
    return Text("✘ unschedulable", style="bad")


def _why(r) -> str:
    """One short line: the score and ties, the victims, or the largest groups of rejected nodes."""
    if r.error:
        return r.error
    if r.schedulable:
        extra = f"score {r.totals[r.selected_node]}" if r.selected_node in r.totals else "only feasible node"
        if len(r.top_nodes) > 1:
            extra += f", tied with {len(r.top_nodes) - 1} more"
        return extra
    if r.preemption is not None and r.preemption.nominated_node:
        return "evicts " + ", ".join(r.preemption.victims)
    if r.pre_filter is not None:
        return f"{r.pre_filter.plugin}: {r.pre_filter.message()}"
    firsts = annotations_of(r).get("firstFailures")
    by_first: dict[str, int] = {}
    for plugin, reasons, n in first_failures(r) if firsts is None else firsts:
        key = glue(f"{plugin}:") + " " + ", ".join(short_reason(x) for x in reasons)
        by_first[key] = by_first.get(key, 0) + n
    items = sorted(by_first.items(), key=lambda kv: (-kv[1], kv[0]))
    text = "; ".join(f"{n}×{GLUE}{k}" for k, n in items[:2])
    if len(items) > 2:
        text += "; " + glue(f"+{plural(len(items) - 2, 'more reason')}")
    return text


# (header, right-justified) of the columns; wide adds the numbers behind the outcome
_COLUMNS = [("#", True), ("Pod", False), ("Prio", True), ("Result", False)]
_WIDE = [("Score", True), ("Feasible", True), ("Nominated", False), ("Victims", True)]
_GAP = 3
_MIN_WHY = 30  # narrower than this, the reason goes on its own lines under the row


def _wide_cells(r, node_count: int) -> list[Text]:
    """Score of the selected node, feasible nodes of all, the nominated node and how many victims its
    preemption evicts; – where there is none."""

    def none() -> Text:
        return Text("–", style="muted")

    score = r.totals.get(r.selected_node) if r.schedulable and r.selected_node else None
    p = r.preemption if not r.schedulable else None
    nominated, victims = (p.nominated_node, len(p.victims)) if p is not None and p.nominated_node else (None, 0)
    return [
        Text(str(score)) if score is not None else none(),
        Text(f"{len(r.feasible)}/{node_count}") if not r.error else none(),
        Text(safe_name(nominated), style="node") if nominated else none(),
        Text(str(victims)) if nominated else none(),
    ]


def schedule_table(results, node_count: int, width: int, *, wide: bool = False, headers: bool = True) -> Text:
    """The rows of `ksched schedule`, laid out here rather than by Rich's Table so that a pod name or
    a node name never breaks and the reason can use the whole width: beside the row when there is
    room, else on its own lines under it (wrapped between words, a count kept with what it counts)."""
    columns = _COLUMNS + (_WIDE if wide else [])
    rows = []
    for i, r in enumerate(results, start=1):
        cells = [
            Text(str(i), style="muted"),
            Text(safe_name(r.pod.key), style="pod"),
            Text(str(r.pod.priority)),
            _outcome(r),
        ]
        if wide:
            cells += _wide_cells(r, node_count)
        rows.append((cells, Text(bind_numbers(glue_message(_why(r))), style="muted")))
    widths = [
        max([len(h) if headers else 0] + [cell_len(cells[k].plain) for cells, _ in rows])
        for k, (h, _) in enumerate(columns)
    ]
    extras: list[Text] = []
    if wide and 2 + sum(w + _GAP for w in widths) - _GAP > width:
        # the wide columns do not fit beside the others: each row's go on a labelled line under it
        columns, widths = columns[: len(_COLUMNS)], widths[: len(_COLUMNS)]
        for cells, _ in rows:
            labelled = Text()
            for (head, _), cell in zip(_WIDE, cells[len(_COLUMNS) :], strict=True):
                if labelled:
                    labelled.append("   ")
                labelled.append(head.lower() + GLUE, style="muted")
                labelled.append_text(cell)
            extras.append(labelled)
            del cells[len(_COLUMNS) :]
    stacked = 2 + sum(w + _GAP for w in widths) - _GAP > width
    if stacked:
        # names too long for the columns side by side (a pod name and a node name can take 63
        # characters each): Prio and Result go on a labelled line under each pod, names whole
        had_extras = bool(extras)
        for n, (cells, _) in enumerate(rows):
            under = Text("prio" + GLUE, style="muted")
            under.append_text(cells[2])
            result = cells[3]
            under.append("   ")
            under.append_text(Text(result.plain.replace(" ", GLUE, 1), style=result.style, spans=list(result.spans)))
            if had_extras:
                under.append("   ")
                under.append_text(extras[n])
                extras[n] = under
            else:
                extras.append(under)
            del cells[2:]
        columns, widths = columns[:2], widths[:2]
        # a pod name longer than the line itself goes on under its start, broken, never cut
        widths[1] = min(widths[1], max(10, width - 2 - widths[0] - _GAP))
    lead = 2 + sum(w + _GAP for w in widths)  # where the Why column starts
    why_w = max((cell_len(why.plain) for _, why in rows), default=0)
    # the longest word of a why (a victim's name): beside the row only if it fits there whole
    longest = max((cell_len(w) for _, why in rows for w in re.split(r"[ \n\u00a0]+", why.plain)), default=0)
    inline = not stacked and (lead + max(why_w, 3) <= width or width - lead >= max(_MIN_WHY, longest))
    why_w = min(why_w, max(width - lead, 3)) if inline else 0

    def line(cells: list[Text]) -> Text:
        t = Text("  ")
        for k, (cell, (_, right)) in enumerate(zip(cells, columns, strict=True)):
            if cell_len(cell.plain) > widths[k]:  # the last cell, a pod name wider than the line
                start = 2 + sum(w + _GAP for w in widths[:k])
                pieces = wrap_lines(cell, widths[k])
                t.append_text(pieces[0])
                for piece in pieces[1:]:
                    t.append("\n" + " " * start)
                    t.append_text(piece)
                continue
            pad = " " * (widths[k] - cell_len(cell.plain))
            t.append_text(Text(pad) + cell if right else cell + Text(pad))
            if k < len(cells) - 1:
                t.append(" " * _GAP)
        return t

    out = Text()
    if headers:
        header_line = line([Text(h, style="bold") for h, _ in columns])
        if inline:
            header_line.append(" " * _GAP)
            header_line.append("Why", style="bold")
        out.append_text(header_line)
        out.append("\n  " + "─" * (lead - 2 + (why_w if inline else -_GAP)) + "\n")
    for n, (cells, why) in enumerate(rows):
        row = line(cells)
        if extras:
            at = 2 + widths[0] + _GAP + 2
            for more in wrap_lines(extras[n], width - at):
                row.append("\n" + " " * at)
                row.append_text(more)
        if inline:
            wrapped = wrap_lines(why, why_w) if why.plain else []
            if wrapped:
                row.append(" " * _GAP)
                row.append_text(wrapped[0])
            for more in wrapped[1:]:
                row.append("\n" + " " * lead)
                row.append_text(more)
        else:
            at = 2 + widths[0] + _GAP + 2
            for more in wrap_lines(why, width - at):
                row.append("\n" + " " * at)
                row.append_text(more)
        row.rstrip()
        out.append_text(row)
        if n < len(rows) - 1:
            out.append("\n")
    lines = out.split("\n", allow_blank=True)
    for ln in lines:
        ln.rstrip()
    table = Text("\n").join(lines)
    table.no_wrap = True
    table.overflow = "ignore"
    return table


def schedule_renderables(
    results, session, console: Console, *, wide: bool = False, headers: bool = True
) -> list[list[Any]]:
    counts = {"schedulable": 0, "preemption": 0, "unschedulable": 0, "error": 0}
    for r in results:
        counts[verdict_of(r)] += 1
    ann_nodes = annotations_of(results[0]).get("nodeCount") if results else None
    n = ann_nodes if ann_nodes is not None else len(session.scheduler.snapshot.list())
    # a Group: printed as laid out, not re-wrapped like a line of text
    table = Group(schedule_table(results, n, console.width, wide=wide, headers=headers))
    if not headers:  # --no-headers: the rows alone, for scripts
        return [[table]] if results else []
    head = section(
        "Schedule",
        f"{plural(len(results), 'pod')}, one after another, on {plural(n, 'node')}; "
        "each one placed is bound before the next",
    )
    summary = Text()
    summary.append(glue(f"✔ {counts['schedulable']} scheduled"), style="ok")
    summary.append("   ")
    summary.append(glue(f"⚠ {counts['preemption']} need preemption") + " (nominated node)", style="warn")
    summary.append("   ")
    summary.append(glue(f"✘ {counts['unschedulable']} unschedulable"), style="bad" if counts["unschedulable"] else "")
    if counts["error"]:
        summary.append("   " + glue(f"✘ {plural(counts['error'], 'error')}"), style="bad")
    setup = setup_text(config_source(session), sorted({r.profile for r in results if r.profile}))
    setup_line = [Text("  " + setup, style="muted")] if setup else []  # not kube-scheduler's defaults
    hint = Text("ksched explain NAMESPACE/NAME or POD-FILE explains one pod", style="muted")
    return [[head, *setup_line, table, summary, *skipped_note(results), hint]]


def render_schedule(
    results,
    session,
    console: Console | None = None,
    *,
    no_color: bool = False,
    wide: bool = False,
    headers: bool = True,
) -> None:
    console = console or make_console(no_color)
    # the release followed ends the view, except for --no-headers (rows only, for scripts)
    print_blocks(
        console,
        [
            *schedule_renderables(results, session, console, wide=wide, headers=headers),
            version_block(session) if headers else [],
        ],
    )


def unschedulable_names(results, *, allow_preemption: bool = False) -> str:
    """`schedule -o name`: the pods that are not schedulable, `namespace/name` one a line, in queue
    order: exactly the pods that make the exit status 1 (with --allow-preemption, a pod preemption
    would place is not listed). A character a terminal would act on, a newline included, is escaped."""
    names = [
        r.pod.key
        for r in results
        if verdict_of(r) != "schedulable" and not (allow_preemption and verdict_of(r) == "preemption")
    ]
    return "".join(f"{safe_name(k)}\n" for k in names)  # one a line, escaped (textsafe)
