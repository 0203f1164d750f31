"""What kube-scheduler will do with a GPU Pod: its filters, then its profile's scores.

Feasibility is the filters an inventory can answer, in kube-scheduler's order:
NodeUnschedulable (a cordoned node), TaintToleration (NoSchedule and NoExecute taints against
the Pod's tolerations, v1.Toleration.ToleratesTaint), NodeAffinity (nodeSelector and required
terms, k8s.io/component-helpers/scheduling/corev1/nodeaffinity), NodeResourcesFit (every
resource the Pod requests, by name, as fitsRequest checks them; Pod requests follow
k8s.io/component-helpers/resource.PodRequests) and PodTopologySpread's DoNotSchedule
constraints while Pods are placed. The scores are the profile's its schedulerName names
(scoring.py): the default profile's, or a Scheduler policy's, GPUPacking the seed's Go plugin.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from typing import Any

from generator.kube import names
from generator.kube.quantity import parse_quantity
from generator.policies import gfd
from generator.preview import scoring
from generator.preview.cost import SampleError, parse_timestamp
from generator.preview.inputs import InputFile
from generator.problems import Problem, Severity
from generator.yamlio.load import Path_

POD_LEVEL_RESOURCES = frozenset({"cpu", "memory"})
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
_INT64 = re.compile(r"^[+-]?[0-9]+\Z")
_INT64_MAX = 2**63 - 1


@dataclass
class Node:
    name: str
    labels: dict[str, str]
    allocatable: dict[str, Decimal]
    requested: dict[str, Decimal] = field(default_factory=dict)
    path: Path_ = ()
    taints: list[dict[str, str]] = field(default_factory=list)
    unschedulable: bool = False
    # what NodeResourcesFit's scoring adds to requested for --pods' Pods that leave cpu or memory out
    nonzero: dict[str, Decimal] = field(default_factory=dict)

    @cached_property
    def shape(self) -> tuple[object, ...]:
        """What the placement filters read of the node: equal for the nodes of one node group."""
        taints = tuple(tuple(sorted(t.items())) for t in self.taints)
        return (tuple(sorted(self.labels.items())), taints, self.unschedulable)


@dataclass(frozen=True)
class Placement:
    """One row of `gen explain gpu`: a workload on a node."""

    workload: str
    node: str
    feasible: bool
    score: int | None
    reason: str
    target: str = ""
    plugins: Mapping[str, int] = field(default_factory=dict)  # each Score plugin's 0-100, before weights

    def as_dict(self) -> dict[str, object]:
        return {
            "target": self.target,
            "workload": self.workload,
            "node": self.node,
            "feasible": self.feasible,
            "score": self.score,
            "plugins": dict(self.plugins),
            "reason": self.reason,
        }


class InventoryError(ValueError):
    def __init__(self, path: Path_, message: str) -> None:
        super().__init__(message)
        self.path = path


# --- reading inventories -------------------------------------------------------------


def _quantities(value: Any, path: Path_) -> dict[str, Decimal]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InventoryError(path, "must be a mapping of resource names to quantities")
    out: dict[str, Decimal] = {}
    for name, raw in value.items():
        parsed = parse_quantity(raw)
        if parsed is None:
            raise InventoryError((*path, name), f"{raw!r} is not a Kubernetes quantity")
        out[str(name)] = parsed
    return out


def _labels(value: Any, path: Path_) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise InventoryError(path, "labels must map names to strings (quote numbers and booleans)")
    return {str(k): v for k, v in value.items()}


_LIST_FIELDS = frozenset({"name", "labels", "allocatable", "requested", "taints", "unschedulable"})
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _taints(value: Any, path: Path_) -> list[dict[str, str]]:
    """Node taints as the API server accepts them: a key, an optional string value, an effect."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InventoryError(path, "taints must be a list of {key, value, effect}")
    out = []
    for i, taint in enumerate(value):
        where = (*path, i)
        if not isinstance(taint, Mapping):
            raise InventoryError(where, "a taint must be a mapping {key, value, effect}")
        unknown = sorted(set(taint) - {"key", "value", "effect", "timeAdded"})
        if unknown:
            raise InventoryError((*where, unknown[0]), f"unknown taint field {unknown[0]!r}")
        key, val, effect = taint.get("key"), taint.get("value", ""), taint.get("effect")
        if not isinstance(key, str) or not key or (err := names.qualified_name(key)):
            raise InventoryError((*where, "key"), f"taint key {key!r} is not a label key" + (f": {err}" if key else ""))
        if not isinstance(val, str):
            raise InventoryError((*where, "value"), "a taint value must be a string (quote numbers and booleans)")
        if effect not in TAINT_EFFECTS:
            raise InventoryError(
                (*where, "effect"), f"taint effect {effect!r} must be one of {', '.join(TAINT_EFFECTS)}"
            )
        out.append({"key": key, "value": val, "effect": effect})
    return out


def _flag(value: Any, path: Path_) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InventoryError(path, "unschedulable must be true or false")
    return value


def _list_entry(entry: Any, path: Path_) -> Node:
    if not isinstance(entry, Mapping):
        raise InventoryError(path, "a node entry must be a mapping {name, labels, allocatable, requested}")
    unknown = sorted(set(entry) - _LIST_FIELDS)
    if unknown:
        raise InventoryError(
            (*path, unknown[0]), f"unknown field {unknown[0]!r} (fields: {', '.join(sorted(_LIST_FIELDS))})"
        )
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise InventoryError(path, "a node entry needs a name")
    return Node(
        name,
        _labels(entry.get("labels"), (*path, "labels")),
        _quantities(entry.get("allocatable"), (*path, "allocatable")),
        _quantities(entry.get("requested"), (*path, "requested")),
        path,
        _taints(entry.get("taints"), (*path, "taints")),
        _flag(entry.get("unschedulable"), (*path, "unschedulable")),
    )


def _node_object(obj: Any, path: Path_) -> Node:
    if not isinstance(obj, Mapping) or obj.get("kind", "Node") != "Node":
        raise InventoryError(path, "expected a Node object")
    meta = obj.get("metadata") or {}
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        raise InventoryError((*path, "metadata"), "a Node needs metadata.name")
    status, spec = obj.get("status") or {}, obj.get("spec") or {}
    if not isinstance(status, Mapping) or not isinstance(spec, Mapping):
        raise InventoryError((*path, "status" if not isinstance(status, Mapping) else "spec"), "must be a mapping")
    return Node(
        name,
        _labels(meta.get("labels"), (*path, "metadata", "labels")),
        _quantities(status.get("allocatable"), (*path, "status", "allocatable")),
        {},
        path,
        _taints(spec.get("taints"), (*path, "spec", "taints")),
        _flag(spec.get("unschedulable"), (*path, "spec", "unschedulable")),
    )


def _items(data: Any) -> tuple[list[Any], Path_] | None:
    """The items of a kubectl List/NodeList/PodList, or None when data is not one."""
    if isinstance(data, Mapping) and isinstance(data.get("items"), list):
        return data["items"], ("items",)
    return None


def read_nodes(source: InputFile) -> tuple[list[Node], list[Problem]]:
    """Nodes from `kubectl get nodes -o json` (a List, or one Node) or a YAML list of entries."""
    data = source.data
    try:
        listed = _items(data)
        if listed is not None:
            items, base = listed
            nodes = [_node_object(obj, (*base, i)) for i, obj in enumerate(items)]
        elif isinstance(data, Mapping):
            nodes = [_node_object(data, ())]
        elif isinstance(data, list):
            nodes = [_list_entry(entry, (i,)) for i, entry in enumerate(data)]
        else:
            raise InventoryError((), "expected `kubectl get nodes -o json` output or a list of nodes")
    except InventoryError as err:
        return [], [source.problem(err.path, "inventory-invalid", str(err))]
    seen: dict[str, Node] = {}
    problems = []
    if isinstance(data, list):  # the YAML list names what it has; kubectl's nodes always have both
        for node in nodes:
            missing = [name for name in ("cpu", "memory") if name not in node.allocatable]
            if missing:
                problems.append(
                    source.problem(
                        (*node.path, "allocatable"),
                        "inventory-incomplete",
                        f"node {node.name!r} states no allocatable {' or '.join(missing)}: treated as having none, "
                        "as kube-scheduler would, so it holds no Pod that requests them",
                        hint="copy allocatable from `kubectl get node NAME -o yaml`",
                        severity=Severity.WARNING,
                    )
                )
                node.allocatable.update(dict.fromkeys(missing, Decimal(0)))
    for node in nodes:
        if node.name in seen:
            problems.append(
                source.problem(node.path, "inventory-duplicate-node", f"node {node.name!r} is listed twice")
            )
        seen[node.name] = node
    return nodes, problems


def add_pod_requests(source: InputFile, nodes: list[Node]) -> list[Problem]:
    """Sum what non-terminated Pods bound to each node request, as the scheduler's NodeInfo does."""
    listed = _items(source.data)
    if listed is None:
        return [source.problem((), "inventory-invalid", "expected `kubectl get pods -A -o json` output (a List)")]
    by_name = {node.name: node for node in nodes}
    for node in nodes:
        if node.requested:
            return [
                source.problem(
                    (),
                    "inventory-requested-twice",
                    f"node {node.name!r} states `requested` and --pods would sum it again",
                    hint="give requested amounts in the inventory or --pods, not both",
                )
            ]
    items, base = listed
    problems = []
    for i, pod in enumerate(items):
        path = (*base, i)
        if not isinstance(pod, Mapping) or not isinstance(pod.get("spec"), Mapping):
            problems.append(source.problem(path, "inventory-invalid", "expected a Pod object with a spec"))
            continue
        status = pod.get("status")
        phase = status.get("phase") if isinstance(status, Mapping) else None
        bound = by_name.get(pod["spec"].get("nodeName") or "")
        if bound is None or phase in TERMINAL_PHASES:
            continue
        try:
            requests = pod_requests(pod["spec"], (*path, "spec"))
        except InventoryError as err:
            problems.append(source.problem(err.path, "inventory-invalid", str(err)))
            continue
        _add(bound.requested, {**requests, "pods": Decimal(1)})  # each Pod takes one of the node's Pod slots
        nonzero = pod_requests(pod["spec"], missing=scoring.DEFAULT_NONZERO)
        _add(bound.nonzero, {res: nonzero[res] - requests.get(res, Decimal(0)) for res in scoring.DEFAULT_NONZERO})
    return problems


# --- Kubernetes semantics ------------------------------------------------------------


def _container_requests(container: Any, path: Path_, missing: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """Requests as the API server stores them: a limit without a request defaults the request;
    missing: what a container without a request of a resource counts as."""
    resources = container.get("resources") or {} if isinstance(container, Mapping) else {}
    if not isinstance(resources, Mapping):
        raise InventoryError(path, "resources must be a mapping")
    limits = _quantities(resources.get("limits"), (*path, "resources", "limits"))
    requests = _quantities(resources.get("requests"), (*path, "resources", "requests"))
    return {**missing, **limits, **requests}


def _add(total: dict[str, Decimal], extra: Mapping[str, Decimal]) -> None:
    for name, amount in extra.items():
        total[name] = total.get(name, Decimal(0)) + amount


def _max(total: dict[str, Decimal], other: Mapping[str, Decimal]) -> None:
    for name, amount in other.items():
        if amount > total.get(name, Decimal(0)):
            total[name] = amount


def pod_requests(
    spec: Mapping[str, Any], path: Path_ = (), missing: Mapping[str, Decimal] | None = None
) -> dict[str, Decimal]:
    """resource.PodRequests: containers and sidecars summed, the largest init step, plus
    overhead. missing: NonMissingContainerRequests (what scoring counts a container without a
    request of cpu or memory as)."""
    missing = missing or {}
    reqs: dict[str, Decimal] = {}
    for i, container in enumerate(spec.get("containers") or []):
        _add(reqs, _container_requests(container, (*path, "containers", i), missing))
    sidecars: dict[str, Decimal] = {}
    init_peak: dict[str, Decimal] = {}
    for i, container in enumerate(spec.get("initContainers") or []):
        own = _container_requests(container, (*path, "initContainers", i), missing)
        if isinstance(container, Mapping) and container.get("restartPolicy") == "Always":
            _add(reqs, own)
            _add(sidecars, own)
            step = dict(sidecars)
        else:
            step = dict(own)
            _add(step, sidecars)
        _max(init_peak, step)
    _max(reqs, init_peak)
    pod_level = _quantities((spec.get("resources") or {}).get("requests"), (*path, "resources", "requests"))
    pod_limits = _quantities((spec.get("resources") or {}).get("limits"), (*path, "resources", "limits"))
    for name in POD_LEVEL_RESOURCES:
        if name in pod_level or name in pod_limits:
            reqs[name] = pod_level.get(name, pod_limits.get(name, Decimal(0)))
    _add(reqs, _quantities(spec.get("overhead"), (*path, "overhead")))
    return reqs


def _int64(text: str) -> int | None:
    if not _INT64.match(text):
        return None
    value = int(text)
    return value if -_INT64_MAX - 1 <= value <= _INT64_MAX else None


def _requirement_mismatch(expr: Mapping[str, Any], value: str | None, what: str) -> str | None:
    """Why a NodeSelectorRequirement does not match (None when it does)."""
    op, values = expr.get("operator"), list(expr.get("values") or [])
    key = expr.get("key")
    if op == "In":
        if value in values:
            return None
        if value is None:
            return f"{what} {key} is missing"
        return f"{what} {key}={value!r} is not in {values}{gfd_naming_hint(value, values)}"
    if op == "NotIn":
        return f"{what} {key}={value!r} is excluded" if value is not None and value in values else None
    if op == "Exists":
        return None if value is not None else f"{what} {key} is missing"
    if op == "DoesNotExist":
        return f"{what} {key} must be absent" if value is not None else None
    if op in ("Gt", "Lt"):
        bound = _int64(values[0]) if len(values) == 1 else None
        if bound is None:
            return f"{op} needs one integer value, got {values}"
        if value is None:
            return f"{what} {key} is missing"
        have = _int64(value)
        if have is None:
            return f"{what} {key}={value!r} is not an integer"
        ok = have > bound if op == "Gt" else have < bound
        return None if ok else f"{what} {key}={value} is not {'greater' if op == 'Gt' else 'less'} than {bound}"
    return f"unknown operator {op!r}"


def gfd_naming_hint(value: str, asked: list[str]) -> str:
    """When a node's model label differs from an asked model only by GPU Feature Discovery's
    conventions (the full product name, the suffix time-slicing adds), say so."""
    whole = value.removesuffix(gfd.SHARED)
    if whole in asked:
        return f" (GPU Feature Discovery marks time-sliced GPUs {gfd.SHARED}: list {value!r} to accept shared ones)"
    parts = whole.upper().split("-")
    for model in asked:
        if model.upper() in parts:
            return f" (GPU Feature Discovery names the full product: list {whole!r}, not {model!r})"
    return ""


def _term_mismatch(term: Mapping[str, Any], node: Node) -> str | None:
    exprs = list(term.get("matchExpressions") or [])
    fields = list(term.get("matchFields") or [])
    if not exprs and not fields:
        return "an empty node selector term matches no node"
    for expr in exprs:
        reason = _requirement_mismatch(expr, node.labels.get(str(expr.get("key"))), "label")
        if reason:
            return reason
    for expr in fields:
        value = node.name if expr.get("key") == "metadata.name" else None
        reason = _requirement_mismatch(expr, value, "field")
        if reason:
            return reason
    return None


def affinity_mismatch(spec: Mapping[str, Any], node: Node) -> str | None:
    """Why the Pod's nodeSelector or required node affinity rejects the node (None when it fits)."""
    for key, want in (spec.get("nodeSelector") or {}).items():
        have = node.labels.get(key)
        if have != want:
            return f"nodeSelector {key}={want!r}: node has {have!r}" if have is not None else f"label {key} is missing"
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms")
    if terms is None:
        return None
    reasons = []
    for term in terms:
        reason = _term_mismatch(term, node)
        if reason is None:
            return None
        reasons.append(reason)
    return "; or ".join(reasons) or "no node selector terms"


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, str]) -> bool:
    """v1.Toleration.ToleratesTaint: an empty effect or key matches any; Exists ignores the
    value; an empty operator means Equal."""
    if toleration.get("effect") and toleration["effect"] != taint["effect"]:
        return False
    if toleration.get("key") and toleration["key"] != taint["key"]:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == taint["value"]


UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}


def placement_failures(spec: Mapping[str, Any], node: Node) -> list[str]:
    """The filters that read only the node's labels, taints and cordon: NodeUnschedulable,
    TaintToleration, NodeAffinity. Nodes of one node group share their answer."""
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)]
    failures = []
    if node.unschedulable and not any(tolerates(t, UNSCHEDULABLE_TAINT) for t in tolerations):
        failures.append("NodeUnschedulable: node is cordoned (spec.unschedulable)")
    for taint in node.taints:
        if taint["effect"] != "PreferNoSchedule" and not any(tolerates(t, taint) for t in tolerations):
            shown = f"{taint['key']}={taint['value']}" if taint["value"] else taint["key"]
            failures.append(f"TaintToleration: untolerated taint {shown}:{taint['effect']}")
            break  # FindMatchingUntoleratedTaint reports the first
    mismatch = affinity_mismatch(spec, node)
    if mismatch:
        failures.append(f"NodeAffinity: {mismatch}")
    return failures


def fit_failures(node: Node, wanted: Mapping[str, Decimal], free: Mapping[str, Decimal] | None = None) -> list[str]:
    """NodeResourcesFit (fitsRequest) for every resource the Pod requests, each by name: a
    resource the node does not state it has none of, as kube-scheduler reads it (a Pod slot
    only where the inventory states them: kubelet always does). free: what is left when Pods
    placed by gen took some; else allocatable - requested."""
    failures = []
    for name, amount in sorted(wanted.items()):
        if not amount or (name == "pods" and name not in node.allocatable):
            continue
        allocatable = node.allocatable.get(name, Decimal(0))
        left = free.get(name, Decimal(0)) if free is not None else allocatable - node.requested.get(name, Decimal(0))
        if amount <= left:
            continue
        if name == "pods":
            failures.append(f"NodeResourcesFit: too many pods: all {_show(allocatable)} taken")
        elif name not in node.allocatable:
            failures.append(f"NodeResourcesFit: insufficient {name}: needs {human(name, amount)}, the node has none")
        else:
            failures.append(
                f"NodeResourcesFit: insufficient {name}: needs {human(name, amount)}, {human(name, left)} free"
                f" ({human(name, allocatable)} allocatable)"
            )
    return failures


_BINARY_UNITS = (("Ti", Decimal(2**40)), ("Gi", Decimal(2**30)), ("Mi", Decimal(2**20)), ("Ki", Decimal(2**10)))


def _number(amount: Decimal) -> str:
    """At most two decimals, none when whole: 74.35, 3, 0.5."""
    text = f"{amount.quantize(Decimal('0.01')):f}".rstrip("0").rstrip(".")
    return text or "0"


def human(resource: str, amount: Decimal) -> str:
    """A quantity as people read it: `3 CPU`, `500m CPU`, `40Gi`, `179.3Gi`, never raw bytes."""
    if resource == "cpu":
        if amount != amount.to_integral_value() and amount < 1:
            return f"{_number(amount * 1000)}m CPU"
        return f"{_number(amount)} CPU"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, unit in _BINARY_UNITS:
            if abs(amount) >= unit:
                return f"{_number(amount / unit)}{suffix}"
    return _show(amount)


def _show(amount: Decimal) -> str:
    return str(int(amount)) if amount == amount.to_integral_value() else _number(amount)


def packing_score(allocatable: int, requested: int, needed: int) -> int:
    """The seed's GPUPacking Score: favour the node the Pod leaves with the fewest free GPUs."""
    if needed == 0:
        return 0
    remaining = allocatable - requested - needed
    if remaining < 0:
        return 0  # a score cannot exclude a node; NodeResourcesFit does
    if remaining >= 10:
        return 0
    return 100 - remaining * 10


def _whole(amount: Decimal, what: str) -> int:
    if amount != amount.to_integral_value():
        raise ValueError(f"{what} {amount} is not a whole number of GPUs")
    return int(amount)


# --- utilization (the seed's illustrative 70:30 blend) -------------------------------


@dataclass(frozen=True)
class Utilization:
    value: Decimal
    observed_at: datetime


def read_utilization(
    source: InputFile, now: datetime, max_age_seconds: float
) -> tuple[dict[str, Utilization | str], list[Problem]]:
    """Node -> fresh sample, or node -> why its sample cannot be used."""
    if not isinstance(source.data, list):
        return {}, [source.problem((), "utilization-invalid", "expected a list of {node, utilization, observed_at}")]
    out: dict[str, Utilization | str] = {}
    problems = []
    for i, entry in enumerate(source.data):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("node"), str):
            problems.append(
                source.problem((i,), "utilization-invalid", "an entry needs node, utilization, observed_at")
            )
            continue
        node, value = entry["node"], entry.get("utilization")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            out[node] = f"utilization {value!r} is not a finite number in [0, 1]"
            problems.append(source.problem((i, "utilization"), "utilization-invalid", f"node {node}: {out[node]}"))
            continue
        try:
            observed = parse_timestamp(entry.get("observed_at"), "observed_at")
        except SampleError as err:
            out[node] = str(err)
            problems.append(source.problem((i, "observed_at"), "utilization-invalid", f"node {node}: {err}"))
            continue
        age = (now - observed).total_seconds()
        if age > max_age_seconds or age < -5:
            out[node] = f"utilization sample is {'stale' if age > 0 else 'from the future'} ({age:g}s old)"
            problems.append(source.problem((i, "observed_at"), "utilization-stale", f"node {node}: {out[node]}"))
            continue
        out[node] = Utilization(Decimal(str(value)), observed)
    return out, problems


def blended_score(packing: int, utilization: Decimal) -> int:
    """(packing * 7 + utilizationScore * 3) / 10 with utilizationScore = (1 - utilization) * 100, floored."""
    return int((packing * 7 + (1 - utilization) * 100 * 3) // 10)


# --- the preview ---------------------------------------------------------------------


@dataclass(frozen=True)
class GpuPod:
    """A rendered GPU workload: its name, GPU resource and Pod spec; for a service or a gang,
    how many of its Pods must run (floor) and may run (ceiling), and whether no two may share a
    node (required anti-affinity on the hostname); the target it is rendered for, and the value
    of its PriorityClass there (what kube-scheduler places first); its template labels, whether
    a Service or ReplicaSet selects its Pods (PodTopologySpread's system defaults), and the
    scheduler profile its schedulerName names."""

    name: str
    resource: str
    spec: Mapping[str, Any]
    kind: str = "GpuWorkload"
    floor: int = 0  # 0: a single Pod, no capacity preview
    ceiling: int = 0
    one_per_node: bool = False
    gang: bool = False
    target: str = ""
    priority: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    selected: bool = False
    profile: scoring.Profile = scoring.DEFAULT_PROFILE
    surge: int = 0  # a Deployment's rolling update: Pods above the floor it creates (maxSurge)

    @cached_property
    def requests(self) -> dict[str, Decimal]:
        """What NodeResourcesFit filters on: every resource requested, and one Pod slot."""
        return {name: amount for name, amount in pod_requests(self.spec).items() if amount} | {"pods": Decimal(1)}

    @cached_property
    def request_ints(self) -> dict[str, int]:
        """The requests in the int64 view NodeInfo sums per Pod."""
        return scoring.int64s({res: amount for res, amount in self.requests.items() if res != "pods"})

    @cached_property
    def nonzero_ints(self) -> dict[str, int]:
        """cpu and memory as NodeResourcesFit's scoring counts them (a container without a
        request counts DefaultMilliCPURequest and DefaultMemoryRequest)."""
        nonzero = pod_requests(self.spec, missing=scoring.DEFAULT_NONZERO)
        return {res: scoring.int64(res, nonzero.get(res, Decimal(0))) for res in scoring.DEFAULT_NONZERO}


@dataclass(frozen=True)
class Capacity:
    """How many of a workload's Pods fit, placed one at a time as kube-scheduler would."""

    workload: str
    kind: str
    floor: int
    ceiling: int
    placed: list[tuple[str, int]]  # the floor's placement: node, Pods on it
    fit_floor: int
    fit_ceiling: int
    gang: bool
    target: str = ""
    surge: int = 0  # a Deployment's rolling update: the maxSurge Pods it adds above the floor
    fit_surge: int = 0  # how many of them fit beside the floor

    def as_dict(self) -> dict[str, object]:
        return {
            "target": self.target,
            "workload": self.workload,
            "kind": self.kind,
            "floor": self.floor,
            "ceiling": self.ceiling,
            "placed": [{"node": node, "replicas": count} for node, count in self.placed],
            "fit_floor": self.fit_floor,
            "fit_ceiling": self.fit_ceiling,
            "surge": self.surge,
            "fit_surge": self.fit_surge,
        }

    def summary(self) -> str:
        """One line for people: how many fit at the floor and the ceiling, and where the floor went."""
        where = ", ".join(f"{node} ×{count}" for node, count in self.placed)
        name = f"{self.target}: {self.workload}" if self.target else self.workload
        if self.gang:
            if self.fit_floor == self.floor:
                return f"{name}: gang of {self.floor} placed ({where})"
            return f"{name}: gang of {self.floor} cannot start: only {self.fit_floor} members fit, so none starts"
        if self.fit_floor < self.floor:
            short = self.floor - self.fit_floor
            line = f"{name}: min {self.floor}: only {self.fit_floor} fit ({where or 'nowhere'})"
            return f"{line} — {short} replica{'s' if short > 1 else ''} would stay Pending"
        line = f"{name}: min {self.floor} placed ({where})"
        if self.ceiling == self.floor:
            return line
        if self.fit_ceiling == self.ceiling:
            return f"{line}; max {self.ceiling}: all fit"
        short = self.ceiling - self.fit_ceiling
        return (
            f"{line}; max {self.ceiling}: {self.fit_ceiling} fit — {short} replica{'s' if short > 1 else ''}"
            " would stay Pending"
        )


def _with_hostname(node: Node) -> dict[str, str]:
    return {scoring.HOSTNAME: node.name, **node.labels}  # kubelet always sets the hostname label


def _hard_spread(pod: GpuPod) -> list[Mapping[str, Any]]:
    """The Pod's DoNotSchedule spread constraints: its own, or its profile's default ones."""
    constraints = scoring.spread_constraints(pod.spec, pod.selected, pod.profile)
    return [c for c in constraints if c.get("whenUnsatisfiable") == "DoNotSchedule"]


class _Spread:
    """PodTopologySpread's Filter for the Pod's DoNotSchedule constraints (only its own Pods
    match its selector here): placing one more in the node's domain must keep the skew against
    the emptiest domain within maxSkew (filtering.go). nodes: those whose domains count."""

    def __init__(self, pod: GpuPod, nodes: list[Node], own: Mapping[str, int]) -> None:
        self.constraints = _hard_spread(pod)
        self.counts: dict[str, dict[str, int]] = {c["topologyKey"]: {} for c in self.constraints}
        for node in nodes:
            labels = _with_hostname(node)
            if all(key in labels for key in self.counts):  # a node lacking one key counts in none
                for key, counts in self.counts.items():
                    counts[labels[key]] = counts.get(labels[key], 0) + own.get(node.name, 0)

    def refusal(self, node: Node) -> str | None:
        """Why one more Pod on node breaks a constraint, or None."""
        for c in self.constraints:
            key = c["topologyKey"]
            value = _with_hostname(node).get(key)
            if value is None:
                return f"PodTopologySpread: node has no {key} label"
            counts = self.counts[key]
            skew = counts.get(value, 0) + 1 - min(counts.values(), default=0)
            if skew > int(c.get("maxSkew", 1)):
                return (
                    f"PodTopologySpread: {key}={value} would be {skew} Pods above the emptiest domain "
                    f"(maxSkew {c.get('maxSkew', 1)})"
                )
        return None


class Pool:
    """What the inventory's nodes have free while Pods are placed on them one at a time: each
    placement takes every resource its Pod requests and a Pod slot. A node's free resources are
    worked out when a placement first looks at it; what the Score plugins read of it is kept
    until a placement changes it."""

    def __init__(self, nodes: Iterable[Node]) -> None:
        self._nodes = {node.name: node for node in nodes}
        self.free: dict[str, dict[str, Decimal]] = {}
        # the int64 view the scores read: allocatable, requested, NonZeroRequested
        self._ints: dict[str, tuple[dict[str, int], dict[str, int], dict[str, int]]] = {}
        self._version: dict[str, int] = {}
        self._candidates: dict[tuple[int, str], tuple[int, scoring.Candidate]] = {}
        self._statics: dict[tuple[int, object], tuple[int, int]] = {}  # (pod, node shape) -> taints, affinity
        self._matching: dict[int, list[Node]] = {}

    def left(self, name: str) -> dict[str, Decimal]:
        found = self.free.get(name)
        if found is None:
            node = self._nodes[name]
            found = self.free[name] = {
                res: amount - node.requested.get(res, Decimal(0)) for res, amount in node.allocatable.items()
            }
        return found

    def _int64(self, name: str) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        found = self._ints.get(name)
        if found is None:
            node = self._nodes[name]
            requested = scoring.int64s(node.requested)
            nonzero = {
                res: requested.get(res, 0) + scoring.int64(res, node.nonzero.get(res, Decimal(0)))
                for res in scoring.DEFAULT_NONZERO
            }
            found = self._ints[name] = (scoring.int64s(node.allocatable), requested, nonzero)
        return found

    def _affine(self, pod: GpuPod) -> list[Node]:
        """The nodes whose domains PodTopologySpread's Filter counts: those that match the
        Pod's nodeSelector and required node affinity (nodeAffinityPolicy Honor), tainted or
        not (nodeTaintsPolicy Ignore), the defaults."""
        found = self._matching.get(id(pod))
        if found is None:
            found = self._matching[id(pod)] = [
                node for node in self._nodes.values() if affinity_mismatch(pod.spec, node) is None
            ]
        return found

    def _fits(self, pod: GpuPod, name: str) -> bool:
        node, left = self._nodes[name], self.left(name)
        return all(
            amount <= left.get(res, Decimal(0))
            for res, amount in pod.requests.items()
            if res != "pods" or res in node.allocatable
        )

    def _static(self, pod: GpuPod, node: Node) -> tuple[int, int]:
        """The PreferNoSchedule taints pod does not tolerate, and the weight of the preferred
        node-affinity terms node matches: alike for the nodes of one node group."""
        key = (id(pod), node.shape)
        found = self._statics.get(key)
        if found is None:
            tolerations = [
                t
                for t in pod.spec.get("tolerations") or []
                if isinstance(t, Mapping) and t.get("effect") in (None, "", "PreferNoSchedule")
            ]
            preferred = ((pod.spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
                "preferredDuringSchedulingIgnoredDuringExecution"
            ) or []
            found = self._statics[key] = (
                sum(
                    1
                    for t in node.taints
                    if t["effect"] == "PreferNoSchedule" and not any(tolerates(x, t) for x in tolerations)
                ),
                sum(
                    int(t.get("weight", 0))
                    for t in preferred
                    if _term_mismatch(t.get("preference") or {}, node) is None
                ),
            )
        return found

    def _candidate(self, pod: GpuPod, name: str) -> scoring.Candidate:
        """The node as the Score plugins read it now (kept until a placement changes it)."""
        version = self._version.get(name, 0)
        kept = self._candidates.get((id(pod), name))
        if kept is not None and kept[0] == version:
            return kept[1]
        node = self._nodes[name]
        allocatable, requested, nonzero = self._int64(name)
        untolerated, preferred = self._static(pod, node)
        candidate = scoring.Candidate(
            name, _with_hostname(node), allocatable, requested, nonzero, untolerated, preferred
        )
        self._candidates[(id(pod), name)] = (version, candidate)
        return candidate

    def take(self, pod: GpuPod, name: str, sign: int = 1) -> None:
        """Place (or, with sign -1, release) one of pod's Pods on the node."""
        node, left = self._nodes[name], self.left(name)
        _, requested, nonzero = self._int64(name)
        for res, amount in pod.requests.items():
            if res in node.allocatable or res != "pods":
                left[res] = left.get(res, Decimal(0)) - sign * amount
        for res, units in pod.request_ints.items():
            requested[res] = requested.get(res, 0) + sign * units
        for res, units in pod.nonzero_ints.items():
            nonzero[res] = nonzero.get(res, 0) + sign * units
        self._version[name] = self._version.get(name, 0) + 1

    def scores(
        self,
        pod: GpuPod,
        feasible: Iterable[str],
        own: Mapping[str, int],
        utilization: Mapping[str, Utilization | str] | None = None,
    ) -> dict[str, dict[str, int]]:
        """Each node that passed pod's node filters (feasible: their names, sorted) and still
        holds it: its score per plugin."""
        names = [name for name in feasible if name in self._nodes]
        spread = _Spread(pod, self._affine(pod), own) if _hard_spread(pod) else None
        nodes = []
        for name in names:
            candidate = self._candidate(pod, name)
            candidate.own = own.get(name, 0)
            if "room" not in candidate.memo:  # free resources change only where a Pod is placed
                candidate.memo["room"] = self._fits(pod, name)
            candidate.fits = (
                bool(candidate.memo["room"])
                and not (pod.one_per_node and candidate.own)
                and (spread is None or spread.refusal(self._nodes[name]) is None)
            )
            nodes.append(candidate)
        needed = int(pod.requests.get(pod.resource, Decimal(0)))

        def packing(node: scoring.Candidate) -> int:
            score = packing_score(int(self.left(node.name).get(pod.resource, Decimal(0))), 0, needed)
            sample = (utilization or {}).get(node.name)
            return blended_score(score, sample.value) if isinstance(sample, Utilization) else score

        return scoring.score(_score_pod(pod, packing), nodes, pod.profile)

    def place(self, pod: GpuPod, feasible: Iterable[str], count: int, beside: list[str] | None = None) -> list[str]:
        """Where count more Pods of pod land, one at a time: among the nodes that passed the
        filters for one Pod, those whose free resources still hold it (with one_per_node, that
        hold none of it yet; `beside` naming where it already runs), the highest weighted score
        of its profile, ties by node name. Stops at the first Pod that fits nowhere, as
        kube-scheduler leaves it Pending. A node whose free resources stop holding the Pod is
        out for the rest: they only shrink while it is placed."""
        feasible = sorted(set(feasible))
        own: dict[str, int] = {}
        for name in beside or ():
            own[name] = own.get(name, 0) + 1
        placed: list[str] = []
        for _ in range(count):
            ranked = self.scores(pod, feasible, own)
            if not ranked:
                break
            best = min(ranked, key=lambda name: (-scoring.total(ranked[name], pod.profile), name))
            placed.append(best)
            own[best] = own.get(best, 0) + 1
            self.take(pod, best)
        return placed


def _score_pod(pod: GpuPod, packing: Callable[[scoring.Candidate], int]) -> scoring.ScorePod:
    return scoring.ScorePod(pod.spec, pod.labels, pod.request_ints, pod.nonzero_ints, pod.selected, packing)


def capacity(pod: GpuPod, nodes: list[Node], rows: list[Placement]) -> Capacity:
    """The floor's and the ceiling's placement of a service or gang, alone on the inventory;
    and how many of a rolling update's surge Pods fit beside the floor (the Pods placed after
    the floor are those, as far as they go)."""
    feasible = [row.node for row in rows if row.feasible]
    pool = Pool(nodes)
    placed = pool.place(pod, feasible, max(pod.floor, pod.ceiling))
    if pod.surge > len(placed) - pod.floor >= max(pod.ceiling - pod.floor, 0):
        placed += pool.place(pod, feasible, pod.surge - (len(placed) - pod.floor), placed)
    floor = placed[: pod.floor]
    counts: dict[str, int] = {}
    for node in floor:
        counts[node] = counts.get(node, 0) + 1
    return Capacity(
        pod.name,
        pod.kind,
        pod.floor,
        pod.ceiling,
        sorted(counts.items()),
        len(floor),
        min(len(placed), pod.ceiling),
        pod.gang,
        pod.target,
        pod.surge,
        min(max(len(placed) - pod.floor, 0), pod.surge),
    )


@dataclass(frozen=True)
class Together:
    """How many of a workload's Pods fit beside its target's other GPU workloads."""

    target: str
    workload: str
    floor: int
    fit_floor: int
    ceiling: int
    fit_ceiling: int

    def as_dict(self) -> dict[str, object]:
        return {
            "target": self.target,
            "workload": self.workload,
            "floor": self.floor,
            "fit_floor": self.fit_floor,
            "ceiling": self.ceiling,
            "fit_ceiling": self.fit_ceiling,
        }


def together(entries: list[tuple[GpuPod, list[str]]], nodes: list[Node]) -> list[Together]:
    """One target's GPU workloads (each with the nodes that passed its filters) on one shared
    copy of the inventory: every floor first, in order of PriorityClass value (highest first)
    then name, as kube-scheduler places higher priorities first; then the ceilings' extra Pods
    in the same order. A gang is all or nothing."""
    pool = Pool(nodes)
    order = sorted(entries, key=lambda entry: (-entry[0].priority, entry[0].name))
    placed: dict[str, list[str]] = {}
    for pod, feasible in order:
        floor = max(pod.floor, 1)
        got = pool.place(pod, feasible, floor)
        if pod.gang and len(got) < floor:  # a gang that cannot start holds nothing
            for name in got:
                pool.take(pod, name, -1)
            got = []
        placed[pod.name] = got
    for pod, feasible in order:
        extra = max(pod.ceiling, pod.floor, 1) - max(pod.floor, 1)
        if extra > 0 and len(placed[pod.name]) == max(pod.floor, 1):
            placed[pod.name] += pool.place(pod, feasible, extra, placed[pod.name])
    results = []
    for pod, _ in entries:
        floor, ceiling = max(pod.floor, 1), max(pod.ceiling, pod.floor, 1)
        count = len(placed[pod.name])
        results.append(Together(pod.target, pod.name, floor, min(count, floor), ceiling, count))
    return results


def explain(
    pod: GpuPod, nodes: Iterable[Node], utilization: Mapping[str, Utilization | str] | None = None
) -> list[Placement]:
    """One row per node for one of pod's Pods on the inventory as it is: the filters that
    reject the node, or its score under the Pod's profile among the nodes that pass."""
    nodes = list(nodes)
    needed = _whole(pod.requests.get(pod.resource, Decimal(0)), f"{pod.name} requests")
    others = {name: amount for name, amount in pod.requests.items() if name != pod.resource}
    failed: dict[str, str] = {}
    free: dict[str, int] = {}
    judged: dict[tuple[object, ...], list[str]] = {}
    for node in nodes:
        placement = judged.get(node.shape)
        if placement is None:
            placement = judged[node.shape] = placement_failures(pod.spec, node)
        reasons = placement + fit_failures(node, others)
        try:
            allocatable = _whole(node.allocatable.get(pod.resource, Decimal(0)), f"allocatable {pod.resource}")
            requested = _whole(node.requested.get(pod.resource, Decimal(0)), f"requested {pod.resource}")
        except ValueError as err:
            failed[node.name] = str(err)
            continue
        free[node.name] = allocatable - requested
        if needed > allocatable - requested:
            reasons.append(
                f"NodeResourcesFit: insufficient {pod.resource}: needs {needed}, {allocatable - requested} free "
                f"({allocatable} allocatable, {requested} requested)"
            )
        if reasons:
            failed[node.name] = "; ".join(reasons)
    packs = "GPUPacking" in pod.profile.weights
    ranked = Pool(nodes).scores(pod, sorted(n.name for n in nodes if n.name not in failed), {}, utilization)
    rows = []
    for node in nodes:
        if node.name in failed:
            rows.append(Placement(pod.name, node.name, False, None, failed[node.name], pod.target))
            continue
        plugins = ranked[node.name]
        total = scoring.total(plugins, pod.profile)
        reason = f"fits; {free[node.name] - needed} {pod.resource} left free; {pod.profile.name}: {scoring.breakdown(plugins, pod.profile)}"
        if pod.profile.unscored:
            reason += f" (not scored: {', '.join(pod.profile.unscored)})"
        if utilization is not None and packs:
            sample = utilization.get(node.name, "no utilization sample for this node")
            if isinstance(sample, str):
                rows.append(Placement(pod.name, node.name, True, None, f"{reason}; {sample}", pod.target, plugins))
                continue
            reason += f"; GPUPacking blended with utilization {sample.value}"
        rows.append(Placement(pod.name, node.name, True, total, reason, pod.target, plugins))
    return rows
