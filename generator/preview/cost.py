"""The seed's deletion-cost policies, driven by a DeletionCostPolicy: `metrics` (the Python
`calculate_cost`) and `connections` (the Go `CostForConnections`).

A sample is one fresh, per-Pod observation. Anything doubtful (stale or naive timestamps,
booleans, negative or non-finite numbers) is refused rather than guessed, so the caller keeps
the annotation it already has.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import jsonpointer

from generator.kube.pods import DELETION_COST
from generator.policies.policy import Policy

ANNOTATION_PATH = "/metadata/annotations/" + jsonpointer.escape(DELETION_COST)


class SampleError(ValueError):
    """A sample that must not produce a cost; `field` is the offending key (empty for the sample)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class CostWeights:
    active_request: int
    cache_hit_rate: int
    latency_bonus: tuple[tuple[float, int], ...]  # (belowMs, bonus), ascending belowMs
    bucket: int
    cap: int
    max_age_seconds: float
    max_future_seconds: float
    policy: str = "metrics"

    @classmethod
    def from_policy(cls, policy: Policy) -> CostWeights:
        """Weights of a schema-valid DeletionCostPolicy (defaults already filled in)."""
        weights, sample = policy.spec["weights"], policy.spec["sample"]
        brackets = sorted((b["belowMs"], b["bonus"]) for b in weights["latencyBonus"])
        return cls(
            active_request=weights["activeRequest"],
            cache_hit_rate=weights["cacheHitRate"],
            latency_bonus=tuple(brackets),
            bucket=weights["bucket"],
            cap=policy.spec["cap"],
            max_age_seconds=sample["maxAgeSeconds"],
            max_future_seconds=sample["maxFutureSeconds"],
            policy=policy.spec["policy"],
        )


def parse_timestamp(value: object, field: str) -> datetime:
    """An ISO 8601 timestamp with a timezone (YAML may already have parsed it)."""
    if isinstance(value, datetime):
        observed = value
    elif isinstance(value, str):
        try:
            observed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as err:
            raise SampleError(field, f"{field} is not an ISO 8601 timestamp: {value!r}") from err
    else:
        raise SampleError(field, f"{field} must be an ISO 8601 timestamp string")
    if observed.tzinfo is None or observed.utcoffset() is None:
        raise SampleError(field, f"{field} must include a timezone (e.g. 2026-01-01T00:00:00Z)")
    return observed


def current_time(text: str | None, flag: str = "--now") -> datetime:
    """The time a sample is judged against: the given timestamp (timezone required) or now."""
    return parse_timestamp(text, flag) if text is not None else datetime.now(UTC)


def _shown(value: object) -> str:
    """A value as the sample's author wrote it (JSON), not as Python prints it."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _number(sample: Mapping[str, Any], field: str) -> float:
    value = _field(sample, field)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SampleError(field, f"{field} must be a finite number, got {_shown(value)}")
    return value


def _field(sample: Mapping[str, Any], field: str) -> Any:
    if field not in sample:
        raise SampleError("", f"the sample has no {field}")
    return sample[field]


def pod_uid(sample: Mapping[str, Any]) -> str:
    uid = _field(sample, "pod_uid")
    if not isinstance(uid, str) or not uid:
        raise SampleError("pod_uid", "pod_uid must be a non-empty string")
    return uid


# The seed's CostForConnections: (connections below, cost); more connections cost 1000.
CONNECTION_BRACKETS = ((1, 0), (10, 100), (100, 500))


def calculate_cost(sample: Mapping[str, Any], now: datetime, weights: CostWeights) -> int:
    """The cost of a fresh sample by the policy's rule; raises SampleError for a doubtful sample."""
    if not isinstance(sample, Mapping):
        raise SampleError("", "a sample must be a mapping of metric names to values")
    observed = parse_timestamp(_field(sample, "observed_at"), "observed_at")
    if now.tzinfo is None or now.utcoffset() is None:
        raise SampleError("", "the current time must include a timezone")
    age = (now - observed).total_seconds()
    if age < -weights.max_future_seconds:
        raise SampleError(
            "observed_at", f"observed_at is {-age:g}s in the future (limit {weights.max_future_seconds:g}s)"
        )
    if age > weights.max_age_seconds:
        raise SampleError("observed_at", f"the sample is stale: {age:g}s old (limit {weights.max_age_seconds:g}s)")
    if weights.policy == "connections":
        connections = _count(sample, "active_connections")
        cost = next((cost for below, cost in CONNECTION_BRACKETS if connections < below), 1000)
        return min(weights.cap, cost)

    active = _count(sample, "active_requests")
    hit_rate = _number(sample, "cache_hit_rate")
    latency = _number(sample, "avg_response_time_ms")
    if not 0 <= hit_rate <= 1:
        raise SampleError("cache_hit_rate", f"cache_hit_rate must be within [0, 1], got {_shown(hit_rate)}")
    if latency < 0:
        raise SampleError("avg_response_time_ms", f"avg_response_time_ms must not be negative, got {_shown(latency)}")

    raw_cost = active * weights.active_request + int(hit_rate * weights.cache_hit_rate)
    raw_cost += next((bonus for below, bonus in weights.latency_bonus if latency < below), 0)
    # Coarse buckets reduce annotation churn.
    return min(weights.cap, (raw_cost // weights.bucket) * weights.bucket)


def _count(sample: Mapping[str, Any], field: str) -> int:
    value = _field(sample, field)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SampleError(field, f"{field} must be a non-negative integer, got {_shown(value)}")
    return value


def deletion_cost_patch(uid: str, cost: int) -> list[dict[str, str]]:
    """A JSON Patch that sets the cost only on the Pod with this UID (the test fails on a replacement)."""
    return [
        {"op": "test", "path": "/metadata/uid", "value": uid},
        {"op": "add", "path": ANNOTATION_PATH, "value": str(cost)},
    ]
