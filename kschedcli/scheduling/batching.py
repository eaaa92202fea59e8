"""OpportunisticBatching (on by default from v1.35; KEP 5598): a pod identical to the one before it
takes the next node of that pod's score ranking, without filtering every node and scoring.

kube-scheduler signs each pod (framework.SignPod: every PreFilter, Filter, PreScore and Score
plugin contributes a fragment, or declares the pod unsignable). After a pod is scheduled by
scoring, its profile keeps the signature and the other feasible nodes in score order. The next
cycle's pod gets the head of that list as a hint when: it is the very next cycle, the pod has the
same signature, and the node the previous pod took now rejects it (so the previous ranking, minus
that node, still holds). The hint is then tried first, like a nominated node: if it passes every
filter the pod goes there, else the cycle goes on over all nodes.

In the default profile no pod is signable: PodTopologySpread's system default constraints make
every pod unsignable. Batching happens with a profile whose PodTopologySpread has no default
constraints (List defaulting without constraints) or is disabled.

ksched's model: pods of a sequence arrive back to back (kube-scheduler drops a batch older than
500 ms), and nodes tied on score are ranked by name (kube-scheduler breaks ties at random).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api.model import Pod
    from ..framework.runtime import Framework


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _spec(pod: Pod) -> dict:
    spec = pod.raw.get("spec")
    return spec if isinstance(spec, dict) else {}


def _containers(pod: Pod) -> list[dict]:
    spec = _spec(pod)
    return [c for key in ("containers", "initContainers") for c in spec.get(key) or () if isinstance(c, dict)]


def _resources(pod: Pod) -> list[tuple[str, Any]]:
    return [("resources", pod.requests.as_dict())]


def _volumes(pod: Pod) -> list[tuple[str, Any]]:
    """VolumesSigner: every volume source but configMap and secret, sorted."""
    out = []
    for v in _spec(pod).get("volumes") or ():
        if isinstance(v, dict) and "configMap" not in v and "secret" not in v:
            out.append(_canonical({k: x for k, x in v.items() if k != "name"}))
    return [("volumes", sorted(out))]


def _tolerations(pod: Pod) -> list[tuple[str, Any]]:
    tols = [t for t in _spec(pod).get("tolerations") or () if isinstance(t, dict)]
    return [("tolerations", sorted(_canonical(t) for t in tols))]


def _host_ports(pod: Pod) -> list[tuple[str, Any]]:
    ports = {
        p.get("hostPort")
        for c in _containers(pod)
        for p in c.get("ports") or ()
        if isinstance(p, dict) and p.get("hostPort")
    }
    return [("hostPorts", sorted(ports))]


def _node_affinity(pod: Pod) -> list[tuple[str, Any]]:
    aff = (_spec(pod).get("affinity") or {}).get("nodeAffinity")
    return [("nodeAffinity", _canonical(aff)), ("nodeSelector", _canonical(_spec(pod).get("nodeSelector") or {}))]


def _images(pod: Pod) -> list[tuple[str, Any]]:
    from ..plugins.imagelocality import normalized_image_name

    return [("images", sorted({normalized_image_name(c.get("image") or "") for c in _containers(pod)}))]


def _signer_of(name: str, plugin: Any, pod: Pod) -> list[tuple[str, Any]] | None:
    """The plugin's SignPod: its fragments, or None when it cannot sign the pod."""
    if name in ("NodeResourcesFit", "NodeResourcesBalancedAllocation"):
        return _resources(pod)
    if name in ("VolumeBinding", "VolumeZone", "VolumeRestrictions", "NodeVolumeLimits"):
        return _volumes(pod)
    if name in ("TaintToleration", "NodeUnschedulable"):
        return _tolerations(pod)
    if name == "NodePorts":
        return _host_ports(pod)
    if name == "NodeAffinity":
        return _node_affinity(pod)
    if name == "NodeName":
        return [("nodeName", _spec(pod).get("nodeName") or "")]
    if name == "ImageLocality":
        return _images(pod)
    if name == "InterPodAffinity":
        if pod.pod_affinity or pod.pod_anti_affinity:
            return None
        if (plugin.args or {}).get("ignorePreferredTermsOfExistingPods"):
            return []
        return [("labels", _canonical(pod.labels))]
    if name == "PodTopologySpread":
        if pod.spread_constraints or getattr(plugin, "default_constraints", None):
            return None
        return []
    if name == "DynamicResources":
        return None if pod.resource_claims else []
    if name == "NodeDeclaredFeatures":
        from ..plugins.nodedeclaredfeatures import required_features

        return [("features", sorted(required_features(pod)))]
    return None  # a plugin that does not sign: kube-scheduler disables signatures for the profile


def pod_signature(fw: Framework, pod: Pod) -> str | None:
    """framework.SignPod: the pod's signature under this profile, or None when a plugin cannot
    sign it."""
    parts: dict[str, Any] = {"schedulerName": pod.scheduler_name}
    seen: set[str] = set()
    for pl in (*fw.pre_filter_plugins, *fw.filter_plugins, *fw.pre_score_plugins, *fw.score_plugins):
        if pl.name in seen:
            continue
        seen.add(pl.name)
        fragments = _signer_of(pl.name, pl, pod)
        if fragments is None:
            return None
        parts.update(fragments)
    return _canonical(parts)


class OpportunisticBatch:
    """One profile's batch: the last signature, the rest of its ranking, the last cycle's node."""

    def __init__(self) -> None:
        self.signature: str | None = None
        self.ranking: list[str] = []  # the nodes still to hand out, best first
        self.last_cycle = -1
        self.last_node: str | None = None

    def hint(self, fw: Framework, state: Any, pod: Pod, cycle: int) -> tuple[str | None, str | None]:
        """GetNodeHint: (hint or None, the pod's signature)."""
        signature = pod_signature(fw, pod)
        if not self.ranking or cycle != self.last_cycle + 1 or signature is None or signature != self.signature:
            return None, signature
        last = fw.handle.snapshot.get(self.last_node) if self.last_node else None
        if last is None:
            return None, signature
        st = fw.run_filter_plugins(state, pod, last)
        if st is None or not st.is_rejected():
            return None, signature
        return self.ranking.pop(0), signature

    def store(self, signature: str | None, hinted: str | None, chosen: str, ranking: list[str], cycle: int) -> None:
        """StoreScheduleResults: a used hint keeps the batch; otherwise the new ranking replaces it."""
        self.last_cycle = cycle
        self.last_node = chosen
        if hinted is not None and hinted == chosen:
            return
        if signature is not None and ranking:
            self.signature, self.ranking = signature, list(ranking)
        else:
            self.signature, self.ranking = None, []
