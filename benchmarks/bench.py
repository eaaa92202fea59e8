#!/usr/bin/env python3
"""ksched's figures on a genbig.py snapshot, next to kube-scheduler v1.34.1's own measured on the
same snapshot and machine type: the 5,000-node / 150,000-pod reference (issue 6) or the 500-node
rung (`--nodes 500 --pods 15000 --pending 1000`, issue 18).

    python benchmarks/bench.py --data DIR              # a folder written by genbig.py
    python benchmarks/bench.py --generate DIR          # write one first (genbig.py, ~1.5 GB)
    python benchmarks/bench.py --data DIR --quick      # one run of each, no YAML load
    python benchmarks/bench.py --data DIR --no-full-json   # skip `schedule -o json --detail full`

Besides the loads, cycles and the sequence in-process, the commands a user runs, each a fresh
process with its load (wall time, and CPU time of the process and its workers): `ksched schedule`
of the 1,000 pending pods as a table, `-o json` (compact) and `-o json --detail full`, and
`ksched explain` of one pod, first with an empty snapshot cache, then again (from the cache).

Every figure is the median of several runs with the min-max range; each load runs in a fresh
process (so its peak memory is its own), cycles and the sequence run in one process that
loaded cluster.json. Nothing here asserts: figures are printed (and written as JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GENBIG_CANDIDATES = [
    os.path.join(ROOT, "..", "shared", "bench", "genbig.py"),
    os.path.join(ROOT, "shared", "bench", "genbig.py"),
]
CATEGORIES = ["plain", "spread", "anti", "spread-anti", "pool", "preempt"]
CATEGORY_ANNOTATION = "bench.ksched.dev/category"

# kube-scheduler v1.34.1's framework in-process on the same snapshot, 2-core machine (issue 6)
REFERENCE = {
    "load_json": "49.6 s (decode alone 33.9 s)",
    "load_yaml": "105.9 s (decode alone 85.8 s)",
    "cycle:plain": "32-36 ms",
    "cycle:spread": "33-41 ms",
    "cycle:anti": "70-85 ms",
    "cycle:spread-anti": "60-88 ms",
    "cycle:pool": "-",
    "cycle:preempt": "11-12 ms (incl. PostFilter)",
    "sequence": "16.4-18.5 pods/s",
    "rss": "4.9-7.2 GiB",
}
# kube-scheduler v1.34.1 on the 500-node rung, from issue 18's side-by-side run (ratios there; the
# absolute figures it gives)
REFERENCE_500 = {
    "load_json": "~5.9 s (ksched was 4.2x faster)",
    "load_yaml": "-",
    "cycle:plain": "-",
    "cycle:spread": "-",
    "cycle:anti": "-",
    "cycle:spread-anti": "-",
    "cycle:pool": "-",
    "cycle:preempt": "-",
    "first_cycle": "10.7 ms",
    "sequence": "270 pods/s",
    "rss": "-",
    "commands": "~7.5 s load + sequence",
}
REFERENCE["first_cycle"] = "115 ms"
REFERENCE["commands"] = "~110 s load + sequence (49.6 s + 1,000 pods at 16.4-18.5/s)"
TARGETS = {
    "load_json": "< 15 s",
    "load_yaml": "< 90 s",
    "cycle:plain": "<= 100 ms",
    "cycle:anti": "<= 250 ms",
    "cycle:spread": "<= 123 ms",
    "cycle:spread-anti": "<= 264 ms",
    "cycle:preempt": "<= 36 ms",
    "sequence": ">= 16 pods/s",
    "rss": "< 4 GiB",
}


# ------------------------------------------------------------------------------------ children


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child_load(path: str) -> dict:
    """What `ksched explain` does before its cycle: read the snapshot, build the scheduler (its
    per-node aggregates)."""
    from kschedcli.cluster import load_cluster
    from kschedcli.config import default_config
    from kschedcli.plugins import REGISTRY
    from kschedcli.scheduler import Scheduler

    t0 = time.perf_counter()
    c0 = time.process_time()
    cluster = load_cluster([path])
    snap = Scheduler(cluster, default_config(REGISTRY)).snapshot
    t1 = time.perf_counter()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "seconds": t1 - t0,
        "cpu": time.process_time() - c0,
        "workers_cpu": kids.ru_utime + kids.ru_stime,
        "rss": _peak_rss(),
        "workers_rss": kids.ru_maxrss * 1024,
        "nodes": len(snap.node_infos),
        "pods": len(cluster.pods),
    }


def child_cycles(data: str, runs: int, seq_runs: int, seq_limit: int) -> dict:
    from kschedcli.cluster import load_cluster, load_pending_pods
    from kschedcli.config import default_config
    from kschedcli.plugins import REGISTRY
    from kschedcli.render.document import result_doc
    from kschedcli.scheduler import Scheduler

    t0 = time.perf_counter()
    cluster = load_cluster([os.path.join(data, "cluster.json")])
    config = default_config(REGISTRY)
    sched = Scheduler(cluster, config)
    load_s = time.perf_counter() - t0
    pods_path = os.path.join(data, "pods.yaml")
    pending = load_pending_pods(pods_path, cluster)
    first = {}
    for p in pending:
        cat = p.annotations.get(CATEGORY_ANNOTATION, "")
        first.setdefault(cat, p)
    out: dict = {"load_seconds": load_s, "cycles": {}, "render": {}, "outcome": {}}
    # the first cycle after a load also builds the indexes the snapshot makes on first use
    opener = first.get("plain") or pending[0]
    t = time.perf_counter()
    sched.schedule(opener)
    out["first_cycle"] = {"seconds": time.perf_counter() - t, "pod": opener.key}
    for cat in CATEGORIES:
        pod = first.get(cat)
        if pod is None:
            continue
        times, render = [], []
        res = None
        for _ in range(runs):
            sched.clear_caches()  # one explain is one cold cycle: nothing shared from before
            t = time.perf_counter()
            res = sched.schedule(pod)
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            result_doc(res)
            render.append(time.perf_counter() - t)
        out["cycles"][cat] = times
        out["render"][cat] = render
        out["outcome"][cat] = {
            "pod": pod.key,
            "schedulable": res.schedulable,
            "selected": res.selected_node,
            "feasible": len(res.feasible),
            "evaluated": len(res.filters),
            "nominated": res.preemption.nominated_node if res.preemption else None,
            "candidates_evaluated": res.preemption.evaluated_nodes if res.preemption else None,
            "kube_candidates": res.preemption.num_candidates if res.preemption else None,
            "message": res.message[:160],
        }
    seq = []
    for _ in range(seq_runs):
        sched = Scheduler(cluster, config)  # a fresh snapshot: the sequence binds
        pods = load_pending_pods(pods_path, cluster)[:seq_limit]
        scheduled = []
        t = time.perf_counter()
        # every cycle keeps each plugin's verdict on every node; the results are not retained
        # (1,000 of them on 5,000 nodes would hold ~10 GB), as a streaming renderer would not
        sched.run_sequence(pods, on_result=lambda r, out=scheduled: out.append(r.schedulable), keep=False)
        dt = time.perf_counter() - t
        seq.append({"seconds": dt, "pods": len(pods), "pods_per_s": len(pods) / dt, "scheduled": sum(scheduled)})
    out["sequence"] = seq
    out["rss"] = _peak_rss()
    return out


def _ksched(args: list[str], env: dict) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the process and its workers, exit status) of one ksched command,
    its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "kschedcli", *args], stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.returncode


def command_figures(data: str, runs: int, full_json: bool, progress) -> dict:
    """The commands as a user runs them (see the module's docstring)."""
    import tempfile

    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["KSCHED_NO_PROGRESS"] = "1"
    cluster = os.path.join(data, "cluster.json")
    pods = os.path.join(data, "pods.yaml")
    out: dict = {}
    seq = ["schedule", pods, "--cluster", cluster, "--order", "file"]
    variants = [("table", []), ("json", ["-o", "json"])] + (
        [("json_full", ["-o", "json", "--detail", "full"])] if full_json else []
    )
    for name, extra in variants:
        progress(f"ksched schedule ({name})")
        out[f"schedule_{name}"] = [_ksched(seq + extra, {**env, "KSCHED_NO_CACHE": "1"})[:2] for _ in range(runs)]
    # one pending pod, in a file of its own
    sys.path.insert(0, ROOT)
    from kschedcli.cluster import Cluster, load_pending_pods

    pending = load_pending_pods(pods, Cluster())
    pod = next((p for p in pending if p.annotations.get(CATEGORY_ANNOTATION) == "plain"), pending[0])
    with tempfile.TemporaryDirectory(prefix="ksched-bench-") as tmp:
        pod_file = os.path.join(tmp, "pod.json")
        with open(pod_file, "w") as f:
            json.dump(pod.raw, f)
        cache = {**env, "KSCHED_CACHE_DIR": os.path.join(tmp, "cache")}
        explain = ["explain", pod_file, "--cluster", cluster]
        progress("ksched explain (no cache, then first run and again)")
        out["explain_no_cache"] = [_ksched(explain, {**env, "KSCHED_NO_CACHE": "1"})[:2] for _ in range(runs)]
        out["explain_first"] = [_ksched(explain, cache)[:2]]
        deadline = time.monotonic() + 600  # the first run writes its entry in the background
        while time.monotonic() < deadline and not any(
            n.endswith(".cluster") and not n.startswith(".tmp") for n in os.listdir(cache["KSCHED_CACHE_DIR"])
        ):
            time.sleep(0.2)
        out["explain_again"] = [_ksched(explain, cache)[:2] for _ in range(runs)]
    return out


def run_child(args: list[str], env_extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", ROOT)
    if env_extra:
        env.update(env_extra)
    p = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", *args], capture_output=True, text=True, env=env
    )
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"bench: child {args[0]} failed ({p.returncode})")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------ report


def machine() -> dict:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return {
        "cpu": cpu,
        "cores": cores,
        "memory_gib": round(mem / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_start": list(os.getloadavg()),
    }


def stats(xs: list[float]) -> tuple[float, float, float]:
    return statistics.median(xs), min(xs), max(xs)


def fmt_s(xs: list[float]) -> str:
    m, lo, hi = stats(xs)
    return f"{m:.1f} s ({lo:.1f}-{hi:.1f})" if len(xs) > 1 else f"{m:.1f} s"


def fmt_ms(xs: list[float]) -> str:
    m, lo, hi = stats([x * 1000 for x in xs])
    return f"{m:.0f} ms ({lo:.0f}-{hi:.0f})" if len(xs) > 1 else f"{m:.0f} ms"


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="folder written by genbig.py (cluster.json, cluster.yaml, pods.yaml)")
    ap.add_argument("--generate", metavar="DIR", help="write the reference snapshot into DIR first")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--pending", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5, help="runs of each cycle (default 5)")
    ap.add_argument("--load-runs", type=int, default=3, help="runs of the cluster.json load (default 3)")
    ap.add_argument("--yaml-runs", type=int, default=3, help="runs of the cluster.yaml load (default 3)")
    ap.add_argument("--seq-runs", type=int, default=3, help="runs of the sequence (default 3)")
    ap.add_argument("--seq-limit", type=int, default=1000, help="pods of the sequence (default all 1,000)")
    ap.add_argument("--no-yaml", action="store_true", help="skip the cluster.yaml load")
    ap.add_argument("--no-commands", action="store_true", help="skip the ksched commands (schedule, explain)")
    ap.add_argument("--no-full-json", action="store_true", help="skip `schedule -o json --detail full`")
    ap.add_argument("--command-runs", type=int, default=3, help="runs of each command (default 3)")
    ap.add_argument("--quick", action="store_true", help="one run of everything, no YAML")
    ap.add_argument("--json", metavar="FILE", help="also write the raw figures as JSON")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.child:
        sys.path.insert(0, ROOT)
        kind = a.child[0]
        if kind == "load":
            print(json.dumps(child_load(a.child[1])))
        elif kind == "cycles":
            print(json.dumps(child_cycles(a.child[1], int(a.child[2]), int(a.child[3]), int(a.child[4]))))
        return

    if a.quick:
        a.runs, a.load_runs, a.yaml_runs, a.seq_runs, a.no_yaml, a.command_runs = 1, 1, 1, 1, True, 1
    data = a.data
    if a.generate:
        gen = next((g for g in GENBIG_CANDIDATES if os.path.exists(g)), None)
        if gen is None:
            raise SystemExit("bench: genbig.py not found beside the project (../shared/bench/)")
        subprocess.run(
            [
                sys.executable,
                gen,
                "--nodes",
                str(a.nodes),
                "--pods",
                str(a.pods),
                "--pending",
                str(a.pending),
                "--out",
                a.generate,
            ],
            check=True,
        )
        data = a.generate
    if not data:
        ap.error("--data or --generate is required")

    m = machine()
    print(
        f"machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, Python {m['python']}, "
        f"{m['platform']}; load average at start {m['loadavg_start'][0]:.2f}"
    )
    try:
        with open(os.path.join(data, "manifest.json")) as f:
            man = json.load(f)
        print(
            f"snapshot: {data}: {man['objects'].get('Node', '?')} nodes, {man['objects'].get('Pod', '?')} pods, "
            f"{sum(man['pending_categories'].values())} pending "
            f"({', '.join(f'{k} {v}' for k, v in sorted(man['pending_categories'].items()))})"
        )
    except (OSError, KeyError, ValueError):
        pass
    sys.stdout.flush()
    reference = REFERENCE
    try:
        if man["objects"].get("Node", 0) <= 1000:
            reference = REFERENCE_500
    except (NameError, KeyError, AttributeError):
        pass

    raw: dict = {"machine": m}
    rows: list[tuple[str, str, str, str]] = []
    rss_all: list[int] = []  # largest single process
    rss_sum: list[int] = []  # a load and its worker processes together

    def progress(msg: str) -> None:
        sys.stderr.write(f"bench: {msg}\n")
        sys.stderr.flush()

    loads = [("load_json", "cluster.json")] + ([] if a.no_yaml else [("load_yaml", "cluster.yaml")])
    for key, fname in loads:
        runs = []
        n_runs = a.load_runs if key == "load_json" else a.yaml_runs
        for i in range(n_runs):
            progress(f"loading {fname} ({i + 1}/{n_runs})")
            runs.append(run_child(["load", os.path.join(data, fname)]))
        raw[key] = runs
        secs = [r["seconds"] for r in runs]
        rss_all += [max(r["rss"], r["workers_rss"]) for r in runs]
        # the parent plus every worker at its own peak (an upper bound: one worker per core)
        rss_sum += [
            r["rss"] + min(m["cores"] or 1, 8) * r["workers_rss"] if r["workers_rss"] else r["rss"] for r in runs
        ]
        extra = (
            f"cpu {statistics.median([r['cpu'] for r in runs]):.1f} s"
            + (
                f" + workers {statistics.median([r['workers_cpu'] for r in runs]):.1f} s"
                if any(r["workers_cpu"] for r in runs)
                else ""
            )
            + f", peak {gib(max(r['rss'] for r in runs))}"
            + (f" + workers {gib(max(r['workers_rss'] for r in runs))}" if any(r["workers_rss"] for r in runs) else "")
        )
        rows.append(
            (
                f"load {fname} (decode, defaulting, cache)",
                fmt_s(secs) + f"  [{extra}]",
                reference[key],
                TARGETS.get(key, ""),
            )
        )

    progress(f"cycles ({a.runs} runs each) and the sequence ({a.seq_runs} runs)")
    cyc = run_child(["cycles", data, str(a.runs), str(a.seq_runs), str(a.seq_limit)])
    raw["cycles"] = cyc
    rss_all.append(cyc["rss"])
    rows.append(
        (
            "first cycle after the load (+ the snapshot's indexes built on first use)",
            fmt_ms([cyc["first_cycle"]["seconds"]]),
            reference["first_cycle"],
            "",
        )
    )
    for cat in CATEGORIES:
        if cat not in cyc["cycles"]:
            continue
        o = cyc["outcome"][cat]
        verdict = (
            f"-> {o['selected']}"
            if o["schedulable"]
            else f"unschedulable{', nominated ' + o['nominated'] if o['nominated'] else ''}"
        )
        if o.get("candidates_evaluated"):
            # kube-scheduler stops its dry run at numCandidates (from a random offset); ksched
            # evaluates every node where preemption might help
            verdict += (
                f"; dry run on {o['candidates_evaluated']} nodes, kube-scheduler's stops at {o['kube_candidates']}"
            )
        rows.append(
            (
                f"one cycle, {cat} ({o['evaluated']} nodes evaluated, {o['feasible']} feasible)",
                fmt_ms(cyc["cycles"][cat]) + f"  [+ JSON document {fmt_ms(cyc['render'][cat])}; {verdict}]",
                reference[f"cycle:{cat}"],
                TARGETS.get(f"cycle:{cat}", ""),
            )
        )
    seq = cyc["sequence"]
    rates = [s["pods_per_s"] for s in seq]
    mr, lo, hi = stats(rates)
    rows.append(
        (
            f"{seq[0]['pods']} pending pods in sequence, each bound before the next",
            f"{mr:.1f} pods/s ({lo:.1f}-{hi:.1f})  [{seq[0]['scheduled']} scheduled]"
            if len(rates) > 1
            else f"{mr:.1f} pods/s  [{seq[0]['scheduled']} scheduled]",
            reference["sequence"],
            TARGETS["sequence"],
        )
    )
    if not a.no_commands:
        cmd = command_figures(data, a.command_runs, not a.no_full_json, progress)
        raw["commands"] = cmd

        def fmt_cmd(xs: list) -> str:
            walls, cpus = [x[0] for x in xs], [x[1] for x in xs]
            return f"{min(walls):.2f} s wall (fastest of {len(xs)}), {min(cpus):.2f} s CPU"

        labels = [
            ("schedule_table", "ksched schedule PODS (1,000 pods, table), load included"),
            ("schedule_json", "ksched schedule PODS -o json (compact), load included"),
            ("schedule_json_full", "ksched schedule PODS -o json --detail full, load included"),
            ("explain_no_cache", "ksched explain POD --no-cache (parses the snapshot)"),
            ("explain_first", "ksched explain POD, empty cache (parses; the entry written in the background)"),
            ("explain_again", "ksched explain POD again (snapshot from the cache)"),
        ]
        for key, label in labels:
            if key in cmd:
                ref = reference["commands"] if key.startswith("schedule") else "-"
                rows.append((label, fmt_cmd(cmd[key]), ref, ""))
    together = f"; a load with its workers at most {gib(max(rss_sum))}" if max(rss_sum) > max(rss_all) else ""
    rows.append(
        ("peak memory (RSS)", f"{gib(max(rss_all))} largest process{together}", reference["rss"], TARGETS["rss"])
    )

    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    print()
    print(f"{'figure':<{w0}}  {'ksched (median, min-max)':<{w1}}  {'kube-scheduler v1.34.1':<{w2}}  target")
    for r in rows:
        print(f"{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]:<{w2}}  {r[3]}")
    la = os.getloadavg()
    print(
        f"\nload average at the end {la[0]:.2f} {la[1]:.2f} {la[2]:.2f} "
        f"({m['cores']} cores; other work on the machine slows every figure)"
    )
    raw["loadavg_end"] = list(la)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=2)


if __name__ == "__main__":
    main()
