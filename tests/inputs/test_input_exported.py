"""Issue 28, item 1: objects exported from an API server (`kubectl get -o yaml`, support bundles)
are read as the API server reads what it stores: managedFields' fieldsV1 is opaque JSON, unknown
fields are dropped (named under -v), never an error; what a person writes stays strict. Numbers:
an integral `1e+09` (go-yaml's float) or JSON `1e9` is an integer where the API wants one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.loader import goyaml
from kschedcli.loader.yaml_reader import yaml_docs

ROOT = Path(__file__).resolve().parents[2]
EXPORTED = ROOT / "fixtures" / "exported"
CLUSTER = str(EXPORTED / "cluster.yaml")
PENDING = str(EXPORTED / "checkout-pending.yaml")
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_exported_pending_pod_against_exported_snapshot():
    r = invoke("explain", PENDING, "-c", CLUSTER, "-o", "json")
    assert r.exit_code == 1, r.output  # needs preemption: not an input error
    doc = json.loads(r.stdout)
    assert doc["priority"] == 1_000_000_000  # the PriorityClass's `value: 1e+09`
    assert doc["priorityClassName"] == "business-critical"


def test_unknown_fields_of_an_exported_pod_named_under_verbose_only():
    quiet = invoke("explain", PENDING, "-c", CLUSTER)
    assert "spec.workloadRef" not in quiet.stderr
    loud = invoke("-v", "explain", PENDING, "-c", CLUSTER)
    line = next(x for x in loud.stderr.splitlines() if "an API server's object" in x)
    assert line == (
        f"ksched: {PENDING}: Pod shop/checkout-0: an API server's object: fields this ksched does not know, "
        "not read: spec.workloadRef"
    )


MANAGED = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  {marker}
  managedFields:
  - apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          .: {{}}
          f:app: {{}}
      f:spec:
        f:containers:
          k:{{"name":"web"}}:
            f:image: {{}}
    manager: kubectl-client-side-apply
    operation: Update
    time: "2026-11-20T10:00:00Z"
spec:
  containers:
  - name: web
    image: nginx
  {extra}
"""


@pytest.mark.parametrize(
    "marker",
    [
        "uid: 0b7f1a3e-1111-4222-8333-444455556666",
        'resourceVersion: "12345"',
        'creationTimestamp: "2026-11-20T10:00:00Z"',
    ],
)
def test_server_set_metadata_makes_unknown_fields_dropped(tmp_path, marker):
    f = tmp_path / "pod.yaml"
    f.write_text(MANAGED.format(marker=marker, extra="futureField: {enabled: true}"))
    r = invoke("explain", str(f), "-c", SMALL)
    assert r.exit_code == 0, r.output


def test_status_makes_a_pod_an_api_servers(tmp_path):
    f = tmp_path / "pod.yaml"
    body = MANAGED.format(marker="labels: {app: web}", extra="")
    f.write_text(body + "status:\n  phase: Pending\n  resize: InProgress\n  newerThing: {a: 1}\n")
    r = invoke("-v", "explain", str(f), "-c", SMALL)
    assert r.exit_code == 0, r.output
    assert "not read: status.newerThing" in r.stderr


def test_managed_fields_alone_are_opaque_even_in_a_written_pod(tmp_path):
    # no server-set field: strict, but fieldsV1 is JSON the API server does not look into
    f = tmp_path / "pod.yaml"
    f.write_text(MANAGED.format(marker="labels: {app: web}", extra=""))
    r = invoke("explain", str(f), "-c", SMALL)
    assert r.exit_code == 0, r.output


def test_a_written_pod_stays_strict(tmp_path):
    f = tmp_path / "pod.yaml"
    f.write_text(MANAGED.format(marker="labels: {app: web}", extra="nodeSelecter: {pool: gpu}"))
    r = invoke("explain", str(f), "-c", SMALL)
    assert r.exit_code == 2
    assert r.stderr == (f"ksched: {f}: Pod shop/web: spec.nodeSelecter: unknown field; did you mean nodeSelector?\n")


def test_type_errors_stay_errors_in_an_api_servers_object(tmp_path):
    f = tmp_path / "pod.yaml"
    f.write_text(MANAGED.format(marker='uid: "1"', extra="priority: high"))
    r = invoke("explain", str(f), "-c", SMALL)
    assert r.exit_code == 2
    assert "spec.priority: expected an integer" in r.stderr


def test_exported_workload_with_server_fields(tmp_path):
    f = tmp_path / "deploy.yaml"
    f.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n  generation: 4\n"
        '  resourceVersion: "991"\n  uid: 6a1d\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n'
        "  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx}]\n"
        "status:\n  replicas: 2\n  terminatingReplicas: 0\n  someNewerCount: 3\n"
    )
    r = invoke("explain", str(f), "-c", SMALL)
    assert r.exit_code == 0, r.output


# ---- numbers


PRIORITY_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  priorityClassName: big\n  containers:\n"
    "  - {name: c, image: i}\n"
)


@pytest.mark.parametrize("written", ["1e+09", "1e9", "1E9", "1.0e9", "1000000000.0", "10e8"])
def test_priority_class_value_in_a_snapshot_with_an_exponent(tmp_path, written):
    snap = tmp_path / "c.yaml"
    snap.write_text(
        Path(SMALL).read_text()
        + f"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: big\nvalue: {written}\n"
    )
    pod = tmp_path / "p.yaml"
    pod.write_text(PRIORITY_POD)
    r = invoke("--no-cache", "explain", str(pod), "-c", str(snap), "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["priority"] == 1_000_000_000


def test_priority_class_value_in_a_json_snapshot(tmp_path):
    pc = tmp_path / "pc.json"
    pc.write_text(
        '{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "big"}, "value": 1e9}'
    )
    pod = tmp_path / "p.yaml"
    pod.write_text(PRIORITY_POD)
    r = invoke("--no-cache", "explain", str(pod), "-c", SMALL, "-c", str(pc), "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["priority"] == 1_000_000_000


def test_priority_class_value_in_the_pods_file(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: big\nvalue: 1e+09\n---\n"
        + PRIORITY_POD
    )
    r = invoke("explain", str(f), "-c", SMALL, "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["priority"] == 1_000_000_000


def test_a_fractional_number_is_still_not_an_integer(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: big\nvalue: 2.5e-1\n---\n"
        + PRIORITY_POD
    )
    r = invoke("explain", str(f), "-c", SMALL)
    assert r.exit_code == 2
    assert r.stderr.endswith("value: expected an integer, got number 0.25\n"), r.stderr


# go-yaml v2's resolve (resolve.go): the plain scalars with a number's first character
GO_YAML = [
    ("1e+09", 1e9),
    ("1e9", 1e9),
    ("1E9", 1e9),
    ("-1e-3", -0.001),
    ("+1e3", 1000.0),
    ("1.e3", 1000.0),
    (".5e1", 5.0),
    ("1_000e3", 1e6),  # underscores go before the float pattern
    ("1e", "1e"),
    ("1e+", "1e+"),
    ("e5", "e5"),
    ("1e3.5", "1e3.5"),
    ("0x1p3", "0x1p3"),  # a hex float: not yamlStyleFloat
    ("1e400", "1e400"),  # past float64: ParseFloat fails, a string
]


@pytest.mark.parametrize("text,value", GO_YAML)
def test_goyaml_resolve_exponents(text, value):
    assert goyaml.resolve_plain(text) == value


@pytest.mark.parametrize("text,value", [(t, v) for t, v in GO_YAML if isinstance(v, float)])
def test_snapshot_reader_takes_go_yaml_exponent_floats(text, value):
    # kubectl quotes any string go-yaml would read otherwise: a plain 1e+09 in a snapshot is a number
    assert list(yaml_docs(f"a: {text}\nb: '{text}'\n")) == [{"a": value, "b": text}]
    assert list(yaml_docs(f"a: {text}  # comment\n")) == [{"a": value}]


def test_running_with_real_pipes_exported_bundle():
    p = subprocess.run(
        [sys.executable, "-m", "kschedcli", "explain", "-", "-c", CLUSTER],
        input=Path(PENDING).read_bytes(),
        capture_output=True,
        check=False,
    )
    assert p.returncode == 1, p.stderr
    assert b"Needs preemption" in p.stdout


# ---- item 4: a bound pod given as input is scheduled as if created again

RUNNING = str(EXPORTED / "web-running.yaml")


def test_running_pod_is_explained_as_if_created_again():
    r = invoke("explain", RUNNING, "-c", CLUSTER, "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["input"] == {
        "unbound": {"nodeName": "ip-10-0-1-17", "nominatedNodeName": None, "removedFromSnapshot": True}
    }
    # both nodes pass NodeName (no nodeName any more): the pod is scored, not pinned
    assert doc["feasibleNodes"] == ["ip-10-0-1-17", "ip-10-0-2-41"]
    assert doc["filters"]["ip-10-0-2-41"]["plugins"]["NodeName"]["code"] == "Success"
    assert r.stderr == (
        f"ksched: {RUNNING}: Pod shop/web-6f7c9d8b4-q7x2m is bound to ip-10-0-1-17: explained as if created "
        "again now (spec.nodeName and status dropped; the pod is on ip-10-0-1-17, taken out of the snapshot); "
        "--as-bound takes it as it is\n"
    )


def test_running_pod_is_not_counted_twice():
    # the node's free cpu is what it has without the pod: 3920m allocatable, the batch pod on the
    # other node; on ip-10-0-1-17 nothing else runs, so the pod's 1 cpu must not be taken twice
    unbound = json.loads(invoke("explain", RUNNING, "-c", CLUSTER, "-o", "json").stdout)
    scores = unbound["scores"]["ip-10-0-1-17"]["plugins"]
    # NodeResourcesFit's LeastAllocated score with the pod alone on the node: (3920-1000)/3920 cpu and
    # (15350960Ki-2Gi)/15350960Ki memory, each *100, averaged
    cpu = (3920 - 1000) * 100 // 3920
    mem = (15350960 * 1024 - 2 * 1024**3) * 100 // (15350960 * 1024)
    assert scores["NodeResourcesFit"]["raw"] == (cpu + mem) // 2


def test_as_bound_keeps_the_literal_reading():
    r = invoke("explain", RUNNING, "-c", CLUSTER, "-o", "json", "--as-bound")
    doc = json.loads(r.stdout)
    assert "input" not in doc
    assert doc["feasibleNodes"] == ["ip-10-0-1-17"]
    assert doc["filters"]["ip-10-0-2-41"]["firstFailure"]["plugin"] == "NodeName"
    assert r.stderr == ""


def test_bound_pod_not_in_the_snapshot_matched_by_uid(tmp_path):
    # renamed but the same uid: still the snapshot's pod
    f = tmp_path / "pod.yaml"
    f.write_text(Path(RUNNING).read_text().replace("name: web-6f7c9d8b4-q7x2m", "name: web-renamed"))
    doc = json.loads(invoke("explain", str(f), "-c", CLUSTER, "-o", "json").stdout)
    assert doc["input"]["unbound"]["removedFromSnapshot"] is True
    other = tmp_path / "other.yaml"
    other.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: elsewhere, namespace: shop}\nspec:\n  nodeName: ip-10-0-2-41\n"
        "  containers: [{name: c, image: i}]\nstatus:\n  nominatedNodeName: ip-10-0-2-41\n"
    )
    r = invoke("explain", str(other), "-c", CLUSTER, "-o", "json")
    doc = json.loads(r.stdout)
    assert doc["input"]["unbound"] == {
        "nodeName": "ip-10-0-2-41",
        "nominatedNodeName": "ip-10-0-2-41",
        "removedFromSnapshot": False,
    }
    assert "the pod is not in the snapshot" in r.stderr


def test_running_pod_through_kubectl_pipe():
    # `kubectl get pod X -o yaml | ksched explain -`
    p = subprocess.run(
        [sys.executable, "-m", "kschedcli", "explain", "-", "-c", CLUSTER, "-o", "json"],
        input=Path(RUNNING).read_bytes(),
        capture_output=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["input"]["unbound"]["removedFromSnapshot"] is True
    assert b"explained as if created again now" in p.stderr


def test_json_with_input_validates_against_the_schema():
    import jsonschema

    from kschedcli.cli.app import app as _app  # noqa: F401 -- the schema file ships beside the package

    schema = json.loads((ROOT / "kschedcli" / "schemas" / "result.schema.json").read_text())
    doc = json.loads(invoke("explain", RUNNING, "-c", CLUSTER, "-o", "json").stdout)
    jsonschema.validate(doc, schema)


def test_integral_floats_in_a_written_workload(tmp_path):
    f = tmp_path / "deploy.yaml"
    f.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 3.0\n"
        "  selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    spec:\n"
        "      terminationGracePeriodSeconds: 3e1\n"
        "      containers: [{name: c, image: i, resources: {requests: {cpu: 100m}}}]\n"
    )
    r = invoke("schedule", str(f), "-c", SMALL, "-o", "json")
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)["results"]) == 3


def test_preempt_reads_a_running_pod_the_same_way():
    r = invoke("preempt", RUNNING, "-c", CLUSTER, "-o", "json")
    assert json.loads(r.stdout)["input"]["unbound"]["removedFromSnapshot"] is True
    literal = invoke("preempt", RUNNING, "-c", CLUSTER, "-o", "json", "--as-bound")
    assert "input" not in json.loads(literal.stdout)


def test_schedule_reads_a_running_pod_as_explain_does():
    # the same pod, the same answer: scheduled as if created again, not pinned by its old nodeName
    explained = json.loads(invoke("explain", RUNNING, "-c", CLUSTER, "-o", "json").stdout)
    r = invoke("schedule", RUNNING, "-c", CLUSTER, "-o", "json")
    assert r.exit_code == 0, r.output
    (res,) = json.loads(r.stdout)["results"]
    assert res["input"] == explained["input"]
    assert res["feasibleNodeCount"] == 2 and res["selectedNode"] == explained["selectedNode"]
    assert res["selectedScore"] == explained["selectedScore"]
    assert r.stderr == (
        f"ksched: {RUNNING}: Pod shop/web-6f7c9d8b4-q7x2m is bound to ip-10-0-1-17: scheduled as if created "
        "again now (spec.nodeName and status dropped; the pod is on ip-10-0-1-17, taken out of the snapshot); "
        "--as-bound takes it as it is\n"
    )
    literal = invoke("schedule", RUNNING, "-c", CLUSTER, "-o", "json", "--as-bound")
    (res,) = json.loads(literal.stdout)["results"]
    assert "input" not in res and res["feasibleNodeCount"] == 1 and literal.stderr == ""


def test_schedule_of_several_running_pods_says_so_in_one_line(tmp_path):
    running = Path(RUNNING).read_text()
    other = running.replace("name: web-6f7c9d8b4-q7x2m", "name: web-other").replace(
        "uid: 7e3b2a1c-9d8f-4e6a-b5c4-d3e2f1a0b9c8", "uid: 00000000-0000-0000-0000-000000000001"
    )
    f = tmp_path / "pods.yaml"
    f.write_text(running + "\n---\n" + other)
    r = invoke("schedule", str(f), "-c", CLUSTER, "-o", "json", "--order", "file")
    assert r.exit_code == 0, r.output
    docs = json.loads(r.stdout)["results"]
    assert [d["input"]["unbound"]["removedFromSnapshot"] for d in docs] == [True, False]
    assert r.stderr == (
        f"ksched: {f}: 2 Pods are bound (spec.nodeName set; the first, shop/web-6f7c9d8b4-q7x2m, to "
        "ip-10-0-1-17): scheduled as if created again now (spec.nodeName and status dropped; 1 of them taken "
        "out of the snapshot); --as-bound takes them as they are\n"
    )


def test_schedule_output_with_input_validates_against_the_schema():
    import jsonschema

    schema = json.loads((ROOT / "kschedcli" / "schemas" / "result.schema.json").read_text())
    for detail in ("compact", "full"):
        doc = json.loads(invoke("schedule", RUNNING, "-c", CLUSTER, "-o", "json", "--detail", detail).stdout)
        assert doc["results"][0]["input"]["unbound"]["nodeName"] == "ip-10-0-1-17"
        jsonschema.validate(doc, schema)


def test_capacity_of_a_running_pod_counts_new_copies_beside_it():
    # the running pod stays where it runs; its copies are new pods that any node may take (pinned
    # by the export's nodeName, every copy went to ip-10-0-1-17 and none to ip-10-0-2-41)
    r = invoke("capacity", RUNNING, "-c", CLUSTER, "-o", "json")
    assert r.exit_code == 0, r.output
    (t,) = json.loads(r.stdout)["perTemplate"]
    assert set(t["placements"]) == {"ip-10-0-1-17", "ip-10-0-2-41"}
    assert r.stderr == (
        f"ksched: {RUNNING}: Pod shop/web-6f7c9d8b4-q7x2m is bound to ip-10-0-1-17: its copies are new pods "
        "(spec.nodeName, status and metadata.uid dropped); the pod itself stays in the snapshot\n"
    )


def test_capacity_copies_of_an_exported_pod_do_not_share_its_uid():
    from kschedcli.inputs.cluster import load_cluster
    from kschedcli.whatif.capacity import copies, read_templates

    (template,) = read_templates([RUNNING])
    made = list(copies(template, load_cluster([CLUSTER]), limit=3))
    assert len({p.uid for p in made}) == 3
    assert "7e3b2a1c-9d8f-4e6a-b5c4-d3e2f1a0b9c8" not in {p.uid for p in made}
    assert all(p.node_name in (None, "") for p in made)


def test_a_snapshot_without_nodes_is_answered_with_a_warning(tmp_path):
    # a `kubectl get pods -o yaml` export given as the snapshot: kube-scheduler's answer, and why
    pods = tmp_path / "pods.yaml"
    pods.write_text(Path(RUNNING).read_text())
    r = invoke("explain", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", str(pods))
    assert r.exit_code == 1 and "no nodes available to schedule pods" in r.stdout
    assert r.stderr == (
        f"ksched: warning: no Node in the snapshot (--cluster {pods}): every pod is unschedulable "
        "(`kubectl get nodes,pods -A -o yaml` exports both; --add-node adds one)\n"
    )
    # with the snapshot's nodes, no warning
    assert invoke("explain", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", CLUSTER).stderr == ""


def test_diff_places_a_running_pod_as_if_created_again_in_both_worlds():
    # world B cordons the pod's node: created again, the pod moves to the other node; read
    # literally (--as-bound), NodeName pins it to the cordoned node and it fits nowhere
    args = ("diff", RUNNING, "-c", CLUSTER, "--cordon", "ip-10-0-1-17", "-o", "json")
    r = invoke(*args)
    assert r.exit_code == 1, r.output
    (change,) = json.loads(r.stdout)["diff"]["changes"]
    assert change["a"] == {"verdict": "schedulable", "node": "ip-10-0-1-17"}
    assert change["b"] == {"verdict": "schedulable", "node": "ip-10-0-2-41"}
    assert r.stderr == (
        f"ksched: {RUNNING}: Pod shop/web-6f7c9d8b4-q7x2m is bound to ip-10-0-1-17: placed in each world as if "
        "created again now (spec.nodeName and status dropped; the running pod taken out of each snapshot that holds "
        "it); "
        "--as-bound takes it as it is\n"
    )
    literal = invoke(*args, "--as-bound")
    (change,) = json.loads(literal.stdout)["diff"]["changes"]
    assert change["b"]["verdict"] == "unschedulable" and literal.stderr == ""


def test_pods_bound_to_nodes_the_snapshot_lacks_are_said_once(tmp_path):
    # a pods export of another cluster beside this one's nodes: the pods count on no node, as in
    # kube-scheduler's cache, and one warning says how many
    ghosts = tmp_path / "pods.yaml"
    ghosts.write_text(
        "\n---\n".join(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: g{i}, namespace: other}}\n"
            f"spec:\n  nodeName: elsewhere-{i}\n  containers: [{{name: c, image: i}}]\nstatus: {{phase: Running}}\n"
            for i in range(3)
        )
    )
    web = str(ROOT / "fixtures" / "pods" / "web.yaml")
    r = invoke("explain", web, "-c", CLUSTER, "-c", str(ghosts), "-o", "json")
    assert r.exit_code == 0, r.output
    assert r.stderr == (
        "ksched: warning: 3 bound pods are on nodes the snapshot does not hold (the first, other/g0, on "
        "elsewhere-0): they count on no node, as in kube-scheduler's cache; were the nodes and the pods "
        "exported from the same cluster?\n"
    )
    # the answer is the snapshot's without them
    assert (
        json.loads(r.stdout)["selectedNode"]
        == json.loads(invoke("explain", web, "-c", CLUSTER, "-o", "json").stdout)["selectedNode"]
    )


def test_a_directory_as_the_snapshot_is_its_files_as_kubectl_apply_f_takes_them(tmp_path):
    import yaml

    docs = [d for d in yaml.safe_load_all(Path(SMALL).read_text()) if d]
    snap = tmp_path / "snap"
    (snap / "sub").mkdir(parents=True)
    (snap / "nodes.yaml").write_text(yaml.safe_dump_all([d for d in docs if d["kind"] == "Node"]))
    (snap / "pods.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [d for d in docs if d["kind"] != "Node"]})
    )
    (snap / "notes.txt").write_text("not a snapshot")  # other extensions are not read
    (snap / "sub" / "broken.yaml").write_text("a: [")  # nor are subdirectories
    web = str(ROOT / "fixtures" / "pods" / "web.yaml")
    expected = invoke("explain", web, "-c", SMALL, "-o", "json")
    got = invoke("explain", web, "-c", str(snap), "-o", "json")
    assert got.exit_code == expected.exit_code == 0, got.output
    assert json.loads(got.stdout)["scores"] == json.loads(expected.stdout)["scores"]
    empty = tmp_path / "empty"
    empty.mkdir()
    r = invoke("explain", web, "-c", str(empty))
    assert r.exit_code == 2
    assert r.stderr == (
        f"ksched: {empty}: --cluster: a directory with no .json, .yaml or .yml file in it "
        "(its subdirectories are not read)\n"
    )
