"""HTTP extenders against a real extender on localhost (tests/extender_server.py): what is sent,
how answers become statuses, FitError counts, scores and preemption candidates, and the errors
kube-scheduler's Go client reports. No mock of the client anywhere."""

import base64
import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from builders import node, pod
from extender_server import Reply, self_signed, serve

from kschedcli.config.extenders import parse_extenders
from kschedcli.config.scheduler import SchedulerConfig, build_profile, load_config
from kschedcli.config.versions import REFERENCE, choose
from kschedcli.errors import InputError
from kschedcli.framework.result import PluginScore
from kschedcli.framework.status import UNRESOLVABLE, UNSCHEDULABLE
from kschedcli.inputs.cluster import Cluster
from kschedcli.plugins import REGISTRY
from kschedcli.scheduling.scheduler import Scheduler

TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]


@pytest.fixture
def servers():
    started = []

    def start(handlers, tls=None):
        ext = serve(handlers, tls)
        started.append(ext)
        return ext

    yield start
    for ext in started:
        ext.close()


def scheduler(nodes, pods=(), extenders=(), profile=None):
    cluster = Cluster()
    cluster.nodes = list(nodes)
    cluster.pods = list(pods)
    cluster.follow(choose(REFERENCE.name))
    prof = build_profile(profile or {"schedulerName": "default-scheduler"}, "test", REGISTRY)
    config = SchedulerConfig(profiles=[prof], extenders=parse_extenders(list(extenders), "test"))
    return Scheduler(cluster, config)


def four_nodes():
    return [node("n1"), node("n2"), node("n3"), node("n4", taints=TAINT)]


# -- Filter -----------------------------------------------------------------------------------------


def test_filter_gets_the_feasible_node_names_and_its_failures_become_statuses(servers):
    ext = servers(
        {
            "filter": lambda a: {
                "NodeNames": ["n1"],
                "FailedNodes": {"n2": "gpu busy"},
                "FailedAndUnresolvableNodes": {"n3": "no gpu"},
            }
        }
    )
    sched = scheduler(
        four_nodes(), extenders=[{"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}]
    )
    r = sched.schedule(pod("p", requests={"cpu": "100m"}))
    path, headers, body = ext.requests[0]
    assert path == "/scheduler/filter" and headers["Content-Type"] == "application/json"
    # after the plugins: the tainted node is not sent; names only, no node objects
    assert body["NodeNames"] == ["n1", "n2", "n3"] and body["Nodes"] is None
    assert body["Pod"]["metadata"]["name"] == "p"
    assert r.schedulable and r.selected_node == "n1" and r.feasible == ["n1"]
    assert r.filters["n2"].first_failure.code == UNSCHEDULABLE
    assert r.filters["n2"].first_failure.reasons == ["gpu busy"]
    assert r.filters["n3"].first_failure.code == UNRESOLVABLE
    assert r.filters["n2"].first_failure.plugin == ext.url
    assert r.filter_extenders == [ext.url]
    assert ext.url not in r.filters["n4"].plugins  # never sent: not asked
    call = r.extender_calls[0]
    assert (call.verb, call.outcome, call.detail["passed"]) == ("filter", "ok", ["n1"])


def test_filter_rejecting_every_node_counts_in_the_fit_error_as_kube_scheduler_counts(servers):
    ext = servers(
        {
            "filter": lambda a: {
                "NodeNames": [],
                "FailedNodes": {"n1": "gpu busy", "n2": "gpu busy", "n3": "ignored: unresolvable wins"},
                "FailedAndUnresolvableNodes": {"n3": "no gpu"},
            }
        }
    )
    sched = scheduler(
        four_nodes(), extenders=[{"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}]
    )
    r = sched.schedule(pod("p"))
    assert not r.schedulable
    assert r.message == (
        "0/4 nodes are available: 1 no gpu, 1 node(s) had untolerated taint {dedicated: x}, 2 gpu busy. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: "
        "2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    # the Unschedulable ones are preemption's potential nodes, the unresolvable one is not
    assert r.preemption is not None and r.preemption.potential_nodes == 2


def test_a_node_neither_returned_nor_failed_has_no_status_of_its_own(servers):
    ext = servers({"filter": lambda a: {"NodeNames": [], "FailedNodes": {"n1": "busy"}}})
    sched = scheduler(
        [node("n1"), node("n2")], extenders=[{"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}]
    )
    r = sched.schedule(pod("p"))
    # n2 counts with the default absent status, which has no reason
    assert r.message.startswith("0/2 nodes are available: 1 busy. no new claims to deallocate, preemption: ")
    assert r.extender_calls[0].detail["dropped"] == ["n2"]


def test_node_objects_are_sent_and_the_answered_objects_are_scored_without_their_pods(servers):
    def echo(args):
        return {"Nodes": {"items": args["Nodes"]["items"]}}

    ext = servers({"filter": echo})
    busy = pod("busy", node_name="n1", requests={"cpu": "3", "memory": "6Gi"})
    plain = scheduler([node("n1"), node("n2")], [busy])
    r0 = plain.schedule(pod("p", requests={"cpu": "500m", "memory": "512Mi"}))
    assert r0.scores["n2"]["NodeResourcesFit"].raw > r0.scores["n1"]["NodeResourcesFit"].raw
    sched = scheduler([node("n1"), node("n2")], [busy], extenders=[{"urlPrefix": ext.url, "filterVerb": "filter"}])
    r = sched.schedule(pod("p", requests={"cpu": "500m", "memory": "512Mi"}))
    body = ext.requests[0][2]
    assert body["NodeNames"] is None and [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["n1", "n2"]
    # kube-scheduler v1.34.1 wraps the answered Node objects in new NodeInfos: no pods, nothing
    # requested, so NodeResourcesFit scores the busy node as the idle one (kubernetes#141781)
    assert r.scores["n1"]["NodeResourcesFit"].raw == r.scores["n2"]["NodeResourcesFit"].raw
    assert r.extender_calls[0].detail["nodesAsObjects"] is True


def test_filter_errors_fail_the_cycle_with_the_go_client_s_words(servers):
    answers = {
        "status": Reply(status=500, body=b"boom"),
        "html": Reply(b"<html>oops</html>"),
        "empty": Reply(b""),
        "cut": Reply(b'{"NodeNames": ["n1"'),
        "error": Reply({"Error": "the extender is sad"}),
        "ghost": Reply({"NodeNames": ["n1", "ghost"]}),
        "type": Reply({"NodeNames": "n1"}),
    }
    ext = servers({verb: (lambda a, reply=reply: reply) for verb, reply in answers.items()})
    expected = {
        "status": f"failed status with extender at URL {ext.url}/status, code 500",
        "html": "invalid character '<' looking for beginning of value",
        "empty": "EOF",
        "cut": "unexpected EOF",
        "error": "the extender is sad",
        "ghost": f'extender "{ext.url}" claims a filtered node "ghost" which is not found in the input node list',
        "type": "json: cannot unmarshal string into Go struct field ExtenderFilterResult.NodeNames of type []string",
    }
    for verb, message in expected.items():
        sched = scheduler(
            [node("n1")], extenders=[{"urlPrefix": ext.url, "filterVerb": verb, "nodeCacheCapable": True}]
        )
        r = sched.schedule(pod("p"))
        assert not r.schedulable and r.error == message, verb
        assert r.message == message
        assert r.extender_calls[-1].outcome == "error"


def test_an_unreachable_extender_fails_the_cycle_unless_ignorable():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/ext"
    sched = scheduler([node("n1")], extenders=[{"urlPrefix": url, "filterVerb": "filter"}])
    r = sched.schedule(pod("p"))
    assert r.error == f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
    sched = scheduler([node("n1")], extenders=[{"urlPrefix": url, "filterVerb": "filter", "ignorable": True}])
    r = sched.schedule(pod("p"))
    assert r.schedulable and r.selected_node == "n1"
    assert (r.extender_calls[0].outcome, r.extender_calls[0].error) == (
        "ignored",
        f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused',
    )


def test_a_slow_extender_times_out_after_http_timeout_and_ignorable_ones_go_last(servers):
    slow = servers({"filter": lambda a: Reply({"NodeNames": a["NodeNames"]}, delay=2.0)})
    fast = servers({"filter": lambda a: {"NodeNames": a["NodeNames"][:1], "FailedNodes": {"n2": "fast says no"}}})
    cfg = {"urlPrefix": slow.url, "filterVerb": "filter", "nodeCacheCapable": True, "httpTimeout": "200ms"}
    r = scheduler([node("n1"), node("n2")], extenders=[cfg]).schedule(pod("p"))
    assert (
        r.error
        == f'Post "{slow.url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    )
    fast_cfg = {"urlPrefix": fast.url, "filterVerb": "filter", "nodeCacheCapable": True}
    sched = scheduler([node("n1"), node("n2")], extenders=[{**cfg, "ignorable": True}, fast_cfg])
    r = sched.schedule(pod("p"))
    # the ignorable extender, first in the config, is called after the other
    assert [c.extender for c in r.extender_calls] == [fast.url, slow.url]
    assert r.extender_calls[1].outcome == "ignored" and "context deadline exceeded" in r.extender_calls[1].error
    assert slow.requests[-1][2]["NodeNames"] == ["n1"]  # given what the one before left
    assert r.schedulable and r.selected_node == "n1"


def test_managed_resources_decide_interest_and_ignored_ones_leave_node_resources_fit(servers, tmp_path):
    ext = servers({"filter": lambda a: {"NodeNames": a["NodeNames"]}})
    cfg = {
        "urlPrefix": ext.url,
        "filterVerb": "filter",
        "nodeCacheCapable": True,
        "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
    }
    plain = pod("plain")
    r = scheduler([node("n1")], extenders=[cfg]).schedule(plain)
    assert ext.requests == [] and r.extender_calls[0].outcome == "not-interested"
    gpu = pod("gpu", requests={"cpu": "1"}, limits={"example.com/gpu": "1"})
    r = scheduler([node("n1")], extenders=[cfg]).schedule(gpu)
    assert len(ext.requests) == 0 and not r.schedulable  # NodeResourcesFit: the node has no example.com/gpu
    # read from a file, ignoredByScheduler makes NodeResourcesFit ignore it: the extender decides
    p = tmp_path / "c.json"
    p.write_text(
        json.dumps(
            {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "extenders": [cfg]}
        )
    )
    cluster = Cluster()
    cluster.nodes = [node("n1")]
    cluster.follow(choose(REFERENCE.name))
    r = Scheduler(cluster, load_config(str(p), REGISTRY)).schedule(gpu)
    assert len(ext.requests) == 1 and r.schedulable


def test_ignored_resources_need_node_resources_fit_args(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "extenders:\n- urlPrefix: http://x\n  managedResources:\n"
        "  - name: example.com/gpu\n    ignoredByScheduler: true\n"
    )
    cfg = load_config(str(p), REGISTRY)
    assert cfg.profiles[0].args["NodeResourcesFit"]["ignoredResources"] == ["example.com/gpu"]
    p.write_text(
        p.read_text() + "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: NodeResourcesFit\n"
    )
    with pytest.raises(InputError, match="can't find NodeResourcesFitArgs in plugin config"):
        load_config(str(p), REGISTRY)


# -- Prioritize -------------------------------------------------------------------------------------


def test_prioritize_scores_are_weighted_scaled_and_added(servers):
    ext = servers(
        {
            "prioritize": lambda a: [
                {"Host": "n1", "Score": 3},
                {"host": "n2", "score": 7},  # Go matches field names ignoring case
                {"Host": "ghost", "Score": 10},  # not among the nodes: counts nowhere
            ]
        }
    )
    cfg = {"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 2, "nodeCacheCapable": True}
    plain = scheduler([node("n1"), node("n2")]).schedule(pod("p"))
    r = scheduler([node("n1"), node("n2")], extenders=[cfg]).schedule(pod("p"))
    assert r.scores["n2"][ext.url] == PluginScore(7, 70, 2, 140)
    assert r.scores["n1"][ext.url] == PluginScore(3, 30, 2, 60)
    assert r.totals == {"n1": plain.totals["n1"] + 60, "n2": plain.totals["n2"] + 140}
    assert r.selected_node == "n2" and r.score_extenders == [ext.url]


def test_a_prioritize_error_leaves_the_extender_out_of_the_scores(servers):
    ext = servers({"prioritize": lambda a: Reply(status=503)})
    cfg = {"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 1}
    r = scheduler([node("n1"), node("n2")], extenders=[cfg]).schedule(pod("p"))
    assert r.schedulable and not r.error and ext.url not in r.scores["n1"]
    call = r.extender_calls[0]
    assert call.outcome == "ignored"
    assert call.error == f"failed prioritize with extender at URL {ext.url}/prioritize, code 503"


def test_one_feasible_node_is_never_prioritized(servers):
    ext = servers({"prioritize": lambda a: [{"Host": "n1", "Score": 1}]})
    cfg = {"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 1}
    r = scheduler([node("n1")], extenders=[cfg]).schedule(pod("p"))
    assert r.selected_node == "n1" and ext.requests == []


# -- Preemption -------------------------------------------------------------------------------------


def crowded():
    nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    pods = [
        pod("low1", node_name="n1", requests={"cpu": "2"}, priority=1, start_time="2024-01-01T00:00:00Z"),
        pod("low2", node_name="n2", requests={"cpu": "2"}, priority=1, start_time="2024-01-01T00:00:00Z"),
    ]
    return nodes, pods


def test_process_preemption_shrinks_the_candidates(servers):
    seen = []

    def preempt(args):
        seen.append(args)
        keep = args["NodeNameToMetaVictims"]["n2"]
        return {"NodeNameToMetaVictims": {"n2": keep}}

    ext = servers({"preempt": preempt})
    nodes, pods = crowded()
    cfg = {"urlPrefix": ext.url, "preemptVerb": "preempt", "nodeCacheCapable": True}
    r = scheduler(nodes, pods, extenders=[cfg]).schedule(pod("high", requests={"cpu": "1"}, priority=100))
    assert seen[0]["NodeNameToVictims"] is None
    assert seen[0]["NodeNameToMetaVictims"] == {
        "n1": {"Pods": [{"UID": "default-low1"}], "NumPDBViolations": 0},
        "n2": {"Pods": [{"UID": "default-low2"}], "NumPDBViolations": 0},
    }
    assert r.preemption.nominated_node == "n2" and r.preemption.victims == ["default/low2"]
    assert r.preemption.not_helpful["n1"] == "dropped by an extender (ProcessPreemption)"


def test_process_preemption_can_veto_and_sends_whole_pods_without_node_cache(servers):
    seen = []
    ext = servers({"preempt": lambda a: seen.append(a) or {"NodeNameToMetaVictims": {}}})
    nodes, pods = crowded()
    cfg = {"urlPrefix": ext.url, "preemptVerb": "preempt"}
    r = scheduler(nodes, pods, extenders=[cfg]).schedule(pod("high", requests={"cpu": "1"}, priority=100))
    assert seen[0]["NodeNameToMetaVictims"] is None
    assert seen[0]["NodeNameToVictims"]["n1"]["Pods"][0]["metadata"]["name"] == "low1"
    assert r.preemption.nominated_node is None
    assert r.message.endswith("preemption: no candidate node for preemption")


def test_process_preemption_errors(servers):
    ext = servers(
        {
            "unknown": lambda a: {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "nope"}]}}},
            "novictim": lambda a: {"NodeNameToMetaVictims": {"n1": {"Pods": []}}},
        }
    )
    nodes, pods = crowded()
    high = pod("high", requests={"cpu": "1"}, priority=100)
    cfg = {"urlPrefix": ext.url, "preemptVerb": "unknown", "nodeCacheCapable": True}
    r = scheduler(nodes, pods, extenders=[cfg]).schedule(high)
    assert r.message.endswith(
        f"preemption: extender: {ext.url} claims to preempt pod (UID: &{{nope}}) on node: n1, "
        "but the pod is not found on that node"
    )
    cfg = {"urlPrefix": ext.url, "preemptVerb": "novictim", "nodeCacheCapable": True}
    r = scheduler(nodes, pods, extenders=[cfg]).schedule(high)
    assert r.message.endswith('preemption: expected at least one victim pod on node "n1"')
    r = scheduler(nodes, pods, extenders=[{**cfg, "ignorable": True}]).schedule(high)
    assert r.preemption.nominated_node is None and r.message.endswith("no candidate node for preemption")


def test_a_binder_is_reported_never_called(servers):
    ext = servers({})
    cfg = {"urlPrefix": ext.url, "bindVerb": "bind"}
    r = scheduler([node("n1")], extenders=[cfg]).schedule(pod("p"))
    assert r.schedulable and ext.requests == []
    assert [(c.verb, c.outcome) for c in r.extender_calls] == [("bind", "not-called")]


# -- TLS --------------------------------------------------------------------------------------------


def _tls_filter_server(servers, tmp_path, client_certificate: bool = False):
    """A filter extender serving TLS with a self-signed certificate (`client_certificate`: it asks
    for a client certificate it trusts, the same one); (the server, the certificate, its key)."""
    import ssl

    made = self_signed(tmp_path)
    if made is None:
        pytest.skip("the openssl command is not installed: no certificate to serve TLS with")
    cert, key = made
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if client_certificate:
        ctx.verify_mode = ssl.CERT_REQUIRED  # a client certificate it trusts, or no handshake
        ctx.load_verify_locations(cert)
    return servers({"filter": lambda a: {"NodeNames": a["NodeNames"]}}, tls=ctx), cert, key


def test_tls_with_a_self_signed_certificate(servers, tmp_path):
    ext, cert, _ = _tls_filter_server(servers, tmp_path)
    assert ext.url.startswith("https://")
    ca = base64.b64encode(cert.read_bytes()).decode()
    base = {"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}
    # the server's certificate as the CA: verified
    r = scheduler([node("n1")], extenders=[{**base, "enableHTTPS": True, "tlsConfig": {"caData": ca}}]).schedule(
        pod("p")
    )
    assert r.schedulable and not r.error
    # enableHTTPS without a CA: kube-scheduler does not verify
    r = scheduler([node("n1")], extenders=[{**base, "enableHTTPS": True}]).schedule(pod("p"))
    assert r.schedulable and not r.error
    # the system's CAs do not know a self-signed certificate
    r = scheduler([node("n1")], extenders=[base]).schedule(pod("p"))
    assert r.error.startswith(f'Post "{ext.url}/filter": tls: failed to verify certificate')
    # a serverName the certificate does not name
    bad = {**base, "tlsConfig": {"caData": ca, "serverName": "other.example"}}
    r = scheduler([node("n1")], extenders=[bad]).schedule(pod("p"))
    assert r.error.startswith(f'Post "{ext.url}/filter": tls: failed to verify certificate')
    assert len(ext.requests) == 2


def _fed_fifo(path: Path, data: bytes) -> str:
    """A named pipe a thread writes `data` to once a reader opens it, as `<(cat file)` is fed."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "wb") as f:  # blocks until the reader opens it
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return str(path)


def test_tls_files_are_read_when_the_extender_is_built(servers, tmp_path):
    ext, cert, key = _tls_filter_server(servers, tmp_path, client_certificate=True)
    base = {"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}
    # caFile verifies the server; without a client certificate the server refuses the handshake
    r = scheduler([node("n1")], extenders=[{**base, "tlsConfig": {"caFile": str(cert)}}]).schedule(pod("p"))
    assert r.error.startswith(f'Post "{ext.url}/filter": ') and len(ext.requests) == 0, r.error
    # from FIFOs (`caFile: <(...)`): read once a writer opens them, as kube-scheduler reads them
    fifos = {
        "caFile": _fed_fifo(tmp_path / "ca.fifo", cert.read_bytes()),
        "certFile": _fed_fifo(tmp_path / "cert.fifo", cert.read_bytes()),
        "keyFile": _fed_fifo(tmp_path / "key.fifo", key.read_bytes()),
    }
    r = scheduler([node("n1")], extenders=[{**base, "tlsConfig": fifos}]).schedule(pod("p"))
    assert r.schedulable and not r.error and len(ext.requests) == 1
    # regular files, read when the extender is built: gone by the time of the call, they are not missed;
    # a CA bundle's comments may be other than ASCII (certifi's name issuers so)
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes("# Issuer: CN=NetLock Arany (Class Gold) Főtanúsítvány\n".encode() + cert.read_bytes())
    files = {"caFile": str(bundle), "certFile": str(cert), "keyFile": str(key)}
    sched = scheduler([node("n1")], extenders=[{**base, "tlsConfig": files}])
    cert.rename(tmp_path / "moved-cert.pem")
    key.rename(tmp_path / "moved-key.pem")
    r = sched.schedule(pod("p"))
    assert r.schedulable and not r.error and len(ext.requests) == 2


def test_tls_files_are_read_only_when_kube_scheduler_reads_them(tmp_path):
    missing = str(tmp_path / "missing.pem")
    base = {"urlPrefix": "http://127.0.0.1:9/x", "filterVerb": "filter"}
    # restclient.TLSConfigFor makes no TLS config (and reads nothing) without a CA, a certificate AND
    # a key, insecure or a serverName; an http:// URL does not matter
    scheduler([node("n1")], extenders=[{**base, "tlsConfig": {"keyFile": missing}}])
    # with one of them it reads every file named, whatever the scheme, and does not start without it
    for tls, key in [
        ({"caFile": missing}, "caFile"),
        ({"serverName": "x", "keyFile": missing}, "keyFile"),
        ({"certData": "Zm9v", "keyFile": missing}, "keyFile"),
    ]:
        with pytest.raises(InputError) as e:
            scheduler([node("n1")], extenders=[{**base, "tlsConfig": tls}])
        assert str(e.value) == f"test: extenders[0].tlsConfig.{key}: {missing}: no such file"
    # enableHTTPS without a CA is insecure, so a TLS config is made: the files are read
    with pytest.raises(InputError) as e:
        scheduler([node("n1")], extenders=[{**base, "enableHTTPS": True, "tlsConfig": {"certFile": missing}}])
    assert str(e.value) == f"test: extenders[0].tlsConfig.certFile: {missing}: no such file"


HANG_GUARD = 120  # seconds: a hang fails the test instead of stalling the suite (no timing asserted)


def _one_line_in_time(argv: list[str]):
    """ksched's result (CliRunner), run in a thread joined within HANG_GUARD: a read that never ends
    fails the test instead of hanging it."""
    from typer.testing import CliRunner

    from kschedcli.cli.app import app

    result: list = []
    t = threading.Thread(target=lambda: result.append(CliRunner().invoke(app, argv)), daemon=True)
    t.start()
    t.join(HANG_GUARD)
    assert not t.is_alive(), "ksched did not end"
    return result[0]


@pytest.mark.parametrize(
    "kind, key, says",
    [
        ("fifo", "keyFile", "a FIFO nobody writes to (no writer opened it within 0.2 s)"),
        ("fifo", "caFile", "a FIFO nobody writes to (no writer opened it within 0.2 s)"),
        (
            "oversized",
            "certFile",
            "more than 16 MiB: larger than any real input, so ksched stops reading (a TLS certificate, key or "
            "CA file is read up to 16 MiB)",
        ),
        ("/dev/zero", "keyFile", "not PEM text: a NUL byte at offset 0"),
        ("directory", "caFile", "is a directory, not a file"),
        ("unreadable", "keyFile", "cannot read: Permission denied"),
        ("socket", "certFile", "cannot read: No such device or address"),  # unreadable to root too
    ],
)
def test_a_tls_file_that_cannot_be_read_is_one_line(tmp_path, monkeypatch, request, kind, key, says):
    from kschedcli.loader import sources

    if kind == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads a file whatever its mode")
    monkeypatch.setattr(sources, "FIFO_WRITER_SECONDS", 0.2)
    path = tmp_path / "tls.pem"
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes to it
    elif kind == "oversized":
        with open(path, "wb") as f:
            f.truncate((16 << 20) + 1)  # sparse: no disk used
    elif kind == "directory":
        path.mkdir()
    elif kind == "unreadable":
        path.write_text("-----BEGIN PRIVATE KEY-----\n")
        path.chmod(0)
    elif kind == "socket":
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(path))
        listener.listen()
        request.addfinalizer(listener.close)
    else:
        path = Path(kind)
    tls = {key: str(path), "insecure": key != "caFile"}
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"extenders:\n- {{urlPrefix: 'https://127.0.0.1:9/x', filterVerb: filter, tlsConfig: {json.dumps(tls)}}}\n"
    )
    root = Path(__file__).resolve().parents[2]
    args = ["explain", str(root / "fixtures/pods/web.yaml"), "-c", str(root / "fixtures/small-cluster.yaml")]
    r = _one_line_in_time([*args, "--config", str(cfg)])
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert r.stderr == f"ksched: {cfg}: extenders[0].tlsConfig.{key}: {path}: {says}\n"
    # --no-extenders: no extender is built, so its files are not read (kube-scheduler reads them then)
    r = _one_line_in_time([*args, "--config", str(cfg), "--no-extenders"])
    assert r.exit_code == 0 and "node-" in r.stdout, r.output


# -- Configuration ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extenders,field,message",
    [
        (
            [{"urlPrefix": "http://x", "prioritizeVerb": "p"}],
            "extenders[0].weight",
            "Invalid value: 0: must have a positive weight applied to it",
        ),
        (
            [{"urlPrefix": "http://x", "managedResources": [{"name": "cpu"}]}],
            "extenders[0].managedResources[0].name",
            'Invalid value: "cpu": is an invalid extended resource name',
        ),
        (
            [
                {"urlPrefix": "http://x", "managedResources": [{"name": "example.com/gpu"}]},
                {"urlPrefix": "http://y", "managedResources": [{"name": "example.com/gpu"}]},
            ],
            "extenders[1].managedResources[0].name",
            'Invalid value: "example.com/gpu": duplicate extender managed resource name',
        ),
        (
            [{"urlPrefix": "http://x", "bindVerb": "b"}, {"urlPrefix": "http://y", "bindVerb": "b"}],
            "extenders",
            'Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
        ),
        (
            [{"urlPrefix": "http://x", "httpTimeout": "soon"}],
            "extenders[0].httpTimeout",
            'time: invalid duration "soon"',
        ),
        (
            [{"urlPrefix": "http://x", "filterverb": "f"}],
            "extenders[0].filterverb",
            "unknown field; did you mean filterVerb?",  # the config's field tree (issue 11)
        ),
    ],
)
def test_invalid_extenders_name_the_field(tmp_path, extenders, field, message):
    p = tmp_path / "c.json"
    p.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "extenders": extenders,
            }
        )
    )
    with pytest.raises(InputError) as e:
        load_config(str(p), REGISTRY)
    assert e.value.field == field and message in e.value.message


def test_timeout_defaults_and_calling_order():
    exts = parse_extenders(
        [
            {"urlPrefix": "http://a", "ignorable": True},
            {"urlPrefix": "http://b", "httpTimeout": "0s"},
            {"urlPrefix": "http://c", "httpTimeout": "1m30s"},
            {"urlPrefix": "http://d", "httpTimeout": "-1s"},
        ],
        "t",
    )
    assert [e.name for e in exts] == ["http://b", "http://c", "http://d", "http://a"]
    assert [e.timeout for e in exts] == [5.0, 90.0, None, 5.0]


# -- The command line -------------------------------------------------------------------------------


def test_a_url_s_userinfo_is_sent_as_basic_auth_and_never_printed(servers, tmp_path):
    from typer.testing import CliRunner

    from kschedcli.cli.app import app

    ext = servers({"filter": lambda a: {"NodeNames": a["NodeNames"][:1]}, "bad": lambda a: Reply(status=503)})
    secret_url = ext.url.replace("://", "://alice%40corp:hunter%2F2@", 1)
    sched = scheduler(
        [node("n1"), node("n2")],
        extenders=[{"urlPrefix": secret_url, "filterVerb": "filter", "nodeCacheCapable": True}],
    )
    r = sched.schedule(pod("p"))
    assert r.schedulable and r.selected_node == "n1"
    # Go's http.Client: the userinfo, percent-decoded, as an Authorization header
    assert ext.requests[-1][1]["Authorization"] == "Basic " + base64.b64encode(b"alice@corp:hunter/2").decode()
    shown = ext.url.replace("://", "://alice%40corp:xxxxx@", 1)
    assert r.extender_calls[0].extender == shown
    sched = scheduler([node("n1")], extenders=[{"urlPrefix": secret_url + "?token=t0ken", "filterVerb": "bad"}])
    r = sched.schedule(pod("p"))
    assert r.error == f"failed bad with extender at URL {shown}?token=xxxxx, code 503"  # the verb is in the value
    # the command's every output form: neither the password nor the token
    root = Path(__file__).resolve().parents[2]
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = _cli_config(tmp_path, f"http://bob:s3cretpass@127.0.0.1:{port}/x?access_token=t0kenvalue")
    args = ["explain", str(root / "fixtures/pods/web.yaml"), "--cluster", str(root / "fixtures/small-cluster.yaml")]
    for out in ("table", "json", "yaml", "markdown"):
        res = CliRunner().invoke(app, [*args, "--config", cfg, "-o", out])
        assert "connection refused" in res.output, out
        assert "bob:xxxxx@" in res.output and "s3cretpass" not in res.output and "t0kenvalue" not in res.output, out


def test_a_password_holding_what_ends_a_go_authority_is_never_printed_in_part(tmp_path):
    # a password holding /, a space, a quote, an @ or a : in each extender's urlPrefix. All ignorable:
    # every one is called, fails (an invalid port to Go's parser, or connection refused) and is named
    # with its error; then the first alone, not ignorable: its error fails the cycle
    from typer.testing import CliRunner

    from kschedcli.cli.app import app

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    passwords = ["SUPER/SECRETX", "SUPER SECRETY", 'SUPER"SECRETZ', "SUPER@SECRETW:X", "SUPER'SECRETV"]
    urls = [json.dumps(f"http://user{i}:{pw}@127.0.0.1:{port}/s") for i, pw in enumerate(passwords)]
    head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders:\n"
    skipped, failing = tmp_path / "skipped.yaml", tmp_path / "failing.yaml"
    skipped.write_text(head + "".join(f"- {{urlPrefix: {u}, filterVerb: filter, ignorable: true}}\n" for u in urls))
    failing.write_text(head + f"- {{urlPrefix: {urls[0]}, filterVerb: filter}}\n")
    root = Path(__file__).resolve().parents[2]
    args = ["explain", str(root / "fixtures/pods/web.yaml"), "--cluster", str(root / "fixtures/small-cluster.yaml")]
    for out in ("table", "json", "yaml", "markdown"):
        res = CliRunner().invoke(app, [*args, "--config", str(failing), "-o", out], env={"COLUMNS": "300"})
        assert f"http://user0:xxxxx@127.0.0.1:{port}/s/filter" in res.output, (out, res.output)
        assert "invalid port in URL" in res.output, (out, res.output)
        assert "SUPER" not in res.output and "SECRET" not in res.output, (out, res.output)
        if out == "markdown":
            continue  # its answer does not name the extenders it skipped
        res = CliRunner().invoke(app, [*args, "--config", str(skipped), "-o", out], env={"COLUMNS": "300"})
        assert res.exit_code == 0, res.output
        for i in range(len(passwords)):  # each extender named, with its user and a masked password
            assert f"user{i}:xxxxx@127.0.0.1:{port}/s" in res.output, (out, i, res.output)
        assert "SUPER" not in res.output and "SECRET" not in res.output, (out, res.output)
        assert "invalid port" in res.output and "connection refused" in res.output, (out, res.output)


@pytest.mark.parametrize(
    "url, shown",
    [
        ("http://u:SUPER/SECRET@h:1/x", "http://u:xxxxx@h:1/x"),  # to Go: the host u, the port SUPER
        ("http://u:SUPER SECRET@h:1/x", "http://u:xxxxx@h:1/x"),
        ('http://u:SUPER"SECRET@h:1/x', "http://u:xxxxx@h:1/x"),
        ("http://u:p@ss@h:1/x", "http://u:xxxxx@h:1/x"),  # the userinfo ends at the last @, as Go parses it
        ("http://u:@h/x", "http://u:xxxxx@h/x"),  # an empty password is still a password
        ("http://u@h/x", "http://u@h/x"),  # a user alone is no secret
        ("http://h/a@b:c", "http://h/a@b:c"),  # an @ in the path is not userinfo
        ("http://h/x?access_token=abc&page=2", "http://h/x?access_token=xxxxx&page=2"),
    ],
)
def test_extender_urls_are_shown_without_their_secrets(url, shown):
    from kschedcli.config.extenders import display_url

    assert display_url(url) == shown


def _cli_config(tmp_path, url):
    p = tmp_path / "sched.yaml"
    p.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders:\n"
        f"- urlPrefix: {url}\n  filterVerb: filter\n  prioritizeVerb: prioritize\n  weight: 1\n"
        "  nodeCacheCapable: true\n"
    )
    return str(p)


def test_cli_explain_shows_the_extender_and_its_json_is_in_the_schema(servers, tmp_path):
    import jsonschema
    from typer.testing import CliRunner

    from kschedcli.cli.app import app

    root = Path(__file__).resolve().parents[2]
    ext = servers(
        {
            "filter": lambda a: {"NodeNames": a["NodeNames"][1:], "FailedNodes": {a["NodeNames"][0]: "no room here"}},
            "prioritize": lambda a: [{"Host": n, "Score": 5} for n in a["NodeNames"]],
        }
    )
    args = ["explain", str(root / "fixtures/pods/web.yaml"), "--cluster", str(root / "fixtures/prod-cluster.yaml")]
    args += ["--config", _cli_config(tmp_path, ext.url)]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    assert "Extenders" in r.output and "no room here" in r.output and "prioritize" in r.output
    r = CliRunner().invoke(app, [*args, "-o", "json"])
    doc = json.loads(r.stdout)
    schema = json.loads((root / "kschedcli/schemas/result.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert [c["verb"] for c in doc["extenders"]] == ["filter", "prioritize"]
    assert doc["filterExtenders"] == [ext.url] and doc["scoreExtenders"] == [ext.url]
    assert all(doc["scores"][n]["plugins"][ext.url]["weighted"] == 50 for n in doc["scores"])


def test_cli_no_extenders_calls_none_and_says_so(servers, tmp_path):
    from typer.testing import CliRunner

    from kschedcli.cli.app import app

    root = Path(__file__).resolve().parents[2]
    ext = servers({"filter": lambda a: {"NodeNames": []}})
    args = ["schedule", str(root / "fixtures/pods/web.yaml"), "--cluster", str(root / "fixtures/small-cluster.yaml")]
    args += ["--config", _cli_config(tmp_path, ext.url), "--no-extenders"]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert f"--no-extenders: the config's HTTP extenders were left out ({ext.url})" in r.output
    r = CliRunner().invoke(app, [*args, "-o", "json", "--detail", "full"])
    doc = json.loads(r.stdout)
    assert doc["results"][0]["extendersLeftOut"] == [
        {"extender": ext.url, "verbs": {"filter": "filter", "prioritize": "prioritize"}}
    ]
    assert ext.requests == []
    # without the flag the extender is asked, and rejects every node
    r = CliRunner().invoke(app, args[:-1], env={"COLUMNS": "200"})
    assert r.exit_code == 1 and len(ext.requests) == 1


def test_alike_pods_of_capacity_still_go_through_the_extenders(servers):
    ext = servers({"filter": lambda a: {"NodeNames": a["NodeNames"][-1:]}})
    sched = scheduler(
        [node("n1"), node("n2")], extenders=[{"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}]
    )
    for i in range(3):
        r = sched.schedule_alike(pod(f"copy-{i}", requests={"cpu": "1"}))
        assert r.selected_node == "n2"
        sched.bind(r.pod, r.selected_node)
    assert len(ext.requests) == 3


def test_cli_drain_and_diff_honour_no_extenders(servers, tmp_path):
    """--no-extenders travels to drain and diff too (they load the config through load_inputs):
    a real extender counting its requests is never asked; without the flag it is."""
    import yaml
    from test_fixes import node as node_doc
    from test_fixes import pod as pod_doc
    from typer.testing import CliRunner

    from kschedcli.cli.app import app

    ext = servers({"filter": lambda a: {"NodeNames": a["NodeNames"]}, "prioritize": lambda a: []})
    cfg = _cli_config(tmp_path, ext.url)
    bound = pod_doc("web-1", node_name="n1", labels={"app": "web"})
    bound["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u", "controller": True}
    ]
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump_all([node_doc("n1"), node_doc("n2"), node_doc("n3"), bound]))
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump(pod_doc("new")))
    runs = {
        "drain": ["drain", "n1", "--cluster", str(snap), "--config", cfg],
        "diff": ["diff", str(pods), "--cluster", str(snap), "--config", cfg, "--against-config", cfg],
    }
    for name, args in runs.items():
        r = CliRunner().invoke(app, [*args, "--no-extenders"], env={"COLUMNS": "200"})
        assert r.exit_code in (0, 1), (name, r.output)
        assert r.exception is None or isinstance(r.exception, SystemExit), (name, r.exception)
        assert ext.requests == [], name  # main: drain and diff called it
        r = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        assert r.exit_code in (0, 1), (name, r.output)
        assert ext.requests, name  # without the flag the extender is asked
        ext.requests.clear()
