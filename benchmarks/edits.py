#!/usr/bin/env python3
"""What cluster edits cost on a big snapshot: each edit applied to the loaded cluster (kschedcli/
edits.py), then the scheduler's snapshot built, next to building it without edits.

    python benchmarks/edits.py --data DIR      # a folder written by genbig.py (cluster.json)

One run of each in one process (the snapshot is loaded once); figures are printed, nothing asserts.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kschedcli.config.scheduler import default_config  # noqa: E402
from kschedcli.inputs.cluster import load_cluster  # noqa: E402
from kschedcli.plugins import REGISTRY  # noqa: E402
from kschedcli.scheduling.scheduler import Scheduler  # noqa: E402
from kschedcli.whatif.edits import Edit, apply_edits  # noqa: E402


def timed(label: str, fn):
    t = time.perf_counter()
    out = fn()
    print(f"{label:<58} {1000 * (time.perf_counter() - t):9.1f} ms")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    cluster = timed("load cluster.json", lambda: load_cluster([os.path.join(args.data, "cluster.json")]))
    print(f"  {len(cluster.nodes)} nodes, {len(cluster.pods)} bound pods")
    config = default_config(REGISTRY)
    timed("build the scheduler's snapshot (no edits)", lambda: Scheduler(cluster, config))
    first = cluster.nodes[0].name
    edits = [
        Edit("--cordon", "topology.kubernetes.io/zone=us-east-1a"),
        Edit("--uncordon", "topology.kubernetes.io/zone=us-east-1a"),
        Edit("--taint", "topology.kubernetes.io/zone=us-east-1b:maintenance=true:NoSchedule"),
        Edit("--label", "topology.kubernetes.io/zone=us-east-1c:rack=r1"),
        Edit("--add-node", f"{first}:100"),
        Edit("--remove-node", "topology.kubernetes.io/zone in (us-east-1c)"),
        Edit("--evict", f"{cluster.pods[0].namespace}/{cluster.pods[0].name}"),
    ]
    for e in edits:
        [applied] = timed(f"{e.flag} {e.value}"[:58], lambda e=e: apply_edits(cluster, [e]))
        print(f"  {applied.summary[:100]}")
    timed("build the scheduler's snapshot (after the edits)", lambda: Scheduler(cluster, config))


if __name__ == "__main__":
    main()
