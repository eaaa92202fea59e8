"""`--report FILE.html`: one self-contained HTML page per answer (explain, capacity, diff, sweep,
scale-up), its charts static SVG drawn by Vega-Lite (Altair, vl-convert: the `ksched[report]`
extra), nothing loaded when it is opened (docs/reports.md). Reads the answer's document and its
utilization (the Session answer's `utilization()`) only."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any

from .charts import require
from .page import Page, h

KINDS = ("explain", "capacity", "diff", "sweep", "scale-up")

__all__ = ["KINDS", "check_target", "report_html", "require", "write_report"]


def report_html(kind: str, doc: dict, usage: Any) -> str:
    """The page: the command's sections, then the cluster's utilization, the release last."""
    from .views import VIEWS

    subject = doc.get("pod") if kind == "explain" else None
    title = f"ksched {kind}" + (f": {subject}" if subject else "")
    page = Page(title)
    page.heading(title, level=1)
    VIEWS[kind](page, doc, usage)
    chosen = doc.get("kubernetesVersionChosenBy") or {}
    footer = (
        f"ksched {h(doc.get('kschedVersion', ''))}, following kube-scheduler {h(doc.get('kubernetesVersion', ''))}"
        f" ({h(chosen.get('reason', ''))}). The same data as <code>-o json</code>; "
        "charts drawn with Vega-Lite. This page loads nothing and runs no script."
    )
    return page.html(footer)


def check_target(path: str, inputs: Iterable[str] = ()) -> None:
    """Before the question is asked: `path` is a file the report can replace that is none of the
    command's `inputs` (inputs/sources.py), so that ksched never writes over what it reads. Else
    one InputError line naming --report."""
    from ...inputs.sources import check_output_file

    check_output_file(path, inputs, "--report", "the report")


def write_report(path: str, kind: str, doc: dict, usage: Any) -> None:
    """The report written to `path` (whole or not at all: a new temporary file, never one that was
    there, renamed; removed again when it cannot be)."""
    from ...errors import InputError

    text = report_html(kind, doc, usage)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        raise InputError(f"cannot write the report: {e.strerror}", source=path, field="--report") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise InputError(f"cannot write the report: {e.strerror}", source=path, field="--report") from None
