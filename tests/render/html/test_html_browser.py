"""The reports in a real browser: the fixtures' `--report` pages opened in headless Chromium
(Debian's `chromium`, /usr/bin/chromium or $KSCHED_CHROMIUM) driven by Playwright (PyPI's
`playwright`, `pip install 'ksched[browser]'`; its own browsers are never downloaded). Each page
must render with no console error, make no request but its own file (every request is intercepted
and aborted), and draw the marks the fixture cluster calls for. Screenshots of every report are kept
in $KSCHED_TEST_ARTIFACTS/reports/ (default: <tmp>/ksched-test-artifacts/reports/).

Without Playwright or Chromium these tests skip, saying which is missing."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[3]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")

pytest.importorskip("vl_convert", reason="the report extra is not installed: pip install 'ksched[report]'")
pytest.importorskip("altair", reason="the report extra is not installed: pip install 'ksched[report]'")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: pip install 'ksched[browser]'"
)

CHROMIUM = os.environ.get("KSCHED_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Okabe-Ito colours of the pod's fit (render/html/charts.py)
SELECTED, FEASIBLE = "#D55E00", "#009E73"

COMMANDS = {
    "explain": ["explain", "fixtures/pods/web-spread.yaml", "--fixes", "0"],
    "capacity": ["capacity", "fixtures/pods/web.yaml"],
    "diff": ["diff", "--against-config", "fixtures/config/most-allocated.yaml", "--all"],
    "sweep": ["sweep", "--fail", "zone", "--workers", "1"],
    "scale-up": ["scale-up", "fixtures/pods/reporting.yaml"],
}


def artifacts() -> Path:
    base = os.environ.get("KSCHED_TEST_ARTIFACTS") or os.path.join(tempfile.gettempdir(), "ksched-test-artifacts")
    out = Path(base) / "reports"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set KSCHED_CHROMIUM)")
    profile = tempfile.mkdtemp(prefix="ksched-chromium-")
    with sync_api.sync_playwright() as p:
        try:
            context = p.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM,
                args=ARGS,
                headless=True,
                viewport={"width": 1200, "height": 900},
                offline=True,
            )
        except Exception as e:  # a Chromium that cannot start here
            pytest.skip(f"Chromium at {CHROMIUM} did not start: {str(e).splitlines()[0]}")
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


class Opened:
    def __init__(self, page, errors: list[str], requests: list[str]):
        self.page, self.errors, self.requests = page, errors, requests


def open_page(context, path: Path) -> Opened:
    """The file opened: console errors and page errors collected, and every request the page makes
    but its own file recorded and aborted."""
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    own = path.resolve().as_uri()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r):
        if r.request.url == own:
            r.continue_()
        else:
            requests.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("requestfailed", lambda r: requests.append(r.url) if r.url != own and r.url not in requests else None)
    page.goto(own, wait_until="load")
    return Opened(page, errors, requests)


MARKS_JS = """() => Array.from(document.querySelectorAll('figure')).map(f => ({
  caption: (f.querySelector('figcaption') || {}).textContent || '',
  width: f.querySelector('svg') ? f.querySelector('svg').getBoundingClientRect().width : 0,
  groups: Array.from(f.querySelectorAll('svg g.mark-rect')).map(g => ({
    name: g.getAttribute('class').split(' ').pop(),
    fills: Array.from(g.querySelectorAll(':scope > path')).map(p => p.getAttribute('fill')),
  })),
}))"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each command's report of the fixture cluster, and its -o json document."""
    out = tmp_path_factory.mktemp("reports")
    made = {}
    for kind, args in COMMANDS.items():
        argv = [a if not a.startswith("fixtures/") else str(ROOT / a) for a in args] + ["-c", PROD]
        target = out / f"{kind}.html"
        r = CliRunner().invoke(app, [*argv, "-o", "json", "--report", str(target)])
        assert r.exit_code in (0, 1), r.output
        made[kind] = (target, json.loads(r.stdout))
    return made


def figures(opened: Opened) -> list[dict]:
    return opened.page.evaluate(MARKS_JS)


def marks_of(fig: dict, layer: str | None = None) -> list[str]:
    """The fills of the chart's rect marks (of one layer's): its data, not its legend's gradient."""
    return [c for g in fig["groups"] if g["name"].endswith(layer or "_marks") for c in g["fills"]]


def utilization_figure(figs: list[dict]) -> dict:
    return next(f for f in figs if f["caption"].startswith("Utilization of every node"))


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_report_renders_offline_without_errors(browser, reports, kind):
    path, _ = reports[kind]
    opened = open_page(browser, path)
    try:
        assert opened.errors == []
        assert opened.requests == []
        figs = figures(opened)
        assert figs and all(f["width"] > 100 and f["groups"] for f in figs)
        opened.page.screenshot(path=str(artifacts() / f"{kind}.png"), full_page=True)
    finally:
        opened.page.close()


def _expected_heat(doc_nodes: int, gpu_nodes: int) -> int:
    return 3 * doc_nodes + gpu_nodes  # cpu, memory, pods per node; nvidia.com/gpu where offered


def test_explain_marks_every_node_and_the_pods_fit(browser, reports):
    path, doc = reports["explain"]
    opened = open_page(browser, path)
    try:
        fig = utilization_figure(figures(opened))
        fit = Counter(marks_of(fig, "layer_0_marks"))
        assert sum(fit.values()) == doc["nodeCount"] == 20
        assert fit[SELECTED] == 1
        assert fit[FEASIBLE] == len(doc["feasibleNodes"]) - 1 == 7
        assert len(marks_of(fig, "layer_1_marks")) == _expected_heat(20, 2)
        # one panel per zone and pool: 3 zones x general, gpu (a, b), highmem
        assert len([g for g in fig["groups"] if g["name"].endswith("_marks")]) == 2 * 8
        # the filter matrix: a row per node group, as the terminal groups them
        rows = opened.page.locator("#filters ~ div.scroll table").first.locator("tbody tr").count()
        assert rows == len(doc["nodeGroups"])
        # the spread breakdown: a bar per zone
        spread = next(f for f in figures(opened) if "maxSkew" in f["caption"])
        assert len(marks_of(spread)) == 3
    finally:
        opened.page.close()


def test_capacity_sweep_scale_up_and_diff_draw_their_bars(browser, reports):
    _, cap = reports["capacity"]
    opened = open_page(browser, reports["capacity"][0])
    try:
        figs = figures(opened)
        per_zone = next(f for f in figs if f["caption"] == "Copies per topology.kubernetes.io/zone")
        assert len(marks_of(per_zone)) == len(cap["perTemplate"][0]["perLabel"]["topology.kubernetes.io/zone"]) == 3
    finally:
        opened.page.close()
    _, sweep = reports["sweep"]
    opened = open_page(browser, reports["sweep"][0])
    try:
        lost = next(f for f in figures(opened) if f["caption"].startswith("Pods each scenario leaves"))
        assert len(marks_of(lost)) == 2 * len(sweep["scenarios"]) == 6  # not rescheduled, lost: stacked
    finally:
        opened.page.close()
    _, up = reports["scale-up"]
    opened = open_page(browser, reports["scale-up"][0])
    try:
        groups = next(f for f in figures(opened) if f["caption"].startswith("New nodes per node group"))
        assert len(marks_of(groups)) == len(up["nodeGroups"]) == 8
    finally:
        opened.page.close()
    _, diff = reports["diff"]
    opened = open_page(browser, reports["diff"][0])
    try:
        figs = figures(opened)
        cpu = next(f for f in figs if f["caption"].startswith("cpu: requested / allocatable"))
        assert len(marks_of(cpu)) == 2 * 8  # A and B for each of the 8 zone/pool groups
        after = next(f for f in figs if f["caption"].startswith("Utilization of every node"))
        assert len(marks_of(after)) == _expected_heat(diff["diff"]["b"]["nodes"], 2)
    finally:
        opened.page.close()


def test_a_page_that_requests_anything_is_caught(browser, tmp_path):
    # the harness itself: a page reaching out (aborted here, never sent) is seen
    page = tmp_path / "leaky.html"
    page.write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="http://127.0.0.1:9/x.css"></head>'
        '<body><img src="http://127.0.0.1:9/x.png" alt=""></body></html>'
    )
    opened = open_page(browser, page)
    try:
        assert opened.requests
    finally:
        opened.page.close()


def test_print_layout_keeps_the_charts(browser, reports):
    opened = open_page(browser, reports["explain"][0])
    try:
        opened.page.emulate_media(media="print")
        assert opened.page.locator("figure svg").first.is_visible()
        pdf = opened.page.pdf()
        assert pdf[:4] == b"%PDF"
    finally:
        opened.page.close()
