"""kube-apiserver's create-time rules for coordination.k8s.io/v1 Leases, read from
pkg/apis/coordination/validation/validation.go (ValidateLeaseSpec)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube.findings import Finding, error_at


def check_lease(obj: dict[str, Any]) -> Iterator[Finding]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    duration, transitions = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
    if isinstance(duration, int) and duration <= 0:
        yield error_at(("spec", "leaseDurationSeconds"), "k8s-lease", "must be greater than 0")
    if isinstance(transitions, int) and transitions < 0:
        yield error_at(("spec", "leaseTransitions"), "k8s-lease", "must be greater than or equal to 0")
