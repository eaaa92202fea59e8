"""cluster-autoscaler's scale-up, simulated: `scale-up`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from .common import check_report, dump, finish, open_session, print_release, show_edits, write_report
from .options import Output, OutputOpt, ReadFlags, ReportOpt, WorldFlags, read_flags, world_flags

if TYPE_CHECKING:
    from ..session import Edit, ScaleDown, ScaleUp

NodeGroupsOpt = typer.Option(
    None,
    "--node-groups",
    metavar="FILE",
    help="The node groups (docs/autoscaler.md); default: inferred from the nodes' node-pool labels, "
    "else instance type and zone.",
)


def _show(answer: ScaleUp | ScaleDown, output: Output, reading: ReadFlags, report: str | None = None) -> None:
    """The answer as a table (its view in render/terminal/autoscaler.py) or a document, then its exit
    status; `report`: scale-up's --report FILE.html."""
    doc = answer.to_dict()
    if output == Output.table:
        from ..render.terminal import make_console
        from ..render.terminal.autoscaler import render_scale_down, render_scale_up

        show_edits(answer.world, reading.no_color)
        console = make_console(reading.no_color)
        render = render_scale_down if "removable" in doc else render_scale_up
        render(doc, console)
        print_release(console, answer.world)
    else:
        dump(doc, output, "scale-down" if "removable" in doc else "scale-up")
    write_report(report, "scale-up", doc, answer)
    finish(answer.exit_code())


ExpanderOpt = typer.Option(
    None,
    "--expander",
    metavar="NAME[,NAME...]",
    help="Expanders to report: least-waste, most-pods, least-nodes, price, priority, random "
    "(default: all); several in one value are also chained, as cluster-autoscaler chains them.",
)


@world_flags()
@read_flags
def scale_up(
    pods: str | None = typer.Argument(
        None,
        metavar="PODS",
        help="Pods and workloads waiting for nodes ('-' for stdin); default: the snapshot's pending pods.",
    ),
    world: WorldFlags = WorldFlags(),
    node_groups: str | None = NodeGroupsOpt,
    expander: list[str] | None = ExpanderOpt,
    output: Output = OutputOpt,
    report: str | None = ReportOpt,
    reading: ReadFlags = ReadFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """How many nodes of which node group cluster-autoscaler (v1.34) would add for these pods: the
    pods that fit existing nodes placed first, then per node group its binpacking estimate through
    the scheduler's filter plugins, and the group each expander would choose.

    Exit status: 0 every pod placed (on an existing node or a new one), 1 otherwise, 2 bad input.
    """
    check_report(report)
    names = [n.strip() for v in expander or () for n in v.split(",") if n.strip()]
    if expander and not names:  # `--expander ''` (an unset variable) is not "every expander"
        from ..errors import InputError

        raise InputError("expected NAME[,NAME...], not an empty value", field="--expander")
    session = open_session(world, reading, edits=edits or ())
    _show(session.scale_up(pods, node_groups=node_groups, expanders=names or None), output, reading, report)


@world_flags()
@read_flags
def scale_down(
    world: WorldFlags = WorldFlags(),
    node_groups: str | None = NodeGroupsOpt,
    threshold: float | None = typer.Option(
        None,
        "--utilization-threshold",
        metavar="RATIO",
        help="A node is a candidate at or below this utilization (0-1; default 0.5, cluster-autoscaler's).",
    ),
    output: Output = OutputOpt,
    reading: ReadFlags = ReadFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """Which nodes cluster-autoscaler (v1.34) would find unneeded: utilization at or below the
    threshold, every pod movable (PodDisruptionBudgets, kube-system, local storage, no controller)
    and placed on another node, nodes taken one after another, node groups' minimum sizes kept.

    Exit status: 0 no node can be removed, 1 some can, 2 bad input.
    """
    session = open_session(world, reading, edits=edits or ())
    _show(session.scale_down(node_groups=node_groups, threshold=threshold), output, reading)
