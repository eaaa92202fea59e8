"""JSON text of a document, as `json.dumps(doc, indent=2, ensure_ascii=False)` writes it, made by
orjson (the standard library's encoder runs in Python once it indents: minutes on a sequence
document of hundreds of megabytes).

The two agree byte for byte on what the documents hold: dicts with string keys, lists, strings,
ints, booleans, None and finite floats of at least 1e-4 (or 0). What orjson writes differently or
refuses is written by the standard library instead: a float below 1e-4 (orjson: 0.00001 and 1e-7,
Python: 1e-05 and 1e-07), NaN or an infinity (orjson: null), an integer beyond 64 bits, a lone
surrogate, a non-string key, any other type.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency; without it the standard library writes everything
    orjson = None  # type: ignore[assignment]

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME if orjson else 0
_INF = float("inf")


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
            return orjson.dumps(doc, default=_refuse, option=_OPTIONS).decode("utf-8")
        except (orjson.JSONEncodeError, TypeError):
            pass
    return json.dumps(doc, indent=2, ensure_ascii=False)


def indented(text: str, prefix: str) -> str:
    """`text` with every line prefixed (JSON text has no empty line, and no newline inside a string)."""
    return prefix + text.replace("\n", "\n" + prefix)
