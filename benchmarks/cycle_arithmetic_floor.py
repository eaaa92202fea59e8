#!/usr/bin/env python3
"""The floor under a zone failure's cycle (issue 31): the arithmetic of one cycle of the plugin
set those cycles run, done in numpy over a whole node column at once, with nothing around it.

A cycle of `ksched sweep --fail zone` at 5,000 nodes (3,333 nodes left) scores a replacement pod
with TaintToleration, NodeResourcesFit, PodTopologySpread (system defaults), BalancedAllocation
and ImageLocality after the node-local filters and Fit's. This script does that arithmetic on
synthetic columns: Fit's filter on four resources, LeastAllocated on two, the balance of two
fractions, a spreading score from a hostname and a zone count with Go's rounding and the
min/max normalization, a reversed taint score, the weighted sum and the best node with ties
broken by name rank. It says what a cycle kept in columns end to end could cost; it measures no
part of ksched and checks no answer (the scheduler's own tests and the conformance corpus do).

    python benchmarks/cycle_arithmetic_floor.py [--nodes 3333] [--cycles 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def columns(n: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    alloc = [rng.integers(4000, 64000, n), rng.integers(8 << 30, 256 << 30, n), rng.integers(50 << 30, 100 << 30, n)]
    alloc.append(np.full(n, 110))
    requested = [a // 2 for a in alloc]
    return {
        "alloc": alloc,
        "requested": requested,
        "nonzero": [requested[0] + 100, requested[1] + (200 << 20)],
        "static": rng.random(n) > 0.05,  # the node-local filters' verdicts, kept per class
        "zone": rng.integers(0, 2, n),
        "name_rank": rng.permutation(n),
        "host_count": rng.integers(0, 3, n),
        "zone_count": np.array([40, 41]),
        "taint_raw": rng.integers(0, 2, n),
        "image": rng.integers(0, 30, n),
    }


def cycle(c: dict, pod: tuple[int, int, int, int]) -> int:
    fits = c["static"].copy()
    for a, r, p in zip(c["alloc"], c["requested"], pod):
        if p:
            fits &= (a - r) >= p
    at = np.flatnonzero(fits)
    least = 0
    for a, r, p in zip(c["alloc"][:2], c["nonzero"], pod[:2]):
        aa, rr = a[at], r[at] + p
        least = least + np.where(rr > aa, 0, (aa - rr) * 100 // aa)
    fit = least // 2
    f0 = np.minimum((c["requested"][0][at] + pod[0]) / c["alloc"][0][at], 1.0)
    f1 = np.minimum((c["requested"][1][at] + pod[1]) / c["alloc"][1][at], 1.0)
    balanced = ((1 - np.abs(f0 - f1) / 2) * 100).astype(np.int64)
    raw = c["host_count"][at] * np.log(len(at) + 2) + 2.0 + c["zone_count"][c["zone"][at]] * np.log(4) + 4.0
    whole = np.trunc(raw)
    raw = np.where(raw - whole >= 0.5, whole + 1, whole).astype(np.int64)  # math.Round
    lo, hi = raw.min(), raw.max()
    spread = 100 * (hi + lo - raw) // hi if hi else np.full(len(at), 100)
    taints = c["taint_raw"][at]
    most = taints.max()
    taint = 100 - taints * 100 // most if most else np.full(len(at), 100)
    total = fit + balanced + 2 * spread + 3 * taint + c["image"][at]
    ties = at[total == total.max()]
    return int(ties[np.argmin(c["name_rank"][ties])])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=3333)
    ap.add_argument("--cycles", type=int, default=2000)
    args = ap.parse_args()
    c = columns(args.nodes)
    pod = (500, 512 << 20, 0, 1)
    for _ in range(100):
        cycle(c, pod)
    t0 = time.process_time()
    for _ in range(args.cycles):
        cycle(c, pod)
    per = (time.process_time() - t0) / args.cycles
    print(f"{args.nodes} nodes: {per * 1e3:.3f} ms of CPU a cycle's arithmetic ({args.cycles} cycles)")


if __name__ == "__main__":
    main()
