"""Reading snapshots and pod files: multi-document YAML, `kind: List`, JSON, or `-` for stdin.

Large snapshots (a 5,000-node cluster is ~750 MB) are read without building the whole tree:

* A JSON `List` is streamed: the file is read in blocks and each element of `items` is decoded
  on its own by the standard library's C scanner (`raw_decode`), then handed to a `transform` that
  may drop the fields the scheduler never reads; the tree of the whole file never exists.
* YAML goes through libyaml (PyYAML's C parser) with a lean node-to-object conversion (the tag
  resolution of PyYAML's SafeLoader, falling back to SafeLoader's own constructor for a document
  with aliases, merge keys or unusual tags). A large multi-document file is cut at `---` lines
  and its pieces are parsed by worker processes, one per core (KSCHED_WORKERS=1 turns this off).
* The cyclic garbage collector is paused while reading (it would rescan millions of live objects).

Whatever the path, the objects, their order, their locations (`items[3] (Pod ns/name)`,
`document 2 (Node n1)`) and the errors are those of a plain `json.loads` / `yaml.safe_load_all`
of the whole file.
"""
from __future__ import annotations

import codecs
import gc
import json
import marshal
import os
import pickle
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from concurrent.futures import BrokenExecutor
from typing import Any, Callable, Iterator

import yaml

try:   # a faster decoder for large JSON snapshots; the standard library's decides all else
    import orjson as _orjson
except ImportError:  # pragma: no cover - installed with ksched; a bare checkout may lack it
    _orjson = None

from . import progress
from .errors import InputError

try:  # the C loader is many times faster on large snapshots
    _Loader = yaml.CSafeLoader
    from yaml._yaml import CParser as _CParser
except (AttributeError, ImportError):  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader
    _CParser = None

Transform = Callable[[dict], Any]

_BLOCK = 8 << 20                 # JSON streaming block
_MIN_BATCH = 1 << 20             # decode runs of items at least this long in one call
_PARALLEL_MIN_BYTES = 24 << 20   # below this, worker processes cost more than they save
_WS = re.compile(r"[ \t\n\r]*")


# ------------------------------------------------------------------------------------ raw input

def _open_error(path: str, e: OSError) -> InputError:
    if isinstance(e, FileNotFoundError):
        return InputError("no such file", source=path)
    if isinstance(e, IsADirectoryError):
        return InputError("is a directory, not a file", source=path)
    return InputError(f"cannot read: {e}", source=path)


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise _open_error(path, e) from None
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read: {e}", source=path) from None


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise _open_error(path, e) from None


def _decode_utf8(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read: {e}", source=path) from None


@contextmanager
def no_gc():
    """Loading allocates millions of objects that all stay alive: the cyclic collector's passes
    over them would cost more than the parsing, so it is paused while reading."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# ------------------------------------------------------------------------------------ YAML

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_INT = "tag:yaml.org,2002:int"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_SCALAR_CONSTRUCTED = {"tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"}


class _Fallback(Exception):
    """The document needs SafeLoader's full constructor (aliases, merge keys, custom tags)."""


def _convert(node, ctor):
    """A composed node as SafeConstructor would build it, for plain documents; raises _Fallback."""
    tag = node.tag
    value = node.value
    if tag == _STR:
        if type(value) is str:
            return value
        raise _Fallback
    if tag == _MAP:
        if type(value) is not list:
            raise _Fallback
        d = {}
        for k, v in value:
            if k.tag == _STR and type(k.value) is str:
                d[k.value] = _convert(v, ctor)
            elif k.tag in (_INT, _NULL, _BOOL):
                d[_convert(k, ctor)] = _convert(v, ctor)
            else:
                raise _Fallback
        return d
    if tag == _SEQ:
        if type(value) is not list:
            raise _Fallback
        return [_convert(x, ctor) for x in value]
    if type(value) is not str:
        raise _Fallback
    if tag == _NULL:
        return None
    if tag == _INT:
        if value.isdigit() and value[0] != "0":
            return int(value)
        return ctor.construct_yaml_int(node)
    if tag == _BOOL:
        return ctor.construct_yaml_bool(node)
    if tag in _SCALAR_CONSTRUCTED:
        return ctor.yaml_constructors[tag](ctor, node)
    raise _Fallback


if _CParser is not None:
    _IMPLICIT = yaml.SafeLoader.yaml_implicit_resolvers
    _WILDCARD = list(_IMPLICIT.get(None, []))
    _RESOLVERS = {k: list(v) + _WILDCARD for k, v in _IMPLICIT.items() if k is not None}
    _FAST_RESOLVE = not yaml.SafeLoader.yaml_path_resolvers

    class _FastLoader(_CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        """CSafeLoader, with SafeLoader's tag resolution done in fewer steps and a direct
        node-to-object conversion for the plain documents Kubernetes objects are."""

        def __init__(self, stream):
            _CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self.last_index = 0

        if _FAST_RESOLVE:  # no path resolvers registered: these are no-ops in Resolver too
            def descend_resolver(self, current_node, current_index):
                pass

            def ascend_resolver(self):
                pass

            def resolve(self, kind, value, implicit, _scalar=yaml.nodes.ScalarNode,
                        _seq=yaml.nodes.SequenceNode, _get=_RESOLVERS.get, _wild=_WILDCARD):
                if kind is _scalar:
                    if implicit[0]:
                        for tag, regexp in _get(value[:1], _wild):
                            if regexp.match(value):
                                return tag
                    return _STR
                return _SEQ if kind is _seq else _MAP

        def next_document(self):
            """The next document (None when empty); raises StopIteration at the end."""
            if not self.check_node():
                raise StopIteration
            node = self.get_node()
            self.last_index = node.end_mark.index
            try:
                return _convert(node, self)
            except (_Fallback, RecursionError):
                return self.construct_document(node)


# ---- block-style documents without libyaml -------------------------------------------------
# kubectl and PyYAML write snapshots in a small corner of YAML: block mappings and (indentless)
# block sequences, one `key: value` per line, plain or quoted scalars, `{}` and `[]`. A document
# made only of such lines is read here line by line, several times faster than composing libyaml
# nodes; anything else (comments, anchors, tags, flow collections, block or multi-line scalars,
# escapes JSON does not share, tabs, odd keys) makes the whole document go through libyaml. The
# values are resolved exactly as SafeLoader resolves them (same implicit resolvers and
# constructors), and the document is either read whole here or not at all.

_PLAIN_BAD_START = frozenset("[]{}#&*!|>'\"%@`,")
# directives, document end markers, and characters YAML does not allow in a stream (libyaml
# reports them): such streams are read by libyaml alone
_NOT_PLAIN_STREAM = re.compile(
    "^%|^\\.\\.\\.(?:[ \\t\\n]|$)|[^\\t\\n\\x20-\\x7e\\x85\\xa0-\\ud7ff\\ue000-\\ufffd\\U00010000-\\U0010ffff]", re.M)
_DOC_MARK = re.compile(r"^---(?=[ \t\n]|$)", re.M)
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _plain_stream(text: str) -> bool:
    """Whether the line reader may take this stream (see _NOT_PLAIN_STREAM)."""
    if "\r" in text or text.startswith("\ufeff"):
        return False
    if text.isascii():
        if _ASCII_CONTROL.search(text):
            return False
        if text.startswith(("%", "...")) or "\n%" in text or "\n..." in text:
            return not _NOT_PLAIN_STREAM.search(text)
        return True
    return not _NOT_PLAIN_STREAM.search(text)


def _plain(text: str, ctor):
    """A plain scalar as SafeLoader resolves and constructs it; raises _Fallback when unsure."""
    c = text[:1]
    if (not text or c in _PLAIN_BAD_START or ": " in text or " #" in text or "\t" in text
            or text[-1] == ":" or (c in "-?:" and (len(text) == 1 or text[1] == " "))):
        raise _Fallback
    for tag, regexp in _RESOLVERS.get(c, _WILDCARD):
        if regexp.match(text):
            break
    else:
        return text
    if tag == _INT and text.isdigit() and c != "0":
        return int(text)
    if tag == _NULL:
        return None
    node = yaml.nodes.ScalarNode(tag, text)
    if tag == _INT:
        return ctor.construct_yaml_int(node)
    if tag == _BOOL:
        return ctor.construct_yaml_bool(node)
    if tag in _SCALAR_CONSTRUCTED:
        return ctor.yaml_constructors[tag](ctor, node)
    raise _Fallback  # merge keys, `=`, ...


_SCALARS: dict[str, Any] = {}     # text -> value, for the immutable scalars; shared by documents


def _scalar(text: str, ctor):
    v = _SCALARS.get(text, _SCALARS)
    if v is not _SCALARS:
        return v
    if text == "{}":
        return {}
    if text == "[]":
        return []
    v = _scalar_uncached(text, ctor)
    if len(_SCALARS) > 200000:
        _SCALARS.clear()
    _SCALARS[text] = v
    return v


def _scalar_uncached(text: str, ctor):
    c = text[:1]
    if c == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _Fallback
        return inner.replace("''", "'")
    if c == '"':
        if len(text) < 2 or text[-1] != '"':
            raise _Fallback
        inner = text[1:-1]
        if "\\" not in inner and '"' not in inner:
            return inner
        if "\\u" in inner or "\\U" in inner:
            raise _Fallback  # YAML reads surrogate pairs apart, JSON together
        try:  # the escapes JSON and YAML share mean the same in both
            v = json.loads(text)
        except ValueError:
            raise _Fallback from None
        if type(v) is not str:
            raise _Fallback
        return v
    return _plain(text, ctor)


_KEYS: dict[str, str] = {}        # key text -> key


def _tokens(lines: list[str], ctor) -> list:
    """(indent, is_item, key, value text) per line; an item `- k: v` gives an item token and a
    key token two columns deeper."""
    out = []
    append = out.append
    for line in lines:
        body = line.lstrip(" ")
        if not body:
            continue
        indent = len(line) - len(body)
        if body[0] == "-" and (len(body) == 1 or body[1] == " "):
            rest = body[2:].lstrip(" ")
            if not rest or rest[0] == "-" and (len(rest) == 1 or rest[1] == " "):
                raise _Fallback  # `-` alone, `- - x`
            indent2 = indent + len(body) - len(rest)
            pos = rest.find(": ")
            if pos < 0 and rest[-1] == ":":
                pos = len(rest) - 1
            if pos < 0 or rest[0] in "'\"":
                if rest[0] in "'\"" and pos >= 0:
                    raise _Fallback  # a quoted key, or a quoted value holding ": "
                append((indent, True, None, rest))
                continue
            append((indent, True, None, None))
            indent, body = indent2, rest
        else:
            pos = body.find(": ")
            if pos < 0:
                if body[-1] != ":":
                    raise _Fallback  # a continuation line, a comment, ...
                pos = len(body) - 1
            if body[0] in "'\"#":
                raise _Fallback
        raw_key = body[:pos]
        key = _KEYS.get(raw_key)
        if key is None:
            key = _plain(raw_key.rstrip(" "), ctor)
            if type(key) is not str:
                raise _Fallback
            if len(_KEYS) > 100000:
                _KEYS.clear()
            _KEYS[raw_key] = key
        value = body[pos + 1:].strip(" ")
        append((indent, False, key, value or None))
    return out


def _block_document(lines: list[str], ctor):
    """A document made of the lines above, or _Fallback."""
    toks = _tokens(lines, ctor)
    if not toks:
        return None
    if toks[0][0] != 0:
        raise _Fallback
    value, end = (_block_seq if toks[0][1] else _block_map)(toks, 0, 0, ctor)
    if end != len(toks):
        raise _Fallback
    return value


# (module-level functions, not closures: nested functions calling each other would form
# reference cycles that hold every document's tokens while the collector is paused)

def _block_map(toks: list, i: int, indent: int, ctor):
    d = {}
    n = len(toks)
    while i < n:
        ind, item, key, vt = toks[i]
        if ind != indent or item:
            break
        i += 1
        if vt is None:
            if i < n and (toks[i][0] > indent or (toks[i][0] == indent and toks[i][1])):
                d[key], i = (_block_seq if toks[i][1] else _block_map)(toks, i, toks[i][0], ctor)
            else:
                d[key] = None
        else:
            d[key] = _scalar(vt, ctor)
            if i < n and toks[i][0] > indent:
                raise _Fallback  # a multi-line scalar
    if i < n and toks[i][0] > indent:
        raise _Fallback
    return d, i


def _block_seq(toks: list, i: int, indent: int, ctor):
    lst = []
    n = len(toks)
    while i < n:
        ind, item, _, vt = toks[i]
        if ind != indent or not item:
            break
        i += 1
        if vt is not None:
            lst.append(_scalar(vt, ctor))
            if i < n and toks[i][0] > indent:
                raise _Fallback
        else:
            if not (i < n and toks[i][0] > indent and not toks[i][1]):
                raise _Fallback
            v, i = _block_map(toks, i, toks[i][0], ctor)
            lst.append(v)
    if i < n and toks[i][0] > indent:
        raise _Fallback
    return lst, i


def _yaml_error(e: yaml.YAMLError, source: str) -> InputError:
    mark = getattr(e, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return InputError(f"malformed YAML: {problem}", source=source, where=where)


def _yaml_docs(text: str, task=None, scale: float = 1.0) -> Iterator[Any]:
    """Every document of a YAML stream, None for empty ones."""
    if _CParser is None:  # pragma: no cover
        yield from yaml.load_all(text, Loader=_Loader)
        return
    if _FAST_RESOLVE and _plain_stream(text):
        yield from _yaml_docs_by_lines(text, task, scale)
        return
    yield from _yaml_docs_libyaml(text, task, scale)


def _yaml_docs_by_lines(text: str, task, scale: float) -> Iterator[Any]:
    """Documents cut at their `---` lines, each read by `_block_document` or by libyaml."""
    ctor = yaml.constructor.SafeConstructor()
    starts = [m.start() for m in _DOC_MARK.finditer(text)]
    pieces = []
    if not starts or starts[0] > 0:
        pieces.append((0, starts[0] if starts else len(text), False))
    for k, st in enumerate(starts):
        pieces.append((st, starts[k + 1] if k + 1 < len(starts) else len(text), True))
    for n, (start, end, marked) in enumerate(pieces):
        chunk = text[start:end]
        lines = chunk.split("\n")
        if marked:
            if lines[0].strip(" \t") != "---":
                doc = _libyaml_piece(text, start, end)   # `--- content` on the marker line
                yield from doc
                continue
            lines = lines[1:]
        try:
            doc = _block_document(lines, ctor)
        except (_Fallback, RecursionError):
            yield from _libyaml_piece(text, start, end)
        else:
            if marked or doc is not None:
                yield doc
        if task is not None and not n & 1023:
            task.update(int(end * scale))


def _libyaml_piece(text: str, start: int, end: int) -> Iterator[Any]:
    """The documents of text[start:end] through libyaml; an error is the whole stream's."""
    try:
        docs = list(_yaml_docs_libyaml(text[start:end]))
    except yaml.YAMLError:
        # read the whole stream for the error: the very one a whole read reports
        for _ in _yaml_docs_libyaml(text):
            pass
        raise
    yield from docs


def _yaml_docs_libyaml(text: str, task=None, scale: float = 1.0) -> Iterator[Any]:
    loader = _FastLoader(text)
    n = 0
    try:
        while True:
            try:
                doc = loader.next_document()
            except StopIteration:
                return
            n += 1
            if task is not None and not n & 1023:
                task.update(int(loader.last_index * scale))
            yield doc
    finally:
        loader.dispose()


_DOC_START = re.compile(rb"\n---(?=[ \t\r\n])")


def _split_yaml(path: str, size: int, parts: int) -> list[tuple[int, int]] | None:
    """Cut a multi-document YAML file into about `parts` pieces at `---` lines (a document marker
    at the start of a line always starts a new document), reading only around the cuts."""
    bounds = [0]
    with open(path, "rb") as f:
        if re.search(rb"(?:^|\n)%", f.read(1 << 16)):
            return None  # directives apply to the documents after them: read it whole
        for i in range(1, parts):
            pos = max(size * i // parts, bounds[-1] + 1)
            while pos < size:
                f.seek(pos - 1)
                block = f.read(1 << 20)
                m = _DOC_START.search(block)
                if m is None:
                    if len(block) < (1 << 20):
                        break
                    pos += len(block) - 8
                    continue
                cut = pos + m.start()  # the line after the newline
                if cut > bounds[-1]:
                    bounds.append(cut)
                break
    if len(bounds) < 2:
        return None
    bounds.append(size)
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def _pack(objs: list) -> bytes:
    """A worker's result for the parent: marshal (several times faster than pickle both ways, and
    it keeps objects shared within the result shared), pickle for what marshal does not take
    (YAML timestamps, ...)."""
    try:
        return b"M" + marshal.dumps(objs)
    except ValueError:
        return b"P" + pickle.dumps(objs, pickle.HIGHEST_PROTOCOL)


def _unpack(data: bytes) -> list:
    view = memoryview(data)[1:]
    return marshal.loads(view) if data[:1] == b"M" else pickle.loads(view)


def _reset_transform(transform: Transform | None) -> None:
    reset = getattr(transform, "reset", None)
    if reset is not None:
        reset()


def _read_piece(path: str, start: int, end: int) -> str:
    """Worker: bytes [start, end) of a file as text (UnicodeDecodeError when they are not UTF-8)."""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start).decode("utf-8")


def _parse_yaml_piece(path: str, start: int, end: int, transform: Transform | None):
    """Worker: the documents (transformed, None kept) of bytes [start, end) of a YAML file,
    packed, or None when the piece does not read cleanly (the caller then reads the file whole)."""
    with no_gc():
        try:
            return _pack([_transform_doc(d, transform) for d in _yaml_docs(_read_piece(path, start, end))])
        except (UnicodeDecodeError, yaml.YAMLError):
            return None
        finally:
            # the scalars shared within a piece would otherwise pin this worker's memory
            _SCALARS.clear()
            _KEYS.clear()
            _reset_transform(transform)


def _transform_doc(doc, transform: Transform | None):
    """Apply `transform` to each object a document holds (a List's items, or the document)."""
    if transform is None or not isinstance(doc, dict):
        return doc
    if _is_list(doc):
        items = doc.get("items")
        if isinstance(items, list):
            typed = doc.get("kind") != "List"
            doc = {**doc, "items": [transform(it) if isinstance(it, dict) and not (typed and "kind" not in it)
                                    else it for it in items]}
        return doc
    return transform(doc)


def _workers() -> int:
    env = os.environ.get("KSCHED_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def _yaml_parallel(path: str, size: int, transform: Transform | None, task,
                   on_items: Callable[[list], None] | None = None) -> list | None:
    """The documents of a large YAML file parsed by worker processes; None when that cannot be
    done here (no processes, one core, a piece that does not parse on its own)."""
    workers = _workers()
    if workers < 2 or size < _PARALLEL_MIN_BYTES:
        return None
    pieces = _split_yaml(path, size, workers * 6)
    if not pieces:
        return None
    done = 0

    def report(start: int, end: int) -> None:
        nonlocal done
        done += end - start
        task.update(done)
    return _run_pieces(workers, path, pieces, _parse_yaml_piece, transform, on_items, report)


def _run_pieces(workers: int, path: str, pieces: list[tuple[int, int]], parse, transform,
                on_items, report) -> list | None:
    """`parse(path, start, end, transform)` on each piece in forked workers, the results joined
    in order (each handed to `on_items` as it arrives, `report(start, end)` after it); None when
    a piece does not read on its own (the caller then reads the plain way, for the exact error)
    or no processes can be forked here."""
    try:
        pool = _fork_pool(workers)
        if pool is None:
            return None
        with pool:
            futures = [pool.submit(parse, path, s, e, transform) for s, e in pieces]
            out: list = []
            for (s, e), fut in zip(pieces, futures):
                part = fut.result()
                if part is None:
                    for f in futures:
                        f.cancel()
                    return None
                part = _unpack(part)
                out.extend(part)
                if on_items is not None:
                    on_items(part)
                del part
                report(s, e)
            return out
    except (OSError, ImportError, BrokenExecutor):
        return None


def _fork_pool(workers: int):
    """A pool of `workers` forked processes, or None where processes cannot be forked. Fork: the
    workers need nothing but this module, already loaded (spawn would re-run the main script,
    which need not be import-safe)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))


# ------------------------------------------------------------------------------------ JSON

class _NotStreamable(Exception):
    """Not a well-formed JSON object: read the file the plain way (which reports the error)."""


_JSON_PIECES_PER_WORKER = 12
_FIRST_KEY = re.compile(r'\{[ \t\n\r]*"(?:[^"\\\x00-\x1f]|\\.)*"')


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19


def _may_hold_long_integer(data: bytes) -> bool:
    """Whether a JSON number in `data` may have 19 digits or more: orjson reads an integer
    beyond 64 bits as a float. A run of 19 digits counts when it starts a value (after `[`, `,`
    or a key's `":`), so digests and ids inside strings rarely do."""
    zeros = data.translate(_DIGITS_AS_ZERO)    # every digit a '0': runs found by a plain search
    at = zeros.find(_NINETEEN_DIGITS)
    while at >= 0:
        if _starts_a_value(data, at):
            return True
        at = zeros.find(_NINETEEN_DIGITS, at + 19)
    return False


def _starts_a_value(data: bytes, at: int) -> bool:
    """Whether the digits at `at` (after an optional minus) begin a JSON value."""
    i = at - 1
    if i >= 0 and data[i] == 0x2D:   # '-'
        i -= 1
    while i >= 0 and data[i] in b" \t\r\n":
        i -= 1
    if i < 0 or data[i] in b"[,":
        return True
    if data[i] != 0x3A:   # ':'
        return False
    i -= 1
    while i >= 0 and data[i] in b" \t\r\n":
        i -= 1
    return i >= 0 and data[i] == 0x22   # the '"' closing a key


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


def _parse_json_piece(path: str, start: int, end: int, transform: Transform | None):
    """Worker: bytes [start, end) of a JSON file, items of a List and the separators between
    them, decoded and transformed as the streaming reader does, packed; None when they do not
    decode as a run of whole items (the caller then reads them itself)."""
    with no_gc():
        try:
            with open(path, "rb") as f:
                f.seek(start)
                items = decode_json_items(f.read(end - start))
            if transform is not None:
                items = [transform(x) if type(x) is dict and "kind" in x else x for x in items]
            return _pack(items)
        except Exception:  # noqa: BLE001 - the caller reads the piece itself, and reports it
            return None
        finally:
            _reset_transform(transform)


def _find_forward(f, start: int, size: int, pattern: bytes) -> int | None:
    """The offset of the first `pattern` at or after `start`."""
    pos = start
    while pos < size:
        f.seek(pos)
        block = f.read(4 << 20)
        i = block.find(pattern)
        if i >= 0:
            return pos + i
        if len(block) < (4 << 20):
            return None
        pos += len(block) - len(pattern) + 1
    return None


def _find_backward(f, lower: int, size: int, pattern: bytes) -> int | None:
    """The offset of the last `pattern` at or after `lower`."""
    end = size
    while end > lower:
        start = max(lower, end - (4 << 20))
        f.seek(start)
        block = f.read(end - start)
        i = block.rfind(pattern)
        if i >= 0:
            return start + i
        end = start + len(pattern) - 1
        if start == lower:
            return None
    return None


def _json_parallel(path: str, size: int, pos: int, pattern: bytes, sep_len: int,
                   transform: Transform | None, task, on_items: Callable[[list], None] | None = None):
    """The items of a JSON List from byte `pos` (where an item starts) on, decoded by worker
    processes, one per core: the rest of the file is cut just before items that start as the
    second item did (`pattern`: the end of an item, the separator and `{"firstkey"`), and each
    piece decoded as a run of items. A cut that is not between two items makes its pieces fail
    to decode (an unterminated string or unbalanced brackets). Returns (items, offset of the item
    the caller reads on from), or None: no workers, or a piece that did not decode (the caller
    then reads on from `pos` itself, which reports any error exactly)."""
    workers = _workers()
    if workers < 2 or size - pos < _PARALLEL_MIN_BYTES:
        return None
    parts = workers * _JSON_PIECES_PER_WORKER
    found: list[int] = []
    try:
        with open(path, "rb") as f:
            for k in range(1, parts):
                target = max(pos + (size - pos) * k // parts, found[-1] + 1 if found else pos)
                o = _find_forward(f, target, size, pattern)
                if o is None:
                    break
                found.append(o)
            # the last item that starts so: the caller reads from there to the end of the file
            last = _find_backward(f, found[-1] + 1 if found else pos, size, pattern)
            if last is not None:
                found.append(last)
    except OSError:
        return None
    if not found:
        return None
    starts = [pos] + [o + sep_len - 1 for o in found]
    pieces = list(zip(starts, [o + 1 for o in found]))
    items = _run_pieces(workers, path, pieces, _parse_json_piece, transform, on_items,
                        lambda _start, end: task.update(end))
    return None if items is None else (items, starts[-1])


def _stream_json(read: Callable[[], bytes], transform: Transform | None, task,
                 split: Callable[[int, bytes, int], tuple[list, int] | None] | None = None,
                 seek: Callable[[int], None] | None = None):
    """A top-level JSON object from successive blocks of bytes, its `items` decoded one by one.
    Returns (other members, items or None). `split(offset, pattern, separator length)`, when
    given, may take the items from byte `offset` (where the second item starts) on, and return
    them with the offset of the item to read on from (see _json_parallel); `seek` moves `read`."""
    raw_decode = json.JSONDecoder().raw_decode
    dec = codecs.getincrementaldecoder("utf-8")()
    st = {"buf": "", "i": 0, "eof": False, "read": 0}

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
            raise _NotStreamable from None
        st["buf"] = st["buf"][st["i"]:] + s
        st["i"] = 0
        task.update(st["read"])
        return True

    def skip_ws() -> None:
        while True:
            buf = st["buf"]
            st["i"] = _WS.match(buf, st["i"]).end()
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
                    raise _NotStreamable from None
            if not more():
                raise _NotStreamable

    def char() -> str:
        skip_ws()
        buf, i = st["buf"], st["i"]
        if i >= len(buf):
            raise _NotStreamable
        return buf[i]

    def step() -> None:
        st["i"] += 1

    more()
    if char() != "{":
        raise _NotStreamable
    step()
    header: dict = {}
    items = None
    if char() == "}":
        step()
    else:
        while True:
            if char() != '"':
                raise _NotStreamable
            key = value()
            if char() != ":":
                raise _NotStreamable
            step()
            if key == "items" and char() == "[":
                if items is not None or "items" in header:
                    raise _NotStreamable  # a repeated member: the plain reader keeps the last
                step()
                items = []
                if char() == "]":
                    step()
                else:
                    sep = None      # the text between two items, learnt from the first two
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
                                    batch = json.loads("[" + buf[i:cut + 1] + "]")
                                except ValueError:
                                    batching = False
                                else:
                                    if transform is not None:
                                        batch = [transform(x) if type(x) is dict and "kind" in x else x
                                                 for x in batch]
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
                            raise _NotStreamable
                        if sep is None:
                            start = _WS.match(st["buf"], st["i"]).end()
                            if start < len(st["buf"]) and st["buf"][start] == "{":
                                sep = "}" + st["buf"][end:start] + "{"
                                m = _FIRST_KEY.match(st["buf"], start) if split is not None else None
                                if m is not None:
                                    offset = (st["read"] - len(dec.getstate()[0])
                                              - len(st["buf"][start:].encode("utf-8")))
                                    pattern = ("}" + st["buf"][end:m.end()]).encode("utf-8")
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
                    raise _NotStreamable
                skip_ws()
                header[key] = value()
            c = char()
            step()
            if c == "}":
                break
            if c != ",":
                raise _NotStreamable
    skip_ws()
    if st["i"] < len(st["buf"]):
        raise _NotStreamable
    return header, items


def _json_file_reader(path: str, data: bytes | None):
    if data is not None:
        blocks = iter([data[i:i + _BLOCK] for i in range(0, len(data), _BLOCK)] + [b""])
        return (lambda: next(blocks, b"")), None
    f = open(path, "rb")
    return (lambda: f.read(_BLOCK)), f


# ------------------------------------------------------------------------------------ documents

def parse_documents(text: str, source: str) -> list:
    """The documents of a file: JSON when it parses as JSON, else multi-document YAML."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            doc = json.loads(text)
            return [doc]
        except json.JSONDecodeError:
            pass  # YAML is a superset of JSON; let the YAML parser report where it breaks
    try:
        return [d for d in _yaml_docs(text) if d is not None]
    except yaml.YAMLError as e:
        raise _yaml_error(e, source) from None


def _is_list(doc: dict) -> bool:
    kind = doc.get("kind")
    return kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in doc)


def describe(obj: dict) -> str:
    kind = obj.get("kind") or "object"
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") or meta.get("generateName") or "?"
    ns = meta.get("namespace")
    if kind == "Pod" and not ns:
        ns = "default"
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _file_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError as e:
        raise _open_error(path, e) from None


def load_documents(path: str, transform: Transform | None = None,
                   on_items: Callable[[list], None] | None = None) -> list:
    """The non-empty documents of a file, every object passed through `transform` as it is read
    (a List's items one by one). Same result as `parse_documents` on the whole text.

    `on_items(objects)`, when given, sees runs of the (transformed) objects or documents as worker
    processes deliver them, while the others still read: a caller may start on them (it must
    neither modify them nor raise). Objects read otherwise are not shown to it."""
    data = read_bytes(path) if path == "-" else None
    size = len(data) if data is not None else _file_size(path)
    if data is None and os.path.isdir(path):
        raise InputError("is a directory, not a file", source=path)
    label = "stdin" if path == "-" else os.path.basename(path)
    with progress.task(f"Reading {label}", total=size, unit="bytes") as task, no_gc():
        if data is not None:
            head = data[:4096]
        else:
            try:
                with open(path, "rb") as f:
                    head = f.read(4096)
            except OSError as e:
                raise _open_error(path, e) from None
        head = head.lstrip()
        if head[:1] == b"{":
            read, f = _json_file_reader(path, data)
            split = seek = None
            if f is not None:
                def split_items(offset: int, pattern: bytes, sep_len: int):
                    return _json_parallel(path, size, offset, pattern, sep_len, transform, task, on_items)
                split, seek = split_items, f.seek
            try:
                header, items = _stream_json(read, transform, task, split, seek)
            except _NotStreamable:
                pass
            else:
                if items is None:
                    return [_transform_doc(header, transform)]
                doc = {**header, "items": items}   # kubectl writes the List's kind after its items
                return [doc if _is_list(doc) else _transform_doc(doc, transform)]
            finally:
                if f is not None:
                    f.close()
        if head[:1] in (b"{", b"["):
            if data is None:
                data = read_bytes(path)
            text = _decode_utf8(data, path)
            try:
                return [_transform_doc(json.loads(text), transform)]
            except json.JSONDecodeError:
                pass  # YAML is a superset of JSON; let the YAML parser report where it breaks
        else:
            if data is None:
                # workers read their pieces from the file: nothing large exists here when they fork
                docs = _yaml_parallel(path, size, transform, task, on_items)
                if docs is not None:
                    return [d for d in docs if d is not None]
                data = read_bytes(path)
            text = _decode_utf8(data, path)
        del data
        try:
            docs = [_transform_doc(d, transform) for d in _yaml_docs(text, task, size / max(1, len(text)))
                    if d is not None]
        except yaml.YAMLError as e:
            raise _yaml_error(e, path) from None
        task.update(size)
        return docs


def iter_objects(path: str, transform: Transform | None = None,
                 on_items: Callable[[list], None] | None = None) -> Iterator[tuple[dict, str]]:
    """Every object in the file, flattening Lists, each with its location (`items[3] (Pod ns/n)`).

    `transform`, when given, is applied to each object as it is read (possibly in a worker
    process, so it must be a module-level function): the cluster loader uses it to keep only
    the fields the scheduler reads. `on_items`: see load_documents."""
    for obj, loc in iter_located(path, transform, on_items):
        yield obj, where(obj, loc)


Location = tuple  # (document index, item index or None, whether the file has one document)


def where(obj: dict, loc: Location) -> str:
    """The location iter_objects gives an object that iter_located placed at `loc`."""
    di, ii, single = loc
    if ii is not None:
        prefix = f"items[{ii}]" if single else f"document {di + 1} items[{ii}]"
        return f"{prefix} ({describe(obj)})"
    prefix = "" if single else f"document {di + 1}"
    return f"{prefix} ({describe(obj)})" if prefix else describe(obj)


def iter_located(path: str, transform: Transform | None = None,
                 on_items: Callable[[list], None] | None = None) -> Iterator[tuple[dict, Location]]:
    """iter_objects, with each object's location left for `where` to spell out (when needed)."""
    docs = load_documents(path, transform, on_items)
    single = len(docs) == 1
    for di, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise InputError("expected a Kubernetes object or a List", source=path,
                             where=f"document {di + 1}")
        if _is_list(doc):
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise InputError("items must be a list", source=path)
            kind = doc["kind"]
            typed = kind != "List"
            for ii, it in enumerate(items):
                if type(it) is not dict and not isinstance(it, dict):
                    prefix = f"items[{ii}]" if single else f"document {di + 1} items[{ii}]"
                    raise InputError("expected an object", source=path, where=prefix)
                if typed and "kind" not in it:
                    it = {**it, "kind": kind[:-4]}
                    if transform is not None:
                        it = transform(it)
                yield it, (di, ii, single)
        else:
            yield doc, (di, None, single)
