"""`ksched scale-up` and `ksched scale-down` on a large snapshot (issue 32's targets on the
5,000-node one: scale-up of 1,000 pending pods of 20 templates over 5 node groups in <= 10 s,
scale-down over every node in <= 60 s, on 2 cores).

    python benchmarks/autoscaler_bench.py /work/bench-data/5000 [--runs 3] [--only up|down]

The inputs are made from the snapshot, the same every time:
- node groups: the 5 largest groups the nodes' node-pool labels make (ties by name), each its
  first node by name (`--scenario new-pool`, the default: as a `template` with the label
  bench.ksched.dev/new-pool=true added; `--scenario pending`: as `templateNode`), `currentSize`
  its node count, `maxSize` 1,000 more;
- pods: the first 20 controllers of the snapshot's pending pods (pods.yaml, in file order) whose
  first pod carries no nominatedNodeName, each that first pod copied 50 times (names and uids
  suffixed -as00 .. -as49); under new-pool each selects bench.ksched.dev/new-pool=true, so no
  existing node takes it and every group's binpacking estimate places all 1,000.

Prints the CPU time (time.process_time) of each run after a warm-up that fills the snapshot cache,
the median, the load average before and after (the machine is shared), and the answer's sizes."""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import tempfile
import time

import yaml

from kschedcli import Session
from kschedcli.whatif.autoscaler import infer_node_groups

TEMPLATES = 20
COPIES = 50
GROUPS = 5
NEW_POOL = "bench.ksched.dev/new-pool"


def node_groups_file(session: Session, out: str, new_pool: bool) -> str:
    groups = infer_node_groups(session.world().cluster)
    groups.sort(key=lambda g: (-g.current_size, g.name))
    items = []
    for g in groups[:GROUPS]:
        item: dict = {"name": g.name}
        if new_pool:
            raw = copy.deepcopy(g.template.raw)
            raw.pop("apiVersion", None)
            raw.pop("kind", None)
            raw["metadata"]["labels"][NEW_POOL] = "true"
            item["template"] = raw
        else:
            item["templateNode"] = g.template.name
        item.update({"minSize": 0, "currentSize": g.current_size, "maxSize": g.current_size + 1000})
        items.append(item)
    doc = {"nodeGroups": items}
    path = os.path.join(out, "node-groups.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path


def pods_file(data: str, out: str, new_pool: bool) -> str:
    with open(os.path.join(data, "pods.yaml")) as f:
        docs = [d for d in yaml.load_all(f, Loader=yaml.CSafeLoader) if isinstance(d, dict) and d.get("kind") == "Pod"]
    firsts: dict[str, dict] = {}
    for d in docs:
        refs = [r for r in d["metadata"].get("ownerReferences") or [] if r.get("controller")]
        if not refs or (d.get("status") or {}).get("nominatedNodeName"):
            continue
        firsts.setdefault(refs[0]["uid"], d)
        if len(firsts) == TEMPLATES:
            break
    pods = []
    for d in firsts.values():
        for k in range(COPIES):
            p = copy.deepcopy(d)
            p["metadata"]["name"] = f"{d['metadata']['name']}-as{k:02d}"
            p["metadata"]["uid"] = f"{d['metadata'].get('uid', '')}-as{k:02d}"
            if new_pool:
                p["spec"]["nodeSelector"] = {**(p["spec"].get("nodeSelector") or {}), NEW_POOL: "true"}
            pods.append(p)
    path = os.path.join(out, "pods.yaml")
    with open(path, "w") as f:
        yaml.dump_all(pods, f, Dumper=yaml.CSafeDumper, sort_keys=False)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", help="a folder with cluster.json and pods.yaml (genbig's)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=("up", "down"))
    ap.add_argument(
        "--scenario",
        choices=("new-pool", "pending"),
        default="new-pool",
        help="new-pool (default): the groups' templates carry a label the pods select, so no "
        "existing node takes them and every group's estimate packs all 1,000; pending: the "
        "groups copy existing nodes (templateNode) and the pods select nothing",
    )
    a = ap.parse_args()
    snapshot = os.path.join(a.data, "cluster.json")
    Session(snapshot).world()  # the snapshot cache filled: the runs below read its entry
    out = tempfile.mkdtemp(prefix="ksched-autoscaler-bench-")
    new_pool = a.scenario == "new-pool"
    groups = node_groups_file(Session(snapshot), out, new_pool)
    pods = pods_file(a.data, out, new_pool)
    print(f"inputs in {out}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for which in ("up", "down"):
        if a.only and a.only != which:
            continue
        times = []
        for _ in range(a.runs):
            t = time.process_time()
            s = Session(snapshot)
            if which == "up":
                r = s.scale_up(pods, node_groups=groups)
                size = (
                    f"{len(r.report.fits_existing)} fit existing nodes, "
                    + ", ".join(f"{e.group.name} +{e.new_nodes}" for e in r.report.groups)
                    + f", {len(r.report.unhelped)} unhelped"
                )
            else:
                d = s.scale_down(node_groups=groups)
                size = f"{len(d.report.removable)} removable of {len(d.report.nodes)} nodes"
            times.append(time.process_time() - t)
            print(f"scale-{which}: {times[-1]:.2f} s CPU; {size}; load {os.getloadavg()[0]:.1f}")
        print(f"scale-{which}: median {statistics.median(times):.2f} s CPU over {len(times)} run(s)")


if __name__ == "__main__":
    main()
