#!/usr/bin/env python3
"""Write kschedcli/schemas/fieldtrees.json: the field tree of every struct of the Kubernetes API
groups ksched reads, taken from the real Go types (k8s.io/api, k8s.io/apimachinery meta/v1).

Usage: scripts/gen_field_trees.py GIT_DIR [REV]
GIT_DIR: a git directory holding a vendor/ tree with those packages (the kubernetes-sigs/cluster-capacity
snapshot does); nothing of it is copied but each struct's JSON field names and Go types.

Output: {"types": {Name: {jsonField: typeExpr}}, "aliases": {Name: typeExpr}, "kinds": {Kind: Name}}
where typeExpr is a Go type with package qualifiers dropped: `string`, `int32`, `*PodSpec`,
`[]Container`, `map[string]string`, `Quantity`, ...
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SOURCES = [  # (path under vendor/, package name)
    ("k8s.io/apimachinery/pkg/apis/meta/v1/types.go", "metav1"),
    ("k8s.io/api/core/v1/types.go", "corev1"),
    ("k8s.io/api/apps/v1/types.go", "appsv1"),
    ("k8s.io/api/batch/v1/types.go", "batchv1"),
    ("k8s.io/api/policy/v1/types.go", "policyv1"),
    ("k8s.io/api/scheduling/v1/types.go", "schedulingv1"),
    ("k8s.io/api/storage/v1/types.go", "storagev1"),
    # the scheduler's config file and its plugins' args (strictly decoded by kube-scheduler)
    ("k8s.io/component-base/config/v1alpha1/types.go", "componentbaseconfigv1alpha1"),
    ("k8s.io/kube-scheduler/config/v1/types.go", "configv1"),
    ("k8s.io/kube-scheduler/config/v1/types_pluginargs.go", "configv1"),
]
# kinds users hand in or snapshots hold, with their struct
KINDS = [
    "Pod",
    "Node",
    "Namespace",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Service",
    "ReplicationController",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
    "PodDisruptionBudget",
    "PriorityClass",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "KubeSchedulerConfiguration",
]

_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
_ALIAS = re.compile(r"^type (\w+) =? ?([\w.\[\]*]+(?:\[[\w.]+\][\w.*]+)?)\s*$", re.M)
_FIELD = re.compile(r'^\t(?:(\w+)\s+)?([\w.\[\]*]+(?:\[[\w.]+\][\w.*\[\]]+)?)\s+`json:"([^"]*)"')


def _strip_packages(t: str) -> str:
    return re.sub(r"\b\w+\.", "", t)


def parse(text: str, types: dict, aliases: dict) -> None:
    for m in _ALIAS.finditer(text):
        name, target = m.group(1), _strip_packages(m.group(2))
        if target != "struct":
            aliases.setdefault(name, target)
    for m in _STRUCT.finditer(text):
        name, body = m.group(1), m.group(2)
        fields: dict[str, str] = {}
        for line in body.splitlines():
            f = _FIELD.match(line)
            if f is None:
                continue
            typ, tag = _strip_packages(f.group(2)), f.group(3)
            json_name = tag.split(",")[0]
            if json_name == "-":
                continue
            if not json_name:  # an embedded struct without a name of its own: its fields are inline
                fields.setdefault("...", [])  # type: ignore[arg-type]
                fields["..."].append(typ.lstrip("*"))  # type: ignore[attr-defined]
                continue
            fields[json_name] = typ
        types.setdefault(name, fields)


def main() -> None:
    git_dir = sys.argv[1]
    rev = sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    types: dict = {}
    aliases: dict = {}
    for path, _ in SOURCES:
        text = subprocess.run(
            ["git", "-C", git_dir, "show", f"{rev}:vendor/{path}"], check=True, capture_output=True, text=True
        ).stdout
        parse(text, types, aliases)

    # inline structs flattened into their holders
    def flat(name: str, seen: frozenset = frozenset()) -> dict:
        fields = dict(types.get(name, {}))
        for inner in fields.pop("...", []):
            if inner in seen:
                continue
            for k, v in flat(inner, seen | {name}).items():
                fields.setdefault(k, v)
        return fields

    out_types = {name: flat(name) for name in sorted(types)}
    out = {
        "source": "k8s.io/api and k8s.io/apimachinery meta/v1, vendored in kubernetes-sigs/cluster-capacity",
        "types": out_types,
        "aliases": {k: v for k, v in sorted(aliases.items()) if k not in types},
        "kinds": {k: k for k in KINDS if k in types},
    }
    dest = Path(__file__).resolve().parent.parent / "kschedcli" / "schemas" / "fieldtrees.json"
    dest.write_text(json.dumps(out, indent=0, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{dest}: {len(out_types)} types, {len(out['aliases'])} aliases, {len(out['kinds'])} kinds")


if __name__ == "__main__":
    main()
