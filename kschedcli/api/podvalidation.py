"""The rest of the API server's ValidatePodCreate (pkg/apis/core/validation) that bears on
scheduling, for the pods a user hands in, with its messages: container names and ports, resource
names and quantities (requests within limits), tolerations, topology spread constraints and
affinity weights, the node name. The first problem found is raised as InputError (the API server
lists them all; one line names the first).

The values' JSON types are known good here (fieldtree checked them first). Quantities are quoted
as written (the API server prints their canonical form: `2` for `2000m`)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import FieldError, InputError
from . import quantity
from .labels import _DNS_SUBDOMAIN, label_value_errors, qualified_name_errors

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_PORT_NAME_CHARS = re.compile(r"[-a-z0-9]+")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_STANDARD_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))
# quota counts: integers only (IsIntegerResourceName)
_INTEGER_RESOURCES = frozenset(
    (
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    )
)
_STANDARD_RESOURCES = (
    _STANDARD_CONTAINER_RESOURCES
    | _INTEGER_RESOURCES
    | frozenset(
        (
            "requests.cpu",
            "requests.memory",
            "requests.ephemeral-storage",
            "limits.cpu",
            "limits.memory",
            "limits.ephemeral-storage",
            "storage",
            "requests.storage",
        )
    )
)
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _q(v: Any) -> str:
    """A value as field.Error prints it: strings quoted, numbers as they are."""
    return json.dumps(v, ensure_ascii=False) if isinstance(v, str) else str(v)


def _supported(values) -> str:
    return ", ".join(f'"{v}"' for v in values)


class _Checker:
    def __init__(self, source: str, where: str) -> None:
        self.source = source
        self.where = where

    def fail(self, field: str, message: str) -> None:
        raise InputError(message, source=self.source, where=self.where, field=field)

    # ------------------------------------------------------------------------- containers

    def containers(self, spec: dict) -> None:
        seen: set = set()
        regular = [c.get("name") for c in spec.get("containers") or [] if isinstance(c, dict)]
        for group in ("containers", "initContainers", "ephemeralContainers"):
            if group != "containers":
                seen = set(regular) | (seen if group == "ephemeralContainers" else set())
            for i, c in enumerate(spec.get(group) or []):
                f = f"spec.{group}[{i}]"
                c = c or {}
                name = c.get("name") or ""
                if name and not (len(name) <= 63 and _DNS1123_LABEL.fullmatch(name)):
                    why = "must be no more than 63 characters" if len(name) > 63 else _DNS1123_LABEL_ERROR
                    self.fail(f"{f}.name", f"Invalid value: {_q(name)}: {why}")
                if group != "containers" and name in seen:
                    self.fail(f"{f}.name", f"Duplicate value: {_q(name)}")
                seen.add(name)
                if group == "initContainers":
                    policy = c.get("restartPolicy")
                    if policy is not None and policy != "Always":
                        self.fail(f"{f}.restartPolicy", f'Unsupported value: {_q(policy)}: supported values: "Always"')
                self.ports(c.get("ports") or [], f"{f}.ports", bool(spec.get("hostNetwork")))
                res = c.get("resources") or {}
                self.resources(res, f"{f}.resources")
        self.host_port_conflicts(spec)

    def ports(self, ports: list, f: str, host_network: bool) -> None:
        names: set[str] = set()
        for i, p in enumerate(ports):
            pf = f"{f}[{i}]"
            p = p or {}
            name = p.get("name") or ""
            if name:
                why = _port_name_errors(name)
                if why:
                    self.fail(f"{pf}.name", f"Invalid value: {_q(name)}: {why}")
                if name in names:
                    self.fail(f"{pf}.name", f"Duplicate value: {_q(name)}")
                names.add(name)
            cport = p.get("containerPort") or 0
            if cport == 0:
                self.fail(f"{pf}.containerPort", "Required value")
            if not 1 <= cport <= 65535:
                self.fail(f"{pf}.containerPort", f"Invalid value: {cport}: must be between 1 and 65535, inclusive")
            hport = p.get("hostPort") or 0
            if hport and not 1 <= hport <= 65535:
                self.fail(f"{pf}.hostPort", f"Invalid value: {hport}: must be between 1 and 65535, inclusive")
            if host_network and hport and hport != cport:
                self.fail(
                    f"{pf}.hostPort", f"Invalid value: {hport}: must match `containerPort` when `hostNetwork` is true"
                )
            proto = p.get("protocol")
            if proto is not None and proto not in _PROTOCOLS:
                why = "Required value" if proto == "" else f"Unsupported value: {_q(proto)}: supported values: "
                self.fail(f"{pf}.protocol", why + ("" if proto == "" else _supported(_PROTOCOLS)))

    def host_port_conflicts(self, spec: dict) -> None:
        """checkHostPortConflicts over the regular containers (protocol/hostIP/hostPort)."""
        taken: set[str] = set()
        for ci, c in enumerate(spec.get("containers") or []):
            for pi, p in enumerate((c or {}).get("ports") or []):
                p = p or {}
                port = p.get("hostPort") or 0
                if not port:
                    continue
                key = f"{p.get('protocol') or 'TCP'}/{p.get('hostIP') or ''}/{port}"
                if key in taken:
                    self.fail(f"spec.containers[{ci}].ports[{pi}].hostPort", f"Duplicate value: {_q(key)}")
                taken.add(key)

    def resources(self, res: dict, f: str) -> None:
        """validateResourceRequirements with validateContainerResourceName; a limit without a
        request was defaulted into the request first."""
        limits = res.get("limits") or {}
        requests = {**limits, **(res.get("requests") or {})}
        cpu_or_memory = hugepages = False
        for part, values in (("limits", limits), ("requests", requests)):
            for name, q in values.items():
                rf = f"{f}.{part}.{name}"
                why = _container_resource_name_error(str(name))
                if why:
                    self.fail(rf, f"Invalid value: {_q(name)}: {why}")
                nanos = self.quantity(q, rf)
                if _is_integer_resource(name) and nanos % 10**9:
                    self.fail(rf, f"Invalid value: {q}: must be an integer")
                hugepages = hugepages or name.startswith("hugepages-")
                cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
                if part != "requests":
                    continue
                limit = limits.get(name)
                overcommit = _is_native(name) and not name.startswith("hugepages-")
                if limit is None:
                    if not overcommit:
                        self.fail(f"{f}.limits", "Required value: Limit must be set for non overcommitable resources")
                    continue
                lnanos = self.quantity(limit, f"{f}.limits.{name}")
                if nanos != lnanos and not overcommit:
                    self.fail(f"{f}.requests", f"Invalid value: {_q(str(q))}: must be equal to {name} limit of {limit}")
                if nanos > lnanos:
                    self.fail(
                        f"{f}.requests",
                        f"Invalid value: {_q(str(q))}: must be less than or equal to {name} limit of {limit}",
                    )
        if hugepages and not cpu_or_memory:
            self.fail(f, "Forbidden: HugePages require cpu or memory")

    def quantity(self, q: Any, field: str) -> int:
        try:
            return quantity.parse(q, field)
        except FieldError as e:
            raise InputError(e.message, source=self.source, where=self.where, field=e.field) from None

    # ------------------------------------------------------------------------- scheduling

    def tolerations(self, tolerations: list) -> None:
        for i, t in enumerate(tolerations):
            f = f"spec.tolerations[{i}]"
            t = t or {}
            key = t.get("key") or ""
            op = t.get("operator") or ""
            value = t.get("value") or ""
            if key:
                bad = qualified_name_errors(key)
                if bad:
                    self.fail(f"{f}.key", f"Invalid value: {_q(key)}: {bad[0]}")
            if not key and op != "Exists":
                self.fail(
                    f"{f}.operator",
                    f'Invalid value: {_q(op)}: operator must be Exists when `key` is empty, which means "match all '
                    'values and all keys"',
                )
            if op in ("", "Equal"):
                bad = label_value_errors(value)
                if bad:
                    self.fail(f"{f}.operator", f"Invalid value: {_q(value)}: {';'.join(bad)}")
            elif op == "Exists":
                if value:
                    self.fail(
                        f"{f}.operator", f"Invalid value: {_q(value)}: value must be empty when `operator` is 'Exists'"
                    )
            else:
                self.fail(f"{f}.operator", f'Unsupported value: {_q(op)}: supported values: "Equal", "Exists"')
            effect = t.get("effect") or ""
            if effect and effect not in _EFFECTS:
                self.fail(f"{f}.effect", f"Unsupported value: {_q(effect)}: supported values: {_supported(_EFFECTS)}")

    def spread(self, constraints: list) -> None:
        for i, c in enumerate(constraints):
            f = f"spec.topologySpreadConstraints[{i}]"
            c = c or {}
            key, when = c.get("topologyKey") or "", c.get("whenUnsatisfiable") or ""
            for later in constraints[i + 1 :]:
                later = later or {}
                if (later.get("topologyKey") or "", later.get("whenUnsatisfiable") or "") == (key, when):
                    self.fail(f"{f}.{{topologyKey, whenUnsatisfiable}}", f'Duplicate value: "{{{key}, {when}}}"')
            min_domains = c.get("minDomains")
            if min_domains is not None:
                if min_domains <= 0:
                    self.fail(f"{f}.minDomains", f"Invalid value: {min_domains}: must be greater than zero")
                if when != "DoNotSchedule":
                    self.fail(
                        f"{f}.minDomains",
                        f"Invalid value: {min_domains}: can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                        f"not {when}",
                    )
            for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
                v = c.get(policy)
                if v is not None and v not in ("Honor", "Ignore"):
                    self.fail(f"{f}.{policy}", f'Unsupported value: {_q(v)}: supported values: "Honor", "Ignore"')
            selector = c.get("labelSelector") or {}
            in_selector = set(selector.get("matchLabels") or {}) | {
                (e or {}).get("key") for e in selector.get("matchExpressions") or []
            }
            for j, k in enumerate(c.get("matchLabelKeys") or []):
                bad = qualified_name_errors(k)
                if bad:
                    self.fail(f"{f}.matchLabelKeys[{j}]", f"Invalid value: {_q(k)}: {bad[0]}")
                if k in in_selector:
                    self.fail(
                        f"{f}.matchLabelKeys[{j}]",
                        f"Invalid value: {_q(k)}: exists in both matchLabelKeys and labelSelector",
                    )

    def affinity(self, affinity: dict) -> None:
        na = affinity.get("nodeAffinity") or {}
        preferred = "preferredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(na.get(preferred) or []):
            self.weight((t or {}).get("weight"), f"spec.affinity.nodeAffinity.{preferred}[{i}]")
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if req is not None and not (req.get("nodeSelectorTerms") or []):
            self.fail(
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                "Required value: must have at least one node selector term",
            )
        for kind in ("podAffinity", "podAntiAffinity"):
            pa = affinity.get(kind) or {}
            for i, t in enumerate(pa.get(preferred) or []):
                self.weight((t or {}).get("weight"), f"spec.affinity.{kind}.{preferred}[{i}]")

    def weight(self, w: Any, f: str) -> None:
        if w is None or not 1 <= w <= 100:
            self.fail(f"{f}.weight", f"Invalid value: {w or 0}: must be in the range 1-100")


def _port_name_errors(name: str) -> str:
    if len(name) > 15:
        return "must be no more than 15 characters"
    if not _PORT_NAME_CHARS.fullmatch(name):
        return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
    if not re.search("[a-z]", name):
        return "must contain at least one letter (a-z)"
    if "--" in name:
        return "must not contain consecutive hyphens"
    if name[0] == "-" or name[-1] == "-":
        return "must not begin or end with a hyphen"
    return ""


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    return not _is_native(name) and not name.startswith("requests.") and not qualified_name_errors("requests." + name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or _is_extended(name)


def _container_resource_name_error(name: str) -> str:
    """validateContainerResourceName's first message ("" for a good name)."""
    bad = qualified_name_errors(name)
    if bad:
        return bad[0]
    if "/" not in name:
        if name not in _STANDARD_RESOURCES and not name.startswith(("hugepages-", "requests.hugepages-")):
            return "must be a standard resource type or fully qualified"
        if name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            return "must be a standard resource for containers"
    elif not _is_native(name) and not _is_extended(name):
        return "doesn't follow extended resource name standard"
    return ""


def check_pod_spec(spec: dict, source: str, where: str) -> None:
    """Raise InputError for the first problem of `spec` the API server's ValidatePodCreate would
    report among those above."""
    c = _Checker(source, where)
    node_name = spec.get("nodeName")
    if node_name and not (len(node_name) <= 253 and _DNS_SUBDOMAIN.fullmatch(node_name)):
        c.fail(
            "spec.nodeName",
            f"Invalid value: {_q(node_name)}: a lowercase RFC 1123 subdomain must consist of lower case "
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        )
    c.containers(spec)
    c.tolerations(spec.get("tolerations") or [])
    c.spread(spec.get("topologySpreadConstraints") or [])
    c.affinity(spec.get("affinity") or {})
