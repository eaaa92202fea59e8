"""The snapshot cache (kschedcli/inputs/cache.py) against hostile bytes and places (issue 29): an
entry planted in the cache directory (a shared or restored cache, a folder others can write) must
never run code nor stand for another snapshot; a directory or key file not to be trusted is not
used (one warning line, the files parsed as without a cache); FIFOs and symbolic links are not
followed; KSCHED_CACHE_MAX_MB of any text never fails a command. Each case runs the real `ksched`
in a subprocess on a real snapshot file (its timeout is only a guard against a hang)."""

from __future__ import annotations

import json
import os
import pickle
import stat
import struct
import subprocess
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

import pytest

from kschedcli.inputs import cache as snapshot_cache
from kschedcli.inputs.cache_pickle import dumps
from kschedcli.inputs.cluster import _with_prebuilt_snapshot, load_cluster

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "small-cluster.yaml"
PROD = ROOT / "fixtures" / "prod-cluster.yaml"
POD = str(ROOT / "fixtures" / "pods" / "web.yaml")
GUARD = 120  # seconds: only so that a hang fails the test instead of stalling the run


@pytest.fixture
def env(tmp_path, monkeypatch):
    """The environment of a `ksched` subprocess (and of this process) with a fresh cache directory
    (not created yet) and key file."""
    values = {
        "KSCHED_CACHE_DIR": str(tmp_path / "cache"),
        "KSCHED_CACHE_KEY_FILE": str(tmp_path / "state" / "cache-key"),
    }
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    for k in ("KSCHED_NO_CACHE", "KSCHED_CACHE_MAX_MB"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(snapshot_cache, "_WARNED", set(), raising=False)
    return {**os.environ, **values, "COLUMNS": "100", "KSCHED_NO_PROGRESS": "1"}


def ksched(env, *args, umask=None):
    return subprocess.run(
        [sys.executable, "-m", "kschedcli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )


def explain(env, snapshot, *extra, umask=None):
    return ksched(env, *extra, "explain", POD, "-c", snapshot, "-o", "json", umask=umask)


def parsed(env, snapshot):
    """What explain answers with the files parsed (no cache)."""
    r = explain({**env, "KSCHED_NO_CACHE": "1"}, snapshot)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return r.stdout


def entry_path(env, snapshot) -> Path:
    key = snapshot_cache.entry_key([snapshot])
    assert key is not None
    return Path(env["KSCHED_CACHE_DIR"]) / (key.hex()[:40] + ".cluster")


def wait_for(path: Path) -> None:
    # the command that parsed writes its entry in a forked process: wait for it to land
    deadline = time.monotonic() + GUARD
    while not path.is_file():
        assert time.monotonic() < deadline, f"no entry {path}"
        time.sleep(0.05)


def writer_done(env, snapshot) -> None:
    """After a command that parsed: its background writer's entry landed and its lock is gone, so
    that an entry planted next is not replaced under the next command (nor waited past: a command
    that finds a live writer's lock waits for its entry)."""
    from kschedcli.inputs import cache_lock

    key = snapshot_cache.entry_key([snapshot])
    assert key is not None
    lock = Path(env["KSCHED_CACHE_DIR"]) / cache_lock.lock_name(entry_path(env, snapshot).name)
    deadline = time.monotonic() + GUARD
    while snapshot_cache.read_entry(key) is None or lock.exists():
        assert time.monotonic() < deadline, "the background writer did not finish"
        time.sleep(0.05)


def forgeries(key: bytes, payload: bytes) -> dict[str, bytes]:
    """An entry of `payload` under `key` as one who cannot read the user's key file can make it:
    in the layout ksched used before (magic, key, length, CRC-32 of the payload), and in today's
    layout with a MAC made with a secret of their own."""
    old = struct.pack("<8s32sQI", b"KSCHEDC2", key, len(payload), zlib.crc32(payload)) + payload
    other = os.urandom(32)
    mac = snapshot_cache._mac(other, key, payload) if hasattr(snapshot_cache, "_mac") else bytes(32)
    new = struct.pack("<8s32sQ32s", b"KSCHEDC3", key, len(payload), mac) + payload
    return {"checksummed": old, "mac-of-another-secret": new}


class _Open:
    """Unpickled: builtins.open(path, "w") - creates the file."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return open, (self.path, "w")


class _System:
    """Unpickled: os.system("touch path")."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return os.system, (f"touch {self.path}",)


@pytest.mark.parametrize("gadget", [_Open, _System])
def test_a_planted_pickle_runs_nothing_and_the_files_are_parsed(env, snapshot, tmp_path, gadget):
    expected = parsed(env, snapshot)
    entry = entry_path(env, snapshot)
    key = snapshot_cache.entry_key([snapshot])
    for layout, data in forgeries(key, pickle.dumps(gadget(str(tmp_path / "pwned")), protocol=5)).items():
        entry.parent.mkdir(mode=0o700, exist_ok=True)
        entry.write_bytes(data)
        entry.chmod(0o600)
        r = explain(env, snapshot, "-v")
        assert not (tmp_path / "pwned").exists(), f"the {layout} entry ran its code"
        assert r.returncode == 0 and r.stdout == expected, (layout, r.stderr)
        assert "from the cache" not in r.stderr
        writer_done(env, snapshot)
    # the forged entry was replaced by a good one: the next command reads it
    deadline = time.monotonic() + GUARD
    while True:
        r = explain(env, snapshot, "-v")
        if "from the cache" in r.stderr or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert "from the cache" in r.stderr and r.stdout == expected
    assert not (tmp_path / "pwned").exists()


def test_another_snapshots_entry_under_this_key_is_not_taken_for_it(env, snapshot):
    expected = parsed(env, snapshot)
    other = _with_prebuilt_snapshot(load_cluster([str(PROD)]))
    payload = dumps(other)  # a whole, valid entry of another snapshot
    entry = entry_path(env, snapshot)
    key = snapshot_cache.entry_key([snapshot])
    for layout, data in forgeries(key, payload).items():
        entry.parent.mkdir(mode=0o700, exist_ok=True)
        entry.write_bytes(data)
        entry.chmod(0o600)
        r = explain(env, snapshot, "-v")
        assert r.returncode == 0 and r.stdout == expected, (layout, r.stderr)
        assert "from the cache" not in r.stderr, layout
        writer_done(env, snapshot)


def test_an_entry_made_with_another_secret_is_a_miss(env, snapshot):
    key = snapshot_cache.entry_key([snapshot])
    assert snapshot_cache.write_entry(key, {"x": 1}) is not None
    assert snapshot_cache.read_entry(key) == {"x": 1}
    keyfile = Path(env["KSCHED_CACHE_KEY_FILE"])
    keyfile.write_bytes(os.urandom(32))  # another user's, another machine's secret
    assert snapshot_cache.read_entry(key) is None


def test_the_mac_covers_the_key_and_every_byte(env, snapshot):
    key = snapshot_cache.entry_key([snapshot])
    path = snapshot_cache.write_entry(key, list(range(1000)))
    good = path.read_bytes()
    for i in (8, 40, 48, len(good) // 2, len(good) - 1):  # the key, the length, the MAC, the payload
        path.write_bytes(good[:i] + bytes([good[i] ^ 1]) + good[i + 1 :])
        assert snapshot_cache.read_entry(key) is None, i
    path.write_bytes(good)
    assert snapshot_cache.read_entry(key) == list(range(1000))


def test_directory_key_file_and_entries_are_made_private(env, snapshot):
    # with a umask that takes nothing away: the modes are ksched's own
    r = explain(env, snapshot, umask=0)
    assert r.returncode == 0, r.stderr
    entry = entry_path(env, snapshot)
    wait_for(entry)
    folder = Path(env["KSCHED_CACHE_DIR"])
    keyfile = Path(env["KSCHED_CACHE_KEY_FILE"])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(keyfile.stat().st_mode) == 0o600 and keyfile.stat().st_size == 32
    assert not keyfile.is_relative_to(folder)  # who can plant an entry does not get the secret with it


def _one_warning(r, *words):
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ksched: warning: "), r.stderr
    assert all(w in lines[0] for w in words), lines[0]


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770, 0o722])
def test_a_directory_others_can_write_is_not_used(env, snapshot, mode):
    expected = parsed(env, snapshot)
    folder = Path(env["KSCHED_CACHE_DIR"])
    folder.mkdir()
    folder.chmod(mode)
    entry = entry_path(env, snapshot)
    # even a good entry there is not read: anyone could have swapped it
    assert snapshot_cache.write_entry(snapshot_cache.entry_key([snapshot]), {"x": 1}) is None
    r = explain(env, snapshot)
    assert r.returncode == 0 and r.stdout == expected
    _one_warning(r, "snapshot cache not used", str(folder), "writable by group or others", f"mode {mode:04o}")
    time.sleep(0.5)
    assert not entry.exists() and list(folder.iterdir()) == []  # nothing written there either


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_a_directory_of_another_user_is_not_used(env, snapshot):
    expected = parsed(env, snapshot)
    folder = Path(env["KSCHED_CACHE_DIR"])
    folder.mkdir(mode=0o755)
    os.chown(folder, 65534, -1)
    r = explain(env, snapshot)
    assert r.returncode == 0 and r.stdout == expected
    _one_warning(r, "snapshot cache not used", "owned by uid 65534")
    time.sleep(0.5)
    assert list(folder.iterdir()) == []


def _bad_key_file(path: Path, kind: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if kind == "mode-0644":
        path.write_bytes(os.urandom(32))
        path.chmod(0o644)
    elif kind == "symlink":
        target = path.parent / "elsewhere"
        target.write_bytes(os.urandom(32))
        target.chmod(0o600)
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "directory":
        path.mkdir(mode=0o700)
    elif kind == "short":
        path.write_bytes(b"x")
        path.chmod(0o600)
    else:  # another user's (root only)
        path.write_bytes(os.urandom(32))
        path.chmod(0o600)
        os.chown(path, 65534, -1)


KEY_KINDS = ["mode-0644", "symlink", "fifo", "directory", "short"]
if hasattr(os, "geteuid") and os.geteuid() == 0:
    KEY_KINDS.append("other-owner")


@pytest.mark.parametrize("kind", KEY_KINDS)
def test_a_key_file_not_to_be_trusted_turns_the_cache_off(env, snapshot, kind):
    expected = parsed(env, snapshot)
    keyfile = Path(env["KSCHED_CACHE_KEY_FILE"])
    _bad_key_file(keyfile, kind)
    r = explain(env, snapshot)  # a FIFO: no wait for a writer
    assert r.returncode == 0 and r.stdout == expected
    _one_warning(r, "snapshot cache not used", f"key file {keyfile}")
    time.sleep(0.5)
    folder = Path(env["KSCHED_CACHE_DIR"])
    assert not folder.exists() or list(folder.iterdir()) == []


def test_an_entry_that_is_a_fifo_does_not_hang(env, snapshot):
    expected = parsed(env, snapshot)
    entry = entry_path(env, snapshot)
    entry.parent.mkdir(mode=0o700)
    os.mkfifo(entry, 0o600)
    r = explain(env, snapshot)  # opening the FIFO for reading would wait for a writer forever
    assert r.returncode == 0 and r.stdout == expected and r.stderr == ""


def test_an_entry_that_is_a_symbolic_link_is_not_followed(env, snapshot, tmp_path):
    key = snapshot_cache.entry_key([snapshot])
    written = snapshot_cache.write_entry(key, {"x": 1})
    assert written is not None and snapshot_cache.read_entry(key) == {"x": 1}
    elsewhere = tmp_path / "elsewhere.cluster"
    written.rename(elsewhere)
    written.symlink_to(elsewhere)  # a good entry, reached through a link
    assert snapshot_cache.read_entry(key) is None
    # the writer replaces the link itself, never what it points to
    assert snapshot_cache.write_entry(key, {"x": 2}) is not None
    assert not written.is_symlink() and snapshot_cache.read_entry(key) == {"x": 2}
    assert elsewhere.exists()
    # eviction and `cache clear` remove links, never their targets
    os.symlink(elsewhere, written.parent / ("0" * 40 + ".cluster"))
    assert snapshot_cache.clear()[0] == 2 and elsewhere.exists()


def test_a_directory_where_an_entry_should_be_is_a_miss(env, snapshot):
    expected = parsed(env, snapshot)
    entry = entry_path(env, snapshot)
    entry.mkdir(parents=True)
    r = explain(env, snapshot)
    assert r.returncode == 0 and r.stdout == expected


def test_an_entry_others_could_write_is_a_miss(env, snapshot):
    key = snapshot_cache.entry_key([snapshot])
    path = snapshot_cache.write_entry(key, {"x": 1})
    path.chmod(0o666)  # changeable between its MAC checked and its payload unpickled
    assert snapshot_cache.read_entry(key) is None
    path.chmod(0o600)
    assert snapshot_cache.read_entry(key) == {"x": 1}


@pytest.mark.parametrize("value", ["inf", "1e400", "-inf", "nan", "-5", "garbage", "0x10", "1e30"])
def test_cache_max_mb_of_any_text_never_fails_a_command(env, snapshot, value):
    env = {**env, "KSCHED_CACHE_MAX_MB": value}
    info = ksched(env, "cache", "info")
    assert info.returncode == 0, info.stderr
    assert "of at most 2048.0 MB" in info.stdout
    _one_warning(info, f"KSCHED_CACHE_MAX_MB={value!r}", "the default (2048)")
    expected = parsed(env, snapshot)
    r = explain(env, snapshot)
    assert r.returncode == 0 and r.stdout == expected
    _one_warning(r, f"KSCHED_CACHE_MAX_MB={value!r}")
    wait_for(entry_path(env, snapshot))  # the default bound: the entry is kept
    again = explain(env, snapshot, "-v")
    assert again.stdout == expected and "from the cache" in again.stderr


def test_cache_max_mb_valid_values(env, monkeypatch):
    for value, mb in (("", 2048), ("0", 0), ("1.5", 1.5), (" 100 ", 100)):
        monkeypatch.setenv("KSCHED_CACHE_MAX_MB", value)
        assert snapshot_cache.max_bytes() == int(mb * 2**20)
    assert not snapshot_cache._WARNED


def test_entries_of_a_real_run_are_read_back_and_answer_the_same(env, snapshot):
    expected = parsed(env, snapshot)
    assert explain(env, snapshot).stdout == expected
    wait_for(entry_path(env, snapshot))
    r = explain(env, snapshot, "-v")
    assert r.returncode == 0 and "from the cache" in r.stderr and r.stdout == expected
    assert json.loads(r.stdout)["selectedNode"]


def test_an_entry_is_read_while_a_profiler_holds_the_reading_frames(env, snapshot):
    # dask's worker profiler keeps frames of the running task: the unpickler of a finished read may
    # still hold a slice of the mapped entry when the mapping is closed
    key = snapshot_cache.entry_key([snapshot])
    stored = {"x": list(range(100)), "counts": Counter("abc")}  # a global: find_class is called
    assert snapshot_cache.write_entry(key, stored) is not None
    held = []

    def profile(frame, event, arg):
        if event == "return" and frame.f_code.co_name in ("loads", "find_class"):
            held.append(frame)

    sys.setprofile(profile)
    try:
        got = snapshot_cache.read_entry(key)
    finally:
        sys.setprofile(None)
    assert held, "the profiler saw no read"
    assert got == stored
    held.clear()
    assert snapshot_cache.read_entry(key) == stored


@pytest.mark.parametrize("kind", ["file", "fifo", "loop"])
def test_cache_info_says_when_the_cache_dir_is_no_directory(env, tmp_path, kind):
    where = tmp_path / "cache"  # env's KSCHED_CACHE_DIR
    if kind == "file":
        where.write_bytes(b"\x00garbage")
    elif kind == "fifo":
        os.mkfifo(where)
    else:
        where.symlink_to(tmp_path / "cache2")
        (tmp_path / "cache2").symlink_to(where)
    info = ksched(env, "cache", "info")
    assert info.returncode == 0, info.stderr
    assert info.stdout.startswith(f"{where} (not a directory: nothing is cached there): 0 snapshot(s)")
    cleared = ksched(env, "cache", "clear")
    assert cleared.returncode == 0 and cleared.stdout.startswith("removed 0 snapshot(s)")
    assert os.path.lexists(where)  # left as it was
