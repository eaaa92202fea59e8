"""What would make it fit: the smallest changes to a pod, or to the cluster, that schedule it, each
proven by running the cycle again (issue 16). A layer over the core: it reads a cycle's result,
changes a copy of the pod or of the cluster, and schedules again with the same scheduler.

model.py: what a fix is (read by the views); search.py: find_fixes; pod_changes.py and
cluster_changes.py: the candidates; blocked.py: what keeps the pod off each node; mergepatch.py:
RFC 7396. Nothing is imported here: a schedulable pod's explain loads none of it.
"""
