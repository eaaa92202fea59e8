"""The required node affinity column PodTopologySpread reads (nodeaffinity.required_node_affinity_column),
kept per snapshot and extended as nodes are appended: equal, for pods of several affinities and
node selectors (one key among them) and after Snapshot.add_node, to deciding each node afresh."""

import random

from builders import node, pod, scheduler

from kschedcli.plugins.nodeaffinity import required_node_affinity_column, required_node_affinity_matches

ZONES = ["a", "b", "c"]


def _affinity(zones):
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": zones}]}
    required = {"nodeSelectorTerms": [term]}
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}}


def _pods(rng):
    out = []
    for i in range(12):
        spec = _affinity(rng.sample(ZONES, rng.randint(1, 2))) if rng.random() < 0.7 else {}
        if rng.random() < 0.5:
            spec["nodeSelector"] = {"pool": rng.choice(["x", "y"]), "disk": "ssd"}
        elif rng.random() < 0.5:
            spec["nodeSelector"] = {"pool": rng.choice(["x", "y"])}  # (one key: read off the label column)
        out.append(pod(f"p{i}", spec=spec))
    return out


def _afresh(p, snap):
    return [required_node_affinity_matches(p, ni.node) for ni in snap.node_infos]


def test_the_kept_column_equals_deciding_each_node_afresh_as_nodes_are_added():
    rng = random.Random(7)
    labels = lambda: {"zone": rng.choice(ZONES), "pool": rng.choice(["x", "y"]), "disk": rng.choice(["ssd", "hdd"])}  # noqa: E731
    s = scheduler([node(f"n{i}", labels=labels()) for i in range(40)])
    snap = s.snapshot
    pods = _pods(rng)
    for round_ in range(4):
        for p in pods:
            got = required_node_affinity_column(p, snap)
            assert got == _afresh(p, snap), (round_, p.name)
            assert required_node_affinity_column(p, snap) is got  # kept (callers only read it)
        for j in range(3):
            snap.add_node(node(f"m{round_}-{j}", labels=labels()), [])
    assert len(snap.node_infos) == 52


def test_pods_of_equal_affinities_share_a_column_and_fields_are_read_per_node():
    """Two pods whose affinities are written alike (parsed apart) read one column; a term on
    metadata.name (a field: each node's own) is decided node by node, a term on labels once per
    distinct set of the labels it names."""
    rng = random.Random(3)
    s = scheduler([node(f"n{i}", labels={"zone": rng.choice(ZONES), "pool": "x"}) for i in range(30)])
    snap = s.snapshot
    a, b = pod("a", spec=_affinity(["a", "b"])), pod("b", spec=_affinity(["a", "b"]))
    assert a.required_node_affinity is not b.required_node_affinity
    assert required_node_affinity_column(a, snap) is required_node_affinity_column(b, snap)
    named = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]} for n in ("n3", "n7")]
    both = {"nodeSelectorTerms": [*named, {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["c"]}]}]}
    f = pod("f", spec={"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": both}}})
    assert required_node_affinity_column(f, snap) == _afresh(f, snap)
    assert required_node_affinity_column(f, snap)[3] and required_node_affinity_column(f, snap)[7]
