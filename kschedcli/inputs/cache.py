"""A cache of parsed snapshots: the Cluster `load_cluster` builds from the --cluster files, pickled in
the user's cache directory ($KSCHED_CACHE_DIR, else $XDG_CACHE_HOME/ksched, else ~/.cache/ksched), so
that the next command on the same files skips reading and parsing them (docs/cache.md).

An entry's key is ksched's code (the version and every module's size and modification time) and,
per file, its identity and a sample of its content: device, inode, size, modification and change
times (any write moves the change time, which no user can set back) and a digest of its first and
last 256 KiB and of 64 blocks spread over it. Hashing the whole file would cost a tenth of parsing
it (about 0.1 s for the 74 MB of the 500-node rung, a second at 5,000 nodes). Stdin, pipes and
devices are never cached (there is no identity to key by, and they are read once).

Entries are safe to read whatever their bytes. An entry is parts (format 5, docs/cache.md): its
header (which holds the key) and the table of its parts' lengths and MACs are authenticated by a MAC
(HMAC-SHA256), and each part by one of its own, with a secret of this user's that never lives in
the cache directory (`key_file`: 32 random bytes, mode 0600). The parts read up front are checked
before anything is unpickled; the source objects' parts (which an explain never reads) when first
read, before any of their bytes is, and a damaged one is then read from the files again
(_Part.raws). The unpickler resolves only the globals ksched's entries hold
(snapshot_pickle.ALLOWED). A directory that is not the user's own, or that group or others may
write, is not used (one warning line; the files are parsed as without a cache); nor is a key file
that is not a regular file of the user's with mode 0600. Entries are opened without following
symbolic links and without waiting (a FIFO is not a regular file: a miss), relative to the
directory opened once; the directory is created 0700, entries and the key file 0600.

Entries are written to a temporary file beside them and renamed into place (a reader sees a whole
entry or none; concurrent writers of one key each write a whole entry). A reader checks the header,
the key, the length and the MAC of the payload, and treats any mismatch or unpickling error as a
miss: the files are parsed again and the entry rewritten. The directory is kept under a size bound
(KSCHED_CACHE_MAX_MB, default 2048; a value that is not a finite number >= 0 is warned of and the
default used), least recently used entries removed first.
`KSCHED_NO_CACHE=1` or `ksched --no-cache` turns it off; `ksched cache clear` empties it.

Writing an entry (pickling) costs about half a parse: it is done by a forked child process, so the
command that parsed does not wait for it.
"""

from __future__ import annotations

import contextlib
import errno
import math
import mmap
import os
import pickle
import stat
import struct
import sys
import time
from _operator import _compare_digest as compare_digest  # hmac.compare_digest, without hmac's imports
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputChanged
from . import cache_lock

try:  # the blake2 module alone: hashlib would load OpenSSL's bindings into every explain
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python implementation
    from hashlib import blake2b

# 6: the pending pods a part of their own, model objects as slot tuples; 5: parts, each with its
# MAC (4: HMAC-SHA256 of one payload; 3: keyed BLAKE2b)
_MAGIC = b"KSCHEDC6"
_HEAD = struct.Struct("<8s32sQ")  # magic, key, number of parts
_PART = struct.Struct("<Q?32s")  # per part: length, checked before anything is read?, its MAC
_MAC_SIZE = 32
_MAX_PARTS = 1 << 24  # a sanity bound; the table must fit in the file besides
_MAC_PERSON = b"ksched-entry"
_SUFFIX = ".cluster"
_SAMPLE_EDGE = 256 * 1024
_SAMPLE_BLOCKS = 64
_SAMPLE_BLOCK = 4096
_DEFAULT_MAX_MB = 2048
_SECRET_SIZE = 32
_POLL_SECONDS = 0.02  # how often a command waiting for a background writer looks for the entry

# entries and the key file: opened without following a symbolic link, without waiting for a FIFO's writer
_OPEN_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_NEW = cache_lock.OPEN_NEW  # a new file, never through a symbolic link
_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)

_WARNED: set[str] = set()


def enabled() -> bool:
    """The cache is on unless KSCHED_NO_CACHE is set (`--no-cache`, Options.cache=False, reaches
    `cached` as its `use` argument instead)."""
    return os.environ.get("KSCHED_NO_CACHE", "") in ("", "0")


def _warn(message: str) -> None:
    """One line on stderr, once per process."""
    if message not in _WARNED:
        _WARNED.add(message)
        sys.stderr.write(f"ksched: warning: {message}\n")
        sys.stderr.flush()


def cache_dir() -> Path:
    explicit = os.environ.get("KSCHED_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ksched"


def key_file() -> Path:
    """The user's secret that authenticates the entries: $KSCHED_CACHE_KEY_FILE, else
    $XDG_STATE_HOME/ksched/cache-key, else ~/.local/state/ksched/cache-key. Never in the cache
    directory: who can plant an entry there (a restored or shared cache) must not have the key."""
    explicit = os.environ.get("KSCHED_CACHE_KEY_FILE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "ksched" / "cache-key"


def max_bytes(*, warn: bool = True) -> int:
    """KSCHED_CACHE_MAX_MB in bytes: a finite number of MB, 0 or more; else the default (2048),
    with a warning."""
    text = os.environ.get("KSCHED_CACHE_MAX_MB", "").strip()
    if not text:
        return _DEFAULT_MAX_MB * 2**20
    try:
        mb = float(text)
    except ValueError:
        mb = math.nan
    if not (math.isfinite(mb) and mb >= 0 and mb * 2**20 < 2**63):
        if warn:
            _warn(
                f"KSCHED_CACHE_MAX_MB={text[:40]!r} is not a finite number of MB, 0 or more: "
                f"the default ({_DEFAULT_MAX_MB}) is used"
            )
        return _DEFAULT_MAX_MB * 2**20
    return int(mb * 2**20)


def _owner_problem(st: os.stat_result, what: str) -> str | None:
    uid = os.geteuid() if hasattr(os, "geteuid") else st.st_uid
    if st.st_uid != uid:
        return f"{what} is owned by uid {st.st_uid}, not by this user (uid {uid})"
    return None


def _dir_problem(st: os.stat_result) -> str | None:
    """Why a directory of entries cannot be trusted, or None."""
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    problem = _owner_problem(st, "it")
    if problem:
        return problem
    if st.st_mode & 0o022:
        return f"it is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _open_dir(create: bool) -> int | None:
    """The cache directory, opened (every entry is opened relative to it), created 0700 if
    missing (when `create`); None, with one warning line, when it is not to be trusted."""
    folder = cache_dir()
    try:
        fd = os.open(folder, _OPEN_DIR)
    except FileNotFoundError:
        if not create:
            return None
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o700)
            fd = os.open(folder, _OPEN_DIR)
        except OSError as e:
            _warn(f"snapshot cache not used: {folder}: {e.strerror or e}")
            return None
    except OSError as e:
        _warn(f"snapshot cache not used: {folder}: {e.strerror or e}")
        return None
    problem = _dir_problem(os.fstat(fd))
    if problem:
        os.close(fd)
        _warn(f"snapshot cache not used: {folder}: {problem}")
        return None
    return fd


def _key_problem(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    problem = _owner_problem(st, "it")
    if problem:
        return problem
    if stat.S_IMODE(st.st_mode) != 0o600:
        return f"its mode is {stat.S_IMODE(st.st_mode):04o}, not 0600"
    if st.st_size != _SECRET_SIZE:
        return f"it holds {st.st_size} bytes, not {_SECRET_SIZE}"
    return None


def _read_secret(path: Path) -> bytes | None:
    """The secret in `path`; None when there is none. Raises ValueError (the reason) for a key
    file that is not to be trusted."""
    try:
        fd = os.open(path, _OPEN_READ)
    except FileNotFoundError:
        return None
    except OSError as e:  # ELOOP: a symbolic link
        raise ValueError("a symbolic link" if e.errno == errno.ELOOP else (e.strerror or str(e))) from None
    try:
        problem = _key_problem(os.fstat(fd))
        if problem:
            raise ValueError(problem)
        data = os.read(fd, _SECRET_SIZE + 1)
        if len(data) != _SECRET_SIZE:
            raise ValueError(f"it holds {len(data)} bytes, not {_SECRET_SIZE}")
        return data
    finally:
        os.close(fd)


def _new_secret(path: Path) -> bytes | None:
    """A new secret in `path`: 32 random bytes written to a file created with O_EXCL (mode 0600)
    beside it, then linked to `path` (which never exists half written). The secret another
    process put there first, if one did."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    secret = os.urandom(_SECRET_SIZE)
    tmp = path.parent / f".{path.name}-{os.getpid()}-{os.urandom(6).hex()}"
    fd = os.open(tmp, _OPEN_NEW, 0o600)
    try:
        try:
            os.write(fd, secret)
            os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return _read_secret(path)
        except OSError:  # a file system without hard links: created in place, as exclusively
            fd = os.open(path, _OPEN_NEW, 0o600)
            try:
                os.write(fd, secret)
            finally:
                os.close(fd)
        return secret
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def secret(create: bool = True) -> bytes | None:
    """The user's secret for the cache's MACs (key_file), made when there is none (`create`); None,
    with one warning line, when the key file cannot be trusted or made: the cache is then not used."""
    path = key_file()
    try:
        found = _read_secret(path)
        if found is None and create:
            found = _new_secret(path)
        return found
    except ValueError as e:
        _warn(f"snapshot cache not used: key file {path}: {e}")
    except OSError as e:
        _warn(f"snapshot cache not used: key file {path}: {e.strerror or e}")
    return None


def _code_fingerprint() -> bytes:
    """ksched's version and its modules' sizes and modification times: an entry holds its objects
    as this code built them."""
    from .. import __version__

    h = blake2b(digest_size=16)
    h.update(f"{__version__}|{sys.version}|{pickle.HIGHEST_PROTOCOL}".encode())
    root = Path(__file__).resolve().parent.parent
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


def content_moved(old: str, new: str) -> None:
    """The file know_content described at `old` was renamed `new`."""
    known = _CONTENT.pop(old, None)
    if known is not None:
        _CONTENT[new] = known


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


def _entry_name(key: bytes) -> str:
    return key.hex()[:40] + _SUFFIX


def _entry_path(key: bytes) -> Path:
    return cache_dir() / _entry_name(key)


def _hmac(secret: bytes) -> Any:
    """HMAC-SHA256 under the user's secret: SHA-256 runs on the CPU's SHA instructions where it has
    them (x86 since 2016-2019, ARMv8), twice keyed BLAKE2b's speed over a 150 MB entry (0.10 s
    against 0.19 s here); OpenSSL's bindings are loaded only when an entry is read or written (3 ms)."""
    try:
        from _hashlib import hmac_new
    except ImportError:  # pragma: no cover - a Python without OpenSSL
        from hmac import new as hmac_new  # type: ignore[assignment]
    return hmac_new(secret, _MAC_PERSON, "sha256")


def _part_mac(secret: bytes, key: bytes, i: int, data: Any) -> bytes:
    """The MAC of part `i` of the entry of `key`: over the magic, the key, the part's position and
    length, and its bytes."""
    h = _hmac(secret)
    h.update(b"part|" + _HEAD.pack(_MAGIC, key, i) + struct.pack("<Q", len(data)))
    h.update(data)
    return h.digest()


def _head_mac(secret: bytes, head: bytes) -> bytes:
    """The MAC of an entry's header: the magic, the key, the number of parts and the table of their
    lengths, flags and MACs (so a part of another entry, or of another position, fails its own)."""
    h = _hmac(secret)
    h.update(b"head|")
    h.update(head)
    return h.digest()


def _mac(secret: bytes, key: bytes, payload: Any) -> bytes:
    """The MAC a one-part entry of `payload` carries in its header's table (tests forge entries
    with another secret's)."""
    return _part_mac(secret, key, 0, payload)


class DamagedEntry(InputChanged):
    """A part of a cache entry failed its MAC when first read, after the command started using the
    entry: a namespace's pods' records, or source objects the files could not give again (they
    changed since, or the entry was read without them). Never an answer from the damaged part (an
    InputChanged: no `except Exception` of a command takes it for a result). `retry` (when the
    entry was read by `cached`): what lets the command start over from the files, which the command
    line does while it has printed nothing (cli/errors.py); else one line, exit 2."""

    def __init__(self, message: str, retry: Callable[[], None] | None = None):
        super().__init__(message)
        self.retry = retry


_CHANGED = "a snapshot cache entry was changed while in use (it was removed): run the command again"
_DAMAGED = "a snapshot cache entry was found damaged while in use (it was removed): run the command again"
_READS_OFF = False  # a damaged entry found late: the command starts over without reading the cache


def read_no_more() -> None:
    """The cache is not read again in this process (a command starting over after a damaged part):
    the files are parsed, and their entry written again."""
    global _READS_OFF
    _READS_OFF = True


class _Entry:
    """An entry being read: its mapping (kept while a part is still to be read), the user's secret,
    its key and parts' table, and how to read the files again (`reparse`: the prepared cluster, or
    None) should a part checked late fail."""

    __slots__ = ("data", "secret", "key", "table", "reparse", "fresh", "name", "ident", "stamp")

    def __init__(self, data: mmap.mmap, secret: bytes, key: bytes, table: list[tuple[int, int, bool, bytes]]):
        self.data = data
        self.secret = secret
        self.key = key
        self.table = table  # per part: (offset, length, checked up front, MAC)
        self.reparse: Callable[[], Any] | None = None
        self.fresh: Any = None
        self.name: str | None = None
        self.ident: tuple[int, int] | None = None
        self.stamp: tuple[int, int, int] | None = None  # (mtime, ctime, size) when opened

    def view(self, i: int) -> memoryview:
        at, length, _, _ = self.table[i]
        return memoryview(self.data)[at : at + length]

    def check(self, i: int) -> bool:
        view = self.view(i)
        try:
            return compare_digest(_part_mac(self.secret, self.key, i, view), self.table[i][3])
        finally:
            view.release()

    def part(self, i: int, what: str) -> Any:
        """What entry_part(i, what) stands for in the first part (cache_pickle.loads_parts)."""
        if type(i) is not int or not 0 < i < len(self.table):
            raise pickle.UnpicklingError(f"no part {i!r}")
        if what.startswith("records:"):
            n = int(what[8:])
            if not 0 < n <= len(self.table) - i or any(self.table[j][2] for j in range(i, i + n)):
                raise pickle.UnpicklingError(f"no records in parts {i}..{i + n - 1}")
            return _Records(self, i, n)
        return _Part(self, i, what)

    def reparsed(self) -> Any:
        """The files read again (once), as the entry's writer stored them; the damaged entry
        removed. DamagedEntry when that cannot be done."""
        if self.fresh is None:
            if self.reparse is None:
                raise self.damaged()
            self.remove()
            self.fresh = self.reparse()
        return self.fresh

    def damaged(self) -> DamagedEntry:
        """The entry removed, and the error saying so: "changed while in use" only when the file
        was written since it was opened (else it was damaged before: the command may start over)."""
        changed = self.remove()
        retry = read_no_more if self.reparse is not None else None
        return DamagedEntry(_CHANGED if changed else _DAMAGED, retry)

    def remove(self) -> bool:
        """Whether the entry (this one, not one written since) was changed after it was opened."""
        if self.name is None or self.ident is None:
            return False
        with contextlib.suppress(OSError):
            path = cache_dir() / self.name
            st = os.lstat(path)
            if (st.st_dev, st.st_ino) == self.ident:  # not an entry written since
                os.unlink(path)
                return (st.st_mtime_ns, st.st_ctime_ns, st.st_size) != self.stamp
        return False


def _namespace_of(key: Any) -> str:
    """The namespace of a key of Cluster.objects (as cache_pickle._Pickler._kind groups them)."""
    return key[0] if type(key) is tuple and key and type(key[0]) is str else ""


class _Records:
    """The pods' records of an entry (lazy_pods.PodStore.blob): parts `first` .. `first + n - 1`,
    one per namespace, one after the other in the entry; `view` spans them all. `check(at)`: the
    MAC of the part holding byte `at` of the view checked (once) before a record of it is read."""

    __slots__ = ("entry", "first", "starts", "checked", "view")

    def __init__(self, entry: _Entry, first: int, n: int):
        table = entry.table
        base = table[first][0]
        end = table[first + n - 1][0] + table[first + n - 1][1]
        self.entry = entry
        self.first = first
        self.starts = [table[first + j][0] - base for j in range(n)]
        self.checked = bytearray(n)
        self.view = memoryview(entry.data)[base:end]

    def check(self, at: int) -> None:
        j = bisect_right(self.starts, at) - 1
        if not self.checked[j]:
            if j < 0 or not self.entry.check(self.first + j):
                raise self.entry.damaged()
            self.checked[j] = 1

    def whole(self) -> bytes:
        """Every record, checked (a cluster read from the cache pickled again)."""
        for at in self.starts:
            self.check(at)
        return bytes(self.view)


class _Part:
    """A part of an entry read when first asked for: its MAC checked then, before any of its bytes
    is read. A part that fails it is read from the files again (_Entry.reparsed): the command goes
    on as it would have without the cache."""

    __slots__ = ("entry", "i", "what")

    def __init__(self, entry: _Entry, i: int, what: str):
        self.entry = entry
        self.i = i
        self.what = what

    def _checked(self) -> memoryview | None:
        entry = self.entry
        if entry.table[self.i][2] or entry.check(self.i):
            return entry.view(self.i)
        return None

    def load(self, namespace: str) -> dict:
        """The objects of a kind of Cluster.objects in `namespace` (cache_pickle.KindParts), from the
        files when the part is damaged."""
        if not self.what.startswith("kind:"):
            raise pickle.UnpicklingError(f"part {self.i} is no kind of objects")
        view = self._checked()
        if view is not None:
            from .cache_pickle import Unpickler, _Reader

            return Unpickler(_Reader(view)).load()  # type: ignore[arg-type]
        objs = self.entry.reparsed().objects.get(self.what[5:]) or {}
        return {k: o for k, o in objs.items() if _namespace_of(k) == namespace}

    def raws(self) -> list:
        """The source objects of a RawStore (cache_pickle), from the files when the part is damaged."""
        import marshal
        import zlib

        view = self._checked()
        if view is not None:
            return marshal.loads(zlib.decompress(view))
        fresh = self.entry.reparsed()
        if self.what == "raws:pending":
            return list(fresh.pending)
        if self.what == "raws:nodes":
            store = fresh.nodes[0]._raw[0]
        elif fresh._pod_store is not None:
            store = fresh._pod_store.raws
        else:
            store = fresh._pods[0]._raw[0]
        return marshal.loads(zlib.decompress(store.blob))


class _Cache:
    """The directory, opened and checked, and the secret: what reading and writing entries take."""

    __slots__ = ("dir_fd", "secret")

    def __init__(self, dir_fd: int, secret: bytes):
        self.dir_fd = dir_fd
        self.secret = secret

    @classmethod
    def open(cls, create: bool = True) -> _Cache | None:
        """None (after one warning line when something is not to be trusted) when there is no
        cache to use."""
        fd = _open_dir(create)
        if fd is None:
            return None
        found = secret(create)
        if found is None:
            os.close(fd)
            return None
        return cls(fd, found)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.dir_fd)


def read_entry(key: bytes, cache: _Cache | None = None) -> Any | None:
    """The object stored under `key`, or None (no entry, or one that is stale, cut short, damaged,
    forged, not a regular file of the user's, or in a directory not to be trusted)."""
    own = cache is None
    if cache is None:
        cache = _Cache.open(create=False)
        if cache is None:
            return None
    try:
        return _read(cache, key)
    finally:
        if own:
            cache.close()


def _read(cache: _Cache, key: bytes, reparse: Callable[[], Any] | None = None) -> Any | None:
    try:
        fd = os.open(_entry_name(key), _OPEN_READ, dir_fd=cache.dir_fd)
    except OSError:  # none; or a symbolic link (ELOOP)
        return None
    try:
        st = os.fstat(fd)
        # a FIFO, a device or a directory is no entry; nor is a file another user (or, with write
        # access to it, anyone) could change between its MAC checked and its payload unpickled
        if not stat.S_ISREG(st.st_mode) or _owner_problem(st, "it") or st.st_mode & 0o022:
            return None
        try:
            # mapped, not read: a 200 MB entry is not copied into the process; parts read when
            # first asked for (the source objects) are read from the mapping, kept while they are
            data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # an empty file cannot be mapped
            return None
        entry = _opened(data, key, cache.secret)
        if entry is None:
            _close_mapping(data)
            return None
        entry.reparse = reparse
        entry.name = _entry_name(key)
        entry.ident = (st.st_dev, st.st_ino)
        entry.stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size)
        obj = _unpickled(entry)
        if obj is None or len(entry.table) == 1:  # else kept: parts are read from it when first asked for
            _close_mapping(data)
        if obj is not None:
            with contextlib.suppress(OSError, NotImplementedError):
                os.utime(fd)  # recently used: evicted last
                st = os.fstat(fd)
                entry.stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size)  # as left when opened
        return obj
    finally:
        os.close(fd)


def _close_mapping(data: mmap.mmap) -> None:
    """Unmap now, or, while something still holds a view of the entry (a profiler's reference to a
    frame of the read, as dask's workers keep, holds the unpickler and its last slice), when the
    last such view is let go: the object read is whole either way."""
    with contextlib.suppress(BufferError):
        data.close()


def _opened(data: mmap.mmap, key: bytes, secret: bytes) -> _Entry | None:
    """The entry in `data` when its header and table are this user's ksched's for `key` (their MAC
    checked in constant time), its length the sum of its parts' and its parts checked up front
    pass theirs; else None."""
    if len(data) < _HEAD.size + _MAC_SIZE:
        return None
    magic, stored_key, count = _HEAD.unpack_from(data)
    if magic != _MAGIC or stored_key != key or not 0 < count <= _MAX_PARTS:
        return None
    end = _HEAD.size + count * _PART.size
    if len(data) < end + _MAC_SIZE:
        return None
    if not compare_digest(_head_mac(secret, data[:end]), data[end : end + _MAC_SIZE]):
        return None
    table = []
    at = end + _MAC_SIZE
    for i in range(count):
        length, eager, mac = _PART.unpack_from(data, _HEAD.size + i * _PART.size)
        table.append((at, length, eager, mac))
        at += length
    if at != len(data) or not table[0][2]:  # cut short (or grown): a part would be
        return None
    entry = _Entry(data, secret, key, table)
    # the MAC first: nothing of an entry this user's ksched did not write is unpickled
    if not all(entry.check(i) for i in range(count) if table[i][2]):
        return None
    return entry


def _unpickled(entry: _Entry) -> Any | None:
    from .cache_pickle import loads_parts

    view = entry.view(0)
    try:
        return loads_parts(view, entry.part)
    except Exception:  # noqa: BLE001 - a damaged entry is a miss
        return None
    finally:
        view.release()


def write_entry(key: bytes, obj: Any, cache: _Cache | None = None, limit: int | None = None) -> Path | None:
    """Store `obj` under `key`: pickled into a temporary file (0600) beside the entry, renamed into
    place; then the directory is brought under its size bound (`limit` bytes, else max_bytes()).
    None when it could not be written."""
    own = cache is None
    if cache is None:
        cache = _Cache.open(create=True)
        if cache is None:
            return None
    try:
        return _write(cache, key, obj, max_bytes() if limit is None else limit)
    finally:
        if own:
            cache.close()


def _write(cache: _Cache, key: bytes, obj: Any, limit: int) -> Path | None:
    try:
        from .cache_pickle import dumps_parts  # the writer alone needs the model's pickling

        parts = dumps_parts(obj)
    except (pickle.PicklingError, RecursionError, TypeError, AttributeError):
        return None
    dfd = cache.dir_fd
    name = _entry_name(key)
    head = _HEAD.pack(_MAGIC, key, len(parts)) + b"".join(
        _PART.pack(len(data), eager, _part_mac(cache.secret, key, i, data)) for i, (data, eager) in enumerate(parts)
    )
    header = head + _head_mac(cache.secret, head)
    tmp = cache_lock.private_temp(dfd, _SUFFIX, header, *[data for data, _ in parts])
    if tmp is None:
        return None
    try:
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        return None
    _evict(dfd, limit, keep=name)
    return cache_dir() / name


def _scan(dfd: int) -> list[tuple[str, os.stat_result]]:
    """The entries in the directory `dfd` (regular files; symbolic links not followed), least
    recently used first."""
    found = []
    try:
        with os.scandir(dfd) as it:
            for e in it:
                if e.name.endswith(_SUFFIX) and not e.name.startswith(".tmp-"):
                    with contextlib.suppress(OSError):
                        st = e.stat(follow_symlinks=False)
                        if stat.S_ISREG(st.st_mode):
                            found.append((e.name, st))
    except OSError:
        return []
    return sorted(found, key=lambda x: (x[1].st_mtime_ns, x[0]))


def entries() -> list[tuple[Path, os.stat_result]]:
    """The cache's entries, least recently used first."""
    folder = cache_dir()
    try:
        dfd = os.open(folder, _OPEN_DIR)
    except OSError:
        return []
    try:
        return [(folder / name, st) for name, st in _scan(dfd)]
    finally:
        os.close(dfd)


def evict(limit: int, keep: Path | None = None) -> int:
    """Remove least recently used entries until the rest fit in `limit` bytes; the number removed."""
    try:
        dfd = os.open(cache_dir(), _OPEN_DIR)
    except OSError:
        return 0
    try:
        return _evict(dfd, limit, None if keep is None else keep.name)
    finally:
        os.close(dfd)


def _evict(dfd: int, limit: int, keep: str | None = None) -> int:
    found = _scan(dfd)
    total = sum(st.st_size for _, st in found)
    removed = 0
    for name, st in found:
        if total <= limit:
            break
        if name == keep:
            continue
        try:
            os.unlink(name, dir_fd=dfd)
        except OSError:
            continue
        total -= st.st_size
        removed += 1
    return removed


def clear() -> tuple[int, int]:
    """Remove every entry (and leftover temporary files and writer locks; symbolic links themselves, not what they
    point to): (entries removed, bytes freed)."""
    n = freed = 0
    try:
        dfd = os.open(cache_dir(), _OPEN_DIR)
    except OSError:
        return 0, 0
    try:
        with os.scandir(dfd) as it:
            for e in it:
                lock = e.name.startswith(cache_lock.LOCK_PREFIX) or (
                    e.name.startswith(".tmp-") and e.name.endswith(".lock")
                )
                if e.name.endswith(_SUFFIX) or lock:
                    try:
                        st = e.stat(follow_symlinks=False)
                        if stat.S_ISDIR(st.st_mode):
                            continue
                        os.unlink(e.name, dir_fd=dfd)
                    except OSError:
                        continue
                    if not e.name.startswith(".tmp-") and not lock:
                        n += 1
                    freed += st.st_size if stat.S_ISREG(st.st_mode) else 0
    except OSError:
        pass
    finally:
        os.close(dfd)
    return n, freed


def _prepare_and_write(
    cache: _Cache, key: bytes, obj: Any, prepare: Callable[[Any], Any] | None, limit: int, parse_seconds: float = 0.0
) -> None:
    """The entry written under the key's writer lock (cache_lock): not at all when a live writer
    already holds it (the entry is on its way)."""
    lock = cache_lock.lock_name(_entry_name(key))
    if not cache_lock.take(cache.dir_fd, lock, parse_seconds):
        return
    wrote = False
    try:
        wrote = _write(cache, key, prepare(obj) if prepare is not None else obj, limit) is not None
    finally:
        cache_lock.release(cache.dir_fd, lock, wrote)


def _await_writer(cache: _Cache, key: bytes, reparse: Callable[[], Any] | None = None) -> Any | None:
    """No entry: when a live background writer is writing it and should be done before a parse
    would be, wait for it (at most as long as its command's parse took; not past the writer's
    end) and read it (its MAC checked as any entry's). None: parse."""
    name = _entry_name(key)
    lock = cache_lock.lock_name(name)
    held = cache_lock.read(cache.dir_fd, lock)
    if held is None:
        return None
    wait = cache_lock.expected_wait(held, time.time())
    if wait is None:
        return None
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
        with contextlib.suppress(OSError):
            os.stat(name, dir_fd=cache.dir_fd, follow_symlinks=False)
            return _read(cache, key, reparse)  # there: whatever it holds, read as any entry (a bad one: parse)
        now_held = cache_lock.read(cache.dir_fd, lock)
        if now_held is None or now_held.pid != held.pid or not cache_lock.alive(held.pid):
            # the writer is done (the entry may have landed just now) or gone
            return _read(cache, key, reparse)
    return None


def _yield_to_commands() -> None:
    """The background writer gives way to commands: the lowest CPU priority (nice 19) and, on
    Linux, the idle I/O class, so that a command started while an entry is being written (which
    parses the files itself) runs as fast as with no writer beside it."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(19 - os.nice(0))
    ioprio_set = 251 if sys.platform == "linux" and os.uname().machine in ("x86_64", "amd64") else None
    if ioprio_set is not None:
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall(ioprio_set, 1, 0, 3 << 13)  # IOPRIO_WHO_PROCESS, this process, IOPRIO_CLASS_IDLE


def _write_in_background(
    cache: _Cache, key: bytes, obj: Any, prepare: Callable[[Any], Any] | None, limit: int, parse_seconds: float = 0.0
) -> None:
    """prepare(obj) (what the entry holds besides the parsed object) and the entry written in a
    forked grandchild (the parent waits only for the child, which forks and exits at once: no
    zombie is left behind). Without fork, written here."""
    if not hasattr(os, "fork"):
        _prepare_and_write(cache, key, obj, prepare, limit, parse_seconds)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError:
        _prepare_and_write(cache, key, obj, prepare, limit, parse_seconds)
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
            _yield_to_commands()
            try:
                _prepare_and_write(cache, key, obj, prepare, limit, parse_seconds)
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
    use: bool = True,
) -> tuple[Any, bool]:
    """(load(paths), from the cache?): the entry for `paths` when there is a good one, else
    load(paths), stored for the next time. `prepare(obj)`, run by the writer (in the background
    process) before pickling, may add to the object what the next reader would otherwise work out.
    A cache directory or key file not to be trusted: one warning line, and load(paths).
    use=False: load(paths), the cache neither read nor written."""
    if not use or not enabled():
        return load(paths), False
    key = entry_key(paths)
    if key is None:
        return load(paths), False
    limit = max_bytes()  # warned of here: the background writer's stderr goes nowhere
    cache = _Cache.open(create=True)
    if cache is None:
        return load(paths), False

    def reparse() -> Any:
        """A part of the entry read failed its MAC late: the files read again, as stored."""
        fresh = load(paths)
        if entry_key(paths) != key:
            raise DamagedEntry(_CHANGED)
        again = _Cache.open(create=True)  # the damaged entry (removed) written again
        if again is not None:
            try:
                _write_in_background(again, key, fresh, prepare, limit)
            finally:
                again.close()
        return prepare(fresh) if prepare is not None else fresh

    try:
        hit = None if _READS_OFF else _read(cache, key, reparse)
        if hit is None and not _READS_OFF:
            hit = _await_writer(cache, key, reparse)
        if hit is not None:
            return hit, True
        t0 = time.monotonic()
        obj = load(paths)
        parse_seconds = time.monotonic() - t0
        if background:
            _write_in_background(cache, key, obj, prepare, limit, parse_seconds)
        else:
            _prepare_and_write(cache, key, obj, prepare, limit, parse_seconds)
        return obj, False
    finally:
        cache.close()
