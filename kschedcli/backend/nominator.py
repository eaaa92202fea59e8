"""The nominator: pods waiting for the node they preempted on (kube-scheduler's backend/queue/nominator.go).

A pending pod with `status.nominatedNodeName` is held here, per node, in the order it was nominated.
When another pod is filtered on a node, the pods nominated there with a priority at least its own
count as if they ran there (see Framework.run_filter_plugins_with_nominated_pods). Pods are known by
their uid, as kube-scheduler's nominator knows them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..api.model import Pod


class Nominator:
    __slots__ = ("_by_node", "_node_of", "_status")

    def __init__(self) -> None:
        self._by_node: dict[str, list[Pod]] = {}
        self._node_of: dict[str, str] = {}  # uid -> the node it is held for
        # uid -> status.nominatedNodeName as the API server would now hold it, for pods whose
        # nomination a cycle changed (preemption carried out); others read their own field
        self._status: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self._by_node)

    def __len__(self) -> int:
        return len(self._node_of)

    def add(self, pod: Pod, node_name: str) -> None:
        """AddNominatedPod: (re)nominate the pod to node_name, after the pods already there."""
        self.remove(pod)
        if not node_name:
            return
        self._node_of[pod.uid] = node_name
        self._by_node.setdefault(node_name, []).append(pod)

    def add_all(self, pods: Iterable[Pod]) -> None:
        """Every pod carrying status.nominatedNodeName, in order."""
        for p in pods:
            if p.nominated_node_name:
                self.add(p, p.nominated_node_name)

    def remove(self, pod: Pod) -> None:
        """DeleteNominatedPodIfExists."""
        node = self._node_of.pop(pod.uid, None)
        if node is None:
            return
        held = self._by_node[node]
        for i, p in enumerate(held):
            if p.uid == pod.uid:
                del held[i]
                break
        if not held:
            del self._by_node[node]

    def nominate(self, pod: Pod, node_name: str) -> None:
        """What a preemption does to the preemptor: its status names the node, and it is held there."""
        self._status[pod.uid] = node_name
        self.add(pod, node_name)

    def clear(self, pod: Pod) -> None:
        """ClearNominatedNodeName: the status no longer names a node, and the pod is not held."""
        self._status[pod.uid] = ""
        self.remove(pod)

    def status_node(self, pod: Pod) -> str:
        """The pod's status.nominatedNodeName as it stands now."""
        return self._status.get(pod.uid, pod.nominated_node_name)

    def node_of(self, pod: Pod) -> str | None:
        return self._node_of.get(pod.uid)

    def signature(self) -> tuple:
        """The pods held per node, comparable: equal signatures, the same nominations in the same
        order (what a cycle's filters count; a pod's own status is `status_node`)."""
        return tuple((node, tuple(p.uid for p in held)) for node, held in self._by_node.items())

    def pods_for_node(self, node_name: str) -> list[Pod]:
        return list(self._by_node.get(node_name, ()))

    def counted_for(self, pod: Pod, node_name: str) -> list[Pod]:
        """addGENominatedPods' choice: the pods nominated to the node whose priority is at least
        the pod's, the pod itself excluded."""
        held = self._by_node.get(node_name)
        if not held:
            return []
        prio, uid = pod.priority, pod.uid
        return [p for p in held if p.priority >= prio and p.uid != uid]

    def counted_by_node(self, pod: Pod) -> dict[str, list[Pod]]:
        """counted_for of every node with such pods (nodes the snapshot lacks included)."""
        if not self._by_node:
            return {}
        out = {}
        for node in self._by_node:
            pods = self.counted_for(pod, node)
            if pods:
                out[node] = pods
        return out
