"""`--report FILE.html`: one self-contained HTML page per answer (explain, capacity, diff, sweep,
scale-up), its charts static SVG drawn by Vega-Lite (Altair, vl-convert: the `ksched[report]`
extra), nothing loaded when it is opened (docs/reports.md). Reads the answer's document and its
utilization (the Session answer's `utilization()`) only."""

from __future__ import annotations

import contextlib
import os
import stat
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


def _same(a: str, b: str) -> bool:
    if os.path.abspath(a) == os.path.abspath(b) or os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_target(path: str, inputs: Iterable[str] = ()) -> None:
    """Before the question is asked: `path` is a file the report can replace (its folder there and
    writable, not a directory, a device, a FIFO or a socket) and none of the command's `inputs`
    (their values as given: a file, @FILE, or anything else), so that ksched never writes over what
    it reads. Else one InputError line naming --report."""
    from ...errors import InputError

    if not path.strip():
        raise InputError("expected a file name (FILE.html), not an empty value", field="--report")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"cannot write the report: no such directory {folder}", source=path, field="--report")
    if os.path.isdir(path):
        raise InputError("is a directory, not a file", source=path, field="--report")
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        st = None  # not there yet (or a dangling or looping link, which the report replaces)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(
            "is not a regular file (a device, a FIFO or a socket): the report is written as a new file that "
            "replaces it",
            source=path,
            field="--report",
        )
    for value in inputs:
        for candidate in {value, value[1:]} if value.startswith("@") else {value}:
            if candidate and candidate != "-" and _same(candidate, path):
                raise InputError(
                    "is also an input of this command: the report would replace it", source=path, field="--report"
                )
    if not os.access(folder, os.W_OK):
        raise InputError(f"cannot write the report: {folder}: permission denied", source=path, field="--report")


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
