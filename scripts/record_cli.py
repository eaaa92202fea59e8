#!/usr/bin/env python3
"""Record what the `ksched` command prints, to compare two trees (issue 30: "no change in behaviour").

    python scripts/record_cli.py record OUTDIR [--jobs 2] [--only SUBSTRING] [--ksched PATH]
    python scripts/record_cli.py compare DIR_A DIR_B [--lines 60]    # exit 1 on any difference
    python scripts/record_cli.py list                                # the invocations, expanded
    python scripts/record_cli.py show DIR ID                         # one record, as text

`record` runs every row of INVOCATIONS below (each at every width its row names) with the `ksched`
installed next to this Python (or --ksched), from the checkout this script is in, and writes one
JSON file per invocation under OUTDIR/records/ (its command lines, and per step the exit status,
stdout and stderr), OUTDIR/meta.json (what was run: commit, ksched version, the input files'
digests) and OUTDIR/timings.json (not compared). `compare` prints the invocations whose exit
status, stdout or stderr differ, with a unified diff of each, and exits 1 if there is any.

Every invocation gets a clean environment: COLUMNS fixed (80 or 120), NO_COLOR=1, TZ=UTC,
LC_ALL=C.UTF-8, TERM=dumb, HOME and TMPDIR in a temporary folder of its own, PATH holding no
kubectl (a fake kubectl where a row asks for one), KSCHED_NO_CACHE=1 unless the row uses a cache;
stdin is /dev/null unless the row gives a file. (typer's --install-completion and --show-completion
would guess the shell from the process tree: their rows turn the guess off and name the shell.) Paths that change from run to run (that temporary
folder, the checkout, the cache folder, the local extender's port) are replaced in the outputs by
$TMP, $ROOT, $CACHE and $EXTPORT.

Inputs: the fixtures in fixtures/, files written by the rows (`files`), and the 500-node reference
snapshot `genbig.py --nodes 500 --pods 15000 --pending 1000 --seed 1` written to
bench-data/genbig-500/ (gitignored; generated when missing, by ../shared/bench/genbig.py or
--genbig / $KSCHED_GENBIG), with files cut from its pods.yaml in bench-data/record-500/.

Rows on the 500-node snapshot read it through a cache of parsed snapshots shared by the run (filled
once before the rows, and waited for), so that each does not parse 74 MB again; the output is the
same either way except under -v, and rows with -v parse (cache "off").
"""

# ruff: noqa: E501
# (the table of invocations below is kept one row a line)
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import difflib
import fcntl
import hashlib
import json
import os
import pty
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIG = "bench-data/genbig-500"  # $BIG: genbig.py's folder
DER = "bench-data/record-500"  # $DER: files cut from its pods.yaml
GENBIG_ARGS = {"nodes": 500, "pods": 15000, "pending": 1000, "seed": 1}
CATEGORIES = ("plain", "spread", "anti", "spread-anti", "pool", "preempt")

T = (80, 120)  # views that wrap: recorded at both widths
W = (120,)  # width-independent output (JSON, YAML, names, errors): one width

# Files some rows write into their own temporary folder ($TMP/NAME); $ROOT and $EXT are replaced by the
# checkout's path and the local test extender's URL before writing.
TYPO_POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  nodeSelecter: {disk: ssd}
  containers: [{name: c, image: nginx}]
"""
BOOL_POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  nodeSelector: {gpu: y}
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""
BAD_QTY_POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: -1}}}]
"""
KIND_TYPO = """apiVersion: apps/v1
kind: Deploymnet
metadata: {name: d, namespace: default}
"""
NOT_YAML = "apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n"
BIG_POD = """apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: shop}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "64", memory: 512Gi}}}]
"""
SELECTOR_POD = """apiVersion: v1
kind: Pod
metadata: {name: picky, namespace: shop}
spec:
  nodeSelector: {pool: highmem}
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
"""
PORTS_POD = """apiVersion: v1
kind: Pod
metadata: {name: ported, namespace: shop, labels: {app: ported}}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
  containers:
  - name: c
    image: nginx
    ports: [{containerPort: 8080, hostPort: 8080}]
    resources: {requests: {cpu: 250m, memory: 256Mi}}
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash]}
      containers:
      - name: nginx
        image: nginx:1.27
        resources: {requests: {cpu: 500m, memory: 512Mi}}
"""
NOMINATED = """apiVersion: v1
kind: Pod
metadata: {name: cache-b-84m9m, namespace: shop, labels: {app: cache}}
spec:
  priorityClassName: business-critical
  containers: [{name: c, image: redis, resources: {requests: {cpu: "6", memory: 4Gi}}}]
status: {phase: Pending, nominatedNodeName: general-a-02}
"""
NEW_NODES = """apiVersion: v1
kind: Node
metadata:
  name: big-a-01
  labels: {kubernetes.io/hostname: big-a-01, topology.kubernetes.io/zone: us-east-1a, pool: general}
status:
  allocatable: {cpu: "32", memory: 128Gi, pods: "110", ephemeral-storage: 100Gi}
  capacity: {cpu: "32", memory: 128Gi, pods: "110", ephemeral-storage: 100Gi}
"""
BAD_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profilez: []
"""
SELECTOR_SPREAD = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: SelectorSpread
"""
EXTENDER = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: $EXT
  filterVerb: filter
  prioritizeVerb: prioritize
  preemptVerb: preempt
  weight: 2
  nodeCacheCapable: true
"""
EXTENDER_OBJECTS = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: $EXT
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
"""
EXTENDER_DOWN = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:9/down
  filterVerb: filter
  ignorable: IGNORABLE
"""
EXTENDER_500 = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: $EXT
  filterVerb: fail
"""
EXTENDER_BAD = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:9/x
  prioritizeVerb: prioritize
  weight: 0
"""
SCENARIO = """apiVersion: ksched.io/v1alpha1
kind: Scenario
metadata: {name: every-edit}
cluster: [$ROOT/fixtures/prod-cluster.yaml]
config: $ROOT/fixtures/config/profiles.yaml
edits:
- addNode: general-b-01:2
- removeNode: gpu-b-01
- cordon: general-a-03
- uncordon: general-c-05
- taint: highmem-a-01:workload-
- label: general-c-01:disk=ssd
- evict: shop/web-7d9f8b6c5d-06wc
pods:
- $ROOT/fixtures/pods/rollout.yaml
- apiVersion: v1
  kind: Pod
  metadata: {name: inline, namespace: shop}
  spec:
    nodeSelector: {disk: ssd}
    containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
"""
BAD_SCENARIO = """apiVersion: ksched.io/v1alpha1
kind: Scenario
cluster: [$ROOT/fixtures/prod-cluster.yaml]
edits:
- cordn: general-a-01
"""
BIG_SCENARIO = """apiVersion: ksched.io/v1alpha1
kind: Scenario
metadata: {name: big}
cluster: [../genbig-500/cluster.json]
edits:
- cordon: node-pool=memory-optimized
- addNode: ip-10-0-150-178.ec2.internal:3
pods: [pods-50.yaml]
"""

P = "fixtures/prod-cluster.yaml"
S = "fixtures/small-cluster.yaml"
PODS = "fixtures/pods"
DRA = "-c fixtures/dra/cluster.yaml"
BJ = "-c $BIG/cluster.json"
BP = "-c $BIG/cluster.json -c $DER/pods-50.yaml"  # the snapshot with 50 pending pods in it
N1 = "ip-10-0-150-178.ec2.internal"  # the 500-node snapshot's first node (general pool, us-east-1a)

# The table: (id, widths, command line(s), extras). A command line is what follows `ksched`, split as
# the shell would; several (a tuple) run in turn in the same $TMP and environment, with the steps
# "@wait-cache" (until the cache folder holds an entry) and "@sha256 FILE". Extras: stdin (a file),
# files ({name: text}, written to $TMP), env (added), cache ("off": KSCHED_NO_CACHE=1, the default
# for the fixtures; "fresh": an empty cache in $TMP; "shared": the run's, the default for rows on
# $BIG), kubectl (the fake kubectl's mode, first on PATH), server (the API server version it reports),
# prog ("kubectl-ksched"), tty (stdout a pseudo-terminal, colours on).
# fmt: off
INVOCATIONS: list[tuple[str, tuple[int, ...], str | tuple[str, ...], dict[str, Any]]] = [
    # -- help, version, schema, completion --------------------------------------------------------
    ("help", T, "--help", {}),
    ("help-short", W, "-h", {}),
    ("no-command", W, "", {}),
    ("version", W, "version", {}),
    ("version-flag", W, "--version", {}),
    ("help-explain", T, "explain --help", {}),
    ("help-schedule", T, "schedule --help", {}),
    ("help-capacity", T, "capacity --help", {}),
    ("help-preempt", T, "preempt --help", {}),
    ("help-drain", T, "drain --help", {}),
    ("help-diff", T, "diff --help", {}),
    ("help-run", T, "run --help", {}),
    ("help-schema", W, "schema -h", {}),
    ("help-completion", W, "completion -h", {}),
    ("help-version", W, "version -h", {}),
    ("help-cache", W, "cache --help", {}),
    ("help-cache-info", W, "cache info --help", {}),
    ("help-cache-clear", W, "cache clear --help", {}),
    ("unknown-command", W, "explian", {}),
    ("schema", W, "schema", {}),
    ("schema-scenario", W, "schema --scenario", {}),
    ("completion-bash", W, "completion bash", {}),
    ("completion-zsh", W, "completion zsh", {}),
    ("completion-fish", W, "completion fish", {}),
    ("completion-bad-shell", W, "completion tcsh", {}),
    ("show-completion", W, "--show-completion bash", {"env": {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}}),
    ("complete-commands", W, "", {"env": {"_KSCHED_COMPLETE": "complete_bash", "COMP_WORDS": "ksched ", "COMP_CWORD": "1"}}),
    ("complete-options", W, "", {"env": {"_KSCHED_COMPLETE": "complete_bash", "COMP_WORDS": "ksched explain --a", "COMP_CWORD": "2"}}),
    ("complete-node", W, "", {"env": {"_KSCHED_COMPLETE": "complete_bash", "COMP_WORDS": f"ksched explain x.yaml -c {P} --node gen", "COMP_CWORD": "6",}}),
    ("complete-profile", W, "", {"env": {"_KSCHED_COMPLETE": "complete_bash", "COMP_WORDS": "ksched explain x.yaml --config fixtures/config/profiles.yaml --profile ", "COMP_CWORD": "6",}}),
    ("complete-pending-pod", W, "", {"env": {"_KSCHED_COMPLETE": "complete_bash", "COMP_WORDS": f"ksched explain --cluster {P} ", "COMP_CWORD": "4",}}),
    ("complete-pod-prefix", W, "", {"env": {"_KSCHED_COMPLETE": "complete_bash", "COMP_WORDS": f"ksched preempt -c {P} batch/", "COMP_CWORD": "4",}}),
    ("complete-zsh", W, "", {"env": {"_KSCHED_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": f"ksched schedule -c {P} --order "}}),
    ("complete-fish", W, "", {"env": {"_KSCHED_COMPLETE": "complete_fish", "_TYPER_COMPLETE_FISH_ACTION": "get-args", "_TYPER_COMPLETE_ARGS": "ksched explain --no",}}),
    ("complete-big-node", W, "", {"env": {"_KSCHED_COMPLETE": "complete_bash", "COMP_WORDS": "ksched explain x.yaml -c $BIG/cluster.json --node ip-10-0-1", "COMP_CWORD": "6",}}),
    ("install-completion", W, ("--install-completion bash", "@sha256 $TMP/.bash_completions/ksched.sh"), {"env": {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}}),
    # -- explain on the fixtures ----------------------------------------------------------------------
    ("explain-web-small", T, f"explain {PODS}/web.yaml --cluster {S}", {}),
    ("explain-web-small-json", W, f"explain {PODS}/web.yaml -c {S} -o json", {}),
    ("explain-web-small-json-80", (80,), f"explain {PODS}/web.yaml -c {S} -o json", {}),
    ("explain-web-small-yaml", W, f"explain {PODS}/web.yaml -c {S} -o yaml", {}),
    ("explain-web", T, f"explain {PODS}/web.yaml -c {P}", {}),
    ("explain-web-json", W, f"explain {PODS}/web.yaml -c {P} -o json", {}),
    ("explain-checkout-top5", T, f"explain {PODS}/checkout.yaml -c {P} --top 5", {}),
    ("explain-checkout-raw", T, f"explain {PODS}/checkout.yaml -c {P} --raw --top 0", {}),
    ("explain-reporting", T, f"explain {PODS}/reporting.yaml -c {P}", {}),
    ("explain-reporting-json", W, f"explain {PODS}/reporting.yaml -c {P} -o json", {}),
    ("explain-reporting-yaml", W, f"explain {PODS}/reporting.yaml -c {P} -o yaml", {}),
    ("explain-reporting-all-nodes", T, f"explain {PODS}/reporting.yaml -c {P} --all-nodes", {}),
    ("explain-reporting-fixes5", T, f"explain {PODS}/reporting.yaml -c {P} --fixes 5", {}),
    ("explain-reporting-fixes0", T, f"explain {PODS}/reporting.yaml -c {P} --fixes 0", {}),
    ("explain-payments", T, f"explain {PODS}/payments.yaml -c {P}", {}),
    ("explain-payments-json", W, f"explain {PODS}/payments.yaml -c {P} -o json", {}),
    ("explain-payments-allow", W, f"explain {PODS}/payments.yaml -c {P} --allow-preemption -o json", {}),
    ("explain-payments-node", T, f"explain {PODS}/payments.yaml -c {P} --node general-a-01", {}),
    ("explain-payments-node-gpu", T, f"explain {PODS}/payments.yaml -c {P} --node gpu-a-01", {}),
    ("explain-node-unknown", W, f"explain {PODS}/payments.yaml -c {P} --node nosuch", {}),
    ("explain-spread", T, f"explain {PODS}/web-spread.yaml -c {P}", {}),
    ("explain-spread-json", W, f"explain {PODS}/web-spread.yaml -c {P} -o json", {}),
    ("explain-affinity", T, f"explain {PODS}/cart.yaml -c {P}", {}),
    ("explain-affinity-json", W, f"explain {PODS}/cart.yaml -c {P} -o json", {}),
    ("explain-affinity-node", T, f"explain {PODS}/cart.yaml -c {P} --node general-b-02", {}),
    ("explain-by-name", T, f"explain shop/checkout-6b8c9d7f5-h2j4k -c {P}", {}),
    ("explain-by-name-n", W, f"explain -n batch reporting-28391745-x7k2q -c {P} -o json", {}),
    ("explain-by-name-missing", W, f"explain shop/nosuch -c {P}", {}),
    ("explain-f", W, f"explain -f {PODS}/web.yaml -c {S} -o json", {}),
    ("explain-stdin", T, f"explain - -c {P}", {"stdin": f"{PODS}/cart.yaml"}),
    ("explain-stdin-cluster", W, f"explain {PODS}/web.yaml -c - -o json", {"stdin": S}),
    ("explain-stdin-twice", W, "explain - -c -", {"stdin": S}),
    ("explain-profile", T, f"explain {PODS}/checkout.yaml -c {P} --config fixtures/config/profiles.yaml --profile bin-packing", {}),
    ("explain-profile-unknown", W, f"explain {PODS}/checkout.yaml -c {P} --config fixtures/config/profiles.yaml --profile nope", {}),
    ("explain-most-allocated", W, f"explain {PODS}/checkout.yaml -c {P} --config fixtures/config/most-allocated.yaml -o json", {}),
    ("explain-seed", W, f"explain {PODS}/web.yaml -c {P} --seed 7 -o json", {}),
    ("explain-seed-table", T, f"explain {PODS}/checkout.yaml -c {P} --seed 3", {}),
    ("explain-v133", T, f"explain {PODS}/reporting.yaml -c {P} --kubernetes-version v1.33", {}),
    ("explain-v135", W, f"explain {PODS}/reporting.yaml -c {P} --kubernetes-version v1.35 -o json", {}),
    ("explain-v136", T, f"explain {PODS}/checkout.yaml -c {P} --kubernetes-version v1.36 --raw", {}),
    ("explain-v132", W, f"explain {PODS}/web.yaml -c {S} --kubernetes-version v1.32", {}),
    ("explain-verbose", W, f"explain {PODS}/web.yaml -c {P} -v", {}),
    ("explain-verbose-before", W, f"-v explain {PODS}/web.yaml -c {P}", {}),
    ("explain-no-color", W, f"explain {PODS}/web.yaml -c {S} --no-color", {}),
    ("explain-tty", T, f"explain {PODS}/reporting.yaml -c {P}", {"tty": True}),
    ("explain-tty-no-color", W, f"explain {PODS}/web.yaml -c {S} --no-color", {"tty": True}),
    ("explain-tty-spread", W, f"explain {PODS}/web-spread.yaml -c {P}", {"tty": True}),
    ("explain-edits", T, f"explain {PODS}/reporting.yaml -c {P} --uncordon general-c-05 --add-node general-a-01:2 --taint highmem-a-01:workload-", {}),
    ("explain-edits-json", W, f"explain {PODS}/reporting.yaml -c {P} --cordon pool=general --label gpu-a-01:x=y --remove-node gpu-b-01 -o json", {}),
    ("explain-add-node-file", T, f"explain {PODS}/reporting.yaml -c {P} --add-node $TMP/nodes.yaml", {"files": {"nodes.yaml": NEW_NODES}}),
    ("explain-evict", W, f"explain {PODS}/payments.yaml -c {P} --evict batch/etl-adhoc-024 -o json", {}),
    ("explain-bad-taint", W, f"explain {PODS}/web.yaml -c {P} --taint general-a-01:k=v:Maybe", {}),
    ("explain-bad-evict", W, f"explain {PODS}/web.yaml -c {P} --evict shop/nosuch", {}),
    ("explain-selector-no-match", W, f"explain {PODS}/web.yaml -c {P} --cordon pool=nosuch", {}),
    ("explain-big-request", T, f"explain $TMP/pod.yaml -c {P}", {"files": {"pod.yaml": BIG_POD}}),
    ("explain-selector-fixes", T, f"explain $TMP/pod.yaml -c {P}", {"files": {"pod.yaml": SELECTOR_POD}}),
    ("explain-selector-fixes-json", W, f"explain $TMP/pod.yaml -c {P} -o json", {"files": {"pod.yaml": SELECTOR_POD}}),
    ("explain-ports-anti", T, f"explain $TMP/pod.yaml -c {P}", {"files": {"pod.yaml": PORTS_POD}}),
    ("explain-deployment", T, f"explain $TMP/d.yaml -c {P}", {"files": {"d.yaml": DEPLOYMENT}}),
    ("explain-deployment-replica", T, f"explain $TMP/d.yaml -c {P} --replica 4", {"files": {"d.yaml": DEPLOYMENT}}),
    ("explain-deployment-replicas", W, f"explain $TMP/d.yaml -c {P} --replicas 2 --replica 1 -o json", {"files": {"d.yaml": DEPLOYMENT}}),
    ("explain-nominated", T, f"explain {PODS}/checkout.yaml -c {P} -c $TMP/nom.yaml", {"files": {"nom.yaml": NOMINATED}}),
    ("explain-nominated-json", W, f"explain {PODS}/checkout.yaml -c {P} -c $TMP/nom.yaml -o json", {"files": {"nom.yaml": NOMINATED}}),
    ("explain-nominated-self", T, f"explain shop/cache-b-84m9m -c {P} -c $TMP/nom.yaml", {"files": {"nom.yaml": NOMINATED}}),
    ("explain-selectorspread", T, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": SELECTOR_SPREAD}}),
    ("explain-selectorspread-json", W, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml -o json", {"files": {"c.yaml": SELECTOR_SPREAD}}),
    ("explain-dra", T, f"explain fixtures/dra/finetune.yaml {DRA}", {}),
    ("explain-dra-json", W, f"explain fixtures/dra/finetune.yaml {DRA} -o json", {}),
    ("explain-dra-node", T, f"explain fixtures/dra/finetune.yaml {DRA} --node gpu-c", {}),
    ("explain-dra-v133", W, f"explain fixtures/dra/finetune.yaml {DRA} --kubernetes-version v1.33", {}),
    ("explain-extender", T, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": EXTENDER}}),
    ("explain-extender-raw", T, f"explain {PODS}/checkout.yaml -c {P} --config $TMP/c.yaml --raw", {"files": {"c.yaml": EXTENDER}}),
    ("explain-extender-json", W, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml -o json", {"files": {"c.yaml": EXTENDER}}),
    ("explain-extender-preempt", T, f"explain {PODS}/payments.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": EXTENDER}}),
    ("explain-extender-objects", W, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml -o json", {"files": {"c.yaml": EXTENDER_OBJECTS}}),
    ("explain-extender-down", W, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": EXTENDER_DOWN.replace("IGNORABLE", "false")}}),
    ("explain-extender-down-ignorable", T, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": EXTENDER_DOWN.replace("IGNORABLE", "true")}}),
    ("explain-extender-500", W, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": EXTENDER_500}}),
    ("explain-no-extenders", T, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml --no-extenders", {"files": {"c.yaml": EXTENDER_DOWN.replace("IGNORABLE", "false")}}),
    ("explain-no-extenders-json", W, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml --no-extenders -o json", {"files": {"c.yaml": EXTENDER}}),
    ("explain-extender-invalid", W, f"explain {PODS}/web.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": EXTENDER_BAD}}),
    ("exported-pending", T, "-v explain fixtures/exported/checkout-pending.yaml -c fixtures/exported/cluster.yaml", {}),
    ("exported-pending-json", W, "explain fixtures/exported/checkout-pending.yaml -c fixtures/exported/cluster.yaml -o json", {}),
    ("exported-bound", T, "explain fixtures/exported/web-running.yaml -c fixtures/exported/cluster.yaml", {}),
    ("exported-bound-json", W, "explain fixtures/exported/web-running.yaml -c fixtures/exported/cluster.yaml -o json", {}),
    ("exported-as-bound", T, "explain fixtures/exported/web-running.yaml -c fixtures/exported/cluster.yaml --as-bound", {}),
    ("exported-preempt", W, "preempt fixtures/exported/checkout-pending.yaml -c fixtures/exported/cluster.yaml -o json", {}),
    ("exported-schedule", T, "schedule fixtures/exported/checkout-pending.yaml fixtures/exported/web-running.yaml -c fixtures/exported/cluster.yaml", {}),
    # -- bad input --------------------------------------------------------------------------------------
    ("bad-typo", W, f"explain $TMP/typo.yaml -c {S}", {"files": {"typo.yaml": TYPO_POD}}),
    ("bad-typo-warn", W, f"explain $TMP/typo.yaml -c {S} --validate=warn -o json", {"files": {"typo.yaml": TYPO_POD}}),
    ("bad-typo-ignore", W, f"explain $TMP/typo.yaml -c {S} --validate=ignore", {"files": {"typo.yaml": TYPO_POD}}),
    ("bad-bool", W, f"explain $TMP/b.yaml -c {S} --validate=ignore", {"files": {"b.yaml": BOOL_POD}}),
    ("bad-quantity", W, f"explain $TMP/q.yaml -c {S}", {"files": {"q.yaml": BAD_QTY_POD}}),
    ("bad-kind", W, f"schedule $TMP/k.yaml -c {S}", {"files": {"k.yaml": KIND_TYPO}}),
    ("bad-yaml", W, f"explain $TMP/y.yaml -c {S}", {"files": {"y.yaml": NOT_YAML}}),
    ("bad-output", W, f"explain {PODS}/web.yaml -c {S} -o xml", {}),
    ("bad-validate-mode", W, f"explain {PODS}/web.yaml -c {S} --validate=maybe", {}),
    ("bad-config", W, f"explain {PODS}/web.yaml -c {S} --config $TMP/c.yaml", {"files": {"c.yaml": BAD_CONFIG}}),
    ("bad-missing-file", W, f"explain nosuch.yaml -c {S}", {}),
    ("bad-missing-cluster", W, f"explain {PODS}/web.yaml -c nosuch.yaml", {}),
    ("bad-several-pods", W, f"explain {PODS}/rollout.yaml -c {P}", {}),
    ("bad-no-pod", W, f"explain -c {S}", {}),
    ("bad-replicas", W, f"explain {PODS}/web.yaml -c {S} --replicas 200000", {}),
    ("bad-top", W, f"explain {PODS}/web.yaml -c {S} --top -1", {}),
    ("bad-unknown-option", W, f"explain {PODS}/web.yaml -c {S} --no-cache", {}),
    ("bad-cluster-is-pod", W, f"schedule -c {PODS}/web.yaml -o json", {}),
    # -- preempt --------------------------------------------------------------------------------------
    ("preempt-payments", T, f"preempt {PODS}/payments.yaml -c {P}", {}),
    ("preempt-payments-json", W, f"preempt {PODS}/payments.yaml -c {P} -o json", {}),
    ("preempt-payments-yaml", W, f"preempt {PODS}/payments.yaml -c {P} -o yaml", {}),
    ("preempt-fits", T, f"preempt {PODS}/web.yaml -c {P}", {}),
    ("preempt-reporting", T, f"preempt {PODS}/reporting.yaml -c {P}", {}),
    ("preempt-by-name", W, f"preempt batch/reporting-28391745-x7k2q -c {P} -o json", {}),
    ("preempt-edits", T, f"preempt {PODS}/payments.yaml -c {P} --cordon general-c-02 --allow-preemption", {}),
    ("preempt-v133", W, f"preempt {PODS}/payments.yaml -c {P} --kubernetes-version v1.33 -o json", {}),
    # -- schedule -------------------------------------------------------------------------------------
    ("schedule-rollout", T, f"schedule {PODS}/rollout.yaml -c {P}", {}),
    ("schedule-rollout-wide", T, f"schedule {PODS}/rollout.yaml -c {P} -o wide", {}),
    ("schedule-rollout-wide-nh", T, f"schedule {PODS}/rollout.yaml -c {P} -o wide --no-headers", {}),
    ("schedule-rollout-no-headers", T, f"schedule {PODS}/rollout.yaml -c {P} --no-headers", {}),
    ("schedule-rollout-name", W, f"schedule {PODS}/rollout.yaml -c {P} -o name", {}),
    ("schedule-rollout-name-allow", W, f"schedule {PODS}/rollout.yaml -c {P} -o name --allow-preemption", {}),
    ("schedule-rollout-json", W, f"schedule {PODS}/rollout.yaml -c {P} -o json", {}),
    ("schedule-rollout-json-full", W, f"schedule {PODS}/rollout.yaml -c {P} -o json --detail full", {}),
    ("schedule-rollout-yaml", W, f"schedule {PODS}/rollout.yaml -c {P} -o yaml", {}),
    ("schedule-rollout-file-order", T, f"schedule {PODS}/rollout.yaml -c {P} --order file", {}),
    ("schedule-carry-out", T, f"schedule {PODS}/rollout.yaml -c {P} --order file --preemption carry-out", {}),
    ("schedule-carry-out-json", W, f"schedule {PODS}/rollout.yaml -c {P} --preemption carry-out -o json", {}),
    ("schedule-pending", T, f"schedule -c {P}", {}),
    ("schedule-pending-ns", T, f"schedule -n shop -c {P}", {}),
    ("schedule-pending-all-ns", W, f"schedule -A -c {P} -o json", {}),
    ("schedule-chart", T, f"schedule fixtures/chart/shop.yaml -c {P} -c fixtures/chart/storage.yaml", {}),
    ("schedule-chart-stdin", T, f"schedule - -c {P} -c fixtures/chart/storage.yaml", {"stdin": "fixtures/chart/shop.yaml"}),
    ("schedule-chart-json", W, f"schedule fixtures/chart/shop.yaml -c {P} -c fixtures/chart/storage.yaml -o json", {}),
    ("schedule-chart-wide", T, f"schedule fixtures/chart/shop.yaml -c {P} -c fixtures/chart/storage.yaml -o wide", {}),
    ("schedule-chart-replicas", T, f"schedule fixtures/chart/shop.yaml -c {P} -c fixtures/chart/storage.yaml --replicas 1", {}),
    ("schedule-chart-no-storage", T, f"schedule fixtures/chart/shop.yaml -c {P}", {}),
    ("schedule-deployment", T, f"schedule $TMP/d.yaml -c {P}", {"files": {"d.yaml": DEPLOYMENT}}),
    ("schedule-edits", T, f"schedule -c {P} --cordon topology.kubernetes.io/zone=us-east-1a --add-node general-b-01:2", {}),
    ("schedule-edits-json", W, f"schedule {PODS}/rollout.yaml -c {P} --evict batch/etl-adhoc-024 --taint general-a-01:k=v:NoSchedule -o json", {}),
    ("schedule-profiles", T, f"schedule {PODS}/rollout.yaml -c {P} --config fixtures/config/most-allocated.yaml", {}),
    ("schedule-seed", W, f"schedule {PODS}/rollout.yaml -c {P} --seed 11 -o json", {}),
    ("schedule-v135", T, f"schedule {PODS}/rollout.yaml -c {P} --kubernetes-version v1.35", {}),
    ("schedule-v136-wide", T, f"schedule {PODS}/rollout.yaml -c {P} --kubernetes-version v1.36 -o wide", {}),
    ("schedule-dra", T, f"schedule fixtures/dra/finetune.yaml {DRA}", {}),
    ("schedule-extender", T, f"schedule {PODS}/rollout.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": EXTENDER}}),
    ("schedule-extender-ignorable", T, f"schedule {PODS}/rollout.yaml -c {P} --config $TMP/c.yaml", {"files": {"c.yaml": EXTENDER_DOWN.replace("IGNORABLE", "true")}}),
    ("schedule-nominated", T, f"schedule -c {P} -c $TMP/nom.yaml -o wide", {"files": {"nom.yaml": NOMINATED}}),
    ("schedule-bad-order", W, f"schedule {PODS}/rollout.yaml -c {P} --order random", {}),
    ("schedule-bad-detail", W, f"schedule {PODS}/rollout.yaml -c {P} --detail some -o json", {}),
    ("schedule-tty-wide", T, f"schedule {PODS}/rollout.yaml -c {P} -o wide", {"tty": True}),
    # -- capacity -------------------------------------------------------------------------------------
    ("capacity-web", T, f"capacity {PODS}/web.yaml -c {P}", {}),
    ("capacity-web-group", T, f"capacity {PODS}/web.yaml -c {P} --group-by topology.kubernetes.io/zone --top 3", {}),
    ("capacity-web-json", W, f"capacity {PODS}/web.yaml -c {P} -o json", {}),
    ("capacity-web-yaml", W, f"capacity {PODS}/web.yaml -c {P} --max 10 -o yaml", {}),
    ("capacity-web-min", W, f"capacity {PODS}/web.yaml -c {P} --min 60 -o json", {}),
    ("capacity-web-min-ok", T, f"capacity {PODS}/web.yaml -c {P} --min 40 --top 0", {}),
    ("capacity-web-max", T, f"capacity {PODS}/web.yaml -c {P} --max 5", {}),
    ("capacity-add-node", T, f"capacity {PODS}/web.yaml -c {P} --add-node general-b-01:3 --top 3", {}),
    ("capacity-two", T, f"capacity {PODS}/web.yaml {PODS}/checkout.yaml -c {P}", {}),
    ("capacity-deployment", T, f"capacity $TMP/d.yaml -c {P}", {"files": {"d.yaml": DEPLOYMENT}}),
    ("capacity-chart", W, f"capacity fixtures/chart/shop.yaml -c {P} -c fixtures/chart/storage.yaml -o json", {}),
    ("capacity-small", T, f"capacity {PODS}/web.yaml -c {S}", {}),
    ("capacity-dra", W, f"capacity fixtures/dra/finetune.yaml {DRA} -o json", {}),
    ("capacity-extender", W, f"capacity {PODS}/web.yaml -c {P} --config $TMP/c.yaml --max 20 -o json", {"files": {"c.yaml": EXTENDER}}),
    ("capacity-no-template", W, f"capacity -c {P}", {}),
    # -- drain ----------------------------------------------------------------------------------------
    ("drain-a02", T, f"drain general-a-02 -c {P}", {}),
    ("drain-a02-json", W, f"drain general-a-02 -c {P} -o json", {}),
    ("drain-a02-yaml", W, f"drain general-a-02 -c {P} -o yaml", {}),
    ("drain-two", T, f"drain general-a-01 general-b-01 -c {P}", {}),
    ("drain-selector", T, f"drain topology.kubernetes.io/zone=us-east-1c -c {P}", {}),
    ("drain-force", T, f"drain general-c-02 -c {P} --force --delete-emptydir-data", {}),
    ("drain-allow", W, f"drain general-c-02 gpu-a-01 -c {P} --allow-preemption -o json", {}),
    ("drain-small", T, f"drain node-a -c {S}", {}),
    ("drain-edits", T, f"drain general-a-02 -c {P} --add-node general-a-01:1", {}),
    ("drain-unknown", W, f"drain nosuch -c {P}", {}),
    # -- diff -----------------------------------------------------------------------------------------
    ("diff-config", T, f"diff {PODS}/rollout.yaml -c {P} --against-config fixtures/config/most-allocated.yaml", {}),
    ("diff-config-json", W, f"diff {PODS}/rollout.yaml -c {P} --against-config fixtures/config/most-allocated.yaml -o json", {}),
    ("diff-config-yaml", W, f"diff {PODS}/rollout.yaml -c {P} --against-config fixtures/config/most-allocated.yaml -o yaml", {}),
    ("diff-pending-edits", T, f"diff -c {P} --cordon topology.kubernetes.io/zone=us-east-1a", {}),
    ("diff-same", T, f"diff {PODS}/rollout.yaml -c {P} --against-cluster {P}", {}),
    ("diff-against-cluster", T, f"diff {PODS}/web.yaml -c {S} --against-cluster {P}", {}),
    ("diff-all", T, f"diff --all -c {P} --against-config fixtures/config/most-allocated.yaml", {}),
    ("diff-all-json", W, f"diff --all -c {S} --remove-node node-b -o json", {}),
    ("diff-nothing", W, f"diff {PODS}/rollout.yaml -c {P}", {}),
    # -- run (scenarios) --------------------------------------------------------------------------------
    ("run-lose-zone-a", T, "run fixtures/scenarios/lose-zone-a.yaml", {}),
    ("run-lose-zone-a-json", W, "run fixtures/scenarios/lose-zone-a.yaml -o json", {}),
    ("run-lose-zone-a-full", W, "run fixtures/scenarios/lose-zone-a.yaml -o yaml --detail full", {}),
    ("run-cluster-override", T, f"run fixtures/scenarios/lose-zone-a.yaml -c {P} --kubernetes-version v1.33", {}),
    ("run-every-edit", T, "run $TMP/s.yaml", {"files": {"s.yaml": SCENARIO}}),
    ("run-every-edit-json", W, "run $TMP/s.yaml -o json", {"files": {"s.yaml": SCENARIO}}),
    ("run-bad", W, "run $TMP/s.yaml", {"files": {"s.yaml": BAD_SCENARIO}}),
    ("run-missing", W, "run nosuch.yaml", {}),
    # -- cache ----------------------------------------------------------------------------------------
    ("cache-info-empty", W, "cache info", {"cache": "fresh"}),
    ("cache-clear-empty", W, "cache clear", {"cache": "fresh"}),
    ("cache-cycle", W, (f"explain {PODS}/web.yaml -c {P}", "@wait-cache", "cache info", f"explain {PODS}/web.yaml -c {P}", f"-v explain {PODS}/web.yaml -c {P} -o json", f"--no-cache -v explain {PODS}/web.yaml -c {P} -o json", "cache clear", "cache info"), {"cache": "fresh"}),
    ("cache-no-cache-flag", W, f"--no-cache explain {PODS}/web.yaml -c {S}", {"cache": "fresh"}),
    # -- the live cluster (a fake kubectl serving fixtures/small-cluster.yaml and web.yaml pending) --
    ("live-no-kubectl", W, f"explain {PODS}/web.yaml", {}),
    ("live-explain", T, f"explain {PODS}/web.yaml", {"kubectl": "ok"}),
    ("live-explain-pending", W, "explain -n shop web-7d9f8b6c5d-m8n7b -o json", {"kubectl": "ok"}),
    ("live-schedule", T, "schedule -n shop", {"kubectl": "ok"}),
    ("live-version", W, f"explain {PODS}/web.yaml -v", {"kubectl": "ok", "server": "v1.35.2"}),
    ("live-release-newer", W, f"explain {PODS}/web.yaml -o json", {"kubectl": "ok", "server": "v1.38.1"}),
    ("live-release-older", T, f"explain {PODS}/web.yaml", {"kubectl": "ok", "server": "v1.31.4-gke.100"}),
    ("live-context", W, f"schedule {PODS}/web.yaml --context prod -o json", {"kubectl": "ok"}),
    ("live-context-missing", W, f"explain {PODS}/web.yaml --context staging", {"kubectl": "ok"}),
    ("live-no-config", W, f"explain {PODS}/web.yaml", {"kubectl": "no-config"}),
    ("live-refused", W, f"explain {PODS}/web.yaml", {"kubectl": "refused"}),
    ("live-forbidden", W, f"explain {PODS}/web.yaml", {"kubectl": "forbidden"}),
    ("live-timeout", W, f"explain {PODS}/web.yaml --request-timeout 5s", {"kubectl": "timeout"}),
    ("live-bad-timeout", W, f"explain {PODS}/web.yaml --request-timeout soon", {"kubectl": "ok"}),
    ("live-drain", T, "drain node-a", {"kubectl": "ok"}),
    ("live-capacity", W, f"capacity {PODS}/web.yaml -o json", {"kubectl": "ok"}),
    ("live-diff", W, f"diff {PODS}/web.yaml --against-config fixtures/config/most-allocated.yaml", {"kubectl": "ok"}),
    ("live-run", T, "run fixtures/scenarios/lose-zone-a.yaml --context prod", {"kubectl": "ok"}),
    ("live-save-snapshot", W, (f"explain {PODS}/web.yaml --save-snapshot $TMP/snap.json -o json", "@sha256 $TMP/snap.json", f"explain {PODS}/web.yaml --cluster $TMP/snap.json -o json"), {"kubectl": "ok"}),
    ("kubectl-plugin", T, "explain -n shop web-7d9f8b6c5d-m8n7b", {"kubectl": "ok", "prog": "kubectl-ksched"}),
    ("kubectl-plugin-help", W, "--help", {"prog": "kubectl-ksched"}),
    # -- the 500-node reference snapshot (genbig.py --nodes 500 --pods 15000 --pending 1000) -----------
    ("big-explain-plain", T, f"explain $DER/plain.yaml {BJ}", {}),
    ("big-explain-plain-json", W, f"explain $DER/plain.yaml {BJ} -o json", {}),
    ("big-explain-plain-yaml", W, f"explain $DER/plain.yaml {BJ} -o yaml", {}),
    ("big-explain-plain-yaml-cluster", T, "explain $DER/plain.yaml -c $BIG/cluster.yaml", {}),
    ("big-explain-plain-verbose", W, f"explain $DER/plain.yaml {BJ} -v -o json", {"cache": "off"}),
    ("big-explain-yaml-verbose", W, "explain $DER/plain.yaml -c $BIG/cluster.yaml -v", {"cache": "off"}),
    ("big-explain-spread", T, f"explain $DER/spread.yaml {BJ}", {}),
    ("big-explain-spread-json", W, f"explain $DER/spread.yaml {BJ} -o json", {}),
    ("big-explain-anti", T, f"explain $DER/anti.yaml {BJ}", {}),
    ("big-explain-anti-json", W, f"explain $DER/anti.yaml {BJ} -o json", {}),
    ("big-explain-spread-anti", T, f"explain $DER/spread-anti.yaml {BJ} --raw", {}),
    ("big-explain-pool", T, f"explain $DER/pool.yaml {BJ}", {}),
    ("big-explain-pool-json", W, f"explain $DER/pool.yaml {BJ} -o json", {}),
    ("big-explain-preempt", T, f"explain $DER/preempt.yaml {BJ}", {}),
    ("big-explain-preempt-json", W, f"explain $DER/preempt.yaml {BJ} -o json", {}),
    ("big-explain-preempt-fixes5", W, f"explain $DER/preempt.yaml {BJ} --fixes 5 -o json", {}),
    ("big-explain-all-nodes", (120,), f"explain $DER/plain.yaml {BJ} --all-nodes --top 0", {}),
    ("big-explain-node", T, f"explain $DER/anti.yaml {BJ} --node {N1}", {}),
    ("big-explain-seed", W, f"explain $DER/plain.yaml {BJ} --seed 5 -o json", {}),
    ("big-explain-by-name", T, f"explain checkout/catalog-service-869cv5zl4f-np5cn {BP}", {}),
    ("big-explain-edits", T, f"explain $DER/pool.yaml {BJ} --cordon node-pool=memory-optimized --add-node {N1}:2", {}),
    ("big-explain-v136", W, f"explain $DER/spread.yaml {BJ} --kubernetes-version v1.36 -o json", {}),
    ("big-explain-most-allocated", T, f"explain $DER/plain.yaml {BJ} --config fixtures/config/most-allocated.yaml", {}),
    ("big-preempt", T, f"preempt $DER/preempt.yaml {BJ}", {}),
    ("big-preempt-json", W, f"preempt $DER/preempt.yaml {BJ} -o json", {}),
    ("big-schedule-1000", W, f"schedule $BIG/pods.yaml {BJ}", {}),
    ("big-schedule-1000-wide", (120,), f"schedule $BIG/pods.yaml {BJ} -o wide", {}),
    ("big-schedule-50-name", W, f"schedule $DER/pods-50.yaml {BJ} -o name", {}),
    ("big-schedule-1000-json", W, f"schedule $BIG/pods.yaml {BJ} -o json", {}),
    ("big-schedule-50-full", W, f"schedule $DER/pods-50.yaml {BJ} -o json --detail full", {}),
    ("big-schedule-50-yaml", W, f"schedule $DER/pods-50.yaml {BJ} -o yaml", {}),
    ("big-schedule-pending", T, f"schedule {BP}", {}),
    ("big-schedule-pending-ns", W, f"schedule -n checkout {BP} -o wide --no-headers", {}),
    ("big-schedule-preempt-carry-out", T, f"schedule $DER/preempt-pods.yaml {BJ} --preemption carry-out", {}),
    ("big-schedule-preempt-carry-out-json", W, f"schedule $DER/preempt-pods.yaml {BJ} --preemption carry-out -o json", {}),
    ("big-schedule-file-order-edits", T, f"schedule $DER/pods-50.yaml {BJ} --order file --cordon topology.kubernetes.io/zone=us-east-1b", {}),
    ("big-capacity", T, f"capacity $DER/plain.yaml {BJ} --max 2000 --group-by topology.kubernetes.io/zone", {}),
    ("big-capacity-json", W, f"capacity $DER/spread.yaml {BJ} --max 1000 -o json", {}),
    ("big-capacity-until-full", W, f"capacity $DER/anti.yaml {BJ} -o json", {}),
    ("big-capacity-pool", T, f"capacity $DER/pool.yaml {BJ} --group-by node-pool", {}),
    ("big-drain", T, f"drain {N1} {BJ}", {}),
    ("big-drain-json", W, f"drain {N1} {BJ} -o json", {}),
    ("big-drain-selector", T, f"drain eks.amazonaws.com/nodegroup=gpu-g5-12xlarge {BJ} --force", {}),
    ("big-diff-config", T, f"diff $DER/pods-50.yaml {BJ} --against-config fixtures/config/most-allocated.yaml", {}),
    ("big-diff-edits-json", W, f"diff $DER/pods-50.yaml {BJ} --cordon node-pool=gpu -o json", {}),
    ("big-run", T, "run $DER/scenario.yaml", {}),
    ("big-run-json", W, "run $DER/scenario.yaml -o json", {}),
]
# fmt: on


# -- the fake kubectl and the local extender ----------------------------------------------------------

FAKE_KUBECTL = r"""#!{python}
# A fake kubectl for scripts/record_cli.py: FAKE_KUBECTL_MODE says how it answers (ok, no-config, refused,
# forbidden, timeout); FAKE_KUBECTL_SERVER_VERSION the API server's version ("none": kubectl version fails).
import json, os, sys
args = sys.argv[1:]
mode = os.environ.get("FAKE_KUBECTL_MODE", "ok")
def flag(name, default=None):
    return args[args.index(name) + 1] if name in args else default
context = flag("--context", "kind-small")
if args[:2] == ["config", "view"]:
    if mode == "no-config":
        sys.stderr.write("error: current-context must exist in order to minify\n"); sys.exit(1)
    if context not in ("kind-small", "prod"):
        sys.stderr.write("error: cannot locate context " + context + "\n"); sys.exit(1)
    json.dump({{"kind": "Config", "apiVersion": "v1", "current-context": context,
               "contexts": [{{"name": context, "context": {{"cluster": "c1", "user": "u1", "namespace": "shop"}}}}],
               "clusters": [{{"name": "c1", "cluster": {{"server": "https://10.0.0.1:6443"}}}}]}}, sys.stdout)
    sys.exit(0)
if args[0] == "version":
    server = os.environ.get("FAKE_KUBECTL_SERVER_VERSION", "none")
    client = {{"major": "1", "minor": "34", "gitVersion": "v1.34.1"}}
    if server == "none":
        json.dump({{"clientVersion": client}}, sys.stdout)
        sys.stderr.write("error: You must be logged in to the server (the server has asked for credentials)\n")
        sys.exit(1)
    json.dump({{"clientVersion": client, "serverVersion": {{"gitVersion": server, "platform": "linux/amd64"}}}}, sys.stdout)
    sys.exit(0)
if mode == "forbidden":
    sys.stdout.write('{{"apiVersion": "v1", "items": [], "kind": "List"}}\n')
    sys.stderr.write('Error from server (Forbidden): poddisruptionbudgets.policy is forbidden: User "jane" cannot '
                     'list resource "poddisruptionbudgets" in API group "policy" at the cluster scope\n'); sys.exit(1)
if mode == "refused":
    sys.stderr.write("The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?\n")
    sys.exit(1)
if mode == "timeout":
    sys.stderr.write("Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded "
                     "while awaiting headers)\n"); sys.exit(1)
with open(os.environ["FAKE_KUBECTL_SERVE"], "rb") as f:
    data = f.read()
out = sys.stdout.buffer
for i in range(0, len(data), 4096):
    out.write(data[i:i + 4096]); out.flush()
"""


def served_list() -> bytes:
    """What the fake kubectl serves: fixtures/small-cluster.yaml and fixtures/pods/web.yaml (pending), as
    `kubectl get -o json` prints a List."""
    import yaml

    objs = [d for d in yaml.safe_load_all((ROOT / "fixtures/small-cluster.yaml").read_text()) if d]
    objs.append(yaml.safe_load((ROOT / "fixtures/pods/web.yaml").read_text()))
    doc = {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}
    return (json.dumps(doc, indent=4) + "\n").encode()


def _names(args: dict) -> list[str]:
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in (args.get("Nodes") or {}).get("items") or []]


def extender_answer(verb: str, args: dict) -> tuple[int, Any]:
    """A deterministic extender: filter fails the nodes of zone b (names with "-b-"), prioritize scores a
    node by its name, preempt keeps every candidate, fail answers 500."""
    if verb == "filter":
        names = _names(args)
        keep = [n for n in names if "-b-" not in n]
        failed = {n: "zone b is reserved by the extender" for n in names if "-b-" in n}
        if args.get("NodeNames") is not None:
            return 200, {"NodeNames": keep, "FailedNodes": failed, "Error": ""}
        items = [n for n in (args.get("Nodes") or {}).get("items") or [] if n["metadata"]["name"] in keep]
        return 200, {"Nodes": {"items": items}, "FailedNodes": failed, "Error": ""}
    if verb == "prioritize":
        return 200, [{"Host": n, "Score": sum(map(ord, n)) % 11} for n in _names(args)]
    if verb == "preempt":
        meta = args.get("NodeNameToMetaVictims")
        if meta is None:
            meta = {
                node: {
                    "Pods": [{"UID": p["metadata"]["uid"]} for p in v.get("Pods") or []],
                    "NumPDBViolations": v.get("NumPDBViolations", 0),
                }
                for node, v in (args.get("NodeNameToVictims") or {}).items()
            }
        return 200, {"NodeNameToMetaVictims": meta}
    return 500, {"Error": "no such verb"}


def start_extender() -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                args = json.loads(raw)
            except ValueError:
                args = {}
            status, body = extender_answer(self.path.rsplit("/", 1)[-1], args)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# -- inputs -------------------------------------------------------------------------------------------


def ensure_data(genbig: Path) -> None:
    """bench-data/genbig-500 (genbig.py, when missing or made with other arguments) and the files cut
    from its pods.yaml in bench-data/record-500 (rewritten only when their bytes change)."""
    big = ROOT / BIG
    manifest = big / "manifest.json"
    ok = False
    if manifest.is_file() and (big / "cluster.yaml").is_file():
        args = json.loads(manifest.read_text()).get("args", {})
        ok = all(args.get(k) == v for k, v in GENBIG_ARGS.items()) and args.get("deployments") == 0
    if not ok:
        if not genbig.is_file():
            sys.exit(f"record_cli: {BIG} is missing and genbig.py is not at {genbig} (--genbig PATH)")
        print(f"record_cli: generating {BIG} with {genbig} (about 30 s)", file=sys.stderr)
        cmd = [sys.executable, str(genbig), "--out", str(big)]
        for k, v in GENBIG_ARGS.items():
            cmd += [f"--{k}", str(v)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    docs = (big / "pods.yaml").read_text().split("\n---\n")
    docs = [d if d.endswith("\n") else d + "\n" for d in docs if d.strip()]
    out: dict[str, str] = {"pods-50.yaml": "---\n".join(docs[:50])}
    by_cat: dict[str, list[str]] = {}
    for d in docs:
        m = re.search(r"bench\.ksched\.dev/category: (\S+)", d)
        by_cat.setdefault(m.group(1) if m else "", []).append(d)
    for cat in CATEGORIES:
        out[f"{cat}.yaml"] = by_cat[cat][0]
    out["preempt-pods.yaml"] = "---\n".join(by_cat["preempt"])
    out["scenario.yaml"] = BIG_SCENARIO
    der = ROOT / DER
    der.mkdir(parents=True, exist_ok=True)
    for name, text in out.items():
        p = der / name
        if not p.is_file() or p.read_text() != text:
            p.write_text(text)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# -- running ------------------------------------------------------------------------------------------


def expand() -> list[dict[str, Any]]:
    """The table as records to run: one per row and width."""
    seen: set[str] = set()
    records = []
    for rid, widths, cmd, extras in INVOCATIONS:
        assert rid not in seen and re.fullmatch(r"[a-z0-9-]+", rid), rid
        seen.add(rid)
        unknown = set(extras) - {"stdin", "files", "env", "cache", "kubectl", "server", "prog", "tty"}
        assert not unknown, (rid, unknown)
        steps = list(cmd) if isinstance(cmd, tuple) else [cmd]
        cache = extras.get("cache") or ("shared" if any("$BIG" in s or "$DER" in s for s in steps) else "off")
        for w in widths:
            records.append(
                {"id": f"{rid}@{w}", "row": rid, "columns": w, "steps": steps, "extras": extras, "cache": cache}
            )
    return records


class Runner:
    def __init__(self, ksched: Path, base: Path, shared_cache: Path, ext_url: str):
        self.ksched = ksched
        self.base = base
        self.shared_cache = shared_cache
        self.ext_url = ext_url
        self.ext_port = ext_url.split(":")[2].split("/")[0]
        self.served = base / "served.json"
        self.served.write_bytes(served_list())

    def subst(self, text: str, tmp: Path) -> str:
        return (
            text.replace("$TMP", str(tmp))
            .replace("$ROOT", str(ROOT))
            .replace("$BIG", BIG)
            .replace("$DER", DER)
            .replace("$EXT", self.ext_url)
        )

    def normalize(self, text: str, tmp: Path) -> str:
        for path, name in sorted(
            [(str(tmp), "$TMP"), (str(ROOT), "$ROOT"), (str(self.shared_cache), "$CACHE")], key=lambda p: -len(p[0])
        ):
            text = text.replace(path, name)
        return text.replace(f"127.0.0.1:{self.ext_port}", "127.0.0.1:$EXTPORT")

    def env(self, rec: dict[str, Any], tmp: Path) -> dict[str, str]:
        extras = rec["extras"]
        env = {
            "PATH": str(tmp / "bin"),
            "HOME": str(tmp),
            "TMPDIR": str(tmp / "tmp"),
            "NO_COLOR": "1",
            "TZ": "UTC",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": "dumb",
            "COLUMNS": str(rec["columns"]),
            "LINES": "50",
        }
        if extras.get("tty"):
            del env["NO_COLOR"]
            env["TERM"] = "xterm-256color"
        if rec["cache"] == "off":
            env["KSCHED_NO_CACHE"] = "1"
        elif rec["cache"] == "fresh":
            env["KSCHED_CACHE_DIR"] = str(tmp / "cache")
        else:
            env["KSCHED_CACHE_DIR"] = str(self.shared_cache)
        if "kubectl" in extras:
            env["FAKE_KUBECTL_MODE"] = extras["kubectl"]
            env["FAKE_KUBECTL_SERVE"] = str(self.served)
            env["FAKE_KUBECTL_SERVER_VERSION"] = extras.get("server", "none")
        for k, v in extras.get("env", {}).items():
            env[k] = self.subst(v, tmp)
        return env

    def run_one(self, rec: dict[str, Any]) -> dict[str, Any]:
        tmp = Path(tempfile.mkdtemp(prefix="r-", dir=self.base))
        try:
            return self._run(rec, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _run(self, rec: dict[str, Any], tmp: Path) -> dict[str, Any]:
        extras = rec["extras"]
        (tmp / "bin").mkdir()
        (tmp / "tmp").mkdir()
        if "kubectl" in extras:
            k = tmp / "bin" / "kubectl"
            k.write_text(FAKE_KUBECTL.format(python=sys.executable))
            k.chmod(0o755)
        for name, text in extras.get("files", {}).items():
            (tmp / name).write_text(self.subst(text, tmp))
        env = self.env(rec, tmp)
        prog = self.ksched.with_name(extras["prog"]) if "prog" in extras else self.ksched
        out: dict[str, Any] = {"id": rec["id"], "columns": rec["columns"], "steps": []}
        timings = []
        for step in rec["steps"]:
            t0 = time.perf_counter()
            if step == "@wait-cache":
                res = {"cmd": step, "exit": wait_cache(tmp / "cache"), "stdout": "", "stderr": ""}
            elif step.startswith("@sha256 "):
                p = Path(self.subst(step.split(" ", 1)[1], tmp))
                res = {"cmd": step, "exit": 0, "stdout": sha256(p) if p.is_file() else "missing", "stderr": ""}
            else:
                argv = [self.subst(a, tmp) for a in shlex.split(step)]
                stdin = ROOT / extras["stdin"] if "stdin" in extras else None
                code, so, se = execute([str(prog), *argv], env, stdin, rec["columns"], bool(extras.get("tty")))
                res = {"cmd": f"{prog.name} {step}".rstrip(), "exit": code}
                res["stdout"] = self.normalize(so, tmp)
                res["stderr"] = self.normalize(se, tmp)
            timings.append(round(time.perf_counter() - t0, 3))
            out["steps"].append(res)
        out["_seconds"] = timings
        return out


def execute(
    argv: list[str], env: dict[str, str], stdin: Path | None, columns: int, tty: bool
) -> tuple[int | str, str, str]:
    with contextlib.ExitStack() as stack:
        fin = stack.enter_context(open(stdin, "rb")) if stdin else subprocess.DEVNULL
        if not tty:
            try:
                p = subprocess.run(argv, env=env, cwd=ROOT, stdin=fin, capture_output=True, timeout=900)
            except subprocess.TimeoutExpired as e:
                return "timeout", _text(e.stdout or b""), _text(e.stderr or b"")
            return p.returncode, _text(p.stdout), _text(p.stderr)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdin=fin, stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        chunks: list[bytes] = []

        def drain() -> None:
            while True:
                try:
                    b = os.read(master, 65536)
                except OSError:  # EIO: the other end closed
                    return
                if not b:
                    return
                chunks.append(b)

        reader = threading.Thread(target=drain)
        reader.start()
        err = proc.stderr.read() if proc.stderr else b""
        code = proc.wait()
        reader.join()
        os.close(master)
        return code, _text(b"".join(chunks)), _text(err)


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def wait_cache(folder: Path, expect: int = 1, timeout: float = 180.0) -> int:
    """Wait until `folder` holds `expect` entries and no temporary file (the detached writer is done):
    0, or 1 on timeout."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if folder.is_dir():
            names = [e.name for e in folder.iterdir()]
            if not any(n.startswith(".tmp") for n in names) and sum(not n.startswith(".") for n in names) >= expect:
                return 0
        time.sleep(0.1)
    return 1


def default_ksched() -> Path:
    here = Path(sys.executable).parent / "ksched"
    if here.exists():
        return here
    found = shutil.which("ksched")
    if not found:
        sys.exit("record_cli: no ksched next to this Python nor on PATH (--ksched PATH)")
    return Path(found)


def git(*args: str) -> str:
    p = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    return p.stdout.strip()


def cmd_record(a: argparse.Namespace) -> int:
    outdir = Path(a.outdir)
    if outdir.exists() and any(outdir.iterdir()):
        if not a.force:
            sys.exit(f"record_cli: {outdir} is not empty (--force replaces it)")
        shutil.rmtree(outdir)
    records = [r for r in expand() if not a.only or any(s in r["id"] for s in a.only)]
    uses_big = any(
        r["cache"] == "shared" or "$BIG" in " ".join(r["steps"]) or "$DER" in " ".join(r["steps"]) for r in records
    )
    genbig = Path(a.genbig or os.environ.get("KSCHED_GENBIG") or ROOT.parent / "shared" / "bench" / "genbig.py")
    if uses_big:
        ensure_data(genbig)
    ksched = Path(a.ksched) if a.ksched else default_ksched()
    where = subprocess.run(
        [str(ksched.parent / "python"), "-c", "import kschedcli; print(kschedcli.__file__)"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if where and not where.startswith(str(ROOT)):
        print(f"record_cli: warning: {ksched} runs kschedcli from {where}, not from {ROOT}", file=sys.stderr)
    started = {
        "commit": git("rev-parse", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        # the code recorded: the git tree of the package (equal trees, equal code, whatever the commit)
        "kschedcli_tree": git("rev-parse", "HEAD:kschedcli"),
        "kschedcli_dirty": bool(git("status", "--porcelain", "--untracked-files=no", "--", "kschedcli")),
    }
    t0 = time.perf_counter()
    base = Path(tempfile.mkdtemp(prefix="ksched-record-"))
    server = start_extender()
    ext_url = f"http://127.0.0.1:{server.server_address[1]}/scheduler"
    try:
        runner = Runner(ksched, base, base / "shared-cache", ext_url)
        if uses_big:
            warm_shared_cache(runner, records, a.jobs)
        # the slow rows first, so that the two workers end together
        order = sorted(records, key=lambda r: (r["cache"] != "shared" and "$BIG" not in str(r["steps"]), r["id"]))
        results: dict[str, dict[str, Any]] = {}
        done = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
            for res in pool.map(runner.run_one, order):
                results[res["id"]] = res
                done += 1
                if sys.stderr.isatty():
                    print(f"\r{done}/{len(order)}", end="", file=sys.stderr, flush=True)
        if sys.stderr.isatty():
            print(file=sys.stderr)
    finally:
        server.shutdown()
        shutil.rmtree(base, ignore_errors=True)
    (outdir / "records").mkdir(parents=True)
    timings = {}
    for rid, res in sorted(results.items()):
        timings[rid] = res.pop("_seconds")
        (outdir / "records" / f"{rid}.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    version = subprocess.run([str(ksched), "version"], capture_output=True, text=True).stdout.strip()
    data = {}
    if uses_big:
        for d in (BIG, DER):
            for p in sorted((ROOT / d).iterdir()):
                if p.suffix in (".json", ".yaml") and p.name != "manifest.json":
                    data[f"{d}/{p.name}"] = sha256(p)
    meta = {
        **started,
        "root": str(ROOT),
        "ksched": str(ksched),
        "kschedcli": where,
        "version": version,
        "python": sys.version.split()[0],
        "rows": len({r["row"] for r in records}),
        "records": len(records),
        "only": a.only,
        "data": data,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    (outdir / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    (outdir / "timings.json").write_text(json.dumps(timings, indent=1) + "\n")
    print(f"recorded {len(records)} invocations ({meta['rows']} rows) in {meta['seconds']} s to {outdir}")
    return 0


def warm_shared_cache(runner: Runner, records: list[dict[str, Any]], jobs: int) -> None:
    """Parse each set of --cluster files the shared-cache rows name once, and wait for the entries."""
    sets = set()
    for r in records:
        if r["cache"] != "shared":
            continue
        for step in r["steps"]:
            words = shlex.split(step)
            files = tuple(words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-c", "--cluster"))
            if files:
                sets.add(f"explain $DER/plain.yaml {' '.join('-c ' + f for f in files)} --fixes 0 -o json")
            elif words and words[0] == "run":  # the scenario's own paths: its own cache entry
                sets.add(f"run {words[1]}")
    warm = [
        {"id": f"warm-{i}", "row": "warm", "columns": 120, "extras": {}, "cache": "shared", "steps": [cmd]}
        for i, cmd in enumerate(sorted(sets))
    ]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(runner.run_one, warm))
    if wait_cache(runner.shared_cache, expect=len(warm), timeout=300):
        print("record_cli: warning: the shared cache was not filled in time; rows parse instead", file=sys.stderr)


# -- comparing ----------------------------------------------------------------------------------------


def load(d: Path) -> dict[str, dict[str, Any]]:
    folder = d / "records"
    if not folder.is_dir():
        sys.exit(f"record_cli: {d} holds no recording (no records/ folder)")
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def cmd_compare(a: argparse.Namespace) -> int:
    da, db = Path(a.a), Path(a.b)
    ra, rb = load(da), load(db)
    for d in (da, db):
        meta = json.loads((d / "meta.json").read_text()) if (d / "meta.json").is_file() else {}
        print(
            f"{d}: {meta.get('records', '?')} records, commit {meta.get('commit', '?')[:12]}"
            f"{' (dirty)' if meta.get('dirty') else ''}, kschedcli tree {meta.get('kschedcli_tree', '?')[:12]}"
            f"{' (dirty)' if meta.get('kschedcli_dirty') else ''}, {meta.get('version', '')}"
        )
    ma = json.loads((da / "meta.json").read_text()).get("data", {}) if (da / "meta.json").is_file() else {}
    mb = json.loads((db / "meta.json").read_text()).get("data", {}) if (db / "meta.json").is_file() else {}
    for f in sorted(set(ma) & set(mb)):
        if ma[f] != mb[f]:
            print(f"warning: input {f} differs between the recordings")
    differ = 0
    for rid in sorted(set(ra) | set(rb)):
        if rid not in ra or rid not in rb:
            print(f"\n=== {rid}: only in {da if rid in ra else db}")
            differ += 1
            continue
        sa, sb = ra[rid]["steps"], rb[rid]["steps"]
        lines: list[str] = []
        for i in range(max(len(sa), len(sb))):
            x = sa[i] if i < len(sa) else {"cmd": "(none)", "exit": None, "stdout": "", "stderr": ""}
            y = sb[i] if i < len(sb) else {"cmd": "(none)", "exit": None, "stdout": "", "stderr": ""}
            label = x["cmd"] if len(sa) == 1 else f"step {i + 1}: {x['cmd']}"
            if x["cmd"] != y["cmd"]:
                lines.append(f"  {label}: command differs: {y['cmd']}")
            if x["exit"] != y["exit"]:
                lines.append(f"  {label}: exit {x['exit']} -> {y['exit']}")
            for stream in ("stdout", "stderr"):
                if x[stream] != y[stream]:
                    diff = list(
                        difflib.unified_diff(
                            x[stream].splitlines(),
                            y[stream].splitlines(),
                            f"A/{stream}",
                            f"B/{stream}",
                            lineterm="",
                            n=2,
                        )
                    )
                    if not diff:  # only a final newline or line ends differ
                        diff = [f"  ({stream} differs in line ends: {len(x[stream])} vs {len(y[stream])} characters)"]
                    lines.append(f"  {label}: {stream} differs")
                    lines += ["    " + d for d in diff[: a.lines]]
                    if len(diff) > a.lines:
                        lines.append(f"    ... {len(diff) - a.lines} more diff lines")
        if lines:
            differ += 1
            print(f"\n=== {rid}")
            print("\n".join(lines))
    print(
        f"\n{differ} of {len(set(ra) | set(rb))} invocations differ"
        if differ
        else f"\nall {len(ra)} invocations identical"
    )
    return 1 if differ else 0


def cmd_list(a: argparse.Namespace) -> int:
    records = expand()
    for r in records:
        print(f"{r['id']:45} {' ; '.join(r['steps'])}")
    print(f"{len(INVOCATIONS)} rows, {len(records)} invocations")
    return 0


def cmd_show(a: argparse.Namespace) -> int:
    rec = load(Path(a.dir)).get(a.id)
    if rec is None:
        sys.exit(f"record_cli: no record {a.id}")
    for s in rec["steps"]:
        print(f"$ {s['cmd']}   (COLUMNS={rec['columns']}, exit {s['exit']})")
        print(s["stdout"], end="" if s["stdout"].endswith("\n") or not s["stdout"] else "\n")
        if s["stderr"]:
            print("--- stderr")
            print(s["stderr"], end="" if s["stderr"].endswith("\n") else "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="run every invocation and write OUTDIR")
    r.add_argument("outdir")
    r.add_argument("--jobs", type=int, default=2, help="invocations run at once (default 2)")
    r.add_argument("--only", action="append", help="only the invocations whose id contains this (repeatable)")
    r.add_argument("--ksched", help="the ksched executable (default: the one beside this Python)")
    r.add_argument("--genbig", help="genbig.py (default: ../shared/bench/genbig.py or $KSCHED_GENBIG)")
    r.add_argument("--force", action="store_true", help="replace a non-empty OUTDIR")
    c = sub.add_parser("compare", help="print the invocations that differ; exit 1 if any")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--lines", type=int, default=60, help="diff lines shown per stream (default 60)")
    sub.add_parser("list", help="print the invocations")
    s = sub.add_parser("show", help="print one record")
    s.add_argument("dir")
    s.add_argument("id")
    a = ap.parse_args()
    return {"record": cmd_record, "compare": cmd_compare, "list": cmd_list, "show": cmd_show}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
