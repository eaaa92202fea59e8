"""The package's layers, read from its source with ast: every import (module level, inside a
function, under TYPE_CHECKING) counts. The scheduling core knows nothing of the CLI or Rich, the
framework nothing of its plugins, a plugin nothing of the scheduler, and no two layers import each
other by any path."""

from __future__ import annotations

import ast
import pathlib
from collections import defaultdict

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "kschedcli"

# the modules that make up the command line; everything else (outside render/) is the core
CLI_MODULES = {
    "kschedcli.cli",
    "kschedcli.cli_cache",
    "kschedcli.cli_common",
    "kschedcli.cli_errors",
    "kschedcli.cli_whatif",
    "kschedcli.completion",
    "kschedcli.editflags",
    "kschedcli.__main__",
}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    rel = pathlib.Path(*name.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").is_file() or (PACKAGE.parent / rel / "__init__.py").is_file()


def imports_of(path: pathlib.Path) -> set[str]:
    """Absolute names of the modules `path` imports (`from . import x` counts as module x when
    x is one, else as the package)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{a.name}" for a in node.names if _is_module(f"{target}.{a.name}")]
            out.update(subs or [target])
    return out


GRAPH: dict[str, set[str]] = {_module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _offenders(importers: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{m} imports {t}" for m, ts in GRAPH.items() if _within(m, importers) for t in ts if _within(t, forbidden)
    )


def test_the_walk_sees_the_package():
    # a walk that found nothing would pass every rule below
    assert "kschedcli.framework.runtime" in GRAPH and "kschedcli.plugins.noderesources.fit" in GRAPH
    assert "kschedcli.framework.status" in GRAPH["kschedcli.plugins.noderesources.fit"]
    assert "kschedcli.progress" in GRAPH["kschedcli.scheduler"]  # `from . import progress`
    assert "typer" in GRAPH["kschedcli.cli"] and "rich.table" in GRAPH["kschedcli.render.terminal.layout"]


def test_framework_imports_no_plugin_scheduler_renderer_or_cli():
    assert (
        _offenders(
            ("kschedcli.framework",),
            ("kschedcli.plugins", "kschedcli.scheduler", "kschedcli.engine", "kschedcli.render", *CLI_MODULES),
        )
        == []
    )


def test_plugins_import_neither_scheduler_renderer_nor_cli():
    assert (
        _offenders(
            ("kschedcli.plugins",), ("kschedcli.scheduler", "kschedcli.engine", "kschedcli.render", *CLI_MODULES)
        )
        == []
    )


def test_renderers_read_results_and_do_not_schedule():
    assert (
        _offenders(
            ("kschedcli.render",), ("kschedcli.scheduler", "kschedcli.engine", "kschedcli.plugins", *CLI_MODULES)
        )
        == []
    )


def test_core_imports_no_terminal_library_renderer_or_cli():
    core = tuple(
        m for m in GRAPH if m != "kschedcli" and m not in CLI_MODULES and not _within(m, ("kschedcli.render",))
    )
    assert _offenders(core, ("rich", "typer", "kschedcli.render", *CLI_MODULES)) == []


EXTENDER_MODULES = ("kschedcli.extenders", "kschedcli.extender_client", "kschedcli.extender_config")


def test_extenders_are_a_layer_of_their_own():
    # the framework and the plugins reach the HTTP extenders only through Handle.extenders (the
    # PreemptionExtenders Protocol); the extender modules know neither scheduler, renderer nor CLI
    assert _offenders(("kschedcli.framework", "kschedcli.plugins"), EXTENDER_MODULES) == []
    assert (
        _offenders(
            EXTENDER_MODULES,
            ("kschedcli.scheduler", "kschedcli.engine", "kschedcli.plugins", "kschedcli.render", *CLI_MODULES),
        )
        == []
    )
    assert "kschedcli.extenders" in GRAPH["kschedcli.scheduler"]


def _layer(name: str) -> str:
    """framework/, plugins/ and render/ are one layer each, the CLI modules one, any other module
    of the package its own."""
    if name in CLI_MODULES:
        return "cli"
    parts = name.split(".")
    return ".".join(parts[:2])


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    colour: dict[str, int] = defaultdict(int)  # 0 unseen, 1 on the path, 2 done
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        colour[n] = 1
        path.append(n)
        for t in sorted(graph.get(n, ())):
            if colour[t] == 1:
                return path[path.index(t) :] + [t]
            if colour[t] == 0 and (found := visit(t)):
                return found
        path.pop()
        colour[n] = 2
        return None

    for n in sorted(graph):
        if colour[n] == 0 and (found := visit(n)):
            return found
    return None


def test_no_import_cycle_between_layers():
    layers: dict[str, set[str]] = defaultdict(set)
    for m, ts in GRAPH.items():
        if m == "kschedcli":
            continue  # the package's __init__ holds only its version
        for t in ts:
            if _within(t, ("kschedcli",)) and t != "kschedcli" and _layer(t) != _layer(m):
                layers[_layer(m)].add(_layer(t))
    assert _cycle(layers) is None


@pytest.mark.parametrize(
    "graph, expected",
    [({"a": {"b"}, "b": {"c"}, "c": set()}, None), ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"])],
)
def test_cycle_finder(graph, expected):
    assert _cycle(graph) == expected


def test_fixes_is_a_layer_over_the_core():
    # what would make it fit (kschedcli/fixes) runs cycles through the scheduler and knows nothing of
    # the views; the views read its result model only, never the search
    assert "kschedcli.scheduler" in GRAPH["kschedcli.fixes.search"]
    assert _offenders(("kschedcli.fixes",), ("rich", "typer", "kschedcli.render", *CLI_MODULES)) == []
    assert _offenders(("kschedcli.render",), ("kschedcli.fixes",)) == []
    assert _offenders(("kschedcli.scheduler", "kschedcli.engine", "kschedcli.framework"), ("kschedcli.fixes",)) == []


def test_dra_is_below_the_plugin():
    # the allocator, the CEL environment and the claim tracker know nothing of the framework or
    # the plugins: the DynamicResources plugin uses them, the views read its explanation only
    assert "kschedcli.dra.allocator" in GRAPH["kschedcli.plugins.dynamicresources"]
    assert (
        _offenders(
            ("kschedcli.dra",),
            ("kschedcli.framework", "kschedcli.plugins", "kschedcli.scheduler", "kschedcli.render", *CLI_MODULES),
        )
        == []
    )
    assert _offenders(("kschedcli.render",), ("kschedcli.dra",)) == []
