"""`kubectl cluster-info dump` written to one file (its default, standard output): the lists it
prints (nodes, then per namespace events, replication controllers, services, daemon sets,
deployments, replica sets and pods) with each pod's container logs printed after its namespace's
pods, between a `==== START logs for container C of pod NS/NAME ====` line and the matching
`==== END logs for container C of pod NS/NAME ====`.

The logs are no objects: a snapshot reader sees the file with every log block blanked out, each of
its lines an empty one so that the lines of the objects keep their numbers. A log is whatever the
container wrote (any bytes, no final newline before the END marker): it is cut at the marker that
names the same container and pod, and a START with no END leaves the file as it was (its reader
then reports where it breaks). The line older kubectl releases printed last, `Cluster info dumped
to standard output`, is blanked too.
"""

from __future__ import annotations

import re

# how a container's log block begins (loader/sources.py reads NUL bytes in a stream after one)
LOG_START = b"==== START logs for container "
_START = re.compile(rb"^==== START logs for container (\S+) of pod (\S+) ====\r?\n", re.MULTILINE)
# the line older kubectl releases printed after a dump to standard output (kubernetes/kubectl#816)
_TRAILER = b"Cluster info dumped to "


def _trailer(data: bytes) -> int | None:
    """Where the last line of `data` is that trailer; None when it is not."""
    at = data.rfind(_TRAILER)
    if at < 0 or (at and data[at - 1 : at] != b"\n"):
        return None
    newline = data.find(b"\n", at)
    return at if newline < 0 or newline == len(data) - 1 else None


def without_dump_logs(data: bytes) -> bytes | None:
    """`data` with its cluster-info dump log blocks blanked out; None when it has none (or one
    breaks off)."""
    trailer = _trailer(data)
    if trailer is not None:
        data = data[:trailer] + b"\n" * data.count(b"\n", trailer)
    found = _START.search(data)
    if found is None:
        return data if trailer is not None else None
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
