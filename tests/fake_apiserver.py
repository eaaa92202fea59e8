"""A local HTTP server that answers like a Kubernetes API server for what `kubectl get KINDS -A -o json`
asks: legacy discovery (/api, /apis, each group version's resources) and one list per resource, served
from a list of objects, and /version. `forbid` names resources answered with 403 as RBAC does;
`without` names API groups the server does not serve (an older cluster: no resource.k8s.io/v1);
`version` is the server's gitVersion (None: no /version, as a server that hides it); `delay` makes the
list of nodes answer that many seconds late (for kubectl's --request-timeout; kubectl goes on to the
other kinds, so one slow list keeps the test short); `tls` serves https with a self-signed certificate
(kubectl runs exec credential plugins only for https); `dra_version` the version resource.k8s.io is served
at (v1beta1 on v1.33); `endless` names a kind whose list always
carries a `continue` token; `garbage` a kind whose list is cut in half (not JSON)."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# (group, version, plural, kind, namespaced, short names) for the kinds ksched reads
RESOURCES = [
    ("", "v1", "nodes", "Node", False, ["no"]),
    ("", "v1", "pods", "Pod", True, ["po"]),
    ("", "v1", "persistentvolumes", "PersistentVolume", False, ["pv"]),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ["pvc"]),
    ("", "v1", "namespaces", "Namespace", False, ["ns"]),
    ("", "v1", "services", "Service", True, ["svc"]),
    ("", "v1", "replicationcontrollers", "ReplicationController", True, ["rc"]),
    ("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ["pdb"]),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ["sc"]),
    ("storage.k8s.io", "v1", "csinodes", "CSINode", False, []),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, []),
    ("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ["pc"]),
    ("apps", "v1", "replicasets", "ReplicaSet", True, ["rs"]),
    ("apps", "v1", "statefulsets", "StatefulSet", True, ["sts"]),
    ("apps", "v1", "deployments", "Deployment", True, ["deploy"]),
    ("apps", "v1", "daemonsets", "DaemonSet", True, ["ds"]),
    ("batch", "v1", "jobs", "Job", True, []),
    ("batch", "v1", "cronjobs", "CronJob", True, ["cj"]),
    ("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True, []),
    ("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, []),
    ("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, []),
    ("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False, []),
    ("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, []),
]


def _group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


class FakeAPIServer:
    def __init__(
        self,
        objects: list[dict],
        forbid: str | tuple[str, ...] = (),
        delay: float = 0.0,
        without: tuple[str, ...] = (),
        version: str | None = None,
        tls: bool = False,
        endless: str | None = None,
        dra_version: str = "v1",
        garbage: str | None = None,
    ):
        self.objects = objects
        self.forbid = (forbid,) if isinstance(forbid, str) else tuple(forbid)
        self.delay = delay
        self.resources = [
            (g, dra_version if g == "resource.k8s.io" else v, *rest) for g, v, *rest in RESOURCES if g not in without
        ]
        self.version = version
        self.endless = endless
        self.garbage = garbage
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                server.requests.append(self.path)
                status, body = server.answer(self.path.split("?")[0])
                if body.get("kind") == "NodeList" and server.delay:
                    time.sleep(server.delay)
                if server.endless and body.get("kind") == f"{server.endless}List":
                    # a `continue` token that never ends: every page names a next one
                    body["metadata"]["continue"] = f"page-{len(server.requests)}"
                data = json.dumps(body).encode()
                if server.garbage and body.get("kind") == f"{server.garbage}List":
                    data = data[: len(data) // 2]
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        scheme = "http"
        if tls:  # kubectl runs a kubeconfig's exec credential plugin only for an https server
            self._certs = tempfile.TemporaryDirectory()
            cert, key = (os.path.join(self._certs.name, n) for n in ("cert.pem", "key.pem"))
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
                + ["-keyout", key, "-out", cert],
                check=True,
                capture_output=True,
            )
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeAPIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path: str) -> tuple[int, dict]:
        if path == "/version" and self.version:
            major, minor = self.version.lstrip("v").split(".")[:2]
            return 200, {"major": major, "minor": minor, "gitVersion": self.version, "platform": "linux/amd64"}
        if path == "/api":
            return 200, {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}],
            }
        if path == "/apis":
            groups = sorted({(g, v) for g, v, *_ in self.resources if g})
            return 200, {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [
                    {
                        "name": g,
                        "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                        "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v},
                    }
                    for g, v in groups
                ],
            }
        for group, version, plural, kind, _namespaced, _short in self.resources:
            gv = _group_version(group, version)
            prefix = f"/api/{gv}" if not group else f"/apis/{gv}"
            if path == prefix:
                return 200, {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": gv,
                    "resources": [
                        {
                            "name": p,
                            "singularName": k.lower(),
                            "namespaced": n,
                            "kind": k,
                            "shortNames": s,
                            "verbs": ["get", "list", "watch"],
                        }
                        for g, v, p, k, n, s in self.resources
                        if _group_version(g, v) == gv
                    ],
                }
            if path == f"{prefix}/{plural}":
                if plural in self.forbid:
                    return 403, {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "reason": "Forbidden",
                        "code": 403,
                        "details": {"group": group, "kind": plural},
                        "message": f'{plural}{"." + group if group else ""} is forbidden: User "jane" '
                        f'cannot list resource "{plural}" in API group "{group}" at the '
                        "cluster scope",
                    }
                items = [dict(o, apiVersion=gv) for o in self.objects if o.get("kind") == kind]
                return 200, {
                    "kind": f"{kind}List",
                    "apiVersion": gv,
                    "metadata": {"resourceVersion": "1"},
                    "items": items,
                }
        return 404, {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "reason": "NotFound",
            "code": 404,
            "message": "the server could not find the requested resource",
        }
