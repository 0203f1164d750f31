"""kube-apiserver's rules for scheduling.k8s.io kinds (pkg/apis/scheduling/validation)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube.findings import Finding, error_at

HIGHEST_USER_PRIORITY = 1_000_000_000


def check_priority_class(obj: dict[str, Any]) -> Iterator[Finding]:
    name, value = (obj.get("metadata") or {}).get("name"), obj.get("value")
    if isinstance(value, int) and value > HIGHEST_USER_PRIORITY and not str(name).startswith("system-"):
        yield error_at(
            ("value",),
            "k8s-priority-class",
            f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
        )
