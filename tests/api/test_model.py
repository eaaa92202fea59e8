import pytest
from builders import pod

from kschedcli.api.model import Pod
from kschedcli.errors import FieldError


def test_requests_default_from_limits():
    p = pod("p", limits={"cpu": "2", "memory": "1Gi"})
    assert p.requests.milli_cpu == 2000
    assert p.requests.memory == 1 << 30


def test_init_containers_take_the_max_and_sidecars_add():
    p = pod(
        "p",
        containers=[{"name": "a", "resources": {"requests": {"cpu": "1"}}}],
        init_containers=[
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
            {"name": "init", "resources": {"requests": {"cpu": "3"}}},
        ],
    )
    # init container runs beside the sidecar: 3 + 0.5 = 3.5 > 1 + 0.5
    assert p.requests.milli_cpu == 3500


def test_overhead_is_added_and_besteffort_gets_nonzero_scoring_defaults():
    p = pod("p", spec={"overhead": {"cpu": "250m"}}, containers=[{"name": "a"}])
    assert p.requests.milli_cpu == 250
    assert p.non0_cpu == 350
    assert p.non0_mem == 200 * 1024 * 1024


def test_host_network_defaults_host_port_and_protocol():
    p = pod("p", spec={"hostNetwork": True}, containers=[{"name": "a", "ports": [{"containerPort": 8080}]}])
    assert p.host_ports == [("", "TCP", 8080)]


def test_priority_from_class_and_global_default():
    classes = {"high": (1000, None), "never": (5, "Never")}
    raw = {"metadata": {"name": "p"}, "spec": {"containers": [], "priorityClassName": "never"}}
    p = Pod(raw, classes, None)
    assert (p.priority, p.preemption_policy) == (5, "Never")
    p = Pod({"metadata": {"name": "q"}, "spec": {"containers": []}}, classes, ("high", 1000, None))
    assert (p.priority, p.priority_class_name) == (1000, "high")
    with pytest.raises(FieldError):
        Pod({"metadata": {"name": "r"}, "spec": {"containers": [], "priorityClassName": "nope"}}, classes, None)


def test_bad_quantity_names_the_container_field():
    with pytest.raises(FieldError) as e:
        pod("p", requests={"cpu": "12XB"})
    assert e.value.field == "spec.containers[0].resources.requests.cpu"


def test_running_pod_counts_its_resized_requests():
    # InPlacePodVerticalScaling: the larger of spec, status and allocated resources counts
    raw = {
        "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "a", "resources": {"requests": {"cpu": "2"}}, "allocatedResources": {"cpu": "1500m"}}
            ],
        },
    }
    assert Pod(raw).requests.milli_cpu == 2000
    raw["status"]["conditions"] = [{"type": "PodResizePending", "reason": "Infeasible"}]
    raw["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "4"
    assert Pod(raw).requests.milli_cpu == 2000


def test_pod_level_requests_default_from_containers_then_limits():
    p = pod(
        "p",
        containers=[{"name": "a", "resources": {"requests": {"cpu": "1"}}}],
        spec={"resources": {"limits": {"cpu": "4", "memory": "2Gi"}}},
    )
    # cpu: the containers' aggregate (1); memory: no container asks, so the pod-level limit
    assert p.requests.milli_cpu == 1000
    assert p.requests.memory == 2 << 30


def test_extended_resource_names_follow_v1helper():
    from kschedcli.api.model import is_extended_resource, is_scalar_resource

    assert is_extended_resource("example.com/foo")
    assert not is_extended_resource("kubernetes.io/foo")
    assert not is_extended_resource("xkubernetes.io/foo")  # contains kubernetes.io/: native
    assert not is_extended_resource("cpu")
    assert not is_extended_resource("requests.example.com/foo")
    assert is_scalar_resource("hugepages-2Mi") and is_scalar_resource("xkubernetes.io/foo")


def test_namespaced_objects_without_namespace_land_in_default(tmp_path):
    from kschedcli.inputs.cluster import load_cluster

    f = tmp_path / "c.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: {app: a}}\n---\n"
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\n"
    )
    c = load_cluster([str(f)])
    assert c.get("Service", "default", "s") is not None
    assert c.get("StorageClass", "", "sc") is not None
