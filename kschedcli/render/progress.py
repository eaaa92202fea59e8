"""A Rich progress display on stderr for loads and sequences that take over a second.

`install()` plugs it into the core's progress hook (kschedcli.progress) when stderr is a
terminal; otherwise nothing is ever drawn. A task shows up only once it has run for a second,
and the display disappears when it ends (transient), so quick commands and their output are
untouched.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager

from ..textsafe import EscapingStream, raw_stream, safe_name

DELAY = 1.0


class _Task:
    __slots__ = ("reporter", "description", "total", "unit", "done", "started", "task_id")

    def __init__(self, reporter: RichReporter, description: str, total: int, unit: str):
        self.reporter = reporter
        self.description = description
        self.total = total
        self.unit = unit
        self.done = 0
        self.started = time.monotonic()
        self.task_id = None

    def update(self, done: int) -> None:
        self.done = done
        if self.task_id is not None:
            self.reporter.progress.update(self.task_id, completed=done)
        elif time.monotonic() - self.started >= DELAY:
            self.reporter.show(self)


class RichReporter:
    def __init__(self, console=None):
        self.console = console
        self.progress = None
        self.lock = threading.Lock()
        self.active: list[_Task] = []

    def _make(self):
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        from .richsafe import SafeConsole

        class Amount(ProgressColumn):
            def __init__(self):
                super().__init__()
                self.bytes = DownloadColumn()
                self.count = MofNCompleteColumn()

            def render(self, task):
                if task.fields.get("unit") == "bytes":
                    return self.bytes.render(task)
                text = self.count.render(task)
                return Text(f"{text.plain} {task.fields.get('unit', '')}", style=text.style)

        # the display writes its own cursor moves: to the stream under the stderr guard (textsafe)
        console = self.console or SafeConsole(file=raw_stream(sys.stderr))
        return Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            Amount(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            refresh_per_second=8,
        )

    def show(self, task: _Task) -> None:
        with self.lock:
            if task.task_id is not None or task not in self.active:
                return
            if self.progress is None:
                self.progress = self._make()
                self.progress.start()
                # what is written to stderr meanwhile goes through the display (a rich FileProxy,
                # which reads escape codes as styles): escaped before it (restored at stop)
                if not isinstance(sys.stderr, EscapingStream):
                    sys.stderr = EscapingStream(sys.stderr)
            task.task_id = self.progress.add_task(
                safe_name(
                    task.description
                )  # a file name or a kubeconfig context total=task.total or None, completed=task.done, unit=task.unit
            )

    @contextmanager
    def __call__(self, description: str, total: int, unit: str):
        task = _Task(self, description, total, unit)
        with self.lock:
            self.active.append(task)
        timer = threading.Timer(DELAY, self.show, (task,))
        timer.daemon = True
        timer.start()
        try:
            yield task
        finally:
            timer.cancel()
            with self.lock:
                self.active.remove(task)
                if task.task_id is not None and self.progress is not None:
                    self.progress.remove_task(task.task_id)
                if not self.active and self.progress is not None:
                    self.progress.stop()
                    self.progress = None


def install(stream=None) -> bool:
    """Show progress on stderr if it is a terminal (and TERM is not dumb); returns whether."""
    stream = stream or sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty or os.environ.get("TERM") == "dumb" or os.environ.get("KSCHED_NO_PROGRESS"):
        return False
    from .. import progress

    progress.set_reporter(RichReporter())
    return True
