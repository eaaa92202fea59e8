"""The terminal views (Rich): `ksched explain`, `ksched preempt`, `ksched schedule`, a module per view
over the shared pieces of layout.py.

Every view reads the result model and the data of render/analysis.py, never the scheduler's internals,
so what the table shows is what `-o json` carries. Plain text (no colour codes) when stdout is not a
terminal, with --no-color or when NO_COLOR is set; the width follows the terminal (COLUMNS when piped).

The names below load their view's module on first use: a command imports the one view it draws.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .carryout import render_carried_out as render_carried_out
    from .explain import render_explain as render_explain
    from .layout import make_console as make_console
    from .preempt import render_preempt as render_preempt
    from .schedule import render_schedule as render_schedule
    from .schedule import unschedulable_names as unschedulable_names

_MODULE_OF = {
    "make_console": "layout",
    "render_carried_out": "carryout",
    "render_explain": "explain",
    "render_preempt": "preempt",
    "render_schedule": "schedule",
    "unschedulable_names": "schedule",
}

__all__ = [
    "make_console",
    "render_carried_out",
    "render_explain",
    "render_preempt",
    "render_schedule",
    "unschedulable_names",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
