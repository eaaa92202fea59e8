"""ksched's public API: a `Session` over one cluster source, asked the questions the command line
answers. The `ksched` command is a thin layer over it (kschedcli/cli/).

    >>> from kschedcli import Session
    >>> s = Session("fixtures/small-cluster.yaml")
    >>> e = s.explain("fixtures/pods/web.yaml")
    >>> e.verdict, e.node
    ('schedulable', 'node-b')
    >>> e.to_dict()["selectedNode"], e.to_dict()["feasibleNodes"]
    ('node-b', ['node-a', 'node-b'])

A session reads its inputs when first asked, and reads them again for each later question that
would see a cluster an earlier one changed (a sequence binds its pods): every question starts from
the cluster as the source has it, with the session's edits applied. A session over stdin ('-')
answers one question. Every option is an argument of the session or of the question: nothing is
read from module-level state, so two sessions with other options live side by side.

Each answer is a typed object whose `to_dict()` is exactly what `ksched ... -o json` prints, and
whose `exit_code()` is the command's exit status. Bad input raises `kschedcli.InputError`, whose
text is the one line the command prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .errors import InputError
from .inputs.sources import PodRef, pod_ref, pods_source  # how the command line names pods, for the CLI

if TYPE_CHECKING:
    from .api.model import Pod
    from .config.scheduler import SchedulerConfig
    from .framework.result import CycleResult
    from .inputs.cluster import Cluster
    from .whatif.autoscaler import ExpanderChoice, ScaleUpReport
    from .whatif.capacity import CapacityReport, Template
    from .whatif.carryout import CarriedOutRun
    from .whatif.diff import DiffReport
    from .whatif.drain import DrainReport
    from .whatif.edits import Applied, Edit
    from .whatif.fixes.model import Suggestion
    from .whatif.scaledown import ScaleDownReport
    from .whatif.sweep import SweepPlan
    from .whatif.world import World
    from .workloads.results import Expansion

__all__ = [
    "Capacity",
    "ClusterSource",
    "Diff",
    "Drain",
    "Edit",
    "Explanation",
    "Options",
    "ScheduleRun",
    "Session",
    "Sweep",
    "PodRef",
    "pod_ref",
    "pods_source",
]

Messages = Callable[[str], None]
Detail = Literal["compact", "full"]


@dataclass(frozen=True)
class ClusterSource:
    """Where the cluster comes from: snapshot files (as `kubectl get ... -o yaml|json` prints them,
    '-' for stdin), or with no files the live cluster the user's kubectl points at (`context`,
    `kubeconfig`; `save_snapshot` keeps what kubectl read)."""

    files: tuple[str, ...] = ()
    context: str | None = None
    kubeconfig: str | None = None
    save_snapshot: str | None = None
    request_timeout: str = "30s"

    def __post_init__(self) -> None:
        # a lone file is a source of one file (never its characters)
        files = self.files
        files = _strs_arg("ClusterSource: files", files, paths=True)
        object.__setattr__(self, "files", tuple(files))
        for name in ("context", "kubeconfig", "save_snapshot"):
            value = getattr(self, name)
            if name != "context":
                value = _path_arg(f"ClusterSource: {name}", value, optional=True)
                object.__setattr__(self, name, value)
            else:
                _str_arg(f"ClusterSource: {name}", value)
        _str_arg("ClusterSource: request_timeout", self.request_timeout, optional=False)

    @classmethod
    def of(cls, value: ClusterSource | str | os.PathLike | Iterable[str | os.PathLike] | None) -> ClusterSource:
        """A source from what a caller has at hand: a source, a file, a list of files, or None for
        the live cluster."""
        if isinstance(value, ClusterSource):
            return value
        if value is None:
            return cls()
        return cls(tuple(_strs_arg("the cluster", value, paths=True)))

    @property
    def is_live(self) -> bool:
        return not self.files


@dataclass(frozen=True)
class Options:
    """What a session reads besides the cluster, and how. `config`: a KubeSchedulerConfiguration
    file (None: kube-scheduler's defaults); `profile`: the profile every pod is scheduled with
    (None: each pod's spec.schedulerName); `kubernetes_version`: the release to follow (None: the
    cluster's); `edits`: cluster edits applied in order; `no_extenders`: the config's HTTP
    extenders left out; `validate`: strict, warn or ignore, for the files a person writes;
    `cache`: use the cache of parsed snapshots; `verbose`: say what was read and ignored."""

    config: str | None = None
    profile: str | None = None
    kubernetes_version: str | None = None
    edits: tuple[Edit, ...] = ()
    no_extenders: bool = False
    validate: str = "strict"
    cache: bool = True
    verbose: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "config", _path_arg("Options: config", self.config, optional=True))
        for name in ("profile", "kubernetes_version"):
            _str_arg(f"Options: {name}", getattr(self, name))
        _str_arg("Options: validate", self.validate, optional=False)
        edits = () if self.edits is None else self.edits
        if isinstance(edits, str | bytes) or not isinstance(edits, Iterable):
            raise TypeError(f"Options: edits: expected a sequence of Edit (edits_from_flags), not {_type_name(edits)}")
        edits = tuple(edits)
        if edits:
            from .whatif.edits import Edit

            for e in edits:
                if not isinstance(e, Edit):
                    raise TypeError(f"Options: edits: expected Edit objects (edits_from_flags), found {_type_name(e)}")
        object.__setattr__(self, "edits", edits)


def _stderr(line: str) -> None:
    import sys

    print(line, file=sys.stderr)


def exit_code_of(results: Iterable[CycleResult], allow_preemption: bool = False) -> int:
    """0 when every result is schedulable (or, with `allow_preemption`, placed by preemption), 1
    when one is not, 2 when a pod named a profile the config does not have."""
    from .scheduling.analysis import verdict_of

    code = 0
    for r in results:
        if r.error and not r.schedulable and r.error.startswith("no profile"):
            return 2
        v = verdict_of(r)
        if v == "schedulable" or (v == "preemption" and allow_preemption):
            continue
        code = 1
    return code


@dataclass
class Explanation:
    """One pod's cycle, explained (`explain`, `preempt`). `world`: the cluster, config and
    scheduler it ran in; `before`: a workload's earlier replicas, bound first."""

    result: CycleResult
    world: World
    before: list[Pod] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """schedulable, preemption or unschedulable."""
        from .scheduling.analysis import verdict_of

        return verdict_of(self.result)

    @property
    def node(self) -> str | None:
        """The node kube-scheduler would bind the pod to (None when it does not fit)."""
        return self.result.selected_node

    @property
    def suggestions(self) -> list[Suggestion] | None:
        return self.result.suggestions

    def to_dict(self) -> dict[str, Any]:
        """`explain -o json`."""
        from .render.document import explain_doc

        return explain_doc(self.result, self.world.edits, self.world.version)

    def exit_code(self, allow_preemption: bool = False) -> int:
        return exit_code_of([self.result], allow_preemption)

    def utilization(self) -> dict[str, Any]:
        """Requested against allocatable per node in the cluster the pod was explained in
        (whatif/utilization.py): what `--report` draws."""
        from .whatif.utilization import node_usage

        return node_usage(self.world.scheduler.snapshot.list())


@dataclass
class ScheduleRun:
    """Pods scheduled in turn, each bound before the next (`schedule`, `run`). `expansion`: the
    workloads the pods came from (None for pods of the snapshot); `carried_out`: the run with
    preemption carried out, when asked."""

    results: list[CycleResult]
    world: World
    expansion: Expansion | None = None
    carried_out: CarriedOutRun | None = None
    detail: Detail = "compact"

    def workloads(self) -> list[dict] | None:
        """The results grouped by workload; None when no workload was given."""
        if self.expansion is None or not self.expansion.workloads:
            return None
        from .workloads.expansion import summarize

        return summarize(self.expansion, self.results)

    def to_dict(self) -> dict[str, Any]:
        """`schedule -o json` (with --detail as the run was asked)."""
        from .render.document import carried_out_doc, run_doc

        doc = run_doc(self.results, self.world.edits, self.world.version, self.detail)
        doc.update(self.to_dict_tail())
        if self.carried_out is not None:
            return {**doc, **carried_out_doc(self.carried_out)}
        summary = self.workloads()
        if summary is not None:
            doc["workloads"] = summary
        return doc

    def to_dict_tail(self) -> dict[str, Any]:
        """What the document holds after `results` besides the workloads: the run's node
        sampling (`sampling`), when it sampled."""
        sampling = self.world.scheduler.sampling
        if sampling is None:
            return {}
        return {"sampling": sampling.run_doc(self.world.config.parallelism)}

    def exit_code(self, allow_preemption: bool = False) -> int:
        if self.carried_out is None:
            return exit_code_of(self.results, allow_preemption)
        last = {r.pod.uid: r for r in self.carried_out.results}
        code = exit_code_of(list(last.values()), allow_preemption)
        if code == 0 and not all(p.node for p in self.carried_out.placements):
            code = 1  # bound, then evicted by a later preemption
        return code


@dataclass
class Capacity:
    """How many more copies of each template fit (`capacity`)."""

    report: CapacityReport
    world: World
    stop_docs: dict[int, dict] = field(default_factory=dict)

    @property
    def replicas(self) -> int:
        return self.report.replicas

    def to_dict(self) -> dict[str, Any]:
        from .render.document import version_fields
        from .whatif.capacity import capacity_doc

        return {
            **version_fields(self.world.version),
            **({"edits": [a.doc() for a in self.world.edits]} if self.world.edits else {}),
            **capacity_doc(self.report, lambda r: self.stop_docs.get(id(r))),
        }

    def exit_code(self, min_copies: int | None = None) -> int:
        return 1 if min_copies is not None and self.report.replicas < min_copies else 0

    def utilization(self) -> dict[str, Any]:
        """Requested against allocatable per node with the copies that fit bound, each node's
        values of the labels copies are counted by (`--report`)."""
        from .whatif.utilization import node_usage

        return node_usage(self.world.scheduler.snapshot.list(), self.report.group_labels)


def _world_doc(world: World, body: dict[str, Any]) -> dict[str, Any]:
    """A document: the versions, the cluster edits applied (when any), then the answer's own fields."""
    from .render.document import version_fields

    edits = {"edits": [a.doc() for a in world.edits]} if world.edits else {}
    return {**version_fields(world.version), **edits, **body}


@dataclass
class ScaleUp:
    """What cluster-autoscaler's scale-up would do for the pods (`scale-up`)."""

    report: ScaleUpReport
    world: World
    chain: ExpanderChoice | None = None  # --expander a,b: the chain's answer

    def to_dict(self) -> dict[str, Any]:
        from .whatif.autoscaler import scale_up_doc

        return _world_doc(self.world, scale_up_doc(self.report, self.chain))

    def exit_code(self) -> int:
        """0 when every pod is placed (on an existing node or a new one), else 1."""
        return 0 if self.report.all_placed else 1

    def utilization(self) -> dict[str, Any]:
        """Requested against allocatable per existing node before the scale-up (`--report`)."""
        from .whatif.utilization import node_usage

        return node_usage(self.world.scheduler.snapshot.list())


@dataclass
class ScaleDown:
    """The nodes cluster-autoscaler's scale-down would find unneeded (`scale-down`)."""

    report: ScaleDownReport
    world: World

    def to_dict(self) -> dict[str, Any]:
        from .whatif.scaledown import scale_down_doc

        return _world_doc(self.world, scale_down_doc(self.report))

    def exit_code(self) -> int:
        """0 when no node can be removed (nothing for cluster-autoscaler to take away), 1 when some
        can, as issue 32 asks: a CI gate fails on capacity to reclaim."""
        return 1 if self.report.removable else 0


@dataclass
class Drain:
    """Whether nodes can be drained and where their pods go (`drain`)."""

    report: DrainReport
    cluster: Cluster
    edits: list[Applied]
    allow_preemption: bool = False

    def to_dict(self) -> dict[str, Any]:
        from .render.document import version_fields
        from .render.drain import drain_doc

        return {**drain_doc(self.report, self.edits, self.allow_preemption), **version_fields(self.cluster.version)}

    def exit_code(self) -> int:
        return 0 if self.report.drainable(self.allow_preemption) else 1


@dataclass
class Diff:
    """The same pods in two worlds (`diff`)."""

    report: DiffReport
    cluster: Cluster  # world A's
    edits: list[Applied]  # applied to world B

    def to_dict(self) -> dict[str, Any]:
        from .render.diff import diff_doc
        from .render.document import version_fields

        return {**diff_doc(self.report, self.edits), **version_fields(self.cluster.version)}

    def exit_code(self) -> int:
        return 0 if self.report.same else 1

    def utilization(self) -> dict[str, dict[str, Any]]:
        """Requested against allocatable per node in world A (`a`) and world B (`b`) after their
        runs (`--report`)."""
        from .whatif.utilization import node_usage

        return {"a": node_usage(self.report.a.node_infos), "b": node_usage(self.report.b.node_infos)}


@dataclass
class Sweep:
    """Scenarios of failure (a node, a zone, K nodes) or of a rolling upgrade over one cluster
    (`sweep`): each scenario's findings (`scenarios`, plain documents in a stable order) and the
    summary (verdict, worst scenarios first, each workload's worst exposure)."""

    plan: SweepPlan
    scenarios: list[dict[str, Any]]
    summary: dict[str, Any]
    cluster: Cluster
    edits: list[Applied]

    @property
    def safe(self) -> bool:
        return bool(self.summary["safe"])

    def to_dict(self) -> dict[str, Any]:
        """`sweep -o json`."""
        from .render.document import version_fields

        doc: dict[str, Any] = {"scenarios": self.scenarios, "summary": self.summary}
        if self.edits:
            doc["edits"] = [a.doc() for a in self.edits]
        return {**doc, **version_fields(self.cluster.version)}

    def exit_code(self) -> int:
        """0 when every scenario keeps every pod running, 1 when one does not."""
        return 0 if self.safe else 1

    def utilization(self) -> dict[str, Any]:
        """Requested against allocatable per node in the cluster before any scenario (`--report`)."""
        from .whatif.utilization import cluster_usage

        return cluster_usage(self.cluster)


class Session:
    """Questions about one cluster, as kube-scheduler would answer them.

    `cluster`: a ClusterSource, a snapshot file, or a list of them (None: the live cluster
    kubectl points at). The keyword arguments are those of `Options` (or pass `options=`).
    `messages` receives what the command line prints on stderr: validation warnings, and with
    `verbose` what was read and ignored (default: written to stderr)."""

    def __init__(
        self,
        cluster: ClusterSource | str | os.PathLike | Iterable[str | os.PathLike] | None = None,
        *,
        options: Options | None = None,
        messages: Messages | None = None,
        **kwargs: Any,
    ) -> None:
        if options is not None and kwargs:
            raise TypeError("give the options either as options= or as keyword arguments, not both")
        if options is not None and not isinstance(options, Options):
            raise TypeError(f"Session: options: expected an Options or None, not {_type_name(options)}")
        self.source = ClusterSource.of(cluster)
        self.options = options or Options(**kwargs)
        self.messages: Messages = _callable_arg("Session: messages", messages) or _stderr
        self._files: list[str] | None = None  # the snapshot files (the live cluster's, once read)
        self._warned: set[str] = set()  # release warnings said (once a session)
        self._reads = 0

    # -- inputs -----------------------------------------------------------------------------------

    def _validation(self) -> tuple[str, list[str]]:
        """(mode, warnings) for the files a person writes; each warning reaches `messages` once."""
        from .api.validation import validate_mode

        say = self.messages

        class _Warnings(list):
            def append(self, line: str) -> None:
                if line not in self:
                    super().append(line)
                    say(line)

        return validate_mode(self.options.validate), _Warnings()

    def _validating(self):
        """Within: every file the question reads is validated with this session's mode; with
        `verbose`, an API server's object whose unknown fields were not read is named."""
        from .api.validation import validating_user_files

        mode, warnings = self._validation()
        return validating_user_files(mode, warnings, self.messages if self.options.verbose else None)

    def files(self) -> list[str]:
        """The snapshot files: the source's, or one holding what kubectl read from the live
        cluster (read once per session)."""
        if self._files is None:
            from .inputs.sources import cluster_files

            s = self.source
            self._files = cluster_files(
                list(s.files) or None, s.context, s.kubeconfig, s.request_timeout, s.save_snapshot, self.options.verbose
            )
        return self._files

    def _stdin_once(self, *named: tuple[str, str | None], files: Iterable[str] | None = None) -> None:
        """Refuse stdin (`-`) named for two inputs, naming the two: the question's own (`named`:
        (option, path) pairs: PODS, --node-groups, --against-cluster, ...) and this session's: its
        snapshot files (`files`, default its source's), --config and an --add-node file (`@-`).
        The one check of every command that can read `-`; the two named in command-line order
        (arguments, then --cluster, --config and the edits, then the question's other flags)."""
        from .loader import read_once_check

        o = self.options
        added: list[tuple[str, str | None]] = []
        if any(e.flag == "--add-node" for e in o.edits):
            from .whatif.edits import add_node_file  # (only then: a plain run does not load the edits)

            added = [
                (e.flag, add_node_file(e.value, exists=lambda _: False)) for e in o.edits if e.flag == "--add-node"
            ]
        cluster = self.source.files if files is None else files
        own = [*(("--cluster", c) for c in cluster), ("--config", o.config), *added]
        # named as the command line reads: arguments (PODS), the world's flags, the question's flags
        args = [n for n in named if not n[0].startswith("-")]
        read_once_check([*args, *own, *(n for n in named if n[0].startswith("-"))])

    def _inputs(self, *named: tuple[str, str | None]) -> tuple[Cluster, SchedulerConfig, list[Applied]]:
        """The cluster read (again for each question: an earlier one may have changed it), the
        config read and the session's edits applied (whatif.world.load_inputs). `named`: the
        question's other inputs that can be stdin (see _stdin_once)."""
        from .inputs.sources import server_version
        from .whatif.world import load_inputs

        files = self.files()
        if "-" in files and self._reads:
            raise InputError("stdin was read by an earlier question of this session", source="-")
        self._stdin_once(*named, files=files)
        o = self.options
        loaded = load_inputs(
            list(files),
            o.config,
            list(o.edits) or None,
            o.kubernetes_version,
            server_version(files),
            no_extenders=o.no_extenders,
            cache=o.cache,
        )
        self._reads += 1
        if o.verbose:
            for line in _load_report(loaded[0]):
                self.messages(line)
        self._warn_release(loaded[0].version)
        if not loaded[0].nodes:
            self._warn_no_nodes(list(files))
        return loaded

    def _warn_no_nodes(self, files: list[str]) -> None:
        """A snapshot without a Node (a file of pods only, a `kubectl get pods` export): every pod
        is unschedulable, as kube-scheduler says, and one warning says why before the answer."""
        from .errors import SOURCE_LABELS

        live = bool(files) and all(SOURCE_LABELS.get(f) for f in files)
        warning = f"no Node in the snapshot ({_source_name(files)}): every pod is unschedulable" + (
            " (--add-node adds one)"
            if live
            else " (`kubectl get nodes,pods -A -o yaml` exports both; --add-node adds one)"
        )
        self._warn_once(warning)

    def _warn_release(self, choice: Any) -> None:
        """The cluster runs a release ksched does not reproduce: said before any answer (once a
        session), as the JSON's kubernetesVersionChosenBy.warning says it."""
        warning = getattr(choice, "warning", None)
        if warning:
            self._warn_once(warning)

    def _warn_once(self, warning: str) -> None:
        """`ksched: warning: ...` on stderr, once a session (and its sub-sessions) for each text."""
        if warning not in self._warned:
            self._warned.add(warning)
            self.messages(f"ksched: warning: {warning}")

    def _sub(self, source: ClusterSource, options: Options) -> Session:
        """A session this one opens for part of a question (diff's two worlds, a scenario's own):
        its messages, and its warnings said once with this one's."""
        sub = Session(source, options=options, messages=self.messages)
        sub._warned = self._warned
        return sub

    def _load(self, *named: tuple[str, str | None]) -> World:
        """The world a question starts from: its inputs (`named`: the question's own, see
        _stdin_once), and the scheduler built over them."""
        from .scheduling.scheduler import Scheduler
        from .whatif.world import World

        cluster, config, applied = self._inputs(*named)
        world = World(cluster, config, Scheduler(cluster, config), applied)
        unplaced = world.scheduler.snapshot.unplaced_pods
        if unplaced and cluster.nodes:
            self._warn_unplaced(unplaced)
        return world

    def _warn_unplaced(self, unplaced: list[Pod]) -> None:
        """Bound pods whose node the snapshot does not hold (nodes and pods exported from two
        clusters, or at two times): kube-scheduler counts them on no node, and one warning says so."""
        first = unplaced[0]
        warning = (
            f"{len(unplaced):,} bound pod{'s are' if len(unplaced) != 1 else ' is'} on nodes the snapshot does not "
            f"hold (the first, {first.key}, on {first.node_name}): they count on no node, as in kube-scheduler's "
            "cache; were the nodes and the pods exported from the same cluster?"
        )
        self._warn_once(warning)

    def world(self) -> World:
        """The cluster as loaded (edits applied), its config and scheduler, for callers that go
        below the questions; a later question starts again from the source."""
        world = self._load()
        return world

    def _use_profile(self, pods: Iterable[Pod], world: World) -> None:
        profile = self.options.profile
        if profile is None:
            return
        if profile not in world.scheduler.frameworks:
            known = ", ".join(sorted(world.scheduler.frameworks))
            raise InputError(f"no profile named {profile!r} (profiles: {known})", field="--profile")
        for p in pods:
            p.scheduler_name = profile

    # -- questions --------------------------------------------------------------------------------

    def explain(
        self,
        pod: str,
        *,
        is_file: bool = False,
        replicas: int | None = None,
        replica: int = 0,
        node: str | None = None,
        seed: int | None = None,
        fixes: int = 3,
        as_bound: bool = False,
        preemption_sampling: bool = False,
    ) -> Explanation:
        """What kube-scheduler would do with one pod: `pod` is a file ('-' for stdin) holding a Pod
        or one workload (of which new pod `replica` is explained, the ones before it bound first),
        or NAMESPACE/NAME of a pending pod of the snapshot. `node`: a node the caller will look
        at (checked to exist). `fixes`: for a pod that does not fit, the N best verified changes
        that would place it (0: none). A bound Pod (spec.nodeName set, as `kubectl get pod -o yaml`
        prints a running one) is explained as if created again now, unless `as_bound`.
        `preemption_sampling`: bound preemption's dry run as kube-scheduler does, its offset
        seeded by `seed` (docs/preemption-sampling.md); by default every potential node is tried."""
        what = "Session.explain"
        pod = _path_arg(f"{what}: pod", pod)
        replicas = _replicas_arg(f"{what}: replicas", replicas)
        _int_arg(f"{what}: replica", replica, "--replica", low=0)
        _str_arg(f"{what}: node", node)
        _int_arg(f"{what}: seed", seed, "--seed", optional=True)
        _int_arg(f"{what}: fixes", fixes, "--fixes", low=0)
        with self._validating():
            world = self._load(("POD", pod))
            if preemption_sampling:
                world.scheduler.enable_preemption_sampling(seed or 0)
            p, before = self._one_pod(pod, world, replicas, replica, is_file, as_bound)
            self._use_profile((*before, p), world)
            if node is not None and world.scheduler.snapshot.get(node) is None:
                raise InputError(f"no node named {node!r} in the snapshot", field="--node")
            if before:
                world.scheduler.run_sequence(before, seed, keep=False)
            result = world.scheduler.schedule(p, seed)
            result.input_unbound = world.input_unbound
            last = world.scheduler.last_scored
            if last is not None and result.schedulable:
                from .scheduling.sampling import outlook

                result.sampling_outlook = outlook(world.scheduler, result, *last)
                if result.sampling_outlook is not None:
                    result.sampling_outlook.pop("spans", None)  # per start index: for tests
            from .scheduling.analysis import annotate

            annotate(result, world)
            world.before = before
            explanation = Explanation(result, world, before)
            if fixes:
                self._suggest(explanation, fixes, seed)
        return explanation

    def preempt(
        self, pod: str, *, is_file: bool = False, replicas: int | None = None, replica: int = 0, as_bound: bool = False
    ) -> Explanation:
        """What preemption would evict for this pod, and where (explain without fixes)."""
        return self.explain(pod, is_file=is_file, replicas=replicas, replica=replica, fixes=0, as_bound=as_bound)

    def fixes(self, explanation: Explanation, n: int = 3, seed: int | None = None) -> list[Suggestion]:
        """The `n` best changes to the pod or the cluster that would place an explained pod, each
        verified by a cycle (empty when it fits)."""
        if not isinstance(explanation, Explanation):
            raise TypeError(f"Session.fixes: explanation: expected an Explanation, not {_type_name(explanation)}")
        _int_arg("Session.fixes: n", n, "--fixes", low=0)
        _int_arg("Session.fixes: seed", seed, "--seed", optional=True)
        self._suggest(explanation, n, seed)
        return explanation.result.suggestions or []

    def _suggest(self, explanation: Explanation, n: int, seed: int | None) -> None:
        if not n or explanation.result.schedulable:  # a pod that fits needs no fix (nor their module)
            return
        from .whatif.fixes.model import needs_fixing

        if needs_fixing(explanation.result):
            from .whatif.fixes.search import find_fixes

            w = explanation.world
            explanation.result.suggestions = find_fixes(
                w, explanation.result, n, seed=seed, before=explanation.before, given_kind=w.given_kind
            )

    def _unbound(self, p: Pod, source: str, world: World) -> Pod:
        """A bound pod given as input (spec.nodeName set: a running pod's export) as if created again
        now (_recreated); one message says so, and the result's `input.unbound` (world.input_unbound)."""
        fresh, unbound, held_on = self._recreated(p, source, world)
        world.input_unbound = unbound
        where = f"on {held_on}, taken out of the snapshot" if held_on is not None else "not in the snapshot"
        self.messages(
            f"ksched: {source}: Pod {p.key} is bound to {unbound['nodeName']}: explained as if created again now "
            f"(spec.nodeName and status dropped; the pod is {where}); --as-bound takes it as it is"
        )
        return fresh

    @staticmethod
    def _recreated(p: Pod, source: str, world: World) -> tuple[Pod, dict, str | None]:
        """A bound pod given as input as if created again now: spec.nodeName, status and with it
        status.nominatedNodeName dropped, and the pod itself (same namespace/name, or uid) taken out
        of the snapshot so that it is not counted twice. Returns the new pod, what `input.unbound`
        says of it and the node it was taken off (None: not in the snapshot)."""
        import copy

        raw = copy.deepcopy(p.raw)
        spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else {}
        node_name = spec.pop("nodeName", None) or p.node_name
        status = raw.pop("status", None)
        nominated = status.get("nominatedNodeName") if isinstance(status, dict) else None
        fresh = world.cluster.parse_pod(raw, source, f"Pod {p.key}")
        meta = p.raw.get("metadata") if isinstance(p.raw.get("metadata"), dict) else {}
        uid = meta.get("uid") or None
        snapshot = world.scheduler.snapshot
        held = None
        first = snapshot.get(node_name)
        for ni in ([first] if first is not None else []) + [ni for ni in snapshot.list() if ni is not first]:
            held = next((q for q in ni.pods if q.key == p.key or (uid is not None and q.uid == uid)), None)
            if held is not None:
                break
        if held is not None:
            snapshot.evict(held)
        unbound = {
            "nodeName": node_name,
            "nominatedNodeName": nominated or None,
            "removedFromSnapshot": held is not None,
        }
        return fresh, unbound, None if held is None else held.node_name

    def _one_pod(
        self, pod: str, world: World, replicas: int | None, replica: int, is_file: bool, as_bound: bool = False
    ) -> tuple[Pod, list[Pod]]:
        """POD is a file ('-' for stdin) or the name of a pending pod in the snapshot. A file holds one
        Pod or one workload; of a workload, its new pod number `replica` (the ones before it are
        returned too, to be scheduled and bound first, as the controller creates them in turn)."""
        if is_file or pod == "-" or os.path.exists(pod):
            from .workloads.expansion import load_workloads

            ex = load_workloads(pod, world.cluster, replicas=replicas, validation=self._validation())
            units = len(ex.workloads) + sum(1 for p in ex.pods if ex.workload_of(p) is None)
            if units != 1:
                raise InputError(
                    f"expected one Pod or workload, found {units} (use `ksched schedule` for several)", source=pod
                )
            if not ex.workloads:
                if replica:
                    raise InputError("a Pod has no other replica", field="--replica")
                if ex.pods[0].node_name and not as_bound:
                    return self._unbound(ex.pods[0], pod, world), []
                return ex.pods[0], []
            w = ex.workloads[0]
            world.given_kind = w.kind
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
        from .inputs.lookup import find_pending_pod

        obj, path, where = find_pending_pod(list(self.files()), pod, world.cluster.pending_pods())
        return world.cluster.parse_pod(obj, path, where), []

    def schedule(
        self,
        pods: str | None = None,
        *,
        namespace: str | None = None,
        order: Literal["priority", "file"] = "priority",
        replicas: int | None = None,
        seed: int | None = None,
        preemption: Literal["report", "carry-out"] = "report",
        detail: Detail = "compact",
        analysis: frozenset[str] | None = None,
        on_start: Callable[[World], None] | None = None,
        on_result: Callable[[CycleResult], None] | None = None,
        keep: bool = True,
        sampling: bool = False,
        start_index: int = 0,
        preemption_sampling: bool = False,
        as_bound: bool = False,
    ) -> ScheduleRun:
        """Several pods in turn, each bound to its node before the next: those of the file `pods`
        (Pods and workloads, '-' for stdin; workloads become the pods their controllers would
        create), else the pending pods of the snapshot (of `namespace`, or all). A bound Pod of the
        file (spec.nodeName set: a running pod's export) is scheduled as if created again now, as
        `explain` takes it (its `input.unbound` says so), unless `as_bound`. `order`: priority
        (as PrioritySort orders the queue) or file. `preemption`: report (victims reported, the
        cluster left as it was) or carry-out (victims deleted, the preemptor retried).
        `analysis`: the parts of each result's analysis to compute (default: what `to_dict` at
        `detail` shows); `on_start` sees the world before the first cycle, `on_result` each result
        as it is decided; `keep=False` keeps in the run only the slimmed results (for callers that
        stream them). `sampling`: sample nodes as kube-scheduler does on clusters of 100 nodes or
        more (docs/sampling.md), its next start index at `start_index` before the first cycle.
        `preemption_sampling`: bound preemption's dry runs as kube-scheduler does, their offsets
        drawn from a source seeded by `seed` (docs/preemption-sampling.md)."""
        what = "Session.schedule"
        pods = _path_arg(f"{what}: pods", pods, optional=True)
        _str_arg(f"{what}: namespace", namespace)
        _choice_arg(f"{what}: order", order, "--order", ORDERS)
        replicas = _replicas_arg(f"{what}: replicas", replicas)
        _int_arg(f"{what}: seed", seed, "--seed", optional=True)
        _choice_arg(f"{what}: preemption", preemption, "--preemption", PREEMPTION_MODES)
        _choice_arg(f"{what}: detail", detail, "--detail", DETAILS)
        _callable_arg(f"{what}: on_start", on_start)
        _callable_arg(f"{what}: on_result", on_result)
        _int_arg(f"{what}: start_index", start_index, "--start-index")
        with self._validating():
            world = self._load(("PODS", pods))
            pod_list, expansion = self._pods(pods, namespace, replicas, world)
            unbound = self._recreate_bound(pod_list, expansion, pods, world) if expansion and not as_bound else {}
            if sampling:
                self._sample(world, start_index)
            if preemption_sampling:
                world.scheduler.enable_preemption_sampling(seed or 0)
            return self._run(
                world,
                pod_list,
                expansion,
                order,
                seed,
                preemption,
                detail,
                analysis,
                on_start,
                on_result,
                keep,
                unbound,
            )

    def _recreate_bound(
        self, pod_list: list[Pod], expansion: Expansion, source: str | None, world: World
    ) -> dict[str, dict]:
        """The bound Pods of a file to schedule, as if created again now (_recreated), in place in
        `pod_list` and the expansion; one message says so. Returns each one's `input.unbound` by pod key."""
        unbound: dict[str, dict] = {}
        held_on: list[str] = []
        for i, p in enumerate(pod_list):
            if p.node_name and expansion.workload_of(p) is None:
                fresh, unbound[p.key], node = self._recreated(p, source or "-", world)
                pod_list[i] = fresh
                if node is not None:
                    held_on.append(node)
        if unbound:
            expansion.pods = list(pod_list)
            first = next(iter(unbound))
            if len(unbound) == 1:
                where = f"on {held_on[0]}, taken out of the snapshot" if held_on else "not in the snapshot"
                self.messages(
                    f"ksched: {source}: Pod {first} is bound to {unbound[first]['nodeName']}: scheduled as if created "
                    f"again now (spec.nodeName and status dropped; the pod is {where}); --as-bound takes it as it is"
                )
            else:
                taken = (
                    "each taken out of the snapshot"
                    if len(held_on) == len(unbound)
                    else f"{len(held_on)} of them taken out of the snapshot"
                )
                self.messages(
                    f"ksched: {source}: {len(unbound)} Pods are bound (spec.nodeName set; the first, {first}, to "
                    f"{unbound[first]['nodeName']}): scheduled as if created again now (spec.nodeName and status "
                    f"dropped; {taken}); --as-bound takes them as they are"
                )
        return unbound

    def run_scenario(
        self,
        scenario: str,
        *,
        seed: int | None = None,
        detail: Detail = "compact",
        analysis: frozenset[str] | None = None,
        on_start: Callable[[World], None] | None = None,
        on_result: Callable[[CycleResult], None] | None = None,
        keep: bool = True,
    ) -> ScheduleRun:
        """A scenario file (`ksched schema --scenario`): its snapshot (unless this session names
        files) and config, its cluster edits in order, then its pods (or the snapshot's pending
        pods) scheduled in turn."""
        from .whatif.scenario import load_scenario, scenario_pods

        what = "Session.run_scenario"
        scenario = _path_arg(f"{what}: scenario", scenario)
        _int_arg(f"{what}: seed", seed, "--seed", optional=True)
        _choice_arg(f"{what}: detail", detail, "--detail", DETAILS)
        _callable_arg(f"{what}: on_start", on_start)
        _callable_arg(f"{what}: on_result", on_result)
        self._stdin_once(("SCENARIO", scenario))
        with self._validating():
            sc = load_scenario(scenario)
            o = self.options
            s = self.source
            # the scenario's snapshot, unless this session names files or the live cluster
            own = s.files or s.context or s.kubeconfig or s.save_snapshot or not sc.cluster
            if scenario == "-":  # what the scenario read from stdin names `-`: its fields
                from .loader import read_once_check
                from .whatif.edits import add_node_file

                read_once_check(
                    [
                        ("SCENARIO", scenario),
                        *(("the scenario's cluster", c) for c in (() if own else sc.cluster)),
                        ("the scenario's config", sc.config),
                        *(
                            ("the scenario's --add-node", add_node_file(e.value, exists=lambda _: False))
                            for e in sc.edits
                            if e.flag == "--add-node"
                        ),
                    ]
                )
            sub = self._sub(
                s if own else ClusterSource(tuple(sc.cluster), request_timeout=s.request_timeout),
                Options(
                    sc.config,
                    o.profile,
                    o.kubernetes_version or sc.kubernetes_version,
                    tuple(sc.edits),
                    o.no_extenders,
                    o.validate,
                    o.cache,
                    o.verbose,
                ),
            )
            sub.files()  # the live cluster's flags are checked and read as the command line gives them
            try:
                world = sub._load()
            except InputError as e:
                raise e.located(source=scenario) from None
            expansion = scenario_pods(sc, world.cluster)
            if expansion is not None:
                pod_list = expansion.pods
            else:
                found = world.cluster.pending_pods()
                if not found:
                    raise InputError(
                        "the scenario names no pods and the snapshot has no pending pod", source=scenario, field="pods"
                    )
                pod_list = [world.cluster.parse_pod(o_, p, w) for o_, p, w in found]
            if sc.sampling:
                sub._sample(world, sc.start_index)
            return sub._run(
                world, pod_list, expansion, sc.order, seed, "report", detail, analysis, on_start, on_result, keep
            )

    def _sampling_start(self, sampling: bool, start_index: int, *configs: SchedulerConfig) -> int | None:
        """For the questions that build their own schedulers: the start index (None: no sampling),
        the parallelism note said once."""
        if not sampling:
            return None
        if start_index < 0:
            raise InputError(f"must not be negative, got {start_index}", field="--start-index")
        from .scheduling.sampling import PARALLELISM_NOTE

        for c in configs:
            if c.parallelism != 1:
                self.messages(f"ksched: note: {PARALLELISM_NOTE.format(workers=c.parallelism)}")
                break
        return start_index

    def _sample(self, world: World, start_index: int) -> None:
        """Node sampling on for the world's scheduler; with more than one filter worker, say that
        kube-scheduler's own nodes found depend on timing."""
        if start_index < 0:
            raise InputError(f"must not be negative, got {start_index}", field="--start-index")
        world.scheduler.enable_sampling(start_index % max(1, len(world.scheduler.snapshot.names)))
        note = world.scheduler.sampling.note if world.scheduler.sampling is not None else ""
        if note:
            self.messages(f"ksched: note: {note}")

    def _pods(
        self, pods: str | None, namespace: str | None, replicas: int | None, world: World
    ) -> tuple[list[Pod], Expansion | None]:
        if pods is None:
            from .inputs.sources import in_namespace

            found = in_namespace(world.cluster.pending_pods(), namespace)
            if not found:
                where = f"namespace {namespace} of the snapshot" if namespace else "the snapshot"
                raise InputError(f"no PODS file given and no pending pod in {where}", field="PODS")
            found = self._queued(found, world)
            return [world.cluster.parse_pod(o, p, w) for o, p, w in found], None
        from .workloads.expansion import load_workloads

        expansion = load_workloads(pods, world.cluster, replicas=replicas, validation=self._validation())
        if self.options.verbose and expansion.ignored:
            kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(expansion.ignored.items()))
            self.messages(f"ksched: {pods}: ignored kinds that make no pod: {kinds}")
        return expansion.pods, expansion

    def _queued(self, found: list[tuple[dict, str, str]], world: World) -> list[tuple[dict, str, str]]:
        """The snapshot's pending pods kube-scheduler would queue: not those of a scheduler none of
        its profiles is (its informer never hands them over; Options.profile takes them all), nor those
        being deleted (skipPodSchedule). Each group left out is one line on stderr; none left is
        an error."""
        from .config.scheduler import DEFAULT_SCHEDULER

        profiles = world.scheduler.frameworks
        others: dict[str, list[str]] = {}
        deleting: list[str] = []
        kept = []
        for item in found:
            obj = item[0]
            meta = raw_meta if isinstance(raw_meta := obj.get("metadata"), dict) else {}
            spec = raw_spec if isinstance(raw_spec := obj.get("spec"), dict) else {}
            key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
            name = spec.get("schedulerName") or DEFAULT_SCHEDULER
            if self.options.profile is None and isinstance(name, str) and name not in profiles:
                others.setdefault(name, []).append(key)
            elif meta.get("deletionTimestamp") is not None:
                deleting.append(key)
            else:
                kept.append(item)

        def named(keys: list[str]) -> str:
            return ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")

        for name, keys in sorted(others.items()):
            self.messages(
                f"ksched: left {len(keys)} pending pod{'s' * (len(keys) != 1)} to scheduler {name!r}, no profile "
                f"of this configuration (kube-scheduler leaves such pods alone): {named(keys)}"
            )
        if deleting:
            self.messages(
                f"ksched: skipped {len(deleting)} pending pod{'s' * (len(deleting) != 1)} being deleted "
                f"(kube-scheduler does not schedule a pod with a deletionTimestamp): {named(deleting)}"
            )
        if not kept:
            raise InputError("no pending pod of the snapshot is one kube-scheduler would schedule", field="PODS")
        return kept

    def _run(
        self,
        world: World,
        pod_list: list[Pod],
        expansion: Expansion | None,
        order: str,
        seed: int | None,
        preemption: str,
        detail: Detail,
        analysis: frozenset[str] | None,
        on_start: Callable[[World], None] | None,
        on_result: Callable[[CycleResult], None] | None,
        keep: bool,
        unbound: dict[str, dict] | None = None,
    ) -> ScheduleRun:
        """The pods scheduled in turn (`unbound`: by pod key, the `input.unbound` of bound pods given
        as input, scheduled as if created again)."""
        from .scheduling import analysis as an
        from .scheduling.scheduler import queue_sort

        self._use_profile(pod_list, world)
        if order == "priority":
            pod_list = queue_sort(pod_list)
        full = detail == "full"
        if on_start is not None:
            on_start(world)
        if preemption == "carry-out":
            from .whatif.carryout import run_carrying_out

            parts = analysis if analysis is not None else (an.ALL if full else COMPACT_PARTS)

            def explained(r: CycleResult) -> None:
                if unbound:
                    r.input_unbound = unbound.get(r.pod.key)
                an.annotate(r, world, parts)
                if on_result is not None:
                    on_result(r)

            run = run_carrying_out(world.scheduler, pod_list, seed, on_result=explained)
            return ScheduleRun(run.results, world, expansion, run, detail)
        parts = analysis if analysis is not None else (an.ALL if full else COMPACT_PARTS)
        if expansion is not None and any(w.kind == "DaemonSet" for w in expansion.workloads):
            parts = parts | {an.GROUPS}  # the workload summary names each node's failure (workload_results)
        kept: list[CycleResult] = []

        def analysed(r: CycleResult) -> None:
            if unbound:
                r.input_unbound = unbound.get(r.pod.key)
            an.annotate(r, world, parts)
            if on_result is not None:
                on_result(r)
            if not full:
                an.slim(r)  # the summaries need only the verdicts
            if not keep:
                kept.append(r)

        results = world.scheduler.run_sequence(pod_list, seed, on_result=analysed, with_details=full, keep=keep)
        return ScheduleRun(results if keep else kept, world, expansion, None, detail)

    def capacity(
        self,
        templates: Sequence[str],
        *,
        max_copies: int | None = None,
        group_by: Sequence[str] | None = None,
        seed: int | None = None,
        on_stop: Callable[[Template, CycleResult, World], None] | None = None,
        sampling: bool = False,
        start_index: int = 0,
    ) -> Capacity:
        """How many more copies of each template (a file of Pods and workloads, taken in turn) fit:
        copies scheduled one after another, each bound before the next, until one fits nowhere
        (or `max_copies`). Preemption is off. `on_stop` sees each template's copy that did not
        fit, explained, before the next template changes the cluster. `sampling`, `start_index`: node
        sampling as `schedule`'s (the copies placed incrementally as without it: scheduling/sampled_alike.py)."""
        from .render.document import explain_doc
        from .scheduling.analysis import annotate
        from .whatif.capacity import read_templates, run_capacity

        what = "Session.capacity"
        templates = _strs_arg(f"{what}: templates", templates, paths=True)
        _int_arg(f"{what}: max_copies", max_copies, "--max", optional=True, low=0)
        group_by = _strs_arg(f"{what}: group_by", group_by, optional=True)
        _int_arg(f"{what}: seed", seed, "--seed", optional=True)
        _callable_arg(f"{what}: on_stop", on_stop)
        _int_arg(f"{what}: start_index", start_index, "--start-index")
        with self._validating():
            world = self._load(*(("FILE", t) for t in templates))
            if sampling:
                self._sample(world, start_index)
            # the files' Services, PDBs, PriorityClasses, claims, ... join the cluster, as in schedule
            beside: list = []
            parsed = read_templates(list(templates), beside)
            if beside:
                from .workloads.expansion import add_cluster_objects

                add_cluster_objects(world.cluster, beside)
            for t in parsed:
                if t.bound_to is not None:
                    self.messages(
                        f"ksched: {t.source}: {t.label} is bound to {t.bound_to}: its copies are new pods "
                        "(spec.nodeName, status and metadata.uid dropped); the pod itself stays in the snapshot"
                    )
            stop_docs: dict[int, dict] = {}

            def stopped(template: Template, r: CycleResult) -> None:
                # explained now: the next template's copies change the cluster this copy saw
                annotate(r, world)
                stop_docs[id(r)] = explain_doc(r, None, world.version)
                if on_stop is not None:
                    on_stop(template, r, world)

            report = run_capacity(
                world.scheduler,
                parsed,
                max_copies=max_copies,
                seed=seed,
                group_by=list(group_by) if group_by else None,
                on_stop=stopped,
            )
        return Capacity(report, world, stop_docs)

    def scale_up(
        self,
        pods: str | None = None,
        *,
        node_groups: str | None = None,
        expanders: Sequence[str] | None = None,
        namespace: str | None = None,
    ) -> ScaleUp:
        """What cluster-autoscaler (v1.34) would do for these pods (a file of Pods and workloads;
        default: the snapshot's pending pods): those that fit existing nodes placed first, then per
        node group (`node_groups`, a file; default: inferred from the nodes' labels) the
        binpacking estimate, and what each expander would choose. `expanders`: the expanders to
        report (default: all); more than one also reports their chain's answer."""
        from .whatif.autoscaler import (
            EXPANDERS,
            chain_expanders,
            check_expanders,
            infer_node_groups,
            read_node_groups,
            scale_up,
        )

        what = "Session.scale_up"
        pods = _path_arg(f"{what}: pods", pods, optional=True)
        node_groups = _path_arg(f"{what}: node_groups", node_groups, optional=True)
        expanders = _strs_arg(f"{what}: expanders", expanders, optional=True)
        _str_arg(f"{what}: namespace", namespace)
        names = check_expanders(list(expanders)) if expanders else list(EXPANDERS)
        with self._validating():
            world = self._load(("PODS", pods), ("--node-groups", node_groups))
            pod_list, _ = self._pods(pods, namespace, None, world)
            cluster = world.cluster
            groups = read_node_groups(node_groups, cluster) if node_groups else infer_node_groups(cluster)
            report = scale_up(cluster, world.config, pod_list, groups, names, inferred=node_groups is None)
            chain = None
            if expanders and len(names) > 1:
                options = [e for e in report.groups if e.helped and e.new_nodes > 0]
                chain = chain_expanders(options, names, len(cluster.nodes))
        return ScaleUp(report, world, chain)

    def scale_down(self, *, node_groups: str | None = None, threshold: float | None = None) -> ScaleDown:
        """Which nodes cluster-autoscaler (v1.34) would find unneeded: those at or below the
        utilization threshold (default 0.5) whose pods can all move to other nodes, one after
        another, within the node groups' minimum sizes (`node_groups`, a file; default:
        inferred from the nodes' labels)."""
        from .whatif.autoscaler import infer_node_groups, read_node_groups
        from .whatif.scaledown import DEFAULT_THRESHOLD, scale_down

        node_groups = _path_arg("Session.scale_down: node_groups", node_groups, optional=True)
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)):
            raise TypeError(f"Session.scale_down: threshold: expected a float or None, not {_type_name(threshold)}")
        if threshold is not None and not 0 <= threshold <= 1:
            raise InputError(f"{threshold}: a utilization between 0 and 1", field="--utilization-threshold")
        with self._validating():
            world = self._load(("--node-groups", node_groups))
            cluster = world.cluster
            groups = read_node_groups(node_groups, cluster) if node_groups else infer_node_groups(cluster)
            report = scale_down(cluster, world.config, groups, DEFAULT_THRESHOLD if threshold is None else threshold)
        return ScaleDown(report, world)

    def drain(
        self,
        nodes: Sequence[str],
        *,
        delete_emptydir_data: bool = False,
        force: bool = False,
        seed: int | None = None,
        allow_preemption: bool = False,
        sampling: bool = False,
        start_index: int = 0,
    ) -> Drain:
        """Can these nodes (names or label selectors) be drained? Cordon them, evict what kubectl
        drain would (PodDisruptionBudgets honoured as the eviction API does), and reschedule the
        evicted pods, highest priority first. `sampling`, `start_index`: node sampling as `schedule`'s."""
        from .whatif.drain import drain as run_drain

        nodes = _strs_arg("Session.drain: nodes", nodes)
        _int_arg("Session.drain: seed", seed, "--seed", optional=True)
        _int_arg("Session.drain: start_index", start_index, "--start-index")
        with self._validating():
            cluster, config, applied = self._inputs()
            start = self._sampling_start(sampling, start_index, config)
            report = run_drain(
                cluster,
                config,
                list(nodes),
                delete_emptydir_data=delete_emptydir_data,
                force=force,
                seed=seed,
                sampling=start,
            )
        return Drain(report, cluster, applied, allow_preemption)

    def sweep(
        self,
        *,
        fail: str | None = None,
        fail_key: str | None = None,
        selector: str | None = None,
        samples: int = 20,
        rolling: str | None = None,
        max_unavailable: int = 1,
        surge: str | None = None,
        delete_emptydir_data: bool = False,
        force: bool = False,
        seed: int | None = None,
        workers: int | None = None,
        dask: str | None = None,
        top: int = 10,
        sampling: bool = False,
        start_index: int = 0,
    ) -> Sweep:
        """Survive any node, any zone, K random nodes, a rolling upgrade? `fail`: `node` (each node
        alone; `selector` restricts), `zone` (each value of topology.kubernetes.io/zone, or of
        `fail_key`), `nodes=K` (`samples` random sets of K nodes, drawn with `seed`); or `rolling`:
        a label selector of the node pool upgraded `max_unavailable` nodes at a time (`surge`: an
        --add-node value, a node added first; `delete_emptydir_data`, `force`: its drains', as
        `drain`'s). Every scenario is applied to the one loaded
        cluster and undone (whatif/sweep.py). `workers`: processes of a local pool (None: the
        machine's cores; 1: this process); `dask`: a Dask scheduler's address to run them on.
        `sampling`, `start_index`: node sampling as `schedule`'s, each scenario's cycles those of a
        kube-scheduler started afresh at `start_index` (a rolling upgrade's index carries from
        step to step, as one kube-scheduler's does). The results are the same however they ran."""
        from . import progress
        from .inputs.sources import server_version
        from .whatif import sweep as sw

        what = "Session.sweep"
        for name, text in (("fail", fail), ("fail_key", fail_key), ("selector", selector), ("rolling", rolling)):
            _str_arg(f"{what}: {name}", text)
        _str_arg(f"{what}: surge", surge)
        _str_arg(f"{what}: dask", dask)
        _int_arg(f"{what}: samples", samples, "--samples")
        _int_arg(f"{what}: max_unavailable", max_unavailable, "--max-unavailable")
        _int_arg(f"{what}: seed", seed, "--seed", optional=True)
        _int_arg(f"{what}: workers", workers, "--workers", optional=True)
        _int_arg(f"{what}: top", top, "--top")
        _int_arg(f"{what}: start_index", start_index, "--start-index")
        if workers is not None and workers < 1:
            raise InputError("must be at least 1", field="--workers")
        if workers is not None and workers > sw.MAX_WORKERS:
            raise InputError(f"at most {sw.MAX_WORKERS} processes, not {workers:,}", field="--workers")
        if top < 0:
            raise InputError("must be at least 0", field="--top")
        for flag, given in (("--delete-emptydir-data", delete_emptydir_data), ("--force", force)):
            if given and rolling is None:
                raise InputError("only with --rolling (as `ksched drain`'s, for each step's drain)", field=flag)
        o = self.options
        with self._validating():
            from .whatif.edits import add_node_file

            cluster, config, applied = self._inputs(("--surge", add_node_file(surge or "", exists=lambda _: False)))
            the_plan = sw.plan(
                cluster,
                fail=fail,
                fail_key=fail_key,
                selector=selector,
                samples=samples,
                seed=seed,
                rolling=rolling,
                max_unavailable=max_unavailable,
                surge=surge,
            )
            zone_key = the_plan.key or sw.ZONE_LABEL
            specs = the_plan.scenarios
            start = self._sampling_start(sampling, start_index, config)
            n = workers if workers is not None else (os.cpu_count() or 1)
            with progress.task("Sweeping", total=len(specs), unit="scenarios") as task:
                if the_plan.family == "rolling":
                    base = sw.Base.of(cluster, config, seed, zone_key, start)
                    docs = sw.run_rolling(
                        base,
                        specs,
                        surge=surge,
                        on_step=task.update,
                        delete_emptydir_data=delete_emptydir_data,
                        force=force,
                    )
                elif dask is not None or (n > 1 and len(specs) > 1):
                    files = self.files()
                    if "-" in files:
                        raise InputError("a sweep over other processes cannot read stdin", field="--cluster")
                    if dask is not None:  # the workers run elsewhere: the files by their absolute paths
                        files = [os.path.abspath(f) for f in files]
                    args = sw.LoadArgs(
                        tuple(files),
                        o.config if dask is None or o.config is None else os.path.abspath(o.config),
                        tuple(o.edits),
                        o.kubernetes_version,
                        server_version(files),
                        o.no_extenders,
                        o.cache,
                        seed,
                        zone_key,
                        start,
                    )
                    if dask is not None:
                        docs = sw.run_dask(dask, args, specs, on_done=task.update)
                    else:
                        # read from the files (no entry in the snapshot cache yet, or none used):
                        # the workers take what this process read
                        read = None if cluster.from_cache else (cluster, config)
                        docs = sw.run_pool(args, specs, n, on_done=task.update, read=read)
                else:
                    base = sw.Base.of(cluster, config, seed, zone_key, start)
                    docs = sw.run_specs(base, specs, on_done=task.update)
        return Sweep(the_plan, docs, sw.summary(docs, the_plan, top), cluster, applied)

    def diff(
        self,
        pods: str | None = None,
        *,
        against_config: str | None = None,
        against_cluster: ClusterSource | str | Iterable[str] | None = None,
        all_pods: bool = False,
        seed: int | None = None,
        sampling: bool = False,
        start_index: int = 0,
        as_bound: bool = False,
    ) -> Diff:
        """The same pods in two worlds: A (this session's cluster and config, without its edits)
        and B (`against_config`, `against_cluster` and/or this session's edits). `pods`: a file of
        Pods and workloads (a bound Pod, a running pod's export, is placed as if created again in
        each world, as `schedule` places it, unless `as_bound`); default: the snapshot's pending pods;
        `all_pods`: every bound pod, placed again from an empty cluster. `sampling`, `start_index`:
        node sampling in both worlds, as `schedule`'s."""
        from .whatif.diff import diff as run_diff

        what = "Session.diff"
        pods = _path_arg(f"{what}: pods", pods, optional=True)
        against_config = _path_arg(f"{what}: against_config", against_config, optional=True)
        if against_cluster is not None and not isinstance(against_cluster, ClusterSource):
            _strs_arg(f"{what}: against_cluster", against_cluster, paths=True)
        _int_arg(f"{what}: seed", seed, "--seed", optional=True)
        _int_arg(f"{what}: start_index", start_index, "--start-index")
        o = self.options
        if not (against_config or against_cluster or o.edits):
            raise InputError(
                "nothing to compare: give --against-config, --against-cluster or a cluster edit", field="diff"
            )
        if all_pods and pods is not None:
            raise InputError("PODS and --all exclude each other", field="--all")
        b_files = ClusterSource.of(against_cluster).files if against_cluster else ()
        self._stdin_once(
            ("PODS", pods), *(("--against-cluster", f) for f in b_files), ("--against-config", against_config)
        )
        with self._validating():
            a = self._sub(self.source, _replace(o, edits=()))
            a._files = self.files()
            b_source = ClusterSource.of(against_cluster) if against_cluster else self.source
            b = self._sub(b_source, _replace(o, config=against_config or o.config))
            if not against_cluster:
                b._files = a._files  # B reads A's snapshot (the live one too)
            cluster_a, config_a, _ = a._inputs()
            cluster_b, config_b, applied = b._inputs()
            pods_of, mode = self._diff_pods(pods, all_pods, cluster_a, as_bound)
            name_a = f"{_source_name(a.files())} --config {o.config or '(defaults)'}"
            name_b = f"{_source_name(b.files())} --config {b.options.config or '(defaults)'}"
            if o.edits:
                name_b += " " + " ".join(str(e) for e in o.edits)
            start = self._sampling_start(sampling, start_index, config_a, config_b)
            report = run_diff(
                (name_a, cluster_a, config_a),
                (name_b, cluster_b, config_b),
                pods_of,
                seed=seed,
                mode=mode,
                sampling=start,
            )
        return Diff(report, cluster_a, applied)

    def _diff_pods(self, pods: str | None, all_pods: bool, cluster: Cluster, as_bound: bool = False) -> tuple[Any, str]:
        if all_pods:
            return None, "all"
        if pods is None:
            found = cluster.pending_pods()
            if not found:
                raise InputError("no PODS file given and no pending pod in the snapshot (or use --all)", field="PODS")

            def pending(c: Cluster) -> list[Pod]:
                return [c.parse_pod(o, p, w) for o, p, w in found]

            return pending, "pending"
        from .loader import iter_objects
        from .workloads.expansion import pods_for_workloads

        raw_pods = [(obj, pods, where) for obj, where in iter_objects(pods, as_kubectl=True)]
        validation = self._validation()

        said: list[str] = []

        def given(c: Cluster) -> list[Pod]:
            # Pods as they are, workloads as their controllers would create them (as schedule)
            ex = pods_for_workloads(raw_pods, c, validation=validation)
            if not ex.pods and not ex.workloads:
                raise InputError("no Pod or workload found", source=pods)
            bound = [p for p in ex.pods if p.node_name and ex.workload_of(p) is None]
            if as_bound or not bound:
                return ex.pods
            from .whatif.diff import unbound

            # a running pod's export: as if created again, its running self taken out of the world
            keys = {p.key for p in bound}
            uids = {u for p in bound if (u := (p.raw.get("metadata") or {}).get("uid"))}
            c.pods = [q for q in c.pods if q.key not in keys and q.uid not in uids]
            if not said:
                said.append(pods)
                first = bound[0]
                what = (
                    f"Pod {first.key} is bound to {first.node_name}"
                    if len(bound) == 1
                    else (
                        f"{len(bound)} Pods are bound (spec.nodeName set; the first, {first.key}, to {first.node_name})"
                    )
                )
                self.messages(
                    f"ksched: {pods}: {what}: placed in each world as if created again now (spec.nodeName and "
                    "status dropped; the running pod taken out of each snapshot that holds it); --as-bound takes "
                    + ("it as it is" if len(bound) == 1 else "them as they are")
                )
            return [unbound(p, c) if p.node_name and ex.workload_of(p) is None else p for p in ex.pods]

        return given, "pods"


# what a compact sequence document shows of the analysis (render/document.py compact_result_doc)
COMPACT_PARTS = frozenset({"groups", "events"})


def _replace(options: Options, **changes: Any) -> Options:
    from dataclasses import replace

    return replace(options, **changes)


def _source_name(files: list[str]) -> str:
    """A world's snapshot as `diff` names it: `--cluster FILE...`, or `kubectl (context NAME)` for
    what was read from the live cluster into a temporary file."""
    from .errors import SOURCE_LABELS

    labels = [SOURCE_LABELS.get(c) for c in files]
    if files and all(labels):
        return ", ".join(label for label in labels if label)
    return "--cluster " + " ".join(files)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _load_report(c: Cluster) -> list[str]:
    """What `verbose` says of a load: counts of what the scheduler sees and of what it does not."""
    seen = [_count(len(c.nodes), "node"), _count(len(c.pods), "bound pod")]
    if c.nominated_pods:
        seen.append(_count(len(c.nominated_pods), "nominated pod"))
    seen += [f"{kind} ×{len(objs)}" for kind, objs in sorted(c.objects.items()) if objs]
    lines = [f"ksched: read {', '.join(seen)}"]
    if c.from_cache:
        from .inputs.cache import cache_dir

        lines.append(
            f"ksched: the snapshot as parsed before, from the cache ({cache_dir()}; --no-cache reads the files)"
        )
    for what, n in sorted(c.skipped.items()):  # what: "terminal pods", "pending pods (...)"
        lines.append(f"ksched: skipped {n} {what.replace('pods', 'pod', 1) if n == 1 else what}")
    if c.ignored:
        kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(c.ignored.items()))
        lines.append(f"ksched: ignored kinds the scheduler does not read: {kinds}")
    from .api.validation import unknown_fields

    unknown = unknown_fields(
        [n.raw for n in c.nodes] + [p.raw for p in c.pods] + [o for objs in c.objects.values() for o in objs.values()]
    )
    if unknown:  # an API server newer than ksched writes fields it does not know: named, never fatal
        fields = ", ".join(f"{kind} {field} ×{n}" for (kind, field), n in sorted(unknown.items()))
        lines.append(f"ksched: fields this ksched does not know, not read: {fields}")
    return lines


def schema_text(kind: Literal["result", "scenario"] = "result") -> str:
    """The JSON Schema of the documents the questions' `to_dict` return ("result"), or of
    scenario files ("scenario")."""
    from importlib import resources

    name = "result.schema.json" if kind == "result" else "scenario.schema.json"
    text = resources.files("kschedcli.schemas").joinpath(name).read_text(encoding="utf-8")
    return text if text.endswith("\n") else text + "\n"


# -- what shell completion offers: read from the files by lookup, never by building the cluster --


def node_names(files: Sequence[str]) -> list[tuple[str, str]]:
    """(name, zone) of every Node in the snapshot files."""
    from .inputs.lookup import metadata_of, snapshot_objects

    out = []
    for obj, _, _ in snapshot_objects(list(files)):
        if obj.get("kind") == "Node":
            meta = metadata_of(obj)
            out.append((meta.get("name") or "", (meta.get("labels") or {}).get("topology.kubernetes.io/zone", "")))
    return out


def profile_names(config: str | None) -> list[str]:
    """The profiles of a KubeSchedulerConfiguration file (kube-scheduler's default one without)."""
    if config is None:
        return ["default-scheduler"]
    from .config.scheduler import load_config
    from .plugins import REGISTRY

    return [p.scheduler_name for p in load_config(config, REGISTRY).profiles]


def pending_pod_names(files: Sequence[str]) -> list[tuple[str, str]]:
    """(NAMESPACE/NAME, name) of the pending pods in the snapshot files."""
    from .inputs.lookup import metadata_of, pending_pods, pod_key

    return [(pod_key(obj), metadata_of(obj).get("name") or "") for obj, _, _ in pending_pods(list(files))]


# -- cluster edits, the analysis parts, the cache: what the command line hands the API --


def __getattr__(name: str) -> Any:
    # imported when first used: the edit layer only for a run with edit flags
    if name == "Edit":
        from .whatif.edits import Edit

        return Edit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def edits_from_flags(values: dict[str, list[str]], argv: list[str] | None = None) -> list[Edit]:
    """Cluster edits from the edit flags' values (`{"--add-node": [...], "--cordon": [...], ...}`),
    in the order `argv` gives them (each flag's own order without it)."""
    from .whatif.edits import ordered_edits

    return ordered_edits(values, argv)


def analysis_parts(name: Literal["all", "first-failures", "none"]) -> frozenset[str]:
    """The parts of a result's analysis a view needs: all of it, the first failures (schedule's
    table), or none (names only)."""
    from .scheduling import analysis

    return {"all": analysis.ALL, "first-failures": frozenset({analysis.FIRST_FAILURES}), "none": frozenset()}[name]


def cache_info() -> tuple[str, bool, int, int, int]:
    """The cache of parsed snapshots: (its directory, enabled?, entries, their bytes, the bound)."""
    from .inputs.cache import cache_dir, enabled, entries, max_bytes

    found = entries()
    return str(cache_dir()), enabled(), len(found), sum(st.st_size for _, st in found), max_bytes()


def clear_cache() -> tuple[str, int, int]:
    """Empty the cache of parsed snapshots: (its directory, entries removed, bytes freed)."""
    from .inputs.cache import cache_dir, clear

    n, freed = clear()
    return str(cache_dir()), n, freed


# -- the public API's arguments, checked where a caller hands them in (not deep inside) --------
# A value of the wrong Python type is a TypeError naming the argument; a value of the right type
# the command line would refuse (a count out of its range, an unknown choice) is the InputError
# the command prints, naming the flag.


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _path_arg(what: str, value: Any, *, optional: bool = False) -> Any:
    """A file argument: a str or an os.PathLike naming a str path (`what`: 'Session.explain: pod')."""
    if value is None and optional:
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        return value
    none = " or None" if optional else ""
    raise TypeError(f"{what}: expected a path (str or os.PathLike){none}, not {_type_name(value)}")


def _str_arg(what: str, value: Any, *, optional: bool = True) -> Any:
    if (value is None and optional) or isinstance(value, str):
        return value
    raise TypeError(f"{what}: expected a str{' or None' if optional else ''}, not {_type_name(value)}")


def _int_arg(
    what: str, value: Any, flag: str, *, optional: bool = False, low: int | None = None, high: int | None = None
) -> Any:
    """An integer argument the command line reads as `flag`, within [low, high]."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: expected an int{' or None' if optional else ''}, not {_type_name(value)}")
    if low is not None and value < low:
        raise InputError(f"must be at least {low}, got {value:,}", field=flag)
    if high is not None and value > high:
        raise InputError(f"must be at most {high:,}, got {value:,}", field=flag)
    return value


def _choice_arg(what: str, value: Any, flag: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a str, one of {', '.join(choices)}, not {_type_name(value)}")
    if value not in choices:
        raise InputError(f"{value!r} is not one of {', '.join(choices)}", field=flag)
    return value


def _strs_arg(what: str, value: Any, *, paths: bool = False, optional: bool = False) -> Any:
    """A sequence of names (or of paths), a lone str taken as a sequence of one (never its
    characters)."""
    if value is None and optional:
        return None
    one = (str, os.PathLike) if paths else (str,)
    if isinstance(value, one):
        value = [value]
    if isinstance(value, bytes | bytearray | dict) or not isinstance(value, Iterable):
        kind = "paths" if paths else "str"
        raise TypeError(f"{what}: expected a list of {kind}, not {_type_name(value)}")
    out = list(value)
    for v in out:
        if not isinstance(v, one):
            raise TypeError(f"{what}: expected a list of {'paths' if paths else 'str'}, found {_type_name(v)}")
    return [os.fspath(v) for v in out] if paths else out


def _callable_arg(what: str, value: Any) -> Any:
    if value is None or callable(value):
        return value
    raise TypeError(f"{what}: expected a callable or None, not {_type_name(value)}")


def _replicas_arg(what: str, value: Any) -> Any:
    """`--replicas`: new pods per workload, at most Kubernetes' most pods per cluster (as the flag)."""
    if value is None:
        return None
    from .workloads.expansion import MAX_WORKLOAD_PODS

    return _int_arg(what, value, "--replicas", low=0, high=MAX_WORKLOAD_PODS)


ORDERS = ("priority", "file")
PREEMPTION_MODES = ("report", "carry-out")
DETAILS = ("compact", "full")
