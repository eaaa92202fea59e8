"""`ksched sweep`: survive any node, any zone, K random nodes, a rolling upgrade?"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from .common import check_report, dump, finish, open_session, print_release, show_edits, write_report
from .options import Output, OutputOpt, ReadFlags, ReportOpt, SamplingFlags, SeedOpt, WorldFlags, sampled_world_flags

if TYPE_CHECKING:
    from ..session import Edit


@sampled_world_flags
def sweep(
    world: WorldFlags = WorldFlags(),
    fail: str | None = typer.Option(
        None,
        "--fail",
        metavar="node|zone|nodes=K",
        help="Fail every node alone, every zone, or --samples random sets of K nodes.",
    ),
    fail_key: str | None = typer.Option(
        None, "--fail-key", metavar="LABEL", help="With --fail zone: the node label whose values are the zones."
    ),
    selector: str | None = typer.Option(
        None, "--selector", "-l", metavar="SELECTOR", help="Only the nodes this label selector matches fail."
    ),
    samples: int = typer.Option(20, "--samples", metavar="S", help="With --fail nodes=K: how many random sets."),
    rolling: str | None = typer.Option(
        None, "--rolling", metavar="SELECTOR", help="Upgrade the node pool this selector matches, batch by batch."
    ),
    max_unavailable: int = typer.Option(
        1, "--max-unavailable", metavar="N", help="With --rolling: nodes drained at a time."
    ),
    surge: str | None = typer.Option(
        None, "--surge", metavar="NODE_TEMPLATE", help="With --rolling: a node added first (an --add-node value)."
    ),
    delete_emptydir_data: bool = typer.Option(
        False,
        "--delete-emptydir-data",
        help="With --rolling: evict pods with emptyDir volumes too (as `ksched drain`, kubectl drain).",
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="With --rolling: delete pods without a controller too (as `ksched drain`, kubectl drain).",
    ),
    workers: int | None = typer.Option(
        None, "--workers", metavar="N", help="Processes of a local pool (default: the machine's cores; 1: none)."
    ),
    dask: str | None = typer.Option(
        None, "--dask", metavar="ADDRESS", help="Run the scenarios on this Dask scheduler (pip install 'ksched[dask]')."
    ),
    top: int = typer.Option(10, "--top", metavar="N", min=0, help="Scenarios and workloads listed (0: all)."),
    output: Output = OutputOpt,
    seed: int | None = SeedOpt,
    report: str | None = ReportOpt,
    reading: ReadFlags = ReadFlags(),
    sampling: SamplingFlags = SamplingFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """Does everything come back when a node, a zone or K nodes fail, or while a node pool is
    upgraded? Each scenario is applied to the one loaded cluster and undone: the failed nodes'
    pods recreated by their controllers (DaemonSet pods do not move, a pod without a controller
    is lost) and scheduled highest priority first, preemption carried out; a rolling step drains
    its nodes as `ksched drain` does (a drain kubectl refuses, or an eviction a PodDisruptionBudget
    blocks, makes the step not ok).

    Exit status: 0 every scenario keeps every pod running, 1 one does not, 2 bad input or usage.
    """
    check_report(report)
    session = open_session(world, reading, edits=edits or ())
    s = session.sweep(
        fail=fail,
        fail_key=fail_key,
        selector=selector,
        samples=samples,
        rolling=rolling,
        max_unavailable=max_unavailable,
        surge=surge,
        delete_emptydir_data=delete_emptydir_data,
        force=force,
        seed=seed,
        workers=workers,
        dask=dask,
        top=top,
        **sampling._asdict(),
    )
    doc = s.to_dict()
    if output == Output.table:
        from ..render.terminal import make_console
        from ..render.terminal.sweep import render_sweep

        show_edits(s, reading.no_color)
        console = make_console(reading.no_color)
        render_sweep(doc, console, top)
        print_release(console, s.cluster)
    else:
        dump(doc, output, "sweep")
    write_report(report, "sweep", doc, s)
    finish(s.exit_code())
