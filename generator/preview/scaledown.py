"""Which Pods the ReplicaSet controller deletes when a Deployment scales down (Kubernetes 1.35).

A transcription of the controller's choice: `getPodsToDelete` ranks the ReplicaSet's active
Pods with `ActivePodsWithRanks` (PodDeletionCost and LogarithmicScaleDown on), where a Pod's
rank is the number of active Pods of all the Deployment's ReplicaSets on its node, and
deletes the first `from - to`. When every Pod goes, it does not sort at all. What cannot be
predicted offline (a rollout in progress, more than one sync's burst) is refused, not guessed.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cmp_to_key
from typing import Any

from generator.kube.pods import DELETION_COST, parse_deletion_cost
from generator.preview.cost import SampleError, parse_timestamp
from generator.preview.inputs import InputFile
from generator.problems import Problem
from generator.yamlio.load import Path_

# The ReplicaSet controller deletes at most this many Pods per sync and ranks again at the next.
BURST_REPLICAS = 500
_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}  # any other phase counts as Pending (0)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


class PredictionRefused(ValueError):
    """The input is valid, but the controller's choice cannot be known from it."""


@dataclass(frozen=True)
class ClusterPod:
    """The fields of a Pod the controller's ranking reads; times in nanoseconds since 1970."""

    name: str
    namespace: str
    uid: str
    node: str
    phase: str
    ready: bool
    ready_since: int | None  # the Ready condition's lastTransitionTime, when ready
    cost: int
    restarts: int
    created: int | None
    terminating: bool
    owner: str | None  # the controlling ReplicaSet's name
    template_hash: str | None

    @property
    def active(self) -> bool:
        """The controller's IsPodActive: not Succeeded, not Failed, not being deleted."""
        return self.phase not in ("Succeeded", "Failed") and not self.terminating


@dataclass(frozen=True)
class Verdict:
    pod: ClusterPod
    delete: bool
    rule: str
    reason: str


@dataclass(frozen=True)
class ScaleDown:
    deployment: str
    namespace: str
    replicaset: str
    from_count: int
    to: int
    verdicts: list[Verdict]
    notes: list[str]
    target: str = ""  # the target whose policy gave --to, when one did

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target or None,
            "deployment": self.deployment,
            "namespace": self.namespace,
            "from": self.from_count,
            "to": self.to,
            "delete": [v.pod.name for v in self.verdicts if v.delete],
            "keep": [v.pod.name for v in self.verdicts if not v.delete],
            "pods": [
                {"name": v.pod.name, "delete": v.delete, "rule": v.rule, "reason": v.reason} for v in self.verdicts
            ],
            "notes": self.notes,
        }


def nanoseconds(moment: datetime) -> int:
    """Exact nanoseconds since 1970, as Go's time arithmetic counts (no float rounding)."""
    return (moment - _EPOCH) // _MICROSECOND * 1000


def timestamp_text(moment: int) -> str:
    """A time as Kubernetes writes it (RFC 3339, UTC)."""
    return (_EPOCH + moment // 1000 * _MICROSECOND).strftime("%Y-%m-%dT%H:%M:%SZ")


def _go_log2(x: float) -> float:
    """Go's math.Log2: exact for powers of two, otherwise log(frac)/ln2 + exp."""
    frac, exp = math.frexp(x)
    if frac == 0.5:
        return float(exp - 1)
    return math.log(frac) * (1 / math.log(2)) + exp


def log_bucket(moment: int, now: int) -> int:
    """The controller's logarithmic rank of a time: floor(log2(now - t in ns)), or -1 if not in the past."""
    age = now - moment
    return int(_go_log2(float(age))) if age > 0 else -1


def _after_or_zero(first: int | None, second: int | None) -> bool:
    if first is None or second is None:
        return first is None
    return first > second


def compare(a: ClusterPod, b: ClusterPod, rank: Counter[str], now: int) -> tuple[bool, str, str]:
    """ActivePodsWithRanks.Less(a, b) and the rule that decided it: (a goes first, rule, why)."""
    if a.node != b.node and (not a.node or not b.node):
        return not a.node, "unassigned", "not yet scheduled to a node" if not a.node else "scheduled to a node"
    phase_a, phase_b = _PHASE_ORDER.get(a.phase, 0), _PHASE_ORDER.get(b.phase, 0)
    if phase_a != phase_b:
        return phase_a < phase_b, "phase", f"phase {a.phase or '(none)'} against {b.phase or '(none)'}"
    if a.ready != b.ready:
        return not a.ready, "readiness", "not ready" if not a.ready else "ready"
    if a.cost != b.cost:
        return a.cost < b.cost, "cost", f"deletion cost {a.cost} against {b.cost}"
    if rank[a.node] != rank[b.node]:
        return (
            rank[a.node] > rank[b.node],
            "rank",
            f"{rank[a.node]} active Pods of the Deployment on its node against {rank[b.node]}",
        )
    if a.ready and b.ready and a.ready_since != b.ready_since:
        return _newer(
            a, b, a.ready_since, b.ready_since, now, "ready-time", ("ready for a shorter time", "ready for longer")
        )
    if a.restarts != b.restarts:
        return a.restarts > b.restarts, "restarts", f"{a.restarts} container restarts against {b.restarts}"
    if a.created != b.created:
        return _newer(a, b, a.created, b.created, now, "creation-time", ("created more recently", "created earlier"))
    return False, "tie", "equal on every rule"


def _newer(
    a: ClusterPod, b: ClusterPod, first: int | None, second: int | None, now: int, rule: str, words: tuple[str, str]
) -> tuple[bool, str, str]:
    """The controller's time comparison: an empty time first, then log2 buckets, then UIDs."""
    if first is None or second is None:
        return _after_or_zero(first, second), rule, f"no {rule.replace('-', ' ')}"
    diff = log_bucket(first, now) - log_bucket(second, now)
    if diff == 0:
        return a.uid < b.uid, f"{rule}-uid", f"same {rule} bucket: UID order decides"
    return diff < 0, rule, words[0] if diff < 0 else words[1]


def _rank_order(pods: list[ClusterPod], rank: Counter[str], now: int) -> list[ClusterPod]:
    """The pods in the controller's deletion order."""

    def order(a: ClusterPod, b: ClusterPod) -> int:
        return -1 if compare(a, b, rank, now)[0] else 1 if compare(b, a, rank, now)[0] else 0

    return sorted(pods, key=cmp_to_key(order))


def preview(
    pods: list[ClusterPod],
    deployment: str,
    namespace: str,
    replicasets: dict[str, int] | None,
    to: int,
    now: int,
) -> ScaleDown:
    """The controller's choice for `deployment` going to `to` replicas.

    replicasets: the Deployment's ReplicaSets and their spec.replicas when known; otherwise the
    ReplicaSets are those named `<deployment>-<pod-template-hash>` that own its Pods.
    """
    ours = [p for p in pods if p.namespace == namespace and p.owner is not None]
    if replicasets is not None:
        related = [p for p in ours if p.owner in replicasets]
        active_sets = sorted(name for name, replicas in replicasets.items() if replicas > 0)
    else:
        related = [p for p in ours if p.template_hash and p.owner == f"{deployment}-{p.template_hash}"]
        active_sets = sorted({p.owner for p in related if p.active and p.owner})
    if not related:
        found = sorted(
            {
                f"{p.namespace}/{p.owner[: -len(p.template_hash) - 1]}"
                for p in pods
                if p.owner and p.template_hash and p.owner.endswith(f"-{p.template_hash}")
            }
        )
        raise PredictionRefused(
            f"no Pod of Deployment {namespace}/{deployment} in the input; "
            + (f"Deployments found: {', '.join(found)}" if found else "no Pod in it belongs to a Deployment")
        )
    if len(active_sets) > 1:
        raise PredictionRefused(
            f"Deployment {namespace}/{deployment} has {len(active_sets)} active ReplicaSets ({', '.join(active_sets)}): "
            "a rollout is in progress, and how the Deployment controller splits a scale-down between them is not "
            "previewed; wait for the rollout to finish"
        )
    if not active_sets:
        raise PredictionRefused(f"Deployment {namespace}/{deployment} has no active ReplicaSet")
    replicaset = active_sets[0]
    rank = Counter(p.node for p in related if p.active)
    candidates = [p for p in related if p.owner == replicaset and p.active]
    diff = len(candidates) - to
    if diff > BURST_REPLICAS:
        raise PredictionRefused(
            f"scaling {len(candidates)} -> {to} deletes {diff} Pods, more than the {BURST_REPLICAS} the ReplicaSet "
            "controller deletes in one sync; it ranks the rest again later, against a time gen cannot know"
        )
    notes: list[str] = []
    if diff <= 0:
        verdicts = [
            Verdict(p, False, "no-scale-down", f"{len(candidates)} active Pods, {to} wanted") for p in candidates
        ]
        return ScaleDown(deployment, namespace, replicaset, len(candidates), to, _by_name(verdicts), notes)
    if diff == len(candidates):
        verdicts = [
            Verdict(p, True, "all", "every active Pod goes: the controller does not rank them") for p in candidates
        ]
        return ScaleDown(deployment, namespace, replicaset, len(candidates), to, verdicts, notes)
    order = _rank_order(candidates, rank, now)
    doomed, kept = order[:diff], order[diff:]
    boundary_deleted, boundary_kept = doomed[-1], kept[0]
    verdicts = []
    for pod in doomed:
        _, rule, why = compare(pod, boundary_kept, rank, now)
        verdicts.append(Verdict(pod, True, rule, f"{why} (compared with {boundary_kept.name}, the first Pod kept)"))
    for pod in kept:
        _, rule, why = compare(boundary_deleted, pod, rank, now)
        verdicts.append(Verdict(pod, False, rule, f"{boundary_deleted.name}, the last Pod deleted, goes first: {why}"))
    if any(compare(k, d, rank, now)[0] or not compare(d, k, rank, now)[0] for d in doomed for k in kept):
        notes.append(
            "the line between deleted and kept Pods depends on the order the controller lists them (Pods tie on every "
            "rule, or equal ready times make the ranking circular); the controller may pick differently"
        )
    return ScaleDown(deployment, namespace, replicaset, len(candidates), to, verdicts, notes)


def _by_name(verdicts: list[Verdict]) -> list[Verdict]:
    return sorted(verdicts, key=lambda v: v.pod.name)


# -- reading `kubectl get pods -o json` -------------------------------------------------------


def _time(source: InputFile, value: Any, path: Path_, problems: list[Problem]) -> int | None:
    if value is None:
        return None
    try:
        return nanoseconds(parse_timestamp(value, path[-1] if isinstance(path[-1], str) else "timestamp"))
    except SampleError as err:
        problems.append(source.problem(path, "scale-down-input", str(err)))
        return None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(source: InputFile, kind: str, problems: list[Problem]) -> list[tuple[int, dict[str, Any]]]:
    data = source.data
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        problems.append(
            source.problem(
                (), "scale-down-input", f"not a {kind} list", hint=f"use `kubectl get {kind.lower()}s -o json`"
            )
        )
        return []
    found = []
    for index, item in enumerate(data["items"]):
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            problems.append(source.problem(("items", index), "scale-down-input", f"item {index} has no metadata.name"))
            continue
        if item.get("kind", kind) != kind:
            problems.append(
                source.problem(("items", index, "kind"), "scale-down-input", f"item {meta['name']!r} is not a {kind}")
            )
            continue
        found.append((index, item))
    return found


def _controller(meta: dict[str, Any], kind: str) -> str | None:
    for ref in meta.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True and ref.get("kind") == kind:
            name = ref.get("name")
            return name if isinstance(name, str) else None
    return None


def read_pods(source: InputFile) -> tuple[list[ClusterPod], list[Problem]]:
    problems: list[Problem] = []
    pods: list[ClusterPod] = []
    for index, item in _items(source, "Pod", problems):
        meta, spec, status = item["metadata"], _mapping(item.get("spec")), _mapping(item.get("status"))
        here: Path_ = ("items", index)
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        ready_condition = next((c for c in conditions if c.get("type") == "Ready"), None)
        ready = ready_condition is not None and ready_condition.get("status") == "True"
        ready_since = None
        if ready and ready_condition is not None:
            position = conditions.index(ready_condition)
            ready_since = _time(
                source,
                ready_condition.get("lastTransitionTime"),
                (*here, "status", "conditions", position, "lastTransitionTime"),
                problems,
            )
        cost = parse_deletion_cost(str(_mapping(meta.get("annotations")).get(DELETION_COST, "0")))
        restarts = [s.get("restartCount", 0) for s in status.get("containerStatuses") or [] if isinstance(s, dict)]
        uid = meta.get("uid")
        pods.append(
            ClusterPod(
                name=meta["name"],
                namespace=str(meta.get("namespace") or "default"),
                uid=uid if isinstance(uid, str) else "",
                node=str(spec.get("nodeName") or ""),
                phase=str(status.get("phase") or ""),
                ready=ready,
                ready_since=ready_since,
                cost=cost if cost is not None else 0,  # the controller reads an unparsable cost as 0
                restarts=max([r for r in restarts if isinstance(r, int) and not isinstance(r, bool)], default=0),
                created=_time(
                    source, meta.get("creationTimestamp"), (*here, "metadata", "creationTimestamp"), problems
                ),
                terminating=meta.get("deletionTimestamp") is not None,
                owner=_controller(meta, "ReplicaSet"),
                template_hash=_mapping(meta.get("labels")).get("pod-template-hash"),
            )
        )
    return pods, problems


def read_replicasets(source: InputFile, deployment: str, namespace: str) -> tuple[dict[str, int], list[Problem]]:
    """The Deployment's ReplicaSets (through their controller reference) and their spec.replicas."""
    problems: list[Problem] = []
    found: dict[str, int] = {}
    for index, item in _items(source, "ReplicaSet", problems):
        meta = item["metadata"]
        if str(meta.get("namespace") or "default") != namespace or _controller(meta, "Deployment") != deployment:
            continue
        replicas = _mapping(item.get("spec")).get("replicas", 1)
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            problems.append(
                source.problem(
                    ("items", index, "spec", "replicas"), "scale-down-input", "spec.replicas must be an integer"
                )
            )
            continue
        found[meta["name"]] = replicas
    return found, problems
