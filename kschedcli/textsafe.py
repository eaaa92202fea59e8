"""Text from outside (names, labels, taints, messages, paths, server strings) made safe to show on a
terminal: the characters a terminal acts on instead of printing are written as visible escapes, the
way Python's repr writes them (ESC as the four characters `\\x1b`).

Escaped: the C0 controls (U+0000-U+001F), DEL (U+007F), the C1 controls (U+0080-U+009F; U+009B is
a one-byte CSI to some terminals), the bidirectional controls (U+061C, U+200E, U+200F,
U+202A-U+202E, U+2066-U+2069) and the line and paragraph separators (U+2028, U+2029). `\\n`, `\\r`
and `\\t` are written as such, the others as `\\xNN` or `\\uNNNN`. A backslash is left alone, so
valid text is unchanged to the byte.

safe_text keeps newlines and tabs (the views lay out their own lines); safe_name escapes them too,
for a value printed on one line (a name, an error line, `-o name`). Both return their argument itself
when it holds nothing to escape (the usual case, checked in C).

This module has no dependency: the core may import it, but escaping happens where text is printed
(the Rich console of render/, the stderr guard of cli_errors), never in the result model, so the
JSON and YAML documents carry the exact strings.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_SEPARATORS = "\u2028\u2029"
# what safe_text escapes (not \t and \n), and what safe_name escapes (every control)
UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_SEPARATORS}]")
_UNSAFE_IN_NAME = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}{_SEPARATORS}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_char(ch: str) -> str:
    """One character as its visible escape: \\n, \\r, \\t, \\xNN or \\uNNNN."""
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _escaped(m: re.Match) -> str:
    return escape_char(m.group())


def safe_text(s: str) -> str:
    """s with every character a terminal would act on escaped, newlines and tabs kept."""
    if s.isprintable() or UNSAFE.search(s) is None:
        return s
    return UNSAFE.sub(_escaped, s)


def safe_name(s: str) -> str:
    """s on one line: as safe_text, newlines and tabs escaped too."""
    if s.isprintable() or _UNSAFE_IN_NAME.search(s) is None:
        return s
    return _UNSAFE_IN_NAME.sub(_escaped, s)


def is_safe(s: str) -> bool:
    """Whether safe_text leaves s as it is."""
    return s.isprintable() or UNSAFE.search(s) is None


class EscapingStream:
    """A text stream (stderr) that writes what it is given through safe_text: the one-line errors,
    warnings and --verbose lines quote names and values from the inputs and the API server. The
    stream it wraps stays reachable as `raw` (for a display that writes its own control codes)."""

    def __init__(self, stream):
        self.raw = stream

    def __getattr__(self, name: str):
        return getattr(self.raw, name)

    def write(self, text: str) -> int:
        if isinstance(text, str):
            safe = safe_text(text)
            if safe is not text:
                self.raw.write(safe)
                return len(text)
        return self.raw.write(text)


def raw_stream(stream):
    """The stream under an EscapingStream (stream itself when it is not one)."""
    while isinstance(stream, EscapingStream):
        stream = stream.raw
    return stream
