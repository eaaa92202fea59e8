"""What documents hold: Kubernetes objects and Lists of them, the transform applied to each object
as it is read, and how an object is named in messages (`items[3] (Pod ns/name)`)."""

from __future__ import annotations

import gc
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

Transform = Callable[[dict], Any]


@contextmanager
def no_gc():
    """Loading allocates millions of objects that all stay alive: the cyclic collector's passes
    over them would cost more than the parsing, so it is paused while reading."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_TRANSIENT = [0, False]  # open `transient()` blocks; whether a freeze was asked for inside one


@contextmanager
def transient():
    """What is built inside lives for one what-if scenario, not for the process (`ksched sweep`
    runs thousands in one worker). A frozen object is never looked at by the cyclic collector
    again, so a scenario's scheduler, whose framework, handle and plugins refer to one another,
    would stay in memory for good if frozen while the scenario runs: `freeze_lasting` inside the
    block is put off until the outermost block ends, and then comes after a full collection, which
    frees what the scenario left (only what was not frozen is looked at: about one scenario's
    objects). What survives it lasts (pods made from the snapshot cache on first use, what
    scenarios cache on the loaded objects) and is frozen."""
    outermost = not _TRANSIENT[0]
    was = gc.isenabled()
    if outermost:
        # the cyclic collector paused for the whole block: what a scenario leaves is collected as
        # it ends (below), not by collections after each of its cycles (no_gc) over the same objects
        gc.disable()
    _TRANSIENT[0] += 1
    try:
        yield
    finally:
        _TRANSIENT[0] -= 1
        if outermost and was:
            gc.enable()
        if not _TRANSIENT[0] and _TRANSIENT[1]:
            _TRANSIENT[1] = False
            gc.collect()
            gc.freeze()


def freeze_lasting() -> None:
    """gc.freeze(): what is alive now lives as long as what built it (a loaded snapshot and its
    scheduler, the indexes its first cycle builds), so the cyclic collector need not pass over it
    again. Inside a `transient()` block: as the block ends, after a collection."""
    if _TRANSIENT[0]:
        _TRANSIENT[1] = True
    else:
        gc.freeze()


def is_list(doc: dict) -> bool:
    kind = doc.get("kind")
    return kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in doc)


def transform_doc(doc, transform: Transform | None):
    """Apply `transform` to each object a document holds (a List's items, or the document)."""
    if transform is None or not isinstance(doc, dict):
        return doc
    if is_list(doc):
        items = doc.get("items")
        if isinstance(items, list):
            typed = doc.get("kind") != "List"
            doc = {
                **doc,
                "items": [
                    transform(it) if isinstance(it, dict) and not (typed and "kind" not in it) else it for it in items
                ],
            }
        return doc
    return transform(doc)


def reset_transform(transform: Transform | None) -> None:
    reset = getattr(transform, "reset", None)
    if reset is not None:
        reset()


def describe(obj: dict) -> str:
    kind = obj.get("kind") or "object"
    meta = raw_meta if isinstance(raw_meta := obj.get("metadata"), dict) else {}
    name = meta.get("name") or meta.get("generateName") or "?"
    ns = meta.get("namespace")
    if kind == "Pod" and not ns:
        ns = "default"
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


Location = tuple  # (document index, item index or None, whether the file has one document)


def where(obj: dict, loc: Location) -> str:
    """The location iter_objects gives an object that iter_located placed at `loc`."""
    di, ii, single = loc
    if ii is not None:
        prefix = f"items[{ii}]" if single else f"document {di + 1} items[{ii}]"
        return f"{prefix} ({describe(obj)})"
    prefix = "" if single else f"document {di + 1}"
    return f"{prefix} ({describe(obj)})" if prefix else describe(obj)
