"""The values shell completion offers for `--node`, `--profile` and pod arguments, read from the
snapshot and config named earlier on the command line (the lookups are the cluster layer's, in
lookup.py).

Completion must never fail loudly: any problem reading the files gives no suggestions.
"""

from __future__ import annotations

import os

from ..inputs.lookup import metadata_of, pending_pods, pod_key, snapshot_objects


def _paths(values) -> list[str]:
    if not values:
        return []
    if isinstance(values, str):
        values = [values]
    return [v for v in values if v and v != "-" and os.path.isfile(v)]


def _cluster_param(ctx) -> list[str]:
    params = getattr(ctx, "params", None) or {}
    return _paths(params.get("cluster"))


def complete_node(ctx, incomplete: str) -> list[tuple[str, str]]:
    out = []
    try:
        for obj, _, _ in snapshot_objects(_cluster_param(ctx)):
            if obj.get("kind") != "Node":
                continue
            name = metadata_of(obj).get("name") or ""
            if name.startswith(incomplete):
                labels = metadata_of(obj).get("labels") or {}
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
            from ..config.scheduler import load_config
            from ..plugins import REGISTRY

            names = [p.scheduler_name for p in load_config(config, REGISTRY).profiles]
        except Exception:
            names = []
    return [(n, "profile") for n in names if n.startswith(incomplete)]


def complete_pod(ctx, incomplete: str) -> list[tuple[str, str]]:
    """Pending pods of the snapshot named earlier (--cluster). None match: the shell completes files."""
    out: list[tuple[str, str]] = []
    try:
        for obj, _, _ in pending_pods(_cluster_param(ctx)):
            key = pod_key(obj)
            if key.startswith(incomplete) or (metadata_of(obj).get("name") or "").startswith(incomplete) and incomplete:
                out.append((key, "pending pod"))
    except Exception:
        return []
    return out
