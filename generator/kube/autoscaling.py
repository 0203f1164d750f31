"""kube-apiserver's rules for autoscaling/v2 HorizontalPodAutoscalers
(pkg/apis/autoscaling/validation)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from generator.kube import names
from generator.kube.findings import Finding, Path, error_at
from generator.kube.quantity import parse_quantity


def _check_object_reference(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """ValidateCrossVersionObjectReference: kind and name are required path segments."""
    for field in ("kind", "name"):
        segment = ref.get(field)
        if not segment:
            yield error_at((*path, field), "k8s-hpa", f"{field} is required")
        elif err := names.path_segment(str(segment)):
            yield error_at((*path, field), "k8s-hpa", f"{field} {segment!r} {err}")


def _check_metric_identifier(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateMetricIdentifier: a metric name goes into the metrics API's URL path."""
    if "describedObject" in source:
        yield from _check_object_reference(source.get("describedObject") or {}, (*path, "describedObject"))
    name = (source.get("metric") or {}).get("name")
    if not name:
        yield error_at((*path, "metric", "name"), "k8s-hpa", "must specify a metric name")
    elif err := names.path_segment(str(name)):
        yield error_at((*path, "metric", "name"), "k8s-hpa", f"metric name {name!r} {err}")


def check_hpa(obj: dict[str, Any], scale_to_zero: bool = False) -> Iterator[Finding]:
    """ValidateHorizontalPodAutoscalerSpec; scale_to_zero: the cluster enables HPAScaleToZero,
    which lowers minReplicas' bound to 0 (validateMetrics then asks for an Object or External
    metric, the only ones that can wake a workload with no Pods)."""
    spec = obj.get("spec") or {}
    lo, hi = spec.get("minReplicas", 1), spec.get("maxReplicas")
    lowest = 0 if scale_to_zero else 1
    if isinstance(lo, int) and lo < lowest:
        yield error_at(("spec", "minReplicas"), "k8s-hpa", f"must be greater than or equal to {lowest}")
    metrics = spec.get("metrics") or []
    if lo == 0 and scale_to_zero and not any(m.get("type") in ("Object", "External") for m in metrics):
        yield error_at(
            ("spec", "metrics"),
            "k8s-hpa",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        )
    if isinstance(hi, int) and (hi < 1 or (isinstance(lo, int) and hi < lo)):
        yield error_at(("spec", "maxReplicas"), "k8s-hpa", "must be greater than or equal to `minReplicas`")
    for m, metric in enumerate(spec.get("metrics") or []):
        mpath: Path = ("spec", "metrics", m)
        source = {
            "Resource": "resource",
            "ContainerResource": "containerResource",
            "Pods": "pods",
            "Object": "object",
            "External": "external",
        }.get(metric.get("type"))
        if source is None:
            yield error_at((*mpath, "type"), "k8s-hpa", "must be Object, Pods, Resource, ContainerResource or External")
            continue
        populated = [k for k in ("resource", "containerResource", "pods", "object", "external") if k in metric]
        if source not in populated:
            yield error_at(mpath, "k8s-hpa", "must populate information for the given metric source")
        if set(populated) - {source}:
            yield error_at(mpath, "k8s-hpa", "must populate the given metric source only")
        target = (metric.get(source) or {}).get("target") or {}
        if target.get("type") not in ("Utilization", "Value", "AverageValue"):
            yield error_at(
                (*mpath, source, "target", "type"), "k8s-hpa", "must be either Utilization, Value, or AverageValue"
            )
        util = target.get("averageUtilization")
        if util is not None and (not isinstance(util, int) or util < 1):
            yield error_at((*mpath, source, "target", "averageUtilization"), "k8s-hpa", "must be greater than 0")
        if source in ("resource", "containerResource") and ("averageUtilization" in target) == (
            "averageValue" in target
        ):
            yield error_at(
                (*mpath, source, "target"),
                "k8s-hpa",
                "must set either a target raw value or a target utilization, not both",
            )
        for field in ("value", "averageValue"):
            amount = parse_quantity(target[field]) if field in target else None
            if field in target and (amount is None or amount <= 0):
                yield error_at((*mpath, source, "target", field), "k8s-hpa", "must be positive")
        if source == "pods" and "averageValue" not in target:
            yield error_at(
                (*mpath, source, "target", "averageValue"), "k8s-hpa", "must specify a positive target averageValue"
            )
        if source in ("object", "external") and not ({"value", "averageValue"} & target.keys()):
            yield error_at((*mpath, source, "target"), "k8s-hpa", "must set either a target value or averageValue")
        if source == "external" and {"value", "averageValue"} <= target.keys():
            yield error_at((*mpath, source, "target"), "k8s-hpa", "may not set both a target value and averageValue")
        if source in ("object", "pods", "external"):
            yield from _check_metric_identifier(metric.get(source) or {}, (*mpath, source))
    yield from _check_object_reference(spec.get("scaleTargetRef") or {}, ("spec", "scaleTargetRef"))
    behavior = spec.get("behavior") or {}
    for direction in ("scaleUp", "scaleDown"):
        rules = behavior.get(direction)
        if not isinstance(rules, dict):
            continue
        bpath: Path = ("spec", "behavior", direction)
        window = rules.get("stabilizationWindowSeconds")
        if window is not None and not 0 <= window <= 3600:
            yield error_at((*bpath, "stabilizationWindowSeconds"), "k8s-hpa-behavior", "must be between 0 and 3600")
        if rules.get("selectPolicy", "Max") not in ("Max", "Min", "Disabled"):
            yield error_at((*bpath, "selectPolicy"), "k8s-hpa-behavior", "must be Max, Min or Disabled")
        if "policies" in rules and not rules["policies"]:
            yield error_at((*bpath, "policies"), "k8s-hpa-behavior", "must specify at least one Policy")
        for p, pol in enumerate(rules.get("policies") or []):
            if pol.get("type") not in ("Pods", "Percent"):
                yield error_at((*bpath, "policies", p, "type"), "k8s-hpa-behavior", "must be Pods or Percent")
            if not isinstance(pol.get("value"), int) or pol["value"] <= 0:
                yield error_at((*bpath, "policies", p, "value"), "k8s-hpa-behavior", "must be greater than zero")
            period = pol.get("periodSeconds")
            if not isinstance(period, int) or not 1 <= period <= 1800:
                yield error_at(
                    (*bpath, "policies", p, "periodSeconds"), "k8s-hpa-behavior", "must be between 1 and 1800"
                )
        tol = rules.get("tolerance")
        if tol is not None and (parse_quantity(tol) or Decimal(0)) < 0:
            yield error_at((*bpath, "tolerance"), "k8s-hpa-behavior", "must be greater than or equal to 0")
