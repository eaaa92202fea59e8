"""`ksched sweep` (kschedcli/whatif/sweep.py, Session.sweep): failure scenarios and rolling
upgrades over one loaded cluster, on hand-built clusters and the fixtures; the same findings as
`schedule --preemption=carry-out` and `drain` for the same edit; the same results in any number of
workers or on Dask."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli import InputError, Session
from kschedcli.cli.app import app
from kschedcli.whatif.edits import Edit

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
EKS = str(ROOT / "fixtures" / "eks-cluster.yaml")
ZONE = "topology.kubernetes.io/zone"
EKS_NODE = "ip-10-0-32-1.us-east-1.compute.internal"


def node(name, zone, cpu="4", labels=None):
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone, **(labels or {})}},
        "spec": {},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def pod(name, node_name, cpu="1", owner=("ReplicaSet", "web-1"), labels=None, priority=None, selector=None, ns="shop"):
    meta = {"name": name, "namespace": ns, "uid": f"{ns}-{name}", "labels": labels or {"app": "web"}}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": f"u-{owner[1]}", "controller": True}
        ]
    spec = {
        "nodeName": node_name,
        "containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}],
    }
    if priority is not None:
        spec["priority"] = priority
    if selector:
        spec["nodeSelector"] = selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Running"}}


def pdb(name, labels, allowed, desired, healthy, ns="shop"):
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": labels}},
        "status": {"disruptionsAllowed": allowed, "desiredHealthy": desired, "currentHealthy": healthy},
    }


def write(tmp_path, objs, name="cluster.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(objs))
    return str(p)


def session(path, **kw):
    return Session(path, cache=False, **kw)


def test_a_zone_holding_the_only_replicas_loses_them(tmp_path):
    zone_a = {ZONE: "a"}
    objs = [
        node("a1", "a"),
        node("a2", "a"),
        node("b1", "b"),
        pod("pay-1", "a1", owner=("ReplicaSet", "pay-1"), labels={"app": "pay"}, selector=zone_a),
        pod("pay-2", "a2", owner=("ReplicaSet", "pay-1"), labels={"app": "pay"}, selector=zone_a),
        pod("web-1", "b1"),
    ]
    path = write(tmp_path, objs)
    zones = session(path).sweep(fail="zone", workers=1)
    doc = zones.to_dict()
    assert [s["name"] for s in doc["scenarios"]] == ["a", "b"]
    a, b = doc["scenarios"]
    assert sorted(p["pod"] for p in a["pending"]) == ["shop/pay-1", "shop/pay-2"]
    assert "node affinity/selector" in a["pending"][0]["reason"]
    assert a["workloads"] == [
        {"workload": "ReplicaSet shop/pay-1", "desired": 2, "running": 2, "down": 2, "after": 0, "belowDesired": True}
    ]
    assert b["ok"] and b["pending"] == [] and b["recreated"] == 1
    assert zones.exit_code() == 1 and doc["summary"]["verdict"] == "not zone-loss safe"
    assert doc["summary"]["worst"][0]["scenario"] == "zone a"
    top = doc["summary"]["exposure"][0]
    assert (top["workload"], top["down"], top["running"], top["scenario"]) == ("ReplicaSet shop/pay-1", 2, 2, "zone a")
    # any one node: each replica finds the other node of its zone
    nodes = session(path).sweep(fail="node", workers=1)
    assert nodes.exit_code() == 0 and nodes.summary["verdict"] == "N-1 safe"
    assert [s["name"] for s in nodes.scenarios] == ["a1", "a2", "b1"]
    assert nodes.scenarios[0]["pending"] == [] and nodes.scenarios[0]["recreated"] == 1


def test_a_failure_that_resolves_only_by_preemption(tmp_path):
    objs = [
        node("n1", "a", cpu="2"),
        node("n2", "a", cpu="2"),
        pod("critical", "n1", cpu="2", owner=("StatefulSet", "db"), labels={"app": "db"}, priority=1000),
        pod("batch-1", "n2", cpu="1", owner=("Job", "etl"), labels={"app": "etl"}, priority=0),
        pod("batch-2", "n2", cpu="1", owner=("Job", "etl"), labels={"app": "etl"}, priority=0),
    ]
    path = write(tmp_path, objs)
    s = session(path).sweep(fail="node", workers=1)
    n1 = s.scenarios[0]
    assert n1["name"] == "n1" and not n1["ok"]
    assert n1["pending"] == []
    assert n1["preempting"] == [{"pod": "shop/critical", "node": "n2", "victims": ["shop/batch-1", "shop/batch-2"]}]
    assert n1["victims"] == ["shop/batch-1", "shop/batch-2"]
    etl = next(w for w in n1["workloads"] if w["workload"] == "Job shop/etl")
    assert (etl["down"], etl["after"]) == (2, 0)
    db = next(w for w in n1["workloads"] if w["workload"] == "StatefulSet shop/db")
    assert (db["down"], db["after"], db["belowDesired"]) == (1, 1, False)
    assert s.exit_code() == 1


def test_daemonset_pods_stay_and_bare_pods_are_lost(tmp_path):
    objs = [
        node("n1", "a"),
        node("n2", "a"),
        pod("agent-x", "n1", owner=("DaemonSet", "agent")),
        pod("bare", "n1", owner=None),
        pod("web-x", "n1"),
    ]
    path = write(tmp_path, objs)
    n1 = session(path).sweep(fail="node", workers=1).scenarios[0]
    assert n1["daemonSetPodsGone"] == 1 and n1["recreated"] == 1
    assert n1["lost"] == [{"pod": "shop/bare", "node": "n1"}]
    assert not n1["ok"]


def test_a_pdb_blocks_a_rolling_drain(tmp_path):
    pool = {"pool": "general"}
    objs = [
        node("g1", "a", labels=pool),
        node("g2", "a", labels=pool),
        node("spare", "a"),
        pod("api-1", "g1", labels={"app": "api"}, owner=("ReplicaSet", "api-1")),
        pod("web-1", "g2"),
        pdb("api", {"app": "api"}, allowed=0, desired=1, healthy=1),
    ]
    path = write(tmp_path, objs)
    s = session(path).sweep(rolling="pool=general")
    first, second = s.scenarios
    assert (first["name"], first["nodes"]) == ("1/2", ["g1"])
    assert [b["pod"] for b in first["blocked"]] == ["shop/api-1"]
    assert first["blocked"][0]["budget"] == "shop/api"
    assert not first["ok"] and second["ok"]
    assert s.exit_code() == 1 and s.summary["verdict"] == "not rolling-upgrade safe"
    # the same as `ksched drain g1` says
    d = session(path).drain(["g1"]).to_dict()
    refused = [p["pod"] for n in d["drain"]["nodes"] for p in n["pods"] if p["action"] == "blocked"]
    assert refused == ["shop/api-1"]
    # with a disruption allowed, the pool upgrades
    objs[-1] = pdb("api", {"app": "api"}, allowed=1, desired=1, healthy=2)
    ok = session(write(tmp_path, objs, "ok.yaml")).sweep(rolling="pool=general", max_unavailable=2)
    assert [sc["nodes"] for sc in ok.scenarios] == [["g1", "g2"]]
    assert ok.exit_code() == 0


def _pool_with(tmp_path, extra, name="cluster.yaml"):
    """A two-node pool (g1, g2) and a spare node with room for everything, plus `extra` objects."""
    pool = {"pool": "general"}
    objs = [node("g1", "a", labels=pool), node("g2", "a", labels=pool), node("spare", "a", cpu="8")]
    return write(tmp_path, [*objs, pod("web-1", "g1"), *extra], name)


def _with_emptydir(p):
    p["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return p


@pytest.mark.parametrize(
    "extra,fatal,flag",
    [
        ([pod("bare", "g2", owner=None)], "cannot delete Pods that declare no controller", "--force"),
        ([_with_emptydir(pod("cache-0", "g2"))], "cannot delete Pods with local storage", "--delete-emptydir-data"),
    ],
)
def test_a_rolling_step_whose_drain_kubectl_refuses_is_not_safe(tmp_path, extra, fatal, flag):
    """A step whose drain kubectl refuses (a bare pod without --force, an emptyDir without
    --delete-emptydir-data) is not ok, as `ksched drain` says for the same node: not safe, exit 1,
    in every output."""
    path = _pool_with(tmp_path, extra)
    s = session(path).sweep(rolling="pool=general")
    first, second = s.scenarios
    assert first["ok"] and not first["refused"]
    assert not second["ok"] and second["refused"] and second["refused"][0].startswith(fatal)
    assert second["severity"][0] == 1 and s.summary["worst"] == [{"scenario": "rolling 2/2", "index": 1}]
    assert s.exit_code() == 1 and not s.summary["safe"] and s.summary["verdict"] == "not rolling-upgrade safe"
    assert session(path).drain(["g2"]).exit_code() == 1  # what `ksched drain g2` says
    runner = CliRunner()
    base = ["sweep", "--cluster", path, "--rolling", "pool=general", "--no-cache"]
    r = runner.invoke(app, base)
    assert r.exit_code == 1, r.output
    assert "✘ not rolling-upgrade safe" in r.output and "✔ rolling-upgrade safe" not in r.output
    assert fatal in " ".join(r.output.split())
    for fmt in ("json", "yaml"):
        r = runner.invoke(app, [*base, "-o", fmt])
        assert r.exit_code == 1, r.output
        doc = yaml.safe_load(r.stdout)
        assert [sc["ok"] for sc in doc["scenarios"]] == [True, False] and not doc["summary"]["safe"]
    r = runner.invoke(app, [*base, "-o", "markdown"])
    assert r.exit_code == 1 and "| rolling 2/2 | no |" in r.stdout.replace("  ", " ")
    # the flag kubectl drain names lets the step drain, as `ksched drain g2 <flag>` does
    r = runner.invoke(app, [*base, flag, "-o", "json"])
    doc = json.loads(r.stdout)
    assert not doc["scenarios"][1]["refused"]
    if flag == "--force":  # the bare pod is deleted: lost, still not ok (and `ksched drain --force` agrees)
        assert r.exit_code == 1 and [p["pod"] for p in doc["scenarios"][1]["lost"]] == ["shop/bare"]
        assert session(path).drain(["g2"], force=True).exit_code() == 1
    else:  # its ReplicaSet recreates it on the spare node
        assert r.exit_code == 0 and doc["summary"]["verdict"] == "rolling-upgrade safe", r.output
        assert session(path).drain(["g2"], delete_emptydir_data=True).exit_code() == 0


def test_a_clean_pool_upgrades_safely_and_a_pdb_block_does_not(tmp_path):
    """A pool whose pods all move is safe, exit 0; the same pool with a budget allowing no
    disruption is a finding (`blocked`), not safe, exit 1."""
    path = _pool_with(tmp_path, [pod("web-2", "g2")])
    r = CliRunner().invoke(app, ["sweep", "--cluster", path, "--rolling", "pool=general", "--no-cache"])
    assert r.exit_code == 0, r.output
    assert "✔ rolling-upgrade safe" in r.output
    blocked = _pool_with(tmp_path, [pod("web-2", "g2"), pdb("web", {"app": "web"}, 0, 2, 2)], "pdb.yaml")
    r = CliRunner().invoke(app, ["sweep", "--cluster", blocked, "--rolling", "pool=general", "-o", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert [b["pod"] for sc in doc["scenarios"] for b in sc["blocked"]] == ["shop/web-1", "shop/web-2"]
    assert not any(sc["ok"] for sc in doc["scenarios"]) and doc["summary"]["verdict"] == "not rolling-upgrade safe"


@pytest.mark.parametrize("flag", ["--force", "--delete-emptydir-data"])
def test_drain_flags_only_with_rolling(flag):
    r = CliRunner().invoke(app, ["sweep", "--cluster", PROD, "--fail", "node", flag])
    assert r.exit_code == 2
    line = f"ksched: {flag}: only with --rolling (as `ksched drain`'s, for each step's drain)"
    assert r.output.strip().splitlines() == [line]


def _replacements_file(tmp_path, path, nodes):
    """The failed nodes' recreated pods (controller-owned, not DaemonSet), as a pods file."""
    w = session(path).world()
    out = []
    for p in w.cluster.pods:
        ref = p.controller_ref()
        if p.node_name in nodes and ref is not None and ref.get("kind") not in ("DaemonSet", "Node"):
            raw = json.loads(json.dumps(p.raw))
            raw.setdefault("kind", "Pod")
            raw.setdefault("apiVersion", "v1")
            raw["spec"].pop("nodeName", None)
            raw["status"] = {"phase": "Pending"}
            out.append(raw)
    return write(tmp_path, out, "replacements.yaml")


@pytest.mark.parametrize("family,name", [("zone", "us-east-1c"), ("zone", "us-east-1a"), ("node", "general-c-04")])
def test_a_scenario_finds_what_schedule_carry_out_finds_for_the_same_edit(tmp_path, family, name):
    s = Session(PROD, validate="ignore").sweep(fail=family, workers=1)
    sc = next(x for x in s.scenarios if x["name"] == name)
    pods = _replacements_file(tmp_path, PROD, set(sc["nodes"]))
    edits = [Edit("--remove-node", n) for n in sc["nodes"]]
    run = Session(PROD, validate="ignore", edits=edits).schedule(pods, preemption="carry-out", order="priority")
    co = run.carried_out
    assert co is not None
    pending = sorted(p.pod for p in co.placements if p.node is None and not p.evicted)
    assert sorted(p["pod"] for p in sc["pending"]) == pending
    assert sc["victims"] == sorted({e.pod for e in co.evictions})
    placed = {p.pod: p.node for p in co.placements if p.node}
    assert {p["pod"]: p["node"] for p in sc["preempting"]} == {
        e.preemptor: placed[e.preemptor] for e in co.evictions if e.preemptor in placed
    }


def test_results_do_not_depend_on_the_number_of_workers():
    one = Session(PROD).sweep(fail="node", workers=1).to_dict()
    two = Session(PROD).sweep(fail="node", workers=2).to_dict()
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def test_k_node_samples_are_seeded_and_stable():
    a = Session(EKS).sweep(fail="nodes=2", samples=4, seed=7, workers=1)
    b = Session(EKS).sweep(fail="nodes=2", samples=4, seed=7, workers=1)
    assert a.to_dict() == b.to_dict()
    assert len(a.scenarios) == 4 and all(len(s["nodes"]) == 2 for s in a.scenarios)
    c = Session(EKS).sweep(fail="nodes=2", samples=4, seed=8, workers=1)
    assert [s["nodes"] for s in c.scenarios] != [s["nodes"] for s in a.scenarios]


def test_k_node_samples_are_distinct_sets():
    """Never one set twice: a 3-node cluster has one 3-node set and three 2-node sets, each run
    once (in node order) however many samples are asked for; where the sets are few, a sample of
    them; else distinct draws."""
    small = str(ROOT / "fixtures" / "small-cluster.yaml")
    whole = Session(small).sweep(fail="nodes=3", samples=20, workers=1)
    assert len(whole.scenarios) == 1 and len(whole.scenarios[0]["nodes"]) == 3
    pairs = Session(small).sweep(fail="nodes=2", samples=20, seed=3, workers=1)
    got = [tuple(s["nodes"]) for s in pairs.scenarios]
    assert len(got) == 3 == len(set(got))
    assert got == sorted(got, key=lambda t: [whole.scenarios[0]["nodes"].index(n) for n in t])
    for k, samples in ((2, 20), (1, 30), (3, 50)):  # 20 nodes: 190 pairs, 20 singles, 1,140 triples
        plan = Session(PROD).sweep(fail=f"nodes={k}", samples=samples, seed=1, workers=1).scenarios
        sets = [tuple(s["nodes"]) for s in plan]
        assert len(sets) == min(samples, {1: 20, 2: 190, 3: 1140}[k]) == len(set(sets)), (k, samples)


def test_dask_gives_the_single_process_results(tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask distributed is not installed (ksched[dask])")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        on_dask = Session(PROD).sweep(fail="zone", dask=lc.scheduler_address).to_dict()
    here = Session(PROD).sweep(fail="zone", workers=1).to_dict()
    assert json.dumps(on_dask, sort_keys=True) == json.dumps(here, sort_keys=True)


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"fail": "bogus"}, "--fail"),
        ({"fail": "nodes=0"}, "--fail"),
        ({"fail": "nodes=999"}, "--fail"),
        ({"fail": "zone", "fail_key": "no/such"}, "--fail-key"),
        ({"fail": "node", "selector": "nope=1"}, "--selector"),
        ({}, "--fail"),
        ({"rolling": "pool=x", "fail": "node"}, "--fail"),
    ],
)
def test_bad_input_is_one_line(kwargs, field):
    with pytest.raises(InputError) as e:
        Session(PROD).sweep(workers=1, **kwargs)
    assert e.value.field == field


def test_the_command_prints_a_table_at_80_columns_and_json():
    r = CliRunner().invoke(app, ["sweep", "--cluster", PROD, "--fail", "zone", "--workers", "1"], env={"COLUMNS": "80"})
    assert r.exit_code == 1, r.output
    assert "not zone-loss safe" in r.output
    assert max(len(line) for line in r.output.splitlines()) <= 80
    r = CliRunner().invoke(app, ["sweep", "--cluster", PROD, "--fail", "node", "--workers", "1", "-o", "json"])
    doc = json.loads(r.stdout)
    assert set(doc) >= {"scenarios", "summary"} and len(doc["scenarios"]) == 20
    r = CliRunner().invoke(app, ["sweep", "--cluster", PROD, "--fail", "nope"])
    assert r.exit_code == 2


def test_long_node_names_stay_whole_at_80_columns():
    args = ["sweep", "--cluster", EKS, "--fail", "node", "--workers", "1", "--top", "3"]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any("ip-10-0-128-200.highmem-r6i-4xlarge1.us-east-1.compute.internal" in line for line in lines)
    assert "38 more scenarios not shown" in r.output


def _findings_both_ways(path, family):
    """Every scenario's findings with the shortcuts (whatif/sweep.py Cycles) and with every cycle run,
    and how many cycles the shortcuts answered."""
    from kschedcli.whatif import sweep as sw

    s = session(path, validate="ignore")
    cluster, config, _ = s._inputs()
    specs = sw.plan(cluster, fail=family).scenarios
    fast = sw.Base.of(cluster, config)
    plain = sw.Base.of(cluster, config)
    plain.shortcuts = False
    a = [sw.run_failure(fast, spec) for spec in specs]
    b = [sw.run_failure(plain, spec) for spec in specs]
    assert plain.saved_cycles == 0
    return json.dumps(a, sort_keys=True), json.dumps(b, sort_keys=True), fast.saved_cycles


def test_unschedulable_replicas_of_one_template_give_the_plain_findings(tmp_path):
    """Replicas of one template that a cycle found unschedulable, nothing changed since: their
    findings (reasons, preemption, workloads) are those of running every cycle; a bind in between
    (another workload placed) makes the next replica take its cycle again."""
    zone_a = {ZONE: "a"}
    objs = [node("a1", "a"), node("a2", "a"), node("b1", "b", cpu="3"), node("b2", "b", cpu="2")]
    for i in range(4):
        pay = {"owner": ("ReplicaSet", "pay-1"), "labels": {"app": "pay"}, "selector": zone_a}
        objs.append(pod(f"pay-{i}", f"a{i % 2 + 1}", **pay))
        objs.append(pod(f"web-{i}", f"a{i % 2 + 1}", cpu="500m"))
    # a template too big for any node left: its replicas fail in a row with preemption tried
    for i in range(3):
        objs.append(pod(f"big-{i}", "a1", cpu="3", owner=("ReplicaSet", "big-1"), labels={"app": "big"}, priority=10))
    objs.append(pod("filler", "b2", cpu="2", owner=("Job", "etl"), labels={"app": "etl"}, priority=0))
    path = write(tmp_path, objs)
    fast, plain, saved = _findings_both_ways(path, "zone")
    assert fast == plain
    assert saved >= 2  # pay replicas after the first, between two binds of web
    doc = json.loads(fast)[0]
    assert {p["pod"] for p in doc["pending"]} >= {f"shop/pay-{i}" for i in range(4)}


def test_the_shortcuts_give_the_plain_findings_on_the_fixtures():
    for path in (PROD, EKS):
        for family in ("zone", "node"):
            fast, plain, _ = _findings_both_ways(path, family)
            assert fast == plain, (path, family)


def _wide_cluster(tmp_path, nodes=120):
    """`nodes` nodes in three zones, each running two web replicas and a db replica: past 100
    nodes, kube-scheduler samples."""
    objs = []
    for i in range(nodes):
        name = f"n-{i:03d}"
        objs.append(node(name, "abc"[i % 3], cpu="4"))
        objs.append(pod(f"web-{i}-a", name, cpu="1"))
        objs.append(pod(f"web-{i}-b", name, cpu="1"))
        objs.append(pod(f"db-{i}", name, cpu="500m", owner=("StatefulSet", "db"), labels={"app": "db"}))
    return write(tmp_path, objs)


def test_sampling_runs_each_scenario_as_a_fresh_scheduler_from_the_start_index(tmp_path):
    path = _wide_cluster(tmp_path)
    s = session(path).sweep(fail="node", selector="kubernetes.io/hostname in (n-004,n-050)", workers=1)
    assert all("sampling" not in sc for sc in s.scenarios)
    sampled = session(path).sweep(
        fail="node", selector="kubernetes.io/hostname in (n-004,n-050)", workers=1, sampling=True, start_index=7
    )
    for sc in sampled.scenarios:
        # the same cycles as `schedule --preemption=carry-out --sampling --start-index 7` on the
        # cluster without that node
        pods = _replacements_file(tmp_path, path, set(sc["nodes"]))
        run = session(path, edits=[Edit("--remove-node", sc["nodes"][0])]).schedule(
            pods, preemption="carry-out", order="priority", sampling=True, start_index=7
        )
        want = run.to_dict()["sampling"]
        assert sc["sampling"]["startIndex"] == 7
        assert sc["sampling"]["nextStartIndex"] == want["nextStartIndex"] != 7
        placed = {p.pod: p.node for p in run.carried_out.placements}
        assert sorted(p["pod"] for p in sc["pending"]) == sorted(k for k, v in placed.items() if v is None)
    two = session(path).sweep(
        fail="node", selector="kubernetes.io/hostname in (n-004,n-050)", workers=2, sampling=True, start_index=7
    )
    assert json.dumps(two.to_dict(), sort_keys=True) == json.dumps(sampled.to_dict(), sort_keys=True)


def test_sampling_carries_the_index_through_a_rolling_upgrade(tmp_path):
    path = _wide_cluster(tmp_path)
    s = session(path).sweep(rolling="kubernetes.io/hostname in (n-001,n-002)", sampling=True, start_index=3)
    first, second = s.scenarios
    assert first["sampling"]["startIndex"] == 3
    assert second["sampling"]["startIndex"] == first["sampling"]["nextStartIndex"] != 3
    r = CliRunner().invoke(
        app, ["sweep", "--cluster", path, "--fail", "zone", "--workers", "1", "--sampling", "--start-index", "-1"]
    )
    assert r.exit_code == 2 and "--start-index" in r.output


def test_sweep_documents_validate_against_the_result_schema(tmp_path):
    """Real sweep output, every family (rolling with a blocked eviction and sampling, a K-node
    sample with an edit), validates against kschedcli/schemas/result.schema.json as the sweep
    document and no other; a field the schema does not know fails it."""
    import importlib.resources as ilres

    import jsonschema

    schema = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())
    check = jsonschema.Draft202012Validator(schema)
    sweep_only = jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": "#/$defs/sweep"}]})
    pool = {"pool": "general"}
    objs = [
        node("g1", "a", labels=pool),
        node("g2", "a", labels=pool),
        node("spare", "b"),
        pod("api-1", "g1", labels={"app": "api"}, owner=("ReplicaSet", "api-1")),
        pod("web-1", "g2"),
        pod("bare", "g2", owner=None),
        pdb("api", {"app": "api"}, allowed=0, desired=1, healthy=1),
    ]
    path = write(tmp_path, objs)
    docs = [
        Session(PROD).sweep(fail="zone", workers=1).to_dict(),
        Session(EKS).sweep(fail="node", workers=1, top=0).to_dict(),
        session(path).sweep(rolling="pool=general", sampling=True, start_index=1).to_dict(),
        Session(EKS, edits=[Edit("--cordon", EKS_NODE)]).sweep(fail="nodes=2", samples=3, workers=1).to_dict(),
        session(path).sweep(fail="node", workers=1, sampling=True).to_dict(),
    ]
    assert docs[2]["scenarios"][0]["blocked"] and docs[2]["scenarios"][0]["sampling"]["startIndex"] == 1
    assert docs[2]["scenarios"][1]["refused"] and not docs[2]["scenarios"][1]["ok"]  # the bare pod on g2
    assert docs[3]["edits"] and docs[4]["scenarios"][0]["sampling"]["parallelism"] == 16
    for doc in docs:
        assert not list(check.iter_errors(doc))
        assert not list(sweep_only.iter_errors(doc))
    bad = json.loads(json.dumps(docs[0]))
    bad["scenarios"][0]["surprise"] = 1
    assert list(check.iter_errors(bad))


def test_a_long_run_of_scenarios_leaves_nothing_behind(tmp_path):
    """A worker runs thousands of scenarios over one loaded cluster: what each builds (its
    scheduler, its derived snapshot, the indexes plugins keep per snapshot, the volume catalog of
    its cluster copy) must be gone once it is over, frozen or not: over 200 nodes a scheduler
    freezes what its first cycle built, and a frozen cycle is never collected. After 2N scenarios
    as many snapshots, indexes and catalogs are alive as after N, and no scenario's snapshot."""
    import gc
    import weakref

    from kschedcli.backend.snapshot import Snapshot
    from kschedcli.plugins.interpodaffinity import index as ipa_index
    from kschedcli.plugins.volume import util as volume_util
    from kschedcli.whatif import sweep as sw

    objs = []
    spread = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ZONE},
                }
            ]
        }
    }
    for i in range(210):
        name = f"n-{i:03d}"
        objs.append(node(name, "abc"[i % 3]))
        web = pod(f"web-{i}", name)
        web["spec"]["affinity"] = spread
        objs.append(web)
    cluster, config, _ = session(write(tmp_path, objs))._inputs()
    base = sw.Base.of(cluster, config)
    specs = sw.plan(cluster, fail="node").scenarios

    derived: list = []
    original = Snapshot.without_nodes

    def spy(self, removed):
        snap = original(self, removed)
        derived.append(weakref.ref(snap))
        return snap

    def alive():
        gc.collect()
        return (
            sum(1 for r in derived if r() is not None),
            len(ipa_index._TERM_INDEXES),
            len(ipa_index._INDEXES),
            len(volume_util._CATALOGS),
        )

    Snapshot.without_nodes = spy  # type: ignore[method-assign]
    try:
        n = 6
        recreated = [d["recreated"] for d in sw.run_specs(base, specs[:n])]
        after_n = alive()
        recreated += [d["recreated"] for d in sw.run_specs(base, specs[n : 2 * n])]
        after_2n = alive()
    finally:
        Snapshot.without_nodes = original  # type: ignore[method-assign]
    assert len(derived) == 2 * n
    assert recreated == [1] * 2 * n  # every scenario ran a cycle
    assert after_2n == after_n
    assert after_2n[0] == 0  # no scenario's snapshot outlives it


def _parsed(v, depth=0):
    """A parsed value as plain data (objects by their slots or attributes), for comparing."""
    assert depth < 20
    if isinstance(v, dict):
        return {k: _parsed(x, depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [type(v).__name__, *(_parsed(x, depth + 1) for x in v)]
    if isinstance(v, (str, int, float, bool, type(None))):
        return v
    names = [n for c in type(v).__mro__ for n in getattr(c, "__slots__", ())] or sorted(vars(v))
    return [
        type(v).__name__,
        {n: _parsed(getattr(v, n, None), depth + 1) for n in names if n not in ("_raw", "_cache")},
    ]


@pytest.mark.parametrize("path", [PROD, EKS])
def test_replacements_sharing_parsed_templates_are_the_replacements_parsed_anew(path):
    """A sweep's replacements are built with the scenarios' shared model.Pod templates (a
    template's parsed fields made once): each is field for field the replacement parsed on its
    own (drain's), and the templates are used (containers shared between replacements)."""
    from kschedcli.whatif.drain import replacement_of

    cluster, _, _ = Session(path)._inputs()
    templates: dict = {}
    bound = [p for p in cluster.pods if p.node_name]
    shared = 0
    for p in bound:
        fresh, reused = replacement_of(p, cluster), replacement_of(p, cluster, templates)
        assert _parsed(reused) == _parsed(fresh)
        assert reused.raw == fresh.raw and not reused.node_name and reused.phase == "Pending"
    seen: dict = {}
    for p in bound:
        r = replacement_of(p, cluster, templates)
        shared += id(r.containers) in seen
        seen[id(r.containers)] = r
    assert shared > len(bound) // 3


def test_a_sweep_where_every_scenario_keeps_every_pod_lists_no_empty_table(tmp_path):
    # two nodes, one small replicated pod: either node fails alone and its pod comes back on the other
    cluster = tmp_path / "c.yaml"
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for n in ("n1", "n2")
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "namespace": "default",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u1", "controller": True}
            ],
        },
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}],
        },
        "status": {"phase": "Running"},
    }
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*nodes, pod]}))
    r = CliRunner().invoke(
        app, ["sweep", "--cluster", str(cluster), "--fail", "node", "--workers", "1"], env={"COLUMNS": "80"}
    )
    assert r.exit_code == 0, r.output
    assert "  2 scenarios, each keeping every pod running (--top 0 lists them)\n" in r.output
    assert "Scenario" not in r.output and "more scenario" not in r.output
    listed = CliRunner().invoke(
        app,
        ["sweep", "--cluster", str(cluster), "--fail", "node", "--workers", "1", "--top", "0"],
        env={"COLUMNS": "80"},
    )
    assert "Scenario" in listed.output and "✔ ok" in listed.output


def test_zones_of_a_cluster_without_zone_labels_is_one_line_with_the_way_out(tmp_path):
    cluster = tmp_path / "kind.yaml"
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "kind-worker", "labels": {"kubernetes.io/hostname": "kind-worker"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    cluster.write_text(json.dumps(node))
    r = CliRunner().invoke(app, ["sweep", "--cluster", str(cluster), "--fail", "zone"])
    assert r.exit_code == 2
    assert r.stderr == (
        "ksched: --fail-key: no node carries the label topology.kubernetes.io/zone (--fail-key LABEL names "
        "another failure domain; --fail node fails each node)\n"
    )
    r = CliRunner().invoke(app, ["sweep", "--cluster", str(cluster), "--fail", "zone", "--fail-key", "rack"])
    assert r.stderr == "ksched: --fail-key: no node carries the label rack\n"


def test_zones_of_nodes_with_only_the_beta_zone_label_name_it(tmp_path):
    cluster = tmp_path / "old.yaml"
    labels = {"kubernetes.io/hostname": "n1", "failure-domain.beta.kubernetes.io/zone": "us-east1-b"}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": labels},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    cluster.write_text(json.dumps(node))
    r = CliRunner().invoke(app, ["sweep", "--cluster", str(cluster), "--fail", "zone"])
    assert r.exit_code == 2
    assert r.stderr == (
        "ksched: --fail-key: no node carries the label topology.kubernetes.io/zone (the nodes carry "
        "failure-domain.beta.kubernetes.io/zone, the label it replaced: --fail-key "
        "failure-domain.beta.kubernetes.io/zone)\n"
    )
    r = CliRunner().invoke(
        app,
        ["sweep", "--cluster", str(cluster), "--fail", "zone", "--fail-key", "failure-domain.beta.kubernetes.io/zone"],
    )
    assert r.exit_code == 0


# ---------------------------------------------------------------- a scenario cut in two (tasks)


def _cut_at_every_attempt(path, family, min_preempting=0):
    """Each scenario run whole, and cut after each of its first attempts: the first part on one
    loaded world, the rest on another (as two worker processes load it), giving the whole run's
    document. How many cuts fell after a preemption carried out, and after a pod that did not fit."""
    from kschedcli.whatif import sweep as sw

    def world():
        cluster, config, _ = session(path, validate="ignore")._inputs()
        return cluster, sw.Base.of(cluster, config)

    cluster, here = world()
    _, there = world()
    after_preemption = after_pending = 0
    for spec in sw.plan(cluster, fail=family).scenarios:
        whole = json.dumps(sw.run_failure(here, spec), sort_keys=True)
        n = json.loads(whole)["recreated"]
        for k in range(1, n):
            first = sw.run_first_part(here, spec, (k + 0.5) / n)
            assert len(first.decisions) == k
            rest = sw.run_failure(there, spec, after=first)
            assert json.dumps(rest, sort_keys=True) == whole, (spec.name, k)
            after_preemption += any(d.preempted and d.victims for d in first.decisions)
            after_pending += any(d.node is None for d in first.decisions)
    return after_preemption, after_pending


def test_a_scenario_cut_anywhere_gives_the_whole_runs_findings(tmp_path):
    """The rest of a scenario applies the first part's decisions (binds, preemptions carried out
    with their victims, nominations) and goes on: the same document wherever the cut falls."""
    objs = [
        node("n1", "a", cpu="2"),
        node("n2", "b", cpu="2"),
        node("n3", "b", cpu="1"),
        pod("critical", "n1", cpu="2", owner=("StatefulSet", "db"), labels={"app": "db"}, priority=1000),
        pod("web-0", "n1", cpu="0", labels={"app": "web"}, priority=500),
        pod("huge", "n1", cpu="3", owner=("ReplicaSet", "huge-1"), labels={"app": "huge"}, priority=10),
        pod("batch-1", "n2", cpu="1", owner=("Job", "etl"), labels={"app": "etl"}, priority=0),
        pod("batch-2", "n2", cpu="1", owner=("Job", "etl"), labels={"app": "etl"}, priority=0),
        pod("late", "n1", cpu="1", owner=("ReplicaSet", "late-1"), labels={"app": "late"}, priority=0),
    ]
    preempted, pending = _cut_at_every_attempt(write(tmp_path, objs), "node")
    assert preempted >= 2 and pending >= 1


@pytest.mark.parametrize("path", [PROD, EKS])
def test_the_fixtures_zones_cut_anywhere_give_the_whole_runs_findings(path):
    preempted, pending = _cut_at_every_attempt(path, "zone")
    assert pending >= 10
    assert preempted >= (5 if path == PROD else 0)


def test_a_first_part_not_cut_where_cycles_read_more_than_the_cluster(tmp_path):
    """Under node sampling each cycle moves the start index on: the first part decides nothing,
    the rest runs the scenario whole."""
    from kschedcli.whatif import sweep as sw

    cluster, config, _ = session(PROD, validate="ignore")._inputs()
    base = sw.Base.of(cluster, config, sampling=3)
    spec = sw.plan(cluster, fail="zone").scenarios[0]
    first = sw.run_first_part(base, spec, 0.5)
    assert first.decisions == ()
    assert sw.run_failure(base, spec, after=first) == sw.run_failure(base, spec)
    other = sw.plan(cluster, fail="zone").scenarios[1]
    with pytest.raises(ValueError, match="goes on in zone"):
        sw.run_failure(base, other, after=first)


def _costs(*sizes):
    from kschedcli.whatif import sweep as sw

    return [sw.ScenarioSpec("zone", f"z{i}", tuple(f"n{j}" for j in range(n))) for i, n in enumerate(sizes)]


def test_few_long_scenarios_are_cut_to_keep_every_worker_busy():
    from kschedcli.whatif import sweep as sw

    # three zones on two workers: the second zone's first half starts the second worker, the third
    # zone follows it there; the rest of the second zone (queued when its first part ends) ends
    # the first worker's turn
    got = [(t.start, [s.name for s in t.specs], t.share) for t in sw.tasks(_costs(10, 10, 10), 2)]
    assert got == [(0, ["z0"], None), (1, ["z1"], 0.5), (2, ["z2"], None)]
    # as many as the workers, or a thin cut: whole scenarios
    assert all(t.share is None for t in sw.tasks(_costs(10, 10), 2))
    assert all(t.share is None for t in sw.tasks(_costs(10, 10, 1), 2))
    # many scenarios: contiguous shares, every scenario in one
    many = sw.tasks(_costs(*[3] * 50), 2)
    assert all(t.share is None for t in many) and [s.name for t in many for s in t.specs] == [
        f"z{i}" for i in range(50)
    ]
    # five on four: three cut, each worker's load within a scenario's cost of the mean
    five = sw.tasks(_costs(10, 12, 9, 11, 10), 4)
    assert sorted(t.start for t in five) == [0, 1, 2, 3, 4]
    assert [round(t.share, 3) for t in five if t.share is not None] == [0.75, 0.556, 0.273]


def test_three_zones_on_two_workers_give_the_single_process_results():
    one = Session(PROD).sweep(fail="zone", workers=1).to_dict()
    two = Session(PROD).sweep(fail="zone", workers=2).to_dict()
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


@pytest.mark.parametrize("path", [PROD, EKS])
def test_a_scenario_leaves_nothing_for_the_cyclic_collector(path):
    """Scheduler.close(): the scenario's scheduler lets go of its parts as the scenario ends, so
    reference counting frees what it built (with preemption carried out, and a first part too);
    the cyclic collector, paused, then finds nothing (without it, some 250 objects a scenario)."""
    import gc

    from kschedcli.whatif import sweep as sw

    cluster, config, _ = Session(path)._inputs()
    base = sw.Base.of(cluster, config)
    specs = sw.plan(cluster, fail="zone").scenarios
    sw.run_failure(base, specs[0])  # (what the first scenario leaves on the loaded objects lasts)
    gc.collect()
    gc.disable()
    try:
        found = []
        for spec in specs:
            sw.run_failure(base, spec)
            found.append(gc.collect())
        sw.run_first_part(base, specs[0], 0.5)
        found.append(gc.collect())
    finally:
        gc.enable()
    assert found == [0] * (len(specs) + 1)


def test_template_keys_equal_for_replicas_only():
    """Base.template_of: pods differing in name, uid, node and their service-account token
    volume's name share a key; a different value anywhere else (its type too), none; a value
    marshal does not write falls back to its text."""
    import datetime

    from kschedcli.api.model import Pod
    from kschedcli.whatif import sweep as sw

    def replica(name, token, **spec):
        raw = pod(name, "n1")
        raw["metadata"]["uid"] = f"uid-{name}"
        raw["spec"]["volumes"] = [{"name": token, "projected": {"sources": []}}]
        raw["spec"]["containers"][0]["volumeMounts"] = [{"name": token, "mountPath": "/var/run/secrets"}]
        raw["spec"].update(spec)
        return Pod(raw)

    key = sw._template_key
    a, b = replica("web-a", "kube-api-access-abcde"), replica("web-b", "kube-api-access-fghij")
    b.raw["spec"]["nodeName"] = "n2"
    assert key(a) == key(b) is not None
    assert key(a) != key(replica("web-b", "kube-api-access-fghij", nodeSelector={"disk": "ssd"}))
    assert key(replica("web-c", "tok", enableServiceLinks=False)) != key(replica("web-d", "tok", enableServiceLinks=0))
    assert key(replica("web-e", "tok", hostNetwork=True)) != key(replica("web-f", "tok", hostNetwork=1))
    odd = replica("web-g", "tok", when=datetime.date(2025, 1, 1))
    assert isinstance(key(odd), str) and key(odd) == key(replica("web-h", "tok2", when=datetime.date(2025, 1, 1)))


def test_a_first_parts_share_follows_the_pods_of_the_scenarios():
    """The plan cuts by failed nodes; the worker cuts by the pods on them (pod_costs): a zone
    holding more pods than the others takes a longer share of the worker it shares."""
    from kschedcli.whatif import sweep as sw

    cluster, config, _ = Session(PROD)._inputs()
    base = sw.Base.of(cluster, config)
    specs = sw.plan(cluster, fail="zone").scenarios
    costs = sw.pod_costs(base, specs)
    assert costs == [sum(1 for p in cluster.pods if p.node_name in s.nodes) for s in specs]
    by_nodes = [t.share for t in sw.tasks(specs, 2)]
    by_pods = [t.share for t in sw.tasks(specs, 2, costs)]
    assert by_nodes[1] is not None and by_pods[1] is not None and by_nodes[1] != by_pods[1]
    limit = sum(costs) / 2
    assert by_pods[1] == pytest.approx((costs[0] + costs[1] - limit) / costs[1])
    # the worker's first part takes the pods' share, not the one it was handed
    args = sw.LoadArgs((PROD,), None, (), None, None, False, False, None)
    first = sw.run_first(args, specs[1], 0.5, tuple(specs), 2)
    n = sw.run_failure(base, specs[1])["recreated"]
    assert len(first.decisions) == min(n - 1, max(1, int(n * by_pods[1]))) != int(n * 0.5)


@pytest.mark.parametrize("fail", ["zone", "node"])
def test_a_pool_forked_from_a_read_world_gives_the_single_process_results(monkeypatch, fail):
    """A sweep whose process read the files itself (no entry in the snapshot cache, or the cache
    not used: `--no-cache` here) forks its workers, which take the cluster and configuration it
    read as they are (LoadArgs.load, made to fail before the pool starts, is never called in
    them): the documents of one process, zones cut across the workers and shares of nodes alike."""
    import multiprocessing

    from kschedcli.whatif import sweep as sw

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("this system does not fork")
    one = Session(PROD, cache=False).sweep(fail=fail, workers=1).to_dict()
    contexts = []
    real_context = multiprocessing.get_context
    monkeypatch.setattr(multiprocessing, "get_context", lambda m=None: contexts.append(m) or real_context(m))

    def no_load(self):
        raise AssertionError("a forked worker loaded the world again")

    monkeypatch.setattr(sw.LoadArgs, "load", no_load)
    two = Session(PROD, cache=False).sweep(fail=fail, workers=2).to_dict()
    assert contexts == ["fork"]
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert not sw._INHERITED  # (let go of once the pool is done)
