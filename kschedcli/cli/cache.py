"""`ksched cache`: the cache of parsed snapshots (kschedcli/inputs/cache.py): where it is, what
it holds, and emptying it. cli.py registers the group."""

from __future__ import annotations

import os

import typer

cache_app = typer.Typer(
    name="cache",
    help="The cache of parsed snapshots: a command reading the same --cluster files again skips parsing "
    "them (KSCHED_CACHE_DIR, else $XDG_CACHE_HOME/ksched or ~/.cache/ksched; KSCHED_NO_CACHE=1 or "
    "--no-cache: not used).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MB"


@cache_app.command("info")
def info() -> None:
    """Where the cache is, its entries and their size, and its bound (KSCHED_CACHE_MAX_MB)."""
    from ..session import cache_info

    where, enabled, n, total, bound = cache_info()
    state = "" if enabled else " (off: KSCHED_NO_CACHE)"
    if os.path.lexists(where) and not os.path.isdir(where):  # KSCHED_CACHE_DIR naming a file, a FIFO, a loop
        state += " (not a directory: nothing is cached there)"
    typer.echo(f"{where}{state}: {n} snapshot(s), {_mb(total)} of at most {_mb(bound)}")


@cache_app.command("clear")
def clear() -> None:
    """Remove every cached snapshot."""
    from ..session import clear_cache

    where, n, freed = clear_cache()
    typer.echo(f"removed {n} snapshot(s), {_mb(freed)}, from {where}")
