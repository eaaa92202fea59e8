#!/usr/bin/env python3
"""A command started while the background cache writer is still writing the entry (issue 35).

    python benchmarks/cache_contention.py --data DIR [--rounds 3] [--base CHECKOUT]

Per round and checkout (the checkouts interleaved, so that both see the same load): with an empty
cache folder, a lone `ksched explain POD --cluster DIR/cluster.json` (it parses; its writer is
waited for), then again with an empty folder a first command A and, the moment A exits (its writer
now writing the entry), a second command B. Printed per checkout: the lone run's and B's wall and
CPU time (of the process and its children: the loader's workers), medians over the rounds, when
the entry was there after A exited, and whether B read the entry (its CPU time under a quarter of
the lone run's: reading costs about a tenth of parsing; `-v` is not used, its extra work after the
load would give the writer time). POD is
the first pending pod of category plain in DIR/pods.yaml. Nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CATEGORY_ANNOTATION = "bench.ksched.dev/category"


def _env(tree: str, pycache: str, cache: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {
        **env,
        "PYTHONPATH": tree,
        "PYTHONPYCACHEPREFIX": pycache,
        "KSCHED_NO_PROGRESS": "1",
        "KSCHED_CACHE_DIR": cache,
    }


def _run(tree: str, args: list[str], env: dict) -> tuple[float, float, str]:
    """(wall, CPU of the process and its waited-for children, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "kschedcli", *args],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p.stderr


def _entries(folder: str) -> list[str]:
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return [n for n in names if n.endswith(".cluster") and not n.startswith(".")]


def _wait_for_entry(folder: str) -> float:
    t0 = time.perf_counter()
    while not _entries(folder):
        if time.perf_counter() - t0 > 1800:
            raise SystemExit("cache_contention: no entry written")
        time.sleep(0.1)
    return time.perf_counter() - t0


def _settle(folder: str) -> None:
    """Until no writer's temporary file or lock is left (B's writer, if any, done too)."""
    t0 = time.perf_counter()

    def busy(n: str) -> bool:  # a temporary file or a writer's lock (not the writers' kept ratio)
        return n.startswith(".") and n != ".lock-rate"

    while any(busy(n) for n in (os.listdir(folder) if os.path.isdir(folder) else [])):
        if time.perf_counter() - t0 > 1800:
            return
        time.sleep(0.2)


def _first_plain(pods_yaml: str) -> dict:
    import yaml

    with open(pods_yaml) as f:
        for d in yaml.load_all(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if d and (d.get("metadata", {}).get("annotations") or {}).get(CATEGORY_ANNOTATION) == "plain":
                return d
    raise SystemExit(f"cache_contention: no pending pod of category plain in {pods_yaml}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="folder written by genbig.py")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--base", help="another checkout, measured in the same run")
    a = ap.parse_args()
    trees = [("tree", a.tree)] + ([("base", a.base)] if a.base else [])
    with tempfile.TemporaryDirectory(prefix="ksched-contention-") as tmp:
        pod_file = os.path.join(tmp, "pod.json")
        with open(pod_file, "w") as f:
            json.dump(_first_plain(os.path.join(a.data, "pods.yaml")), f)
        args = ["explain", pod_file, "--cluster", os.path.join(a.data, "cluster.json")]
        for name, tree in trees:
            pyc = os.path.join(tmp, "pycache-" + name)
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", os.path.join(tree, "kschedcli")],
                env={**os.environ, "PYTHONPYCACHEPREFIX": pyc},
                stdout=subprocess.DEVNULL,
                check=True,
            )
        got: dict[str, dict[str, list]] = {n: {"lone": [], "b": [], "writer": [], "b_hit": []} for n, _ in trees}
        print(f"load average at the start {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        for r in range(a.rounds):
            for name, tree in trees:
                folder = os.path.join(tmp, "cache")
                env = _env(tree, os.path.join(tmp, "pycache-" + name), folder)
                shutil.rmtree(folder, ignore_errors=True)
                wall, cpu, _ = _run(tree, args, env)
                _wait_for_entry(folder)
                _settle(folder)
                got[name]["lone"].append((wall, cpu))
                for n in os.listdir(folder):  # an empty cache again, but for the writers' kept ratio
                    if n != ".lock-rate":
                        os.unlink(os.path.join(folder, n))
                _run(tree, args, env)  # A: its writer starts before it exits
                t_a = time.perf_counter()
                wall_b, cpu_b, err_b = _run(tree, args, env)
                _wait_for_entry(folder)
                got[name]["writer"].append(time.perf_counter() - t_a)
                _settle(folder)
                got[name]["b"].append((wall_b, cpu_b))
                got[name]["b_hit"].append(cpu_b < cpu / 4)  # a read costs a tenth of a parse
                print(
                    f"round {r + 1} {name}: lone {wall:.2f} s wall {cpu:.2f} s CPU; "
                    f"B {wall_b:.2f} s wall {cpu_b:.2f} s CPU (read the entry: {got[name]['b_hit'][-1]}); "
                    f"load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
        for name, _ in trees:
            g = got[name]
            print(
                f"{name}: lone cold run {statistics.median(w for w, _ in g['lone']):.2f} s wall, "
                f"{statistics.median(c for _, c in g['lone']):.2f} s CPU; second command B "
                f"{statistics.median(w for w, _ in g['b']):.2f} s wall, "
                f"{statistics.median(c for _, c in g['b']):.2f} s CPU; "
                f"B read the entry in {sum(g['b_hit'])} of {len(g['b_hit'])}; "
                f"the entry there {statistics.median(g['writer']):.2f} s after A exited"
            )
        print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
