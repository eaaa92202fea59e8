"""How the command line fails: a usage error is one line on stderr with a short hint on it, exit 2;
a reader that closes stdout early (`ksched ... | head -3`) changes nothing, the exit status included.
"""

from __future__ import annotations

import atexit
import errno
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn

from typer.core import TyperGroup

from ..errors import InputChanged, InputError

try:  # typer 0.2x vendors click
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
    from typer.exceptions import Abort
except ImportError:  # pragma: no cover - an older typer over click
    from click.exceptions import Abort, ClickException, NoArgsIsHelpError, UsageError  # type: ignore[no-redef,import-not-found,assignment,unused-ignore]


def usage_line(e: UsageError) -> str:
    """`ksched: <what is wrong> (see 'ksched explain -h')`: click's message on one line."""
    message = " ".join(line.strip() for line in e.format_message().splitlines() if line.strip())
    hint = " (see 'ksched -h')"  # click gives some errors (an option missing its value) no context
    ctx = e.ctx
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        hint = f" (see '{ctx.command_path} {ctx.help_option_names[0]}')"
    return f"ksched: {message}{hint}"


class OneLineErrorsGroup(TyperGroup):
    """The `ksched` group: click's usage errors (three lines: Usage, Try, Error) become one line, and
    so does bad input (InputError) raised by any command, exit 2."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            try:
                code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            except InputChanged as e:
                # a snapshot cache entry found damaged only when a part of it was first read: while
                # nothing is printed yet, the command runs again from the files (the entry was
                # removed; the cache is not read again in this process), as it would without it
                retry = getattr(e, "retry", None)
                if retry is None or getattr(sys.stdout, "wrote", True):
                    raise
                retry()
                code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as e:  # `ksched` alone: the help, as before
            e.show()
            sys.exit(e.exit_code)
        except UsageError as e:
            print(usage_line(e), file=sys.stderr)
            sys.exit(2)
        except (InputError, InputChanged) as e:  # bad input, from any command: the one line it carries
            print(f"ksched: {e}", file=sys.stderr)
            sys.exit(2)
        except ClickException as e:
            print(f"ksched: {e.format_message()}", file=sys.stderr)
            sys.exit(e.exit_code)
        except Abort:
            print("ksched: aborted", file=sys.stderr)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


class ClosedReaderSafeStdout:
    """sys.stdout that outlives its reader: once the reader has gone (EPIPE), the rest of the output
    goes to /dev/null, so the command finishes and exits with the status its result gives."""

    def __init__(self, stream: Any):
        self._stream = stream
        self.wrote = False  # anything written (or the binary stream reached): a command cannot start over

    def __getattr__(self, name: str) -> Any:
        if name in ("buffer", "writelines"):
            self.wrote = True
        return getattr(self._stream, name)

    def _reader_gone(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)

    def write(self, text: str) -> int:
        self.wrote = self.wrote or bool(text)
        try:
            return self._stream.write(text)
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise
            self._reader_gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            if e.errno != errno.EPIPE:
                raise
            self._reader_gone()
            self._stream.flush()  # what was buffered goes to /dev/null now


def exit_after(entry: Callable[[], Any]) -> NoReturn:
    """entry(), then the process ends as Python would end it (atexit handlers run, stdout and
    stderr flushed, the same status) but without first freeing every object one by one: after a
    5,000-node snapshot that teardown alone takes a fifth of a second. Python's own exit is
    kept when another thread still runs, a profiler or tracer watches (it writes its findings
    at exit), or a stream cannot be flushed."""
    try:
        entry()
        code: Any = 0
    except SystemExit as e:
        code = e.code
    if threading.active_count() > 1 or sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # as Python prints a non-integer exit code
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(status)


def guard_stderr() -> None:
    """Write stderr through textsafe.EscapingStream: the error lines, warnings and --verbose lines
    quote names and messages from the inputs, the API server and extenders, and none of their
    characters may act on the terminal (the process's real stderr only; tests capture their own)."""
    from ..textsafe import EscapingStream

    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return
    if not isinstance(sys.stderr, EscapingStream):
        sys.stderr = EscapingStream(sys.stderr)


def guard_stdout() -> None:
    """Install ClosedReaderSafeStdout (the process's real stdout only; tests capture their own), and
    the stderr guard (guard_stderr)."""
    guard_stderr()
    try:
        sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        # a name holding a lone surrogate (JSON's "\ud800") prints as U+FFFD would not: as "?"
        reconfigure(errors="replace")
    sys.stdout = ClosedReaderSafeStdout(sys.stdout)
