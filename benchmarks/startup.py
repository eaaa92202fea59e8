#!/usr/bin/env python3
"""How long `ksched` takes to start: the commands people run in loops and in shell completion.

    python benchmarks/startup.py                       # 15 runs of each command, after 2 warm-up runs
    python benchmarks/startup.py --base /tmp/base      # the same commands of another checkout, interleaved
    python benchmarks/startup.py --runs 30 --imports 15

Each command runs as a fresh process, `python -m kschedcli` with the checkout (`--tree`, default this
one) first on the path, as a shell would start it, with its bytecode compiled once beforehand under a
temporary folder (as `pip install` leaves it; without bytecode every run compiles the package's
modules again, which costs more than the rest of `ksched explain`). The first row is the interpreter
alone, the floor. Printed per command: the median and fastest wall time, and the median and fastest
CPU time (user + system) of the process, which moves far less than wall time on a busy machine. With
`--base`, each run of the tree is followed by a run of the base checkout, so that both see the same
load, and the base's figures are printed beside.

`--imports N` (default 12) then lists the modules that cost most to import in `ksched explain` on the
three-node fixture (`python -X importtime`, cumulative microseconds, median over the runs), the top-level
imports and, separately, ksched's own modules by their self time. Nothing here asserts: figures are
printed. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import atexit
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPLAIN = ["explain", "fixtures/pods/web.yaml", "-c", "fixtures/small-cluster.yaml"]
COMMANDS = {
    "python -c pass (the interpreter alone)": None,
    "ksched --help": ["--help"],
    "ksched version": ["version"],
    "ksched explain fixtures/pods/web.yaml -c fixtures/small-cluster.yaml": EXPLAIN,
    "ksched explain ... -o json": EXPLAIN + ["-o", "json"],
    "completion of `ksched explain x.yaml -c small-cluster.yaml --node `": ["<completion>"],
}
COMPLETION_ENV = {
    "_KSCHED_COMPLETE": "complete_bash",
    "COMP_WORDS": "ksched explain x.yaml -c fixtures/small-cluster.yaml --node ",
    "COMP_CWORD": "6",  # the word after --node: the node names, read from the snapshot
}


def tree_env(tree: str, base_env: dict) -> dict:
    """The environment running `tree`'s ksched with its bytecode (compiled here, once, under a
    temporary folder: never written into the tree)."""
    folder = tempfile.mkdtemp(prefix="ksched-startup-pycache-")
    atexit.register(shutil.rmtree, folder, True)
    env = {**base_env, "PYTHONPATH": tree, "PYTHONPYCACHEPREFIX": folder}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", os.path.join(tree, "kschedcli")],
        env=env,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return env


def argv_env(argv: list[str] | None, env: dict) -> tuple[list[str], dict]:
    if argv is None:
        return [sys.executable, "-c", "pass"], env
    if argv == ["<completion>"]:
        return [sys.executable, "-m", "kschedcli"], {**env, **COMPLETION_ENV}
    return [sys.executable, "-m", "kschedcli", *argv], env


def run_once(argv: list[str], env: dict, cwd: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of argv in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(argv: list[str] | None, trees: list[tuple[str, dict]], runs: int, warmup: int) -> list[dict]:
    """Per tree: min/median of wall and CPU over `runs`, the trees' runs interleaved."""
    got: list[list[tuple[float, float]]] = [[] for _ in trees]
    for i in range(warmup + runs):
        for k, (tree, env) in enumerate(trees):
            cmd, cmd_env = argv_env(argv, env)
            figures = run_once(cmd, cmd_env, tree)
            if i >= warmup:
                got[k].append(figures)
    out = []
    for rows in got:
        walls, cpus = zip(*rows, strict=True)
        cpu, wall = statistics.median(cpus), statistics.median(walls)
        out.append({"min": min(walls), "median": wall, "cpu": cpu, "cpu_min": min(cpus)})
    return out


def imports(tree: str, env: dict, runs: int) -> tuple[dict[str, int], dict[str, int], int]:
    """From `runs` runs of `ksched explain` under -X importtime: the top-level imports' cumulative
    µs, ksched's modules' self µs (medians), and the median of all imports' total."""
    tops: dict[str, list[int]] = {}
    own: dict[str, list[int]] = {}
    totals = []
    for _ in range(runs):
        r = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "kschedcli", *EXPLAIN],
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        total = 0
        for line in r.stderr.splitlines():
            if not line.startswith("import time:") or "cumulative" in line:
                continue
            self_us, cumulative, name = line[len("import time:") :].split("|")
            total += int(self_us)
            if not name.startswith("  "):  # top-level imports: their children are inside them
                tops.setdefault(name.strip(), []).append(int(cumulative))
            if name.strip().startswith("kschedcli"):
                own.setdefault(name.strip(), []).append(int(self_us))
        totals.append(total)
    med = {k: int(statistics.median(v)) for k, v in tops.items()}
    med_own = {k: int(statistics.median(v)) for k, v in own.items()}
    return med, med_own, int(statistics.median(totals))


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--tree", default=ROOT, help="the checkout measured (default: this one)")
    ap.add_argument("--base", help="another checkout, measured in the same run for comparison")
    ap.add_argument("--imports", type=int, default=12, metavar="N", help="list the N costliest imports (0: none)")
    args = ap.parse_args()
    base_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", "KSCHED_NO_PROGRESS": "1"}
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    trees = [(args.tree, tree_env(args.tree, base_env))]
    if args.base:
        trees.append((args.base, tree_env(args.base, base_env)))
    print(f"{sys.executable} -m kschedcli, {args.runs} runs each after {args.warmup} warm-up; load average {_load()}")
    names = ["tree"] + (["base"] if args.base else [])
    head = "".join(f" {n + ' cpu':>9} {'(min)':>6} {'wall':>7}" for n in names)
    print(f"{'command':<70}{head}")
    for label, argv in COMMANDS.items():
        figures = measure(argv, trees, args.runs, args.warmup)
        cells = "".join(
            f" {f['cpu'] * 1000:7.0f}ms {f['cpu_min'] * 1000:4.0f}ms {f['median'] * 1000:5.0f}ms" for f in figures
        )
        print(f"{label:<70}{cells}")
    if args.imports:
        for name, (tree, env) in zip(names, trees, strict=True):
            tops, own, total = imports(tree, env, max(3, min(args.runs, 7)))
            print(f"\n{name}: imports of `ksched explain` (-X importtime, medians): {total / 1000:.1f} ms in all")
            print("  costliest top-level imports (cumulative):")
            for name_, us in sorted(tops.items(), key=lambda x: -x[1])[: args.imports]:
                print(f"    {us / 1000:7.1f} ms  {name_}")
            print("  ksched's costliest modules (self):")
            for name_, us in sorted(own.items(), key=lambda x: -x[1])[: args.imports]:
                print(f"    {us / 1000:7.1f} ms  {name_}")
            print(f"  ksched modules imported: {len(own)}")
    print(f"load average at the end {_load()}")


if __name__ == "__main__":
    main()
