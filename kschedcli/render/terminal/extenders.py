"""The HTTP extenders' part in a cycle (result.ExtenderCall), and what --no-extenders left out."""

from __future__ import annotations

from typing import Any

from ..richsafe import Text
from .layout import plural, section

_OUTCOME = {
    "ok": ("answered", "ok"),
    "error": ("failed the cycle", "bad"),
    "ignored": ("failed, skipped", "warn"),
    "not-interested": ("not asked: the pod requests none of its managedResources", "muted"),
    "not-called": ("not called: ksched binds nothing", "muted"),
}


def _names(names: list[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … +{len(names) - limit}" if len(names) > limit else "")


def _call_lines(c) -> list[Text]:
    what, style = _OUTCOME.get(c.outcome, (c.outcome, ""))
    head = Text("  ")
    head.append(f"{c.verb:<10} ", style="plugin")
    head.append(c.extender, style="node")
    head.append("  " + what, style=style)
    out = [head]
    d = c.detail
    if c.outcome == "ignored" and c.verb == "prioritize":
        out.append(Text("    no score from it (kube-scheduler skips a Prioritize error)", style="muted"))
    elif c.outcome == "ignored":
        out.append(Text("    ignorable: skipped, as kube-scheduler skips it", style="muted"))
    if c.error:
        out.append(Text("    " + c.error, style="bad" if c.outcome == "error" else "warn"))
        if d.get("bound"):
            out.append(Text(f"    bound reached: {d['bound']}", style="muted"))
    if c.outcome != "ok":
        return out
    if c.verb == "filter":
        t = Text(f"    sent {plural(len(d.get('sent', [])), 'node')}, {len(d.get('passed', []))} passed", style="muted")
        out.append(t)
        for key, label in (("failed", "Unschedulable"), ("failedAndUnresolvable", "UnschedulableAndUnresolvable")):
            for node, msg in (d.get(key) or {}).items():
                out.append(Text.assemble("    ✗ ", (node, "node"), f": {msg} ", (f"({label})", "muted")))
        if d.get("dropped"):
            out.append(Text(f"    not returned, no status of their own: {_names(d['dropped'])}", style="muted"))
        if d.get("nodesAsObjects"):
            out.append(
                Text(
                    "    answered with Node objects: kube-scheduler v1.34.1 scores them without their pods "
                    "(kubernetes#141781), and so does ksched",
                    style="warn",
                )
            )
    elif c.verb == "prioritize":
        scores = d.get("scores") or []
        w = d.get("weight", 0)
        text = ", ".join(f"{s['host']} {s['score']}" for s in scores[:8]) + (" …" if len(scores) > 8 else "")
        out.append(
            Text(f"    weight {w}, each score × {w} × 10 added to the total: {text or 'no host'}", style="muted")
        )
    elif c.verb == "preempt":
        kept = d.get("kept") or {}
        out.append(Text(f"    sent {plural(len(d.get('sent', [])), 'candidate')}, kept {len(kept)}", style="muted"))
        for node, v in kept.items():
            out.append(Text.assemble("    ", (node, "node"), ": evict ", ", ".join(v.get("victims", []))))
        if d.get("dropped"):
            out.append(Text(f"    dropped: {_names(d['dropped'])}", style="muted"))
    return out


def extenders_section(result) -> list[Any]:
    calls = getattr(result, "extender_calls", None) or []
    out: list[Any] = []
    if calls:
        out.append(section("Extenders", f"{plural(len(calls), 'call')}, HTTP, after the plugins"))
        for c in calls:
            out.extend(_call_lines(c))
    return out


def skipped_note(results) -> list[Text]:
    """A sequence's extender calls that failed and were skipped (ignorable, or a Prioritize)."""
    skipped = [c for r in results for c in getattr(r, "extender_calls", ()) if c.outcome == "ignored"]
    if not skipped:
        return []
    names = sorted({c.extender for c in skipped})
    return [
        Text(
            f"extenders: {plural(len(skipped), 'call')} failed and {'was' if len(skipped) == 1 else 'were'} skipped "
            f"as kube-scheduler skips them ({', '.join(names)}); ksched explain shows each",
            style="warn",
        )
    ]
