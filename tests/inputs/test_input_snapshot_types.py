"""Snapshot objects that no API server could have written (a wrong JSON type where ksched reads
them) and config fields of the wrong type: one line naming the file, the object and the field, exit
status 2, where these once ended in a traceback or were read silently. Found by mutating the
conformance corpus's inputs field by field."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.api.fieldtree import check_value, decodes, kind_type
from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small-cluster.yaml"
PROD = ROOT / "fixtures" / "prod-cluster.yaml"
WEB = ROOT / "fixtures" / "pods" / "web.yaml"


def _cluster_with(tmp_path: Path, *extra: dict, edit=None) -> Path:
    docs = list(yaml.safe_load_all(SMALL.read_text()))
    if edit is not None:
        edit(docs)
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all([*docs, *extra]))
    return f


def _explain(cluster: Path, *extra: str):
    return CliRunner().invoke(app, ["explain", str(WEB), "--cluster", str(cluster), *extra])


def _one_line_error(r) -> str:
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    return lines[0]


@pytest.mark.parametrize(
    "obj,where,message",
    [
        (
            {
                "kind": "Service",
                "apiVersion": "v1",
                "metadata": {"name": "s", "namespace": "shop"},
                "spec": {"selector": 5},
            },
            "(Service shop/s): spec.selector",
            "expected an object, got number 5",
        ),
        (
            {
                "kind": "PodDisruptionBudget",
                "apiVersion": "policy/v1",
                "metadata": {"name": "p", "namespace": "shop"},
                "spec": {"selector": {"matchLabels": {"app": ["web"]}}, "maxUnavailable": 1},
            },
            "(PodDisruptionBudget shop/p): spec.selector.matchLabels.app",
            "expected a string, got a list",
        ),
        (
            {
                "kind": "PersistentVolumeClaim",
                "apiVersion": "v1",
                "metadata": {"name": "c", "namespace": "shop"},
                "spec": "x",
            },
            "(PersistentVolumeClaim shop/c): spec",
            'expected an object, got string "x"',
        ),
        (
            {"kind": "PriorityClass", "apiVersion": "scheduling.k8s.io/v1", "metadata": "high", "value": 5},
            "(PriorityClass ?): metadata",
            'expected an object, got string "high"',
        ),
        (  # a kind without a field tree: its metadata still
            {"kind": "DeviceClass", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": ["gpu"]}},
            "DeviceClass",
            "metadata.name: expected a string, got a list",
        ),
    ],
)
def test_snapshot_objects_of_the_wrong_type_are_one_line(tmp_path, obj, where, message):
    cluster = _cluster_with(tmp_path, obj)
    line = _one_line_error(_explain(cluster))
    assert line.startswith(f"ksched: {cluster}: document ") and where in line and line.endswith(message), line


def test_snapshot_objects_keep_a_newer_api_servers_unknown_fields(tmp_path):
    pdb = {
        "kind": "PodDisruptionBudget",
        "apiVersion": "policy/v1",
        "metadata": {"name": "p", "namespace": "shop", "futureMeta": {"x": 1}},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1, "futureField": [1, 2]},
        "status": {"futureStatus": "x"},
    }
    r = _explain(_cluster_with(tmp_path, pdb))
    assert r.exit_code == 0, r.output


def test_node_image_names_must_be_strings_and_a_null_is_an_empty_name(tmp_path):
    def images(names):
        def edit(docs):
            docs[0]["status"]["images"] = [{"names": ["web:1"], "sizeBytes": 10}, {"names": names, "sizeBytes": 20}]

        return edit

    line = _one_line_error(_explain(_cluster_with(tmp_path, edit=images(["a", [1]]))))
    assert line.endswith("(Node node-a): status.images[1].names[1]: expected a string, got a list"), line
    r = _explain(_cluster_with(tmp_path, edit=images(["a", None])))
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(
    "text,message",
    [
        ("profiles: 1e3\n", "profiles: expected a list, got number 1000"),
        (
            "profiles:\n- schedulerName: default-scheduler\n  pluginConfig: 3.0\n",
            "profiles[0].pluginConfig: expected a list, got number 3",
        ),
        ("profiles:\n- 7\n", "profiles[0]: expected an object, got number 7"),
    ],
)
def test_config_fields_of_the_wrong_type_are_one_line(tmp_path, text, message):
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + text)
    line = _one_line_error(_explain(SMALL, "--config", str(config)))
    assert line == f"ksched: {config}: {message}", line


_VALUES = [None, "", "x", -1, 7, 2**70, 1.5, 3.0, True, [], {}, [1], {"a": 1}, {"a": "b"}, ["a"]]


def _mutations(obj, rng):
    """`obj` with one value somewhere replaced by another JSON value (a copy)."""
    out = copy.deepcopy(obj)
    paths = []

    def walk(o, path):
        if isinstance(o, dict):
            for k, v in o.items():
                paths.append((*path, k))
                walk(v, (*path, k))
        elif isinstance(o, list):
            for i, v in enumerate(o):
                paths.append((*path, i))
                walk(v, (*path, i))

    walk(out, ())
    path = rng.choice(paths)
    parent = out
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = copy.deepcopy(rng.choice(_VALUES))
    return out


def test_decodes_agrees_with_check_value_on_mutated_objects():
    # the fast yes/no walk and the walk that names problems must judge types alike, else a snapshot
    # object would pass that check_value would refuse (or an error would name nothing)
    objects = [o for o in yaml.safe_load_all(PROD.read_text()) if o and kind_type(o.get("kind", "")) is not None]
    assert {o["kind"] for o in objects} >= {"Node", "Pod", "PodDisruptionBudget"}
    rng = random.Random(7)
    verdicts = set()
    for _ in range(3000):
        original = rng.choice(objects)
        obj = _mutations(original, rng)
        root = kind_type(original["kind"])
        refused = any(not p.unknown for p in check_value(obj, root))
        assert decodes(obj, root) is not refused, (obj["kind"], obj)
        verdicts.add(refused)
    assert verdicts == {True, False}  # both kinds of verdict were met


@pytest.mark.parametrize(
    "part,key,value,message",
    [
        ("spec", "nodeName", [None], "spec.nodeName: expected a string, got a list"),
        ("spec", "priorityClassName", {"a": 1}, "spec.priorityClassName: expected a string, got an object"),
        ("spec", "preemptionPolicy", ["Never"], "spec.preemptionPolicy: expected a string, got a list"),
        ("status", "startTime", 5, 'status.startTime: expected a string, got number 5 (quote it if it is text: "5")'),
        ("metadata", "uid", ["u"], "metadata.uid: expected a string, got a list"),
        # an int32 no API server could have stored
        ("spec", "priority", 2**31, "spec.priority: number 2147483648 is out of range for int32"),
        ("spec", "priority", -(2**31) - 1, "spec.priority: number -2147483649 is out of range for int32"),
    ],
)
def test_bound_pods_names_and_times_must_be_strings(tmp_path, part, key, value, message):
    def edit(docs):
        pod = next(d for d in docs if d and d.get("kind") == "Pod")
        pod.setdefault(part, {})[key] = value

    line = _one_line_error(
        CliRunner().invoke(app, ["preempt", str(WEB), "--cluster", str(_cluster_with(tmp_path, edit=edit))])
    )
    assert "(Pod shop/web-" in line and line.endswith(message), line


@pytest.mark.parametrize(
    "kind,spec,message",
    [
        ("Service", "x", 'spec: expected an object, got string "x"'),
        ("PodDisruptionBudget", {"selector": 3}, "spec.selector: expected an object, got number 3"),
        ("Service", {"selector": {"app": "web"}, "sessionAffinitty": "None"}, "unknown field"),
    ],
)
def test_a_pods_files_services_and_budgets_are_checked_as_its_pods(tmp_path, kind, spec, message):
    # a chart's Services and PodDisruptionBudgets join the cluster: decoded as strictly as its pods
    api = {"Service": "v1", "PodDisruptionBudget": "policy/v1"}[kind]
    obj = {"apiVersion": api, "kind": kind, "metadata": {"name": "o", "namespace": "shop"}, "spec": spec}
    pods = tmp_path / "pods.yaml"
    pods.write_text(WEB.read_text() + "\n---\n" + yaml.safe_dump(obj))
    line = _one_line_error(CliRunner().invoke(app, ["schedule", str(pods), "--cluster", str(SMALL)]))
    assert line.startswith(f"ksched: {pods}: document 2 ({kind} shop/o): ") and message in line, line


def test_a_null_request_is_a_request_of_zero(tmp_path):
    # null decodes as Go's zero Quantity: the key is there, so scoring does not default cpu to 100m
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n"
        "  containers: [{name: c, image: i, resources: {requests: {cpu: null, memory: 1Gi}}}]\n"
    )
    zero = tmp_path / "zero.yaml"
    zero.write_text(pod.read_text().replace("cpu: null", "cpu: '0'"))
    docs = [CliRunner().invoke(app, ["explain", str(p), "--cluster", str(SMALL), "-o", "json"]) for p in (pod, zero)]
    assert docs[0].exit_code == 0 and docs[0].stdout == docs[1].stdout.replace(str(zero), str(pod)), docs[0].output
