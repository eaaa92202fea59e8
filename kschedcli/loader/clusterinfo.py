"""`kubectl cluster-info dump` written to one file (its default, standard output): the lists it
prints (nodes, then per namespace events, replication controllers, services, daemon sets,
deployments, replica sets and pods) with each pod's container logs printed after its namespace's
pods, between a `==== START logs for container C of pod NS/NAME ====` line and the matching
`==== END logs for container C of pod NS/NAME ====`.

The logs are no objects: a snapshot reader sees the file with every log block blanked out, each of
its lines an empty one so that the lines of the objects keep their numbers. A log is whatever the
container wrote (any bytes, no final newline before the END marker): it is cut at the marker that
names the same container and pod, and a START with no END leaves the file as it was (its reader
then reports where it breaks).
"""

from __future__ import annotations

import re

_START = re.compile(rb"^==== START logs for container (\S+) of pod (\S+) ====\r?\n", re.MULTILINE)


def without_dump_logs(data: bytes) -> bytes | None:
    """`data` with its cluster-info dump log blocks blanked out; None when it has none (or one
    breaks off)."""
    found = _START.search(data)
    if found is None:
        return None
    out: list[bytes] = []
    kept = 0
    while found is not None:
        end_marker = b"==== END logs for container %s of pod %s ====" % (found.group(1), found.group(2))
        end = data.find(end_marker, found.end())
        if end < 0:
            return None
        end += len(end_marker)
        if data[end : end + 2] == b"\r\n":
            end += 2
        elif data[end : end + 1] == b"\n":
            end += 1
        out.append(data[kept : found.start()])
        out.append(b"\n" * data.count(b"\n", found.start(), end))
        kept = end
        found = _START.search(data, kept)
    out.append(data[kept:])
    return b"".join(out)
