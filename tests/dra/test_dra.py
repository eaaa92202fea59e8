"""DRA: CEL selectors, the structured allocator's modes, shared claims, sequences, CEL errors."""

from __future__ import annotations

import json
from importlib import resources as ilres
from pathlib import Path

import jsonschema
import pytest
from builders import node, pod, scheduler
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.dra import cel
from kschedcli.dra.objects import Device
from kschedcli.framework.status import ERROR, UNRESOLVABLE

GPU = "gpu.example.com"


def device(name, model="a100", memory="40Gi", version="1.2.0", index=0, **extra):
    attrs = {"model": {"string": model}, "index": {"int": index}, "driverVersion": {"version": version}}
    return {"name": name, "attributes": attrs, "capacity": {"memory": {"value": memory}}, **extra}


def slice_(node_name, devices, driver=GPU, pool=None, count=1, generation=1):
    return {
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node_name}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node_name,
            "pool": {"name": pool or node_name, "generation": generation, "resourceSliceCount": count},
            "devices": devices,
        },
    }


def device_class(name, *expressions):
    return {
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def claim(name, *requests, constraints=None):
    devices: dict = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": devices},
    }


def exactly(name, klass, count=None, mode=None, selectors=()):
    ex: dict = {"deviceClassName": klass}
    if count is not None:
        ex["count"] = count
    if mode:
        ex["allocationMode"] = mode
    if selectors:
        ex["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": ex}


def claim_pod(name, *claim_names):
    refs = [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claim_names)]
    return pod(name, spec={"resourceClaims": refs})


def dra_scheduler(nodes, objects, profile=None):
    s = scheduler(nodes, profile=profile)
    for obj in objects:
        meta = obj["metadata"]
        s.cluster.objects[obj["kind"]][(meta.get("namespace", ""), meta["name"])] = obj
    return s


def dra_status(result, node_name):
    st = result.filters[node_name].plugins["DynamicResources"]
    return None if st is None else (st.code, st.reasons)


GPU_CLASS = device_class(GPU, f'device.driver == "{GPU}"')


# ---------------------------------------------------------------- CEL


def _dev(**kw):
    return Device(device("gpu-0", **kw), GPU, "pool")


@pytest.mark.parametrize(
    "expression, expected",
    [
        (f'device.driver == "{GPU}"', True),
        (f'device.attributes["{GPU}"].model == "a100"', True),
        ('device.attributes["gpu.example.com"].model in ["h100", "b200"]', False),
        (f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) == 0', True),
        (f'device.capacity["{GPU}"].memory.compareTo(quantity("80Gi")) >= 0', False),
        (f'device.capacity["{GPU}"].memory == quantity("40960Mi")', True),  # equal by value
        (f'device.capacity["{GPU}"].memory.isGreaterThan(quantity("39.5Gi"))', True),
        (f'device.capacity["{GPU}"].memory.add(quantity("40Gi")).asInteger() == 80 * 1024 * 1024 * 1024', True),
        (f'device.attributes["{GPU}"].driverVersion.isGreaterThan(semver("1.10.0"))', False),
        (f'device.attributes["{GPU}"].driverVersion.isLessThan(semver("1.10.0"))', True),
        (f'device.attributes["{GPU}"].driverVersion.major() == 1', True),
        (f'has(device.attributes["{GPU}"].model) && !has(device.attributes["{GPU}"].vendor)', True),
        ('"a100" == device.attributes["gpu.example.com"].model.lowerAscii()', True),
        (f'device.attributes["{GPU}"].index == 0.0', True),  # cross-type numeric comparison
        (f'device.attributes["{GPU}"].model == 1', False),  # heterogeneous equality
        ('isQuantity("1Gi") && !isQuantity("1 Gi") && isSemver("1.0.0") && !isSemver("v1")', True),
        ('"a-b-c".split("-").join("") == "abc" && [3, 1, 2].sum() == 6 && [1, 2].isSorted()', True),
    ],
)
def test_selector_on_a_device(expression, expected):
    assert cel.selector(expression).matches(_dev()) is expected


def test_missing_domain_is_an_empty_map_and_missing_key_an_error():
    # kube-scheduler's mapper answers an unknown domain with an empty map; the key then fails
    s = cel.selector('device.attributes["nic.example.com"].model == "x"')
    with pytest.raises(cel.CelError, match="^no such key: model$"):
        s.matches(_dev())
    assert cel.selector('device.attributes["nic.example.com"].size() == 0').matches(_dev()) is True
    # && and || absorb an error when the other side decides
    assert cel.selector('device.driver == "other" && device.attributes["x"].model == "y"').matches(_dev()) is False


def test_compile_and_type_errors():
    s = cel.selector("device.driver ==")
    with pytest.raises(cel.CelError) as e:
        s.matches(_dev())
    assert e.value.compile_error and e.value.message.startswith("compilation failed: ERROR: <input>:1:")
    with pytest.raises(cel.CelError, match="could not be converted to bool"):
        cel.selector("device.driver").matches(_dev())
    with pytest.raises(cel.CelError, match="^no such overload$"):
        cel.selector(f'device.capacity["{GPU}"].memory.compareTo(5) == 0').matches(_dev())
    with pytest.raises(cel.CelError, match="quantities must match"):
        cel.selector('quantity("lots") == quantity("1")').matches(_dev())


def test_bad_version_attribute_is_a_runtime_error():
    d = Device(device("gpu-0", version="1.2"), GPU, "pool")
    with pytest.raises(cel.CelError, match="attribute driverVersion: parse semantic version"):
        cel.selector("true").matches(d)


# ---------------------------------------------------------------- the allocator through the plugin


def _two_nodes(objects):
    return dra_scheduler(
        [node("n1"), node("n2")],
        [
            GPU_CLASS,
            slice_("n1", [device("gpu-0"), device("gpu-1", model="l4", memory="24Gi", index=1)]),
            slice_(
                "n2",
                [
                    device("gpu-0", memory="80Gi"),
                    device("gpu-1", memory="80Gi", index=1),
                    device("gpu-2", memory="80Gi", index=2),
                ],
            ),
            *objects,
        ],
    )


def test_exact_count_needs_that_many_matching_free_devices():
    s = _two_nodes([claim("three", exactly("gpu", GPU, count=3))])
    r = s.schedule(claim_pod("p", "three"))
    assert dra_status(r, "n1") == (UNRESOLVABLE, ["cannot allocate all claims"])
    assert r.feasible == ["n2"]


def test_request_selector_narrows_the_class():
    s = _two_nodes([claim("l4", exactly("gpu", GPU, selectors=[f'device.attributes["{GPU}"].model == "l4"']))])
    r = s.schedule(claim_pod("p", "l4"))
    assert r.feasible == ["n1"]


def test_all_mode_takes_every_matching_device_and_fails_when_one_is_taken():
    taken = claim("taken", exactly("gpu", GPU))
    taken["status"] = {
        "allocation": {"devices": {"results": [{"request": "gpu", "driver": GPU, "pool": "n2", "device": "gpu-1"}]}}
    }
    s = _two_nodes([claim("all", exactly("gpu", GPU, mode="All")), taken])
    r = s.schedule(claim_pod("p", "all"))
    assert r.feasible == ["n1"]  # n2's gpu-1 belongs to another claim
    s.bind(claim_pod("p", "all"), "n1")
    alloc = s.frameworks["default-scheduler"].plugins["DynamicResources"].tracker.claim("default", "all").allocation
    assert [x.device for x in alloc.results] == ["gpu-0", "gpu-1"]


def test_first_available_falls_back_to_the_next_subrequest():
    req = {
        "name": "gpu",
        "firstAvailable": [
            {
                "name": "big",
                "deviceClassName": GPU,
                "selectors": [
                    {"cel": {"expression": f'device.capacity["{GPU}"].memory.compareTo(quantity("80Gi")) >= 0'}}
                ],
            },
            {"name": "small", "deviceClassName": GPU, "count": 2},
        ],
    }
    s = _two_nodes([claim("c", req)])
    p = claim_pod("p", "c")
    r = s.schedule(p)
    assert sorted(r.feasible) == ["n1", "n2"]
    s.bind(p, "n1")
    alloc = s.frameworks["default-scheduler"].plugins["DynamicResources"].tracker.claim("default", "c").allocation
    assert [(x.request, x.device) for x in alloc.results] == [("gpu/small", "gpu-0"), ("gpu/small", "gpu-1")]


def test_match_attribute_constraint():
    c = claim("pair", exactly("gpu", GPU, count=2), constraints=[{"matchAttribute": f"{GPU}/model"}])
    s = _two_nodes([c])
    assert s.schedule(claim_pod("p", "pair")).feasible == ["n2"]  # n1's two GPUs differ in model


def test_sequence_takes_devices_and_shares_claims():
    s = _two_nodes(
        [
            claim("a", exactly("gpu", GPU, count=2)),
            claim("b", exactly("gpu", GPU, count=2)),
            claim("shared", exactly("gpu", GPU)),
        ]
    )
    pods = [
        claim_pod("first", "a"),
        claim_pod("second", "b"),
        claim_pod("user1", "shared"),
        claim_pod("user2", "shared"),
    ]
    results = s.run_sequence(pods)
    assert [r.selected_node for r in results[:2]] == ["n1", "n2"]  # n1 wins on resources, then it is full
    # the shared claim is allocated with the first pod that uses it, on the node it went to; the
    # second user must follow it there
    assert results[2].selected_node == "n2"
    assert results[3].feasible == ["n2"]
    assert dra_status(results[3], "n1") == (UNRESOLVABLE, ["resourceclaim not available on the node"])
    tracker = s.frameworks["default-scheduler"].plugins["DynamicResources"].tracker
    shared = tracker.claim("default", "shared")
    assert [r["name"] for r in shared.reserved_for] == ["user1", "user2"]
    assert shared.allocation.node_selector == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]
    }


def test_cel_error_stops_the_cycle_with_kube_schedulers_text():
    bad = device_class("bad", 'device.attributes["nic.example.com"].speed > 10')
    s = _two_nodes([bad, claim("c", exactly("nic", "bad"))])
    r = s.schedule(claim_pod("p", "c"))
    st = r.filters["n1"].plugins["DynamicResources"]
    assert st.code == ERROR
    assert st.reasons == [
        'running "DynamicResources" filter plugin: class bad: selector #0: CEL runtime error: no such key: speed'
    ]
    assert not r.schedulable and r.error


def test_compile_error_names_the_claim():
    s = _two_nodes([claim("c", exactly("gpu", GPU, selectors=["device.driver =="]))])
    r = s.schedule(claim_pod("p", "c"))
    st = r.filters["n1"].plugins["DynamicResources"]
    assert (
        st.code == ERROR
        and "claim default/c: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:" in st.reasons[0]
    )


# ---------------------------------------------------------------- the explanation, through the CLI

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "dra"


def _cli(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})


def test_explain_json_says_per_node_why_devices_do_not_qualify():
    r = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(FIXTURE / "cluster.yaml"), "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    schema = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
    assert errors == []
    d = doc["details"]["DynamicResources"]
    assert d["claims"][0]["claim"] == "ml/finetune-gpus" and d["claims"][0]["allocated"] is False
    nodes = {n["node"]: n for n in d["nodes"]}
    assert d["nodes"][0]["node"] == doc["selectedNode"] == "gpu-d"
    assert nodes["gpu-d"]["requests"][0]["chosen"] == ["gpu.nvidia.com/gpu-d/gpu-0", "gpu.nvidia.com/gpu-d/gpu-1"]
    gpu_c = nodes["gpu-c"]["requests"][0]
    assert nodes["gpu-c"]["verdict"] == "cannot allocate all claims"
    assert gpu_c["qualifying"] == ["gpu.nvidia.com/gpu-c/gpu-2"]
    assert {x["device"]: x.get("by") for x in gpu_c["rejected"]} == {
        "gpu.nvidia.com/gpu-c/gpu-0": "ml/train-gpus",
        "gpu.nvidia.com/gpu-c/gpu-1": "ml/train-gpus",
    }
    (why_a,) = {(x["reason"], x["selector"]) for x in nodes["gpu-a"]["requests"][0]["rejected"]}
    assert why_a == ("selector", "class large-gpu.nvidia.com: selector #1")
    (why_b,) = {(x["reason"], x["selector"]) for x in nodes["gpu-b"]["requests"][0]["rejected"]}
    assert why_b == ("selector", "claim ml/finetune-gpus: selector #0")


def test_explain_terminal_view_of_one_node():
    r = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(FIXTURE / "cluster.yaml"), "--node", "gpu-c")
    assert r.exit_code == 0, r.output
    text = r.stdout
    assert "Dynamic resources" in text
    assert "wants 2, 1 device qualifies (gpu-2)" in text
    assert "gpu-0, gpu-1 — taken by claim ml/train-gpus" in text
    assert "gpu-d  fits" not in text  # --node shows that node only


def test_malformed_dra_objects_give_statuses_not_tracebacks():
    # what an API server would refuse, read leniently: wrong types are absent fields
    bad_slice = slice_("n1", [device("gpu-0"), 7])
    bad_slice["spec"]["devices"][0]["attributes"]["weird"] = 5
    bad_class = {"kind": "DeviceClass", "metadata": {"name": "odd"}, "spec": {"selectors": [{"cel": 5}, 3]}}
    c = claim("c", exactly("r", "odd", selectors=[f'device.driver == "{GPU}"']), constraints=[{"matchAttribute": 7}])
    c["status"] = {"reservedFor": 3, "allocation": {"devices": {"results": [5, {"device": 1}]}}}
    s = dra_scheduler([node("n1")], [bad_slice, bad_class, c, claim("c2", exactly("r", "odd", count="two"))])
    r = s.schedule(claim_pod("p", "c"))  # allocated (oddly): only its node selector would matter
    assert r.schedulable
    r = s.schedule(claim_pod("p2", "c2"))
    st = r.filters["n1"].plugins["DynamicResources"]
    assert st.code == ERROR and "class odd: selector #0: CEL" in st.reasons[0]


# ---------------------------------------------------------------- filterTimeout


def _endless_search_objects():
    # 20 of 40 "a" devices that all share grp=x, then one "b" device that must match their grp but
    # has grp=y: every choice of the 20 is tried before the search fails (C(40,20) of them)
    devices = [device(f"a-{i}", kind="a", grp="x") for i in range(40)] + [device("b-0", kind="b", grp="y")]
    for d in devices:
        extra = {k: {"string": d.pop(k)} for k in ("kind", "grp")}
        d["attributes"].update(extra)
    c = claim(
        "endless",
        exactly("ra", GPU, count=20, selectors=[f'device.attributes["{GPU}"].kind == "a"']),
        exactly("rb", GPU, count=1, selectors=[f'device.attributes["{GPU}"].kind == "b"']),
        constraints=[{"matchAttribute": f"{GPU}/grp"}],
    )
    return [slice_("n1", devices), GPU_CLASS, c]


def _with_args(args):
    return {"schedulerName": "default-scheduler", "pluginConfig": [{"name": "DynamicResources", "args": args}]}


def test_a_search_past_filter_timeout_is_unschedulable_as_kube_scheduler_reports_it():
    # filterTimeout 1ms is 100 allocator steps: the node is UnschedulableAndUnresolvable (Filter's
    # statusUnschedulable), in kube-scheduler's words, where the search would otherwise run for hours
    s = dra_scheduler([node("n1")], _endless_search_objects(), _with_args({"filterTimeout": "1ms"}))
    r = s.schedule(claim_pod("p", "endless"))
    assert dra_status(r, "n1") == ("UnschedulableAndUnresolvable", ["timed out trying to allocate devices"])
    # so preemption does not try the node
    assert r.message == (
        "0/1 nodes are available: 1 timed out trying to allocate devices. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_without_filter_timeout_ksched_stops_and_says_so(monkeypatch):
    from kschedcli.dra import allocator  # the plugin reads its budget there (imported with the first claim)

    monkeypatch.setattr(allocator, "UNTIMED_STEPS", 500)
    s = dra_scheduler([node("n1")], _endless_search_objects(), _with_args({"filterTimeout": "0s"}))
    r = s.schedule(claim_pod("p", "endless"))
    code, reasons = dra_status(r, "n1")
    assert code == ERROR and reasons == [
        'running "DynamicResources" filter plugin: ksched stopped allocating devices after 500 steps; '
        "kube-scheduler has no filterTimeout here and would search on"
    ]


def test_a_search_within_the_budget_is_not_cut_short():
    # the same claim with a device that matches: found within the 1ms budget of 100 steps
    objects = _endless_search_objects()
    objects[0]["spec"]["devices"][-1]["attributes"]["grp"] = {"string": "x"}
    s = dra_scheduler([node("n1")], objects, _with_args({"filterTimeout": "1ms"}))
    assert dra_status(s.schedule(claim_pod("p", "endless")), "n1") is None


@pytest.mark.parametrize(
    ("old", "new", "field", "says"),
    [
        ("        count: 2\n", '        count: "2"\n', "exactly.count", 'expected an integer, got string "2"'),
        ("        count: 2\n", "        count: 2.5\n", "exactly.count", "expected an integer, got number 2.5"),
        ("        count: 2\n", "        count: true\n", "exactly.count", "expected an integer, got boolean true"),
        ("        count: 2\n", "        count: [2]\n", "exactly.count", "expected an integer, got a list"),
        ("        count: 2\n", "        count: 0\n", "exactly.count", "Invalid value: 0: must be greater than zero"),
        ("        count: 2\n", "        count: -1\n", "exactly.count", "Invalid value: -1: must be greater than zero"),
        ("        device: gpu-0\n", "        device: 7\n", "results[0].device", "expected a string, got number 7"),
    ],
)
def test_dra_values_no_api_server_writes_are_one_line(tmp_path, old, new, field, says):
    """A claim's count or an allocation result's device that no API server could have written:
    one line naming the file, the object and the field, exit 2 (it was read as a count of 1, or
    the held device taken as free). A count written 2.0 is the integer 2."""
    text = (FIXTURE / "cluster.yaml").read_text()
    assert old in text
    snap = tmp_path / "cluster.yaml"
    snap.write_text(text.replace(old, new, 1))
    r = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(snap))
    assert r.exit_code == 2, r.output
    [line] = r.output.strip().splitlines()
    assert "(ResourceClaim ml/" in line and f"{field}: {says}" in line, line
    snap.write_text(text.replace("        count: 2\n", "        count: 2.0\n"))
    same = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(snap), "-o", "json")
    want = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(FIXTURE / "cluster.yaml"), "-o", "json")
    assert same.exit_code == want.exit_code == 0 and same.stdout == want.stdout


def test_dra_requests_written_as_a_map_are_one_line(tmp_path):
    import yaml

    docs = list(yaml.safe_load_all((FIXTURE / "cluster.yaml").read_text()))
    [claim] = [d for d in docs if d and d["kind"] == "ResourceClaim" and d["metadata"]["name"] == "finetune-gpus"]
    claim["spec"]["devices"]["requests"] = {"gpus": 2}
    snap = tmp_path / "cluster.yaml"
    snap.write_text(yaml.safe_dump_all(docs))
    r = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(snap))
    assert r.exit_code == 2 and "spec.devices.requests: expected a list, got an object" in r.output, r.output


def test_v1beta1_objects_read_as_the_api_server_converts_them(tmp_path):
    """The DRA fixture written as resource.k8s.io/v1beta1 (what v1.32 and v1.33 export): a claim's
    request holds the fields of v1's `exactly` itself, a slice's device holds its attributes and
    capacity under `basic`. Read as the API server converts them, the answer is the v1 fixture's."""
    import yaml

    docs = [d for d in yaml.safe_load_all((FIXTURE / "cluster.yaml").read_text()) if d]
    converted = 0
    for d in docs:
        if not d["apiVersion"].startswith("resource.k8s.io/"):
            continue
        d["apiVersion"] = "resource.k8s.io/v1beta1"
        spec = d.get("spec") or {}
        if d["kind"] == "ResourceClaim":
            for r in spec["devices"]["requests"]:
                if "exactly" in r:
                    r.update(r.pop("exactly"))
                    converted += 1
        if d["kind"] == "ResourceSlice":
            spec["devices"] = [
                {"name": dev["name"], "basic": {k: v for k, v in dev.items() if k != "name"}}
                for dev in spec.get("devices") or []
            ]
            converted += 1
    assert converted >= 4
    snap = tmp_path / "cluster.yaml"
    snap.write_text(yaml.safe_dump_all(docs))
    old = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(FIXTURE / "cluster.yaml"), "-o", "json")
    new = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(snap), "-o", "json")
    assert old.exit_code == new.exit_code == 0, new.output

    def answer(out: str) -> str:
        return json.dumps({k: v for k, v in json.loads(out).items() if k != "input"}, sort_keys=True)

    assert answer(new.stdout) == answer(old.stdout)
    # a v1beta1 request's own count is checked as v1's `exactly.count`
    text = snap.read_text()
    bad = tmp_path / "bad.yaml"
    assert "count: 2\n" in text
    bad.write_text(text.replace("count: 2\n", "count: '2'\n", 1))
    r = _cli("explain", str(FIXTURE / "finetune.yaml"), "-c", str(bad))
    assert r.exit_code == 2 and 'requests[0].count: expected an integer, got string "2"' in r.output, r.output
