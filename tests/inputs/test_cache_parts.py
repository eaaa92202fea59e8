"""An entry of the snapshot cache in parts (kschedcli/inputs/cache.py, format KSCHEDC6): the header's
MAC covers the table of the parts' lengths, flags and MACs; the parts checked up front (the first,
the pods' records, the kinds of objects) are checked before anything is unpickled, the source
objects' parts when first read. A damaged part checked up front is a miss; one checked late is
read from the files again: the answer is the files', and nothing of the damaged part is read."""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path

import pytest

from kschedcli.errors import InputChanged
from kschedcli.inputs import cache as snapshot_cache
from kschedcli.inputs import cache_pickle, lazy_pods
from kschedcli.inputs.cache_pickle import KindParts, LazyKinds
from kschedcli.inputs.cluster import _with_prebuilt_snapshot, load_cluster

ROOT = Path(__file__).resolve().parents[2]
PROD = ROOT / "fixtures" / "prod-cluster.yaml"


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("KSCHED_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KSCHED_CACHE_KEY_FILE", str(tmp_path / "state" / "cache-key"))
    monkeypatch.delenv("KSCHED_NO_CACHE", raising=False)
    monkeypatch.setattr(snapshot_cache, "_WARNED", set(), raising=False)
    return tmp_path


def _snapshot(tmp_path: Path, name: str = "cluster.yaml", edit: tuple[str, str] | None = None) -> str:
    path = tmp_path / name
    shutil.copy(PROD, path)
    if edit is not None:
        text = path.read_text()
        assert edit[0] in text and len(edit[0]) == len(edit[1])
        path.write_text(text.replace(edit[0], edit[1], 1))
    return str(path)


def _write(path: str) -> tuple[bytes, Path]:
    key = snapshot_cache.entry_key([path])
    assert key is not None
    entry = snapshot_cache.write_entry(key, _with_prebuilt_snapshot(load_cluster([path])))
    assert entry is not None
    return key, entry


def _table(data: bytes) -> list[tuple[int, int, bool]]:
    """Each part's (offset, length, checked up front)."""
    magic, _, count = snapshot_cache._HEAD.unpack_from(data)
    assert magic == b"KSCHEDC6"
    at = snapshot_cache._HEAD.size + count * snapshot_cache._PART.size + 32
    out = []
    for i in range(count):
        length, eager, _ = snapshot_cache._PART.unpack_from(
            data, snapshot_cache._HEAD.size + i * snapshot_cache._PART.size
        )
        out.append((at, length, eager))
        at += length
    assert at == len(data)
    return out


def _referred(data: bytes, table) -> list[tuple[int, str]]:
    """(position, what it holds) of each part the first part refers to, in the order it does."""
    found = []

    def part(i, what):
        found.append((i, what))
        return None

    at, length, _ = table[0]
    u = cache_pickle.Unpickler(cache_pickle._Reader(memoryview(data)[at : at + length]))  # type: ignore[arg-type]
    u.part = part
    u.load()
    u.load()
    return found


def _part_of(data: bytes, table, kind: str) -> int:
    """The position of the (first) part holding `kind` ('records', 'raws:nodes', 'raws:pods',
    'kind'), as the first part refers to it."""
    return next(
        i
        for i, what in _referred(data, table)
        if (what if what.startswith("raws:") else what.partition(":")[0]) == kind
    )


def _cached(path: str):
    return snapshot_cache.cached([path], load_cluster, background=False, prepare=_with_prebuilt_snapshot)


def _flip(entry: Path, at: int) -> None:
    data = bytearray(entry.read_bytes())
    data[at] ^= 0x40
    entry.write_bytes(bytes(data))


def test_an_entry_is_read_back_in_parts_and_answers_as_the_files(env):
    path = _snapshot(env)
    key, entry = _write(path)
    table = _table(entry.read_bytes())
    assert len(table) > 4 and table[0][2]
    cluster, hit = _cached(path)
    parsed = load_cluster([path])
    assert hit
    assert type(cluster.objects) is LazyKinds
    assert any(type(v) is KindParts for v in dict.values(cluster.objects))  # none made yet
    # one object, its namespace's part only
    kind, objs = next((k, v) for k, v in parsed.objects.items() if any(ns for ns, _ in v))
    (ns, name), obj = next(((ns, n), o) for (ns, n), o in objs.items() if ns)
    assert cluster.get(kind, ns, name) == obj
    assert type(dict.__getitem__(cluster.objects, kind)) is KindParts
    assert cluster.get(kind, ns, "no-such-object") is None and cluster.get("NoSuchKind", ns, name) is None
    # every kind whole, in the files' order
    assert [(k, list(v.items())) for k, v in cluster.objects.items()] == [
        (k, list(v.items())) for k, v in parsed.objects.items()
    ]
    assert [n.raw for n in cluster.nodes] == [n.raw for n in parsed.nodes]
    assert [p.raw for p in cluster.pods] == [p.raw for p in parsed.pods]


def _damaged(env, kind: str):
    """An entry of a snapshot, the first part holding `kind` (one checked late) with a byte
    flipped: (snapshot, entry, its bytes before, its table, the damaged part's bytes)."""
    path = _snapshot(env)
    key, entry = _write(path)
    data = entry.read_bytes()
    table = _table(data)
    at, length, eager = table[_part_of(data, table, kind)]
    assert not eager
    _flip(entry, at + length // 2)
    return path, entry, data, table, entry.read_bytes()[at : at + length]


def _spy_decompress(monkeypatch) -> list[bytes]:
    """The bytes zlib.decompress is given from now on (a RawStore's part is decompressed, then unmarshalled)."""
    seen: list[bytes] = []
    real = zlib.decompress

    def spy(data, *a):
        seen.append(bytes(data))
        return real(data, *a)

    monkeypatch.setattr(zlib, "decompress", spy)
    return seen


def _rewritten(entry: Path, damaged: bytes) -> None:
    """The damaged entry was replaced by one written from the files (in the background)."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (entry.exists() and damaged not in entry.read_bytes()):
        time.sleep(0.05)
    assert entry.exists() and damaged not in entry.read_bytes()


def test_a_damaged_part_read_late_is_never_read_and_the_files_answer(env, monkeypatch):
    path, entry, data, table, damaged = _damaged(env, "raws:nodes")
    seen = _spy_decompress(monkeypatch)
    cluster, hit = _cached(path)
    assert hit  # the parts checked up front are whole
    parsed = load_cluster([path])
    assert [n.raw for n in cluster.nodes] == [n.raw for n in parsed.nodes]  # the files', read again
    assert damaged not in seen  # nothing of the damaged part was decompressed, nor unmarshalled
    _rewritten(entry, damaged)  # removed, and written again from the files
    assert [p.raw for p in cluster.pods] == [p.raw for p in parsed.pods]


def test_a_damaged_kind_is_never_unpickled_and_the_files_answer(env, monkeypatch):
    path, entry, data, table, damaged = _damaged(env, "kind")
    parsed = load_cluster([path])
    kinds = [j for j in range(len(table)) if _part_of_kind(data, table, j) == "kind"]
    loaded: list[bytes] = []

    class Spy(cache_pickle.Unpickler):
        def __init__(self, f, *a, **k):
            loaded.append(bytes(f.view))
            super().__init__(f, *a, **k)

    cluster, hit = _cached(path)
    assert hit
    monkeypatch.setattr(cache_pickle, "Unpickler", Spy)  # what reads a kind's part from now on
    assert [(k, list(v.items())) for k, v in cluster.objects.items()] == [
        (k, list(v.items())) for k, v in parsed.objects.items()
    ]
    assert len(loaded) == len(kinds) - 1 and damaged not in loaded  # every kind's part but the damaged one
    _rewritten(entry, damaged)


def _part_of_kind(data: bytes, table, j: int) -> str:
    """What the first part says part `j` holds."""
    found = {}
    for i, what in _referred(data, table):
        for k in range(i, i + (int(what[8:]) if what.startswith("records:") else 1)):
            found[k] = what.partition(":")[0]
    return found.get(j, "first")


def test_a_damaged_part_read_late_without_the_files_is_one_clear_error(env):
    path = _snapshot(env)
    key, entry = _write(path)
    data = entry.read_bytes()
    table = _table(data)
    at, length, _ = table[_part_of(data, table, "raws:pods")]
    _flip(entry, at + 1)
    got = snapshot_cache.read_entry(key)  # no files to read again (as the sweep's workers read)
    assert got is not None
    with pytest.raises(snapshot_cache.DamagedEntry, match="found damaged while in use") as caught:
        got.pods[0].raw  # noqa: B018
    assert caught.value.retry is None  # read without the files: the command cannot start over
    assert not entry.exists()


def test_a_damaged_first_part_is_a_miss_and_nothing_is_unpickled(env, monkeypatch):
    path = _snapshot(env)
    key, entry = _write(path)
    data = entry.read_bytes()
    table = _table(data)
    at, length, eager = table[0]
    assert eager
    _flip(entry, at + length - 1)
    calls = []
    monkeypatch.setattr(cache_pickle, "loads_parts", lambda *a: calls.append(a))
    assert snapshot_cache.read_entry(key) is None
    assert calls == []


def test_a_truncated_entry_is_a_miss(env):
    path = _snapshot(env)
    key, entry = _write(path)
    data = entry.read_bytes()
    at, length, eager = _table(data)[-1]
    for cut in (len(data) - 1, at + length // 2, at):
        entry.write_bytes(data[:cut])
        assert snapshot_cache.read_entry(key) is None
    entry.write_bytes(data)
    assert snapshot_cache.read_entry(key) is not None


@pytest.mark.parametrize(
    ("kind", "edit"),
    [
        ("records", ("name: kube-proxy-ga01", "name: kube-proxy-gz01")),
        ("raws:nodes", ("pool: general}", "pool: generaL}")),
    ],
)
def test_a_part_of_another_entry_is_not_read(env, kind, edit):
    # two snapshots that differ in one character: a part of the one entry in place of the other's
    # (the first that differs, of the same length; else the other's bytes at the same place)
    a = _snapshot(env, "a.yaml")
    b = _snapshot(env, "b.yaml", edit)
    key_a, entry_a = _write(a)
    key_b, entry_b = _write(b)
    data_a, data_b = entry_a.read_bytes(), entry_b.read_bytes()
    table_a, table_b = _table(data_a), _table(data_b)
    first = _part_of(data_a, table_a, kind)
    for i in range(first, len(table_a)):
        (at, length, eager), (at_b, length_b, _) = table_a[i], table_b[i]
        other = data_b[at_b : at_b + length] if length == length_b else data_b[at : at + length]
        if other != data_a[at : at + length]:
            break
    assert not eager and len(other) == length and other != data_a[at : at + length]
    entry_a.write_bytes(data_a[:at] + other + data_a[at + length :])
    cluster, hit = _cached(a)
    parsed = load_cluster([a])
    assert hit
    if kind == "records":
        with pytest.raises(snapshot_cache.DamagedEntry):
            cluster.pods  # noqa: B018
        return
    assert [n.raw for n in cluster.nodes] == [n.raw for n in parsed.nodes]
    assert [p.raw for p in cluster.pods] == [p.raw for p in parsed.pods]
    assert [p.labels for p in cluster.pods] == [p.labels for p in parsed.pods]


def test_the_header_binds_the_table(env):
    path = _snapshot(env)
    key, entry = _write(path)
    data = entry.read_bytes()
    # a part's flag turned from "checked up front" to "checked late", or a MAC in the table changed
    first_flag = snapshot_cache._HEAD.size + 8
    for at in (first_flag, first_flag + 1, snapshot_cache._HEAD.size + snapshot_cache._PART.size + 8):
        _flip(entry, at)
        assert snapshot_cache.read_entry(key) is None
        entry.write_bytes(data)
    assert snapshot_cache.read_entry(key) is not None


def test_struct_sizes():
    assert snapshot_cache._PART.size == struct.calcsize("<Q?32s") == 41


class _Seen(list):
    """The bytes of each record unpickled (lazy_pods.PodStore.take copies a record's bytes, after
    its namespace's MAC is checked, and unpickles the copy)."""


def _spy_records(monkeypatch) -> _Seen:
    seen = _Seen()
    real = lazy_pods.Unpickler

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, f, *a, **k):
            seen.append(bytes(f.getbuffer()))
            super().__init__(f, *a, **k)

    monkeypatch.setattr(lazy_pods, "Unpickler", Spy)
    return seen


def test_the_pods_records_are_checked_by_namespace_when_first_read(env, monkeypatch):
    path = _snapshot(env)
    key, entry = _write(path)
    data = entry.read_bytes()
    table = _table(data)
    first = _part_of(data, table, "records")
    records = [t for t in table[first:] if not t[2]]
    assert len(records) > 1 and not table[first][2]  # a part per namespace, checked when first read
    at, length, _ = records[0]
    _flip(entry, at + length // 2)
    damaged = entry.read_bytes()[at : at + length]
    seen = _spy_records(monkeypatch)
    cluster, hit = _cached(path)
    assert hit
    store = cluster._pod_store
    # the pods of the other namespaces are made (their parts are whole)
    others = [i for i in range(len(store)) if store.offsets[i] >= length]
    assert others and store.take(others)
    # the damaged namespace's: never read, one clear error (an InputChanged: no `except
    # Exception` takes it), the entry removed so that the next command parses the files
    with pytest.raises(snapshot_cache.DamagedEntry, match="found damaged while in use"):
        store.take([0])
    assert isinstance(snapshot_cache.DamagedEntry("x"), InputChanged)
    assert not isinstance(snapshot_cache.DamagedEntry("x"), Exception)
    assert len(seen) == len(others) and not any(record in damaged for record in seen)
    assert not entry.exists()
    again, hit = _cached(path)
    assert not hit and [p.raw for p in again.pods] == [p.raw for p in load_cluster([path]).pods]


@pytest.mark.parametrize("region", ["header", "first", "records", "kind"])
def test_a_byte_flipped_before_the_command_is_the_files_answer_and_the_entry_replaced(env, region):
    """Damage already there when the command starts: whenever it is found (up front, or when a part
    is first read, even the pods' records held by the snapshot's indexes), the command's output and
    exit status are those without the cache (it starts over from the files while it has printed
    nothing), nothing on stderr says the entry changed, and the entry is written again."""
    import os
    import subprocess
    import sys
    import time

    path = _snapshot(env)
    pod = str(ROOT / "fixtures" / "pods" / "web.yaml")
    cmd = [sys.executable, "-m", "kschedcli", "explain", pod, "-c", path, "-o", "json"]
    run_env = {**os.environ, "KSCHED_NO_PROGRESS": "1", "COLUMNS": "100"}
    expected = subprocess.run(cmd, env={**run_env, "KSCHED_NO_CACHE": "1"}, capture_output=True, text=True, timeout=120)
    key, entry = _write(path)
    data = entry.read_bytes()
    table = _table(data)
    if region == "header":
        _flip(entry, snapshot_cache._HEAD.size + 3)  # the table, under the header's MAC
    for j, (at, length, _) in enumerate(table):
        if _part_of_kind(data, table, j) == region:
            _flip(entry, at + length // 2)  # every part of the region
    damaged = entry.read_bytes()
    assert damaged != data
    r = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (expected.returncode, expected.stdout, expected.stderr)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (entry.exists() and entry.read_bytes() != damaged):
        time.sleep(0.1)  # the background writer's entry
    assert entry.exists() and entry.read_bytes() != damaged
    again = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=120)
    assert (again.returncode, again.stdout) == (expected.returncode, expected.stdout)
    assert snapshot_cache.read_entry(key) is not None


def test_a_damaged_namespace_once_output_began_is_one_line_exit_2(env, monkeypatch):
    """A command that has printed already cannot start over: one line, exit 2, the entry removed;
    the line says "damaged", not "changed while in use", when the file is as it was when opened."""
    import io
    import os

    from kschedcli.cli import errors as cli_errors

    path = _snapshot(env)
    key, entry = _write(path)
    data = entry.read_bytes()
    table = _table(data)
    for j, (at, length, _) in enumerate(table):
        if _part_of_kind(data, table, j) == "records":
            _flip(entry, at + length - 1)
    cluster, hit = _cached(path)
    assert hit
    with pytest.raises(snapshot_cache.DamagedEntry) as caught:
        list(cluster.pods)
    assert str(caught.value) == (
        "a snapshot cache entry was found damaged while in use (it was removed): run the command again"
    )
    assert caught.value.retry is not None and not entry.exists()
    # changed in place after it was opened: "changed while in use"
    _write(path)
    cluster, hit = _cached(path)
    assert hit
    with open(entry, "r+b") as f:
        f.seek(table[_part_of(data, table, "records")][0] + 1)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0x40]))
    os.utime(entry, ns=(1, 1))  # a later write's times, whatever the clock's granularity
    with pytest.raises(snapshot_cache.DamagedEntry, match="changed while in use"):
        list(cluster.pods)
    out = cli_errors.ClosedReaderSafeStdout(io.StringIO())
    assert not out.wrote
    out.write("x")
    assert out.wrote


def test_the_pending_pods_are_a_part_of_their_own_read_when_first_asked_for(env):
    path = _snapshot(env)
    key, entry = _write(path)
    data = entry.read_bytes()
    table = _table(data)
    assert not table[_part_of(data, table, "raws:pending")][2]  # checked when first read
    cluster, hit = _cached(path)
    assert hit and type(cluster.pending) is cache_pickle.RawList
    assert cluster.pending._items is None  # an explain of a pod file reads none of them
    parsed = load_cluster([path])
    assert len(parsed.pending) == 2 and cluster.pending_pods() == parsed.pending_pods()
    assert cluster.pending == parsed.pending and list(cluster.pending) == parsed.pending


def test_a_damaged_pending_part_is_never_read_and_the_files_answer(env, monkeypatch):
    path, entry, data, table, damaged = _damaged(env, "raws:pending")
    seen = _spy_decompress(monkeypatch)
    cluster, hit = _cached(path)
    assert hit
    assert cluster.pending_pods() == load_cluster([path]).pending_pods()  # the files', read again
    assert damaged not in seen  # nothing of the damaged part was decompressed, nor unmarshalled
    _rewritten(entry, damaged)


def test_pending_pods_marshal_cannot_write_stay_a_list():
    items = [({"kind": "Pod"}, "f.yaml", (1, None, False)), ({"kind": "Pod"}, "f.yaml", object())]
    assert cache_pickle.RawList.of(items) is items
    kept = cache_pickle.RawList.of(items[:1])
    assert type(kept) is cache_pickle.RawList and cache_pickle.loads(cache_pickle.dumps(kept)) == items[:1]
