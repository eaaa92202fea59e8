"""Pod templates compared as the deployment controller compares them.

deploymentutil.FindNewReplicaSet reuses the Deployment's ReplicaSet whose template is
EqualIgnoreHash to the Deployment's: apiequality.Semantic.DeepEqual of the two templates without
the pod-template-hash label, both as the API server stored them (defaulted, quantities rounded up to
milli-units). A manifest is not defaulted and a snapshot's ReplicaSet is, so the manifest's template
is defaulted here first (SetObjectDefaults of the pod template: SetDefaults_PodSpec, _Container,
_Probe, _HTTPGetAction, _Volume and the volume sources, _ObjectFieldSelector, the declarative
`protocol: TCP`, and the v1 conversion that copies serviceAccountName to serviceAccount), then both
are compared by Go's typed equality, read from the field trees (schemas/fieldtrees.json): a field at
its zero value equals a missing one unless it is a pointer, nil and empty slices and maps are equal,
quantities compare by value.
"""

from __future__ import annotations

import copy
from typing import Any

from ..api import quantity
from ..api.fieldtree import _resolve, _trees

HASH_LABEL = "pod-template-hash"
_MISSING = object()


def _dicts(parent: dict, key: str) -> list[dict]:
    items = parent.get(key)
    return [x for x in items if isinstance(x, dict)] if isinstance(items, list) else []


def _sub(parent: Any, key: str) -> dict | None:
    v = parent.get(key) if isinstance(parent, dict) else None
    return v if isinstance(v, dict) else None


def _image_tag(image: str) -> str:
    """parsers.ParseImageName's tag: "latest" when the image names neither a tag nor a digest."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if digest else "latest"


def _field_ref(ref: dict | None) -> None:
    if ref is not None and not ref.get("apiVersion"):
        ref["apiVersion"] = "v1"


def _http_get(action: dict | None) -> None:
    if action is not None:
        action["path"] = action.get("path") or "/"
        action["scheme"] = action.get("scheme") or "HTTP"


def _container(c: dict) -> None:
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = "Always" if _image_tag(str(c.get("image") or "")) == "latest" else "IfNotPresent"
    c["terminationMessagePath"] = c.get("terminationMessagePath") or "/dev/termination-log"
    c["terminationMessagePolicy"] = c.get("terminationMessagePolicy") or "File"
    for p in _dicts(c, "ports"):
        p["protocol"] = p.get("protocol") or "TCP"
    for e in _dicts(c, "env"):
        source = _sub(e, "valueFrom")
        if source is not None:
            _field_ref(_sub(source, "fieldRef"))
            file_key = _sub(source, "fileKeyRef")
            if file_key is not None and file_key.get("optional") is None:
                file_key["optional"] = False
    for probe_key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = _sub(c, probe_key)
        if probe is None:
            continue
        for k, default in (
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        ):
            probe[k] = probe.get(k) or default
        _http_get(_sub(probe, "httpGet"))
        grpc = _sub(probe, "grpc")
        if grpc is not None and grpc.get("service") is None:
            grpc["service"] = ""
    lifecycle = _sub(c, "lifecycle")
    for hook in ("postStart", "preStop"):
        _http_get(_sub(_sub(lifecycle, hook), "httpGet"))


def _volume(v: dict) -> None:
    if not any(k != "name" and v.get(k) is not None for k in v):
        v["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        src = _sub(v, key)
        if src is not None and src.get("defaultMode") is None:
            src["defaultMode"] = 420
    host_path = _sub(v, "hostPath")
    if host_path is not None and host_path.get("type") is None:
        host_path["type"] = ""
    for item in _dicts(_sub(v, "downwardAPI") or {}, "items"):
        _field_ref(_sub(item, "fieldRef"))
    for source in _dicts(_sub(v, "projected") or {}, "sources"):
        for item in _dicts(_sub(source, "downwardAPI") or {}, "items"):
            _field_ref(_sub(item, "fieldRef"))
        token = _sub(source, "serviceAccountToken")
        if token is not None and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = 3600
    claim = _sub(_sub(_sub(v, "ephemeral"), "volumeClaimTemplate"), "spec")
    if claim is not None and claim.get("volumeMode") is None:
        claim["volumeMode"] = "Filesystem"


def defaulted_template(template: dict) -> dict:
    """The pod template as the API server stores it (a copy)."""
    t = copy.deepcopy(template)
    spec = _sub(t, "spec")
    if spec is None:
        return t
    spec["dnsPolicy"] = spec.get("dnsPolicy") or "ClusterFirst"
    spec["restartPolicy"] = spec.get("restartPolicy") or "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    spec["schedulerName"] = spec.get("schedulerName") or "default-scheduler"
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if account:
        spec["serviceAccountName"] = spec["serviceAccount"] = account
    for key in ("containers", "initContainers"):
        for c in _dicts(spec, key):
            _container(c)
    for v in _dicts(spec, "volumes"):
        _volume(v)
    return t


def _canonical(value: Any, expr: str, keep_zero: bool) -> Any:
    """The value as Go's Semantic.DeepEqual sees it: _MISSING for a zero value it equals absence."""
    expr = _resolve(expr)
    if expr.startswith("*"):
        return _MISSING if value is None else _canonical(value, expr[1:], True)
    if expr.startswith("[]"):
        if not value:
            return _MISSING
        if not isinstance(value, list):
            return ("raw", repr(value))
        return tuple(_canonical(x, expr[2:], True) for x in value)
    if expr.startswith("map["):
        if not value:
            return _MISSING
        if not isinstance(value, dict):
            return ("raw", repr(value))
        inner = expr[expr.index("]") + 1 :]
        return tuple(sorted((str(k), _canonical(v, inner, True)) for k, v in value.items()))
    if expr == "Quantity":
        try:
            nanos = quantity.parse_nanos(str(value))
        except (ValueError, TypeError):
            return ("raw", repr(value))
        return ("q", -((-nanos) // 1_000_000))  # rounded up to milli-units
    fields = _trees()["types"].get(expr)
    if isinstance(fields, dict) and isinstance(value, dict):
        out = []
        for k in sorted(value):
            c = _canonical(value[k], fields.get(k, "interface{}"), False)
            if c is not _MISSING:
                out.append((k, c))
        if not out and not keep_zero:
            return _MISSING
        return ("struct", tuple(out))
    if value is None or (not keep_zero and value in ("", 0, False) and not isinstance(value, float)):
        return _MISSING
    return (type(value).__name__, value)


def equal_ignore_hash(a: dict, b: dict) -> bool:
    """EqualIgnoreHash of two stored (defaulted) pod templates."""
    return _canonical(_without_hash(a), "PodTemplateSpec", True) == _canonical(
        _without_hash(b), "PodTemplateSpec", True
    )


def _without_hash(template: dict) -> dict:
    meta = template.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("labels"), dict) or HASH_LABEL not in meta["labels"]:
        return template
    labels = {k: v for k, v in meta["labels"].items() if k != HASH_LABEL}
    return {**template, "metadata": {**meta, "labels": labels}}
