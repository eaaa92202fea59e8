"""The first two blocks of explain and preempt: the pod line and the verdict."""

from __future__ import annotations

from typing import Any

from rich.console import Group

from ..analysis import annotations_of, fmt_cpu, fmt_quantity, fmt_requests, verdict_of
from ..richsafe import Text
from .layout import GLUE, glue, glue_message, hang, name_list, plural


def pod_line(result) -> Group:
    pod = result.pod
    t = Text()
    t.append(pod.key, style="pod")
    t.append("  priority ", style="muted")
    t.append(str(pod.priority))
    if pod.priority_class_name:
        t.append(f" ({pod.priority_class_name})", style="muted")
    t.append("  profile" + GLUE, style="muted")
    t.append(result.profile)
    r = Text("requests ", style="muted")
    r.append(fmt_requests(pod.requests.as_dict()) or "none", style="")
    if (pod.non0_cpu, pod.non0_mem) != (pod.requests.milli_cpu, pod.requests.memory):
        r.append(
            f"  (scoring counts cpu {fmt_cpu(pod.non0_cpu)}, memory {fmt_quantity('memory', pod.non0_mem)}"
            " for containers without requests)",
            style="muted",
        )
    if pod.preemption_policy == "Never":
        r.append("  preemptionPolicy ", style="muted")
        r.append("Never", style="")
    return Group(hang(t), hang(r))


def verdict(result, *, allow_preemption_hint: bool = True) -> Group:
    v = verdict_of(result)
    parts: list[Any] = []
    if v == "error":
        parts.append(Text.assemble(("✘ Error  ", "bad"), (result.error, "")))
        return Group(*[hang(x) for x in parts])
    if v == "schedulable":
        t = Text()
        t.append("✔ Schedulable", style="ok bold")
        t.append(" → ", style="muted")
        t.append(result.selected_node or "", style="node bold")
        total = result.totals.get(result.selected_node)
        if total is not None:
            t.append(f"  score {total}", style="muted")
        parts.append(t)
        ann = annotations_of(result)
        n = ann.get("nodeCount", len(result.filters))
        sub = Text(f"  {len(result.feasible)} of {plural(n, 'node')} feasible", style="muted")
        if len(result.feasible) == 1:
            sub.append("; with one feasible node kube-scheduler skips scoring", style="muted")
        parts.append(sub)
        if len(result.top_nodes) > 1:
            tie = Text("  tie: ", style="warn")
            tie.append(name_list(result.top_nodes, 6), style="node")
            tie.append(
                f" share the top score; kube-scheduler picks one at random (ksched shows {result.selected_node})",
                style="muted",
            )
            parts.append(tie)
        return Group(*[hang(x) for x in parts])
    if v == "preemption":
        p = result.preemption
        t = Text()
        t.append("⚠ Needs preemption", style="warn bold")
        t.append(" → ", style="muted")
        t.append(p.nominated_node, style="node bold")
        t.append(f" would be nominated, evicting {plural(len(p.victims), 'pod')}", style="")
        parts.append(t)
        parts.append(Text("  " + glue_message(result.message)))
        return Group(*[hang(x) for x in parts])
    t = Text("✘ Unschedulable", style="bad")
    parts.append(t)
    parts.append(Text("  " + glue_message(result.message)))
    return Group(*[hang(x) for x in parts])


def version_block(session) -> list[Text]:
    """The last block: the release the answer follows and why it was chosen (versions.Choice)."""
    choice = getattr(session, "version", None)
    if choice is None:
        return []
    # the why in parentheses kept whole when it fits a line: a narrow screen breaks before it
    head, sep, why = ("ksched " + choice.describe()).partition(" (")
    line = head + (" " + glue("(" + why) if sep else "")
    return [Text(line, style="muted"), *additions_lines(session)]


def additions_lines(session) -> list[Text]:
    """The plugins a profile enables that the release followed does not have (SelectorSpread)."""
    scheduler = getattr(session, "scheduler", None)
    seen: dict[str, str] = {}
    for fw in getattr(scheduler, "frameworks", {}).values():
        for name, pl in fw.plugins.items():
            note = getattr(pl, "not_in_release", None)
            if note and name not in seen:
                seen[name] = note
    out = [Text(f"{name}: {note}", style="warn") for name, note in sorted(seen.items())]
    left = getattr(getattr(session, "config", None), "extenders_left_out", None) or []
    if left:
        names = ", ".join(e.name for e in left)
        out.append(Text(f"--no-extenders: the config's HTTP extenders were left out ({names})", style="warn"))
    return out
