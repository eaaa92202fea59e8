"""Clusters with cloud-style node names of exactly 60 characters (GKE's
`gke-<cluster>-<pool>-<hash>-<suffix>.<zone>.c.<project>.internal`, cut to 60), for the narrow-view
and hostile-input tests of the newer commands: several zones and pools, Deployments' pods spread
over the nodes, a DaemonSet on every node, a PodDisruptionBudget, and pending pods.

`long_cluster()` gives the objects; `write_long_cluster(path)` writes them as one YAML stream."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

NAME_LENGTH = 60
ZONES = ("us-central1-a", "us-central1-b", "us-central1-f")
POOLS = ("default-pool", "highmem-pool")


def long_node_name(pool: str, i: int, zone: str) -> str:
    """`gke-production-cluster-<pool>-<8 hex>-<4 chars>.<zone>.c.project.internal` cut to 60
    characters (the hash and suffix come first, so the names stay distinct)."""
    h = hashlib.sha256(f"{pool}/{i}".encode()).hexdigest()
    full = f"gke-production-cluster-{pool}-{h[:8]}-{h[8:12]}.{zone}.c.project.internal"
    name = full[:NAME_LENGTH].rstrip(".-")
    return name + "x" * (NAME_LENGTH - len(name))


def _node(name: str, zone: str, pool: str, cpu: str, memory: str) -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": zone,
                "cloud.google.com/gke-nodepool": pool,
                "pool": pool.removesuffix("-pool"),
            },
        },
        "spec": {},
        "status": {"allocatable": alloc, "capacity": alloc, "nodeInfo": {"kubeletVersion": "v1.34.1"}},
    }


def _pod(
    name: str,
    ns: str,
    cpu: str,
    memory: str,
    *,
    node: str | None,
    owner: tuple[str, str] | None,
    labels: dict | None = None,
) -> dict:
    meta: dict = {"name": name, "namespace": ns, "labels": labels or {}, "uid": f"uid-{ns}-{name}"}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": f"uid-{owner[1]}", "controller": True}
        ]
    spec: dict = {
        "containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def long_cluster(nodes: int = 120, pending: int = 4, workloads: int = 14) -> list[dict]:
    """`nodes` nodes (60-character names) over ZONES and POOLS, `workloads` Deployments of 60-character
    names with replicas spread over the nodes (one of them under a PodDisruptionBudget), a DaemonSet
    pod per node, and `pending` pending pods."""
    out: list[dict] = []
    names = []
    for i in range(nodes):
        pool = POOLS[0] if i % 4 else POOLS[1]
        zone = ZONES[i % len(ZONES)]
        name = long_node_name(pool, i, zone)
        names.append(name)
        out.append(_node(name, zone, pool, "8" if pool == POOLS[0] else "16", "32Gi" if pool == POOLS[0] else "128Gi"))
    ns = "payments-production-eu"
    for w in range(workloads):
        app = f"checkout-service-frontend-{w:02d}-" + "v" * 31  # 60 characters
        rs = f"{app[:50]}-5f7d9c8b6"
        for r in range(6):
            node = names[(w * 7 + r * 11) % len(names)]
            out.append(
                _pod(
                    f"{rs[:53]}-{r:05d}", ns, "1", "2Gi", node=node, owner=("ReplicaSet", rs), labels={"app": app[:63]}
                )
            )
    for i, name in enumerate(names):
        out.append(
            _pod(
                f"node-exporter-{i:05d}", "monitoring", "100m", "64Mi", node=name, owner=("DaemonSet", "node-exporter")
            )
        )
    out.append(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "checkout-pdb", "namespace": ns},
            "spec": {
                "minAvailable": 5,
                "selector": {"matchLabels": {"app": f"checkout-service-frontend-00-{'v' * 31}"}},
            },
            "status": {"desiredHealthy": 5, "currentHealthy": 6, "disruptionsAllowed": 1, "expectedPods": 6},
        }
    )
    for p in range(pending):
        out.append(
            _pod(
                f"batch-reconciliation-job-{p:02d}-" + "w" * 30,
                ns,
                "6",
                "24Gi",
                node=None,
                owner=("Job", f"batch-reconciliation-job-{p:02d}"),
            )
        )
    return out


def write_long_cluster(path: Path | str, **kwargs: int) -> str:
    Path(path).write_text(yaml.safe_dump_all(long_cluster(**kwargs), sort_keys=False))
    return str(path)
