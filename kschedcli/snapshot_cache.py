"""A cache of parsed snapshots: the Cluster `load_cluster` builds from the --cluster files, pickled in
the user's cache directory ($KSCHED_CACHE_DIR, else $XDG_CACHE_HOME/ksched, else ~/.cache/ksched), so
that the next command on the same files skips reading and parsing them.

An entry's key is ksched's code (the version and every module's size and modification time) and,
per file, its identity and a sample of its content: device, inode, size, modification and change
times (any write moves the change time, which no user can set back) and a digest of its first and
last 256 KiB and of 64 blocks spread over it. Hashing the whole file would cost a tenth of parsing
it (about 0.1 s for the 74 MB of the 500-node rung, a second at 5,000 nodes). Stdin, pipes and
devices are never cached (there is no identity to key by, and they are read once).

Entries are written to a temporary file beside them and renamed into place (a reader sees a whole
entry or none; concurrent writers of one key each write a whole entry). A reader checks the header,
the key, the length and a checksum of the payload, and treats any mismatch or unpickling error as a
miss: the files are parsed again and the entry rewritten. The directory is kept under a size bound
(KSCHED_CACHE_MAX_MB, default 2048), least recently used entries removed first.
`KSCHED_NO_CACHE=1` or `ksched --no-cache` turns it off; `ksched cache clear` empties it.

Writing an entry (pickling) costs about half a parse: it is done by a forked child process, so the
command that parsed does not wait for it.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import stat
import struct
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:  # the blake2 module alone: hashlib would load OpenSSL's bindings into every explain
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python implementation
    from hashlib import blake2b

_MAGIC = b"KSCHEDC2"
_HEADER = struct.Struct("<8s32sQI")  # magic, key, payload length, crc32 of the payload
_SUFFIX = ".cluster"
_SAMPLE_EDGE = 256 * 1024
_SAMPLE_BLOCKS = 64
_SAMPLE_BLOCK = 4096
_DEFAULT_MAX_MB = 2048

_DISABLED = {"flag": False}  # `ksched --no-cache`


def disable() -> None:
    _DISABLED["flag"] = True


def enabled() -> bool:
    return not _DISABLED["flag"] and os.environ.get("KSCHED_NO_CACHE", "") in ("", "0")


def cache_dir() -> Path:
    explicit = os.environ.get("KSCHED_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ksched"


def max_bytes() -> int:
    try:
        return int(float(os.environ.get("KSCHED_CACHE_MAX_MB", _DEFAULT_MAX_MB)) * 2**20)
    except ValueError:
        return _DEFAULT_MAX_MB * 2**20


def _code_fingerprint() -> bytes:
    """ksched's version and its modules' sizes and modification times: an entry holds its objects
    as this code built them."""
    from . import __version__

    h = blake2b(digest_size=16)
    h.update(f"{__version__}|{sys.version}|{pickle.HIGHEST_PROTOCOL}".encode())
    root = Path(__file__).resolve().parent
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                st = os.stat(os.path.join(dirpath, name))
                h.update(f"{dirpath[len(str(root)) :]}/{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.digest()


def _file_identity(path: str) -> bytes | None:
    """The file's identity and a sample of its content; None for what is not a regular file."""
    if path == "-":
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # never opened here: opening a FIFO would wait for its writer, and take its bytes
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        h = blake2b(digest_size=16)
        # the name as given too: the objects built name their file in messages
        h.update(f"{path}|{os.path.realpath(path)}|{st.st_dev}|{st.st_ino}|{st.st_size}".encode())
        h.update(f"|{st.st_mtime_ns}|{st.st_ctime_ns}".encode())
        size = st.st_size
        if size <= 2 * _SAMPLE_EDGE + _SAMPLE_BLOCKS * _SAMPLE_BLOCK:
            h.update(os.pread(fd, size, 0))
        else:
            h.update(os.pread(fd, _SAMPLE_EDGE, 0))
            step = (size - 2 * _SAMPLE_EDGE) // _SAMPLE_BLOCKS
            for i in range(_SAMPLE_BLOCKS):
                h.update(os.pread(fd, _SAMPLE_BLOCK, _SAMPLE_EDGE + i * step))
            h.update(os.pread(fd, _SAMPLE_EDGE, size - _SAMPLE_EDGE))
        return h.digest()
    finally:
        os.close(fd)


# files whose whole content ksched hashed as it wrote them (what kubectl printed for a live read):
# path -> (a name for the source, digest). Keyed by those, not by the file's identity: each live
# read writes a new file, and the same bytes read again are the same snapshot.
_CONTENT: dict[str, tuple[str, bytes]] = {}


def content_hasher() -> Any:
    """The hash `know_content` takes the digest of."""
    return blake2b(digest_size=32)


def know_content(path: str, source: str, digest: bytes) -> None:
    """`path` holds exactly the bytes of `digest` (content_hasher), read from `source` (the live
    cluster's context): its entry is keyed by those rather than by the file's identity."""
    _CONTENT[path] = (source, digest)


def entry_key(paths: list[str]) -> bytes | None:
    """The cache key of reading `paths` in order; None when one of them cannot be cached."""
    h = blake2b(digest_size=32)
    h.update(_MAGIC)
    h.update(_code_fingerprint())
    for path in paths:
        known = _CONTENT.get(path)
        if known is not None:
            h.update(f"content|{known[0]}|".encode())
            h.update(known[1])
            continue
        ident = _file_identity(path)
        if ident is None:
            return None
        h.update(ident)
    return h.digest()


def _entry_path(key: bytes) -> Path:
    return cache_dir() / (key.hex()[:40] + _SUFFIX)


def read_entry(key: bytes) -> Any | None:
    """The object stored under `key`, or None (no entry, or one that is stale, cut short or damaged)."""
    path = _entry_path(key)
    try:
        with open(path, "rb") as f:
            # mapped, not read: a 200 MB entry is not copied into the process before it is unpickled
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # no entry; an empty file cannot be mapped
        return None
    with data:
        obj = _unpickled(data, key)
    if obj is not None:
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
    return obj


def _unpickled(data: mmap.mmap, key: bytes) -> Any | None:
    if len(data) < _HEADER.size:
        return None
    magic, stored_key, length, crc = _HEADER.unpack_from(data)
    with memoryview(data) as view:
        payload = view[_HEADER.size :]
        try:
            if magic != _MAGIC or stored_key != key or len(payload) != length or zlib.crc32(payload) != crc:
                return None
            from .snapshot_pickle import loads

            return loads(payload)
        except Exception:  # noqa: BLE001 - a damaged entry is a miss
            return None
        finally:
            payload.release()


def write_entry(key: bytes, obj: Any) -> Path | None:
    """Store `obj` under `key`: pickled into a temporary file beside the entry, renamed into place;
    then the directory is brought under its size bound. None when it could not be written."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        from .snapshot_pickle import dumps  # the writer alone needs the model's pickling

        payload = dumps(obj)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=folder)
    except (OSError, pickle.PicklingError, RecursionError, TypeError, AttributeError):
        return None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_HEADER.pack(_MAGIC, key, len(payload), zlib.crc32(payload)))
            f.write(payload)
        final = _entry_path(key)
        os.replace(tmp, final)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return None
    evict(max_bytes(), keep=final)
    return final


def entries() -> list[tuple[Path, os.stat_result]]:
    """The cache's entries, least recently used first."""
    found = []
    try:
        with os.scandir(cache_dir()) as it:
            for e in it:
                if e.name.endswith(_SUFFIX) and not e.name.startswith(".tmp-"):
                    with contextlib.suppress(OSError):
                        found.append((Path(e.path), e.stat()))
    except OSError:
        return []
    return sorted(found, key=lambda x: (x[1].st_mtime_ns, x[0].name))


def evict(limit: int, keep: Path | None = None) -> int:
    """Remove least recently used entries until the rest fit in `limit` bytes; the number removed."""
    found = entries()
    total = sum(st.st_size for _, st in found)
    removed = 0
    for path, st in found:
        if total <= limit:
            break
        if path == keep:
            continue
        try:
            path.unlink()
        except OSError:
            continue
        total -= st.st_size
        removed += 1
    return removed


def clear() -> tuple[int, int]:
    """Remove every entry (and leftover temporary files): (entries removed, bytes freed)."""
    n = freed = 0
    try:
        with os.scandir(cache_dir()) as it:
            for e in it:
                if e.name.endswith(_SUFFIX):
                    try:
                        size = e.stat().st_size
                        os.unlink(e.path)
                    except OSError:
                        continue
                    if not e.name.startswith(".tmp-"):
                        n += 1
                    freed += size
    except OSError:
        pass
    return n, freed


def _prepare_and_write(key: bytes, obj: Any, prepare: Callable[[Any], Any] | None) -> None:
    write_entry(key, prepare(obj) if prepare is not None else obj)


def _write_in_background(key: bytes, obj: Any, prepare: Callable[[Any], Any] | None = None) -> None:
    """prepare(obj) (what the entry holds besides the parsed object) and write_entry in a forked
    grandchild (the parent waits only for the child, which forks and exits at once: no zombie is
    left behind). Without fork, written here."""
    if not hasattr(os, "fork"):
        _prepare_and_write(key, obj, prepare)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        _prepare_and_write(key, obj, prepare)
        return
    if pid:
        os.waitpid(pid, 0)
        return
    code = 0
    try:
        if os.fork() == 0:
            os.setsid()
            # let go of the command's stdin/stdout/stderr: a reader of its output (`$(ksched ...)`,
            # a pipe) waits for every writer to close them, and must not wait for the cache
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.close(devnull)
            try:
                _prepare_and_write(key, obj, prepare)
            except BaseException:  # noqa: BLE001 - the cache never fails a command
                code = 1
    except BaseException:  # noqa: BLE001
        code = 1
    os._exit(code)


def cached(
    paths: list[str],
    load: Callable[[list[str]], Any],
    *,
    background: bool = True,
    prepare: Callable[[Any], Any] | None = None,
) -> tuple[Any, bool]:
    """(load(paths), from the cache?): the entry for `paths` when there is a good one, else
    load(paths), stored for the next time. `prepare(obj)`, run by the writer (in the background
    process) before pickling, may add to the object what the next reader would otherwise work out."""
    if not enabled():
        return load(paths), False
    key = entry_key(paths)
    if key is None:
        return load(paths), False
    hit = read_entry(key)
    if hit is not None:
        return hit, True
    obj = load(paths)
    if background:
        _write_in_background(key, obj, prepare)
    else:
        _prepare_and_write(key, obj, prepare)
    return obj, False
