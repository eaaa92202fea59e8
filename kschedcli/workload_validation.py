"""The API server's validation of the workloads a person writes (ValidateDeployment, ValidateReplicaSet,
ValidateReplicationController, ValidateStatefulSet, ValidateDaemonSet, ValidateJob, ValidateCronJob of
kubernetes v1.34's pkg/apis/apps, core and batch validation), for what bears on the pods they make:
the selector (required, not empty, valid, matching the template's labels), the pod template (as a
pod: containers required, and the rest validation.py checks of a Pod), the template's restartPolicy,
a CronJob's schedule (robfig/cron's standard parser, as the API server parses it).

The first problem found is raised as InputError with the API server's field path and message
(`spec.selector: Required value`); the API server lists them all. Objects exported from a server
(`written_by_server`) are read as they are: the server validated them when they were written.

Values the messages quote are written as v1.34's field errors write them: strings quoted, numbers as
they are, objects and maps as their JSON (`{"matchLabels":{"app":"web"}}`, `null` for none).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import InputError
from .labels import label_value_errors, qualified_name_errors

# metadata fields only an API server sets: an object carrying one was read from a server
_SERVER_META = ("uid", "resourceVersion", "creationTimestamp")


def written_by_server(obj: dict) -> bool:
    """An object exported from an API server (it has server-set metadata or a status), not one a
    person wrote: the server validated it when it was written."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and any(meta.get(k) for k in _SERVER_META):
        return True
    return bool(obj.get("status"))


class _Problem(Exception):
    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message


def go_json(v: Any) -> str:
    """encoding/json's Marshal: compact, map keys sorted, <, > and & escaped."""
    text = json.dumps(v, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _quoted(v: Any) -> str:
    """A field error's bad value: strings quoted (%q), numbers and booleans as they are, else JSON."""
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return go_json(v)


def _invalid(field: str, value: Any, detail: str) -> _Problem:
    return _Problem(field, f"Invalid value: {_quoted(value)}" + (f": {detail}" if detail else ""))


def _required(field: str, detail: str = "") -> _Problem:
    return _Problem(field, "Required value" + (f": {detail}" if detail else ""))


def _d(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


# ---------------------------------------------------------------------------- label selectors


def _selector_json(sel: dict) -> dict:
    """The selector as metav1.LabelSelector marshals: matchLabels, then matchExpressions (key,
    operator, values), empty fields left out."""
    out: dict = {}
    ml = _d(sel.get("matchLabels"))
    if ml:
        out["matchLabels"] = {str(k): "" if v is None else str(v) for k, v in ml.items()}
    exprs = sel.get("matchExpressions")
    if isinstance(exprs, list) and exprs:
        reqs = []
        for e in exprs:
            e = _d(e)
            r: dict = {"key": e.get("key") or "", "operator": e.get("operator") or ""}
            if e.get("values"):
                r["values"] = [str(v) for v in e["values"]]
            reqs.append(r)
        out["matchExpressions"] = reqs
    return out


def _check_labels(labels: dict, field: str) -> None:
    """ValidateLabels: each key a qualified name, each value a label value."""
    for k in sorted(labels, key=str):
        for msg in qualified_name_errors(str(k)):
            raise _invalid(field, str(k), msg)
        v = labels[k]
        v = "" if v is None else str(v)
        for msg in label_value_errors(v):
            raise _invalid(field, v, msg)


def _check_label_selector(sel: dict, field: str) -> None:
    """unversioned ValidateLabelSelector (label values checked: AllowInvalidLabelValueInSelector off)."""
    _check_labels(_d(sel.get("matchLabels")), f"{field}.matchLabels")
    exprs = sel.get("matchExpressions")
    for i, e in enumerate(exprs if isinstance(exprs, list) else []):
        f = f"{field}.matchExpressions[{i}]"
        e = _d(e)
        op = e.get("operator") or ""
        values = e.get("values") or []
        values = values if isinstance(values, list) else []
        if op in ("In", "NotIn"):
            if not values:
                raise _required(f"{f}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                raise _Problem(
                    f"{f}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
        else:
            raise _invalid(f"{f}.operator", op, "not a valid selector operator")
        key = str(e.get("key") or "")
        for msg in qualified_name_errors(key):
            raise _invalid(f"{f}.key", key, msg)
        for j, v in enumerate(values):
            for msg in label_value_errors(str(v)):
                raise _invalid(f"{f}.values[{j}]", str(v), msg)


def _selector_matches(sel: dict | None, labels: dict) -> bool:
    """metav1.LabelSelectorAsSelector(sel).Matches(labels): a nil selector matches nothing, an empty
    one everything (the selector is valid here)."""
    if sel is None:
        return False
    labels = {str(k): "" if v is None else str(v) for k, v in labels.items()}
    for k, v in _d(sel.get("matchLabels")).items():
        if labels.get(str(k)) != ("" if v is None else str(v)):
            return False
    exprs = sel.get("matchExpressions")
    for e in exprs if isinstance(exprs, list) else []:
        e = _d(e)
        key, op = str(e.get("key") or ""), e.get("operator")
        values = {str(v) for v in (e.get("values") or [])}
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _is_empty(sel: dict) -> bool:
    return not _d(sel.get("matchLabels")) and not (sel.get("matchExpressions") or [])


def _template_labels(template: dict) -> dict:
    return _d(_d(template.get("metadata")).get("labels"))


def _labels_value(template: dict) -> Any:
    labels = _d(template.get("metadata")).get("labels")
    return {str(k): "" if v is None else str(v) for k, v in labels.items()} if isinstance(labels, dict) else None


def _mismatch(field: str, template: dict) -> _Problem:
    return _invalid(f"{field}.metadata.labels", _labels_value(template), "`selector` does not match template `labels`")


def _selector_of_spec(spec: dict, empty_message: str | None) -> dict | None:
    """The spec's selector checked as apps' Validate*Spec check it: required (when
    `empty_message`), valid, not empty."""
    sel = spec.get("selector")
    if sel is None:
        if empty_message is not None:
            raise _required("spec.selector")
        return None
    sel = _d(sel)
    _check_label_selector(sel, "spec.selector")
    if empty_message is not None and _is_empty(sel):
        raise _invalid("spec.selector", _selector_json(sel), empty_message)
    return sel


# ---------------------------------------------------------------------------- pod templates


def _check_pod_template(template: dict, field: str, source: str, where: str) -> None:
    """ValidatePodTemplateSpec: the template's labels and annotations and its spec as a pod's."""
    from .validation import check_pod_template_values

    meta = _d(template.get("metadata"))
    try:
        check_pod_template_values({"metadata": meta, "spec": _d(template.get("spec"))}, source, where)
    except InputError as e:
        raise _Problem(f"{field}.{e.field}" if e.field else field, e.message) from None


def _restart_policy(template: dict) -> str:
    policy = _d(template.get("spec")).get("restartPolicy")
    return policy if isinstance(policy, str) and policy else "Always"  # SetDefaults_PodSpec


def _check_always(template: dict, field: str) -> None:
    """A StatefulSet's or DaemonSet's pods restart Always and have no activeDeadlineSeconds."""
    policy = _restart_policy(template)
    if policy != "Always":
        raise _Problem(
            f"{field}.spec.restartPolicy", f'Unsupported value: {_quoted(policy)}: supported values: "Always"'
        )
    ads = _d(template.get("spec")).get("activeDeadlineSeconds")
    if ads is not None:
        raise _invalid(f"{field}.spec.activeDeadlineSeconds", ads, "must not be specified")


# ---------------------------------------------------------------------------- kinds


def _deployment(spec: dict, source: str, where: str) -> None:
    sel = _selector_of_spec(spec, "empty selector is invalid for deployment")
    template = _d(spec.get("template"))
    if sel is not None and not _is_empty(sel) and not _selector_matches(sel, _template_labels(template)):
        raise _mismatch("spec.template", template)
    _check_pod_template(template, "spec.template", source, where)
    policy = _restart_policy(template)
    if policy != "Always":
        raise _Problem(
            "spec.template.spec.restartPolicy", f'Unsupported value: {_quoted(policy)}: supported values: "Always"'
        )
    ads = _d(template.get("spec")).get("activeDeadlineSeconds")
    if ads is not None:
        raise _invalid(
            "spec.template.spec.activeDeadlineSeconds", ads, "activeDeadlineSeconds in ReplicaSet is not Supported"
        )


def _replica_set(spec: dict, source: str, where: str) -> None:
    _deployment(spec, source, where)  # the same checks and messages (ValidateReplicaSetSpec)


def _replication_controller(spec: dict, source: str, where: str) -> None:
    """ValidateReplicationControllerSpec, after defaulting (an empty selector takes the template's labels)."""
    template = spec.get("template")
    sel = _d(spec.get("selector"))
    if not sel and isinstance(template, dict):
        sel = _template_labels(template)
    if not sel:
        raise _required("spec.selector")
    _check_labels(sel, "spec.selector")
    if not isinstance(template, dict):
        raise _required("spec.template")
    if not _selector_matches({"matchLabels": sel}, _template_labels(template)):
        raise _mismatch("spec.template", template)
    _check_pod_template(template, "spec.template", source, where)
    policy = _restart_policy(template)
    if policy != "Always":
        raise _Problem(
            "spec.template.spec.restartPolicy", f'Unsupported value: {_quoted(policy)}: supported values: "Always"'
        )
    if _d(template.get("spec")).get("activeDeadlineSeconds") is not None:
        raise _Problem(
            "spec.template.spec.activeDeadlineSeconds",
            "Forbidden: activeDeadlineSeconds in ReplicationController is not Supported",
        )


def _stateful_set(spec: dict, source: str, where: str) -> None:
    sel = _selector_of_spec(spec, "empty selector is not valid for statefulset.")
    template = _d(spec.get("template"))
    if sel is not None and not _is_empty(sel) and not _selector_matches(sel, _template_labels(template)):
        raise _mismatch("spec.template", template)
    _check_pod_template(template, "spec.template", source, where)
    _check_always(template, "spec.template")


def _daemon_set(spec: dict, source: str, where: str) -> None:
    """ValidateDaemonSetSpec: a missing selector selects nothing, so the template's labels do not
    match it."""
    sel = _selector_of_spec(spec, None)
    template = _d(spec.get("template"))
    if not _selector_matches(sel, _template_labels(template)):
        raise _mismatch("spec.template", template)
    if sel is not None and _is_empty(sel):
        raise _invalid("spec.selector", _selector_json(sel), "empty selector is invalid for daemonset")
    _check_pod_template(template, "spec.template", source, where)
    _check_always(template, "spec.template")


def _job_template(spec: dict, field: str, source: str, where: str) -> None:
    """validateJobSpec's pod template: a pod's, restarting OnFailure or Never."""
    template = _d(spec.get("template"))
    _check_pod_template(template, f"{field}.template", source, where)
    policy = _d(template.get("spec")).get("restartPolicy")
    if policy in (None, "", "Always"):
        raise _required(f"{field}.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"')
    if policy not in ("OnFailure", "Never"):
        raise _Problem(
            f"{field}.template.spec.restartPolicy",
            f'Unsupported value: {_quoted(policy)}: supported values: "OnFailure", "Never"',
        )


def _job(spec: dict, source: str, where: str) -> None:
    """ValidateJob: the template, then (with manualSelector; otherwise the API server generates the
    selector and the labels it selects) the selector and its match."""
    _job_template(spec, "spec", source, where)
    if spec.get("manualSelector") is True:
        sel = _selector_of_spec(spec, None)
        if sel is None:
            raise _required("spec.selector")
        template = _d(spec.get("template"))
        if not _selector_matches(sel, _template_labels(template)):
            raise _mismatch("spec.template", template)


def _cron_job(spec: dict, source: str, where: str) -> None:
    """validateCronJobSpec: the schedule, the concurrency policy, the job template."""
    schedule = spec.get("schedule")
    if not isinstance(schedule, str) or not schedule:
        raise _required("spec.schedule")
    err = cron_schedule_error(schedule)
    if err:
        raise _invalid("spec.schedule", schedule, err)
    if "TZ" in schedule:
        raise _invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    policy = spec.get("concurrencyPolicy")
    if policy is not None and policy not in ("Allow", "Forbid", "Replace"):
        raise _Problem(
            "spec.concurrencyPolicy",
            f'Unsupported value: {_quoted(policy)}: supported values: "Allow", "Forbid", "Replace"',
        )
    _job_template(_d(_d(spec.get("jobTemplate")).get("spec")), "spec.jobTemplate.spec", source, where)


_CHECKS = {
    "Deployment": _deployment,
    "ReplicaSet": _replica_set,
    "ReplicationController": _replication_controller,
    "StatefulSet": _stateful_set,
    "DaemonSet": _daemon_set,
    "Job": _job,
    "CronJob": _cron_job,
}


def check_workload(obj: dict, kind: str, source: str, where: str) -> None:
    """Raise InputError for the first thing the API server's validation refuses in this workload,
    written by a person (an object exported from a server is taken as it is)."""
    check = _CHECKS.get(kind)
    if check is None or written_by_server(obj):
        return
    try:
        check(_d(obj.get("spec")), source, where)
    except _Problem as p:
        raise InputError(p.message, source=source, where=where, field=p.field) from None


# ---------------------------------------------------------------------------- cron schedules

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# robfig/cron/v3's bounds for the standard parser's five fields, and the names it takes
_CRON_FIELDS = (
    ("minute", 0, 59, None),
    ("hour", 0, 23, None),
    ("day of month", 1, 31, None),
    ("month", 1, 12, {m: i + 1 for i, m in enumerate(_MONTHS)}),
    ("day of week", 0, 6, {d: i for i, d in enumerate(_WEEKDAYS)}),
)
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_GO_DURATION = re.compile(r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0")


class _CronError(Exception):
    pass


def _atoi(expr: str) -> int:
    """robfig/cron's mustParseInt: strconv.Atoi, then not negative."""
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise _CronError(f"failed to parse int from {expr}: strconv.Atoi: parsing {json.dumps(expr)}: invalid syntax")
    num = int(expr)
    if not -(1 << 63) <= num < (1 << 63):
        raise _CronError(
            f"failed to parse int from {expr}: strconv.Atoi: parsing {json.dumps(expr)}: value out of range"
        )
    if num < 0:
        raise _CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _cron_range(expr: str, lo: int, hi: int, names: dict | None) -> None:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1

    def int_or_name(s: str) -> int:
        if names is not None and s.lower() in names:
            return names[s.lower()]
        return _atoi(s)

    if low_and_high[0] in ("*", "?"):
        start, end = lo, hi
    else:
        start = int_or_name(low_and_high[0])
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = int_or_name(low_and_high[1])
        else:
            raise _CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if single:
            end = hi
    else:
        raise _CronError(f"too many slashes: {expr}")
    if start < lo:
        raise _CronError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise _CronError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise _CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise _CronError(f"step of range should be a positive number: {expr}")


def cron_schedule_error(spec: str) -> str:
    """robfig/cron/v3's ParseStandard (five fields, or a descriptor), as the API server runs it on a
    CronJob's schedule: its error text, "" for a schedule it parses."""
    try:
        if spec.startswith(("TZ=", "CRON_TZ=")):
            i = spec.find(" ")
            name = spec[spec.index("=") + 1 : i if i >= 0 else len(spec)]
            if i < 0 or not _known_zone(name):
                raise _CronError(f"provided bad location {name}: unknown time zone {name}")
            spec = spec[i:].strip()
        if spec.startswith("@"):
            if spec in _DESCRIPTORS:
                return ""
            if spec.startswith("@every "):
                d = spec[len("@every ") :]
                if not _GO_DURATION.fullmatch(d):
                    raise _CronError(f"failed to parse duration {spec}: time: invalid duration {json.dumps(d)}")
                return ""
            raise _CronError(f"unrecognized descriptor: {spec}")
        fields = spec.split()
        if len(fields) != 5:
            raise _CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
        for text, (_, lo, hi, names) in zip(fields, _CRON_FIELDS):
            for expr in (r for r in text.split(",") if r):
                _cron_range(expr, lo, hi, names)
    except _CronError as e:
        return str(e)
    return ""


def _known_zone(name: str) -> bool:
    if name in ("", "UTC", "Local"):
        return True
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(name)
    except Exception:  # ZoneInfoNotFoundError (a KeyError), ValueError for a malformed key, OSError
        return False
    return True
