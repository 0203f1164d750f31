"""gen: GitOps policy/manifest generator for GPU and scale-sensitive Kubernetes workloads."""

__version__ = "0.1.0"
