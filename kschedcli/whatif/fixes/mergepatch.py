"""JSON merge patches (RFC 7396): applying one, and the patch that turns one document into another.

A merge patch replaces lists whole and deletes a key with null: the patch between two pods that
differ in one toleration carries the whole new `tolerations` list. (A document whose own values
hold null cannot be reached by a merge patch; pods never need one.)
"""

from __future__ import annotations

import copy
from typing import Any


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 MergePatch(target, patch); `target` is not changed."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = apply_merge_patch(out.get(key), value)
    return out


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The smallest merge patch P with apply_merge_patch(original, P) == modified."""
    if not isinstance(original, dict) or not isinstance(modified, dict):
        return copy.deepcopy(modified)
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, value in modified.items():
        if key not in original:
            patch[key] = copy.deepcopy(value)
        elif original[key] != value:
            if isinstance(original[key], dict) and isinstance(value, dict):
                patch[key] = create_merge_patch(original[key], value)
            else:
                patch[key] = copy.deepcopy(value)
    return patch
