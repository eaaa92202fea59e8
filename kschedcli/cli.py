"""The `ksched` command line.

Exit status: 0 when every pod is schedulable, 1 when one is not (a pod that needs preemption counts as
not schedulable unless --allow-preemption), 2 for bad input or usage (one line on stderr, no traceback).
"""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

from . import KUBE_SCHEDULER_VERSION, __version__
from .cli_errors import OneLineErrorsGroup, guard_stdout
from .completion import complete_node, complete_pod, complete_profile
from .editflags import EditOrderCommand, with_edit_flags
from .errors import InputError

if TYPE_CHECKING:
    from .edits import Edit

app = typer.Typer(
    name="ksched",
    cls=OneLineErrorsGroup,
    help="What would kube-scheduler do? Offline placement explanations for Kubernetes "
    f"(follows kube-scheduler {KUBE_SCHEDULER_VERSION}).\n\n"
    "Exit status: 0 every pod schedulable, 1 some pod is not (needing preemption counts as not, "
    "unless --allow-preemption), 2 bad input or usage.",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class Output(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


class ScheduleOutput(StrEnum):
    table = "table"
    wide = "wide"
    name = "name"
    json = "json"
    yaml = "yaml"


class Order(StrEnum):
    priority = "priority"
    file = "file"


class PreemptionMode(StrEnum):
    report = "report"
    carry_out = "carry-out"


def _fail(err: InputError) -> None:
    typer.echo(f"ksched: {err}", err=True)
    raise typer.Exit(2)


def _dump(doc: dict, output: Output) -> None:
    if output == Output.yaml:
        import yaml

        class Dumper(yaml.SafeDumper):
            def ignore_aliases(self, data) -> bool:
                return True  # the document shares equal parts: write each in full, never as &anchor/*alias

        sys.stdout.write(
            yaml.dump(doc, Dumper=Dumper, sort_keys=False, default_flow_style=False, width=1000, allow_unicode=True)
        )
    else:
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


ClusterOpt = typer.Option(
    None,
    "--cluster",
    "-c",
    metavar="SNAPSHOT",
    help="Cluster snapshot: YAML, JSON or a List, as `kubectl get ... -o yaml|json` prints "
    "it ('-' for stdin). Repeatable. Default: the live cluster kubectl points at.",
)
SnapshotOpt = typer.Option(
    ...,
    "--cluster",
    "-c",
    metavar="SNAPSHOT",
    help="Cluster snapshot: YAML, JSON or a List, as `kubectl get ... -o yaml|json` prints "
    "it ('-' for stdin). Repeatable.",
)
ContextOpt = typer.Option(
    None, "--context", metavar="NAME", help="Live cluster: this kubeconfig context instead of the current one."
)
KubeconfigOpt = typer.Option(None, "--kubeconfig", metavar="FILE", help="Live cluster: this kubeconfig file.")
SaveSnapshotOpt = typer.Option(
    None,
    "--save-snapshot",
    metavar="FILE",
    help="Live cluster: keep what kubectl read in FILE (JSON), for --cluster FILE later.",
)
RequestTimeoutOpt = typer.Option(
    "30s",
    "--request-timeout",
    metavar="DURATION",
    help="Live cluster: kubectl's timeout per request (30s, 1m, 0: none).",
)
NamespaceOpt = typer.Option(None, "--namespace", "-n", metavar="NS", help="The namespace of a pod given by NAME.")
FilenameOpt = typer.Option(None, "--filename", "-f", metavar="FILE", help="The pod's file ('-' for stdin).")
VerboseOpt = typer.Option(
    False, "--verbose", "-v", help="Say on stderr what was read from the cluster and what was ignored."
)
ConfigOpt = typer.Option(
    None, "--config", metavar="FILE", help="KubeSchedulerConfiguration file (default: kube-scheduler's defaults)."
)
OutputOpt = typer.Option(
    Output.table,
    "--output",
    "-o",
    help="table: the explanation; json / yaml: everything, for scripts (`ksched schema`).",
)
SeedOpt = typer.Option(
    None,
    "--seed",
    help="Pick among tied top nodes as kube-scheduler's reservoir sampling "
    "would, with this seed (default: the first by name).",
)
ColorOpt = typer.Option(False, "--no-color", help="No colour (also when NO_COLOR is set; plain when piped).")
AllowPreemptionOpt = typer.Option(False, "--allow-preemption", help="Exit 0 for a pod that preemption would place.")
ReplicasOpt = typer.Option(
    None,
    "--replicas",
    metavar="N",
    min=0,
    help="New pods per workload, in place of what its controller would add (a "
    "Deployment's replicas less those running, ...); DaemonSets: at most N nodes.",
)
ReplicaOpt = typer.Option(
    0,
    "--replica",
    metavar="K",
    min=0,
    help="Of a workload, its new pod K (from 0); the ones before it are scheduled and bound first.",
)
KubernetesVersionOpt = typer.Option(
    None,
    "--kubernetes-version",
    metavar="VERSION",
    help="The kube-scheduler release to reproduce: v1.33, v1.34, v1.35 or v1.36 (default: the newest kubelet "
    "version among the snapshot's nodes; v1.34 when no node reports one).",
)
ValidateOpt = typer.Option(
    "strict",
    "--validate",
    metavar="MODE",
    help="Unknown fields in the pod files: strict (or true) an error, warn a warning, "
    "ignore (or false) not checked, as kubectl's --validate. Wrong types and "
    "values the API server refuses are errors in every mode.",
)
ProfileOpt = typer.Option(
    None,
    "--profile",
    metavar="NAME",
    autocompletion=complete_profile,
    help="Use this profile instead of the pod's spec.schedulerName.",
)


def _exit_code(results, allow_preemption: bool) -> int:
    from .render.analysis import verdict_of

    code = 0
    for r in results:
        if r.error and not r.schedulable and r.error.startswith("no profile"):
            return 2
        v = verdict_of(r)
        if v == "schedulable" or (v == "preemption" and allow_preemption):
            continue
        code = 1
    return code


def _load_one_pod(
    pod: str,
    cluster: list[str],
    session,
    replicas: int | None = None,
    replica: int = 0,
    is_file: bool = False,
    validate: str = "strict",
):
    """POD is a file ('-' for stdin) or the name of a pending pod in the snapshot. A file holds one
    Pod or one workload; of a workload, its new pod number `replica` (the ones before it are returned
    too, to be scheduled and bound first, as the controller creates them in turn)."""
    if is_file or pod == "-" or os.path.exists(pod):
        from .workloads import load_workloads

        ex = load_workloads(pod, session.cluster, replicas=replicas, validation=_validation(validate))
        units = len(ex.workloads) + sum(1 for p in ex.pods if ex.workload_of(p) is None)
        if units != 1:
            raise InputError(
                f"expected one Pod or workload, found {units} (use `ksched schedule` for several)", source=pod
            )
        if not ex.workloads:
            if replica:
                raise InputError("a Pod has no other replica", field="--replica")
            return ex.pods[0], []
        w = ex.workloads[0]
        if not w.pods:
            why = f": {w.note}" if w.note else f" ({w.existing} already in the snapshot)"
            raise InputError(f"{w.key} creates no new pod{why}", source=pod)
        if not 0 <= replica < len(w.pods):
            raise InputError(
                f"{w.key} creates {len(w.pods)} new pod(s): pick 0 to {len(w.pods) - 1}", field="--replica"
            )
        return w.pods[replica], w.pods[:replica]
    if pod.endswith((".yaml", ".yml", ".json")) or os.sep in pod.rstrip(os.sep).split("/", 1)[-1]:
        raise InputError("no such file", source=pod)
    from .lookup import find_pending_pod

    obj, path, where = find_pending_pod(list(cluster), pod)
    return session.cluster.parse_pod(obj, path, where), []


def _validation(validate: str) -> tuple[str, list[str]]:
    """(mode, warnings list) for load_pending_pods; the warnings go to stderr as they come."""
    from .validation import validate_mode

    class _Warnings(list):
        def append(self, line: str) -> None:
            typer.echo(line, err=True)

    return validate_mode(validate), _Warnings()


def _use_profile(pod, profile: str | None, session) -> None:
    if profile is None:
        return
    if profile not in session.scheduler.frameworks:
        known = ", ".join(sorted(session.scheduler.frameworks))
        raise InputError(f"no profile named {profile!r} (profiles: {known})", field="--profile")
    pod.scheduler_name = profile


_VERBOSE = {"on": False}


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ksched {__version__} (follows kube-scheduler {KUBE_SCHEDULER_VERSION})")
        raise typer.Exit(0)


@app.callback()
def _global_options(
    verbose: bool = VerboseOpt,
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="Print ksched's version and the kube-scheduler version it follows.",
    ),
) -> None:
    _VERBOSE["on"] = verbose


def _cluster(
    cluster: list[str] | None,
    verbose: bool,
    context: str | None,
    kubeconfig: str | None,
    save_snapshot: str | None,
    request_timeout: str,
) -> list[str]:
    """The snapshot files: --cluster's, else what kubectl reads from the live cluster (cliargs, live)."""
    from .cliargs import cluster_files
    from .live import LiveOptions

    _VERBOSE["on"] = _VERBOSE["on"] or verbose
    try:
        return cluster_files(cluster, LiveOptions(context, kubeconfig, request_timeout, save_snapshot), _VERBOSE["on"])
    except InputError as e:
        _fail(e)
        raise


def _open(
    cluster: list[str],
    config: str | None,
    edits: list[Edit] | None = None,
    kubernetes_version: str | None = None,
    pods: tuple[str, str | None] = ("", None),
):
    """The session over the snapshot, config and edits; `pods`: (argument name, path) of the pods file."""
    from .engine import open_session
    from .loader import read_once_check

    read_once_check([pods, *(("--cluster", c) for c in cluster), ("--config", config)])
    session = open_session(list(cluster), config, edits, kubernetes_version)
    if _VERBOSE["on"]:
        _report_load(session)
    return session


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _report_load(session) -> None:
    """The load summary of --verbose: counts of what the scheduler sees and of what it does not."""
    c = session.cluster
    seen = [_count(len(c.nodes), "node"), _count(len(c.pods), "bound pod")]
    if c.nominated_pods:
        seen.append(_count(len(c.nominated_pods), "nominated pod"))
    seen += [f"{kind} ×{len(objs)}" for kind, objs in sorted(c.objects.items()) if objs]
    typer.echo(f"ksched: read {', '.join(seen)}", err=True)
    for what, n in sorted(c.skipped.items()):  # what: "terminal pods", "pending pods (...)"
        typer.echo(f"ksched: skipped {n} {what.replace('pods', 'pod', 1) if n == 1 else what}", err=True)
    if c.ignored:
        kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(c.ignored.items()))
        typer.echo(f"ksched: ignored kinds the scheduler does not read: {kinds}", err=True)
    from .validation import unknown_fields

    unknown = unknown_fields(
        [n.raw for n in c.nodes] + [p.raw for p in c.pods] + [o for objs in c.objects.values() for o in objs.values()]
    )
    if unknown:  # an API server newer than ksched writes fields it does not know: named, never fatal
        fields = ", ".join(f"{kind} {field} ×{n}" for (kind, field), n in sorted(unknown.items()))
        typer.echo(f"ksched: fields this ksched does not know, not read: {fields}", err=True)


def _print_release(console, cluster) -> None:
    """The release followed and why, last, as the other views end (render/terminal/header.py)."""
    from .render.terminal.header import version_block

    for line in version_block(cluster):
        console.print()
        console.print(line)


def _show_edits(session, no_color: bool) -> None:
    if session.edits:
        from .render.terminal import make_console
        from .render.terminal.edits import render_edits

        render_edits(session.edits, make_console(no_color))


def _run_one(
    pod: str | None,
    cluster: list[str],
    config: str | None,
    profile: str | None,
    node: str | None,
    seed: int | None,
    edits: list[Edit] | None,
    replicas: int | None = None,
    replica: int = 0,
    filename: str | None = None,
    namespace: str | None = None,
    kubernetes_version: str | None = None,
    validate: str = "strict",
):
    from .cliargs import pod_ref
    from .render.analysis import annotate

    try:
        ref = pod_ref(pod, filename, namespace)
        session = _open(cluster, config, edits, kubernetes_version, ("POD", ref.text))
        p, before = _load_one_pod(ref.text, cluster, session, replicas, replica, is_file=ref.is_file, validate=validate)
        for q in (*before, p):
            _use_profile(q, profile, session)
        if node is not None and session.scheduler.snapshot.get(node) is None:
            raise InputError(f"no node named {node!r} in the snapshot", field="--node")
    except InputError as e:
        _fail(e)
    if before:
        session.scheduler.run_sequence(before, seed, keep=False)
    result = session.scheduler.schedule(p, seed)
    annotate(result, session)
    return session, result


@app.command(cls=EditOrderCommand)
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
    top: int = typer.Option(10, "--top", metavar="N", help="Rows of the score table (0: all)."),
    raw: bool = typer.Option(False, "--raw", help="Score table with raw and normalized scores and weights."),
    seed: int | None = SeedOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
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
    order: Order = typer.Option(
        Order.priority, "--order", help="priority: as PrioritySort orders the queue; file: file order."
    ),
    output: ScheduleOutput = typer.Option(
        ScheduleOutput.table,
        "--output",
        "-o",
        help="table: a row per pod; wide: also score, feasible nodes, nominated node, victims; name: the pods "
        "that are not schedulable, namespace/name a line; json / yaml: everything.",
    ),
    no_headers: bool = typer.Option(False, "--no-headers", help="table / wide: the rows only."),
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
            from .lookup import pending_pods

            found = in_namespace(pending_pods(list(cluster)), pods_namespace)
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
    _run_and_show(session, pod_list, order, output, seed, allow_preemption, no_color, expansion, no_headers, preemption)


def _run_and_show(
    session,
    pod_list,
    order: Order,
    output: Output | ScheduleOutput,
    seed: int | None,
    allow_preemption: bool,
    no_color: bool,
    expansion=None,
    no_headers: bool = False,
    preemption: PreemptionMode = PreemptionMode.report,
) -> None:
    """Schedule the pods in turn (schedule, run) and print the outcome, grouped by workload when
    `expansion` (workloads.Expansion) made them; exits."""
    from .render.analysis import annotate
    from .scheduler import queue_sort

    if order == Order.priority:
        pod_list = queue_sort(pod_list)
    if preemption == PreemptionMode.carry_out:
        _schedule_carrying_out(session, pod_list, seed, output, no_color, allow_preemption)
    if output == ScheduleOutput.json:
        results = _stream_json_sequence(session, pod_list, seed, expansion)
    else:
        results = session.scheduler.run_sequence(pod_list, seed, on_result=lambda r: annotate(r, session))
        summary = _workload_summary(expansion, results)
        if output in (ScheduleOutput.table, ScheduleOutput.wide):
            from .render.terminal import render_schedule

            if not no_headers:  # --no-headers: the rows alone
                _show_edits(session, no_color)
            render_schedule(
                results, session, no_color=no_color, wide=output == ScheduleOutput.wide, headers=not no_headers
            )
            if summary and not no_headers:
                from .render.terminal.workloads import render_workloads

                render_workloads(summary, no_color=no_color)
        elif output == ScheduleOutput.name:
            from .render.terminal import unschedulable_names

            sys.stdout.write(unschedulable_names(results, allow_preemption=allow_preemption))
        else:
            from .render.document import run_doc

            doc = run_doc(results, session.edits, session.version)
            if summary is not None:
                doc["workloads"] = summary
            _dump(doc, Output.yaml)
    raise typer.Exit(_exit_code(results, allow_preemption))


def _workload_summary(expansion, results):
    """The schedule's results grouped by workload; None when no workload was given."""
    if expansion is None or not expansion.workloads:
        return None
    from .workloads import summarize

    return summarize(expansion, results)


def _schedule_carrying_out(
    session, pod_list, seed, output: Output | ScheduleOutput, no_color: bool, allow_preemption: bool
) -> None:
    """`schedule --preemption=carry-out` (kschedcli/carryout.py); the exit status is the pods' final
    outcome: 0 when every pod ended bound."""
    from .carryout import run_carrying_out
    from .render.analysis import annotate

    def explained(r) -> None:
        annotate(r, session)

    run = run_carrying_out(session.scheduler, pod_list, seed, on_result=explained)
    if output not in (Output.json, Output.yaml):
        from .render.terminal import render_carried_out

        _show_edits(session, no_color)
        render_carried_out(run, session, no_color=no_color)
    else:
        from .render.document import carried_out_doc, run_doc

        _dump({**run_doc(run.results, session.edits, session.version), **carried_out_doc(run)}, Output(output.value))
    last = {r.pod.uid: r for r in run.results}
    code = _exit_code(list(last.values()), allow_preemption)
    if code == 0 and not all(p.node for p in run.placements):
        code = 1  # bound, then evicted by a later preemption
    raise typer.Exit(code)


def _stream_json_sequence(session, pod_list, seed, expansion=None):
    """`schedule -o json`, written result by result: the same bytes as dumping the whole document,
    without holding every node's verdict of every cycle (gigabytes on a 5,000-node sequence)."""
    import textwrap

    from .render.analysis import annotate
    from .render.document import result_doc, run_doc

    head = json.dumps(run_doc([], session.edits, session.version), indent=2, ensure_ascii=False)
    assert head.endswith('"results": []\n}')
    out = sys.stdout
    out.write(head[: -len("[]\n}")] + "[")
    kept: list = []

    def emit(r):
        annotate(r, session)
        text = json.dumps(result_doc(r), indent=2, ensure_ascii=False)
        out.write(("\n" if not kept else ",\n") + textwrap.indent(text, "    "))
        r.filters, r.scores, r.totals, r.details = {}, {}, {}, {}  # the summaries need only the verdicts
        kept.append(r)

    session.scheduler.run_sequence(pod_list, seed, on_result=emit, keep=False)
    summary = _workload_summary(expansion, kept)
    out.write("\n  ]" if kept else "]")
    if summary is None:
        out.write("\n}\n")
    else:
        tail = json.dumps({"workloads": summary}, indent=2, ensure_ascii=False)
        out.write(",\n" + tail[2:])
        out.write("\n")
    return kept


@app.command(cls=EditOrderCommand)
@with_edit_flags
def capacity(
    files: list[str] = typer.Argument(
        ...,
        metavar="FILE...",
        help="Templates: Pods and workloads (Deployment, StatefulSet, Job, ...), taken in turn ('-' for stdin).",
    ),
    cluster: list[str] = SnapshotOpt,
    config: str | None = ConfigOpt,
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
    top: int = typer.Option(10, "--top", metavar="N", help="Rows of the per-node table (0: all)."),
    seed: int | None = SeedOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    no_color: bool = ColorOpt,
    edits: list[Edit] | None = None,
) -> None:
    """How many more copies of each template fit: copies scheduled one after another, each bound
    before the next, until one fits nowhere (or --max). Preemption is off: copies evict nothing.

    Exit status: 0, or 1 with --min N when fewer than N copies fit; 2 bad input or usage.
    """
    from .capacity import capacity_doc, read_templates, run_capacity
    from .render.analysis import annotate
    from .render.document import explain_doc, version_fields

    stops: list = []
    try:
        session = _open(cluster, config, edits, kubernetes_version)
        templates = read_templates(list(files))

        stop_docs: dict = {}

        def on_stop(template, r):
            # explained now: the next template's copies change the cluster this copy saw
            annotate(r, session)
            if output == Output.table:
                from .render.terminal.capacity import stop_explanation

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
        from .render.terminal.capacity import render_capacity

        _show_edits(session, no_color)
        render_capacity(doc, stops, top=top, no_color=no_color)
        from .render.terminal import make_console

        _print_release(make_console(no_color), session)
    else:
        _dump(doc, output)
    raise typer.Exit(1 if min_copies is not None and report.replicas < min_copies else 0)


@app.command(cls=EditOrderCommand)
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
    profile: str | None = ProfileOpt,
    output: Output = OutputOpt,
    replicas: int | None = ReplicasOpt,
    replica: int = ReplicaOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    no_color: bool = ColorOpt,
    verbose: bool = VerboseOpt,
    validate: str = ValidateOpt,
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
    )
    if output == Output.table:
        from .render.terminal import render_preempt

        _show_edits(session, no_color)
        render_preempt(result, session, no_color=no_color)
    else:
        from .render.document import explain_doc

        _dump(explain_doc(result, session.edits, session.version), output)
    raise typer.Exit(_exit_code([result], allow_preemption))


@app.command(cls=EditOrderCommand)
@with_edit_flags
def drain(
    nodes: list[str] = typer.Argument(
        ...,
        metavar="NODE|SELECTOR...",
        autocompletion=complete_node,
        help="Nodes to drain: names, or label selectors (kubectl -l syntax).",
    ),
    cluster: list[str] = SnapshotOpt,
    config: str | None = ConfigOpt,
    output: Output = OutputOpt,
    delete_emptydir_data: bool = typer.Option(
        False, "--delete-emptydir-data", help="Evict pods with emptyDir volumes too (as kubectl drain)."
    ),
    force: bool = typer.Option(False, "--force", help="Delete pods without a controller too (as kubectl drain)."),
    seed: int | None = SeedOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    no_color: bool = ColorOpt,
    edits: list[Edit] | None = None,
) -> None:
    """Can these nodes be drained? Cordon them, evict what kubectl drain would (PodDisruptionBudgets
    honoured as the eviction API does), and reschedule the evicted pods, highest priority first.

    Exit status: 0 every node can be drained and every evicted pod finds a node (one that needs
    preemption counts as not, unless --allow-preemption), 1 not, 2 bad input or usage.
    """
    from .drain import drain as run_drain
    from .engine import load_inputs

    try:
        cluster_obj, config_obj, applied = load_inputs(list(cluster), config, edits, kubernetes_version)
        report = run_drain(
            cluster_obj, config_obj, list(nodes), delete_emptydir_data=delete_emptydir_data, force=force, seed=seed
        )
    except InputError as e:
        _fail(e)
    if output == Output.table:
        from .render.terminal import make_console
        from .render.terminal.drain import render_drain
        from .render.terminal.edits import render_edits

        console = make_console(no_color)
        render_edits(applied, console)
        render_drain(report, console, allow_preemption)
        _print_release(console, cluster_obj)
    else:
        from .render.document import version_fields
        from .render.drain import drain_doc

        _dump({**drain_doc(report, applied, allow_preemption), **version_fields(cluster_obj.version)}, output)
    raise typer.Exit(0 if report.drainable(allow_preemption) else 1)


@app.command(cls=EditOrderCommand)
@with_edit_flags
def diff(
    pods: str | None = typer.Argument(
        None, metavar="PODS", help="File of pods to schedule ('-' for stdin); default: the snapshot's pending pods."
    ),
    cluster: list[str] = SnapshotOpt,
    config: str | None = ConfigOpt,
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
    edits: list[Edit] | None = None,
) -> None:
    """The same pods in two worlds: A (--cluster, --config) and B (--against-config,
    --against-cluster and/or the cluster edits, applied to B only). Reports the pods whose verdict
    or node changes, and aggregates: nodes used, utilisation spread, pods needing preemption.

    Exit status: 0 every pod gets the same verdict and node, 1 some pod differs, 2 bad input or usage.
    """
    from .diff import diff as run_diff
    from .engine import load_inputs

    try:
        if not (against_config or against_cluster or edits):
            raise InputError(
                "nothing to compare: give --against-config, --against-cluster or a cluster edit", field="diff"
            )
        if all_pods and pods is not None:
            raise InputError("PODS and --all exclude each other", field="--all")
        b_paths = list(against_cluster or cluster)
        b_config = against_config or config
        cluster_a, config_a, _ = load_inputs(list(cluster), config, None, kubernetes_version)
        cluster_b, config_b, applied = load_inputs(b_paths, b_config, edits, kubernetes_version)
        pods_of = None
        mode = "all"
        if not all_pods:
            if pods is None:
                from .lookup import pending_pods

                found = pending_pods(list(cluster))
                if not found:
                    raise InputError(
                        "no PODS file given and no pending pod in the snapshot (or use --all)", field="PODS"
                    )
                mode = "pending"

                def pods_of(c):
                    return [c.parse_pod(o, p, w) for o, p, w in found]
            else:
                from .cluster import parse_pending_pods
                from .loader import iter_objects

                raw_pods = list(iter_objects(pods))
                mode = "pods"

                def pods_of(c):
                    return parse_pending_pods(raw_pods, pods, c)

        name_a = f"--cluster {' '.join(cluster)} --config {config or '(defaults)'}"
        name_b = f"--cluster {' '.join(b_paths)} --config {b_config or '(defaults)'}"
        if edits:
            name_b += " " + " ".join(str(e) for e in edits)
        report = run_diff((name_a, cluster_a, config_a), (name_b, cluster_b, config_b), pods_of, seed=seed, mode=mode)
    except InputError as e:
        _fail(e)
    if output == Output.table:
        from .render.terminal import make_console
        from .render.terminal.diff import render_diff
        from .render.terminal.edits import render_edits

        console = make_console(no_color)
        render_edits(applied, console)
        render_diff(report, console)
        _print_release(console, cluster_a)
    else:
        from .render.diff import diff_doc
        from .render.document import version_fields

        _dump({**diff_doc(report, applied), **version_fields(cluster_a.version)}, output)
    raise typer.Exit(0 if report.same else 1)


@app.command()
def run(
    scenario: str = typer.Argument(..., metavar="SCENARIO", help="A Scenario file (`ksched schema --scenario`)."),
    output: Output = OutputOpt,
    seed: int | None = SeedOpt,
    kubernetes_version: str | None = KubernetesVersionOpt,
    allow_preemption: bool = AllowPreemptionOpt,
    no_color: bool = ColorOpt,
) -> None:
    """Run a scenario file: its snapshot and config, its cluster edits in order, then its pods (or
    the snapshot's pending pods) scheduled in turn, as `ksched schedule` with the same flags would.

    Exit status: 0 schedulable, 1 not (needing preemption counts as not, unless
    --allow-preemption), 2 bad input or usage.
    """
    from .scenario import load_scenario, scenario_pods

    try:
        sc = load_scenario(scenario)
        try:
            session = _open(sc.cluster, sc.config, sc.edits, kubernetes_version or sc.kubernetes_version)
        except InputError as e:
            raise e.located(source=scenario) from None
        expansion = scenario_pods(sc, session.cluster)
        pod_list = expansion.pods if expansion is not None else []
        if expansion is None:
            from .lookup import pending_pods

            found = pending_pods(list(sc.cluster))
            if not found:
                raise InputError(
                    "the scenario names no pods and the snapshot has no pending pod", source=scenario, field="pods"
                )
            pod_list = [session.cluster.parse_pod(o, p, w) for o, p, w in found]
    except InputError as e:
        _fail(e)
    _run_and_show(session, pod_list, Order(sc.order), output, seed, allow_preemption, no_color, expansion)


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


def main() -> None:
    from .render.progress import install

    install()  # progress on stderr for loads and sequences over a second, on a terminal only
    guard_stdout()  # `ksched ... | head` exits as its result says, not 1 or 120
    app(prog_name="ksched")


def kubectl_main() -> None:
    """`kubectl-ksched`: the same commands as a kubectl plugin (`kubectl ksched explain ...`); kubectl
    finds it on PATH and passes it the words after `ksched`."""
    from .render.progress import install

    install()
    app(prog_name="kubectl ksched")


if __name__ == "__main__":
    main()
