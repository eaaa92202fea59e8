"""`ksched explain` and `ksched preempt`: one pod, node by node and plugin by plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from .common import check_report, dump, finish, open_session, show_edits, write_report
from .completion import complete_node
from .options import (
    AllowPreemptionOpt,
    Output,
    OutputOpt,
    PreemptionSamplingOpt,
    ReadFlags,
    ReportOpt,
    SeedOpt,
    WorldFlags,
    pod_flags,
    pods_exit_status,
    read_flags,
    world_flags,
)

if TYPE_CHECKING:
    from ..session import Edit, Explanation
    from .options import PodChoice


def _ask(pod: PodChoice, world: WorldFlags, reading: ReadFlags, edits: list[Edit] | None, **how: Any) -> Explanation:
    """The Session's explanation of the one pod the command names (`how`: Session.explain's options)."""
    session = open_session(world, reading, edits=edits or (), profile=pod.profile)
    return session.explain(
        pod.ref.text, is_file=pod.ref.is_file, replicas=pod.replicas, replica=pod.replica, as_bound=pod.as_bound, **how
    )


POD_HELP = (
    "The pending pod: a file ('-' for stdin) with a Pod or a workload "
    "(Deployment, StatefulSet, DaemonSet, Job, ...), or NAMESPACE/NAME of a "
    "pending pod in the snapshot."
)
PREEMPT_POD_HELP = (
    "The pending pod: a file ('-' for stdin) with a Pod or a workload, or "
    "NAMESPACE/NAME of a pending pod in the snapshot."
)


def one_pod(help_text: str):
    """The option groups of a command about one pod: the pod, the cluster and how to read it."""

    def decorate(fn):
        return pod_flags(help_text)(world_flags()(read_flags(pods_exit_status(fn))))

    return decorate


@one_pod(POD_HELP)
def explain(
    pod: PodChoice = None,  # type: ignore[assignment]  # pod_flags's
    world: WorldFlags = WorldFlags(),
    output: Output = OutputOpt,
    node: str | None = typer.Option(
        None,
        "--node",
        metavar="NAME",
        autocompletion=complete_node,
        help="Drill into one node: every plugin's verdict, its resources, scores.",
    ),
    all_nodes: bool = typer.Option(False, "--all-nodes", help="List every node instead of grouping alike ones."),
    top: int = typer.Option(10, "--top", metavar="N", min=0, help="Rows of the score table (0: all)."),
    raw: bool = typer.Option(False, "--raw", help="Score table with raw and normalized scores and weights."),
    fixes: int = typer.Option(
        3,
        "--fixes",
        metavar="N",
        min=0,
        help="For a pod that does not fit (or only by preemption): the N best changes to the pod or the "
        "cluster that would place it, each verified by a cycle (0: none).",
    ),
    seed: int | None = SeedOpt,
    preemption_sampling: bool = PreemptionSamplingOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    report: str | None = ReportOpt,
    reading: ReadFlags = ReadFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """Explain, node by node and plugin by plugin, what kube-scheduler would do with one pod."""
    check_report(report)
    # the fixes are not shown with --node's table
    wanted = fixes if not (node is not None and output == Output.table) else 0
    e = _ask(pod, world, reading, edits, node=node, seed=seed, fixes=wanted, preemption_sampling=preemption_sampling)
    if output == Output.table:
        from ..render.terminal import render_explain

        show_edits(e.world, reading.no_color)
        render_explain(e.result, e.world, node=node, all_nodes=all_nodes, top=top, raw=raw, no_color=reading.no_color)
    else:
        dump(e.to_dict(), output, "explain")
    if report is not None:
        write_report(report, "explain", e.to_dict(), e)
    finish(e.exit_code(allow_preemption))


@one_pod(PREEMPT_POD_HELP)
def preempt(
    pod: PodChoice = None,  # type: ignore[assignment]  # pod_flags's
    world: WorldFlags = WorldFlags(),
    output: Output = OutputOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    reading: ReadFlags = ReadFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """What would preemption evict for this pod, on which node, and why that node and not the others?"""
    e = _ask(pod, world, reading, edits, fixes=0)
    if output == Output.table:
        from ..render.terminal import render_preempt

        show_edits(e.world, reading.no_color)
        render_preempt(e.result, e.world, no_color=reading.no_color)
    else:
        dump(e.to_dict(), output, "preempt")
    finish(e.exit_code(allow_preemption))
