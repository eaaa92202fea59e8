"""`ksched schedule` and `ksched run`: pods in turn, each bound before the next."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from .common import dump, finish, open_session, show_edits
from .options import (
    AllowPreemptionOpt,
    AsBoundOpt,
    Detail,
    DetailOpt,
    Order,
    Output,
    OutputOpt,
    PreemptionMode,
    PreemptionSamplingOpt,
    ReadFlags,
    ReplicasOpt,
    SamplingFlags,
    ScheduleOutput,
    SeedOpt,
    WorldFlags,
    pods_exit_status,
    read_flags,
    sampled_world_flags,
    world_flags,
)

if TYPE_CHECKING:
    from ..session import Edit, ScheduleRun, Session


@sampled_world_flags
@pods_exit_status
def schedule(
    pods: str | None = typer.Argument(
        None,
        metavar="PODS",
        help="File of pending pods and workloads (Deployment, StatefulSet, "
        "DaemonSet, Job, CronJob, ...; '-' for stdin); default: every "
        "pending pod in the snapshot.",
    ),
    filename: str | None = typer.Option(
        None, "--filename", "-f", metavar="FILE", help="The file of pending pods ('-' for stdin), as PODS."
    ),
    namespace: str | None = typer.Option(
        None, "--namespace", "-n", metavar="NS", help="The pending pods of this namespace only."
    ),
    all_namespaces: bool = typer.Option(
        False, "--all-namespaces", "-A", help="The pending pods of every namespace (the default)."
    ),
    world: WorldFlags = WorldFlags(),
    order: Order = typer.Option(
        Order.priority, "--order", help="priority: as PrioritySort orders the queue; file: file order."
    ),
    output: ScheduleOutput = typer.Option(
        ScheduleOutput.table,
        "--output",
        "-o",
        help="table: a row per pod; wide: also score, feasible nodes, nominated node, victims; name: the pods "
        "that are not schedulable, namespace/name a line; json / yaml: a document per pod (--detail); markdown: "
        "a summary and <details> for a pull-request comment or $GITHUB_STEP_SUMMARY (docs/reports.md).",
    ),
    no_headers: bool = typer.Option(False, "--no-headers", help="table / wide: the rows only."),
    detail: Detail = DetailOpt,
    replicas: int | None = ReplicasOpt,
    as_bound: bool = AsBoundOpt,
    seed: int | None = SeedOpt,
    preemption_sampling: bool = PreemptionSamplingOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    preemption: PreemptionMode = typer.Option(
        PreemptionMode.report,
        "--preemption",
        help="report: victims reported, the cluster left as it was; carry-out: victims deleted, the preemptor "
        "nominated (it counts on that node for the pods after it) and retried after the other pods.",
    ),
    sampling: SamplingFlags = SamplingFlags(),
    reading: ReadFlags = ReadFlags(),
    edits: list[Edit] | None = None,
) -> None:
    """Schedule several pods in turn, binding each to its node before the next. Workloads become the
    pods their controllers would create; the summary groups them by workload.
    """
    from ..session import pods_source

    path, pods_namespace = pods_source(pods, filename, namespace, all_namespaces)
    session = open_session(world, reading, edits=edits or ())
    show_run(
        session,
        lambda **kw: session.schedule(
            path,
            namespace=pods_namespace,
            order=order.value,
            replicas=replicas,
            seed=seed,
            preemption_sampling=preemption_sampling,
            as_bound=as_bound,
            **sampling._asdict(),
            **kw,
        ),
        output,
        allow_preemption,
        reading.no_color,
        no_headers,
        preemption,
        detail,
    )


@read_flags
@world_flags(
    cluster_help="Cluster snapshot in place of the scenario's `cluster` (repeatable). Default: the scenario's; "
    "without one, or with --context / --kubeconfig, the live cluster kubectl points at.",
    config=False,
)
@pods_exit_status
def run(
    scenario: str = typer.Argument(..., metavar="SCENARIO", help="A Scenario file (`ksched schema --scenario`)."),
    world: WorldFlags = WorldFlags(),
    output: Output = OutputOpt,
    detail: Detail = DetailOpt,
    seed: int | None = SeedOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    reading: ReadFlags = ReadFlags(),
) -> None:
    """Run a scenario file: its snapshot and config, its cluster edits in order, then its pods (or
    the snapshot's pending pods) scheduled in turn, as `ksched schedule` with the same flags would.
    """
    session = open_session(world, reading)
    show_run(
        session,
        lambda **kw: session.run_scenario(scenario, seed=seed, **kw),
        ScheduleOutput(output.value),
        allow_preemption,
        reading.no_color,
        False,
        PreemptionMode.report,
        detail,
    )


def show_run(
    session: Session,
    ask,
    output: ScheduleOutput,
    allow_preemption: bool,
    no_color: bool,
    no_headers: bool = False,
    preemption: PreemptionMode = PreemptionMode.report,
    detail: Detail = Detail.compact,
) -> None:
    """Run the question `ask(**how)` (Session.schedule or run_scenario) for the output asked and print
    it; exits."""
    from ..session import analysis_parts

    if preemption == PreemptionMode.carry_out:
        as_document = output in (ScheduleOutput.json, ScheduleOutput.yaml, ScheduleOutput.markdown)
        compact = as_document and detail == Detail.compact
        run = ask(preemption="carry-out", detail=detail.value, analysis=None if compact else analysis_parts("all"))
        if not as_document:
            from ..render.terminal import render_carried_out

            show_edits(run.world, no_color)
            render_carried_out(run.carried_out, run.world, no_color=no_color)
        else:
            dump(run.to_dict(), Output(output.value), "schedule")
        finish(run.exit_code(allow_preemption))
    if output == ScheduleOutput.json:
        run = _stream_json(ask, detail)
        finish(run.exit_code(allow_preemption))
    if output in (ScheduleOutput.yaml, ScheduleOutput.markdown):
        run = ask(detail=detail.value)
        dump(run.to_dict(), Output(output.value), "schedule")
        finish(run.exit_code(allow_preemption))
    parts = analysis_parts("none" if output == ScheduleOutput.name else "first-failures")
    run = ask(detail="compact", analysis=parts)
    if output == ScheduleOutput.name:
        from ..render.terminal import unschedulable_names

        sys.stdout.write(unschedulable_names(run.results, allow_preemption=allow_preemption))
    else:
        from ..render.terminal import render_schedule

        if not no_headers:  # --no-headers: the rows alone
            show_edits(run.world, no_color)
        render_schedule(
            run.results, run.world, no_color=no_color, wide=output == ScheduleOutput.wide, headers=not no_headers
        )
        summary = run.workloads()
        if summary and not no_headers:
            from ..render.terminal.workloads import render_workloads

            render_workloads(summary, no_color=no_color)
    finish(run.exit_code(allow_preemption))


# the parts of a result document render/document.py builds from ints and strings only
_FLOAT_FREE = ("filters", "scores")


def _stream_json(ask, detail: Detail) -> ScheduleRun:
    """`schedule -o json`, written result by result: the same bytes as dumping the whole document,
    without holding every node's verdict of every cycle (gigabytes on a 5,000-node sequence)."""
    from ..render.document import compact_result_doc, result_doc, run_doc
    from ..render.jsontext import indented, json_text

    full = detail == Detail.full
    make = result_doc if full else compact_result_doc
    out = sys.stdout
    written = [0]
    head_done = [False]

    def emit(r) -> None:
        out.write(("\n" if not written[0] else ",\n") + indented(json_text(make(r), float_free=_FLOAT_FREE), "    "))
        written[0] += 1

    def head(world) -> None:
        text = json_text(run_doc([], world.edits, world.version, detail.value))
        assert text.endswith('"results": []\n}')
        out.write(text[: -len("[]\n}")] + "[")
        head_done[0] = True

    run = ask(detail=detail.value, on_start=head, on_result=emit, keep=False)
    out.write("\n  ]" if written[0] else "]")
    summary = run.workloads()
    rest = run.to_dict_tail()
    if summary is not None:
        rest["workloads"] = summary
    if not rest:
        out.write("\n}\n")
    else:
        tail = json_text(rest)
        out.write(",\n" + tail[2:])
        out.write("\n")
    return run
