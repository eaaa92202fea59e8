"""The snapshot cache's writer lock: a small file beside the entries saying that a background writer
is writing an entry, who it is and when it should be done (docs/cache.md, issue 35).

A writer takes the lock of its key before it starts (`take`) and lets it go when the entry is in
place or it gave up (`release`). With the lock held by a live writer:

* a command that finds no entry may wait for it instead of parsing the files again, when the
  writer should be done before a parse would (`expected_wait`); the wait is bounded and ends as
  soon as the writer is gone, and what it then reads is an entry like any other (its MAC checked);
* a second writer of the same key does not start: the entry is on its way.

The lock is a hint, never trusted for content: a lock whose process is gone (killed, crashed) or
a zombie is stale and ignored (and replaced by the next writer); one that is not a regular file of
the user's, not writable by others, of the right size and magic, with sane figures, is ignored.
Whatever it says, a reader waits at most as long as parsing took the writer's command.

Lock file: `.lock-<the entry's 40 hex digits>`, 40 bytes: magic `KSCHEDL1`, the writer's pid
(u64), then as float64 the wall-clock time it started, the seconds its command's parse took and the
seconds the writing is expected to take (the parse times the last writer's ratio, kept in
`.lock-rate`: magic `KSCHEDR1`, a float64). Written to a temporary file and hard-linked to its name,
so it is never seen half written.
"""

from __future__ import annotations

import contextlib
import math
import os
import stat
import struct
import time
from typing import NamedTuple

LOCK_PREFIX = ".lock-"
_MAGIC = b"KSCHEDL1"
_LOCK = struct.Struct("<8sQddd")
_OPEN_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# the longest figure a lock may give (anything longer: the lock is ignored)
_MAX_SECONDS = 3600.0

# How long writing an entry (the scheduler's snapshot built, pickling, the MAC, the file) takes per
# second of the parse it follows, until a writer has measured it here: then the last writer's figure
# (RATE_FILE). Measured 0.22 at 500 nodes and 0.33 at 5,000 on a loaded machine, where the parse's
# worker processes compete with everything else and the writer is one process (docs/cache.md).
WRITE_PER_PARSE = 1.0
RATE_FILE = ".lock-rate"
_RATE = struct.Struct("<8sd")
_RATE_MAGIC = b"KSCHEDR1"


class Held(NamedTuple):
    pid: int
    started: float  # time.time() when the writer took the lock
    parse_seconds: float  # how long the writer's command took to parse the files
    expected_seconds: float  # how long the writing should take

    def remaining(self, now: float) -> float:
        return self.started + self.expected_seconds - now


def lock_name(entry_name: str) -> str:
    return LOCK_PREFIX + entry_name.split(".", 1)[0]


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (a killed writer whose parent does not
    reap it, as in a container without an init, would otherwise look alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process under a reused pid: not our writer, but bounded anyway
        return True
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return True  # no /proc: kill(0) is the answer
    return state not in (b"Z", b"X")


def private_temp(dir_fd: int, suffix: str, *chunks: bytes | memoryview) -> str | None:
    """A new file in the directory, readable and writable by this user only, holding `chunks`:
    its name (a temporary one, ending in `suffix`, to be renamed or linked into place), or None
    when it cannot be made or written (nothing is left behind)."""
    tmp = f".tmp-{os.getpid()}-{os.urandom(6).hex()}{suffix}"
    try:
        fd = os.open(tmp, OPEN_NEW, 0o600, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        return None
    return tmp


def _small_file(dir_fd: int, name: str, size: int) -> bytes | None:
    """The `size` bytes of file `name` in the directory, or None: no such file, or not a regular
    file of this user's that only they can write, or not exactly `size` bytes long."""
    try:
        fd = os.open(name, _OPEN_READ, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        uid = os.geteuid() if hasattr(os, "geteuid") else st.st_uid
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid or st.st_mode & 0o022 or st.st_size != size:
            return None
        data = os.read(fd, size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == size else None


def read(dir_fd: int, name: str) -> Held | None:
    """The lock `name` in the directory, or None (none, or not a well-formed lock of this user's)."""
    data = _small_file(dir_fd, name, _LOCK.size)
    if data is None:
        return None
    magic, pid, started, parse_s, expected_s = _LOCK.unpack(data)
    figures = (started, parse_s, expected_s)
    if magic != _MAGIC or not all(math.isfinite(x) and x >= 0 for x in figures):
        return None
    if parse_s > _MAX_SECONDS or expected_s > _MAX_SECONDS:
        return None
    return Held(pid, started, parse_s, expected_s)


def take(dir_fd: int, name: str, parse_seconds: float) -> bool:
    """Take the lock `name` for this process: True when taken (or when it cannot be written at all:
    the lock is a hint, the entry is written anyway); False when a live writer holds it."""
    parse_seconds = min(max(parse_seconds, 0.0), _MAX_SECONDS)
    rate = read_rate(dir_fd)
    expected = min(parse_seconds * (WRITE_PER_PARSE if rate is None else rate), _MAX_SECONDS)
    body = _LOCK.pack(_MAGIC, os.getpid(), time.time(), parse_seconds, expected)
    tmp = private_temp(dir_fd, ".lock", body)
    if tmp is None:
        return True
    try:
        for _ in range(2):
            try:
                os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
                return True
            except FileExistsError:
                held = read(dir_fd, name)
                if held is not None and held.pid != os.getpid() and alive(held.pid):
                    return False
                with contextlib.suppress(OSError):  # stale (its writer gone) or not a lock: replaced
                    os.unlink(name, dir_fd=dir_fd)
        return True
    except OSError:
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)


def release(dir_fd: int, name: str, wrote: bool = False) -> None:
    """Let go of the lock `name` if this process holds it; `wrote`: the entry is in place, and how
    long it took per second of parse is kept for the next writer's estimate (RATE_FILE)."""
    held = read(dir_fd, name)
    if held is None or held.pid != os.getpid():
        return
    if wrote and held.parse_seconds > 2.0:  # a short parse says little of the ratio (and leaves no file)
        _write_rate(dir_fd, (time.time() - held.started) / held.parse_seconds)
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)


def read_rate(dir_fd: int) -> float | None:
    """The last writer's seconds of writing per second of parse, or None (none, or not a
    well-formed file of this user's)."""
    data = _small_file(dir_fd, RATE_FILE, _RATE.size)
    if data is None:
        return None
    magic, rate = _RATE.unpack(data)
    return rate if magic == _RATE_MAGIC and math.isfinite(rate) and 0.01 <= rate <= 10 else None


def _write_rate(dir_fd: int, rate: float) -> None:
    if not (math.isfinite(rate) and 0.01 <= rate <= 10):
        return
    tmp = private_temp(dir_fd, ".lock", _RATE.pack(_RATE_MAGIC, rate))
    if tmp is None:
        return
    try:
        os.replace(tmp, RATE_FILE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)


def expected_wait(held: Held | None, now: float) -> float | None:
    """How long a command that found no entry should wait for the writer holding the lock at most,
    or None when it should parse at once: no lock, its writer gone, or the writer not expected to
    be done before a parse would be (the parse the writer's own command took)."""
    if held is None or held.pid == os.getpid() or not alive(held.pid):
        return None
    remaining = max(held.remaining(now), 0.0)
    if remaining >= held.parse_seconds:
        return None
    # a writer late by half again what was left: parse after all; never longer than a parse
    return min(held.parse_seconds, 1.5 * remaining + 0.5)
