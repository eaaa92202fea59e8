"""`ksched sweep` on the 500-node snapshot: every node (target ≤ 60 s on 2 cores) and every zone
(target ≤ 30 s). Generate the snapshot first:

    python /work/shared/bench/genbig.py --nodes 500 --out /tmp/big500
    python benchmarks/sweep_bench.py /tmp/big500/cluster.json [--workers 2]

Prints the wall time of each sweep (the snapshot cache warmed first) and its verdict."""

from __future__ import annotations

import argparse
import time

from kschedcli import Session


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("snapshot")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--families", default="zone,node")
    a = ap.parse_args()
    Session(a.snapshot).world()  # the snapshot cache warmed: the sweeps below read its entry
    for family in a.families.split(","):
        t = time.perf_counter()
        s = Session(a.snapshot).sweep(fail=family, workers=a.workers)
        took = time.perf_counter() - t
        n = len(s.scenarios)
        print(f"--fail {family} --workers {a.workers}: {n} scenarios in {took:.1f} s; {s.summary['verdict']}")


if __name__ == "__main__":
    main()
