"""Progress hook for long loads and sequences.

The core reports progress through `task(...)`; nothing is shown unless a front end installed a
reporter with `set_reporter` (the CLI installs a Rich one on a terminal, see render/progress.py).
The core never imports a display library.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol


class Task(Protocol):
    def update(self, done: int) -> None: ...


class _NullTask:
    __slots__ = ()

    def update(self, done: int) -> None:
        pass


NULL_TASK = _NullTask()

# reporter(description, total, unit) -> a context manager yielding an object with update(done)
Reporter = Callable[[str, int, str], AbstractContextManager[Task]]
_reporter: Reporter | None = None


def set_reporter(reporter: Reporter | None) -> None:
    global _reporter
    _reporter = reporter


def get_reporter() -> Reporter | None:
    return _reporter


@contextmanager
def task(description: str, total: int, unit: str = "items") -> Iterator[Task]:
    """A unit of work of `total` steps (`unit`: "bytes", "pods", ...); call update(done)."""
    if _reporter is None:
        yield NULL_TASK
        return
    with _reporter(description, total, unit) as t:
        yield t
