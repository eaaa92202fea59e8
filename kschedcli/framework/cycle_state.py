"""CycleState: per-cycle plugin data, cloned for preemption's what-if runs."""

from __future__ import annotations

from typing import Any


class NotFound(KeyError):
    """Reading a key no plugin wrote; kube-scheduler's error text is "not found"."""

    def __str__(self) -> str:
        return "not found"


class CycleState:
    __slots__ = (
        "_data",
        "skip_filter_plugins",
        "skip_score_plugins",
        "filter_columns",
        "score_positions",
        "score_positions_array",
        "score_gathered",
        "explained",
    )

    def __init__(self):
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        # every filter plugin's verdicts this cycle, in the snapshot's node order (ksched runs
        # each plugin on every node; PostFilter may read them instead of asking again)
        self.filter_columns: dict[str, list] | None = None
        # while Score runs: the scored nodes' positions in the snapshot's node order, when they
        # are the snapshot's own NodeInfos (plugins may read per-node columns by them)
        self.score_positions: list[int] | None = None
        # (score_positions, the same as a numpy array): made by the first plugin that wants it
        self.score_positions_array: tuple[list[int], Any] | None = None
        # (score_positions, a table of per-node columns, {column name: its values at those
        # positions}, the getter): per-node columns read at the scored nodes once per cycle
        self.score_gathered: tuple[list[int], Any, dict[str, tuple], Any] | None = None
        # False: nothing will read the plugins' explanations of this cycle (the columnar cycle),
        # so what they gather only for them (samples of the pods behind a score) may be left out
        self.explained = True

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise NotFound(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.items():
            c._data[k] = v.clone() if hasattr(v, "clone") else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.filter_columns = self.filter_columns
        c.score_positions = self.score_positions
        c.score_positions_array = self.score_positions_array
        c.score_gathered = self.score_gathered
        c.explained = self.explained
        return c
