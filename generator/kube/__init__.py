"""What Kubernetes refuses: schemas per version, kube-apiserver's and kube-scheduler's rules, names,
quantities. Stage 4 of the pipeline, and the whole of `gen validate`."""
