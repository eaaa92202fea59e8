"""Which pods share the pod's owner (issue 28): a fix never evicts them. A change to a workload's pod
template applies to every replica, so a priority raised to evict a sibling would be the sibling's
priority too after the rollout (equal priorities never preempt), and a sibling evicted is made
again by its controller: neither places the pod.

Two pods share an owner when
  - their controller ownerReferences name the same object (the same uid; without uids, the same
    kind and name in the same namespace), or
  - their controllers lead to the same workload: a ReplicaSet to the Deployment that controls it
    (its own controller ownerReference when the snapshot holds the ReplicaSet, else the name the
    deployment controller gives it: DEPLOYMENT-<pod-template-hash>), a Job to its CronJob, or
  - the pod came from a workload manifest (explain deploy.yaml) and the other pod, in the same
    namespace, matches that workload's selector (spec.selector: the pods it counts as its own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..labels import LabelSelector, parse_label_selector

if TYPE_CHECKING:
    from ..cluster import Cluster
    from ..model import Pod

_HASH_LABEL = "pod-template-hash"
# a controller whose own controller is the workload the user manages
_PARENT_KIND = {"ReplicaSet": "Deployment", "Job": "CronJob"}


def _controller(meta_refs) -> dict | None:
    for o in meta_refs or []:
        if isinstance(o, dict) and o.get("controller"):
            return o
    return None


def workload_of(pod: Pod, cluster: Cluster | None) -> tuple[str, str, str] | None:
    """(namespace, kind, name) of the workload that owns the pod, following its controller up
    through a ReplicaSet to its Deployment or a Job to its CronJob; None for a pod no controller
    owns."""
    ref = pod.controller_ref()
    if ref is None:
        return None
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    parent = _PARENT_KIND.get(kind)
    if parent is not None:
        obj = cluster.get(kind, pod.namespace, name) if cluster is not None else None
        up = _controller(((obj or {}).get("metadata") or {}).get("ownerReferences")) if obj else None
        if up is not None and up.get("kind") == parent and up.get("name"):
            return pod.namespace, parent, str(up["name"])
        h = pod.labels.get(_HASH_LABEL)
        if obj is None and kind == "ReplicaSet" and h and name.endswith("-" + h) and len(name) > len(h) + 1:
            return pod.namespace, "Deployment", name[: -len(h) - 1]
    return pod.namespace, kind, name


class Owner:
    """The pod's owner, to tell its siblings: `same(other)`."""

    def __init__(self, pod: Pod, cluster: Cluster | None, given_kind: str = "Pod"):
        self.pod = pod
        self.cluster = cluster
        ref = pod.controller_ref()
        self.uid = str(ref.get("uid") or "") if ref is not None else ""
        self.workload = workload_of(pod, cluster)
        self.selector: LabelSelector | None = None
        if given_kind != "Pod" and self.workload is not None and cluster is not None:
            ns, kind, name = self.workload
            obj = cluster.get(kind, ns, name)
            spec = (obj or {}).get("spec")
            if kind == "CronJob" and isinstance(spec, dict):
                spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
            sel = spec.get("selector") if isinstance(spec, dict) else None
            if isinstance(sel, dict) and (sel.get("matchLabels") or sel.get("matchExpressions")):
                try:
                    self.selector = parse_label_selector(sel, "spec.selector")
                except Exception:  # a selector the API server would have refused: not used
                    self.selector = None

    def same(self, other: Pod) -> bool:
        """Whether `other` belongs to the same owner as the pod (never the pod itself)."""
        if other is self.pod:
            return False
        ref = other.controller_ref()
        if ref is not None and self.uid and str(ref.get("uid") or "") == self.uid:
            return True
        if self.workload is not None and workload_of(other, self.cluster) == self.workload:
            return True
        return (
            self.selector is not None and other.namespace == self.pod.namespace and self.selector.matches(other.labels)
        )

    def describe(self) -> str:
        if self.workload is None:
            return "the pod"
        _, kind, name = self.workload
        return f"{kind} {name}"
