"""`ksched scale-up` in the terminal: the pods that fit existing nodes, per node group the nodes
cluster-autoscaler's binpacking estimate adds and the pods they help, what each expander picks,
and the pods no group can help with each group's reason. Reads the -o json document only."""

from __future__ import annotations

from rich.console import Console

from ..richsafe import Text
from .layout import Hang, TableOrStack, indent, make_console, new_table, plural, print_blocks, prose, section

# rows of a pod list before it is cut (the rest counted)
_ROWS = 10


def _cut(names: list, limit: int = _ROWS) -> tuple[list, int]:
    return names[:limit], max(0, len(names) - limit)


def scale_up_renderables(doc: dict) -> list[list]:
    blocks: list[list] = []
    fits = doc["placements"]
    head = section(
        "Existing nodes",
        "pending pods placed first, highest priority first (cluster-autoscaler's filter-out-schedulable)",
    )
    block: list = [head]
    if fits:
        t = new_table()
        t.add_column("Pod", style="pod", no_wrap=True)
        t.add_column("Node", style="node", no_wrap=True)
        stacked: list = []
        shown, cut = _cut(fits)
        for f in shown:
            t.add_row(f["pod"], f["node"])
            stacked += [Text(f["pod"], style="pod"), Hang(Text.assemble("→ ", (f["node"], "node")), 2, 4)]
        block.append(indent(TableOrStack(t, stacked), 2))
        if cut:
            block.append(Text(f"  … {cut} more pods fit existing nodes (-o json lists all)", style="muted"))
    else:
        block.append(Text("  no pending pod fits an existing node", style="muted"))
    blocks.append(block)

    groups = doc["nodeGroups"]
    t = new_table()
    t.add_column("Node group", style="node", no_wrap=True)
    t.add_column("Size", justify="right", no_wrap=True)
    t.add_column("New nodes", justify="right", no_wrap=True)
    t.add_column("Pods helped", justify="right", no_wrap=True)
    t.add_column("Not helped", justify="right", no_wrap=True)
    stacked = []
    for g in groups:
        size = f"{g['currentSize']}/{'–' if g['maxSize'] is None else g['maxSize']}"
        t.add_row(g["name"], size, str(g["newNodes"]), str(len(g["podsHelped"])), str(len(g["podsNotHelped"])))
        stacked += [
            Text(g["name"], style="node"),
            Hang(
                Text(
                    f"size {size}: {plural(g['newNodes'], 'new node')}, "
                    f"{plural(len(g['podsHelped']), 'pod')} helped, {len(g['podsNotHelped'])} not"
                ),
                2,
                4,
            ),
        ]
    block = [
        section(
            "Node groups",
            f"{plural(len(doc['pending']), 'pod')} left for a scale-up; per group, the binpacking estimate"
            " (size: current/max)",
        ),
        indent(TableOrStack(t, stacked), 2),
    ]
    for g in groups:
        if g.get("skipped"):
            block.append(prose(f"  {g['name']}: not considered, {g['skipped']}"))
        reasons: dict[str, int] = {}
        for p in g["podsNotHelped"]:
            reasons[p["reason"]] = reasons.get(p["reason"], 0) + 1
        for why, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            if not g.get("skipped"):
                block.append(Hang(Text.assemble((g["name"], "node"), f": {plural(n, 'pod')} not helped: {why}"), 2, 4))
    blocks.append(block)

    block = [section("Expanders", "the group each would choose among those that help a pod")]
    t = new_table()
    t.add_column("Expander", no_wrap=True)
    t.add_column("Chooses", style="node", no_wrap=True)
    t.add_column("Why")
    stacked = []
    for name, best in doc["expanders"].items():
        chosen = "none" if best is None else best if isinstance(best, str) else "tie: " + ", ".join(best)
        why = doc["expanderReasons"].get(name, "")
        t.add_row(name, chosen, prose(why))
        stacked += [Text.assemble((name, "bold"), " → ", (chosen, "node")), Hang(Text(why), 2, 4)]
    block.append(indent(TableOrStack(t, stacked), 2))
    chain = doc.get("chosen")
    if chain:
        groups_text = ", ".join(chain["groups"]) or "none"
        block.append(Hang(Text.assemble(f"chain {chain['expander']} → ", (groups_text, "node")), 2, 4))
    blocks.append(block)

    ignored = doc.get("ignored") or []
    if ignored:
        block = [section("Left out", f"{plural(len(ignored), 'pod')} no scale-up is for")]
        for u in ignored[:_ROWS]:
            block.append(Text(f"  {u['pod']}", style="pod"))
            block.append(Hang(Text(u["reason"]), 4, 6))
        if len(ignored) > _ROWS:
            block.append(Text(f"  … {len(ignored) - _ROWS} more pods (-o json lists all)", style="muted"))
        blocks.append(block)
    unhelped = doc["unhelped"]
    if unhelped:
        block = [section("Unhelped", f"{plural(len(unhelped), 'pod')} no node group can take")]
        shown = unhelped[:_ROWS]
        for u in shown:
            block.append(Text(f"  {u['pod']}", style="pod"))
            for g, why in u["reasons"].items():
                block.append(Hang(Text.assemble((g, "node"), f": {why}"), 4, 6))
        if len(unhelped) > len(shown):
            block.append(Text(f"  … {len(unhelped) - len(shown)} more pods (-o json lists all)", style="muted"))
        blocks.append(block)
    else:
        ok = "every pod is placed" if not doc["pending"] else "every pending pod is helped by some node group"
        blocks.append([Text(ok, style="ok")])
    return blocks


def render_scale_up(doc: dict, console: Console | None = None, *, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    print_blocks(console, scale_up_renderables(doc))


def scale_down_renderables(doc: dict) -> list[list]:
    t = new_table()
    t.add_column("Node", style="node", no_wrap=True)
    t.add_column("Group", no_wrap=True)
    t.add_column("Use", justify="right", no_wrap=True)
    t.add_column("Verdict")
    stacked: list = []
    for n in doc["nodes"]:
        use = "–" if n["utilization"] is None else f"{n['utilization']:.0%} {n['resource']}"
        if n["removable"]:
            moved = len(n["moves"])
            verdict = f"removable ({plural(moved, 'pod')} move)" if moved else "removable (empty)"
        else:
            verdict = n["reason"] or "stays"
        t.add_row(n["node"], n["nodeGroup"] or "–", use, prose(verdict))
        stacked += [Text(n["node"], style="node"), Hang(Text(f"{n['nodeGroup'] or '–'}, {use}: {verdict}"), 2, 4)]
    head = section(
        "Scale-down",
        f"nodes at or below {doc['threshold']:.0%} utilization whose pods can all move, taken one after another",
    )
    blocks: list[list] = [[head, indent(TableOrStack(t, stacked), 2)]]
    removable = doc["removable"]
    style = "ok" if removable else "muted"
    blocks.append([Text(f"{plural(len(removable), 'node')} cluster-autoscaler would remove", style=style)])
    for n in doc["nodes"]:
        if n["removable"] and n["moves"]:
            block: list = [Text.assemble(("  " + n["node"], "node"), ": its pods go to")]
            shown, cut = _cut(n["moves"])
            for m in shown:
                block.append(Hang(Text.assemble((m["pod"], "pod"), " → ", (m["node"], "node")), 4, 6))
            if cut:
                block.append(Text(f"    … {cut} more pods (-o json lists all)", style="muted"))
            blocks.append(block)
    return blocks


def render_scale_down(doc: dict, console: Console | None = None, *, no_color: bool = False) -> None:
    console = console or make_console(no_color)
    print_blocks(console, scale_down_renderables(doc))
