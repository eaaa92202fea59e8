"""What kubectl's YAML reader (sigs.k8s.io/yaml over go-yaml v2) refuses and libyaml would read,
refused here too before anything is built from it:

* excessive aliasing ("billion laughs"): go-yaml counts every node it decodes, an alias's target
  again at each alias, and fails once more than 100 of over 1,000 decodes came through aliases and
  their share exceeds a ratio that falls from 99% (up to 400,000 decodes) to 10% (from 4,000,000);
  the same count is kept here over libyaml's composed nodes, whose aliases share one node.
  Aliased values are then shared (PyYAML's constructor), never copied;
* an anchor whose value holds an alias of itself (libyaml builds a cycle; go-yaml refuses);
* nesting deeper than 10,000 levels (go-yaml's max depth; libyaml's composer, which recurses in C,
  would crash the process some levels further).
"""

from __future__ import annotations

import re

import yaml

MAX_DEPTH = 10000  # go-yaml's max_flow_level and max_indents
_ALIAS_RATIO_LOW = 400000  # decodes up to which 99% may come from aliases
_ALIAS_RATIO_HIGH = 4000000  # decodes from which 10% may
# an alias token: `*` where a node starts (elsewhere it is inside a scalar or a comment, which at
# worst costs the exact count below)
_MAY_ALIAS = re.compile(r"(?:^|[\s\[{,:?-])\*", re.M)
_DEEP_BLOCK_PREFIX = re.compile(rf"^[ ?-]{{{MAX_DEPTH // 4}}}", re.M)


class YAMLBoundError(yaml.MarkedYAMLError):
    """A document kubectl's YAML reader refuses (reported as malformed YAML, with its mark)."""

    def __init__(self, problem: str, mark) -> None:
        super().__init__(problem=problem, problem_mark=mark)


def may_alias(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether text[start:end] may hold an alias (no alias without this)."""
    return _MAY_ALIAS.search(text, start, len(text) if end is None else end) is not None


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decodes - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW))


def check_aliasing(root: yaml.Node) -> None:
    """Raise YAMLBoundError where go-yaml's decoder would fail this composed document: excessive
    aliasing, or an anchor containing itself. Walks the document as go-yaml decodes it (an alias's
    target once per alias), stopping as soon as go-yaml would; a document within the bound costs
    at most about 100 times its own size (go-yaml's allowance), a larger one is refused first."""
    decodes = 1  # the document node
    aliased = 0
    seen: set[int] = set()  # nodes met at their definition
    alias_refs: set[tuple[int, int]] = set()  # (parent, child index) that are aliases
    on_path: set[int] = set()
    # (node, parent id, index in parent, within an alias, leaving)
    stack: list[tuple[yaml.Node, int, int, bool, bool]] = [(root, 0, 0, False, False)]
    while stack:
        node, parent, index, in_alias, leaving = stack.pop()
        nid = id(node)
        if leaving:
            on_path.discard(nid)
            continue
        if in_alias:
            is_alias = (parent, index) in alias_refs
        else:
            is_alias = nid in seen
            if is_alias:
                alias_refs.add((parent, index))
        if is_alias:
            if nid in on_path:
                raise YAMLBoundError("an anchor's value contains an alias of itself", node.start_mark)
            decodes += 1  # the alias node
            if in_alias:
                aliased += 1
            in_alias = True
        decodes += 1
        if in_alias:
            aliased += 1
        if aliased > 100 and decodes > 1000 and aliased / decodes > _allowed_alias_ratio(decodes):
            raise YAMLBoundError("document contains excessive aliasing", root.start_mark)
        seen.add(nid)
        value = node.value
        if isinstance(node, yaml.MappingNode):
            children = [x for pair in value for x in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = value
        else:
            continue
        on_path.add(nid)
        stack.append((node, 0, 0, in_alias, True))
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], nid, i, in_alias, False))


def check_depth(text: str) -> None:
    """Raise YAMLBoundError when the stream nests collections deeper than MAX_DEPTH. The depth is
    bounded cheaply first (open brackets that are not `{}`/`[]`, plus twice the longest run of
    indentation and `- `/`? ` at a line start); only a stream that might be that deep has its
    events counted."""
    brackets = text.count("[") - text.count("[]") + text.count("{") - text.count("{}")
    if brackets < MAX_DEPTH // 2 - 2 and not _DEEP_BLOCK_PREFIX.search(text):
        return
    parser = yaml.CSafeLoader(text) if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader(text)
    try:
        depth = 0
        while True:
            event = parser.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise YAMLBoundError(f"exceeded max depth of {MAX_DEPTH}", event.start_mark)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    finally:
        parser.dispose()
