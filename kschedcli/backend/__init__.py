"""kube-scheduler's backend: the cache snapshot of nodes (NodeInfo), its int64 columns, and the
nominator."""
