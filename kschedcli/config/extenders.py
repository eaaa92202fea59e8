"""The `extenders` list of a KubeSchedulerConfiguration: read, validated and defaulted as
kube-scheduler v1.34.1 does (validation.go validateExtenders, extender.go NewHTTPExtender,
scheduler.go buildExtenders). Errors name the field; ksched reports the first."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field, replace
from typing import Any

from ..api.labels import qualified_name_errors
from ..api.resources import is_extended_resource
from ..errors import InputError
from ..masking import mask_password
from .argsvalidation import parse_go_duration

DEFAULT_TIMEOUT_S = 5.0  # DefaultExtenderTimeout, for an httpTimeout left at 0
# the most of a tlsConfig file (caFile, certFile, keyFile) ksched reads: kube-scheduler reads any
# size, and a PEM bundle of every public CA is about 250 KB
MAX_TLS_FILE_BYTES = 16 << 20

# a query parameter whose value is a credential: shown masked, like the userinfo's password
_SECRET_QUERY = re.compile(
    r"(?i)(?P<head>[?&](?:[a-z0-9]+[_-])*(?:token|password|passwd|secret|key|sig|signature|auth|credential)s?=)"
    r"[^&#]+"
)


def display_url(url: str) -> str:
    """`url` as ksched prints it: a password in its userinfo reads `xxxxx`, as Go's
    url.URL.Redacted (and so net/http's own errors) shows it, and the value of a query parameter
    named like a credential (token=, password=, sig=, ...) reads `xxxxx` too. The userinfo ends
    at the URL's last `@` (a password may hold an `@`, a `/`, a space or a quote, where Go's
    authority would end early and show the rest of it: masking.userinfo_spans)."""
    return _SECRET_QUERY.sub(lambda m: f"{m['head']}xxxxx", mask_password(url))


@dataclass(frozen=True)
class TLSConfig:
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""

    def has_ca(self) -> bool:
        return bool(self.ca_file or self.ca_data)

    def has_cert_auth(self) -> bool:
        """A client certificate: a certificate and a key, each as data or a file (HasCertAuth)."""
        return bool(self.cert_file or self.cert_data) and bool(self.key_file or self.key_data)


@dataclass(frozen=True)
class ExtenderConfig:
    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls: TLSConfig | None = None
    # seconds; None: no deadline at all (a negative httpTimeout: Go's http.Client then sets none)
    timeout: float | None = DEFAULT_TIMEOUT_S
    timeout_text: str = "5s"
    node_cache_capable: bool = False
    managed_resources: tuple[str, ...] = ()
    ignored_by_scheduler: tuple[str, ...] = ()
    ignorable: bool = False
    index: int = 0  # position in the config's list
    source: str = ""  # the KubeSchedulerConfiguration file, for errors
    # transport_tls's answer once it was given: the files are read once per configuration
    _transport_tls: list[TLSConfig | None] = field(default_factory=list, init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        """Extender.Name(): its URL prefix, as kube-scheduler names it in logs and score lists,
        with any password in it masked (`display_url`): ksched prints no credentials."""
        return display_url(self.url_prefix)

    def verbs(self) -> dict[str, str]:
        return {
            k: v
            for k, v in (
                ("filter", self.filter_verb),
                ("prioritize", self.prioritize_verb),
                ("preempt", self.preempt_verb),
                ("bind", self.bind_verb),
            )
            if v
        }


def transport_tls(cfg: ExtenderConfig) -> TLSConfig | None:
    """The TLS settings of the extender's transport, with tlsConfig's files read, as kube-scheduler
    builds them when it builds the extender (NewHTTPExtender -> makeTransport ->
    restclient.TLSConfigFor): `insecure` also when enableHTTPS is set without a CA; None (the
    transport's defaults, the system's CAs) without a CA, a client certificate, `insecure` or a
    serverName; else caFile, certFile and keyFile read in that order, each only when its *Data
    field is empty (loadTLSFiles), into the *Data fields. kube-scheduler does not start when one
    cannot be read: here an InputError naming the config file and the field.

    A file is read as the main inputs are (loader.read_bytes): a directory is refused, a FIFO is
    read once a writer opens it (`<(...)`) and refused when none does within
    FIFO_WRITER_SECONDS, a stream holding a NUL byte (/dev/zero) is refused at once, and nothing
    past MAX_TLS_FILE_BYTES is read (kube-scheduler's os.ReadFile would wait for a writer forever,
    and read /dev/zero until memory runs out). Read once per configuration, the first time the
    extender is built; a run that leaves the extenders out (--no-extenders) reads none."""
    if cfg._transport_tls:
        return cfg._transport_tls[0]
    tls = cfg.tls or TLSConfig()
    insecure = tls.insecure or (cfg.enable_https and not tls.has_ca())
    loaded: TLSConfig | None = None
    if tls.has_ca() or tls.has_cert_auth() or insecure or tls.server_name:
        loaded = replace(
            tls,
            insecure=insecure,
            ca_data=tls.ca_data or _read_tls_file(cfg, "caFile", tls.ca_file),
            cert_data=tls.cert_data or _read_tls_file(cfg, "certFile", tls.cert_file),
            key_data=tls.key_data or _read_tls_file(cfg, "keyFile", tls.key_file),
        )
    cfg._transport_tls.append(loaded)
    return loaded


def _read_tls_file(cfg: ExtenderConfig, key: str, path: str) -> bytes:
    if not path:
        return b""
    from ..loader.sources import read_bytes  # the loader only for a config that names such a file

    try:
        return read_bytes(path, MAX_TLS_FILE_BYTES, text="PEM", what="a TLS certificate, key or CA file")
    except InputError as e:
        raise InputError(
            f"{path}: {e.message}", source=cfg.source, field=f"extenders[{cfg.index}].tlsConfig.{key}"
        ) from None


def _go_value(v: Any) -> str:
    """field.Invalid's value as Go prints it: strings quoted, numbers bare."""
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _bytes(v: Any, source: str, fld: str) -> bytes:
    if not v:
        return b""
    try:
        return base64.b64decode(v, validate=True)
    except (ValueError, TypeError):
        raise InputError("illegal base64 data", source=source, field=fld) from None


def _tls(raw: dict | None, source: str, fld: str) -> TLSConfig | None:
    if raw is None:
        return None
    return TLSConfig(
        insecure=bool(raw.get("insecure")),
        server_name=raw.get("serverName") or "",
        cert_file=raw.get("certFile") or "",
        key_file=raw.get("keyFile") or "",
        ca_file=raw.get("caFile") or "",
        cert_data=_bytes(raw.get("certData"), source, f"{fld}.certData"),
        key_data=_bytes(raw.get("keyData"), source, f"{fld}.keyData"),
        ca_data=_bytes(raw.get("caData"), source, f"{fld}.caData"),
    )


def parse_extenders(raw_list: list | None, source: str) -> list[ExtenderConfig]:
    """The configured extenders, validated, in kube-scheduler's calling order: the ignorable
    ones moved after the others (buildExtenders), each group in config order."""
    out: list[ExtenderConfig] = []
    binders = 0
    seen_resources: set[str] = set()
    for i, raw in enumerate(raw_list or []):
        path = f"extenders[{i}]"

        def err(sub: str, msg: str, _path: str = path) -> InputError:
            return InputError(msg, source=source, field=f"{_path}.{sub}" if sub else _path)

        weight = int(raw.get("weight") or 0)
        prioritize = raw.get("prioritizeVerb") or ""
        if prioritize and weight <= 0:
            raise err("weight", f"Invalid value: {weight}: must have a positive weight applied to it")
        if raw.get("bindVerb"):
            binders += 1
        managed: list[str] = []
        ignored: list[str] = []
        for j, mr in enumerate(raw.get("managedResources") or []):
            name = mr.get("name") or ""
            fld = f"managedResources[{j}].name"
            problems = qualified_name_errors(name)
            if problems:
                raise err(fld, f"Invalid value: {_go_value(name)}: {problems[0]}")
            if not is_extended_resource(name):
                raise err(fld, f"Invalid value: {_go_value(name)}: is an invalid extended resource name")
            if name in seen_resources:
                raise err(fld, f"Invalid value: {_go_value(name)}: duplicate extender managed resource name")
            seen_resources.add(name)
            managed.append(name)
            if mr.get("ignoredByScheduler"):
                ignored.append(name)
        timeout_text = raw.get("httpTimeout")
        timeout: float | None = DEFAULT_TIMEOUT_S
        if timeout_text:
            ns = parse_go_duration(timeout_text)
            if ns is None:
                raise err("httpTimeout", f"time: invalid duration {_go_value(timeout_text)}")
            if ns < 0:
                timeout = None
            elif ns > 0:
                timeout = ns / 1e9
            else:
                timeout_text = ""  # 0: DefaultExtenderTimeout
        tls = _tls(raw.get("tlsConfig"), source, f"{path}.tlsConfig")
        if tls is not None and tls.insecure and tls.has_ca():
            # restclient.TLSConfigFor refuses it when kube-scheduler builds the extender
            raise err("tlsConfig", "specifying a root certificates file with the insecure flag is not allowed")
        out.append(
            ExtenderConfig(
                url_prefix=raw.get("urlPrefix") or "",
                filter_verb=raw.get("filterVerb") or "",
                preempt_verb=raw.get("preemptVerb") or "",
                prioritize_verb=prioritize,
                bind_verb=raw.get("bindVerb") or "",
                weight=weight,
                enable_https=bool(raw.get("enableHTTPS")),
                tls=tls,
                timeout=timeout,
                timeout_text=timeout_text or "5s",
                node_cache_capable=bool(raw.get("nodeCacheCapable")),
                managed_resources=tuple(managed),
                ignored_by_scheduler=tuple(ignored),
                ignorable=bool(raw.get("ignorable")),
                index=i,
                source=source,
            )
        )
    if binders > 1:
        raise InputError(
            f'Invalid value: "found {binders} extenders implementing bind": only one extender can implement bind',
            source=source,
            field="extenders",
        )
    return [e for e in out if not e.ignorable] + [e for e in out if e.ignorable]


def ignored_resources(extenders: list[ExtenderConfig]) -> list[str]:
    """The extended resources NodeResourcesFit must ignore (ignoredByScheduler), in config order."""
    return [r for e in sorted(extenders, key=lambda e: e.index) for r in e.ignored_by_scheduler]
