"""Issue 28, item 5: a cluster whose release ksched does not reproduce follows the nearest supported
release (older clusters the oldest, newer ones the newest), and says so as a warning before the
answer and in the JSON (kubernetesVersionChosenBy.warning), not only in the footer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "fixtures" / "exported" / "cluster.yaml"
PENDING = str(ROOT / "fixtures" / "exported" / "checkout-pending.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")


def _cluster_at(tmp_path, kubelet: str) -> str:
    f = tmp_path / "c.yaml"
    f.write_text(CLUSTER.read_text().replace("v1.34.2-eks-1a2b3c4", kubelet))
    return str(f)


@pytest.mark.parametrize(
    "kubelet,follows,minor,which",
    [
        ("v1.31.9-eks-1a2b3c4", "v1.33.0", "v1.31", "older"),
        ("v1.32.0", "v1.33.0", "v1.32", "older"),
        ("v1.37.1", "v1.36.2", "v1.37", "newer"),  # the newest Kubernetes release (2026-11)
    ],
)
def test_unsupported_cluster_release_warns_and_follows_the_nearest(tmp_path, kubelet, follows, minor, which):
    cluster = _cluster_at(tmp_path, kubelet)
    r = CliRunner().invoke(app, ["explain", PENDING, "-c", cluster, "-o", "json"])
    warning = (
        f"the cluster runs Kubernetes {minor} (its newest kubelet), {which} than any release ksched reproduces "
        f"(v1.33 to v1.36): the answer follows kube-scheduler {follows}, the nearest, and may differ from what "
        "the cluster's own kube-scheduler does"
    )
    assert r.stderr == f"ksched: warning: {warning}\n"
    doc = json.loads(r.stdout)
    assert doc["kubernetesVersion"] == follows
    assert doc["kubernetesVersionChosenBy"]["warning"] == warning
    # and again in a second command of the same process
    again = CliRunner().invoke(app, ["explain", PENDING, "-c", cluster])
    assert again.stderr.startswith("ksched: warning: the cluster runs Kubernetes")


def test_warning_comes_before_the_verdict_on_a_terminal_stream(tmp_path):
    cluster = _cluster_at(tmp_path, "v1.31.9")
    p = subprocess.run(
        [sys.executable, "-m", "kschedcli", "explain", PENDING, "-c", cluster],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, as a terminal shows both
        check=False,
    )
    out = p.stdout.decode()
    assert out.index("ksched: warning: the cluster runs Kubernetes v1.31") < out.index("Needs preemption")


def test_supported_release_has_no_warning(tmp_path):
    cluster = _cluster_at(tmp_path, "v1.35.2")
    r = CliRunner().invoke(app, ["explain", PENDING, "-c", cluster, "-o", "json"])
    assert r.stderr == ""
    assert "warning" not in json.loads(r.stdout)["kubernetesVersionChosenBy"]


def test_drain_and_schedule_warn_too(tmp_path):
    cluster = _cluster_at(tmp_path, "v1.30.1")
    for args in (["schedule", WEB, "-c", cluster], ["drain", "ip-10-0-2-41", "-c", cluster]):
        r = CliRunner().invoke(app, args)
        assert r.stderr.startswith("ksched: warning: the cluster runs Kubernetes v1.30"), (args, r.output)
