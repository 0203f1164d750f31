"""kube-apiserver's create-time rules for apps/v1 Deployments, ReplicaSets, StatefulSets,
DaemonSets and ControllerRevisions, read from pkg/apis/apps/validation/validation.go, after
pkg/apis/apps/v1/defaults.go's defaulting (a DaemonSet's rolling update defaults maxUnavailable
to 1 and maxSurge to 0). Their pod templates are pods.py's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator.kube import labels
from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.problems import Severity

_PERCENT = re.compile(r"[0-9]+%\Z")


def _error(path: Path, message: str, rule: str = "k8s-apps", hint: str = "") -> Finding:
    return Finding(path, rule, Severity.ERROR, message, hint)


def _enum(spec: dict[str, Any], path: Path, allowed: tuple[str, ...]) -> Iterator[Finding]:
    value = spec.get(str(path[-1]))
    if value is not None and value not in allowed:
        yield unsupported(path, "k8s-apps", value, allowed)


def _is_zero(value: Any) -> bool:
    return value == 0 or value == "0%"


def _int_or_percent(value: Any, path: Path) -> Iterator[Finding]:
    if isinstance(value, int) and value < 0:
        yield _error(path, "must be greater than or equal to 0")
    elif isinstance(value, str):
        if not _PERCENT.match(value):
            yield _error(path, "must be an integer or a percentage (such as 25%)")
        elif int(value[:-1]) > 100:
            yield _error(path, "must not be greater than 100%")


def _int_or_percent_value(value: Any) -> int:
    """getIntOrPercentValue: a percentage's number, an integer, or what Atoi makes of other text (0 if nothing)."""
    if isinstance(value, str):
        text = value[:-1] if _PERCENT.match(value) else value
        return int(text) if text.isdigit() else 0
    return value if isinstance(value, int) else 0


def _nonnegative(spec: dict[str, Any], fields: tuple[str, ...], rule: str = "k8s-apps") -> Iterator[Finding]:
    """ValidateNonnegativeField on each of fields that the spec sets."""
    for field in fields:
        if isinstance(spec.get(field), int) and spec[field] < 0:
            yield _error(("spec", field), "must be greater than or equal to 0", rule)


def check_selector(spec: dict[str, Any], kind: str) -> Iterator[Finding]:
    """A controller's selector (apps/v1 requires one: the schema says so when it is missing):
    ValidateLabelSelector, not empty, and, when LabelSelectorAsSelector parses it, selecting the
    template's labels (ValidatePodTemplateSpecForReplicaSet, ...ForStatefulSet, ValidateDaemonSetSpec)."""
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return
    invalid = list(labels.check_selector(selector, ("spec", "selector"), "k8s-selector"))
    yield from invalid
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        yield error_at(("spec", "selector"), "k8s-selector", f"empty selector is invalid for {kind.lower()}")
        return
    template = (spec.get("template") or {}).get("metadata") or {}
    if not invalid and not labels.selects(selector, template.get("labels") or {}):
        yield error_at(
            ("spec", "template", "metadata", "labels"),
            "k8s-selector",
            "`selector` does not match template `labels`",
            "the selector must select the labels of the Pods the template makes",
        )


def check_stateful_set(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateStatefulSetSpec."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from check_selector(spec, "StatefulSet")
    yield from _enum(spec, ("spec", "podManagementPolicy"), ("OrderedReady", "Parallel"))
    yield from _nonnegative(spec, ("replicas", "minReadySeconds"))
    strategy = spec.get("updateStrategy") or {}
    yield from _enum(strategy, ("spec", "updateStrategy", "type"), ("RollingUpdate", "OnDelete"))
    rolling = strategy.get("rollingUpdate")
    if isinstance(rolling, dict):
        if strategy.get("type") == "OnDelete":
            yield _error(("spec", "updateStrategy", "rollingUpdate"), "only allowed for updateStrategy 'RollingUpdate'")
        if isinstance(rolling.get("partition"), int) and rolling["partition"] < 0:
            yield _error(("spec", "updateStrategy", "rollingUpdate", "partition"), "must be greater than or equal to 0")
        if "maxUnavailable" in rolling:
            at = ("spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
            yield from _int_or_percent(rolling["maxUnavailable"], at)
            if _is_zero(rolling["maxUnavailable"]):
                yield _error(at, "must be greater than 0")
    retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    for field in ("whenDeleted", "whenScaled"):
        yield from _enum(retention, ("spec", "persistentVolumeClaimRetentionPolicy", field), ("Retain", "Delete"))
    if isinstance((spec.get("ordinals") or {}).get("start"), int) and spec["ordinals"]["start"] < 0:
        yield _error(("spec", "ordinals", "start"), "must be greater than or equal to 0")


def check_daemon_set(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateDaemonSetSpec and ValidateRollingUpdateDaemonSet: exactly one of maxUnavailable
    (default 1) and maxSurge (default 0) is non-zero, each an integer >= 0 or a percentage <= 100%."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from check_selector(spec, "DaemonSet")
    yield from _nonnegative(spec, ("minReadySeconds", "templateGeneration", "revisionHistoryLimit"))
    strategy = spec.get("updateStrategy") or {}
    yield from _enum(strategy, ("spec", "updateStrategy", "type"), ("RollingUpdate", "OnDelete"))
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return
    rolling = strategy.get("rollingUpdate") or {}
    unavailable, surge = rolling.get("maxUnavailable", 1), rolling.get("maxSurge", 0)  # the defaults
    at: Path = ("spec", "updateStrategy", "rollingUpdate")
    yield from _int_or_percent(unavailable, (*at, "maxUnavailable"))
    yield from _int_or_percent(surge, (*at, "maxSurge"))
    has_unavailable, has_surge = _int_or_percent_value(unavailable) != 0, _int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        yield _error(
            (*at, "maxSurge"),
            "may not be set when maxUnavailable is non-zero",
            hint="set maxUnavailable: 0 to surge (maxUnavailable defaults to 1)",
        )
    elif not has_unavailable and not has_surge:
        yield _error(
            (*at, "maxUnavailable"),
            "may not be 0 when maxSurge is 0: the rollout could never replace a Pod",
        )


def check_replica_set(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateReplicaSetSpec."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from check_selector(spec, "ReplicaSet")
    yield from _nonnegative(spec, ("replicas", "minReadySeconds"))


def check_controller_revision(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateControllerRevision: data is mandatory and the revision not negative."""
    if obj.get("data") is None:
        yield _error(("data",), "Required value: data is mandatory")
    revision = obj.get("revision")
    if isinstance(revision, int) and revision < 0:
        yield _error(("revision",), "must be greater than or equal to 0")


_DEPLOYMENT_STRATEGIES = ("Recreate", "RollingUpdate")


def check_deployment(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateDeploymentSpec."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from check_selector(spec, "Deployment")
    yield from _nonnegative(spec, ("replicas",), "k8s-deployment")
    strategy = spec.get("strategy") or {}
    kind = strategy.get("type")
    if kind is not None and kind not in _DEPLOYMENT_STRATEGIES:
        yield unsupported(("spec", "strategy", "type"), "k8s-deployment", kind, _DEPLOYMENT_STRATEGIES)
    if kind == "Recreate" and "rollingUpdate" in strategy:
        yield error_at(
            ("spec", "strategy", "rollingUpdate"),
            "k8s-deployment",
            "may not be specified when strategy `type` is 'Recreate'",
        )
    ru = strategy.get("rollingUpdate") or {}
    values = {}
    for key in ("maxUnavailable", "maxSurge"):
        if key in ru:
            raw = ru[key]
            if isinstance(raw, str) and not re.fullmatch(r"[0-9]+%", raw):
                yield error_at(
                    ("spec", "strategy", "rollingUpdate", key),
                    "k8s-deployment",
                    f"{raw!r} must be an integer or a percentage",
                )
            values[key] = int(raw.rstrip("%")) if isinstance(raw, str) and raw.rstrip("%").isdigit() else raw
            if isinstance(values[key], int) and values[key] < 0:
                yield error_at(
                    ("spec", "strategy", "rollingUpdate", key), "k8s-deployment", "must be greater than or equal to 0"
                )
    unavailable = ru.get("maxUnavailable")
    if isinstance(unavailable, str) and unavailable.endswith("%") and values.get("maxUnavailable", 0) > 100:
        yield error_at(
            ("spec", "strategy", "rollingUpdate", "maxUnavailable"), "k8s-deployment", "must not be greater than 100%"
        )
    yield from _nonnegative(
        spec, ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"), "k8s-deployment"
    )
    if values.get("maxUnavailable") == 0 and values.get("maxSurge") == 0:
        yield error_at(
            ("spec", "strategy", "rollingUpdate", "maxUnavailable"),
            "k8s-deployment",
            "may not be 0 when `maxSurge` is 0",
        )
    mrs, pds = spec.get("minReadySeconds", 0), spec.get("progressDeadlineSeconds")
    if isinstance(pds, int) and isinstance(mrs, int) and pds <= mrs:
        yield error_at(
            ("spec", "progressDeadlineSeconds"),
            "k8s-deployment",
            f"progressDeadlineSeconds {pds} must be greater than minReadySeconds {mrs}",
            "kube-apiserver sets progressDeadlineSeconds to 600 when it is not given",
        )
