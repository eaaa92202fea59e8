#!/usr/bin/env python3
"""Where a repeated `ksched explain` goes: the snapshot cache (kschedcli/inputs/cache.py) on a
genbig.py snapshot, phase by phase.

    python benchmarks/cache_bench.py --data DIR [--runs 5] [--tree CHECKOUT]

With an empty cache folder, one `ksched explain POD --cluster DIR/cluster.json` parses and writes
the entry (in the background; waited for), then each run is a fresh process reading it, timed in
phases (from the interpreter's start, which costs 20 ms more): imports, reading the entry (map,
MAC, unpickle), the release and config, taking the scheduler's snapshot, the cycle, the view.
POD is the first pending pod of category plain in DIR/pods.yaml, given as a file; then the same
pod by NAMESPACE/NAME with DIR/pods.yaml as a second --cluster file (its pending pods are looked up
in the cached cluster, no file read again). Printed: median and fastest wall and CPU time (of the
process; the first run's loader workers not counted) per phase, the entry's size. Bytecode is
compiled first, as an installed package has it. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CATEGORY_ANNOTATION = "bench.ksched.dev/category"

# run in the child: the CLI with marks at each phase's end, printed as JSON on stderr's last line
PHASES = r"""
import json, os, sys, time
T0, C0 = time.perf_counter(), time.process_time()
marks = []
def mark(label):
    marks.append((label, time.perf_counter() - T0, time.process_time() - C0))
import kschedcli.cli.app as cli
from kschedcli.inputs import cache as snapshot_cache
from kschedcli.scheduling import scheduler as sched_mod
from kschedcli.whatif import world
mark("imports")
read_entry = snapshot_cache._read
def timed_read(*args):
    mark("before the entry")
    out = read_entry(*args)
    mark("reading the entry")
    return out
snapshot_cache._read = timed_read
class Timed(sched_mod.Scheduler):
    def __init__(self, *a, **k):
        mark("release and config")
        super().__init__(*a, **k)
        mark("the scheduler (its snapshot taken)")
    def schedule(self, *a, **k):
        r = super().schedule(*a, **k)
        mark("the cycle")
        return r
sched_mod.Scheduler = world.Scheduler = Timed
cli.exit_after = lambda entry: entry()
sys.argv = ["ksched", *sys.argv[1:]]
try:
    cli.main()
except SystemExit:
    pass
mark("the view")
sys.stdout.flush()
print(json.dumps(marks), file=sys.stderr)
"""


def _env(tree: str, pycache: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": tree, "PYTHONPYCACHEPREFIX": pycache, "KSCHED_NO_PROGRESS": "1"}


def _phases(tree: str, args: list[str], env: dict) -> dict[str, tuple[float, float]]:
    """Each phase's (wall, CPU) seconds in one fresh process."""
    p = subprocess.run(
        [sys.executable, "-c", PHASES, *args], cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    marks = json.loads(p.stderr.strip().splitlines()[-1])
    out: dict[str, tuple[float, float]] = {}
    prev_w = prev_c = 0.0
    for label, w, c in marks:
        if label != "before the entry":
            out[label] = (out.get(label, (0.0, 0.0))[0] + w - prev_w, out.get(label, (0.0, 0.0))[1] + c - prev_c)
        prev_w, prev_c = w, c
    out["total"] = (marks[-1][1], marks[-1][2])
    return out


def _first_plain(pods_yaml: str) -> dict:
    import yaml

    with open(pods_yaml) as f:
        for d in yaml.load_all(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if d and (d.get("metadata", {}).get("annotations") or {}).get(CATEGORY_ANNOTATION) == "plain":
                return d
    raise SystemExit(f"cache_bench: no pending pod of category plain in {pods_yaml}")


def _wait_for_entry(folder: str) -> int:
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        names = os.listdir(folder) if os.path.isdir(folder) else []
        done = [n for n in names if n.endswith(".cluster") and not n.startswith(".tmp")]
        if done:
            return os.path.getsize(os.path.join(folder, done[0]))
        time.sleep(0.2)
    raise SystemExit("cache_bench: no cache entry written")


def _report(title: str, runs: list[dict[str, tuple[float, float]]]) -> None:
    print(title)
    for label in runs[0]:
        w = [r[label][0] for r in runs]
        c = [r[label][1] for r in runs]
        print(
            f"  {label:36s} wall {statistics.median(w):6.3f} s (min {min(w):.3f})   CPU {statistics.median(c):6.3f} s"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="folder written by genbig.py")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tree", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    cluster, pods = os.path.join(a.data, "cluster.json"), os.path.join(a.data, "pods.yaml")
    with tempfile.TemporaryDirectory(prefix="ksched-cache-bench-") as tmp:
        env = _env(a.tree, os.path.join(tmp, "pycache"))
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", os.path.join(a.tree, "kschedcli")], env=env, check=True
        )
        pod = _first_plain(pods)
        pod_file = os.path.join(tmp, "pod.json")
        with open(pod_file, "w") as f:
            json.dump(pod, f)
        by_file = ["explain", pod_file, "--cluster", cluster]
        name = f"{pod['metadata'].get('namespace') or 'default'}/{pod['metadata']['name']}"
        by_name = ["explain", name, "--cluster", cluster, "--cluster", pods]
        for title, args in ((f"explain POD-FILE --cluster {cluster}", by_file), (f"explain {name}", by_name)):
            folder = os.path.join(tmp, "cache-" + str(len(args)))
            cenv = {**env, "KSCHED_CACHE_DIR": folder}
            wall, cpu = _phases(a.tree, args, cenv)["total"]
            size = _wait_for_entry(folder)
            print(f"{title}: first run (parses; the {size / 2**20:.0f} MB entry written in the background)")
            print(f"  {'total':36s} wall {wall:6.3f} s               CPU {cpu:6.3f} s")
            _report(
                f"{title}: again, from the cache ({a.runs} runs)", [_phases(a.tree, args, cenv) for _ in range(a.runs)]
            )


if __name__ == "__main__":
    main()
