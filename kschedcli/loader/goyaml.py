"""YAML as kubectl reads the files a user hands it: sigs.k8s.io/yaml's YAMLToJSON over go-yaml v2
(go.yaml.in/yaml/v2), not PyYAML's YAML 1.1.

Where the two differ for a plain (unquoted) scalar:

* go-yaml v2 resolves `y`, `Y`, `n`, `N` to booleans too, besides yes/no/on/off/true/false; `=` is a
  string (PyYAML has no constructor for it);
* numbers are what Go's strconv reads: `08` and `1e3` are floats (8, 1000), `0o17`, `0x1F`,
  `0b101` and `1_000` integers; `1:30` is a string (no base-60 numbers); integers past int64 are
  uint64, then floats; a float past float64's range stays a string;
* dates (`2024-01-01`) reach JSON as strings (go-yaml's backward compatibility for `interface{}`);
* YAMLToJSON turns map keys into strings (`1` -> "1", `true` -> "true", floats as Go formats
  float32), refuses null and uint64 keys, and json.Marshal refuses NaN and infinities anywhere;
* merge keys (`<<`) set their keys in document order, each overwriting what came before.

Duplicate keys: refused (`key "x" already set in map`, go-yaml's strict reading). YAMLToJSON
alone would keep the last value, but what a person writes is validated strictly: kube-scheduler
decodes its configuration strictly, and a key set twice is almost always two objects joined
without a `---` line, all but the last of which would vanish. A key a merge (`<<`) set may be set
again. Cluster snapshots keep PyYAML's reading: kubectl writes them, quoting every string these
rules could read otherwise.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
import sys
from typing import Any

import yaml

_STR = "tag:yaml.org,2002:str"
_BINARY = "tag:yaml.org,2002:binary"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"
PLAIN = "tag:ksched,2026:go-plain"  # an untagged plain scalar, resolved by resolve_plain
_RESOLVABLE = frozenset((_BOOL, _INT, _FLOAT, _NULL, _TIMESTAMP))

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1

_MAP: dict[str, Any] = {}
for _words, _value in (
    (("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    (("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    (("", "~", "null", "Null", "NULL"), None),
    ((".nan", ".NaN", ".NAN"), math.nan),
    ((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    (("-.inf", "-.Inf", "-.INF"), -math.inf),
):
    for _w in _words:
        _MAP[_w] = _value
_MAP_TAGS = {w: (_BOOL if type(v) is bool else _NULL if v is None else _FLOAT) for w, v in _MAP.items()}
_HINT_NUMBER = frozenset("+-0123456789")
# go-yaml's yamlStyleFloat; a float starting with '.' is what strconv.ParseFloat takes there
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?")
_DIGITS = {2: frozenset("01"), 8: frozenset("01234567"), 10: frozenset("0123456789")}
_DIGITS[16] = frozenset("0123456789abcdefABCDEF")


def duplicate_key_problem(key: Any, mark) -> str:
    """What a key set twice in one map is called (go-yaml's strict reading), with a hint when it
    starts a line: two objects joined without a `---` line."""
    hint = ' (two objects joined without a "---" line?)' if getattr(mark, "column", 1) == 0 else ""
    return f"key {json.dumps(key)} already set in map{hint}"


class GoYAMLError(yaml.MarkedYAMLError):
    """What go-yaml or sigs.k8s.io/yaml refuses in a document that libyaml reads (reported with
    its mark, the message saying what kubectl says)."""

    def __init__(self, problem: str, mark) -> None:
        super().__init__(problem=problem, problem_mark=mark)


def _parse_uint(s: str, base: int) -> int | None:
    """strconv.ParseUint(s, base, 64) without its error (None), base 0 included; no underscores."""
    if not s:
        return None
    if base == 0:
        base = 10
        if s[0] == "0":
            if len(s) >= 3 and s[1] in "bB":
                base, s = 2, s[2:]
            elif len(s) >= 3 and s[1] in "oO":
                base, s = 8, s[2:]
            elif len(s) >= 3 and s[1] in "xX":
                base, s = 16, s[2:]
            else:
                base, s = 8, s[1:]
                if not s:
                    return 0
    digits = _DIGITS[base]
    if not s or any(c not in digits for c in s):
        return None
    s = s.lstrip("0")
    if len(s) > 64:  # past any uint64 (before int() meets Python's digit limit)
        return None
    v = int(s, base) if s else 0
    return v if v <= _UINT64_MAX else None


def _parse_int(s: str, base: int) -> int | None:
    """strconv.ParseInt(s, base, 64) without its error (None)."""
    if not s:
        return None
    sign = 1
    if s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    v = _parse_uint(s, base)
    if v is None:
        return None
    v *= sign
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def _parse_float(s: str) -> float | None:
    """strconv.ParseFloat(s, 64) for the decimal forms matched above; None past float64's range."""
    v = float(s)
    return None if math.isinf(v) else v


def resolve(text: str, tag: str = "") -> tuple[str, Any]:
    """go-yaml v2's resolve(tag, in) for tag "" or a resolvable one: (resolved tag, value)."""
    hit = _MAP.get(text, _MAP)  # (every word of the map starts with a character go-yaml hints on)
    if hit is not _MAP:
        return _MAP_TAGS[text], hit
    hint = text[:1]
    if hint == ".":
        if _DOT_FLOAT.fullmatch(text):
            f = _parse_float(text)
            if f is not None:
                return _FLOAT, f
    elif hint in _HINT_NUMBER:
        if tag in ("", _TIMESTAMP) and _looks_like_timestamp(text):
            return _TIMESTAMP, text
        plain = text.replace("_", "")
        i = _parse_int(plain, 0)
        if i is not None:
            return _INT, i
        u = _parse_uint(plain, 0)
        if u is not None:
            return _INT, u
        if _YAML_FLOAT.fullmatch(plain):
            f = _parse_float(plain)
            if f is not None:
                return _FLOAT, f
        if plain.startswith("0b"):
            i = _parse_int(plain[2:], 2)
            if i is None:
                i = _parse_uint(plain[2:], 2)
            if i is not None:
                return _INT, i
        elif plain.startswith("-0b"):
            i = _parse_int("-" + plain[3:], 2)
            if i is not None:
                return _INT, i
    return _STR, text


_TIMESTAMP_FORMS = (
    re.compile(r"\d{4}-\d{1,2}-\d{1,2}"),
    re.compile(r"\d{4}-\d{1,2}-\d{1,2}[Tt]\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})"),
    re.compile(r"\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?"),
)


def _looks_like_timestamp(text: str) -> bool:
    """parseTimestamp's shapes (the value stays the text: go-yaml hands timestamps to interface{}
    as strings). Only the shape matters here: a timestamp-like text is a string either way."""
    return len(text) > 4 and text[4] == "-" and text[:4].isdigit() and any(f.fullmatch(text) for f in _TIMESTAMP_FORMS)


def resolve_plain(text: str) -> Any:
    """The value of an untagged plain scalar as YAMLToJSON hands it on (NaN and infinities
    included: the caller refuses them where it knows the mark)."""
    tag, value = resolve(text)
    return text if tag == _TIMESTAMP else value


def resolve_tagged(text: str, tag: str, mark) -> Any:
    """The value of a scalar with an explicit tag (`!!int 5`, `!!str 08`, `!custom x`)."""
    if tag == _STR:
        return text
    if tag == _BINARY:
        try:
            data = base64.b64decode(text.replace("\n", "").replace("\r", ""), validate=True)
        except ValueError:
            raise GoYAMLError("!!binary value contains invalid base64 data (go-yaml refuses it)", mark) from None
        return data.decode("utf-8", "replace")
    if tag not in _RESOLVABLE:
        return text  # go-yaml keeps the text of a scalar with a tag it does not know
    rtag, value = resolve(text, tag)
    if rtag == tag:
        return text if tag == _TIMESTAMP else value
    if tag == _FLOAT and rtag == _INT:
        return float(value)
    short = {t: "!!" + t.rsplit(":", 1)[1] for t in (_STR, *_RESOLVABLE)}
    raise GoYAMLError(f"cannot decode {short.get(rtag, rtag)} `{text}` as a {short[tag]} (go-yaml refuses it)", mark)


def format_float32_g(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 32), as YAMLToJSON writes a float map key."""
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    try:
        f32 = struct.unpack("f", struct.pack("f", f))[0]
    except OverflowError:
        return ".inf" if f > 0 else "-.inf"
    if f32 == 0:
        return "-0" if math.copysign(1, f32) < 0 else "0"
    for prec in range(1, 10):  # the shortest digits that read back as the same float32
        text = f"{f32:.{prec - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == f32:
            break
    mantissa, exp_text = text.split("e")
    exp = int(exp_text)
    digits = mantissa.replace(".", "").lstrip("-")
    sign = "-" if f32 < 0 else ""
    if exp < -4 or exp >= 6:  # %e when the exponent is below -4 or at least 6 (shortest 'g')
        frac = digits[1:]
        return f"{sign}{digits[0]}{'.' + frac if frac else ''}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp >= len(digits) - 1:  # %f with the digits there are
        return sign + digits + "0" * (exp - len(digits) + 1)
    if exp >= 0:
        return f"{sign}{digits[: exp + 1]}.{digits[exp + 1 :]}"
    return f"{sign}0.{'0' * (-exp - 1)}{digits}"


def _json_key(key: Any, text: str, mark) -> str:
    """A map key as YAMLToJSON turns it into a JSON object key (`text`: as written)."""
    if type(key) is str:
        return key
    if key is True or key is False:
        return "true" if key else "false"
    if type(key) is int:
        if key > _INT64_MAX:
            raise GoYAMLError(f'map key {text}: kubectl refuses it ("unsupported map key of type: uint64")', mark)
        return str(key)
    if type(key) is float:
        return format_float32_g(key)
    if key is None:
        raise GoYAMLError(
            f'map key {text or "(empty)"}: kubectl refuses a null key ("unsupported map key of type: <nil>")', mark
        )
    raise GoYAMLError("a list or a map as a map key: kubectl refuses it (go-yaml: invalid map key)", mark)


class _Converter:
    """Composed libyaml nodes to the JSON-able value YAMLToJSON makes of them. Aliased nodes are
    converted once and shared (go-yaml copies them; the document was bounded first)."""

    def __init__(self) -> None:
        self.done: dict[int, Any] = {}

    def value(self, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):
            tag = node.tag
            if tag == PLAIN:
                v = resolve_plain(node.value)
            elif tag == _STR:
                return node.value
            else:
                v = resolve_tagged(node.value, tag, node.start_mark)
            if type(v) is float and (v != v or v in (math.inf, -math.inf)):
                what = "NaN" if v != v else ("+Inf" if v > 0 else "-Inf")
                raise GoYAMLError(
                    f'{node.value}: JSON has no such number; kubectl refuses it ("json: unsupported value: {what}")',
                    node.start_mark,
                )
            return v
        nid = id(node)
        hit = self.done.get(nid, self.done)
        if hit is not self.done:
            return hit
        if isinstance(node, yaml.SequenceNode):
            out_list: list = []
            self.done[nid] = out_list
            out_list.extend(self.value(x) for x in node.value)
            return out_list
        out: dict = {}
        self.done[nid] = out
        own: set[str] = set()  # the keys set here (not by a merge)
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == "<<" and k.tag in (PLAIN, _MERGE):
                self._merge(v, out)
                continue
            if not isinstance(k, yaml.ScalarNode):
                raise GoYAMLError(
                    "a list or a map as a map key: kubectl refuses it (go-yaml: invalid map key)", k.start_mark
                )
            key = _json_key(self.value(k), k.value, k.start_mark)
            if key in own:
                raise GoYAMLError(duplicate_key_problem(key, k.start_mark), k.start_mark)
            own.add(key)
            out[key] = self.value(v)
        return out

    def _merge(self, node: yaml.Node, out: dict) -> None:
        """go-yaml v2's merge: a map's keys set in order over what is there; a sequence of maps
        merged last to first (the earlier ones win)."""
        if isinstance(node, yaml.MappingNode):
            out.update(self.value(node))
            return
        if isinstance(node, yaml.SequenceNode):
            for item in reversed(node.value):
                if not isinstance(item, yaml.MappingNode):
                    break
                out.update(self.value(item))
            else:
                return
        raise GoYAMLError(
            "map merge requires map or sequence of maps as the value (go-yaml refuses it)", node.start_mark
        )


def convert(node: yaml.Node) -> Any:
    """A composed document as YAMLToJSON reads it (see the module's notes); raises GoYAMLError."""
    limit = sys.getrecursionlimit()
    if limit < 5000:  # libyaml nests up to 1,000 levels; a frame or two per level here
        sys.setrecursionlimit(5000)
    try:
        return _Converter().value(node)
    finally:
        if limit < 5000:
            sys.setrecursionlimit(limit)
