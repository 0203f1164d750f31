"""`gen cost` against the seed's calculate_cost, which is copied here verbatim as the oracle."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.policies.policy import builtin_policy
from generator.preview.cost import CostWeights, SampleError, calculate_cost
from tests.conftest import Run

NOW = datetime(2026, 12, 2, 10, 0, 30, tzinfo=UTC)
ANNOTATION_PATH = "/metadata/annotations/controller.kubernetes.io~1pod-deletion-cost"


def seed_calculate_cost(metrics, now):  # type: ignore[no-untyped-def]  # the seed's code, unchanged
    """Illustrative coarse hint from a real, fresh per-Pod sample."""
    observed = datetime.fromisoformat(metrics["observed_at"].replace("Z", "+00:00"))
    if observed.tzinfo is None or now.tzinfo is None:
        raise ValueError("timestamps must include a timezone")
    age = (now - observed).total_seconds()
    if age < -5 or age > 60:
        raise ValueError("metrics timestamp is in the future or stale")

    active = metrics["active_requests"]
    if isinstance(active, bool) or not isinstance(active, int) or active < 0:
        raise ValueError("active_requests must be a non-negative integer")
    hit_rate = metrics["cache_hit_rate"]
    latency = metrics["avg_response_time_ms"]
    for value in (hit_rate, latency):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError("metrics must be finite numbers")
    if not 0 <= hit_rate <= 1 or latency < 0:
        raise ValueError("invalid hit rate or latency")

    raw_cost = active * 5 + int(hit_rate * 100)
    raw_cost += 50 if latency < 100 else 20 if latency < 500 else 0
    # Coarse buckets reduce annotation churn. Weights are an example policy.
    return min(1000, (raw_cost // 100) * 100)


SEED_WEIGHTS = CostWeights.from_policy(builtin_policy("DeletionCostPolicy"))


def sample(**changes: Any) -> dict[str, Any]:
    base = {
        "pod_uid": "0f6b9c1e-2d4a-4b8e-9a51-7c3d2e1f0a9b",
        "observed_at": "2026-12-02T10:00:00Z",
        "active_requests": 40,
        "cache_hit_rate": 0.29,
        "avg_response_time_ms": 99.5,
    }
    return {**base, **changes}


def no_policies(tmp_path: Path) -> Path:
    """A policy directory without a DeletionCostPolicy: the seed's convention applies."""
    path = tmp_path / "policies"
    path.mkdir(exist_ok=True)
    return path


def write(tmp_path: Path, data: object, name: str = "sample.json") -> Path:
    path = tmp_path / "in" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, 200),  # 200 + int(0.29 * 100) = 28 (float) + 50
        ({"active_requests": 0, "cache_hit_rate": 0, "avg_response_time_ms": 1000}, 0),
        ({"active_requests": 10, "cache_hit_rate": 0.5, "avg_response_time_ms": 100}, 100),  # 50+50+20
        ({"active_requests": 10, "cache_hit_rate": 0.29, "avg_response_time_ms": 499.9}, 0),  # 50+28+20 = 98
        ({"active_requests": 500, "cache_hit_rate": 1, "avg_response_time_ms": 0}, 1000),  # capped
        ({"observed_at": "2026-12-02T09:59:30Z"}, 200),  # 60 s old is still fresh
        ({"observed_at": "2026-12-02T10:00:35+00:00"}, 200),  # 5 s ahead is tolerated
        ({"observed_at": "2026-12-02T19:00:00+09:00"}, 200),  # another offset, same instant
    ],
)
def test_seed_costs(changes: dict[str, Any], expected: int) -> None:
    data = sample(**changes)
    assert seed_calculate_cost(data, NOW) == expected
    assert calculate_cost(data, NOW, SEED_WEIGHTS) == expected


BAD = {
    "stale": sample(observed_at="2026-12-02T09:59:29Z"),
    "future": sample(observed_at="2026-12-02T10:00:36Z"),
    "naive": sample(observed_at="2026-12-02T10:00:00"),
    "not-a-time": sample(observed_at="yesterday"),
    "bool-active": sample(active_requests=True),
    "float-active": sample(active_requests=1.0),
    "negative-active": sample(active_requests=-1),
    "bool-hit-rate": sample(cache_hit_rate=False),
    "hit-rate-above-one": sample(cache_hit_rate=1.01),
    "negative-latency": sample(avg_response_time_ms=-0.1),
    "string-latency": sample(avg_response_time_ms="12"),
    "missing-field": {k: v for k, v in sample().items() if k != "cache_hit_rate"},
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_seed_rejections_are_ours(name: str) -> None:
    with pytest.raises((ValueError, KeyError)):
        seed_calculate_cost(BAD[name], NOW)
    with pytest.raises(SampleError):
        calculate_cost(BAD[name], NOW, SEED_WEIGHTS)


finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(
    active=st.one_of(st.integers(min_value=-5, max_value=10**6), st.booleans(), finite),
    hit_rate=st.one_of(finite, st.integers(-2, 2), st.booleans(), st.just(math.nan), st.just(math.inf)),
    latency=st.one_of(finite, st.integers(-10, 10**4), st.just(-math.inf)),
    age=st.floats(min_value=-10, max_value=70),
)
def test_matches_the_seed_everywhere(active: object, hit_rate: object, latency: object, age: float) -> None:
    observed = (NOW - timedelta(seconds=age)).isoformat()
    data = sample(active_requests=active, cache_hit_rate=hit_rate, avg_response_time_ms=latency, observed_at=observed)
    try:
        expected: int | None = seed_calculate_cost(data, NOW)
    except ValueError:
        expected = None
    try:
        got: int | None = calculate_cost(data, NOW, SEED_WEIGHTS)
    except SampleError:
        got = None
    assert got == expected


def test_cli_prints_the_uid_tested_patch(gen: Callable[..., Run], tmp_path: Path) -> None:
    result = gen("cost", "--sample", write(tmp_path, sample()), "--now", NOW.isoformat(), no_policies(tmp_path))
    assert result.code == 0, result.err
    assert result.out.count("\n") == 1
    assert json.loads(result.out) == [
        {"op": "test", "path": "/metadata/uid", "value": "0f6b9c1e-2d4a-4b8e-9a51-7c3d2e1f0a9b"},
        {"op": "add", "path": ANNOTATION_PATH, "value": "200"},
    ]


def test_cli_prints_nothing_when_unchanged(gen: Callable[..., Run], tmp_path: Path) -> None:
    path = write(tmp_path, sample())
    assert gen("cost", "--sample", path, "--now", NOW.isoformat(), "--last-cost", "200", no_policies(tmp_path)) == Run(
        0, "", ""
    )
    assert json.loads(
        gen("cost", "--sample", path, "--now", NOW.isoformat(), "--last-cost", "100", no_policies(tmp_path)).out
    )


@pytest.mark.parametrize("name", sorted(BAD))
def test_cli_rejects_bad_samples(gen: Callable[..., Run], tmp_path: Path, name: str) -> None:
    result = gen("cost", "--sample", write(tmp_path, BAD[name]), "--now", NOW.isoformat(), no_policies(tmp_path))
    assert (result.code, result.out) == (1, "")
    assert "sample.json:1:" in result.err and "cost-sample" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    "text",
    [
        '{"pod_uid": "u", "observed_at": "2026-12-02T10:00:00Z", "active_requests": 1, "cache_hit_rate": NaN,'
        ' "avg_response_time_ms": 1}',
        "pod_uid: u\nobserved_at: 2026-12-02T10:00:00Z\nactive_requests: 1\ncache_hit_rate: .inf\n"
        "avg_response_time_ms: 1\n",
        "pod_uid: u\nobserved_at: 2026-12-02 10:00:00\nactive_requests: 1\ncache_hit_rate: 0.5\n"
        "avg_response_time_ms: 1\n",
        "[1, 2]",
        "{oops",
        "",
    ],
)
def test_cli_rejects_malformed_files(gen: Callable[..., Run], tmp_path: Path, text: str) -> None:
    result = gen(
        "cost", "--sample", write(tmp_path, text, "sample.yaml"), "--now", NOW.isoformat(), no_policies(tmp_path)
    )
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith(str(tmp_path / "in" / "sample.yaml") + ":")


def test_cli_rejects_a_naive_now_and_another_pods_sample(gen: Callable[..., Run], tmp_path: Path) -> None:
    path = write(tmp_path, sample())
    naive = gen("cost", "--sample", path, "--now", "2026-12-02T10:00:30", no_policies(tmp_path))
    assert (naive.code, naive.out) == (1, "") and "timezone" in naive.err
    other = gen("cost", "--sample", path, "--now", NOW.isoformat(), "--pod-uid", "another", no_policies(tmp_path))
    assert (other.code, other.out) == (1, "") and "cost-sample-uid" in other.err


def test_policy_weights_drive_the_cost(gen: Callable[..., Run], tmp_path: Path) -> None:
    policies = no_policies(tmp_path)
    (policies / "cost.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: DeletionCostPolicy\nmetadata:\n  name: team\nspec:\n  cap: 250\n"
        "  weights:\n    activeRequest: 10\n    bucket: 50\n    latencyBonus: [{belowMs: 200, bonus: 5}]\n"
        "  sample:\n    maxAgeSeconds: 10\n"
    )
    path = write(tmp_path, sample(observed_at="2026-12-02T10:00:25Z"))
    result = gen("cost", "--sample", path, "--now", NOW.isoformat(), policies)
    # 40 * 10 + 28 + 5 = 433 -> bucket 50 -> 400 -> cap 250
    assert json.loads(result.out)[1]["value"] == "250"
    stale = gen("cost", "--sample", write(tmp_path, sample()), "--now", NOW.isoformat(), policies)
    assert (stale.code, stale.out) == (1, "") and "limit 10s" in stale.err


def test_bundled_policy_gives_the_seed_costs(gen: Callable[..., Run], tmp_path: Path) -> None:
    from tests.conftest import POLICIES

    result = gen("cost", "--sample", write(tmp_path, sample()), "--now", NOW.isoformat(), POLICIES)
    assert json.loads(result.out)[1]["value"] == "200"


def connections_policies(tmp_path: Path, cap: int = 1000) -> Path:
    policies = no_policies(tmp_path)
    (policies / "cost.yaml").write_text(
        f"apiVersion: gen/v1alpha1\nkind: DeletionCostPolicy\nmetadata:\n  name: conns\nspec:\n"
        f"  policy: connections\n  cap: {cap}\n"
    )
    return policies


def connections_sample(**changes: Any) -> dict[str, Any]:
    base = {"pod_uid": "0f6b9c1e", "observed_at": "2026-12-02T10:00:00Z", "active_connections": 0}
    return {**base, **changes}


@pytest.mark.parametrize(("connections", "cost"), [(0, "0"), (9, "100"), (10, "500"), (99, "500"), (100, "1000")])
def test_connections_policy_is_the_seeds_cost_for_connections(
    gen: Callable[..., Run], tmp_path: Path, connections: int, cost: str
) -> None:
    path = write(tmp_path, connections_sample(active_connections=connections))
    result = gen("cost", "--sample", path, "--now", NOW.isoformat(), connections_policies(tmp_path))
    assert result.code == 0, result.err
    assert json.loads(result.out) == [
        {"op": "test", "path": "/metadata/uid", "value": "0f6b9c1e"},
        {"op": "add", "path": ANNOTATION_PATH, "value": cost},
    ]


def test_connections_policy_is_capped_and_silent_when_unchanged(gen: Callable[..., Run], tmp_path: Path) -> None:
    policies = connections_policies(tmp_path, cap=300)
    path = write(tmp_path, connections_sample(active_connections=50))
    assert json.loads(gen("cost", "--sample", path, "--now", NOW.isoformat(), policies).out)[1]["value"] == "300"
    assert gen("cost", "--sample", path, "--now", NOW.isoformat(), "--last-cost", "300", policies) == Run(0, "", "")
    stale = write(tmp_path, connections_sample(observed_at="2026-12-02T09:00:00Z"))
    result = gen("cost", "--sample", stale, "--now", NOW.isoformat(), policies)
    assert (result.code, result.out) == (1, "") and "stale" in result.err


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "active_connections must be a non-negative integer, got true"),
        (2.5, "active_connections must be a non-negative integer, got 2.5"),
        (-1, "active_connections must be a non-negative integer, got -1"),
        (None, "the sample has no active_connections"),
    ],
)
def test_connections_policy_rejects_bad_counts(
    gen: Callable[..., Run], tmp_path: Path, value: object, message: str
) -> None:
    data = connections_sample(active_connections=value)
    if value is None:
        del data["active_connections"]
    result = gen("cost", "--sample", write(tmp_path, data), "--now", NOW.isoformat(), connections_policies(tmp_path))
    assert (result.code, result.out) == (1, "")
    assert "sample.json:1:" in result.err and "cost-sample" in result.err and message in result.err
