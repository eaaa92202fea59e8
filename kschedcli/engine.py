"""Loading inputs and running cycles: the glue between the CLI and the pure core."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .cluster import Cluster, load_cluster_cached, load_pending_pods
from .config import SchedulerConfig, load_config
from .model import Pod
from .plugins import REGISTRY
from .result import CycleResult
from .scheduler import Scheduler, queue_sort
from .versions import Choice, choose

if TYPE_CHECKING:
    from .edits import Applied, Edit


@dataclass
class Session:
    cluster: Cluster
    config: SchedulerConfig
    scheduler: Scheduler
    edits: list[Applied] = field(default_factory=list)  # the cluster edits applied, in order
    given_kind: str = "Pod"  # what the user gave for explain/preempt: a Pod, or the workload's kind
    before: list[Pod] = field(default_factory=list)  # replicas of that workload bound before its pod

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
) -> tuple[Cluster, SchedulerConfig, list[Applied]]:
    """The cluster read, the release to follow chosen (versions.choose: `kubernetes_version`, the
    flag's; else `server_version`, the live cluster's API server version, which the live source
    passes; else the newest kubelet among the nodes), the config read with that release's
    defaults (no_extenders: its HTTP extenders left out, SchedulerConfig.leave_out_extenders),
    the edits applied to the cluster in order. An unsupported `kubernetes_version` raises
    versions.UnsupportedVersion before anything is read."""
    if kubernetes_version is not None:
        choose(kubernetes_version)
    cluster = load_cluster_cached(cluster_paths)
    cluster.follow(choose(kubernetes_version, cluster.nodes, server_version))
    config = load_config(config_path, REGISTRY, cluster.version.release)
    if no_extenders:
        config.leave_out_extenders()
    applied: list[Applied] = []
    if edits:
        from .edits import apply_edits  # the edit layer, only for a run with edit flags

        applied = apply_edits(cluster, edits)
    return cluster, config, applied


def open_session(
    cluster_paths: list[str],
    config_path: str | None,
    edits: list[Edit] | None = None,
    kubernetes_version: str | None = None,
    server_version: str | None = None,
    *,
    no_extenders: bool = False,
) -> Session:
    """The inputs read and edited, then the scheduler's snapshot built; no_extenders: the
    config's HTTP extenders left out (SchedulerConfig.leave_out_extenders)."""
    cluster, config, applied = load_inputs(
        cluster_paths, config_path, edits, kubernetes_version, server_version, no_extenders=no_extenders
    )
    return Session(cluster, config, Scheduler(cluster, config), applied)


def schedule_file(session: Session, pods_path: str, order: str = "file", seed: int | None = None) -> list[CycleResult]:
    pods: list[Pod] = load_pending_pods(pods_path, session.cluster)
    if order == "priority":
        pods = queue_sort(pods)
    return session.scheduler.run_sequence(pods, seed)
