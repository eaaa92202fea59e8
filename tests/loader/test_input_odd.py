"""Issue 11, odd-but-valid and careless inputs found by trying them (beyond the issue's list): each
read as kubectl reads it, or refused in one line as kubectl refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small-cluster.yaml"
WEB = ROOT / "fixtures" / "pods" / "web.yaml"
POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n"


def explain(tmp_path: Path, data: bytes | str, *extra: str, name: str = "pod.yaml"):
    f = tmp_path / name
    f.write_bytes(data.encode() if isinstance(data, str) else data)
    return CliRunner().invoke(app, ["explain", str(f), "-c", str(SMALL), "-o", "json", *extra]), str(f)


@pytest.mark.parametrize(
    "data",
    [
        "\ufeff" + POD,  # a byte order mark
        POD.replace("\n", "\r\n"),  # Windows line ends
        POD.encode("utf-16"),  # PowerShell's `>`: UTF-16 with its byte order mark
        POD.encode("utf-16-be").join([b"\xfe\xff", b""]),
        "---\n" + POD + "---\n",  # empty documents around it
        # a List within a List: kubectl flattens it
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n"
        + "".join("  " + line + "\n" for line in ("- " + POD.replace("\n", "\n  ")).splitlines()),
    ],
)
def test_odd_but_valid_pod_files_read_as_kubectl_reads_them(tmp_path, data):
    r, _ = explain(tmp_path, data)
    assert r.exit_code == 0 and '"pod": "default/p"' in r.stdout, r.output


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "no Pod or workload found"),
        ("---\n---\n", "no Pod or workload found"),
        ("hello\n", "document 1: expected a Kubernetes object or a List"),
        (POD.replace("kind: Pod", "kind: pod"), 'pod p: kind: no matches for kind "pod"; did you mean Pod?'),
        (
            POD.replace("kind: Pod", "kind: Deploymnet"),
            'Deploymnet p: kind: no matches for kind "Deploymnet"; did you mean Deployment?',
        ),
        (
            "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
            "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
            "    spec: {containers: [{name: c, image: i}]}\n",
            'Deployment d: apiVersion: no matches for kind "Deployment" in version "extensions/v1beta1" '
            "(kubectl finds Deployment in apps/v1)",
        ),
        (POD.replace("apiVersion: v1", "apiVersion: v2"), 'apiVersion: no matches for kind "Pod" in version "v2"'),
    ],
)
def test_careless_pod_files_are_one_line(tmp_path, text, message):
    r, f = explain(tmp_path, text)
    assert r.exit_code == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.output
    assert r.stderr.startswith(f"ksched: {f}: ") and message in r.stderr, r.stderr


def test_other_kinds_beside_pods_are_still_left_out(tmp_path):
    text = POD + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"
    r, _ = explain(tmp_path, text)
    assert r.exit_code == 0, r.output


def test_a_utf16_snapshot_reads_as_the_utf8_one(tmp_path):
    docs = [d for d in yaml.safe_load_all(SMALL.read_text()) if d]
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump_all(docs), encoding="utf-16")
    a = CliRunner().invoke(app, ["explain", str(WEB), "-c", str(SMALL), "-o", "json"])
    b = CliRunner().invoke(app, ["explain", str(WEB), "-c", str(snap), "-o", "json"])
    assert a.exit_code == b.exit_code == 0 and a.stdout == b.stdout, b.output


def test_duplicate_yaml_keys_in_what_a_person_writes_are_refused_where_set_again(tmp_path):
    """A pod file, two pods joined without `---` and a scheduler configuration, each setting a key
    twice: one line naming the file and where (kubectl: `mapping key "name" already defined`;
    kube-scheduler decodes its configuration strictly). A key a merge set may be set again."""
    r, _ = explain(tmp_path, POD.replace("  name: p\n", "  name: q\n  name: p\n"))
    assert r.exit_code == 2, r.output
    assert r.output.strip().endswith('line 5, column 3: key "name" already set in map'), r.output
    assert r.output.count("\n") == 1 and "Traceback" not in r.output
    joined = tmp_path / "joined.yaml"
    joined.write_text(POD + POD.replace("name: p", "name: second"))
    r = CliRunner().invoke(app, ["schedule", str(joined), "-c", str(SMALL)])
    assert (
        r.exit_code == 2
        and 'key "apiVersion" already set in map (two objects joined without a "---" line?)' in r.output
    )
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 10\npercentageOfNodesToScore: 50\n"
    )
    r = CliRunner().invoke(app, ["explain", str(WEB), "-c", str(SMALL), "--config", str(config)])
    assert r.exit_code == 2 and f'{config}: line 4, column 1: key "percentageOfNodesToScore" already set' in r.output
    merged = POD.replace("metadata:\n", "metadata:\n  <<: {name: q}\n")
    r, _ = explain(tmp_path, merged)
    assert r.exit_code == 0 and '"pod": "default/p"' in r.stdout, r.output
