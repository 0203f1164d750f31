"""Label selectors as Kubernetes matches them (k8s.io/apimachinery/pkg/labels)."""

from __future__ import annotations

from typing import Any


def selects(selector: Any, labels: dict[str, Any]) -> bool:
    """Whether a LabelSelector (matchLabels AND every matchExpression) selects these labels."""
    if not isinstance(selector, dict):
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if (
            (op == "In" and (not present or labels[key] not in values))
            or (op == "NotIn" and present and labels[key] in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True
