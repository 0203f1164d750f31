"""`gen explain scale-down`: the ReplicaSet controller's deletion order, rule by rule."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.preview import scaledown
from generator.preview.inputs import InputFile

NOW = "2026-12-02T10:00:00Z"
DAY_AGO = "2026-12-01T10:00:00Z"


def pod(
    name: str,
    node: str = "node-1",
    *,
    phase: str = "Running",
    ready: str | None = DAY_AGO,
    cost: str | None = None,
    restarts: int = 0,
    created: str | None = "2026-11-01T10:00:00Z",
    uid: str | None = None,
    rs: str = "web-7d9f",
    terminating: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "shop",
        "uid": uid or f"uid-{name}",
        "labels": {"app": "web", "pod-template-hash": rs.rsplit("-", 1)[-1]},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "controller": True}],
    }
    if created is not None:
        meta["creationTimestamp"] = created
    if cost is not None:
        meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": cost}
    if terminating:
        meta["deletionTimestamp"] = NOW
    condition = {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ready or DAY_AGO}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node} if node else {},
        "status": {
            "phase": phase,
            "conditions": [condition],
            "containerStatuses": [{"name": "web", "restartCount": restarts}],
        },
    }


def pod_list(*items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": list(items)}


def deleted(*items: dict[str, Any], to: int, now: str = NOW) -> tuple[list[str], list[str]]:
    """(deleted names in order, rules) when the Deployment `web` goes to `to` replicas."""
    data = pod_list(*items)
    pods, problems = scaledown.read_pods(InputFile("pods.json", data, json.dumps(data)))
    assert not problems
    result = scaledown.preview(
        pods, "web", "shop", None, to, scaledown.nanoseconds(scaledown.parse_timestamp(now, "now"))
    )
    doomed = [v for v in result.verdicts if v.delete]
    return [v.pod.name for v in doomed], [v.rule for v in doomed]


# One case per rule, where that rule alone tells the two Pods apart (b is "better" to keep on
# every earlier rule's terms only where noted). Each case deletes one of two Pods.
RULE_CASES = [
    ("unassigned", pod("a", node=""), pod("b")),
    ("phase", pod("a", phase="Pending", node="node-1"), pod("b", node="node-2")),
    ("readiness", pod("a", ready=None, node="node-1"), pod("b", node="node-2")),
    ("cost", pod("a", cost="-5", node="node-1"), pod("b", cost="5", node="node-2")),
    ("ready-time", pod("a", ready="2026-12-02T09:59:00Z", node="n1"), pod("b", ready=DAY_AGO, node="n2")),
    ("restarts", pod("a", restarts=3, node="n1"), pod("b", restarts=1, node="n2")),
    ("creation-time", pod("a", created="2026-12-02T09:00:00Z", node="n1"), pod("b", node="n2")),
]


@pytest.mark.parametrize(("rule", "first", "second"), RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_each_rule_alone_decides_which_pod_goes(rule: str, first: dict[str, Any], second: dict[str, Any]) -> None:
    for order in ((first, second), (second, first)):  # the input order never matters
        names, rules = deleted(*order, to=1)
        assert names == ["a"]
        assert rules == [rule]


def test_more_pods_of_the_deployment_on_a_node_goes_first() -> None:
    # a shares node-1 with c (rank 2); b is alone on node-2 (rank 1); c ties a on rank but is
    # kept by a higher cost, so the rank rule alone separates a from b
    names, rules = deleted(pod("a", "node-1"), pod("c", "node-1", cost="10"), pod("b", "node-2"), to=2)
    assert names == ["a"]
    assert rules == ["rank"]


def test_rank_counts_active_pods_of_every_replicaset_of_the_deployment() -> None:
    # an old ReplicaSet scaled to 0 still has an active Pod on node-2: b's node counts 2
    old = pod("old", "node-2", rs="web-5c4b")
    data = pod_list(pod("a", "node-1"), pod("b", "node-2"), old)
    pods, _ = scaledown.read_pods(InputFile("p", data, ""))
    now = scaledown.nanoseconds(scaledown.parse_timestamp(NOW, "now"))
    result = scaledown.preview(pods, "web", "shop", {"web-7d9f": 2, "web-5c4b": 0}, 1, now)
    assert [v.pod.name for v in result.verdicts if v.delete] == ["b"]
    assert result.verdicts[0].rule == "rank"


def test_equal_ready_buckets_are_broken_by_uid_before_restarts() -> None:
    # both ready between 2^46 and 2^47 ns ago (19.5 to 39 hours): the same log2 bucket
    a = pod("a", ready="2026-12-01T14:00:00Z", uid="0000", restarts=0, node="n1")
    b = pod("b", ready="2026-12-01T09:00:00Z", uid="ffff", restarts=9, node="n2")
    names, rules = deleted(a, b, to=1)
    assert names == ["a"]  # more restarts on b would have sent b first
    assert rules == ["ready-time-uid"]


def test_equal_creation_buckets_are_broken_by_uid() -> None:
    a = pod("a", created="2026-11-01T10:00:00Z", uid="0001", node="n1")
    b = pod("b", created="2026-11-01T11:00:00Z", uid="0000", node="n2")
    names, rules = deleted(a, b, to=1)
    assert names == ["b"]
    assert rules == ["creation-time-uid"]


def test_log_buckets_are_relative_to_now_in_nanoseconds() -> None:
    now = scaledown.nanoseconds(scaledown.parse_timestamp(NOW, "now"))
    assert scaledown.log_bucket(now - 2**40, now) == 40
    assert scaledown.log_bucket(now - (2**40 - 1), now) == 39
    assert scaledown.log_bucket(now, now) == -1
    assert scaledown.log_bucket(now + 5, now) == -1


def test_terminating_and_finished_pods_are_neither_candidates_nor_counted() -> None:
    gone = pod("z", "node-1", terminating=True)
    done = pod("y", "node-1", phase="Succeeded")
    # without z and y, node-1 holds only a: a and b tie on rank; b is newer
    names, rules = deleted(gone, done, pod("a", "node-1"), pod("b", "node-2", created="2026-12-02T09:00:00Z"), to=1)
    assert names == ["b"]
    assert rules == ["creation-time"]


def test_scaling_up_or_to_the_same_count_deletes_nothing() -> None:
    assert deleted(pod("a"), pod("b", "node-2"), to=2) == ([], [])
    assert deleted(pod("a"), pod("b", "node-2"), to=5) == ([], [])


def test_every_pod_goes_at_zero_without_ranking() -> None:
    names, rules = deleted(pod("b", "node-2"), pod("a"), to=0)
    assert names == ["b", "a"]  # the controller's list order: no sort
    assert set(rules) == {"all"}


def test_a_rollout_in_progress_is_refused() -> None:
    data = pod_list(pod("a"), pod("b", rs="web-5c4b"))
    pods, _ = scaledown.read_pods(InputFile("p", data, ""))
    with pytest.raises(scaledown.PredictionRefused, match="2 active ReplicaSets"):
        scaledown.preview(pods, "web", "shop", None, 1, 0)


# -- an independent transcription of ActivePodsWithRanks.Less, line by line -------------------


def reference_less(p: dict[str, Any], q: dict[str, Any], ranks: dict[str, int], now: int) -> bool:
    def ready(x: dict[str, Any]) -> bool:
        return x["ready"] is not None

    if p["node"] != q["node"] and (p["node"] == "" or q["node"] == ""):
        return p["node"] == ""
    order = {"Pending": 0, "Unknown": 1, "Running": 2}
    if order[p["phase"]] != order[q["phase"]]:
        return order[p["phase"]] < order[q["phase"]]
    if ready(p) != ready(q):
        return not ready(p)
    if p["cost"] != q["cost"]:
        return p["cost"] < q["cost"]
    if ranks[p["node"]] != ranks[q["node"]]:
        return ranks[p["node"]] > ranks[q["node"]]

    def rank_of(t: int) -> int:
        return int(math.log2(now - t)) if now - t > 0 else -1

    if ready(p) and ready(q) and p["ready"] != q["ready"]:
        diff = rank_of(p["ready"]) - rank_of(q["ready"])
        if diff == 0:
            return p["uid"] < q["uid"]
        return diff < 0
    if p["restarts"] != q["restarts"]:
        return p["restarts"] > q["restarts"]
    if p["created"] != q["created"]:
        diff = rank_of(p["created"]) - rank_of(q["created"])
        if diff == 0:
            return p["uid"] < q["uid"]
        return diff < 0
    return False


NOW_S = 1_800_000_000
random_pod = st.fixed_dictionaries(
    {
        "node": st.sampled_from(["", "n1", "n2", "n3"]),
        "phase": st.sampled_from(["Pending", "Unknown", "Running"]),
        "ready": st.none() | st.integers(1, 10**7),  # seconds before now
        "cost": st.sampled_from([-10, 0, 0, 5]),
        "restarts": st.integers(0, 2),
        "created": st.integers(1, 10**8),
        "uid": st.uuids().map(str),
    }
)


def _as_item(index: int, spec: dict[str, Any]) -> dict[str, Any]:
    def stamp(seconds_ago: int) -> str:
        return scaledown.timestamp_text((NOW_S - seconds_ago) * 10**9)

    return pod(
        f"p{index}",
        spec["node"],
        phase=spec["phase"],
        ready=None if spec["ready"] is None else stamp(spec["ready"]),
        cost=str(spec["cost"]),
        restarts=spec["restarts"],
        created=stamp(spec["created"]),
        uid=spec["uid"],
    )


@settings(max_examples=300, deadline=None)
@given(specs=st.lists(random_pod, min_size=2, max_size=8, unique_by=lambda s: s["uid"]), to=st.integers(1, 7))
def test_the_ranking_matches_a_plain_transcription_of_less(specs: list[dict[str, Any]], to: int) -> None:
    data = pod_list(*(_as_item(i, s) for i, s in enumerate(specs)))
    pods, problems = scaledown.read_pods(InputFile("p", data, ""))
    assert not problems
    now = NOW_S * 10**9
    plain = [
        {**s, "ready": None if s["ready"] is None else now - s["ready"] * 10**9, "created": now - s["created"] * 10**9}
        for s in specs
    ]
    ranks: dict[str, int] = {}
    for s in plain:
        ranks[s["node"]] = ranks.get(s["node"], 0) + 1
    rank = scaledown.Counter(p.node for p in pods)
    for i, a in enumerate(pods):
        for j, b in enumerate(pods):
            assert scaledown.compare(a, b, rank, now)[0] == reference_less(plain[i], plain[j], ranks, now)
    result = scaledown.preview(pods, "web", "shop", None, to, now)
    doomed = {v.pod.name for v in result.verdicts if v.delete}
    assert len(doomed) == max(0, len(specs) - to)
    if not result.notes and 0 < len(doomed) < len(specs):
        index = {p.name: i for i, p in enumerate(pods)}
        for d in doomed:
            for k in {p.name for p in pods} - doomed:
                assert not reference_less(plain[index[k]], plain[index[d]], ranks, now)


# -- the command ------------------------------------------------------------------------------


def _write(tmp_path: Path, data: Any, name: str = "pods.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=1) if not isinstance(data, str) else data)
    return path


def test_cli_prints_the_table_and_json(gen, tmp_path: Path) -> None:
    pods = _write(tmp_path, pod_list(pod("a", cost="-1"), pod("b", "node-2"), pod("c", "node-3", cost="7")))
    text = gen("explain", "scale-down", "--pods", pods, "--deployment", "web", "--to", "2", "--now", NOW)
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert lines[0] == "Deployment shop/web (ReplicaSet web-7d9f): 3 -> 2 active Pods"
    assert lines[1].split() == ["POD", "NODE", "COST", "READY", "SINCE", "RESTARTS", "RULE", "ACTION"]
    assert lines[2].split() == ["a", "node-1", "-1", "2026-12-01T10:00:00Z", "0", "cost", "delete"]
    out = gen(
        "explain", "scale-down", "--pods", pods, "--deployment", "web", "--to", "2", "--now", NOW, "--format", "json"
    )
    result = json.loads(out.out)
    assert (result["from"], result["to"], result["delete"], result["keep"]) == (3, 2, ["a"], ["b", "c"])
    assert result["pods"][0] == {
        "name": "a",
        "delete": True,
        "rule": "cost",
        "reason": result["pods"][0]["reason"],
    }


def test_cli_refuses_a_rollout_in_progress(gen, tmp_path: Path) -> None:
    pods = _write(tmp_path, pod_list(pod("a"), pod("b", rs="web-5c4b")))
    run = gen("explain", "scale-down", "--pods", pods, "--deployment", "web", "--to", "1", "--now", NOW)
    assert run.code == 1
    assert "scale-down-refused" in run.err and "rollout is in progress" in run.err
    assert run.out == ""


@pytest.mark.parametrize(
    ("data", "extra", "expected"),
    [
        ({"kind": "Pod", "metadata": {"name": "a"}}, (), "pods.json:1:1: error scale-down-input not a Pod list"),
        (pod_list({"kind": "Pod", "spec": {}}), (), "item 0 has no metadata.name"),
        (pod_list(pod("a", created="2026-11-01T10:00:00")), (), "creationTimestamp must include a timezone"),
        (pod_list(pod("a")), ("--now", "yesterday"), "error scale-down-now --now is not an ISO 8601 timestamp"),
        (pod_list(pod("a", rs="api-1234")), (), "no Pod of Deployment"),
        ("[1, 2", (), "pods.json:2:1: error yaml-syntax"),
    ],
)
def test_cli_bad_input_is_a_located_error(
    gen, tmp_path: Path, data: Any, extra: tuple[str, ...], expected: str
) -> None:
    pods = _write(tmp_path, data)
    args = ("--now", NOW, *extra) if "--now" not in extra else extra
    run = gen("explain", "scale-down", "--pods", pods, "--deployment", "web", "--to", "0", *args)
    assert run.code == 1
    assert expected in run.err
    assert "Traceback" not in run.err
    assert run.out == ""


def test_cli_refuses_a_negative_count_as_usage(gen, tmp_path: Path) -> None:
    pods = _write(tmp_path, pod_list(pod("a")))
    run = gen("explain", "scale-down", "--pods", pods, "--deployment", "web", "--to", "-1")
    assert run.code == 2
    assert "--to must be zero or more" in run.err


def test_cli_takes_the_hpa_floor_when_to_is_omitted(gen, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "web.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata: {name: web}\nspec:\n"
        "  namespace: shop\n  image: registry.example.com/web:v1\n"
        "  resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}\n"
        "  autoscaling: {minReplicas: 2, maxReplicas: 5, cpuUtilization: 70}\n"
    )
    pods = _write(tmp_path, pod_list(pod("a", cost="-1"), pod("b", "node-2"), pod("c", "node-3")))
    run = gen("explain", "scale-down", "--pods", pods, "--deployment", "web", "--now", NOW, policies)
    assert run.code == 0, run.err
    assert "3 -> 2 active Pods" in run.out
    assert "--to defaults to the HPA's minReplicas (2)" in run.out


def test_an_unknown_deployment_is_answered_with_the_ones_found(gen, tmp_path: Path) -> None:
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps(pod_list(pod("a", rs="api-1234"), pod("b", rs="web-77f9"))))
    run = gen("explain", "scale-down", "--pods", pods, "--deployment", "webapi", "--to", "1")
    assert run.code == 1 and "Deployments found: shop/api, shop/web" in run.err, run.err


def test_every_target_gives_its_own_hpa_floor_unless_target_picks(gen, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "web.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata: {name: web}\nspec:\n"
        "  namespace: shop\n  image: registry.example.com/web:v1\n"
        "  resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}\n"
        "  autoscaling: {minReplicas: 2, maxReplicas: 5, cpuUtilization: 70}\n---\n"
        "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: prod}\nspec: {kubernetesVersion: '1.35'}\n---\n"
        "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: staging}\nspec:\n  overrides:\n"
        "  - {kind: ReplicatedService, name: web, spec: {autoscaling: {minReplicas: 1}}}\n"
    )
    pods = _write(tmp_path, pod_list(pod("a", cost="-1"), pod("b", "node-2"), pod("c", "node-3")))
    both = gen(
        "explain", "scale-down", "--pods", pods, "--deployment", "web", "--now", NOW, policies, "--format", "json"
    )
    assert both.code == 0, both.err
    assert [(r["target"], r["to"]) for r in json.loads(both.out)] == [("prod", 2), ("staging", 1)]
    text = gen("explain", "scale-down", "--pods", pods, "--deployment", "web", "--now", NOW, policies)
    assert "target prod: Deployment shop/web" in text.out and "target staging: Deployment shop/web" in text.out
    one = gen(
        "explain",
        "scale-down",
        "--pods",
        pods,
        "--deployment",
        "web",
        "--now",
        NOW,
        policies,
        "--target",
        "staging",
        "--format",
        "json",
    )
    assert (json.loads(one.out)["target"], json.loads(one.out)["to"]) == ("staging", 1)
