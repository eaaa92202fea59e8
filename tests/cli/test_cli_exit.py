"""How `ksched` ends (cli_errors.exit_after): without Python's object-by-object teardown, but
otherwise as Python ends: the same status, atexit handlers run, buffered output written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(body: str) -> subprocess.CompletedProcess:
    code = "import atexit, sys, threading\nfrom kschedcli.cli.errors import exit_after\n" + body
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_status_output_and_atexit_handlers_as_python_would():
    r = _run("atexit.register(print, 'handler ran')\nexit_after(lambda: (sys.stdout.write('out'), sys.exit(3)))")
    assert (r.returncode, r.stdout) == (3, "outhandler ran\n")
    r = _run("exit_after(lambda: sys.stdout.write('x' * 100000))")  # no newline, fully buffered: still written
    assert (r.returncode, len(r.stdout)) == (0, 100000)
    r = _run("exit_after(lambda: sys.exit(None))")
    assert r.returncode == 0


def test_a_message_as_exit_code_is_printed_with_status_1():
    r = _run("exit_after(lambda: sys.exit('ksched: gone wrong'))")
    assert (r.returncode, r.stderr) == (1, "ksched: gone wrong\n")


def test_another_running_thread_is_waited_for():
    r = _run(
        "import time\n"
        "t = threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True)))\n"
        "t.start()\n"
        "exit_after(lambda: sys.exit(4))"
    )
    assert (r.returncode, r.stdout) == (4, "thread done\n")


def test_the_command_line_keeps_its_statuses():
    ksched = [sys.executable, "-m", "kschedcli"]
    bad = subprocess.run([*ksched, "explain", "no-such-file.yaml"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and not bad.stdout
    ok = subprocess.run([*ksched, "version"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.startswith("ksched ")


def test_a_profiler_still_writes_its_findings(tmp_path):
    out = tmp_path / "prof.out"
    r = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "kschedcli", "version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and out.stat().st_size > 0
