"""CEL for DRA device selectors, as k8s.io/dynamic-resource-allocation/cel sets it up.

Expressions are parsed and evaluated by the `cel` crate (Rust) through the
`common-expression-language` bindings (see the README's dependency section for why). What this
module adds is the Kubernetes side of the environment:

- the `device` variable: `device.driver`, `device.attributes[domain][id]`,
  `device.capacity[domain][id]`; names without a domain fall under the driver's domain; looking
  up a domain the device does not have gives an empty map (kube-scheduler's mapper with a
  default), so `device.attributes["other.example.com"].model` fails with `no such key: model`;
- the Kubernetes CEL libraries selectors use: `quantity()` with `compareTo`, `isLessThan`,
  `isGreaterThan`, `add`, `sub`, `sign`, `isInteger`, `asInteger`, `asApproximateFloat`,
  `isQuantity`; `semver()` with `major`/`minor`/`patch`, `compareTo`, `isLessThan`,
  `isGreaterThan`, `isSemver`; the lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
  `lastIndexOf`) and the strings extension (`charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`,
  `upperAscii`, `replace`, `split`, `substring`, `trim`, `join`).

The bindings carry only plain values across, so a quantity is a one-key map holding its exact
value in nano-units and a version a one-key map holding its canonical text: CEL's own `==`
compares them by value, as apiserver's Quantity and Semver types do.

Errors are reported with cel-go's wording where the two differ (`no such key: model`,
`no such overload`), so a broken selector reads as kube-scheduler's status does.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
from functools import lru_cache
from typing import Any

from .. import quantity as _quantity

QUANTITY_TAG = "\x00k8s.quantity"
SEMVER_TAG = "\x00k8s.semver"
_NANO = 10**9


class CelError(Exception):
    """A selector that does not compile (`compile_error`) or fails on a device."""

    def __init__(self, message: str, compile_error: bool = False):
        super().__init__(message)
        self.message = message
        self.compile_error = compile_error


class _FunctionError(Exception):
    """Raised by a library function; its text becomes the CEL error."""


# -- the bindings ------------------------------------------------------------------------------


_MODULE: Any = None


def _bindings() -> Any:
    """The compiled extension module alone: the package's __init__ also imports its interactive
    shell (prompt_toolkit), 0.15 s that a scheduling run never needs."""
    global _MODULE
    if _MODULE is not None:
        return _MODULE
    # the bindings log every failing Python function at WARNING: errors are ours to report
    import logging  # here: a run that evaluates no CEL does not pay for it

    logging.getLogger("cel").disabled = True
    mod = None
    spec = importlib.util.find_spec("cel")
    for loc in (spec.submodule_search_locations or []) if spec is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(loc, "cel" + suffix)
            if os.path.exists(path):
                loader = importlib.machinery.ExtensionFileLoader("cel.cel", path)
                ext_spec = importlib.util.spec_from_file_location("cel.cel", path, loader=loader)
                if ext_spec is not None:
                    mod = importlib.util.module_from_spec(ext_spec)
                    loader.exec_module(mod)
                    break
        if mod is not None:
            break
    if mod is None:  # an unusual layout: the ordinary import
        import cel as mod
    _MODULE = mod
    return mod


# -- values ------------------------------------------------------------------------------------


def quantity_value(nanos: int) -> dict:
    return {QUANTITY_TAG: nanos}


def _nanos(v: Any) -> int:
    if isinstance(v, dict) and QUANTITY_TAG in v and len(v) == 1:
        return int(v[QUANTITY_TAG])
    raise _FunctionError("no such overload")


_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@lru_cache(maxsize=4096)
def parse_semver(text: str) -> tuple[int, int, int, tuple]:
    """blang/semver's Parse: (major, minor, patch, prerelease parts); ValueError otherwise."""
    m = _SEMVER.match(text)
    if m is None:
        if not text:
            raise ValueError("Version string empty")
        parts = text.split(".", 2)
        if len(parts) != 3:
            raise ValueError("No Major.Minor.Patch elements found")
        raise ValueError(f"Invalid character(s) found in version {text!r}")
    pre = tuple(int(p) if p.isdigit() else p for p in (m.group(4).split(".") if m.group(4) else ()))
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), pre


def semver_value(text: str) -> dict:
    """A version as CEL sees it; build metadata does not take part in comparisons, so it is
    left out of the value."""
    major, minor, patch, pre = parse_semver(text)
    canon = f"{major}.{minor}.{patch}"
    if pre:
        canon += "-" + ".".join(str(p) for p in pre)
    return {SEMVER_TAG: canon}


def _version(v: Any) -> tuple[int, int, int, tuple]:
    if isinstance(v, dict) and SEMVER_TAG in v and len(v) == 1:
        return parse_semver(v[SEMVER_TAG])
    raise _FunctionError("no such overload")


def _compare_versions(a: tuple, b: tuple) -> int:
    if a[:3] != b[:3]:
        return -1 if a[:3] < b[:3] else 1
    pa, pb = a[3], b[3]
    if pa == pb:
        return 0
    if not pa:
        return 1  # a release is above its pre-releases
    if not pb:
        return -1
    for x, y in zip(pa, pb):
        if x == y:
            continue
        if isinstance(x, int) and isinstance(y, int):
            return -1 if x < y else 1
        if isinstance(x, int):
            return -1  # numeric identifiers sort before alphanumeric ones
        if isinstance(y, int):
            return 1
        return -1 if x < y else 1
    return -1 if len(pa) < len(pb) else (1 if len(pa) > len(pb) else 0)


# -- the Kubernetes libraries ----------------------------------------------------------------------


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise _FunctionError("no such overload")
    return v


def _to_quantity(s: Any) -> dict:
    try:
        return quantity_value(_quantity.parse_nanos(_str(s)))
    except _quantity.QuantityError:
        raise _FunctionError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        ) from None


def _is_quantity(s: Any) -> bool:
    try:
        _quantity.parse_nanos(_str(s))
    except _quantity.QuantityError:
        return False
    return True


def _cmp(a: int, b: int) -> int:
    return (a > b) - (a < b)


def _compare_to(a: Any, b: Any) -> int:
    if isinstance(a, dict) and SEMVER_TAG in a:
        return _compare_versions(_version(a), _version(b))
    return _cmp(_nanos(a), _nanos(b))


def _is_greater_than(a: Any, b: Any) -> bool:
    return _compare_to(a, b) == 1


def _is_less_than(a: Any, b: Any) -> bool:
    return _compare_to(a, b) == -1


def _other_nanos(b: Any) -> int:
    if isinstance(b, bool):
        raise _FunctionError("no such overload")
    if isinstance(b, int):
        return b * _NANO
    return _nanos(b)


def _add(a: Any, b: Any) -> dict:
    return quantity_value(_nanos(a) + _other_nanos(b))


def _sub(a: Any, b: Any) -> dict:
    return quantity_value(_nanos(a) - _other_nanos(b))


def _sign(a: Any) -> int:
    return _cmp(_nanos(a), 0)


def _is_integer(a: Any) -> bool:
    n = _nanos(a)
    return n % _NANO == 0 and -(2**63) <= n // _NANO < 2**63


def _as_integer(a: Any) -> int:
    if not _is_integer(a):
        raise _FunctionError("cannot convert value to integer")
    return _nanos(a) // _NANO


def _as_approximate_float(a: Any) -> float:
    return _nanos(a) / _NANO


def _semver(s: Any, normalize: Any = False) -> dict:
    text = _str(s)
    try:
        if normalize is True:
            text = _normalize_version(text)
        elif normalize is not False:
            raise _FunctionError("no such overload")
        return semver_value(text)
    except ValueError as e:
        raise _FunctionError(str(e)) from None


def _normalize_version(s: str) -> str:
    """semverlib's normalizeAndParse: no leading "v" or zeros, missing minor/patch as 0."""
    s = s.removeprefix("v")
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or not p[0].isdigit():
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _is_semver(s: Any, normalize: Any = False) -> bool:
    try:
        _semver(s, normalize)
    except _FunctionError:
        return False
    return True


def _major(v: Any) -> int:
    return _version(v)[0]


def _minor(v: Any) -> int:
    return _version(v)[1]


def _patch(v: Any) -> int:
    return _version(v)[2]


def _list(v: Any) -> list:
    if not isinstance(v, list):
        raise _FunctionError("no such overload")
    return v


def _index_of(target: Any, item: Any, start: Any = None) -> int:
    if isinstance(target, str):
        s, sub = target, _str(item)
        begin = 0 if start is None else start
        if not isinstance(begin, int) or begin < 0 or begin > len(s):
            raise _FunctionError(f"index out of range: {begin}")
        return s.find(sub, begin)
    for i, x in enumerate(_list(target)):
        if x == item:
            return i
    return -1


def _last_index_of(target: Any, item: Any, start: Any = None) -> int:
    if isinstance(target, str):
        s, sub = target, _str(item)
        end = len(s) if start is None else start
        if not isinstance(end, int) or end < 0 or end > len(s):
            raise _FunctionError(f"index out of range: {end}")
        return s.rfind(sub, 0, end + len(sub))
    lst = _list(target)
    for i in range(len(lst) - 1, -1, -1):
        if lst[i] == item:
            return i
    return -1


def _is_sorted(v: Any) -> bool:
    lst = _list(v)
    try:
        return all(not (lst[i + 1] < lst[i]) for i in range(len(lst) - 1))
    except TypeError:
        raise _FunctionError("no such overload") from None


def _sum(v: Any) -> Any:
    lst = _list(v)
    if lst and all(isinstance(x, dict) for x in lst):
        return quantity_value(sum(_nanos(x) for x in lst))
    return sum(lst) if lst else 0


def _min(v: Any) -> Any:
    lst = _list(v)
    if not lst:
        raise _FunctionError("min called on empty list")
    return min(lst)


def _max(v: Any) -> Any:
    lst = _list(v)
    if not lst:
        raise _FunctionError("max called on empty list")
    return max(lst)


# -- cost ----------------------------------------------------------------------------------------

# kube-scheduler evaluates a selector with cel-go's runtime cost limit, resourceapi's
# CELSelectorExpressionMaxCost, and stops it with `operation cancelled: actual cost limit exceeded`.
# The bindings have no cost tracking: ksched charges what can grow without bound instead. The string
# functions here charge cel-go's traversal cost (0.1 per character read or written, rounded up)
# before they build anything; comprehensions (`all`, `exists`, `exists_one`, `map`, `filter`) are
# bounded before evaluation (comprehension_bound), each iteration costing at least 1.
MAX_COST = 1_000_000
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"
_STRING_TRAVERSAL_FACTOR = 0.1
_cost = [0]  # the cost charged to the evaluation under way


def _charge(chars: int) -> None:
    _cost[0] += -(-chars // 10) if chars > 0 else 0  # ceil(chars * 0.1)
    if _cost[0] > MAX_COST:
        raise _FunctionError(COST_LIMIT_EXCEEDED)


def _char_at(s: Any, i: Any) -> str:
    text = _str(s)
    if not isinstance(i, int) or i < 0 or i > len(text):
        raise _FunctionError(f"index out of range: {i}")
    return text[i : i + 1]


def _lower_ascii(s: Any) -> str:
    _charge(2 * len(_str(s)))
    return "".join(c.lower() if c.isascii() else c for c in _str(s))


def _upper_ascii(s: Any) -> str:
    _charge(2 * len(_str(s)))
    return "".join(c.upper() if c.isascii() else c for c in _str(s))


def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    text, before, after = _str(s), _str(old), _str(new)
    limit = n if isinstance(n, int) and n >= 0 else -1
    # the result's length, worked out before it is built: a chain of replaces doubling a string
    # would otherwise reach gigabytes before cel-go's limit could stop it
    found = len(text) + 1 if before == "" else text.count(before)
    count = found if limit < 0 else min(limit, found)
    _charge(2 * len(text) + count * (len(after) - len(before)))
    return text.replace(before, after, limit)


def _split(s: Any, sep: Any, n: Any = -1) -> list:
    text, separator = _str(s), _str(sep)
    _charge(2 * len(text))
    if n == 0:
        return []
    if separator == "":
        parts = list(text)
        if isinstance(n, int) and n > 0 and len(parts) > n:
            parts = parts[: n - 1] + ["".join(parts[n - 1 :])]
        return parts
    return text.split(separator, n - 1 if isinstance(n, int) and n > 0 else -1)


def _substring(s: Any, start: Any, end: Any = None) -> str:
    text = _str(s)
    stop = len(text) if end is None else end
    if not isinstance(start, int) or not isinstance(stop, int) or not 0 <= start <= stop <= len(text):
        raise _FunctionError(f"index out of range: {start if not 0 <= start <= len(text) else stop}")
    return text[start:stop]


def _trim(s: Any) -> str:
    _charge(len(_str(s)))
    return _str(s).strip()


def _join(v: Any, sep: Any = "") -> str:
    lst = _list(v)
    if not all(isinstance(x, str) for x in lst):
        raise _FunctionError("no such overload")
    _charge(2 * (sum(len(x) for x in lst) + len(_str(sep)) * max(0, len(lst) - 1)))
    return _str(sep).join(lst)


def _wrap(fn):
    """Library functions raise _FunctionError with cel-go's text; the bindings wrap any Python
    exception in their own message, from which _error_text takes it back out."""

    def call(*args):
        try:
            return fn(*args)
        except _FunctionError as e:
            raise ValueError(f"\x01{e}\x01") from None

    return call


FUNCTIONS: dict[str, Any] = {
    name: _wrap(fn)
    for name, fn in {
        "quantity": _to_quantity,
        "isQuantity": _is_quantity,
        "compareTo": _compare_to,
        "isGreaterThan": _is_greater_than,
        "isLessThan": _is_less_than,
        "add": _add,
        "sub": _sub,
        "sign": _sign,
        "isInteger": _is_integer,
        "asInteger": _as_integer,
        "asApproximateFloat": _as_approximate_float,
        "semver": _semver,
        "isSemver": _is_semver,
        "major": _major,
        "minor": _minor,
        "patch": _patch,
        "isSorted": _is_sorted,
        "sum": _sum,
        "min": _min,
        "max": _max,
        "indexOf": _index_of,
        "lastIndexOf": _last_index_of,
        "charAt": _char_at,
        "lowerAscii": _lower_ascii,
        "upperAscii": _upper_ascii,
        "replace": _replace,
        "split": _split,
        "substring": _substring,
        "trim": _trim,
        "join": _join,
    }.items()
}


# -- errors --------------------------------------------------------------------------------------

_OWN = re.compile("\x01(.*?)\x01", re.S)
_UNDEFINED = re.compile(r"Undefined variable or function: '([^']*)'")


def _error_text(e: Exception) -> tuple[str, bool]:
    """(cel-go's wording of a failed evaluation, whether cel-go finds it at compile time)."""
    text = str(e)
    own = _OWN.search(text)
    if own:
        return own.group(1), False
    if isinstance(e, KeyError):
        key = e.args[0] if e.args else ""
        return f"no such key: {key}", False
    if isinstance(e, ZeroDivisionError):
        return "division by zero", False
    if isinstance(e, TypeError) or text.startswith("No such overload"):
        return "no such overload", False
    undefined = _UNDEFINED.search(text)
    if undefined:
        # cel-go's checker rejects unknown names before anything runs
        return (
            f"compilation failed: ERROR: <input>: undeclared reference to '{undefined.group(1)}' (in container '')",
            True,
        )
    return text.split(". Check ", 1)[0], False


# -- comprehensions --------------------------------------------------------------------------------

_MACROS = frozenset(("all", "exists", "exists_one", "map", "filter"))
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def comprehension_bound(expression: str) -> int:
    """An upper bound on the iterations the expression's comprehensions can make: a device's values
    are scalars, so every list or map a comprehension walks is built from the expression's own
    literals (at most all their elements together, or a split of its longest string); nested
    comprehensions multiply. Each macro counts `size ** depth` for its nesting depth."""
    sizes = [0]  # elements of every list and map literal
    longest = 0  # the longest string literal (a split of it has at most that many parts)
    stack: list[list] = []  # [kind, elements]: "list", "map", "macro", "paren"
    depths: list[int] = []  # the nesting depth of each macro call
    last, before_last = "", ""  # the last two tokens
    i, n = 0, len(expression)
    while i < n:
        c = expression[i]
        if c.isspace():
            i += 1
            continue
        if c in "\"'":
            quote = expression[i : i + 3] if expression[i : i + 3] in ('"""', "'''") else c
            j = i + len(quote)
            while j < n and not expression.startswith(quote, j):
                j += 2 if expression[j] == "\\" else 1
            longest = max(longest, j - i - len(quote))
            i = j + len(quote)
            last, before_last = "string", last
            continue
        m = _IDENT.match(expression, i)
        if m:
            last, before_last = m.group(0), last
            i = m.end()
            continue
        if c == "(":
            if last in _MACROS and before_last == ".":
                depths.append(1 + sum(1 for f in stack if f[0] == "macro"))
                stack.append(["macro", 0])
            else:
                stack.append(["paren", 0])
        elif c in "[{":
            stack.append(["list" if c == "[" else "map", 1])
        elif c == ",":
            if stack and stack[-1][0] in ("list", "map"):
                stack[-1][1] += 1
        elif c in ")]}" and stack:
            kind, elements = stack.pop()
            if kind in ("list", "map"):
                sizes.append(elements)
        last, before_last = c, last
        i += 1
    size = max(sum(sizes), longest, 1)
    return sum(size**d for d in depths)


# -- selectors -----------------------------------------------------------------------------------

# domains named literally in a lookup: device.attributes["gpu.example.com"] or .capacity.example
_DOMAIN_LOOKUP = re.compile(
    r"""\b(attributes|capacity)\s*(?:\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\s*\]|\.\s*([A-Za-z_][A-Za-z0-9_]*))"""
)


# a whole attribute lookup: attributes["domain"].name or attributes["domain"]["name"] (not a method call)
_ATTRIBUTE_LOOKUP = re.compile(
    r"""\battributes\s*\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\s*\]"""
    r"""\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()|\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\s*\])"""
)


def attributes_read(expression: str) -> set[tuple[str, str]] | None:
    """The (domain, id) attributes an expression reads, when it reads them only by whole literal
    lookups; None when it may read others (a computed key, a map function, iteration)."""
    found = set()
    spans = []
    for m in _ATTRIBUTE_LOOKUP.finditer(expression):
        domain = m.group(1) if m.group(1) is not None else m.group(2)
        ident = next(g for g in (m.group(3), m.group(4), m.group(5)) if g is not None)
        found.add((domain, ident))
        spans.append(m.start())
    if len(spans) != len(re.findall(r"\battributes\b", expression)):
        return None
    return found


class Selector:
    """One compiled CEL selector expression; `matches(device)` caches its verdict per distinct
    device content (devices do not change during a run, and large clusters repeat the same few)."""

    __slots__ = ("expression", "program", "error", "attribute_domains", "capacity_domains", "verdicts", "too_costly")

    def __init__(self, expression: str):
        self.expression = expression
        self.program: Any = None
        self.error: str | None = None
        self.verdicts: dict[int, bool | CelError] = {}
        attr: set[str] = set()
        cap: set[str] = set()
        for m in _DOMAIN_LOOKUP.finditer(expression):
            name = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
            (attr if m.group(1) == "attributes" else cap).add(name)
        self.attribute_domains = tuple(sorted(attr))
        self.capacity_domains = tuple(sorted(cap))
        self.too_costly = False
        try:
            self.program = _bindings().compile(expression)
        except Exception as e:  # the bindings raise ValueError for syntax errors
            text = str(e)
            detail = text.split("': ", 1)[1] if text.startswith("Failed to parse expression '") else text
            self.error = "compilation failed: " + detail.strip()
            return
        # comprehensions that could pass the cost limit are not run: cel-go would stop them once
        # their actual cost passed it (a short-circuiting `exists` may stop sooner there)
        self.too_costly = comprehension_bound(expression) > MAX_COST

    def matches(self, device) -> bool:
        """Whether the selector selects `device` (a dra.objects.Device); raises CelError."""
        key = device.content
        v = self.verdicts.get(key)
        if v is None:
            v = self._evaluate(device)
            self.verdicts[key] = v
        if isinstance(v, CelError):
            raise v
        return v

    def _evaluate(self, device) -> bool | CelError:
        if self.error is not None:
            return CelError(self.error, compile_error=True)
        if device.value_error is not None:
            return CelError(device.value_error)
        attrs, caps = device.cel_maps()
        if any(d not in attrs for d in self.attribute_domains):
            attrs = {**{d: {} for d in self.attribute_domains}, **attrs}
        if any(d not in caps for d in self.capacity_domains):
            caps = {**{d: {} for d in self.capacity_domains}, **caps}
        if self.too_costly:
            return CelError(COST_LIMIT_EXCEEDED)
        ctx = _context({"driver": device.driver, "attributes": attrs, "capacity": caps})
        _cost[0] = 0
        try:
            result = self.program.execute(ctx)
        except Exception as e:
            text, at_compile = _error_text(e)
            return CelError(text, compile_error=at_compile)
        if not isinstance(result, bool):
            kind = {str: "string", int: "int", float: "double", list: "list", dict: "map"}.get(type(result), "dyn")
            return CelError(
                f"CEL result of type {kind} could not be converted to bool: "
                f"type conversion error from '{kind}' to 'bool'"
            )
        return result


_CTX: Any = None


def _context(device: dict) -> Any:
    global _CTX
    mod = _bindings()
    if _CTX is None:
        _CTX = mod.Context(functions=FUNCTIONS)
    _CTX.add_variable("device", device)
    return _CTX


_SELECTORS: dict[str, Selector] = {}


def selector(expression: str) -> Selector:
    """The compiled selector of an expression, compiled once per run (kube-scheduler's CEL cache)."""
    s = _SELECTORS.get(expression)
    if s is None:
        s = _SELECTORS[expression] = Selector(expression)
    return s
