import pytest

from builders import pod
from kschedcli.errors import FieldError
from kschedcli.model import Pod


def test_requests_default_from_limits():
    p = pod("p", limits={"cpu": "2", "memory": "1Gi"})
    assert p.requests.milli_cpu == 2000
    assert p.requests.memory == 1 << 30


def test_init_containers_take_the_max_and_sidecars_add():
    p = pod("p", containers=[{"name": "a", "resources": {"requests": {"cpu": "1"}}}],
            init_containers=[
                {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
                {"name": "init", "resources": {"requests": {"cpu": "3"}}},
            ])
    # init container runs beside the sidecar: 3 + 0.5 = 3.5 > 1 + 0.5
    assert p.requests.milli_cpu == 3500


def test_overhead_is_added_and_besteffort_gets_nonzero_scoring_defaults():
    p = pod("p", spec={"overhead": {"cpu": "250m"}}, containers=[{"name": "a"}])
    assert p.requests.milli_cpu == 250
    assert p.non0_cpu == 350
    assert p.non0_mem == 200 * 1024 * 1024


def test_host_network_defaults_host_port_and_protocol():
    p = pod("p", spec={"hostNetwork": True},
            containers=[{"name": "a", "ports": [{"containerPort": 8080}]}])
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
