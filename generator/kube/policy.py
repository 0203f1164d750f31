"""kube-apiserver's create-time rules for policy/v1 PodDisruptionBudgets, read from
pkg/apis/policy/validation/validation.go (ValidatePodDisruptionBudgetSpec)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator.kube.findings import Finding, unsupported
from generator.problems import Severity

_PERCENT = re.compile(r"[0-9]+%\Z")
_EVICTION_POLICIES = ("IfHealthyBudget", "AlwaysAllow")


def _int_or_percent(value: Any) -> str | None:
    """ValidatePositiveIntOrPercent and IsValidPercent (at most 100%)."""
    if isinstance(value, int):
        return "must be greater than or equal to 0" if value < 0 else None
    if isinstance(value, str) and _PERCENT.match(value):
        return "must not be greater than 100%" if int(value[:-1]) > 100 else None
    return "must be an integer or a percentage (such as 25%)"


def check_pod_disruption_budget(obj: dict[str, Any]) -> Iterator[Finding]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if "minAvailable" in spec and "maxUnavailable" in spec:
        yield Finding(
            ("spec", "maxUnavailable"),
            "k8s-pdb",
            Severity.ERROR,
            "minAvailable and maxUnavailable cannot be both set",
            "keep one: a budget counts either the Pods that must stay or those that may go",
        )
    for field in ("minAvailable", "maxUnavailable"):
        if field in spec and (err := _int_or_percent(spec[field])):
            yield Finding(("spec", field), "k8s-pdb", Severity.ERROR, err)
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _EVICTION_POLICIES:
        yield unsupported(("spec", "unhealthyPodEvictionPolicy"), "k8s-pdb", policy, _EVICTION_POLICIES)
