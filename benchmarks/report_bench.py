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
    row = {
        "report": name,
        "bytes": size,
        "cpu_s_median": round(statistics.median(times), 3),
        "first_s": round(first or 0, 3),
    }
    median, first_s = row["cpu_s_median"], row["first_s"]
    print(f"  {name:<10} {size / 1e6:6.2f} MB   median {median:.2f} s CPU   (first, with start-up: {first_s:.2f} s)")
    return row


COMMANDS = ("explain", "capacity", "diff", "sweep", "scale-up")


def answers(s, pod: str, by_name: bool, commands: list[str], pods_file: str | None, sweep: str = "zone"):
    """Each command's answer through the Session, timed (the question, not the report)."""
    most = str(ROOT / "fixtures/config/most-allocated.yaml")
    asks = {
        "explain": lambda: s.explain(pod, is_file=not by_name, fixes=0),
        "capacity": lambda: s.capacity([template], max_copies=50),
        "diff": lambda: s.diff(pods_file, against_config=most),
        "sweep": lambda: s.sweep(**_sweep_args(sweep)),
        "scale-up": lambda: s.scale_up(pods_file),
    }
    for kind in commands:
        t0 = time.process_time()
        if kind == "capacity":
            e = s.explain(pod, is_file=not by_name, fixes=0)
            template = _template_of(e)
        a = asks[kind]()
        print(f"  ({kind} asked in {time.process_time() - t0:.2f} s CPU)")
        yield kind, a


def _sweep_args(spec: str) -> dict:
    """--sweep: `zone`, `node`, or `nodes=K:S` (S random sets of K nodes, seed 1), in this process."""
    if ":" in spec:
        fail, samples = spec.split(":", 1)
        return {"fail": fail, "samples": int(samples), "seed": 1, "workers": 1}
    return {"fail": spec, "workers": 1}


def _template_of(e) -> str:
    """A file holding the explained pod, for capacity's template."""
    import tempfile

    import yaml

    raw = dict(e.result.pod.raw)
    raw["spec"] = {k: v for k, v in (raw.get("spec") or {}).items() if k != "nodeName"}
    raw.pop("status", None)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(raw, f)
    return f.name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", action="append", default=[], help="a genbig.py folder (repeatable)")
    ap.add_argument("--fixtures", action="store_true", help="fixtures/prod-cluster.yaml")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--commands", default=",".join(COMMANDS), help="which reports (default: all)")
    ap.add_argument(
        "--sweep",
        default="zone",
        help="the sweep reported: zone (default), node, or nodes=K:S (S random K-node failures; an "
        "every-zone sweep of the 5,000-node snapshot reschedules ~48,000 pods a zone)",
    )
    args = ap.parse_args()
    from kschedcli import Session
    from kschedcli.render.html import report_html

    cases = []
    if args.fixtures:
        prod = [str(ROOT / "fixtures/prod-cluster.yaml")]
        waiting = str(ROOT / "fixtures/pods/reporting.yaml")
        cases.append(("fixtures", prod, str(ROOT / "fixtures/pods/web.yaml"), False, waiting))
    for d in args.data:
        manifest = json.loads((Path(d) / "manifest.json").read_text())
        pod = manifest["first_pending_of_category"]["plain"]
        cases.append((Path(d).name + " nodes", [str(Path(d) / "cluster.json")], pod, True, str(Path(d) / "pods.yaml")))
    out = []
    for label, cluster, pod, by_name, pods_file in cases:
        print(label)
        s = Session([*cluster, *([pods_file] if pods_file else [])])
        for kind, a in answers(s, pod, by_name, args.commands.split(","), pods_file, args.sweep):
            doc = a.to_dict()
            row = measure(kind, lambda a=a, doc=doc, kind=kind: report_html(kind, doc, a.utilization()), args.runs)
            out.append({"snapshot": label, **row})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
