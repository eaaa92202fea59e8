"""What the API server would refuse in the objects a user hands in (pods and workload files): the
strict decoding of fieldtree (unknown fields, JSON types) and the part of ValidatePodCreate a
scheduling question meets (names, containers, quantities), with the API server's messages.

Modes, as kubectl spells --validate: strict (true, the default): an unknown field is an error;
warn: it is a warning; ignore (false): it is not looked at. Type errors and invalid values are
errors in every mode (the API server cannot take the object whatever kubectl checks).

Objects an API server wrote (possibly newer than ksched) were already admitted, and are read as the
API server reads what it stores: their unknown fields are dropped, named under --verbose, never an
error. That is every object of a snapshot (`unknown_fields`), and an object a user hands in that
carries what only an API server sets (`from_api_server`: uid, resourceVersion, creationTimestamp or
status; `kubectl get -o yaml` output, a support bundle's files). What a person writes stays under
--validate.

Numbers: an integral JSON number (go-yaml's float of `1e+09`, JSON's `1e9`, YAML's `5.0`) is an
integer where the API wants one, as Kubernetes' decoding takes it (integral_floats_to_ints).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import InputError
from . import quantity
from .fieldtree import FieldProblem, check_object, integral_floats_to_ints, kind_type
from .labels import (
    _DNS1123_SUBDOMAIN_FMT,
    _DNS1123_SUBDOMAIN_MSG,
    _DNS_SUBDOMAIN,
    _regex_error,
    label_value_errors,
    qualified_name_errors,
)

VALIDATE_MODES = {"strict": "strict", "true": "strict", "warn": "warn", "ignore": "ignore", "false": "ignore"}
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)


# the mode and warnings list for the files a user hands in, as the command's --validate set them
_USER_FILES: ContextVar[tuple[str, list[str] | None]] = ContextVar("ksched_user_files", default=("strict", None))


# where the unknown fields dropped from an API server's objects are named (a command's --verbose)
_DROPPED: ContextVar[Callable[[str], None] | None] = ContextVar("ksched_dropped_fields", default=None)


@contextmanager
def validating_user_files(
    mode: str, warnings: list[str] | None, dropped: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Within: check_user_object without a mode uses `mode` and `warnings` (a command's --validate
    reaches every file it reads: pods, workloads, added nodes, the config, a scenario); `dropped`
    takes one line per API server's object whose unknown fields were dropped."""
    token = _USER_FILES.set((mode, warnings))
    token2 = _DROPPED.set(dropped)
    try:
        yield
    finally:
        _DROPPED.reset(token2)
        _USER_FILES.reset(token)


# what only an API server sets in an object's metadata (or its status at all)
_SERVER_SET = ("uid", "resourceVersion", "creationTimestamp")


def from_api_server(obj: dict) -> bool:
    """Whether `obj` was written by an API server (it carries uid, resourceVersion,
    creationTimestamp or status): an object already admitted, not one a person wrote. A Node's
    status is not a sign (an --add-node file has to say what the node offers)."""
    if obj.get("status") is not None and obj.get("kind") != "Node":
        return True
    meta = obj.get("metadata")
    return type(meta) is dict and any(meta.get(k) not in (None, "") for k in _SERVER_SET)


def user_files_validation() -> tuple[str, list[str] | None]:
    return _USER_FILES.get()


def validate_mode(value: str) -> str:
    mode = VALIDATE_MODES.get(value.lower())
    if mode is None:
        raise InputError(f"{value!r}: must be one of strict (or true), warn, ignore (or false)", field="--validate")
    return mode


def _go_quote(v: object) -> str:
    import json

    return json.dumps(v if isinstance(v, str) else str(v), ensure_ascii=False)


def check_user_object(
    obj: dict, kind: str, source: str, where: str, mode: str | None = None, warnings: list[str] | None = None
) -> None:
    """Raise InputError for what the API server's decoding refuses in `obj` (a `kind`); unknown
    fields by `mode` (warn: appended to `warnings` as one line each); no mode: the command's
    (validating_user_files). An API server's object (from_api_server) has its unknown fields
    dropped whatever the mode: never an error, named to the command's `dropped` (for --verbose),
    and not read (they stay in the object, as the workload's template hash needs them). Integral floats
    where the API wants integers become ints."""
    if mode is None:
        mode, warnings = _USER_FILES.get()
    check_api_version(obj, kind, source, where)
    server = from_api_server(obj)
    dropped: list[str] = []
    for p in check_object(obj, kind):
        if p.unknown and server:
            dropped.append(p.field)
            continue
        if p.unknown:
            if mode == "ignore":
                continue
            if mode == "warn":
                if warnings is not None:
                    warnings.append(f"ksched: warning: {source}: {where}: {p.field}: {p.message}")
                continue
        raise InputError(_as_written(p, source), source=source, where=where, field=p.field)
    if dropped:  # not read by anything that reads the object (it reads the fields it knows)
        report = _DROPPED.get()
        if report is not None:
            at = f"{source}: {where}" if where else source
            fields = ", ".join(dropped)
            report(f"ksched: {at}: an API server's object: fields this ksched does not know, not read: {fields}")
    root = kind_type(kind)
    if root is not None:
        integral_floats_to_ints(obj, root)
    if kind == "Pod":
        _check_pod_values(obj, source, where)


def _as_written(p, source: str) -> str:
    """The problem's message, its quoting hint showing the scalar as the file has it (`08`, not
    the number 8 go-yaml read; `on`, not true) when the file says so unambiguously."""
    from .fieldtree import quote_text

    v = p.value
    if v is None or isinstance(v, (str, list, dict)):
        return p.message
    canonical = f'(quote it if it is text: "{quote_text(v)}")'
    if canonical not in p.message:
        return p.message
    try:
        import re

        from ..loader.goyaml import resolve_plain
        from ..loader.sources import MAX_USER_FILE_BYTES, decode_utf8, read_bytes

        text = decode_utf8(read_bytes(source, MAX_USER_FILE_BYTES), source)
        key = re.sub(r"\[\d+\]$", "", p.field.rsplit(".", 1)[-1])
        pattern = rf"(?:^|[\s{{,])['\"]?{re.escape(key)}['\"]?[ \t]*:[ \t]+([^\s,}}\]#'\"]+)"
        written = {
            m.group(1)
            for m in re.finditer(pattern, text, re.M)
            if type(resolve_plain(m.group(1))) is type(v) and resolve_plain(m.group(1)) == v
        }
    except (InputError, OSError, ValueError):
        return p.message
    if len(written) != 1:
        return p.message
    return p.message.replace(canonical, f'(quote it if it is text: "{written.pop()}")')


def check_config(doc: dict, source: str) -> None:
    """A KubeSchedulerConfiguration as kube-scheduler's strict decoding reads it: its field tree,
    and each pluginConfig's args as its plugin's args type (NAMEArgs; an out-of-tree plugin's are
    not looked at). Unknown fields by the command's --validate, as in pods."""
    from .fieldtree import check_value, has_type

    mode, warnings = _USER_FILES.get()
    problems = check_object(doc, "KubeSchedulerConfiguration")
    profiles = doc.get("profiles")
    for i, profile in enumerate(profiles if isinstance(profiles, list) else []):
        configs = profile.get("pluginConfig") if isinstance(profile, dict) else None
        for j, pc in enumerate(configs if isinstance(configs, list) else []):
            name = pc.get("name") if isinstance(pc, dict) else None
            if isinstance(name, str) and isinstance(pc.get("args"), dict) and has_type(name + "Args"):
                problems += check_value(pc["args"], name + "Args", f"profiles[{i}].pluginConfig[{j}].args")
    for p in problems:
        if p.unknown and mode != "strict":
            if mode == "warn" and warnings is not None:
                warnings.append(f"ksched: warning: {source}: {p.field}: {p.message}")
            continue
        raise InputError(p.message, source=source, field=p.field)


def snapshot_object_problem(obj: dict, kind: str) -> FieldProblem | None:
    """The first value of a snapshot object (a PDB, Service, PVC, CSINode, ...) that no API server
    could have written: a wrong JSON type where ksched reads it (its plugins would otherwise stop on
    it). Unknown fields are a newer API server's, not problems. Pod templates are left out: they are
    checked as the pods a workload creates from them (and they are most of a ReplicaSet's cost).
    Integral floats where the API wants integers become ints in `obj` (a JSON `1e9`, a `1e+09`).
    """
    from .fieldtree import check_value, decodes

    original = obj
    spec = obj.get("spec")
    if type(spec) is dict and ("template" in spec or "jobTemplate" in spec):
        obj = {**obj, "spec": {k: v for k, v in spec.items() if k != "template" and k != "jobTemplate"}}
    root = kind_type(kind)
    value: object = obj
    prefix = ""
    if root is None:  # a kind without a field tree (the DRA objects, read by kschedcli.dra): its metadata
        value, root, prefix = obj.get("metadata"), "ObjectMeta", "metadata"
        dra = _DRA_SHAPES.get(kind)
        if dra is not None:
            problem = next(_shape_problems(obj, dra, ""), None)
            if problem is not None:
                return problem
    if decodes(value, root):
        if integral_floats_to_ints(value, root) and obj is not original:
            for k, v in obj.items():  # the copy's top level and spec back into the object
                if k != "spec":
                    original[k] = v
            original["spec"].update(obj["spec"])
        return None
    return next((p for p in check_value(value, root, prefix) if not p.unknown), None)


# -- the DRA objects' fields the allocator reads (kschedcli.dra), as resource.k8s.io/v1 types them:
# a dict is a struct (its fields checked where present; null is unset), `dict` any object, a
# one-item list a list of that, a string a Go leaf type (fieldtree's). No field tree is generated
# for these kinds (their type names clash with core/v1's), so these hold what an API server could
# have written where ksched reads it.
_DRA_REQUEST = {
    "deviceClassName": "string",
    "allocationMode": "string",
    "count": "int64",
    "adminAccess": "bool",
    "selectors": [dict],
    "tolerations": [dict],
}
_DRA_CLAIM_SPEC = {
    "devices": {
        # (a v1beta1 request holds the fields of `exactly` itself)
        "requests": [
            {
                "name": "string",
                "exactly": _DRA_REQUEST,
                "firstAvailable": [{"name": "string", **_DRA_REQUEST}],
                **_DRA_REQUEST,
            }
        ],
        "constraints": [{"requests": ["string"], "matchAttribute": "string"}],
        "config": [dict],
    }
}
_DRA_RESULT = {"request": "string", "driver": "string", "pool": "string", "device": "string", "adminAccess": "bool"}
_DRA_SHAPES: dict[str, dict] = {
    "ResourceClaim": {
        "spec": _DRA_CLAIM_SPEC,
        "status": {"allocation": {"devices": {"results": [_DRA_RESULT]}}, "reservedFor": [dict]},
    },
    "ResourceClaimTemplate": {"spec": {"spec": _DRA_CLAIM_SPEC}},
    "DeviceClass": {"spec": {"selectors": [dict]}},
    "ResourceSlice": {
        "spec": {
            "driver": "string",
            "nodeName": "string",
            "allNodes": "bool",
            "pool": {"name": "string", "generation": "int64", "resourceSliceCount": "int64"},
            "devices": [
                {
                    "name": "string",
                    "attributes": dict,
                    "capacity": dict,
                    "taints": [dict],
                    "basic": {"attributes": dict, "capacity": dict, "taints": [dict]},  # (v1beta1)
                }
            ],
        }
    },
}


def _shape_problems(value: object, shape: object, path: str) -> Iterator[FieldProblem]:
    """The values under `value` that are not of `shape` (_DRA_SHAPES), each named by its path, in
    fieldtree's words; an integral float where an integer is wanted becomes an int in place (a JSON
    `2.0`). An ExactCount request's count must be above zero, as the API server validates it."""
    from .fieldtree import _describe, _leaf_problem

    if value is None:
        return  # null: unset
    if isinstance(shape, list):
        if not isinstance(value, list):
            yield FieldProblem(path, f"expected a list, got {_describe(value)}", False, value)
            return
        for i, item in enumerate(value):
            yield from _shape_problems(item, shape[0], f"{path}[{i}]")
        return
    if isinstance(shape, str):
        problem = _leaf_problem(value, shape)
        if problem is not None:
            yield FieldProblem(path, problem, False, value)
        return
    if not isinstance(value, dict):
        yield FieldProblem(path, f"expected an object, got {_describe(value)}", False, value)
        return
    if not isinstance(shape, dict):
        return  # `dict`: any object
    for key, sub in shape.items():
        if key in value:
            child = value[key]
            if sub == "int64" and isinstance(child, float) and child.is_integer():
                value[key] = child = int(child)
            yield from _shape_problems(child, sub, f"{path}.{key}" if path else key)
    count = value.get("count")
    exact = "deviceClassName" in shape and value.get("allocationMode") in (None, "", "ExactCount")
    if exact and isinstance(count, int) and not isinstance(count, bool) and count <= 0:
        yield FieldProblem(f"{path}.count", f"Invalid value: {count}: must be greater than zero", False, count)


# the group/version kubectl finds each kind ksched reads in (what an API server of v1.34 serves)
API_VERSIONS = {
    **dict.fromkeys(
        ("Pod", "Node", "Namespace", "PersistentVolume", "PersistentVolumeClaim", "Service", "ReplicationController"),
        "v1",
    ),
    **dict.fromkeys(("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"), "apps/v1"),
    **dict.fromkeys(("Job", "CronJob"), "batch/v1"),
    "PodDisruptionBudget": "policy/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    **dict.fromkeys(
        ("StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity", "VolumeAttachment"), "storage.k8s.io/v1"
    ),
}


def check_api_version(obj: dict, kind: str, source: str, where: str) -> None:
    """An apiVersion kubectl finds no such kind in (`extensions/v1beta1` Deployments of old
    manifests) is refused as kubectl refuses it; a missing one is taken."""
    version = obj.get("apiVersion")
    expected = API_VERSIONS.get(kind)
    if version is not None and expected is not None and version != expected:
        _fail(
            source,
            where,
            "apiVersion",
            f'no matches for kind "{kind}" in version "{version}" (kubectl finds {kind} in {expected})',
        )


def check_kind(obj: dict, source: str, where: str) -> None:
    """A kind that is not one ksched reads but is close to one (`pod`, `Deployments`,
    `Statefulset`) is an error with a did-you-mean: the object would otherwise be left out
    silently (kubectl: no matches for kind)."""
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind in API_VERSIONS or kind in _OTHER_KINDS:
        return
    import difflib

    lowered = {k.lower(): k for k in API_VERSIONS}
    hit = lowered.get(kind.lower()) or lowered.get(kind.lower().removesuffix("s"))
    if hit is None:
        close = difflib.get_close_matches(kind, list(API_VERSIONS), n=1, cutoff=0.85)
        hit = close[0] if close else None
    if hit:
        _fail(source, where, "kind", f'no matches for kind "{kind}"; did you mean {hit}?')


# kinds kubectl knows that are near one ksched reads: never taken for a typo
_OTHER_KINDS = frozenset(("PodTemplate", "Secret", "Endpoints", "Role", "RoleBinding"))


def _fail(source: str, where: str, field: str, message: str) -> None:
    raise InputError(message, source=source, where=where, field=field)


def _check_pod_values(obj: dict, source: str, where: str) -> None:
    """ValidatePodCreate's checks on what ksched reads: the types are known good here."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or ""
    if not name and not meta.get("generateName"):
        _fail(source, where, "metadata.name", "Required value: name or generateName is required")
    if name and (len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name)):
        why = (
            "must be no more than 253 characters"
            if len(name) > 253
            else _regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")
        )
        _fail(source, where, "metadata.name", f"Invalid value: {_go_quote(name)}: {why}")
    ns = meta.get("namespace")
    if ns and (len(ns) > 63 or not _label_re().fullmatch(ns)):
        _fail(
            source,
            where,
            "metadata.namespace",
            f"Invalid value: {_go_quote(ns)}: "
            + _regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"),
        )
    for key, value in (meta.get("labels") or {}).items():
        bad = qualified_name_errors(str(key))
        if bad:
            _fail(source, where, "metadata.labels", f"Invalid value: {_go_quote(key)}: {bad[0]}")
        bad = label_value_errors(value or "")
        if bad:
            _fail(source, where, "metadata.labels", f"Invalid value: {_go_quote(value)}: {bad[0]}")
    spec = obj.get("spec") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        bad = qualified_name_errors(str(key))
        if bad:
            _fail(source, where, "spec.nodeSelector", f"Invalid value: {_go_quote(key)}: {bad[0]}")
        bad = label_value_errors(value or "")
        if bad:
            _fail(source, where, "spec.nodeSelector", f"Invalid value: {_go_quote(value)}: {bad[0]}")
    containers = spec.get("containers") or []
    if not containers:
        _fail(source, where, "spec.containers", "Required value")
    for group in ("initContainers", "containers", "ephemeralContainers"):
        names: set[str] = set()
        for i, c in enumerate(spec.get(group) or []):
            f = f"spec.{group}[{i}]"
            c = c or {}
            cname = c.get("name") or ""
            if not cname:
                _fail(source, where, f"{f}.name", "Required value")
            if cname in names:
                _fail(source, where, f"{f}.name", f"Duplicate value: {_go_quote(cname)}")
            names.add(cname)
            res = c.get("resources") or {}
            for part in ("requests", "limits"):
                _non_negative(res.get(part), f"{f}.resources.{part}", source, where)
    res = spec.get("resources") or {}
    for part in ("requests", "limits"):
        _non_negative(res.get(part), f"spec.resources.{part}", source, where)
    _non_negative(spec.get("overhead"), "spec.overhead", source, where)
    _check_tolerations_seconds(spec, source, where)
    from .podvalidation import check_pod_spec

    check_pod_spec(spec, source, where)


def check_pod_template_values(template: dict, source: str, where: str) -> None:
    """ValidatePodTemplateSpec's checks on what ksched reads, for a workload's pod template (its
    metadata has no name of its own: the pods are named by their controller)."""
    meta = {k: v for k, v in (template.get("metadata") or {}).items() if k not in ("name", "namespace")}
    _check_pod_values({"metadata": {**meta, "name": "template"}, "spec": template.get("spec") or {}}, source, where)


def _check_tolerations_seconds(spec: dict, source: str, where: str) -> None:
    for i, t in enumerate(spec.get("tolerations") or []):
        secs = (t or {}).get("tolerationSeconds")
        if secs is not None and (t or {}).get("effect") != "NoExecute":
            _fail(
                source,
                where,
                f"spec.tolerations[{i}].effect",
                f"Invalid value: {_go_quote(t.get('effect'))}: effect must be 'NoExecute' when "
                "`tolerationSeconds` is set",
            )


def _label_re():
    import re

    return re.compile(_DNS1123_LABEL_FMT)


def _non_negative(rl, field: str, source: str, where: str) -> None:
    for name, q in (rl or {}).items():
        try:
            nanos = quantity.parse(q, f"{field}.{name}")
        except InputError as e:
            raise e.located(source=source, where=where) from None
        if nanos < 0:
            _fail(
                source, where, f"{field}.{name}", f"Invalid value: {_go_quote(q)}: must be greater than or equal to 0"
            )


def unknown_fields(objects: Iterable[dict]) -> Counter:
    """(kind, field path without list indexes) -> count, over snapshot objects of known kinds."""
    import re

    counts: Counter = Counter()
    indexes = re.compile(r"\[\d+\]")
    for obj in objects:
        kind = obj.get("kind")
        if not isinstance(kind, str):
            continue
        for p in check_object(obj, kind):
            if p.unknown:
                counts[(kind, indexes.sub("[]", p.field))] += 1
    return counts
