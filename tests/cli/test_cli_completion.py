"""Shell completion: completions/ is what the CLI generates (regenerate with
`python scripts/gen_completions.py`), `--install-completion` installs it, and --node, --profile and pod
names complete from the snapshot and config named earlier on the command line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PROD = "fixtures/prod-cluster.yaml"
PROFILES = "fixtures/config/profiles.yaml"
FILES = {"bash": "ksched.bash", "zsh": "_ksched", "fish": "ksched.fish"}


@pytest.mark.parametrize("shell", sorted(FILES))
def test_completion_scripts_are_up_to_date(shell):
    r = CliRunner().invoke(app, ["completion", shell])
    assert r.exit_code == 0
    committed = (ROOT / "completions" / FILES[shell]).read_text()
    assert r.stdout == committed, f"completions/{FILES[shell]} is out of date: run `python scripts/gen_completions.py`"
    assert "_KSCHED_COMPLETE=complete_" + shell in committed


def test_install_completion_writes_the_script(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    r = CliRunner().invoke(app, ["--install-completion", "bash"], prog_name="ksched")
    assert r.exit_code == 0, r.output
    assert "bash completion installed in" in r.stdout
    script = tmp_path / ".bash_completions" / "ksched.sh"
    assert script.read_text().strip() == (ROOT / "completions" / "ksched.bash").read_text().strip()
    assert str(script) in (tmp_path / ".bashrc").read_text()


def complete(words: str, monkeypatch) -> list[str]:
    """What the bash script gets back: COMP_WORDS / COMP_CWORD as bash sets them."""
    monkeypatch.chdir(ROOT)
    cwords = words.split(" ")
    r = CliRunner().invoke(
        app,
        [],
        prog_name="ksched",
        env={"_KSCHED_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(cwords) - 1)},
    )
    assert r.exit_code == 0, r.output
    return r.stdout.rstrip("\n").split("\n") if r.stdout.strip() else []


def test_node_completes_from_the_snapshot_named_earlier(monkeypatch):
    assert complete(f"ksched explain x.yaml --cluster {PROD} --node gpu", monkeypatch) == ["gpu-a-01", "gpu-b-01"]
    assert len(complete(f"ksched explain x.yaml -c {PROD} --node general-", monkeypatch)) == 15
    # no snapshot named yet: nothing to offer
    assert complete("ksched explain x.yaml --node gpu", monkeypatch) == []


def test_profile_completes_from_the_config_named_earlier(monkeypatch):
    assert complete(f"ksched explain x.yaml --config {PROFILES} --profile ", monkeypatch) == [
        "default-scheduler",
        "bin-packing",
    ]
    assert complete(f"ksched preempt x.yaml --config {PROFILES} --profile bin", monkeypatch) == ["bin-packing"]
    assert complete("ksched explain x.yaml --profile ", monkeypatch) == ["default-scheduler"]


def test_pod_argument_completes_pending_pods_of_the_snapshot(monkeypatch):
    assert complete(f"ksched explain --cluster {PROD} ", monkeypatch) == [
        "shop/checkout-6b8c9d7f5-h2j4k",
        "batch/reporting-28391745-x7k2q",
    ]
    assert complete(f"ksched preempt -c {PROD} batch/", monkeypatch) == ["batch/reporting-28391745-x7k2q"]
    # a prefix no pending pod has: nothing, so the shell completes file names
    assert complete(f"ksched explain -c {PROD} fixtures/po", monkeypatch) == []


def test_subcommands_and_options_complete(monkeypatch):
    assert set(complete("ksched ", monkeypatch)) >= {
        "explain",
        "schedule",
        "preempt",
        "schema",
        "version",
        "completion",
    }
    assert "--all-nodes" in complete("ksched explain --a", monkeypatch)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_bash_script_drives_ksched(tmp_path):
    """Source completions/ksched.bash in a real bash and ask it, as pressing TAB would."""
    exe = shutil.which("ksched")
    if exe is None:
        pytest.skip("ksched is not on PATH")
    script = (
        f"source {ROOT / 'completions' / 'ksched.bash'}\n"
        f"COMP_WORDS=(ksched explain --cluster {PROD} --node gpu-b); COMP_CWORD=5\n"
        "_ksched_completion ksched\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    p = subprocess.run(
        ["bash", "--norc", "-c", script], capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL
    )
    assert p.stdout.split() == ["gpu-b-01"], p.stderr
