"""The `ksched` command line: the Typer app, its global options, and its commands in `ksched --help`
order (explain.py, schedule.py, whatif.py, meta.py and cache.py hold them). Every command is a thin
layer over the public API (kschedcli.session): it turns its options into a Session, asks it one
question and prints the answer.

Exit status: 0 when every pod is schedulable, 1 when one is not (a pod that needs preemption counts as
not schedulable unless --allow-preemption), 2 for bad input or usage (one line on stderr, no traceback).
"""

from __future__ import annotations

from typing import Any

import typer

from .. import KUBE_SCHEDULER_VERSION, __version__
from . import autoscaler, explain, meta, schedule, sweep, whatif
from .cache import cache_app
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


app = typer.Typer(
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


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ksched {__version__} (follows kube-scheduler {KUBE_SCHEDULER_VERSION})")
        raise typer.Exit(0)


@app.callback()
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


for command in (
    explain.explain,
    schedule.schedule,
    whatif.capacity,
    explain.preempt,
    whatif.drain,
    whatif.diff,
    sweep.sweep,
    autoscaler.scale_up,
    autoscaler.scale_down,
):
    app.command(cls=EditOrderCommand)(with_edit_flags(command))
app.command()(schedule.run)
app.command()(meta.schema)
app.command()(meta.completion)
app.command()(meta.version)
app.add_typer(cache_app)


def main() -> None:
    from ..render.progress import install

    install()  # progress on stderr for loads and sequences over a second, on a terminal only
    guard_stdout()  # `ksched ... | head` exits as its result says, not 1 or 120
    exit_after(lambda: app(prog_name="ksched"))


def kubectl_main() -> None:
    """`kubectl-ksched`: the same commands as a kubectl plugin (`kubectl ksched explain ...`); kubectl
    finds it on PATH and passes it the words after `ksched`."""
    from ..render.progress import install

    install()
    guard_stderr()  # names and messages quoted on stderr never act on the terminal
    exit_after(lambda: app(prog_name="kubectl ksched"))
