"""Workloads (Deployments, StatefulSets, DaemonSets, Jobs, ...) become the pods their controllers would
create."""
