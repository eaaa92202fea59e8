"""The `ksched` command line.

Exit status: 0 when every pod is schedulable, 1 when one is not (a pod that needs preemption counts as
not schedulable unless --allow-preemption), 2 for bad input or usage (one line on stderr, no traceback).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

from . import KUBE_SCHEDULER_VERSION, __version__
from .cli_common import (
    _VERBOSE,
    AllowPreemptionOpt,
    AsBoundOpt,
    ClusterOpt,
    ColorOpt,
    ConfigOpt,
    ContextOpt,
    Detail,
    DetailOpt,
    FilenameOpt,
    KubeconfigOpt,
    KubernetesVersionOpt,
    NamespaceOpt,
    NoExtendersOpt,
    Order,
    Output,
    OutputOpt,
    PreemptionMode,
    ProfileOpt,
    ReplicaOpt,
    ReplicasOpt,
    RequestTimeoutOpt,
    SaveSnapshotOpt,
    ScheduleOutput,
    SeedOpt,
    ValidateOpt,
    VerboseOpt,
    _cluster,
    _dump,
    _exit_code,
    _fail,
    _open,
    _run_and_show,
    _run_one,
    _show_edits,
    _validation,
    app,
    with_validation,
)
from .cli_errors import exit_after, guard_stderr, guard_stdout
from .completion import complete_node, complete_pod
from .editflags import EditOrderCommand, with_edit_flags
from .errors import InputError

if TYPE_CHECKING:
    from .edits import Edit

from . import cli_whatif
from .cli_cache import cache_app


@app.command(cls=EditOrderCommand)
@with_validation
@with_edit_flags
def explain(
    pod: str | None = typer.Argument(
        None,
        metavar="POD",
        autocompletion=complete_pod,
        help="The pending pod: a file ('-' for stdin) with a Pod or a workload "
        "(Deployment, StatefulSet, DaemonSet, Job, ...), or NAMESPACE/NAME of a "
        "pending pod in the snapshot.",
    ),
    filename: str | None = FilenameOpt,
    namespace: str | None = NamespaceOpt,
    cluster: list[str] | None = ClusterOpt,
    context: str | None = ContextOpt,
    kubeconfig: str | None = KubeconfigOpt,
    save_snapshot: str | None = SaveSnapshotOpt,
    request_timeout: str = RequestTimeoutOpt,
    config: str | None = ConfigOpt,
    no_extenders: bool = NoExtendersOpt,
    profile: str | None = ProfileOpt,
    output: Output = OutputOpt,
    replicas: int | None = ReplicasOpt,
    replica: int = ReplicaOpt,
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
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
    as_bound: bool = AsBoundOpt,
    edits: list[Edit] | None = None,
) -> None:
    """Explain, node by node and plugin by plugin, what kube-scheduler would do with one pod.

    Exit status: 0 schedulable, 1 not (needing preemption counts as not, unless
    --allow-preemption), 2 bad input or usage.
    """
    cluster = _cluster(cluster, verbose, context, kubeconfig, save_snapshot, request_timeout)
    session, result = _run_one(
        pod,
        cluster,
        config,
        profile,
        node,
        seed,
        edits,
        replicas,
        replica,
        filename=filename,
        namespace=namespace,
        kubernetes_version=kubernetes_version,
        validate=validate,
        as_bound=as_bound,
    )
    if fixes and not (node is not None and output == Output.table):
        from .fixes.model import needs_fixing

        if needs_fixing(result):
            from .fixes.search import find_fixes

            result.suggestions = find_fixes(
                session, result, fixes, seed=seed, before=session.before, given_kind=session.given_kind
            )
    if output == Output.table:
        from .render.terminal import render_explain

        _show_edits(session, no_color)
        render_explain(result, session, node=node, all_nodes=all_nodes, top=top, raw=raw, no_color=no_color)
    else:
        from .render.document import explain_doc

        _dump(explain_doc(result, session.edits, session.version), output)
    raise typer.Exit(_exit_code([result], allow_preemption))


@app.command(cls=EditOrderCommand)
@with_validation
@with_edit_flags
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
    cluster: list[str] | None = ClusterOpt,
    context: str | None = ContextOpt,
    kubeconfig: str | None = KubeconfigOpt,
    save_snapshot: str | None = SaveSnapshotOpt,
    request_timeout: str = RequestTimeoutOpt,
    config: str | None = ConfigOpt,
    no_extenders: bool = NoExtendersOpt,
    order: Order = typer.Option(
        Order.priority, "--order", help="priority: as PrioritySort orders the queue; file: file order."
    ),
    output: ScheduleOutput = typer.Option(
        ScheduleOutput.table,
        "--output",
        "-o",
        help="table: a row per pod; wide: also score, feasible nodes, nominated node, victims; name: the pods "
        "that are not schedulable, namespace/name a line; json / yaml: a document per pod (--detail).",
    ),
    no_headers: bool = typer.Option(False, "--no-headers", help="table / wide: the rows only."),
    detail: Detail = DetailOpt,
    replicas: int | None = ReplicasOpt,
    seed: int | None = SeedOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    preemption: PreemptionMode = typer.Option(
        PreemptionMode.report,
        "--preemption",
        help="report: victims reported, the cluster left as it was; carry-out: victims deleted, the preemptor "
        "nominated (it counts on that node for the pods after it) and retried after the other pods.",
    ),
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
    edits: list[Edit] | None = None,
) -> None:
    """Schedule several pods in turn, binding each to its node before the next. Workloads become the
    pods their controllers would create; the summary groups them by workload.

    Exit status: 0 schedulable, 1 not (needing preemption counts as not, unless
    --allow-preemption), 2 bad input or usage.
    """
    from .cliargs import in_namespace, pods_source

    expansion = None
    try:
        pods, pods_namespace = pods_source(pods, filename, namespace, all_namespaces)
    except InputError as e:
        _fail(e)
    cluster = _cluster(cluster, verbose, context, kubeconfig, save_snapshot, request_timeout)
    try:
        session = _open(cluster, config, edits, kubernetes_version, ("PODS", pods))
        if pods is None:
            found = in_namespace(session.cluster.pending_pods(), pods_namespace)
            if not found:
                where = f"namespace {pods_namespace} of the snapshot" if pods_namespace else "the snapshot"
                raise InputError(f"no PODS file given and no pending pod in {where}", field="PODS")
            pod_list = [session.cluster.parse_pod(o, p, w) for o, p, w in found]
        else:
            from .workloads import load_workloads

            expansion = load_workloads(pods, session.cluster, replicas=replicas, validation=_validation(validate))
            pod_list = expansion.pods
            if _VERBOSE["on"] and expansion.ignored:
                kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(expansion.ignored.items()))
                typer.echo(f"ksched: {pods}: ignored kinds that make no pod: {kinds}", err=True)
    except InputError as e:
        _fail(e)
    _run_and_show(
        session, pod_list, order, output, seed, allow_preemption, no_color, expansion, no_headers, preemption, detail
    )


# the what-if commands live in cli_whatif.py; registered here, between the others, in `ksched --help` order
app.command(cls=EditOrderCommand)(cli_whatif.capacity)


@app.command(cls=EditOrderCommand)
@with_validation
@with_edit_flags
def preempt(
    pod: str | None = typer.Argument(
        None,
        metavar="POD",
        autocompletion=complete_pod,
        help="The pending pod: a file ('-' for stdin) with a Pod or a workload, or "
        "NAMESPACE/NAME of a pending pod in the snapshot.",
    ),
    filename: str | None = FilenameOpt,
    namespace: str | None = NamespaceOpt,
    cluster: list[str] | None = ClusterOpt,
    context: str | None = ContextOpt,
    kubeconfig: str | None = KubeconfigOpt,
    save_snapshot: str | None = SaveSnapshotOpt,
    request_timeout: str = RequestTimeoutOpt,
    config: str | None = ConfigOpt,
    no_extenders: bool = NoExtendersOpt,
    profile: str | None = ProfileOpt,
    output: Output = OutputOpt,
    replicas: int | None = ReplicasOpt,
    replica: int = ReplicaOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
    as_bound: bool = AsBoundOpt,
    edits: list[Edit] | None = None,
) -> None:
    """What would preemption evict for this pod, on which node, and why that node and not the others?

    Exit status: 0 schedulable, 1 not (needing preemption counts as not, unless
    --allow-preemption), 2 bad input or usage.
    """
    cluster = _cluster(cluster, verbose, context, kubeconfig, save_snapshot, request_timeout)
    session, result = _run_one(
        pod,
        cluster,
        config,
        profile,
        None,
        None,
        edits,
        replicas,
        replica,
        filename=filename,
        namespace=namespace,
        kubernetes_version=kubernetes_version,
        validate=validate,
        as_bound=as_bound,
    )
    if output == Output.table:
        from .render.terminal import render_preempt

        _show_edits(session, no_color)
        render_preempt(result, session, no_color=no_color)
    else:
        from .render.document import explain_doc

        _dump(explain_doc(result, session.edits, session.version), output)
    raise typer.Exit(_exit_code([result], allow_preemption))


app.command(cls=EditOrderCommand)(cli_whatif.drain)
app.command(cls=EditOrderCommand)(cli_whatif.diff)
app.command()(cli_whatif.run)


@app.command()
def schema(
    scenario: bool = typer.Option(False, "--scenario", help="The Scenario file's schema (`ksched run`) instead."),
) -> None:
    """Print the JSON Schema of `-o json` (explain and preempt: one result; schedule: {results: [...]};
    drain; diff), or with --scenario of scenario files."""
    if scenario:
        from .scenario import scenario_schema_text

        sys.stdout.write(scenario_schema_text())
        return
    from importlib import resources as ilres

    text = ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text(encoding="utf-8")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def completion_script(shell: str) -> str:
    """The script that hooks `ksched` into the shell's completion (what completions/ holds)."""
    from typer.completion import completion_init, get_completion_script

    completion_init()
    return get_completion_script(prog_name="ksched", complete_var="_KSCHED_COMPLETE", shell=shell).rstrip("\n") + "\n"


@app.command()
def completion(shell: Shell = typer.Argument(..., metavar="SHELL", help="bash, zsh or fish.")) -> None:
    """Print the shell completion script (or run `ksched --install-completion`). --node, --profile and pod
    names complete from the snapshot and config named earlier on the command line."""
    sys.stdout.write(completion_script(shell.value))


@app.command()
def version() -> None:
    """Print ksched's version and the kube-scheduler version it follows."""
    typer.echo(f"ksched {__version__} (follows kube-scheduler {KUBE_SCHEDULER_VERSION})")


app.add_typer(cache_app)


def main() -> None:
    from .render.progress import install

    install()  # progress on stderr for loads and sequences over a second, on a terminal only
    guard_stdout()  # `ksched ... | head` exits as its result says, not 1 or 120
    exit_after(lambda: app(prog_name="ksched"))


def kubectl_main() -> None:
    """`kubectl-ksched`: the same commands as a kubectl plugin (`kubectl ksched explain ...`); kubectl
    finds it on PATH and passes it the words after `ksched`."""
    from .render.progress import install

    install()
    guard_stderr()  # names and messages quoted on stderr never act on the terminal
    exit_after(lambda: app(prog_name="kubectl ksched"))


if __name__ == "__main__":
    main()
