"""YAML as PyYAML's safe load reads it, fast: libyaml (PyYAML's C parser) with a lean node-to-object
conversion, and a line-by-line reader for the block-style documents kubectl and PyYAML write."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

from ..errors import InputError
from . import goyaml
from .yaml_bounds import check_aliasing, check_depth, may_alias

_Loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
_CParser: Any
try:  # the C loader is many times faster on large snapshots
    _Loader = yaml.CSafeLoader
    from yaml._yaml import CParser as _CParser
except (AttributeError, ImportError):  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader
    _CParser = None

# ------------------------------------------------------------------------------------ YAML

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_INT = "tag:yaml.org,2002:int"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_FLOAT = "tag:yaml.org,2002:float"
_SCALAR_CONSTRUCTED = {_FLOAT, "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"}


def _go_exponent_float(text: str) -> bool:
    """Whether a plain scalar YAML 1.1 reads as a string is a number with an exponent to go-yaml v2
    (`1e+09`, `1e9`, `2.5E3`: its float pattern needs no dot, nor a sign in the exponent), the
    writer of kubectl's output (which quotes such a string); the value is float(text) then.
    Anything else keeps PyYAML's reading."""
    if text[:1] not in _NUMBER_START or ("e" not in text and "E" not in text):
        return False
    return goyaml.resolve(text)[0] == _FLOAT


_NUMBER_START = frozenset("+-.0123456789")


class _Fallback(Exception):
    """The document needs SafeLoader's full constructor (aliases, merge keys, custom tags)."""


def duplicate_key(key: Any, mark) -> yaml.MarkedYAMLError:
    """A key set twice in one map: kubectl's strict reading refuses it, and the last value would
    otherwise hide the first (two objects joined without a `---` line lose all but the last)."""
    return yaml.MarkedYAMLError(problem=goyaml.duplicate_key_problem(key, mark), problem_mark=mark)


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
        texts: set | None = None  # the non-string keys' texts (1 and true are one Python key)
        for k, v in value:
            if k.tag == _STR and type(k.value) is str:
                key = k.value
                if key in d:
                    raise duplicate_key(key, k.start_mark)
            elif k.tag in (_INT, _NULL, _BOOL):
                key = _convert(k, ctor)
                if texts is None:
                    texts = set()
                elif k.value in texts:
                    raise duplicate_key(k.value, k.start_mark)
                texts.add(k.value)
            else:
                raise _Fallback
            d[key] = _convert(v, ctor)
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
            self.may_alias = True  # the caller says when the stream cannot hold an alias

        if _FAST_RESOLVE:  # no path resolvers registered: these are no-ops in Resolver too

            def descend_resolver(self, current_node, current_index):
                pass

            def ascend_resolver(self):
                pass

            def resolve(
                self,
                kind,
                value,
                implicit,
                _scalar=yaml.nodes.ScalarNode,
                _seq=yaml.nodes.SequenceNode,
                _get=_RESOLVERS.get,
                _wild=_WILDCARD,
            ):
                if kind is _scalar:
                    if implicit[0]:
                        for tag, regexp in _get(value[:1], _wild):
                            if regexp.match(value):
                                return tag
                        if _go_exponent_float(value):
                            return _FLOAT
                    return _STR
                return _SEQ if kind is _seq else _MAP

        def construct_mapping(self, node, deep=False):
            # a key written twice (merge keys `<<` aside, which may set keys again)
            seen: set = set()
            for k, _ in node.value:
                if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                    if k.value in seen:
                        raise duplicate_key(k.value, k.start_mark)
                    seen.add(k.value)
            return super().construct_mapping(node, deep=deep)

        def next_document(self):
            """The next document (None when empty); raises StopIteration at the end."""
            if not self.check_node():
                raise StopIteration
            node = self.get_node()
            assert node is not None  # check_node said there is one
            self.last_index = node.end_mark.index
            if self.may_alias:
                # aliases are shared by the constructor (never copied, as _convert would), within
                # the bound kubectl's reader sets
                check_aliasing(node)
                return self.construct_document(node)
            try:
                return _convert(node, self)
            except (_Fallback, RecursionError):
                return self.construct_document(node)

    class _GoLoader(_CParser):
        """libyaml's composer with go-yaml v2's reading (goyaml): untagged plain scalars are
        resolved by goyaml, the document converted as sigs.k8s.io/yaml's YAMLToJSON does."""

        def __init__(self, stream):
            _CParser.__init__(self, stream)
            self.last_index = 0
            self.may_alias = True

        def descend_resolver(self, current_node, current_index):
            pass

        def ascend_resolver(self):
            pass

        def resolve(self, kind, value, implicit):
            if kind is yaml.nodes.ScalarNode:
                return goyaml.PLAIN if implicit[0] else _STR
            return _SEQ if kind is yaml.nodes.SequenceNode else _MAP

        def next_document(self):
            """The next document (None when empty); raises StopIteration at the end."""
            if not self.check_node():
                raise StopIteration
            node = self.get_node()
            assert node is not None  # check_node said there is one
            self.last_index = node.end_mark.index
            if self.may_alias:
                check_aliasing(node)
            return goyaml.convert(node)


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
    "^%|^\\.\\.\\.(?:[ \\t\\n]|$)|[^\\t\\n\\x20-\\x7e\\x85\\xa0-\\ud7ff\\ue000-\\ufffd\\U00010000-\\U0010ffff]", re.M
)
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
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        return False  # line breaks to YAML (NEL, LS, PS) that the line reader would keep in values
    return not _NOT_PLAIN_STREAM.search(text)


def _plain_checked(text: str) -> str:
    """The first character of a plain scalar the line reader may take; raises _Fallback when
    unsure (indicators, comments, tabs, ...)."""
    c = text[:1]
    if (
        not text
        or c in _PLAIN_BAD_START
        or ": " in text
        or " #" in text
        or "\t" in text
        or text[-1] == ":"
        or (c in "-?:" and (len(text) == 1 or text[1] == " "))
    ):
        raise _Fallback
    return c


_CTOR = yaml.constructor.SafeConstructor()  # its scalar constructors keep no state


def _plain(text: str, ctor=_CTOR):
    """A plain scalar as SafeLoader resolves and constructs it; raises _Fallback when unsure."""
    c = _plain_checked(text)
    for tag, regexp in _RESOLVERS.get(c, _WILDCARD):  # noqa: B007 -- the matched tag is read after the loop
        if regexp.match(text):
            break
    else:
        if _go_exponent_float(text):
            return float(text.replace("_", ""))
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


def _plain_go(text: str):
    """A plain scalar as go-yaml v2 resolves it (goyaml); raises _Fallback when unsure and for
    what only libyaml can place in an error (NaN, infinities)."""
    _plain_checked(text)
    v = goyaml.resolve_plain(text)
    if type(v) is float and (v != v or v in (_INF, -_INF)):
        raise _Fallback
    return v


def _key_go(text: str):
    if text == "<<":
        raise _Fallback  # a merge key
    return _plain_go(text)


_INF = float("inf")
_SCALARS: dict[str, Any] = {}  # text -> value, for the immutable scalars; shared by documents
_SCALARS_GO: dict[str, Any] = {}  # the same, read as go-yaml reads them


def _scalar(text: str):
    v = _SCALARS.get(text, _SCALARS)
    if v is not _SCALARS:
        return v
    return _scalar_missed(text, _SCALARS, _plain)


def _scalar_go(text: str):
    v = _SCALARS_GO.get(text, _SCALARS_GO)
    if v is not _SCALARS_GO:
        return v
    return _scalar_missed(text, _SCALARS_GO, _plain_go)


def _scalar_missed(text: str, cache: dict[str, Any], plain):
    """A scalar not in `cache` (the hit stays inline in its caller: this is the per-line path):
    empty collections are new objects each time, anything else is resolved and remembered."""
    if text == "{}":
        return {}
    if text == "[]":
        return []
    v = _scalar_uncached(text, plain)
    if len(cache) > 200000:
        cache.clear()
    cache[text] = v
    return v


def _scalar_uncached(text: str, plain):
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
    return plain(text)


_KEYS: dict[str, str] = {}  # key text -> key
_KEYS_GO: dict[str, str] = {}
_MAX_SIMPLE_KEY = 1000  # libyaml's limit is 1024 characters from the key's start


def _tokens(lines: list[str], keys: dict[str, str], plain) -> list:
    """(indent, is_item, key, value text) per line; an item `- k: v` gives an item token and a
    key token two columns deeper."""
    out: list[tuple] = []
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
        key = keys.get(raw_key)
        if key is None:
            if len(raw_key) > _MAX_SIMPLE_KEY:  # (never cached: checked on every use)
                raise _Fallback  # libyaml refuses an implicit key over 1024 characters: it says where
            key = plain(raw_key.rstrip(" "))
            if type(key) is not str:
                raise _Fallback
            if len(keys) > 100000:
                keys.clear()
            keys[raw_key] = key
        value = body[pos + 1 :].strip(" ")
        append((indent, False, key, value or None))
    return out


def _block_document(lines: list[str], go: bool = False):
    """A document made of the lines above, or _Fallback; `go`: read as go-yaml v2 reads it."""
    toks = _tokens(lines, _KEYS_GO, _key_go) if go else _tokens(lines, _KEYS, _plain)
    scalar = _scalar_go if go else _scalar
    if not toks:
        return None
    if toks[0][0] != 0:
        raise _Fallback
    value, end = (_block_seq if toks[0][1] else _block_map)(toks, 0, 0, scalar)
    if end != len(toks):
        raise _Fallback
    return value


# (module-level functions, not closures: nested functions calling each other would form
# reference cycles that hold every document's tokens while the collector is paused)


def _block_map(toks: list, i: int, indent: int, scalar):
    d = {}
    n = len(toks)
    while i < n:
        ind, item, key, vt = toks[i]
        if ind != indent or item:
            break
        i += 1
        if key in d:
            raise _Fallback  # a key set twice: libyaml's reading says where
        if vt is None:
            if i < n and (toks[i][0] > indent or (toks[i][0] == indent and toks[i][1])):
                d[key], i = (_block_seq if toks[i][1] else _block_map)(toks, i, toks[i][0], scalar)
            else:
                d[key] = None
        else:
            d[key] = scalar(vt)
            if i < n and toks[i][0] > indent:
                raise _Fallback  # a multi-line scalar
    if i < n and toks[i][0] > indent:
        raise _Fallback
    return d, i


def _block_seq(toks: list, i: int, indent: int, scalar):
    lst = []
    n = len(toks)
    while i < n:
        ind, item, _, vt = toks[i]
        if ind != indent or not item:
            break
        i += 1
        if vt is not None:
            lst.append(scalar(vt))
            if i < n and toks[i][0] > indent:
                raise _Fallback
        else:
            if not (i < n and toks[i][0] > indent and not toks[i][1]):
                raise _Fallback
            v, i = _block_map(toks, i, toks[i][0], scalar)
            lst.append(v)
    if i < n and toks[i][0] > indent:
        raise _Fallback
    return lst, i


def yaml_error(e: yaml.YAMLError, source: str) -> InputError:
    mark = getattr(e, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if isinstance(e, goyaml.GoYAMLError):
        return InputError(problem, source=source, where=where)
    return InputError(f"malformed YAML: {problem}", source=source, where=where)


def yaml_docs(text: str, task=None, scale: float = 1.0, go: bool = False) -> Iterator[Any]:
    """Every document of a YAML stream, None for empty ones; `go`: as kubectl reads a file it is
    handed (goyaml: go-yaml v2 and sigs.k8s.io/yaml), else as PyYAML's safe load."""
    if _CParser is None:  # pragma: no cover
        yield from yaml.load_all(text, Loader=_Loader)
        return
    if (go or _FAST_RESOLVE) and _plain_stream(text):
        yield from _yaml_docs_by_lines(text, task, scale, go)
        return
    yield from _yaml_docs_libyaml(text, task, scale, go)


def _yaml_docs_by_lines(text: str, task, scale: float, go: bool = False) -> Iterator[Any]:
    """Documents cut at their `---` lines, each read by `_block_document` or by libyaml."""
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
                doc = _libyaml_piece(text, start, end, go)  # `--- content` on the marker line
                yield from doc
                continue
            lines = lines[1:]
        try:
            doc = _block_document(lines, go)
        except (_Fallback, RecursionError):
            yield from _libyaml_piece(text, start, end, go)
        else:
            if marked or doc is not None:
                yield doc
        if task is not None and not n & 1023:
            task.update(int(end * scale))


def _libyaml_piece(text: str, start: int, end: int, go: bool = False) -> Iterator[Any]:
    """The documents of text[start:end] through libyaml; an error is the whole stream's."""
    try:
        docs = list(_yaml_docs_libyaml(text[start:end], go=go))
    except yaml.YAMLError:
        # read the whole stream for the error: the very one a whole read reports
        for _ in _yaml_docs_libyaml(text, go=go):
            pass
        raise
    yield from docs


def _yaml_docs_libyaml(text: str, task=None, scale: float = 1.0, go: bool = False) -> Iterator[Any]:
    check_depth(text)  # before libyaml's composer recurses into it
    loader = _GoLoader(text) if go else _FastLoader(text)
    loader.may_alias = may_alias(text)
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


def clear_caches() -> None:
    """Forget the scalars and keys shared between documents (a worker's memory would hold them)."""
    _SCALARS.clear()
    _KEYS.clear()
    _SCALARS_GO.clear()
    _KEYS_GO.clear()
