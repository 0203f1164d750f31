"""kube-scheduler's Score phase for one Pod over the nodes that passed its filters (1.35).

Each plugin scores the nodes, its NormalizeScore maps them to 0-100, and the node with the
highest weighted sum wins (schedulePod → prioritizeNodes → selectHost; kube-scheduler breaks a
tie at random, gen by node name). A profile is the plugins the Pod's schedulerName runs with
their weights: the default profile, or one of a Scheduler policy's. What the inventory cannot
tell (node images, volumes, resource claims) scores every node alike, so it adds nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import Any

from generator.kube import labels, scheduler_config

MAX_NODE_SCORE = 100
# schedutil.DefaultMilliCPURequest and DefaultMemoryRequest: what a container without a request
# counts as when NodeResourcesFit scores (NonZeroRequested), so best-effort Pods still spread
DEFAULT_NONZERO = {"cpu": Decimal("0.1"), "memory": Decimal(200 * 1024 * 1024)}
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
# PodTopologySpread's system defaults (pkg/scheduler/apis/config/v1 defaults.go, systemDefaultConstraints)
SYSTEM_SPREAD = (
    {"topologyKey": HOSTNAME, "maxSkew": 3, "whenUnsatisfiable": "ScheduleAnyway"},
    {"topologyKey": ZONE, "maxSkew": 5, "whenUnsatisfiable": "ScheduleAnyway"},
)
BALANCED = (("cpu", 1), ("memory", 1))  # NodeResourcesBalancedAllocationArgs' default resources
COMPUTED = frozenset(
    {
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "GPUPacking",
    }
)
# scored alike on every node from what an inventory holds: no images, volumes or claims in it
ALIKE = frozenset({"ImageLocality", "VolumeBinding", "DynamicResources"})


@dataclass(frozen=True)
class Profile:
    """A scheduler profile as gen scores with it: its schedulerName, its Score plugins and
    weights, and NodeResourcesFit's scoring strategy."""

    name: str
    weights: Mapping[str, int]
    fit: Mapping[str, Any] = field(default_factory=lambda: scheduler_config.DEFAULT_FIT_STRATEGY)
    balanced: tuple[tuple[str, int], ...] = BALANCED
    spread_defaults: tuple[Mapping[str, Any], ...] = SYSTEM_SPREAD
    system_spread: bool = True  # PodTopologySpread's defaultingType System (else List)

    @classmethod
    def of(cls, config: dict[str, Any]) -> Profile:
        """From a KubeSchedulerConfiguration profile (a Scheduler policy's): its plugins and
        the args of NodeResourcesFit, NodeResourcesBalancedAllocation and PodTopologySpread."""
        balanced = scheduler_config.plugin_args(config, "NodeResourcesBalancedAllocation").get("resources")
        spread = scheduler_config.plugin_args(config, "PodTopologySpread")
        system = spread.get("defaultingType", "System") == "System"
        return cls(
            str(config.get("schedulerName", "default-scheduler")),
            scheduler_config.score_weights(config),
            scheduler_config.fit_strategy(config),
            tuple((str(r.get("name")), int(r.get("weight") or 1)) for r in balanced) if balanced else BALANCED,
            SYSTEM_SPREAD if system else tuple(spread.get("defaultConstraints") or ()),
            system,
        )

    @cached_property
    def fit_resources(self) -> tuple[tuple[str, int], ...]:
        return tuple((str(r.get("name")), int(r.get("weight") or 1)) for r in self.fit.get("resources") or [])

    @property
    def unscored(self) -> list[str]:
        """Score plugins gen cannot compute: out-of-tree ones it does not know."""
        return sorted(set(self.weights) - COMPUTED - ALIKE)


DEFAULT_PROFILE = Profile.of({"schedulerName": "default-scheduler"})


@dataclass
class Candidate:
    """A node that passed the Pod's node filters, as the Score plugins read it: its labels,
    what it has allocatable and what is requested on it (Kubernetes' int64 view: millicores
    for cpu), cpu and memory as NodeResourcesFit's scoring counts them (NonZeroRequested), the
    PreferNoSchedule taints the Pod does not tolerate, the weight of the preferred node-affinity
    terms it matches, how many of this workload's Pods it already runs, and whether its free
    resources still hold the Pod (only those are scored; the others still count in their
    topology domains). memo keeps the plugins' scores that read the node alone."""

    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]
    nonzero: Mapping[str, int]
    untolerated: int = 0
    preferred: int = 0
    own: int = 0
    fits: bool = True
    memo: dict[str, int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class ScorePod:
    """The Pod being scored: its spec, its template labels, its requests (int64 view, as
    kube-scheduler sums them, and with the non-zero defaults), whether a Service or ReplicaSet
    selects it (PodTopologySpread's system defaults apply), and the seed's GPUPacking score hook
    (utilization may blend it)."""

    spec: Mapping[str, Any]
    labels: Mapping[str, str]
    requests: Mapping[str, int]
    nonzero: Mapping[str, int]
    selected: bool
    packing: Callable[[Candidate], int]


def int64(resource: str, amount: Decimal) -> int:
    """Kubernetes' int64 view of a quantity: millicores for cpu, whole units otherwise (rounded up)."""
    return math.ceil(amount * 1000) if resource == "cpu" else math.ceil(amount)


def int64s(amounts: Mapping[str, Decimal]) -> dict[str, int]:
    return {res: int64(res, amount) for res, amount in amounts.items()}


def _is_scalar(resource: str) -> bool:
    return resource not in ("cpu", "memory", "ephemeral-storage", "pods")


def _allocation(
    pod: ScorePod, node: Candidate, resources: Sequence[tuple[str, int]], nonzero: bool
) -> list[tuple[int, int, int]]:
    """resourceAllocationScorer.score's inputs: (allocatable, requested with the Pod, weight) per
    configured resource; a scalar the Pod does not request, or one the node lacks, is left out."""
    out = []
    for res, weight in resources:
        counted = nonzero and res in DEFAULT_NONZERO
        asked = (pod.nonzero if counted else pod.requests).get(res, 0)
        if asked == 0 and _is_scalar(res):
            continue
        alloc = node.allocatable.get(res, 0)
        if alloc:
            out.append((alloc, (node.nonzero if counted else node.requested).get(res, 0) + asked, weight))
    return out


def _broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """helper.BuildBrokenLinearFunction."""
    for i, (utilization, score) in enumerate(shape):
        if p <= utilization:
            if i == 0:
                return score
            u0, s0 = shape[i - 1]
            return s0 + (score - s0) * (p - u0) // (utilization - u0)
    return shape[-1][1]


def fit_score(pod: ScorePod, node: Candidate, profile: Profile) -> int:
    """NodeResourcesFit's Score: LeastAllocated ((allocatable - requested)·100/allocatable),
    MostAllocated (requested·100/allocatable) or RequestedToCapacityRatio, averaged by weight."""
    strategy = profile.fit
    kind = strategy.get("type", "LeastAllocated")
    rows = _allocation(pod, node, profile.fit_resources, nonzero=True)
    total = weights = 0
    if kind == "RequestedToCapacityRatio":
        shape = [
            (int(p["utilization"]), int(p["score"]) * (MAX_NODE_SCORE // 10))
            for p in (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
        ]
        if not shape:
            return 0
        for alloc, req, weight in rows:
            score = _broken_linear(shape, 100 if req > alloc else req * 100 // alloc)
            if score > 0:
                total, weights = total + score * weight, weights + weight
        return round(total / weights) if weights else 0
    for alloc, req, weight in rows:
        if kind == "MostAllocated":
            score = min(req, alloc) * MAX_NODE_SCORE // alloc
        else:
            score = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
        total, weights = total + score * weight, weights + weight
    return total // weights if weights else 0


def balanced_score(pod: ScorePod, node: Candidate, resources: Sequence[tuple[str, int]]) -> int | None:
    """NodeResourcesBalancedAllocation over its resources (cpu and memory by default; requests
    as given, no defaults): (1 - the spread of the requested fractions)·100. None when the Pod
    requests none of them (its PreScore skips a best-effort Pod)."""
    if not any(pod.requests.get(res) for res, _ in resources):
        return None
    fractions = [min(req / alloc, 1.0) for alloc, req, _ in _allocation(pod, node, resources, nonzero=False)]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def _default_normalize(scores: dict[str, int], reverse: bool) -> dict[str, int]:
    """helper.DefaultNormalizeScore."""
    top = max(scores.values(), default=0)
    if top == 0:
        return dict.fromkeys(scores, MAX_NODE_SCORE if reverse else 0)
    return {
        n: (MAX_NODE_SCORE - MAX_NODE_SCORE * s // top) if reverse else MAX_NODE_SCORE * s // top
        for n, s in scores.items()
    }


def spread_constraints(spec: Mapping[str, Any], selected: bool, profile: Profile) -> list[Mapping[str, Any]]:
    """The Pod's own topologySpreadConstraints, else the profile's default constraints (the
    system defaults unless its args list others) when a Service or a ReplicaSet selects it
    (buildDefaultConstraints: an empty default selector adds none)."""
    own = [c for c in spec.get("topologySpreadConstraints") or [] if isinstance(c, Mapping)]
    if own:
        return own
    return list(profile.spread_defaults) if selected else []


def _round(value: float) -> int:
    """Go's math.Round: halves away from zero."""
    return math.floor(value + 0.5)


def _domain_pods(keys: set[str], nodes: Sequence[Candidate]) -> dict[str, dict[str, int]]:
    """Per topology key, the workload's Pods in each of its domains."""
    out: dict[str, dict[str, int]] = {key: {} for key in keys}
    for node in nodes:
        if node.own:
            for key in keys:
                if key in node.labels:
                    out[key][node.labels[key]] = out[key].get(node.labels[key], 0) + node.own
    return out


def _spread_raw(
    pod: ScorePod, candidates: Sequence[Candidate], nodes: Sequence[Candidate], profile: Profile
) -> dict[str, int] | None:
    """PodTopologySpread's Score before normalising: per ScheduleAnyway constraint, the matching
    Pods in the node's domain times log(domains + 2), plus maxSkew - 1 (scoreForCount). Only this
    workload's own Pods match its selector here. None when no constraint scores."""
    constraints = [
        c for c in spread_constraints(pod.spec, pod.selected, profile) if c.get("whenUnsatisfiable") == "ScheduleAnyway"
    ]
    if not constraints:
        return None
    # only system-default constraints score nodes that lack a topology key (requireAllTopologies)
    system = profile.system_spread and not pod.spec.get("topologySpreadConstraints")

    def counted(node: Candidate) -> bool:
        return system or all(c["topologyKey"] in node.labels for c in constraints)

    eligible = [n for n in candidates if counted(n)]
    keys = {c["topologyKey"] for c in constraints} - {HOSTNAME}
    pods = _domain_pods(keys, [n for n in nodes if counted(n)])
    sizes = {key: len({n.labels.get(key, "") for n in eligible}) for key in keys} | {HOSTNAME: len(eligible)}
    out = {n.name: 0 for n in candidates}
    for node in eligible:
        score = 0.0
        for c in constraints:
            key = c["topologyKey"]
            if key not in node.labels:
                continue
            count = node.own if key == HOSTNAME else pods[key].get(node.labels[key], 0)
            score += count * math.log(sizes[key] + 2) + (int(c.get("maxSkew", 1)) - 1)
        out[node.name] = _round(score)
    ignored = {n.name for n in candidates} - {n.name for n in eligible}
    kept = [s for n, s in out.items() if n not in ignored]
    low, high = min(kept, default=0), max(kept, default=0)
    return {
        n: 0 if n in ignored else MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - s) // high
        for n, s in out.items()
    }


def _pod_affinity_raw(
    pod: ScorePod, candidates: Sequence[Candidate], nodes: Sequence[Candidate]
) -> dict[str, int] | None:
    """InterPodAffinity's Score: for this workload's own Pods in a node's domain, + the weight
    of each preferred podAffinity term that selects them, - each preferred podAntiAffinity
    term's; the existing Pods' own terms count again toward the incoming Pod (it carries the
    same labels). Normalised min to max. None when no term selects the workload's Pods."""
    affinity = pod.spec.get("affinity") or {}
    terms = []
    for kind, sign in (("podAffinity", 1), ("podAntiAffinity", -1)):
        for entry in (affinity.get(kind) or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or []:
            term = entry.get("podAffinityTerm") or {}
            if labels.selects(term.get("labelSelector"), dict(pod.labels)):
                terms.append((term.get("topologyKey", HOSTNAME), sign * int(entry.get("weight", 0))))
    if not terms:
        return None
    pods = _domain_pods({key for key, _ in terms} - {HOSTNAME}, nodes)
    raw = {}
    for node in candidates:
        total = 0
        for key, weight in terms:
            if key not in node.labels:
                continue
            count = node.own if key == HOSTNAME else pods[key].get(node.labels[key], 0)
            total += 2 * weight * count  # the incoming Pod's term, and each existing Pod's same term
        raw[node.name] = total
    if not any(n.own for n in nodes):
        return dict.fromkeys(raw, 0)  # topologyScore is empty: NormalizeScore leaves every node at 0
    low, high = min(0, *raw.values()), max(0, *raw.values())  # both start at 0 in NormalizeScore
    return {n: int(MAX_NODE_SCORE * (s - low) / (high - low)) if high > low else 0 for n, s in raw.items()}


def _memo(node: Candidate, plugin: str, compute: Callable[[Candidate], int | None]) -> int | None:
    if plugin not in node.memo:
        node.memo[plugin] = compute(node)
    return node.memo[plugin]


def score(pod: ScorePod, nodes: Sequence[Candidate], profile: Profile) -> dict[str, dict[str, int]]:
    """Each node that still fits: its normalised score per plugin the profile runs (before
    weights). nodes: every node that passed the Pod's node filters."""
    candidates = [n for n in nodes if n.fits]
    per: dict[str, dict[str, int]] = {n.name: {} for n in candidates}

    def put(plugin: str, scores: Mapping[str, int]) -> None:
        for name, value in scores.items():
            per[name][plugin] = value

    weights = profile.weights
    if "TaintToleration" in weights:
        put("TaintToleration", _default_normalize({n.name: n.untolerated for n in candidates}, True))
    if "NodeAffinity" in weights:
        put("NodeAffinity", _default_normalize({n.name: n.preferred for n in candidates}, False))
    if "NodeResourcesFit" in weights:
        put(
            "NodeResourcesFit", {n.name: _memo(n, "fit", lambda n: fit_score(pod, n, profile)) or 0 for n in candidates}
        )
    if "NodeResourcesBalancedAllocation" in weights:
        balanced = {
            n.name: _memo(n, "balanced", lambda n: balanced_score(pod, n, profile.balanced)) for n in candidates
        }
        put("NodeResourcesBalancedAllocation", {n: s for n, s in balanced.items() if s is not None})
    if "PodTopologySpread" in weights and (spread := _spread_raw(pod, candidates, nodes, profile)) is not None:
        put("PodTopologySpread", spread)
    if "InterPodAffinity" in weights and (inter := _pod_affinity_raw(pod, candidates, nodes)) is not None:
        put("InterPodAffinity", inter)
    if "GPUPacking" in weights:
        put("GPUPacking", {n.name: _memo(n, "packing", pod.packing) or 0 for n in candidates})
    return per


def total(plugins: Mapping[str, int], profile: Profile) -> int:
    """The weighted sum kube-scheduler ranks nodes by."""
    return sum(value * profile.weights.get(name, 1) for name, value in plugins.items())


def breakdown(plugins: Mapping[str, int], profile: Profile) -> str:
    """`NodeResourcesFit 97x1 + …` for the reason column."""
    return " + ".join(f"{name} {value}×{profile.weights.get(name, 1)}" for name, value in sorted(plugins.items()))
