"""Workloads become the pods their controllers would create (kschedcli.workloads.expansion), and `explain` /
`schedule` read them: a chart's rendered output (fixtures/chart/shop.yaml) and small hand-built ones."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources as ilres
from pathlib import Path

import jsonschema
import pytest
from builders import node, pod
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.errors import InputError
from kschedcli.inputs.cluster import Cluster, load_cluster
from kschedcli.plugins.podtopologyspread.common import default_selector
from kschedcli.workloads.expansion import (
    daemon_tolerations,
    fnv32a,
    generated_name,
    pin_to_node,
    pods_for_workloads,
    safe_encode,
    template_hash,
)

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
CHART = str(ROOT / "fixtures" / "chart" / "shop.yaml")
STORAGE = str(ROOT / "fixtures" / "chart" / "storage.yaml")
SCHEMA = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"}, input=input)


def cluster_of(nodes, pods=(), objects=()):
    c = Cluster()
    c.nodes = list(nodes)
    c.pods = list(pods)
    for o in objects:
        meta = o["metadata"]
        c.objects[o["kind"]][(meta.get("namespace", ""), meta["name"])] = o
    return c


def template(labels=None, cpu="100m", **spec):
    return {
        "metadata": {"labels": labels or {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}], **spec},
    }


def expand(objs, cluster, **kw):
    return pods_for_workloads([(o, "in.yaml", f"document {i + 1}") for i, o in enumerate(objs)], cluster, **kw)


def deployment(name="web", replicas=3, ns="shop", tpl=None, **extra):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": tpl or template(),
            **extra,
        },
    }


# -- the controllers' naming ---------------------------------------------------------------------


def test_safe_encode_and_fnv_are_the_go_functions():
    # FNV-32a's published test vectors; SafeEncodeString maps each byte onto the 27-character alphabet
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968
    assert safe_encode("0123456789") == "456789bcdf"  # 48 % 27 = 21 -> "4", 54 % 27 = 0 -> "b"


def test_template_hash_depends_on_template_and_collision_count():
    t = template()
    h = template_hash(t)
    assert h == template_hash(json.loads(json.dumps(t)))  # stable for equal templates
    assert h != template_hash(template(cpu="200m"))
    assert h != template_hash(t, 1)
    assert set(h) <= set("bcdfghjklmnpqrstvwxz2456789") and 1 <= len(h) <= 10


def test_generated_names_are_deterministic_and_unique():
    a = generated_name("web-abc-", "Deployment/shop/web", 0)
    assert a == generated_name("web-abc-", "Deployment/shop/web", 0)
    assert a != generated_name("web-abc-", "Deployment/shop/web", 1)
    assert a.startswith("web-abc-") and len(a) == len("web-abc-") + 5
    assert generated_name("x-", "id", 0, {f"ns/{a}"}, "ns") == generated_name("x-", "id", 0)  # no clash: same
    taken = {"ns/" + generated_name("x-", "id", 0)}
    assert generated_name("x-", "id", 0, taken, "ns") != generated_name("x-", "id", 0)
    long = generated_name("a" * 70, "id", 0)
    assert len(long) == 63 and long.startswith("a" * 58)


# -- Deployment, ReplicaSet, ReplicationController -----------------------------------------------


def test_deployment_pods_replicaset_and_default_spreading():
    c = cluster_of([node("n1"), node("n2")])
    ex = expand([deployment()], c)
    (w,) = ex.workloads
    assert (w.desired, w.existing, len(w.pods)) == (3, 0, 3)
    h = w.pods[0].labels["pod-template-hash"]
    rs_name = f"web-{h}"
    assert all(p.name.startswith(rs_name + "-") and p.labels == {"app": "web", "pod-template-hash": h} for p in w.pods)
    ref = w.pods[0].controller_ref()
    assert (ref["kind"], ref["name"], ref["apiVersion"]) == ("ReplicaSet", rs_name, "apps/v1")
    rs = c.get("ReplicaSet", "shop", rs_name)
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert c.get("Deployment", "shop", "web") is not None
    # kube-scheduler's system default spreading reads the ReplicaSet's selector through the owner
    selector, _ = default_selector(w.pods[0], c)
    assert selector.matches({"app": "web", "pod-template-hash": h})
    assert not selector.matches({"app": "web"})
    assert ex.workload_of(w.pods[1]) is w


def test_deployment_in_the_snapshot_reuses_its_replicaset_and_adds_the_missing_pods():
    tpl = template()
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-5f7c9",
            "namespace": "shop",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}],
        },
        "spec": {
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": "5f7c9"}},
            "template": {**tpl, "metadata": {"labels": {"app": "web", "pod-template-hash": "5f7c9"}}},
        },
    }
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5f7c9", "controller": True}]
    running = [pod(f"web-5f7c9-{i}", ns="shop", node_name="n1", labels={"app": "web"}) for i in range(2)]
    for p in running:
        p.owner_refs = owner
    c = cluster_of([node("n1")], running, [rs])
    (w,) = expand([deployment(replicas=3, tpl=tpl)], c).workloads
    assert (w.existing, len(w.pods)) == (2, 1)
    assert w.pods[0].name.startswith("web-5f7c9-") and w.pods[0].labels["pod-template-hash"] == "5f7c9"
    # a changed template is a new ReplicaSet: every replica is new
    changed = deployment(replicas=3, tpl=template(cpu="300m"))
    (w2,) = expand([changed], cluster_of([node("n1")], running, [rs])).workloads
    assert (w2.existing, len(w2.pods)) == (0, 3) and w2.pods[0].labels["pod-template-hash"] != "5f7c9"
    # --replicas N: exactly N new pods
    (w3,) = expand([deployment(replicas=3, tpl=tpl)], cluster_of([node("n1")], running, [rs]), replicas=5).workloads
    assert len(w3.pods) == 5


# a chart's Deployment as rendered (not defaulted), and its ReplicaSet as `kubectl get rs -o yaml`
# prints it from a cluster: defaulted by the API server, quantities in canonical form
RENDERED_DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout, namespace: shop}
spec:
  replicas: 4
  selector: {matchLabels: {app: checkout}}
  template:
    metadata:
      labels: {app: checkout}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      serviceAccountName: checkout
      hostNetwork: false
      containers:
      - name: app
        image: registry.example/checkout:2.4.1
        ports: [{name: http, containerPort: 8080}]
        env:
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        readinessProbe:
          httpGet: {port: http}
        resources:
          requests: {cpu: "0.5", memory: 512Mi}
          limits: {memory: "1073741824"}
      - name: sidecar
        image: registry.example/envoy
      volumes:
      - name: config
        configMap: {name: checkout}
      - name: scratch
"""
STORED_REPLICASET = """
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: checkout-6d8f7b9c4d
  namespace: shop
  creationTimestamp: "2026-11-02T10:00:00Z"
  labels: {app: checkout, pod-template-hash: 6d8f7b9c4d}
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: checkout, controller: true, blockOwnerDeletion: true}
spec:
  replicas: 4
  selector: {matchLabels: {app: checkout, pod-template-hash: 6d8f7b9c4d}}
  template:
    metadata:
      creationTimestamp: null
      labels: {app: checkout, pod-template-hash: 6d8f7b9c4d}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      containers:
      - name: app
        image: registry.example/checkout:2.4.1
        imagePullPolicy: IfNotPresent
        ports: [{name: http, containerPort: 8080, protocol: TCP}]
        env:
        - name: POD_IP
          valueFrom: {fieldRef: {apiVersion: v1, fieldPath: status.podIP}}
        readinessProbe:
          httpGet: {path: /, port: http, scheme: HTTP}
          timeoutSeconds: 1
          periodSeconds: 10
          successThreshold: 1
          failureThreshold: 3
        resources:
          requests: {cpu: 500m, memory: 512Mi}
          limits: {memory: 1Gi}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      - name: sidecar
        image: registry.example/envoy
        imagePullPolicy: Always
        resources: {}
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      serviceAccount: checkout
      serviceAccountName: checkout
      terminationGracePeriodSeconds: 30
      volumes:
      - name: config
        configMap: {name: checkout, defaultMode: 420}
      - name: scratch
        emptyDir: {}
"""


def _checkout(deploy_edit=None):
    import yaml

    deploy = yaml.safe_load(RENDERED_DEPLOYMENT)
    if deploy_edit:
        deploy_edit(deploy["spec"]["template"]["spec"])
    rs = yaml.safe_load(STORED_REPLICASET)
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "checkout-6d8f7b9c4d", "controller": True}]
    running = [pod(f"checkout-6d8f7b9c4d-{i}", ns="shop", node_name="n1", labels={"app": "checkout"}) for i in range(3)]
    for p in running:
        p.owner_refs = owner
    (w,) = expand([deploy], cluster_of([node("n1")], running, [rs])).workloads
    return w


def test_a_rendered_deployment_reuses_the_replicaset_the_api_server_stored_for_it():
    # the controller's FindNewReplicaSet compares defaulted templates: the rendered one, defaulted,
    # equals the stored one (imagePullPolicy by tag, probe and port defaults, serviceAccount, 0.5 = 500m,
    # 1073741824 = 1Gi, a volume without a source is an emptyDir, hostNetwork: false is Go's zero value)
    w = _checkout()
    assert (w.existing, len(w.pods)) == (3, 1)
    assert w.pods[0].name.startswith("checkout-6d8f7b9c4d-") and w.pods[0].labels["pod-template-hash"] == "6d8f7b9c4d"


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s.update(automountServiceAccountToken=False),  # a pointer: false is not absent
        lambda s: s["containers"][0]["resources"]["requests"].update(cpu="501m"),
        lambda s: s["containers"][1].update(imagePullPolicy="IfNotPresent"),  # envoy (no tag) defaults to Always
        lambda s: s["volumes"][0]["configMap"].update(defaultMode=0o600),
    ],
)
def test_a_template_that_differs_once_defaulted_is_a_new_replicaset(edit):
    w = _checkout(edit)
    assert (w.existing, len(w.pods)) == (0, 4) and w.pods[0].labels["pod-template-hash"] != "6d8f7b9c4d"


def test_replicaset_and_replication_controller():
    rc = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "legacy"},
        "spec": {"replicas": 2, "template": template({"app": "legacy"})},
    }
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "plain", "namespace": "a"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()},
    }
    c = cluster_of([node("n1")])
    w_rc, w_rs = expand([rc, rs], c).workloads
    assert [p.namespace for p in w_rc.pods] == ["default", "default"] and len(w_rs.pods) == 1  # replicas default 1
    assert w_rc.pods[0].controller_ref()["apiVersion"] == "v1"
    # the RC's selector defaults to its template's labels, and default spreading reads it
    assert c.get("ReplicationController", "default", "legacy")["spec"]["selector"] == {"app": "legacy"}
    sel, _ = default_selector(w_rc.pods[0], c)
    assert sel.matches({"app": "legacy"}) and not sel.matches({"app": "other"})


# -- StatefulSet ---------------------------------------------------------------------------------


def statefulset(replicas=3, claims=True, **extra):
    spec = {
        "serviceName": "db",
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "db"}},
        "template": template(
            {"app": "db"}, volumes=[{"name": "data", "emptyDir": {}}, {"name": "conf", "configMap": {"name": "c"}}]
        ),
        **extra,
    }
    if claims:
        spec["volumeClaimTemplates"] = [
            {
                "metadata": {"name": "data", "labels": {"tier": "db"}},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ]
    meta = {"name": "db", "namespace": "shop"}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta, "spec": spec}


def test_statefulset_pods_labels_and_claims():
    existing_claim = {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data-db-1", "namespace": "shop"},
        "spec": {"volumeName": "pv-1"},
        "status": {"phase": "Bound"},
    }
    c = cluster_of([node("n1")], objects=[existing_claim])
    (w,) = expand([statefulset()], c).workloads
    assert [p.name for p in w.pods] == ["db-0", "db-1", "db-2"]
    p1 = w.pods[1]
    assert p1.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert p1.labels["apps.kubernetes.io/pod-index"] == "1"
    assert p1.labels["controller-revision-hash"].startswith("db-")
    assert p1.raw["spec"]["hostname"] == "db-1" and p1.raw["spec"]["subdomain"] == "db"
    # the claim replaces the template's volume of the same name; the others are kept
    assert p1.volumes == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}},
        {"name": "conf", "configMap": {"name": "c"}},
    ]
    created = c.get("PersistentVolumeClaim", "shop", "data-db-0")
    assert created["metadata"]["labels"] == {"tier": "db", "app": "db"} and created["spec"]["storageClassName"] == "gp3"
    assert c.get("PersistentVolumeClaim", "shop", "data-db-1") is existing_claim  # the snapshot's is kept
    assert p1.controller_ref()["kind"] == "StatefulSet" and c.get("StatefulSet", "shop", "db") is not None


def test_statefulset_in_the_snapshot_creates_the_missing_ordinals():
    running = pod("db-0", ns="shop", node_name="n1", labels={"app": "db"})
    running.owner_refs = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": True}]
    c = cluster_of([node("n1")], [running])
    (w,) = expand([statefulset(claims=False)], c).workloads
    assert w.existing == 1 and [p.name for p in w.pods] == ["db-1", "db-2"]
    (w,) = expand([statefulset(claims=False, ordinals={"start": 5})], cluster_of([node("n1")])).workloads
    assert [p.name for p in w.pods] == ["db-5", "db-6", "db-7"]


# -- DaemonSet -----------------------------------------------------------------------------------


def daemonset(**spec):
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template({"app": "agent"}, **spec)},
    }


def test_daemon_tolerations_are_the_controllers():
    added = daemon_tolerations(
        [
            {
                "key": "node.kubernetes.io/unschedulable",
                "operator": "Exists",
                "effect": "NoSchedule",
                "tolerationSeconds": 5,
            },
            {"key": "x"},
        ],
        False,
    )
    assert added[0] == {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    assert added[1] == {"key": "x"}
    assert [t["key"] for t in added[2:]] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
    ]
    assert daemon_tolerations([], True)[-1]["key"] == "node.kubernetes.io/network-unavailable"


def test_pin_replaces_only_the_required_node_affinity():
    aff = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}],
        },
        "podAntiAffinity": {"x": 1},
    }
    pinned = pin_to_node(aff, "n7")
    assert pinned["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]}]
    }
    preferred = pinned["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred == [{"weight": 1, "preference": {}}]
    assert pinned["podAntiAffinity"] == {"x": 1}
    assert aff["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0].get(
        "matchExpressions"
    )  # the input is not modified


def test_daemonset_runs_where_the_controller_would():
    nodes = [
        node("a", labels={"pool": "a"}),
        node(
            "b",
            labels={"pool": "a"},
            unschedulable=True,
            taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
        ),
        node("c", labels={"pool": "a"}, taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
        node("d", labels={"pool": "b"}),
        node("e", labels={"pool": "a"}, taints=[{"key": "soft", "effect": "PreferNoSchedule"}]),
    ]
    running = pod("agent-old", ns="kube-system", node_name="e")
    running.owner_refs = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": True}]
    c = cluster_of(nodes, [running])
    (w,) = expand([daemonset(nodeSelector={"pool": "a"})], c).workloads
    by_node = {d.node: d for d in w.daemon_nodes}
    assert [d.node for d in w.daemon_nodes if d.eligible] == ["a", "b", "e"]  # cordoned b tolerated
    assert by_node["c"].reason == "untolerated taint {gpu: yes}"
    assert by_node["d"].reason == "node(s) didn't match Pod's node affinity/selector"
    assert by_node["e"].existing and not by_node["e"].pod  # already runs there
    assert len(w.pods) == 2 and w.existing == 1
    p = w.pods[1]
    assert by_node["b"].pod == p.key
    assert p.required_node_affinity.matches({}, "b") and not p.required_node_affinity.matches({}, "a")
    assert p.labels["pod-template-generation"] == "1" and "controller-revision-hash" in p.labels
    # scheduled: each pod lands on its node, the cordoned one included
    from builders import scheduler

    sched = scheduler(nodes, [running])
    sched.cluster = c
    results = sched.run_sequence(w.pods)
    assert [r.selected_node for r in results] == ["a", "b"]


def test_daemonset_summary_says_per_node_whether_it_fits():
    nodes = [node("a", cpu="1"), node("b", cpu="1")]
    full = pod("hog", node_name="b", requests={"cpu": "950m"})
    c = cluster_of(nodes, [full])
    ex = expand([daemonset()], c)
    from builders import scheduler

    from kschedcli.workloads.expansion import summarize

    sched = scheduler(nodes, [full])
    results = sched.run_sequence(ex.pods)
    (doc,) = summarize(ex, results)
    fits = {n["node"]: (n["fits"], n["message"]) for n in doc["nodes"]}
    assert fits["a"] == (True, None)
    assert fits["b"][0] is False and "Insufficient cpu" in fits["b"][1]
    assert [n["failure"] for n in doc["nodes"]] == [None, None]  # not annotated: the views did not run
    assert doc["results"] == {"schedulable": 1, "preemption": 0, "unschedulable": 1, "error": 0}


# -- Job, CronJob --------------------------------------------------------------------------------


def job(name="batch", **spec):
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "jobs", "uid": "u-1"},
        "spec": {"template": template({"app": "batch"}, restartPolicy="Never"), **spec},
    }


@pytest.mark.parametrize(
    "spec,status,count",
    [
        ({}, {}, 1),
        ({"parallelism": 4}, {}, 4),
        ({"parallelism": 4, "completions": 3}, {}, 3),
        ({"parallelism": 4, "completions": 6}, {"succeeded": 4}, 2),
        ({"parallelism": 2, "suspend": True}, {}, 0),
    ],
)
def test_job_active_pods(spec, status, count):
    obj = job(**spec)
    obj["status"] = status
    (w,) = expand([obj], cluster_of([node("n")])).workloads
    assert len(w.pods) == count
    for p in w.pods:
        assert p.labels["batch.kubernetes.io/job-name"] == "batch" and p.labels["controller-uid"] == "u-1"
        assert p.name.startswith("batch-") and p.controller_ref()["kind"] == "Job"


def test_indexed_job_and_cronjob_run():
    (w,) = expand([job(parallelism=3, completions=3, completionMode="Indexed")], cluster_of([node("n")])).workloads
    assert [p.annotations["batch.kubernetes.io/job-completion-index"] for p in w.pods] == ["0", "1", "2"]
    assert w.pods[2].name.startswith("batch-2-") and w.pods[2].raw["spec"]["hostname"] == "batch-2"
    cj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "jobs", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "schedule": "0 2 * * *",
            "jobTemplate": {"spec": {"parallelism": 2, "template": template(restartPolicy="Never")}},
        },
    }
    c = cluster_of([node("n")])
    (w,) = expand([cj], c).workloads
    minutes = 1767225600 // 60
    assert len(w.pods) == 2 and all(p.name.startswith(f"nightly-{minutes}-") for p in w.pods)
    assert c.get("Job", "jobs", f"nightly-{minutes}")["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert w.note == f"one run: the Job nightly-{minutes}, named from metadata.creationTimestamp 2026-01-01T00:00:00Z"
    # the last scheduled run wins over the creation time; a time without a zone is UTC
    ran = {**cj, "status": {"lastScheduleTime": "2026-03-04T02:00:00"}}
    (w,) = expand([ran], cluster_of([node("n")])).workloads
    assert w.note.endswith("named from status.lastScheduleTime 2026-03-04T02:00:00Z")
    assert w.pods[0].name.startswith(f"nightly-{1772589600 // 60}-")
    suspended = {**cj, "spec": {**cj["spec"], "suspend": True}}
    (w,) = expand([suspended], cluster_of([node("n")])).workloads
    assert w.pods == [] and "suspended" in w.note


# -- input handling ------------------------------------------------------------------------------


def test_chart_output_expands_and_ignores_what_makes_no_pod():
    c = load_cluster([PROD, STORAGE])
    from kschedcli.workloads.expansion import load_workloads

    ex = load_workloads(CHART, c)
    assert [w.key for w in ex.workloads] == [
        "Deployment shop/shop-storefront",
        "StatefulSet shop/shop-redis",
        "DaemonSet shop/shop-node-agent",
        "Job shop/shop-db-migrate",
        "CronJob shop/shop-nightly-report",
    ]
    assert dict(ex.ignored) == {
        "ServiceAccount": 1,
        "Secret": 1,
        "ConfigMap": 1,
        "HorizontalPodAutoscaler": 1,
        "Ingress": 1,
    }
    assert c.get("Service", "shop", "shop-storefront") is not None  # the chart's Service joins the cluster
    assert c.get("PodDisruptionBudget", "shop", "shop-storefront") is not None
    assert len(ex.pods) == 3 + 3 + 14 + 1 + 2


def test_bad_workload_fields_are_located():
    with pytest.raises(InputError) as e:
        expand([deployment(replicas="three")], cluster_of([node("n")]))
    assert str(e.value) == 'in.yaml: document 1: spec.replicas: expected an integer, got string "three"'
    bad_tpl = template()
    bad_tpl["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    with pytest.raises(InputError) as e:
        expand([deployment(tpl=bad_tpl)], cluster_of([node("n")]))
    assert str(e.value).startswith("in.yaml: document 1: spec.template.spec.containers[0].resources.requests.cpu")


def test_cli_explain_of_a_workload_and_its_replicas(tmp_path):
    f = tmp_path / "deploy.yaml"
    f.write_text(json.dumps(deployment(ns="default", replicas=3)))
    r = run("explain", str(f), "-c", SMALL, "-o", "json")
    assert r.exit_code == 0, r.output
    first = json.loads(r.stdout)
    jsonschema.validate(first, SCHEMA)
    assert first["pod"].startswith("default/web-")
    r2 = run("explain", str(f), "-c", SMALL, "-o", "json", "--replica", "2")
    third = json.loads(r2.stdout)
    assert third["pod"] != first["pod"]
    # the third replica is explained after the first two are bound: it sees them
    sched = json.loads(run("schedule", str(f), "-c", SMALL, "-o", "json", "--order", "file", "--detail", "full").stdout)
    assert sched["results"][2]["pod"] == third["pod"]
    assert sched["results"][2]["selectedNode"] == third["selectedNode"]
    assert sched["results"][2]["scores"] == third["scores"]
    r3 = run("explain", str(f), "-c", SMALL, "--replica", "3")
    assert r3.exit_code == 2 and "--replica: Deployment default/web creates 3 new pod(s): pick 0 to 2" in r3.stderr


def test_cli_rejects_several_workloads_for_explain_and_nodes_in_a_pod_file(tmp_path):
    f = tmp_path / "two.yaml"
    f.write_text(json.dumps(deployment()) + "\n---\n" + json.dumps(deployment(name="api")))
    r = run("explain", str(f), "-c", SMALL)
    assert r.exit_code == 2 and "expected one Pod or workload, found 2" in r.stderr
    n = tmp_path / "node.yaml"
    n.write_text("kind: Node\nmetadata: {name: x}\n")
    r = run("schedule", str(n), "-c", SMALL)
    assert r.exit_code == 2 and "expected a Pod or a workload, found Node" in r.stderr
    cm = tmp_path / "cm.yaml"
    cm.write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    r = run("schedule", str(cm), "-c", SMALL)
    assert r.exit_code == 2 and r.stderr == f"ksched: {cm}: no Pod or workload found\n"


def test_cli_schedule_of_the_chart_groups_by_workload():
    r = run("schedule", CHART, "-c", PROD, "-c", STORAGE, "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert len(doc["results"]) == 23
    by_kind = {w["kind"]: w for w in doc["workloads"]}
    assert by_kind["DaemonSet"]["results"]["schedulable"] == 14
    nodes = {n["node"]: n for n in by_kind["DaemonSet"]["nodes"]}
    assert nodes["gpu-a-01"]["eligible"] is False and nodes["gpu-a-01"]["fits"] is None
    assert nodes["general-c-05"]["fits"] is True  # cordoned: the daemon pod tolerates it
    # the storefront's three replicas spread over the three zones (matchLabelKeys: pod-template-hash)
    placed = {x["pod"]: x["selectedNode"] for x in doc["results"]}
    zones = {placed[p].split("-")[1] for p in by_kind["Deployment"]["pods"]}
    assert zones == {"a", "b", "c"}
    # YAML carries the same document; the table has the workload section
    assert "Workloads" in run("schedule", CHART, "-c", PROD, "-c", STORAGE).stdout


def test_cli_schedule_reads_a_pipe_and_is_byte_deterministic():
    text = Path(CHART).read_text()
    cmd = [sys.executable, "-m", "kschedcli", "schedule", "-", "-c", PROD, "-c", STORAGE, "-o", "json"]
    outs = [
        subprocess.run(
            cmd, input=text, capture_output=True, text=True, env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}
        )
        for seed in ("1", "2")
    ]
    assert outs[0].returncode == 0, outs[0].stderr
    assert outs[0].stdout == outs[1].stdout
    assert json.loads(outs[0].stdout)["results"][0]["pod"].startswith("shop/shop-storefront-")


def test_cli_daemonset_that_fits_nowhere_says_why_per_node(tmp_path):
    ds = daemonset()
    ds["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
    f = tmp_path / "ds.yaml"
    f.write_text(json.dumps(ds))
    for args in ((), ("--order", "file")):
        r = run("schedule", str(f), "-c", PROD, "-o", "json", *args)
        assert r.exit_code == 1
        doc = json.loads(r.stdout)
        jsonschema.validate(doc, SCHEMA)
        nodes = {n["node"]: n for n in doc["workloads"][0]["nodes"]}
        misfit = [n for n in nodes.values() if n["fits"] is False]
        assert misfit and all(n["failure"] == "NodeResourcesFit: Insufficient cpu" for n in misfit)
        assert all(n["message"].startswith("0/20 nodes are available:") for n in misfit)
    table = run("schedule", str(f), "-c", PROD).stdout
    assert "does not fit: NodeResourcesFit: Insufficient cpu" in table


def test_input_namespaces_and_pod_namespaces_are_known_to_namespace_selectors():
    c = cluster_of([node("n")])
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "web"}}}
    ex = expand([ns, deployment(ns="shop"), deployment(name="api", ns="other")], c)
    assert c.namespace_labels["shop"] == {"team": "web", "kubernetes.io/metadata.name": "shop"}
    assert c.namespace_labels["other"] == {"kubernetes.io/metadata.name": "other"}
    assert "Namespace" not in ex.ignored and c.get("Namespace", "", "shop") is ns


@pytest.mark.parametrize(
    "kind,field,extra",
    [
        ("Deployment", "replicas", "  selector: {matchLabels: {a: b}}\n"),
        ("StatefulSet", "replicas", "  serviceName: s\n  selector: {matchLabels: {a: b}}\n"),
        ("ReplicaSet", "replicas", "  selector: {matchLabels: {a: b}}\n"),
        ("Job", "parallelism", ""),
    ],
)
def test_a_mistyped_pod_count_is_refused_not_expanded(tmp_path, kind, field, extra):
    # 2000000000 replicas made pods until memory ran out; 150,000 (a cluster's most) is still taken
    api = "batch/v1" if kind == "Job" else "apps/v1"
    text = (
        f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: w}}\nspec:\n  {field}: 2000000000\n{extra}"
        "  template:\n    metadata: {labels: {a: b}}\n"
        "    spec: {restartPolicy: Never, containers: [{name: c, image: i}]}\n"
    )
    if kind != "Job":
        text = text.replace("restartPolicy: Never, ", "")
    f = tmp_path / "w.yaml"
    f.write_text(text)
    r = CliRunner().invoke(app, ["schedule", str(f), "-c", str(ROOT / "fixtures" / "small-cluster.yaml")])
    assert r.exit_code == 2 and r.stderr.strip() == (
        f"ksched: {f}: {kind} w: spec.{field}: 2,000,000,000 pods: ksched makes at most 150,000 "
        "(Kubernetes' most pods per cluster)"
    ), r.output


def test_a_workload_with_no_pod_scheduled_shows_no_tick():
    from rich.console import Console

    from kschedcli.render.terminal.workloads import _outcome

    def shown(counts):
        console = Console(width=200, no_color=True)
        with console.capture() as cap:
            console.print(_outcome(counts))
        return cap.get().strip()

    assert (
        shown({"schedulable": 0, "preemption": 0, "unschedulable": 1, "error": 0}) == "0 scheduled  ✘ 1 unschedulable"
    )
    assert shown({"schedulable": 2, "preemption": 1, "unschedulable": 0, "error": 0}) == (
        "✔ 2 scheduled  ⚠ 1 need preemption"
    )
