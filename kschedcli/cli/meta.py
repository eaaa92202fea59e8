"""`ksched schema`, `ksched completion` and `ksched version`: what ksched says of itself."""

from __future__ import annotations

import sys
from enum import StrEnum

import typer

from .. import KUBE_SCHEDULER_VERSION, __version__


def schema(
    scenario: bool = typer.Option(False, "--scenario", help="The Scenario file's schema (`ksched run`) instead."),
) -> None:
    """Print the JSON Schema of `-o json` (explain and preempt: one result; schedule: {results: [...]};
    drain; diff), or with --scenario of scenario files."""
    from ..session import schema_text

    sys.stdout.write(schema_text("scenario" if scenario else "result"))


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def completion_script(shell: str) -> str:
    """The script that hooks `ksched` into the shell's completion (what completions/ holds)."""
    from typer.completion import completion_init, get_completion_script

    completion_init()
    return get_completion_script(prog_name="ksched", complete_var="_KSCHED_COMPLETE", shell=shell).rstrip("\n") + "\n"


def completion(shell: Shell = typer.Argument(..., metavar="SHELL", help="bash, zsh or fish.")) -> None:
    """Print the shell completion script (or run `ksched --install-completion`). --node, --profile and pod
    names complete from the snapshot and config named earlier on the command line."""
    sys.stdout.write(completion_script(shell.value))


def version() -> None:
    """Print ksched's version and the kube-scheduler version it follows."""
    typer.echo(f"ksched {__version__} (follows kube-scheduler {KUBE_SCHEDULER_VERSION})")
