"""Raw input: the bytes of a file, a pipe or stdin, each read once, and the one-line errors for what
cannot be read.

A regular file can be read again (the format sniffer peeks at its head, worker processes read their
pieces from it); anything else (stdin, a FIFO such as `<(kubectl get ...)`, a device) is read once,
whole, and its bytes kept for whoever asks for the same input again in this process (the pending-pod
lookup reads the snapshot the cluster was built from)."""

from __future__ import annotations

import os
import stat
import sys
from typing import Any, BinaryIO

from ..errors import InputError

_CHUNK = 1 << 20
# What ksched reads at most from one input, so that an endless pipe (`yes | ksched explain -`,
# `-c <(yes)`) ends in one line, not in memory exhaustion: far above any real input (the snapshot
# of a 5,000-node, 150,000-pod cluster is about 0.75 GB as YAML, 1.8 GB as `kubectl get -o json`;
# a file of pods or workloads a few MB).
MAX_SNAPSHOT_BYTES = 4 << 30
MAX_USER_FILE_BYTES = 256 << 20
# stream inputs read so far: "-" -> (the stdin object read, its bytes); (device, inode) -> (None, bytes)
_READ_ONCE: dict[object, tuple[object, bytes]] = {}


def open_error(path: str, e: OSError) -> InputError:
    if isinstance(e, FileNotFoundError):
        return InputError("no such file", source=path)
    if isinstance(e, IsADirectoryError):
        return InputError("is a directory, not a file", source=path)
    return InputError(f"cannot read: {e.strerror or e}", source=path)


def is_stream(path: str) -> bool:
    """Whether `path` can be read only once: stdin, a pipe, a socket, a device."""
    if path == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def too_large(path: str, limit: int, what: str = "") -> InputError:
    """`what`: the kind of input read up to `limit` (by default a snapshot's or a user file's, by `limit`)."""
    what = what or ("a snapshot" if limit >= MAX_SNAPSHOT_BYTES else "a file of pods, workloads, nodes or a config")
    return InputError(
        f"more than {_size(limit)}: larger than any real input, so ksched stops reading ({what} is read up to "
        f"{_size(limit)})",
        source=path,
    )


def _size(n: int) -> str:
    return f"{n >> 30} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


def _read_stream(f: BinaryIO, path: str, limit: int, text: str = "YAML or JSON", what: str = "") -> bytes:
    """All of a stream, refusing one that is not text as soon as it shows (a NUL byte: YAML and
    JSON never hold one, nor does PEM, and an endless binary source such as /dev/zero would never
    end) and one that goes on past `limit` bytes (an endless text source). `text` names the text
    expected, `what` the kind of input (too_large)."""
    from .clusterinfo import LOG_START

    chunks: list[bytes] = []
    offset = 0
    logs = False  # a cluster-info dump's container log began: its bytes may be any (NULs too)
    tail = b""
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        nul = chunk.find(b"\0")
        if nul >= 0 and not logs and LOG_START not in tail + chunk[:nul]:
            raise InputError(f"not {text} text: a NUL byte at offset {offset + nul}", source=path)
        logs = logs or LOG_START in chunk or LOG_START in tail + chunk[: len(LOG_START)]
        tail = chunk[-len(LOG_START) :]
        offset += len(chunk)
        if offset > limit:
            chunks.clear()
            raise too_large(path, limit, what)
        chunks.append(chunk)


# how long a FIFO is waited for its writer to open it (`ksched -c fifo & kubectl get ... > fifo`)
FIFO_WRITER_SECONDS = 5.0


class _Prefixed:
    """A stream whose first bytes were already read (`head`)."""

    def __init__(self, head: bytes, f: BinaryIO):
        self.head, self.f = head, f

    def read(self, n: int) -> bytes:
        if self.head:
            out, self.head = self.head, b""
            return out
        return self.f.read(n)

    def __enter__(self) -> _Prefixed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()


def _open_stream(path: str, mode: int) -> Any:
    """A stream to read. A FIFO is opened without waiting for a writer (a plain open() waits until
    one comes: `ksched -c fifo` with nobody writing would hang), then waited for one at most
    FIFO_WRITER_SECONDS: once a writer has it open (`<(kubectl get ...)`, `cmd > fifo &`), it is
    read as any pipe, to its end; a FIFO nobody opens for writing in that time is an error."""
    if not stat.S_ISFIFO(mode):
        return open(path, "rb")  # noqa: SIM115 -- closed by the caller
    import select
    import time

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        deadline = time.monotonic() + FIFO_WRITER_SECONDS
        head = b""
        while True:
            try:
                head = os.read(fd, _CHUNK)
            except BlockingIOError:  # a writer has it open, nothing written yet: wait for it as for any pipe
                break
            if head:
                break
            # nothing and no writer (yet): wait for one a little longer
            if time.monotonic() >= deadline:
                raise InputError(
                    f"a FIFO nobody writes to (no writer opened it within {FIFO_WRITER_SECONDS:g} s)", source=path
                )
            select.select([fd], [], [], 0.05)
            time.sleep(0.05)
        os.set_blocking(fd, True)
        return _Prefixed(head, os.fdopen(fd, "rb"))
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str, limit: int = MAX_SNAPSHOT_BYTES, *, text: str = "YAML or JSON", what: str = "") -> bytes:
    """The bytes of a file, or of stdin for `-`; a stream's bytes are read once and kept. More
    than `limit` bytes is an error, and so is a NUL byte in a stream (`text`: the text expected
    there; `what`: the kind of input, for the error past `limit`)."""
    if path == "-":
        hit = _READ_ONCE.get("-")
        if hit is not None and hit[0] is sys.stdin:
            if len(hit[1]) > limit:
                raise too_large(path, limit, what)
            return hit[1]
        data = _read_stream(sys.stdin.buffer, "-", limit, text, what)
        _READ_ONCE["-"] = (sys.stdin, data)
        return data
    try:
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            if st.st_size > limit:
                raise too_large(path, limit, what)
            with open(path, "rb") as f:
                return f.read()
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(path)
        key = (st.st_dev, st.st_ino)
        hit = _READ_ONCE.get(key)
        if hit is not None:
            if len(hit[1]) > limit:
                raise too_large(path, limit, what)
            return hit[1]
        with _open_stream(path, st.st_mode) as f:
            data = _read_stream(f, path, limit, text, what)
        _READ_ONCE[key] = (None, data)
        return data
    except OSError as e:
        raise open_error(path, e) from None
    except ValueError:  # a NUL in the path
        raise InputError("no such file", source=path) from None


def kept_stream(path: str) -> bytes | None:
    """The bytes of a stream read to its end before (read_bytes keeps them), without reading it
    again; None when it was not."""
    if path == "-":
        hit = _READ_ONCE.get("-")
        return hit[1] if hit is not None and hit[0] is sys.stdin else None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    hit = _READ_ONCE.get((st.st_dev, st.st_ino))
    return None if hit is None else hit[1]


def read_text(path: str, limit: int = MAX_USER_FILE_BYTES) -> str:
    """A file's text (UTF-8, universal newlines), or stdin's for `-`; at most `limit` bytes."""
    if is_stream(path):
        text = decode_utf8(read_bytes(path, limit), path)
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    file_size(path, limit)
    text = decode_utf8(read_bytes(path, limit), path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def decode_utf8(data: bytes, path: str) -> str:
    """UTF-8 text; UTF-16 with its byte order mark too (PowerShell's `>` writes it), as kubectl
    reads it (unicode.BOMOverride)."""
    try:
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return data.decode("utf-16")
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text: {_bad_bytes(data, e)}", source=path) from None


def _bad_bytes(data: bytes, e: UnicodeDecodeError) -> str:
    """Where the text stops being UTF-8 (or UTF-16), as one names it in an editor."""
    if e.encoding.startswith("utf-16"):
        return f"a UTF-16 byte order mark, then bytes that are not UTF-16 (offset {e.start})"
    line = data.count(b"\n", 0, e.start) + 1
    column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
    return f"byte 0x{data[e.start]:02x} at line {line}, column {column} (offset {e.start})"


def file_size(path: str, limit: int = MAX_SNAPSHOT_BYTES) -> int:
    try:
        size = os.stat(path).st_size
        if size > limit:
            raise too_large(path, limit)
        return size
    except OSError as e:
        raise open_error(path, e) from None
    except ValueError:
        raise InputError("no such file", source=path) from None


def read_once_check(named: list[tuple[str, str | None]]) -> None:
    """Refuse stdin named for two inputs (`explain - -c -`): it can be read only once.
    `named`: (option, path) pairs, a path None when the option was not given."""
    takers = [option for option, path in named if path == "-"]
    if len(takers) > 1:
        first, second = takers[:2]
        both = f"{first} twice" if first == second else f"{first} and {second}"
        raise InputError(f"stdin is named twice ({both}); it can be read only once", source="-")
