"""The result model as a JSON-ready document: FORMAT.md's fields first, then ksched's extras."""

from __future__ import annotations

from typing import Any

from .. import KUBE_SCHEDULER_VERSION, __version__
from ..config.versions import Choice
from ..framework.result import (
    NOT_ASKED,
    Candidate,
    CycleResult,
    ExtenderCall,
    FilterTable,
    PreemptionResult,
    ScoreTable,
)
from ..framework.status import Status
from ..scheduling.analysis import annotations_of, verdict_of


def status_doc(st: Status | None, with_plugin: bool = True) -> dict | None:
    if st is None:
        return None
    d: dict[str, Any] = {}
    if with_plugin:
        d["plugin"] = st.plugin
    d["code"] = st.code
    d["reasons"] = list(st.reasons)
    return d


def _plugin_status(st: Status | None) -> dict:
    if st is None:
        return {"code": "Success", "reasons": []}
    return {"code": st.code, "reasons": list(st.reasons)}


def _candidate(c: Candidate, full: bool) -> dict:
    d: dict[str, Any] = {"node": c.node, "victims": list(c.victims)}
    if full:
        d["pdbViolations"] = c.pdb_violations
        d["victimPriorities"] = list(c.victim_priorities)
        if c.decided_by:
            d["lostOn"] = c.decided_by
    return d


def preemption_doc(p: PreemptionResult | None, full: bool = True) -> dict | None:
    """The preemption's outcome; `full` adds every candidate and the nodes where it cannot help."""
    if p is None:
        return None
    d: dict[str, Any] = {
        "nominatedNode": p.nominated_node,
        "victims": list(p.victims),
        "equallyGoodCandidates": [_candidate(c, False) for c in p.equally_good],
        "message": p.message,
    }
    if not full:
        if p.ineligible:
            d["ineligible"] = p.ineligible
        return d
    if p.candidates:
        d["candidates"] = [_candidate(c, True) for c in p.candidates]
    if p.not_helpful:
        d["notHelpful"] = {k: p.not_helpful[k] for k in sorted(p.not_helpful)}
    if p.ineligible:
        d["ineligible"] = p.ineligible
    return d


def _filters_doc(ft) -> dict:
    if not isinstance(ft, FilterTable):
        return {
            node: {
                "firstFailure": status_doc(nf.first_failure),
                "plugins": {p: _plugin_status(st) for p, st in sorted(nf.plugins.items())},
            }
            for node, nf in sorted(ft.items())
        }
    # Read column by column: one part of the document per distinct status object (shared by the
    # nodes that got it: the document is read-only, and the YAML writer never writes aliases).
    plugins = sorted(ft.columns)
    columns = []
    asked = True  # every column holds a status for every node (an extender's may not)
    for p in plugins:
        col = ft.columns[p]
        parts = {id(st): _plugin_status(st) for st in set(col) if st is not NOT_ASKED}
        if len(parts) < len(set(map(id, col))):
            asked = False
            parts[id(NOT_ASKED)] = NOT_ASKED
        columns.append(list(map(parts.__getitem__, map(id, col))))
    firsts = {id(f): status_doc(f) for f in set(ft.first)}
    first = list(map(firsts.__getitem__, map(id, ft.first)))
    rows = list(zip(*columns)) if columns else [()] * len(ft.names)
    names = ft.names
    order = sorted(range(len(names)), key=names.__getitem__)
    if asked:
        return {names[i]: {"firstFailure": first[i], "plugins": dict(zip(plugins, rows[i]))} for i in order}
    return {
        names[i]: {
            "firstFailure": first[i],
            "plugins": {p: d for p, d in zip(plugins, rows[i]) if d is not NOT_ASKED},  # an extender never sent it
        }
        for i in order
    }


def _scores_doc(r: CycleResult) -> dict:
    table = r.scores
    if not isinstance(table, ScoreTable):
        parts: dict[tuple, dict] = {}
        out = {}
        for node in sorted(table):
            per = {}
            for p, s in sorted(table[node].items()):
                key = (s.raw, s.normalized, s.weight)
                d = parts.get(key)
                if d is None:
                    d = parts[key] = {
                        "raw": s.raw,
                        "normalized": s.normalized,
                        "weight": s.weight,
                        "weighted": s.weighted,
                    }
                per[p] = d
            out[node] = {"plugins": per, "total": r.totals[node]}
        return out
    # column by column, as _filters_doc: one part per distinct (raw, normalized, weight)
    columns = sorted(table.columns, key=lambda c: c[0])
    plugins = [c[0] for c in columns]
    docs = []
    for _, raw, norm, w in columns:
        pairs = list(zip(raw, norm))
        parts_w = {(a, b): {"raw": a, "normalized": b, "weight": w, "weighted": b * w} for a, b in set(pairs)}
        docs.append(list(map(parts_w.__getitem__, pairs)))
    rows = list(zip(*docs)) if docs else [()] * len(table.names)
    names, totals = table.names, r.totals
    return {
        names[i]: {"plugins": dict(zip(plugins, rows[i])), "total": totals[names[i]]}
        for i in sorted(range(len(names)), key=names.__getitem__)
    }


def result_doc(r: CycleResult) -> dict:
    pod = r.pod
    filters = _filters_doc(r.filters)
    scores = _scores_doc(r)
    doc: dict[str, Any] = {
        "pod": pod.key,
        "profile": r.profile,
        "schedulable": r.schedulable,
        "preFilter": status_doc(r.pre_filter),
        "filters": filters,
        "feasibleNodes": sorted(r.feasible),
        "scores": scores,
        "topNodes": list(r.top_nodes),
        "selectedNode": r.selected_node,
        "message": r.message,
        "preemption": preemption_doc(r.preemption),
        # ksched's additions
        "priority": pod.priority,
        "requests": pod.requests.as_dict(),
        "filterPlugins": list(r.filter_plugins),
        "scorePlugins": list(r.score_plugins),
        "preFilterSkipped": list(r.pre_filter_skipped),
        "preScore": status_doc(r.pre_score),
        "preScoreSkipped": None if r.pre_score_skipped is None else list(r.pre_score_skipped),
    }
    if r.input_unbound is not None:
        doc["input"] = {"unbound": dict(r.input_unbound)}
    # the explanation's data (render/analysis.py), present when the result was annotated
    ann = annotations_of(r)
    doc["verdict"] = verdict_of(r)
    doc["priorityClassName"] = pod.priority_class_name or None
    doc["preemptionPolicy"] = pod.preemption_policy
    if "nodeCount" in ann:
        doc["nodeCount"] = ann["nodeCount"]
    if r.selected_node is not None:
        doc["selectedScore"] = r.totals.get(r.selected_node)
    if "nodeGroups" in ann:
        doc["nodeGroups"] = ann["nodeGroups"]
        doc["failingPlugins"] = ann["failingPlugins"]
        doc["breakdowns"] = {
            "resources": ann["resources"],
            "taints": ann["taints"],
            "nodeAffinity": ann["nodeAffinity"],
        }
        if ann.get("roomRejectedBy"):
            doc["breakdowns"]["roomRejectedBy"] = ann["roomRejectedBy"]
            if ann.get("roomRejectedByOmitted"):
                doc["breakdowns"]["roomRejectedByOmitted"] = ann["roomRejectedByOmitted"]
    if r.details:
        doc["details"] = {k: r.details[k] for k in sorted(r.details)}
    _add_retry_and_attempt(doc, r)
    if r.suggestions is not None:
        doc["suggestions"] = r.suggestions.doc()
        if getattr(r.suggestions, "out_of_reach", None):
            doc["outOfReach"] = r.suggestions.out_of_reach_doc()
    if r.extender_calls:
        doc["extenders"] = [extender_call_doc(c) for c in r.extender_calls]
    if r.filter_extenders:
        doc["filterExtenders"] = list(r.filter_extenders)
    if r.score_extenders:
        doc["scoreExtenders"] = list(r.score_extenders)
    if r.extenders_left_out:
        doc["extendersLeftOut"] = [dict(e) for e in r.extenders_left_out]
    if r.sampling is not None:
        doc["sampling"] = r.sampling.doc(full=True)
    elif r.sampling_outlook is not None:
        doc["sampling"] = r.sampling_outlook
    return doc


def extender_call_doc(c: ExtenderCall) -> dict:
    d: dict[str, Any] = {"extender": c.extender, "verb": c.verb, "outcome": c.outcome}
    if c.error:
        d["error"] = c.error
    d.update(c.detail)
    return d


# `schedule -o json|yaml --detail`: compact (the default) or full (result_doc's every node)
COMPACT, FULL = "compact", "full"


def compact_result_doc(r: CycleResult) -> dict:
    """One pod of a compact sequence document: the verdict and its reasons, no per-node table
    (annotated with the node groups and failing plugins, render/analysis.py)."""
    pod = r.pod
    ann = annotations_of(r)
    doc: dict[str, Any] = {
        "pod": pod.key,
        "profile": r.profile,
        "schedulable": r.schedulable,
        "verdict": verdict_of(r),
        "preFilter": status_doc(r.pre_filter),
        "selectedNode": r.selected_node,
        "selectedScore": r.totals.get(r.selected_node) if r.selected_node is not None else None,
        "topNodes": list(r.top_nodes),
        "feasibleNodeCount": len(r.feasible),
        "message": r.message,
        "preemption": preemption_doc(r.preemption, full=False),
        "priority": pod.priority,
    }
    if "nodeCount" in ann:
        doc["nodeCount"] = ann["nodeCount"]
    if "nodeGroups" in ann:
        doc["nodeGroups"] = ann["nodeGroups"]
        doc["failingPlugins"] = ann["failingPlugins"]
    if r.input_unbound is not None:
        doc["input"] = {"unbound": dict(r.input_unbound)}
    if r.sampling is not None:
        doc["sampling"] = r.sampling.doc()
    _add_retry_and_attempt(doc, r)
    return doc


def version_fields(version: Choice | None) -> dict:
    """ksched's version, the kube-scheduler release followed and why it was chosen."""
    if version is None:
        return {"kschedVersion": __version__, "kubernetesVersion": KUBE_SCHEDULER_VERSION}
    return {
        "kschedVersion": __version__,
        "kubernetesVersion": version.release.patch_release,
        "kubernetesVersionChosenBy": version.as_doc(),
    }


def explain_doc(r: CycleResult, edits: list | None = None, version: Choice | None = None) -> dict:
    """`ksched explain -o json`: one result object, with the versions (and the cluster edits
    applied, edits.Applied, when there were any)."""
    doc = {**result_doc(r), **version_fields(version)}
    if edits:
        doc["edits"] = [a.doc() for a in edits]
    return doc


def run_doc(
    results: list[CycleResult], edits: list | None = None, version: Choice | None = None, detail: str = FULL
) -> dict:
    """`schedule -o json|yaml`: every result, in full or compact (then `detail` says so)."""
    doc: dict[str, Any] = version_fields(version)
    if detail == COMPACT:
        doc["detail"] = COMPACT
    if edits:
        doc["edits"] = [a.doc() for a in edits]
    make = compact_result_doc if detail == COMPACT else result_doc
    doc["results"] = [make(r) for r in results]
    return doc


def carried_out_doc(run) -> dict:
    """`schedule --preemption=carry-out`'s additions to the run document: the evictions, the
    nominations cleared, and every pod's final placement."""
    return {
        "evictions": [
            {"pod": e.pod, "node": e.node, "preemptor": e.preemptor, "cycle": e.cycle} for e in run.evictions
        ],
        "clearedNominations": [{"pod": pod, "node": node} for pod, node in run.cleared],
        "placements": [
            {"pod": p.pod, "node": p.node, "attempts": p.attempts, "evicted": p.evicted} for p in run.placements
        ],
    }


def _add_retry_and_attempt(doc: dict[str, Any], r: CycleResult) -> None:
    """The fields both documents end with, in this order: the retry events, the sequence's attempt,
    the nominated pods that counted, the cycle's error."""
    if r.events:
        doc["retryOn"] = {k: r.events[k] for k in sorted(r.events)}
    if r.attempt is not None:
        doc["attempt"] = r.attempt
    if r.nominated_node_tried is not None:
        doc["nominatedNodeTried"] = r.nominated_node_tried
    if r.nominated:
        doc["nominatedPods"] = {
            n: {"pods": list(v.pods), "secondPass": v.second_pass, "firstTry": v.first_try}
            for n, v in sorted(r.nominated.items())
        }
    if r.error:
        doc["error"] = r.error
