"""Plain terminal views (the rich explanation replaces these)."""
from __future__ import annotations

import typer


def render_explain(result, session, **_opts) -> None:
    r = result
    typer.echo(f"pod {r.pod.key}  profile {r.profile}  priority {r.pod.priority}")
    if r.schedulable:
        typer.echo(f"selected {r.selected_node}  (top: {', '.join(r.top_nodes)})")
    else:
        typer.echo(r.message)
    for node in sorted(r.filters):
        ff = r.filters[node].first_failure
        typer.echo(f"  {node:<30} {'feasible' if ff is None else ff.plugin + ': ' + ff.message()}")


def render_schedule(results, session, **_opts) -> None:
    for r in results:
        verdict = r.selected_node if r.schedulable else r.message
        typer.echo(f"{r.pod.key:<40} {verdict}")


def render_preempt(result, session, **_opts) -> None:
    render_explain(result, session)
