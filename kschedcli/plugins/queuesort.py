"""PrioritySort: the queue's order, higher priority first, then earlier queue time."""
from __future__ import annotations

from ..framework.interface import Plugin


class PrioritySort(Plugin):
    name = "PrioritySort"

    def less(self, a, b) -> bool:
        if a.priority != b.priority:
            return a.priority > b.priority
        return (a.creation_timestamp or "") < (b.creation_timestamp or "")
