"""`ksched sweep` on the reference snapshots (genbig.py: 500 nodes / 15,000 pods, 5,000 nodes /
150,000 pods). Targets (issue 31): every node of the 500-node snapshot ≤ 60 s on 2 cores, every
zone ≤ 30 s; every node of the 5,000-node snapshot ≤ 15 min on 2 cores with ≤ 2 GiB per worker,
scenarios/s scaling ≥ 1.7× from 1 to 2 workers, and the same on a 2-worker Dask LocalCluster.

The machine may be shared, so wall time is reported with the load average, and the figures that
do not depend on other processes are CPU time:

    python benchmarks/sweep_bench.py SNAPSHOT --sample node:50      # CPU per scenario, RSS, estimate
    python benchmarks/sweep_bench.py SNAPSHOT --sample zone:1 --check  # and the plain path's findings
    python benchmarks/sweep_bench.py SNAPSHOT --scaling 40 [--dask]  # 1 vs 2 workers (vs Dask)
    python benchmarks/sweep_bench.py SNAPSHOT --families zone,node --workers 2   # whole sweeps

--sample FAMILY:K runs every K-th scenario of the family in this process, one after another (as a
worker runs its share), and reports each scenario's CPU time (median, mean, max), the process's
peak RSS (a worker's: the loaded snapshot and one scenario at a time), its RSS after loading and
after the scenarios with the growth per scenario (flat: a few MiB of noise; issue 31's target is
≤ 2 GiB per worker over a full share), and the estimate for the whole family: load + scenarios ×
mean CPU, over 2 workers. --check runs the same scenarios again
with every cycle run in full (no Cycles shortcut, no columnar cycle: scheduling/columnar.py) and
compares the findings byte for byte.
--scaling N runs the sweep of N nodes (a selector naming them) with 1 and 2 workers (and --dask:
on a 2-worker LocalCluster), reports scenarios/s of each and checks the documents are equal.
The snapshot cache is warmed first: every figure reads its entry."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time

from kschedcli import Session


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def _rss_mib(who: int = resource.RUSAGE_SELF) -> int:
    return resource.getrusage(who).ru_maxrss // 1024


def _rss_now_mib() -> int:
    """This process's resident memory now (Linux /proc; else its peak)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 2**20
    except OSError:
        return _rss_mib()


def sample(path: str, family: str, every: int, check: bool) -> None:
    from kschedcli.whatif import sweep as sw

    t = time.process_time()
    cluster, config, _ = Session(path)._inputs()
    base = sw.Base.of(cluster, config)
    load_cpu = time.process_time() - t
    specs = sw.plan(cluster, fail=family).scenarios
    chosen = specs[::every]
    cpu: list[float] = []
    docs = []
    rss: list[int] = []  # resident memory after each scenario
    loaded_rss = _rss_now_mib()
    for spec in chosen:
        t = time.process_time()
        docs.append(sw.run_failure(base, spec))
        cpu.append(time.process_time() - t)
        rss.append(_rss_now_mib())
    mean = statistics.fmean(cpu)
    total = load_cpu + len(specs) * mean
    print(f"{path}: --fail {family}, {len(chosen)} of {len(specs)} scenarios (every {every}th), {_load()}")
    print(f"  load + base: {load_cpu:.1f} s CPU; peak RSS of this worker: {_rss_mib()} MiB")
    # growth per scenario over the second half (the first scenarios settle the allocator's pools)
    half = len(rss) // 2
    growth = (rss[-1] - rss[half - 1]) / (len(rss) - half) if half >= 1 else 0.0
    print(
        f"  RSS loaded {loaded_rss} MiB, after the first scenario {rss[0]} MiB, after the last {rss[-1]} MiB;"
        f" {growth:.2f} MiB a scenario over the second half"
    )
    print(
        f"  CPU per scenario: median {statistics.median(cpu):.3f} s, mean {mean:.3f} s, max {max(cpu):.3f} s;"
        f" cycles answered by the shortcut: {base.saved_cycles}"
    )
    declined = ", ".join(f"{why} {n}" for why, n in base.columnar_declined.most_common())
    print(f"  cycles the columnar cycle answered: {base.columnar_ran}; left to the full cycle: {declined or 'none'}")
    if every == 1:
        # the pool's tasks (sw.tasks: shares of scenarios, or a few scenarios cut in two), each to
        # the worker free first, a cut scenario's rest queued when its first part ends: what 2
        # idle cores take (a rest's second set-up not counted)
        by_spec = dict(zip((s.name for s in chosen), cpu))
        free = [load_cpu, load_cpu]
        queue = [(task, 1.0 if task.share is None else task.share) for task in sw.tasks(specs, 2)]
        while queue:
            task, part = queue.pop(0)
            k = free.index(min(free))
            free[k] += part * sum(by_spec[s.name] for s in task.specs)
            if part < 1.0 and task.share is not None:
                queue.append((sw.Task(task.start, task.specs), 1.0 - task.share))
        two = max(free)
    else:
        two = load_cpu + len(specs) * mean / 2
    print(
        f"  estimate, every scenario: {len(specs) * mean:.0f} s CPU; on 2 idle workers ≈ {two:.0f} s wall "
        f"(each loads once), on 1 ≈ {total:.0f} s"
    )
    if check:
        plain = sw.Base.of(cluster, config)
        plain.shortcuts = False
        plain.columnar = False
        again = [sw.run_failure(plain, spec) for spec in chosen]
        same = json.dumps(again, sort_keys=True) == json.dumps(docs, sort_keys=True)
        print(f"  findings with every cycle run in full: {'the same' if same else 'DIFFERENT'}")
        if not same:
            raise SystemExit(1)


def scaling(path: str, n: int, dask: bool) -> None:
    cluster = Session(path).world().cluster
    names = [node.name for node in cluster.nodes[:: max(1, len(cluster.nodes) // n)][:n]]
    selector = f"kubernetes.io/hostname in ({','.join(names)})"
    print(f"{path}: --fail node over {len(names)} nodes, {_load()}")
    docs = {}
    rates = {}
    cpu_of: dict[str, float] = {}
    runs = [("1 worker", {"workers": 1}), ("2 workers", {"workers": 2})]
    cluster_ctx = None
    if dask:
        from distributed import LocalCluster  # type: ignore[import-not-found,unused-ignore]

        cluster_ctx = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        runs.append(("Dask LocalCluster, 2 workers", {"dask": cluster_ctx.scheduler_address}))
    try:
        for label, kw in runs:
            before = (
                resource.getrusage(resource.RUSAGE_SELF).ru_utime
                + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
            )
            t = time.perf_counter()
            s = Session(path).sweep(fail="node", selector=selector, **kw)
            wall = time.perf_counter() - t
            after = (
                resource.getrusage(resource.RUSAGE_SELF).ru_utime
                + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
            )
            rates[label] = len(s.scenarios) / wall
            cpu_of[label] = after - before
            docs[label] = json.dumps(s.to_dict(), sort_keys=True)
            cpu = f"{after - before:.1f} s CPU here and in pool workers" if "dask" not in kw else "CPU in Dask workers"
            print(
                f"  {label}: {len(s.scenarios)} scenarios in {wall:.1f} s wall, {rates[label]:.2f} scenarios/s ({cpu})"
            )
    finally:
        if cluster_ctx is not None:
            cluster_ctx.close()
    # on a shared machine the wall clock mostly measures the others: the CPU each run took
    # (the pool's workers together, each loading the snapshot once) says what 2 idle cores give
    if "2 workers" in cpu_of and cpu_of["2 workers"] > 0:
        print(
            f"  CPU-bound estimate on 2 idle cores: {cpu_of['1 worker'] / (cpu_of['2 workers'] / 2):.2f}× the 1-worker"
            f" rate ({cpu_of['1 worker']:.1f} s CPU in one process vs {cpu_of['2 workers']:.1f} s over two)"
        )
    one = rates["1 worker"]
    for label, r in rates.items():
        if label != "1 worker":
            print(f"  {label}: {r / one:.2f}× the 1-worker rate (wall clock: the load above counts)")
    print(f"  pool workers' peak RSS (the largest): {_rss_mib(resource.RUSAGE_CHILDREN)} MiB")
    same = len(set(docs.values())) == 1
    print(f"  documents: {'byte-identical' if same else 'DIFFERENT'}")
    if not same:
        raise SystemExit(1)


def whole(path: str, families: str, workers: int) -> None:
    for family in families.split(","):
        t = time.perf_counter()
        c = time.process_time()
        s = Session(path).sweep(fail=family, workers=workers)
        took = time.perf_counter() - t
        n = len(s.scenarios)
        print(
            f"--fail {family} --workers {workers}: {n} scenarios in {took:.1f} s wall "
            f"({time.process_time() - c:.1f} s CPU in this process), {_load()}; {s.summary['verdict']}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("snapshot")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--families", default=None)
    ap.add_argument("--sample", metavar="FAMILY:K", default=None)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--scaling", type=int, metavar="N", default=None)
    ap.add_argument("--dask", action="store_true")
    a = ap.parse_args()
    Session(a.snapshot).world()  # the snapshot cache warmed: what follows reads its entry
    if a.sample:
        family, _, every = a.sample.partition(":")
        sample(a.snapshot, family, int(every or 1), a.check)
    if a.scaling:
        scaling(a.snapshot, a.scaling, a.dask)
    if a.families or not (a.sample or a.scaling):
        whole(a.snapshot, a.families or "zone,node", a.workers)


if __name__ == "__main__":
    main()
