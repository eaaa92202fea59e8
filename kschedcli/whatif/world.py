"""A world: the cluster read from its source, the release to follow chosen, the scheduler
configuration read for that release, the cluster edits applied, and the scheduler built over it.
Every question (kschedcli.session) starts from one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config.scheduler import SchedulerConfig, load_config
from ..config.versions import Choice, choose
from ..inputs.cluster import Cluster, load_cluster_cached
from ..plugins import REGISTRY
from ..scheduling.scheduler import Scheduler

if TYPE_CHECKING:
    from ..api.model import Pod
    from .edits import Applied, Edit


@dataclass
class World:
    cluster: Cluster
    config: SchedulerConfig
    scheduler: Scheduler
    edits: list[Applied] = field(default_factory=list)  # the cluster edits applied, in order
    given_kind: str = "Pod"  # what the user gave for explain/preempt: a Pod, or the workload's kind
    before: list[Pod] = field(default_factory=list)  # replicas of that workload bound before its pod
    input_unbound: dict | None = None  # a bound pod given as input, explained as if created again

    @property
    def version(self) -> Choice:
        """The kube-scheduler release followed, and why (versions.Choice)."""
        return self.cluster.version


def load_inputs(
    cluster_paths: list[str],
    config_path: str | None,
    edits: list[Edit] | None = None,
    kubernetes_version: str | None = None,
    server_version: str | None = None,
    *,
    no_extenders: bool = False,
    cache: bool = True,
) -> tuple[Cluster, SchedulerConfig, list[Applied]]:
    """The cluster read, the release to follow chosen (versions.choose: `kubernetes_version`, the
    flag's; else `server_version`, the live cluster's API server version, which the live source
    passes; else the newest kubelet among the nodes), the config read with that release's
    defaults (no_extenders: its HTTP extenders left out, SchedulerConfig.leave_out_extenders),
    the edits applied to the cluster in order. An unsupported `kubernetes_version` raises
    versions.UnsupportedVersion before anything is read. cache=False: the snapshot cache is
    neither read nor written."""
    if kubernetes_version is not None:
        choose(kubernetes_version)
    cluster = load_cluster_cached(cluster_paths, cache=cache)
    cluster.follow(choose(kubernetes_version, cluster.nodes, server_version))
    config = load_config(config_path, REGISTRY, cluster.version.release)
    if no_extenders:
        config.leave_out_extenders()
    applied: list[Applied] = []
    if edits:
        from .edits import apply_edits  # the edit layer, only for a run with edit flags

        applied = apply_edits(cluster, edits)
    return cluster, config, applied


def open_world(*args: Any, **kwargs: Any) -> World:
    """The inputs read and edited (load_inputs, with its arguments), then the scheduler's snapshot
    built over them."""
    cluster, config, applied = load_inputs(*args, **kwargs)
    return World(cluster, config, Scheduler(cluster, config), applied)


def schedule_file(world: World, pods_path: str, order: str = "file", seed: int | None = None) -> list:
    """The pods of a file scheduled in turn in `world` (their results, unexplained): the engine's
    own sequence, for tests and benchmarks below the public API."""
    from ..inputs.cluster import load_pending_pods
    from ..scheduling.scheduler import queue_sort

    pods = load_pending_pods(pods_path, world.cluster)
    if order == "priority":
        pods = queue_sort(pods)
    return world.scheduler.run_sequence(pods, seed)
