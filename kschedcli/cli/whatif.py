"""The what-if commands over a changed cluster: `capacity`, `drain`, `diff` and `run` (a scenario
file). They are plain functions here; cli.py registers them on the app, in `ksched --help` order."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from .common import (
    AllowPreemptionOpt,
    ClusterOpt,
    ColorOpt,
    ConfigOpt,
    ContextOpt,
    Detail,
    DetailOpt,
    KubeconfigOpt,
    KubernetesVersionOpt,
    NoExtendersOpt,
    Order,
    Output,
    OutputOpt,
    RequestTimeoutOpt,
    SaveSnapshotOpt,
    SeedOpt,
    ValidateOpt,
    VerboseOpt,
    _cluster,
    _dump,
    _fail,
    _load,
    _open,
    _print_release,
    _run_and_show,
    _show_edits,
    _source_name,
    _validation,
    with_validation,
)
from .completion import complete_node
from .editflags import with_edit_flags

if TYPE_CHECKING:
    from ..whatif.edits import Edit


@with_validation
@with_edit_flags
def capacity(
    files: list[str] = typer.Argument(
        ...,
        metavar="FILE...",
        help="Templates: Pods and workloads (Deployment, StatefulSet, Job, ...), taken in turn ('-' for stdin).",
    ),
    cluster: list[str] | None = ClusterOpt,
    context: str | None = ContextOpt,
    kubeconfig: str | None = KubeconfigOpt,
    save_snapshot: str | None = SaveSnapshotOpt,
    request_timeout: str = RequestTimeoutOpt,
    config: str | None = ConfigOpt,
    no_extenders: bool = NoExtendersOpt,
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
    kubernetes_version: str | None = KubernetesVersionOpt,
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
    edits: list[Edit] | None = None,
) -> None:
    """How many more copies of each template fit: copies scheduled one after another, each bound
    before the next, until one fits nowhere (or --max). Preemption is off: copies evict nothing.

    Exit status: 0, or 1 with --min N when fewer than N copies fit; 2 bad input or usage.
    """
    from ..render.document import explain_doc, version_fields
    from ..scheduling.analysis import annotate
    from ..whatif.capacity import capacity_doc, read_templates, run_capacity

    stops: list = []
    cluster = _cluster(cluster, verbose, context, kubeconfig, save_snapshot, request_timeout)
    try:
        session = _open(cluster, config, edits, kubernetes_version)
        templates = read_templates(list(files))

        stop_docs: dict = {}

        def on_stop(template, r):
            # explained now: the next template's copies change the cluster this copy saw
            annotate(r, session)
            if output == Output.table:
                from ..render.terminal.capacity import stop_explanation

                stops.append(stop_explanation(template.label, r, session, no_color=no_color))
            else:
                stop_docs[id(r)] = explain_doc(r, None, session.version)

        report = run_capacity(
            session.scheduler, templates, max_copies=max_copies, seed=seed, group_by=group_by, on_stop=on_stop
        )
    except InputError as e:
        _fail(e)
    doc = {
        **version_fields(session.version),
        **({"edits": [a.doc() for a in session.edits]} if session.edits else {}),
        **capacity_doc(report, lambda r: stop_docs.get(id(r))),
    }
    if output == Output.table:
        from ..render.terminal.capacity import render_capacity

        _show_edits(session, no_color)
        render_capacity(doc, stops, top=top, no_color=no_color)
        from ..render.terminal import make_console

        _print_release(make_console(no_color), session)
    else:
        _dump(doc, output)
    raise typer.Exit(1 if min_copies is not None and report.replicas < min_copies else 0)


@with_validation
@with_edit_flags
def drain(
    nodes: list[str] = typer.Argument(
        ...,
        metavar="NODE|SELECTOR...",
        autocompletion=complete_node,
        help="Nodes to drain: names, or label selectors (kubectl -l syntax).",
    ),
    cluster: list[str] | None = ClusterOpt,
    context: str | None = ContextOpt,
    kubeconfig: str | None = KubeconfigOpt,
    save_snapshot: str | None = SaveSnapshotOpt,
    request_timeout: str = RequestTimeoutOpt,
    config: str | None = ConfigOpt,
    no_extenders: bool = NoExtendersOpt,
    output: Output = OutputOpt,
    delete_emptydir_data: bool = typer.Option(
        False, "--delete-emptydir-data", help="Evict pods with emptyDir volumes too (as kubectl drain)."
    ),
    force: bool = typer.Option(False, "--force", help="Delete pods without a controller too (as kubectl drain)."),
    seed: int | None = SeedOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
    edits: list[Edit] | None = None,
) -> None:
    """Can these nodes be drained? Cordon them, evict what kubectl drain would (PodDisruptionBudgets
    honoured as the eviction API does), and reschedule the evicted pods, highest priority first.

    Exit status: 0 every node can be drained and every evicted pod finds a node (one that needs
    preemption counts as not, unless --allow-preemption), 1 not, 2 bad input or usage.
    """
    from ..whatif.drain import drain as run_drain

    cluster = _cluster(cluster, verbose, context, kubeconfig, save_snapshot, request_timeout)
    try:
        cluster_obj, config_obj, applied = _load(cluster, config, edits, kubernetes_version)
        report = run_drain(
            cluster_obj, config_obj, list(nodes), delete_emptydir_data=delete_emptydir_data, force=force, seed=seed
        )
    except InputError as e:
        _fail(e)
    if output == Output.table:
        from ..render.terminal import make_console
        from ..render.terminal.drain import render_drain
        from ..render.terminal.edits import render_edits

        console = make_console(no_color)
        render_edits(applied, console)
        render_drain(report, console, allow_preemption)
        _print_release(console, cluster_obj)
    else:
        from ..render.document import version_fields
        from ..render.drain import drain_doc

        _dump({**drain_doc(report, applied, allow_preemption), **version_fields(cluster_obj.version)}, output)
    raise typer.Exit(0 if report.drainable(allow_preemption) else 1)


@with_validation
@with_edit_flags
def diff(
    pods: str | None = typer.Argument(
        None, metavar="PODS", help="File of pods to schedule ('-' for stdin); default: the snapshot's pending pods."
    ),
    cluster: list[str] | None = ClusterOpt,
    context: str | None = ContextOpt,
    kubeconfig: str | None = KubeconfigOpt,
    save_snapshot: str | None = SaveSnapshotOpt,
    request_timeout: str = RequestTimeoutOpt,
    config: str | None = ConfigOpt,
    no_extenders: bool = NoExtendersOpt,
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
    output: Output = OutputOpt,
    seed: int | None = SeedOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
    edits: list[Edit] | None = None,
) -> None:
    """The same pods in two worlds: A (--cluster or the live cluster, --config) and B (--against-config,
    --against-cluster and/or the cluster edits, applied to B only). Reports the pods whose verdict
    or node changes, and aggregates: nodes used, utilisation spread, pods needing preemption.

    Exit status: 0 every pod gets the same verdict and node, 1 some pod differs, 2 bad input or usage.
    """
    from ..whatif.diff import diff as run_diff

    try:
        if not (against_config or against_cluster or edits):
            raise InputError(
                "nothing to compare: give --against-config, --against-cluster or a cluster edit", field="diff"
            )
        if all_pods and pods is not None:
            raise InputError("PODS and --all exclude each other", field="--all")
    except InputError as e:
        _fail(e)
    cluster = _cluster(cluster, verbose, context, kubeconfig, save_snapshot, request_timeout)
    try:
        b_paths = against_cluster or cluster  # B reads A's snapshot (the live one too) unless it has its own
        b_config = against_config or config
        cluster_a, config_a, _ = _load(cluster, config, None, kubernetes_version)
        cluster_b, config_b, applied = _load(b_paths, b_config, edits, kubernetes_version)
        pods_of = None
        mode = "all"
        if not all_pods:
            if pods is None:
                found = cluster_a.pending_pods()
                if not found:
                    raise InputError(
                        "no PODS file given and no pending pod in the snapshot (or use --all)", field="PODS"
                    )
                mode = "pending"

                def pods_of(c):
                    return [c.parse_pod(o, p, w) for o, p, w in found]
            else:
                from ..loader import iter_objects
                from ..workloads.expansion import pods_for_workloads

                raw_pods = [(obj, pods, where) for obj, where in iter_objects(pods, as_kubectl=True)]
                mode = "pods"
                validation = _validation(validate)

                def pods_of(c):
                    # Pods as they are, workloads as their controllers would create them (as schedule)
                    ex = pods_for_workloads(raw_pods, c, validation=validation)
                    if not ex.pods and not ex.workloads:
                        raise InputError("no Pod or workload found", source=pods)
                    return ex.pods

        name_a = f"{_source_name(cluster)} --config {config or '(defaults)'}"
        name_b = f"{_source_name(b_paths)} --config {b_config or '(defaults)'}"
        if edits:
            name_b += " " + " ".join(str(e) for e in edits)
        report = run_diff((name_a, cluster_a, config_a), (name_b, cluster_b, config_b), pods_of, seed=seed, mode=mode)
    except InputError as e:
        _fail(e)
    if output == Output.table:
        from ..render.terminal import make_console
        from ..render.terminal.diff import render_diff
        from ..render.terminal.edits import render_edits

        console = make_console(no_color)
        render_edits(applied, console)
        render_diff(report, console)
        _print_release(console, cluster_a)
    else:
        from ..render.diff import diff_doc
        from ..render.document import version_fields

        _dump({**diff_doc(report, applied), **version_fields(cluster_a.version)}, output)
    raise typer.Exit(0 if report.same else 1)


@with_validation
def run(
    scenario: str = typer.Argument(..., metavar="SCENARIO", help="A Scenario file (`ksched schema --scenario`)."),
    cluster: list[str] | None = typer.Option(
        None,
        "--cluster",
        "-c",
        metavar="SNAPSHOT",
        help="Cluster snapshot in place of the scenario's `cluster` (repeatable). Default: the scenario's; "
        "without one, or with --context / --kubeconfig, the live cluster kubectl points at.",
    ),
    context: str | None = ContextOpt,
    kubeconfig: str | None = KubeconfigOpt,
    save_snapshot: str | None = SaveSnapshotOpt,
    request_timeout: str = RequestTimeoutOpt,
    output: Output = OutputOpt,
    detail: Detail = DetailOpt,
    seed: int | None = SeedOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
) -> None:
    """Run a scenario file: its snapshot and config, its cluster edits in order, then its pods (or
    the snapshot's pending pods) scheduled in turn, as `ksched schedule` with the same flags would.

    Exit status: 0 schedulable, 1 not (needing preemption counts as not, unless
    --allow-preemption), 2 bad input or usage.
    """
    from ..whatif.scenario import load_scenario, scenario_pods

    try:
        sc = load_scenario(scenario)
    except InputError as e:
        _fail(e)
    live_flags = context or kubeconfig or save_snapshot
    files = _cluster(
        cluster or (None if live_flags else sc.cluster) or None,
        verbose,
        context,
        kubeconfig,
        save_snapshot,
        request_timeout,
    )
    try:
        try:
            session = _open(files, sc.config, sc.edits, kubernetes_version or sc.kubernetes_version)
        except InputError as e:
            raise e.located(source=scenario) from None
        expansion = scenario_pods(sc, session.cluster)
        pod_list = expansion.pods if expansion is not None else []
        if expansion is None:
            found = session.cluster.pending_pods()
            if not found:
                raise InputError(
                    "the scenario names no pods and the snapshot has no pending pod", source=scenario, field="pods"
                )
            pod_list = [session.cluster.parse_pod(o, p, w) for o, p, w in found]
    except InputError as e:
        _fail(e)
    _run_and_show(
        session, pod_list, Order(sc.order), output, seed, allow_preemption, no_color, expansion, detail=detail
    )
