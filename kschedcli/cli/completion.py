"""The values shell completion offers for `--node`, `--profile` and pod arguments, read from the
snapshot and config named earlier on the command line (the public API's lookups, kschedcli/session.py).

Completion must never fail loudly: any problem reading the files gives no suggestions.
"""

from __future__ import annotations

import os


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
    from ..session import node_names

    try:
        return [(name, zone) for name, zone in node_names(_cluster_param(ctx)) if name.startswith(incomplete)]
    except Exception:
        return []


def complete_profile(ctx, incomplete: str) -> list[tuple[str, str]]:
    from ..session import profile_names

    params = getattr(ctx, "params", None) or {}
    config = params.get("config")
    try:
        names = profile_names(config if config and os.path.isfile(config) else None)
    except Exception:
        names = []
    return [(n, "profile") for n in names if n.startswith(incomplete)]


def complete_pod(ctx, incomplete: str) -> list[tuple[str, str]]:
    """Pending pods of the snapshot named earlier (--cluster). None match: the shell completes files."""
    from ..session import pending_pod_names

    try:
        pods = pending_pod_names(_cluster_param(ctx))
    except Exception:
        return []
    return [
        (key, "pending pod")
        for key, name in pods
        if key.startswith(incomplete) or name.startswith(incomplete) and incomplete
    ]
