"""Loading inputs and running cycles: the glue between the CLI and the pure core."""
from __future__ import annotations

from dataclasses import dataclass

from .cluster import Cluster, load_cluster, load_pending_pods
from .config import SchedulerConfig, load_config
from .model import Pod
from .plugins import REGISTRY
from .result import CycleResult
from .scheduler import Scheduler, queue_sort


@dataclass
class Session:
    cluster: Cluster
    config: SchedulerConfig
    scheduler: Scheduler


def open_session(cluster_paths: list[str], config_path: str | None) -> Session:
    config = load_config(config_path, REGISTRY)
    cluster = load_cluster(cluster_paths)
    return Session(cluster, config, Scheduler(cluster, config))


def schedule_file(session: Session, pods_path: str, order: str = "file", seed: int | None = None) -> list[CycleResult]:
    pods: list[Pod] = load_pending_pods(pods_path, session.cluster)
    if order == "priority":
        pods = queue_sort(pods)
    return session.scheduler.run_sequence(pods, seed)
