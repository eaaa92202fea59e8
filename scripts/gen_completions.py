#!/usr/bin/env python3
"""Regenerate completions/ from the CLI: `python scripts/gen_completions.py`.

tests/cli/test_cli_completion.py fails when the files differ from what the CLI generates."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kschedcli.cli.app import completion_script  # noqa: E402

FILES = {"bash": "ksched.bash", "zsh": "_ksched", "fish": "ksched.fish"}


def main() -> int:
    out = ROOT / "completions"
    out.mkdir(exist_ok=True)
    for shell, name in FILES.items():
        (out / name).write_text(completion_script(shell))
        print(f"wrote completions/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
