"""Looking things up in the snapshot and config named on the command line: pending pods by name
(`ksched explain shop/web-abc --cluster snap.yaml`) and the values shell completion offers for
`--node`, `--profile` and pod arguments.

Completion must never fail loudly: any problem reading the files gives no suggestions.
"""
from __future__ import annotations

import os
from typing import Iterable, Iterator

from .errors import InputError
from .loader import iter_objects


def _paths(values) -> list[str]:
    if not values:
        return []
    if isinstance(values, str):
        values = [values]
    return [v for v in values if v and v != "-" and os.path.isfile(v)]


def _objects(paths: Iterable[str]) -> Iterator[tuple[dict, str, str]]:
    for path in paths:
        for obj, where in iter_objects(path):
            yield obj, path, where


def _meta(obj: dict) -> dict:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _pod_key(obj: dict) -> str:
    m = _meta(obj)
    return f"{m.get('namespace') or 'default'}/{m.get('name') or ''}"


def is_pending_pod(obj: dict) -> bool:
    if obj.get("kind") != "Pod":
        return False
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    return not spec.get("nodeName") and status.get("phase") not in ("Succeeded", "Failed")


def pending_pods(paths: Iterable[str]) -> list[tuple[dict, str, str]]:
    """The snapshot's pods that wait for a node (no spec.nodeName), as (object, file, where)."""
    return [(o, p, w) for o, p, w in _objects(paths) if is_pending_pod(o)]


def find_pending_pod(paths: list[str], ref: str) -> tuple[dict, str, str]:
    """A pending pod of the snapshot by `namespace/name`, or by `name` when that is unique."""
    files = [p for p in paths if p != "-"]
    found = pending_pods(files)
    if "/" in ref:
        hits = [x for x in found if _pod_key(x[0]) == ref]
    else:
        hits = [x for x in found if _meta(x[0]).get("name") == ref]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise InputError(f"{len(hits)} pending pods are named {ref!r}; write it as NAMESPACE/NAME",
                         source=", ".join(files))
    hint = ""
    if found:
        hint = " (pending there: " + ", ".join(_pod_key(o) for o, _, _ in found[:5]) + \
               (", …" if len(found) > 5 else "") + ")"
    raise InputError(f"no such file, and no pending pod named {ref!r} in the snapshot{hint}", source=ref)


# ----------------------------------------------------------------------------- completion

def _cluster_param(ctx) -> list[str]:
    params = getattr(ctx, "params", None) or {}
    return _paths(params.get("cluster"))


def complete_node(ctx, incomplete: str) -> list[tuple[str, str]]:
    out = []
    try:
        for obj, _, _ in _objects(_cluster_param(ctx)):
            if obj.get("kind") != "Node":
                continue
            name = _meta(obj).get("name") or ""
            if name.startswith(incomplete):
                labels = _meta(obj).get("labels") or {}
                zone = labels.get("topology.kubernetes.io/zone", "")
                out.append((name, zone))
    except Exception:
        return []
    return out


def complete_profile(ctx, incomplete: str) -> list[tuple[str, str]]:
    params = getattr(ctx, "params", None) or {}
    config = params.get("config")
    names = ["default-scheduler"]
    if config and os.path.isfile(config):
        try:
            from .config import load_config
            from .plugins import REGISTRY
            names = [p.scheduler_name for p in load_config(config, REGISTRY).profiles]
        except Exception:
            names = []
    return [(n, "profile") for n in names if n.startswith(incomplete)]


def complete_pod(ctx, incomplete: str) -> list[tuple[str, str]]:
    """Pending pods of the snapshot named earlier (--cluster). None match: the shell completes files."""
    out: list[tuple[str, str]] = []
    try:
        for obj, _, _ in pending_pods(_cluster_param(ctx)):
            key = _pod_key(obj)
            if key.startswith(incomplete) or (_meta(obj).get("name") or "").startswith(incomplete) and incomplete:
                out.append((key, "pending pod"))
    except Exception:
        return []
    return out
