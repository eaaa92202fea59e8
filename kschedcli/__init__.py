"""ksched: offline what-if placement for Kubernetes, following kube-scheduler.

The public API is `Session` (kschedcli/session.py) and what its questions return; the names below
are imported when first used, so that `ksched --help` does not pay for the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
KUBE_SCHEDULER_VERSION = "v1.34.1"

__all__ = [
    "KUBE_SCHEDULER_VERSION",
    "Capacity",
    "ClusterSource",
    "Diff",
    "Drain",
    "Explanation",
    "InputError",
    "Options",
    "ScaleDown",
    "ScaleUp",
    "ScheduleRun",
    "Session",
    "__version__",
]

if TYPE_CHECKING:
    from .errors import InputError
    from .session import (
        Capacity,
        ClusterSource,
        Diff,
        Drain,
        Explanation,
        Options,
        ScaleDown,
        ScaleUp,
        ScheduleRun,
        Session,
    )


def __getattr__(name: str) -> Any:
    if name == "InputError":
        from .errors import InputError

        return InputError
    if name in __all__:
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module 'kschedcli' has no attribute {name!r}")
