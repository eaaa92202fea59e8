"""Looking things up in the snapshot files named on the command line, without building the
cluster: pending pods by name (`ksched explain shop/web-abc --cluster snap.yaml`), and the objects
shell completion offers. Part of the cluster layer; the CLI and completion both ask here."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import InputError


def snapshot_objects(paths: Iterable[str]) -> Iterator[tuple[dict, str, str]]:
    """Every object of the files, as (object, file, where in it)."""
    from ..loader import iter_objects  # imported when a snapshot is read: `ksched --help` does not pay for it

    for path in paths:
        for obj, where in iter_objects(path):
            yield obj, path, where


def metadata_of(obj: dict) -> dict:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def pod_key(obj: dict) -> str:
    m = metadata_of(obj)
    return f"{m.get('namespace') or 'default'}/{m.get('name') or ''}"


def is_pending_pod(obj: dict) -> bool:
    if obj.get("kind") != "Pod":
        return False
    spec = raw_spec if isinstance(raw_spec := obj.get("spec"), dict) else {}
    status = raw_status if isinstance(raw_status := obj.get("status"), dict) else {}
    return not spec.get("nodeName") and status.get("phase") not in ("Succeeded", "Failed")


def pending_pods(paths: Iterable[str]) -> list[tuple[dict, str, str]]:
    """The snapshot's pods that wait for a node (no spec.nodeName), as (object, file, where)."""
    return [(o, p, w) for o, p, w in snapshot_objects(paths) if is_pending_pod(o)]


def find_pending_pod(
    paths: list[str], ref: str, pending: list[tuple[dict, str, str]] | None = None
) -> tuple[dict, str, str]:
    """A pending pod of the snapshot by `namespace/name`, or by `name` when that is unique;
    `pending`: the files' pending pods when the cluster read holds them (else the files are read)."""
    files = list(paths)
    found = pending_pods(files) if pending is None else pending
    if "/" in ref:
        hits = [x for x in found if pod_key(x[0]) == ref]
    else:
        hits = [x for x in found if metadata_of(x[0]).get("name") == ref]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise InputError(
            f"{len(hits)} pending pods are named {ref!r}; write it as NAMESPACE/NAME", source=", ".join(files)
        )
    hint = ""
    if found:
        hint = (
            " (pending there: "
            + ", ".join(pod_key(o) for o, _, _ in found[:5])
            + (", …" if len(found) > 5 else "")
            + ")"
        )
    raise InputError(f"no such file, and no pending pod named {ref!r} in the snapshot{hint}", source=ref)
