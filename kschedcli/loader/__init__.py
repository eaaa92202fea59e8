"""Reading snapshots and pod files: multi-document YAML, `kind: List`, JSON, or `-` for stdin.

Large snapshots (a 5,000-node cluster is ~750 MB) are read without building the whole tree:

* A JSON `List` is streamed: the file is read in blocks and each element of `items` is decoded
  on its own by the standard library's C scanner (`raw_decode`), then handed to a `transform` that
  may drop the fields the scheduler never reads; the tree of the whole file never exists.
* YAML goes through libyaml (PyYAML's C parser) with a lean node-to-object conversion (the tag
  resolution of PyYAML's SafeLoader, falling back to SafeLoader's own constructor for a document
  with aliases, merge keys or unusual tags). A large multi-document file is cut at `---` lines
  and its pieces are parsed by worker processes, one per core (KSCHED_WORKERS=1 turns this off).
* The cyclic garbage collector is paused while reading (it would rescan millions of live objects).

Whatever the path, the objects, their order, their locations (`items[3] (Pod ns/name)`,
`document 2 (Node n1)`) and the errors are those of a plain `json.loads` / `yaml.safe_load_all`
of the whole file.

Modules, by concern: `sources` (the bytes of a file, a pipe or stdin), `documents` (format sniffing,
a file's documents and objects), `yaml_reader` (libyaml and the line-by-line reader), `json_stream`
(a JSON List item by item), `yaml_bounds` (what kubectl's YAML reader refuses: excessive aliasing,
depth), `workers` (large files in worker processes), `objects` (Lists, the transform, object locations).
"""

from __future__ import annotations

from .documents import iter_located, iter_objects, load_documents, parse_documents
from .json_stream import decode_json_items
from .objects import Location, Transform, describe, freeze_lasting, is_list, no_gc, transient, where
from .sources import is_stream, read_bytes, read_once_check, read_text

__all__ = [
    "Location",
    "Transform",
    "decode_json_items",
    "describe",
    "freeze_lasting",
    "is_list",
    "is_stream",
    "iter_located",
    "iter_objects",
    "load_documents",
    "no_gc",
    "parse_documents",
    "read_bytes",
    "read_once_check",
    "read_text",
    "transient",
    "where",
]
