"""What the `ksched` commands share: the Typer app and its global options, the output enums, the
option definitions, and the helpers that load a session, schedule and print (cli.py and
cli_whatif.py hold the commands)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

from . import KUBE_SCHEDULER_VERSION, __version__
from .cli_errors import OneLineErrorsGroup
from .completion import complete_profile
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


class Detail(StrEnum):
    compact = "compact"
    full = "full"


def _fail(err: InputError) -> None:
    typer.echo(f"ksched: {err}", err=True)
    raise typer.Exit(2)


def _dump(doc: dict, output: Output) -> None:
    if output == Output.yaml:
        from .render.yamltext import yaml_text

        sys.stdout.write(yaml_text(doc))
    else:
        from .render.jsontext import json_text

        sys.stdout.write(json_text(doc) + "\n")


ClusterOpt = typer.Option(
    None,
    "--cluster",
    "-c",
    metavar="SNAPSHOT",
    help="Cluster snapshot: YAML, JSON or a List, as `kubectl get ... -o yaml|json` prints "
    "it ('-' for stdin). Repeatable. Default: the live cluster kubectl points at.",
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
_NO_EXTENDERS = {"on": False}


def _leave_out_extenders(value: bool) -> bool:
    _NO_EXTENDERS["on"] = bool(value)
    return value


NoExtendersOpt = typer.Option(
    False,
    "--no-extenders",
    callback=_leave_out_extenders,
    help="Run without the config's HTTP extenders (offline): none is called; the output names them.",
)
OutputOpt = typer.Option(
    Output.table,
    "--output",
    "-o",
    help="table: the explanation; json / yaml: everything, for scripts (`ksched schema`).",
)
DetailOpt = typer.Option(
    Detail.compact,
    "--detail",
    help="json / yaml: compact: per pod the verdict, node, score, message, preemption, node groups and failing "
    "plugins; full: also every node's filter statuses and scores, the breakdowns and the plugins' details.",
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
    max=150_000,  # workloads.MAX_WORKLOAD_PODS: Kubernetes' most pods per cluster
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
    help="Unknown fields in the files you hand in (pods, workloads, nodes, the config): strict (or true) "
    "an error, warn a warning, "
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


AsBoundOpt = typer.Option(
    False,
    "--as-bound",
    help="A bound pod given as a file (spec.nodeName set, as `kubectl get pod -o yaml` prints a running "
    "pod) is taken literally: its node alone passes NodeName. Without it, such a pod is scheduled as if "
    "created again now: spec.nodeName and status dropped, its running copy taken out of the snapshot.",
)


def _load_one_pod(
    pod: str,
    cluster: list[str],
    session,
    replicas: int | None = None,
    replica: int = 0,
    is_file: bool = False,
    validate: str = "strict",
    as_bound: bool = False,
):
    """POD is a file ('-' for stdin) or the name of a pending pod in the snapshot. A file holds one
    Pod or one workload; of a workload, its new pod number `replica` (the ones before it are returned
    too, to be scheduled and bound first, as the controller creates them in turn). A bound Pod is
    read as if created again (_unbound), unless `as_bound`."""
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
            if ex.pods[0].node_name and not as_bound:
                return _unbound(ex.pods[0], pod, session), []
            return ex.pods[0], []
        w = ex.workloads[0]
        session.given_kind = w.kind
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

    obj, path, where = find_pending_pod(list(cluster), pod, session.cluster.pending_pods())
    return session.cluster.parse_pod(obj, path, where), []


def _unbound(p, source: str, session):
    """A bound pod given as input (spec.nodeName set: a running pod's export) as if created again
    now: spec.nodeName, status and with it status.nominatedNodeName dropped, and the pod itself
    (same namespace/name, or uid) taken out of the snapshot so that it is not counted twice; one
    line on stderr says so, and the result's `input.unbound` (session.input_unbound)."""
    import copy

    raw = copy.deepcopy(p.raw)
    spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else {}
    node_name = spec.pop("nodeName", None) or p.node_name
    status = raw.pop("status", None)
    nominated = status.get("nominatedNodeName") if isinstance(status, dict) else None
    fresh = session.cluster.parse_pod(raw, source, f"Pod {p.key}")
    meta = p.raw.get("metadata") if isinstance(p.raw.get("metadata"), dict) else {}
    uid = meta.get("uid") or None
    snapshot = session.scheduler.snapshot
    held = None
    first = snapshot.get(node_name)
    for ni in ([first] if first is not None else []) + [ni for ni in snapshot.list() if ni is not first]:
        held = next((q for q in ni.pods if q.key == p.key or (uid is not None and q.uid == uid)), None)
        if held is not None:
            break
    if held is not None:
        snapshot.evict(held)
    session.input_unbound = {
        "nodeName": node_name,
        "nominatedNodeName": nominated or None,
        "removedFromSnapshot": held is not None,
    }
    where = f"on {held.node_name}, taken out of the snapshot" if held is not None else "not in the snapshot"
    typer.echo(
        f"ksched: {source}: Pod {p.key} is bound to {node_name}: explained as if created again now "
        f"(spec.nodeName and status dropped; the pod is {where}); --as-bound takes it as it is",
        err=True,
    )
    return fresh


def _validation(validate: str) -> tuple[str, list[str]]:
    """(mode, warnings list) for load_pending_pods; the warnings go to stderr as they come, each
    once (a file read for two worlds, or a template for each batch of copies, warns once)."""
    from .validation import validate_mode

    class _Warnings(list):
        def append(self, line: str) -> None:
            if line not in self:
                super().append(line)
                typer.echo(line, err=True)

    return validate_mode(validate), _Warnings()


def with_validation(fn: Callable) -> Callable:
    """A command whose `validate` option (--validate) reaches every file the user hands it: pod
    and workload files, --add-node files, the config, a scenario (validation.validating_user_files)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        from .validation import validating_user_files

        try:
            mode, warnings = _validation(kwargs.get("validate", "strict"))
        except InputError as e:
            _fail(e)

        def dropped(line: str) -> None:  # an API server's object's unknown fields: named under --verbose
            if _VERBOSE["on"] or kwargs.get("verbose"):
                typer.echo(line, err=True)

        with validating_user_files(mode, warnings, dropped):
            return fn(*args, **kwargs)

    return run


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
    no_cache: bool = typer.Option(
        False,
        "--no-cache",
        help="Read the snapshot files, not the cache of parsed snapshots (also KSCHED_NO_CACHE=1; "
        "`ksched cache clear` empties it).",
    ),
) -> None:
    _VERBOSE["on"] = verbose
    _RELEASE_WARNED.clear()  # each command says it once
    if no_cache:
        from .snapshot_cache import disable

        disable()


def _cluster(
    cluster: list[str] | None,
    verbose: bool,
    context: str | None,
    kubeconfig: str | None,
    save_snapshot: str | None,
    request_timeout: str,
) -> list[str]:
    """The snapshot files: --cluster's, else what kubectl reads from the live cluster (cliargs, live;
    the list then also carries the API server's version, which _open and _load pass on)."""
    from .cliargs import cluster_files

    _VERBOSE["on"] = _VERBOSE["on"] or verbose
    try:
        return cluster_files(cluster, context, kubeconfig, request_timeout, save_snapshot, _VERBOSE["on"])
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
    session = open_session(
        list(cluster), config, edits, kubernetes_version, _server_version(cluster), no_extenders=_NO_EXTENDERS["on"]
    )
    if _VERBOSE["on"]:
        _report_load(session.cluster)
    _warn_release(session.version)
    return session


_RELEASE_WARNED: set[str] = set()


def _warn_release(choice) -> None:
    """The cluster runs a release ksched does not reproduce: said on stderr before any answer
    (once a command), as the JSON's kubernetesVersionChosenBy.warning says it."""
    warning = getattr(choice, "warning", None)
    if warning and warning not in _RELEASE_WARNED:
        _RELEASE_WARNED.add(warning)
        typer.echo(f"ksched: warning: {warning}", err=True)


def _server_version(cluster: list[str]) -> str | None:
    """The live cluster's API server version, when `cluster` came from kubectl (cliargs.ClusterFiles)."""
    return getattr(cluster, "server_version", None)


def _load(
    cluster: list[str], config: str | None, edits: list[Edit] | None = None, kubernetes_version: str | None = None
):
    """engine.load_inputs over the snapshot files (drain, diff): the cluster, config and edits applied."""
    from .engine import load_inputs

    cluster_obj, config_obj, applied = load_inputs(
        list(cluster), config, edits, kubernetes_version, _server_version(cluster), no_extenders=_NO_EXTENDERS["on"]
    )
    if _VERBOSE["on"]:
        _report_load(cluster_obj)
    _warn_release(cluster_obj.version)
    return cluster_obj, config_obj, applied


def _source_name(cluster: list[str]) -> str:
    """A world's snapshot as `diff` names it: `--cluster FILE...`, or `kubectl (context NAME)` for
    what was read from the live cluster into a temporary file."""
    from .errors import SOURCE_LABELS

    labels = [SOURCE_LABELS.get(c) for c in cluster]
    if cluster and all(labels):
        return ", ".join(label for label in labels if label)
    return "--cluster " + " ".join(cluster)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _report_load(c) -> None:
    """The load summary of --verbose: counts of what the scheduler sees (cluster.Cluster `c`) and of
    what it does not."""
    seen = [_count(len(c.nodes), "node"), _count(len(c.pods), "bound pod")]
    if c.nominated_pods:
        seen.append(_count(len(c.nominated_pods), "nominated pod"))
    seen += [f"{kind} ×{len(objs)}" for kind, objs in sorted(c.objects.items()) if objs]
    typer.echo(f"ksched: read {', '.join(seen)}", err=True)
    if c.from_cache:
        from .snapshot_cache import cache_dir

        typer.echo(
            f"ksched: the snapshot as parsed before, from the cache ({cache_dir()}; --no-cache reads the files)",
            err=True,
        )
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
    from .render.terminal.layout import hang

    for line in version_block(cluster):
        console.print()
        console.print(hang(line))


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
    as_bound: bool = False,
):
    from .cliargs import pod_ref
    from .render.analysis import annotate

    try:
        ref = pod_ref(pod, filename, namespace)
        session = _open(cluster, config, edits, kubernetes_version, ("POD", ref.text))
        p, before = _load_one_pod(
            ref.text, cluster, session, replicas, replica, is_file=ref.is_file, validate=validate, as_bound=as_bound
        )
        for q in (*before, p):
            _use_profile(q, profile, session)
        if node is not None and session.scheduler.snapshot.get(node) is None:
            raise InputError(f"no node named {node!r} in the snapshot", field="--node")
    except InputError as e:
        _fail(e)
    if before:
        session.scheduler.run_sequence(before, seed, keep=False)
    result = session.scheduler.schedule(p, seed)
    result.input_unbound = getattr(session, "input_unbound", None)
    annotate(result, session)
    session.before = before
    return session, result


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
    detail: Detail = Detail.compact,
) -> None:
    """Schedule the pods in turn (schedule, run) and print the outcome, grouped by workload when
    `expansion` (workloads.Expansion) made them; exits. Each result is analysed for what the output
    shows, then its per-node tables are dropped (but with -o yaml --detail full)."""
    from .render import analysis
    from .scheduler import queue_sort

    if order == Order.priority:
        pod_list = queue_sort(pod_list)
    if preemption == PreemptionMode.carry_out:
        _schedule_carrying_out(session, pod_list, seed, output, no_color, allow_preemption, detail)
    if output == ScheduleOutput.json:
        results = _stream_json_sequence(session, pod_list, seed, expansion, detail)
    else:
        full = output == ScheduleOutput.yaml and detail == Detail.full
        if output == ScheduleOutput.yaml:
            parts = analysis.ALL if full else _COMPACT_PARTS
        elif output == ScheduleOutput.name:
            parts = frozenset()
        else:
            parts = frozenset({analysis.FIRST_FAILURES})
        if expansion is not None and any(w.kind == "DaemonSet" for w in expansion.workloads):
            parts |= {analysis.GROUPS}  # the workload summary names each node's failure (workload_results)

        def analysed(r) -> None:
            analysis.annotate(r, session, parts)
            if not full:
                analysis.slim(r)

        results = session.scheduler.run_sequence(pod_list, seed, on_result=analysed, with_details=full)
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

            doc = run_doc(results, session.edits, session.version, detail.value)
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
    session,
    pod_list,
    seed,
    output: Output | ScheduleOutput,
    no_color: bool,
    allow_preemption: bool,
    detail: Detail = Detail.compact,
) -> None:
    """`schedule --preemption=carry-out` (kschedcli/carryout.py); the exit status is the pods' final
    outcome: 0 when every pod ended bound."""
    from .carryout import run_carrying_out
    from .render.analysis import ALL, annotate

    as_document = output in (Output.json, Output.yaml)
    parts = _COMPACT_PARTS if as_document and detail == Detail.compact else ALL

    def explained(r) -> None:
        annotate(r, session, parts)

    run = run_carrying_out(session.scheduler, pod_list, seed, on_result=explained)
    if not as_document:
        from .render.terminal import render_carried_out

        _show_edits(session, no_color)
        render_carried_out(run, session, no_color=no_color)
    else:
        from .render.document import carried_out_doc, run_doc

        doc = run_doc(run.results, session.edits, session.version, detail.value)
        _dump({**doc, **carried_out_doc(run)}, Output(output.value))
    last = {r.pod.uid: r for r in run.results}
    code = _exit_code(list(last.values()), allow_preemption)
    if code == 0 and not all(p.node for p in run.placements):
        code = 1  # bound, then evicted by a later preemption
    raise typer.Exit(code)


# what a compact sequence document shows of the analysis (render/document.py compact_result_doc)
_COMPACT_PARTS = frozenset({"groups", "events"})
# the parts of a result document render/document.py builds from ints and strings only
_FLOAT_FREE = ("filters", "scores")


def _stream_json_sequence(session, pod_list, seed, expansion=None, detail: Detail = Detail.compact):
    """`schedule -o json`, written result by result: the same bytes as dumping the whole document,
    without holding every node's verdict of every cycle (gigabytes on a 5,000-node sequence)."""
    from .render import analysis
    from .render.document import compact_result_doc, result_doc, run_doc
    from .render.jsontext import indented, json_text

    full = detail == Detail.full
    parts = analysis.ALL if full else _COMPACT_PARTS
    make = result_doc if full else compact_result_doc
    head = json_text(run_doc([], session.edits, session.version, detail.value))
    assert head.endswith('"results": []\n}')
    out = sys.stdout
    out.write(head[: -len("[]\n}")] + "[")
    kept: list = []

    def emit(r):
        analysis.annotate(r, session, parts)
        out.write(("\n" if not kept else ",\n") + indented(json_text(make(r), float_free=_FLOAT_FREE), "    "))
        analysis.slim(r)  # the summaries need only the verdicts
        kept.append(r)

    session.scheduler.run_sequence(pod_list, seed, on_result=emit, keep=False, with_details=full)
    summary = _workload_summary(expansion, kept)
    out.write("\n  ]" if kept else "]")
    if summary is None:
        out.write("\n}\n")
    else:
        tail = json_text({"workloads": summary})
        out.write(",\n" + tail[2:])
        out.write("\n")
    return kept
