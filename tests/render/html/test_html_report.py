"""`--report FILE.html` without a browser: one self-contained page (no script, nothing to fetch, a
Content-Security-Policy forbidding both), names escaped, big clusters aggregated with "+N more",
and one clear line (exit 2) without the `report` extra. The browser tests are test_html_browser.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[3]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>&amp;'
LONG = "n" * 52 + "-" + "a" * 7  # a 60-character node name

extra = pytest.importorskip("vl_convert", reason="the report extra is not installed: pip install 'ksched[report]'")
pytest.importorskip("altair", reason="the report extra is not installed: pip install 'ksched[report]'")

from kschedcli.render.html import report_html  # noqa: E402
from kschedcli.render.html.utilization import MAX_NODE_ROWS, TOP_NODES  # noqa: E402


def rect_marks(page: str) -> list[tuple[str, int]]:
    """The rect marks drawn, per Vega mark group (`concat_0_layer_1_marks`, ...), in order."""
    return [
        (name, body.count("<path"))
        for name, body in re.findall(r'<g class="mark-rect role-mark (\w+)"[^>]*>(.*?)</g>', page)
    ]


def _usage(n: int, name=lambda i: f"node-{i:05d}", zones=3, pools=2) -> dict:
    nodes = []
    for i in range(n):
        nodes.append(
            {
                "name": name(i),
                "zone": f"zone-{i % zones}",
                "pool": f"pool-{i % pools}",
                "unschedulable": False,
                "resources": {
                    "cpu": [(i * 37) % 4000, 4000],
                    "memory": [(i * 11) % 8 * 2**30, 16 * 2**30],
                    "pods": [i % 50, 110],
                },
            }
        )
    return {"resources": ["cpu", "memory", "pods"], "nodes": nodes}


def _explain_doc(names: list[str]) -> dict:
    return {
        "pod": f"default/{HOSTILE}",
        "profile": "default-scheduler",
        "verdict": "schedulable",
        "selectedNode": names[0],
        "selectedScore": 100,
        "feasibleNodes": names[:2],
        "nodeCount": len(names),
        "filters": {n: {"firstFailure": None} for n in names},
        "filterPlugins": ["NodeResourcesFit"],
        "scorePlugins": ["NodeResourcesFit"],
        "scores": {n: {"plugins": {"NodeResourcesFit": {"weighted": 1, "weight": 1}}, "total": 1} for n in names[:2]},
        "nodeGroups": [
            {"nodes": names[:2], "count": 2, "feasible": True, "firstFailure": None, "skipped": []},
            {
                "nodes": names[2:],
                "count": len(names) - 2,
                "feasible": False,
                "firstFailure": {"plugin": "NodeResourcesFit", "reasons": [HOSTILE]},
                "skipped": [],
            },
        ],
        "requests": {"cpu": 100},
        "message": HOSTILE,
        "details": {},
        "breakdowns": {},
        "kschedVersion": "0",
        "kubernetesVersion": "v1.34.1",
    }


def test_hostile_names_are_text_never_markup():
    names = [HOSTILE, LONG, "plain-node", "x<y>z\"'"]
    usage = _usage(len(names), name=lambda i: names[i])
    usage["nodes"][0]["zone"] = "<b>zone</b>"
    page = report_html("explain", _explain_doc(names), usage)
    # the only <script> is none; every name is there, escaped
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "onerror=" not in page.replace("onerror=alert(1)&gt;", "")  # only as escaped text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "&lt;b&gt;zone&lt;/b&gt;" in page
    assert LONG in page  # the 60-character name whole, in the chart and its table
    assert len(re.findall(re.escape(f">{LONG}<"), page)) >= 2


def test_the_page_loads_nothing_and_runs_nothing():
    page = report_html("explain", _explain_doc(["a", "b", "c"]), _usage(3, name=lambda i: "abc"[i]))
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    # no URL but the SVG namespaces
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert not re.search(r"<(script|link|iframe|object|embed|img|image)\b", page, re.I)
    assert not re.search(r"<[^>]*\s(src|href|xlink:href)=", page)


def test_up_to_the_limit_every_node_is_drawn():
    n = 30
    page = report_html("explain", _explain_doc([f"node-{i:05d}" for i in range(n)]), _usage(n))
    # 3 resources + the pod's fit per node, one rect each
    assert page.count('aria-roledescription="rect mark"') == 0  # rects carry no ARIA label each
    marks = rect_marks(page[page.index("Cluster utilization") :])
    # 6 panels (3 zones x 2 pools), each a layer of the pod's fit and one of the resources
    assert len(marks) == 12
    assert sum(v for k, v in marks if k.endswith("layer_0_marks")) == n
    assert sum(v for k, v in marks if k.endswith("layer_1_marks")) == 3 * n
    assert "more nodes not drawn" not in page


def test_a_big_cluster_is_aggregated_with_an_honest_count():
    n = MAX_NODE_ROWS * 5  # 3,000 nodes
    names = [f"node-{i:05d}" for i in range(n)]
    page = report_html("explain", _explain_doc(names), _usage(n))
    groups = 6  # 3 zones x 2 pools
    marks = rect_marks(page[page.index("Cluster utilization") :])
    # the groups' chart, then the fullest nodes' (a layer of the pod's fit, one of the resources)
    assert [v for _, v in marks] == [groups, 3 * groups, TOP_NODES, 3 * TOP_NODES]
    assert f"+{n - TOP_NODES:,} more nodes not drawn" in page
    assert len(page.encode()) < 2_000_000


def test_without_the_extra_one_line_and_exit_2(tmp_path):
    # the extra made unimportable in a child process
    code = (
        "import sys; sys.modules['vl_convert'] = None; sys.argv = ['ksched', 'explain', "
        f"{str(ROOT / 'fixtures/pods/web.yaml')!r}, '-c', {PROD!r}, '--report', {str(tmp_path / 'r.html')!r}]; "
        "from kschedcli.cli.app import main; main()"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "ksched: --report: needs the charting extra: pip install 'ksched[report]' (Altair and vl-convert-python)"
    ]
    assert r.stdout == ""  # asked before the question
    assert not (tmp_path / "r.html").exists()


def test_an_unwritable_report_is_one_line(tmp_path):
    target = tmp_path / "no-such-dir" / "r.html"
    r = CliRunner().invoke(app, ["explain", str(ROOT / "fixtures/pods/web.yaml"), "-c", PROD, "--report", str(target)])
    assert r.exit_code == 2
    assert "--report: cannot write the report" in r.output


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "fixtures/pods/web-spread.yaml", "--fixes", "0"],
        ["capacity", "fixtures/pods/web.yaml"],
        ["diff", "--against-config", "fixtures/config/most-allocated.yaml", "--all"],
        ["sweep", "--fail", "zone", "--workers", "1"],
        ["scale-up", "fixtures/pods/reporting.yaml"],
    ],
    ids=lambda a: a[0],
)
def test_each_command_writes_its_report_and_keeps_its_output(tmp_path, args):
    argv = [a if not a.startswith("fixtures/") else str(ROOT / a) for a in args] + ["-c", PROD, "-o", "json"]
    plain = CliRunner().invoke(app, argv)
    target = tmp_path / "r.html"
    with_report = CliRunner().invoke(app, [*argv, "--report", str(target)])
    assert with_report.exit_code == plain.exit_code
    assert with_report.stdout == plain.stdout  # the report changes nothing printed
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 1
    assert f"ksched {args[0]}" in page
    assert "Cluster utilization" in page or "utilization after its run" in page


def test_the_charts_are_drawn_without_a_network(tmp_path):
    # vl-convert carries Vega's renderer and fonts: a report is written with no network at all
    import shutil

    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("no network namespace here (unshare -n needs root): not checked")
    target = tmp_path / "offline.html"
    code = (
        f"import sys; sys.argv = ['ksched', 'capacity', {str(ROOT / 'fixtures/pods/web.yaml')!r}, '-c', {PROD!r}, "
        f"'--report', {str(target)!r}]; from kschedcli.cli.app import main; main()"
    )
    r = subprocess.run([unshare, "-n", sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert target.read_text().count("<svg") >= 2
