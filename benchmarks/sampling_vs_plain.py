#!/usr/bin/env python3
"""Each sampled question beside its all-nodes twin, CPU time, in one process (issue 33: `--sampling`
makes cycles cheaper, never dearer).

    python benchmarks/sampling_vs_plain.py DATA [--runs 3] [--max 1000] [--only capacity,drain,...]

DATA is a folder written by genbig.py (cluster.json, pods.yaml, manifest.json; the reference
snapshots are /work/bench-data/500 and /work/bench-data/5000). Per run, each question runs once
without and once with sampling (kube-scheduler's search from start index 0), alternately, on a
fresh scheduler (the cluster parsed once; `drain` and `diff` change theirs, so they get a freshly
parsed one each, its parse not timed):

- capacity: copies of the snapshot's first plain pending pod (manifest.json's
  first_pending_of_category), `--max` of them (`ksched capacity POD --max N [--sampling]`), with
  the split of each mode's time into the first copy's cycle, the second copy (the incremental
  state built, then placed) and the copies after it (per copy);
- drain: the first ten nodes by name (`ksched drain` of them);
- diff: the pending pods in two worlds of the same config (`ksched diff pods.yaml`);
- schedule: the pending pods in turn (`ksched schedule pods.yaml`, results not kept);
- explain: the start-index distribution of `explain` (its outlook, read from the one all-nodes
  cycle) for the first plain pending pod and the first pods of pods.yaml: the cycle's time and the
  outlook's (there is no "without": the all-nodes cycle is what explain runs either way).

Figures are medians of --runs, with the load average; nothing asserts (--json FILE writes them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

QUESTIONS = ("capacity", "drain", "diff", "schedule", "explain")


def first_pending(data: str, category: str = "plain") -> dict:
    """The pending pod of `category` that manifest.json names, as a document of pods.yaml."""
    import yaml

    with open(os.path.join(data, "manifest.json")) as f:
        key = json.load(f)["first_pending_of_category"][category]
    with open(os.path.join(data, "pods.yaml")) as f:
        for d in yaml.safe_load_all(f):
            if d and f"{d['metadata'].get('namespace', 'default')}/{d['metadata']['name']}" == key:
                return d
    raise SystemExit(f"{data}/pods.yaml has no pod {key}")


class Bench:
    def __init__(self, data: str, max_copies: int):
        from kschedcli.config.scheduler import default_config
        from kschedcli.inputs.cluster import load_cluster
        from kschedcli.plugins import REGISTRY

        self.data = data
        self.path = os.path.join(data, "cluster.json")
        self.load = lambda: load_cluster([self.path])
        self.cluster = self.load()
        self.config = default_config(REGISTRY)
        self.max_copies = max_copies
        import yaml

        self.template = os.path.join("/tmp", f"ksched-bench-plain-{os.getpid()}.yaml")
        with open(self.template, "w") as w:
            yaml.safe_dump(first_pending(data), w)

    def fresh(self, sampling: bool, cluster=None):
        from kschedcli.scheduling.scheduler import Scheduler

        sched = Scheduler(cluster or self.cluster, self.config)
        if sampling:
            sched.enable_sampling(0)
        return sched

    # -- the questions: each returns (CPU seconds, detail dict) ------------------------------
    def capacity(self, sampling: bool) -> tuple[float, dict]:
        from kschedcli.whatif.capacity import read_templates, run_capacity

        sched = self.fresh(sampling)
        calls: list[float] = []
        inner = sched.schedule_alike

        def timed(pod, seed=None):
            t = time.process_time()
            r = inner(pod, seed)
            calls.append(time.process_time() - t)
            return r

        sched.schedule_alike = timed  # type: ignore[method-assign]
        templates = read_templates([self.template])
        t = time.process_time()
        report = run_capacity(sched, templates, max_copies=self.max_copies)
        cpu = time.process_time() - t
        rest = calls[2:]
        detail = {
            "copies": report.replicas,
            "first copy": calls[0] if calls else 0.0,
            "second copy (state built)": calls[1] if len(calls) > 1 else 0.0,
            "copies after, per copy (us)": 1e6 * sum(rest) / len(rest) if rest else 0.0,
            "outside the copies": cpu - sum(calls),
        }
        if sched.sampling is not None:
            detail["nextStartIndex"] = sched.sampling.next_start
        return cpu, detail

    def drain(self, sampling: bool, drained: int = 10) -> tuple[float, dict]:
        from kschedcli.whatif.drain import drain

        cluster = self.load()
        targets = sorted(n.name for n in cluster.nodes)[:drained]
        t = time.process_time()
        report = drain(cluster, self.config, targets, sampling=0 if sampling else None)
        return time.process_time() - t, {"nodes": drained, "pods": len(report.evicted)}

    def diff(self, sampling: bool) -> tuple[float, dict]:
        from kschedcli.inputs.cluster import load_pending_pods
        from kschedcli.whatif.diff import diff

        a, b = self.load(), self.load()
        pods = os.path.join(self.data, "pods.yaml")
        t = time.process_time()
        report = diff(
            ("a", a, self.config),
            ("b", b, self.config),
            lambda c: load_pending_pods(pods, c),
            sampling=0 if sampling else None,
        )
        return time.process_time() - t, {"pods": report.a.pods}

    def schedule(self, sampling: bool) -> tuple[float, dict]:
        from kschedcli.inputs.cluster import load_pending_pods

        sched = self.fresh(sampling)
        pods = load_pending_pods(os.path.join(self.data, "pods.yaml"), self.cluster)
        placed: list[bool] = []
        t = time.process_time()
        sched.run_sequence(pods, on_result=lambda r: placed.append(r.schedulable), keep=False)
        return time.process_time() - t, {"pods": len(pods), "scheduled": sum(placed)}

    def explain(self, sampling: bool, pods: int = 5) -> tuple[float, dict]:
        """The outlook's CPU time summed over the pods (`sampling`); else their cycles'."""
        import yaml

        from kschedcli.scheduling.sampling import outlook

        sched = self.fresh(False)
        with open(os.path.join(self.data, "pods.yaml")) as f:
            docs = [first_pending(self.data)] + [d for d in yaml.safe_load_all(f) if d][: pods - 1]
        cycle = took = 0.0
        winners = []
        for d in docs:
            pod = self.cluster.parse_pod(d, "pods.yaml", d["metadata"]["name"])
            sched.clear_caches()  # one explain is one cold cycle
            t = time.process_time()
            r = sched.schedule(pod)
            cycle += time.process_time() - t
            if sched.last_scored is None:
                continue
            t = time.process_time()
            o = outlook(sched, r, *sched.last_scored)
            took += time.process_time() - t
            if o is not None:
                winners.append(o.get("distinctWinners", 1))
        return (took if sampling else cycle), {"pods": len(docs), "winners": winners}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="a folder written by genbig.py")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max", type=int, default=1000, dest="max_copies", help="capacity's copies (default 1,000)")
    ap.add_argument("--only", default=",".join(QUESTIONS), help="questions, comma-separated: " + ",".join(QUESTIONS))
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    only = [q.strip() for q in a.only.split(",") if q.strip()]
    for q in only:
        if q not in QUESTIONS:
            ap.error(f"--only: unknown question {q!r}")
    bench = Bench(a.data, a.max_copies)
    raw: dict[str, dict[str, list]] = {q: {"plain": [], "sampled": []} for q in only}
    loads = []
    for r in range(a.runs):
        for q in only:
            # alternately, the first mode swapped each run, so both see the same load
            modes = (False, True) if r % 2 == 0 else (True, False)
            for sampling in modes:
                cpu, detail = getattr(bench, q)(sampling)
                raw[q]["sampled" if sampling else "plain"].append((cpu, detail))
            plain, sampled = raw[q]["plain"][-1][0], raw[q]["sampled"][-1][0]
            line = f"  run {r + 1}/{a.runs} {q}: {plain:.3f}s without, {sampled:.3f}s sampled"
            print(line, file=sys.stderr, flush=True)
        loads.append(os.getloadavg()[0])
    nodes = len(bench.cluster.nodes)
    print(f"{nodes} nodes; {a.runs} run(s), median CPU seconds; load average {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'question':<34}{'without':>10}{'--sampling':>12}{'ratio':>8}")
    out: dict = {"nodes": nodes, "runs": a.runs, "loads": loads, "questions": {}}
    for q in only:
        plain = statistics.median(c for c, _ in raw[q]["plain"])
        sampled = statistics.median(c for c, _ in raw[q]["sampled"])
        detail = raw[q]["plain"][0][1]
        if q == "capacity":
            label = f"capacity --max {a.max_copies} ({detail['copies']})"
        elif q == "drain":
            label = f"drain {detail['nodes']} nodes ({detail['pods']} pods)"
        elif q == "explain":
            label = f"explain {detail['pods']} pods: cycle / outlook"
        else:
            label = f"{q} pending pods ({detail['pods']})"
        print(f"{label:<34}{plain:>9.3f}s{sampled:>11.3f}s{sampled / plain if plain else 0:>8.2f}")
        out["questions"][q] = {"plain": plain, "sampled": sampled, "runs": raw[q]}
        if q == "capacity":
            for key in ("first copy", "second copy (state built)", "copies after, per copy (us)", "outside the copies"):
                p = statistics.median(d[key] for _, d in raw[q]["plain"])
                s = statistics.median(d[key] for _, d in raw[q]["sampled"])
                unit = "us" if "us" in key else "s"
                fmt = ".0f" if unit == "us" else ".4f"
                print(f"  {key:<32}{p:>9{fmt}}{unit}{s:>10{fmt}}{unit}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    os.unlink(bench.template)


if __name__ == "__main__":
    main()
