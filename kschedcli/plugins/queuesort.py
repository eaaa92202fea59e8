"""PrioritySort: the queue's order, higher priority first, then earlier queue time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..framework.interface import Plugin, QueueSortPlugin

if TYPE_CHECKING:
    from ..api.model import Pod


class PrioritySort(Plugin, QueueSortPlugin):
    name = "PrioritySort"

    def less(self, a: Pod, b: Pod) -> bool:
        if a.priority != b.priority:
            return a.priority > b.priority
        return (a.creation_timestamp or "") < (b.creation_timestamp or "")
