"""The cluster-edit flags (`--add-node`, `--cordon`, ...) of every command that reads a cluster.

`with_edit_flags` adds the seven flags to a Typer command and hands the command one argument,
`edits`: the `Edit`s in the order they were given on the command line (Typer collects each flag's
values separately, so the order across flags is read from the raw arguments, which
`EditOrderCommand` keeps).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

if TYPE_CHECKING:
    from .edits import Edit

_ARGV_KEY = "ksched.argv"

_HELP = {
    "--add-node": "Add copies of a node (NODE[:COUNT]; its DaemonSet pods copied too) or the Node manifests "
    "of FILE (with the pods the snapshot's DaemonSets would run there): @FILE, or a path ending in .yaml, "
    ".yml or .json or holding a /; a bare name is always a node. At most 10,000 nodes added per command.",
    "--remove-node": "Remove nodes and the pods on them.",
    "--cordon": "Mark nodes unschedulable (spec.unschedulable and its taint).",
    "--uncordon": "Mark nodes schedulable.",
    "--taint": "NODE:KEY[=VALUE]:EFFECT adds a taint; NODE:KEY- or NODE:KEY:EFFECT- removes (as kubectl taint).",
    "--label": "NODE:KEY=VALUE sets a label; NODE:KEY- removes it.",
    "--evict": "NAMESPACE/POD: remove a bound pod. Every edit flag is repeatable; the edits apply in the order given.",
}
_METAVAR = {"--add-node": "NODE[:N]|FILE", "--evict": "NS/POD", "--taint": "NODE:TAINT", "--label": "NODE:LABEL"}
_PARAM = {flag: "edit_" + flag[2:].replace("-", "_") for flag in _HELP}


class EditOrderCommand(TyperCommand):
    """A command that keeps its raw arguments, for the order of the edit flags."""

    def parse_args(self, ctx, args):  # click's signature
        ctx.meta[_ARGV_KEY] = list(args)
        return super().parse_args(ctx, args)


def with_edit_flags(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Expose the edit flags on `fn` (which takes `edits: list[Edit]` instead)."""
    sig = inspect.signature(fn)  # annotations as written: `edits`' type is known only when type checking

    def resolved(p: inspect.Parameter) -> inspect.Parameter:
        ann = p.annotation
        return p.replace(annotation=eval(ann, fn.__globals__) if isinstance(ann, str) else ann)  # noqa: S307

    params = [resolved(p) for name, p in sig.parameters.items() if name != "edits"]
    hints = {p.name: p.annotation for p in params}
    extra = [inspect.Parameter("ksched_ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)]
    hints["ksched_ctx"] = typer.Context
    for flag, help_text in _HELP.items():
        name = _PARAM[flag]
        if flag != "--evict":
            help_text += " NODE: a name or a label selector (kubectl -l syntax)."
        opt = typer.Option(
            None, flag, metavar=_METAVAR.get(flag, "NODE"), help=help_text, rich_help_panel="Cluster edits"
        )
        extra.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=list[str] | None))
        hints[name] = list[str] | None
    params = [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY) if p.kind == p.POSITIONAL_OR_KEYWORD else p for p in params
    ]

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        ctx = kwargs.pop("ksched_ctx")
        values = {flag: list(kwargs.pop(_PARAM[flag]) or []) for flag in _HELP}
        edits: list[Edit] = []
        if any(values.values()):
            from .edits import ordered_edits  # the edit layer only when an edit flag is given

            edits = ordered_edits(values, ctx.meta.get(_ARGV_KEY))
        return fn(edits=edits, **kwargs)

    wrapper.__signature__ = sig.replace(parameters=params + extra, return_annotation=None)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {**hints, "return": None}
    del wrapper.__wrapped__  # Typer reads the signature above, not fn's
    return wrapper
