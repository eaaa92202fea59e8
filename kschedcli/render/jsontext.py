"""JSON text of a document, as `json.dumps(doc, indent=2, ensure_ascii=False)` writes it, made by
orjson (the standard library's encoder runs in Python once it indents: minutes on a sequence
document of hundreds of megabytes).

The two agree byte for byte on what the documents hold: dicts with string keys, lists, strings,
ints, booleans, None and finite floats of at least 1e-4 (or 0). What orjson writes differently or
refuses is written by the standard library instead: a float below 1e-4 (orjson: 0.00001 and 1e-7,
Python: 1e-05 and 1e-07), NaN or an infinity (orjson: null), an integer beyond 64 bits, a lone
surrogate, a non-string key, any other type.

Both write DEL, the C1 controls, the bidirectional controls and U+2028/U+2029 as they are, which a
terminal showing the document would act on (U+009B is a CSI to some): json_text writes them as
\\u escapes, the same strings to a JSON reader (docs/terminal-safety.md). C0 controls are escaped
by both already.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency; without it the standard library writes everything
    orjson = None  # type: ignore[assignment]

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME if orjson else 0
_INF = float("inf")
# what a JSON encoder leaves raw and a terminal acts on (see textsafe: its C0 controls are escaped)
_RAW_CONTROLS = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _u_escape(m: re.Match) -> str:
    return f"\\u{ord(m.group()):04x}"


def escape_controls(text: str) -> str:
    """JSON text with the characters of _RAW_CONTROLS \\u-escaped (they occur in strings only)."""
    if text.isascii():
        if "\x7f" not in text:
            return text
    elif _RAW_CONTROLS.search(text) is None:
        return text
    return _RAW_CONTROLS.sub(_u_escape, text)


def _refuse(obj: Any) -> Any:
    raise TypeError(type(obj).__name__)


def _float_unlike_repr(doc: Any, skip: Collection[str]) -> bool:
    """A float in `doc` that orjson writes unlike Python's repr (the top-level keys in `skip` unread)."""
    stack = [v for k, v in doc.items() if k not in skip] if type(doc) is dict else [doc]
    pop, extend = stack.pop, stack.extend
    while stack:
        o = pop()
        t = type(o)
        if t is dict:
            extend(o.values())
        elif t is list or t is tuple:
            extend(o)
        elif t is float and not (o == 0 or 1e-4 <= abs(o) < _INF):
            return True  # also NaN: every comparison is false
    return False


def json_text(doc: Any, *, float_free: Collection[str] = ()) -> str:
    """The document's JSON, indented by two spaces, non-ASCII as is, no final newline. `float_free`:
    top-level keys whose values the caller built from ints and strings only (not searched for floats)."""
    if orjson is not None and not _float_unlike_repr(doc, float_free):
        try:
            return escape_controls(orjson.dumps(doc, default=_refuse, option=_OPTIONS).decode("utf-8"))
        except (orjson.JSONEncodeError, TypeError):
            pass
    return escape_controls(json.dumps(doc, indent=2, ensure_ascii=False))


def indented(text: str, prefix: str) -> str:
    """`text` with every line prefixed (JSON text has no empty line, and no newline inside a string)."""
    return prefix + text.replace("\n", "\n" + prefix)
