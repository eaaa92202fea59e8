"""Hostile input to the newer commands (sweep, scale-up, scale-down, --report, run's scenario keys):
each is one line on stderr naming the option, file or field, exit status 2, no traceback, no hang,
and the inputs are left as they were."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import socket
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PROD = str(ROOT / "fixtures" / "prod-cluster.yaml")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")


def one_line_error(argv: list[str], says: str, **kwargs) -> str:
    r = CliRunner().invoke(app, argv, **kwargs)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = [x for x in r.output.strip().splitlines() if x.strip()]
    assert len(lines) == 1, r.output
    assert says in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------------------------------- sweep


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--fail", "nodes=\u00b2"], "--fail: nodes=K takes a whole number"),  # '²'.isdigit(), int('²') fails
        (["--fail", "nodes=\u0663"], "--fail: nodes=K takes a whole number"),  # an Arabic-Indic 3
        (["--fail", "nodes=2", "--samples", "1000000000"], "--samples: at most 100,000"),
        (["--fail", "nodes=2", "--samples", "99999999999999999999999999"], "--samples: at most 100,000"),
        (["--fail", "zone", "--workers", "10000"], "--workers: at most 128"),
        (["--fail", "zone", "--workers", "0"], "--workers: must be at least 1"),
        (["--rolling", "pool=general", "--surge", ""], "--surge: expected NODE[:COUNT]"),
        (["--fail", "node", "--surge", "general-a-01"], "--surge: only with --rolling"),
        (["--fail", "node", "--fail-key", "rack"], "--fail-key: only with --fail zone"),
        (["--fail", "zone", "--fail-key", ""], "--fail-key: expected a node label key"),
        (["--rolling", "pool=general", "--surge", "no-such-node"], "--surge: no node named"),
    ],
)
def test_sweep_options(args, says):
    one_line_error(["sweep", "-c", PROD, "--workers", "1", *args], says)


def test_sweep_quotes_a_huge_value_cut():
    line = one_line_error(["sweep", "-c", PROD, "--fail", "zone", "--fail-key", "k" * 5000], "--fail-key")
    assert len(line) < 300 and "5,000 characters" in line
    line = one_line_error(["sweep", "-c", PROD, "--fail", "x" * 5000], "--fail")
    assert len(line) < 300


def test_a_bad_surge_file_names_surge(tmp_path):
    bad = tmp_path / "surge.yaml"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    line = one_line_error(["sweep", "-c", PROD, "--rolling", "pool=general", "--surge", f"@{bad}"], "--surge")
    assert "--add-node" not in line


# ----------------------------------------------------------------------------------- sweep --dask


class _Listener:
    """A loopback listener that accepts and then either says nothing or answers as an HTTP server."""

    def __init__(self, reply: bytes | None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.reply = reply
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if self.reply is None:
                self.held.append(c)
                continue
            with contextlib.suppress(OSError):
                c.sendall(self.reply)
            c.close()

    def close(self) -> None:
        self.sock.close()
        for c in self.held:
            c.close()


@pytest.fixture
def quick_dask(monkeypatch):
    pytest.importorskip("distributed", reason="dask distributed is not installed (ksched[dask])")
    from kschedcli.whatif import sweep as sw

    monkeypatch.setattr(sw, "DASK_CONNECT_SECONDS", 1)
    monkeypatch.setattr(sw, "DASK_WORKERS_SECONDS", 1)


@pytest.mark.parametrize(
    ("scheme", "reply", "says"),
    [
        ("tcp", None, "no Dask scheduler answered"),  # the handshake never comes: it used to wait forever
        ("tcp", b"HTTP/1.1 200 OK\r\n\r\n" + b"\xff" * 4096, "not a Dask scheduler?"),  # a traceback before
        ("ws", b"HTTP/1.1 200 OK\r\n\r\n", "not a Dask scheduler?"),
        ("tls", b"HTTP/1.1 200 OK\r\n\r\n", "cannot reach the Dask scheduler"),
    ],
)
def test_dask_address_of_something_else(quick_dask, scheme, reply, says):
    server = _Listener(reply)
    try:
        one_line_error(["sweep", "-c", PROD, "--fail", "zone", "--dask", f"{scheme}://{server.address}"], says)
    finally:
        server.close()


def test_dask_scheduler_without_workers(quick_dask):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as lc:
        one_line_error(["sweep", "-c", PROD, "--fail", "zone", "--dask", lc.scheduler_address], "has no worker")


# ------------------------------------------------------------------------------------- --report


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --report checks its path once its charting extra is known to be there (else that is the one line)
needs_report_extra = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("altair", "vl_convert")),
    reason="the report extra is not installed: pip install 'ksched[report]'",
)


@needs_report_extra
@pytest.mark.parametrize(
    "argv",
    [
        ["capacity", "{pods}", "-c", "{cluster}", "--report", "{cluster}"],
        ["capacity", "{pods}", "-c", "{cluster}", "--report", "{pods}"],
        ["explain", "{pods}", "-c", "{cluster}", "--report", "{pods}"],
        ["scale-up", "-c", "{cluster}", "--report", "{cluster}"],
        ["sweep", "-c", "{cluster}", "--fail", "zone", "--workers", "1", "--report", "{cluster}"],
        ["diff", "{pods}", "-c", "{cluster}", "--against-cluster", "{other}", "--report", "{other}"],
        ["capacity", "{pods}", "-c", "{link}", "--report", "{cluster}"],  # the input through a symbolic link
        ["capacity", "{pods}", "-c", "{cluster}", "--report", "{dotted}"],  # another spelling of its path
    ],
)
def test_the_report_never_replaces_an_input(tmp_path, argv):
    cluster, pods, other = tmp_path / "cluster.yaml", tmp_path / "pods.yaml", tmp_path / "other.yaml"
    cluster.write_bytes(Path(PROD).read_bytes())
    other.write_bytes(Path(PROD).read_bytes())
    pods.write_bytes(Path(WEB).read_bytes())
    (tmp_path / "link.yaml").symlink_to(cluster)
    before = {p: _digest(p) for p in (cluster, pods, other)}
    names = {
        "cluster": str(cluster),
        "pods": str(pods),
        "other": str(other),
        "link": str(tmp_path / "link.yaml"),
        "dotted": f"{tmp_path}/./cluster.yaml",
    }
    one_line_error([a.format(**names) for a in argv], "--report: is also an input of this command")
    assert {p: _digest(p) for p in before} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster.yaml", "link.yaml", "other.yaml", "pods.yaml"]


@needs_report_extra
def test_the_report_never_replaces_a_file_of_an_input_directory(tmp_path):
    """--cluster DIR stands for its .json, .yaml and .yml files: the report refuses to replace one
    of them (or to add one, which the next read of DIR would take); a page beside them is fine."""
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "cluster.yaml").write_bytes(Path(PROD).read_bytes())
    before = _digest(snap / "cluster.yaml")
    for name in ("cluster.yaml", "new.json"):
        line = one_line_error(
            ["explain", WEB, "-c", str(snap), "--report", str(snap / name)], f"--report: is one of the files of {snap}"
        )
        assert line.endswith("an input of this command: the report would replace it"), line
    assert _digest(snap / "cluster.yaml") == before
    assert sorted(p.name for p in snap.iterdir()) == ["cluster.yaml"]
    r = CliRunner().invoke(app, ["explain", WEB, "-c", str(snap), "--report", str(snap / "page.html")])
    assert r.exit_code == 0, r.output
    assert _digest(snap / "cluster.yaml") == before
    assert sorted(p.name for p in snap.iterdir()) == ["cluster.yaml", "page.html"]


@needs_report_extra
@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("", "--report: expected a file name"),
        ("{tmp}/no/such/dir/r.html", "--report: cannot write the report: no such directory"),
        ("{tmp}", "--report: is a directory"),
        ("{tmp}/fifo", "--report: is not a regular file"),
        ("/dev/null", "--report: is not a regular file"),  # never renamed over a device
    ],
)
def test_report_paths_refused_before_the_question(tmp_path, where, says):
    os.mkfifo(tmp_path / "fifo")
    one_line_error(["capacity", WEB, "-c", PROD, "--report", where.format(tmp=tmp_path)], says)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]  # no temporary file left behind


# ------------------------------------------------------------- names that are Markdown, HTML, lines

EVIL = "evil|`x`<b>html</b>\nnext*_[]~strike~$math$"


def _evil_cluster(tmp_path) -> tuple[str, str]:
    import yaml

    sys.path.insert(0, str(ROOT / "tests"))
    from longnames import long_cluster

    objs = long_cluster(nodes=12, pending=2, workloads=3)
    objs[0]["metadata"]["labels"]["topology.kubernetes.io/zone"] = EVIL
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objs))
    groups = tmp_path / "groups.yaml"
    template = objs[1]["metadata"]["name"]
    groups.write_text(yaml.safe_dump({"nodeGroups": [{"name": EVIL, "templateNode": template, "maxSize": 5}]}))
    return str(cluster), str(groups)


def test_a_node_group_name_holding_a_newline_is_refused(tmp_path):
    cluster, groups = _evil_cluster(tmp_path)
    line = one_line_error(["scale-up", "-c", cluster, "--node-groups", groups], "nodeGroups[0]: name: ")
    assert "a control character" in line


def test_markdown_takes_nothing_in_a_name_as_markup(tmp_path):
    cluster, _ = _evil_cluster(tmp_path)
    r = CliRunner().invoke(app, ["sweep", "-c", cluster, "--fail", "zone", "--workers", "1", "-o", "markdown"])
    assert r.exit_code in (0, 1), r.output
    [row] = [x for x in r.stdout.splitlines() if "evil" in x]
    assert row.count(" | ") == 4  # the name's | is no cell border
    cell = row.split(" | ")[0]
    assert cell == "| zone evil\\|\\`x\\`&lt;b&gt;html&lt;/b&gt; next\\*\\_\\[\\]\\~strike\\~\\$math\\$"


# ------------------------------------------------------------------------------------- scale-up


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("", "--expander: expected NAME[,NAME...], not an empty value"),  # was every expander, silently
        (",,", "--expander: expected NAME[,NAME...], not an empty value"),
        ("x" * 3000, "… (3,000 characters): not an expander"),
    ],
)
def test_scale_up_expander_values(value, says):
    line = one_line_error(["scale-up", "-c", PROD, "--expander", value], says)
    assert len(line) < 400
