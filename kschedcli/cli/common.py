"""Where the commands meet the library: the Session their option groups describe, and what they
print (documents, the release footer, the edits applied) and how they exit."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import typer

try:  # typer 0.2x vendors click
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - an older typer over click
    from click import get_current_context  # type: ignore[no-redef,import-not-found,unused-ignore]

from .options import Output, ReadFlags, WorldFlags

if TYPE_CHECKING:
    from ..session import Edit, Session


class GlobalFlags(NamedTuple):
    """The options given before the command (`ksched -v --no-cache explain ...`)."""

    verbose: bool = False
    no_cache: bool = False


def _say(line: str) -> None:
    typer.echo(line, err=True)


def open_session(
    world: WorldFlags,
    reading: ReadFlags,
    *,
    edits: Sequence[Edit] = (),
    profile: str | None = None,
    cluster: Sequence[str] | None = None,
) -> Session:
    """The session over the command's cluster and options (`cluster`: files in place of --cluster's)."""
    from ..session import ClusterSource, Options, Session

    ctx = get_current_context(silent=True)
    flags = (ctx.find_root().obj if ctx is not None else None) or GlobalFlags()
    if world.save_snapshot is not None and not (world.cluster if cluster is None else cluster):
        from ..inputs.sources import check_output_file

        # before kubectl runs: none of the command's own inputs (the kubeconfig the read itself
        # uses is checked where it is read, inputs/live.py; with --cluster it is refused anyway)
        check_output_file(world.save_snapshot, _given_values(but="save_snapshot"), "--save-snapshot", "the snapshot")
    source = ClusterSource(
        tuple(world.cluster if cluster is None else cluster),
        world.context,
        world.kubeconfig,
        world.save_snapshot,
        world.request_timeout,
    )
    options = Options(
        config=world.config,
        profile=profile,
        kubernetes_version=world.kubernetes_version,
        edits=tuple(edits),
        no_extenders=world.no_extenders,
        validate=reading.validate,
        cache=not flags.no_cache,
        verbose=flags.verbose or reading.verbose,
    )
    return Session(source, options=options, messages=_say)


def dump(doc: dict, output: Output | str, kind: str) -> None:
    """A document of command `kind` as -o json, -o yaml or -o markdown prints it."""
    if output == Output.markdown:
        from ..render.markdown import markdown_text

        sys.stdout.write(markdown_text(kind, doc))
    elif output == Output.yaml:
        from ..render.yamltext import yaml_text

        sys.stdout.write(yaml_text(doc))
    else:
        from ..render.jsontext import json_text

        sys.stdout.write(json_text(doc) + "\n")


def _given_values(but: str) -> list[str]:
    """Every string the command was given (its arguments and options' values, as parsed), but
    parameter `but`'s."""
    ctx = get_current_context(silent=True)
    out: list[str] = []
    for name, v in ctx.params.items() if ctx is not None else ():
        if name == but:
            continue
        for item in v if isinstance(v, (list, tuple)) else (v,):
            if isinstance(item, str):
                out.append(item)
    return out


def check_report(report: str | None) -> None:
    """--report, before the question is asked: its charting extra importable, and its path one the
    report can replace that is none of the command's inputs (else one line, exit 2)."""
    if report is not None:
        from ..render.html import check_target, require

        require()
        check_target(report, _given_values(but="report"))


def write_report(report: str | None, kind: str, doc: dict, answer: Any) -> None:
    """--report FILE.html: the answer's document and its utilization (answer.utilization()) as a page."""
    if report is not None:
        from ..render.html import write_report as write

        write(report, kind, doc, answer.utilization())


def finish(code: int) -> NoReturn:
    raise typer.Exit(code)


def print_release(console: Any, cluster: Any) -> None:
    """The release followed and why, last, as the other views end (render/terminal/header.py)."""
    from ..render.terminal.header import version_block
    from ..render.terminal.layout import hang

    for line in version_block(cluster):
        console.print()
        console.print(hang(line))


def show_edits(world: Any, no_color: bool) -> None:
    if world.edits:
        from ..render.terminal import make_console
        from ..render.terminal.edits import render_edits

        render_edits(world.edits, make_console(no_color))
