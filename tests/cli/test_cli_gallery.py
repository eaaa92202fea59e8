"""The README's gallery is generated, not drawn: scripts/gallery.py renders the fixtures with the CLI's
own renderers and Rich's SVG export. And the README keeps its first two commands."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def svg_text(path: Path) -> str:
    """The text of a Rich SVG export, spaces restored."""
    raw = path.read_text()
    return html.unescape(" ".join(re.findall(r">([^<>]*)</text>", raw))).replace("\xa0", " ")


def test_gallery_script_renders_every_view(tmp_path):
    p = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gallery.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr
    made = sorted(x.name for x in tmp_path.glob("*.svg"))
    assert made == sorted(x.name for x in (ROOT / "docs" / "gallery").glob("*.svg"))
    text = svg_text(tmp_path / "explain-unschedulable.svg")
    assert "Unschedulable" in text and "13 nodes" in text and "NodeResourcesFit" in text
    assert "What would make it fit" in text and "tolerate the taint workload=highmem:NoSchedule" in text
    text = svg_text(tmp_path / "explain-needs-preemption.svg")
    assert "What would make it fit" in text and "uncordon general-c-05" in text
    text = svg_text(tmp_path / "preempt.svg")
    assert "general-c-02" in text and "batch/etl-adhoc-024" in text
    assert "<svg" in (tmp_path / "schedule.svg").read_text()[:200]


def test_readme_links_the_gallery_and_keeps_its_first_commands():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1).splitlines()
    assert block[:2] == [
        "pip install . && ksched explain fixtures/pods/web.yaml --cluster fixtures/small-cluster.yaml",
        "pip install -e '.[test]' && python -m pytest -q",
    ]
    assert "(docs/gallery.md)" in readme
    # the gallery page (docs/gallery.md) shows every image
    gallery = (ROOT / "docs" / "gallery.md").read_text()
    svgs = list((ROOT / "docs" / "gallery").glob("*.svg"))
    assert svgs
    for svg in svgs:
        assert f"](gallery/{svg.name})" in gallery, svg.name
