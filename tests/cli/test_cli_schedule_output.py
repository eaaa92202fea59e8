"""`ksched schedule -o wide | -o name`, `--no-headers`: kubectl's output flags on the schedule table.

The fixture: fixtures/pods/rollout.yaml on fixtures/prod-cluster.yaml schedules five pods in queue order:
payments needs preemption (general-c-02, one victim), two web replicas and cart are placed, reporting
is unschedulable.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
ROLLOUT = str(ROOT / "fixtures" / "pods" / "rollout.yaml")
PODS = [
    "payments/payments-worker-7f6d5c4b3-9xk2p",
    "shop/web-7d9f8b6c5d-r1",
    "shop/web-7d9f8b6c5d-r2",
    "shop/cart-64d8f7b9c-p4t7w",
    "batch/reporting-28391745-x7k2q",
]


def run(*args: str, columns: int = 80):
    env = {"COLUMNS": str(columns), "NO_COLOR": None, "FORCE_COLOR": None, "TERM": "xterm-256color"}
    return CliRunner().invoke(app, ["schedule", ROLLOUT, "--cluster", PROD, *args], env=env)


def test_name_lists_the_pods_that_are_not_schedulable_and_nothing_else():
    r = run("-o", "name")
    assert r.exit_code == 1
    assert r.stdout == "payments/payments-worker-7f6d5c4b3-9xk2p\nbatch/reporting-28391745-x7k2q\n"
    # with --allow-preemption the pod preemption would place is not a failure: not listed, and the
    # list is exactly what makes the exit status 1
    r = run("-o", "name", "--allow-preemption")
    assert r.exit_code == 1 and r.stdout == "batch/reporting-28391745-x7k2q\n"


def test_name_is_empty_when_every_pod_is_placed(tmp_path):
    text = (ROOT / "fixtures" / "pods" / "rollout.yaml").read_text()
    docs = [d for d in text.split("\n---") if "web-7d9f8b6c5d-r1" in d]
    assert len(docs) == 1
    one = tmp_path / "web.yaml"
    one.write_text(docs[0].lstrip("-\n"))
    r = CliRunner().invoke(app, ["schedule", str(one), "--cluster", PROD, "-o", "name"])
    assert r.exit_code == 0 and r.stdout == ""


def test_wide_adds_score_feasible_nominated_and_victims_columns():
    r = run("-o", "wide", columns=200)
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    header = next(x for x in lines if x.strip().startswith("#"))
    assert re.split(r"\s{2,}", header.strip()) == [
        "#",
        "Pod",
        "Prio",
        "Result",
        "Score",
        "Feasible",
        "Nominated",
        "Victims",
        "Why",
    ]
    rows = {
        m.group(1): m.groups()[1:]
        for m in re.finditer(r"^\s+\d\s+(\S+)\s+\d+\s+[✔⚠✘] (\S+)\s+(\S+)\s+(\d+/20)\s+(\S+)\s+(\S+)\s", r.stdout, re.M)
    }
    assert list(rows) == PODS
    assert rows[PODS[0]] == ("general-c-02", "–", "0/20", "general-c-02", "1")  # nominated, one victim
    assert rows[PODS[1]][1] != "–" and rows[PODS[1]][3:] == ("–", "–")  # placed: a score
    assert rows[PODS[1]][1] == re.search(r"score (\d+)", r.stdout).group(1)
    assert rows[PODS[4]] == ("unschedulable", "–", "0/20", "–", "–")
    # at 80 columns the wide columns go on a labelled line under each row; nothing is cut
    r = run("-o", "wide")
    assert "score –   feasible 0/20   nominated general-c-02   victims 1" in r.stdout
    assert all(len(x) <= 80 for x in r.stdout.splitlines())


def test_no_headers_prints_the_rows_only():
    for args in ((), ("-o", "wide")):
        full = run(*args, columns=160).stdout
        bare = run(*args, "--no-headers", columns=160)
        assert bare.exit_code == 1
        assert "Schedule" not in bare.stdout and "Pod" not in bare.stdout and "─" not in bare.stdout
        assert "scheduled" not in bare.stdout and "ksched explain" not in bare.stdout
        assert [re.split(r"\s+", x.strip())[1] for x in bare.stdout.splitlines() if re.match(r"^\s+\d\s", x)] == PODS
        # the same rows as with headers (the columns, sized without their headers, may wrap elsewhere)
        assert " ".join(bare.stdout.split()) in " ".join(full.split())


def test_json_and_yaml_are_unchanged_by_the_table_options():
    a = run("-o", "json")
    b = run("-o", "json", "--no-headers")
    assert a.exit_code == b.exit_code == 1 and a.stdout == b.stdout
    assert len(json.loads(a.stdout)["results"]) == 5
    c, d = run("-o", "yaml"), run("-o", "yaml", "--no-headers")
    assert c.exit_code == d.exit_code == 1 and c.stdout == d.stdout and c.stdout.startswith("kschedVersion:")
