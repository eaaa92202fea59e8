"""Startup: a command imports what it needs when it needs it (the figures are in
benchmarks/startup.py and the README; here only which modules a run loads)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Runs ksched's entry point as the installed script does, then lists the modules it loaded.
PROBE = """
import atexit, sys
atexit.register(lambda: sys.__stderr__.write("MODULES " + " ".join(sorted(sys.modules)) + "\\n"))
from kschedcli.cli.app import main
sys.argv = ["ksched"] + sys.argv[1:]
main()
"""


def run_probe(args: tuple[str, ...], env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "120", **(env or {})},
        timeout=120,
    )
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("MODULES ")]
    assert r.returncode in (0, 1) and lines, r.stderr
    return r, set(lines[-1].split()[1:])


def modules_loaded_by(*args: str) -> set[str]:
    return run_probe(args)[1]


def top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


EXPLAIN = ("explain", "fixtures/pods/web.yaml", "-c", "fixtures/small-cluster.yaml")

# what no command that only prints help, a version or completions needs
SNAPSHOT_CODE = (
    "kschedcli.loader",
    "kschedcli.plugins",
    "kschedcli.inputs.cluster",
    "kschedcli.whatif.world",
    "kschedcli.scheduling.scheduler",
    "kschedcli.whatif.edits",
    "kschedcli.workloads.expansion",
    "kschedcli.inputs.live",
    "kschedcli.config.versions",
    "kschedcli.api.validation",
    "kschedcli.api.fieldtree",
    "kschedcli.config.scheduler",
    "kschedcli.render.terminal",
    "kschedcli.scheduling.analysis",
)


def loaded_under(mods: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {m for m in mods if any(m == p or m.startswith(p + ".") for p in prefixes)}


def test_plain_explain_does_not_import_jsonschema_or_pydantic():
    mods = modules_loaded_by(*EXPLAIN)
    assert "kschedcli.scheduling.scheduler" in mods and "rich" in top_level(mods)  # it did run and render
    assert "jsonschema" not in top_level(mods)  # only a --config file is validated against a schema
    assert "pydantic" not in top_level(mods)  # typer >= 0.29 coerces every option through pydantic


def test_plain_explain_loads_only_what_it_uses():
    mods = modules_loaded_by(*EXPLAIN)
    assert "kschedcli.render.terminal.explain" in mods  # the view it drew
    unused = (
        "kschedcli.inputs.live",  # --cluster given: kubectl is not run
        "kschedcli.whatif.edits",  # no edit flag
        "kschedcli.render.terminal.schedule",  # the other commands' views
        "kschedcli.render.terminal.carryout",
        "kschedcli.render.terminal.preempt",
        "kschedcli.render.document",  # -o json / yaml only
        "kschedcli.whatif.capacity",
        "kschedcli.whatif.drain",
        "kschedcli.whatif.diff",
        "kschedcli.whatif.scenario",
        "concurrent.futures",  # the loader's worker processes, for files over 24 MiB
        "hashlib",  # names and uids of workloads' pods; a Pod file has its own
        "importlib.resources",  # the field trees are read as a plain file
        "logging",  # the CEL bindings' logger is silenced when a selector is first compiled
    )
    assert loaded_under(mods, unused) == set()


def test_edit_flags_and_json_output_load_their_layers():
    # the other side of the test above: the modules it keeps out do load when asked for
    mods = modules_loaded_by(*EXPLAIN, "--cordon", "node-a", "-o", "json")
    assert {"kschedcli.whatif.edits", "kschedcli.render.document"} <= mods
    assert "kschedcli.render.terminal.explain" not in mods


def test_version_and_subcommand_help_read_no_snapshot_code():
    for args in (("version",), ("explain", "--help"), ("--version",)):
        mods = modules_loaded_by(*args)
        assert loaded_under(mods, SNAPSHOT_CODE) == set(), args
        assert not {"rich", "yaml", "json", "jsonschema", "orjson"} & top_level(mods), args


def test_completion_of_node_names_reads_the_snapshot_but_schedules_nothing():
    env = {
        "_KSCHED_COMPLETE": "complete_bash",
        "COMP_WORDS": "ksched explain x.yaml -c fixtures/small-cluster.yaml --node ",
        "COMP_CWORD": "6",
    }
    r, mods = run_probe((), env)
    assert r.stdout.split() == ["node-a", "node-b", "node-gpu"]  # it did complete, from the snapshot
    assert "kschedcli.loader" in mods
    assert loaded_under(mods, tuple(p for p in SNAPSHOT_CODE if p != "kschedcli.loader")) == set()
    assert not {"rich", "jsonschema"} & top_level(mods)


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
    for heavy in ("yaml", "rich", "json", "jsonschema", "pydantic", "orjson"):
        assert heavy not in loaded, heavy
    assert not {m for m in mods if m.startswith(("kschedcli.loader", "kschedcli.plugins", "kschedcli.inputs.cluster"))}


def test_explain_builds_only_its_own_command_and_no_network_code():
    # the other commands' modules (and their Typer parameters) are not loaded for `ksched explain`,
    # nor the HTTP client an extender would need (issue 35)
    mods = modules_loaded_by(*EXPLAIN)
    assert "kschedcli.cli.explain" in mods
    others = ("kschedcli.cli.whatif", "kschedcli.cli.sweep", "kschedcli.cli.autoscaler", "kschedcli.cli.cache")
    assert loaded_under(mods, others) == set()
    assert not {"http", "ssl", "socket", "email"} & top_level(mods)
    assert "kschedcli.scheduling.extender_client" in mods  # it is loaded, its network modules are not


def test_the_app_still_has_every_command():
    # `ksched --help`, tests and completion see every command, in the help's order
    from kschedcli.cli import app as app_module

    names = [name for name, *_ in app_module.COMMANDS]
    import typer.main

    group = typer.main.get_command(app_module.app)
    assert list(group.commands) == names  # type: ignore[attr-defined]
    only = typer.main.get_command(app_module.build_app("drain"))
    assert list(only.commands) == ["drain"]  # type: ignore[attr-defined]


def test_which_command_is_built():
    from kschedcli.cli.app import _invoked

    assert _invoked(["explain", "pod.yaml"]) == "explain"
    assert _invoked(["--no-cache", "-v", "scale-up", "x"]) == "scale-up"
    assert _invoked(["cache", "clear"]) == "cache"
    assert _invoked(["explian", "pod.yaml"]) is None  # an unknown word: its error names the commands
    assert _invoked(["--help"]) is None and _invoked([]) is None


def test_completion_builds_the_command_whose_words_it_completes(monkeypatch):
    from kschedcli.cli.app import _completed

    bash = {"COMP_WORDS": "ksched explain x.yaml --node ", "COMP_CWORD": "3"}
    assert _completed(bash) == "explain"
    assert _completed({"COMP_WORDS": "ksched expl", "COMP_CWORD": "1"}) is None  # the command's name itself
    assert _completed({"COMP_WORDS": "ksched --no-cache drain ", "COMP_CWORD": "3"}) == "drain"
    assert _completed({"_TYPER_COMPLETE_ARGS": "ksched sweep --"}) == "sweep"
    assert _completed({"_TYPER_COMPLETE_ARGS": "ksched sw"}) is None
    assert _completed({"_TYPER_COMPLETE_ARGS": "ksched "}) is None


def test_a_mistyped_command_is_still_told_apart_from_the_others():
    r = subprocess.run(
        [sys.executable, "-m", "kschedcli", "explian", "pod.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "120"},
        timeout=120,
    )
    assert r.returncode == 2 and "Did you mean 'explain'?" in r.stderr, r.stderr


def test_explain_of_a_json_pod_from_the_cache_loads_no_yaml_dra_or_fixes(tmp_path):
    # issue 35: `ksched explain POD.json -c SNAPSHOT` again (the snapshot from the cache) reads no
    # YAML, runs no worker process, allocates no device and looks for no fix for a pod that fits
    import json as _json

    import yaml

    pod = tmp_path / "web.json"
    pod.write_text(_json.dumps(yaml.safe_load((ROOT / "fixtures/pods/web.yaml").read_text())))
    args = ("-v", "explain", str(pod), "-c", "fixtures/small-cluster.yaml")
    env = {"KSCHED_CACHE_DIR": str(tmp_path / "cache"), "KSCHED_CACHE_KEY_FILE": str(tmp_path / "key")}
    run_probe(args, env)  # parses and writes the entry
    for _ in range(600):
        if any(p.name.endswith(".cluster") and not p.name.startswith(".") for p in (tmp_path / "cache").iterdir()):
            break
        import time

        time.sleep(0.05)
    r, mods = run_probe(args, env)
    assert "from the cache" in r.stderr and "kschedcli.render.terminal.explain" in mods
    unused = (
        "yaml",
        "kschedcli.loader.yaml_reader",
        "kschedcli.loader.workers",
        "kschedcli.dra.allocator",
        "kschedcli.dra.cel",
        "kschedcli.dra.tracker",
        "kschedcli.whatif.fixes",
    )
    assert loaded_under(mods, unused) == set()
