#!/usr/bin/env python3
"""How long `ksched` takes to start: the commands people run in loops and in shell completion.

    python benchmarks/startup.py              # 15 runs of each command, after 2 warm-up runs
    python benchmarks/startup.py --runs 30 --imports

Each command runs as a fresh process (the `ksched` next to this Python, else on PATH), as a shell
would start it, with bytecode caches written (as `pip install` leaves them; without them, e.g. under
PYTHONDONTWRITEBYTECODE with an editable install, every run compiles the package's ~100 modules again,
which costs more than the rest of `ksched explain`). The first row is the interpreter alone, the
floor. Printed per command: the fastest and the median wall time, and the median CPU time (user +
system) of the process, which moves less than wall time on a busy machine. `--imports` adds
the modules that cost most to import in `ksched explain` (`python -X importtime`, cumulative).
Nothing here asserts: figures are printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPLAIN = ["explain", "fixtures/pods/web.yaml", "-c", "fixtures/small-cluster.yaml"]
COMMANDS = {
    "python -c pass (the interpreter alone)": ["-c", "pass"],
    "ksched --help": ["--help"],
    "ksched version": ["version"],
    "ksched explain fixtures/pods/web.yaml -c fixtures/small-cluster.yaml": EXPLAIN,
    "ksched explain ... -o json": EXPLAIN + ["-o", "json"],
    "completion of `ksched explain x.yaml -c small-cluster.yaml --node `": None,
}
COMPLETION_ENV = {
    "_KSCHED_COMPLETE": "complete_bash",
    "COMP_WORDS": "ksched explain x.yaml -c fixtures/small-cluster.yaml --node ",
    "COMP_CWORD": "6",  # the word after --node: the node names, read from the snapshot
}


def ksched_executable() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "ksched")
    return here if os.path.exists(here) else (shutil.which("ksched") or "ksched")


def run_once(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of argv in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(argv: list[str], env: dict, runs: int, warmup: int) -> dict:
    for _ in range(warmup):
        run_once(argv, env)
    walls, cpus = zip(*(run_once(argv, env) for _ in range(runs)), strict=True)
    return {"min": min(walls), "median": statistics.median(walls), "cpu": statistics.median(cpus)}


def imports(exe: str, top: int) -> list[tuple[int, str]]:
    """The modules with the largest cumulative import time in one `ksched explain` run (µs)."""
    code = "import sys; from kschedcli.cli.app import main; sys.argv = ['ksched'] + sys.argv[1:]; main()"
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *EXPLAIN],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    rows = []
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|")
        if not name.startswith("  "):  # top-level imports only: the children are inside them
            rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--imports", action="store_true", help="also list the costliest imports of explain")
    args = ap.parse_args()
    exe = ksched_executable()
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the warm-up runs write the caches an installed package has
    print(
        f"{exe}, {args.runs} runs each after {args.warmup} warm-up; load average "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    print(f"{'command':<72} {'min':>7} {'median':>7} {'cpu':>7}")
    for label, argv in COMMANDS.items():
        if argv is None:
            figures = measure([exe], {**env, **COMPLETION_ENV}, args.runs, args.warmup)
        elif argv[0] == "-c":
            figures = measure([sys.executable, *argv], env, args.runs, args.warmup)
        else:
            figures = measure([exe, *argv], env, args.runs, args.warmup)
        print(
            f"{label:<72} {figures['min'] * 1000:6.0f}ms {figures['median'] * 1000:6.0f}ms "
            f"{figures['cpu'] * 1000:6.0f}ms"
        )
    if args.imports:
        print("\ncostliest top-level imports of `ksched explain` (cumulative):")
        for us, name in imports(exe, 12):
            print(f"  {us / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
