"""Previews beside the pipeline: what kube-scheduler and the cost writers will do (`gen explain`, `gen cost`)."""
