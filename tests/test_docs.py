"""The documentation: README.md is the front door (short, its links resolve), docs/ is a MkDocs site
that builds with `mkdocs build --strict` (every page in the nav, every link and anchor resolved), when
mkdocs is installed (`pip install -e '.[docs]'`)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 320
    # one example per command
    for command in ("explain", "preempt", "schedule", "capacity", "drain", "diff", "run", "completion", "cache"):
        assert re.search(rf"ksched {command}\b", readme), command


def test_the_readme_links_resolve():
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert len(local) > 10
    for target in local:
        assert (ROOT / target).exists(), target


def test_every_docs_page_is_in_the_nav():
    """mkdocs --strict fails on pages left out of the nav; said here too, without mkdocs."""
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert "index.md" in pages and "usage/explain.md" in pages
    missing = [p for p in pages if f": {p}\n" not in nav]
    assert not missing, f"docs pages not in mkdocs.yml's nav: {missing}"


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="mkdocs and mkdocstrings are not installed (pip install -e '.[docs]')",
)
def test_the_site_builds_strictly(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert (tmp_path / "site" / "usage" / "explain" / "index.html").is_file()
    reference = (tmp_path / "site" / "reference" / "index.html").read_text()
    assert "kschedcli.framework.result" in reference and "kschedcli.session" in reference


@pytest.mark.parametrize("page", ["README.md", "docs/api.md"])
def test_the_python_examples_run(page, monkeypatch, capsys):
    # the library's examples are the library's promises: each ```python block runs as written
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), re.S)
    assert blocks, page
    namespace: dict = {"__name__": "example"}  # one page's blocks run in turn, as a reader types them
    for block in blocks:
        exec(compile(block, f"{page} example", "exec"), namespace)  # noqa: S102
    assert capsys.readouterr().out  # the README's example prints its answers
