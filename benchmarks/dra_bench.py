#!/usr/bin/env python3
"""DRA cycles on a 5,000-node cluster beside a plain pod's cycle (issue 20).

    python benchmarks/dra_bench.py                       # 5,000 synthetic nodes, 8 GPUs each
    python benchmarks/dra_bench.py --nodes 5000 --devices 1
    python benchmarks/dra_bench.py --data DIR            # a genbig.py snapshot, GPUs added to its nodes

Every node gets one ResourceSlice with --devices GPUs (two models, two driver versions, 40 or 80 GB;
with --unique each also has its own uuid attribute, as NVIDIA's driver publishes, which no selector
reads) and, with --taken, that share of the nodes has half its GPUs held by allocated claims. Then
one cycle each, in one process, for: a pod without claims; a claim of one GPU of a class selecting
the driver; two 80 GB GPUs on a driver above 550 (capacity and semver selectors); every GPU of the
node (All); and a pod with two claims. Each is timed cold (the first cycle: the claim tracker is
built and CEL verdicts are not cached yet) and warm (median of --repeat cycles after clear_caches;
the tracker and the CEL verdicts per distinct device stay, as they would for the next pod of a
run). Then --sequence pods in a row, each bound before the next: plain pods, and pods with a claim
of 2 GPUs each. Nothing asserts: figures are printed (and written as JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

DRIVER = "gpu.example.com"


def _node(i: int) -> dict:
    name = f"node-{i:05d}"
    alloc = {"cpu": "64", "memory": "512Gi", "pods": "110"}
    return {
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{i % 3}"},
        },
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def _slice(node: str, i: int, devices: int, unique: bool = False) -> dict:
    big = i % 2 == 0
    return {
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{k}",
                    "attributes": {
                        "model": {"string": "h100" if big else "a100"},
                        "index": {"int": k},
                        "driverVersion": {"version": "550.54.15" if i % 4 < 2 else "535.161.8"},
                        **({"uuid": {"string": f"GPU-{i:08x}-{k:04x}"}} if unique else {}),
                    },
                    "capacity": {"memory": {"value": "80Gi" if big else "40Gi"}},
                }
                for k in range(devices)
            ],
        },
    }


def _class(name: str, *exprs: str) -> dict:
    return {
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in exprs]},
    }


def _claim(name: str, requests: list, status: dict | None = None) -> dict:
    c = {
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": requests}},
    }
    if status:
        c["status"] = status
    return c


def _pod(name: str, claims: list[str]) -> dict:
    spec: dict = {
        "containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]
    }
    if claims:
        spec["resourceClaims"] = [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claims)]
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}


def build(args):
    from kschedcli.api.model import Node
    from kschedcli.config.versions import REFERENCE, choose
    from kschedcli.inputs.cluster import Cluster, load_cluster

    if args.data:
        cluster = load_cluster([os.path.join(args.data, "cluster.json")])
    else:
        cluster = Cluster()
        cluster.nodes = [Node(_node(i)) for i in range(args.nodes)]
        cluster.follow(choose(REFERENCE.name))
    objects = cluster.objects
    for i, n in enumerate(cluster.nodes):
        s = _slice(n.name, i, args.devices, args.unique)
        objects["ResourceSlice"][("", s["metadata"]["name"])] = s
    for c in (
        _class(DRIVER, f'device.driver == "{DRIVER}"'),
        _class(
            "large-gpu",
            f'device.driver == "{DRIVER}"',
            f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0',
        ),
    ):
        objects["DeviceClass"][("", c["metadata"]["name"])] = c
    taken_nodes = int(len(cluster.nodes) * args.taken)
    for i, n in enumerate(cluster.nodes[:taken_nodes]):
        held = [
            {"request": "gpu", "driver": DRIVER, "pool": n.name, "device": f"gpu-{k}"}
            for k in range(max(1, args.devices // 2))
        ]
        c = _claim(
            f"held-{i}",
            [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": len(held)}}],
            {"allocation": {"devices": {"results": held}}},
        )
        objects["ResourceClaim"][("default", c["metadata"]["name"])] = c
    recent = f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("550.0.0"))'
    claims = {
        "one": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}],
        "two-large": [
            {
                "name": "gpu",
                "exactly": {
                    "deviceClassName": "large-gpu",
                    "count": min(2, args.devices),
                    "selectors": [{"cel": {"expression": recent}}],
                },
            }
        ],
        "all": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, "allocationMode": "All"}}],
        "a": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}],
        "b": [{"name": "gpu", "exactly": {"deviceClassName": "large-gpu"}}],
    }
    for i in range(args.sequence):
        claims[f"seq-{i}"] = [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": min(2, args.devices)}}]
    for name, reqs in claims.items():
        c = _claim(name, reqs)
        objects["ResourceClaim"][("default", name)] = c
    return cluster


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--devices", type=int, default=8, help="GPUs per node (default 8)")
    ap.add_argument("--taken", type=float, default=0.5, help="share of nodes with half their GPUs allocated")
    ap.add_argument(
        "--unique", action="store_true", help="every GPU has its own uuid attribute (as NVIDIA's driver publishes)"
    )
    ap.add_argument("--data", help="a genbig.py folder: its cluster.json instead of synthetic nodes")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sequence", type=int, default=200, help="pods in the sequence figures (default 200)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()

    from kschedcli.api.model import Pod
    from kschedcli.config.scheduler import default_config
    from kschedcli.plugins import REGISTRY
    from kschedcli.scheduling.scheduler import Scheduler

    t0 = time.perf_counter()
    cluster = build(args)
    sched = Scheduler(cluster, default_config(REGISTRY))
    print(f"{len(cluster.nodes)} nodes, {args.devices} GPUs each, built in {time.perf_counter() - t0:.1f} s")
    cases = [
        ("plain pod (no claim)", []),
        ("1 GPU (driver selector)", ["one"]),
        ("2 x 80 GB GPU, driver > 550 (capacity + semver)", ["two-large"]),
        ("every GPU of the node (All)", ["all"]),
        ("two claims", ["a", "b"]),
    ]
    figures = {}
    base = None
    for label, claims in cases:
        pod = Pod(_pod("bench", claims))
        t = time.perf_counter()
        r = sched.schedule(pod, with_details=False)
        cold = time.perf_counter() - t
        warm = []
        for _ in range(args.repeat):
            sched.clear_caches()
            t = time.perf_counter()
            r = sched.schedule(pod, with_details=False)
            warm.append(time.perf_counter() - t)
        med = statistics.median(warm)
        base = base or med
        figures[label] = {
            "cold_ms": round(cold * 1000, 1),
            "warm_ms": round(med * 1000, 1),
            "warm_min_ms": round(min(warm) * 1000, 1),
            "warm_max_ms": round(max(warm) * 1000, 1),
            "feasible": len(r.feasible),
            "vs_plain": round(med / base, 2),
        }
        f = figures[label]
        print(
            f"{label:52} cold {f['cold_ms']:7.1f} ms  warm {f['warm_ms']:7.1f} ms "
            f"({f['warm_min_ms']}–{f['warm_max_ms']})  x{f['vs_plain']:.2f}  feasible {f['feasible']}"
        )
    # sequences: plain pods, then pods with a claim of their own (2 GPUs each), each bound before the next
    for label, claims_of in (
        ("sequence, plain pods", lambda i: []),
        ("sequence, a 2-GPU claim each", lambda i: [f"seq-{i}"]),
    ):
        pods = [Pod(_pod(f"seq-{label[10:15]}-{i}", claims_of(i))) for i in range(args.sequence)]
        t = time.perf_counter()
        results = sched.run_sequence(pods)
        dt = time.perf_counter() - t
        placed = sum(1 for r in results if r.schedulable)
        figures[label] = {"pods_per_s": round(len(pods) / dt, 1), "placed": placed}
        print(f"{label:52} {len(pods) / dt:7.1f} pods/s  ({placed} of {len(pods)} placed)")
    if args.json:
        with open(args.json, "w") as w:
            json.dump({"nodes": len(cluster.nodes), "devices": args.devices, "figures": figures}, w, indent=2)


if __name__ == "__main__":
    main()
