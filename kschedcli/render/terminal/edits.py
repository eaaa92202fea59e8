"""The terminal block that states the cluster edits a command applied (edits.Applied)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ..richsafe import Text
from .layout import hang


def edits_block(applied: list) -> list[Any]:
    """`Cluster edits` and one line per edit: the flag as given, then what it did."""
    if not applied:
        return []
    head = Text()
    head.append("Cluster edits", style="title")
    head.append("  applied in this order, in memory, before scheduling", style="muted")
    out: list[Any] = [head]
    for i, a in enumerate(applied, start=1):
        line = Text(f"  {i}. ")
        line.append(f"{a.edit.flag} {a.edit.value}", style="plugin")
        line.append(f"  {a.summary}")
        out.append(line)
    return out


def render_edits(applied: list, console: Console) -> None:
    """The block and a blank line, before the command's own output; nothing without edits."""
    block = edits_block(applied)
    if not block:
        return
    for item in block:
        console.print(hang(item))
    console.print()
