"""The README's first two commands are the whole set-up on a fresh clone: the first installs ksched
and runs it on a shipped fixture, the second installs what the tests need and runs them, and CI
(.ci/run) runs exactly that second command."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _first_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block, "README.md has no sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_a_run_command_and_a_test_command():
    run, test = _first_commands()
    assert run.startswith("pip install . && ksched ")
    # every file the run command names is shipped in the checkout
    for word in shlex.split(run):
        if word.endswith((".yaml", ".yml", ".json")):
            assert (ROOT / word).is_file(), word
    assert "[test]" in test and "python -m pytest" in test


def test_ci_runs_exactly_the_readme_test_command():
    _, test = _first_commands()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert any(line == test or line.startswith(test + " ") for line in ci), (test, ci)
    # and the checks the README's development section names
    assert "ruff check ." in ci and "mypy" in ci


def test_the_test_extra_installs_the_checks():
    pyproject = (ROOT / "pyproject.toml").read_text()
    extra = re.search(r"^test = \[(.*)\]$", pyproject, re.M)
    assert extra, "no [test] extra"
    for tool in ("pytest", "ruff", "mypy"):
        assert f'"{tool}' in extra.group(1), tool
