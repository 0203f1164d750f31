"""kube-apiserver's rules for autoscaling/v2 HorizontalPodAutoscalers
(pkg/apis/autoscaling/validation)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from generator.kube import names
from generator.kube.containers import resource_name_error
from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.kube.quantity import parse_quantity
from generator.schema_messages import shown

MAX_PERIOD = 1800  # MaxPeriodSeconds
MAX_STABILIZATION_WINDOW = 3600  # MaxStabilizationWindowSeconds


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


_SOURCES = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}
_SOURCE_ORDER = ("object", "external", "pods", "resource", "containerResource")  # validateMetricSpec's order


def _check_metric(metric: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateMetricSpec: a known type whose source, and only that one, is populated, with a
    target that fits the source."""
    source = _SOURCES.get(str(metric.get("type")))
    if not metric.get("type"):
        yield error_at((*path, "type"), "k8s-hpa", "Required value: must specify a metric source type")
        return
    if source is None:
        yield unsupported((*path, "type"), "k8s-hpa", metric.get("type"), sorted(_SOURCES))
        return
    populated = [key for key in _SOURCE_ORDER if metric.get(key) is not None]
    if source not in populated:
        yield error_at((*path, source), "k8s-hpa", "must populate information for the given metric source")
    for extra in populated:
        if extra != source:
            yield error_at((*path, extra), "k8s-hpa", "must populate the given metric source only")
    if not populated:
        return
    source = populated[0]  # the one source validateMetricSpec validates: the first present
    spec: dict[str, Any] = metric[source] if isinstance(metric[source], dict) else {}
    at: Path = (*path, source)
    target: dict[str, Any] = spec["target"] if isinstance(spec.get("target"), dict) else {}
    yield from _check_target(target, (*at, "target"))
    given = {key for key in ("value", "averageValue", "averageUtilization") if target.get(key) is not None}
    if source in ("resource", "containerResource"):
        if spec.get("name") == "":
            yield error_at((*at, "name"), "k8s-hpa", "must specify a resource name")
        if source == "containerResource":
            yield from _check_container_resource(spec, at)
        if not given & {"averageUtilization", "averageValue"}:
            yield error_at(
                (*at, "target", "averageUtilization"),
                "k8s-hpa",
                "must set either a target raw value or a target utilization",
            )
        elif {"averageUtilization", "averageValue"} <= given:
            yield error_at(
                (*at, "target", "averageValue"),
                "k8s-hpa",
                "may not set both a target raw value and a target utilization",
            )
        return
    yield from _check_metric_identifier(spec, at)
    if source == "pods" and "averageValue" not in given:
        yield error_at((*at, "target", "averageValue"), "k8s-hpa", "must specify a positive target averageValue")
    if source in ("object", "external") and not given & {"value", "averageValue"}:
        yield error_at((*at, "target", "averageValue"), "k8s-hpa", "must set either a target value or averageValue")
    if source == "external" and {"value", "averageValue"} <= given:
        yield error_at(
            (*at, "target", "value"), "k8s-hpa", "may not set both a target value for metric and a per-pod target"
        )


def _check_target(target: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateMetricTarget."""
    if not target.get("type"):
        yield error_at((*path, "type"), "k8s-hpa", "Required value: must specify a metric target type")
    elif target.get("type") not in ("Utilization", "Value", "AverageValue"):
        yield error_at((*path, "type"), "k8s-hpa", "must be either Utilization, Value, or AverageValue")
    for field in ("value", "averageValue"):
        if target.get(field) is not None:
            amount = parse_quantity(target[field])
            if amount is None or amount <= 0:
                yield error_at((*path, field), "k8s-hpa", "must be positive")
    util = target.get("averageUtilization")
    if util is not None and (not isinstance(util, int) or util < 1):
        yield error_at((*path, "averageUtilization"), "k8s-hpa", "must be greater than 0")


def _check_container_resource(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateContainerResourceSource: a container resource name and a container's name."""
    name, container = spec.get("name"), spec.get("container")
    if isinstance(name, str) and name and (err := resource_name_error(name)):
        yield error_at((*path, "name"), "k8s-hpa", f"{shown(name)}: {err}")
    if container == "":
        yield error_at((*path, "container"), "k8s-hpa", "must specify a container")
    elif isinstance(container, str) and (err := names.dns1123_label(container)):
        yield error_at((*path, "container"), "k8s-hpa", f"{shown(container)}: {err}")


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
    if isinstance(hi, int) and hi < 1:
        yield error_at(("spec", "maxReplicas"), "k8s-hpa", "must be greater than 0")
    elif isinstance(hi, int) and isinstance(lo, int) and hi < lo:
        yield error_at(("spec", "maxReplicas"), "k8s-hpa", "must be greater than or equal to `minReplicas`")
    for m, metric in enumerate(metrics):
        if isinstance(metric, dict):
            yield from _check_metric(metric, ("spec", "metrics", m))
    yield from _check_object_reference(spec.get("scaleTargetRef") or {}, ("spec", "scaleTargetRef"))
    behavior = spec.get("behavior") or {}
    for direction in ("scaleUp", "scaleDown"):  # validateScalingRules
        rules = behavior.get(direction)
        if not isinstance(rules, dict):
            continue
        bpath: Path = ("spec", "behavior", direction)
        window = rules.get("stabilizationWindowSeconds")
        if isinstance(window, int) and window < 0:
            yield error_at(
                (*bpath, "stabilizationWindowSeconds"), "k8s-hpa-behavior", "must be greater than or equal to zero"
            )
        elif isinstance(window, int) and window > MAX_STABILIZATION_WINDOW:
            yield error_at(
                (*bpath, "stabilizationWindowSeconds"),
                "k8s-hpa-behavior",
                f"must be less than or equal to {MAX_STABILIZATION_WINDOW}",
            )
        if rules.get("selectPolicy", "Max") not in ("Max", "Min", "Disabled"):
            yield unsupported(
                (*bpath, "selectPolicy"), "k8s-hpa-behavior", rules["selectPolicy"], ("Disabled", "Max", "Min")
            )
        if "policies" in rules and not rules["policies"]:
            yield error_at((*bpath, "policies"), "k8s-hpa-behavior", "must specify at least one Policy")
        for p, pol in enumerate(rules.get("policies") or []):
            if pol.get("type") not in ("Pods", "Percent"):
                yield error_at((*bpath, "policies", p, "type"), "k8s-hpa-behavior", "must be Pods or Percent")
            if not isinstance(pol.get("value"), int) or pol["value"] <= 0:
                yield error_at((*bpath, "policies", p, "value"), "k8s-hpa-behavior", "must be greater than zero")
            period = pol.get("periodSeconds")
            if not isinstance(period, int) or period <= 0:
                yield error_at(
                    (*bpath, "policies", p, "periodSeconds"), "k8s-hpa-behavior", "must be greater than zero"
                )
            elif period > MAX_PERIOD:
                yield error_at(
                    (*bpath, "policies", p, "periodSeconds"),
                    "k8s-hpa-behavior",
                    f"must be less than or equal to {MAX_PERIOD}",
                )
        tol = rules.get("tolerance")
        if tol is not None and (parse_quantity(tol) or Decimal(0)) < 0:
            yield error_at((*bpath, "tolerance"), "k8s-hpa-behavior", "must be greater than or equal to 0")
