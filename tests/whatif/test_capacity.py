"""`ksched capacity`: copies scheduled one after another until one fits nowhere. Its placements are
held equal to what `ksched schedule` gives for the same number of copies, one by one."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources as ilres
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
CHART = str(ROOT / "fixtures" / "chart" / "shop.yaml")
STORAGE = str(ROOT / "fixtures" / "chart" / "storage.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")
SCHEMA = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())


def run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


def as_json(*args: str, code: int = 0) -> dict:
    r = run(*args, "-o", "json")
    assert r.exit_code == code, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def pod_copies(path: str, n: int, tmp_path, name: str = "copies.yaml") -> str:
    """n copies of the file's Pod, written by hand (named NAME-0..), as a user would for `schedule`."""
    (obj,) = list(yaml.safe_load_all(Path(path).read_text()))
    docs = []
    for i in range(n):
        meta = {**obj["metadata"], "name": f"{obj['metadata']['name']}-{i}"}
        docs.append({**obj, "metadata": meta})
    f = tmp_path / name
    f.write_text(yaml.safe_dump_all(docs))
    return str(f)


def schedule_nodes(*args: str) -> list[dict]:
    r = run("schedule", *args, "--order", "file", "-o", "json")
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)["results"]


def test_pod_copies_land_where_schedule_puts_them_one_by_one(tmp_path):
    doc = as_json("capacity", WEB, "-c", PROD)
    (t,) = doc["perTemplate"]
    n = t["replicas"]
    assert n > 20 and t["stoppedBy"] == "unschedulable" and doc["preemption"] is False
    # schedule n + 1 copies: the first n land exactly where capacity put its copies, the last fits nowhere
    results = schedule_nodes(pod_copies(WEB, n + 1, tmp_path), "-c", PROD)
    assert [r["selectedNode"] for r in results[:n]] == t["placements"]
    assert results[n]["schedulable"] is False
    assert results[n]["message"] == t["stopMessage"] == doc["stopMessage"]
    assert t["stop"]["message"] == t["stopMessage"] and t["stop"]["breakdowns"]["resources"]
    assert doc["perNode"] == dict(sorted(Counter(t["placements"]).items()))
    zones = doc["perLabel"]["topology.kubernetes.io/zone"]
    assert sum(zones.values()) == n and set(zones) <= {"us-east-1a", "us-east-1b", "us-east-1c"}


def test_workload_copies_are_the_pods_schedule_makes_with_replicas(tmp_path):
    f = tmp_path / "storefront.yaml"
    (deploy,) = [d for d in yaml.safe_load_all(Path(CHART).read_text()) if d and d["kind"] == "Deployment"]
    f.write_text(yaml.safe_dump(deploy))
    doc = as_json("capacity", str(f), "-c", PROD, "--max", "25")
    (t,) = doc["perTemplate"]
    assert t["replicas"] == 25 and t["stoppedBy"] == "max" and t["stopMessage"] is None and doc["stopMessage"] is None
    results = schedule_nodes(str(f), "-c", PROD, "--replicas", "25")
    assert [r["selectedNode"] for r in results] == t["placements"]
    # the copies carry the workload's spreading: the zones stay within maxSkew 1
    zones = doc["perLabel"]["topology.kubernetes.io/zone"]
    assert max(zones.values()) - min(zones.values()) <= 1


def test_several_templates_in_turn_match_one_schedule_of_all_copies(tmp_path):
    sts = tmp_path / "redis.yaml"
    (obj,) = [d for d in yaml.safe_load_all(Path(CHART).read_text()) if d and d["kind"] == "StatefulSet"]
    sts.write_text(yaml.safe_dump(obj))
    doc = as_json("capacity", WEB, str(sts), "-c", PROD, "-c", STORAGE, "--max", "6")
    first, second = doc["perTemplate"]
    assert (first["replicas"], second["replicas"], doc["replicas"]) == (6, 6, 12)
    # the same copies in one file: the web pod's six, then the StatefulSet's pods 0..5
    both = tmp_path / "both.yaml"
    both.write_text(Path(pod_copies(WEB, 6, tmp_path)).read_text() + "---\n" + sts.read_text())
    results = schedule_nodes(str(both), "-c", PROD, "-c", STORAGE, "--replicas", "6")
    assert [r["selectedNode"] for r in results] == first["placements"] + second["placements"]
    assert [r["pod"] for r in results[6:]] == [f"shop/shop-redis-{i}" for i in range(6)]
    # required anti-affinity per host: six redis copies on six different nodes
    assert len(set(second["placements"])) == 6


def test_min_gate_and_exit_status():
    assert run("capacity", WEB, "-c", PROD, "--min", "10").exit_code == 0
    r = run("capacity", WEB, "-c", PROD, "--min", "1000")
    assert r.exit_code == 1 and "copies fit in total" in r.stdout and "Stopped: Pod shop/" in r.stdout
    zero = as_json("capacity", WEB, "-c", PROD, "--max", "0")
    assert zero["replicas"] == 0 and zero["stopMessage"] is None


def test_capacity_rejects_daemonsets_and_files_without_pods(tmp_path):
    r = run("capacity", CHART, "-c", PROD)
    assert r.exit_code == 2 and "a DaemonSet runs one pod per eligible node" in r.stderr
    cm = tmp_path / "cm.yaml"
    cm.write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    r = run("capacity", str(cm), "-c", PROD)
    assert r.exit_code == 2 and r.stderr == f"ksched: {cm}: no Pod or workload found\n"


def test_capacity_output_is_deterministic_and_grouped_by_the_asked_label():
    a = run("capacity", WEB, "-c", PROD, "--group-by", "pool", "-o", "json").stdout
    assert a == run("capacity", WEB, "-c", PROD, "--group-by", "pool", "-o", "json").stdout
    assert list(json.loads(a)["perLabel"]) == ["pool"]
    assert yaml.safe_load(run("capacity", WEB, "-c", PROD, "--group-by", "pool", "-o", "yaml").stdout) == json.loads(a)


def test_copies_share_what_plugins_derive_only_when_they_differ_in_name_only():
    from kschedcli.inputs.cluster import load_cluster
    from kschedcli.whatif.capacity import Template, copies

    cluster = load_cluster([PROD, STORAGE])
    (web,) = list(yaml.safe_load_all(Path(WEB).read_text()))
    it = copies(Template(web, WEB, "", "Pod"), cluster)
    a, b = next(it), next(it)
    assert a.name != b.name and a._cache is b._cache
    (sts,) = [d for d in yaml.safe_load_all(Path(CHART).read_text()) if d and d["kind"] == "StatefulSet"]
    it = copies(Template(sts, CHART, "", "StatefulSet"), cluster)
    a, b = next(it), next(it)
    assert (a.name, b.name) == ("shop-redis-0", "shop-redis-1") and a._cache is not b._cache


def test_capacity_with_cluster_edits_counts_on_the_edited_cluster():
    before = as_json("capacity", WEB, "-c", PROD)
    after = as_json("capacity", WEB, "-c", PROD, "--add-node", "general-a-01:3")
    assert [e["flag"] for e in after["edits"]] == ["--add-node"] and "edits" not in before
    assert after["replicas"] > before["replicas"]
    assert {"general-a-01-copy-1", "general-a-01-copy-2", "general-a-01-copy-3"} <= set(after["perNode"])


def test_pod_copies_are_the_pods_their_manifests_parse_to_even_after_binds():
    from kschedcli.inputs.cluster import load_cluster
    from kschedcli.whatif.capacity import Template, copies

    cluster = load_cluster([PROD])
    (web,) = list(yaml.safe_load_all(Path(WEB).read_text()))
    made = []
    for p in copies(Template(web, WEB, "", "Pod"), cluster, limit=70):
        if made:
            made[0].node_name = "general-a-01"  # the first copy bound: the later ones are not
        made.append(p)
    assert len(made) == 70 and len({p.name for p in made}) == 70
    for p in (made[1], made[69]):
        parsed = cluster.parse_pod(p.raw, WEB, "")
        assert p.raw["metadata"]["name"] == p.name == parsed.name and p.key == parsed.key
        assert (p.node_name, p.requests.milli_cpu, p.labels) == ("", parsed.requests.milli_cpu, parsed.labels)
        tolerations = [(t.key, t.operator, t.value, t.effect, t.seconds) for t in p.tolerations]
        assert tolerations == [(t.key, t.operator, t.value, t.effect, t.seconds) for t in parsed.tolerations]


def test_the_ci_docs_capacity_gate_prints_and_exits_as_the_docs_say():
    readme = (ROOT / "docs" / "ci.md").read_text()
    cmd = "ksched capacity fixtures/pods/web.yaml --cluster fixtures/prod-cluster.yaml --min 60 -o json"
    assert cmd in readme and "--min 40 -o json > capacity.json || status=$?" in readme
    r = CliRunner().invoke(app, cmd.split()[1:])
    assert r.exit_code == 1  # fewer than 60 fit: the gate fails
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    # what the jq line of docs/ci.md prints: "\(.replicas) more fit; stopped by: \(.stopMessage // "--max")"
    line = f"{doc['replicas']} more fit; stopped by: {doc['stopMessage'] or '--max'}"
    assert "\n" + line + "\n" in readme
    assert CliRunner().invoke(app, [*cmd.split()[1:-4], "--min", str(doc["replicas"])]).exit_code == 0


def test_the_workloads_docs_chart_pipe_prints_the_docs_table():
    readme = (ROOT / "docs" / "usage" / "workloads.md").read_text()
    start = readme.index("$ helm template shop ./chart | ksched schedule - -c fixtures/prod-cluster.yaml")
    shown = readme[start : readme.index("```", start)].splitlines()[1:]
    r = CliRunner().invoke(
        app, ["schedule", "-", "-c", PROD, "-c", STORAGE], input=Path(CHART).read_text(), env={"COLUMNS": "100"}
    )
    assert r.exit_code == 0, r.output
    printed = [line.rstrip() for line in r.stdout.splitlines()]
    kept = [line.rstrip() for line in shown if line.strip() and line.strip() != "..."]
    assert len(kept) > 15 and all(line in printed for line in kept), [x for x in kept if x not in printed]


@pytest.mark.parametrize(
    "spread",
    [
        # hard zone spread and soft host spread (the incremental mode keeps both sets of counts)
        [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"},
        ],
        # required anti-affinity per host: every copy takes the full cycle
        None,
    ],
)
def test_spread_and_anti_affinity_copies_land_where_schedule_puts_them(tmp_path, spread):
    (web,) = list(yaml.safe_load_all(Path(WEB).read_text()))
    selector = {"matchLabels": {"app": "web"}}
    if spread is not None:
        web["spec"]["topologySpreadConstraints"] = [{**c, "labelSelector": selector} for c in spread]
    else:
        term = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
        web["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    f = tmp_path / "web.yaml"
    f.write_text(yaml.safe_dump(web))
    doc = as_json("capacity", str(f), "-c", PROD)
    (t,) = doc["perTemplate"]
    n = t["replicas"]
    assert n > 5 and t["stoppedBy"] == "unschedulable"
    results = schedule_nodes(pod_copies(str(f), n + 1, tmp_path), "-c", PROD)
    assert [r["selectedNode"] for r in results[:n]] == t["placements"]
    assert results[n]["schedulable"] is False and results[n]["message"] == t["stopMessage"]


def test_without_max_a_template_stops_at_the_copy_bound(tmp_path, monkeypatch):
    # nodes that allow a hundred million pods and a pod that requests nothing: without the bound the
    # copies would go on for hours; --max lowers the bound and never lifts it (issue 29)
    from kschedcli.whatif import capacity

    monkeypatch.setattr(capacity, "MAX_COPIES", 40)
    big = tmp_path / "cluster.yaml"
    big.write_text(Path(SMALL).read_text().replace('pods: "110"', 'pods: "100000000"'))
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: i}]\n")
    doc = as_json("capacity", str(pod), "-c", str(big))
    t = doc["perTemplate"][0]
    assert (doc["replicas"], doc["max"], t["stoppedBy"], t["stopMessage"], doc["stopMessage"]) == (
        40,
        None,
        "limit",
        None,
        None,
    )
    assert "the bound without --max" in run("capacity", str(pod), "-c", str(big)).stdout
    r = run("capacity", str(pod), "-c", str(big), "--max", "55")
    assert (r.exit_code, r.output) == (
        2,
        "ksched: --max: 55: at most 40 copies of a template are counted "
        "(Kubernetes supports clusters of up to 150,000 pods)\n",
    )
    doc = as_json("capacity", str(pod), "-c", str(big), "--max", "30")
    assert (doc["replicas"], doc["perTemplate"][0]["stoppedBy"]) == (30, "max")


def test_the_table_ends_with_the_release_once():
    # each stop is explained as `explain` does, without its own footer: the report says it once
    r = run(
        "capacity",
        str(ROOT / "fixtures" / "pods" / "web.yaml"),
        str(ROOT / "fixtures" / "pods" / "cart.yaml"),
        "-c",
        PROD,
    )
    assert r.stdout.count("Stopped: ") == 2
    assert r.stdout.count("ksched follows kube-scheduler") == 1
    assert any(line.startswith("ksched follows kube-scheduler") for line in r.stdout.rstrip().splitlines()[-2:])


def test_the_files_services_and_priority_classes_join_the_cluster_as_in_schedule(tmp_path):
    """What a chart adds beside its workloads (Services: the default spreading's selector;
    PriorityClasses; claims) joins the cluster for capacity as for schedule: the same placements
    (before: left out, and a template naming the chart's PriorityClass refused)."""
    docs = [d for d in yaml.safe_load_all(Path(CHART).read_text()) if d]
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    services = [d for d in docs if d["kind"] == "Service"]
    spec = deploy["spec"]["template"]["spec"]
    spec["priorityClassName"] = "chart-high"
    for own in ("topologySpreadConstraints", "affinity"):  # spread by the Service's default constraints only
        spec.pop(own, None)
    high = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "chart-high"},
        "value": 5000,
    }
    f = tmp_path / "chart.yaml"
    f.write_text(yaml.safe_dump_all([*services, high, deploy]))
    doc = as_json("capacity", str(f), "-c", PROD, "--max", "20")
    (t,) = doc["perTemplate"]
    results = schedule_nodes(str(f), "-c", PROD, "--replicas", "20")
    assert [r["selectedNode"] for r in results] == t["placements"]
    assert {r["priority"] for r in results} == {5000}
    # the objects read beside the template, and added to the cluster
    from kschedcli.inputs.cluster import load_cluster
    from kschedcli.whatif.capacity import read_templates
    from kschedcli.workloads.expansion import add_cluster_objects

    beside: list = []
    (template,) = read_templates([str(f)], beside)
    assert template.label == "Deployment shop/shop-storefront"
    assert [o["kind"] for o, _, _ in beside] == ["Service", "Service", "PriorityClass"]
    cluster = load_cluster([SMALL])  # (no Service: PROD holds one of the chart's already, which stays)
    add_cluster_objects(cluster, beside)
    for svc in services:
        assert cluster.get("Service", "shop", svc["metadata"]["name"])["spec"] == svc["spec"]
    assert cluster.priorities["chart-high"][0] == 5000
