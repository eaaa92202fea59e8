#!/usr/bin/env python3
"""`--report FILE.html`'s size and the CPU time of writing it (docs/reports.md), on genbig.py
snapshots (the 500-node and 5,000-node references) or the fixtures:

    python benchmarks/report_bench.py --data /work/bench-data/500 [--data /work/bench-data/5000]
    python benchmarks/report_bench.py --fixtures

Per snapshot: the explanation of one pending pod (manifest.json's first plain pod) and the capacity
of that pod (--max 50), asked once through the Session; then each report built `--runs` times
from the answer's document and utilization (render.html.report_html): the median CPU time of the
process (time.process_time, which counts vl-convert's threads) and the page's size. The first
build of a process also starts vl-convert's JavaScript runtime (reported apart: `first`).
Nothing here asserts."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def measure(name: str, build, runs: int) -> dict:
    times = []
    size = 0
    first = None
    for i in range(runs + 1):
        t0 = time.process_time()
        text = build()
        dt = time.process_time() - t0
        size = len(text.encode())
        if i == 0:
            first = dt
        else:
            times.append(dt)
    row = {"report": name, "bytes": size, "cpu_s_median": round(statistics.median(times), 3), "first_s": round(first or 0, 3)}
    print(f"  {name:<28} {size / 1e6:6.2f} MB   median {row['cpu_s_median']:.2f} s CPU   (first, with the runtime's start: {row['first_s']:.2f} s)")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", action="append", default=[], help="a genbig.py folder (repeatable)")
    ap.add_argument("--fixtures", action="store_true", help="fixtures/prod-cluster.yaml")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from kschedcli import Session
    from kschedcli.render.html import report_html

    cases = []
    if args.fixtures:
        cases.append(("fixtures", [str(ROOT / "fixtures/prod-cluster.yaml")], str(ROOT / "fixtures/pods/web.yaml"), False))
    for d in args.data:
        manifest = json.loads((Path(d) / "manifest.json").read_text())
        pod = manifest["first_pending_of_category"]["plain"]
        cases.append((Path(d).name + " nodes", [str(Path(d) / "cluster.json"), str(Path(d) / "pods.yaml")], pod, True))
    out = []
    for label, cluster, pod, by_name in cases:
        print(label)
        s = Session(cluster)
        t0 = time.process_time()
        e = s.explain(pod, is_file=not by_name, fixes=0)
        doc = e.to_dict()
        print(f"  (explain asked in {time.process_time() - t0:.2f} s CPU)")
        out.append(measure("explain", lambda e=e, doc=doc: report_html("explain", doc, e.utilization()), args.runs))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
