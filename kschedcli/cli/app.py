"""The `ksched` command line: the Typer app, its global options, and its commands in `ksched --help`
order (explain.py, schedule.py, whatif.py, meta.py and cache.py hold them). Every command is a thin
layer over the public API (kschedcli.session): it turns its options into a Session, asks it one
question and prints the answer.

Exit status: 0 when every pod is schedulable, 1 when one is not (a pod that needs preemption counts as
not schedulable unless --allow-preemption), 2 for bad input or usage (one line on stderr, no traceback).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import typer

from .. import KUBE_SCHEDULER_VERSION, __version__
from .common import GlobalFlags
from .editflags import EditOrderCommand, with_edit_flags
from .errors import OneLineErrorsGroup, exit_after, guard_stderr, guard_stdout
from .options import NO_CACHE_HELP

_NOT_MOVED = {"help", "install_completion", "show_completion"}  # the subcommand's, or the shell's


class GlobalsAnywhereGroup(OneLineErrorsGroup):
    """The `ksched` group, whose global flags (--no-cache, -v, --version) are taken after the subcommand too:
    `ksched explain pod.yaml --no-cache` as `ksched --no-cache explain pod.yaml`. A flag the
    subcommand has itself (-v on most) stays the subcommand's; nothing after `--` moves."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        flags: dict[str, Any] = {}
        for param in self.params:
            if getattr(param, "is_flag", False) and param.name not in _NOT_MOVED:
                for opt in (*param.opts, *param.secondary_opts):
                    flags[opt] = param
        at = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
        if at is not None and args[at] in self.commands and "--" not in args[:at]:
            sub = self.commands[args[at]]
            own = {o for p in sub.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
            end = args.index("--") if "--" in args[at:] else len(args)
            moved = [a for a in args[at + 1 : end] if a in flags and a not in own]
            if moved:
                rest = [a for a in args[at + 1 : end] if not (a in flags and a not in own)]
                args = [*args[:at], *moved, args[at], *rest, *args[end:]]
        return super().parse_args(ctx, args)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ksched {__version__} (follows kube-scheduler {KUBE_SCHEDULER_VERSION})")
        raise typer.Exit(0)


def _global_options(
    ctx: typer.Context,
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Say on stderr what was read from the cluster and what was ignored."
    ),
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="Print ksched's version and the kube-scheduler version it follows.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help=NO_CACHE_HELP),
) -> None:
    ctx.obj = GlobalFlags(verbose=verbose, no_cache=no_cache)


# the commands in `ksched --help` order: (name, module of kschedcli.cli, function, with the edit flags?)
COMMANDS: tuple[tuple[str, str, str, bool], ...] = (
    ("explain", "explain", "explain", True),
    ("schedule", "schedule", "schedule", True),
    ("capacity", "whatif", "capacity", True),
    ("preempt", "explain", "preempt", True),
    ("drain", "whatif", "drain", True),
    ("diff", "whatif", "diff", True),
    ("sweep", "sweep", "sweep", True),
    ("scale-up", "autoscaler", "scale_up", True),
    ("scale-down", "autoscaler", "scale_down", True),
    ("run", "schedule", "run", False),
    ("schema", "meta", "schema", False),
    ("completion", "meta", "completion", False),
    ("version", "meta", "version", False),
    ("cache", "cache", "cache_app", False),  # a group of its own
)


def build_app(only: str | None = None) -> typer.Typer:
    """The `ksched` app with every command, or with command `only` alone: a command's module (and
    the Typer parameters of its function) is imported and built only when it can be run, so that
    `ksched explain` does not pay for the other twelve (start-up time, benchmarks/startup.py)."""
    new = typer.Typer(
        name="ksched",
        cls=GlobalsAnywhereGroup,
        help="What would kube-scheduler do? Offline placement explanations for Kubernetes "
        f"(follows kube-scheduler {KUBE_SCHEDULER_VERSION}).\n\n"
        "Exit status: 0 every pod schedulable, 1 some pod is not (needing preemption counts as not, "
        "unless --allow-preemption), 2 bad input or usage.",
        context_settings={"help_option_names": ["-h", "--help"]},
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    new.callback()(_global_options)
    for name, module, function, edits in COMMANDS:
        if only is not None and name != only:
            continue
        found = getattr(importlib.import_module(f"{__package__}.{module}"), function)
        if isinstance(found, typer.Typer):
            new.add_typer(found)
        elif edits:
            new.command(cls=EditOrderCommand)(with_edit_flags(found))
        else:
            new.command()(found)
    return new


_GLOBAL_FLAGS = frozenset(["--verbose", "-v", "--version", "--no-cache", "-h", "--help"])
_NAMES = frozenset(name for name, *_ in COMMANDS)


def _invoked(args: list[str]) -> str | None:
    """The command `args` (the words after `ksched`) run, when that is sure: the first word after
    the group's own flags names one. None (every command built) otherwise: no command, an unknown
    one (its error lists the others), shell completion."""
    if os.environ.get("_KSCHED_COMPLETE"):
        return _completed(os.environ)
    for a in args:
        if a in _GLOBAL_FLAGS:
            continue
        return a if a in _NAMES else None
    return None


def _completed(env: Any) -> str | None:
    """In shell completion: the command of the words being completed, once a word after it is
    (bash: COMP_WORDS and COMP_CWORD; zsh and fish: _TYPER_COMPLETE_ARGS, the last word completed).
    None while the command's own name is completed."""
    if "COMP_WORDS" in env:
        words = env["COMP_WORDS"].split()
        try:
            current = int(env.get("COMP_CWORD", ""))
        except ValueError:
            return None
    else:
        text = env.get("_TYPER_COMPLETE_ARGS", "")
        words = text.split()
        current = len(words) if text.endswith(" ") else len(words) - 1
    for i, word in enumerate(words[1:current], start=1):
        if word in _GLOBAL_FLAGS:
            continue
        return word if word in _NAMES and i < current else None
    return None


_FULL: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    """`app`: every command (built on first use)."""
    global _FULL
    if name == "app":
        if _FULL is None:
            _FULL = build_app()
        return _FULL
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    from ..render.progress import install

    install()  # progress on stderr for loads and sequences over a second, on a terminal only
    guard_stdout()  # `ksched ... | head` exits as its result says, not 1 or 120
    app = build_app(_invoked(sys.argv[1:]))
    exit_after(lambda: app(prog_name="ksched"))


def kubectl_main() -> None:
    """`kubectl-ksched`: the same commands as a kubectl plugin (`kubectl ksched explain ...`); kubectl
    finds it on PATH and passes it the words after `ksched`."""
    from ..render.progress import install

    install()
    guard_stderr()  # names and messages quoted on stderr never act on the terminal
    app = build_app(_invoked(sys.argv[1:]))
    exit_after(lambda: app(prog_name="kubectl ksched"))
