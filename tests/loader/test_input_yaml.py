"""The YAML reader against hostile YAML: issue 11's classes 1 (aliases shared, excessive aliasing
refused as kubectl's reader refuses it), 3 (the line reader reads as libyaml or defers to it) and
the nesting bound (kubectl's max depth; libyaml's composer would crash the process)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.errors import InputError
from kschedcli.loader import load_documents, yaml_bounds, yaml_reader

ROOT = Path(__file__).resolve().parents[2]
SMALL = str(ROOT / "fixtures" / "small-cluster.yaml")


def docs(text: str) -> list:
    return list(yaml_reader.yaml_docs(text))


def laughs(levels: int, fan: int = 9) -> str:
    """A pod with a "billion laughs" field: anchor a, then each level a list of `fan` aliases of the
    one before."""
    out = [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: {name: p}",
        "spec:",
        "  containers: [{name: c, image: i}]",
        "status:",
        '  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    ]
    names = "abcdefghijklmnop"
    for prev, cur in zip(names[: levels - 1], names[1:levels]):
        out.append(f"  {cur}: &{cur} [" + ", ".join(["*" + prev] * fan) + "]")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- 1: aliases


def test_billion_laughs_is_refused_as_kubectl_refuses_it(tmp_path):
    f = tmp_path / "bomb.yaml"
    f.write_text(laughs(9))
    r = CliRunner().invoke(app, ["explain", str(f), "-c", SMALL])
    assert r.exit_code == 2
    assert r.stderr == f"ksched: {f}: line 1, column 1: malformed YAML: document contains excessive aliasing\n"


def test_aliases_within_the_bound_are_shared_not_copied():
    got = docs(laughs(3))[0]["status"]  # 9 * 9 * 9 lols: within go-yaml's allowance
    assert got == yaml.safe_load(laughs(3))["status"]
    assert got["c"][0] is got["c"][1] is got["b"]  # one object, as PyYAML's constructor shares it
    assert got["b"][0] is got["a"]


def test_excessive_aliasing_bound_follows_go_yaml_counts():
    # 100 aliases of a 20-item list: 2,000+ decodes, 95% via aliases: within 99%, accepted
    ok = "a: &a [" + ", ".join(["x"] * 20) + "]\nb: [" + ", ".join(["*a"] * 100) + "]\n"
    assert len(docs(ok)[0]["b"]) == 100
    # 1,000 aliases of a 1,000-item list: a million decodes, nearly all aliased (> 0.99 - 0.89 * 0.17)
    bad = "a: &a [" + ", ".join(["x"] * 1000) + "]\nb: [" + ", ".join(["*a"] * 1000) + "]\n"
    with pytest.raises(yaml.YAMLError, match="excessive aliasing"):
        docs(bad)


def test_an_anchor_containing_itself_is_refused():
    with pytest.raises(yaml.YAMLError, match="contains an alias of itself"):
        docs("spec: &s\n  x: *s\n")


def test_alias_free_streams_are_read_as_before():
    text = "a: 1\nb: [x, y]\nc: '*not an alias'\nd: x*y\n"
    assert docs(text) == list(yaml.safe_load_all(text))


# ----------------------------------------------------------------------------- nesting depth


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 30000 + "]" * 30000,  # flow: libyaml would crash
        "- " * 12000 + "x\n",  # compact block sequences
    ],
)
def test_nesting_beyond_kubectls_max_depth_is_one_error(text):
    # go-yaml's message, or libyaml's own from 0.2.6 (PyYAML 6.0.4), which stops at 1,000 levels
    with pytest.raises(yaml.YAMLError, match="exceeded max(imum nesting)? depth"):
        docs(text)


def test_deep_but_allowed_nesting_reads():
    text = "a: " + "[" * 900 + "]" * 900  # within go-yaml's and every libyaml's bound
    got = docs(text)[0]["a"]
    for _ in range(899):
        got = got[0]
    assert got == []


def test_deep_json_is_one_line(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text('{"kind": "Pod", "x": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(InputError, match="nested too deeply"):
        load_documents(str(f))


def test_cheap_depth_bound_skips_ordinary_streams(monkeypatch):
    calls = []
    monkeypatch.setattr(yaml_bounds.yaml, "CSafeLoader", lambda t: calls.append(t))
    yaml_bounds.check_depth("a: {}\nb: []\n" * 10000 + "c:\n  d:\n    - e\n")
    assert calls == []


# ----------------------------------------------------------------------------- 3: line reader = libyaml


@pytest.mark.parametrize(
    "text",
    [
        "metadata:\n  labels:\n    a: b\x85c\n",  # NEL breaks the line
        "metadata:\n  labels:\n    a: b\u2028c\n",  # LINE SEPARATOR
        "metadata:\n  labels:\n    a: b\u2029c\n",  # PARAGRAPH SEPARATOR
        "a: 1\n" + "k" * 1100 + ": 2\n",  # an implicit key over 1024 characters
        "a: 1\n- " + "k" * 1100 + ": 2\n",
    ],
)
def test_line_reader_agrees_with_libyaml(text):
    try:
        expected = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError as e:
        with pytest.raises(yaml.YAMLError) as got:
            docs(text)
        assert str(got.value).splitlines()[-1] == str(e).splitlines()[-1]
    else:
        assert docs(text) == expected


def test_a_key_of_1000_characters_still_reads():
    text = "k" * 1000 + ": 2\n"
    assert docs(text) == [{"k" * 1000: 2}]


JOINED = (
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: first\n"
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: second\n"
)  # `cat nodes/*.yaml` of files without `---`: one map, every key twice


@pytest.mark.parametrize(
    "text,key,line",
    [
        (JOINED, "apiVersion", 5),  # block style: the line reader hands it to libyaml
        ("kind: Node\nmetadata: {name: n, labels: {a: '1', a: '2'}}\n", "a", 2),  # flow style
        ("x: &anchor {c: 1}\ny: *anchor\nx: 2\n", "x", 3),  # aliases: SafeConstructor's own path
    ],
)
def test_a_key_set_twice_in_a_snapshot_is_refused_where_it_is_set_again(text, key, line):
    # kubectl never writes one; files joined by `cat` do, and the last value would hide the others
    # (the files a person hands in are refused alike: test_input_odd.py)
    with pytest.raises(yaml.MarkedYAMLError) as e:
        list(yaml_reader.yaml_docs(text))
    assert e.value.problem.startswith(f'key "{key}" already set in map')
    assert e.value.problem_mark.line + 1 == line


def test_merge_keys_may_be_set_again():
    (doc,) = yaml_reader.yaml_docs("base: &b {a: 1, b: 2}\nm:\n  <<: *b\n  a: 3\n")
    assert doc["m"] == {"a": 3, "b": 2}


def test_a_snapshot_of_nodes_joined_without_separators_is_one_line(tmp_path):
    snap = tmp_path / "nodes.yaml"
    snap.write_text(JOINED.replace("  name: first\n", "  name: first\nstatus: {allocatable: {cpu: '1', pods: '9'}}\n"))
    r = CliRunner().invoke(
        app, ["explain", str(ROOT / "fixtures" / "pods" / "web.yaml"), "-c", str(snap), "--no-cache"]
    )
    assert r.exit_code == 2
    assert r.stderr == (
        f'ksched: {snap}: line 6, column 1: malformed YAML: key "apiVersion" already set in map '
        '(two objects joined without a "---" line?)\n'
    )
