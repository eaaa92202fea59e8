"""The terminal views (Rich): `ksched explain`, `ksched preempt`, `ksched schedule`, a module per view
over the shared pieces of layout.py.

Every view reads the result model and the data of render/analysis.py, never the scheduler's internals,
so what the table shows is what `-o json` carries. Plain text (no colour codes) when stdout is not a
terminal, with --no-color or when NO_COLOR is set; the width follows the terminal (COLUMNS when piped).
"""

from .carryout import render_carried_out
from .explain import render_explain
from .layout import make_console
from .preempt import render_preempt
from .schedule import render_schedule, unschedulable_names

__all__ = [
    "make_console",
    "render_carried_out",
    "render_explain",
    "render_preempt",
    "render_schedule",
    "unschedulable_names",
]
