"""Shared pieces of the terminal views: the console and its theme, the marks, section titles, tables,
text that hangs under its first character, and printing a view's blocks with a blank line between them."""
from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

THEME = Theme({
    "ok": "green",
    "bad": "bold red",
    "warn": "yellow",
    "also": "red",
    "muted": "dim",
    "node": "cyan",
    "plugin": "magenta",
    "title": "bold",
    "pod": "bold cyan",
    "num": "bold",
})

PASS, FIRST, ALSO, SKIP = "✓", "▶", "✗", "–"

def make_console(no_color: bool = False, *, record: bool = False, width: int | None = None,
                 force_terminal: bool | None = None, file=None) -> Console:
    no_color = no_color or "NO_COLOR" in os.environ and os.environ.get("NO_COLOR", "") != ""
    return Console(file=file, theme=THEME, no_color=no_color, record=record, width=width,
                   force_terminal=force_terminal, highlight=False, emoji=False, soft_wrap=False)


def indent(renderable, n: int = 2) -> Padding:
    return Padding(renderable, (0, 0, 0, n), expand=False)


class Hang:
    """Text wrapped to the width with every line indented by n spaces, without trailing padding."""

    def __init__(self, text: Text, n: int, rest: int | None = None):
        self.text = text
        self.n = n
        self.rest = n + 2 if rest is None else rest

    def __rich_console__(self, console, options):
        first = self.text.wrap(console, max(10, options.max_width - self.n), overflow="fold")
        lines = [first[0]] if len(first) else []
        if len(first) > 1:
            rest = self.text[len(first[0].plain):]
            rest = rest[len(rest.plain) - len(rest.plain.lstrip(" ")):]
            lines += list(rest.wrap(console, max(10, options.max_width - self.rest), overflow="fold"))
        out = Text(no_wrap=True, overflow="ignore")
        for i, line in enumerate(lines):
            line.rstrip()
            if i:
                out.append("\n")
            out.append(" " * (self.n if i == 0 else self.rest))
            out.append_text(line)
        yield out

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement
        m = Measurement.get(console, options, self.text)
        return Measurement(m.minimum + self.n, m.maximum + self.n)


def hang(item):
    """A Text that starts with spaces wraps under its first character, not at the margin."""
    if isinstance(item, Text):
        plain = item.plain
        n = len(plain) - len(plain.lstrip(" "))
        if n < len(plain):
            return Hang(item[n:], n)
    return item


def name_list(nodes: list[str], limit: int = 3) -> str:
    if len(nodes) <= limit:
        return ", ".join(nodes)
    return f"{', '.join(nodes[:limit - 1])}, … +{len(nodes) - limit + 1} more"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def section(title: str, subtitle: str = "") -> Text:
    """A section title (bold) and what it shows (dim)."""
    t = Text()
    t.append(title, style="title")
    if subtitle:
        t.append("  " + subtitle, style="muted")
    return t


def new_table(*, expand: bool = False) -> Table:
    return Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=expand,
                 header_style="bold", padding=(0, 1))


def node_label(nodes: list[str], grouped: bool) -> Text:
    label = Text()
    if not grouped or len(nodes) == 1:
        label.append(nodes[0], style="node")
    else:
        label.append(f"{len(nodes)} nodes", style="num")
        label.append("  " + name_list(nodes), style="muted")
    return label


def print_blocks(console: Console, blocks: Iterable[list[Any]]) -> None:
    first = True
    for block in blocks:
        if not block:
            continue
        if not first:
            console.print()
        for item in block:
            console.print(hang(item))
        first = False

