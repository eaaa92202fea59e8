"""Workloads become the pods their controllers would create.

A layer over the core: Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job and
CronJob documents are turned into the Pods (and the objects beside them: the ReplicaSet a Deployment
creates, a StatefulSet's PersistentVolumeClaims, ...) that kube-controller-manager would create, with
what the scheduler reads of them: labels, owner references, tolerations, node affinity, volumes.

Followed from the controllers' code (kubernetes v1.34):
- pod names: the API server's generateName (prefix cut to 58 characters + 5 characters from the
  alphabet "bcdfghjklmnpqrstvwxz2456789"); the suffix is drawn from a hash of the workload's identity
  and the pod's index instead of at random, so that output is byte-deterministic;
- a Deployment's ReplicaSet `NAME-HASH` and its pods' `pod-template-hash` label: the snapshot's
  ReplicaSet the Deployment controls whose template is EqualIgnoreHash to the Deployment's, both
  defaulted as the API server stores them (deploymentutil.FindNewReplicaSet; workload_templates.py),
  is reused, hash included; for a new template, FNV-32a over the template plus the collision count,
  written with rand.SafeEncodeString (controller.ComputeHash's form). The controller hashes go-spew's
  dump of the defaulted Go struct, which changes with each release's PodSpec and is not reproduced
  here; ksched hashes the template's canonical JSON, so the value is stable for a template but
  differs from a live cluster's;
- a StatefulSet's pods NAME-0..N-1 (spec.ordinals.start onwards) with the
  `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index` labels, hostname and
  subdomain, and each volumeClaimTemplate as the claim TEMPLATE-NAME-ORDINAL (created unbound when
  the snapshot does not have it; VolumeBinding decides from the storage class);
- a DaemonSet's pods on the nodes NodeShouldRunDaemonPod accepts (template nodeName, nodeSelector and
  required node affinity, untolerated NoSchedule/NoExecute taints), with the tolerations
  AddOrUpdateDaemonPodTolerations adds and the required node affinity replaced by
  `matchFields metadata.name In [NODE]` (ReplaceDaemonSetPodNodeNameNodeAffinity);
- a Job's active pods: parallelism, or fewer when completions minus succeeded is smaller; Indexed
  jobs' completion indexes; the labels the API server adds to a Job's template;
- a CronJob as one run: the Job NAME-MINUTES its controller would create, then that Job's pods.

A workload already in the snapshot (same kind, namespace and name) creates only the pods it is
missing: the snapshot's bound pods it controls count. `replicas` overrides the number of new pods.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from ..api.model import Pod
from ..errors import FieldError, InputError, cut
from ..inputs.cluster import Cluster
from ..loader import iter_objects
from .daemonset import DaemonNode as DaemonNode
from .daemonset import daemon_tolerations as daemon_tolerations
from .daemonset import pin_to_node as pin_to_node
from .daemonset import should_run_daemon_pod as should_run_daemon_pod
from .names import fnv32a as fnv32a
from .names import generated_name as generated_name
from .names import safe_encode as safe_encode
from .names import template_hash as template_hash
from .results import Expansion as Expansion
from .results import Workload as Workload
from .results import summarize as summarize

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job", "CronJob")
# objects of the input that the scheduler reads once they exist: added to the cluster as they are
CLUSTER_KINDS = (
    "Service",
    "PodDisruptionBudget",
    "PersistentVolumeClaim",
    "PriorityClass",
    "Namespace",
    "ResourceClaim",
    "ResourceClaimTemplate",
)
# kinds without a field tree (resource.k8s.io): what the DRA allocator reads is checked instead
_DRA_KINDS = ("ResourceClaim", "ResourceClaimTemplate")
# kinds that are not workloads and are certainly misplaced in a file of pods
_REJECTED_KINDS = {"Node": "nodes belong in the snapshot (--cluster)"}

_API_VERSION = {
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "ReplicationController": "v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
}


# -- reading ---------------------------------------------------------------------------------------


def _d(v, f: str) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise FieldError(f, "must be an object")
    return v


# pods one workload may ask for at once (replicas, a Job's parallelism): Kubernetes supports clusters
# of up to 150,000 pods, and a mistyped 2000000000 would otherwise make pods until memory ran out
MAX_WORKLOAD_PODS = 150_000


def _count(v, f: str, default: int, *, pods: bool = False) -> int:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise FieldError(f, f"{cut(v) if isinstance(v, str) else repr(v)} is not an integer")
    if v < 0:
        raise FieldError(f, f"{v}: must be greater than or equal to 0")
    if pods and v > MAX_WORKLOAD_PODS:
        raise FieldError(
            f, f"{v:,} pods: ksched makes at most {MAX_WORKLOAD_PODS:,} (Kubernetes' most pods per cluster)"
        )
    return v


def _labels(v, f: str) -> dict[str, str]:
    v = _d(v, f)
    return {str(k): "" if x is None else str(x) for k, x in v.items()}


def _owner_ref(kind: str, name: str, uid: str) -> dict:
    return {
        "apiVersion": _API_VERSION[kind],
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _uid(obj: dict, kind: str, namespace: str, name: str) -> str:
    uid = (obj.get("metadata") or {}).get("uid")
    if isinstance(uid, str) and uid:
        return uid
    # a fixed stand-in: a UUID-shaped digest of the identity
    import hashlib  # here: OpenSSL's module costs each run that reads no workload

    h = hashlib.sha256(f"{kind}/{namespace}/{name}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class _Expander:
    def __init__(self, cluster: Cluster, replicas: int | None):
        self.cluster = cluster
        self.replicas = replicas
        self._taken: set[str] | None = None
        self._made: set[str] = set()  # keys of the pods made before `taken` was first needed
        self.out = Expansion()

    @property
    def taken(self) -> set[str]:
        """namespace/name of every pod: the snapshot's and those made here. Built when a name is
        first generated: a file holding a Pod needs none (and the snapshot may hold 150,000)."""
        if self._taken is None:
            self._taken = {p.key for p in self.cluster.pods} | self._made
        return self._taken

    def take(self, key: str) -> None:
        (self._made if self._taken is None else self._taken).add(key)

    def release(self, key: str) -> None:
        (self._made if self._taken is None else self._taken).discard(key)

    # -- what the snapshot already has
    def _controlled(self, kind: str, namespace: str, name: str) -> list[Pod]:
        out = []
        for p in self.cluster.pods:
            if p.namespace != namespace:
                continue
            ref = p.controller_ref()
            if ref is not None and ref.get("kind") == kind and ref.get("name") == name:
                out.append(p)
        return out

    def _add_object(self, kind: str, namespace: str, name: str, obj: dict) -> None:
        self.cluster.objects[kind][(namespace, name)] = obj
        self.out.added[kind] += 1

    # -- pods
    def _pod(
        self,
        w: Workload,
        template: dict,
        owner: dict,
        namespace: str,
        *,
        prefix: str = "",
        name: str = "",
        index: int = 0,
        labels: dict | None = None,
        annotations: dict | None = None,
        spec_changes: dict | None = None,
    ) -> Pod:
        """controller.GetPodFromTemplate: the template's labels, annotations and spec, the owner
        reference, and a name (generated from `prefix` unless given)."""
        tmeta = _d(template.get("metadata"), f"{w.template_field}.metadata")
        spec = _d(template.get("spec"), f"{w.template_field}.spec")
        if spec_changes:
            spec = {**spec, **spec_changes}
        if not name:
            name = generated_name(prefix, f"{w.kind}/{namespace}/{w.name}", index, self.taken, namespace)
        meta: dict = {"name": name, "namespace": namespace}
        if prefix:
            meta["generateName"] = prefix
        meta["labels"] = {**_labels(tmeta.get("labels"), f"{w.template_field}.metadata.labels"), **(labels or {})}
        ann = {**_labels(tmeta.get("annotations"), f"{w.template_field}.metadata.annotations"), **(annotations or {})}
        if ann:
            meta["annotations"] = ann
        meta["ownerReferences"] = [owner]
        raw = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
        try:
            pod = Pod(raw, self.cluster.priorities, self.cluster.default_priority)
        except InputError as e:
            raise e.located(source=w.source, where=w.where, field_prefix=w.template_field) from None
        self.take(pod.key)
        return pod

    # -- kinds
    def replica_set_like(self, obj: dict, w: Workload, namespace: str) -> None:
        """ReplicaSet and ReplicationController: `replicas` pods named RS-xxxxx."""
        spec = _d(obj.get("spec"), "spec")
        template = _d(spec.get("template"), "spec.template")
        w.template = template
        w.desired = _count(spec.get("replicas"), "spec.replicas", 1, pods=True)
        existing = self._controlled(w.kind, namespace, w.name)
        w.existing = len(existing)
        new = self._new_count(w.desired, w.existing)
        if w.kind == "ReplicationController" and not spec.get("selector"):
            # API-server defaulting: an RC without a selector selects its template's labels
            tlabels = _labels(
                _d(template.get("metadata"), "spec.template.metadata").get("labels"), "spec.template.metadata.labels"
            )
            obj = {**obj, "spec": {**spec, "selector": tlabels}}
        if self.cluster.get(w.kind, namespace, w.name) is None:
            self._add_object(w.kind, namespace, w.name, obj)
        owner = _owner_ref(w.kind, w.name, _uid(obj, w.kind, namespace, w.name))
        w.pods = [
            self._pod(w, template, owner, namespace, prefix=f"{w.name}-", index=i + w.existing) for i in range(new)
        ]

    def deployment(self, obj: dict, w: Workload, namespace: str) -> None:
        spec = _d(obj.get("spec"), "spec")
        template = _d(spec.get("template"), "spec.template")
        w.template = template
        w.desired = _count(spec.get("replicas"), "spec.replicas", 1, pods=True)
        uid = _uid(obj, "Deployment", namespace, w.name)
        rs_name, pod_hash = self._current_replica_set(namespace, w.name, template)
        if rs_name is None:
            collisions = _d(obj.get("status"), "status").get("collisionCount")
            pod_hash = template_hash(template, collisions if isinstance(collisions, int) else None)
            rs_name = f"{w.name}-{pod_hash}"
        assert pod_hash is not None
        tmeta = _d(template.get("metadata"), "spec.template.metadata")
        labels = {**_labels(tmeta.get("labels"), "spec.template.metadata.labels"), "pod-template-hash": pod_hash}
        existing = self._controlled("ReplicaSet", namespace, rs_name)
        w.existing = len(existing)
        new = self._new_count(w.desired, w.existing)
        if self.cluster.get("Deployment", namespace, w.name) is None:
            self._add_object("Deployment", namespace, w.name, obj)
        if self.cluster.get("ReplicaSet", namespace, rs_name) is None:
            # the ReplicaSet the deployment controller creates (getNewReplicaSet)
            selector = _d(spec.get("selector"), "spec.selector")
            match = _labels(selector.get("matchLabels"), "spec.selector.matchLabels")
            rs_selector = {**selector, "matchLabels": {**match, "pod-template-hash": pod_hash}}
            rs = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": rs_name,
                    "namespace": namespace,
                    "labels": labels,
                    "ownerReferences": [_owner_ref("Deployment", w.name, uid)],
                },
                "spec": {
                    "replicas": w.desired,
                    "selector": rs_selector,
                    "template": {**template, "metadata": {**tmeta, "labels": labels}},
                },
            }
            self._add_object("ReplicaSet", namespace, rs_name, rs)
        rs_obj = self.cluster.get("ReplicaSet", namespace, rs_name) or {}
        owner = _owner_ref("ReplicaSet", rs_name, _uid(rs_obj, "ReplicaSet", namespace, rs_name))
        w.pods = [
            self._pod(
                w,
                template,
                owner,
                namespace,
                prefix=f"{rs_name}-",
                index=i + w.existing,
                labels={"pod-template-hash": pod_hash},
            )
            for i in range(new)
        ]

    def _current_replica_set(self, namespace: str, deployment: str, template: dict) -> tuple[str | None, str | None]:
        """FindNewReplicaSet: the deployment's ReplicaSet whose template equals the deployment's,
        leaving out the pod-template-hash label, both as the API server stores them (defaulted: see
        workload_templates.py); the oldest first, then by name."""
        from .templates import defaulted_template, equal_ignore_hash

        wanted = defaulted_template(template)
        found = []
        for rs in self.cluster.list("ReplicaSet", namespace):
            meta = rs.get("metadata") or {}
            owners = meta.get("ownerReferences") or []
            if not any(
                isinstance(o, dict)
                and o.get("controller")
                and o.get("kind") == "Deployment"
                and o.get("name") == deployment
                for o in owners
            ):
                continue
            rt = (rs.get("spec") or {}).get("template")
            if not isinstance(rt, dict):
                continue
            labels = (rt.get("metadata") or {}).get("labels") or {}
            pod_hash = labels.get("pod-template-hash") if isinstance(labels, dict) else None
            if pod_hash and equal_ignore_hash(defaulted_template(rt), wanted):
                found.append((str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""), pod_hash))
        if not found:
            return None, None
        _, name, pod_hash = min(found)
        return name, pod_hash

    def stateful_set(self, obj: dict, w: Workload, namespace: str) -> None:
        spec = _d(obj.get("spec"), "spec")
        template = _d(spec.get("template"), "spec.template")
        w.template = template
        w.desired = _count(spec.get("replicas"), "spec.replicas", 1, pods=True)
        start = _count(_d(spec.get("ordinals"), "spec.ordinals").get("start"), "spec.ordinals.start", 0)
        uid = _uid(obj, "StatefulSet", namespace, w.name)
        if self.cluster.get("StatefulSet", namespace, w.name) is None:
            self._add_object("StatefulSet", namespace, w.name, obj)
        existing = {p.name for p in self._controlled("StatefulSet", namespace, w.name)}
        w.existing = len(existing)
        ordinals = [o for o in range(start, start + w.desired) if f"{w.name}-{o}" not in existing]
        if self.replicas is not None:
            ordinals = []
            o = start
            while len(ordinals) < self.replicas:
                if f"{w.name}-{o}" not in existing:
                    ordinals.append(o)
                o += 1
        revision = f"{w.name}-{template_hash(template, _count_or_none(obj))}"
        claims = _list_of_dicts(spec.get("volumeClaimTemplates"), "spec.volumeClaimTemplates")
        selector = _d(spec.get("selector"), "spec.selector")
        owner = _owner_ref("StatefulSet", w.name, uid)
        service = spec.get("serviceName") or ""
        pods = []
        for o in ordinals:
            name = f"{w.name}-{o}"
            claim_names = {}
            for i, c in enumerate(claims):
                cmeta = _d(c.get("metadata"), f"spec.volumeClaimTemplates[{i}].metadata")
                cname = cmeta.get("name") or ""
                if not cname:
                    raise FieldError(f"spec.volumeClaimTemplates[{i}].metadata.name", "Required value")
                claim_names[cname] = f"{cname}-{w.name}-{o}"
                self._claim(c, claim_names[cname], namespace, selector)
            volumes = [{"name": n, "persistentVolumeClaim": {"claimName": claim_names[n]}} for n in sorted(claim_names)]
            volumes += [
                v
                for v in _list_of_dicts(
                    _d(template.get("spec"), "spec.template.spec").get("volumes"), "spec.template.spec.volumes"
                )
                if v.get("name") not in claim_names
            ]
            changes: dict = {"hostname": name}
            if service:
                changes["subdomain"] = service
            if volumes:
                changes["volumes"] = volumes
            pods.append(
                self._pod(
                    w,
                    template,
                    owner,
                    namespace,
                    name=name,
                    labels={
                        "controller-revision-hash": revision,
                        "statefulset.kubernetes.io/pod-name": name,
                        "apps.kubernetes.io/pod-index": str(o),
                    },
                    spec_changes=changes,
                )
            )
        w.pods = pods

    def _claim(self, template: dict, name: str, namespace: str, selector: dict) -> None:
        """getPersistentVolumeClaims: the template named for the pod, labelled with the set's
        matchLabels; created unbound unless the snapshot has it."""
        if self.cluster.get("PersistentVolumeClaim", namespace, name) is not None:
            return
        meta = dict(template.get("metadata") or {})
        labels = {
            **_labels(meta.get("labels"), "metadata.labels"),
            **_labels(selector.get("matchLabels"), "spec.selector.matchLabels"),
        }
        meta.update(name=name, namespace=namespace)
        if labels:
            meta["labels"] = labels
        self._add_object(
            "PersistentVolumeClaim",
            namespace,
            name,
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": meta,
                "spec": dict(template.get("spec") or {}),
                "status": {"phase": "Pending"},
            },
        )

    def daemon_set(self, obj: dict, w: Workload, namespace: str) -> None:
        spec = _d(obj.get("spec"), "spec")
        template = _d(spec.get("template"), "spec.template")
        w.template = template
        w.desired = None
        tspec = _d(template.get("spec"), "spec.template.spec")
        uid = _uid(obj, "DaemonSet", namespace, w.name)
        if self.cluster.get("DaemonSet", namespace, w.name) is None:
            self._add_object("DaemonSet", namespace, w.name, obj)
        running = {p.node_name for p in self._controlled("DaemonSet", namespace, w.name)}
        w.existing = len(running)
        tolerations = daemon_tolerations(
            _list_of_dicts(tspec.get("tolerations"), "spec.template.spec.tolerations"), bool(tspec.get("hostNetwork"))
        )
        # NewPod: the pod the controller checks each node with (no pinning yet)
        probe = self._pod(
            w,
            template,
            _owner_ref("DaemonSet", w.name, uid),
            namespace,
            name=f"{w.name}-probe",
            spec_changes={"tolerations": tolerations},
        )
        self.release(probe.key)
        generation = (obj.get("metadata") or {}).get("generation")
        labels = {
            "controller-revision-hash": template_hash(template, _count_or_none(obj)),
            "pod-template-generation": str(generation if isinstance(generation, int) else 1),
        }
        owner = _owner_ref("DaemonSet", w.name, uid)
        template_node = tspec.get("nodeName") or ""
        pods: list[Pod] = []
        for node in sorted(self.cluster.nodes, key=lambda n: n.name):
            reason = should_run_daemon_pod(probe, node, template_node)
            d = DaemonNode(node.name, not reason, reason, node.name in running)
            w.daemon_nodes.append(d)
            if reason or d.existing:
                continue
            if self.replicas is not None and len(pods) >= self.replicas:
                continue
            pod = self._pod(
                w,
                template,
                owner,
                namespace,
                prefix=f"{w.name}-",
                index=len(pods),
                labels=labels,
                spec_changes={"tolerations": tolerations, "affinity": pin_to_node(tspec.get("affinity"), node.name)},
            )
            d.pod = pod.key
            pods.append(pod)
        w.pods = pods

    def job(self, obj: dict, w: Workload, namespace: str, template_field: str = "spec.template") -> None:
        spec = _d(obj.get("spec"), "spec")
        template = _d(spec.get("template"), "spec.template")
        w.template = template
        w.template_field = template_field
        parallelism = _count(spec.get("parallelism"), "spec.parallelism", 1, pods=True)
        completions = spec.get("completions")
        if completions is not None:
            completions = _count(completions, "spec.completions", 1)
        uid = _uid(obj, "Job", namespace, w.name)
        if self.cluster.get("Job", namespace, w.name) is None:
            self._add_object("Job", namespace, w.name, obj)
        existing = self._controlled("Job", namespace, w.name)
        w.existing = len(existing)
        status = _d(obj.get("status"), "status")
        succeeded_raw = status.get("succeeded")
        succeeded = succeeded_raw if isinstance(succeeded_raw, int) else 0
        want = parallelism if completions is None else max(0, min(parallelism, completions - succeeded))
        w.desired = want
        if spec.get("suspend") is True:
            w.desired = 0
            w.note = "suspended: the job controller creates no pod"
        new = self._new_count(w.desired, w.existing)
        # the Job's defaulting (manualSelector unset): its template carries these labels
        labels = {}
        if not spec.get("manualSelector"):
            labels = {
                "batch.kubernetes.io/controller-uid": uid,
                "batch.kubernetes.io/job-name": w.name,
                "controller-uid": uid,
                "job-name": w.name,
            }
        indexed = spec.get("completionMode") == "Indexed"
        owner = _owner_ref("Job", w.name, uid)
        used = {p.annotations.get("batch.kubernetes.io/job-completion-index") for p in existing}
        pods = []
        index = 0
        for i in range(new):
            if indexed:
                while str(index) in used:
                    index += 1
                used.add(str(index))
                pods.append(
                    self._pod(
                        w,
                        template,
                        owner,
                        namespace,
                        prefix=f"{w.name}-{index}-",
                        index=i,
                        labels={**labels, "batch.kubernetes.io/job-completion-index": str(index)},
                        annotations={"batch.kubernetes.io/job-completion-index": str(index)},
                        spec_changes={"hostname": f"{w.name}-{index}"},
                    )
                )
            else:
                pods.append(
                    self._pod(w, template, owner, namespace, prefix=f"{w.name}-", index=i + w.existing, labels=labels)
                )
        w.pods = pods

    def cron_job(self, obj: dict, w: Workload, namespace: str) -> None:
        spec = _d(obj.get("spec"), "spec")
        job_template = _d(spec.get("jobTemplate"), "spec.jobTemplate")
        if self.cluster.get("CronJob", namespace, w.name) is None:
            self._add_object("CronJob", namespace, w.name, obj)
        scheduled, named_from = _scheduled_minutes(obj)
        jmeta = _d(job_template.get("metadata"), "spec.jobTemplate.metadata")
        job_name = f"{w.name}-{scheduled}"
        cron_uid = _uid(obj, "CronJob", namespace, w.name)
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                **jmeta,
                "name": job_name,
                "namespace": namespace,
                "ownerReferences": [_owner_ref("CronJob", w.name, cron_uid)],
            },
            "spec": _d(job_template.get("spec"), "spec.jobTemplate.spec"),
        }
        inner = Workload("Job", namespace, job_name, w.source, w.where, None, 0)
        try:
            self.job(job, inner, namespace, "spec.jobTemplate.spec.template")
        except InputError as e:
            raise e.located(
                field_prefix="spec.jobTemplate"
                if e.field.startswith("spec") and not e.field.startswith("spec.jobTemplate")
                else ""
            ) from None
        w.template, w.template_field = inner.template, inner.template_field
        w.desired, w.existing, w.pods = inner.desired, inner.existing, inner.pods
        if spec.get("suspend") is True:
            w.pods, w.desired = [], 0
            w.note = "suspended: the cronjob controller creates no job"
        else:
            w.note = inner.note or f"one run: the Job {job_name}, named from {named_from}"

    def _new_count(self, desired: int, existing: int) -> int:
        if self.replicas is not None:
            return self.replicas
        return max(0, desired - existing)


def _count_or_none(obj: dict) -> int | None:
    c = (obj.get("status") or {}).get("collisionCount")
    return c if isinstance(c, int) and not isinstance(c, bool) else None


def _list_of_dicts(v, f: str) -> list[dict]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise FieldError(f, "must be a list")
    for i, x in enumerate(v):
        if not isinstance(x, dict):
            raise FieldError(f"{f}[{i}]", "must be an object")
    return v


def _scheduled_minutes(obj: dict) -> tuple[int, str]:
    """The run's scheduled time in minutes since the epoch (getJobName's suffix), and where it was
    read: the last scheduled run of the CronJob's status, else its creation time, else 0. ksched does
    not evaluate the cron schedule (the name would depend on the clock): the run is named from what
    the object says, the same on every run."""
    for field, ts in (
        ("status.lastScheduleTime", (obj.get("status") or {}).get("lastScheduleTime")),
        ("metadata.creationTimestamp", (obj.get("metadata") or {}).get("creationTimestamp")),
    ):
        when = None
        if isinstance(ts, datetime):
            when = ts
        elif isinstance(ts, str) and ts:
            try:
                when = datetime.fromisoformat(ts.replace("Z", "+00:00"))
            except ValueError:
                continue
        if when is not None:
            # a time without a zone is UTC (YAML's rule), whatever the machine's zone
            when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
            return int(when.timestamp()) // 60, f"{field} {when.strftime('%Y-%m-%dT%H:%M:%SZ')}"
    return 0, "no time in the object (0)"


# -- entry points ----------------------------------------------------------------------------------


def pods_for_workloads(
    objects: Iterable[tuple[dict, str, str]],
    cluster: Cluster,
    *,
    replicas: int | None = None,
    validation: tuple[str | None, list[str] | None] = (None, None),
) -> Expansion:
    """The pods the input's objects make, each with the workload it came from: Pods as they are,
    workloads as their controllers would create them. `objects` are (object, source, where).

    The cluster is extended as the controllers and `kubectl apply` would extend it: the
    workloads themselves, the ReplicaSets, PersistentVolumeClaims and Jobs they create, and the
    input's Services, PodDisruptionBudgets, PersistentVolumeClaims, PriorityClasses and Namespaces
    (their labels, for namespaceSelectors), ResourceClaims and ResourceClaimTemplates. No claim
    is made from a template for a pod (the resource claim controller's work is not done, as in
    the conformance cases: kube-scheduler says the claim is not created yet). Other kinds
    (ConfigMaps, Secrets, ServiceAccounts, ...) are counted in `ignored`.

    `validation`: (mode, warnings) for validation.check_user_object, which every Pod and workload
    passes first (unknown fields by mode: strict, warn, ignore; wrong types always an error); no
    mode: the command's."""
    from ..api.validation import check_kind, check_user_object

    ex = _Expander(cluster, replicas)
    objects = list(objects)
    mode, warnings = validation
    for obj, source, where in objects:
        kind = obj.get("kind")
        if kind == "Pod" or kind in WORKLOAD_KINDS or kind in CLUSTER_KINDS:
            check_user_object(obj, kind, source, where, mode, warnings)
            _check_dra_fields(obj, kind, source, where)
            if kind in WORKLOAD_KINDS and mode != "ignore":  # "ignore": the snapshot's own, or checked as read
                from .validation import check_workload

                check_workload(obj, kind, source, where)
        else:
            check_kind(obj, source, where)
    # PriorityClasses first: the pods' priority admission reads them
    for obj, source, where in objects:
        kind = obj.get("kind")
        if kind in CLUSTER_KINDS:
            _add_cluster_object(ex, obj, source, where)
    for obj, source, where in objects:
        kind = obj.get("kind")
        if not isinstance(kind, str) or not kind:
            raise InputError("object has no kind", source=source, where=where)
        if kind == "Pod":
            pod = cluster.parse_pod(obj, source, where)
            ex.out.pods.append(pod)
            ex.out.origin[pod.key] = None
            ex.take(pod.key)
        elif kind in WORKLOAD_KINDS:
            w = _expand(ex, obj, kind, source, where)
            ex.out.workloads.append(w)
            for p in w.pods:
                ex.out.pods.append(p)
                ex.out.origin[p.key] = w
        elif kind in _REJECTED_KINDS:
            raise InputError(
                f"expected a Pod or a workload, found {kind} ({_REJECTED_KINDS[kind]})", source=source, where=where
            )
        elif kind not in CLUSTER_KINDS:
            ex.out.ignored[kind] += 1
    for pod in ex.out.pods:
        # the namespace exists once its pods do: namespaceSelectors read its name label
        cluster.namespace_labels.setdefault(pod.namespace, {"kubernetes.io/metadata.name": pod.namespace})
    return ex.out


def add_cluster_objects(cluster: Cluster, objects: list[tuple[dict, str, str]]) -> None:
    """The input's objects of CLUSTER_KINDS (object, source, where) added to the cluster as
    pods_for_workloads adds those beside the workloads (PriorityClasses first), each checked as a
    person's object: for a command that reads its pods and workloads on its own (capacity)."""
    from ..api.validation import check_user_object

    ex = _Expander(cluster, None)
    for obj, source, where in objects:
        kind = str(obj.get("kind"))  # (one of CLUSTER_KINDS)
        check_user_object(obj, kind, source, where)
        _check_dra_fields(obj, kind, source, where)
    for first in (True, False):
        for obj, source, where in objects:
            if (obj.get("kind") == "PriorityClass") == first:
                _add_cluster_object(ex, obj, source, where)


def _check_dra_fields(obj: dict, kind: str, source: str, where: str) -> None:
    """For a ResourceClaim or ResourceClaimTemplate (no field tree: check_user_object reads only
    its metadata), the fields the DRA allocator reads, checked as a snapshot's are."""
    if kind not in _DRA_KINDS:
        return
    from ..api.validation import snapshot_object_problem

    problem = snapshot_object_problem(obj, kind)
    if problem is not None:
        raise InputError(problem.message, source=source, where=where, field=problem.field)


def _add_cluster_object(ex: _Expander, obj: dict, source: str, where: str) -> None:
    kind = obj["kind"]
    meta = _d(obj.get("metadata"), "metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") or ""
    if kind == "PriorityClass":
        value = obj.get("value", 0)
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(
                f"{cut(value) if isinstance(value, str) else repr(value)} is not an integer",
                source=source,
                where=where,
                field="value",
            )
        ex.cluster.priorities[name] = (value, obj.get("preemptionPolicy"))
        if obj.get("globalDefault"):
            ex.cluster.default_priority = (name, value, obj.get("preemptionPolicy"))
        ex._add_object(kind, "", name, obj)
        return
    if kind == "Namespace":
        if name and ex.cluster.get(kind, "", name) is None:
            labels = _labels(meta.get("labels"), "metadata.labels")
            ex.cluster.namespace_labels[name] = {**labels, "kubernetes.io/metadata.name": name}
            ex._add_object(kind, "", name, obj)
        return
    namespace = meta.get("namespace") or "default"
    if ex.cluster.get(kind, namespace, name) is None:
        ex._add_object(kind, namespace, name, obj)


def _expand(ex: _Expander, obj: dict, kind: str, source: str, where: str) -> Workload:
    meta = _d(obj.get("metadata"), "metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = meta.get("name") or ""
    if not isinstance(name, str) or not name:
        raise InputError("Required value", source=source, where=where, field="metadata.name")
    namespace = meta.get("namespace") or "default"
    w = Workload(kind, namespace, name, source, where, None, 0)
    try:
        if kind in ("ReplicaSet", "ReplicationController"):
            ex.replica_set_like(obj, w, namespace)
        elif kind == "Deployment":
            ex.deployment(obj, w, namespace)
        elif kind == "StatefulSet":
            ex.stateful_set(obj, w, namespace)
        elif kind == "DaemonSet":
            ex.daemon_set(obj, w, namespace)
        elif kind == "Job":
            ex.job(obj, w, namespace)
        else:
            ex.cron_job(obj, w, namespace)
    except InputError as e:
        raise e.located(source=source, where=where) from None
    return w


def load_workloads(
    path: str,
    cluster: Cluster,
    *,
    replicas: int | None = None,
    validation: tuple[str | None, list[str] | None] = (None, None),
) -> Expansion:
    """pods_for_workloads over a file ('-' for stdin, Lists flattened). No pod at all is an error."""
    ex = pods_for_workloads(
        ((obj, path, where) for obj, where in iter_objects(path, as_kubectl=True)),
        cluster,
        replicas=replicas,
        validation=validation,
    )
    if not ex.pods and not ex.workloads:
        raise InputError("no Pod or workload found", source=path)
    return ex
