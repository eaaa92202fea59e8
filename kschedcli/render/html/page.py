"""The HTML page of a report: escaping, sections, tables with honest cuts, figures with their text
alternatives, and the one inline style sheet. Nothing here loads anything: the page has no script,
no link and no image from elsewhere, and its Content-Security-Policy forbids them (docs/reports.md)."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

# the page may use its own inline style and nothing else: no script, no fetch, no frame, no form
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

CSS = """
:root { color-scheme: light; --fg: #1b1b1b; --muted: #5a5a5a; --rule: #d0d0d0; --bad: #a6400b; --good: #00684a; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg);
  margin: 0 auto; max-width: 1200px; padding: 1.2rem 1.5rem 3rem; background: #fff; }
h1 { font-size: 1.45rem; margin: 0 0 .3rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--rule); padding-bottom: .2rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; overflow-wrap: anywhere; }
p, li { max-width: 90ch; }
.verdict { font-size: 1.1rem; padding: .5rem .8rem; border-left: 6px solid var(--good); background: #eef6f2; }
.verdict.bad { border-left-color: var(--bad); background: #fbefe8; }
.muted, .note { color: var(--muted); }
.note { font-size: .9rem; margin: .3rem 0 .8rem; }
table { border-collapse: collapse; margin: .4rem 0 .8rem; font-size: .85rem; }
th, td { border: 1px solid var(--rule); padding: .2rem .45rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { overflow-wrap: anywhere; min-width: 22ch; max-width: 44ch; }
.scroll { overflow-x: auto; max-width: 100%; }
table.matrix thead th:nth-child(n+3) { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
  font-weight: 500; padding: .4rem .2rem; }
table.matrix td:nth-child(n+3) { text-align: center; }
figure { margin: .6rem 0 1.2rem; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: .9rem; color: var(--muted); margin: .2rem 0; }
.multiples { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: flex-start; }
details { margin: .3rem 0 .8rem; }
summary { cursor: pointer; color: var(--muted); }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .9em; overflow-wrap: anywhere; }
.mark-first { color: var(--bad); font-weight: 600; }
.mark-pass { color: var(--good); }
footer { margin-top: 2.5rem; font-size: .85rem; color: var(--muted); border-top: 1px solid var(--rule);
  padding-top: .5rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  details::details-content { content-visibility: visible; display: block; }
  h2 { break-after: avoid; }
  figure, tr { break-inside: avoid; }
}
"""


def h(value: Any) -> str:
    """Text from the cluster (names, labels, messages) as HTML text or an attribute value: every
    markup character an entity, so no name becomes an element, an attribute or a script."""
    return html.escape("" if value is None else str(value), quote=True)


class Page:
    """A report being written: parts appended in order, then the whole as one document."""

    def __init__(self, title: str):
        self.title = title
        self.parts: list[str] = []

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    def heading(self, text: str, level: int = 2, ident: str | None = None) -> None:
        at = f' id="{h(ident)}"' if ident else ""
        self.add(f"<h{level}{at}>{h(text)}</h{level}>")

    def para(self, text: str, cls: str | None = None) -> None:
        self.add(f'<p class="{cls}">{h(text)}</p>' if cls else f"<p>{h(text)}</p>")

    def verdict(self, text: str, good: bool) -> None:
        self.add(f'<p class="verdict{"" if good else " bad"}" role="status"><strong>Verdict:</strong> {h(text)}</p>')

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Any]], **how: Any) -> None:
        """A table of text cells (escaped here); `how`: table_html's options (`keep`: only the first
        rows, the rest counted)."""
        self.add(table_html(headers, rows, **how))

    def figure(self, svg: str, caption: str, data: str = "") -> None:
        """A chart with its caption and, folded, the table of what it draws (its text alternative)."""
        alt = f"<details><summary>The data of this chart</summary>{data}</details>" if data else ""
        self.add(
            f'<figure role="group" aria-label="{h(caption)}">{svg}<figcaption>{h(caption)}</figcaption>{alt}</figure>'
        )

    def html(self, footer: str) -> str:
        body = "\n".join(self.parts)
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="referrer" content="no-referrer">\n'
            f"<title>{h(self.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            f"{body}\n</main>\n<footer>{footer}</footer>\n</body>\n</html>\n"
        )


def table_html(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    keep: int | None = None,
    what: str = "rows",
    caption: str | None = None,
    numeric: Iterable[int] = (),
    folded: str | None = None,
    cls: str = "",
) -> str:
    nums = set(numeric)
    shown = rows if keep is None else rows[:keep]
    out = [f'<div class="scroll"><table class="{h(cls)}">' if cls else '<div class="scroll"><table>']
    if caption:
        out.append(f"<caption class='note'>{h(caption)}</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f'<th scope="col"{" class=num" if i in nums else ""}>{h(t)}</th>' for i, t in enumerate(headers))
        + "</tr></thead><tbody>"
    )
    for row in shown:
        cells = []
        for i, cell in enumerate(row):
            cls = "num" if i in nums else ("name" if i == 0 else "")
            cells.append(f'<td class="{cls}">{cell.markup if isinstance(cell, Markup) else h(cell)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    cut = len(rows) - len(shown)
    if cut > 0:
        out.append(f'<p class="note">+{cut:,} more {h(what)} not listed</p>')
    text = "".join(out)
    if folded:
        return f"<details><summary>{h(folded)}</summary>{text}</details>"
    return text


class Markup:
    """A table cell written here as markup (its text parts escaped by whoever made it)."""

    __slots__ = ("markup",)

    def __init__(self, markup: str):
        self.markup = markup


def span(text: Any, cls: str) -> Markup:
    return Markup(f'<span class="{cls}">{h(text)}</span>')
