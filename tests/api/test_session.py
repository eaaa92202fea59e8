"""The public API (kschedcli.session), used as a library: never through the command line. Each
answer's `to_dict()` is what `-o json` prints; the CLI tests check that side."""

from __future__ import annotations

import doctest
import json
import os
from pathlib import Path

import pytest

import kschedcli
from kschedcli import ClusterSource, InputError, Options, Session
from kschedcli import session as session_module

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")
ROLLOUT = str(ROOT / "fixtures" / "pods" / "rollout.yaml")
MOST_ALLOCATED = str(ROOT / "fixtures" / "config" / "most-allocated.yaml")
SCENARIO = str(ROOT / "fixtures" / "scenarios" / "lose-zone-a.yaml")


def test_the_package_root_exports_the_api():
    assert kschedcli.Session is Session and kschedcli.Options is Options
    assert set(kschedcli.__all__) >= {"Session", "ClusterSource", "Options", "Explanation", "InputError"}
    with pytest.raises(AttributeError):
        kschedcli.NoSuchThing  # noqa: B018


def test_the_module_docstring_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    failed, tried = doctest.testmod(session_module, optionflags=doctest.ELLIPSIS)
    assert tried >= 3 and failed == 0


def test_explain_answers_with_a_typed_result_and_its_document():
    e = Session(SMALL).explain(WEB)
    assert (e.verdict, e.node, e.exit_code()) == ("schedulable", "node-b", 0)
    doc = e.to_dict()
    assert doc["selectedNode"] == "node-b" and doc["verdict"] == "schedulable"
    json.dumps(doc)  # a document, nothing else


def test_options_belong_to_their_session():
    # two sessions over one cluster, other configs, side by side: no module-level state between them
    plain = Session(PROD)
    packed = Session(PROD, config=MOST_ALLOCATED)
    a = plain.explain(WEB, fixes=0)
    b = packed.explain(WEB, fixes=0)
    again = plain.explain(WEB, fixes=0)
    assert a.node == again.node
    assert a.world.config is not b.world.config
    assert packed.options.config == MOST_ALLOCATED and plain.options.config is None


def test_each_question_starts_from_the_source():
    s = Session(PROD)
    first = s.capacity([WEB])
    second = s.capacity([WEB])  # the first bound its copies: the second must not see them
    assert first.replicas == second.replicas > 0
    assert first.to_dict() == second.to_dict()


def test_schedule_of_a_file_and_its_exit_code():
    run = Session(PROD).schedule(ROLLOUT, order="file")
    assert run.results and run.to_dict()["results"]
    assert run.exit_code() in (0, 1)
    assert run.exit_code() == (0 if all(r.schedulable for r in run.results) else 1)


def test_schedule_streams_each_result_when_asked():
    seen = []
    started = []
    run = Session(PROD).schedule(
        ROLLOUT, order="file", on_start=started.append, on_result=lambda r: seen.append(r.pod.name), keep=False
    )
    assert len(started) == 1 and seen == [r.pod.name for r in run.results]


def test_drain_and_diff_as_library_calls():
    d = Session(PROD).drain(["general-a-02"])
    assert d.exit_code() in (0, 1) and "nodes" in json.dumps(d.to_dict())
    diff = Session(PROD).diff(ROLLOUT, against_config=MOST_ALLOCATED)
    assert diff.exit_code() == (0 if diff.report.same else 1)
    assert diff.to_dict()["kubernetesVersion"]


def test_diff_needs_a_second_world():
    with pytest.raises(InputError, match="nothing to compare"):
        Session(PROD).diff(ROLLOUT)


def test_run_scenario_reads_its_own_snapshot(monkeypatch):
    monkeypatch.chdir(ROOT)
    run = Session(options=Options()).run_scenario(SCENARIO)
    assert run.results


def test_bad_input_raises_the_one_line_error():
    with pytest.raises(InputError) as e:
        Session(SMALL).explain(str(ROOT / "no-such-pod.yaml"))
    assert "no such file" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError, match="no profile named 'nope'"):
        Session(SMALL, profile="nope").explain(WEB)


def test_a_session_over_stdin_answers_once(monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(SMALL).read_bytes())))
    s = Session("-")
    assert s.explain(WEB).node == "node-b"
    with pytest.raises(InputError, match="stdin was read"):
        s.explain(WEB)


def test_cluster_source_forms():
    assert ClusterSource.of(SMALL).files == (SMALL,)
    assert ClusterSource.of([SMALL, PROD]).files == (SMALL, PROD)
    assert ClusterSource.of(Path(SMALL)).files == (SMALL,)
    assert ClusterSource.of(None).is_live
    with pytest.raises(TypeError):
        Session(SMALL, options=Options(), config="x.yaml")


def test_messages_go_where_the_caller_says(tmp_path):
    said: list[str] = []
    Session(SMALL, verbose=True, cache=False, messages=said.append).explain(WEB)
    assert said and said[0].startswith("ksched: read 3 nodes")
    assert not any("from the cache" in line for line in said)


def test_cache_off_neither_reads_nor_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("KSCHED_CACHE_DIR", str(tmp_path / "cache"))
    Session(SMALL, cache=False).explain(WEB, fixes=0)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_edits_are_arguments():
    from kschedcli.session import edits_from_flags

    edits = edits_from_flags({"--cordon": ["node-b"]})
    e = Session(SMALL, edits=edits).explain(WEB, fixes=0)
    assert e.node != "node-b"
    assert [a.doc() for a in e.world.edits]
    assert os.path.exists(SMALL)  # the input is never modified
