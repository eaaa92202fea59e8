#!/usr/bin/env python3
"""ksched's figures on genbig.py snapshots, beside kube-scheduler v1.34.1's own measured on the same
snapshots and machine type: the 500-node rung (`genbig.py --nodes 500 --pods 15000 --pending 1000`)
and the 5,000-node / 150,000-pod reference (issues 6 and 18).

    python benchmarks/bench.py --rungs DIR                 # both rungs under DIR/500 and DIR/5000
                                                           # (written by genbig.py first if missing)
    python benchmarks/bench.py --data DIR [--data DIR2]    # folders written by genbig.py
    python benchmarks/bench.py --data DIR --base CHECKOUT  # also a second tree, in the same run
    python benchmarks/bench.py --data DIR --quick          # one run of each, no YAML load

Per rung: the load (a fresh process each, so its peak memory is its own), the first cycle after it
(which builds the snapshot's indexes) and the first preemption cycle, each category's cycle (cold:
the caches shared between cycles cleared first; on a rung of kschedcli/backend/vectors.py's size, once as a
single command runs it and once with numpy's columns, as a longer process runs it), the 1,000
pending pods in sequence in-process; then
the commands a user runs, each a fresh process with its load (wall time, and CPU time of the process
and its loader workers): `ksched schedule` of the pending pods as a table, `-o json` (compact) and
`-o json --detail full`, and `ksched explain` of one pod without the snapshot cache, with an empty
cache, and again (from the cache).

kube-scheduler cannot run here (no Go toolchain). Its figures are those issue 18 recorded beside
ksched at f8d9df1, as ratios (kube-scheduler's time / ksched's; above 1, ksched was faster) and
absolute figures of that day. Machines of this type differ by a third from day to day, so with
`--base` pointing at a checkout of f8d9df1 the bench also measures that tree in the same run and
estimates kube-scheduler's figure on this run as ratio x the base tree's (a rate: the base's / ratio).

Every figure is the median of several runs with the min-max range. Nothing here asserts: figures
are printed (and written as JSON with --json).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GENBIG_CANDIDATES = [
    os.path.join(ROOT, "..", "shared", "bench", "genbig.py"),
    os.path.join(ROOT, "shared", "bench", "genbig.py"),
]
RUNGS = {"500": (500, 15000), "5000": (5000, 150000)}
CATEGORIES = ["plain", "spread", "anti", "spread-anti", "pool", "preempt"]
CATEGORY_ANNOTATION = "bench.ksched.dev/category"

# kube-scheduler v1.34.1 beside ksched f8d9df1 (issue 18; the 5,000-node absolutes from issue 6):
# figure -> (ratio kube-scheduler / ksched, or None; the recorded figure as text)
KUBE = {
    500: {
        "load_json": (4.2, "~5.9 s"),
        "load_yaml": (3.3, "-"),
        "first_cycle": (0.66, "10.7 ms"),
        "cycle:plain": (0.79, "-"),
        "cycle:spread": (0.79, "-"),
        "cycle:anti": (1.13, "-"),
        "cycle:spread-anti": (0.88, "-"),
        "cycle:pool": (0.95, "-"),
        "cycle:preempt": (2.1, "-"),
        "preempt_per_node": (None, "-"),
        "preempt_sampled": (None, "-"),
        "sequence": (1.26, "270 pods/s"),
        "rss": (3.9, "-"),
        "commands": (None, "~7.5 s load + sequence"),
    },
    5000: {
        "load_json": (4.8, "49.6 s (decode alone 33.9 s)"),
        "load_yaml": (3.6, "105.9 s (decode alone 85.8 s)"),
        "first_cycle": (0.51, "115 ms"),
        "cycle:plain": (1.58, "32-36 ms"),
        "cycle:spread": (1.19, "33-41 ms"),
        "cycle:anti": (2.41, "70-85 ms"),
        "cycle:spread-anti": (2.01, "60-88 ms"),
        "cycle:pool": (1.89, "-"),
        "cycle:preempt": (0.55, "10-16 ms, stops at 103 nodes"),
        # issue 35: kube-scheduler's preemption cycle, 6.3-7.4 ms over the 103 nodes it dry-runs
        "preempt_per_node": (None, "61-72 us (6.3-7.4 ms / 103)"),
        "preempt_sampled": (None, "6.3-7.4 ms over 103 nodes"),
        "sequence": (2.7, "15-18.5 pods/s"),
        "rss": (6.5, "4.9-7.2 GiB"),
        "commands": (None, "~110 s load + sequence"),
    },
}
# issue 18's targets (issue 6's for the 5,000-node loads and memory)
TARGETS: dict[str, Any] = {
    "first_cycle": "< kube-scheduler",
    "cycle": "< kube-scheduler",
    "sequence": "> kube-scheduler",
    "schedule_json": "< kube-scheduler's load + sequence",
    "schedule_json_full": "< 2x kube-scheduler's load + sequence",
    "explain_again": {500: "< 0.5 s", 5000: "< 1 s"},
    "explain_first": "no slower than --no-cache",
}


# ------------------------------------------------------------------------------------ children
# A child imports ksched from the tree it is given (the checkout under test, or --base).


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child_load(path: str) -> dict:
    """What `ksched explain` does before its cycle: read the snapshot, build the scheduler (its
    per-node aggregates)."""
    from kschedcli.config.scheduler import default_config
    from kschedcli.inputs.cluster import load_cluster
    from kschedcli.plugins import REGISTRY
    from kschedcli.scheduling.scheduler import Scheduler

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
    from kschedcli.config.scheduler import default_config
    from kschedcli.inputs.cluster import load_cluster, load_pending_pods
    from kschedcli.plugins import REGISTRY
    from kschedcli.scheduling.scheduler import Scheduler

    cluster = load_cluster([os.path.join(data, "cluster.json")])
    config = default_config(REGISTRY)
    sched = Scheduler(cluster, config)
    pods_path = os.path.join(data, "pods.yaml")
    first: dict = {}
    for p in load_pending_pods(pods_path, cluster):
        first.setdefault(p.annotations.get(CATEGORY_ANNOTATION, ""), p)
    out: dict = {"cycles": {}, "outcome": {}}

    def timed(pod) -> tuple[float, Any]:
        t = time.perf_counter()
        res = sched.schedule(pod)
        return time.perf_counter() - t, res

    # numpy's columns (kschedcli/backend/vectors.py, absent from older trees) are used only by a process
    # past its first ~100 passes over a large cluster: the categories are timed as one command runs
    # them (never imported), then, on a large enough rung, as a sequence or a capacity search does
    try:
        from kschedcli.backend import vectors
    except ImportError:
        vectors = None
    shipped = vectors.IMPORT_AFTER_NODES if vectors is not None else None
    if vectors is not None:
        vectors.IMPORT_AFTER_NODES = 10**15
    # the first cycle after a load also builds the indexes the snapshot makes on first use, and the
    # first preemption cycle the per-node victim orders
    out["first_cycle"] = timed(first["plain"])[0]
    if "preempt" in first:
        out["first_preempt"] = timed(first["preempt"])[0]
    for cat in CATEGORIES:
        pod = first.get(cat)
        if pod is None:
            continue
        times = []
        for _ in range(runs):
            sched.clear_caches()  # one explain is one cold cycle: nothing shared from before
            dt, res = timed(pod)
            times.append(dt)
        out["cycles"][cat] = times
        if vectors is not None and len(sched.snapshot.node_infos) >= vectors.MIN_NODES:
            vectors.IMPORT_AFTER_NODES = 0
            numpy_times = []
            for _ in range(runs):
                sched.clear_caches()
                numpy_times.append(timed(pod)[0])
            out.setdefault("cycles_numpy", {})[cat] = numpy_times
            vectors.IMPORT_AFTER_NODES = 10**15
        pre = res.preemption
        out["outcome"][cat] = {
            "pod": pod.key,
            "schedulable": res.schedulable,
            "selected": res.selected_node,
            "feasible": len(res.feasible),
            "evaluated": len(res.filters),
            "nominated": pre.nominated_node if pre else None,
            "candidates_evaluated": pre.evaluated_nodes if pre else None,
            "kube_candidates": pre.num_candidates if pre else None,
        }
    # preemption as kube-scheduler bounds its dry run (--preemption-sampling, issue 35), beside
    # the every-node default above: the same pod, the offsets from one seeded source
    if "preempt" in first and hasattr(sched, "enable_preemption_sampling"):
        sched.enable_preemption_sampling(0)
        times = []
        evaluated = []
        for _ in range(runs):
            sched.clear_caches()
            dt, res = timed(first["preempt"])
            times.append(dt)
            evaluated.append(res.preemption.evaluated_nodes if res.preemption else 0)
        out["preempt_sampled"] = {"times": times, "evaluated": evaluated}
        for fw in sched.frameworks.values():  # back to every node
            for pl in fw.plugins.values():
                if hasattr(pl, "candidate_sampling"):
                    pl.candidate_sampling = None
    if vectors is not None:  # the sequence as `schedule` runs it (numpy imported already: its first cycles differ)
        vectors.IMPORT_AFTER_NODES = shipped
        out["numpy_after"] = shipped // len(sched.snapshot.node_infos) if sched.snapshot.node_infos else None
    seq = []
    for _ in range(seq_runs):
        sched = Scheduler(cluster, config)  # a fresh snapshot: the sequence binds
        pods = load_pending_pods(pods_path, cluster)[:seq_limit]
        scheduled: list[bool] = []
        t = time.perf_counter()
        # results not retained (1,000 of them on 5,000 nodes would hold ~10 GB), as `schedule` does
        sched.run_sequence(pods, on_result=lambda r, out=scheduled: out.append(r.schedulable), keep=False)
        dt = time.perf_counter() - t
        seq.append({"seconds": dt, "pods": len(pods), "pods_per_s": len(pods) / dt, "scheduled": sum(scheduled)})
    out["sequence"] = seq
    out["rss"] = _peak_rss()
    return out


def run_child(tree: str, args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    p = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", tree, *args], capture_output=True, text=True, env=env
    )
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"bench: child {args[0]} in {tree} failed ({p.returncode})")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------ commands


_PYCACHE: dict[str, str] = {}
_WARM: set[str] = set()


def _bytecode_env(tree: str, env: dict) -> dict:
    """`env` for running `tree` with its modules compiled, as an installed package has them (pip
    compiles on install): the bytecode is written once under a temporary folder, never into the
    tree, whatever PYTHONDONTWRITEBYTECODE says (without it every command compiles every module
    it imports again: a quarter of a second)."""
    if tree not in _PYCACHE:
        folder = _PYCACHE[tree] = tempfile.mkdtemp(prefix="ksched-bench-pycache-")
        atexit.register(shutil.rmtree, folder, True)
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", os.path.join(tree, "kschedcli")],
            env={**os.environ, "PYTHONPYCACHEPREFIX": folder},
            stdout=subprocess.DEVNULL,
            check=True,
        )
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = {**out, "PYTHONPATH": tree, "PYTHONPYCACHEPREFIX": _PYCACHE[tree]}
    if tree not in _WARM:  # the libraries' bytecode too (looked for under the prefix only)
        _WARM.add(tree)
        small = ["explain", "fixtures/pods/web.yaml", "--cluster", "fixtures/small-cluster.yaml"]
        subprocess.run(
            [sys.executable, "-m", "kschedcli", *small],
            env={**out, "KSCHED_NO_CACHE": "1"},
            cwd=tree,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    return out


def _ksched(tree: str, args: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its workers) of one ksched command, its output
    discarded."""
    env = _bytecode_env(tree, env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # run from the tree: `python -m` puts the working directory first on the path
    p = subprocess.run([sys.executable, "-m", "kschedcli", *args], stdout=subprocess.DEVNULL, env=env, cwd=tree)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):  # 1: some pod did not fit
        raise SystemExit(f"bench: ksched {' '.join(args)} failed ({p.returncode})")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _has_option(tree: str, command: str, option: str) -> bool:
    p = subprocess.run(
        [sys.executable, "-m", "kschedcli", *([command] if command else []), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": tree, "COLUMNS": "200"},
        cwd=tree,
    )
    return option in p.stdout


def command_figures(tree: str, data: str, runs: int, full_json: bool, progress) -> dict:
    """The commands as a user runs them (see the module's docstring)."""
    env = dict(os.environ, KSCHED_NO_PROGRESS="1")
    cluster = os.path.join(data, "cluster.json")
    pods = os.path.join(data, "pods.yaml")
    out: dict = {}
    seq = ["schedule", pods, "--cluster", cluster, "--order", "file"]
    # a tree without --detail writes the full document for -o json
    detail = _has_option(tree, "schedule", "--detail")
    variants = [("table", []), ("json", ["-o", "json"])] if detail else [("table", [])]
    if full_json:
        variants.append(("json_full", ["-o", "json", "--detail", "full"] if detail else ["-o", "json"]))
    for name, extra in variants:
        progress(f"ksched schedule ({name})")
        out[f"schedule_{name}"] = [_ksched(tree, seq + extra, {**env, "KSCHED_NO_CACHE": "1"}) for _ in range(runs)]
    pod = _first_pending(pods, "plain")
    with tempfile.TemporaryDirectory(prefix="ksched-bench-") as tmp:
        pod_file = os.path.join(tmp, "pod.json")
        with open(pod_file, "w") as f:
            json.dump(pod, f)
        cache_dir = os.path.join(tmp, "cache")
        cache = {**env, "KSCHED_CACHE_DIR": cache_dir}
        explain = ["explain", pod_file, "--cluster", cluster]
        progress("ksched explain (no cache; then an empty cache, and again)")
        out["explain_no_cache"] = [_ksched(tree, explain, {**env, "KSCHED_NO_CACHE": "1"}) for _ in range(runs)]
        if _has_option(tree, "", "--no-cache"):  # a tree with the snapshot cache
            out["explain_first"] = [_ksched(tree, explain, cache)]
            deadline = time.monotonic() + 600  # the first run writes its entry in the background
            while time.monotonic() < deadline and not _cache_written(cache_dir):
                time.sleep(0.2)
            out["explain_again"] = [_ksched(tree, explain, cache) for _ in range(runs)]
    return out


def _cache_written(cache_dir: str) -> bool:
    try:
        return any(n.endswith(".cluster") and not n.startswith(".tmp") for n in os.listdir(cache_dir))
    except FileNotFoundError:
        return False


def _first_pending(pods_yaml: str, category: str) -> dict:
    import yaml

    with open(pods_yaml) as f:
        docs = [d for d in yaml.load_all(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d]
    for d in docs:
        if (d.get("metadata", {}).get("annotations") or {}).get(CATEGORY_ANNOTATION) == category:
            return d
    return docs[0]


# ------------------------------------------------------------------------------------ one rung


def measure(trees: list[str], data: str, a, progress) -> list[dict]:
    """Each tree's figures on one rung, the trees alternating phase by phase so that a change in the
    machine's load weighs on them alike."""
    raws: list[dict] = [{"tree": t} for t in trees]
    loads = [("load_json", "cluster.json")] + ([] if a.no_yaml else [("load_yaml", "cluster.yaml")])
    for key, fname in loads:
        n_runs = a.load_runs if key == "load_json" else a.yaml_runs
        for i in range(n_runs):
            for raw in raws:
                progress(f"{raw['tree']}: loading {fname} ({i + 1}/{n_runs})")
                raw.setdefault(key, []).append(run_child(raw["tree"], ["load", os.path.join(data, fname)]))
    for raw in raws:
        progress(f"{raw['tree']}: cycles ({a.runs} runs each) and the sequence ({a.seq_runs} runs)")
        raw["cycles"] = run_child(raw["tree"], ["cycles", data, str(a.runs), str(a.seq_runs), str(a.seq_limit)])
    if not a.no_commands:
        for raw in raws:
            raw["commands"] = command_figures(raw["tree"], data, a.command_runs, not a.no_full_json, progress)
    return raws


def stats(xs: list[float]) -> tuple[float, float, float]:
    return statistics.median(xs), min(xs), max(xs)


def fmt_s(xs: list[float]) -> str:
    m, lo, hi = stats(xs)
    return f"{m:.2f} s ({lo:.2f}-{hi:.2f})" if len(xs) > 1 else f"{m:.2f} s"


def fmt_ms(xs: list[float]) -> str:
    m, lo, hi = stats([x * 1000 for x in xs])
    d = 2 if m < 10 else 1 if m < 100 else 0
    return f"{m:.{d}f} ms ({lo:.{d}f}-{hi:.{d}f})" if len(xs) > 1 else f"{m:.{d}f} ms"


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def _est_time(ratio: float | None, base: float | None) -> float | None:
    return ratio * base if ratio is not None and base is not None else None


def rows_of(raw: dict, base: dict | None, nodes: int) -> list[tuple[str, str, str, str, str]]:
    """(figure, ksched, base tree, kube-scheduler recorded [est. this run], target) per row."""
    kube = KUBE[500 if nodes <= 1000 else 5000]
    rows: list[tuple[str, str, str, str, str]] = []
    med = statistics.median

    def kube_col(key: str, est: float | None, unit: str) -> str:
        rec = kube[key][1]
        if est is None:
            return rec
        e = f"{est * 1000:.2f} ms" if unit == "ms" else f"{est:.2f} s" if unit == "s" else f"{est:.0f} pods/s"
        return f"{rec}; est. {e}"

    for key, fname in (("load_json", "cluster.json"), ("load_yaml", "cluster.yaml")):
        if key not in raw:
            continue
        runs = raw[key]
        secs = [r["seconds"] for r in runs]
        extra = f"cpu {med([r['cpu'] for r in runs]):.1f} s" + (
            f" + workers {med([r['workers_cpu'] for r in runs]):.1f} s" if any(r["workers_cpu"] for r in runs) else ""
        )
        b = base.get(key) if base else None
        est = _est_time(kube[key][0], med([r["seconds"] for r in b]) if b else None)
        rows.append(
            (
                f"load {fname} (+ the scheduler's snapshot)",
                f"{fmt_s(secs)} [{extra}]",
                fmt_s([r["seconds"] for r in b]) if b else "",
                kube_col(key, est, "s"),
                "",
            )
        )
    cyc = raw["cycles"]
    bc = base["cycles"] if base else None
    est = _est_time(kube["first_cycle"][0], bc["first_cycle"] if bc else None)
    rows.append(
        (
            "first cycle after the load (builds the snapshot's indexes)",
            fmt_ms([cyc["first_cycle"]]),
            fmt_ms([bc["first_cycle"]]) if bc else "",
            kube_col("first_cycle", est, "ms"),
            TARGETS["first_cycle"],
        )
    )
    if "first_preempt" in cyc:
        rows.append(
            (
                "first preemption cycle (builds the victim orders)",
                fmt_ms([cyc["first_preempt"]]),
                fmt_ms([bc["first_preempt"]]) if bc and "first_preempt" in bc else "",
                "-",
                "",
            )
        )
    for cat in CATEGORIES:
        if cat not in cyc["cycles"]:
            continue
        o = cyc["outcome"][cat]
        verdict = "fits" if o["schedulable"] else "preempts" if o["nominated"] else "fits nowhere"
        if o.get("candidates_evaluated"):
            verdict += f", dry run on {o['candidates_evaluated']} nodes, kube-scheduler's on {o['kube_candidates']}"
        b = bc["cycles"].get(cat) if bc else None
        est = _est_time(kube[f"cycle:{cat}"][0], med(b) if b else None)
        rows.append(
            (
                f"cycle, {cat} ({o['feasible']} feasible; {verdict})",
                fmt_ms(cyc["cycles"][cat]),
                fmt_ms(b) if b else "",
                kube_col(f"cycle:{cat}", est, "ms"),
                TARGETS["cycle"],
            )
        )
        with_numpy = cyc.get("cycles_numpy", {}).get(cat)
        if with_numpy:
            rows.append(
                (
                    f"  the same with numpy's columns (a sequence or search past {cyc.get('numpy_after')} cycles)",
                    fmt_ms(with_numpy),
                    "",
                    kube_col(f"cycle:{cat}", est, "ms"),
                    TARGETS["cycle"],
                )
            )
        if cat == "preempt" and o.get("candidates_evaluated"):
            # the dry run's cost per node it evaluates, beside kube-scheduler's (which samples)
            per = [t / o["candidates_evaluated"] for t in cyc["cycles"][cat]]
            rows.append(
                (
                    f"  per dry-run node ({o['candidates_evaluated']} nodes)",
                    f"{med(per) * 1e6:.1f} us",
                    "",
                    kube["preempt_per_node"][1],
                    "<= kube-scheduler's",
                )
            )
        sampled = cyc.get("preempt_sampled") if cat == "preempt" else None
        if sampled:
            n_eval = med(sampled["evaluated"])
            rows.append(
                (
                    f"  --preemption-sampling (dry run on {n_eval:.0f} nodes, as kube-scheduler's)",
                    fmt_ms(sampled["times"]),
                    "",
                    kube["preempt_sampled"][1],
                    "1.5x faster than kube-scheduler",
                )
            )
    seq = cyc["sequence"]
    if seq:
        rates = [s["pods_per_s"] for s in seq]
        b_rates = [s["pods_per_s"] for s in bc["sequence"]] if bc and bc["sequence"] else None
        est_rate = med(b_rates) / kube["sequence"][0] if b_rates else None
        rows.append(
            (
                f"{seq[0]['pods']} pending pods in sequence, each bound before the next ({seq[0]['scheduled']} fit)",
                f"{med(rates):.0f} pods/s ({min(rates):.0f}-{max(rates):.0f})",
                f"{med(b_rates):.0f} pods/s" if b_rates else "",
                kube_col("sequence", est_rate, "rate"),
                TARGETS["sequence"],
            )
        )
    cmd = raw.get("commands")
    if cmd:
        bcmd = base.get("commands", {}) if base else {}
        # kube-scheduler's load + sequence on this run: its load and rate estimated from the base's
        go_cmd = None
        if base and "load_json" in base and bc and bc["sequence"]:
            n = bc["sequence"][0]["pods"]
            go_cmd = kube["load_json"][0] * med([r["seconds"] for r in base["load_json"]]) + n * kube["sequence"][
                0
            ] / med([s["pods_per_s"] for s in bc["sequence"]])

        def fmt_cmd(xs: list) -> str:
            walls, cpus = [x[0] for x in xs], [x[1] for x in xs]
            return f"{min(walls):.2f} s wall (fastest of {len(xs)}), {min(cpus):.2f} s CPU"

        labels = [
            ("schedule_table", "ksched schedule PODS (table), load included"),
            ("schedule_json", "ksched schedule PODS -o json (compact), load included"),
            ("schedule_json_full", "ksched schedule PODS -o json --detail full, load included"),
            ("explain_no_cache", "ksched explain POD --no-cache (parses the snapshot)"),
            ("explain_first", "ksched explain POD, empty cache (the entry written in the background)"),
            ("explain_again", "ksched explain POD again (the snapshot from the cache)"),
        ]
        for key, label in labels:
            if key not in cmd:
                continue
            kube_text, target = "-", TARGETS.get(key, "")
            if isinstance(target, dict):
                target = target[500 if nodes <= 1000 else 5000]
            if key.startswith("schedule"):
                kube_text = kube["commands"][1] + (f"; est. {go_cmd:.2f} s" if go_cmd else "")
            rows.append((label, fmt_cmd(cmd[key]), fmt_cmd(bcmd[key]) if key in bcmd else "", kube_text, target))
    rss = [cyc["rss"]] + [max(r["rss"], r["workers_rss"]) for r in raw["load_json"]]
    rows.append(("peak memory (RSS), largest process", gib(max(rss)), "", kube["rss"][1], ""))
    return rows


def print_table(title: str, rows: list, with_base: bool) -> None:
    head = ("figure", "ksched (median, min-max)", "base tree, same run", "kube-scheduler v1.34.1", "target")
    keep = [0, 1, 2, 3, 4] if with_base else [0, 1, 3, 4]
    table = [tuple(r[i] for i in keep) for r in [head, *rows]]
    widths = [max(len(r[i]) for r in table) for i in range(len(keep))]
    print(f"\n{title}")
    for r in table:
        print("  ".join(f"{c:<{w}}" for c, w in zip(r, widths)).rstrip())


# ------------------------------------------------------------------------------------ main


def machine() -> dict:
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return {
        "cpu": cpu,
        "cores": cores,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_start": list(os.getloadavg()),
    }


def generate(folder: str, nodes: int, pods: int, pending: int) -> None:
    gen = next((g for g in GENBIG_CANDIDATES if os.path.exists(g)), None)
    if gen is None:
        raise SystemExit("bench: genbig.py not found beside the project (../shared/bench/)")
    cmd = [sys.executable, gen, "--nodes", str(nodes), "--pods", str(pods), "--pending", str(pending), "--out", folder]
    subprocess.run(cmd, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", action="append", default=[], help="folder written by genbig.py (repeatable)")
    ap.add_argument("--rungs", metavar="DIR", help="both rungs, DIR/500 and DIR/5000 (generated if missing)")
    ap.add_argument("--generate", metavar="DIR", help="write a snapshot into DIR first (--nodes, --pods)")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--pending", type=int, default=1000)
    ap.add_argument("--base", metavar="CHECKOUT", help="also measure this ksched checkout in the same run")
    ap.add_argument("--runs", type=int, default=7, help="runs of each cycle (default 7)")
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
        tree, kind, *rest = a.child
        sys.path.insert(0, tree)
        if kind == "load":
            print(json.dumps(child_load(rest[0])))
        elif kind == "cycles":
            print(json.dumps(child_cycles(rest[0], int(rest[1]), int(rest[2]), int(rest[3]))))
        return

    if a.quick:
        a.runs, a.load_runs, a.yaml_runs, a.seq_runs, a.no_yaml, a.command_runs = 1, 1, 1, 1, True, 1
    datas = list(a.data)
    if a.generate:
        generate(a.generate, a.nodes, a.pods, a.pending)
        datas.append(a.generate)
    if a.rungs:
        for name, (nodes, pods) in RUNGS.items():
            folder = os.path.join(a.rungs, name)
            if not os.path.exists(os.path.join(folder, "manifest.json")):
                generate(folder, nodes, pods, a.pending)
            datas.append(folder)
    if not datas:
        ap.error("--data, --rungs or --generate is required")
    base = os.path.abspath(a.base) if a.base else None

    m = machine()
    print(
        f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, {m['platform']}; "
        f"load average at start {m['loadavg_start'][0]:.2f}"
    )
    if base:
        print(f"base tree: {base} (kube-scheduler's figures estimated from issue 18's ratios against it)")

    def progress(msg: str) -> None:
        sys.stderr.write(f"bench: {msg}\n")
        sys.stderr.flush()

    raw: dict = {"machine": m, "rungs": {}}
    for data in datas:
        with open(os.path.join(data, "manifest.json")) as f:
            man = json.load(f)
        nodes = man["objects"]["Node"]
        title = (
            f"{data}: {nodes} nodes, {man['objects']['Pod']} pods, {sum(man['pending_categories'].values())} pending"
        )
        mine, *rest = measure([ROOT] + ([base] if base else []), data, a, progress)
        theirs = rest[0] if rest else None
        raw["rungs"][data] = {"ksched": mine, "base": theirs}
        print_table(title, rows_of(mine, theirs, nodes), theirs is not None)
        sys.stdout.flush()
    la = os.getloadavg()
    print(f"\nload average at the end {la[0]:.2f} {la[1]:.2f} {la[2]:.2f} ({m['cores']} cores)")
    raw["loadavg_end"] = list(la)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=2)


if __name__ == "__main__":
    main()
