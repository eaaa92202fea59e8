"""Label selectors (metav1.LabelSelector) and node selectors (v1.NodeSelector), as apimachinery."""
from __future__ import annotations

import re
from typing import Mapping

from .errors import FieldError

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def valid_label_key(key: str) -> bool:
    if not isinstance(key, str) or not key:
        return False
    prefix, _, name = key.rpartition("/")
    if "/" in key:
        if not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix):
            return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


def valid_label_value(value: str) -> bool:
    return isinstance(value, str) and len(value) <= 63 and bool(_LABEL_VALUE.match(value))


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
            if v is None:
                return False
            try:
                have = int(v)
            except ValueError:
                return False
            want = self.values[0]
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
                raise FieldError(f"{f}.values", f"for 'in', 'notin' operators, values set can't be empty")
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
    """One v1.NodeSelectorTerm: its expressions (on labels) and fields (metadata.name) ANDed."""

    __slots__ = ("expressions", "fields", "raw")

    def __init__(self, expressions: tuple[Requirement, ...], fields: tuple[Requirement, ...], raw: dict):
        self.expressions = expressions
        self.fields = fields
        self.raw = raw

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        # A term with neither expressions nor fields matches no node.
        if not self.expressions and not self.fields:
            return False
        for r in self.expressions:
            if not r.matches(node_labels):
                return False
        if self.fields:
            fields = {"metadata.name": node_name}
            for r in self.fields:
                if not r.matches(fields):
                    return False
        return True


def _parse_node_requirement(e, f: str, is_field: bool) -> Requirement:
    if not isinstance(e, dict):
        raise FieldError(f, "must be an object")
    key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
    values = [str(v) for v in values]
    if is_field:
        if key != "metadata.name":
            raise FieldError(f"{f}.key", f"{key!r}: not a supported field selector key (only metadata.name)")
        if op not in ("In", "NotIn") or len(values) != 1:
            raise FieldError(f, "metadata.name field selectors need operator In or NotIn and exactly one value")
        return Requirement(key, op, frozenset(values))
    if not valid_label_key(key):
        raise FieldError(f"{f}.key", f"invalid label key {key!r}")
    if op in ("In", "NotIn"):
        if not values:
            raise FieldError(f"{f}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        return Requirement(key, op, frozenset(values))
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise FieldError(f"{f}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        return Requirement(key, op, frozenset())
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise FieldError(f"{f}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
        try:
            return Requirement(key, op, (int(values[0]),))
        except ValueError:
            raise FieldError(f"{f}.values[0]", f"{values[0]!r} is not an integer") from None
    raise FieldError(f"{f}.operator", f"{op!r} is not a valid node selector operator")


def parse_node_selector_term(term, f: str) -> NodeSelectorTerm:
    if not isinstance(term, dict):
        raise FieldError(f, "must be an object")
    exprs = tuple(_parse_node_requirement(e, f"{f}.matchExpressions[{i}]", False)
                  for i, e in enumerate(term.get("matchExpressions") or []))
    fields = tuple(_parse_node_requirement(e, f"{f}.matchFields[{i}]", True)
                   for i, e in enumerate(term.get("matchFields") or []))
    return NodeSelectorTerm(exprs, fields, term)


class NodeSelector:
    """v1.NodeSelector: terms ORed."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[NodeSelectorTerm, ...]):
        self.terms = terms

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        for t in self.terms:
            if t.matches(node_labels, node_name):
                return True
        return False


def parse_node_selector(sel, f: str) -> NodeSelector:
    if not isinstance(sel, dict):
        raise FieldError(f, "must be an object")
    terms = sel.get("nodeSelectorTerms") or []
    return NodeSelector(tuple(parse_node_selector_term(t, f"{f}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)))
