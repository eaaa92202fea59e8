"""The cache of parsed snapshots (kschedcli/inputs/cache.py): a second command on the same files
reads the entry instead of parsing them and answers the same; a changed file, a stale, truncated or
damaged entry is a miss (parsed again); concurrent writers and readers never see half an entry; the
directory stays under its bound; --no-cache, KSCHED_NO_CACHE and `ksched cache clear`. conftest.py
points KSCHED_CACHE_DIR at a temporary folder: no test touches the user's cache."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
import test_live
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.inputs import cache as snapshot_cache
from kschedcli.inputs.cluster import load_cluster

ROOT = Path(__file__).resolve().parents[2]
fake = test_live.fake  # the fake kubectl on PATH (tests/inputs/test_live.py)
SMALL = ROOT / "fixtures" / "small-cluster.yaml"
POD = str(ROOT / "fixtures" / "pods" / "web.yaml")


def _load(paths):
    return snapshot_cache.cached(paths, load_cluster, background=False)


def _names(cluster):
    return [n.name for n in cluster.nodes], sorted(p.key for p in cluster.pods)


def _entry(folder: Path) -> Path:
    # the one entry: not a temporary file, a writer's lock or the writers' rate file (`.lock-rate`,
    # written after a parse of over 2 s, as a loaded machine can take over the fixture)
    (entry,) = [p for p in folder.iterdir() if not p.name.startswith(".")]
    return entry


def test_second_read_comes_from_the_cache_and_equals_a_parse(cache, snapshot):
    first, hit1 = _load([snapshot])
    second, hit2 = _load([snapshot])
    assert (hit1, hit2) == (False, True)
    assert _names(first) == _names(second) and first.nodes[0].name
    assert second.nodes[0].allocatable.milli_cpu == first.nodes[0].allocatable.milli_cpu
    assert len(list(cache.iterdir())) == 1


def test_a_changed_file_is_a_miss(cache, snapshot):
    _load([snapshot])
    text = Path(snapshot).read_text()
    Path(snapshot).write_text(text.replace("node-a", "node-z"))
    changed, hit = _load([snapshot])
    assert not hit and "node-z" in [n.name for n in changed.nodes]
    # each version of the file has its entry; the second read of the changed one hits
    assert _load([snapshot])[1]


def test_the_files_and_their_order_make_the_key(cache, snapshot, tmp_path):
    other = tmp_path / "empty.yaml"
    other.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    _load([snapshot, str(other)])
    assert not _load([str(other), snapshot])[1]
    assert not _load([snapshot])[1]
    assert _load([snapshot, str(other)])[1]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "other-key"])
def test_a_truncated_damaged_or_stale_entry_is_a_miss_and_is_rewritten(cache, snapshot, damage):
    parsed, _ = _load([snapshot])
    entry = _entry(cache)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        i = len(data) - 100
        entry.write_bytes(data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1 :])
    elif damage == "garbage":
        entry.write_bytes(b"not a cache entry at all" * 10)
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # a whole, valid entry of another key under this name
        key = snapshot_cache.entry_key([snapshot])
        entry.write_bytes(data.replace(key, bytes(32), 1))
    again, hit = _load([snapshot])
    assert not hit and _names(again) == _names(parsed)
    assert _load([snapshot])[1]  # rewritten whole


def test_an_unpicklable_payload_with_a_good_checksum_is_a_miss(cache, snapshot):
    key = snapshot_cache.entry_key([snapshot])
    assert snapshot_cache.write_entry(key, {"x": 1}) is not None
    entry = _entry(cache)
    payload = b"\x80\x05not a pickle."
    header = struct.pack("<8s32sQI", b"KSCHEDC1", key, len(payload), zlib.crc32(payload))
    entry.write_bytes(header + payload)
    assert snapshot_cache.read_entry(key) is None


_WRITER = """
import sys
from kschedcli.inputs import cache as snapshot_cache
key = bytes.fromhex(sys.argv[1])
big = {"nodes": list(range(200000)), "writer": int(sys.argv[2])}
for _ in range(10):
    assert snapshot_cache.write_entry(key, big) is not None
"""

_READER = """
import sys
from kschedcli.inputs import cache as snapshot_cache
key = bytes.fromhex(sys.argv[1])
seen = 0
for _ in range(400):
    got = snapshot_cache.read_entry(key)
    if got is not None:
        assert got["nodes"] == list(range(200000)), "half an entry"
        seen += 1
print(seen)
"""


def test_concurrent_writers_and_readers_see_whole_entries_only(cache):
    key = bytes(range(32))
    env = {**os.environ, "KSCHED_CACHE_DIR": str(cache)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, key.hex(), str(i)], env=env, stderr=subprocess.PIPE)
        for i in range(3)
    ]
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", _READER, key.hex()], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    for p in procs + readers:
        p.wait(timeout=300)
    assert all(p.returncode == 0 for p in procs), [p.stderr.read() for p in procs]
    assert all(p.returncode == 0 for p in readers), [p.stderr.read() for p in readers]
    final = snapshot_cache.read_entry(key)
    assert final is not None and final["writer"] in (0, 1, 2)
    assert [p.name for p in cache.iterdir()] == [_entry(cache).name]  # no temporary file left behind


def test_the_directory_stays_under_its_bound_least_recently_used_first(cache, monkeypatch):
    blob = list(range(100000))  # about 0.5 MB pickled
    keys = [bytes([i]) * 32 for i in range(4)]
    monkeypatch.setenv("KSCHED_CACHE_MAX_MB", "100")
    for k in keys:
        snapshot_cache.write_entry(k, blob)
    assert len(snapshot_cache.entries()) == 4
    old = time.time() - 1000
    for i, (path, _) in enumerate(sorted(snapshot_cache.entries(), key=lambda e: e[0].name)):
        os.utime(path, (old + i, old + i))
    snapshot_cache.read_entry(keys[0])  # used now: the most recent
    size = snapshot_cache.entries()[0][1].st_size
    monkeypatch.setenv("KSCHED_CACHE_MAX_MB", str(2.5 * size / 2**20))
    snapshot_cache.write_entry(bytes([9]) * 32, blob)
    left = {p.name[:2] for p, _ in snapshot_cache.entries()}
    assert left == {"00", "09"}


def run(*args, env=None):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100", **(env or {})})


def _wait_for_entry(folder: Path) -> Path:
    # the command that parsed writes the entry in a forked process: wait for it to land
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if folder.is_dir() and [p for p in folder.iterdir() if not p.name.startswith(".")]:  # as _entry
            return _entry(folder)
        time.sleep(0.05)
    raise AssertionError("no cache entry written")


def test_cli_explain_twice_reads_the_cache_the_second_time_and_answers_the_same(cache, snapshot):
    first = run("-v", "explain", POD, "-c", snapshot, "-o", "json")
    assert first.exit_code == 0, first.output
    assert "from the cache" not in first.stderr
    _wait_for_entry(cache)
    second = run("-v", "explain", POD, "-c", snapshot, "-o", "json")
    assert "from the cache" in second.stderr
    assert second.stdout == first.stdout and json.loads(second.stdout)["selectedNode"]
    table = [run("explain", POD, "-c", snapshot, "--no-color").stdout for _ in range(2)]
    assert table[0] == table[1]
    assert "from the cache" not in run("--no-cache", "-v", "explain", POD, "-c", snapshot).stderr
    assert "from the cache" not in run("-v", "explain", POD, "-c", snapshot, env={"KSCHED_NO_CACHE": "1"}).stderr


def test_cli_no_cache_writes_nothing(cache, snapshot):
    assert run("--no-cache", "explain", POD, "-c", snapshot).exit_code == 0
    assert run("explain", POD, "-c", snapshot, env={"KSCHED_NO_CACHE": "1"}).exit_code == 0
    time.sleep(0.5)
    assert not cache.exists() or not list(cache.iterdir())


def test_stdin_is_never_cached(cache):
    r = CliRunner().invoke(app, ["explain", POD, "-c", "-"], input=SMALL.read_text())
    assert r.exit_code == 0, r.output
    assert snapshot_cache.entry_key(["-"]) is None
    time.sleep(0.5)
    assert not cache.exists() or not list(cache.iterdir())


def test_cli_cache_info_and_clear(cache, snapshot):
    _load([snapshot])
    info = run("cache", "info")
    assert info.exit_code == 0 and str(cache) in info.stdout and "1 snapshot(s)" in info.stdout
    cleared = run("cache", "clear")
    assert cleared.exit_code == 0 and "removed 1 snapshot(s)" in cleared.stdout
    assert not list(cache.iterdir())
    assert "0 snapshot(s)" in run("cache", "info").stdout


def test_the_default_folder_is_under_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("KSCHED_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert snapshot_cache.cache_dir() == tmp_path / "ksched"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert snapshot_cache.cache_dir() == tmp_path / "home" / ".cache" / "ksched"


def _in_the_background_writer(record, seen: Path, monkeypatch):
    """What `record` (run as the background writer's _write) wrote to `seen`, as JSON."""
    monkeypatch.setattr(snapshot_cache, "_write", record)
    opened = snapshot_cache._Cache.open()
    assert opened is not None
    snapshot_cache._write_in_background(opened, b"key", object(), None, 2**20)
    opened.close()
    for _ in range(200):  # the grandchild writes on its own; wait for it, at most 10 s
        if seen.exists() and seen.read_text():
            break
        time.sleep(0.05)
    return json.loads(seen.read_text())


@pytest.mark.skipif(not (hasattr(os, "fork") and os.path.isdir("/proc/self/fd")), reason="needs fork and /proc")
def test_the_background_writer_lets_go_of_the_commands_output(cache, tmp_path, monkeypatch):
    # a reader of the command's output (`$(ksched ...)`, a pipe) waits until every process holding
    # it closes it: the process writing the entry must not hold stdin, stdout or stderr
    seen = tmp_path / "fds.json"

    def record(cache, key, obj, limit):
        targets = [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
        seen.write_text(json.dumps(targets))

    assert _in_the_background_writer(record, seen, monkeypatch) == [os.devnull] * 3


@pytest.mark.skipif(not (hasattr(os, "fork") and hasattr(os, "nice")), reason="needs fork and nice")
def test_the_background_writer_gives_way_to_commands(cache, tmp_path, monkeypatch):
    # a command started while an entry is written parses the files itself: the writer must not
    # compete with it for the CPU (issue 35), so it writes at the lowest priority
    seen = tmp_path / "nice.json"

    def record(cache, key, obj, limit):
        seen.write_text(json.dumps(os.nice(0)))

    before = os.nice(0)
    assert _in_the_background_writer(record, seen, monkeypatch) == 19
    assert os.nice(0) == before  # the command itself keeps its priority


def test_a_live_read_is_keyed_by_the_bytes_kubectl_printed(cache, fake):
    # each live read writes a new temporary file: the same bytes are the same snapshot, parsed once
    first = run("-v", "explain", POD, "-o", "json")
    assert first.exit_code == 0, first.output
    assert "from the cache" not in first.stderr
    _wait_for_entry(cache)
    second = run("-v", "explain", POD, "-o", "json")
    assert "from the cache" in second.stderr and second.stdout == first.stdout
    # the cluster changed: kubectl prints other bytes, which are parsed
    fake.served.write_bytes(fake.served.read_bytes().replace(b'"node-b"', b'"node-z"'))
    third = run("-v", "explain", POD, "-o", "json")
    assert third.exit_code == 0, third.output
    assert "from the cache" not in third.stderr and "node-z" in third.stdout


def test_the_live_key_is_the_content_and_the_context(cache, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("{}")
    b.write_text("{}")
    h = snapshot_cache.content_hasher()
    h.update(b"{}")
    snapshot_cache.know_content(str(a), "ctx|https://x", h.digest())
    snapshot_cache.know_content(str(b), "ctx|https://x", h.digest())
    assert snapshot_cache.entry_key([str(a)]) == snapshot_cache.entry_key([str(b)])
    snapshot_cache.know_content(str(b), "other|https://y", h.digest())
    assert snapshot_cache.entry_key([str(a)]) != snapshot_cache.entry_key([str(b)])


PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")


def test_the_cluster_holds_the_files_pending_pods_as_the_lookup_reads_them(tmp_path):
    from kschedcli.inputs.lookup import pending_pods

    two = tmp_path / "more.yaml"
    two.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: late, namespace: shop}\n"
        "spec: {containers: [{name: c, image: x}]}\n"
    )
    files = [PROD, str(two)]
    cluster = load_cluster(files)
    assert cluster.pending_pods() == pending_pods(files)
    assert [w for _, _, w in cluster.pending_pods()][-1] == "Pod shop/late"


def test_explain_namespace_name_from_the_cache_reads_no_file_again(cache, monkeypatch, tmp_path):
    snap = tmp_path / "prod.yaml"
    shutil.copy(PROD, snap)
    first = run("explain", "shop/checkout-6b8c9d7f5-h2j4k", "-c", str(snap), "-o", "json")
    assert first.exit_code in (0, 1), first.output
    _wait_for_entry(cache)

    def no_reading(*args, **kwargs):
        raise AssertionError("a snapshot file read again")

    from kschedcli.inputs import lookup

    monkeypatch.setattr(lookup, "snapshot_objects", no_reading)
    second = run("-v", "explain", "shop/checkout-6b8c9d7f5-h2j4k", "-c", str(snap), "-o", "json")
    assert "from the cache" in second.stderr and second.stdout == first.stdout
    by_name = run("explain", "reporting-28391745-x7k2q", "-c", str(snap), "-o", "json")
    assert json.loads(by_name.stdout)["pod"].endswith("reporting-28391745-x7k2q")
    missing = run("explain", "shop/nope", "-c", str(snap))
    assert missing.exit_code == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "no such file, and no pending pod named 'shop/nope'" in missing.stderr
