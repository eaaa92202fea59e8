"""Scenario files: one checked-in file holding a what-if — the snapshot, the config, the cluster
edits and the pods to schedule — run by `ksched run scenario.yaml`.

    apiVersion: ksched.io/v1alpha1
    kind: Scenario
    metadata: {name: lose-zone-a}
    cluster: [prod-cluster.yaml]          # snapshot files, relative to this file; optional:
                                          #   without it, the live cluster kubectl points at
    config: most-allocated.yaml           # optional KubeSchedulerConfiguration file
    edits:                                # the --add-node, --cordon... flags, in order
    - cordon: topology.kubernetes.io/zone=us-east-1a
    - addNode: general-b-01:2
    pods:                                 # optional: files, or Pods and workloads inline;
    - pods/rollout.yaml                   #   default: the snapshot's pending pods
    order: priority                       # or file
    sampling: true                        # optional: node sampling as kube-scheduler's (docs/sampling.md)
    startIndex: 0                         #   its next start index before the first cycle

The file is validated against schemas/scenario.schema.json (`ksched schema --scenario`); its edits
become the same edits.Edit values the flags do and go through the same edits.apply_edits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, cut
from ..loader import iter_objects

API_VERSION = "ksched.io/v1alpha1"


@dataclass
class Scenario:
    path: str
    name: str
    cluster: list[str]
    config: str | None
    edits: list  # list[edits.Edit]
    pod_files: list[str] = field(default_factory=list)
    inline_pods: list[tuple[dict, str]] = field(default_factory=list)  # (object, where)
    order: str = "priority"
    kubernetes_version: str | None = None  # as --kubernetes-version; the flag wins
    sampling: bool = False  # node sampling as kube-scheduler does it (scheduling/sampling.py)
    start_index: int = 0


def _schema() -> dict:
    import json
    from importlib import resources

    return json.loads(resources.files("kschedcli.schemas").joinpath("scenario.schema.json").read_text("utf-8"))


def scenario_schema_text() -> str:
    from importlib import resources

    text = resources.files("kschedcli.schemas").joinpath("scenario.schema.json").read_text("utf-8")
    return text if text.endswith("\n") else text + "\n"


_EXPECTED = {
    "string": "a string",
    "array": "a list",
    "object": "an object",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "a boolean",
}


def _schema_message(e: Any) -> str:
    """A JSON Schema error of a scenario file in ksched's words (JSON's names for values, the
    fields named), not the validator's Python reprs."""
    from ..api.fieldtree import _describe, did_you_mean

    v = e.instance
    if e.validator == "type" and isinstance(e.validator_value, str):
        got = "null" if v is None else _describe(v)
        return f"expected {_EXPECTED.get(e.validator_value, e.validator_value)}, got {got}"
    if e.validator == "additionalProperties" and isinstance(v, dict):
        known = list(e.schema.get("properties") or {})
        extra = [cut(k, quote=False) for k in v if k not in known]
        hint = did_you_mean(extra[0], known) if len(extra) == 1 else ""
        if hint:
            return f"unknown field {extra[0]}{hint}"
        return f"unknown field {', '.join(extra)}: expected one of {', '.join(known)}"
    if e.validator == "maxProperties" and isinstance(v, dict):
        return f"one key per item, found {len(v)}: {', '.join(cut(k, quote=False) for k in v)}"
    if e.validator == "minProperties" and isinstance(v, dict):
        return "an empty item: expected one key"
    if e.validator == "minLength" and v == "":
        return "must not be empty"
    return e.message


def _location(path: list) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "(root)"


def load_scenario(path: str) -> Scenario:
    """The scenario in `path`, validated; its file paths made relative to the scenario's folder."""
    from .edits import EDIT_FLAGS, Edit, add_node_file

    docs = list(iter_objects(path, as_kubectl=True))
    if len(docs) != 1:
        raise InputError(f"expected one Scenario document, found {len(docs)}", source=path)
    doc, where = docs[0]
    if where.startswith("items["):  # a List's item: the file is a List, not the Scenario itself
        raise InputError(
            "expected one Scenario document, found a List (a scenario file holds the Scenario itself)",
            source=path,
            field="kind",
        )
    kind = doc.get("kind")
    if kind != "Scenario":
        raise InputError(
            f"expected kind Scenario, found {cut(kind) if isinstance(kind, str) else repr(kind)}",
            source=path,
            field="kind",
        )
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(_schema()).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        raise InputError(_schema_message(errors[0]), source=path, field=_location(list(errors[0].absolute_path)))
    start = doc.get("startIndex")
    if start is not None and type(start) is not int:  # JSON Schema's integer takes 1e9 (a float) too
        raise InputError(f"{start!r} is not a whole number written as one (as 7)", source=path, field="startIndex")
    base = os.path.dirname(path) if path != "-" else ""

    def rel(p: str) -> str:
        return p if p == "-" or os.path.isabs(p) else os.path.join(base, p)

    flag_of = {key: flag for flag, key in EDIT_FLAGS.items()}
    edits = []
    for item in doc.get("edits") or []:
        [(key, value)] = item.items()
        if flag_of[key] == "--add-node":
            # a file as --add-node takes one (edits.add_node_file), relative to this file's folder
            file = add_node_file(value, lambda p: os.path.isfile(rel(p)))
            if file is not None:
                value = ("@" if value.startswith("@") else "") + rel(file)
        edits.append(Edit(flag_of[key], value))
    pod_files: list[str] = []
    inline: list[tuple[dict, str]] = []
    for i, p in enumerate(doc.get("pods") or []):
        if isinstance(p, str):
            pod_files.append(rel(p))
        else:
            inline.append((p, f"pods[{i}]"))
    config = doc.get("config")
    return Scenario(
        path=path,
        name=((doc.get("metadata") or {}).get("name") or ""),
        cluster=[rel(c) for c in doc.get("cluster") or []],
        config=rel(config) if config else None,
        edits=edits,
        pod_files=pod_files,
        inline_pods=inline,
        order=doc.get("order") or "priority",
        kubernetes_version=doc.get("kubernetesVersion"),
        sampling=bool(doc.get("sampling")),
        start_index=doc.get("startIndex") or 0,
    )


def scenario_pods(s: Scenario, cluster: Any) -> Any:
    """The scenario's pods as a workloads.Expansion: Pods as they are, workloads (Deployment,
    StatefulSet, DaemonSet, Job...) as their controllers would create them, files first, then the
    objects written inline; None when it names none (the snapshot's pending pods are scheduled
    then)."""
    from ..workloads.expansion import Expansion, load_workloads, pods_for_workloads

    if not s.pod_files and not s.inline_pods:
        return None
    parts = [load_workloads(f, cluster) for f in s.pod_files]
    if s.inline_pods:
        parts.append(pods_for_workloads([(obj, s.path, where) for obj, where in s.inline_pods], cluster))
    merged = Expansion()
    for part in parts:
        merged.pods.extend(part.pods)
        merged.workloads.extend(part.workloads)
        merged.origin.update(part.origin)
        merged.ignored.update(part.ignored)
        merged.added.update(part.added)
    return merged
