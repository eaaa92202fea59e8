"""The what-if commands over a changed cluster: `capacity`, `drain` and `diff`."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import typer

from .common import check_report, dump, finish, open_session, print_release, show_edits, write_report
from .completion import complete_node
from .options import (
    AllowPreemptionOpt,
    AsBoundOpt,
    Output,
    OutputOpt,
    ReadFlags,
    ReportOpt,
    SamplingFlags,
    SeedOpt,
    WorldFlags,
    sampled_world_flags,
)

if TYPE_CHECKING:
    from ..session import Edit


@sampled_world_flags
def capacity(
    files: list[str] = typer.Argument(
        ...,
        metavar="FILE...",
        help="Templates: Pods and workloads (Deployment, StatefulSet, Job, ...), taken in turn ('-' for stdin).",
    ),
    world: WorldFlags = WorldFlags(),
    max_copies: int | None = typer.Option(
        None, "--max", metavar="N", min=0, help="Stop each template after N copies fit."
    ),
    min_copies: int | None = typer.Option(
        None, "--min", metavar="N", min=0, help="Exit 1 when fewer than N copies fit in total (a CI gate)."
    ),
    group_by: list[str] | None = typer.Option(
        None,
        "--group-by",
        metavar="LABEL",
        help="Count copies per value of this node label (repeatable; "
        "default: the zone and node-pool labels the nodes carry).",
    ),
    output: Output = OutputOpt,
    top: int = typer.Option(10, "--top", metavar="N", min=0, help="Rows of the per-node table (0: all)."),
    seed: int | None = SeedOpt,
    report: str | None = ReportOpt,
    sampling: SamplingFlags = SamplingFlags(),
    reading: ReadFlags = ReadFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """How many more copies of each template fit: copies scheduled one after another, each bound
    before the next, until one fits nowhere (or --max). Preemption is off: copies evict nothing.

    Exit status: 0, or 1 with --min N when fewer than N copies fit; 2 bad input or usage.
    """
    check_report(report)
    session = open_session(world, reading, edits=edits or ())
    stops: list = []

    def on_stop(template, r, w) -> None:
        if output == Output.table:
            from ..render.terminal.capacity import stop_explanation

            stops.append(stop_explanation(template.label, r, w, no_color=reading.no_color))

    ask = functools.partial(session.capacity, max_copies=max_copies, group_by=group_by, seed=seed)
    c = ask(list(files), on_stop=on_stop, **sampling._asdict())
    doc = c.to_dict()
    if output == Output.table:
        from ..render.terminal import make_console
        from ..render.terminal.capacity import render_capacity

        show_edits(c.world, reading.no_color)
        render_capacity(doc, stops, top=top, no_color=reading.no_color)
        print_release(make_console(reading.no_color), c.world)
    else:
        dump(doc, output, "capacity")
    write_report(report, "capacity", doc, c)
    finish(c.exit_code(min_copies))


@sampled_world_flags
def drain(
    nodes: list[str] = typer.Argument(
        ...,
        metavar="NODE|SELECTOR...",
        autocompletion=complete_node,
        help="Nodes to drain: names, or label selectors (kubectl -l syntax).",
    ),
    world: WorldFlags = WorldFlags(),
    output: Output = OutputOpt,
    delete_emptydir_data: bool = typer.Option(
        False, "--delete-emptydir-data", help="Evict pods with emptyDir volumes too (as kubectl drain)."
    ),
    force: bool = typer.Option(False, "--force", help="Delete pods without a controller too (as kubectl drain)."),
    seed: int | None = SeedOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    sampling: SamplingFlags = SamplingFlags(),
    reading: ReadFlags = ReadFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """Can these nodes be drained? Cordon them, evict what kubectl drain would (PodDisruptionBudgets
    honoured as the eviction API does), and reschedule the evicted pods, highest priority first.

    Exit status: 0 every node can be drained and every evicted pod finds a node (one that needs
    preemption counts as not, unless --allow-preemption), 1 not, 2 bad input or usage.
    """
    session = open_session(world, reading, edits=edits or ())
    d = session.drain(
        list(nodes),
        delete_emptydir_data=delete_emptydir_data,
        force=force,
        seed=seed,
        allow_preemption=allow_preemption,
        **sampling._asdict(),
    )
    if output == Output.table:
        from ..render.terminal import make_console
        from ..render.terminal.drain import render_drain
        from ..render.terminal.edits import render_edits

        console = make_console(reading.no_color)
        render_edits(d.edits, console)
        render_drain(d.report, console, allow_preemption)
        print_release(console, d.cluster)
    else:
        dump(d.to_dict(), output, "drain")
    finish(d.exit_code())


@sampled_world_flags
def diff(
    pods: str | None = typer.Argument(
        None, metavar="PODS", help="File of pods to schedule ('-' for stdin); default: the snapshot's pending pods."
    ),
    world: WorldFlags = WorldFlags(),
    against_config: str | None = typer.Option(
        None, "--against-config", metavar="FILE", help="World B's KubeSchedulerConfiguration."
    ),
    against_cluster: list[str] | None = typer.Option(
        None, "--against-cluster", metavar="SNAPSHOT", help="World B's snapshot (repeatable)."
    ),
    all_pods: bool = typer.Option(
        False,
        "--all",
        help="Every bound pod, taken off its node and placed again from an empty cluster, in priority order.",
    ),
    as_bound: bool = AsBoundOpt,
    output: Output = OutputOpt,
    seed: int | None = SeedOpt,
    report: str | None = ReportOpt,
    sampling: SamplingFlags = SamplingFlags(),
    reading: ReadFlags = ReadFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """The same pods in two worlds: A (--cluster or the live cluster, --config) and B (--against-config,
    --against-cluster and/or the cluster edits, applied to B only). Reports the pods whose verdict
    or node changes, and aggregates: nodes used, utilisation spread, pods needing preemption.

    Exit status: 0 every pod gets the same verdict and node, 1 some pod differs, 2 bad input or usage.
    """
    check_report(report)
    session = open_session(world, reading, edits=edits or ())
    ask = functools.partial(session.diff, against_config=against_config, against_cluster=against_cluster)
    d = ask(pods, all_pods=all_pods, seed=seed, as_bound=as_bound, **sampling._asdict())
    if output == Output.table:
        from ..render.terminal import make_console
        from ..render.terminal.diff import render_diff
        from ..render.terminal.edits import render_edits

        console = make_console(reading.no_color)
        render_edits(d.edits, console)
        render_diff(d.report, console)
        print_release(console, d.cluster)
    else:
        dump(d.to_dict(), output, "diff")
    if report is not None:
        write_report(report, "diff", d.to_dict(), d)
    finish(d.exit_code())
