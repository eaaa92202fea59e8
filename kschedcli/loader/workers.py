"""Large files read by worker processes, one per core (KSCHED_WORKERS=1 turns them off): a YAML
stream cut at its `---` lines, a JSON List cut between items; each piece parsed in a forked worker,
the results joined in order. A piece that does not read on its own sends the caller back to the
plain, whole-file read, which reports any error exactly."""

from __future__ import annotations

import marshal
import os
import re
from collections.abc import Callable

import yaml

from .json_stream import decode_json_items
from .objects import Transform, no_gc, reset_transform, transform_doc
from .yaml_reader import clear_caches, yaml_docs

_PARALLEL_MIN_BYTES = 24 << 20  # below this, worker processes cost more than they save
_JSON_PIECES_PER_WORKER = 12

_DOC_START = re.compile(rb"\n---(?=[ \t\r\n])")


def split_yaml(path: str, size: int, parts: int) -> list[tuple[int, int]] | None:
    """Cut a multi-document YAML file into about `parts` pieces at `---` lines (a document marker
    at the start of a line always starts a new document), reading only around the cuts."""
    bounds = [0]
    with open(path, "rb") as f:
        if re.search(rb"(?:^|\n)%", f.read(1 << 16)):
            return None  # directives apply to the documents after them: read it whole
        for i in range(1, parts):
            pos = max(size * i // parts, bounds[-1] + 1)
            while pos < size:
                f.seek(pos - 1)
                block = f.read(1 << 20)
                m = _DOC_START.search(block)
                if m is None:
                    if len(block) < (1 << 20):
                        break
                    pos += len(block) - 8
                    continue
                cut = pos + m.start()  # the line after the newline
                if cut > bounds[-1]:
                    bounds.append(cut)
                break
    if len(bounds) < 2:
        return None
    bounds.append(size)
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def _pack(objs: list) -> bytes:
    """A worker's result for the parent: marshal (several times faster than pickle both ways, and
    it keeps objects shared within the result shared), pickle for what marshal does not take
    (YAML timestamps, ...)."""
    try:
        return b"M" + marshal.dumps(objs)
    except ValueError:
        import pickle  # in the worker, rarely: not a cost of every run

        return b"P" + pickle.dumps(objs, pickle.HIGHEST_PROTOCOL)


def _unpack(data: bytes) -> list:
    view = memoryview(data)[1:]
    if data[:1] == b"M":
        return marshal.loads(view)
    import pickle

    return pickle.loads(view)


def _read_piece(path: str, start: int, end: int) -> str:
    """Worker: bytes [start, end) of a file as text (UnicodeDecodeError when they are not UTF-8)."""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start).decode("utf-8")


def _parse_yaml_piece(path: str, start: int, end: int, transform: Transform | None):
    """Worker: the documents (transformed, None kept) of bytes [start, end) of a YAML file,
    packed, or None when the piece does not read cleanly (the caller then reads the file whole)."""
    with no_gc():
        try:
            return _pack([transform_doc(d, transform) for d in yaml_docs(_read_piece(path, start, end))])
        except (UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError):
            return None  # read again whole by the caller, which reports it exactly
        finally:
            # the scalars shared within a piece would otherwise pin this worker's memory
            clear_caches()
            reset_transform(transform)


def worker_count() -> int:
    env = os.environ.get("KSCHED_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def yaml_parallel(
    path: str, size: int, transform: Transform | None, task, on_items: Callable[[list], None] | None = None
) -> list | None:
    """The documents of a large YAML file parsed by worker processes; None when that cannot be
    done here (no processes, one core, a piece that does not parse on its own)."""
    workers = worker_count()
    if workers < 2 or size < _PARALLEL_MIN_BYTES:
        return None
    pieces = split_yaml(path, size, workers * 6)
    if not pieces:
        return None
    done = 0

    def report(start: int, end: int) -> None:
        nonlocal done
        done += end - start
        task.update(done)

    return _run_pieces(workers, path, pieces, _parse_yaml_piece, transform, on_items, report)


def _run_pieces(
    workers: int, path: str, pieces: list[tuple[int, int]], parse, transform, on_items, report
) -> list | None:
    """`parse(path, start, end, transform)` on each piece in forked workers, the results joined
    in order (each handed to `on_items` as it arrives, `report(start, end)` after it); None when
    a piece does not read on its own (the caller then reads the plain way, for the exact error)
    or no processes can be forked here."""
    from concurrent.futures import BrokenExecutor  # with logging and threading: only for files this large

    try:
        pool = _fork_pool(workers)
        if pool is None:
            return None
        with pool:
            futures = [pool.submit(parse, path, s, e, transform) for s, e in pieces]
            out: list = []
            for (s, e), fut in zip(pieces, futures):
                part = fut.result()
                if part is None:
                    for f in futures:
                        f.cancel()
                    return None
                part = _unpack(part)
                out.extend(part)
                if on_items is not None:
                    on_items(part)
                del part
                report(s, e)
            return out
    except (OSError, ImportError, BrokenExecutor):
        return None


def _fork_pool(workers: int):
    """A pool of `workers` forked processes, or None where processes cannot be forked. Fork: the
    workers need nothing but this module, already loaded (spawn would re-run the main script,
    which need not be import-safe)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))


def _parse_json_piece(path: str, start: int, end: int, transform: Transform | None):
    """Worker: bytes [start, end) of a JSON file, items of a List and the separators between
    them, decoded and transformed as the streaming reader does, packed; None when they do not
    decode as a run of whole items (the caller then reads them itself)."""
    with no_gc():
        try:
            with open(path, "rb") as f:
                f.seek(start)
                items = decode_json_items(f.read(end - start))
            if transform is not None:
                items = [transform(x) if type(x) is dict and "kind" in x else x for x in items]
            return _pack(items)
        except Exception:  # noqa: BLE001 - the caller reads the piece itself, and reports it
            return None
        finally:
            reset_transform(transform)


def _find_forward(f, start: int, size: int, pattern: bytes) -> int | None:
    """The offset of the first `pattern` at or after `start`."""
    pos = start
    while pos < size:
        f.seek(pos)
        block = f.read(4 << 20)
        i = block.find(pattern)
        if i >= 0:
            return pos + i
        if len(block) < (4 << 20):
            return None
        pos += len(block) - len(pattern) + 1
    return None


def _find_backward(f, lower: int, size: int, pattern: bytes) -> int | None:
    """The offset of the last `pattern` at or after `lower`."""
    end = size
    while end > lower:
        start = max(lower, end - (4 << 20))
        f.seek(start)
        block = f.read(end - start)
        i = block.rfind(pattern)
        if i >= 0:
            return start + i
        end = start + len(pattern) - 1
        if start == lower:
            return None
    return None


def json_parallel(
    path: str,
    size: int,
    pos: int,
    pattern: bytes,
    sep_len: int,
    transform: Transform | None,
    task,
    on_items: Callable[[list], None] | None = None,
):
    """The items of a JSON List from byte `pos` (where an item starts) on, decoded by worker
    processes, one per core: the rest of the file is cut just before items that start as the
    second item did (`pattern`: the end of an item, the separator and `{"firstkey"`), and each
    piece decoded as a run of items. A cut that is not between two items makes its pieces fail
    to decode (an unterminated string or unbalanced brackets). Returns (items, offset of the item
    the caller reads on from), or None: no workers, or a piece that did not decode (the caller
    then reads on from `pos` itself, which reports any error exactly)."""
    workers = worker_count()
    if workers < 2 or size - pos < _PARALLEL_MIN_BYTES:
        return None
    parts = workers * _JSON_PIECES_PER_WORKER
    found: list[int] = []
    try:
        with open(path, "rb") as f:
            for k in range(1, parts):
                target = max(pos + (size - pos) * k // parts, found[-1] + 1 if found else pos)
                o = _find_forward(f, target, size, pattern)
                if o is None:
                    break
                found.append(o)
            # the last item that starts so: the caller reads from there to the end of the file
            last = _find_backward(f, found[-1] + 1 if found else pos, size, pattern)
            if last is not None:
                found.append(last)
    except OSError:
        return None
    if not found:
        return None
    starts = [pos] + [o + sep_len - 1 for o in found]
    pieces = list(zip(starts, [o + 1 for o in found]))
    items = _run_pieces(
        workers, path, pieces, _parse_json_piece, transform, on_items, lambda _start, end: task.update(end)
    )
    return None if items is None else (items, starts[-1])
