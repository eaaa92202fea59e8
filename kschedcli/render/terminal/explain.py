"""`ksched explain`: the pod, the verdict, the filter matrix, the scores and every breakdown (or one node)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from .details import other_details_section, retry_section
from .dra import dra_section
from .extenders import extenders_section
from .filters import filter_matrix
from .fixes import fixes_section
from .header import pod_line, verdict, version_block
from .interpodaffinity import affinity_section
from .layout import make_console, print_blocks
from .node import node_view
from .nodeaffinity import node_affinity_section
from .nominated import nominated_lines
from .preemption import preemption_summary
from .resources import resources_section
from .sampling import sampling_section
from .scores import score_table
from .spread import domain_nodes_of, spread_section
from .taints import taints_section


def explain_renderables(
    result,
    session,
    console: Console,
    *,
    node: str | None = None,
    all_nodes: bool = False,
    top: int = 10,
    raw: bool = False,
) -> list[list[Any]]:
    blocks: list[list[Any]] = [[pod_line(result, session)], [verdict(result)]]
    if result.error:
        blocks.append(extenders_section(result))
        return blocks
    if node is not None:
        blocks.extend(node_view(result, session, node))
        blocks.append(dra_section(result, node=node))
        blocks.append(nominated_lines(result, node))
        return blocks
    blocks.append(filter_matrix(result, all_nodes=all_nodes, width=console.width))
    blocks.append(nominated_lines(result))
    blocks.append(score_table(result, console.width, top=top, raw=raw))
    blocks.append(sampling_section(result))
    blocks.append(extenders_section(result))
    blocks.append(resources_section(result, all_nodes=all_nodes, width=console.width))
    blocks.append(taints_section(result))
    blocks.append(node_affinity_section(result))
    blocks.append(spread_section(result, domain_nodes=domain_nodes_of(session.scheduler.snapshot)))
    blocks.append(affinity_section(result))
    blocks.append(dra_section(result))
    blocks.append(other_details_section(result, {"PodTopologySpread", "InterPodAffinity", "DynamicResources"}))
    blocks.append(preemption_summary(result))
    blocks.append(fixes_section(result))
    blocks.append(retry_section(result))
    return blocks


def render_explain(
    result,
    session,
    console: Console | None = None,
    *,
    node: str | None = None,
    all_nodes: bool = False,
    top: int = 10,
    raw: bool = False,
    no_color: bool = False,
    footer: bool = True,
) -> None:
    """The explanation; `footer`: ending with the release followed (a view that embeds several
    explanations says it once, at its own end)."""
    console = console or make_console(no_color)
    print_blocks(
        console,
        [
            *explain_renderables(result, session, console, node=node, all_nodes=all_nodes, top=top, raw=raw),
            version_block(session) if footer else [],
        ],
    )
