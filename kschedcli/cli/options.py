"""What the commands share, declared once: the output enums, the options several commands take, and
the two option groups every command that reads a cluster has — where the cluster comes from with
the scheduler's config (`--cluster`, `--context`, ..., `--config`, `--no-extenders`) and how files
are read (`--validate`, `-v`, `--no-cache`) — each handed to the command as one frozen object."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from enum import StrEnum
from typing import Any, NamedTuple

import typer

from .completion import complete_pod, complete_profile


class Output(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


class ScheduleOutput(StrEnum):
    table = "table"
    wide = "wide"
    name = "name"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"


class Order(StrEnum):
    priority = "priority"
    file = "file"


class PreemptionMode(StrEnum):
    report = "report"
    carry_out = "carry-out"


class Detail(StrEnum):
    compact = "compact"
    full = "full"


KubernetesVersionOpt = typer.Option(
    None,
    "--kubernetes-version",
    metavar="VERSION",
    help="The kube-scheduler release to reproduce: v1.33, v1.34, v1.35 or v1.36 (default: the newest kubelet "
    "version among the snapshot's nodes; v1.34 when no node reports one).",
)
ColorOpt = typer.Option(False, "--no-color", help="No colour (also when NO_COLOR is set; plain when piped).")


class WorldFlags(NamedTuple):
    """--cluster (or the live cluster's flags), the scheduler's --config and the release to follow."""

    cluster: tuple[str, ...] = ()
    context: str | None = None
    kubeconfig: str | None = None
    save_snapshot: str | None = None
    request_timeout: str = "30s"
    config: str | None = None
    no_extenders: bool = False
    kubernetes_version: str | None = None


class ReadFlags(NamedTuple):
    """How the command reads and prints: --no-color, -v (also before the command) and --validate."""

    no_color: bool = False
    verbose: bool = False
    validate: str = "strict"


def option_group(into: str, params: list[inspect.Parameter], build: Callable[..., Any]) -> Callable:
    """A decorator putting `params` in a Typer command's signature where its parameter `into` is,
    and calling the command with into=build(**their values) in their place."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)
        names = [p.name for p in params]
        out: list[inspect.Parameter] = []
        for name, p in sig.parameters.items():
            if name == into:
                out.extend(params)
                continue
            if isinstance(p.annotation, str):  # as written under `from __future__ import annotations`
                # a name imported for type checking only (`edits`, which with_edit_flags takes) stays a string
                with contextlib.suppress(NameError):
                    p = p.replace(annotation=eval(p.annotation, fn.__globals__))  # noqa: S307
            out.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) if p.kind == p.POSITIONAL_OR_KEYWORD else p)

        @functools.wraps(fn)
        def wrapper(**kwargs: Any) -> Any:
            return fn(**{into: build(**{n: kwargs.pop(n) for n in names})}, **kwargs)

        wrapper.__signature__ = sig.replace(parameters=out, return_annotation=None)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in out} | {"return": None}
        del wrapper.__wrapped__  # Typer reads the signature above, not fn's
        return wrapper

    return decorate


def _opt(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


CLUSTER_HELP = (
    "Cluster snapshot: YAML, JSON or a List, as `kubectl get ... -o yaml|json` prints "
    "it ('-' for stdin; a directory: its .json, .yaml and .yml files, as `kubectl apply -f DIR` "
    "takes them). Repeatable. Default: the live cluster kubectl points at."
)


def world_flags(cluster_help: str = CLUSTER_HELP, config: bool = True) -> Callable:
    """The cluster source and the scheduler's config, handed to the command as `world: WorldFlags`;
    config=False: the command has no --config / --no-extenders (a scenario names its config)."""
    params = [
        _opt("cluster", list[str] | None, typer.Option(None, "--cluster", "-c", metavar="SNAPSHOT", help=cluster_help)),
        _opt(
            "context",
            str | None,
            typer.Option(
                None,
                "--context",
                metavar="NAME",
                help="Live cluster: this kubeconfig context instead of the current one.",
            ),
        ),
        _opt(
            "kubeconfig",
            str | None,
            typer.Option(None, "--kubeconfig", metavar="FILE", help="Live cluster: this kubeconfig file."),
        ),
        _opt(
            "save_snapshot",
            str | None,
            typer.Option(
                None,
                "--save-snapshot",
                metavar="FILE",
                help="Live cluster: keep what kubectl read in FILE (JSON), for --cluster FILE later.",
            ),
        ),
        _opt(
            "request_timeout",
            str,
            typer.Option(
                "30s",
                "--request-timeout",
                metavar="DURATION",
                help="Live cluster: kubectl's timeout per request (30s, 1m, 0: none).",
            ),
        ),
    ]
    if config:
        params += [
            _opt(
                "config",
                str | None,
                typer.Option(
                    None,
                    "--config",
                    metavar="FILE",
                    help="KubeSchedulerConfiguration file (default: kube-scheduler's defaults).",
                ),
            ),
            _opt(
                "no_extenders",
                bool,
                typer.Option(
                    False,
                    "--no-extenders",
                    help="Run without the config's HTTP extenders (offline): none is called; the output names them.",
                ),
            ),
        ]

    params.append(_opt("kubernetes_version", str | None, KubernetesVersionOpt))

    def build(cluster=None, **rest: Any) -> WorldFlags:
        return WorldFlags(tuple(cluster or ()), **rest)

    return option_group("world", params, build)


class SamplingFlags(NamedTuple):
    """--sampling and --start-index, as Session.schedule and the what-if questions take them."""

    sampling: bool = False
    start_index: int = 0


def sampling_flags(fn: Callable) -> Callable:
    """--sampling and --start-index, handed to the command as `sampling: SamplingFlags`."""
    params = [
        _opt(
            "sampling",
            bool,
            typer.Option(
                False,
                "--sampling",
                help="Sample nodes as kube-scheduler does on 100 nodes or more: stop filtering once "
                "numFeasibleNodesToFind feasible nodes are found (percentageOfNodesToScore), starting where the "
                "previous cycle stopped, in its node tree's order; score only those (docs/sampling.md).",
            ),
        ),
        _opt(
            "start_index",
            int,
            typer.Option(
                0,
                "--start-index",
                metavar="N",
                min=0,
                help="--sampling: the scheduler's next start index before the first cycle (0: a freshly "
                "started kube-scheduler).",
            ),
        ),
    ]
    return option_group("sampling", params, SamplingFlags)(fn)


def sampled_world_flags(fn: Callable) -> Callable:
    """world_flags(), read_flags and sampling_flags together: the commands that schedule pods in a
    cluster they read (schedule, capacity, drain, diff)."""
    return world_flags()(read_flags(sampling_flags(fn)))


def read_flags(fn: Callable) -> Callable:
    """--no-color, --verbose and --validate, handed to the command as `reading: ReadFlags`."""
    params = [
        _opt("no_color", bool, ColorOpt),
        _opt(
            "verbose",
            bool,
            typer.Option(
                False, "--verbose", "-v", help="Say on stderr what was read from the cluster and what was ignored."
            ),
        ),
        _opt(
            "validate",
            str,
            typer.Option(
                "strict",
                "--validate",
                metavar="MODE",
                help="Unknown fields in the files you hand in (pods, workloads, nodes, the config): strict (or true) "
                "an error, warn a warning, "
                "ignore (or false) not checked, as kubectl's --validate. Wrong types and "
                "values the API server refuses are errors in every mode.",
            ),
        ),
    ]
    return option_group("reading", params, ReadFlags)(fn)


NO_CACHE_HELP = (
    "Read the snapshot files, not the cache of parsed snapshots (also KSCHED_NO_CACHE=1; "
    "`ksched cache clear` empties it)."
)

OutputOpt = typer.Option(
    Output.table,
    "--output",
    "-o",
    help="table: the explanation; json / yaml: everything, for scripts (`ksched schema`); markdown: a "
    "summary and <details> for a pull-request comment or $GITHUB_STEP_SUMMARY (docs/reports.md).",
)
DetailOpt = typer.Option(
    Detail.compact,
    "--detail",
    help="json / yaml: compact: per pod the verdict, node, score, message, preemption, node groups and failing "
    "plugins; full: also every node's filter statuses and scores, the breakdowns and the plugins' details.",
)
ReportOpt = typer.Option(
    None,
    "--report",
    metavar="FILE.html",
    help="Also write a self-contained HTML report with charts (utilization per zone and pool, and the "
    "command's own): static SVG, no script, nothing loaded when opened. Needs pip install 'ksched[report]' "
    "(docs/reports.md).",
)
SeedOpt = typer.Option(
    None,
    "--seed",
    help="Pick among tied top nodes as kube-scheduler's reservoir sampling "
    "would, with this seed (default: the first by name).",
)
PreemptionSamplingOpt = typer.Option(
    False,
    "--preemption-sampling",
    help="Bound preemption's dry run as kube-scheduler does: from a random offset (seeded by --seed, "
    "default 0), stop once minCandidateNodesPercentage / minCandidateNodesAbsolute candidates are found "
    "(default: every potential node is tried; docs/preemption-sampling.md).",
)
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
AsBoundOpt = typer.Option(
    False,
    "--as-bound",
    help="A bound pod given as a file (spec.nodeName set, as `kubectl get pod -o yaml` prints a running "
    "pod) is taken literally: its node alone passes NodeName. Without it, such a pod is scheduled as if "
    "created again now: spec.nodeName and status dropped, its running copy taken out of the snapshot.",
)
ProfileOpt = typer.Option(
    None,
    "--profile",
    metavar="NAME",
    autocompletion=complete_profile,
    help="Use this profile instead of the pod's spec.schedulerName.",
)


class PodChoice(NamedTuple):
    """The one pod a command explains: `ref`, a file or a pending pod of the snapshot by name; of a
    workload, its new pod `replica` (`replicas`: how many it makes)."""

    ref: Any  # session.PodRef
    replicas: int | None
    replica: int
    profile: str | None
    as_bound: bool


def pod_flags(help_text: str) -> Callable:
    """POD, -f FILE, -n NAMESPACE, --replicas, --replica, --profile and --as-bound, handed to the
    command as `pod: PodChoice`."""
    params = [
        _opt("pod", str | None, typer.Argument(None, metavar="POD", autocompletion=complete_pod, help=help_text)),
        _opt(
            "filename",
            str | None,
            typer.Option(None, "--filename", "-f", metavar="FILE", help="The pod's file ('-' for stdin)."),
        ),
        _opt(
            "namespace",
            str | None,
            typer.Option(None, "--namespace", "-n", metavar="NS", help="The namespace of a pod given by NAME."),
        ),
        _opt("replicas", int | None, ReplicasOpt),
        _opt("replica", int, ReplicaOpt),
        _opt("profile", str | None, ProfileOpt),
        _opt("as_bound", bool, AsBoundOpt),
    ]

    def build(
        pod: str | None,
        filename: str | None,
        namespace: str | None,
        replicas: int | None,
        replica: int,
        profile: str | None,
        as_bound: bool,
    ) -> Any:
        from ..session import pod_ref

        return PodChoice(pod_ref(pod, filename, namespace), replicas, replica, profile, as_bound)

    return option_group("pod", params, build)


PODS_EXIT_STATUS = """

    Exit status: 0 schedulable, 1 not (needing preemption counts as not, unless
    --allow-preemption), 2 bad input or usage.
    """


def pods_exit_status(fn: Callable) -> Callable:
    """The exit status of the commands about pods, at the end of the command's help."""
    fn.__doc__ = (fn.__doc__ or "").rstrip() + PODS_EXIT_STATUS
    return fn
