"""resource.Quantity parsing, exact as apimachinery's.

Quantities are kept as integers of nano-units: apimachinery rounds anything finer than
1n up to 1n when parsing, so nanos represent every parsed value exactly, and MilliValue /
Value round up the way ScaledValue does.
"""

from __future__ import annotations

from functools import lru_cache

from ..errors import FieldError

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


_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_INT64_MAX = (1 << 63) - 1
# Past these, kube-scheduler's own int64 arithmetic overflows (Value() gives 0 or wraps); the
# values are kept finite here so huge exponents cost nothing.
_HUGE_NANOS = 10**40
_TINY_EXP = -60
_MAX_DIGITS = 4000  # below Python's 4,300-digit limit on reading an int


def _scan(s: str):
    """parseQuantityString: (negative, numeric text, num digits, denom digits, suffix)."""
    end = len(s)
    pos = 0
    negative = False
    if s[0] == "-":
        negative, pos = True, 1
    elif s[0] == "+":
        pos = 1
    while pos < end and s[pos] == "0":  # leading zeros
        pos += 1
    if pos >= end:
        return negative, "0", "0", "", ""
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    if i >= end:
        return negative, s, s[pos:end], "", ""
    num = s[pos:i] or "0"
    pos = i
    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i] in _DIGITS:
            i += 1
        denom = s[pos:i]
        if i >= end:
            return negative, s, num, denom, ""
        pos = i
    value = s[:pos]
    suffix_start = pos
    i = pos
    while i < end and s[i] in _SUFFIX_CHARS:
        i += 1
    if i < end and s[i] in "+-":
        i += 1
    while i < end and s[i] in _DIGITS:
        i += 1
    if i < end:
        raise QuantityError("quantities must match the regular expression")
    return negative, value, num, denom, s[suffix_start:]


def _interpret(suffix: str):
    """quantitySuffixer.interpret: (base, exponent, format) or QuantityError."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], "DecimalSI"
    if suffix in _BINARY:
        return 2, _BINARY[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        body = suffix[1:]
        digits = body[1:] if body[0] in "+-" else body
        if not digits or not all(c in _DIGITS for c in digits):  # strconv.ParseInt(_, 10, 64)
            raise QuantityError("unable to parse quantity's suffix")
        parsed = int(body)
        if not -(1 << 63) <= parsed <= _INT64_MAX:
            raise QuantityError("unable to parse quantity's suffix")
        return 10, ((parsed + (1 << 31)) % (1 << 32)) - (1 << 31), "DecimalExponent"  # int32(parsed)
    raise QuantityError("unable to parse quantity's suffix")


@lru_cache(maxsize=65536)
def parse_nanos(text: str) -> int:
    """resource.ParseQuantity, in nano-units; raises QuantityError where it returns an error.

    Its quirks are kept: a bare sign or suffix ("+", "m", "Gi") is zero; a number with no digit
    at all ("." or "") fails only on the paths that hand the text to inf.Dec (a binary suffix with
    a fraction or of Pi/Ei, an exponent below -9); binary values are capped at 2^63-1."""
    if not isinstance(text, str):
        raise QuantityError("not a string")
    if not text:
        raise QuantityError("empty")
    if text == "0":
        return 0
    negative, value, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    # which path ParseQuantity takes decides whether an empty number is an error
    if fmt == "BinarySI":
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1 if not denom else -1
        scale = -len(denom)
    else:
        precision = 18 - (len(num) + len(denom))
        scale = exponent - len(denom)
    fast = precision >= 0 and scale >= -9
    if not fast and not any(c in _DIGITS for c in value):
        raise QuantityError("unable to parse numeric part of quantity")  # inf.Dec: no digits read
    digits, dlen = num + denom, len(denom)
    if len(digits) > _MAX_DIGITS:
        # past the digits an int can be read from: the leading 100 significant digits and one
        # more, non-zero when any digit after them is, give the same nanos (values beyond
        # 10^40 nanos are capped below, and the rounding up only asks whether a remainder exists)
        sig = digits.lstrip("0")
        rest = sig[100:]
        dropped = len(rest) - 1 if rest else 0
        digits = sig[:100] + (("1" if rest.strip("0") else "0") if rest else "")
        dlen -= dropped
    mantissa = int(digits)
    if mantissa == 0:
        return 0
    if base == 2:
        # whole digits dropped above (dlen < 0): at least 10^100, past the cap
        nanos = _INT64_MAX * _NANO if dlen < 0 else _ceil_div(mantissa * (1 << exponent) * _NANO, 10**dlen)
        nanos = min(nanos, _INT64_MAX * _NANO)  # the BinarySI cap (maxAllowed)
    else:
        e10 = exponent - dlen + 9  # nanos = mantissa * 10^e10
        if e10 >= 0:
            nanos = mantissa * 10**e10 if e10 <= 60 else _HUGE_NANOS
            nanos = min(nanos, _HUGE_NANOS)
        elif e10 + len(digits) < _TINY_EXP:  # below 10^-60 nanos whatever the digits
            nanos = 1  # rounds up to the smallest representable amount
        else:
            nanos = _ceil_div(mantissa, 10**-e10)
    return -nanos if negative else nanos


def parse(text, field: str = "") -> int:
    """Parse a YAML/JSON quantity value (string or number) into nanos, or raise FieldError. A null
    is Go's zero Quantity (Quantity.UnmarshalJSON takes `null` as 0)."""
    if text is None:
        return 0
    if isinstance(text, int) and not isinstance(text, bool):
        return max(-_HUGE_NANOS, min(text * _NANO, _HUGE_NANOS))  # as a string of its digits would be
    if not isinstance(text, (str, float)):
        what = {bool: "boolean", list: "list", dict: "object"}.get(type(text), type(text).__name__)
        raise FieldError(field, f'expected a quantity (a string such as "500m" or a number), not a {what}')
    if isinstance(text, float):
        text = repr(text)
        if text.endswith(".0"):
            text = text[:-2]
    try:
        return parse_nanos(str(text).strip() if isinstance(text, str) else text)
    except QuantityError:
        raise FieldError(field, f'"{text}" is not a quantity') from None


def parse_str(text: str) -> int | None:
    """A quantity string in nanos, or None when it is not a quantity (`parse` says why)."""
    try:
        return parse_nanos(text.strip())
    except QuantityError:
        return None


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
