"""kube-apiserver's create-time rules for apps/v1 StatefulSets and DaemonSets, read from
pkg/apis/apps/validation/validation.go, after pkg/apis/apps/v1/defaults.go's defaulting
(a DaemonSet's rolling update defaults maxUnavailable to 1 and maxSurge to 0)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.problems import Severity

_PERCENT = re.compile(r"[0-9]+%\Z")


def _error(path: Path, message: str, rule: str = "k8s-apps") -> Finding:
    return Finding(path, rule, Severity.ERROR, message)


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


def check_stateful_set(obj: dict[str, Any]) -> Iterator[Finding]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from _enum(spec, ("spec", "podManagementPolicy"), ("OrderedReady", "Parallel"))
    for field in ("replicas", "minReadySeconds"):
        if isinstance(spec.get(field), int) and spec[field] < 0:
            yield _error(("spec", field), "must be greater than or equal to 0")
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
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    strategy = spec.get("updateStrategy") or {}
    yield from _enum(strategy, ("spec", "updateStrategy", "type"), ("RollingUpdate", "OnDelete"))
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return
    rolling = strategy.get("rollingUpdate") or {}
    unavailable, surge = rolling.get("maxUnavailable", 1), rolling.get("maxSurge", 0)  # the defaults
    at: Path = ("spec", "updateStrategy", "rollingUpdate")
    yield from _int_or_percent(unavailable, (*at, "maxUnavailable"))
    yield from _int_or_percent(surge, (*at, "maxSurge"))
    if _is_zero(unavailable) and _is_zero(surge):
        yield _error(
            (*at, "maxUnavailable"),
            "may not be 0 when maxSurge is 0: the rollout could never replace a Pod",
        )


_DEPLOYMENT_STRATEGIES = ("Recreate", "RollingUpdate")


def check_deployment(spec: dict[str, Any]) -> Iterator[Finding]:
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        yield error_at(("spec", "replicas"), "k8s-deployment", "must be greater than or equal to 0")
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
    for field in ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        if isinstance(spec.get(field), int) and spec[field] < 0:
            yield error_at(("spec", field), "k8s-deployment", "must be greater than or equal to 0")
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
