"""ksched: offline what-if placement for Kubernetes, following kube-scheduler."""

__version__ = "0.1.0"
KUBE_SCHEDULER_VERSION = "v1.34.1"
