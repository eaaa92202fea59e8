"""The terminal views' Rich pieces that keep text from outside from acting on the terminal (see
kschedcli/textsafe.py and docs/terminal-safety.md).

- `Text`: rich's Text, the characters a terminal acts on written as visible escapes when the text
  is made or appended to (Rich itself would drop BEL, BS, VT, FF and CR and pass ESC, DEL and the C1
  controls through). The views make their Text from this class, so names and messages are escaped
  before any width is measured or any line broken.
- `SafeTable`: a Table whose cells and headers are escaped the same way when added.
- `SafeConsole`: a Console without markup (a `[red]` in a name is printed, never obeyed) that escapes
  what reaches its output, whatever made it: the last guard, behind the two above.

Valid text holds none of these characters and prints byte for byte as before.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderHook
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Span
from rich.text import Text as RichText

from ..textsafe import UNSAFE, escape_char, is_safe, safe_text


def _escape_with_spans(plain: str, spans: Iterable[Span]) -> tuple[str, list[Span]]:
    """plain escaped as safe_text escapes it, and spans moved to cover the same characters."""
    starts: list[int] = []  # where each escaped character was
    grown: list[int] = []  # how much longer the text is after it
    out: list[str] = []
    last = 0
    extra = 0
    for m in UNSAFE.finditer(plain):
        esc = escape_char(m.group())
        out.append(plain[last : m.start()])
        out.append(esc)
        last = m.end()
        extra += len(esc) - 1
        starts.append(m.start())
        grown.append(extra)
    out.append(plain[last:])

    def moved(i: int) -> int:
        k = bisect_right(starts, i - 1)  # escapes strictly before i
        return i + (grown[k - 1] if k else 0)

    return "".join(out), [Span(moved(s.start), moved(s.end), s.style) for s in spans]


def escaped(text: RichText) -> RichText:
    """text itself when it holds nothing to escape, else an escaped copy with its styles kept."""
    if is_safe(text.plain):
        return text
    plain, spans = _escape_with_spans(text.plain, text.spans)
    return RichText(
        plain,
        style=text.style,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
        tab_size=text.tab_size,
        spans=spans,
    )


class _EscapingText(RichText):
    """rich.text.Text with what it is given escaped (textsafe.safe_text), not stripped or passed on."""

    __slots__ = ()

    def __init__(self, text: str = "", *args: Any, spans: list[Span] | None = None, **kwargs: Any) -> None:
        if not is_safe(text):
            if spans:
                text, spans = _escape_with_spans(text, spans)
            else:
                text = safe_text(text)
        super().__init__(text, *args, spans=spans, **kwargs)

    def append(self, text: RichText | str, style: Any = None) -> RichText:
        if isinstance(text, str):
            text = safe_text(text)
        elif isinstance(text, RichText):
            text = escaped(text)
        return super().append(text, style)

    def append_text(self, text: RichText) -> RichText:
        return super().append_text(escaped(text))


if TYPE_CHECKING:  # the same API as rich's Text: the views' annotations take either
    Text = RichText
else:
    Text = _EscapingText


def safe_cell(cell: Any) -> Any:
    """A table cell or header escaped: a str or Text; other renderables as they are (they are made of
    this module's Text, and the console escapes what they print)."""
    if isinstance(cell, str):
        return safe_text(cell)
    if isinstance(cell, RichText):
        return escaped(cell)
    return cell


class SafeTable(Table):
    """A Table whose cells and headers are escaped as they are added (before any width is measured)."""

    def add_column(self, header: Any = "", *args: Any, **kwargs: Any) -> None:
        if "footer" in kwargs:
            kwargs["footer"] = safe_cell(kwargs["footer"])
        super().add_column(safe_cell(header), *args, **kwargs)

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        super().add_row(*[safe_cell(r) for r in renderables], **kwargs)


class _Escaping:
    """A renderable printed as it renders, every character a terminal acts on in its text escaped
    (Rich's own control segments, the cursor moves of a live display, kept)."""

    __slots__ = ("renderable",)

    def __init__(self, renderable: RenderableType):
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions):
        for seg in console.render(self.renderable, options):
            if seg.control or is_safe(seg.text):
                yield seg
            else:
                yield Segment(safe_text(seg.text), seg.style, seg.control)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)


class _EscapeHook(RenderHook):
    def process_renderables(self, renderables: list) -> list:
        return [_Escaping(escaped(r) if isinstance(r, RichText) else r) for r in renderables]


class SafeConsole(Console):
    """A Console that prints no markup and escapes what it prints (see the module's doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        super().__init__(*args, **kwargs)
        self.push_render_hook(_EscapeHook())

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> RichText:
        # a str printed or put in a cell: escaped before Rich makes it a Text (which drops BEL, ...)
        return super().render_str(safe_text(text), *args, **kwargs)
