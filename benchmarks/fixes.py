#!/usr/bin/env python3
"""What `explain --fixes 3` (the default) costs on the 5,000-node reference snapshot, next to
explain without fixes (issue 16's budget: at most twice as long).

    python benchmarks/fixes.py --data DIR      # a folder written by genbig.py (cluster.json, pods.yaml)

The snapshot is loaded once. For each pod: the caches are cleared (a fresh process's first cycle),
then explain's work is timed (the cycle and the views' analysis), then the fix search on top. The
pods: the pending pods genbig marks `preempt` (they fit only by preemption), and two made
unschedulable from a plain pending pod (a request no node has free; a taint of the memory pool it
does not tolerate, with a node selector for that pool). Figures are printed, nothing asserts.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kschedcli.inputs.cluster import load_pending_pods  # noqa: E402
from kschedcli.scheduling.analysis import annotate  # noqa: E402
from kschedcli.whatif.fixes.search import find_fixes  # noqa: E402
from kschedcli.whatif.world import open_world  # noqa: E402

CATEGORY = "bench.ksched.dev/category"


def made_unschedulable(session, plain):
    """Two pods no node takes, from a plain pending pod's object."""
    big = copy.deepcopy(plain.raw)
    big["metadata"]["name"] += "-huge"
    for c in big["spec"]["containers"]:
        c.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "40"
    pinned = copy.deepcopy(plain.raw)
    pinned["metadata"]["name"] += "-memory-pool"
    pinned["spec"]["nodeSelector"] = {"node-pool": "memory-optimized"}
    return [session.cluster.parse_pod(big, "bench", ""), session.cluster.parse_pod(pinned, "bench", "")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--fixes", type=int, default=3)
    args = ap.parse_args()
    t = time.perf_counter()
    session = open_world([os.path.join(args.data, "cluster.json")], None)
    load = time.perf_counter() - t
    print(f"load cluster.json and build the snapshot: {load:.1f} s ({len(session.scheduler.snapshot.list())} nodes)")
    pending = load_pending_pods(os.path.join(args.data, "pods.yaml"), session.cluster)
    chosen = [p for p in pending if p.annotations.get(CATEGORY) == "preempt"][:3]
    plain = next(p for p in pending if p.annotations.get(CATEGORY) == "plain")
    chosen += made_unschedulable(session, plain)
    print(f"{'pod':<48} {'explain':>9} {'fixes':>9} {'ratio':>6}  cycles  kept")
    for pod in chosen:
        session.scheduler.clear_caches()
        t = time.perf_counter()
        r = session.scheduler.schedule(pod)
        annotate(r, session)
        base = time.perf_counter() - t
        t = time.perf_counter()
        search = find_fixes(session, r, args.fixes)
        extra = time.perf_counter() - t
        kinds = ",".join(s.kind for s in search.suggestions)
        print(
            f"{pod.key[:48]:<48} {1000 * base:7.0f}ms {1000 * extra:7.0f}ms {(base + extra) / base:5.2f}x"
            f"  {search.verified:>6}  {kinds}"
        )
        print(f"{'':<48} whole command (load + explain): {(load + base + extra) / (load + base):.2f}x")


if __name__ == "__main__":
    main()
