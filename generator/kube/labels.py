"""Label selectors as Kubernetes matches them (k8s.io/apimachinery/pkg/labels)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import names
from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.schema_messages import shown


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


def check_labels(mapping: Any, path: Path, rule: str) -> Iterator[Finding]:
    """ValidateLabels on a map a selector matches: keys that are label keys, values that are
    label values; no object could carry anything else."""
    for key, value in (mapping or {}).items() if isinstance(mapping, dict) else ():
        if problem := names.qualified_name(str(key)):
            yield error_at((*path, key), rule, f"key {shown(key)}: {problem}")
        elif isinstance(value, str) and (problem := names.label_value(value)):
            yield error_at((*path, key), rule, f"{key}={value}: {problem}")


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def check_selector(selector: Any, path: Path, rule: str) -> Iterator[Finding]:
    """ValidateLabelSelector (apimachinery's meta/v1 validation): matchLabels are labels, and
    each expression a label key with an operator and values that fit it."""
    if not isinstance(selector, dict):
        return
    yield from check_labels(selector.get("matchLabels"), (*path, "matchLabels"), rule)
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        if not isinstance(expr, dict):
            continue
        at, op, values = (*path, "matchExpressions", i), expr.get("operator"), expr.get("values") or []
        if op in ("In", "NotIn") and not values:
            yield error_at((*at, "values"), rule, f"must be specified when `operator` is {op}")
        elif op in ("Exists", "DoesNotExist") and values:
            yield error_at((*at, "values"), rule, f"may not be specified when `operator` is {op}")
        elif op not in _SELECTOR_OPERATORS:
            yield unsupported((*at, "operator"), rule, op, _SELECTOR_OPERATORS)
        if err := names.qualified_name(str(expr.get("key", ""))):
            yield error_at((*at, "key"), rule, f"key {shown(expr.get('key'))}: {err}")
        for j, value in enumerate(values):
            if isinstance(value, str) and (err := names.label_value(value)):
                yield error_at((*at, "values", j), rule, f"{shown(value)}: {err}")
