"""What would make it fit: the smallest changes to a pod, or to the cluster, that schedule it, each
proven by running the cycle again (issue 16). A layer over the core: it reads a cycle's result,
changes a copy of the pod or of the cluster, and schedules again with the same scheduler."""

from .model import Change, FixSearch, Suggestion, Verdict
from .search import find_fixes, needs_fixing

__all__ = ["Change", "FixSearch", "Suggestion", "Verdict", "find_fixes", "needs_fixing"]
