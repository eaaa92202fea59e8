"""The views at 80 and 120 columns: properties of the text, not its bytes.

Every view of scripts/gallery.py (and a few more: --raw, --node, an extended resource, schedule -o wide)
is rendered through the CLI as a piped terminal of that width, and each line is checked:
- no line is longer than the width;
- no name is cut (`NodeResourcesBalan…`) or broken across two lines (`payments/payments-wor` / `ker-…`);
- no continuation line holds a lone number or lone lower-case word (`run`, `reasons`, `2.30`, `30Gi`);
- no non-breaking space (the views' glue) reaches the output.
Then the cases issue 12 named, one by one, on the lines they used to break.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from kschedcli.cli.app import app
from kschedcli.render.terminal.layout import bind_numbers, cpu_decimals, fmt_cores, glue_message, quantities

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import gallery  # noqa: E402

PROD = "fixtures/prod-cluster.yaml"
GPU_POD = """apiVersion: v1
kind: Pod
metadata: {name: trainer-5f7d9c8b6-abcde, namespace: ml}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: t
    image: x
    resources:
      requests: {cpu: "7", memory: 29Gi, nvidia.com/gpu: "2", ephemeral-storage: 10Gi}
      limits: {nvidia.com/gpu: "2"}
"""
HOSTNAME_SPREAD_POD = """apiVersion: v1
kind: Pod
metadata: {name: web-hostspread-1, namespace: shop, labels: {app: web}}
spec:
  priorityClassName: standard
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {matchLabels: {app: web}}}
  containers:
  - {name: w, image: x, resources: {requests: {cpu: 500m, memory: 512Mi}}}
"""


def gallery_views() -> list[tuple[str, list[str]]]:
    views = []
    for name, cmd, cluster, pods, opts in gallery.VIEWS:
        argv = [cmd, pods, "--cluster", cluster]
        for k, v in opts.items():
            if k != "width":
                argv += [f"--{k}", str(v)]
        views.append((name, argv))
    return views


EXTRA = [
    ("explain-raw", ["explain", "fixtures/pods/checkout.yaml", "-c", PROD, "--raw", "--top", "3"]),
    ("explain-all-nodes", ["explain", "fixtures/pods/reporting.yaml", "-c", PROD, "--all-nodes"]),
    ("explain-node-spread", ["explain", "fixtures/pods/web-spread.yaml", "-c", PROD, "--node", "general-b-01"]),
    ("schedule-wide", ["schedule", "fixtures/pods/rollout.yaml", "-c", PROD, "-o", "wide"]),
    ("schedule-pending", ["schedule", "-c", PROD]),
    ("drain", ["drain", "general-a-02", "-c", PROD]),
    ("drain-two", ["drain", "general-a-02", "general-a-03", "-c", PROD]),
    ("capacity", ["capacity", "fixtures/pods/web.yaml", "-c", PROD, "--top", "3"]),
    (
        "diff",
        ["diff", "fixtures/pods/rollout.yaml", "-c", PROD, "--against-config", "fixtures/config/most-allocated.yaml"],
    ),
    ("run", ["run", "fixtures/scenarios/lose-zone-a.yaml"]),
]


def render(argv: list[str], width: int) -> str:
    env = {"COLUMNS": str(width), "NO_COLOR": None, "FORCE_COLOR": None, "TERM": "xterm-256color"}
    r = CliRunner().invoke(app, argv, env=env, catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return r.stdout


def names_in_play() -> set[str]:
    """Names the views print that must never be cut or broken: the fixtures' nodes and pods, the
    plugins, the resources."""
    text = (ROOT / PROD).read_text()
    names = set(re.findall(r"^  name: (\S+)", text, re.M))
    names |= {f"{ns}/{n}" for ns, n in re.findall(r"name: (\S+), namespace: (\S+)", text)}
    for t in [text, *(p.read_text() for p in (ROOT / "fixtures" / "pods").glob("*.yaml"))]:
        for m in re.finditer(r"^  name: (\S+)\n  namespace: (\S+)", t, re.M):
            names.add(f"{m.group(2)}/{m.group(1)}")
    names |= {
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "TaintToleration",
        "NodeUnschedulable",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "ImageLocality",
        "DynamicResources",
        "nvidia.com/gpu",
        "ephemeral-storage",
    }
    return {n for n in names if len(n) > 4}


NAMES = names_in_play()
QUANTITY = re.compile(r"\(?[+−-]?\d[\d.,/]*[A-Za-z%×]*\)?")


def problems(out: str, width: int) -> list[str]:
    found = []
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if cell_len(line) > width:
            found.append(f"line {i + 1} is {cell_len(line)} columns: {line!r}")
        if "\xa0" in line:
            found.append(f"line {i + 1} holds a non-breaking space: {line!r}")
        if re.search(r"\S…", line):
            found.append(f"line {i + 1} cuts a word: {line!r}")
        if i == 0 or not line.strip():
            continue
        prev = lines[i - 1]
        token = line.strip()
        indent, prev_indent = len(line) - len(line.lstrip()), len(prev) - len(prev.lstrip())
        # a line under a longer one, indented further (a hanging line) or alike past the margin (a cell)
        continuation = prev.strip() and (indent > prev_indent or (indent == prev_indent > 2 and " " in prev.strip()))
        if continuation and " " not in token and (QUANTITY.fullmatch(token) or re.fullmatch(r"[a-z]+[.,;:)]?", token)):
            found.append(f"line {i + 1} is a lone {token!r} under {prev!r}")
        if prev.strip():
            last, first = prev.split()[-1], token.split()[0]
            joined = last + first
            if last not in NAMES and any(
                n.startswith(joined) or (joined.startswith(n) and len(last) < len(n))
                for n in NAMES
                if n.startswith(last)
            ):
                found.append(f"lines {i}-{i + 1} break a name: {last!r} / {first!r}")
    return found


@pytest.fixture(scope="module")
def pods_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("pods")
    (d / "gpu.yaml").write_text(GPU_POD)
    (d / "hostname-spread.yaml").write_text(HOSTNAME_SPREAD_POD)
    return d


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name,argv", gallery_views() + EXTRA, ids=[v[0] for v in gallery_views() + EXTRA])
def test_views_keep_their_words_whole(name, argv, width, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = render(argv, width)
    assert out.strip()
    assert problems(out, width) == []


@pytest.mark.parametrize("width", [80, 120])
def test_extended_resources_and_hostname_spread_keep_their_words_whole(pods_dir, width, monkeypatch):
    monkeypatch.chdir(ROOT)
    for pod in ("gpu.yaml", "hostname-spread.yaml"):
        out = render(["explain", str(pods_dir / pod), "-c", PROD], width)
        assert problems(out, width) == []
    out = render(["explain", str(pods_dir / "gpu.yaml"), "-c", PROD, "--node", "gpu-a-01"], width)
    assert problems(out, width) == []


def test_the_checks_catch_what_issue_12_saw():
    # each of these is a real line pair from before the fix; the checks must flag them
    assert problems("  ▶ first failure (what kube-scheduler reports)  ✓ passes  – not\n    run\n", 80)
    assert problems("  tie: x\n    weight\n      2.30\n", 80)
    assert problems("  general-a-01     29.8Gi of\n                       30Gi\n", 80)
    assert problems("  Plugin\n  NodeResourcesBalan…\n", 80)
    assert problems("  5   batch/reporting-28391745-x7k2q\n      +3 more\n      reasons\n", 80)
    assert problems("  1   payments/payments-wor\n      ker-7f6d5c4b3-9xk2p\n", 80)
    assert problems("  1   shop/web-7d9f8b6c5d-01w   1000   general-a-02\n      a\n", 80)  # drain, before
    assert problems("x" * 81, 80)
    assert problems("a\xa0b", 80)
    assert not problems("  general-c-05\n    ▶ NodeUnschedulable: unschedulable\n", 80)


# ----------------------------------------------------------------------------- issue 12, point by point


def lines_of(argv: list[str], width: int = 80) -> list[str]:
    return render(argv, width).splitlines()


def on_one_line(lines: list[str], phrase: str) -> bool:
    return any(phrase in x for x in lines)


def test_legend_fit_error_weight_and_critical_path_stay_whole(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = lines_of(["explain", "fixtures/pods/reporting.yaml", "-c", PROD])
    assert on_one_line(out, "– not run")
    assert on_one_line(out, "13 Insufficient cpu") and on_one_line(out, "13 Insufficient memory")
    assert on_one_line(out, "{workload: highmem}") and on_one_line(out, "{nvidia.com/gpu: present}")
    assert on_one_line(out, "1 node(s) were unschedulable")
    out = lines_of(["explain", "fixtures/pods/web-spread.yaml", "-c", PROD])
    assert on_one_line(out, "weight 2.30")
    assert on_one_line(out, "us-east-1b (2)") and on_one_line(out, "us-east-1c (2)")
    assert on_one_line(out, "selector app=web") and on_one_line(out, "the pod matches it")


def test_raw_scores_and_resources_names_are_never_cut(pods_dir, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = lines_of(["explain", "fixtures/pods/checkout.yaml", "-c", PROD, "--raw"])
    assert any(re.search(r"^\s+NodeResourcesBalancedAllocation\s+\d+\s+\d+\s+1\s+\d+\s*$", x) for x in out)
    out = lines_of(["explain", str(pods_dir / "gpu.yaml"), "-c", PROD])
    assert on_one_line(out, "nvidia.com/gpu 2")  # the pod's need, in the header
    assert on_one_line(out, "memory 29.8Gi of 30Gi") and on_one_line(out, "✗ nvidia.com/gpu 0 of 0")
    # 120 columns: a column per resource again, each cell on one line
    out = lines_of(["explain", str(pods_dir / "gpu.yaml"), "-c", PROD], 120)
    assert any(re.search(r"nvidia\.com/gpu\s*$", x) for x in out)
    assert any(
        re.search(r"general-b-05\s+56 of 58\s+7\.76 of 7\.91\s+29\.8Gi of 30Gi\s+95Gi of 95Gi\s+✗ 0 of 0", x)
        for x in out
    )
    out = lines_of(["explain", str(pods_dir / "gpu.yaml"), "-c", PROD, "--node", "gpu-a-01"])
    assert any(re.search(r"^\s+ephemeral-storage\s+95Gi\s+0\s+95Gi\s+10Gi\s+✓\s*$", x) for x in out)
    assert any(re.search(r"^\s+nvidia\.com/gpu\s+1\s+0\s+1\s+2\s+✗ short by 1\s*$", x) for x in out)


def test_schedule_reasons_wrap_under_the_row_not_the_pod_column(monkeypatch):
    monkeypatch.chdir(ROOT)
    out = lines_of(["schedule", "fixtures/pods/rollout.yaml", "-c", PROD])
    row = next(i for i, x in enumerate(out) if "batch/reporting-28391745-x7k2q" in x)
    reason = out[row + 1 : row + 4]
    assert [x[:8] for x in reason] == [" " * 8] * 3 and all(x[8] != " " for x in reason)
    assert reason[-1].endswith("+3 more reasons")
    assert on_one_line(out, "batch/reporting-28391745-x7k2q")
    for width in (120, 160):
        out = lines_of(["schedule", "-c", PROD], width)
        assert on_one_line(out, "shop/checkout-6b8c9d7f5-h2j4k") and on_one_line(out, "batch/reporting-28391745-x7k2q")


def test_wording(pods_dir, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    text = " ".join(" ".join(lines_of(["explain", "fixtures/pods/web-spread.yaml", "-c", PROD], 200)).split())
    assert "us-east-1b 2 2 + 1 − 2 = 1 ≤ 1 ✓ 4 of 7 nodes" in text  # zone b has 7 nodes, 4 asked about
    preempt = " ".join(" ".join(lines_of(["preempt", "fixtures/pods/payments.yaml", "-c", PROD], 200)).split())
    assert "13 nodes where preemption might help, 13 evaluated, 12 candidates found" in preempt
    assert "kube-scheduler evaluates every one" in preempt and "stops at" not in preempt
    node = " ".join(
        " ".join(lines_of(["explain", "fixtures/pods/payments.yaml", "-c", PROD, "--node", "general-a-01"])).split()
    )
    assert "(ranked lower: more PDB violations)" in node and "pdbViolations" not in node
    host = " ".join(" ".join(lines_of(["explain", str(pods_dir / "hostname-spread.yaml"), "-c", PROD])).split())
    assert "general-b-05 0 not asked: TaintToleration rejected it" in host
    assert "general-c-05 0 not asked: NodeUnschedulable rejected it" in host
    # singular and plural
    one = tmp_path / "one-node.yaml"
    one.write_text((ROOT / "fixtures" / "small-cluster.yaml").read_text().split("\n---")[0])
    r = CliRunner().invoke(app, ["-v", "explain", "fixtures/pods/web.yaml", "-c", str(one)])
    assert "ksched: read 1 node, 0 bound pods" in r.stderr
    assert "1 of 1 node feasible" in r.stdout
    gpu = " ".join(" ".join(lines_of(["explain", str(pods_dir / "gpu.yaml"), "-c", PROD])).split())
    assert "20 nodes lack resources" in gpu
    reporting = " ".join(" ".join(lines_of(["explain", "fixtures/pods/reporting.yaml", "-c", PROD])).split())
    assert "… 12 more nodes (--all-nodes lists them)" in reporting


def test_cpu_at_one_precision_per_column():
    assert cpu_decimals([6594, 7500]) == 3 and cpu_decimals([2260, 7910]) == 2 and cpu_decimals([4000]) == 0
    fmt = quantities("cpu", [6594, 7500, 2260, 7910])
    assert [fmt(v) for v in (6594, 7500, 2260, 7910, 250)] == ["6.594", "7.500", "2.260", "7.910", "0.250"]
    assert fmt_cores(-1740, 2) == "-1.74" and fmt_cores(7000, 0) == "7"
    assert quantities("memory", [1 << 30])(30 << 30) == "30Gi"


def test_glue_binds_counts_and_reasons():
    nb = "\xa0"
    assert bind_numbers("weight 2.30") == f"weight{nb}2.30"
    assert bind_numbers("us-east-1b (2), us-east-1c (2)") == f"us-east-1b{nb}(2), us-east-1c{nb}(2)"
    assert bind_numbers("cpu, 13 Insufficient") == f"cpu, 13{nb}Insufficient"  # a comma stays a break
    msg = glue_message("0/20 nodes are available: 13 Insufficient cpu, 3 node(s) had untolerated taint {a: b}.")
    assert f"13{nb}Insufficient{nb}cpu" in msg and f"{{a:{nb}b}}" in msg


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "fixtures/pods/web.yaml", "-c", "fixtures/small-cluster.yaml"],
        ["schedule", "fixtures/pods/rollout.yaml", "-c", PROD],
        ["drain", "general-a-02", "-c", PROD],
        ["capacity", "fixtures/pods/web.yaml", "-c", PROD, "--top", "3"],
    ],
    ids=["explain", "schedule", "drain", "capacity"],
)
def test_the_release_footer_breaks_before_its_reason(argv, monkeypatch):
    # at 80 columns `ksched follows kube-scheduler v1.34.1 (default: no node reports a kubelet version)`
    # left `kubelet version)` alone on a line; the reason now goes whole onto the next
    monkeypatch.chdir(ROOT)
    lines = render(argv, 80).rstrip("\n").splitlines()
    assert lines[-2:] == ["ksched follows kube-scheduler v1.34.1", "  (default: no node reports a kubelet version)"]
    assert render(argv, 120).rstrip("\n").splitlines()[-1] == (
        "ksched follows kube-scheduler v1.34.1 (default: no node reports a kubelet version)"
    )


def test_diff_keeps_each_flag_of_a_world_with_its_value(monkeypatch):
    # at 80 columns world B's `--config` ended a line and its file began the next
    monkeypatch.chdir(ROOT)
    argv = ["diff", "fixtures/pods/rollout.yaml", "-c", PROD, "--against-config", "fixtures/config/most-allocated.yaml"]
    lines = render([*argv, "--cordon", "general-a-01"], 80).splitlines()
    b = next(i for i, line in enumerate(lines) if line.startswith("  B  "))
    assert lines[b : b + 2] == [
        "  B  --cluster fixtures/prod-cluster.yaml",
        "    --config fixtures/config/most-allocated.yaml --cordon general-a-01",
    ]
    assert not [line for line in lines if re.search(r"--[a-z-]+$", line)]


# ----------------------------------------------------------------------------- real-length names (issue 28)
# fixtures/eks-cluster.yaml: EKS node names of 40-42 characters and one of 63 (a hostname label's
# limit), pods of 50-70 characters. Every view, at 80, 100, 120 and 200 columns: no line wider than
# the terminal, and every name whole on one line (a table whose names do not fit side by side stacks).

EKS = "fixtures/eks-cluster.yaml"
LONGEST = "ip-10-0-128-200.highmem-r6i-4xlarge1.us-east-1.compute.internal"
FRAUD = "payments/fraud-scoring-service-realtime-inference-7f8e9d6c5b-zq8mw"
LEDGER = "payments/payments-ledger-reconciliation-highmem-worker-5b7c9d8e6f-q4r8t"
CHECKOUT = "shop/checkout-frontend-canary-release-6b8c9d7f5-h2j4k"
REPORTING = "batch/quarterly-revenue-reporting-aggregation-28391745-x7k2q"
GENOMICS = "batch/genomics-variant-calling-pipeline-highmem-worker-28391745-{:05d}"
SELECTED = "ip-10-0-64-10.us-east-1.compute.internal"  # where FRAUD goes (first of its tie)
WAREHOUSE = "fixtures/workloads/warehouse-statefulset.yaml"
WAREHOUSE_NAME = "payments/payments-ledger-postgresql-replica-analytics-warehouse"


def eks_names() -> list[str]:
    import yaml

    objs = [o for o in yaml.safe_load_all((ROOT / EKS).read_text()) if o]
    names = {o["metadata"]["name"] for o in objs if o["kind"] in ("Node", "Pod")}
    names |= {f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objs if o["kind"] == "Pod"}
    names |= {WAREHOUSE_NAME, WAREHOUSE_NAME.split("/")[1], *(f"{WAREHOUSE_NAME}-{i}" for i in range(3))}
    return sorted((n for n in names if len(n) >= 24), key=len, reverse=True)


EKS_NAMES = eks_names()

# each view, with names it must print whole (on one line)
EKS_VIEWS = {
    "explain": (["explain", FRAUD, "-c", EKS], [FRAUD, SELECTED, LONGEST]),
    "explain-node": (["explain", FRAUD, "-c", EKS, "--node", LONGEST], [FRAUD, LONGEST]),
    "explain-node-pods": (
        ["explain", REPORTING, "-c", EKS, "--node", "ip-10-0-32-1.us-east-1.compute.internal"],
        ["payments/fraud-scoring-service-realtime-inference-7f8e9d6c5b-00000"],
    ),
    "explain-all-nodes": (["explain", LEDGER, "-c", EKS, "--all-nodes"], [LEDGER, LONGEST]),
    "explain-raw": (["explain", FRAUD, "-c", EKS, "--raw", "--top", "0"], [SELECTED, LONGEST]),
    "explain-preemption-fixes": (["explain", LEDGER, "-c", EKS], [LEDGER, LONGEST, GENOMICS.format(2)]),
    "preempt": (["preempt", LEDGER, "-c", EKS], [LONGEST, *(GENOMICS.format(i) for i in range(3))]),
    "schedule": (["schedule", "-c", EKS], [FRAUD, LEDGER, CHECKOUT, REPORTING, SELECTED, GENOMICS.format(2)]),
    "schedule-wide": (["schedule", "-c", EKS, "-o", "wide"], [FRAUD, LEDGER, SELECTED, LONGEST]),
    "capacity": (["capacity", "fixtures/pods/checkout.yaml", "-c", EKS], [LONGEST]),
    "drain": (
        [
            "drain",
            "ip-10-0-32-1.us-east-1.compute.internal",
            "ip-10-0-48-1.us-east-1.compute.internal",
            "-c",
            EKS,
            "--force",
        ],
        [
            "payments/fraud-scoring-service-realtime-inference-7f8e9d6c5b-00000",
            "ip-10-0-32-1.us-east-1.compute.internal",
            SELECTED,
        ],
    ),
    "diff": (
        ["diff", "-c", EKS, "--cordon", "ip-10-0-64-9.us-east-1.compute.internal", "--cordon", SELECTED],
        [FRAUD, CHECKOUT, REPORTING, "ip-10-0-64-11.us-east-1.compute.internal"],
    ),
    "run": (["run", "fixtures/scenarios/eks-lose-zone-a.yaml"], [FRAUD, LEDGER, CHECKOUT, REPORTING]),
    "schedule-carry-out": (["schedule", "-c", EKS, "--preemption", "carry-out"], [LEDGER, LONGEST]),
    "schedule-workload": (["schedule", WAREHOUSE, "-c", EKS], [f"StatefulSet {WAREHOUSE_NAME}", f"{WAREHOUSE_NAME}-2"]),
    "capacity-workload": (["capacity", WAREHOUSE, "-c", EKS], [f"StatefulSet {WAREHOUSE_NAME}", LONGEST]),
    "diff-workload": (["diff", WAREHOUSE, "-c", EKS, "--cordon", "pool=highmem"], [f"{WAREHOUSE_NAME}-0", LONGEST]),
}


def cut_names(out: str, width: int) -> list[str]:
    """Lines longer than width, and names not whole on their line: a run of name characters that is
    the start of a name (15 characters or more, or followed by `…`) but no name, or its end at the
    start of a line."""
    found = []
    for i, line in enumerate(out.splitlines(), start=1):
        if cell_len(line) > width:
            found.append(f"line {i} is {cell_len(line)} columns: {line!r}")
        for m in re.finditer(r"[A-Za-z0-9][A-Za-z0-9./-]{9,}", line):
            tok = m.group().rstrip(".,")
            if tok in EKS_NAMES:
                continue
            cut = line[m.end() : m.end() + 1] == "…"
            if (len(tok) >= 15 or cut) and any(n.startswith(tok) for n in EKS_NAMES):
                found.append(f"line {i} cuts a name: {line!r}")
            elif not line[: m.start()].strip() and any(n.endswith(tok) and n != tok for n in EKS_NAMES):
                found.append(f"line {i} holds the end of a name: {line!r}")
    return found


@pytest.mark.parametrize("width", [80, 90, 100, 120, 132, 200])
@pytest.mark.parametrize("view", list(EKS_VIEWS))
def test_real_length_names_are_never_cut(view, width, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv, whole = EKS_VIEWS[view]
    out = render(argv, width)
    assert out.strip()
    assert cut_names(out, width) == []
    lines = out.splitlines()
    for name in whole:
        assert any(re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w-])", line) for line in lines), (name, out)


def test_the_name_checks_catch_what_issue_28_saw():
    assert cut_names("  ip-10-0-32…   ✔ ip-10-0-64-…", 80)
    assert cut_names("  payments/fraud-scor   100000", 80)
    assert cut_names("  ing-service-realtime-inference-7f8e9d6c5b-zq8mw", 80)
    assert cut_names("x" * 81, 80)
    assert not cut_names(f"  {FRAUD}  {SELECTED}", 200)


# ----------------------------------------------------------------------------- 60-character node names
# Every table view of every command over 6 nodes named with 60 characters (tests/longnames.py), one of
# them tainted with a long key, and pods of 80 characters and more (namespace/name): at 80, 120 and 200
# columns no line is wider than the terminal, no word, number or header is cut (`4…`, `No…`), every
# node name is whole on its line, and every number the -o json document holds for a row is in the view
# whole (the score table's raw, normalized, weight, weighted and total; drain's pod counts).

sys.path.insert(0, str(ROOT / "tests"))
from longnames import NAME_LENGTH, long_cluster  # noqa: E402

LONG_TAINT = {
    "key": "dedicated-very-long-taint-key.example.com/some-team-name",
    "value": "a-very-long-taint-value-1234567890",
    "effect": "NoSchedule",
}


@pytest.fixture(scope="module")
def sixty(tmp_path_factory) -> dict[str, str]:
    import yaml

    d = tmp_path_factory.mktemp("sixty")
    objs = long_cluster(nodes=6, pending=2, workloads=2)
    nodes = [o for o in objs if o["kind"] == "Node"]
    nodes[-1]["spec"]["taints"] = [LONG_TAINT]
    cluster = d / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    pending = next(o["metadata"] for o in objs if o["kind"] == "Pod" and o["status"]["phase"] == "Pending")
    scenario = d / "scenario.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "ksched.io/v1alpha1",
                "kind": "Scenario",
                "metadata": {"name": "lose-a-zone"},
                "cluster": [str(cluster)],
                "edits": [{"cordon": "topology.kubernetes.io/zone=us-central1-a"}],
            }
        )
    )
    names = [n["metadata"]["name"] for n in nodes]
    return {
        "cluster": str(cluster),
        "scenario": str(scenario),
        "web": str(ROOT / "fixtures" / "pods" / "web.yaml"),
        "pending": f"{pending['namespace']}/{pending['name']}",
        "node0": names[0],
        "node1": names[1],
        "tainted": names[-1],
    }


SIXTY_VIEWS = {
    "explain": ["explain", "{web}", "-c", "{cluster}"],
    "explain-all-nodes": ["explain", "{web}", "-c", "{cluster}", "--all-nodes"],
    "explain-raw": ["explain", "{web}", "-c", "{cluster}", "--raw", "--top", "0"],
    "explain-raw-all-nodes": ["explain", "{web}", "-c", "{cluster}", "--all-nodes", "--raw"],
    "explain-node": ["explain", "{web}", "-c", "{cluster}", "--node", "{node0}"],
    "explain-node-tainted": ["explain", "{web}", "-c", "{cluster}", "--node", "{tainted}"],
    "explain-pending": ["explain", "{pending}", "-c", "{cluster}"],
    "preempt": ["preempt", "{pending}", "-c", "{cluster}"],
    "schedule": ["schedule", "-c", "{cluster}"],
    "schedule-wide": ["schedule", "-c", "{cluster}", "-o", "wide"],
    "capacity": ["capacity", "{web}", "-c", "{cluster}", "--max", "12"],
    "drain": ["drain", "{node0}", "-c", "{cluster}"],
    "drain-two": ["drain", "{node0}", "{node1}", "-c", "{cluster}", "--force"],
    "diff": ["diff", "-c", "{cluster}", "--cordon", "{node0}"],
    "sweep": ["sweep", "-c", "{cluster}", "--fail", "zone", "--workers", "1"],
    "scale-up": ["scale-up", "-c", "{cluster}"],
    "scale-down": ["scale-down", "-c", "{cluster}"],
    "run": ["run", "{scenario}"],
}


def sixty_argv(view: str, files: dict[str, str]) -> list[str]:
    return [a.format(**files) for a in SIXTY_VIEWS[view]]


def document(argv: list[str]) -> dict:
    import json

    r = CliRunner().invoke(app, [*argv, "-o", "json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def whole(number: object) -> str:
    """A regex of number as a token of its own: not the start or end of a longer one, nor cut (`4…`)."""
    return rf"(?<![\w.…]){re.escape(str(number))}(?![\w.…])"


def cuts(out: str, width: int) -> list[str]:
    """Lines wider than width, words, numbers or headers cut (`4…`, `No…`, `ip-10-0-0-0.eu-west-1…`), and
    60-character node names not whole on their line."""
    found = []
    for i, line in enumerate(out.splitlines(), start=1):
        if cell_len(line) > width:
            found.append(f"line {i} is {cell_len(line)} columns: {line!r}")
        if re.search(r"\S…", line):
            found.append(f"line {i} cuts a word: {line!r}")
        for m in re.findall(r"gke-production-cluster-\S*", line):
            if len(m.rstrip("),;:.")) < NAME_LENGTH:
                found.append(f"line {i} cuts a node name: {line!r}")
    return found


@pytest.mark.parametrize("width", [80, 120, 200])
@pytest.mark.parametrize("view", list(SIXTY_VIEWS))
def test_sixty_character_node_names_cut_nothing(sixty, view, width):
    out = render(sixty_argv(view, sixty), width)
    assert out.strip()
    assert cuts(out, width) == []


def test_the_cut_checks_catch_what_the_fuzzer_saw():
    # each of these is a line from before the fix, at 80 columns
    assert cuts("    Node / plugin                                                …   No…      S…", 80)
    assert cuts("      total                                                                   4…", 80)
    assert cuts("  Node                                                           Drainable   Po…", 80)
    assert cuts("    gke-production-cluster-default-pool-55bc5b3f-4de1.us-centr…", 80)
    assert not cuts("  … 3 more feasible nodes (--top 0 shows all)", 80)


@pytest.mark.parametrize("width", [80, 120, 200])
@pytest.mark.parametrize("view", ["explain-raw", "explain-raw-all-nodes"])
def test_sixty_raw_scores_every_number_whole(sixty, view, width):
    """Each node's row of each plugin holds its raw, normalized, weight and weighted score, whole and in
    order, and its total: the numbers of the -o json document."""
    argv = sixty_argv(view, sixty)
    scores = document(argv)["scores"]
    assert len(scores) >= 5
    lines = render(argv, width).splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if line.startswith("Scores  ")) :]
    for node, per in scores.items():
        at = next(i for i, line in enumerate(lines) if re.search(rf"\s{re.escape(node)}(\s|$)", line))
        block = lines[at : at + len(per["plugins"]) + 2]  # the node's line, its plugins' rows, its total
        for plugin, s in per["plugins"].items():
            row = rf"\s{plugin}\s+{s['raw']}\s+{s['normalized']}\s+{s['weight']}\s+{s['weighted']}\s*$"
            assert any(re.search(row, line) for line in block), (node, plugin, block)
        assert any(re.search(rf"^\s+total\s+{per['total']}\s*$", line) for line in block), (node, block)
    # the headers whole, long or deliberately short, never a bare `…`
    head = next(line for line in lines if "Node / plugin" in line or re.search(r"^\s+#\s+Node\s", line))
    assert re.search(r"\bRaw\s+(Normalized|Norm\.)\s+(Weight|Wt)\s+(Weighted|Score)\s*$", head), head


@pytest.mark.parametrize("width", [80, 120, 200])
def test_sixty_weighted_scores_every_total_whole(sixty, width):
    argv = sixty_argv("explain", sixty)
    scores = document(argv)["scores"]
    lines = render(argv, width).splitlines()
    section = lines[next(i for i, line in enumerate(lines) if line.startswith("Scores  ")) :]
    for node, per in scores.items():
        at = next(i for i, line in enumerate(section) if node in line)
        # the total at the end of the node's row, or on the line under a stacked row
        near = " ".join(section[at : at + 2])
        assert re.search(whole(per["total"]), near), (node, near)


@pytest.mark.parametrize("width", [80, 120, 200])
@pytest.mark.parametrize("view", ["drain", "drain-two"])
def test_sixty_drain_counts_whole(sixty, view, width):
    """Each drained node's line says how many of its pods are evicted and how many stay, whole, and the
    score of each replacement: as many as the -o json document has."""
    argv = sixty_argv(view, sixty)
    drain = document(argv)["drain"]
    out = render(argv, width)
    lines = out.splitlines()
    assert re.search(r"\bDrainable\b|\bdrainable ✔", out)
    for n in drain["nodes"]:
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(n["node"]))
        near = " ".join(lines[at : at + 2])
        evicted = sum(p["action"] == "evicted" for p in n["pods"])
        stays = sum(p["action"] == "daemonset" for p in n["pods"])
        assert evicted and stays, n  # each node runs Deployment pods and a DaemonSet's
        assert re.search(whole(evicted) + " evicted", near), (n["node"], near)
        assert re.search(whole(stays) + r" stays \(DaemonSet pod\)", near), (n["node"], near)
    assert len(drain["evicted"]) == len(re.findall(r"score \d+(?![\d…])", out))


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("view", ["schedule", "schedule-wide", "run", "drain"])
def test_sixty_pod_names_longer_than_a_line_break_but_are_never_cut(sixty, view, width):
    """A pod name of 81 characters (namespace/name) does not fit on a line of 80: it goes on under its
    start, never cropped (schedule and run cropped every such row at the terminal's edge, silently, so
    that two pods differing at the end read the same; drain's rescheduled pods already broke)."""
    argv = sixty_argv(view, sixty)
    doc = document(argv)
    pods = [r["pod"] for r in doc["results"]] if "results" in doc else [e["pod"] for e in doc["drain"]["evicted"]]
    assert pods and max(len(p) for p in pods) > 80
    joined = re.sub(r" *\n *", "", render(argv, width))  # each name's pieces put together again
    for pod in pods:
        assert pod in joined, pod


@pytest.mark.parametrize("width", [80, 120, 200])
def test_drain_reasons_too_long_for_their_column_go_under_their_pod(tmp_path, width):
    """A replacement that fits nowhere carries kube-scheduler's long message. Where the Why column
    would be left a few words wide (80 columns), each pod's rows are stacked and its message runs
    under it at the line's width, broken between words only; wider, it stays beside its pod. The
    message reads whole either way, once its lines are joined."""
    import yaml

    def node(name, **spec):
        labels = {"kubernetes.io/hostname": name}
        status = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": status,
        }

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-abc-2",
            "namespace": "shop",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "u", "controller": True}
            ],
        },
        "spec": {
            "nodeName": "node-d",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        },
        "status": {"phase": "Running"},
    }
    taint = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
    items = [node("node-d"), node("node-b", unschedulable=True), node("node-c", taints=taint), pod]
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    argv = ["drain", "node-d", "-c", str(snap)]
    [evicted] = document(argv)["drain"]["evicted"]
    message = evicted["message"]
    assert len(message) > 100 and "{node.kubernetes.io/not-ready: }" in message
    out = render(argv, width)
    section = out[out.index("Rescheduled") :]
    assert all(len(line) <= width for line in section.splitlines())
    joined = " ".join(line.strip() for line in section.splitlines())
    assert message in joined, section
    if width == 80:
        assert re.search(r"^\s+from node-d → ✘ fits nowhere\s*$", section, re.M), section
