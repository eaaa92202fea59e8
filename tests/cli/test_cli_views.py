"""The terminal views, through Typer's CliRunner: what each view says about the fixtures.

The fixtures: fixtures/small-cluster.yaml (3 nodes) and fixtures/prod-cluster.yaml (20 nodes in three
zones, tainted pools, a cordoned and a NotReady node, PDBs, priorities), pods in fixtures/pods/.
CliRunner's stdout is not a terminal: plain text, 80 columns unless COLUMNS says otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
PROFILES = str(ROOT / "fixtures" / "config" / "profiles.yaml")


def pod(name: str) -> str:
    return str(ROOT / "fixtures" / "pods" / f"{name}.yaml")


def run(*args: str, columns: int = 80, env: dict | None = None):
    e = {"COLUMNS": str(columns), "NO_COLOR": None, "FORCE_COLOR": None, "TERM": "xterm-256color"}
    e.update(env or {})
    return CliRunner().invoke(app, list(args), env=e)


def squash(text: str) -> str:
    """Whitespace runs to one space: the content, whatever the wrapping."""
    return re.sub(r"\s+", " ", text)


# ----------------------------------------------------------------------------- explain: schedulable


def test_readme_first_command_explains_the_small_cluster():
    r = run("explain", pod("web"), "--cluster", SMALL)
    assert r.exit_code == 0, r.output
    out = r.stdout
    lines = out.splitlines()
    # the pod line: namespace/name, priority, profile; the requests as the scheduler computes them
    assert lines[0].startswith("shop/web-7d9f8b6c5d-m8n7b  priority 0  profile default-scheduler")
    assert lines[1] == "requests cpu 500m, memory 512Mi"
    # the verdict: selected node and its score (the total of the score table's first row)
    m = re.search(r"✔ Schedulable → (\S+)  score (\d+)", out)
    assert m, out
    assert "2 of 3 nodes feasible" in out
    # the filter matrix: three nodes (no grouping), TaintToleration is the one column that fails
    assert re.search(r"Node\s+TaintToleration", out)
    assert re.search(r"node-gpu\s+▶ untolerated taint \{nvidia.com/gpu: present\}", out)
    assert re.search(r"node-a\s+✓", out) and re.search(r"node-b\s+✓", out)
    assert "passed on every node: NodeUnschedulable, NodeName, NodeResourcesFit" in out
    # the score table: best first, the selected node marked, totals consistent with the verdict
    rows = re.findall(r"^\s+(▶?=?)(\d+)\s+(node-\w+)\s+([\d\s]+)$", out, re.M)
    assert [r_[2] for r_ in rows] == [m.group(1), "node-a" if m.group(1) == "node-b" else "node-b"]
    assert rows[0][0] == "▶"
    first_cells = [int(x) for x in rows[0][3].split()]
    assert first_cells[-1] == int(m.group(2)) == sum(first_cells[:-1])
    # the resources of the selected node and the untolerated taint of node-gpu
    assert re.search(rf"{m.group(1)} \(selected\)\s+109 of 110\s+2.92 of 3.92\s+11Gi of 15Gi", out)
    assert re.search(r"nvidia.com/gpu=present:NoSchedule\s+1 node: node-gpu", out)
    # a schedulable pod has no retry section
    assert "retry" not in out


def test_ties_are_named_and_top_limits_the_score_table():
    r = run("explain", pod("checkout"), "--cluster", PROD, "--top", "3")
    assert r.exit_code == 0
    out = r.stdout
    assert "✔ Schedulable → general-c-02  score 837" in out
    assert "13 of 20 nodes feasible" in out
    assert "top 3 of 13 feasible nodes" in squash(out)
    assert "… 10 more feasible nodes (--top 0 shows all)" in out
    ranks = re.findall(r"^\s+▶?=?(\d+)\s+(general-\S+)", out, re.M)
    assert len(ranks) == 3 and ranks[0] == ("1", "general-c-02")
    # two nodes share rank 3: competition ranking
    assert [x[0] for x in ranks] == ["1", "2", "3"]
    r = run("explain", pod("web-spread"), "--cluster", PROD)
    assert "tie: general-b-04, general-c-03, general-c-04 share the top score" in squash(r.stdout)
    assert re.search(r"^\s+▶1\s+general-b-04", r.stdout, re.M)
    assert re.search(r"^\s+=1\s+general-c-03", r.stdout, re.M)


def test_raw_scores_show_raw_normalized_weight_and_weighted():
    r = run("explain", pod("web"), "--cluster", SMALL, "--raw", columns=120)
    out = r.stdout
    assert re.search(r"Node\s+Plugin\s+Raw\s+Normalized\s+Weight\s+Weighted", out)
    # TaintToleration: 0 PreferNoSchedule taints -> normalized 100, weight 3 -> 300
    assert re.search(r"TaintToleration\s+0\s+100\s+3\s+300", out)
    totals = re.findall(r"total\s+(\d+)", out)
    assert len(totals) == 2
    # at 80 columns each node heads its own rows, and no plugin name is cut
    out = run("explain", pod("web"), "--cluster", SMALL, "--raw").stdout
    assert re.search(r"#\s+Node / plugin\s+Raw\s+Normalized\s+Weight\s+Weighted", out)
    assert re.search(r"^\s+NodeResourcesBalancedAllocation\s+\d+\s+\d+\s+1\s+\d+$", out, re.M)
    assert "…" not in out.split("Scores")[1].split("not scored")[0]
    assert len(re.findall(r"total\s+(\d+)", out)) == 2


def test_wide_terminal_shows_a_matrix_of_nodes_by_plugins():
    out = run("explain", pod("cart"), "--cluster", PROD, columns=200).stdout
    header = next(line for line in out.splitlines() if line.strip().startswith("Nodes"))
    # the filter plugins that rejected some node, in profile order
    assert re.findall(r"[A-Z][A-Za-z]+", header) == [
        "Nodes",
        "NodeUnschedulable",
        "TaintToleration",
        "InterPodAffinity",
    ]
    row = next(line for line in out.splitlines() if line.strip().startswith("general-c-05"))
    # first failure marked, later failures marked differently
    assert re.search(
        r"▶ unschedulable\s+✗ untolerated taint \{node.kubernetes.io/unschedulable: \}\s+"
        r"✗ didn't match pod affinity rules",
        row,
    )
    row = next(line for line in out.splitlines() if "5 nodes" in line)
    assert row.rstrip().endswith("▶ didn't match pod anti-affinity rules")
    # full plugin names in the score table when there is room
    assert "NodeResourcesBalancedAllocation" in out


# ----------------------------------------------------------------------------- explain: unschedulable


def test_unschedulable_pod_groups_nodes_and_says_what_would_retry_it():
    r = run("explain", pod("reporting"), "--cluster", PROD)
    assert r.exit_code == 1
    out = r.stdout
    text = squash(out)
    assert "✘ Unschedulable" in out
    # kube-scheduler's exact message, whatever the wrapping
    assert (
        "0/20 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
        "1 node(s) were unschedulable, 13 Insufficient cpu, 13 Insufficient memory, 2 node(s) had "
        "untolerated taint {nvidia.com/gpu: present}, 3 node(s) had untolerated taint {workload: highmem}."
    ) in text
    # nodes failing alike are grouped, largest group first
    assert "20 nodes × 13 plugins, alike nodes grouped" in out
    groups = re.findall(r"^  (\d+) nodes  ", out, re.M)
    assert groups[:3] == ["13", "3", "2"]
    assert re.search(r"13 nodes .*\n\s+▶ NodeResourcesFit: Insufficient cpu, Insufficient memory", out)
    assert re.search(
        r"general-c-05\n\s+▶ NodeUnschedulable: unschedulable\n\s+✗ TaintToleration: "
        r"untolerated taint \{node.kubernetes.io/unschedulable: \}",
        out,
    )
    # resource breakdown: request vs free allocatable, the insufficient ones marked
    assert re.search(r"cpu\s+memory\s*\n.*needs 6\s+needs 24Gi", out)
    assert re.search(r"general-a-01\s+52 of 58\s+✗ 2.26 of 7.91\s+✗ 19.3Gi of 30Gi", out)
    assert "… 12 more nodes (--all-nodes lists them)" in out
    # the highmem nodes have room (only their taint is in the way): shown first, not hidden
    assert re.search(r"highmem-c-01 \(room\)\s+56 of 58\s+15.74 of 15.89\s+123.8Gi of 124Gi", out)
    assert "room, rejected by: NodeUnschedulable (general-c-05); TaintToleration" in out
    # preemption cannot help: grouped reasons
    assert "13 nodes: No preemption victims found for incoming pod" in text
    # the retry section lists each rejecting plugin's registered events
    retry = out[out.index("What would make kube-scheduler retry it") :]
    assert [p for p in ("NodeUnschedulable", "TaintToleration", "NodeResourcesFit") if p in retry] == [
        "NodeUnschedulable",
        "TaintToleration",
        "NodeResourcesFit",
    ]
    assert "Pod Delete|UpdatePodScaleDown — an assigned pod is deleted or scaled down" in squash(retry)
    assert "InterPodAffinity" not in retry  # it rejected nothing


def test_all_nodes_lists_every_node():
    out = run("explain", pod("reporting"), "--cluster", PROD, "--all-nodes").stdout
    assert "alike nodes grouped" not in out
    for name in ("general-a-01", "general-c-04", "highmem-b-01", "gpu-b-01", "general-b-05"):
        assert re.search(rf"^  {name}$", out, re.M), name
    assert "more nodes (--all-nodes" not in out
    # every node NodeResourcesFit rejected is in the resource table
    assert len(re.findall(r"^  general-\S+\s+\d+ of 58\s+✗", out, re.M)) == 13


def test_needs_preemption_is_not_schedulable_unless_allowed():
    r = run("explain", pod("payments"), "--cluster", PROD)
    assert r.exit_code == 1
    out = r.stdout
    assert "⚠ Needs preemption → general-c-02 would be nominated, evicting 1 pod" in out
    assert "nominate general-c-02, evict: batch/etl-adhoc-024" in out
    assert "12 candidates, 8 nodes where it cannot help" in squash(out)
    assert "and the pod is retried on the nominated node once its victims are gone" in squash(out)
    assert run("explain", pod("payments"), "--cluster", PROD, "--allow-preemption").exit_code == 0
    # an unschedulable pod stays 1 with --allow-preemption
    assert run("explain", pod("reporting"), "--cluster", PROD, "--allow-preemption").exit_code == 1


# ----------------------------------------------------------------------------- breakdowns


def test_topology_spread_breakdown_shows_the_skew_arithmetic():
    out = run("explain", pod("web-spread"), "--cluster", PROD).stdout
    text = squash(out)
    assert "Topology spread hard constraints (DoNotSchedule), from pod" in text
    assert "topology.kubernetes.io/zone maxSkew 1 DoNotSchedule selector app=web the pod matches it" in text
    assert "critical paths (global minimum, second minimum): us-east-1b (2), us-east-1c (2) minMatch 2" in text
    # per domain: matchNum + selfMatch - minMatch against maxSkew
    assert re.search(r"us-east-1a\s+3\s+3 \+ 1 − 2 = 2 > 1 ✗\s+7 nodes", out)
    # zone b has 7 nodes; 3 were rejected by other filters (taints, NotReady), so 4 were asked about
    assert re.search(r"us-east-1b\s+2\s+2 \+ 1 − 2 = 1 ≤ 1 ✓\s+4 of 7 nodes", out)
    assert "a domain's other nodes were rejected by another filter" in text
    # the soft constraint's counts
    assert "kubernetes.io/hostname maxSkew 1 ScheduleAnyway selector app=web" in text
    assert "general-b-01 1" in text and "general-b-03 0" in text


def test_inter_pod_affinity_breakdown_names_pods_and_domains():
    out = run("explain", pod("cart"), "--cluster", PROD).stdout
    text = squash(out)
    assert "required affinity term 0: app=cache in shop, per topology.kubernetes.io/zone" in text
    assert "satisfied in: us-east-1a (1), us-east-1b (1) — nodes elsewhere are rejected" in text
    assert "matching pods: shop/cache-0 (us-east-1a), shop/cache-1 (us-east-1b)" in text
    assert "required anti-affinity term 0: app=web in shop, per kubernetes.io/hostname" in text
    assert "blocked: general-a-01 (1)" in text
    assert "preferred affinity term 0: app=api in shop, per kubernetes.io/hostname, weight 50" in text
    assert "raw score per kubernetes.io/hostname: general-a-01 +50" in text


def test_node_drill_down():
    r = run("explain", pod("payments"), "--cluster", PROD, "--node", "general-a-01")
    assert r.exit_code == 1
    out = r.stdout
    assert "Node general-a-01  us-east-1a  m6i.2xlarge  6 pods" in out
    # every filter plugin in profile order: passes, the first failure, not run
    assert re.search(r"✓\s+NodeUnschedulable\s+passes", out)
    assert re.search(r"▶\s+NodeResourcesFit\s+Insufficient cpu  \(Unschedulable\)", out)
    assert re.search(r"–\s+PodTopologySpread\s+not run \(PreFilter returned Skip\)", out)
    order = re.findall(r"^\s+[✓▶✗–]\s+(\w+)", out, re.M)
    assert order[:6] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
    ]
    # resources: allocatable, requested, free, the pod's need, the shortfall
    assert re.search(r"cpu\s+7.91\s+5.65\s+2.26\s+4.00\s+✗ short by 1.74", out)  # one precision a row
    assert re.search(r"memory\s+30Gi\s+10.7Gi\s+19.3Gi\s+8Gi\s+✓", out)
    # the pods on the node, highest priority first
    assert re.search(r"kube-system/kube-proxy-ga01\s+2000001000", out)
    assert out.index("shop/api-5c6d7e8f9-00aa") < out.index("batch/etl-nightly-000")
    assert "preemption: candidate; would evict batch/etl-nightly-001 (ranked lower: more PDB violations)" in squash(out)
    # the matrix and the score table are replaced by the node view
    assert "alike nodes grouped" not in out
    # a feasible node: its score row
    out = run("explain", pod("checkout"), "--cluster", PROD, "--node", "general-c-02").stdout
    assert "rank 1 of 13, total 837" in out
    assert re.search(r"TaintToleration\s+0\s+100\s+3\s+300", out)


def test_profile_option_overrides_scheduler_name():
    r = run("explain", pod("web"), "--cluster", PROD, "--config", PROFILES, "--profile", "bin-packing")
    assert r.exit_code == 0
    assert "profile bin-packing" in r.stdout.splitlines()[0]
    default = run("explain", pod("web"), "--cluster", PROD, "--config", PROFILES).stdout
    sel = lambda out: re.search(r"Schedulable → (\S+)", out).group(1)  # noqa: E731
    # MostAllocated packs onto a fuller node than LeastAllocated
    assert sel(r.stdout) != sel(default)


# ----------------------------------------------------------------------------- preempt


def test_preempt_view_lists_every_candidate_and_why_it_lost():
    r = run("preempt", pod("payments"), "--cluster", PROD)
    assert r.exit_code == 1
    out = r.stdout
    text = squash(out)
    assert "13 nodes where preemption might help, 13 evaluated, 12 candidates found" in text
    assert re.search(r"Nominated node.*\n  general-c-02  0 PDB violations", out)
    assert re.search(r"1\s+batch/etl-adhoc-024\s+100\s+2025-10-21T22:24:00Z", out)
    cands = re.findall(r"^  (general-\S+)  (.+)$", out[out.index("Candidates") : out.index("Where preemption")], re.M)
    names = [c[0] for c in cands]
    assert names[0] == "general-c-02" and cands[0][1] == "nominated"
    assert len(names) == 12 and "general-c-04" not in names
    assert dict(cands)["general-a-02"] == "victims started earlier"
    assert dict(cands)["general-a-01"] == "more PDB violations"
    assert "PDB violations 2, top priority 100, priority sum 200, 2 victims" in text
    # where preemption cannot help, grouped, with the reason
    where = squash(out[out.index("Where preemption cannot help") :])
    assert "8 nodes" in where
    assert "general-c-04 No preemption victims found for incoming pod" in where
    assert "3 nodes highmem-a-01, highmem-b-01, highmem-c-01 TaintToleration: node(s) had untolerated taint" in where
    # the wide layout is a table with the criteria as columns
    wide = run("preempt", pod("payments"), "--cluster", PROD, columns=160).stdout
    assert re.search(r"general-a-05\s+batch/etl-nightly-010\s+2\s+100\s+200\s+2\s+more PDB violations", wide)


def test_preempt_for_a_pod_that_fits_and_one_that_cannot_preempt():
    r = run("preempt", pod("web"), "--cluster", SMALL)
    assert r.exit_code == 0
    assert "the pod fits without preemption; nothing would be evicted" in r.stdout
    r = run("preempt", pod("reporting"), "--cluster", PROD)
    assert r.exit_code == 1
    assert "kube-scheduler: preemption: 0/20 nodes are available: 13 No preemption victims found" in squash(r.stdout)


# ----------------------------------------------------------------------------- schedule


def test_schedule_table_in_priority_and_file_order():
    r = run("schedule", pod("rollout"), "--cluster", PROD)
    assert r.exit_code == 1
    out = r.stdout
    rows = re.findall(r"^\s+(\d)\s+(\S+/\S+)\s+(\d+)\s+([✔⚠✘]) (\S+)", out, re.M)
    assert [x[1] for x in rows] == [
        "payments/payments-worker-7f6d5c4b3-9xk2p",
        "shop/web-7d9f8b6c5d-r1",
        "shop/web-7d9f8b6c5d-r2",
        "shop/cart-64d8f7b9c-p4t7w",
        "batch/reporting-28391745-x7k2q",
    ]
    assert [x[3] for x in rows] == ["⚠", "✔", "✔", "✔", "✘"]
    assert rows[0][4] == "general-c-02"
    # the second web replica goes to another zone: the first was bound before it was scheduled
    assert rows[1][4] != rows[2][4]
    assert "evicts batch/etl-adhoc-024" in out
    assert "13× NodeResourcesFit: Insufficient cpu, Insufficient memory" in squash(out)
    assert "✔ 3 scheduled ⚠ 1 need preemption (nominated node) ✘ 1 unschedulable" in squash(out)
    r = run("schedule", pod("rollout"), "--cluster", PROD, "--order", "file")
    names = re.findall(r"^\s+\d\s+(\S+/\S+)\s+\d+\s+[✔⚠✘]", r.stdout, re.M)
    assert names[0] == "shop/web-7d9f8b6c5d-r1" and names[-1] == "payments/payments-worker-7f6d5c4b3-9xk2p"
    assert run("schedule", pod("rollout"), "--cluster", PROD, "--allow-preemption").exit_code == 1


def test_schedule_without_pods_takes_the_snapshots_pending_pods():
    r = run("schedule", "--cluster", PROD, columns=160)
    assert r.exit_code == 1
    assert re.search(r"1\s+shop/checkout-6b8c9d7f5-h2j4k\s+1000\s+✔ general-c-02", r.stdout)
    assert re.search(r"2\s+batch/reporting-28391745-x7k2q\s+100\s+✘ unschedulable", r.stdout)
    r = run("schedule", "--cluster", SMALL)
    assert r.exit_code == 2
    assert r.stderr.strip() == "ksched: PODS: no PODS file given and no pending pod in the snapshot"


def test_schedule_leaves_other_schedulers_pods_and_pods_being_deleted(tmp_path):
    """The snapshot's pending pods kube-scheduler would not queue: one of a scheduler no profile is
    (its informer never hands it over) and one being deleted (skipPodSchedule); each group one
    stderr line, the run's answer from the others. A session's profile takes the other scheduler's
    pod; a snapshot left with none is refused."""
    import yaml

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}}
    node["status"] = {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}

    def pending(name, cpu, **extra):
        meta = {"name": name, "namespace": "default", **extra.pop("meta", {})}
        spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}], **extra}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}

    items = [
        node,
        pending("batch", "1", schedulerName="volcano"),
        pending("web", "1"),
        pending("deleting", "1500m", meta={"deletionTimestamp": "2025-01-01T00:00:00Z"}),
    ]
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    r = run("schedule", "--cluster", str(snap), columns=160)
    assert r.exit_code == 0, r.output
    assert re.search(r"1\s+default/web\s+0\s+✔ n1", r.stdout)
    assert "batch" not in r.stdout and "deleting" not in r.stdout and "volcano" not in r.stdout
    assert r.stderr.splitlines() == [
        "ksched: left 1 pending pod to scheduler 'volcano', no profile of this configuration (kube-scheduler "
        "leaves such pods alone): default/batch",
        "ksched: skipped 1 pending pod being deleted (kube-scheduler does not schedule a pod with a "
        "deletionTimestamp): default/deleting",
    ]
    from kschedcli import Options, Session

    ran = Session(str(snap), options=Options(profile="default-scheduler")).schedule().to_dict()
    assert "default/batch" in str(ran) and "default/web" in str(ran)
    snap.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items[:2]}))
    r = run("schedule", "--cluster", str(snap))
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == (
        "ksched: PODS: no pending pod of the snapshot is one kube-scheduler would schedule"
    )


def test_explain_a_pending_pod_of_the_snapshot_by_name():
    r = run("explain", "shop/checkout-6b8c9d7f5-h2j4k", "--cluster", PROD)
    assert r.exit_code == 0
    assert r.stdout.startswith("shop/checkout-6b8c9d7f5-h2j4k  priority 1000 (standard)")
    r = run("explain", "reporting-28391745-x7k2q", "--cluster", PROD)
    assert r.exit_code == 1 and r.stdout.startswith("batch/reporting-28391745-x7k2q")


# ----------------------------------------------------------------------------- conventions


def test_colour_only_on_request_and_never_with_no_color():
    forced = run("explain", pod("web"), "--cluster", SMALL, env={"FORCE_COLOR": "1"}).stdout
    assert re.search(r"\x1b\[[0-9;]*3[0-7]m", forced)  # a colour
    for extra, env in ((["--no-color"], {"FORCE_COLOR": "1"}), ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"})):
        out = run("explain", pod("web"), "--cluster", SMALL, *extra, env=env).stdout
        assert not re.search(r"\x1b\[[0-9;]*3[0-7]m", out)
        assert "Schedulable" in out
    plain = run("explain", pod("web"), "--cluster", SMALL).stdout
    assert "\x1b" not in plain


@pytest.mark.parametrize("columns", [80, 200])
def test_width_follows_the_terminal(columns):
    for name in ("reporting", "payments", "cart", "web-spread", "checkout"):
        out = run("explain", pod(name), "--cluster", PROD, columns=columns).stdout
        assert max(len(line) for line in out.splitlines()) <= columns, name
    out = run("preempt", pod("payments"), "--cluster", PROD, columns=columns).stdout
    assert max(len(line) for line in out.splitlines()) <= columns


@pytest.mark.parametrize("argv", [[], ["explain"], ["schedule"], ["preempt"], ["schema"], ["version"], ["completion"]])
def test_dash_h_everywhere(argv):
    r = run(*argv, "-h")
    assert r.exit_code == 0
    assert "Usage: " in r.stdout and "-h, --help" in r.stdout


def test_version_names_the_kube_scheduler_version():
    r = run("version")
    assert r.exit_code == 0 and "follows kube-scheduler v1.34.1" in r.stdout


# ----------------------------------------------------------------------------- bad input: one line, exit 2


@pytest.mark.parametrize(
    "setup,args,expected",
    [
        (
            "pod: [unclosed",
            ["explain", "{f}", "--cluster", SMALL],
            r"^ksched: {f}: line \d+, column \d+: malformed YAML",
        ),
        (
            "kind: Node\nmetadata: {name: x}\n",
            ["explain", "{f}", "--cluster", SMALL],
            r"^ksched: {f}: Node x: expected a Pod",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n"
            "      requests: {cpu: lots}\n",
            ["explain", "{f}", "--cluster", SMALL],
            r"^ksched: {f}: Pod default/p: spec.containers\[0\].resources.requests.cpu: ",
        ),
        (None, ["explain", "missing.yaml", "--cluster", SMALL], r"^ksched: missing.yaml: no such file$"),
        (
            None,
            ["explain", pod("web"), "--cluster", "missing-cluster.yaml"],
            r"^ksched: missing-cluster.yaml: no such file$",
        ),
        (None, ["explain", pod("web"), "--cluster", SMALL, "--node", "nope"], r"^ksched: --node: no node named 'nope'"),
        (
            None,
            ["explain", pod("web"), "--cluster", SMALL, "--profile", "nope"],
            r"^ksched: --profile: no profile named 'nope' \(profiles: default-scheduler\)$",
        ),
        (
            None,
            ["explain", "shop/nope", "--cluster", PROD],
            r"^ksched: shop/nope: no such file, and no pending pod named",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, setup, args, expected):
    f = tmp_path / "bad.yaml"
    if setup is not None:
        f.write_text(setup)
    args = [a.replace("{f}", str(f)) for a in args]
    r = run(*args)
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert re.search(expected.replace("{f}", re.escape(str(f))), err), err
    assert "Traceback" not in r.output
    assert r.stdout == ""


def test_usage_errors_exit_2():
    assert run("explain", pod("web")).exit_code == 2  # no --cluster
    assert run("explain", pod("web"), "-c", SMALL, "-o", "xml").exit_code == 2
    assert run("nonsense").exit_code == 2


def test_verbose_counts_ignored_kinds(tmp_path):
    from typer.testing import CliRunner

    from kschedcli.cli.app import app

    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"
    )
    r = CliRunner().invoke(
        app,
        [
            "-v",
            "explain",
            "fixtures/pods/web.yaml",
            "-c",
            "fixtures/small-cluster.yaml",
            "-c",
            str(extra),
            "-o",
            "json",
        ],
    )
    assert r.exit_code == 0
    assert "ignored kinds the scheduler does not read: ConfigMap ×2" in r.stderr
    assert "3 nodes, 4 bound pods" in r.stderr


# ----------------------------------------------------------------------------- issue 28


EKS = str(ROOT / "fixtures" / "eks-cluster.yaml")
FRAUD = "payments/fraud-scoring-service-realtime-inference-7f8e9d6c5b-zq8mw"
MOST_ALLOCATED = str(ROOT / "fixtures" / "config" / "most-allocated.yaml")
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web2, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web2}}
  template:
    metadata: {labels: {app: web2}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
"""


def test_cut_lists_count_what_they_leave_out_as_a_sibling_field():
    """The pending fraud-scoring replica's anti-affinity is blocked on 30 nodes: explain lists 20
    domains and says 10 more, in the terminal and as domainsOmitted beside the list in JSON (never
    an element of it); every array element is an object with its fields."""
    import json
    from importlib import resources

    import jsonschema

    out = run("explain", FRAUD, "--cluster", EKS, columns=200).stdout
    blocked = squash(out).split(" blocked: ", 1)[1].split(" matching pods:", 1)[0]
    assert blocked.count(" (1)") == 20 and blocked.endswith(", … +10 more")
    r = run("explain", FRAUD, "--cluster", EKS, "-o", "json")
    doc = json.loads(r.stdout)
    ipa = doc["details"]["InterPodAffinity"]
    for term in (ipa["requiredAntiAffinity"][0], ipa["existingAntiAffinity"]):
        assert len(term["domains"]) == 20 and term["domainsOmitted"] == 10
        assert all(set(d) >= {"domain", "count"} for d in term["domains"])
        assert len(term["pods"]) == 20 and term["podsOmitted"] == 10
    schema = json.loads(resources.files("kschedcli.schemas").joinpath("result.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
    assert errors == []
    # the schema refuses the old shape: a {"more": N} element among the domains
    ipa["requiredAntiAffinity"][0]["domains"].append({"more": 10})
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(doc))


def test_diff_takes_workloads_as_schedule_does(tmp_path):
    f = tmp_path / "deploy.yaml"
    f.write_text(DEPLOYMENT)
    r = run("diff", str(f), "--cluster", PROD, "--cordon", "general-a-01", columns=120)
    assert r.exit_code in (0, 1), r.output
    assert "2 pods (the given pods)" in r.stdout
    s = run("schedule", str(f), "--cluster", PROD)
    assert "shop/web2-" in s.stdout


def test_global_options_after_the_subcommand(tmp_path):
    """--no-cache after the subcommand as before it: the cache of parsed snapshots stays empty."""
    import os
    import subprocess
    import sys

    def cache_after(*argv: str) -> list[str]:
        cache = tmp_path / f"cache{len(list(tmp_path.iterdir()))}"
        env = {**os.environ, "KSCHED_CACHE_DIR": str(cache), "COLUMNS": "80"}
        env.pop("KSCHED_NO_CACHE", None)
        p = subprocess.run(
            [sys.executable, "-m", "kschedcli", *argv], env=env, capture_output=True, text=True, cwd=ROOT
        )
        assert p.returncode == 0, p.stderr
        return sorted(os.listdir(cache)) if cache.exists() else []

    args = ["explain", pod("web"), "--cluster", SMALL]
    assert cache_after(*args)  # the cache is used by default
    assert cache_after("--no-cache", *args) == []
    assert cache_after(*args, "--no-cache") == []
    assert cache_after("explain", "--no-cache", pod("web"), "--cluster", SMALL) == []
    assert run("schema", "--no-cache").exit_code == 0
    # --version too: `ksched explain --version` prints the version as `ksched --version` does
    assert run("explain", "--version").stdout == run("--version").stdout != ""
    # after `--` it is an argument, not the global flag
    assert run("explain", "--cluster", SMALL, "--", "--no-cache").exit_code == 2


def test_a_config_or_profile_other_than_the_defaults_is_named_in_the_header(tmp_path):
    out = run("explain", pod("web"), "--cluster", PROD, "--config", PROFILES, "--profile", "bin-packing").stdout
    assert squash(out).startswith(
        f"shop/web-7d9f8b6c5d-m8n7b priority 1000 (standard) profile bin-packing config {PROFILES}"
    )
    default = run("explain", pod("web"), "--cluster", PROD).stdout
    assert " config " not in default.splitlines()[0] + default.splitlines()[1]
    sched = run("schedule", pod("web"), "--cluster", PROD, "--config", MOST_ALLOCATED, columns=200).stdout
    assert sched.splitlines()[1] == f"  config {MOST_ALLOCATED}"
    packed = tmp_path / "packed.yaml"  # the web pod under the bin-packing profile
    packed.write_text(pod_text("web").replace("spec:\n", "spec:\n  schedulerName: bin-packing\n", 1))
    sched = run("schedule", str(packed), "--cluster", PROD, "--config", PROFILES, columns=200).stdout
    assert sched.splitlines()[1] == f"  config {PROFILES}, profile bin-packing"
    assert "  config " not in run("schedule", pod("web"), "--cluster", PROD).stdout
    ran = run("run", str(ROOT / "fixtures" / "scenarios" / "lose-zone-a.yaml"), columns=200).stdout
    head = ran.split("\nSchedule  ", 1)[1].splitlines()
    assert head[1] == f"  config {MOST_ALLOCATED}"
    diff = run("diff", str(packed), "--cluster", PROD, "--config", PROFILES, "--cordon", "general-a-01", columns=200)
    assert diff.exit_code in (0, 1), diff.output
    worlds = [line for line in diff.stdout.splitlines() if line.startswith(("  A  ", "  B  "))]
    assert len(worlds) == 2 and all(line.endswith("profile bin-packing") for line in worlds), worlds
    plain = run("diff", pod("web"), "--cluster", PROD, "--cordon", "general-a-01", columns=200).stdout
    assert "profile" not in plain


def pod_text(name: str) -> str:
    return Path(pod(name)).read_text()


def test_nodes_with_room_past_the_eighth_are_counted(tmp_path):
    import json

    f = tmp_path / "nowhere.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: lost, namespace: shop}\n"
        "spec:\n  nodeSelector: {pool: none}\n  containers: [{name: c, image: x}]\n"
    )
    doc = json.loads(run("explain", str(f), "--cluster", PROD, "-o", "json").stdout)
    room = doc["breakdowns"]["roomRejectedBy"]
    assert len(room) == 8 and doc["breakdowns"]["roomRejectedByOmitted"] == 20 - 8
    out = squash(run("explain", str(f), "--cluster", PROD, columns=200).stdout)
    assert "… +12 more nodes with room" in out


def test_preempt_names_its_config_too():
    out = squash(run("preempt", pod("payments"), "--cluster", PROD, "--config", PROFILES, columns=200).stdout)
    assert out.startswith("payments/") and f"profile default-scheduler config {PROFILES}" in out.split(" requests ")[0]


def test_spread_per_node_counts_past_the_limit_are_counted():
    """A hostname spread constraint scored over 230 feasible nodes: explain counts 200 of them
    (perNode) and says how many it left out (perNodeOmitted), never silently."""
    from builders import node, pod, scheduler

    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "w"}},
            }
        ]
    }
    sched = scheduler([node(f"n{i:03d}") for i in range(230)])
    r = sched.schedule(pod("w-0", labels={"app": "w"}, requests={"cpu": "100m"}, spec=spread))
    c = r.details["PodTopologySpread"]["score"]["constraints"][0]
    assert len(c["perNode"]) == 200 and c["perNodeOmitted"] == 30
