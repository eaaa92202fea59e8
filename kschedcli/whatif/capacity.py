"""How many more copies of a pod fit: `ksched capacity`.

Each template (a Pod, or a workload's pods as its controller would create them) is copied and the
copies scheduled one after another, each bound to its node before the next, until the first copy
that fits nowhere or the maximum; several templates are taken in turn, each on the cluster the ones
before it left. The copies are exactly the pods `ksched schedule` would place for a file of that
many copies of a Pod, or for the workload with `--replicas N`, and each is placed by
Scheduler.schedule_alike, the core's incremental mode for pods alike (framework/alike.py), which
chooses the node the full cycle chooses (the copy that fits nowhere gets the full cycle), then bound,
so the placements are the ones `schedule` gives. Under node sampling the incremental mode is
scheduling/sampled_alike.py's: the sampled cycle's node and start index.

Preemption is off: a copy that does not fit evicts nothing (the cycle's PostFilter still runs, so
the last copy's message says what preemption could do).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..api.model import Pod
from ..errors import InputError
from ..framework.result import CycleResult
from ..inputs.cluster import Cluster
from ..loader import iter_objects
from ..scheduling.scheduler import Scheduler
from ..workloads.expansion import CLUSTER_KINDS, WORKLOAD_KINDS, generated_name, pods_for_workloads

# node labels whose values count copies per group, when the nodes carry them
ZONE_LABEL = "topology.kubernetes.io/zone"
POOL_LABELS = (
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "karpenter.sh/nodepool",
    "node.kubernetes.io/instance-type",
    "pool",
)
_FIRST_BATCH = 64


@dataclass
class Template:
    """One template: its object as given, where it was read, and what it is called in the report."""

    obj: dict
    source: str
    where: str
    label: str  # "Deployment shop/web", "Pod shop/web"
    bound_to: str | None = None  # a bound Pod given (a running pod's export): the node, its copies made unbound


@dataclass
class TemplateRun:
    template: Template
    placements: list[str] = field(default_factory=list)  # the node of each copy that fit, in order
    stopped_by: str = (
        "unschedulable"  # "max", "limit" (MAX_COPIES without --max), "room" (pod_room), "unschedulable", "error"
    )
    stop: CycleResult | None = None  # the copy that did not fit

    @property
    def replicas(self) -> int:
        return len(self.placements)

    @property
    def stop_message(self) -> str | None:
        return None if self.stop is None else self.stop.message


@dataclass
class CapacityReport:
    runs: list[TemplateRun]
    max_copies: int | None
    group_labels: list[str]
    node_labels: dict[str, dict[str, str]]  # node -> its labels (for the groups)

    @property
    def replicas(self) -> int:
        return sum(r.replicas for r in self.runs)

    def per_node(self, runs: list[TemplateRun] | None = None) -> dict[str, int]:
        counts = Counter(n for r in (self.runs if runs is None else runs) for n in r.placements)
        return {n: counts[n] for n in sorted(counts)}

    def per_label(self, runs: list[TemplateRun] | None = None) -> dict[str, dict[str, int]]:
        """Copies per value of each group label (nodes without the label under "")."""
        per_node = self.per_node(runs)
        out = {}
        for label in self.group_labels:
            counts: Counter = Counter()
            for n, c in per_node.items():
                counts[self.node_labels.get(n, {}).get(label, "")] += c
            out[label] = {v: counts[v] for v in sorted(counts)}
        return out


def read_templates(paths: list[str], cluster_objects: list | None = None) -> list[Template]:
    """The Pods and workloads of the files, in order. The objects of kinds a chart adds to the
    cluster beside them (Services, PodDisruptionBudgets, PriorityClasses, ResourceClaims, ...:
    expansion.CLUSTER_KINDS) are appended to `cluster_objects` as (object, source, where), when
    given; other kinds that make no pod are left out."""
    out = []
    for path in paths:
        for obj, where in iter_objects(path, as_kubectl=True):
            kind = obj.get("kind")
            if kind == "DaemonSet":
                raise InputError(
                    "a DaemonSet runs one pod per eligible node, it has no copies to count "
                    "(`ksched schedule` says on which nodes it fits)",
                    source=path,
                    where=where,
                )
            if kind == "Pod" or kind in WORKLOAD_KINDS:
                from ..api.validation import check_user_object

                check_user_object(obj, kind, path, where)
                if kind != "Pod":
                    from ..workloads.validation import check_workload

                    check_workload(obj, kind, path, where)
                meta = _meta(obj)
                name = meta.get("name") or meta.get("generateName") or ""
                label = f"{kind} {meta.get('namespace') or 'default'}/{name}"
                bound_to = None
                spec = obj.get("spec")
                if kind == "Pod" and isinstance(spec, dict) and spec.get("nodeName"):
                    # a running pod's export: its copies are new pods, bound nowhere yet (the pod
                    # itself stays where it runs)
                    bound_to = str(spec["nodeName"])
                    obj = {k: v for k, v in obj.items() if k != "status"}
                    obj["spec"] = {k: v for k, v in spec.items() if k != "nodeName"}
                out.append(Template(obj, path, where, label, bound_to))
            elif kind in CLUSTER_KINDS and cluster_objects is not None:
                cluster_objects.append((obj, path, where))
            elif kind == "Node":
                raise InputError(
                    "expected a Pod or a workload, found Node (nodes belong in the snapshot (--cluster))",
                    source=path,
                    where=where,
                )
            else:
                from ..api.validation import check_kind

                check_kind(obj, path, where)
        if not out:
            raise InputError("no Pod or workload found", source=path)
    return out


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def group_labels_of(cluster: Cluster, wanted: list[str] | None) -> list[str]:
    """The labels to group copies by: those asked for, else the zone label and the known node-pool
    labels that some node carries."""
    if wanted:
        return list(wanted)
    carried = {k for n in cluster.nodes for k in n.labels}
    return [k for k in (ZONE_LABEL, *POOL_LABELS) if k in carried]


def copies(template: Template, cluster: Cluster, limit: int | None = None) -> Iterator[Pod]:
    """The template's copies, as many as are asked for (at most `limit`): a Pod's copies are named
    NAME-xxxxx; a workload's are the pods it creates with --replicas N (expanded again, for more,
    with twice as many: the same inputs make the same first pods)."""
    made = 0
    batch = _FIRST_BATCH if limit is None else min(_FIRST_BATCH, limit)
    first: Pod | None = None
    proto: list[Pod] = []  # a Pod's first copy as parsed, never bound: the others are made from it
    while limit is None or made < limit:
        if template.obj.get("kind") == "Pod":
            pods = [_pod_copy(template, cluster, i, proto) for i in range(made, batch)]
        else:
            ex = pods_for_workloads(
                [(template.obj, template.source, template.where)],
                cluster,
                replicas=batch,
                validation=("ignore", None),  # checked once, as read (read_templates)
            )
            pods = ex.pods[made:]
        for pod in pods:
            if first is None:
                first = pod
            elif pod._cache is not first._cache and _alike(pod, first):
                # what the plugins derive and keep on a pod (its requests, spread constraints and
                # their default selector, affinity terms, equivalence signatures...) comes from
                # these fields alone: worked out once for all the copies
                pod._cache = first._cache
            yield pod
        made = batch
        batch = batch * 2 if limit is None else min(batch * 2, limit)


def _alike(pod: Pod, other: Pod) -> bool:
    """Copies that differ in name only (not a StatefulSet's, whose labels and volumes differ)."""
    return (
        pod.namespace == other.namespace
        and pod.labels == other.labels
        and pod.annotations == other.annotations
        and pod.owner_refs == other.owner_refs
        and pod.raw.get("spec") == other.raw.get("spec")
    )


def _pod_copy(template: Template, cluster: Cluster, i: int, proto: list[Pod]) -> Pod:
    meta = _meta(template.obj)
    base = meta.get("name") or meta.get("generateName") or "pod"
    ns = meta.get("namespace") or "default"
    name = generated_name(f"{base.rstrip('-')}-", f"Pod/{ns}/{base}", i)
    raw = {**template.obj, "metadata": {**meta, "name": name}}
    raw["metadata"].pop("generateName", None)
    raw["metadata"].pop("uid", None)  # each copy is a pod of its own (a pod's export carries its uid)
    if not proto:
        pod = cluster.parse_pod(raw, template.source, template.where)
        proto.append(copy.copy(pod))
        return pod
    # the first copy parsed, the others the same pod under another name: nothing else read of a
    # pod depends on its name (its fields are replaced, never changed in place, once parsed)
    pod = copy.copy(proto[0])
    pod.raw = raw
    pod.name = name
    pod.uid = f"{pod.namespace}/{name}"
    pod._key = None
    return pod


# copies of one template when --max is not given: Kubernetes supports clusters of up to 150,000
# pods, so a count past it says the snapshot cannot be real (pods: "100000000" and a pod that
# requests nothing would otherwise run for hours)
MAX_COPIES = 150_000


def pod_room(cluster: Cluster) -> int:
    """How many more pods can exist on the nodes: each node's allocatable pods (the kubelet's
    max-pods) less the pods bound to it, summed. No count of copies goes past it, whatever the
    scheduler's config (a profile without NodeResourcesFit never checks the pod count)."""
    bound = Counter(p.node_name for p in cluster.pods if p.node_name)
    return sum(max(0, n.allocatable.allowed_pods - bound[n.name]) for n in cluster.nodes)


def run_capacity(
    scheduler: Scheduler,
    templates: list[Template],
    *,
    max_copies: int | None = None,
    seed: int | None = None,
    group_by: list[str] | None = None,
    on_stop: Callable[[Template, CycleResult], None] | None = None,
    progress: Callable[[int], None] | None = None,
    incremental: bool = True,
) -> CapacityReport:
    """Schedule copies of each template in turn, each bound before the next, until one fits
    nowhere or `max_copies` of that template fit. `on_stop(template, result)` sees the copy that did not
    fit before anything else changes (to explain it against the cluster it saw). incremental=False
    runs every copy's full cycle (the incremental mode's reference)."""
    cluster = scheduler.cluster
    if max_copies is not None and max_copies > MAX_COPIES:
        # --max lowers the bound, never lifts it: a count past any real cluster's would run for hours
        raise InputError(
            f"{max_copies:,}: at most {MAX_COPIES:,} copies of a template are counted "
            "(Kubernetes supports clusters of up to 150,000 pods)",
            field="--max",
        )
    runs = []
    room = pod_room(cluster)
    for t in templates:
        run = TemplateRun(t)
        runs.append(run)
        if max_copies == 0:
            run.stopped_by = "max"
            continue
        limit = MAX_COPIES if max_copies is None else max_copies
        for pod in copies(t, cluster, min(limit, room + 1) + 1):
            if incremental:
                r = scheduler.schedule_alike(pod, seed)
            else:
                r = scheduler.schedule(pod, seed, with_details=False)
            if not (r.schedulable and r.selected_node):
                # the cycle again, with the plugins' explanations: nothing changed since
                r = scheduler.schedule(pod, seed)
                run.stop = r
                run.stopped_by = "error" if r.error else "unschedulable"
                if on_stop is not None:
                    on_stop(t, r)
                break
            if scheduler.snapshot.get(r.selected_node) is None:
                # an HTTP extender answered with a node object the cluster does not have, and the
                # copy went there (as kube-scheduler would bind it): the cluster's room is not counted
                # by copies placed outside it, and each next one would go there again
                r.error = (
                    f'node "{r.selected_node}" is not in the cluster (an HTTP extender answered with it): '
                    "capacity counts the cluster's nodes only"
                )
                run.stop = r
                run.stopped_by = "error"
                if on_stop is not None:
                    on_stop(t, r)
                break
            if room <= 0:
                # a copy fits, but no node has room for one more pod (its allocatable pods): a
                # config without NodeResourcesFit's pod count; no kubelet would run it
                run.stopped_by = "room"
                break
            scheduler.bind(pod, r.selected_node)
            room -= 1
            run.placements.append(r.selected_node)
            if progress is not None:
                progress(len(run.placements))
            if len(run.placements) >= limit:
                run.stopped_by = "limit" if max_copies is None else "max"
                break
    labels = group_labels_of(cluster, group_by)
    node_labels = {n.name: n.labels for n in cluster.nodes}
    return CapacityReport(runs, max_copies, labels, node_labels)


def capacity_doc(report: CapacityReport, stop_doc: Callable[[CycleResult], dict | None]) -> dict:
    """`ksched capacity -o json` (schema: $defs/capacity). `stop_doc` writes the copy that did not
    fit as `explain -o json` writes a result."""
    per_template = []
    for r in report.runs:
        per_template.append(
            {
                "template": r.template.label,
                "source": r.template.source,
                "replicas": r.replicas,
                "placements": list(r.placements),
                "stoppedBy": r.stopped_by,
                "stopMessage": r.stop_message if r.stopped_by not in ("max", "limit", "room") else None,
                "perNode": report.per_node([r]),
                "perLabel": report.per_label([r]),
                "stop": stop_doc(r.stop) if r.stop is not None else None,
            }
        )
    last = report.runs[-1] if report.runs else None
    return {
        "replicas": report.replicas,
        "max": report.max_copies,
        "preemption": False,
        "perTemplate": per_template,
        "perNode": report.per_node(),
        "perLabel": report.per_label(),
        "stopMessage": None if last is None or last.stopped_by in ("max", "limit", "room") else last.stop_message,
    }
