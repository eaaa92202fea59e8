"""Shared pieces of the terminal views: the console and its theme, the marks, section titles, tables,
text that hangs under its first character, and printing a view's blocks with a blank line between them."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.theme import Theme

from ..analysis import fmt_quantity
from ..richsafe import SafeConsole, SafeTable, Text, escaped

THEME = Theme(
    {
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
    }
)

PASS, FIRST, ALSO, SKIP = "✓", "▶", "✗", "–"


def make_console(
    no_color: bool = False,
    *,
    record: bool = False,
    width: int | None = None,
    force_terminal: bool | None = None,
    file=None,
) -> Console:
    no_color = no_color or "NO_COLOR" in os.environ and os.environ.get("NO_COLOR", "") != ""
    return SafeConsole(  # no markup, and what it prints escaped (render/richsafe.py)
        file=file,
        theme=THEME,
        no_color=no_color,
        record=record,
        width=width,
        force_terminal=force_terminal,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )


def indent(renderable, n: int = 2) -> Padding:
    return Padding(renderable, (0, 0, 0, n), expand=False)


GLUE = "\u00a0"  # a space the views never break at (printed as a plain space)

# a count or quantity: 13, 0/20, 2.30, +3, 300s, 29.8Gi, 13×, (2)
_NUMBER = re.compile(r"\(?[+−-]?\d[\d.,/]*[A-Za-z%×]*\)?")
_WORD = re.compile(r" *[^ ]+ *| +")
_PIECE = re.compile(r"[^ \u00a0]+[ \u00a0]*|[ \u00a0]+")


def glue(s: str) -> str:
    """s as one unbreakable unit (it still breaks, at its own spaces, when longer than a line)."""
    return s.replace(" ", GLUE)


def bind_numbers(plain: str) -> str:
    """plain with the single spaces around a number glued: a count stays with what it counts and a
    value with its name (`13 nodes`, `weight 2.30`, `us-east-1c (2)`); a space after `,` `;` `:` stays
    a break."""
    chars = list(plain)
    last = len(plain) - 1
    for i, ch in enumerate(plain):
        if ch != " " or i == 0 or i == last or plain[i - 1] in " \n" or plain[i + 1] in " \n":
            continue
        j = max(plain.rfind(" ", 0, i), plain.rfind("\n", 0, i), plain.rfind(GLUE, 0, i))
        left = plain[j + 1 : i]
        if left[-1] in ",;:":
            continue
        k = min(
            (x for x in (plain.find(" ", i + 1), plain.find("\n", i + 1), plain.find(GLUE, i + 1)) if x >= 0),
            default=len(plain),
        )
        right = plain[i + 1 : k].rstrip(",;:.")
        if _NUMBER.fullmatch(left) or _NUMBER.fullmatch(right):
            chars[i] = GLUE
    return "".join(chars)


def glue_message(message: str, short: int = 24) -> str:
    """kube-scheduler's `0/20 nodes are available: 13 Insufficient cpu, 1 node(s) had ...` with each
    short reason and each braced taint glued, so that a count never leaves its reason."""
    message = re.sub(r"\{[^{}]{0,40}\}", lambda m: glue(m.group()), message)

    def item(text: str) -> str:
        if len(text) <= short:
            return glue(text)
        head, sep, tail = text.rpartition(": ")  # `... are available: 13 Insufficient cpu`
        return head + sep + glue(tail) if sep and len(tail) <= short else text

    return ", ".join(item(x) for x in message.split(", "))


def _break_offsets(plain: str, width: int) -> list[int]:
    """Where to break one line of text (no newline) to fit width: at plain spaces; a word wider than a
    line breaks at its glued spaces, and only a single word wider than a line is cut."""
    offsets: list[int] = []
    col = 0

    def place(start: int, word: str, pattern: re.Pattern | None) -> None:
        nonlocal col
        size = cell_len(word.rstrip(" " + GLUE))
        if size <= width - col:
            col += cell_len(word)
            return
        if size > width and pattern is not None:
            for m in pattern.finditer(word):
                place(start + m.start(), m.group(), _PIECE if pattern is _WORD else None)
            return
        if col and start:
            offsets.append(start)
            col = 0
        if size > width:  # one word wider than a line: cut it
            for cut in range(0, len(word), width)[1:]:
                offsets.append(start + cut)
            col = cell_len(word[len(word) // width * width :])
        else:
            col = cell_len(word)

    place(0, plain, _WORD)
    # no widow: a last line of one word takes the word before it along (`... the taint is` / `removed`)
    tail = plain[offsets[-1] :].strip(" ") if offsets else ""
    if tail and plain[offsets[-1] - 1] == " " and len(tail) <= 12 and not set(tail) & {" ", GLUE}:
        start = offsets[-2] if len(offsets) > 1 else 0
        before = plain[start : offsets[-1]].rstrip(" ")
        j = before.rfind(" ")
        if j > 0 and GLUE not in before[j + 1 :] and cell_len(plain[start + j + 1 :].rstrip(" ")) <= width:
            offsets[-1] = start + j + 1
    return offsets


def wrap_lines(text: Text, width: int) -> list[Text]:
    """text's lines wrapped to width by the rules of _break_offsets, glue printed as spaces."""
    out: list[Text] = []
    width = max(1, width)
    for line in text.split("\n", allow_blank=True):
        for piece in line.divide(_break_offsets(line.plain, width)):
            piece.rstrip()
            out.append(unglued(piece))
    return out


def unglued(t: Text) -> Text:
    if GLUE not in t.plain:
        return t
    return Text(t.plain.replace(GLUE, " "), style=t.style, end="", spans=list(t.spans))


class Hang:
    """Text wrapped to the width with its first line indented by n spaces and the others by rest, no
    trailing padding; numbers bound to their neighbours and glued spaces kept (see bind_numbers)."""

    def __init__(self, text: Text, n: int, rest: int | None = None):
        self.text = escaped(text)
        self.n = n
        self.rest = n + 2 if rest is None else rest

    def _bound(self) -> Text:
        t = self.text.copy()
        bound = bind_numbers(t.plain)
        return Text(bound, style=t.style, end="", spans=list(t.spans)) if bound != t.plain else t

    def __rich_console__(self, console, options):
        text = self._bound()
        first = wrap_lines(text, max(10, options.max_width - self.n))
        lines = first[:1]
        if len(first) > 1:
            rest = text[len(first[0].plain) :]
            rest = rest[len(rest.plain) - len(rest.plain.lstrip(" " + GLUE)) :]
            lines += wrap_lines(rest, max(10, options.max_width - self.rest))
        out = Text(no_wrap=True, overflow="ignore")
        for i, line in enumerate(lines):
            if i:
                out.append("\n")
            out.append(" " * (self.n if i == 0 else self.rest))
            out.append_text(line)
        yield out

    def __rich_measure__(self, console, options):
        plain = self._bound().plain
        words = [w for w in re.split(r"[ \n]+", plain) if w]
        longest = max((cell_len(w) for w in words), default=0)
        widest = max((cell_len(x) for x in plain.split("\n")), default=0)
        return Measurement(longest + max(self.n, self.rest), widest + self.n)


def cpu_decimals(millis) -> int:
    """How many decimals of a core the cpu amounts need between them (0 to 3), so that a column or a row
    writes them alike (2.260 beside 6.594, not 2.26)."""
    need = 0
    for m in millis:
        m = abs(m)
        need = max(need, 0 if m % 1000 == 0 else 1 if m % 100 == 0 else 2 if m % 10 == 0 else 3)
    return need


def fmt_cores(milli: int, decimals: int) -> str:
    """Millicores as cores with exactly `decimals` decimals (exact: the amounts are whole millicores)."""
    whole, frac = divmod(abs(milli), 1000)
    sign = "-" if milli < 0 else ""
    return f"{sign}{whole}" + (f".{frac:03d}"[: decimals + 1] if decimals else "")


def quantities(resource: str, amounts) -> Callable[[int], str]:
    """A formatter for amounts of one resource shown side by side: cpu in cores at one precision,
    others as fmt_quantity writes them."""
    if resource == "cpu":
        decimals = cpu_decimals(amounts)
        return lambda v: fmt_cores(v, decimals)
    return lambda v: fmt_quantity(resource, v)


def prose(text: Text | str, style: str = "") -> Hang:
    """A table cell of words: wraps only between them (see Hang), never inside a name."""
    return Hang(text if isinstance(text, Text) else Text(text, style=style), 0, 0)


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
    return f"{', '.join(nodes[: limit - 1])}, … +{len(nodes) - limit + 1} more"


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
    return SafeTable(  # cells escaped as they are added (render/richsafe.py)
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=expand, header_style="bold", padding=(0, 1)
    )


def node_label(nodes: list[str], grouped: bool) -> Text:
    label = Text()
    if not grouped or len(nodes) == 1:
        label.append(nodes[0], style="node")
    else:
        label.append(plural(len(nodes), "node"), style="num")
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
