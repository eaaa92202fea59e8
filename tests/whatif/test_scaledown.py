"""scale-down's removal simulation in place (Simulation.without_node: the node taken out of the
current snapshot, every other NodeInfo shared) gives what a snapshot rebuilt from scratch for every
candidate gives: the same removable nodes, the same moves, the same reasons."""

from __future__ import annotations

import random

import pytest
import yaml

from kschedcli import Session
from kschedcli.whatif.autoscaler import Simulation

ZONE = "topology.kubernetes.io/zone"
POOL = "eks.amazonaws.com/nodegroup"


def _rebuilt(self, name):
    """The removal trial as it was first written: a Simulation over the nodes and pods less the
    node's, its scheduler (and snapshot) built from nothing."""
    s = Simulation(
        self.base, self.config, [n for n in self.nodes if n.name != name], [p for p in self.pods if p.node_name != name]
    )
    s.cursor = self.cursor
    return s


def _node(name, zone, cpu, pool, images, taints=(), unschedulable=False):
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone, POOL: pool}},
        "spec": {"taints": list(taints), **({"unschedulable": True} if unschedulable else {})},
        "status": {
            "allocatable": alloc,
            "capacity": alloc,
            "images": [{"names": [img], "sizeBytes": 100_000_000 + 7 * k} for k, img in enumerate(images)],
        },
    }


def _pod(name, node, app, cpu, rnd):
    spec: dict = {
        "nodeName": node,
        "containers": [{"name": "c", "image": f"{app}:1", "resources": {"requests": {"cpu": cpu, "memory": "512Mi"}}}],
    }
    sel = {"matchLabels": {"app": app}}
    kind = rnd.randrange(7)
    if kind == 0:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}
        ]
    elif kind == 1:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 2,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": sel,
            }
        ]
    elif kind == 2:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": sel}
                ]
            }
        }
    elif kind == 3:
        spec["affinity"] = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "db"}}}
                ]
            }
        }
    elif kind == 4:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    elif kind == 5:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": app},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app, "uid": f"uid-{app}", "controller": True}
            ],
        },
        "spec": spec,
        "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"},
    }


def _cluster(seed: int) -> list[dict]:
    rnd = random.Random(seed)
    objs: list[dict] = []
    names = []
    for i in range(24):
        name = f"node-{i:02d}"
        names.append(name)
        taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if rnd.random() < 0.15 else []
        objs.append(
            _node(
                name,
                f"zone-{i % 3}",
                rnd.choice(["2", "4", "8"]),
                f"pool-{i % 2}",
                rnd.sample(["web:1", "db:1", "cache:1", "api:1"], 2),
                taints,
                unschedulable=rnd.random() < 0.05,
            )
        )
    apps = ["web", "db", "cache", "api", "batch"]
    for k in range(60):
        objs.append(_pod(f"p-{k:03d}", rnd.choice(names), rnd.choice(apps), rnd.choice(["100m", "250m", "500m"]), rnd))
    return objs


def _scale_down(tmp_path, objs, threshold):
    c = tmp_path / "cluster.yaml"
    c.write_text(yaml.safe_dump_all(objs))
    return Session([str(c)], kubernetes_version="v1.34").scale_down(threshold=threshold).to_dict()


@pytest.mark.parametrize("seed", range(8))
def test_in_place_removal_matches_a_rebuilt_snapshot(tmp_path, monkeypatch, seed):
    objs = _cluster(seed)
    in_place = _scale_down(tmp_path, objs, 0.9)
    with monkeypatch.context() as m:
        m.setattr(Simulation, "without_node", _rebuilt)
        rebuilt = _scale_down(tmp_path, objs, 0.9)
    assert in_place == rebuilt
    # the clusters exercise the simulation: several nodes go, pods move, some stay for want of room
    assert in_place["removable"]
    reasons = {n["reason"] for n in in_place["nodes"] if not n["removable"]}
    assert any(r and r.startswith("no place to move pod") for r in reasons)
