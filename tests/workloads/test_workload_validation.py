"""Workloads a person writes are validated as the API server validates them (issue 29): one line
with its field path and message, exit status 2, never a traceback; objects exported from a server
are read as they are."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")

API = {
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "ReplicaSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "ReplicationController": "v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
}
CONTAINERS = [{"name": "c", "image": "i"}]


def schedule(tmp_path, obj: dict):
    f = tmp_path / "w.yaml"
    f.write_text(yaml.safe_dump(obj))
    return CliRunner().invoke(app, ["schedule", str(f), "-c", SMALL]), str(f)


def refused(tmp_path, obj: dict) -> str:
    r, f = schedule(tmp_path, obj)
    assert r.exit_code == 2, r.output
    assert r.stdout == "" and r.stderr.count("\n") == 1 and "Traceback" not in r.output, r.output
    prefix = f"ksched: {f}: {obj['kind']} w: "
    assert r.stderr.startswith(prefix), r.stderr
    return r.stderr[len(prefix) :].rstrip("\n")


def workload(kind: str, spec: dict, **meta) -> dict:
    return {"apiVersion": API[kind], "kind": kind, "metadata": {"name": "w", **meta}, "spec": spec}


def template(labels: dict | None = None, **spec) -> dict:
    t: dict = {"spec": {"containers": CONTAINERS, **spec}}
    if labels is not None:
        t["metadata"] = {"labels": labels}
    return t


@pytest.mark.parametrize(
    "kind, message",
    [
        ("Deployment", "spec.selector: Required value"),
        ("ReplicaSet", "spec.selector: Required value"),
        ("StatefulSet", "spec.selector: Required value"),
        ("ReplicationController", "spec.selector: Required value"),
        (
            "DaemonSet",
            "spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`",
        ),
        ("Job", "spec.template.spec.containers: Required value"),
        ("CronJob", "spec.schedule: Required value"),
    ],
)
def test_an_empty_spec_is_one_line_in_the_api_servers_words(tmp_path, kind, message):
    assert refused(tmp_path, workload(kind, {})) == message


def test_a_cronjob_without_job_template(tmp_path):
    assert refused(tmp_path, workload("CronJob", {"schedule": "*/5 * * * *"})) == (
        "spec.jobTemplate.spec.template.spec.containers: Required value"
    )


def test_a_template_without_containers(tmp_path):
    spec = {"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "a"}}}}
    assert refused(tmp_path, workload("Deployment", spec)) == "spec.template.spec.containers: Required value"


SEL = {"matchLabels": {"app": "a"}}


@pytest.mark.parametrize(
    "spec, message",
    [
        # missing: a nil selector selects nothing
        (
            {"template": template({"app": "a"})},
            'spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`',
        ),
        (
            {"selector": {}, "template": template({"app": "a"})},
            "spec.selector: Invalid value: {}: empty selector is invalid for daemonset",
        ),
        (
            {"selector": SEL, "template": template({"app": "b", "tier": "x"})},
            'spec.template.metadata.labels: Invalid value: {"app":"b","tier":"x"}: '
            "`selector` does not match template `labels`",
        ),
        (
            {
                "selector": {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["a"]}]},
                "template": template({"app": "a"}),
            },
            'spec.selector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator',
        ),
        (
            {"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}, "template": template({"app": "a"})},
            "spec.selector.matchExpressions[0].values: Required value: "
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            {
                "selector": {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["a"]}]},
                "template": template({"app": "a"}),
            },
            "spec.selector.matchExpressions[0].values: Forbidden: "
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            {"selector": SEL, "template": template({"app": "a"}, restartPolicy="Never")},
            'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        ),
    ],
)
def test_daemonset_selectors_as_the_api_server_checks_them(tmp_path, spec, message):
    assert refused(tmp_path, workload("DaemonSet", spec)) == message


def test_deployment_selector_checks(tmp_path):
    assert refused(tmp_path, workload("Deployment", {"selector": {}, "template": template({"app": "a"})})) == (
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment"
    )
    assert refused(tmp_path, workload("StatefulSet", {"selector": {}, "template": template({"app": "a"})})) == (
        "spec.selector: Invalid value: {}: empty selector is not valid for statefulset."
    )
    assert refused(tmp_path, workload("Deployment", {"selector": SEL, "template": template({"app": "b"})})) == (
        'spec.template.metadata.labels: Invalid value: {"app":"b"}: `selector` does not match template `labels`'
    )


def job_template(**spec) -> dict:
    return {"spec": {"template": {"spec": {"containers": CONTAINERS, **spec}}}}


@pytest.mark.parametrize(
    "schedule_, message",
    [
        ("", "spec.schedule: Required value"),
        ("garbage", 'spec.schedule: Invalid value: "garbage": expected exactly 5 fields, found 1: [garbage]'),
        ("61 * * * *", 'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61'),
        ("0 0 0 * *", 'spec.schedule: Invalid value: "0 0 0 * *": beginning of range (0) below minimum (1): 0'),
        ("0 0 * 13 *", 'spec.schedule: Invalid value: "0 0 * 13 *": end of range (13) above maximum (12): 13'),
        ("*/0 * * * *", 'spec.schedule: Invalid value: "*/0 * * * *": step of range should be a positive number: */0'),
        (
            "x * * * *",
            'spec.schedule: Invalid value: "x * * * *": '
            'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax',
        ),
        ("@sometimes", 'spec.schedule: Invalid value: "@sometimes": unrecognized descriptor: @sometimes'),
        (
            "CRON_TZ=UTC 0 * * * *",
            'spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": '
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ),
    ],
)
def test_cronjob_schedules_as_the_api_server_parses_them(tmp_path, schedule_, message):
    obj = workload("CronJob", {"schedule": schedule_, "jobTemplate": job_template(restartPolicy="OnFailure")})
    assert refused(tmp_path, obj) == message


def test_good_schedules_parse():
    from kschedcli.workloads.validation import cron_schedule_error

    for s in ("*/5 * * * *", "0 3 * * 1-5", "15,45 9-17 1 jan-dec mon", "@hourly", "@every 1h30m", "0 0 1 */2 *"):
        assert cron_schedule_error(s) == "", s


def test_a_job_restarting_always_is_refused(tmp_path):
    obj = workload("Job", {"template": {"spec": {"containers": CONTAINERS}}})
    assert (
        refused(tmp_path, obj) == 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    )
    obj = workload("CronJob", {"schedule": "@daily", "jobTemplate": job_template()})
    assert refused(tmp_path, obj) == (
        'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    )


def test_valid_workloads_still_schedule(tmp_path):
    for obj in (
        workload("Deployment", {"selector": SEL, "template": template({"app": "a"})}),
        workload("DaemonSet", {"selector": SEL, "template": template({"app": "a"})}),
        workload("StatefulSet", {"selector": SEL, "serviceName": "s", "template": template({"app": "a"})}),
        workload("Job", {"template": {"spec": {"containers": CONTAINERS, "restartPolicy": "Never"}}}),
        workload("CronJob", {"schedule": "*/5 * * * *", "jobTemplate": job_template(restartPolicy="OnFailure")}),
    ):
        r, _ = schedule(tmp_path, obj)
        assert r.exit_code == 0, r.output


def test_an_object_exported_from_a_server_is_read_leniently(tmp_path):
    from kschedcli.workloads.validation import written_by_server

    # a server wrote it (uid, resourceVersion, status): its validation happened there
    obj = workload(
        "DaemonSet",
        {"template": template({"app": "a"})},
        uid="0b5f8a4e-1111-2222-3333-444455556666",
        resourceVersion="12345",
    )
    assert written_by_server(obj)
    r, _ = schedule(tmp_path, obj)
    assert r.exit_code == 0, r.output
    assert not written_by_server(workload("DaemonSet", {}))
