"""Shared plugin helpers (kube-scheduler's plugins/helper)."""

from __future__ import annotations

from ..framework.interface import MAX_NODE_SCORE


def default_normalize_score(scores: dict[str, int], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> None:
    """Scale [0, max] to [0, max_priority] with integer division; reverse subtracts from max_priority."""
    # the running maximum starts at 0, so a list of only negative scores counts as all-zero
    max_count = max(0, max(scores.values(), default=0))
    if max_count == 0:
        if reverse:
            scores.update(dict.fromkeys(scores, max_priority))
        return

    def scaled(s: int) -> int:
        s = max_priority * s // max_count if s >= 0 else -((max_priority * -s) // max_count)
        return max_priority - s if reverse else s

    map_scores(scores, scaled)


def default_normalize_list(scores: list[int], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> list[int]:
    """default_normalize_score on a list of scores: a new list (each distinct score, of the
    few nodes have, worked out once)."""
    distinct = set(scores)
    max_count = max(0, max(distinct, default=0))
    if max_count == 0:
        return [max_priority] * len(scores) if reverse else list(scores)

    def scaled(s: int) -> int:
        s = max_priority * s // max_count if s >= 0 else -((max_priority * -s) // max_count)
        return max_priority - s if reverse else s

    return map_list(scores, scaled, distinct)


def default_normalize_array(np, scores, reverse: bool, max_priority: int = MAX_NODE_SCORE):
    """default_normalize_list on an int64 array of `np` (numpy): a new array; Go's division
    truncates toward zero, as the list's does for negative scores."""
    max_count = max(0, int(scores.max())) if len(scores) else 0
    if max_count == 0:
        return np.full(len(scores), max_priority, dtype=np.int64) if reverse else scores.copy()
    scaled = np.where(scores >= 0, max_priority * scores // max_count, -((max_priority * -scores) // max_count))
    return max_priority - scaled if reverse else scaled


def map_list(scores: list[int], fn, distinct: set[int] | None = None) -> list[int]:
    """[fn(s) for s in scores], fn called once per distinct score (nodes share few); `distinct`:
    set(scores), when the caller has it already."""
    memo = {v: fn(v) for v in (set(scores) if distinct is None else distinct)}
    return list(map(memo.__getitem__, scores))


def map_scores(scores: dict[str, int], fn) -> None:
    """scores[k] = fn(scores[k]) for every node, in place (the keys keep their order); fn is
    called once per distinct score (nodes share few)."""
    memo = {v: fn(v) for v in set(scores.values())}
    scores.update(zip(list(scores), [memo[v] for v in scores.values()]))


def find_untolerated_taint(taints, tolerations, effects=("NoSchedule", "NoExecute")):
    """v1helper.FindMatchingUntoleratedTaint with the DoNotSchedule filter: the first one, or None."""
    for t in taints:
        if t.effect not in effects:
            continue
        if not any(tol.tolerates(t.key, t.value, t.effect) for tol in tolerations):
            return t
    return None


def tolerates(tolerations, key: str, value: str, effect: str) -> bool:
    return any(t.tolerates(key, value, effect) for t in tolerations)
