"""kube-apiserver's rules for scheduling.k8s.io kinds (pkg/apis/scheduling/validation)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube.findings import Finding, error_at

HIGHEST_USER_PRIORITY = 1_000_000_000
# The built-in classes (pkg/apis/scheduling/v1 SystemPriorityClasses): name -> value; neither
# is the global default.
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}


def check_priority_class(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidatePriorityClass: a `system-` name is one of the built-in classes, exactly; any
    other class stays at or below the highest user-definable value."""
    name, value = (obj.get("metadata") or {}).get("name"), obj.get("value")
    if isinstance(name, str) and name.startswith("system-"):
        known = SYSTEM_PRIORITY_CLASSES.get(name)
        if known is None or value != known or obj.get("globalDefault", False) is not False:
            expected = (
                f"{name} is built in with value {known} and globalDefault false"
                if known is not None
                else f"the built-in ones are {', '.join(sorted(SYSTEM_PRIORITY_CLASSES))}"
            )
            yield error_at(
                ("metadata", "name"),
                "k8s-priority-class",
                f"priority class names with the 'system-' prefix are reserved for system use: {expected}",
                "choose a name without the 'system-' prefix",
            )
    elif isinstance(value, int) and value > HIGHEST_USER_PRIORITY:
        yield error_at(
            ("value",),
            "k8s-priority-class",
            f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
        )
