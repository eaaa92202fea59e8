"""The package's layers, read from its source with ast: every import (module level, inside a
function, under TYPE_CHECKING) counts. A module imports only from its own layer or the layers
below it (docs/architecture.md draws them); the engine knows nothing of Rich or Typer, and the
framework nothing of its plugins."""

from __future__ import annotations

import ast
import pathlib
from collections import defaultdict

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "kschedcli"

# lowest first; a module belongs to the first entry its name falls within
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundations",
        (
            "kschedcli.errors",
            "kschedcli.progress",
            "kschedcli.textsafe",
            "kschedcli.masking",
            "kschedcli.loader",
            "kschedcli.schemas",
        ),
    ),
    ("api", ("kschedcli.api",)),
    ("config", ("kschedcli.config",)),
    ("backend", ("kschedcli.backend", "kschedcli.dra")),
    ("inputs", ("kschedcli.inputs",)),
    ("framework", ("kschedcli.framework",)),
    ("plugins", ("kschedcli.plugins",)),
    ("scheduling", ("kschedcli.scheduling",)),
    ("workloads", ("kschedcli.workloads",)),
    ("whatif", ("kschedcli.whatif",)),
    ("render", ("kschedcli.render",)),
    ("session", ("kschedcli.session",)),
    ("cli", ("kschedcli.cli", "kschedcli.__main__")),
]
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
# the root package holds the version and exports the public API by name (kschedcli/__init__.py)
ROOT = "kschedcli"


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


def layer_of(name: str) -> str | None:
    for layer, prefixes in LAYERS:
        if _within(name, prefixes):
            return layer
    return None


def test_every_module_has_a_layer():
    # a new module outside every layer would escape every rule below
    assert sorted(m for m in GRAPH if m != ROOT and layer_of(m) is None) == []


def test_the_walk_sees_the_package():
    # a walk that found nothing would pass every rule below
    assert "kschedcli.framework.runtime" in GRAPH and "kschedcli.plugins.noderesources.fit" in GRAPH
    assert "kschedcli.framework.status" in GRAPH["kschedcli.plugins.noderesources.fit"]
    assert "kschedcli.progress" in GRAPH["kschedcli.scheduling.scheduler"]  # `from .. import progress`
    assert "typer" in GRAPH["kschedcli.cli.app"] and "rich.table" in GRAPH["kschedcli.render.terminal.layout"]


def upward_imports() -> list[str]:
    out = []
    for m, targets in GRAPH.items():
        if m == ROOT:
            continue
        mine = RANK[layer_of(m) or ""]
        for t in targets:
            if t == ROOT or not _within(t, (ROOT,)):
                continue
            theirs = layer_of(t)
            if theirs is not None and RANK[theirs] > mine:
                out.append(f"{m} ({layer_of(m)}) imports {t} ({theirs})")
    return sorted(out)


def test_no_module_imports_a_layer_above_it():
    assert upward_imports() == []


def test_the_rule_catches_an_upward_import(monkeypatch):
    # the check itself: a plugin that imported the CLI would be named
    monkeypatch.setitem(
        GRAPH, "kschedcli.plugins.nodename", GRAPH["kschedcli.plugins.nodename"] | {"kschedcli.cli.app"}
    )
    assert upward_imports() == ["kschedcli.plugins.nodename (plugins) imports kschedcli.cli.app (cli)"]


def _offenders(importers: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{m} imports {t}" for m, ts in GRAPH.items() if _within(m, importers) for t in ts if _within(t, forbidden)
    )


def test_only_the_views_and_the_cli_know_rich_and_only_the_cli_typer():
    below_render = tuple(m for m in GRAPH if m != ROOT and RANK[layer_of(m) or "cli"] < RANK["render"])
    assert _offenders(below_render, ("rich", "typer")) == []
    assert _offenders(("kschedcli.render", "kschedcli.session"), ("typer",)) == []
    assert _offenders(("kschedcli.session",), ("rich",)) == []


def test_framework_imports_no_plugin():
    assert _offenders(("kschedcli.framework",), ("kschedcli.plugins",)) == []


def test_the_cli_reaches_the_engine_only_through_the_public_api():
    # the command line wraps kschedcli.session; what it prints comes from render
    engine = tuple(p for layer, ps in LAYERS if RANK[layer] < RANK["render"] for p in ps if layer != "foundations")
    allowed_below = ("kschedcli.inputs.sources", "kschedcli.inputs.cache", "kschedcli.config.scheduler")
    offenders = [
        o for o in _offenders(("kschedcli.cli",), engine) if not o.split(" imports ")[1].startswith(allowed_below)
    ]
    assert offenders == []


def test_extenders_are_reached_through_the_framework_handle():
    # the framework and the plugins reach the HTTP extenders only through Handle.extenders (the
    # PreemptionExtenders Protocol)
    ext = ("kschedcli.scheduling.extenders", "kschedcli.scheduling.extender_client")
    assert _offenders(("kschedcli.framework", "kschedcli.plugins"), ext) == []
    assert "kschedcli.scheduling.extenders" in GRAPH["kschedcli.scheduling.scheduler"]


def test_dra_is_below_the_plugin():
    assert "kschedcli.dra.allocator" in GRAPH["kschedcli.plugins.dynamicresources"]
    assert _offenders(("kschedcli.render",), ("kschedcli.dra",)) == []


def test_the_views_read_results_only():
    assert (
        _offenders(
            ("kschedcli.render",),
            ("kschedcli.plugins", "kschedcli.scheduling.scheduler", "kschedcli.whatif.fixes.search"),
        )
        == []
    )


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


def _package(name: str) -> str:
    return ".".join(name.split(".")[:2])


def test_no_import_cycle_between_packages():
    packages: dict[str, set[str]] = defaultdict(set)
    for m, ts in GRAPH.items():
        if m == ROOT:
            continue
        for t in ts:
            if _within(t, (ROOT,)) and t != ROOT and _package(t) != _package(m):
                packages[_package(m)].add(_package(t))
    assert _cycle(packages) is None


@pytest.mark.parametrize(
    "graph, expected",
    [({"a": {"b"}, "b": {"c"}, "c": set()}, None), ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"])],
)
def test_cycle_finder(graph, expected):
    assert _cycle(graph) == expected


def test_architecture_doc_names_every_layer():
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    for _, prefixes in LAYERS:
        for p in prefixes:
            assert f"`{p.removeprefix('kschedcli.')}" in doc or f"`{p}" in doc, p
