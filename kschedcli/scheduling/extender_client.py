"""One HTTP scheduler extender as kube-scheduler v1.34.1's HTTPExtender calls it (extender.go):
a JSON POST to urlPrefix/verb with the k8s.io/kube-scheduler/extender/v1 wire types, its answer
decoded as Go's encoding/json decodes it (the first JSON value; keys matched exactly, else
case-insensitively; unknown keys ignored), errors worded as the Go client words them.

The standard library's http.client does the HTTP: one POST per call, no pooling, no retries, a
timeout, TLS with a CA, a client certificate and a server name. Nothing a third-party client adds
changes a verdict, and a plain run does not pay for importing one."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import time
from typing import TYPE_CHECKING, Any

from ..config.extenders import ExtenderConfig, TLSConfig, display_url, transport_tls

if TYPE_CHECKING:
    import http.client
    import socket
    import ssl

    from ..api.model import Pod
    from ..backend.snapshot import NodeInfo

MAX_EXTENDER_PRIORITY = 10  # extenderv1.MaxExtenderPriority


class ExtenderError(Exception):
    """A failed call, its message as kube-scheduler's error reads; `bound`: the limit the call ran
    into, when one ended it ("httpTimeout 5s", "answer size 64 MiB")."""

    def __init__(self, message: str, bound: str = ""):
        super().__init__(message)
        self.bound = bound


# -- Go's encoding/json, the parts the answers need ----------------------------------------------


class _GoFloat(float):
    """A JSON number written with a fraction or exponent (Go will not put it in an int64)."""

    text: str

    def __new__(cls, text: str) -> _GoFloat:
        f = super().__new__(cls, float(text))
        f.text = text
        return f


def _kind(v: Any) -> str:
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, _GoFloat):
        return "number " + v.text
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, list):
        return "array"
    return "object"


def _type_error(v: Any, go_type: str, where: str) -> ExtenderError:
    into = f"Go struct field {where}" if "." in where else f"Go value of type {where}"
    if "." in where:
        return ExtenderError(f"json: cannot unmarshal {_kind(v)} into {into} of type {go_type}")
    return ExtenderError(f"json: cannot unmarshal {_kind(v)} into {into}")


def _field(obj: dict, name: str) -> Any:
    """The value of struct field `name`: the exact key, else the last key equal to it ignoring case."""
    if name in obj:
        return obj[name]
    low = name.lower()
    found = None
    for k, v in obj.items():
        if k.lower() == low:
            found = v
    return found


def _struct(v: Any, go_type: str) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _type_error(v, go_type, go_type)
    return v


def _string(v: Any, where: str) -> str:
    if v is None:
        return ""
    if not isinstance(v, str):
        raise _type_error(v, "string", where)
    return v


def _int64(v: Any, where: str) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int) or isinstance(v, _GoFloat) or not -(1 << 63) <= v < (1 << 63):
        if isinstance(v, int) and not isinstance(v, bool):
            v = _GoFloat(str(v))  # out of range: Go names the number
        raise _type_error(v, "int64", where)
    return v


def _list(v: Any, go_type: str, where: str) -> list | None:
    if v is None:
        return None
    if not isinstance(v, list):
        raise _type_error(v, go_type, where)
    return v


def _string_map(v: Any, where: str) -> dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _type_error(v, "map[string]string", where)
    return {k: _string(x, where) for k, x in v.items()}


def decode_first_value(body: bytes) -> Any:
    """json.NewDecoder(body).Decode: the first JSON value (what follows it is never read)."""
    text = body.decode("utf-8", errors="replace")
    i = len(text) - len(text.lstrip(" \t\r\n"))
    if i == len(text):
        raise ExtenderError("EOF")
    try:
        value, _ = json.JSONDecoder(parse_float=_GoFloat).raw_decode(text, i)
    except json.JSONDecodeError as e:
        raise ExtenderError(_go_syntax_error(e)) from None
    return value


def _go_syntax_error(e: json.JSONDecodeError) -> str:
    if e.pos >= len(e.doc.rstrip(" \t\r\n")) or e.msg.startswith("Unterminated string"):
        return "unexpected EOF"
    c = e.doc[e.pos]
    shown = "'\\''" if c == "'" else f"'{c}'"
    if e.msg.startswith("Expecting property name"):
        return f"invalid character {shown} looking for beginning of object key string"
    if e.msg.startswith("Expecting ':'"):
        return f"invalid character {shown} after object key"
    if e.msg.startswith("Expecting ','"):
        before = e.doc[: e.pos].rstrip()
        inside = "array element" if _innermost_open(before) == "[" else "object key:value pair"
        return f"invalid character {shown} after {inside}"
    if e.msg.startswith("Invalid control character"):
        return f"invalid character {shown} in string literal"
    return f"invalid character {shown} looking for beginning of value"


def _innermost_open(text: str) -> str:
    depth: list[str] = []
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth.append(ch)
        elif ch in "]}" and depth:
            depth.pop()
    return depth[-1] if depth else ""


# -- the extender ---------------------------------------------------------------------------------


class FilterAnswer:
    """ExtenderFilterResult as HTTPExtender.Filter returns it: the nodes that passed (None: the
    answer named none, every node sent is out), failed and failed-and-unresolvable nodes with
    their messages; `fresh` when the nodes came back as objects (kube-scheduler makes new, empty
    NodeInfos of them)."""

    __slots__ = ("nodes", "failed", "unresolvable", "fresh")

    def __init__(self, nodes, failed: dict[str, str], unresolvable: dict[str, str], fresh: bool):
        self.nodes = nodes
        self.failed = failed
        self.unresolvable = unresolvable
        self.fresh = fresh


class HTTPExtender:
    def __init__(self, cfg: ExtenderConfig):
        """NewHTTPExtender: tlsConfig's files are read here (transport_tls), once per configuration,
        as kube-scheduler reads them when it builds the extender; InputError when one cannot be."""
        self.cfg = cfg
        self.tls: TLSConfig | None = transport_tls(cfg)
        self._context: ssl.SSLContext | None = None

    @property
    def name(self) -> str:
        return self.cfg.name

    # -- what it is asked
    def is_interested(self, pod: Pod) -> bool:
        """IsInterested: no managed resources, or a container (init containers too) requesting or
        limiting one of them."""
        managed = self.cfg.managed_resources
        if not managed:
            return True
        for c in (pod.raw.get("spec") or {}).get("containers") or []:
            if _uses(c, managed):
                return True
        return any(_uses(c, managed) for c in (pod.raw.get("spec") or {}).get("initContainers") or [])

    def is_filter(self) -> bool:
        return bool(self.cfg.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.cfg.prioritize_verb)

    def supports_preemption(self) -> bool:
        return bool(self.cfg.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.cfg.bind_verb)

    # -- the calls
    def _node_args(self, pod: Pod, nodes: list[NodeInfo]) -> dict:
        if self.cfg.node_cache_capable:
            return {"Pod": pod.raw, "Nodes": None, "NodeNames": [ni.node.name for ni in nodes]}
        return {"Pod": pod.raw, "Nodes": {"metadata": {}, "items": [ni.node.raw for ni in nodes]}, "NodeNames": None}

    def filter(self, pod: Pod, nodes: list[NodeInfo]) -> FilterAnswer:
        """Filter: the answer, or ExtenderError."""
        if not self.cfg.filter_verb:
            return FilterAnswer(list(nodes), {}, {}, False)
        answer = _struct(self.send(self.cfg.filter_verb, self._node_args(pod, nodes)), "v1.ExtenderFilterResult")
        where = "ExtenderFilterResult."
        error = _string(_field(answer, "Error"), where + "Error")
        names = _list(_field(answer, "NodeNames"), "[]string", where + "NodeNames")
        node_list = _field(answer, "Nodes")
        if node_list is not None and not isinstance(node_list, dict):
            raise _type_error(node_list, "v1.NodeList", where + "Nodes")
        items = _list(_field(node_list, "items"), "[]v1.Node", where + "Nodes.items") if node_list else None
        failed = _string_map(_field(answer, "FailedNodes"), where + "FailedNodes")
        unresolvable = _string_map(_field(answer, "FailedAndUnresolvableNodes"), where + "FailedAndUnresolvableNodes")
        if error:
            raise ExtenderError(error)
        if self.cfg.node_cache_capable and names is not None:
            by_name = {ni.node.name: ni for ni in nodes}
            out = []
            for n in names:
                name = _string(n, where + "NodeNames")
                if name not in by_name:
                    raise ExtenderError(
                        f'extender "{self.name}" claims a filtered node "{name}" '
                        "which is not found in the input node list"
                    )
                out.append(by_name[name])
            return FilterAnswer(out, failed, unresolvable, False)
        if node_list is not None:
            from ..api.model import Node
            from ..backend.snapshot import NodeInfo

            fresh = []
            for i, item in enumerate(items or []):
                if item is not None and not isinstance(item, dict):
                    raise _type_error(item, "v1.Node", where + "Nodes.items")
                try:
                    fresh.append(NodeInfo(Node(item or {})))
                except Exception as e:  # a node object ksched cannot read: the answer is unusable
                    raise ExtenderError(f"extender {self.name}: Nodes.items[{i}]: {e}") from None
            return FilterAnswer(fresh, failed, unresolvable, True)
        return FilterAnswer(None, failed, unresolvable, False)

    def prioritize(self, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        """Prioritize: ([(host, score)] in the answer's order, weight), or ExtenderError."""
        if not self.cfg.prioritize_verb:
            return [(ni.node.name, 0) for ni in nodes], 0
        answer = _list(self.send(self.cfg.prioritize_verb, self._node_args(pod, nodes)), "v1.HostPriorityList", "")
        out = []
        for hp in answer or []:
            hp = _struct(hp, "v1.HostPriority")
            out.append(
                (_string(_field(hp, "Host"), "HostPriority.Host"), _int64(_field(hp, "Score"), "HostPriority.Score"))
            )
        return out, self.cfg.weight

    def process_preemption(
        self, pod: Pod, victims: dict[str, tuple[list[Pod], int]], node_info
    ) -> dict[str, tuple[list[Pod], int]]:
        """ProcessPreemption: node -> (victims, PDB violations) as the extender answers, the victims
        found by UID among the node's pods; or ExtenderError."""
        if not self.supports_preemption():
            raise ExtenderError(f"preempt verb is not defined for extender {self.name} but run into ProcessPreemption")
        if self.cfg.node_cache_capable:
            args = {
                "Pod": pod.raw,
                "NodeNameToVictims": None,
                "NodeNameToMetaVictims": {
                    n: {"Pods": [{"UID": p.uid} for p in pods], "NumPDBViolations": k}
                    for n, (pods, k) in victims.items()
                },
            }
        else:
            args = {
                "Pod": pod.raw,
                "NodeNameToVictims": {
                    n: {"Pods": [p.raw for p in pods], "NumPDBViolations": k} for n, (pods, k) in victims.items()
                },
                "NodeNameToMetaVictims": None,
            }
        answer = _struct(self.send(self.cfg.preempt_verb, args), "v1.ExtenderPreemptionResult")
        where = "ExtenderPreemptionResult.NodeNameToMetaVictims"
        meta = _field(answer, "NodeNameToMetaVictims")
        if meta is not None and not isinstance(meta, dict):
            raise _type_error(meta, "map[string]*v1.MetaVictims", where)
        out: dict[str, tuple[list[Pod], int]] = {}
        for node_name, mv in (meta or {}).items():
            mv = _struct(mv, "v1.MetaVictims") if mv is not None else {}
            k = _int64(_field(mv, "NumPDBViolations"), "MetaVictims.NumPDBViolations")
            pods_meta = _list(_field(mv, "Pods"), "[]*v1.MetaPod", "MetaVictims.Pods") or []
            ni = node_info(node_name)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node_name}"')
            chosen = []
            for mp in pods_meta:
                uid = _string(_field(_struct(mp, "v1.MetaPod"), "UID"), "MetaPod.UID")
                p = next((q for q in ni.pods if q.uid == uid), None)
                if p is None:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: "
                        f"{node_name}, but the pod is not found on that node"
                    )
                chosen.append(p)
            out[node_name] = (chosen, k)
        return out

    # -- HTTP
    def url(self, verb: str) -> str:
        return self.cfg.url_prefix.rstrip("/") + "/" + verb

    def send(self, verb: str, args: dict) -> Any:
        """POST the args as JSON to urlPrefix/verb; the decoded first JSON value of a 200 answer.

        httpTimeout bounds the whole exchange, as Go's http.Client.Timeout does: connecting,
        writing the request, reading the headers and the body (each read is given only what is
        left of it, so a server trickling a byte at a time ends at the deadline, not later). The
        body is read until its first JSON value is complete (json.Decoder reads no further: what
        follows, an endless stream included, is never read) and at most answer_bound(request)
        bytes (ksched's bound; kube-scheduler sets none)."""
        # the network's modules imported when an extender is called, not with every command
        import http.client
        import socket
        import ssl
        from urllib.parse import unquote, urlsplit

        raw_url = self.url(verb)
        parts = urlsplit(raw_url)
        url = display_url(raw_url)  # as messages name it: no password
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise ExtenderError(f'Post "{url}": unsupported protocol scheme "{parts.scheme}"')
        host = parts.hostname or ""
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise ExtenderError(f'Post "{url}": invalid port in URL') from None
        clock = _Deadline(self.cfg.timeout)
        body = json.dumps(args, separators=(",", ":"), ensure_ascii=False).encode()
        bound = answer_bound(len(body))
        sock: _DeadlineSocket | None = None
        raw: socket.socket | None = None
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            try:
                raw = socket.create_connection((host, port), timeout=clock.left())
                if scheme == "https":
                    # CPython's handshake keeps to its socket's timeout as a whole: what is left
                    raw.settimeout(clock.left())
                    raw = self._tls_context().wrap_socket(raw, server_hostname=self._server_name(host))
                sock = _DeadlineSocket(raw, clock)
                conn = http.client.HTTPConnection(host, port)
                conn.sock = sock  # connected: http.client only writes and reads
                headers = {"Content-Type": "application/json"}
                if "@" in parts.netloc:
                    # a URL's userinfo is sent as Basic authentication, as Go's http.Client does
                    user, _, password = parts.netloc.rpartition("@")[0].partition(":")
                    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
                    headers["Authorization"] = f"Basic {token}"
                conn.request("POST", target, body, headers)
                resp = conn.getresponse()
            except TimeoutError:
                raise ExtenderError(
                    f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
                    f"httpTimeout {self.cfg.timeout_text}",
                ) from None
            except ConnectionRefusedError:
                raise ExtenderError(
                    f'Post "{url}": dial tcp {_hostport(host, port)}: connect: connection refused'
                ) from None
            except socket.gaierror:
                raise ExtenderError(f'Post "{url}": dial tcp: lookup {host}: no such host') from None
            except ssl.SSLCertVerificationError as e:
                raise ExtenderError(f'Post "{url}": tls: failed to verify certificate: {e.verify_message}') from None
            except (http.client.RemoteDisconnected, http.client.IncompleteRead):
                raise ExtenderError(f'Post "{url}": EOF') from None
            except (OSError, http.client.HTTPException) as e:
                raise ExtenderError(f'Post "{url}": {getattr(e, "strerror", None) or e}') from None
            if resp.status != 200:
                raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
            try:
                data = _read_first_value(resp, sock, bound, url)
            except TimeoutError:
                raise ExtenderError(
                    "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
                    f"httpTimeout {self.cfg.timeout_text}",
                ) from None
            return decode_first_value(data)
        finally:
            if sock is not None:
                sock.release()
            elif raw is not None:
                raw.close()

    def _server_name(self, host: str) -> str:
        tls = self.tls
        return tls.server_name if tls is not None and tls.server_name else host

    def _tls_context(self) -> ssl.SSLContext:
        """TLSConfigFor's tls.Config, from the bytes transport_tls read: the config's CA (only
        it), else the system's; no verification when insecure (tlsConfig.insecure, or enableHTTPS
        without a CA); a client certificate when both a certificate and a key are given."""
        if self._context is not None:
            return self._context
        import ssl

        tls = self.tls
        if tls is None or not (tls.ca_data or tls.has_cert_auth()):
            ctx = ssl.create_default_context()
        else:
            import tempfile

            with tempfile.TemporaryDirectory() as d:  # ssl reads PEM from files (its cadata: ASCII only)

                def written(name: str, data: bytes) -> str:
                    path = os.path.join(d, name)
                    with open(path, "wb") as f:
                        f.write(data)
                    return path

                ctx = ssl.create_default_context(cafile=written("ca.pem", tls.ca_data) if tls.ca_data else None)
                if tls.has_cert_auth():
                    ctx.load_cert_chain(written("cert.pem", tls.cert_data), written("key.pem", tls.key_data))
        if tls is not None and tls.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        self._context = ctx
        return ctx


# -- the exchange's bounds -------------------------------------------------------------------------

# the most of an answer's body read before its first JSON value must be complete: 64 MiB, or twice
# the request when that is larger (a filter answer without nodeCacheCapable returns node objects,
# about as large as the ones sent). kube-scheduler reads any size; ksched names the bound instead
MIN_ANSWER_BOUND = 64 << 20


def answer_bound(request_bytes: int) -> int:
    return max(MIN_ANSWER_BOUND, 2 * request_bytes)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


class _Deadline:
    """httpTimeout as a point in time: what is left of it, or TimeoutError once it passed. None:
    no deadline (a negative httpTimeout)."""

    __slots__ = ("at",)

    def __init__(self, timeout: float | None):
        self.at = None if timeout is None else time.monotonic() + timeout

    def left(self) -> float | None:
        if self.at is None:
            return None
        left = self.at - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left


class _DeadlineSocket:
    """A connected socket whose every send and receive is given only what is left of the
    exchange's deadline (Go's Client.Timeout covers the whole exchange, not each read)."""

    def __init__(self, sock: socket.socket, clock: _Deadline):
        self.sock = sock
        self.clock = clock
        self.ends = self._ends()  # named while connected: a reset connection has no peer

    def _ends(self) -> str:
        try:
            a, b = self.sock.getsockname()[:2], self.sock.getpeername()[:2]
        except OSError:
            return ""
        return f"{_hostport(str(a[0]), int(a[1]))}->{_hostport(str(b[0]), int(b[1]))}"

    def sendall(self, data) -> None:
        self.sock.settimeout(self.clock.left())
        self.sock.sendall(data)

    def recv_into(self, buf, n: int = 0) -> int:
        self.sock.settimeout(self.clock.left())
        return self.sock.recv_into(buf, n)

    def makefile(self, mode: str = "rb", *args, **kwargs) -> io.BufferedReader:
        return io.BufferedReader(_Reader(self))

    def close(self) -> None:
        """http.client closes the connection once it has the headers of an answer that ends with
        it, and reads the body after: the socket stays open until the exchange is over (release)."""

    def release(self) -> None:
        self.sock.close()


class _Reader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket):
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self._sock.recv_into(b)


_SCALAR_START = frozenset(b"-0123456789tfn")
_WS = b" \t\r\n"
_IN_CONTAINER = re.compile(rb'["{}\[\]]')  # what changes the scanner's state outside strings
_IN_STRING = re.compile(rb'["\\]')
_SCALAR_END = re.compile(rb'[ \t\r\n,\]}{\["]')


class _FirstValueScanner:
    """Where the body's first JSON value ends, found as the bytes arrive (json.Decoder stops
    reading there): an object or array at its closing bracket, a string at its closing quote, a
    number or literal at the byte after it. Anything else as the first byte ends it at once (the
    decoder's syntax error). Scans with regular expressions: a long value costs C time, not a
    Python step per byte."""

    def __init__(self) -> None:
        self.pos = 0
        self.kind = 0  # 0 not started, 1 container, 2 string, 3 scalar
        self.depth = 0
        self.in_str = False

    def feed(self, data: bytes | bytearray) -> int | None:
        """The end of the first value within `data` (all bytes so far), or None: not complete yet."""
        i, n = self.pos, len(data)
        if self.kind == 0:
            while i < n and data[i] in _WS:
                i += 1
            if i == n:
                self.pos = n
                return None
            c = data[i]
            if c in b"{[":
                self.kind, self.depth = 1, 1
            elif c == 0x22:
                self.kind, self.in_str = 2, True
            elif c in _SCALAR_START:
                self.kind = 3
            else:
                return i + 1
            i += 1
        if self.kind == 3:
            m = _SCALAR_END.search(data, i)
            if m is None:
                self.pos = n
                return None
            return m.start()
        while True:
            if self.in_str:
                m = _IN_STRING.search(data, i)
                if m is None:
                    self.pos = n
                    return None
                j = m.start()
                if data[j] == 0x5C:  # an escape: the next byte is taken with it
                    if j + 1 >= n:
                        self.pos = j  # look at the backslash again when more comes
                        return None
                    i = j + 2
                    continue
                self.in_str = False
                i = j + 1
                if self.kind == 2:
                    return i
                continue
            m = _IN_CONTAINER.search(data, i)
            if m is None:
                self.pos = n
                return None
            j = m.start()
            c = data[j]
            i = j + 1
            if c == 0x22:
                self.in_str = True
            elif c in b"{[":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth == 0:
                    return i


def _read_first_value(resp: http.client.HTTPResponse, sock: _DeadlineSocket, bound: int, url: str) -> bytes:
    """The body up to the end of its first JSON value (or all of it, when it ends first), within
    the deadline and `bound` bytes; an error worded as Go's decoder reports a failed read."""
    import http.client

    scanner = _FirstValueScanner()
    data = bytearray()
    check_at = 1 << 16  # a syntax error within a long value: looked for at doubling sizes
    while True:
        try:
            chunk = resp.read1(1 << 16)
        except http.client.IncompleteRead as e:
            # the connection closed before the body's announced end (Content-Length, or a chunk)
            data += e.partial
            return _cut_short(data, scanner)
        except TimeoutError:
            raise  # the deadline: send() words it
        except (ConnectionResetError, BrokenPipeError):
            raise ExtenderError(f"read tcp {sock.ends}: read: connection reset by peer") from None
        except (OSError, http.client.HTTPException, ValueError):
            return _cut_short(data, scanner)  # a malformed chunk: Go's chunked reader fails as a short body
        if not chunk:
            return bytes(data)  # the body's end: the decoder reports what it holds
        data += chunk
        end = scanner.feed(data)
        if end is not None:
            return bytes(data[:end])
        if len(data) > bound:
            raise ExtenderError(
                f"the answer from {url} exceeds {_size(bound)} before its first JSON value ends "
                f"(ksched's bound on an extender's answer; kube-scheduler reads without one)",
                f"answer size {_size(bound)}",
            )
        if len(data) >= check_at:
            check_at *= 2
            _syntax_check(bytes(data))


def _cut_short(data: bytearray, scanner: _FirstValueScanner) -> bytes:
    end = scanner.feed(data)
    if end is not None:
        return bytes(data[:end])
    if not bytes(data).strip(b" \t\r\n"):
        raise ExtenderError("unexpected EOF")
    _syntax_check(bytes(data))
    raise ExtenderError("unexpected EOF")


def _syntax_check(data: bytes) -> None:
    """A syntax error the bytes so far already show (the decoder stops at it), raised as Go words
    it; nothing when they are only incomplete."""
    try:
        decode_first_value(data)
    except ExtenderError as e:
        if str(e) not in ("unexpected EOF", "EOF"):
            raise


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _uses(container: Any, managed: tuple[str, ...]) -> bool:
    res = (container or {}).get("resources") or {}
    for part in ("requests", "limits"):
        if any(name in managed for name in res.get(part) or {}):
            return True
    return False
