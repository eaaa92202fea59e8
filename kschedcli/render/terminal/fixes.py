"""'What would make it fit' in explain: the verified changes, best first (kschedcli/fixes)."""

from __future__ import annotations

from typing import Any

from ..richsafe import Text
from .layout import name_list, plural, section


def fixes_section(result) -> list[Any]:
    search = getattr(result, "suggestions", None)
    if search is None:
        return []
    out: list[Any] = [section("What would make it fit", "each change verified by running the cycle again")]
    if not search.suggestions:
        tried = f"{plural(search.candidates, 'change')} tried in {plural(search.verified, 'cycle')}"
        out.append(Text(f"  no change ksched knows places the pod ({tried})", style="warn"))
        out += _out_of_reach(search)
        return out
    if search.combined:
        out.append(Text("  no single change suffices: two together", style="muted"))
    pod_change = False
    for n, s in enumerate(search.suggestions, start=1):
        line = Text(f"  {n}. ", style="num")
        line.append(s.summary)
        out.append(line)
        out.append(_effect(s))
        out.append(Text("     who acts: " + s.who, style="muted"))
        if s.edits:
            out.append(Text("     ksched explain … " + " ".join(s.edits), style="muted"))
        pod_change = pod_change or s.patch is not None
    out += _out_of_reach(search)
    hint = "--fixes N for more or fewer"
    if pod_change:
        hint += "; -o json gives each pod change as a JSON merge patch of the pod"
    out.append(Text("  " + hint, style="muted"))
    return out


def _effect(s) -> Text:
    v = s.verdict
    t = Text("     → ", style="muted")
    if v.schedulable:
        t.append("schedulable on ", style="ok")
        t.append(v.selected_node or "", style="node bold")
        t.append(f"  ({plural(len(v.feasible_nodes), 'feasible node')}", style="muted")
        if len(v.feasible_nodes) > 1:
            t.append(": " + name_list(v.feasible_nodes), style="muted")
        t.append(")", style="muted")
    else:
        t.append("preemption nominates ", style="warn")
        t.append(v.nominated_node or "", style="node bold")
        t.append(f", evicting {', '.join(v.victims) or 'nothing'}", style="muted")
    return t


def _out_of_reach(search) -> list[Text]:
    """The nodes only someone else can open (an extender's rejections), and who."""
    return [Text("  not the pod's to change: " + o.summary, style="warn") for o in getattr(search, "out_of_reach", ())]
