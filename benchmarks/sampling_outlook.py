#!/usr/bin/env python3
"""Node sampling's cost (scheduling/sampling.py) on a genbig.py snapshot, in CPU time.

Two parts:

- the outlook of `ksched explain` (every start index read from the one cycle explain runs): per
  pending pod, the cycle's CPU time and the outlook's. Issue 33 asks for at most 2 s at 5,000
  nodes; explain's own budget wants tens of milliseconds.
- `--cycles`: sampling must make cycles cheaper, never dearer. The snapshot's pending pods
  scheduled in turn (as `ksched schedule` runs them, results not kept) and copies of its first
  plain pending pod placed (`ksched capacity --max M`), each with and without sampling (kube-scheduler's
  search from start index 0), and capacity with every copy's full cycle (the cycle sampling is
  compared with: `capacity` without sampling places alike copies incrementally,
  framework/alike.py). `--base CHECKOUT` measures another checkout's tree in the same run,
  alternately (the figures of a shared machine move with its load: compare within one run).

    python ../shared/bench/genbig.py --nodes 5000 --pods 150000 --pending 1000 --out /tmp/big5000
    python benchmarks/sampling_outlook.py /tmp/big5000 [--pods 10]
    python benchmarks/sampling_outlook.py /tmp/big5000 --cycles [--max 1000] [--runs 3] [--base ../main] [--whatif]

`--cycles` also runs capacity --sampling with every copy's sampled cycle (the reference of its
incremental mode, scheduling/sampled_alike.py) and reports both's placements digest and final start
index; `--whatif` adds `drain` of ten nodes and `diff` of the pending pods, each with and without
sampling.

Nothing here asserts: figures are printed (medians of --runs), and written as JSON with --json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CATEGORY_ANNOTATION = "bench.ksched.dev/category"


def outlook_figures(data: str, pods: int) -> None:
    import yaml

    from kschedcli import Session
    from kschedcli.scheduling.sampling import outlook

    world = Session(data + "/cluster.json").world()
    sched = world.scheduler
    with open(data + "/pods.yaml") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    print(f"{len(sched.snapshot.names)} nodes; CPU time")
    print(f"{'pod':<44} {'cycle':>8} {'outlook':>8} {'feasible':>8} {'to find':>7} {'winners':>7} {'best from':>9}")
    for d in docs[:pods]:
        pod = world.cluster.parse_pod(d, data + "/pods.yaml", d["metadata"]["name"])
        sched.clear_caches()  # one explain is one cold cycle
        t = time.process_time()
        r = sched.schedule(pod)
        cycle = time.process_time() - t
        if sched.last_scored is None:
            print(f"{pod.name:<44} {cycle * 1000:>6.1f}ms  (not scored)")
            continue
        t = time.process_time()
        o = outlook(sched, r, *sched.last_scored)
        took = time.process_time() - t
        if o is None:
            print(f"{pod.name:<44} {cycle * 1000:>6.1f}ms  (no outlook)")
            continue
        print(
            f"{pod.name:<44} {cycle * 1000:>6.1f}ms {took * 1000:>6.1f}ms {o['feasibleNodes']:>8} "
            f"{o['numFeasibleNodesToFind']:>7} {o.get('distinctWinners', 1):>7} "
            f"{o['allNodesSelectedFromPercent']:>8.1f}%"
        )


# ----------------------------------------------------------------------------- cycles


def first_plain_pod(data: str, out: str) -> str:
    """The first pending pod of category `plain` of DATA/pods.yaml, written to OUT."""
    import yaml

    with open(os.path.join(data, "pods.yaml")) as f:
        for d in yaml.safe_load_all(f):
            if d and (d["metadata"].get("annotations") or {}).get(CATEGORY_ANNOTATION) == "plain":
                with open(out, "w") as w:
                    yaml.safe_dump(d, w)
                return out
    raise SystemExit(f"{data}/pods.yaml has no pending pod of category plain")


def child_cycles(data: str, template: str, max_copies: int, whatif: bool = False, capacity_only: bool = False) -> dict:
    """One process, one tree: each measurement on a fresh scheduler over the cluster loaded once."""
    import kschedcli
    import kschedcli.scheduling.scheduler
    from kschedcli.config.scheduler import default_config
    from kschedcli.inputs.cluster import load_cluster, load_pending_pods
    from kschedcli.plugins import REGISTRY
    from kschedcli.scheduling.scheduler import Scheduler
    from kschedcli.whatif.capacity import read_templates, run_capacity

    cluster = load_cluster([os.path.join(data, "cluster.json")])
    config = default_config(REGISTRY)
    out: dict = {"nodes": len(cluster.nodes), "package": os.path.dirname(kschedcli.__file__)}

    def fresh(sampling: bool) -> Scheduler:
        sched = Scheduler(cluster, config)
        if sampling:
            sched.enable_sampling(0)
        return sched

    for sampling in (False, True) if not capacity_only else ():
        sched = fresh(sampling)
        pods = load_pending_pods(os.path.join(data, "pods.yaml"), cluster)
        placed: list[bool] = []
        t = time.process_time()
        sched.run_sequence(pods, on_result=lambda r, out=placed: out.append(r.schedulable), keep=False)
        out[f"schedule {'sampled' if sampling else 'all nodes'}"] = {
            "cpu": time.process_time() - t,
            "pods": len(pods),
            "scheduled": sum(placed),
        }
    runs = (("capacity all nodes", False, True), ("capacity all nodes, full cycles", False, False))
    runs += (("capacity sampled", True, True), ("capacity sampled, cycle per copy", True, False))
    if not hasattr(kschedcli.scheduling.scheduler.Scheduler, "_schedule_alike_sampled"):
        runs = runs[:3]  # a tree before the incremental sampled mode: its sampled copies take the cycle
    for label, sampling, incremental in runs:
        sched = fresh(sampling)
        templates = read_templates([template])
        t = time.process_time()
        report = run_capacity(sched, templates, max_copies=max_copies, incremental=incremental)
        out[label] = {"cpu": time.process_time() - t, "copies": report.replicas}
        if sched.sampling is not None:
            out[label]["nextStartIndex"] = sched.sampling.next_start
            out[label]["placements"] = hashlib.sha256("\n".join(report.runs[0].placements).encode()).hexdigest()[:16]
    if whatif:
        out.update(whatif_cycles(data))
    return out


def whatif_cycles(data: str, drained: int = 10) -> dict:
    """`drain` of the first `drained` nodes by name and `diff` of the pending pods (the same config
    on both sides), each with and without sampling; a fresh cluster each (both change theirs)."""
    from kschedcli.config.scheduler import default_config
    from kschedcli.inputs.cluster import load_cluster, load_pending_pods
    from kschedcli.plugins import REGISTRY
    from kschedcli.whatif.diff import diff
    from kschedcli.whatif.drain import drain

    config = default_config(REGISTRY)
    path = os.path.join(data, "cluster.json")
    out: dict = {}
    for sampling in (None, 0):
        cluster = load_cluster([path])
        targets = sorted(n.name for n in cluster.nodes)[:drained]
        t = time.process_time()
        report = drain(cluster, config, targets, sampling=sampling)
        label = f"drain {drained} nodes {'sampled' if sampling is not None else 'all nodes'}"
        out[label] = {"cpu": time.process_time() - t, "pods": len(report.evicted)}
    for sampling in (None, 0):
        a, b = load_cluster([path]), load_cluster([path])
        t = time.process_time()
        report = diff(
            ("a", a, config),
            ("b", b, config),
            lambda c: load_pending_pods(os.path.join(data, "pods.yaml"), c),
            sampling=sampling,
        )
        label = f"diff pending pods {'sampled' if sampling is not None else 'all nodes'}"
        out[label] = {"cpu": time.process_time() - t, "pods": report.a.pods}
    return out


def run_child(tree: str, data: str, template: str, max_copies: int, whatif: bool = False, only: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, KSCHED_NO_CACHE="1")
    cmd = [sys.executable, __file__, data, "--child", template, str(max_copies)]
    cmd += (["--whatif"] if whatif else []) + (["--capacity-only"] if only else [])
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tree)
    if p.returncode != 0:
        raise SystemExit(f"child in {tree} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def cycles_figures(a) -> dict:
    template = first_plain_pod(a.data, os.path.join(a.tmp, "plain.yaml"))
    trees = [("this tree", ROOT)] + ([("base", os.path.abspath(a.base))] if a.base else [])
    raw: dict[str, list[dict]] = {name: [] for name, _ in trees}
    if a.base and os.path.realpath(a.base) == os.path.realpath(ROOT):
        raise SystemExit("--base names this checkout")
    for r in range(a.runs):
        for name, tree in trees:  # alternately, so that both see the same load
            raw[name].append(run_child(tree, a.data, template, a.max, a.whatif, a.capacity_only))
            print(f"  run {r + 1}/{a.runs} {name} done", file=sys.stderr, flush=True)
    medians: dict[str, dict[str, float]] = {}
    for name, runs in raw.items():
        medians[name] = {
            k: statistics.median(x[k]["cpu"] for x in runs) for k in runs[0] if k not in ("nodes", "package")
        }
    first = raw[trees[0][0]][0]
    print(f"{first['nodes']} nodes, {a.runs} run(s), median CPU seconds (load average {os.getloadavg()[0]:.1f})")
    header = f"{'':<40}" + "".join(f"{name:>12}" for name, _ in trees)
    print(header)
    for k in medians[trees[0][0]]:
        detail = first[k].get("pods", first[k].get("copies"))
        row = f"{k + f' ({detail})':<34}" + "".join(
            f"{medians[name].get(k, float('nan')):>11.2f}s" for name, _ in trees
        )
        print(row)
    return {"runs": raw, "medians": medians}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="folder written by genbig.py (cluster.json, pods.yaml)")
    ap.add_argument("--pods", type=int, default=10, help="pending pods whose outlook is measured (default 10)")
    ap.add_argument("--cycles", action="store_true", help="schedule and capacity with and without sampling")
    ap.add_argument("--max", type=int, default=1000, help="capacity's copies (default 1,000)")
    ap.add_argument("--runs", type=int, default=3, help="runs of --cycles (default 3)")
    ap.add_argument("--base", metavar="CHECKOUT", help="also measure this checkout's tree, alternately")
    ap.add_argument("--tmp", default="/tmp", help="where the capacity template is written")
    ap.add_argument("--json", metavar="FILE", help="write --cycles' figures as JSON")
    ap.add_argument("--whatif", action="store_true", help="--cycles: also drain and diff, with and without sampling")
    ap.add_argument("--capacity-only", action="store_true", help="--cycles: capacity only (no schedule runs)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child_cycles(a.data, a.child[0], int(a.child[1]), a.whatif, a.capacity_only)))
        return
    if not a.cycles:
        outlook_figures(a.data, a.pods)
        return
    figures = cycles_figures(a)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
