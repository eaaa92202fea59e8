"""A JSON List streamed: the file read in blocks, each item decoded on its own (the standard library's
C scanner), so the tree of a 750 MB file never exists; runs of items handed to orjson where it reads
exactly as the standard library does."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from typing import Any

from .objects import Transform

_orjson: Any
try:  # a faster decoder for large JSON snapshots; the standard library's decides all else
    import orjson as _orjson
except ImportError:  # pragma: no cover - installed with ksched; a bare checkout may lack it
    _orjson = None


_BLOCK = 8 << 20  # JSON streaming block
_MIN_BATCH = 1 << 20  # decode runs of items at least this long in one call
_WS = re.compile(r"[ \t\n\r]*")


class NotStreamable(Exception):
    """Not a well-formed JSON object: read the file the plain way (which reports the error)."""


FIRST_KEY = re.compile(r'\{[ \t\n\r]*"(?:[^"\\\x00-\x1f]|\\.)*"')


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19


def _may_hold_long_integer(data: bytes) -> bool:
    """Whether a JSON number in `data` may have 19 digits or more: orjson reads an integer
    beyond 64 bits as a float. A run of 19 digits counts when it starts a value (after `[`, `,`
    or a key's `":`), so digests and ids inside strings rarely do."""
    zeros = data.translate(_DIGITS_AS_ZERO)  # every digit a '0': runs found by a plain search
    at = zeros.find(_NINETEEN_DIGITS)
    while at >= 0:
        if _starts_a_value(data, at):
            return True
        at = zeros.find(_NINETEEN_DIGITS, at + 19)
    return False


def _starts_a_value(data: bytes, at: int) -> bool:
    """Whether the digits at `at` (after an optional minus) begin a JSON value."""
    i = at - 1
    if i >= 0 and data[i] == 0x2D:  # '-'
        i -= 1
    while i >= 0 and data[i] in b" \t\r\n":
        i -= 1
    if i < 0 or data[i] in b"[,":
        return True
    if data[i] != 0x3A:  # ':'
        return False
    i -= 1
    while i >= 0 and data[i] in b" \t\r\n":
        i -= 1
    return i >= 0 and data[i] == 0x22  # the '"' closing a key


def decode_json_items(data: bytes) -> list:
    """The values of `data`, the inside of a JSON array (items and the commas between them).
    orjson decodes them when it is installed (a third less CPU than the standard library here,
    the same values), unless a number may exceed 64 bits; whatever it refuses (NaN, lone
    surrogates, bad UTF-8, any error) goes to the standard library, which accepts or raises as
    it always does."""
    if _orjson is not None and not _may_hold_long_integer(data):
        try:
            return _orjson.loads(b"[" + data + b"]")
        except Exception:  # noqa: BLE001 - the standard library's verdict stands
            pass
    return json.loads("[" + data.decode("utf-8") + "]")


def stream_json(
    read: Callable[[], bytes],
    transform: Transform | None,
    task,
    split: Callable[[int, bytes, int], tuple[list, int] | None] | None = None,
    seek: Callable[[int], None] | None = None,
):
    """A top-level JSON object from successive blocks of bytes, its `items` decoded one by one.
    Returns (other members, items or None). `split(offset, pattern, separator length)`, when
    given, may take the items from byte `offset` (where the second item starts) on, and return
    them with the offset of the item to read on from (see workers.json_parallel); `seek` moves `read`."""
    raw_decode = json.JSONDecoder().raw_decode
    dec = codecs.getincrementaldecoder("utf-8")()
    st: dict[str, Any] = {"buf": "", "i": 0, "eof": False, "read": 0}

    def more() -> bool:
        if st["eof"]:
            return False
        chunk = read()
        st["read"] += len(chunk)
        if not chunk:
            st["eof"] = True
        try:
            s = dec.decode(chunk, final=st["eof"])
        except UnicodeDecodeError:
            raise NotStreamable from None
        st["buf"] = st["buf"][st["i"] :] + s
        st["i"] = 0
        task.update(st["read"])
        return True

    def skip_ws() -> None:
        while True:
            buf = st["buf"]
            st["i"] = _WS.match(buf, st["i"]).end()  # type: ignore[union-attr]  # _WS matches everywhere
            if st["i"] < len(buf) or not more():
                return

    def value():
        """The value at the cursor; a value ending the buffer counts only at the end of input."""
        while True:
            buf = st["buf"]
            try:
                v, end = raw_decode(buf, st["i"])
                if end < len(buf) or st["eof"]:
                    st["i"] = end
                    return v
            except json.JSONDecodeError:
                if st["eof"]:
                    raise NotStreamable from None
            if not more():
                raise NotStreamable

    def char() -> str:
        skip_ws()
        buf, i = st["buf"], st["i"]
        if i >= len(buf):
            raise NotStreamable
        return buf[i]

    def step() -> None:
        st["i"] += 1

    more()
    if char() != "{":
        raise NotStreamable
    step()
    header: dict = {}
    items = None
    if char() == "}":
        step()
    else:
        while True:
            if char() != '"':
                raise NotStreamable
            key = value()
            if char() != ":":
                raise NotStreamable
            step()
            if key == "items" and char() == "[":
                if items is not None or "items" in header:
                    raise NotStreamable  # a repeated member: the plain reader keeps the last
                step()
                items = []
                if char() == "]":
                    step()
                else:
                    sep = None  # the text between two items, learnt from the first two
                    batching = True
                    while True:
                        skip_ws()
                        if sep is not None and batching:
                            # Many items at once: cut the buffer after the last `}` + sep + `{` and
                            # decode that run as one array (one key memo for all of them). A run
                            # that decodes whole ends on an item boundary; if it does not, items
                            # are decoded one by one from here on.
                            buf, i = st["buf"], st["i"]
                            cut = buf.rfind(sep, i)
                            if cut > i + _MIN_BATCH:
                                try:
                                    batch = json.loads("[" + buf[i : cut + 1] + "]")
                                except ValueError:
                                    batching = False
                                else:
                                    if transform is not None:
                                        batch = [transform(x) if type(x) is dict and "kind" in x else x for x in batch]
                                    items.extend(batch)
                                    st["i"] = cut + len(sep) - 1
                                    continue
                        it = value()
                        if transform is not None and type(it) is dict and "kind" in it:
                            it = transform(it)
                        items.append(it)
                        end = st["i"]
                        c = char()
                        step()
                        if c == "]":
                            break
                        if c != ",":
                            raise NotStreamable
                        if sep is None:
                            start = _WS.match(st["buf"], st["i"]).end()  # type: ignore[union-attr]  # as above
                            if start < len(st["buf"]) and st["buf"][start] == "{":
                                sep = "}" + st["buf"][end:start] + "{"
                                m = FIRST_KEY.match(st["buf"], start) if split is not None else None
                                if m is not None and split is not None and seek is not None:
                                    offset = (
                                        st["read"] - len(dec.getstate()[0]) - len(st["buf"][start:].encode("utf-8"))
                                    )
                                    pattern = ("}" + st["buf"][end : m.end()]).encode("utf-8")
                                    got = split(offset, pattern, len(sep.encode("utf-8")))
                                    if got is not None:
                                        part, resume = got
                                        items.extend(part)
                                        del part
                                        seek(resume)
                                        dec.reset()
                                        st.update(buf="", i=0, eof=False, read=resume)
            else:
                if key in header or (key == "items" and items is not None):
                    raise NotStreamable
                skip_ws()
                header[key] = value()
            c = char()
            step()
            if c == "}":
                break
            if c != ",":
                raise NotStreamable
    skip_ws()
    if st["i"] < len(st["buf"]):
        raise NotStreamable
    return header, items


def json_file_reader(path: str, data: bytes | None):
    if data is not None:
        blocks = iter([data[i : i + _BLOCK] for i in range(0, len(data), _BLOCK)] + [b""])
        return (lambda: next(blocks, b"")), None
    f = open(path, "rb")  # noqa: SIM115 -- closed by the caller, which reads it block by block
    return (lambda: f.read(_BLOCK)), f
