"""Label selectors (metav1.LabelSelector) and node selectors (v1.NodeSelector), as apimachinery."""

from __future__ import annotations

import marshal
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from ..errors import FieldError

# apimachinery util/validation patterns. fullmatch, not match with "$": Python's "$" also matches
# before a trailing newline, Go's does not.
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
_QUALIFIED_NAME = re.compile(_QNAME_FMT)
_DNS_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    out = msg + " (e.g. "
    for i, e in enumerate(examples):
        if i:
            out += " or "
        out += f"'{e}', "
    return out + f"regex used for validation is '{fmt}')"


def qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName: the messages kube-scheduler reports for a bad label key."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix.encode()) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _DNS_SUBDOMAIN.fullmatch(prefix):
                errs.append(
                    "prefix part " + _regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")
                )
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.fullmatch(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """validation.IsValidLabelValue."""
    errs = []
    if len(value.encode()) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def valid_label_key(key: object) -> TypeGuard[str]:
    return isinstance(key, str) and not qualified_name_errors(key)


def valid_label_value(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and not label_value_errors(value)


def parse_int64(s) -> int | None:
    """strconv.ParseInt(s, 10, 64): an optional sign and ASCII digits only (no spaces, no '_'),
    within int64; None where Go returns an error."""
    if not isinstance(s, str):
        return None
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or not body.isascii() or not body.isdigit():
        return None
    v = int(s)
    if not -(1 << 63) <= v < (1 << 63):
        return None
    return v


class Requirement:
    """One label requirement: key, operator, values. Operators as labels.Selector."""

    __slots__ = ("key", "op", "values")

    def __init__(self, key: str, op: str, values: frozenset[str] | tuple = ()):
        self.key = key
        self.op = op
        self.values = values

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "In":
            return labels.get(self.key) in self.values
        if op == "NotIn":
            return labels.get(self.key) not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            v = labels.get(self.key)
            if v is None or len(self.values) != 1:
                return False
            have = parse_int64(v)  # labels.Requirement.Matches: strconv.ParseInt, else no match
            if have is None:
                return False
            want = self.values[0]  # type: ignore[index]  # a Gt/Lt requirement holds a 1-tuple
            return have > want if op == "Gt" else have < want
        return False

    def __repr__(self) -> str:
        return f"{self.key} {self.op} {sorted(self.values) if self.op not in ('Gt', 'Lt') else self.values}"


class LabelSelector:
    """A parsed metav1.LabelSelector. `nothing` for a nil selector, `everything` for an empty one."""

    __slots__ = ("requirements", "is_nothing")

    def __init__(self, requirements: tuple[Requirement, ...] = (), is_nothing: bool = False):
        self.requirements = requirements
        self.is_nothing = is_nothing

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.is_nothing:
            return False
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def is_empty(self) -> bool:
        return not self.is_nothing and not self.requirements

    def equality_pairs(self) -> list[tuple[str, str]]:
        """key=value requirements usable to narrow candidates by a label index."""
        return [(r.key, next(iter(r.values))) for r in self.requirements if r.op == "In" and len(r.values) == 1]

    def without_requirement(self, pair: tuple[str, str]) -> list[tuple[str, str, Any]]:
        """(key, operator, values) of every requirement but the first key=value one equal to
        `pair` (one of equality_pairs()): what is left to check of a label set carrying `pair`."""
        out = []
        dropped = False
        key, value = pair
        for r in self.requirements:
            if not dropped and r.op == "In" and len(r.values) == 1 and r.key == key and value in r.values:
                dropped = True
                continue
            out.append((r.key, r.op, r.values))
        return out


NOTHING = LabelSelector(is_nothing=True)
EVERYTHING = LabelSelector()


def parse_label_selector(sel, field: str) -> LabelSelector:
    """metav1.LabelSelectorAsSelector: None -> Nothing, {} -> Everything; invalid -> FieldError."""
    if sel is None:
        return NOTHING
    if not isinstance(sel, dict):
        raise FieldError(field, "must be an object")
    reqs: list[Requirement] = []
    ml = sel.get("matchLabels") or {}
    if not isinstance(ml, dict):
        raise FieldError(f"{field}.matchLabels", "must be an object")
    for k in sorted(ml):
        v = ml[k]
        v = "" if v is None else str(v) if not isinstance(v, str) else v
        if not valid_label_key(k):
            raise FieldError(f"{field}.matchLabels", f"invalid label key {k!r}")
        if not valid_label_value(v):
            raise FieldError(f"{field}.matchLabels.{k}", f"invalid label value {v!r}")
        reqs.append(Requirement(k, "In", frozenset((v,))))
    exprs = sel.get("matchExpressions") or []
    if not isinstance(exprs, list):
        raise FieldError(f"{field}.matchExpressions", "must be a list")
    for i, e in enumerate(exprs):
        f = f"{field}.matchExpressions[{i}]"
        if not isinstance(e, dict):
            raise FieldError(f, "must be an object")
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if not valid_label_key(key):
            raise FieldError(f"{f}.key", f"invalid label key {key!r}")
        values = [str(v) for v in values]
        if op in ("In", "NotIn"):
            if not values:
                raise FieldError(f"{f}.values", "for 'in', 'notin' operators, values set can't be empty")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                raise FieldError(f"{f}.values", "values set must be empty for exists and does not exist")
        else:
            raise FieldError(f"{f}.operator", f"{op!r} is not a valid label selector operator")
        for v in values:
            if not valid_label_value(v):
                raise FieldError(f"{f}.values", f"invalid label value {v!r}")
        reqs.append(Requirement(key, op, frozenset(values)))
    return LabelSelector(tuple(reqs))


def selector_from_set(labels: Mapping[str, str]) -> LabelSelector:
    """labels.SelectorFromSet: every key=value must match; an empty set selects everything."""
    return LabelSelector(tuple(Requirement(k, "In", frozenset((v,))) for k, v in sorted(labels.items())))


class NodeSelectorTerm:
    """One v1.NodeSelectorTerm: its expressions (on labels) and fields ANDed.

    `errors` holds what nodeaffinity's lazy parsing records for the term ((path within the term,
    message) pairs, Go's wording): such a term matches no node, as in LazyErrorNodeSelector."""

    __slots__ = ("expressions", "fields", "raw", "errors")

    def __init__(
        self,
        expressions: tuple[Requirement, ...],
        fields: tuple[Requirement, ...],
        raw: dict,
        errors: tuple[tuple[str, str], ...] = (),
    ):
        self.expressions = expressions
        self.fields = fields
        self.raw = raw
        self.errors = errors

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        # A term with neither expressions nor fields matches no node; nor does one that did not parse.
        if (not self.expressions and not self.fields) or self.errors:
            return False
        for r in self.expressions:
            if not r.matches(node_labels):
                return False
        for r in self.fields:
            # fields.Set of a node holds only metadata.name; any other field reads as ""
            have = node_name if r.key == "metadata.name" else ""
            if (have in r.values) != (r.op == "In"):
                return False
        return True


def _go_json(v) -> str:
    import json

    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _parse_node_requirement(
    e, f: str, is_field: bool, rel: str, errs: list, strict: bool = False
) -> Requirement | None:
    """One requirement. What the API server would reject raises FieldError; what only
    kube-scheduler's parsing rejects (a non-integer Gt/Lt value, a malformed field selector) is
    appended to `errs` as (path, message) and the requirement is dropped (None)."""
    if not isinstance(e, dict):
        raise FieldError(f, "must be an object")
    key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
    values = [str(v) for v in values]
    if strict and not is_field:
        return _new_requirement(key, op, values, e.get("values"), rel, errs)
    if is_field and not strict:
        # a pod's: the API server's ValidateNodeFieldSelectorRequirement refuses what kube-scheduler
        # would read as matching no node (In/NotIn with other than one value, another operator,
        # another key than metadata.name, a value no node could be named)
        if op in ("In", "NotIn"):
            if len(values) != 1:
                raise FieldError(
                    f"{f}.values",
                    "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
        else:
            raise FieldError(f"{f}.operator", f"Invalid value: {_go_json(op)}: not a valid selector operator")
        if key != "metadata.name":
            raise FieldError(f"{f}.key", f"Invalid value: {_go_json(key)}: not a valid field selector key")
        for i, v in enumerate(values):
            if len(v) > 253:
                raise FieldError(
                    f"{f}.values[{i}]", f"Invalid value: {_go_json(v)}: must be no more than 253 characters"
                )
            if not _DNS_SUBDOMAIN.fullmatch(v):
                why = _regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")
                raise FieldError(f"{f}.values[{i}]", f"Invalid value: {_go_json(v)}: {why}")
    if is_field:
        # nodeSelectorRequirementsAsFieldSelector: In/NotIn with exactly one value, any key
        if op in ("In", "NotIn"):
            if len(values) != 1:
                errs.append((f"{rel}.values", f"Invalid value: {_go_json(values)}: must have one element"))
                return None
            return Requirement(str(key or ""), op, frozenset(values))
        errs.append((f"{rel}.operator", f'Unsupported value: {_go_json(op)}: supported values: "In", "NotIn"'))
        return None
    if not valid_label_key(key):
        raise FieldError(f"{f}.key", f"invalid label key {key!r}")

    def bad_values() -> bool:
        # labels.NewRequirement validates every value as a label value (validateLabelValue); the API
        # server does not, so such a requirement only fails kube-scheduler's parse (the term matches nothing)
        n = len(errs)
        for i, v in enumerate(values):
            msgs = label_value_errors(v)
            if msgs:
                errs.append((f"{rel}.values[{i}]", f"Invalid value: {_go_json(v)}: {'; '.join(msgs)}"))
        return len(errs) > n

    if op in ("In", "NotIn"):
        if not values:
            raise FieldError(f"{f}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        if bad_values():
            return None
        return Requirement(key, op, frozenset(values))
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise FieldError(f"{f}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        return Requirement(key, op, frozenset())
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise FieldError(f"{f}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
        v = parse_int64(values[0])
        if v is None:  # labels.NewRequirement: strconv.ParseInt fails
            errs.append(
                (
                    f"{rel}.values[0]",
                    f"Invalid value: {_go_json(values[0])}: for 'Gt', 'Lt' operators, the value must be an integer",
                )
            )
        if bad_values() or v is None:
            return None
        return Requirement(key, op, (v,))
    raise FieldError(f"{f}.operator", f"{op!r} is not a valid node selector operator")


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _new_requirement(key, op, values: list[str], given, rel: str, errs: list) -> Requirement | None:
    """A matchExpression as nodeaffinity.NewNodeSelector parses it (NodeAffinityArgs'
    addedAffinity): an operator it does not know, then labels.NewRequirement's checks of the key,
    the values' count for the operator, Gt/Lt integers and each value; problems go to `errs` in
    kube-scheduler's words (`given`: the values as written, null when absent)."""
    if op not in _SELECTOR_OPERATORS:
        supported = ", ".join(f'"{o}"' for o in _SELECTOR_OPERATORS)
        errs.append((f"{rel}.operator", f"Unsupported value: {_go_json(op)}: supported values: {supported}"))
        return None
    n = len(errs)
    key_errors = qualified_name_errors(key) if isinstance(key, str) else ["must be a string"]
    if key_errors:
        errs.append((f"{rel}.key", f"Invalid value: {_go_json(key)}: {'; '.join(key_errors)}"))
    shown = "null" if given is None else _go_json(values)
    if op in ("In", "NotIn") and not values:
        errs.append(
            (f"{rel}.values", f"Invalid value: {shown}: for 'in', 'notin' operators, values set can't be empty")
        )
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(
            (f"{rel}.values", f"Invalid value: {shown}: values set must be empty for exists and does not exist")
        )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                (f"{rel}.values", f"Invalid value: {shown}: for 'Gt', 'Lt' operators, exactly one value is required")
            )
        for i, v in enumerate(values):
            if parse_int64(v) is None:
                errs.append(
                    (
                        f"{rel}.values[{i}]",
                        f"Invalid value: {_go_json(v)}: for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(values):
        msgs = label_value_errors(v)
        if msgs:
            errs.append((f"{rel}.values[{i}]", f"Invalid value: {_go_json(v)}: {'; '.join(msgs)}"))
    if len(errs) > n:
        return None
    if op in ("Gt", "Lt"):
        return Requirement(key, op, (parse_int64(values[0]),))
    return Requirement(key, op, frozenset(values))


def parse_node_selector_term(term, f: str, strict: bool = False) -> NodeSelectorTerm:
    """A NodeSelectorTerm. strict (NodeAffinityArgs' addedAffinity, as nodeaffinity.NewNodeSelector):
    any parse error raises; otherwise it is kept on the term, which then matches nothing."""
    if not isinstance(term, dict):
        raise FieldError(f, "must be an object")
    errs: list[tuple[str, str]] = []
    exprs = []
    for i, e in enumerate(term.get("matchExpressions") or []):
        r = _parse_node_requirement(e, f"{f}.matchExpressions[{i}]", False, f"matchExpressions[{i}]", errs, strict)
        if r is not None:
            exprs.append(r)
    fields = []
    for i, e in enumerate(term.get("matchFields") or []):
        r = _parse_node_requirement(e, f"{f}.matchFields[{i}]", True, f"matchFields[{i}]", errs, strict)
        if r is not None:
            fields.append(r)
    if errs and strict:
        path, msg = errs[0]
        raise FieldError(f"{f}.{path}", msg)
    return NodeSelectorTerm(tuple(exprs), tuple(fields), term, tuple(errs))


class NodeSelector:
    """v1.NodeSelector: terms ORed."""

    __slots__ = ("terms", "_signature")

    def __init__(self, terms: tuple[NodeSelectorTerm, ...]):
        self.terms = terms
        self._signature: bytes | str | None = None

    def signature(self) -> bytes | str:
        """The terms as written (their parse is a function of them), as bytes: equal for
        selectors written alike, however often parsed. Made once."""
        made = self._signature
        if made is None:
            terms = tuple(t.raw for t in self.terms)
            try:
                made = marshal.dumps(terms, 2)
            except ValueError:  # (a value of a type marshal does not write)
                made = repr(terms)
            self._signature = made
        return made

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        for t in self.terms:
            if t.matches(node_labels, node_name):
                return True
        return False


def parse_node_selector(sel, f: str, strict: bool = False) -> NodeSelector:
    if not isinstance(sel, dict):
        raise FieldError(f, "must be an object")
    terms = sel.get("nodeSelectorTerms") or []
    return NodeSelector(
        tuple(parse_node_selector_term(t, f"{f}.nodeSelectorTerms[{i}]", strict) for i, t in enumerate(terms))
    )


# ---------------------------------------------------------------------------- selector strings

_SELECTOR_SPECIAL = "=!(),<> \t\n"


def _selector_tokens(text: str) -> list[str]:
    """labels.Parse's lexer: identifiers and the operators `= == != ! ( ) , < >`, `in` and
    `notin` being identifiers the parser reads as keywords."""
    tokens: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in " \t\n":
            i += 1
        elif text.startswith(("==", "!="), i):
            tokens.append(text[i : i + 2])
            i += 2
        elif ch in "=!(),<>":
            tokens.append(ch)
            i += 1
        else:
            j = i
            while j < len(text) and text[j] not in _SELECTOR_SPECIAL:
                j += 1
            tokens.append(text[i:j])
            i = j
    return tokens


def parse_selector(text: str) -> LabelSelector:
    """labels.Parse, the `kubectl -l` syntax: comma-separated requirements `key`, `!key`,
    `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key>1`, `key<1`.
    An empty string selects everything. Raises ValueError with the reason."""
    tokens = _selector_tokens(text)
    reqs: list[Requirement] = []
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take(what: str) -> str:
        nonlocal pos
        tok = peek()
        if tok is None:
            raise ValueError(f"found end of input, expected {what}")
        pos += 1
        return tok

    def identifier(what: str) -> str:
        tok = take(what)
        if tok in ("=", "==", "!=", "!", "(", ")", ",", "<", ">"):
            raise ValueError(f"found '{tok}', expected {what}")
        return tok

    def check_key(key: str) -> None:
        errs = qualified_name_errors(key)
        if errs:
            raise ValueError(f"invalid label key {key!r}: {'; '.join(errs)}")

    def check_value(value: str) -> None:
        errs = label_value_errors(value)
        if errs:
            raise ValueError(f"invalid label value {value!r}: {'; '.join(errs)}")

    while pos < len(tokens):
        if peek() == "!":
            pos += 1
            key = identifier("a label key")
            check_key(key)
            reqs.append(Requirement(key, "DoesNotExist"))
        else:
            key = identifier("a label key")
            check_key(key)
            op = peek()
            if op is None or op == ",":
                reqs.append(Requirement(key, "Exists"))
            elif op in ("=", "==", "!="):
                pos += 1
                nxt = peek()
                value = "" if nxt is None or nxt == "," else identifier("a label value")
                check_value(value)
                reqs.append(Requirement(key, "NotIn" if op == "!=" else "In", frozenset((value,))))
            elif op in ("in", "notin"):
                pos += 1
                if take("'('") != "(":
                    raise ValueError(f"expected '(' after '{op}'")
                values: list[str] = []
                while True:
                    tok = take("a value or ')'")
                    if tok == ")":
                        break
                    if tok == ",":
                        continue
                    if tok in ("=", "==", "!=", "!", "(", "<", ">"):
                        raise ValueError(f"found '{tok}', expected a value")
                    check_value(tok)
                    values.append(tok)
                if not values:
                    raise ValueError("for 'in', 'notin' operators, values set can't be empty")
                reqs.append(Requirement(key, "In" if op == "in" else "NotIn", frozenset(values)))
            elif op in ("<", ">"):
                pos += 1
                tok = identifier("an integer")
                n = parse_int64(tok)
                if n is None:
                    raise ValueError(f"for 'Gt', 'Lt' operators, the value must be an integer, not {tok!r}")
                reqs.append(Requirement(key, "Gt" if op == ">" else "Lt", (n,)))
            else:
                raise ValueError(f"found '{op}', expected one of =, ==, !=, in, notin, <, >")
        if pos < len(tokens):
            if tokens[pos] != ",":
                raise ValueError(f"found '{tokens[pos]}', expected ','")
            pos += 1
            if pos == len(tokens):
                raise ValueError("found end of input, expected a requirement after ','")
    return LabelSelector(tuple(reqs))
