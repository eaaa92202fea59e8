"""Reading snapshots and pod files: multi-document YAML, `kind: List`, JSON, or `-` for stdin."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator

import yaml

from .errors import InputError

try:  # the C loader is many times faster on large snapshots
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", source=path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", source=path) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read: {e}", source=path) from None


def parse_documents(text: str, source: str) -> list:
    """The documents of a file: JSON when it parses as JSON, else multi-document YAML."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            doc = json.loads(text)
            return [doc]
        except json.JSONDecodeError:
            pass  # YAML is a superset of JSON; let the YAML parser report where it breaks
    try:
        return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"malformed YAML: {problem}", source=source, where=where) from None


def describe(obj: dict) -> str:
    kind = obj.get("kind") or "object"
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") or meta.get("generateName") or "?"
    ns = meta.get("namespace")
    if kind == "Pod" and not ns:
        ns = "default"
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def iter_objects(path: str) -> Iterator[tuple[dict, str]]:
    """Every object in the file, flattening Lists, each with its location (`items[3] (Pod ns/n)`)."""
    docs = parse_documents(read_text(path), path)
    single = len(docs) == 1
    for di, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise InputError("expected a Kubernetes object or a List", source=path,
                             where=f"document {di + 1}")
        if doc.get("kind") == "List" or (doc.get("kind", "").endswith("List") and "items" in doc):
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise InputError("items must be a list", source=path)
            for ii, it in enumerate(items):
                prefix = f"items[{ii}]" if single else f"document {di + 1} items[{ii}]"
                if not isinstance(it, dict):
                    raise InputError("expected an object", source=path, where=prefix)
                if "kind" not in it and doc.get("kind", "").endswith("List") and doc["kind"] != "List":
                    it = {**it, "kind": doc["kind"][:-4]}
                yield it, f"{prefix} ({describe(it)})"
        else:
            prefix = "" if single else f"document {di + 1}"
            where = f"{prefix} ({describe(doc)})" if prefix else describe(doc)
            yield doc, where
