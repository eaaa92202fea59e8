"""The newer views at 80, 120 and 200 columns over a cluster of 120 nodes whose names are 60
characters long (tests/longnames.py, GKE's style): no line wider than the terminal, every node name
printed whole on one line, every cut list saying how much it cut, and the same bytes whatever
PYTHONHASHSEED is."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from longnames import NAME_LENGTH, long_cluster, write_long_cluster  # noqa: E402

WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")
BIG_POD = """apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "15", memory: 100Gi}}}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> str:
    return write_long_cluster(tmp_path_factory.mktemp("long") / "cluster.yaml")


@pytest.fixture(scope="module")
def big_pod(tmp_path_factory) -> str:
    p = tmp_path_factory.mktemp("pod") / "big.yaml"
    p.write_text(BIG_POD)
    return str(p)


def test_the_generator_makes_sixty_character_names():
    nodes = [o["metadata"]["name"] for o in long_cluster() if o["kind"] == "Node"]
    assert len(nodes) == 120 and len(set(nodes)) == 120
    assert {len(n) for n in nodes} == {NAME_LENGTH}
    assert all(n.startswith("gke-production-cluster-") for n in nodes)


def render(argv: list[str], width: int) -> str:
    env = {"COLUMNS": str(width), "NO_COLOR": None, "FORCE_COLOR": None, "TERM": "xterm-256color"}
    r = CliRunner().invoke(app, argv, env=env, catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return r.stdout


VIEWS = {
    "sweep-zone": ["sweep", "-c", "{cluster}", "--fail", "zone", "--workers", "1"],
    "sweep-node": ["sweep", "-c", "{cluster}", "--fail", "node", "-l", "pool=highmem", "--workers", "1", "--top", "3"],
    "sweep-k": ["sweep", "-c", "{cluster}", "--fail", "nodes=3", "--samples", "4", "--workers", "1"],
    "sweep-rolling": ["sweep", "-c", "{cluster}", "--rolling", "pool=highmem", "--max-unavailable", "10"],
    "scale-up": ["scale-up", "-c", "{cluster}"],
    "scale-down": ["scale-down", "-c", "{cluster}"],
    "capacity-sampling": ["capacity", WEB, "-c", "{cluster}", "--sampling", "--top", "3"],
    "explain-outlook": ["explain", WEB, "-c", "{cluster}"],
    "explain-resources": ["explain", "{big}", "-c", "{cluster}"],
    "schedule-sampling": ["schedule", "-c", "{cluster}", "--sampling", "--start-index", "7"],
}


@pytest.mark.parametrize("width", [80, 120, 200])
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_views_fit_and_keep_names_whole(cluster, big_pod, view, width):
    out = render([a.format(cluster=cluster, big=big_pod) for a in VIEWS[view]], width)
    lines = out.splitlines()
    assert lines, view
    too_wide = [x for x in lines if cell_len(x) > width]
    assert not too_wide, too_wide[:3]
    # every node name printed is whole: never cut, never broken across two lines
    printed = [m.rstrip("),;:.") for m in re.findall(r"gke-production-cluster-\S*", out)]
    short = [m for m in printed if len(m) < NAME_LENGTH]
    assert not short, short[:3]


@pytest.mark.parametrize("width", [80, 120])
def test_the_resources_breakdown_is_words_not_a_four_character_column(cluster, big_pod, width):
    out = render(["explain", big_pod, "-c", cluster], width)
    section = out[out.index("\nResources  ") : out.index("ksched follows")]
    # 71 characters of `<node> (selected)` beside the words once left them 4 columns: `Free`, `allo`, ...
    for line in section.splitlines():
        words = line.split()
        assert not (len(words) == 1 and len(words[0]) <= 4 and line.startswith(" " * 40)), section
    assert re.search(r"pod slots \d+ of 110, (✗ )?cpu [\d.]+ of 16\.0,", section), section
    assert "more nodes (--all-nodes lists them)" in section


def test_cut_lists_say_how_much_was_cut(cluster):
    r = CliRunner().invoke(
        app, ["sweep", "-c", cluster, "--fail", "node", "--workers", "1", "--top", "2", "-o", "json"]
    )
    doc = json.loads(r.stdout)
    s = doc["summary"]
    assert len(s["worst"]) <= 2 and s["worstOmitted"] == s["failing"] - len(s["worst"])
    assert s["exposureOmitted"] >= 0
    r = CliRunner().invoke(app, ["explain", WEB, "-c", cluster, "-o", "json"])
    sampling = json.loads(r.stdout)["sampling"]
    assert sampling["distinctWinners"] == len(sampling["winners"]) + sampling["winnersOmitted"]
    text = render(["sweep", "-c", cluster, "--fail", "node", "--workers", "1", "--top", "2"], 80)
    if s["failing"]:
        assert re.search(r"… \d+ more scenarios not shown", text)
    else:  # nothing worst to list: all of them counted in one line
        assert f"{s['scenarios']} scenarios, each keeping every pod running (--top 0 lists them)" in text


@pytest.mark.parametrize(
    "argv",
    [
        [
            "sweep",
            "-c",
            "{cluster}",
            "--fail",
            "nodes=2",
            "--samples",
            "3",
            "--seed",
            "5",
            "--workers",
            "2",
            "-o",
            "json",
        ],
        ["scale-down", "-c", "{cluster}", "-o", "markdown"],
        ["explain", WEB, "-c", "{cluster}", "-o", "json"],
    ],
)
def test_the_same_bytes_whatever_the_hash_seed(cluster, argv):
    outs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "COLUMNS": "100"}
        r = subprocess.run(
            [sys.executable, "-m", "kschedcli", *[a.format(cluster=cluster) for a in argv]],
            capture_output=True,
            env=env,
            timeout=600,
        )
        assert r.returncode in (0, 1), r.stderr
        outs.add(r.stdout)
    assert len(outs) == 1
