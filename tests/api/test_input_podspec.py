"""Issue 11, class 7: the rest of ValidatePodCreate that bears on scheduling, for the pods a user
hands in, each refused with the API server's message (kschedcli/api/podvalidation.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small-cluster.yaml"


def pod(container: str = "", spec: str = "", resources: str = "requests: {cpu: 100m}") -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n"
        f"    resources: {{{resources}}}\n{container}{spec}"
    )


CASES = [
    # container names and ports
    (pod(spec="  - name: c\n    image: j\n"), 'spec.containers[1].name: Duplicate value: "c"'),
    (pod(spec="  initContainers:\n  - name: c\n    image: j\n"), 'spec.initContainers[0].name: Duplicate value: "c"'),
    (
        pod(spec="  - name: Web_1\n    image: j\n"),
        'spec.containers[1].name: Invalid value: "Web_1": a lowercase RFC 1123 label must consist of',
    ),
    (
        pod("    ports: [{containerPort: 70000}]\n"),
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
    ),
    (pod("    ports: [{containerPort: 0}]\n"), "spec.containers[0].ports[0].containerPort: Required value"),
    (
        pod("    ports: [{containerPort: 80, hostPort: 65536}]\n"),
        "spec.containers[0].ports[0].hostPort: Invalid value: 65536: must be between 1 and 65535, inclusive",
    ),
    (
        pod("    ports: [{containerPort: 80, protocol: HTTP}]\n"),
        'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    ),
    (
        pod("    ports: [{containerPort: 80, name: web--port}]\n"),
        'spec.containers[0].ports[0].name: Invalid value: "web--port": must not contain consecutive hyphens',
    ),
    (
        pod("    ports: [{containerPort: 80, name: web}, {containerPort: 81, name: web}]\n"),
        'spec.containers[0].ports[1].name: Duplicate value: "web"',
    ),
    (
        pod("    ports: [{containerPort: 80, hostPort: 8080}, {containerPort: 81, hostPort: 8080}]\n"),
        'spec.containers[0].ports[1].hostPort: Duplicate value: "TCP//8080"',
    ),
    (
        pod("    ports: [{containerPort: 80, hostPort: 8080}]\n", "  hostNetwork: true\n"),
        "spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork`",
    ),
    (
        pod(spec="  initContainers:\n  - name: s\n    image: j\n    restartPolicy: OnFailure\n"),
        'spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
    ),
    # resources
    (
        pod(resources="requests: {cpu: 2}, limits: {cpu: 1}"),
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ),
    (
        pod(resources="requests: {example.com/gpu: 1}, limits: {example.com/gpu: 2}"),
        'spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
    ),
    (
        pod(resources="requests: {example.com/gpu: 1}"),
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
    ),
    (
        pod(resources="limits: {example.com/gpu: 500m}"),
        "spec.containers[0].resources.limits.example.com/gpu: Invalid value: 500m: must be an integer",
    ),
    (
        pod(resources="requests: {cpus: 1}"),
        'spec.containers[0].resources.requests.cpus: Invalid value: "cpus": must be a standard resource type or fully '
        "qualified",
    ),
    (
        pod(resources="requests: {pods: 1}"),
        'spec.containers[0].resources.requests.pods: Invalid value: "pods": must be a standard resource for containers',
    ),
    (
        pod(resources="limits: {hugepages-2Mi: 2Mi}"),
        "spec.containers[0].resources: Forbidden: HugePages require cpu or memory",
    ),
    # tolerations
    (
        pod(spec="  tolerations: [{key: a, operator: In, value: b}]\n"),
        'spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
    ),
    (
        pod(spec="  tolerations: [{operator: Equal, value: b}]\n"),
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty',
    ),
    (
        pod(spec="  tolerations: [{key: a, operator: Exists, value: b}]\n"),
        "spec.tolerations[0].operator: Invalid value: \"b\": value must be empty when `operator` is 'Exists'",
    ),
    (
        pod(spec="  tolerations: [{key: a, operator: Exists, effect: NoSchedul}]\n"),
        'spec.tolerations[0].effect: Unsupported value: "NoSchedul": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
    (
        pod(spec="  tolerations: [{key: 'a b', operator: Exists}]\n"),
        'spec.tolerations[0].key: Invalid value: "a b": name part must consist of alphanumeric characters',
    ),
    # topology spread
    (
        pod(
            spec="  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway,"
            " minDomains: 2}\n"
        ),
        "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if "
        "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
    ),
    (
        pod(
            spec="  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
            " minDomains: 0}\n"
        ),
        "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero",
    ),
    (
        pod(spec="  topologySpreadConstraints:\n  - {topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"),
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",  # (unset: Go's 0)
    ),
    (
        pod(
            spec="  topologySpreadConstraints:\n  - {maxSkew: -2, topologyKey: zone,"
            " whenUnsatisfiable: DoNotSchedule}\n"
        ),
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: -2: must be greater than zero",
    ),
    (
        pod(
            spec="  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
            "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
        ),
        'spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"',
    ),
    (
        pod(
            spec="  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
            " nodeTaintsPolicy: Always}\n"
        ),
        'spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Always": supported values: "Honor", '
        '"Ignore"',
    ),
    (
        pod(
            spec="  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
            " labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [app]}\n"
        ),
        'spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys '
        "and labelSelector",
    ),
    # affinity, node name
    (
        pod(
            spec="  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
            "      - {weight: 0, preference: {matchExpressions: [{key: a, operator: Exists}]}}\n"
        ),
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: "
        "must be in the range 1-100",
    ),
    (
        pod(
            spec="  affinity:\n    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
            "      - {weight: 101, podAffinityTerm: {topologyKey: zone}}\n"
        ),
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101:"
        " must be in the range 1-100",
    ),
    (
        pod(
            spec="  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        nodeSelectorTerms: []\n"
        ),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value:"
        " must have at least one node selector term",
    ),
    (pod(spec="  nodeName: Node_A\n"), 'spec.nodeName: Invalid value: "Node_A": a lowercase RFC 1123 subdomain'),
]


@pytest.mark.parametrize("text,message", CASES)
def test_pod_specs_the_api_server_refuses_are_one_line_with_its_message(tmp_path, text, message):
    f = tmp_path / "pod.yaml"
    f.write_text(text)
    r = CliRunner().invoke(app, ["explain", str(f), "-c", str(SMALL)])
    assert r.exit_code == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.output
    assert r.stderr.startswith(f"ksched: {f}: Pod default/p: {message}"), r.stderr


@pytest.mark.parametrize(
    "text",
    [
        pod(resources="requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: 1, memory: 1Gi}"),
        pod(resources="limits: {example.com/gpu: 1}"),  # the request is defaulted from the limit
        pod(resources="requests: {hugepages-2Mi: 2Mi, memory: 1Gi}, limits: {hugepages-2Mi: 2Mi}"),
        pod("    ports: [{containerPort: 80, hostPort: 80, name: http}, {containerPort: 80, protocol: UDP}]\n"),
        pod(spec="  initContainers:\n  - name: s\n    image: j\n    restartPolicy: Always\n"),
        pod(spec="  tolerations: [{operator: Exists}, {key: a, value: b, effect: NoExecute, tolerationSeconds: 5}]\n"),
    ],
)
def test_pod_specs_the_api_server_takes_pass(tmp_path, text):
    f = tmp_path / "pod.yaml"
    f.write_text(text)
    r = CliRunner().invoke(app, ["explain", str(f), "-c", str(SMALL)])
    assert r.exit_code in (0, 1), r.output
