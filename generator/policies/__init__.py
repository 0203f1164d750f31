"""Policies: the model, targets, derived values and cross-policy rules. Stages 1-2 of the pipeline."""
