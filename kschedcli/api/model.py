"""Typed views of the Kubernetes objects the scheduler reads, with API-server defaulting applied.

Each view keeps the source dict (`raw`) untouched; the fields the scheduler needs are parsed once.
"""

from __future__ import annotations

import json
from itertools import chain
from typing import Any

from ..errors import FieldError
from . import quantity
from .labels import NodeSelector, parse_label_selector, parse_node_selector, parse_node_selector_term
from .resources import Resource, _add_into, _int, _list, _max_into, _name, _obj, _str_map, parse_resource_list
from .resources import is_extended_resource as is_extended_resource
from .resources import is_scalar_resource as is_scalar_resource

DEFAULT_SCHEDULER = "default-scheduler"
DEFAULT_MILLI_CPU_REQUEST = 100  # scheduler's non-zero request for scoring
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

# Taints every pod tolerates through the DefaultTolerationSeconds admission plugin.
DEFAULT_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300),
    ("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300),
)


class Container:
    __slots__ = ("name", "image", "requests", "limits", "ports", "restartable")

    def __init__(self, c: dict, field: str, host_network: bool):
        c = _obj(c, field)
        get = c.get
        self.name = get("name") or ""
        self.image = get("image") or ""
        res = get("resources")
        if res is None:
            self.limits = {}
            self.requests = {}
        else:
            res = _obj(res, f"{field}.resources")
            lim = res.get("limits")
            req = res.get("requests")
            self.limits = parse_resource_list(lim, f"{field}.resources.limits") if lim is not None else {}
            self.requests = parse_resource_list(req, f"{field}.resources.requests") if req is not None else {}
            # API-server defaulting: a resource with a limit and no request requests its limit.
            for k, v in self.limits.items():
                self.requests.setdefault(k, v)
        self.restartable = get("restartPolicy") == "Always"
        ports = []
        raw_ports = get("ports")
        for i, p in enumerate(_list(raw_ports, f"{field}.ports") if raw_ports is not None else ()):
            pf = f"{field}.ports[{i}]"
            p = _obj(p, pf)
            cport = _int(p.get("containerPort"), f"{pf}.containerPort", 0)
            hport = _int(p.get("hostPort"), f"{pf}.hostPort", 0)
            if host_network and not hport:
                hport = cport
            proto = p.get("protocol") or "TCP"
            ports.append((p.get("hostIP") or "", proto, hport, cport))
        self.ports = ports


def aggregate_requests(
    containers: list[Container], init_containers: list[Container], non_missing: dict[str, int] | None = None
) -> dict[str, int]:
    """resourcehelper.AggregateContainerRequests: exact sums, sidecars, max with init containers."""

    def reqs_of(c: Container) -> dict[str, int]:
        if not non_missing:
            return c.requests
        r = dict(c.requests)
        for k, v in non_missing.items():
            if k not in c.requests:
                r[k] = v
        return r

    if not init_containers and not non_missing and len(containers) == 1:
        return dict(containers[0].requests)
    total: dict[str, int] = {}
    for c in containers:
        _add_into(total, reqs_of(c))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in init_containers:
        r = reqs_of(c)
        if c.restartable:
            _add_into(total, r)
            _add_into(sidecars, r)
            effective = sidecars
        else:
            effective = dict(r)
            _add_into(effective, sidecars)
        _max_into(init_max, effective)
    _max_into(total, init_max)
    return total


def scoring_requests(pod: Pod, use_requested: bool, pod_level: bool = True) -> dict[str, int]:
    """The pod's requests as the resource scorers read them (in nano units, by resource name),
    cached on the pod; without useRequested, containers that request neither cpu nor memory count
    the defaults (100m cpu, 200Mi memory).

    pod_level=False skips spec.resources (pod-level requests): kube-scheduler v1.34.1 builds
    NodeResourcesFit's scorer (noderesources/fit.go, nodeResourceStrategyTypeMap) without its
    enablePodLevelResources flag, so Fit's Score aggregates container requests only, while
    BalancedAllocation's scorer has the flag set. The equivalence cache keys scoring classes on
    the same values, so this lives beside the pod rather than in a plugin."""
    key = ("score-requests", use_requested, pod_level)
    reqs = pod._cache.get(key)
    if reqs is None:
        non_missing = (
            None
            if use_requested
            else {"cpu": DEFAULT_MILLI_CPU_REQUEST * 10**6, "memory": DEFAULT_MEMORY_REQUEST * 10**9}
        )
        plr = pod.pod_level_requests if pod_level else {}
        if plr and non_missing:
            non_missing = {k: v for k, v in non_missing.items() if k not in plr}
        reqs = aggregate_requests(pod.containers, pod.init_containers, non_missing)
        reqs.update(plr)
        for k, v in pod.overhead.items():
            reqs[k] = reqs.get(k, 0) + v
        pod._cache[key] = reqs
    return reqs


_POD_LEVEL = ("cpu", "memory")


def _pod_level_supported(name: str) -> bool:
    return name in _POD_LEVEL or name.startswith("hugepages-")


class Toleration:
    __slots__ = ("key", "operator", "value", "effect", "seconds")

    def __init__(self, key, operator, value, effect, seconds):
        self.key = key
        self.operator = operator
        self.value = value
        self.effect = effect
        self.seconds = seconds

    def tolerates(self, t_key: str, t_value: str, t_effect: str) -> bool:
        """v1.Toleration.ToleratesTaint."""
        if self.effect and self.effect != t_effect:
            return False
        if self.key and self.key != t_key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == t_value
        return False


_TOLERATIONS: dict[tuple, Toleration] = {}


def _toleration(key, operator, value, effect, seconds) -> Toleration:
    """Tolerations are read-only once parsed: the same one is shared by every pod that has it."""
    k = (key, operator, value, effect, type(seconds), seconds)
    try:
        t = _TOLERATIONS.get(k)
    except TypeError:  # an unhashable tolerationSeconds: the plugin reports it, not the loader
        return Toleration(key, operator, value, effect, seconds)
    if t is None:
        if len(_TOLERATIONS) > 4096:
            _TOLERATIONS.clear()
        t = _TOLERATIONS[k] = Toleration(key, operator, value, effect, seconds)
    return t


class Taint:
    __slots__ = ("key", "value", "effect")

    def __init__(self, key: str, value: str, effect: str):
        self.key = key
        self.value = value
        self.effect = effect

    def __str__(self) -> str:
        # v1.Taint.ToString: key=value:effect, with the parts that are set
        if not self.value:
            return f"{self.key}:{self.effect}" if self.effect else self.key
        return f"{self.key}={self.value}:{self.effect}" if self.effect else f"{self.key}={self.value}"


def _source_object(obj: Pod | Node) -> dict:
    """A pod's or node's `raw`: the object it was built from. One read from the snapshot cache
    holds (store, index) until it is first read: rebuilding every bound pod's and node's object
    would cost a cached command a third of its time (snapshot_pickle.RawStore)."""
    r = obj._raw
    if type(r) is tuple:
        r = obj._raw = r[0].get(r[1])
    return r


def _set_source_object(obj: Pod | Node, value: dict) -> None:
    obj._raw = value


class Pod:
    """A pod, defaulted as the API server would, with its scheduler-relevant fields parsed."""

    __slots__ = (
        "_raw",
        "namespace",
        "name",
        "uid",
        "labels",
        "annotations",
        "node_name",
        "phase",
        "scheduler_name",
        "priority",
        "priority_class_name",
        "preemption_policy",
        "containers",
        "init_containers",
        "overhead",
        "host_network",
        "requests",
        "non0_cpu",
        "non0_mem",
        "host_ports",
        "tolerations",
        "node_selector",
        "required_node_affinity",
        "preferred_node_affinity",
        "pod_affinity",
        "pod_anti_affinity",
        "spread_constraints",
        "volumes",
        "scheduling_gates",
        "start_time",
        "creation_timestamp",
        "nominated_node_name",
        "deleting",
        "owner_refs",
        "pod_level_requests",
        "resource_claims",
        "images",
        "_cache",
        "_key",
    )
    # the source object, or (store, index) where the snapshot cache keeps it (see `raw`)
    _raw: Any
    # set by _compute_requests or shared from a template pod
    requests: Resource
    non0_cpu: int
    non0_mem: int

    def __init__(
        self,
        raw: dict,
        priorities: dict[str, tuple[int, str | None]] | None = None,
        default_priority: tuple[str, int, str | None] | None = None,
        templates: dict | None = None,
    ):
        """`templates`: a dict the caller keeps for a batch of pods (see _template_key)."""
        self.raw = raw
        meta = _obj(raw.get("metadata"), "metadata")
        spec = _obj(raw.get("spec"), "spec")
        status = _obj(raw.get("status"), "status")
        self.namespace = _name(meta.get("namespace"), "metadata.namespace") or "default"
        self.name = _name(meta.get("name"), "metadata.name") or _name(meta.get("generateName"), "metadata.generateName")
        self.uid = meta.get("uid") or f"{self.namespace}/{self.name}"
        self._key: str | None = None
        self.labels = _str_map(meta.get("labels"), "metadata.labels")
        self.annotations = _str_map(meta.get("annotations"), "metadata.annotations")
        self.owner_refs = _list(meta.get("ownerReferences"), "metadata.ownerReferences")
        self.deleting = meta.get("deletionTimestamp") is not None
        self.creation_timestamp = meta.get("creationTimestamp") or ""
        self.node_name = spec.get("nodeName") or ""
        self.phase = status.get("phase") or ""
        self.start_time = status.get("startTime") or ""
        self.nominated_node_name = status.get("nominatedNodeName") or ""
        self.scheduler_name = spec.get("schedulerName") or DEFAULT_SCHEDULER
        self.host_network = bool(spec.get("hostNetwork"))
        self._cache: dict[Any, Any] = {}
        try:  # names and times are strings (a snapshot's pods are not type-checked field by field)
            "".join((
                self.uid, self.creation_timestamp, self.node_name, self.scheduler_name,
                self.phase, self.start_time, self.nominated_node_name,
            ))  # fmt: skip
        except TypeError:
            _refuse_non_strings(meta, spec, status)

        self.admit_priority(spec, priorities, default_priority)

        if templates is not None:
            template_key, template_parts = _template_key(spec, status, self.node_name, self.host_network)
            hit = templates.get(template_key)
            if hit is not None:
                self._from_template(hit[1], spec)
                return

        self.containers = [
            Container(c, f"spec.containers[{i}]", self.host_network)
            for i, c in enumerate(_list(spec.get("containers"), "spec.containers"))
        ]
        self.init_containers = [
            Container(c, f"spec.initContainers[{i}]", self.host_network)
            for i, c in enumerate(_list(spec.get("initContainers"), "spec.initContainers"))
        ]
        self.overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
        pod_res = _obj(spec.get("resources"), "spec.resources")
        plr = parse_resource_list(pod_res.get("requests"), "spec.resources.requests")
        pod_limits = parse_resource_list(pod_res.get("limits"), "spec.resources.limits")
        if pod_limits:
            # defaultPodRequests: with pod-level limits, a missing pod-level cpu/memory request is
            # the containers' aggregate request, else the pod-level limit
            aggregate = aggregate_requests(self.containers, self.init_containers)
            for k in ("cpu", "memory"):
                if k not in plr and k in aggregate:
                    plr[k] = aggregate[k]
            for k, v in pod_limits.items():
                if _pod_level_supported(k):
                    plr.setdefault(k, v)
        self.pod_level_requests = {k: v for k, v in plr.items() if _pod_level_supported(k)}
        if self.node_name and (status.get("containerStatuses") or status.get("initContainerStatuses")):
            self._apply_status_resources(status)
        self._compute_requests()

        ports: list[tuple[str, str, int]] = []
        for c in self.init_containers:
            if c.restartable:
                ports.extend((ip, proto, hp) for ip, proto, hp, _ in c.ports if hp > 0)
        for c in self.containers:
            ports.extend((ip, proto, hp) for ip, proto, hp, _ in c.ports if hp > 0)
        self.host_ports = ports
        self.images = [c.image for c in self.containers] + [c.image for c in self.init_containers]

        tols = []
        for i, t in enumerate(_list(spec.get("tolerations"), "spec.tolerations")):
            t = _obj(t, f"spec.tolerations[{i}]")
            op = t.get("operator") or "Equal"
            if op not in ("Equal", "Exists"):
                raise FieldError(f"spec.tolerations[{i}].operator", f"{op!r} is not Equal or Exists")
            tols.append(
                _toleration(
                    t.get("key") or "",
                    op,
                    "" if t.get("value") is None else str(t.get("value")),
                    t.get("effect") or "",
                    t.get("tolerationSeconds"),
                )
            )
        # DefaultTolerationSeconds admission adds these unless the pod already tolerates them.
        for key, op, val, eff, secs in DEFAULT_TOLERATIONS:
            if not any(
                t.key == key
                and t.effect in ("", eff)
                or (not t.key and t.operator == "Exists" and t.effect in ("", eff))
                for t in tols
            ):
                tols.append(Toleration(key, op, val, eff, secs))
        self.tolerations = tols

        self.node_selector = _str_map(spec.get("nodeSelector"), "spec.nodeSelector")
        aff = _obj(spec.get("affinity"), "spec.affinity")
        na = _obj(aff.get("nodeAffinity"), "spec.affinity.nodeAffinity")
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.required_node_affinity: NodeSelector | None = (
            parse_node_selector(req, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
            if req is not None
            else None
        )
        prefs = []
        for i, p in enumerate(
            _list(
                na.get("preferredDuringSchedulingIgnoredDuringExecution"),
                "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            )
        ):
            f = f"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            p = _obj(p, f)
            prefs.append(
                (
                    _int(p.get("weight"), f"{f}.weight", 0),
                    parse_node_selector_term(p.get("preference") or {}, f"{f}.preference"),
                )
            )
        self.preferred_node_affinity = prefs
        self.pod_affinity = _obj(aff.get("podAffinity"), "spec.affinity.podAffinity") or None
        self.pod_anti_affinity = _obj(aff.get("podAntiAffinity"), "spec.affinity.podAntiAffinity") or None
        self.spread_constraints = _list(spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints")
        self.volumes = _list(spec.get("volumes"), "spec.volumes")
        self.scheduling_gates = [
            g.get("name", "") if isinstance(g, dict) else str(g)
            for g in _list(spec.get("schedulingGates"), "spec.schedulingGates")
        ]
        self.resource_claims = _list(spec.get("resourceClaims"), "spec.resourceClaims")
        if self.spread_constraints or self.pod_affinity or self.pod_anti_affinity:
            _validate_pod_selectors(self)
        if templates is not None:
            if len(templates) >= 4096:
                templates.clear()
            templates[template_key] = (template_parts, self)

    def admit_priority(
        self,
        spec: dict,
        priorities: dict[str, tuple[int, str | None]] | None,
        default_priority: tuple[str, int, str | None] | None,
    ) -> None:
        """Priority admission: spec.priority wins, else the named class, else the global default.
        (The snapshot loader builds pods before it has read every PriorityClass, and admits
        them again once it has.)"""
        pcn = spec.get("priorityClassName") or ""
        prio = _int(spec.get("priority"), "spec.priority")
        if prio is not None and not -(1 << 31) <= prio < 1 << 31:
            # an int32 the API server could not have stored (a pod file's is refused before this)
            raise FieldError("spec.priority", f"number {prio} is out of range for int32")
        policy = spec.get("preemptionPolicy")
        if type(pcn) is not str or (policy is not None and type(policy) is not str):
            pcn = _name(pcn, "spec.priorityClassName")
            _name(policy, "spec.preemptionPolicy")
        if prio is None:
            if pcn and priorities is not None:
                if pcn not in priorities:
                    raise FieldError("spec.priorityClassName", f"no PriorityClass with name {pcn} was found")
                prio, cls_policy = priorities[pcn]
                policy = policy or cls_policy
            elif not pcn and default_priority is not None:
                pcn, prio, cls_policy = default_priority
                policy = policy or cls_policy
            else:
                prio = 0
        self.priority = prio
        self.priority_class_name = pcn
        self.preemption_policy = policy or "PreemptLowerPriority"

    def _from_template(self, t: Pod, spec: dict) -> None:
        """The spec-derived fields of a pod whose parts are those `t` was built from (no error can
        come from them: `t` was built); the fields read per pod are read as __init__ does. The
        derived values are shared with `t`: nothing changes a pod's fields once it is built."""
        self.containers = t.containers
        self.init_containers = t.init_containers
        self.overhead = t.overhead
        self.pod_level_requests = t.pod_level_requests
        self.requests = t.requests
        self.non0_cpu = t.non0_cpu
        self.non0_mem = t.non0_mem
        self.host_ports = t.host_ports
        self.images = t.images
        self.tolerations = t.tolerations
        self.node_selector = t.node_selector
        self.required_node_affinity = t.required_node_affinity
        self.preferred_node_affinity = t.preferred_node_affinity
        self.pod_affinity = t.pod_affinity
        self.pod_anti_affinity = t.pod_anti_affinity
        self.spread_constraints = t.spread_constraints
        self.volumes = _list(spec.get("volumes"), "spec.volumes")
        self.scheduling_gates = t.scheduling_gates
        self.resource_claims = _list(spec.get("resourceClaims"), "spec.resourceClaims")

    # -- resources -------------------------------------------------------
    def _apply_status_resources(self, status: dict) -> None:
        """InPlacePodVerticalScaling (on in v1.34): a running container's effective request is the
        max of its spec, its status resources and its allocated resources (status and allocated
        only, when the resize is infeasible). Applies to regular and restartable init containers."""
        statuses = {}
        for key in ("containerStatuses", "initContainerStatuses"):
            for cs in status.get(key) or []:
                if isinstance(cs, dict) and cs.get("name"):
                    statuses[cs["name"]] = cs
        if not statuses:
            return
        infeasible = any(
            isinstance(c, dict) and c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible"
            for c in status.get("conditions") or []
        )
        for c in self.containers + [c for c in self.init_containers if c.restartable]:
            cs = statuses.get(c.name)
            if cs is None or cs.get("resources") is None:
                continue
            current = parse_resource_list(
                (cs.get("resources") or {}).get("requests"), f"status.containerStatuses[{c.name}].resources.requests"
            )
            allocated = parse_resource_list(
                cs.get("allocatedResources"), f"status.containerStatuses[{c.name}].allocatedResources"
            )
            merged = {} if infeasible else dict(c.requests)
            _max_into(merged, current)
            _max_into(merged, allocated)
            c.requests = merged

    def _compute_requests(self) -> None:
        reqs = aggregate_requests(self.containers, self.init_containers)
        plr = self.pod_level_requests
        if plr:
            reqs.update(plr)
        if self.overhead:
            _add_into(reqs, self.overhead)
        self.requests = Resource.from_nanos(reqs)
        # Scoring's non-zero requests: containers without a cpu/memory request count a default.
        if plr:
            non_missing = {}
            if "cpu" not in reqs:
                non_missing["cpu"] = DEFAULT_MILLI_CPU_REQUEST * 10**6
            if "memory" not in reqs:
                non_missing["memory"] = DEFAULT_MEMORY_REQUEST * 10**9
        else:
            non_missing = {"cpu": DEFAULT_MILLI_CPU_REQUEST * 10**6, "memory": DEFAULT_MEMORY_REQUEST * 10**9}
        if non_missing:
            nz = aggregate_requests(self.containers, self.init_containers, non_missing)
            if plr:
                nz.update(plr)
            if self.overhead:
                _add_into(nz, self.overhead)
        else:
            nz = reqs
        self.non0_cpu = quantity.milli_value(nz.get("cpu", 0))
        self.non0_mem = quantity.value(nz.get("memory", 0))

    def follow_release(self, release) -> bool:
        """The pod as a cluster of `release` (a versions.Release) holds and its scheduler reads it.
        Without PodLevelResources the API server drops spec.resources, without
        DynamicResourceAllocation spec.resourceClaims; before v1.34 the scheduler counts only
        regular containers' host ports (sidecars' are ignored). Fields are replaced, never
        modified: a pod built from a template shares its values with other pods. True when a
        field was replaced."""
        changed = False
        if self.pod_level_requests and not release.gate("PodLevelResources"):
            self.pod_level_requests = {}
            self._compute_requests()
            self._cache = {}
            changed = True
        if self.resource_claims and not release.gate("DynamicResourceAllocation"):
            self.resource_claims = []
            changed = True
        if self.host_ports and not release.has("SidecarHostPorts") and any(c.restartable for c in self.init_containers):
            self.host_ports = [(ip, proto, hp) for c in self.containers for ip, proto, hp, _ in c.ports if hp > 0]
            changed = True
        return changed

    # the source object (for a bound pod, the fields the loader kept); see _source_object
    raw = property(_source_object, _set_source_object)

    # -- identity ----------------------------------------------------------
    @property
    def key(self) -> str:
        """namespace/name"""
        k = self._key
        if k is None:
            k = self._key = f"{self.namespace}/{self.name}"
        return k

    def has_affinity(self) -> bool:
        return self.pod_affinity is not None or self.pod_anti_affinity is not None

    def has_required_anti_affinity(self) -> bool:
        a = self.pod_anti_affinity
        return bool(a and a.get("requiredDuringSchedulingIgnoredDuringExecution"))

    def controller_ref(self) -> dict | None:
        for o in self.owner_refs:
            if isinstance(o, dict) and o.get("controller"):
                return o
        return None

    def __repr__(self) -> str:
        return f"Pod({self.key})"


_POD_STRINGS = (
    ("metadata", "uid"),
    ("metadata", "creationTimestamp"),
    ("spec", "nodeName"),
    ("spec", "schedulerName"),
    ("status", "phase"),
    ("status", "startTime"),
    ("status", "nominatedNodeName"),
)


def _refuse_non_strings(meta: dict, spec: dict, status: dict) -> None:
    """FieldError for the first of a pod's name and time fields that is not a string."""
    parts = {"metadata": meta, "spec": spec, "status": status}
    for part, key in _POD_STRINGS:
        _name(parts[part].get(key), f"{part}.{key}")


def _template_key(spec: dict, status: dict, node_name: str, host_network: bool) -> tuple:
    """(key, parts): what a pod's spec-derived fields (containers, requests, ports, images,
    tolerations, node selector and affinity, spread constraints, scheduling gates, and their
    validation) are computed from, by object identity. Pods whose parts are the very same objects
    (the snapshot loader shares equal parts, cluster.slim_object) get the same fields; `parts`
    keeps those objects alive while their ids serve as the key."""
    get = spec.get
    sget = status.get
    parts = (
        get("containers"),
        get("initContainers"),
        get("overhead"),
        get("resources"),
        get("tolerations"),
        get("nodeSelector"),
        get("affinity"),
        get("topologySpreadConstraints"),
        get("schedulingGates"),
        sget("containerStatuses"),
        sget("initContainerStatuses"),
        sget("conditions"),
    )
    return (tuple(map(id, parts)), bool(node_name), host_network), parts


def _validate_pod_selectors(pod: Pod) -> None:
    """Reject malformed selectors up front, naming the field, rather than mid-cycle."""
    for i, c in enumerate(pod.spread_constraints):
        f = f"spec.topologySpreadConstraints[{i}]"
        c = _obj(c, f)
        if c.get("labelSelector") is not None:
            parse_label_selector(c["labelSelector"], f"{f}.labelSelector")
        skew = c.get("maxSkew")
        if isinstance(skew, bool) or not isinstance(skew, int) or skew <= 0:
            # (the API server's message; an unset or null maxSkew is Go's zero value, 0)
            shown = json.dumps(0 if skew is None else skew)
            raise FieldError(f"{f}.maxSkew", f"Invalid value: {shown}: must be greater than zero")
        if not c.get("topologyKey"):
            raise FieldError(f"{f}.topologyKey", "Required value")
        if c.get("whenUnsatisfiable") not in ("DoNotSchedule", "ScheduleAnyway"):
            raise FieldError(
                f"{f}.whenUnsatisfiable",
                f'Unsupported value: {c.get("whenUnsatisfiable")!r}: supported values: "DoNotSchedule", '
                '"ScheduleAnyway"',
            )
    for kind, aff in (("podAffinity", pod.pod_affinity), ("podAntiAffinity", pod.pod_anti_affinity)):
        if not aff:
            continue
        for mode in (
            "requiredDuringSchedulingIgnoredDuringExecution",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ):
            for i, t in enumerate(_list(aff.get(mode), f"spec.affinity.{kind}.{mode}")):
                f = f"spec.affinity.{kind}.{mode}[{i}]"
                t = _obj(t, f)
                if mode.startswith("preferred"):
                    t = _obj(t.get("podAffinityTerm"), f"{f}.podAffinityTerm")
                    f = f"{f}.podAffinityTerm"
                if t.get("labelSelector") is not None:
                    parse_label_selector(t["labelSelector"], f"{f}.labelSelector")
                if t.get("namespaceSelector") is not None:
                    parse_label_selector(t["namespaceSelector"], f"{f}.namespaceSelector")
                if not t.get("topologyKey"):
                    raise FieldError(f"{f}.topologyKey", "Required value: can not be empty")


def taint_signature(node: Node) -> tuple:
    """The node's taints as a hashable value (kept on the node): nodes of one pool share it, so
    a decision made from taints alone is made once per distinct set."""
    sig = node._cache.get("taint-signature")
    if sig is None:
        sig = node._cache["taint-signature"] = tuple((t.key, t.value, t.effect) for t in node.taints)
    return sig


class Node:
    __slots__ = (
        "_raw",
        "name",
        "uid",
        "labels",
        "taints",
        "unschedulable",
        "allocatable",
        "images",
        "kubelet_version",
        "_cache",
    )
    _raw: Any  # the source object, or (store, index) where the snapshot cache keeps it
    raw = property(_source_object, _set_source_object)

    def __init__(self, raw: dict):
        self.raw = raw
        meta = _obj(raw.get("metadata"), "metadata")
        spec = _obj(raw.get("spec"), "spec")
        status = _obj(raw.get("status"), "status")
        info = status.get("nodeInfo")
        version = info.get("kubeletVersion") if isinstance(info, dict) else None
        self.kubelet_version: str = version if isinstance(version, str) else ""  # status.nodeInfo
        self.name = _name(meta.get("name"), "metadata.name")
        if not self.name:
            raise FieldError("metadata.name", "is required")
        self.uid = meta.get("uid") or self.name
        self.labels = _str_map(meta.get("labels"), "metadata.labels")
        self.unschedulable = bool(spec.get("unschedulable"))
        taints = []
        for i, t in enumerate(_list(spec.get("taints"), "spec.taints")):
            t = _obj(t, f"spec.taints[{i}]")
            eff = t.get("effect") or ""
            if eff not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                raise FieldError(
                    f"spec.taints[{i}].effect", f"{eff!r} is not NoSchedule, PreferNoSchedule or NoExecute"
                )
            taints.append(Taint(t.get("key") or "", "" if t.get("value") is None else str(t.get("value")), eff))
        self.taints = taints
        alloc = status.get("allocatable")
        if alloc is None:  # API-server defaulting: allocatable defaults to capacity
            alloc = status.get("capacity")
        alloc_field = "status.allocatable" if status.get("allocatable") is not None else "status.capacity"
        amounts = parse_resource_list(alloc, alloc_field)
        for name, nanos in amounts.items():
            if nanos < 0:
                assert alloc is not None  # a negative amount was read from it
                raise FieldError(
                    f"{alloc_field}.{name}", f'Invalid value: "{alloc[name]}": must be greater than or equal to 0'
                )
        self.allocatable = Resource.from_nanos(amounts)
        images = []
        for i, im in enumerate(_list(status.get("images"), "status.images")):
            if type(im) is dict:
                size = im.get("sizeBytes")
                names = im.get("names")
                if type(size) is int and type(names) is list:  # the usual case, read without naming fields
                    images.append((tuple(names), size))
                    continue
            im = _obj(im, f"status.images[{i}]")
            names = _list(im.get("names"), f"status.images[{i}].names")
            images.append((tuple(names), _int(im.get("sizeBytes"), f"status.images[{i}].sizeBytes", 0)))
        try:  # every image name a string (a join checks them in C: a node lists dozens of names)
            "".join(chain.from_iterable(names for names, _ in images))
        except TypeError:  # a null is Go's "", anything else not a string an error naming it
            images = [
                (tuple(_name(n, f"status.images[{i}].names[{j}]") for j, n in enumerate(names)), size)
                for i, (names, size) in enumerate(images)
            ]
        self.images = images
        self._cache: dict[Any, Any] = {}

    def __repr__(self) -> str:
        return f"Node({self.name})"


def meta_of(raw: dict) -> tuple[str, str]:
    meta = raw.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""
