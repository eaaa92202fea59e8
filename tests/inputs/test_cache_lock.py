"""The snapshot cache's writer lock (kschedcli/inputs/cache_lock.py), with real processes: a command
that finds no entry waits for a live background writer and reads its entry (MAC-checked); a lock
whose writer is dead (exited, killed, a zombie) never makes it wait; a second writer does not start
while a live one holds the lock; whatever lands under the entry's name is read as any entry."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kschedcli.inputs import cache as snapshot_cache
from kschedcli.inputs import cache_lock
from kschedcli.inputs.cluster import load_cluster

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small-cluster.yaml"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs processes as on Linux")

# a writer in its own process: takes the lock with the figures given, says so, then does `then`
WRITER = textwrap.dedent(
    """
    import os, sys, time
    from kschedcli.inputs import cache as snapshot_cache, cache_lock
    from kschedcli.inputs.cluster import load_cluster
    path, parse_s, per_parse, then = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    cache_lock.WRITE_PER_PARSE = per_parse
    key = snapshot_cache.entry_key([path])
    cache = snapshot_cache._Cache.open()
    name = snapshot_cache._entry_name(key)
    assert cache_lock.take(cache.dir_fd, cache_lock.lock_name(name), parse_s)
    print("locked", flush=True)
    if then == "exit":  # dies holding the lock
        os._exit(0)
    sys.stdin.readline()  # the test says when to go on
    if then == "write":
        snapshot_cache._write(cache, key, load_cluster([path]), 2**30)
    elif then == "forge":
        fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=cache.dir_fd)
        os.write(fd, b"KSCHEDC3" + key + b"\\0" * 8 + b"\\0" * 32 + b"not a pickle")
        os.close(fd)
    cache_lock.release(cache.dir_fd, cache_lock.lock_name(name), wrote=then == "write")
    """
)


def _writer(snapshot: str, parse_s: float, per_parse: float, then: str) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-c", WRITER, snapshot, str(parse_s), str(per_parse), then],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "locked"
    return p


def _lock_path(folder: Path, snapshot: str) -> Path:
    key = snapshot_cache.entry_key([snapshot])
    assert key is not None
    return folder / cache_lock.lock_name(snapshot_cache._entry_name(key))


class Loads:
    """load_cluster, counting its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, paths):
        self.calls += 1
        return load_cluster(paths)


def _reader_in_process(snapshot: str, writer: subprocess.Popen, go_after_s: float = 0.3):
    """cached() in this process while `writer` is told to go on after `go_after_s` seconds (from a
    thread, so the reader is already waiting)."""
    import threading

    def go():
        import time

        time.sleep(go_after_s)
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()

    t = threading.Thread(target=go)
    t.start()
    loads = Loads()
    try:
        obj, hit = snapshot_cache.cached([snapshot], loads, background=False)
    finally:
        t.join()
        writer.wait(timeout=60)
    return obj, hit, loads.calls


def test_a_command_waits_for_a_live_writer_and_reads_its_entry(cache, snapshot):
    # the writer should be done (10 s) well before a parse would (20 s): wait, then read its entry
    writer = _writer(snapshot, 20.0, 0.5, "write")
    obj, hit, calls = _reader_in_process(snapshot, writer)
    assert (hit, calls) == (True, 0)
    assert [n.name for n in obj.nodes] == [n.name for n in load_cluster([snapshot]).nodes]
    assert not _lock_path(cache, snapshot).exists()
    # the writer kept how long it took per second of its (stated) 20 s parse: the next writer's estimate
    fd = os.open(cache, os.O_RDONLY)
    try:
        rate = cache_lock.read_rate(fd)
        assert rate is not None and 0.01 <= rate < 1
        assert cache_lock.take(fd, ".lock-x", 10.0)
        held = cache_lock.read(fd, ".lock-x")
        assert held is not None and held.expected_seconds == 10.0 * rate
        cache_lock.release(fd, ".lock-x")
    finally:
        os.close(fd)


@pytest.mark.parametrize("content", [b"KSCHEDR1" + struct.pack("<d", 50.0), b"KSCHEDR0" + struct.pack("<d", 0.5), b"x"])
def test_a_rate_file_not_to_be_trusted_is_ignored(tmp_path, content):
    folder = tmp_path / "d"
    folder.mkdir(mode=0o700)
    (folder / cache_lock.RATE_FILE).write_bytes(content)
    fd = os.open(folder, os.O_RDONLY)
    try:
        assert cache_lock.read_rate(fd) is None
        assert cache_lock.take(fd, ".lock-x", 2.0)
        held = cache_lock.read(fd, ".lock-x")
        assert held is not None and held.expected_seconds == 2.0 * cache_lock.WRITE_PER_PARSE
    finally:
        os.close(fd)


def test_no_wait_when_the_writer_is_not_expected_before_a_parse(cache, snapshot):
    # expected to write for 1.3 x its parse: parsing now is sooner; the reader parses, and writes no
    # second entry beside the live writer (it holds the lock)
    writer = _writer(snapshot, 20.0, 1.3, "none")
    try:
        loads = Loads()
        obj, hit = snapshot_cache.cached([snapshot], loads, background=False)
        assert (hit, loads.calls) == (False, 1)
        assert [p.name for p in cache.iterdir() if not p.name.startswith(".")] == []  # no entry written
    finally:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
        writer.wait(timeout=60)


def test_a_writer_that_leaves_without_an_entry_ends_the_wait(cache, snapshot):
    writer = _writer(snapshot, 600.0, 0.5, "none")
    obj, hit, calls = _reader_in_process(snapshot, writer)
    assert (hit, calls) == (False, 1) and obj.nodes


def test_an_entry_the_mac_does_not_vouch_for_is_parsed_again(cache, snapshot):
    # the lock is only a hint: what lands under the entry's name is checked like any entry
    writer = _writer(snapshot, 600.0, 0.5, "forge")
    obj, hit, calls = _reader_in_process(snapshot, writer)
    assert (hit, calls) == (False, 1) and obj.nodes


READER = textwrap.dedent(
    """
    import sys
    from kschedcli.inputs import cache as snapshot_cache
    from kschedcli.inputs.cluster import load_cluster
    obj, hit = snapshot_cache.cached([sys.argv[1]], load_cluster, background=False)
    print("hit" if hit else "parsed", len(obj.nodes))
    """
)


def _read_in_a_process(snapshot: str) -> str:
    # a reader that waited for a dead writer would wait 600 s: the timeout fails the test instead
    p = subprocess.run(
        [sys.executable, "-c", READER, snapshot],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_a_stale_lock_of_a_dead_writer_does_not_block(cache, snapshot):
    writer = _writer(snapshot, 600.0, 0.5, "exit")  # expected in 300 s, sooner than a 600 s parse
    writer.wait(timeout=60)
    lock = _lock_path(cache, snapshot)
    assert lock.exists()  # left behind
    assert _read_in_a_process(snapshot) == "parsed 3"
    # that reader's write replaced the stale lock and let it go; the entry is there
    assert not lock.exists()
    assert _read_in_a_process(snapshot) == "hit 3"


def test_a_killed_writer_does_not_block(cache, snapshot):
    writer = _writer(snapshot, 600.0, 0.5, "write")  # waits for a line it never gets
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=60)
    assert _lock_path(cache, snapshot).exists()
    assert _read_in_a_process(snapshot) == "parsed 3"


def test_a_zombie_writer_is_dead(cache, snapshot):
    # a killed writer nobody reaps (a container without an init) still has a pid: not alive
    writer = _writer(snapshot, 600.0, 0.5, "exit")
    import time

    for _ in range(600):
        try:
            state = Path(f"/proc/{writer.pid}/stat").read_bytes().rpartition(b")")[2].split()[0]
        except OSError:
            pytest.skip("no /proc")
        if state == b"Z":
            break
        time.sleep(0.05)
    try:
        assert state == b"Z"
        os.kill(writer.pid, 0)  # the pid exists
        assert not cache_lock.alive(writer.pid)
        held = cache_lock.read(os.open(cache, os.O_RDONLY), _lock_path(cache, snapshot).name)
        assert held is not None and held.pid == writer.pid
        assert cache_lock.expected_wait(held, held.started) is None
    finally:
        writer.wait(timeout=60)


def test_a_second_writer_does_not_start_beside_a_live_one(cache, snapshot):
    writer = _writer(snapshot, 1.0, 1.0, "none")
    prepared = []
    try:
        opened = snapshot_cache._Cache.open()
        assert opened is not None
        key = snapshot_cache.entry_key([snapshot])
        assert key is not None
        snapshot_cache._prepare_and_write(opened, key, load_cluster([snapshot]), prepared.append, 2**30, 1.0)
        opened.close()
        assert prepared == []  # not even prepared
        assert [p.name for p in cache.iterdir() if not p.name.startswith(".")] == []
        # the live writer's lock is untouched
        held = cache_lock.read(os.open(cache, os.O_RDONLY), _lock_path(cache, snapshot).name)
        assert held is not None and held.pid == writer.pid
    finally:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
        writer.wait(timeout=60)
    assert not _lock_path(cache, snapshot).exists()


def test_the_lock_is_written_whole_and_released(cache, snapshot, tmp_path):
    folder = tmp_path / "d"
    folder.mkdir(mode=0o700)
    fd = os.open(folder, os.O_RDONLY)
    try:
        assert cache_lock.take(fd, ".lock-x", 2.0)
        held = cache_lock.read(fd, ".lock-x")
        assert held is not None and held.pid == os.getpid()
        assert (held.parse_seconds, held.expected_seconds) == (2.0, 2.0 * cache_lock.WRITE_PER_PARSE)
        assert (folder / ".lock-x").stat().st_mode & 0o777 == 0o600
        assert os.listdir(folder) == [".lock-x"]  # no temporary file left
        # its own lock never makes this process wait
        assert cache_lock.expected_wait(held, held.started) is None
        cache_lock.release(fd, ".lock-x")
        assert os.listdir(folder) == []
    finally:
        os.close(fd)


@pytest.mark.parametrize("damage", ["short", "magic", "nan", "huge", "group-writable", "symlink", "fifo"])
def test_a_lock_not_to_be_trusted_is_ignored(tmp_path, damage):
    folder = tmp_path / "d"
    folder.mkdir(mode=0o700)
    good = struct.pack("<8sQddd", b"KSCHEDL1", os.getpid() + 0, 1.0, 10.0, 5.0)
    path = folder / ".lock-x"
    if damage == "short":
        path.write_bytes(good[:-1])
    elif damage == "magic":
        path.write_bytes(b"KSCHEDL0" + good[8:])
    elif damage == "nan":
        path.write_bytes(struct.pack("<8sQddd", b"KSCHEDL1", 1, 1.0, float("nan"), 5.0))
    elif damage == "huge":
        path.write_bytes(struct.pack("<8sQddd", b"KSCHEDL1", 1, 1.0, 1e9, 5.0))
    elif damage == "group-writable":
        path.write_bytes(good)
        path.chmod(0o620)
    elif damage == "symlink":
        (folder / "real").write_bytes(good)
        path.symlink_to(folder / "real")
    elif damage == "fifo":
        os.mkfifo(path, 0o600)
    fd = os.open(folder, os.O_RDONLY)
    try:
        assert cache_lock.read(fd, ".lock-x") is None
    finally:
        os.close(fd)
    if damage != "fifo":  # and a well-formed one is read
        other = folder / ".lock-y"
        other.write_bytes(good)
        other.chmod(0o600)
        fd = os.open(folder, os.O_RDONLY)
        try:
            assert cache_lock.read(fd, ".lock-y") is not None
        finally:
            os.close(fd)


def test_cache_clear_removes_locks(cache, snapshot):
    writer = _writer(snapshot, 1.0, 1.0, "exit")
    writer.wait(timeout=60)
    assert _lock_path(cache, snapshot).exists()
    snapshot_cache.clear()
    assert list(cache.iterdir()) == []
