"""Configuration: KubeSchedulerConfiguration and its plugin args, HTTP extenders' config, and the
Kubernetes releases ksched follows."""
