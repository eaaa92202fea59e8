"""Plugins' explanations no other view lays out, and what would make kube-scheduler retry the pod."""

from __future__ import annotations

from typing import Any

from ..richsafe import Text
from .layout import section


def other_details_section(result, shown: set[str]) -> list[Any]:
    """Plugins' explanations the views above do not lay out (volumes, ...), as key: value lines."""
    out: list[Any] = []
    for name in sorted(result.details or {}):
        if name in shown or name == "DefaultPreemption":
            continue
        d = result.details[name]
        lines = Text()
        for k, v in d.items() if isinstance(d, dict) else []:
            if v in (None, [], {}):
                continue
            lines.append(f"  {k}: ", style="muted")
            lines.append(_brief(v) + "\n")
        if lines:
            out.append(section(name, ""))
            lines.rstrip()
            out.append(lines)
    return out


def _brief(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(_brief(x) for x in v[:8]) + (f", … +{len(v) - 8}" if len(v) > 8 else "")
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_brief(x)}" for k, x in list(v.items())[:8]) + "}"
    return str(v)


def retry_section(result) -> list[Any]:
    events = result.events or {}
    if result.schedulable or not events:
        return []
    out: list[Any] = [section("What would make kube-scheduler retry it", "events the rejecting plugins register")]
    for plugin, evs in events.items():
        out.append(Text.assemble("  ", (plugin, "plugin")))
        for e in evs:
            t = Text("    ")
            if isinstance(e, dict):
                t.append(f"{e.get('resource')} {e.get('action')}")
                if e.get("hint"):
                    t.append(f" — {e['hint']}", style="muted")
            else:
                t.append(str(e))
            out.append(t)
        if not evs:
            out.append(Text("    (none registered)", style="muted"))
    if result.preemption is not None and result.preemption.nominated_node:
        out.append(Text("  and the pod is retried on the nominated node once its victims are gone", style="muted"))
    return out
