"""Issue 11, class 7 (YAML scalars): the files a user hands in are read as kubectl reads them
(sigs.k8s.io/yaml's YAMLToJSON over go-yaml v2), so what `kubectl apply` refuses is refused and what
it accepts is accepted; the line-by-line reader and libyaml agree; snapshots keep their reading."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.loader import parse_documents
from kschedcli.loader.goyaml import format_float32_g, resolve_plain

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small-cluster.yaml"

# go-yaml v2's resolve.go (go.yaml.in/yaml/v2) for plain scalars, as YAMLToJSON hands them on
GO_YAML_V2 = [
    ("08", 8.0),  # not octal: strconv.ParseInt fails, yamlStyleFloat matches
    ("-08", -8.0),
    ("0777", 511),
    ("0o17", 15),
    ("0O17", 15),
    ("0x1F", 31),
    ("0b101", 5),
    ("-0b101", -5),
    ("0b-101", -5),  # go-yaml's own 0b fallback
    ("1_000", 1000),
    ("_1", "_1"),
    ("1e3", 1000.0),
    ("12e+3", 12000.0),
    ("1.", 1.0),
    (".5", 0.5),
    ("+.5", 0.5),
    (".e5", ".e5"),
    ("1e", "1e"),
    ("0x", "0x"),
    ("+5", 5),
    ("-0", 0),
    ("9223372036854775808", 9223372036854775808),  # uint64
    ("18446744073709551616", 1.8446744073709552e19),  # past uint64: a float
    ("1e400", "1e400"),  # past float64: strconv's range error leaves the text
    ("9" * 400, "9" * 400),
    ("1:30", "1:30"),  # no base-60 numbers in go-yaml
    ("12:30:00", "12:30:00"),
    ("2024-01-01", "2024-01-01"),  # timestamps reach interface{} as their text
    ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"),
    ("y", True),
    ("Y", True),
    ("yes", True),
    ("on", True),
    ("ON", True),
    ("True", True),
    ("n", False),
    ("N", False),
    ("no", False),
    ("off", False),
    ("FALSE", False),
    ("tRUE", "tRUE"),
    ("nULL", "nULL"),
    ("~", None),
    ("null", None),
    ("Null", None),
    ("=", "="),  # PyYAML has no constructor for it
    ("<<", "<<"),  # a merge only as a key
    ("abc", "abc"),
]


@pytest.mark.parametrize("text,value", GO_YAML_V2)
def test_plain_scalars_resolve_as_go_yaml_v2(text, value):
    got = resolve_plain(text)
    assert got == value and type(got) is type(value)


def _both_readers(text: str) -> tuple[list, list]:
    """(the line reader's documents, libyaml's): a comment line sends a document to libyaml."""
    return parse_documents(text, "f", as_kubectl=True), parse_documents("# libyaml\n" + text, "f", as_kubectl=True)


@pytest.mark.parametrize("text,value", GO_YAML_V2)
def test_line_reader_and_libyaml_read_user_files_alike(text, value):
    doc = f"v: {text}\nl:\n- {text}\nm:\n  k: {text}\n"
    fast, slow = _both_readers(doc)
    assert fast == slow == [{"v": value, "l": [value], "m": {"k": value}}]
    assert [type(x) for x in fast[0]["l"]] == [type(value)]


@pytest.mark.parametrize(
    "key,json_key",
    [("08", "8"), ("1e6", "1e+06"), ("1.5", "1.5"), ("0x1F", "31"), ("y", "true"), ("off", "false"), ("1:30", "1:30")],
)
def test_map_keys_become_strings_as_yamltojson_makes_them(key, json_key):
    fast, slow = _both_readers(f"m:\n  {key}: x\n")
    assert fast == slow == [{"m": {json_key: "x"}}]


def test_float32_keys_are_formatted_as_go_formats_them():
    assert [format_float32_g(f) for f in (8.0, 1e6, 123456.0, 1234567.0, 0.1, 3.14159265358979, 1e-5, -2.5)] == [
        "8",
        "1e+06",
        "123456",
        "1.234567e+06",
        "0.1",
        "3.1415927",
        "1e-05",
        "-2.5",
    ]


def test_merge_keys_set_their_keys_in_document_order():
    # go-yaml v2 overwrites in order (YAML 1.1 would keep the explicit key); a list: first wins
    [doc] = parse_documents("a: &x {b: 1, c: 1}\nm:\n  b: 3\n  <<: *x\nl:\n  <<: [*x, {b: 2, d: 2}]\n", "f", True)
    assert doc["m"] == {"b": 1, "c": 1} and doc["l"] == {"b": 1, "c": 1, "d": 2}


@pytest.mark.parametrize(
    "text,message",
    [
        ("a: .inf\n", '.inf: JSON has no such number; kubectl refuses it ("json: unsupported value: +Inf")'),
        ("a: [-.Inf]\n", '-.Inf: JSON has no such number; kubectl refuses it ("json: unsupported value: -Inf")'),
        ("a: {b: .nan}\n", '.nan: JSON has no such number; kubectl refuses it ("json: unsupported value: NaN")'),
        ("~: x\n", 'map key ~: kubectl refuses a null key ("unsupported map key of type: <nil>")'),
        ("18446744073709551615: x\n", "map key 18446744073709551615: kubectl refuses it"),
        ("a: !!int 08\n", "cannot decode !!float `08` as a !!int (go-yaml refuses it)"),
        ("a:\n  <<: 5\n", "map merge requires map or sequence of maps as the value"),
        ('{"a": 1} {"b": 2} {"c": NaN}', "line 1: malformed JSON after the JSON objects before it"),
    ],
)
def test_what_kubectl_cannot_turn_into_json_is_one_error(text, message):
    with pytest.raises(Exception) as e:
        parse_documents(text, "f", as_kubectl=True)
    assert message in str(e.value)


def test_json_user_files_are_read_as_kubectls_yaml_or_json_decoder_reads_them():
    assert parse_documents('\ufeff {"a": 1}\n{"b": 2} ', "f", as_kubectl=True) == [{"a": 1}, {"b": 2}]
    # JSON that breaks off after at most one value: the rest is YAML (NaN is no JSON: a string)
    assert parse_documents('{"a": 1}\n---\nb: 08\n', "f", as_kubectl=True) == [{"a": 1}, {"b": 8.0}]
    assert parse_documents('{"a": NaN, b: y}', "f", as_kubectl=True) == [{"a": "NaN", "b": True}]
    assert math.isnan(parse_documents('{"a": NaN}', "f")[0]["a"])  # snapshots: as before


def _explain(tmp_path: Path, text: str, cluster: Path = SMALL):
    f = tmp_path / "pod.yaml"
    f.write_text(text)
    return CliRunner().invoke(app, ["explain", str(f), "-c", str(cluster), "-o", "json"]), str(f)


POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n{meta}spec:\n  containers:\n  - name: c\n    image: i\n{spec}"


@pytest.mark.parametrize(
    "meta,spec,field,got",
    [
        ("  labels: {version: 08}\n", "", "metadata.labels.version", "number 8"),
        ("  labels: {v: 1e3}\n", "", "metadata.labels.v", "number 1000"),
        ("", "  nodeSelector: {gpu: y}\n", "spec.nodeSelector.gpu", "boolean true"),
        ("  annotations: {note: n}\n", "", "metadata.annotations.note", "boolean false"),
        ("", "  nodeSelector: {port: 0x1F}\n", "spec.nodeSelector.port", "number 31"),
    ],
)
def test_what_kubectl_reads_as_a_number_or_boolean_is_refused_where_the_api_wants_a_string(
    tmp_path, meta, spec, field, got
):
    r, f = _explain(tmp_path, POD.format(meta=meta, spec=spec))
    assert r.exit_code == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.output
    assert r.stderr.startswith(f"ksched: {f}: Pod default/p: {field}: expected a string, got {got}"), r.stderr


@pytest.mark.parametrize(
    "meta",
    [
        "  annotations: {at: 1:30, since: 2024-01-01, x: =}\n",  # strings to kubectl (PyYAML: 90, a date, an error)
        "  labels: {day: 2024-01-01}\n",
    ],
)
def test_what_kubectl_reads_as_a_string_is_accepted(tmp_path, meta):
    r, _ = _explain(tmp_path, POD.format(meta=meta, spec=""))
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("written,value", [("08", "number 8"), ("0o17", "number 15"), ("y", "boolean true")])
def test_the_quoting_hint_shows_the_scalar_as_written(tmp_path, written, value):
    r, _ = _explain(tmp_path, POD.format(meta="", spec=f"  nodeSelector:\n    disk: {written}\n"))
    assert r.exit_code == 2, r.output
    assert r.stderr.rstrip().endswith(
        f'spec.nodeSelector.disk: expected a string, got {value} (quote it if it is text: "{written}")'
    ), r.stderr


def test_an_infinity_anywhere_in_a_pod_file_is_one_line(tmp_path):
    r, f = _explain(tmp_path, POD.format(meta="  annotations: {ratio: .inf}\n", spec=""))
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith(f"ksched: {f}: line 5, column 24: .inf: JSON has no such number"), r.stderr


def test_snapshots_keep_their_reading(tmp_path):
    # kubectl quotes what go-yaml could read otherwise; a hand-written snapshot is read as before
    snap = tmp_path / "snap.yaml"
    snap.write_text(SMALL.read_text().replace("kubernetes.io/os: linux", "kubernetes.io/os: y", 1))
    web = str(ROOT / "fixtures" / "pods" / "web.yaml")
    r = CliRunner().invoke(app, ["explain", web, "-c", str(snap), "-o", "json"])
    assert r.exit_code == 0, r.output


def test_capacity_templates_and_added_nodes_are_read_as_kubectl_reads_them(tmp_path):
    pod = tmp_path / "t.yaml"
    pod.write_text(POD.format(meta="", spec="  nodeSelector: {disk: on}\n"))
    r = CliRunner().invoke(app, ["capacity", str(pod), "-c", str(SMALL)])
    assert r.exit_code == 2 and "spec.nodeSelector.disk: expected a string, got boolean true" in r.stderr, r.output
    node = tmp_path / "n.yaml"
    node.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: extra\n  labels: {gen: 08}\n")
    r = CliRunner().invoke(app, ["schedule", "-c", str(SMALL), "--add-node", str(node)])
    assert r.exit_code == 2 and "metadata.labels.gen" in r.stderr and "8" in r.stderr, r.output
