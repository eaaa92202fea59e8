"""The conformance corpus recorded from kube-scheduler v1.34.1, run in-process; and the same cases
recorded from v1.33.0, v1.35.7 and v1.36.2 (expected-v1.3X.json), run with that release chosen.

Looked for at $KSCHED_CONFORMANCE or ../shared/conformance beside the checkout; skipped when absent.
Each case is compared field by field with the corpus' own checker (check.py's compare_result).
"""

from __future__ import annotations

import importlib.util
import os
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("KSCHED_CONFORMANCE", ROOT.parent / "shared" / "conformance"))
KNOWN_FAILURES_FILE = Path(__file__).parent / "conformance_known_failures.txt"


def _known_failures() -> dict[str, str]:
    out = {}
    if KNOWN_FAILURES_FILE.exists():
        for line in KNOWN_FAILURES_FILE.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                name, _, why = line.partition(" ")
                out[name] = why.strip()
    return out


def _cases():
    cases_dir = CORPUS / "cases"
    if not cases_dir.is_dir():
        return []
    return sorted(p for p in cases_dir.iterdir() if (p / "expected.json").exists())


OTHER_VERSIONS = ("v1.33", "v1.35", "v1.36")


def _versioned_cases():
    return [(c, v) for v in OTHER_VERSIONS for c in CASES if (c / f"expected-{v}.json").exists()]


def _checker():
    spec = importlib.util.spec_from_file_location("ksched_conformance_check", CORPUS / "check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CASES = _cases()
KNOWN = _known_failures()
VERSIONED = _versioned_cases()


SKIP_REASON = (
    f"conformance corpus not found at {CORPUS}. It is recorded from kube-scheduler v1.34.1 and "
    "kept beside the checkout, not in it: put it at ../shared/conformance or point "
    "KSCHED_CONFORMANCE=DIR at it, then `python -m pytest -q` runs it in-process and "
    "`python ../shared/conformance/check.py` runs it through the ksched command"
)


def _diffs(case: Path, expected: Path, kubernetes_version: str | None) -> list[str]:
    import json

    from kschedcli.render.document import run_doc
    from kschedcli.whatif.world import open_world, schedule_file

    check = _checker()
    cfg = case / "config.yaml"
    session = open_world(
        [str(case / "cluster.yaml")], str(cfg) if cfg.exists() else None, kubernetes_version=kubernetes_version
    )
    got = json.loads(
        json.dumps(run_doc(schedule_file(session, str(case / "pods.yaml"), order="file"), version=session.version))
    )
    exp = json.loads(expected.read_text())
    diffs: list[str] = []
    tally: Counter = Counter()
    if got["kubernetesVersion"] != exp["kubernetesVersion"]:
        diffs.append(f"followed {got['kubernetesVersion']}, expected {exp['kubernetesVersion']}")
    if len(got["results"]) != len(exp["results"]):
        diffs.append(f"{len(got['results'])} results, expected {len(exp['results'])}")
    for i, (e, g) in enumerate(zip(exp["results"], got["results"])):
        check.compare_result(e, g, diffs, tally, f"[{i}] {e.get('pod')}")
    return diffs


@pytest.mark.skipif(not CASES, reason=SKIP_REASON)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_matches_kube_scheduler(case: Path):
    # no --kubernetes-version: the corpus' nodes report no kubelet version, so v1.34 is followed
    diffs = _diffs(case, case / "expected.json", None)
    if case.name in KNOWN:
        # A listed case must still fail: one that passes has its line deleted from the list.
        assert diffs, f"{case.name} passes now: delete its line from {KNOWN_FAILURES_FILE.name}"
        pytest.xfail(KNOWN[case.name])
    assert not diffs, "\n".join(diffs[:20])


@pytest.mark.skipif(not VERSIONED, reason=f"no other releases' results in {CORPUS}")
@pytest.mark.parametrize("case,version", VERSIONED, ids=[f"{c.name}@{v}" for c, v in VERSIONED])
def test_case_matches_other_releases(case: Path, version: str):
    diffs = _diffs(case, case / f"expected-{version}.json", version)
    if case.name in KNOWN and diffs:
        # the list is by case name; its line goes when the case passes under v1.34 (above), and a
        # listed case may already pass under a release where its feature is off (DRA in v1.33)
        pytest.xfail(KNOWN[case.name])
    assert not diffs, "\n".join(diffs[:20])
