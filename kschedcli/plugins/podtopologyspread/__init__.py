"""The PodTopologySpread plugin: constraints, counting, alike pods."""
