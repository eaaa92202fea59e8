"""`schedule -o json|yaml`: the compact sequence document (the default) against --detail full, the
analysis built for what the output shows, and the JSON text orjson writes against the standard
library's, byte for byte."""

from __future__ import annotations

import json
from importlib import resources as ilres
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.framework.result import FilterTable
from kschedcli.render.jsontext import escape_controls, json_text
from kschedcli.scheduling.analysis import failing_plugins, first_failures, node_groups
from kschedcli.whatif.world import open_world

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
ROLLOUT = str(ROOT / "fixtures" / "pods" / "rollout.yaml")
SCHEMA = json.loads(ilres.files("kschedcli.schemas").joinpath("result.schema.json").read_text())


def schedule(*args: str):
    r = CliRunner().invoke(app, ["schedule", ROLLOUT, "-c", PROD, "--order", "file", *args], env={"COLUMNS": "80"})
    assert r.exit_code == 1, r.output
    return r.stdout


def test_compact_is_the_default_and_agrees_with_full():
    compact = json.loads(schedule("-o", "json"))
    full = json.loads(schedule("-o", "json", "--detail", "full"))
    assert compact == json.loads(schedule("-o", "json", "--detail", "compact"))
    jsonschema.validate(compact, SCHEMA)
    jsonschema.validate(full, SCHEMA)
    assert compact["detail"] == "compact" and "detail" not in full
    assert len(compact["results"]) == len(full["results"]) == 5
    for c, f in zip(compact["results"], full["results"], strict=True):
        assert "filters" not in c and "scores" not in c and "breakdowns" not in c and "details" not in c
        for key in ("pod", "verdict", "selectedNode", "topNodes", "message", "preFilter", "nodeGroups"):
            assert c[key] == f[key], key
        assert c["failingPlugins"] == f["failingPlugins"] and c["nodeCount"] == f["nodeCount"] == 20
        assert c["feasibleNodeCount"] == len(f["feasibleNodes"])
        assert c["selectedScore"] == (f["scores"][f["selectedNode"]]["total"] if f["scores"] else None)
        if f["preemption"] is None:
            assert c["preemption"] is None
        else:
            # the preemption's outcome without the per-node parts
            assert c["preemption"]["nominatedNode"] == f["preemption"]["nominatedNode"]
            assert c["preemption"]["victims"] == f["preemption"]["victims"]
            assert "candidates" not in c["preemption"] and "notHelpful" not in c["preemption"]
    preempting = compact["results"][4]
    assert preempting["verdict"] == "preemption" and preempting["preemption"]["victims"]


def test_yaml_follows_detail_too():
    compact = yaml.safe_load(schedule("-o", "yaml"))
    full = yaml.safe_load(schedule("-o", "yaml", "--detail", "full"))
    assert compact == json.loads(schedule("-o", "json"))
    assert full == json.loads(schedule("-o", "json", "--detail", "full"))


def test_schedule_help_lists_detail_for_the_conformance_checker():
    r = CliRunner().invoke(app, ["schedule", "--help"], env={"COLUMNS": "200"})
    assert " --detail " in r.stdout


# -- the analysis read column by column equals the row-by-row reading


def _results():
    session = open_world([PROD], None)
    from kschedcli.inputs.cluster import load_pending_pods

    pods = load_pending_pods(ROLLOUT, session.cluster)
    return session.scheduler.run_sequence(pods)


def _as_rows(r):
    """The same result with its FilterTable turned into a plain dict of NodeFilter rows."""
    import copy

    plain = copy.copy(r)
    plain.filters = {n: r.filters[n] for n in r.filters}
    return plain


def test_node_groups_and_failing_plugins_read_by_column_equal_by_row():
    results = _results()
    assert all(isinstance(r.filters, FilterTable) for r in results)
    assert any(len(node_groups(r)) > 2 for r in results)  # some results have several groups
    for r in results:
        rows = _as_rows(r)
        assert node_groups(r) == node_groups(rows)
        assert failing_plugins(r) == failing_plugins(rows)
        assert first_failures(r) == first_failures(rows)
        # the first failures are the infeasible groups' first failures, counted
        summed: dict[tuple, int] = {}
        for g in node_groups(r):
            if not g["feasible"]:
                key = (g["firstFailure"]["plugin"], tuple(g["firstFailure"]["reasons"]))
                summed[key] = summed.get(key, 0) + g["count"]
        assert {(p, tuple(rs)): n for p, rs, n in first_failures(r)} == summed


@pytest.mark.parametrize("wide", [False, True])
def test_table_from_slimmed_results_equals_the_table_from_whole_ones(wide):
    """The table's rows read the first failures kept in the annotations, after the per-node tables
    were dropped: the same text as from results that kept everything."""
    from kschedcli.inputs.cluster import load_pending_pods
    from kschedcli.render.terminal.schedule import schedule_table
    from kschedcli.scheduling.analysis import ALL, FIRST_FAILURES, annotate, slim

    tables = []
    for keep in (True, False):
        session = open_world([PROD], None)
        pods = load_pending_pods(ROLLOUT, session.cluster)

        def analysed(r, keep=keep, session=session):
            annotate(r, session, ALL if keep else frozenset({FIRST_FAILURES}))
            if not keep:
                slim(r)

        results = session.scheduler.run_sequence(pods, on_result=analysed, with_details=keep)
        assert all(bool(r.filters) == keep for r in results)
        tables.append(schedule_table(results, 20, 120, wide=wide).plain)
    assert tables[0] == tables[1]
    assert "NodeResourcesFit" in tables[0] and "evicts" in tables[0]


# -- orjson's text equals json.dumps(indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    "doc",
    [
        {"a": 1, "b": [1, 2, {"c": None}], "d": {}, "e": [], "f": True, "g": 'é ☃ \u2028 \x7f \x1f "q" \\'},
        {"weight": 6.028278520230698, "zero": 0.0, "neg": -0.0, "big": 1e16, "bigger": 1.5e300, "small": 0.0001},
        {"tiny": 1e-05},  # orjson: 0.00001
        {"tinier": [1e-7]},  # orjson: 1e-7
        {"nan": float("nan"), "inf": float("inf")},  # orjson: null
        {"huge": 2**70},  # orjson refuses it
        {"surrogate": "\ud800"},  # orjson refuses it
        {1: "non-string key"},
        [("tuple", 1)],
        "top-level string",
    ],
)
def test_json_text_equals_the_standard_library(doc):
    # but for DEL, C1, bidi controls and U+2028/9, \\u-escaped by json_text (docs/terminal-safety.md)
    assert json_text(doc) == escape_controls(json.dumps(doc, indent=2, ensure_ascii=False))
    if isinstance(doc, dict) and "g" in doc:
        assert "\\u2028 \\u007f \\u001f" in json_text(doc) and json.loads(json_text(doc)) == doc


def test_json_text_float_free_parts_are_not_searched():
    # the caller vouches for a part: a float there is written by orjson (its way)
    assert json_text({"filters": [1e-05]}, float_free=("filters",)) != json.dumps({"filters": [1e-05]}, indent=2)
    assert json_text({"details": [1e-05]}, float_free=("filters",)) == json.dumps({"details": [1e-05]}, indent=2)
