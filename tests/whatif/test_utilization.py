"""The utilization `--report` draws: requested against allocatable per node, through the Session's
answers (Explanation.utilization(), Diff.utilization(), ...)."""

from __future__ import annotations

from pathlib import Path

from kschedcli import Session
from kschedcli.whatif.utilization import NONE, pool_of

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")


def test_explanation_utilization_sums_each_node():
    e = Session(PROD).explain(str(ROOT / "fixtures/pods/web.yaml"), fixes=0)
    u = e.utilization()
    assert u["resources"][:3] == ["cpu", "memory", "pods"]
    assert "nvidia.com/gpu" in u["resources"]
    nodes = {n["name"]: n for n in u["nodes"]}
    assert len(nodes) == 20
    # the explain document's resource breakdown of the selected node says the same
    doc = e.to_dict()
    for row in doc["breakdowns"]["resources"][doc["selectedNode"]]:
        used = nodes[doc["selectedNode"]]["resources"][row["resource"]]
        assert used == [row["requested"], row["allocatable"]]
    n = nodes["general-c-05"]
    assert n["zone"] == "us-east-1c" and n["pool"] == "general" and n["unschedulable"]
    assert nodes["gpu-a-01"]["resources"]["nvidia.com/gpu"][1] > 0
    assert nodes["general-a-01"]["resources"]["nvidia.com/gpu"] == [0, 0]


def test_capacity_utilization_counts_the_copies_bound():
    s = Session(PROD)
    before = {n["name"]: n for n in s.explain(str(ROOT / "fixtures/pods/web.yaml"), fixes=0).utilization()["nodes"]}
    c = s.capacity([str(ROOT / "fixtures/pods/web.yaml")], max_copies=5)
    after = {n["name"]: n for n in c.utilization()["nodes"]}
    added = sum(after[k]["resources"]["pods"][0] - before[k]["resources"]["pods"][0] for k in after)
    assert added == 5
    assert all("topology.kubernetes.io/zone" in n["labels"] for n in after.values())


def test_diff_utilization_has_both_worlds():
    d = Session(PROD).diff(against_config=str(ROOT / "fixtures/config/most-allocated.yaml"), all_pods=True)
    u = d.utilization()
    assert set(u) == {"a", "b"}
    pods_a = sum(n["resources"]["pods"][0] for n in u["a"]["nodes"])
    pods_b = sum(n["resources"]["pods"][0] for n in u["b"]["nodes"])
    assert pods_a == pods_b == d.to_dict()["diff"]["a"]["scheduled"]


def test_pool_prefers_a_pool_label_to_the_instance_type():
    assert pool_of({"node.kubernetes.io/instance-type": "m5", "pool": "general"}) == "general"
    assert pool_of({"node.kubernetes.io/instance-type": "m5"}) == "m5"
    assert pool_of({}) == NONE
