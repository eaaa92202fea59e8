"""resource.Quantity parsing, exact as apimachinery's.

Quantities are kept as integers of nano-units: apimachinery rounds anything finer than
1n up to 1n when parsing, so nanos represent every parsed value exactly, and MilliValue /
Value round up the way ScaledValue does.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from .errors import FieldError

_NANO = 10**9
_MILLI_PER_NANO = 10**6

_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


class QuantityError(ValueError):
    pass


def _ceil_div(a: int, b: int) -> int:
    """Division rounding away from zero, as inf.Dec's RoundUp."""
    q, r = divmod(abs(a), b)
    if r:
        q += 1
    return q if a >= 0 else -q


def _fraction_to_nanos(value: Fraction) -> int:
    scaled = value * _NANO
    return _ceil_div(scaled.numerator, scaled.denominator)


@lru_cache(maxsize=65536)
def parse_nanos(text: str) -> int:
    """Parse a quantity string into nano-units; raises QuantityError."""
    if not isinstance(text, str):
        raise QuantityError("not a string")
    s = text
    if not s:
        raise QuantityError("empty")
    i = 0
    sign = 1
    if s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        i = 1
    start = i
    while i < len(s) and s[i].isdigit():
        i += 1
    whole = s[start:i]
    frac = ""
    if i < len(s) and s[i] == ".":
        i += 1
        fstart = i
        while i < len(s) and s[i].isdigit():
            i += 1
        frac = s[fstart:i]
    if not whole and not frac:
        raise QuantityError("no digits")
    if not all(c in "0123456789" for c in whole + frac):
        raise QuantityError("bad digits")
    suffix = s[i:]
    number = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
    if suffix in _DECIMAL:
        exp = _DECIMAL[suffix]
        value = number * (Fraction(10) ** exp)
    elif suffix in _BINARY:
        value = number * (2 ** _BINARY[suffix])
    elif suffix[:1] in ("e", "E") and len(suffix) > 1:
        rest = suffix[1:]
        digits = rest[1:] if rest[0] in "+-" else rest
        if not digits or not digits.isdigit() or not digits.isascii():
            raise QuantityError("bad exponent")
        exp = int(rest)
        if abs(exp) > 100:
            raise QuantityError("exponent out of range")
        value = number * (Fraction(10) ** exp)
    else:
        raise QuantityError("unknown suffix")
    return sign * _fraction_to_nanos(value)


def parse(text, field: str = "") -> int:
    """Parse a YAML/JSON quantity value (string or number) into nanos, or raise FieldError."""
    if isinstance(text, bool) or text is None:
        raise FieldError(field, f"{text!r} is not a quantity")
    if isinstance(text, int):
        return text * _NANO
    if isinstance(text, float):
        text = repr(text)
        if text.endswith(".0"):
            text = text[:-2]
    try:
        return parse_nanos(str(text).strip() if isinstance(text, str) else text)
    except QuantityError:
        raise FieldError(field, f'"{text}" is not a quantity') from None


def milli_value(nanos: int) -> int:
    return _ceil_div(nanos, _MILLI_PER_NANO)


def value(nanos: int) -> int:
    return _ceil_div(nanos, _NANO)


def format_milli_cpu(milli: int) -> str:
    if milli % 1000 == 0:
        return str(milli // 1000)
    return f"{milli}m"


def format_bytes(n: int) -> str:
    """A human form for memory-like values: binary suffix when exact, else the plain number."""
    for suffix, shift in (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)
