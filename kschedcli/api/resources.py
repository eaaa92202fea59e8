"""Resource names and amounts as the scheduler keeps them (framework.Resource), and the field
readers the object views of model.py share: each names the field it rejects."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import overload

from ..errors import FieldError
from . import quantity

_ASCII_INT = re.compile(r"-?[0-9]{1,18}")  # str.isdigit takes "²" and "--5" apart


@lru_cache(maxsize=4096)
def is_extended_resource(name: str) -> bool:
    """v1helper.IsExtendedResourceName: not native (no '/', or containing 'kubernetes.io/'),
    not requests.*, and 'requests.' + name a valid qualified name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    from .labels import qualified_name_errors

    return not qualified_name_errors("requests." + name)


def is_scalar_resource(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages, prefixed native, attachable volumes."""
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    return "kubernetes.io/" in name or is_extended_resource(name)


class Resource:
    """framework.Resource: integer amounts as the scheduler keeps them."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pods", "scalars")

    def __init__(self, milli_cpu=0, memory=0, ephemeral_storage=0, allowed_pods=0, scalars=None):
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pods = allowed_pods
        self.scalars: dict[str, int] = scalars if scalars is not None else {}

    @classmethod
    def from_nanos(cls, rl: dict[str, int]) -> Resource:
        r = cls()
        for name, nanos in rl.items():
            if name == "cpu":
                r.milli_cpu += quantity.milli_value(nanos)
            elif name == "memory":
                r.memory += quantity.value(nanos)
            elif name == "pods":
                r.allowed_pods += quantity.value(nanos)
            elif name == "ephemeral-storage":
                r.ephemeral_storage += quantity.value(nanos)
            elif is_scalar_resource(name):
                r.scalars[name] = r.scalars.get(name, 0) + quantity.value(nanos)
        return r

    def get(self, name: str) -> int:
        if name == "cpu":
            return self.milli_cpu
        if name == "memory":
            return self.memory
        if name == "ephemeral-storage":
            return self.ephemeral_storage
        if name == "pods":
            return self.allowed_pods
        return self.scalars.get(name, 0)

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        if other.scalars:
            s = self.scalars
            for k, v in other.scalars.items():
                s[k] = s.get(k, 0) + sign * v

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pods, dict(self.scalars))

    def as_dict(self) -> dict[str, int]:
        d = {"cpu": self.milli_cpu, "memory": self.memory}
        if self.ephemeral_storage:
            d["ephemeral-storage"] = self.ephemeral_storage
        for k in sorted(self.scalars):
            d[k] = self.scalars[k]
        return d


# ---------------------------------------------------------------- helpers


def _obj(d, field: str) -> dict:
    if type(d) is dict:
        return d
    if d is None:
        return {}
    if not isinstance(d, dict):
        raise FieldError(field, "must be an object")
    return d


def _list(d, field: str) -> list:
    if type(d) is list:
        return d
    if d is None:
        return []
    if not isinstance(d, list):
        raise FieldError(field, "must be a list")
    return d


def _str_map(d, field: str) -> dict[str, str]:
    if d is None:
        return {}
    d = _obj(d, field)
    for k, v in d.items():
        if type(v) is not str or type(k) is not str:
            # keys as sigs.k8s.io/yaml writes them into JSON; a null value is Go's zero value; any
            # other non-string value is a type error at the API server (gpu: true is not "true")
            for key, value in d.items():
                if value is not None and not isinstance(value, str):
                    from .fieldtree import _leaf_problem

                    raise FieldError(f"{field}.{key}", _leaf_problem(value, "string") or "expected a string")
            return {str(k): ("" if v is None else v) for k, v in d.items()}
    return d  # already a map of strings: shared with the source object, which nothing modifies


def _name(v, field: str) -> str:
    """A name or namespace: a string (a YAML 123, yes or 2024-01-01 is not one)."""
    if v is None or type(v) is str:
        return v or ""
    from .fieldtree import _leaf_problem

    raise FieldError(field, _leaf_problem(v, "string") or "expected a string")


@overload
def _int(v, field: str, default: int) -> int: ...
@overload
def _int(v, field: str, default: None = None) -> int | None: ...
def _int(v, field: str, default: int | None = None) -> int | None:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and _ASCII_INT.fullmatch(v):
            return int(v)
        raise FieldError(field, f"{v!r} is not an integer")
    return v


def parse_resource_list(d, field: str) -> dict[str, int]:
    if d is None:
        return {}
    out: dict[str, int] = {}
    parse_str = quantity.parse_str
    for name, q in _obj(d, field).items():
        if type(q) is str and type(name) is str:
            n = parse_str(q)
            if n is None:
                n = quantity.parse(q, f"{field}.{name}")  # raises, naming the field
            out[name] = n
        else:
            out[str(name)] = quantity.parse(q, f"{field}.{name}")
    return out


def _add_into(acc: dict[str, int], rl: dict[str, int]) -> None:
    for k, v in rl.items():
        acc[k] = acc.get(k, 0) + v


def _max_into(acc: dict[str, int], rl: dict[str, int]) -> None:
    for k, v in rl.items():
        if k not in acc or v > acc[k]:
            acc[k] = v
