"""A real HTTP scheduler extender on localhost for the tests: a ThreadingHTTPServer whose answer
to each verb is a function of the request's JSON (or raw bytes, a status, a delay, or a `stream`
writing the raw answer itself: trickled, endless, cut short). Every request is recorded (path,
headers, decoded body); every streamed answer's end too (`streams`: finished or aborted by the
client, and the bytes sent)."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Reply:
    body: Any = None  # JSON-encoded unless bytes
    status: int = 200
    delay: float = 0.0
    # writes the whole answer (status line, headers, body) on the connection: an iterable of
    # (bytes, seconds to wait after them); then the connection closes, or is reset when `reset`
    stream: Callable[[], Iterable[tuple[bytes, float]]] | None = None
    reset: bool = False


@dataclass
class Extender:
    handlers: dict[str, Callable[[dict], Reply | Any]] = field(default_factory=dict)
    requests: list[tuple[str, dict, Any]] = field(default_factory=list)
    streams: list[tuple[str, int]] = field(default_factory=list)  # ("finished" | "aborted", bytes sent)
    streaming: int = 0  # bytes of the current streamed answer written so far
    server: ThreadingHTTPServer | None = None
    scheme: str = "http"

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"{self.scheme}://{host}:{port}/scheduler"

    def verbs_called(self) -> list[str]:
        return [p.rsplit("/", 1)[-1] for p, _, _ in self.requests]

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def serve(handlers: dict[str, Callable[[dict], Any]], tls: ssl.SSLContext | None = None) -> Extender:
    ext = Extender(handlers=handlers, scheme="https" if tls else "http")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n)
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            ext.requests.append((self.path, dict(self.headers), body))
            verb = self.path.rsplit("/", 1)[-1]
            fn = ext.handlers.get(verb)
            reply = fn(body) if fn else Reply(status=404, body=b"no such verb")
            if not isinstance(reply, Reply):
                reply = Reply(reply)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.stream is not None:
                self._stream(reply)
                return
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def _stream(self, reply: Reply) -> None:
            sent = 0
            self.close_connection = True
            assert reply.stream is not None
            try:
                for data, wait in reply.stream():
                    self.wfile.write(data)
                    self.wfile.flush()
                    sent += len(data)
                    ext.streaming = sent
                    if wait:
                        time.sleep(wait)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                ext.streams.append(("aborted", sent))
                return
            if reply.reset:  # RST instead of FIN: SO_LINGER on, 0 seconds
                import socket
                import struct

                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            ext.streams.append(("finished", sent))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    ext.server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return ext


def self_signed(tmp: Path, name: str = "localhost") -> tuple[Path, Path] | None:
    """A self-signed certificate and key for `name` (and 127.0.0.1) made with the openssl command;
    None when openssl is not installed."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            f"/CN={name}",
            "-addext",
            f"subjectAltName=DNS:{name},IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key
