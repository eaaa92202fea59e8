"""framework Status: a code, reasons and the plugin that returned it."""

from __future__ import annotations

SUCCESS = "Success"
ERROR = "Error"
UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
WAIT = "Wait"
SKIP = "Skip"
PENDING = "Pending"


class Status:
    __slots__ = ("code", "reasons", "plugin")

    def __init__(self, code: str = SUCCESS, *reasons: str, plugin: str = ""):
        self.code = code
        self.reasons = list(reasons)
        self.plugin = plugin

    def is_success(self) -> bool:
        return self.code == SUCCESS

    def is_rejected(self) -> bool:
        return self.code in (UNSCHEDULABLE, UNRESOLVABLE, PENDING)

    def is_skip(self) -> bool:
        return self.code == SKIP

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def to_dict(self) -> dict:
        d = {"code": self.code, "reasons": list(self.reasons)}
        if self.plugin:
            d = {"plugin": self.plugin, **d}
        return d

    def __repr__(self) -> str:
        return f"Status({self.code}, {self.reasons!r}, plugin={self.plugin!r})"


OK = None  # plugins return None for Success, as kube-scheduler's nil status


def code_of(status: Status | None) -> str:
    return SUCCESS if status is None else status.code


def unschedulable(*reasons: str) -> Status:
    return Status(UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(UNRESOLVABLE, *reasons)


def error(*reasons: str) -> Status:
    return Status(ERROR, *reasons)


def skip() -> Status:
    return Status(SKIP)
