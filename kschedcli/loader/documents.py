"""Reading a file's documents, whatever its format: JSON when it starts as JSON (a List streamed,
large ones by worker processes), else multi-document YAML (large files by worker processes);
and the objects they hold, each with its location for messages."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterator

from .. import progress
from ..errors import InputError
from .json_stream import NotStreamable, json_file_reader, stream_json
from .objects import Location, Transform, is_list, no_gc, transform_doc, where
from .sources import MAX_USER_FILE_BYTES, decode_utf8, file_size, is_stream, kept_stream, open_error, read_bytes

# PyYAML (with the YAML reader) and the worker processes' machinery are imported when a file needs
# them: a JSON pod file and a snapshot from the cache (ksched explain again) pay for neither


class _NotJSON(ValueError):
    pass


def _no_constant(name: str):
    raise _NotJSON(f"{name} is not a JSON value")


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _json_prefix(text: str) -> tuple[list, int, bool]:
    """The JSON values a text starting with `{` begins with, as kubectl's YAMLOrJSONDecoder reads
    them (strict JSON: no NaN or Infinity): (values, where they end, whether the text ended)."""
    decoder = json.JSONDecoder(parse_constant=_no_constant)
    docs: list = []
    i = 0
    while True:
        i = _JSON_SPACE.match(text, i).end()  # type: ignore[union-attr]  # (matches the empty string)
        if i >= len(text):
            return docs, i, True
        try:
            doc, j = decoder.raw_decode(text, i)
        except (json.JSONDecodeError, _NotJSON):
            return docs, i, False
        docs.append(doc)
        i = j


def _json_values(body: str, source: str, line_of: Callable[[int], int]) -> tuple[list, int, bool]:
    """_json_prefix of `body`, a text starting with `{`, with the JSON reader's limits; a stream of
    two values or more that breaks off is an error at its line (`line_of`: the line of an offset
    in `body`), there being no switching to YAML after it."""
    with _json_limits(source):
        docs, end, whole = _json_prefix(body)
    if not whole and len(docs) > 1:
        raise InputError("malformed JSON after the JSON objects before it", source=source, where=f"line {line_of(end)}")
    return docs, end, whole


def parse_documents(text: str, source: str, as_kubectl: bool = False) -> list:
    """The documents of a file: JSON when it parses as JSON, else multi-document YAML.

    `as_kubectl`: a file the user hands in, read as kubectl's YAMLOrJSONDecoder reads it: when it
    starts with `{`, JSON values one after another, the rest read as YAML (loader.goyaml) if the
    JSON breaks off after at most one value; else YAML (loader.goyaml)."""
    stripped = text.lstrip()
    if as_kubectl:
        stripped = stripped.lstrip("\ufeff").lstrip()  # kubectl drops a byte order mark
        if stripped[:1] == "{":
            docs, end, whole = _json_values(stripped, source, lambda at: stripped.count("\n", 0, at) + 1)
            if whole:
                return docs
            if docs:  # the YAML reader takes over after the whitespace up to the first newline
                nl = stripped.find("\n", end)
                rest = stripped[nl + 1 :] if nl >= 0 and not stripped[end:nl].strip() else stripped[end:]
                return docs + _yaml_documents(rest, source, True)
            return _yaml_documents(stripped, source, True)
    if not as_kubectl and stripped[:1] in ("{", "["):
        try:
            with _json_limits(source):
                return [json.loads(text)]
        except json.JSONDecodeError:
            pass  # YAML is a superset of JSON; let the YAML parser report where it breaks
    return _yaml_documents(text, source, as_kubectl)


@contextlib.contextmanager
def _json_limits(source: str) -> Iterator[None]:
    """The JSON reader's limits as bad input: nesting past the recursion limit, an integer past
    Python's digit limit (a JSONDecodeError, also a ValueError, passes through)."""
    try:
        yield
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise InputError(
            "nested too deeply (over about 1,000 levels) for ksched's JSON reader", source=source
        ) from None
    except ValueError:
        raise InputError(_LONG_NUMBER, source=source) from None


def _yaml_documents(text: str, source: str, go: bool) -> list:
    import yaml

    from .yaml_reader import yaml_docs, yaml_error

    try:
        return [d for d in yaml_docs(text, go=go) if d is not None]
    except yaml.YAMLError as e:
        raise yaml_error(e, source) from None
    except ValueError as e:
        if "integer string conversion" not in str(e):
            raise
        raise InputError(_LONG_NUMBER, source=source) from None
    except RecursionError:
        raise InputError("nested too deeply (over about 1,000 levels)", source=source) from None


def load_documents(
    path: str,
    transform: Transform | None = None,
    on_items: Callable[[list], None] | None = None,
    as_kubectl: bool = False,
) -> list:
    """The non-empty documents of a file (see _load_documents); nesting too deep for Python's
    readers (JSON past about 1,000 levels) is one error, not a RecursionError.

    `as_kubectl`: a file the user hands in (pods, workloads, nodes to add, a config, a scenario),
    read whole as kubectl reads it (parse_documents); else a snapshot, read fast (streamed, by
    worker processes) as PyYAML's safe load reads it."""
    if as_kubectl:
        text = decode_utf8(read_bytes(path, MAX_USER_FILE_BYTES), path)
        return [transform_doc(d, transform) for d in parse_documents(text, path, as_kubectl=True)]
    try:
        try:
            return _load_documents(path, transform, on_items)
        except InputError:
            # `kubectl cluster-info dump`'s output breaks off where its first container log begins:
            # read again with the logs left out (none: the error stands)
            cleaned = _without_dump_logs(path)
            if cleaned is None:
                raise
            return _load_documents(path, transform, on_items, cleaned)
    except RecursionError:
        raise InputError("nested too deeply (over about 1,000 levels) for ksched's JSON reader", source=path) from None
    except ValueError as e:
        if "integer string conversion" not in str(e):
            raise
        raise InputError(_LONG_NUMBER, source=path) from None


_LONG_NUMBER = "a number of more than 4,300 digits (Python's limit; no Kubernetes field holds one)"


def _without_dump_logs(path: str) -> bytes | None:
    """The file's bytes with `kubectl cluster-info dump`'s container logs blanked out (loader/
    clusterinfo.py); None when it holds none, or cannot be read again. A stream is not read
    again (its bytes, when it was read to its end, were kept; a FIFO nobody wrote to is not waited
    for twice), and a file is read whole only when a log block or the trailer is in it."""
    from .clusterinfo import without_dump_logs

    if is_stream(path):
        data = kept_stream(path)
        return None if data is None else without_dump_logs(data)
    try:
        if not _may_be_a_dump(path):
            return None
        data = read_bytes(path)
    except (InputError, OSError, ValueError):
        return None
    return without_dump_logs(data)


def _may_be_a_dump(path: str) -> bool:
    """Whether a regular file holds a cluster-info dump's log block or trailer, looked for without
    reading it into memory."""
    import mmap

    from .clusterinfo import LOG_START

    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return False
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return m.find(LOG_START) >= 0 or m.rfind(b"Cluster info dumped to ") >= 0


def _load_documents(
    path: str,
    transform: Transform | None = None,
    on_items: Callable[[list], None] | None = None,
    data: bytes | None = None,
) -> list:
    """The non-empty documents of a file (or of its bytes `data`), every object passed through
    `transform` as it is read (a List's items one by one). Same result as `parse_documents` on
    the whole text.

    `on_items(objects)`, when given, sees runs of the (transformed) objects or documents as worker
    processes deliver them, while the others still read: a caller may start on them (it must
    neither modify them nor raise). Objects read otherwise are not shown to it."""
    # a stream (stdin, a pipe) is read once, whole; a regular file is peeked at, streamed, cut
    # (`data`: its bytes, already read)
    if data is None and is_stream(path):
        data = read_bytes(path)
    size = len(data) if data is not None else file_size(path)
    if data is None and os.path.isdir(path):
        raise InputError("is a directory, not a file", source=path)
    label = "stdin" if path == "-" else os.path.basename(path)
    with progress.task(f"Reading {label}", total=size, unit="bytes") as task, no_gc():
        if data is not None:
            head = data[:4096]
        else:
            try:
                with open(path, "rb") as f:
                    head = f.read(4096)
            except OSError as e:
                raise open_error(path, e) from None
        if data is None and head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            data = read_bytes(path)  # UTF-16 (decode_utf8): read whole, not streamed or cut in pieces
        head = head.lstrip()
        if head[:1] == b"{":
            read, f = json_file_reader(path, data)
            split = seek = None
            if f is not None:

                def split_items(offset: int, pattern: bytes, sep_len: int):
                    from . import workers

                    return workers.json_parallel(path, size, offset, pattern, sep_len, transform, task, on_items)

                split, seek = split_items, f.seek
            try:
                header, items = stream_json(read, transform, task, split, seek)
            except NotStreamable:
                pass
            else:
                if items is None:
                    return [transform_doc(header, transform)]
                doc = {**header, "items": items}  # kubectl writes the List's kind after its items
                return [doc if is_list(doc) else transform_doc(doc, transform)]
            finally:
                if f is not None:
                    f.close()
        if head[:1] in (b"{", b"["):
            if data is None:
                data = read_bytes(path)
            text = decode_utf8(data, path)
            try:
                return [transform_doc(json.loads(text), transform)]
            except json.JSONDecodeError:
                pass  # YAML is a superset of JSON; let the YAML parser report where it breaks
            if head[:1] == b"{":
                # JSON objects one after another (`kubectl get -o json | jq -c '.items[]'`): read
                # as kubectl reads such a stream
                body = text.lstrip().lstrip("\ufeff").lstrip()
                skipped = len(text) - len(body)
                stream, _, whole = _json_values(body, path, lambda at: text.count("\n", 0, skipped + at) + 1)
                if whole:
                    return [transform_doc(d, transform) for d in stream]
        else:
            if data is None:
                from . import workers

                # workers read their pieces from the file: nothing large exists here when they fork
                docs = workers.yaml_parallel(path, size, transform, task, on_items)
                if docs is not None:
                    return [d for d in docs if d is not None]
                data = read_bytes(path)
            text = decode_utf8(data, path)
        del data
        import yaml

        from .yaml_reader import yaml_docs, yaml_error

        try:
            docs = [
                transform_doc(d, transform) for d in yaml_docs(text, task, size / max(1, len(text))) if d is not None
            ]
        except yaml.YAMLError as e:
            raise yaml_error(e, path) from None
        task.update(size)
        return docs


def iter_objects(
    path: str,
    transform: Transform | None = None,
    on_items: Callable[[list], None] | None = None,
    as_kubectl: bool = False,
) -> Iterator[tuple[dict, str]]:
    """Every object in the file, flattening Lists, each with its location (`items[3] (Pod ns/n)`).

    `transform`, when given, is applied to each object as it is read (possibly in a worker
    process, so it must be a module-level function): the cluster loader uses it to keep only
    the fields the scheduler reads. `on_items`, `as_kubectl`: see load_documents."""
    for obj, loc in iter_located(path, transform, on_items, as_kubectl):
        yield obj, where(obj, loc)


def iter_located(
    path: str,
    transform: Transform | None = None,
    on_items: Callable[[list], None] | None = None,
    as_kubectl: bool = False,
) -> Iterator[tuple[dict, Location]]:
    """iter_objects, with each object's location left for `where` to spell out (when needed)."""
    docs = load_documents(path, transform, on_items, as_kubectl)
    single = len(docs) == 1
    for di, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise InputError("expected a Kubernetes object or a List", source=path, where=f"document {di + 1}")
        if is_list(doc):
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise InputError("items must be a list", source=path)
            kind = doc["kind"]
            typed = kind != "List"
            for ii, it in enumerate(items):
                if type(it) is not dict and not isinstance(it, dict):
                    prefix = f"items[{ii}]" if single else f"document {di + 1} items[{ii}]"
                    raise InputError("expected an object", source=path, where=prefix)
                if typed and "kind" not in it:
                    it = {**it, "kind": kind[:-4]}
                    if transform is not None:
                        it = transform(it)
                if is_list(it):  # a List within a List is flattened, as kubectl flattens it
                    prefix = f"items[{ii}]" if single else f"document {di + 1} items[{ii}]"
                    for inner in _flatten(it, path, prefix):
                        # (the outer List's transform passed the inner List over as an object)
                        yield (inner if transform is None else transform(inner)), (di, ii, single)
                    continue
                yield it, (di, ii, single)
        else:
            yield doc, (di, None, single)


def _flatten(lst: dict, path: str, where: str) -> Iterator[dict]:
    """The objects of a List nested in a List, its own nested Lists flattened in turn."""
    items = lst.get("items") or []
    if not isinstance(items, list):
        raise InputError("items must be a list", source=path, where=where)
    for ii, it in enumerate(items):
        if not isinstance(it, dict):
            raise InputError("expected an object", source=path, where=f"{where}.items[{ii}]")
        if is_list(it):
            yield from _flatten(it, path, f"{where}.items[{ii}]")
        else:
            yield it
