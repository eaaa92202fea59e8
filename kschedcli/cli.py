"""The `ksched` command line."""
from __future__ import annotations

import json
import os
import sys
from enum import Enum
from typing import List, Optional

import typer

from . import KUBE_SCHEDULER_VERSION, __version__
from .errors import InputError

app = typer.Typer(
    name="ksched",
    help="What would kube-scheduler do? Offline placement explanations for Kubernetes "
         f"(follows kube-scheduler {KUBE_SCHEDULER_VERSION}).",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


class Output(str, Enum):
    table = "table"
    json = "json"
    yaml = "yaml"


class Order(str, Enum):
    priority = "priority"
    file = "file"


def _fail(err: InputError) -> None:
    typer.echo(f"ksched: {err}", err=True)
    raise typer.Exit(2)


def _dump(doc: dict, output: Output) -> None:
    if output == Output.yaml:
        import yaml
        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=1000))
    else:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")


ClusterOpt = typer.Option(..., "--cluster", "-c", help="Cluster snapshot (YAML, JSON or a List; '-' for stdin). Repeatable.")
ConfigOpt = typer.Option(None, "--config", help="KubeSchedulerConfiguration file (default: kube-scheduler's defaults).")
OutputOpt = typer.Option(Output.table, "--output", "-o", help="Output format.")
SeedOpt = typer.Option(None, "--seed", help="Pick among tied top nodes as kube-scheduler's reservoir sampling would, with this seed (default: first by name).")
ColorOpt = typer.Option(False, "--no-color", help="No colour (also when NO_COLOR is set).")


def _exit_code(results, allow_preemption: bool) -> int:
    for r in results:
        if r.error:
            return 2 if not r.schedulable and r.error.startswith("no profile") else 1
        if not r.schedulable:
            if allow_preemption and r.preemption is not None and r.preemption.nominated_node:
                continue
            return 1
    return 0


@app.command()
def explain(
    pod: str = typer.Argument(..., help="File holding the pending pod ('-' for stdin)."),
    cluster: List[str] = ClusterOpt,
    config: Optional[str] = ConfigOpt,
    output: Output = OutputOpt,
    node: Optional[str] = typer.Option(None, "--node", help="Drill into one node."),
    all_nodes: bool = typer.Option(False, "--all-nodes", help="List every node instead of grouping them."),
    top: int = typer.Option(10, "--top", help="Rows of the score table."),
    raw: bool = typer.Option(False, "--raw", help="Show raw and normalized scores too."),
    seed: Optional[int] = SeedOpt,
    allow_preemption: bool = typer.Option(False, "--allow-preemption", help="Exit 0 when preemption would make room."),
    no_color: bool = ColorOpt,
) -> None:
    """Explain, node by node and plugin by plugin, what kube-scheduler would do with one pod."""
    from .engine import open_session
    from .cluster import load_pending_pods
    try:
        session = open_session(cluster, config)
        pods = load_pending_pods(pod, session.cluster)
        if len(pods) != 1:
            raise InputError(f"expected one Pod, found {len(pods)} (use `ksched schedule` for several)", source=pod)
        if node is not None and session.scheduler.snapshot.get(node) is None:
            raise InputError(f"no node named {node!r} in the snapshot", field="--node")
    except InputError as e:
        _fail(e)
    result = session.scheduler.schedule(pods[0], seed)
    if output == Output.table:
        from .render.terminal import render_explain
        render_explain(result, session, node=node, all_nodes=all_nodes, top=top, raw=raw, no_color=no_color)
    else:
        from .render.document import result_doc
        _dump(result_doc(result), output)
    raise typer.Exit(_exit_code([result], allow_preemption))


@app.command()
def schedule(
    pods: str = typer.Argument(..., help="File holding the pending pods, scheduled one after another."),
    cluster: List[str] = ClusterOpt,
    config: Optional[str] = ConfigOpt,
    order: Order = typer.Option(Order.priority, "--order", help="priority: as PrioritySort orders the queue; file: file order."),
    output: Output = OutputOpt,
    seed: Optional[int] = SeedOpt,
    allow_preemption: bool = typer.Option(False, "--allow-preemption", help="Exit 0 when preemption would make room."),
    no_color: bool = ColorOpt,
) -> None:
    """Schedule several pods in turn, binding each to its node before the next."""
    from .engine import open_session, schedule_file
    try:
        session = open_session(cluster, config)
        results = schedule_file(session, pods, order.value, seed)
    except InputError as e:
        _fail(e)
    if output == Output.table:
        from .render.terminal import render_schedule
        render_schedule(results, session, no_color=no_color)
    else:
        from .render.document import run_doc
        _dump(run_doc(results), output)
    raise typer.Exit(_exit_code(results, allow_preemption))


@app.command()
def preempt(
    pod: str = typer.Argument(..., help="File holding the pending pod."),
    cluster: List[str] = ClusterOpt,
    config: Optional[str] = ConfigOpt,
    output: Output = OutputOpt,
    no_color: bool = ColorOpt,
) -> None:
    """What would preemption evict for this pod, and why that node?"""
    from .engine import open_session
    from .cluster import load_pending_pods
    try:
        session = open_session(cluster, config)
        pods = load_pending_pods(pod, session.cluster)
        if len(pods) != 1:
            raise InputError(f"expected one Pod, found {len(pods)}", source=pod)
    except InputError as e:
        _fail(e)
    result = session.scheduler.schedule(pods[0])
    if output == Output.table:
        from .render.terminal import render_preempt
        render_preempt(result, session, no_color=no_color)
    else:
        from .render.document import result_doc
        _dump(result_doc(result), output)
    if result.schedulable:
        raise typer.Exit(0)
    raise typer.Exit(0 if result.preemption and result.preemption.nominated_node else 1)


@app.command()
def version() -> None:
    """Print ksched's version and the kube-scheduler version it follows."""
    typer.echo(f"ksched {__version__} (follows kube-scheduler {KUBE_SCHEDULER_VERSION})")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
