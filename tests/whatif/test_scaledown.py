"""scale-down's removal simulation in place (Simulation.without_node: the node taken out of the
current snapshot, every other NodeInfo shared) gives what a snapshot rebuilt from scratch for every
candidate gives: the same removable nodes, the same moves, the same reasons."""

from __future__ import annotations

import random

import pytest
import yaml

from kschedcli import Session
from kschedcli.whatif.autoscaler import Simulation

ZONE = "topology.kubernetes.io/zone"
POOL = "eks.amazonaws.com/nodegroup"


def _rebuilt(self, name, ghost=None):
    """The removal trial as it was first written: a Simulation over the nodes and pods less the
    node's (and the ghost node after them), its scheduler (and snapshot) built from nothing."""
    nodes = [n for n in self.nodes if n.name != name] + ([ghost] if ghost is not None else [])
    pods = [p for ni in self.scheduler.snapshot.node_infos if ni.node.name != name for p in ni.pods]
    s = Simulation(self.base, self.config, nodes, pods)
    s.cursor = self.cursor
    return s


def _node(name, zone, cpu, pool, images, taints=(), unschedulable=False):
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone, POOL: pool}},
        "spec": {"taints": list(taints), **({"unschedulable": True} if unschedulable else {})},
        "status": {
            "allocatable": alloc,
            "capacity": alloc,
            "images": [{"names": [img], "sizeBytes": 100_000_000 + 7 * k} for k, img in enumerate(images)],
        },
    }


def _pod(name, node, app, cpu, rnd):
    spec: dict = {
        "nodeName": node,
        "containers": [{"name": "c", "image": f"{app}:1", "resources": {"requests": {"cpu": cpu, "memory": "512Mi"}}}],
    }
    sel = {"matchLabels": {"app": app}}
    kind = rnd.randrange(7)
    if kind == 0:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}
        ]
    elif kind == 1:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 2,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": sel,
            }
        ]
    elif kind == 2:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": sel}
                ]
            }
        }
    elif kind == 3:
        spec["affinity"] = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "db"}}}
                ]
            }
        }
    elif kind == 4:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    elif kind == 5:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": app},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app, "uid": f"uid-{app}", "controller": True}
            ],
        },
        "spec": spec,
        "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"},
    }


def _cluster(seed: int) -> list[dict]:
    rnd = random.Random(seed)
    objs: list[dict] = []
    names = []
    for i in range(24):
        name = f"node-{i:02d}"
        names.append(name)
        taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if rnd.random() < 0.15 else []
        objs.append(
            _node(
                name,
                f"zone-{i % 3}",
                rnd.choice(["2", "4", "8"]),
                f"pool-{i % 2}",
                rnd.sample(["web:1", "db:1", "cache:1", "api:1"], 2),
                taints,
                unschedulable=rnd.random() < 0.05,
            )
        )
    apps = ["web", "db", "cache", "api", "batch"]
    for k in range(60):
        objs.append(_pod(f"p-{k:03d}", rnd.choice(names), rnd.choice(apps), rnd.choice(["100m", "250m", "500m"]), rnd))
    return objs


def _scale_down(tmp_path, objs, threshold):
    c = tmp_path / "cluster.yaml"
    c.write_text(yaml.safe_dump_all(objs))
    return Session([str(c)], kubernetes_version="v1.34").scale_down(threshold=threshold).to_dict()


@pytest.mark.parametrize("seed", range(8))
def test_in_place_removal_matches_a_rebuilt_snapshot(tmp_path, monkeypatch, seed):
    objs = _cluster(seed)
    in_place = _scale_down(tmp_path, objs, 0.9)
    with monkeypatch.context() as m:
        m.setattr(Simulation, "without_node", _rebuilt)
        rebuilt = _scale_down(tmp_path, objs, 0.9)
    assert in_place == rebuilt
    # the clusters exercise the simulation: several nodes go, pods move, some stay for want of room
    assert in_place["removable"]
    reasons = {n["reason"] for n in in_place["nodes"] if not n["removable"]}
    assert any(r and r.startswith("no place to move pod") for r in reasons)


# ---------------------------------------------------------------------------- the rules, one by one
# Each test names the cluster-autoscaler v1.34 source file whose rule it holds ksched to.

RS = ("ReplicaSet", "web")


def _n(name, cpu="4"):
    return _node(name, "z", cpu, "pool", [])


def _with_memory(name, cpu, memory):
    n = _node(name, "z", cpu, "pool", [])
    alloc = {"cpu": cpu, "pods": "110", **({"memory": memory} if memory else {})}
    n["status"]["allocatable"] = n["status"]["capacity"] = alloc
    return n


def _p(name, node, cpu="500m", owner=RS, ns="default", annotations=None, labels=None, volumes=None, meta=None):
    m: dict = {"name": name, "namespace": ns, "labels": labels or {}, "annotations": annotations or {}, **(meta or {})}
    if owner:
        m["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "uid": f"uid-{owner[1]}", "controller": True}
        ]
    spec: dict = {
        "nodeName": node,
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
    }
    if volumes:
        spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec, "status": {"phase": "Running"}}


def _pdb(name, app, allowed, ns="default"):
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": allowed},
        "status": {"disruptionsAllowed": allowed, "desiredHealthy": 1, "currentHealthy": 2, "expectedPods": 2},
    }


def _verdicts(tmp_path, objs, threshold=0.5):
    d = _scale_down(tmp_path, objs, threshold)
    return d, {n["node"]: n for n in d["nodes"]}


def test_eligibility_go_at_the_threshold_is_underutilized_and_annotation_keeps_a_node(tmp_path):
    # eligibility.go (v1.34.5, isNodeAtOrBelowUtilizationThreshold): a node is kept only when its
    # utilization is above the threshold; scale-down-disabled=true keeps it
    objs = [_n("n-1"), _n("n-2"), _n("n-3"), _n("n-4"), _p("half", "n-1", cpu="2"), _p("a", "n-3", cpu="100m")]
    objs += [_p("over", "n-4", cpu="2001m")]
    objs[1]["metadata"]["annotations"] = {"cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"}
    d, v = _verdicts(tmp_path, objs)
    assert v["n-1"]["utilization"] == 0.5 and v["n-1"]["moves"] == [{"pod": "default/half", "node": "n-2"}]
    assert "scale-down-disabled=true" in v["n-2"]["reason"]
    assert v["n-4"]["reason"] == "above the 50% utilization threshold"
    assert d["removable"] == ["n-1", "n-3"]


def test_utilization_info_go_counts_daemonsets_not_deleted_pods_and_needs_allocatable(tmp_path):
    # simulator/utilization/info.go: DaemonSet pods count (--ignore-daemonsets-utilization=false),
    # long-terminating pods do not; no memory allocatable: Calculate errs and the node stays
    gone = {"deletionTimestamp": "2024-01-01T00:00:00Z"}
    objs = [
        _n("n-1"),
        _n("n-2"),
        _with_memory("n-3", "4", None),
        _p("ds", "n-1", cpu="1", owner=("DaemonSet", "agent")),
        _p("old", "n-2", cpu="3", meta=gone),
    ]
    _, v = _verdicts(tmp_path, objs)
    assert v["n-1"]["utilization"] == 0.25
    assert v["n-2"]["utilization"] == 0.0
    assert v["n-3"]["reason"] == "utilization unknown: no memory allocatable" and not v["n-3"]["removable"]


def test_mirror_longterminating_daemonset_rules_neither_block_nor_move(tmp_path):
    # drainability/rules/mirror/rule.go, longterminating/rule.go (skipped), daemonset/rule.go
    # (drainable, kept apart by simulator/drain.go GetPodsToMove), also for the annotation
    # cluster-autoscaler.kubernetes.io/daemonset-pod; none of them is moved, bare or kube-system
    objs = [
        _n("n-1"),
        _n("n-2"),
        _p("static", "n-1", owner=None, ns="kube-system", annotations={"kubernetes.io/config.mirror": "x"}),
        _p("dying", "n-1", owner=None, meta={"deletionTimestamp": "2024-01-01T00:00:00Z"}),
        _p("ds", "n-1", owner=("DaemonSet", "agent"), ns="kube-system"),
        _p("marked", "n-1", owner=None, annotations={"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"}),
        _p("busy", "n-2", cpu="2500m"),
    ]
    d, v = _verdicts(tmp_path, objs, 0.9)
    assert d["removable"] == ["n-1"] and v["n-1"]["moves"] == []


def test_safetoevict_rule_go_moves_a_pod_before_any_blocking_rule(tmp_path):
    # drainability/rules/safetoevict/rule.go: safe-to-evict=true is drainable, ahead of the
    # replicated, system and local-storage rules
    ann = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
    objs = [
        _n("n-1"),
        _n("n-2"),
        _p("bare", "n-1", owner=None, ns="kube-system", annotations=ann, volumes=[{"name": "s", "emptyDir": {}}]),
    ]
    d, v = _verdicts(tmp_path, objs)
    assert d["removable"][0] == "n-1" and v["n-1"]["moves"] == [{"pod": "kube-system/bare", "node": "n-2"}]


def test_terminal_pods_are_not_in_the_snapshot(tmp_path):
    # drainability/rules/terminal/rule.go: a terminal pod is drainable; ksched's cluster holds
    # no terminal pod at all (kube-scheduler's informer drops them), so it neither moves nor blocks
    done = _p("done", "n-1", owner=None)
    done["status"]["phase"] = "Succeeded"
    d, v = _verdicts(tmp_path, [_n("n-1"), _n("n-2"), done])
    assert "n-1" in d["removable"] and v["n-1"]["moves"] == []


def test_replicated_rule_go_blocks_bare_pods_and_custom_controllers(tmp_path):
    # drainability/rules/replicated/rule.go with --skip-nodes-with-custom-controller-pods (the
    # default): no controller, or one not of ReplicationController/Job/ReplicaSet/StatefulSet
    objs = [_n("n-1"), _n("n-2"), _n("n-3"), _p("bare", "n-1", owner=None), _p("roll", "n-2", owner=("Rollout", "r"))]
    objs += [_p("job", "n-3", owner=("Job", "j"))]
    d, v = _verdicts(tmp_path, objs)
    assert v["n-1"]["reason"] == "blocked by pod default/bare: not replicated (no controller)"
    assert v["n-2"]["reason"] == "blocked by pod default/roll: not replicated (a custom controller: Rollout)"
    assert d["removable"] == ["n-3"]


def test_rules_go_order_decides_the_reason(tmp_path):
    # drainability/rules/rules.go: replicated before system before not-safe-to-evict before
    # local storage before pdb; the first blocking rule names the reason
    empty = [{"name": "s", "emptyDir": {}}]
    no = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
    objs = [_n(f"n-{i}") for i in range(1, 6)] + [
        _p("a", "n-1", owner=None, ns="kube-system"),
        _p("b", "n-2", ns="kube-system", annotations=no),
        _p("c", "n-3", annotations=no, volumes=empty),
        _p("d", "n-4", volumes=empty, labels={"app": "d"}),
        _pdb("d", "d", 0),
    ]
    _, v = _verdicts(tmp_path, objs)
    assert "not replicated" in v["n-1"]["reason"]
    assert "kube-system pod without a PodDisruptionBudget" in v["n-2"]["reason"]
    assert "safe-to-evict=false" in v["n-3"]["reason"]
    assert "local storage" in v["n-4"]["reason"]


def test_system_rule_go_a_budget_lets_a_kube_system_pod_move(tmp_path):
    # drainability/rules/system/rule.go: a kube-system pod blocks only without a matching budget
    objs = [_n("n-1"), _n("n-2"), _p("dns", "n-1", ns="kube-system", labels={"app": "dns"})]
    objs.append(_pdb("dns", "dns", 1, ns="kube-system"))
    d, _ = _verdicts(tmp_path, objs)
    assert d["removable"][0] == "n-1"


def test_localstorage_rule_go_and_the_local_volumes_annotation(tmp_path):
    # drainability/rules/localstorage/rule.go, utils/drain HasBlockingLocalStorage: hostPath and
    # disk emptyDir block, a memory emptyDir does not; safe-to-evict-local-volumes names the
    # volumes that do not block, split at commas with nothing trimmed
    key = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
    vols = [{"name": "a", "emptyDir": {}}, {"name": "b", "hostPath": {"path": "/x"}}]
    objs = [_n(f"n-{i}") for i in range(1, 5)] + [
        _p("mem", "n-1", volumes=[{"name": "m", "emptyDir": {"medium": "Memory"}}]),
        _p("named", "n-2", volumes=vols, annotations={key: "a,b"}),
        _p("spaced", "n-3", volumes=vols, annotations={key: "a, b"}),
        _p("host", "n-4", volumes=vols[1:]),
    ]
    d, v = _verdicts(tmp_path, objs)
    assert v["n-3"]["reason"] == "blocked by pod default/spaced: local storage (hostPath or emptyDir)"
    assert "local storage" in v["n-4"]["reason"]
    assert d["removable"] == ["n-1", "n-2"]


def test_pdb_rule_go_spends_disruptions_and_a_risky_node_is_still_removable(tmp_path):
    # drainability/rules/pdb/rule.go: a pod whose budget has no disruption left blocks; the
    # planner (core/scaledown/planner/planner.go) takes a node whose pods need more disruptions
    # than left as removable (IsRisky) and spends them (RemovePods): the next node is blocked
    objs = [_n(f"n-{i}") for i in range(1, 5)] + [
        _p("a", "n-1", labels={"app": "w"}),
        _p("b", "n-1", labels={"app": "w"}),
        _p("c", "n-2", labels={"app": "w"}),
        _pdb("w", "w", 1),
    ]
    d, v = _verdicts(tmp_path, objs)
    assert d["removable"][0] == "n-1"
    assert v["n-2"]["reason"] == "blocked by pod default/c: not enough PodDisruptionBudget disruptions"


def test_cluster_go_moved_pods_go_with_a_later_removal(tmp_path):
    # simulator/cluster.go (findPlaceFor) with the planner's canPersist: a removal stays in the
    # snapshot, so a later candidate's pods are those it holds then, moved pods included. n-a's
    # pod goes to n-b; n-b's pods are then b and a (2,000m): they do not fit on n-c (2 cpu,
    # 500m used), so n-b stays
    objs = [_n("n-a"), _n("n-b"), _n("n-c", cpu="2"), _p("a", "n-a", cpu="1500m"), _p("b", "n-b", cpu="500m")]
    objs.append(_p("c", "n-c", cpu="500m"))
    d, v = _verdicts(tmp_path, objs)
    assert v["n-a"]["moves"] == [{"pod": "default/a", "node": "n-b"}]
    assert v["n-b"]["reason"] == "no place to move pod default/a"
    assert d["removable"][0] == "n-a" and "n-b" not in d["removable"]


def test_cluster_go_the_node_under_test_stays_as_a_tainted_ghost(tmp_path):
    # simulator/cluster.go, replaceWithTaintedGhostNode (v1.34.4 on): the node under test is
    # replaced by a pod-less copy tainted ToBeDeletedByClusterAutoscaler:NoSchedule, which
    # PodTopologySpread (nodeTaintsPolicy Ignore) still counts as a domain: c, spread over
    # zones with maxSkew 1, cannot leave zone c's only node (zone c would hold 0, zone a 2).
    # The ghost is never a destination, even for a pod that tolerates every taint (t).
    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "s"}},
            }
        ]
    }
    objs = [_node("n-1", "a", "4", "pool", []), _node("n-2", "b", "4", "pool", []), _node("n-3", "c", "4", "pool", [])]
    objs += [_p("big-1", "n-1", cpu="2500m"), _p("big-2", "n-2", cpu="2500m")]
    for name, node in (("a", "n-1"), ("b", "n-2"), ("c", "n-3")):
        pod = _p(name, node, labels={"app": "s"})
        pod["spec"].update(spread)
        objs.append(pod)
    d, v = _verdicts(tmp_path, objs)
    assert v["n-3"]["reason"] == "no place to move pod default/c"
    assert d["removable"] == []
    # a pod tolerating every taint, and room nowhere but on the ghost
    objs = [_n("n-1"), _n("n-2"), _p("full", "n-1", cpu="3900m"), _p("t", "n-2", cpu="1")]
    objs[-1]["spec"]["tolerations"] = [{"operator": "Exists"}]
    _, v = _verdicts(tmp_path, objs)
    assert v["n-2"]["reason"] == "no place to move pod default/t"


def test_exit_status_is_1_when_some_node_can_be_removed_0_when_none(tmp_path):
    # issue 32: "0 ... nothing removable (scale-down), 1 otherwise": a CI gate fails on capacity to reclaim
    from typer.testing import CliRunner

    from kschedcli.cli.app import app

    busy = [_n("n-1"), _n("n-2"), _p("a", "n-1", cpu="3"), _p("b", "n-2", cpu="3")]
    idle = [_n("n-1"), _n("n-2"), _p("a", "n-1", cpu="3")]
    for objs, removable, code in ((busy, [], 0), (idle, ["n-2"], 1)):
        c = tmp_path / "cluster.yaml"
        c.write_text(yaml.safe_dump_all(objs))
        answer = Session([str(c)], kubernetes_version="v1.34").scale_down()
        assert answer.to_dict()["removable"] == removable
        assert answer.exit_code() == code
        r = CliRunner().invoke(app, ["scale-down", "-c", str(c), "-o", "json"])
        assert r.exit_code == code, r.output
