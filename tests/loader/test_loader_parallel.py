"""Fast snapshot loading: JSON Lists decoded by worker processes, equal parts of bound pods
shared, pods built from a template of identical parts, pods built before PriorityClasses are read.
Each is held against the plain, sequential reading of the same file."""

from __future__ import annotations

import json

import pytest

from kschedcli import loader
from kschedcli.api.model import Pod
from kschedcli.errors import InputError
from kschedcli.inputs.cluster import load_cluster, reset_shared, slim_object
from kschedcli.loader import json_stream, workers


def bound_pod(i: int, rs: str = "web-abc", node: str = "n1", **spec_extra) -> dict:
    spec = {
        "nodeName": node,
        "priorityClassName": "high",
        "containers": [
            {
                "name": "app",
                "image": "img:1",
                "env": [{"name": "A", "value": "1"}],
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }
        ],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "securityContext": {"runAsUser": 1000},
        "volumes": [{"name": f"tok-{i}", "projected": {"sources": [{"serviceAccountToken": {}}]}}],
    }
    spec.update(spec_extra)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{rs}-{i}",
            "namespace": "ns",
            "generateName": f"{rs}-",
            "labels": {"app": rs},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": "u-" + rs, "controller": True},
                {"apiVersion": "v1", "kind": "Other", "name": "x", "uid": "o"},
            ],
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {"name": "app", "image": "img:1", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
            ],
        },
    }


NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "status": {
        "allocatable": {"cpu": "64", "memory": "64Gi", "pods": "500"},
        "images": [{"names": ["img:1"], "sizeBytes": 1000}, {"names": ["img:2"], "sizeBytes": "2000"}],
    },
}
PRIORITY = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
    "preemptionPolicy": "Never",
}


def kubectl_json(items: list, compact: bool = False) -> str:
    """A List as `kubectl get -o json` lays it out one item a line, or all on one line."""
    if compact:
        return json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, separators=(",", ":"))
    return (
        '{"apiVersion":"v1","items":[\n'
        + ",\n".join(json.dumps(i, separators=(",", ":")) for i in items)
        + '\n],"kind":"List","metadata":{"resourceVersion":""}}\n'
    )


@pytest.fixture
def parallel(monkeypatch):
    """Worker processes even for small files; records what each parallel read returned."""
    monkeypatch.setattr(workers, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("KSCHED_WORKERS", "2")
    calls = []
    real = workers.json_parallel

    def spy(*a, **k):
        got = real(*a, **k)
        calls.append(got is not None)
        return got

    monkeypatch.setattr(workers, "json_parallel", spy)
    return calls


def _canon(x):
    """A comparable form of a model object: its slots, recursively (sets sorted)."""
    if isinstance(x, (str, int, float, bool, type(None))):
        return (type(x).__name__, x)
    if isinstance(x, dict):
        return ("d", tuple((_canon(k), _canon(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_canon(v) for v in x))
    if isinstance(x, (set, frozenset)):
        return ("set", tuple(sorted(repr(_canon(v)) for v in x)))
    slots = [s for c in type(x).__mro__ for s in getattr(c, "__slots__", ()) if s != "_cache"]
    return (type(x).__name__, tuple((s, _canon(getattr(x, s, None))) for s in slots))


def _items(n: int) -> list:
    pods = [bound_pod(i, rs="web-abc" if i < n // 2 else "api-def") for i in range(n)]
    pods[5]["spec"]["securityContext"]["runAsUser"] = 1000.0  # equal to 1000, not the same
    pods[7]["status"]["phase"] = "Succeeded"
    pods[9]["spec"]["nodeName"] = ""  # pending: kept whole
    return [NODE] + pods + [PRIORITY]  # the PriorityClass after the pods that use it


@pytest.mark.parametrize("compact", [False, True])
def test_parallel_json_equals_a_whole_decode(tmp_path, parallel, compact):
    items = _items(300)
    f = tmp_path / "c.json"
    f.write_text(kubectl_json(items, compact))
    got = loader.load_documents(str(f), slim_object)
    reset_shared()
    want = json.loads(f.read_text())
    want["items"] = [slim_object(x) for x in want["items"]]
    assert got == [want]
    assert repr(got[0]["items"]) == repr(want["items"])  # 1000.0 stays a float, key order is kept
    if not compact:
        assert parallel == [True]  # one item a line: the cuts fall between items


def test_cuts_inside_items_fall_back_to_the_plain_read(tmp_path, parallel):
    """Compact JSON: `},{"apiVersion"` also occurs inside items (two ownerReferences); a piece
    cut there does not decode, and the file is read in the main process instead."""
    items = _items(300)
    f = tmp_path / "c.json"
    f.write_text(kubectl_json(items, compact=True))
    got = loader.load_documents(str(f))
    assert got == [json.loads(f.read_text())]
    assert parallel == [False]


def test_cluster_from_workers_equals_a_sequential_load(tmp_path, monkeypatch, parallel):
    f = tmp_path / "c.json"
    f.write_text(kubectl_json(_items(400)))
    fast = load_cluster([str(f)])
    assert parallel == [True]
    monkeypatch.setenv("KSCHED_WORKERS", "1")
    slow = load_cluster([str(f)])
    assert [p.key for p in fast.pods] == [p.key for p in slow.pods]
    assert _canon(fast.pods) == _canon(slow.pods) and _canon(fast.nodes) == _canon(slow.nodes)
    assert fast.skipped == slow.skipped
    # pods were built before the PriorityClass was read, and admitted again
    assert {(p.priority, p.preemption_policy) for p in fast.pods} == {(1000, "Never")}
    # equal parts are one object; the float is not merged with the int
    p0, p1 = fast.pods[0], fast.pods[1]
    assert p0.raw["spec"]["containers"] is p1.raw["spec"]["containers"]
    assert type(fast.pods[5].raw["spec"]["securityContext"]["runAsUser"]) is float


@pytest.mark.parametrize("workers", ["1", "2"])
def test_bad_pod_after_good_twins_is_reported_with_its_location(tmp_path, monkeypatch, parallel, workers):
    monkeypatch.setenv("KSCHED_WORKERS", workers)
    items = _items(300)
    bad = bound_pod(999, priorityClassName="nope")  # same shared parts as its twins, unknown class
    items.insert(250, bad)
    f = tmp_path / "c.json"
    f.write_text(kubectl_json(items))
    with pytest.raises(InputError) as e:
        load_cluster([str(f)])
    assert (e.value.source, e.value.where, e.value.field) == (
        str(f),
        "items[250] (Pod ns/web-abc-999)",
        "spec.priorityClassName",
    )
    items[250] = bound_pod(999)
    items[250]["spec"]["containers"][0]["ports"][0]["containerPort"] = 80.0  # its twins have 80
    f.write_text(kubectl_json(items))
    with pytest.raises(InputError) as e:
        load_cluster([str(f)])
    assert (e.value.where, e.value.field) == (
        "items[250] (Pod ns/web-abc-999)",
        "spec.containers[0].ports[0].containerPort",
    )
    items[250] = bound_pod(999, containers=[{"name": "app", "resources": {"requests": {"cpu": "lots"}}}])
    f.write_text(kubectl_json(items))
    with pytest.raises(InputError) as e:
        load_cluster([str(f)])
    assert (e.value.where, e.value.field) == (
        "items[250] (Pod ns/web-abc-999)",
        "spec.containers[0].resources.requests.cpu",
    )


def test_pods_from_a_template_equal_pods_built_alone():
    reset_shared()
    raws = [slim_object(bound_pod(i)) for i in range(3)] + [slim_object(bound_pod(3, hostNetwork=True))]
    assert raws[0]["spec"]["containers"] is raws[3]["spec"]["containers"]
    templates: dict = {}
    prios = {"high": (7, None)}
    shared = [Pod(r, prios, None, templates) for r in raws]
    alone = [Pod(r, prios, None) for r in raws]
    assert _canon(shared) == _canon(alone)
    assert shared[3].host_ports == [("", "TCP", 80)]  # hostNetwork is part of the template key
    # the derived values are the template's own (nothing changes them once a pod is built)
    assert shared[1].requests is shared[0].requests and shared[1].containers is shared[0].containers
    assert shared[1].name != shared[0].name and shared[1].raw is not shared[0].raw


def _typed(v):
    """A value with every type spelled out (True vs 1 vs 1.0, -0.0 vs 0.0, NaN), key order kept."""
    if isinstance(v, dict):
        return ("dict", [(k, _typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [_typed(x) for x in v])
    return (type(v).__name__, repr(v))


@pytest.mark.parametrize(
    "text",
    [
        r'{"a": "\u00e9\n\t\"x\"", "b": [1, 1.0, true, null, -0.0, 0.1, 1e-7, 1e308, 12345678901234567]}',
        r'{"k": 1, "k": 2, "z": {"k": [], "k": {}}}',  # duplicate keys: the last value, first place
        r'{"big": 123456789012345678901234567890}, {"neg": -99999999999999999999}',  # beyond 64 bits
        r'{"x": NaN, "y": Infinity, "z": -Infinity}',  # the standard library's extension
        r'{"s": "\ud800 lone surrogate"}',
        '{"emoji": "\U0001f600", "cjk": "\u4e2d"}',
        r'1, "two", [3], {"four": 4.5}',
        r'{"huge": 1e400, "tiny": -1e400, "long": 0.12345678901234567890123, "e": 1E+2}',
        r'{"id": "sha256:12345678901234567890123", "n": 9223372036854775807, "m": -9223372036854775808}',
        r'[12345678901234567890], {"a":[ -18446744073709551616]}',
    ],
)
def test_json_pieces_decode_as_the_standard_library_does(text):
    data = text.encode("utf-8", "surrogatepass")
    ours = loader.decode_json_items(data)
    theirs = json.loads("[" + text + "]")
    assert _typed(ours) == _typed(theirs)


@pytest.mark.parametrize("data", [b'{"a": 1,}', b'{"a": 01}', b'{"a": "\x01"}', b"[1", b'{"a": "\xff"}'])
def test_json_pieces_the_standard_library_refuses_are_refused(data):
    with pytest.raises((ValueError, UnicodeDecodeError)):
        loader.decode_json_items(data)


def test_long_integers_are_spotted_where_a_value_starts():
    spot = json_stream._may_hold_long_integer
    assert spot(b'{"a": 12345678901234567890}') and spot(b'{"a":-12345678901234567890}')
    assert spot(b"[1, 12345678901234567890]") and spot(b"12345678901234567890")
    assert not spot(b'{"digest": "sha256:12345678901234567890abc", "x": "12345678901234567890"}')
    assert not spot(b'{"f": 0.12345678901234567890, "n": 123456789012345678}')


def test_orjson_decodes_plain_pieces_and_the_standard_library_the_rest(monkeypatch):
    orjson = pytest.importorskip("orjson")
    calls = []

    class Spy:
        JSONDecodeError = orjson.JSONDecodeError

        @staticmethod
        def loads(data):
            calls.append(data)
            return orjson.loads(data)

    monkeypatch.setattr(json_stream, "_orjson", Spy)
    assert loader.decode_json_items(b'{"a": 1}') == [{"a": 1}] and len(calls) == 1
    assert loader.decode_json_items(b'{"a": 12345678901234567890}') == [{"a": 12345678901234567890}]
    assert len(calls) == 1  # a long integer: the standard library only
    assert loader.decode_json_items(b'{"a": NaN}')[0]["a"] != 0 and len(calls) == 2  # refused, then read
