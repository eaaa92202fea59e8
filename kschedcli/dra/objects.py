"""The resource.k8s.io/v1 objects the allocator reads, parsed once: ResourceSlices (their devices),
DeviceClasses, and the requests of ResourceClaims.

Parsing is lenient: a field of the wrong type reads as absent, as the objects come from a cluster
whose API server validated them.
"""

from __future__ import annotations

from typing import Any

from ..api import quantity
from ..api.rawfields import as_dict, as_list
from .cel import parse_semver, quantity_value, semver_value

DeviceID = tuple[str, str, str]  # (driver, pool, device)


_dict = as_dict
_list = as_list


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def meta(obj: dict) -> dict:
    return _dict(obj.get("metadata"))


# distinct device contents get small numbers: CEL verdicts are cached per content
_CONTENTS: dict[Any, int] = {}


def _content_id(key: Any) -> int:
    n = _CONTENTS.get(key)
    if n is None:
        n = _CONTENTS[key] = len(_CONTENTS)
    return n


def selector_expression(sel: Any) -> str | None:
    """selectors[].cel.expression, None when it is not there."""
    cel = sel.get("cel") if isinstance(sel, dict) else None
    expr = cel.get("expression") if isinstance(cel, dict) else None
    return expr if isinstance(expr, str) else None


_KINDS = frozenset(("int", "bool", "string", "version"))


def split_qualified(name: str, default_domain: str) -> tuple[str, str]:
    """parseQualifiedName: (domain, id); a name without a domain is the driver's."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


class Device:
    """One device of a slice. What its selectors see (attributes, capacity) is parsed on first
    use: large clusters repeat a few device contents, and CEL verdicts are kept per content."""

    __slots__ = (
        "name",
        "id",
        "driver",
        "binding_conditions",
        "consumes_counters",
        "content",
        "raw",
        "_attributes",
        "_capacity",
        "_cel",
        "_value_error",
    )

    def __init__(self, raw: dict, driver: str, pool: str, numbered: bool = True):
        basic = raw.get("basic")
        if isinstance(basic, dict):
            # resource.k8s.io/v1beta1 (a v1.32 or v1.33 export): the device's fields under `basic`,
            # as the API server converts it to v1
            raw = {**{k: v for k, v in raw.items() if k != "basic"}, **basic}
        self.raw = raw
        self.name = _str(raw.get("name"))
        self.driver = driver
        self.id: DeviceID = (driver, pool, self.name)
        self.binding_conditions = bool(raw.get("bindingConditions"))
        self.consumes_counters = bool(raw.get("consumesCounters"))
        self.content = -1  # numbered by project(); the tracker numbers the devices of its slices
        if numbered:
            self.project(None)
        self._attributes: dict[str, tuple[str, Any]] | None = None
        self._capacity: dict[str, int] | None = None
        self._cel: tuple[dict, dict] | None = None
        self._value_error: str | None = None

    @property
    def attributes(self) -> dict[str, tuple[str, Any]]:
        """attribute name -> (kind, value), kind one of int, bool, string, version ("" if none)."""
        if self._attributes is None:
            out: dict[str, tuple[str, Any]] = {}
            for name, attr in _dict(self.raw.get("attributes")).items():
                a = _dict(attr)
                out[name] = next(((k, a[k]) for k in ("int", "bool", "string", "version") if k in a), ("", None))
            self._attributes = out
        return self._attributes

    @property
    def capacity(self) -> dict[str, int]:
        """capacity name -> value in nano-units."""
        if self._capacity is None:
            out: dict[str, int] = {}
            for name, cap in _dict(self.raw.get("capacity")).items():
                text = _dict(cap).get("value")
                try:
                    out[name] = quantity.parse_nanos(str(text)) if text is not None else 0
                except quantity.QuantityError:
                    out[name] = 0
            self._capacity = out
        return self._capacity

    def cel_maps(self) -> tuple[dict, dict]:
        """(attributes, capacity) as CEL sees them: domain -> id -> value, names without a domain
        under the driver's."""
        if self._cel is None:
            attrs: dict[str, dict[str, Any]] = {}
            for name, (kind, value) in self.attributes.items():
                if kind == "version":
                    try:
                        value = semver_value(str(value))
                    except ValueError as e:
                        self._value_error = self._value_error or f"attribute {name}: parse semantic version: {e}"
                        value = None
                elif not kind:
                    self._value_error = self._value_error or f"attribute {name}: unsupported attribute value"
                domain, ident = split_qualified(name, self.driver)
                attrs.setdefault(domain, {})[ident] = value
            caps: dict[str, dict[str, Any]] = {}
            for name, nanos in self.capacity.items():
                domain, ident = split_qualified(name, self.driver)
                caps.setdefault(domain, {})[ident] = quantity_value(nanos)
            self._cel = (attrs, caps)
        return self._cel

    @property
    def value_error(self) -> str | None:
        """Why an attribute cannot be given to CEL (DeviceMatches' error), if one cannot."""
        self.cel_maps()
        return self._value_error

    def project(self, names: list[tuple[str, str]] | None) -> None:
        """Number the device's content by the attributes selectors read (`names`, (domain, id);
        None: all of them), its capacity and whether its attributes convert: devices differing
        only in attributes nobody reads (a serial number, a UUID) share CEL verdicts and
        allocation searches."""
        raw = _dict(self.raw.get("attributes"))
        if names is None:
            values: Any = repr(raw)
        else:
            values = []
            for domain, ident in names:
                v = raw.get(f"{domain}/{ident}")
                if v is None and domain == self.driver:
                    v = raw.get(ident)
                values.append((domain, ident, repr(v)))
            values = tuple(values)
        problem = None
        for name, attr in raw.items():
            if type(attr) is not dict or not _KINDS & attr.keys():
                problem = name
                break
            if len(attr) == 1 and "version" in attr:
                try:
                    parse_semver(str(attr["version"]))
                except ValueError:
                    problem = name
                    break
        self.content = _content_id((self.driver, values, repr(self.raw.get("capacity")), problem))


class Slice:
    __slots__ = (
        "name",
        "driver",
        "pool",
        "generation",
        "slice_count",
        "node_name",
        "all_nodes",
        "node_selector",
        "per_device_node_selection",
        "devices",
    )

    def __init__(self, raw: dict):
        spec = _dict(raw.get("spec"))
        pool = _dict(spec.get("pool"))
        self.name = _str(meta(raw).get("name"))
        self.driver = _str(spec.get("driver"))
        self.pool = _str(pool.get("name"))
        gen = pool.get("generation")
        self.generation = gen if isinstance(gen, int) and not isinstance(gen, bool) else 0
        count = pool.get("resourceSliceCount")
        self.slice_count = count if isinstance(count, int) and not isinstance(count, bool) else 0
        self.node_name = _str(spec.get("nodeName"))
        self.all_nodes = spec.get("allNodes") is True
        self.node_selector = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else None
        self.per_device_node_selection = spec.get("perDeviceNodeSelection")
        self.devices = [Device(_dict(d), self.driver, self.pool, False) for d in _list(spec.get("devices"))]


class Pool:
    """The slices of one (driver, pool) that a node can reach, of the newest generation."""

    __slots__ = ("driver", "name", "slices", "incomplete", "invalid", "invalid_reason", "devices", "signature")

    def __init__(self, driver: str, name: str, first: Slice):
        self.driver = driver
        self.name = name
        self.slices = [first]
        self.incomplete = False
        self.invalid = False
        self.invalid_reason = ""
        self.devices: list[tuple[Slice, Device]] = []
        self.signature: tuple = ()

    def finish(self) -> None:
        self.incomplete = len(self.slices) != self.slices[0].slice_count
        seen: set[str] = set()
        for s in self.slices:
            for d in s.devices:
                if d.name in seen and not self.invalid:
                    self.invalid, self.invalid_reason = True, f"duplicate device name {d.name}"
                seen.add(d.name)
                self.devices.append((s, d))
        # what an allocation's outcome can depend on, besides which devices are taken: nodes whose
        # pools agree on it get the same verdict (the pool's name shows in its errors only)
        multi_term = [
            s.node_selector is not None and len(_list(s.node_selector.get("nodeSelectorTerms"))) > 1
            for s, _ in self.devices
        ]
        self.signature = (
            tuple(
                (d.content, d.binding_conditions, d.consumes_counters, m) for (_, d), m in zip(self.devices, multi_term)
            ),
            self.incomplete,
            self.invalid,
            f"{self.driver}/{self.name}: {self.invalid_reason}" if self.incomplete or self.invalid else "",
        )


class DeviceClass:
    __slots__ = ("name", "selectors")

    def __init__(self, raw: dict):
        self.name = _str(meta(raw).get("name"))
        self.selectors = _list(_dict(raw.get("spec")).get("selectors"))


class Request:
    """A request's `exactly` part, or one subrequest of `firstAvailable` (resource.k8s.io/v1
    defaulting applied: ExactCount, count 1)."""

    __slots__ = ("name", "class_name", "mode", "count", "admin_access", "selectors", "tolerations", "capacity")

    def __init__(self, name: str, raw: dict, admin: bool = True):
        self.name = name
        self.class_name = _str(raw.get("deviceClassName"))
        self.mode = _str(raw.get("allocationMode")) or "ExactCount"
        count = raw.get("count")
        self.count = count if isinstance(count, int) and not isinstance(count, bool) else 1
        admin_access = raw.get("adminAccess")
        self.admin_access: bool | None = admin_access if admin and isinstance(admin_access, bool) else None
        self.selectors = _list(raw.get("selectors"))
        self.tolerations = _list(raw.get("tolerations"))
        self.capacity = raw.get("capacity")


class DeviceRequest:
    """One entry of spec.devices.requests: `exactly`, or the subrequests of `firstAvailable`."""

    __slots__ = ("name", "exactly", "first_available")

    def __init__(self, raw: dict):
        self.name = _str(raw.get("name"))
        ex = raw.get("exactly")
        if ex is None and "firstAvailable" not in raw and "deviceClassName" in raw:
            # resource.k8s.io/v1beta1 (a v1.32 or v1.33 export): the request's fields on the request
            # itself, as the API server converts it to v1's `exactly`
            ex = raw
        self.exactly = Request(self.name, _dict(ex)) if isinstance(ex, dict) else None
        self.first_available = [
            Request(_str(_dict(s).get("name")), _dict(s), admin=False) for s in _list(raw.get("firstAvailable"))
        ]


class Constraint:
    __slots__ = ("requests", "match_attribute", "distinct_attribute")

    def __init__(self, raw: dict):
        self.requests = [r for r in _list(raw.get("requests")) if isinstance(r, str)]
        match, distinct = raw.get("matchAttribute"), raw.get("distinctAttribute")
        self.match_attribute: str | None = match if isinstance(match, str) else None
        self.distinct_attribute: str | None = distinct if isinstance(distinct, str) else None


class ClaimSpec:
    __slots__ = ("requests", "constraints")

    def __init__(self, claim: dict):
        devices = _dict(_dict(claim.get("spec")).get("devices"))
        self.requests = [DeviceRequest(_dict(r)) for r in _list(devices.get("requests"))]
        self.constraints = [Constraint(_dict(c)) for c in _list(devices.get("constraints"))]
