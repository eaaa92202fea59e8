"""The configured HTTP extenders in a scheduling cycle, as kube-scheduler v1.34.1 calls them:
  filter      findNodesThatPassExtenders: after the filter plugins, on the feasible nodes, one
              extender after the other, each given what the one before left; an extender not
              interested in the pod (managedResources) is not asked; FailedAndUnresolvableNodes
              become UnschedulableAndUnresolvable statuses, FailedNodes Unschedulable ones (the
              former win); an error fails the cycle unless the extender is ignorable;
  prioritize  prioritizeNodes: every interested extender scores the nodes that reach scoring;
              score × weight × (MaxNodeScore / MaxExtenderPriority) is added to the node's
              total; an error means no score from that extender (never a failed cycle);
  preempt     callExtenders: the preemption candidates go to each interested extender with a
              preempt verb, which may drop candidates or change their victims;
  bind        reported, never called: ksched binds nothing.
Every call is recorded (result.ExtenderCall) for the explanation and the JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .extender_client import MAX_EXTENDER_PRIORITY, ExtenderError, HTTPExtender
from .framework.interface import MAX_NODE_SCORE
from .framework.status import ERROR, UNRESOLVABLE, UNSCHEDULABLE, Status
from .result import Candidate, ExtenderCall

if TYPE_CHECKING:
    from .extender_config import ExtenderConfig
    from .framework.runtime import NodeStatuses
    from .model import Pod
    from .snapshot import NodeInfo, Snapshot


def _failed(e: ExtenderError, sent: list[str]) -> dict[str, Any]:
    """A failed call's detail: the nodes sent, and the bound that ended it, if one did."""
    d: dict[str, Any] = {"sent": sent}
    if e.bound:
        d["bound"] = e.bound
    return d


class ExtenderSet:
    """The extenders of a configuration, in calling order (ignorable ones last), and the calls
    of the current cycle (`calls`, emptied by `begin_cycle`)."""

    def __init__(self, configs: list[ExtenderConfig], snapshot: Snapshot):
        self.extenders = [HTTPExtender(c) for c in configs]
        self.snapshot = snapshot
        self.calls: list[ExtenderCall] = []

    def __bool__(self) -> bool:
        return bool(self.extenders)

    def begin_cycle(self) -> None:
        self.calls = []

    def has_filters(self) -> bool:
        return any(e.is_filter() for e in self.extenders)

    def has_prioritizers(self) -> bool:
        return any(e.is_prioritizer() for e in self.extenders)

    # -- Filter
    def filter(
        self, pod: Pod, feasible: list[NodeInfo], statuses: NodeStatuses
    ) -> tuple[list[NodeInfo], bool, dict[str, dict[str, Status | None]]]:
        """findNodesThatPassExtenders: (the nodes left, whether they are new node objects an
        extender returned, each answering extender's verdict per node it was sent or named:
        None passed, else its status). The rejected nodes' statuses go into `statuses`; raises
        ExtenderError when a non-ignorable extender fails."""
        fresh = False
        verdicts: dict[str, dict[str, Status | None]] = {}
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.is_filter():
                continue  # its Filter passes every node without a call
            if not ext.is_interested(pod):
                self.calls.append(ExtenderCall(ext.name, "filter", "not-interested"))
                continue
            sent = [ni.node.name for ni in feasible]
            try:
                answer = ext.filter(pod, feasible)
            except ExtenderError as e:
                if ext.cfg.ignorable:
                    self.calls.append(ExtenderCall(ext.name, "filter", "ignored", str(e), _failed(e, sent)))
                    continue
                self.calls.append(ExtenderCall(ext.name, "filter", "error", str(e), _failed(e, sent)))
                raise
            for name, msg in answer.unresolvable.items():
                statuses.set(name, Status(UNRESOLVABLE, msg, plugin=ext.name))
            for name, msg in answer.failed.items():
                if name not in answer.unresolvable:
                    statuses.set(name, Status(UNSCHEDULABLE, msg, plugin=ext.name))
            kept = answer.nodes or []
            kept_names = [ni.node.name for ni in kept]
            out = set(answer.failed) | set(answer.unresolvable)
            dropped = sorted(set(sent) - set(kept_names) - out)
            detail: dict[str, Any] = {
                "sent": sent,
                "passed": kept_names,
                "failed": {n: answer.failed[n] for n in sorted(answer.failed) if n not in answer.unresolvable},
                "failedAndUnresolvable": {n: answer.unresolvable[n] for n in sorted(answer.unresolvable)},
                # sent, neither passed nor failed: out without a status of their own
                "dropped": dropped,
            }
            if answer.fresh:
                detail["nodesAsObjects"] = True
                fresh = True
            self.calls.append(ExtenderCall(ext.name, "filter", "ok", "", detail))
            column: dict[str, Status | None] = {n: None for n in kept_names}
            for n in dropped:
                column[n] = Status(UNRESOLVABLE, "not returned by the extender", plugin=ext.name)
            for n in out:
                column[n] = statuses.get(n)
            verdicts[ext.name] = column
            feasible = kept
        return feasible, fresh, verdicts

    # -- Prioritize
    def prioritize(self, pod: Pod, nodes: list[NodeInfo]) -> list[tuple[str, list, list, int]]:
        """Each interested prioritizing extender's column, as the score table keeps plugins':
        (name, raw scores, raw × MaxNodeScore / MaxExtenderPriority, weight) in `nodes` order.
        A host named twice counts twice; a host not among `nodes` counts nowhere."""
        names = [ni.node.name for ni in nodes]
        index = {n: i for i, n in enumerate(names)}
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        out = []
        for ext in self.extenders:
            if not ext.is_prioritizer():
                continue  # its Prioritize gives every node 0 without a call
            if not ext.is_interested(pod):
                self.calls.append(ExtenderCall(ext.name, "prioritize", "not-interested"))
                continue
            try:
                scores, weight = ext.prioritize(pod, nodes)
            except ExtenderError as e:
                # prioritizeNodes logs it and goes on without this extender's scores
                self.calls.append(ExtenderCall(ext.name, "prioritize", "ignored", str(e), _failed(e, names)))
                continue
            raw = [0] * len(names)
            for host, score in scores:
                i = index.get(host)
                if i is not None:
                    raw[i] += score
            self.calls.append(
                ExtenderCall(
                    ext.name,
                    "prioritize",
                    "ok",
                    "",
                    {"sent": names, "weight": weight, "scores": [{"host": h, "score": s} for h, s in scores]},
                )
            )
            out.append((ext.name, raw, [s * scale for s in raw], weight))
        return out

    # -- Preemption (framework.interface.PreemptionExtenders)
    def process_preemption(self, pod: Pod, candidates: list[Candidate]) -> tuple[list[Candidate], Status | None]:
        """callExtenders: the candidates left (in their order, any new node after) or the error."""
        if not self.extenders or not candidates:
            return candidates, None
        victims = {c.node: (list(c.pods), c.pdb_violations) for c in candidates}
        for ext in self.extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                if ext.supports_preemption():
                    self.calls.append(ExtenderCall(ext.name, "preempt", "not-interested"))
                continue
            sent = sorted(victims)
            try:
                answer = ext.process_preemption(pod, victims, self.snapshot.get)
            except ExtenderError as e:
                if ext.cfg.ignorable:
                    self.calls.append(ExtenderCall(ext.name, "preempt", "ignored", str(e), _failed(e, sent)))
                    continue
                self.calls.append(ExtenderCall(ext.name, "preempt", "error", str(e), _failed(e, sent)))
                return [], Status(ERROR, str(e))
            dropped_empty = []
            for node_name in sorted(answer):
                if not answer[node_name][0]:
                    if ext.cfg.ignorable:
                        del answer[node_name]
                        dropped_empty.append(node_name)
                        continue
                    msg = f'expected at least one victim pod on node "{node_name}"'
                    self.calls.append(ExtenderCall(ext.name, "preempt", "error", msg, {"sent": sent}))
                    return [], Status(ERROR, msg)
            detail = {
                "sent": sent,
                "kept": {
                    n: {"victims": [p.key for p in pods], "pdbViolations": k} for n, (pods, k) in sorted(answer.items())
                },
                "dropped": sorted(set(sent) - set(answer)),
            }
            if dropped_empty:
                detail["droppedWithoutVictims"] = dropped_empty
            self.calls.append(ExtenderCall(ext.name, "preempt", "ok", "", detail))
            victims = answer
            if not victims:
                break
        order = {c.node: i for i, c in enumerate(candidates)}
        by_node = {c.node: c for c in candidates}
        out = []
        for node_name in sorted(victims, key=lambda n: (order.get(n, len(order)), n)):
            pods, k = victims[node_name]
            old = by_node.get(node_name)
            if old is not None and old.pods == pods and old.pdb_violations == k:
                out.append(old)
            else:
                out.append(Candidate(node_name, pods, k))
        return out, None

    # -- Bind
    def report_binder(self, pod: Pod) -> None:
        """The binder extender kube-scheduler would ask to bind the pod (an interested one)."""
        for ext in self.extenders:
            if ext.is_binder() and ext.is_interested(pod):
                self.calls.append(
                    ExtenderCall(ext.name, "bind", "not-called", "", {"note": "ksched binds nothing: not called"})
                )
                return
