"""Extenders that misbehave (issue 29 items 5 and 6): real HTTP servers on localhost that trickle
their headers or body, answer with a 1 GiB or endless body, close or reset the connection
mid-body, or name nodes the cluster does not have. Each ends in kube-scheduler's words (or, where
kube-scheduler has no bound, one line naming ksched's), never a traceback, and never later than
its httpTimeout: no assertion here times anything; a trickling server that would finish a valid
answer long after the timeout tells whether the client waited for it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders import node, pod
from extender_server import Reply, serve
from test_extenders import scheduler

from kschedcli.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
OK_BODY = b'{"NodeNames":["n1"],"FailedNodes":{"n2":"slow but sure"}}'
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


@pytest.fixture
def servers():
    started = []

    def start(handlers):
        ext = serve(handlers)
        started.append(ext)
        return ext

    yield start
    for ext in started:
        ext.close()


def cycle(ext, timeout="1s", **extra):
    cfg = {"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True, "httpTimeout": timeout, **extra}
    return scheduler([node("n1"), node("n2")], extenders=[cfg]).schedule(pod("p"))


def head_with_length(n: int) -> bytes:
    return HEAD + f"Content-Length: {n}\r\n\r\n".encode()


# -- the deadline covers the whole exchange ------------------------------------------------------


def test_headers_trickled_a_byte_at_a_time_end_at_the_deadline(servers):
    whole = head_with_length(len(OK_BODY)) + OK_BODY

    def trickle():
        yield whole[:9], 0.1  # "HTTP/1.1 " at once, then one byte every 0.1 s: ~10 s for the rest
        for i in range(9, len(whole)):
            yield whole[i : i + 1], 0.1

    ext = servers({"filter": lambda a: Reply(stream=trickle)})
    r = cycle(ext)
    # main: each read had its own 1 s, the answer came whole after ~10 s and the pod went to n1
    assert r.error == (
        f'Post "{ext.url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    )
    assert not r.schedulable
    # the server was still trickling when the cycle had ended (or found the client gone)
    assert all(kind == "aborted" for kind, _ in ext.streams)
    assert r.extender_calls[-1].detail["bound"] == "httpTimeout 1s"


def test_a_body_trickled_a_byte_at_a_time_ends_at_the_deadline(servers):
    def trickle():
        yield head_with_length(len(OK_BODY)), 0
        for i in range(len(OK_BODY)):
            yield OK_BODY[i : i + 1], 0.2  # ~12 s for the body

    ext = servers({"filter": lambda a: Reply(stream=trickle)})
    r = cycle(ext)
    assert r.error == "context deadline exceeded (Client.Timeout or context cancellation while reading body)"
    # main read the whole body first (each byte within its own timeout), then reported the deadline
    assert ext.streaming < len(head_with_length(len(OK_BODY))) + len(OK_BODY)
    assert r.extender_calls[-1].detail["bound"] == "httpTimeout 1s"


def test_the_deadline_is_the_configured_one(servers):
    # the same trickle well inside a longer httpTimeout: the answer is used
    def trickle():
        yield head_with_length(len(OK_BODY)), 0
        for i in range(0, len(OK_BODY), 8):
            yield OK_BODY[i : i + 8], 0.02

    ext = servers({"filter": lambda a: Reply(stream=trickle)})
    r = cycle(ext, timeout="30s")
    assert r.schedulable and r.selected_node == "n1" and not r.error


# -- the body is bounded ---------------------------------------------------------------------------


def _never_ending_value(chunked: bool, total: int):
    """A body opening a JSON string that never closes, in 1 MiB pieces: `total` bytes, then the
    end of the connection (announced length) or 30 s more of a byte a second (chunked)."""
    piece = b"a" * (1 << 20)

    def stream():
        if chunked:
            yield HEAD + b"Transfer-Encoding: chunked\r\n\r\n", 0
        else:
            yield head_with_length(1 << 30), 0  # 1 GiB announced
        start = b'{"NodeNames":["'
        yield (b"%x\r\n%s\r\n" % (len(start), start)) if chunked else start, 0
        sent = 0
        while sent < total:
            yield (b"%x\r\n%s\r\n" % (len(piece), piece)) if chunked else piece, 0
            sent += len(piece)
        for _ in range(30 if chunked else 0):  # then a byte a second (a client without a bound waits)
            yield b"1\r\na\r\n", 1

    return stream


@pytest.mark.parametrize(
    "chunked,total",
    [(False, 96 << 20), (True, 160 << 20)],  # 1 GiB announced (96 MiB sent), endless chunks
    ids=["one-GiB-announced", "endless-chunked"],
)
def test_a_huge_or_endless_body_stops_at_the_named_bound(servers, chunked, total):
    ext = servers({"filter": lambda a: Reply(stream=_never_ending_value(chunked, total))})
    r = cycle(ext, timeout="20s")
    assert r.error == (
        f"the answer from {ext.url}/filter exceeds 64 MiB before its first JSON value ends "
        "(ksched's bound on an extender's answer; kube-scheduler reads without one)"
    )
    from kschedcli.scheduling.extender_client import MIN_ANSWER_BOUND

    assert MIN_ANSWER_BOUND == 64 << 20
    assert r.extender_calls[-1].outcome == "error"
    assert r.extender_calls[-1].detail["bound"] == "answer size 64 MiB"


def test_an_endless_body_after_a_complete_answer_is_never_read_as_go_s_decoder_does(servers):
    def stream():
        yield HEAD + b"Transfer-Encoding: chunked\r\n\r\n", 0
        yield b"%x\r\n%s\r\n" % (len(OK_BODY), OK_BODY), 0
        for _ in range(200):  # then junk for 10 s, a little at a time
            yield b"5\r\n junk\r\n", 0.05

    ext = servers({"filter": lambda a: Reply(stream=stream)})
    r = cycle(ext, timeout="2s")
    # json.Decoder.Decode reads the first value only: kube-scheduler uses the answer
    assert r.schedulable and r.selected_node == "n1", r.error
    assert r.filters["n2"].first_failure.reasons == ["slow but sure"]


def test_a_syntax_error_early_in_an_endless_body_ends_the_read_there(servers):
    def stream():
        yield HEAD + b"Transfer-Encoding: chunked\r\n\r\n", 0
        bad = b'{"NodeNames" ["n1"'
        yield b"%x\r\n%s\r\n" % (len(bad), bad), 0
        piece = b" " * (1 << 16)
        for _ in range(512):  # 32 MiB of spaces, then silence
            yield b"%x\r\n%s\r\n" % (len(piece), piece), 0
        yield b"", 30

    ext = servers({"filter": lambda a: Reply(stream=stream)})
    r = cycle(ext, timeout="20s")
    assert r.error == "invalid character '[' after object key"


# -- cut short -------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_connection_closed_mid_body_is_an_unexpected_eof(servers, chunked):
    part = OK_BODY[:20]

    def stream():
        if chunked:
            yield HEAD + b"Transfer-Encoding: chunked\r\n\r\n", 0
            yield b"%x\r\n%s" % (len(OK_BODY), part), 0  # the chunk announced whole, sent in part
        else:
            yield head_with_length(len(OK_BODY)) + part, 0

    ext = servers({"filter": lambda a: Reply(stream=stream)})
    r = cycle(ext)
    # main: http.client.IncompleteRead escaped as a traceback
    assert r.error == "unexpected EOF"


def test_a_complete_answer_then_a_cut_is_used(servers):
    def stream():
        yield head_with_length(len(OK_BODY) + 100) + OK_BODY, 0  # 100 bytes promised never come

    ext = servers({"filter": lambda a: Reply(stream=stream)})
    r = cycle(ext)
    assert r.schedulable and r.selected_node == "n1", r.error


def test_a_connection_reset_mid_body_is_named_as_go_names_it(servers):
    def stream():
        yield head_with_length(len(OK_BODY)) + OK_BODY[:20], 0.2

    ext = servers({"filter": lambda a: Reply(stream=stream, reset=True)})
    r = cycle(ext)
    assert r.error is not None
    assert r.error.startswith("read tcp 127.0.0.1:") and r.error.endswith(": read: connection reset by peer")
    assert "->127.0.0.1:" in r.error


# -- nodes that do not exist -------------------------------------------------------------------------


def _cli(tmp_path, url, cache_capable: bool, *cmd):
    cfg = tmp_path / "ext.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders:\n"
        f"- urlPrefix: {url}\n  filterVerb: filter\n  nodeCacheCapable: {str(cache_capable).lower()}\n"
    )
    args = [*cmd, str(ROOT / "fixtures/pods/web.yaml"), "-c", str(ROOT / "fixtures/small-cluster.yaml")]
    return CliRunner().invoke(app, [*args, "--config", str(cfg), "-o", "json"], env={"COLUMNS": "200"})


def strings(doc) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        doc = list(doc.values())
    return [s for v in doc for s in strings(v)] if isinstance(doc, list) else []


def test_a_filtered_node_name_not_sent_is_kube_scheduler_s_error_in_every_command(servers, tmp_path):
    ext = servers({"filter": lambda a: {"NodeNames": ["ghost"]}})
    message = f'extender "{ext.url}" claims a filtered node "ghost" which is not found in the input node list'
    for cmd in ("explain", "schedule", "capacity"):
        r = _cli(tmp_path, ext.url, True, cmd)
        assert r.exception is None or isinstance(r.exception, SystemExit), (cmd, r.exception)
        assert message in strings(json.loads(r.stdout)), cmd


def test_a_node_object_the_cluster_lacks_goes_one_way_in_every_command(servers, tmp_path):
    ghost = {"metadata": {"name": "ghost"}, "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}
    ext = servers({"filter": lambda a: {"Nodes": {"items": [ghost]}}})
    # kube-scheduler picks the node it was answered with and binds the pod to that name
    r = _cli(tmp_path, ext.url, False, "explain")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["selectedNode"] == "ghost"
    # main: KeyError: 'ghost' when binding
    r = _cli(tmp_path, ext.url, False, "schedule")
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 0, r.output
    (res,) = json.loads(r.stdout)["results"]
    assert res["selectedNode"] == "ghost"
    r = _cli(tmp_path, ext.url, False, "capacity")
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    doc = json.loads(r.stdout)
    assert any('node "ghost" is not in the cluster (an HTTP extender answered with it)' in s for s in strings(doc))


def test_failed_nodes_the_cluster_lacks_count_as_kube_scheduler_counts_them(servers, tmp_path):
    ext = servers(
        {"filter": lambda a: {"NodeNames": [], "FailedNodes": {**{n: "busy" for n in a["NodeNames"]}, "ghost": "gone"}}}
    )
    messages = set()
    for cmd in ("explain", "schedule"):
        r = _cli(tmp_path, ext.url, True, cmd)
        assert r.exception is None or isinstance(r.exception, SystemExit), (cmd, r.exception)
        doc = json.loads(r.stdout)
        res = doc if cmd == "explain" else doc["results"][0]
        messages.add(res["message"])
    # one message from both commands; NodeToStatus keeps the unknown name: counted, as in FitError
    (message,) = messages
    assert message.startswith("0/3 nodes are available: ") and "1 gone" in message


def test_the_table_names_the_bound_reached_in_one_line(servers, tmp_path):
    whole = head_with_length(len(OK_BODY)) + OK_BODY

    def trickle():
        for i in range(len(whole)):
            yield whole[i : i + 1], 0.1

    ext = servers({"filter": lambda a: Reply(stream=trickle)})
    cfg = tmp_path / "ext.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders:\n"
        f"- urlPrefix: {ext.url}\n  filterVerb: filter\n  nodeCacheCapable: true\n  httpTimeout: 1s\n"
    )
    args = ["explain", str(ROOT / "fixtures/pods/web.yaml"), "-c", str(ROOT / "fixtures/small-cluster.yaml")]
    r = CliRunner().invoke(app, [*args, "--config", str(cfg)], env={"COLUMNS": "250"})
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert any(
        line.strip()
        == f'Post "{ext.url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        for line in lines
    ), r.output
    assert "    bound reached: httpTimeout 1s" in lines
    assert all(kind == "aborted" for kind, _ in ext.streams)


def test_a_tls_handshake_trickled_a_byte_at_a_time_ends_at_the_deadline():
    """A server that accepts the connection and answers the ClientHello one byte every 0.2 s (a
    record header announcing 16 KiB): the handshake is within httpTimeout too."""
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    sent = []

    def trickle():
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)  # the ClientHello
            try:
                for b in b"\x16\x03\x03\x40\x00" + b"\x02" * 70:  # 15 s at most
                    conn.sendall(bytes([b]))
                    sent.append(b)
                    time.sleep(0.2)
            except OSError:
                pass

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    url = f"https://127.0.0.1:{port}/ext"
    cfg = {"urlPrefix": url, "filterVerb": "filter", "enableHTTPS": True, "httpTimeout": "1s"}
    try:
        r = scheduler([node("n1")], extenders=[cfg]).schedule(pod("p"))
    finally:
        listener.close()
    assert r.error == (
        f'Post "{url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    )
    assert len(sent) < 75  # the client did not wait for the whole trickle
    assert r.extender_calls[-1].detail["bound"] == "httpTimeout 1s"
