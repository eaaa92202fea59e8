#!/usr/bin/env python3
"""`ksched capacity` on a genbig.py snapshot: copies of its first plain pending pod (issue 14).

    python benchmarks/capacity_bench.py --data DIR [--max 5000]     # a folder written by genbig.py
    python benchmarks/capacity_bench.py --generate DIR --nodes 500 --pods 15000

Two figures: the command as a user runs it (`ksched capacity plain.yaml -c cluster.json --max N
-o json`, wall time in a fresh process, load included), and in one process the load and the copies
per second of the capacity run alone. Nothing asserts: figures are printed (and written as JSON with
--json). Targets (issue 14): the 500-node rung (genbig --nodes 500 --pods 15000) with --max 5000 in
under 10 s including the load; the 5,000-node snapshot at 1,000 copies per second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GENBIG = os.path.join(ROOT, "..", "shared", "bench", "genbig.py")
CATEGORY_ANNOTATION = "bench.ksched.dev/category"


def first_plain_pod(data: str) -> str:
    """Write the first pending pod of category `plain` of pods.yaml to DIR/plain.yaml."""
    import yaml

    out = os.path.join(data, "plain.yaml")
    if not os.path.exists(out):
        with open(os.path.join(data, "pods.yaml")) as f:
            for d in yaml.safe_load_all(f):
                if (
                    d
                    and d.get("kind") == "Pod"
                    and (d["metadata"].get("annotations") or {}).get(CATEGORY_ANNOTATION) == "plain"
                ):
                    with open(out, "w") as w:
                        yaml.safe_dump(d, w)
                    break
    return out


def in_process(data: str, pod: str, max_copies: int, incremental: bool = True) -> dict:
    from kschedcli.config.scheduler import default_config
    from kschedcli.inputs.cluster import load_cluster
    from kschedcli.plugins import REGISTRY
    from kschedcli.scheduling.scheduler import Scheduler
    from kschedcli.whatif.capacity import read_templates, run_capacity

    t0 = time.perf_counter()
    cluster = load_cluster([os.path.join(data, "cluster.json")])
    sched = Scheduler(cluster, default_config(REGISTRY))
    t1 = time.perf_counter()
    templates = read_templates([pod])
    report = run_capacity(sched, templates, max_copies=max_copies, incremental=incremental)
    t2 = time.perf_counter()
    n = report.replicas
    return {
        "nodes": len(cluster.nodes),
        "pods": len(cluster.pods),
        "load_s": round(t1 - t0, 2),
        "capacity_s": round(t2 - t1, 2),
        "copies": n,
        "copies_per_s": round(n / (t2 - t1), 1) if t2 > t1 else None,
        "stopped_by": report.runs[0].stopped_by,
        "mode": "incremental" if incremental else "full cycles",
    }


def command(data: str, pod: str, max_copies: int) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "kschedcli",
        "capacity",
        pod,
        "-c",
        os.path.join(data, "cluster.json"),
        "--max",
        str(max_copies),
        "-o",
        "json",
    ]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        raise SystemExit(p.stderr)
    doc = json.loads(p.stdout)
    return {"wall_s": round(wall, 2), "copies": doc["replicas"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="a folder written by genbig.py")
    ap.add_argument("--generate", metavar="DIR", help="write one first with genbig.py")
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=15000)
    ap.add_argument("--max", type=int, default=5000, dest="max_copies")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument(
        "--full-cycles",
        action="store_true",
        help="also time the copies' full cycles in one process (the incremental mode's reference)",
    )
    ap.add_argument("--no-command", action="store_true", help="skip the command's wall time")
    args = ap.parse_args()
    data = args.data
    if args.generate:
        subprocess.run(
            [sys.executable, GENBIG, "--nodes", str(args.nodes), "--pods", str(args.pods), "--out", args.generate],
            check=True,
        )
        data = args.generate
    if not data:
        ap.error("--data or --generate")
    pod = first_plain_pod(data)
    figures = {"command": [], "in_process": []}
    for _ in range(args.runs):
        if not args.no_command:
            figures["command"].append(command(data, pod, args.max_copies))
        figures["in_process"].append(in_process(data, pod, args.max_copies))
        if args.full_cycles:
            figures["in_process"].append(in_process(data, pod, args.max_copies, incremental=False))
    for f in figures["command"]:
        print(f"ksched capacity --max {args.max_copies}: {f['copies']} copies, {f['wall_s']} s wall (load included)")
    for f in figures["in_process"]:
        print(
            f"  in one process: {f['nodes']} nodes, {f['pods']} bound pods: load {f['load_s']} s, "
            f"{f['copies']} copies in {f['capacity_s']} s = {f['copies_per_s']} copies/s "
            f"(stopped by {f['stopped_by']}; {f['mode']})"
        )
    if args.json:
        with open(args.json, "w") as w:
            json.dump(figures, w, indent=2)


if __name__ == "__main__":
    main()
