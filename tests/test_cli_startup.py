"""Startup: a command imports what it needs when it needs it (the figures are in
benchmarks/startup.py and the README; here only which modules a run loads)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs ksched's entry point as the installed script does, then lists the modules it loaded.
PROBE = """
import atexit, sys
atexit.register(lambda: sys.__stderr__.write("MODULES " + " ".join(sorted(sys.modules)) + "\\n"))
from kschedcli.cli import main
sys.argv = ["ksched"] + sys.argv[1:]
main()
"""


def modules_loaded_by(*args: str) -> set[str]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "120"},
        timeout=120,
    )
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("MODULES ")]
    assert r.returncode in (0, 1) and lines, r.stderr
    return set(lines[-1].split()[1:])


def top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_plain_explain_does_not_import_jsonschema_or_pydantic():
    mods = modules_loaded_by("explain", "fixtures/pods/web.yaml", "-c", "fixtures/small-cluster.yaml")
    assert "kschedcli.scheduler" in mods and "rich" in top_level(mods)  # it did run and render
    assert "jsonschema" not in top_level(mods)  # only a --config file is validated against a schema
    assert "pydantic" not in top_level(mods)  # typer >= 0.29 coerces every option through pydantic


def test_a_config_file_brings_in_jsonschema():
    mods = modules_loaded_by(
        "explain",
        "fixtures/pods/web.yaml",
        "-c",
        "fixtures/small-cluster.yaml",
        "--config",
        "fixtures/config/profiles.yaml",
    )
    assert "jsonschema" in top_level(mods)


def test_help_reads_no_snapshot_code_and_draws_nothing():
    mods = modules_loaded_by("--help")
    loaded = top_level(mods)
    assert "typer" in loaded
    for heavy in ("yaml", "rich", "jsonschema", "pydantic", "orjson"):
        assert heavy not in loaded, heavy
    assert not {m for m in mods if m.startswith(("kschedcli.loader", "kschedcli.plugins", "kschedcli.cluster"))}
