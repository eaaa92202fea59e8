#!/usr/bin/env python3
"""Regenerate docs/gallery/*.svg: real ksched views of the fixtures, exported with Rich's SVG export.

    python scripts/gallery.py            # all views, 100 columns
    python scripts/gallery.py --width 80

Each SVG is the output of the same renderers `ksched` uses, for the command line in its title.
"""

from __future__ import annotations

import argparse
import io
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kschedcli.inputs.cluster import load_pending_pods  # noqa: E402
from kschedcli.render import terminal  # noqa: E402
from kschedcli.scheduling.analysis import annotate  # noqa: E402
from kschedcli.scheduling.scheduler import queue_sort  # noqa: E402
from kschedcli.whatif.fixes.model import needs_fixing  # noqa: E402
from kschedcli.whatif.fixes.search import find_fixes  # noqa: E402
from kschedcli.whatif.world import open_world  # noqa: E402

SMALL = "fixtures/small-cluster.yaml"
PROD = "fixtures/prod-cluster.yaml"

# (file name, command, cluster, pod file, options); "width" is the terminal's, not an option
VIEWS = [
    ("explain-schedulable", "explain", SMALL, "fixtures/pods/web.yaml", {}),
    ("explain-scores", "explain", PROD, "fixtures/pods/checkout.yaml", {"top": 5}),
    ("explain-unschedulable", "explain", PROD, "fixtures/pods/reporting.yaml", {}),
    ("explain-needs-preemption", "explain", PROD, "fixtures/pods/payments.yaml", {}),
    ("explain-spread", "explain", PROD, "fixtures/pods/web-spread.yaml", {"top": 3}),
    ("explain-affinity", "explain", PROD, "fixtures/pods/cart.yaml", {"top": 3, "width": 150}),
    ("explain-node", "explain", PROD, "fixtures/pods/payments.yaml", {"node": "general-a-01"}),
    ("preempt", "preempt", PROD, "fixtures/pods/payments.yaml", {}),
    ("schedule", "schedule", PROD, "fixtures/pods/rollout.yaml", {}),
]


def command_line(cmd: str, cluster: str, pods: str, opts: dict) -> str:
    argv = ["ksched", cmd, pods, "--cluster", cluster]
    for k, v in opts.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return shlex.join(argv)


def render(cmd: str, cluster: str, pods: str, opts: dict, width: int):
    console = terminal.make_console(record=True, width=width, force_terminal=True, file=io.StringIO())
    session = open_world([str(ROOT / cluster)], None)
    pod_list = load_pending_pods(str(ROOT / pods), session.cluster)
    if cmd == "schedule":
        results = []
        for p in queue_sort(pod_list):
            r = session.scheduler.schedule(p)
            annotate(r, session)
            results.append(r)
            if r.schedulable and r.selected_node:
                session.scheduler.bind(p, r.selected_node)
        terminal.render_schedule(results, session, console)
    else:
        r = session.scheduler.schedule(pod_list[0])
        annotate(r, session)
        if cmd == "preempt":
            terminal.render_preempt(r, session, console)
        else:
            if needs_fixing(r) and "node" not in opts:  # explain's default --fixes 3
                r.suggestions = find_fixes(session, r, 3)
            terminal.render_explain(r, session, console, **opts)
    return console


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=100)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "gallery")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, cmd, cluster, pods, opts in VIEWS:
        opts = dict(opts)
        width = opts.pop("width", args.width)
        console = render(cmd, cluster, pods, opts, width)
        title = command_line(cmd, cluster, pods, opts) + (f"   ({width} columns)" if width != args.width else "")
        svg = console.export_svg(title=title)
        (args.out / f"{name}.svg").write_text(svg, encoding="utf-8")
        print(f"wrote {args.out / (name + '.svg')}  ({title})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
