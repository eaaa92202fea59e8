"""--kubernetes-version: how a release is chosen, and each difference between releases pinned on
small hand-built clusters (reasons to the character, scores by hand)."""

from __future__ import annotations

import json

import pytest
from builders import fresh_state, node, plugin, pod, scheduler
from typer.testing import CliRunner

from kschedcli.api.model import Node, Pod
from kschedcli.cli.app import app
from kschedcli.config.scheduler import SchedulerConfig, build_profile, default_config
from kschedcli.config.versions import REFERENCE, RELEASES, UnsupportedVersion, choose, parse
from kschedcli.framework.status import UNRESOLVABLE, UNSCHEDULABLE
from kschedcli.inputs.cluster import Cluster
from kschedcli.plugins import REGISTRY
from kschedcli.scheduling.scheduler import Scheduler

V133, V134, V135, V136 = (RELEASES[v] for v in ("v1.33", "v1.34", "v1.35", "v1.36"))


def _node_with_kubelet(name, version):
    n = node(name)
    raw = dict(n.raw)
    raw["status"] = {**raw["status"], "nodeInfo": {"kubeletVersion": version}}
    return Node(raw)


# -- choosing the release ---------------------------------------------------------------------


def test_parse_takes_minor_and_patch_versions_and_refuses_others():
    assert parse("v1.36") is V136 and parse("1.33") is V133 and parse("v1.35.2") is V135
    for bad in ("v1.32", "v1.37", "1", "latest", "v2.0"):
        with pytest.raises(UnsupportedVersion) as e:
            parse(bad)
        assert str(e.value) == (
            f"--kubernetes-version: unsupported Kubernetes version {bad!r}: ksched reproduces "
            "v1.33, v1.34, v1.35, v1.36"
        )


def test_choice_flag_then_cluster_then_newest_kubelet_then_default():
    nodes = [_node_with_kubelet("a", "v1.33.4"), _node_with_kubelet("b", "v1.35.0-eks-1a2b3c"), node("c")]
    assert (choose("v1.34", nodes).release, choose("v1.34", nodes).source) == (V134, "flag")
    c = choose(None, nodes, server_version="v1.36.1")
    assert (c.release, c.source) == (V136, "cluster")
    c = choose(None, nodes)
    assert (c.release, c.source, c.reason) == (V135, "nodes", "the newest kubelet among the nodes is v1.35")
    # no node says: the release ksched has always followed, so hand-written snapshots keep their answers
    c = choose(None, [node("x")])
    assert (c.release, c.source) == (REFERENCE, "default") and REFERENCE is V134


def test_an_unsupported_kubelet_version_falls_to_the_nearest_supported():
    # issue 28, item 5: an older cluster follows the oldest supported release, a newer one the
    # newest, each with a warning (v1.37 is a released Kubernetes that ksched does not reproduce)
    for v, release, which in (
        ("v1.37.0", V136, "newer"),
        ("v1.40.1", V136, "newer"),
        ("v1.30.2+k3s1", V133, "older"),
        ("v1.31.5-eks-1a2b3c", V133, "older"),
    ):
        c = choose(None, [_node_with_kubelet("a", v)])
        assert (c.release, c.source) == (release, "nodes") and "not a supported release" in c.reason
        minor = v.lstrip("v").rsplit(".", v.count(".") - 1)[0]
        assert c.warning == (
            f"the cluster runs Kubernetes v{minor} (its newest kubelet), {which} than any release ksched "
            f"reproduces (v1.33 to v1.36): the answer follows kube-scheduler {release.patch_release}, the "
            "nearest, and may differ from what the cluster's own kube-scheduler does"
        )
        assert c.as_doc()["warning"] == c.warning
    c = choose(None, [], server_version="v1.31.0")
    assert c.release is V133 and "(its API server)" in (c.warning or "")
    assert choose(None, [_node_with_kubelet("a", "v1.35.1")]).warning is None
    assert "warning" not in choose(None, [_node_with_kubelet("a", "v1.35.1")]).as_doc()


# -- default profiles and args ----------------------------------------------------------------


def _multipoint(release):
    return dict(release.default_multipoint())


def test_default_profiles_per_release():
    assert "DynamicResources" not in _multipoint(V133)
    assert _multipoint(V134)["DynamicResources"] == 0
    assert _multipoint(V135)["DynamicResources"] == 2 and "NodeDeclaredFeatures" not in _multipoint(V135)
    assert "NodeDeclaredFeatures" in _multipoint(V136)
    prof = {r.name: default_config(REGISTRY, r).profiles[0] for r in (V133, V134, V135, V136)}
    assert "DynamicResources" not in prof["v1.33"].points["postFilter"]
    assert "DynamicResources" not in prof["v1.34"].score_weights  # it scores from v1.35 on
    assert prof["v1.35"].score_weights["DynamicResources"] == 2
    assert prof["v1.36"].points["filter"][-1] == "NodeDeclaredFeatures"
    assert "DynamicResources" not in prof["v1.33"].args
    assert prof["v1.34"].args["DynamicResources"] == {"filterTimeout": "10s"}
    assert prof["v1.36"].args["DynamicResources"] == {"filterTimeout": "10s", "bindingTimeout": "10m0s"}


def test_a_plugin_a_release_does_not_have_is_refused():
    from kschedcli.errors import InputError

    raw = {"schedulerName": "s", "plugins": {"multiPoint": {"enabled": [{"name": "NodeDeclaredFeatures"}]}}}
    with pytest.raises(InputError, match='"NodeDeclaredFeatures" does not exist'):
        build_profile(raw, "c.yaml", REGISTRY, V134)
    assert "NodeDeclaredFeatures" in build_profile(raw, "c.yaml", REGISTRY, V135).points["filter"]


# -- plugin behaviour -------------------------------------------------------------------------


def _filter(sched, name, p, node_name):
    pl = plugin(sched, name)
    state = fresh_state()
    _, st = pl.pre_filter(state, p, sched.snapshot.list())
    if st is not None and st.is_skip():
        return "skip"
    return pl.filter(state, p, sched.snapshot.get(node_name))


def test_fit_request_above_whole_allocatable_is_unresolvable_from_v134():
    big = pod("big", requests={"cpu": "8"})
    for release, code in ((V133, UNSCHEDULABLE), (V134, UNRESOLVABLE), (V136, UNRESOLVABLE)):
        st = _filter(scheduler([node("n1", cpu="4")], release=release), "NodeResourcesFit", big, "n1")
        assert (st.code, st.reasons) == (code, ["Insufficient cpu"])
    # a request the node could hold once emptied stays Unschedulable in every release
    busy = [pod("b", requests={"cpu": "3"}, node_name="n1")]
    for release in (V133, V134):
        st = _filter(
            scheduler([node("n1", cpu="4")], busy, release=release),
            "NodeResourcesFit",
            pod("p", requests={"cpu": "2"}),
            "n1",
        )
        assert st.code == UNSCHEDULABLE


def test_sidecar_host_ports_count_from_v134():
    sidecar = [
        {
            "name": "proxy",
            "image": "envoy",
            "restartPolicy": "Always",
            "ports": [{"containerPort": 15001, "hostPort": 15001}],
        }
    ]
    bound = pod("bound", node_name="n1", init_containers=sidecar)
    wants = pod("wants", containers=[{"name": "c", "image": "app", "ports": [{"containerPort": 1, "hostPort": 15001}]}])
    reason = ["node(s) didn't have free ports for the requested pod ports"]
    assert _filter(scheduler([node("n1")], [bound], release=V134), "NodePorts", wants, "n1").reasons == reason
    assert (
        _filter(
            scheduler([node("n1")], [pod("bound", node_name="n1", init_containers=sidecar)], release=V133),
            "NodePorts",
            wants,
            "n1",
        )
        is None
    )
    # the pod's own sidecar port: checked from v1.34, ignored (PreFilter skips: no port) in v1.33
    own = pod("own", init_containers=sidecar)
    blocker = [
        pod(
            "b",
            node_name="n1",
            containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 1, "hostPort": 15001}]}],
        )
    ]
    assert _filter(scheduler([node("n1")], blocker, release=V134), "NodePorts", own, "n1").reasons == reason
    own = pod("own", init_containers=sidecar)
    s133 = scheduler([node("n1")], blocker, release=V133)
    s133.cluster.follow(choose("v1.33"))
    own.follow_release(V133)
    assert _filter(s133, "NodePorts", own, "n1") == "skip"


def test_untolerated_taint_reason_names_the_taint_until_v135():
    tainted = [node("n1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}])]
    for release, reason in (
        (V133, "node(s) had untolerated taint {gpu: true}"),
        (V134, "node(s) had untolerated taint {gpu: true}"),
        (V135, "node(s) had untolerated taint(s)"),
        (V136, "node(s) had untolerated taint(s)"),
    ):
        s = scheduler(tainted, release=release)
        st = plugin(s, "TaintToleration").filter(fresh_state(), pod("p"), s.snapshot.get("n1"))
        assert (st.code, st.reasons) == (UNRESOLVABLE, [reason])


def _rwop_scheduler(release):
    claim = {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default", "uid": "u1"},
        "spec": {
            "accessModes": ["ReadWriteOncePod"],
            "storageClassName": "x",
            "volumeName": "pv1",
            "resources": {"requests": {"storage": "1Gi"}},
        },
        "status": {"phase": "Bound"},
    }
    vol = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}
    cluster = Cluster()
    cluster.nodes = [node("n1")]
    cluster.pods = [pod("user", node_name="n1", spec=vol)]
    cluster.objects["PersistentVolumeClaim"][("default", "data")] = claim
    prof = build_profile({"schedulerName": "default-scheduler"}, "t", REGISTRY, release)
    return Scheduler(cluster, SchedulerConfig(profiles=[prof], release=release)), pod("p", spec=vol)


def test_read_write_once_pod_conflict_wording_changed_in_v134():
    for release, reason in (
        (V133, "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"),
        (
            V134,
            "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
            "in-use by another pod",
        ),
    ):
        s, p = _rwop_scheduler(release)
        st = _filter(s, "VolumeRestrictions", p, "n1")
        assert (st.code, st.reasons) == (UNSCHEDULABLE, [reason])


def test_balanced_allocation_scores_the_change_in_balance_from_v136():
    # n1 (4 cpu, 8Gi) already holds 2 cpu and 1Gi: cpu-heavy. The pod asks 0 cpu-ish, 3Gi memory.
    bound = [pod("b", requests={"cpu": "2", "memory": "1Gi"}, node_name="n1")]
    p = pod("p", requests={"cpu": "100m", "memory": "3Gi"})
    scores = {}
    for release in (V135, V136):
        s = scheduler([node("n1")], bound, release=release)
        pl = plugin(s, "NodeResourcesBalancedAllocation")
        state = fresh_state()
        pl.pre_score(state, p, s.snapshot.list())
        scores[release.name] = pl.score(state, p, s.snapshot.get("n1"))[0]
    # with the pod: cpu 2.1/4 = 0.525, memory 4/8 = 0.5 -> std 0.0125 -> 98
    # without: cpu 0.5, memory 0.125 -> std 0.1875 -> 81; v1.36: 50 + (50 + 98 - 81) // 2 = 83
    assert scores == {"v1.35": 98, "v1.36": 83}


def test_v133_drops_pod_level_resources_and_resource_claims():
    raw = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "a", "resources": {"requests": {"cpu": "100m"}}}],
            "resources": {"requests": {"cpu": "2"}},
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
        },
    }
    p = Pod(raw)
    assert p.requests.milli_cpu == 2000 and p.resource_claims
    p.follow_release(V134)
    assert p.requests.milli_cpu == 2000 and p.resource_claims
    p.follow_release(V133)
    assert p.requests.milli_cpu == 100 and p.resource_claims == []
    assert raw["spec"]["resources"] == {"requests": {"cpu": "2"}}  # the input is never modified


def test_dynamic_resources_idle_without_its_gate_and_scores_zero_from_v135():
    s = scheduler([node("n1"), node("n2")], release=V133)
    assert "DynamicResources" not in s.frameworks["default-scheduler"].plugins
    s = scheduler([node("n1"), node("n2")], release=V135)
    r = s.schedule(pod("p", requests={"cpu": "1"}))
    assert {n: (x["DynamicResources"].raw, x["DynamicResources"].weight) for n, x in r.scores.items()} == {
        "n1": (0, 2),
        "n2": (0, 2),
    }
    s = scheduler([node("n1"), node("n2")], release=V134)
    r = s.schedule(pod("p", requests={"cpu": "1"}))
    assert all("DynamicResources" not in x for x in r.scores.values())


def test_dynamic_resources_not_owner_message_reworded_in_v136():
    claim = {
        "kind": "ResourceClaim",
        "apiVersion": "resource.k8s.io/v1",
        "metadata": {
            "name": "p-gpu",
            "namespace": "default",
            "ownerReferences": [
                {"uid": "someone-else", "controller": True, "kind": "Pod", "name": "q", "apiVersion": "v1"}
            ],
        },
        "spec": {"devices": {"requests": []}},
    }
    raw = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
        "spec": {
            "containers": [{"name": "c", "image": "a"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
        },
        "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu"}]},
    }
    out = {}
    for release in (V135, V136):
        cluster = Cluster()
        cluster.nodes = [node("n1")]
        cluster.objects["ResourceClaim"][("default", "p-gpu")] = claim
        cluster.follow(choose(release.name))
        prof = build_profile({"schedulerName": "default-scheduler"}, "t", REGISTRY, release)
        s = Scheduler(cluster, SchedulerConfig(profiles=[prof], release=release))
        r = s.schedule(Pod(raw))
        out[release.name] = (r.pre_filter.code, r.message)
    assert out == {
        "v1.35": (UNRESOLVABLE, "ResourceClaim default/p-gpu was not created for pod default/p (pod is not owner)"),
        "v1.36": (UNRESOLVABLE, "ResourceClaim default/p-gpu was not created for Pod default/p (Pod is not owner)"),
    }


def test_node_declared_features_filters_pods_that_need_one_from_v136():
    restart_all = {
        "containers": [
            {
                "name": "c",
                "image": "a",
                "restartPolicy": "Never",
                "restartPolicyRules": [
                    {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
                ],
            }
        ]
    }
    declared = node("yes")
    raw = dict(declared.raw)
    raw["status"] = {**raw["status"], "declaredFeatures": ["RestartAllContainersOnContainerExits"]}
    s = scheduler([Node(raw), node("no")], release=V136)
    p = pod("p", spec=restart_all)
    assert _filter(s, "NodeDeclaredFeatures", p, "yes") is None
    st = _filter(s, "NodeDeclaredFeatures", p, "no")
    assert (st.code, st.reasons) == (UNRESOLVABLE, ["node(s) didn't match Pod's required features"])
    assert _filter(s, "NodeDeclaredFeatures", pod("plain"), "no") == "skip"


# -- the command line -------------------------------------------------------------------------


def test_cli_names_the_release_it_followed_and_why(tmp_path):
    runner = CliRunner()
    base = ["schedule", "fixtures/pods/web.yaml", "-c", "fixtures/small-cluster.yaml"]
    doc = json.loads(runner.invoke(app, [*base, "-o", "json"]).stdout)
    assert doc["kubernetesVersion"] == "v1.34.1"
    assert doc["kubernetesVersionChosenBy"] == {"source": "default", "reason": "no node reports a kubelet version"}
    doc = json.loads(runner.invoke(app, [*base, "-o", "json", "--kubernetes-version", "v1.36"]).stdout)
    assert doc["kubernetesVersion"] == "v1.36.2"
    assert doc["kubernetesVersionChosenBy"] == {"source": "flag", "reason": "--kubernetes-version v1.36"}
    out = runner.invoke(app, [*base, "--no-color", "--kubernetes-version", "v1.33"], env={"COLUMNS": "200"}).stdout
    assert "ksched follows kube-scheduler v1.33.0 (flag: --kubernetes-version v1.33)" in out
    doc = json.loads(
        runner.invoke(
            app,
            [
                "explain",
                "fixtures/pods/web.yaml",
                "-c",
                "fixtures/small-cluster.yaml",
                "-o",
                "json",
                "--kubernetes-version",
                "1.35",
            ],
        ).stdout
    )
    assert doc["kubernetesVersion"] == "v1.35.7"


def test_cli_takes_the_nodes_kubelet_version(tmp_path):
    import yaml

    with open("fixtures/small-cluster.yaml") as f:
        docs = list(yaml.safe_load_all(f))
    for d in docs:
        if d and d.get("kind") == "Node":
            d.setdefault("status", {})["nodeInfo"] = {"kubeletVersion": "v1.35.3"}
    snap = tmp_path / "cluster.yaml"
    snap.write_text(yaml.safe_dump_all(docs))
    doc = json.loads(
        CliRunner().invoke(app, ["schedule", "fixtures/pods/web.yaml", "-c", str(snap), "-o", "json"]).stdout
    )
    assert doc["kubernetesVersion"] == "v1.35.7"
    assert doc["kubernetesVersionChosenBy"] == {
        "source": "nodes",
        "reason": "the newest kubelet among the nodes is v1.35",
    }


def test_cli_unsupported_version_is_one_line_and_exit_2():
    r = CliRunner().invoke(
        app, ["preempt", "fixtures/pods/web.yaml", "-c", "fixtures/small-cluster.yaml", "--kubernetes-version", "v1.31"]
    )
    assert r.exit_code == 2
    assert r.stderr == (
        "ksched: --kubernetes-version: unsupported Kubernetes version 'v1.31': ksched reproduces "
        "v1.33, v1.34, v1.35, v1.36\n"
    )


def test_scenario_file_names_the_release_and_the_flag_wins(tmp_path):
    root = __import__("pathlib").Path("fixtures").resolve()
    sc = tmp_path / "s.yaml"
    sc.write_text(
        f"apiVersion: ksched.io/v1alpha1\nkind: Scenario\ncluster: [{root / 'small-cluster.yaml'}]\n"
        f"pods: [{root / 'pods' / 'web.yaml'}]\nkubernetesVersion: v1.36\n"
    )
    runner = CliRunner()
    doc = json.loads(runner.invoke(app, ["run", str(sc), "-o", "json"]).stdout)
    assert (doc["kubernetesVersion"], doc["kubernetesVersionChosenBy"]["source"]) == ("v1.36.2", "flag")
    doc = json.loads(runner.invoke(app, ["run", str(sc), "-o", "json", "--kubernetes-version", "v1.33"]).stdout)
    assert doc["kubernetesVersion"] == "v1.33.0"
