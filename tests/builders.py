"""Small hand-built objects for unit tests."""

from __future__ import annotations

from kschedcli.api.model import Node, Pod
from kschedcli.config.scheduler import SchedulerConfig, build_profile
from kschedcli.config.versions import REFERENCE, choose
from kschedcli.framework.cycle_state import CycleState
from kschedcli.inputs.cluster import Cluster
from kschedcli.plugins import REGISTRY
from kschedcli.scheduling.scheduler import Scheduler


def node(
    name, cpu="4", memory="8Gi", pods="110", labels=None, taints=None, unschedulable=False, images=None, extra=None
):
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    return Node(
        {
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints or [], "unschedulable": unschedulable},
            "status": {"allocatable": alloc, "capacity": alloc, "images": images or []},
        }
    )


def pod(
    name,
    ns="default",
    requests=None,
    limits=None,
    node_name=None,
    labels=None,
    priority=None,
    spec=None,
    containers=None,
    init_containers=None,
    start_time=None,
):
    c = containers or [
        {
            "name": "c",
            "image": "app:1",
            "resources": {k: v for k, v in (("requests", requests), ("limits", limits)) if v},
        }
    ]
    s = {"containers": c, **(spec or {})}
    if init_containers:
        s["initContainers"] = init_containers
    if node_name:
        s["nodeName"] = node_name
    if priority is not None:
        s["priority"] = priority
    raw = {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels or {}, "uid": f"{ns}-{name}"},
        "spec": s,
        "status": {"phase": "Running" if node_name else "Pending"},
    }
    if start_time:
        raw["status"]["startTime"] = start_time
    return Pod(raw)


def pod_level_requests_pod(name="p", node_name="n1"):
    """A bound pod with pod-level requests (cpu 2 over its container's 100m): what a release
    without PodLevelResources reads differently, so following one changes the pod."""
    return Pod(
        {
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "nodeName": node_name,
                "containers": [{"name": "c", "image": "a", "resources": {"requests": {"cpu": "100m"}}}],
                "resources": {"requests": {"cpu": "2"}},
            },
        }
    )


def scheduler(nodes, pods=(), profile=None, release=REFERENCE):
    """A scheduler over these nodes and bound pods, following `release` (a versions.Release)."""
    cluster = Cluster()
    cluster.nodes = list(nodes)
    cluster.pods = list(pods)
    cluster.follow(choose(release.name))
    prof = build_profile(profile or {"schedulerName": "default-scheduler"}, "test", REGISTRY, release)
    return Scheduler(cluster, SchedulerConfig(profiles=[prof], release=release))


def plugin(sched, name):
    return sched.frameworks["default-scheduler"].plugins[name]


def fresh_state():
    return CycleState()


def capacity_template(name: str, labels: dict, cpu: str = "300m", spec: dict | None = None):
    """A `ksched capacity` template (whatif.capacity.Template) of a pod in `default` with `labels`,
    one container of the web image requesting `cpu` and 512Mi, and `spec`'s fields besides."""
    from kschedcli.whatif.capacity import Template

    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.example/web:1",
                    "resources": {"requests": {"cpu": cpu, "memory": "512Mi"}},
                }
            ],
            **(spec or {}),
        },
    }
    return Template(obj, "test", "", f"Pod default/{name}")


def score_nodes_is_each_score(pl, state, incoming, nis, rng) -> list:
    """A plugin's score_nodes against its score node by node (after its PreScore into `state`):
    over every node, at random positions, and on copies of the nodes (not the snapshot's own).
    Returns each node's score."""
    each = [pl.score(state, incoming, ni)[0] for ni in nis]
    assert pl.score_nodes(state, incoming, nis) == (each, None)
    positions = sorted(rng.sample(range(len(nis)), rng.randint(1, len(nis))))
    state.score_positions = positions
    assert pl.score_nodes(state, incoming, [nis[i] for i in positions]) == ([each[i] for i in positions], None)
    state.score_positions = None
    assert pl.score_nodes(state, incoming, [ni.clone() for ni in nis]) == (each, None)
    return each
