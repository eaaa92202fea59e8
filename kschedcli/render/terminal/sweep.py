"""`ksched sweep`: the terminal view of a sweep, read from its document (Sweep.to_dict()), so
that it is the same however the scenarios ran (this process, a local pool, Dask)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ..richsafe import Text
from .layout import Hang, TableOrStack, glue, indent, name_list, new_table, plural, print_blocks, section

_WHAT = {
    "node": "every node failing alone",
    "zone": "every zone failing",
    "nodes": "random sets of nodes failing together",
    "rolling": "a rolling upgrade, one batch of nodes drained at a time",
}


def _when(d: dict[str, Any]) -> str:
    fam, name = d["family"], d["name"]
    if fam == "node":
        return f"node {name} fails"
    if fam == "zone":
        return f"zone {name} fails"
    if fam == "rolling":
        return f"rolling step {name} drains {', '.join(d['nodes'])}"
    return f"nodes {', '.join(d['nodes'])} fail"


def _counts(d: dict[str, Any]) -> list[tuple[str, str]]:
    out = [
        ("down", str(d["podsOnFailedNodes"])),
        ("recreated", str(d["recreated"])),
        ("pending", str(len(d["pending"]))),
        ("preempting", str(len(d["preempting"]))),
        ("below", str(d["workloadsBelowDesired"])),
    ]
    if d["family"] == "rolling":
        out.insert(2, ("blocked", str(len(d.get("blocked") or []))))
    return out


def _verdict(d: dict[str, Any]) -> Text:
    return Text("✔ ok", style="ok") if d["ok"] else Text("✘ no", style="bad")


def _table(rows: list[dict[str, Any]], rolling: bool) -> Any:
    t = new_table()
    t.add_column("Scenario", style="node", no_wrap=True)
    heads = ["Down", "New"] + (["Blocked"] if rolling else []) + ["Pending", "Preempt", "Below"]
    for h in heads:
        t.add_column(h, justify="right", no_wrap=True)
    t.add_column("OK", no_wrap=True)
    for d in rows:
        label = d["name"] if d["family"] != "nodes" else f"{d['name'].split(' ', 1)[0]}"
        t.add_row(label, *(v for _, v in _counts(d)), _verdict(d))
    return t


def _stacked(rows: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for d in rows:
        head = Text()
        head.append_text(_verdict(d))
        head.append("  ")
        head.append(d["name"], style="node")
        out.append(Hang(head, 0, 4))
        out.append(Hang(Text(" · ".join(glue(f"{k} {v}") for k, v in _counts(d)), style="muted"), 4, 6))
    return out


def _findings(d: dict[str, Any]) -> list[Any]:
    lines: list[Any] = []

    def line(mark: str, text: str, style: str) -> None:
        lines.append(Hang(Text(f"  {mark} {text}", style=style), 2, 6))

    by_reason: dict[str, list[str]] = {}
    for p in d["pending"]:
        by_reason.setdefault(p["reason"], []).append(p["pod"])
    for reason, pods in by_reason.items():
        who = pods[0] + " stays" if len(pods) == 1 else f"{len(pods)} pods stay ({name_list(pods)})"
        line("✘", f"{who} Pending: {reason}", "bad")
    for p in d["lost"]:
        line("✘", f"{p['pod']} on {p['node']} has no controller: lost", "bad")
    by_budget: dict[tuple[str, str], list[str]] = {}
    for b in d.get("blocked") or []:
        by_budget.setdefault((b["budget"], b["message"]), []).append(b["pod"])
    for (budget, message), pods in by_budget.items():
        who = f"eviction of {pods[0]}" if len(pods) == 1 else f"{len(pods)} evictions ({name_list(pods)})"
        line("✘", f"{who} refused by {budget}: {message}", "bad")
    for r in d.get("refused") or []:
        line("✘", r, "bad")
    for p in d["preempting"]:
        line("⚠", f"{p['pod']} fits only by preempting {', '.join(p['victims'])} on {p['node']}", "warn")
    for w in d["workloads"]:
        if w["belowDesired"]:
            line("⚠", f"{w['workload']} runs {w['after']} of {w['desired']} desired (ran {w['running']})", "warn")
    for b in d["budgetsBelowMinimum"]:
        line("⚠", f"PodDisruptionBudget {b['budget']}: {b['healthy']} healthy, needs {b['desiredHealthy']}", "warn")
    return lines


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f}Gi"


def _headroom(d: dict[str, Any]) -> Any:
    t = new_table()
    t.add_column("Zone", style="node", no_wrap=True)
    t.add_column("Nodes", justify="right", no_wrap=True)
    t.add_column("CPU free", justify="right", no_wrap=True)
    t.add_column("Memory free", justify="right", no_wrap=True)
    t.add_column("Pods", justify="right", no_wrap=True)
    for z in d["headroom"]:
        t.add_row(
            z["zone"] or "(no zone)",
            str(z["nodes"]),
            f"{z['cpuMillis'] / 1000:.1f}",
            _gib(z["memoryBytes"]),
            str(z["pods"]),
        )
    return t


def sweep_renderables(doc: dict[str, Any], top: int = 10) -> list[list[Any]]:
    s = doc["summary"]
    docs = doc["scenarios"]
    rolling = s["family"] == "rolling"
    blocks: list[list[Any]] = []
    order = [w["index"] for w in s["worst"]]
    shown = [docs[i] for i in order]
    if top == 0:  # all: the worst first, then the others in their order
        listed = set(order)
        shown += [d for i, d in enumerate(docs) if i not in listed]
    head = section(
        "Sweep",
        f"{plural(s['scenarios'], 'scenario')}: {_WHAT[s['family']]}; replacements scheduled highest "
        "priority first, preemption carried out",
    )
    rest = len(docs) - len(shown)
    failing_hidden = s["failing"] - sum(1 for d in shown if not d["ok"])
    cut: list[Any] = []
    if rest > 0:
        what = (
            f"{failing_hidden} of them losing a pod (--top 0 shows all)"
            if failing_hidden
            else "each keeping every pod running"
        )
        cut = [Text(f"  … {plural(rest, 'more scenario')} not shown, {what}", style="muted")]
    title = "worst first" if s["worst"] else "none loses a pod"
    if shown:
        table = indent(TableOrStack(_table(shown, rolling), _stacked(shown)))
        blocks.append([head, Text(f"  {title}", style="muted"), table, *cut])
    else:  # nothing to list (every scenario keeps every pod): no table of no rows
        every = f"  {plural(rest, 'scenario')}, each keeping every pod running (--top 0 lists them)"
        blocks.append([head, Text(f"  {title}", style="muted"), Text(every, style="muted")])
    found: list[Any] = []
    for d in shown:
        lines = _findings(d)
        if lines:
            found.append(Hang(Text(f"When {_when(d)}:", style="title"), 0, 4))
            found += lines
    if found:
        blocks.append([section("Findings"), *found])
    exposure = [e for e in s["exposure"] if e["down"]]
    if exposure:
        lines = []
        for e in exposure:
            after = e["lostAfterRescheduling"]
            tail = f", {after} still down after rescheduling" if after else ", all back after rescheduling"
            lines.append(
                Hang(
                    Text(f"  {e['workload']} loses {e['down']} of {e['running']} when {_when(docs[e['index']])}{tail}"),
                    2,
                    6,
                )
            )
        if s["exposureOmitted"]:
            lines.append(Text(f"  … {plural(s['exposureOmitted'], 'more workload')}", style="muted"))
        blocks.append([section("Exposure", "each workload's worst scenario"), *lines])
    if shown and shown[0]["headroom"]:
        blocks.append([section("Headroom", f"free allocatable when {_when(shown[0])}"), indent(_headroom(shown[0]))])
    n1 = s["verdict"]
    ok = s["safe"]
    verdict = (
        f"✔ {n1}: every scenario keeps every pod running"
        if ok
        else f"✘ {n1}: {s['failing']} of {plural(s['scenarios'], 'scenario')} leave a pod not running"
        + (" or a node not drained" if s["family"] == "rolling" else "")
    )
    blocks.append([Text(verdict, style="ok" if ok else "bad")])
    return blocks


def render_sweep(doc: dict[str, Any], console: Console, top: int = 10) -> None:
    print_blocks(console, sweep_renderables(doc, top))
