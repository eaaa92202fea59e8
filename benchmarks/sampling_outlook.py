#!/usr/bin/env python3
"""The sampling outlook of `ksched explain` (scheduling/sampling.py, outlook) on a genbig.py
snapshot: per pending pod, the cycle's time and the outlook's (every start index read from that
one cycle). Issue 33 asks for at most 2 s at 5,000 nodes.

    python ../shared/bench/genbig.py --nodes 5000 --pods 30000 --pending 20 --out /tmp/big5000
    python benchmarks/sampling_outlook.py /tmp/big5000 [--pods 10]

Nothing here asserts: figures are printed.
"""

from __future__ import annotations

import argparse
import time

import yaml

from kschedcli import Session
from kschedcli.scheduling.sampling import outlook


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="folder written by genbig.py (cluster.json, pods.yaml)")
    ap.add_argument("--pods", type=int, default=10, help="pending pods measured (default 10)")
    a = ap.parse_args()
    world = Session(a.data + "/cluster.json").world()
    sched = world.scheduler
    with open(a.data + "/pods.yaml") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    print(f"{len(sched.snapshot.names)} nodes")
    print(f"{'pod':<44} {'cycle':>7} {'outlook':>8} {'feasible':>8} {'to find':>7} {'winners':>7} {'best from':>9}")
    for d in docs[: a.pods]:
        pod = world.cluster.parse_pod(d, a.data + "/pods.yaml", d["metadata"]["name"])
        t = time.perf_counter()
        r = sched.schedule(pod)
        cycle = time.perf_counter() - t
        if sched.last_scored is None:
            print(f"{pod.name:<44} {cycle:>6.2f}s  (not scored)")
            continue
        t = time.perf_counter()
        o = outlook(sched, r, *sched.last_scored)
        took = time.perf_counter() - t
        if o is None:
            print(f"{pod.name:<44} {cycle:>6.2f}s  (no outlook)")
            continue
        print(
            f"{pod.name:<44} {cycle:>6.2f}s {took:>7.2f}s {o['feasibleNodes']:>8} {o['numFeasibleNodesToFind']:>7} "
            f"{o.get('distinctWinners', 1):>7} {o['allNodesSelectedFromPercent']:>8.1f}%"
        )


if __name__ == "__main__":
    main()
