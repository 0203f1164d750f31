"""`gen explain gpu`: feasibility and the seed's GPUPacking score over node inventories."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.preview import gpu
from generator.preview.gpu import Node, affinity_mismatch, packing_score, pod_requests
from tests.conftest import POLICIES, Run

MODEL = "training.example.com/gpu-model"
MEMORY = "training.example.com/gpu-memory-mib"
# the seed's custom-scheduler profile: the default plugins and GPUPacking at 10
WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
    "GPUPacking": 10,
}


def go_score(allocatable: int, requested: int, needed: int) -> int:
    """The seed's Go Score body, transcribed statement by statement."""
    if needed == 0:
        return 0
    remaining = allocatable - requested - needed
    if remaining < 0:
        return 0
    if remaining >= 10:
        return 0
    return 100 - remaining * 10


@given(st.integers(0, 64), st.integers(0, 64), st.integers(0, 16))
def test_packing_score_is_the_go_plugin(allocatable: int, requested: int, needed: int) -> None:
    assert packing_score(allocatable, requested, needed) == go_score(allocatable, requested, needed)


def kube_node(name: str, gpus: str | None, model: str | None = "A100", memory: str | None = "81920") -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if model is not None:
        labels[MODEL] = model
    if memory is not None:
        labels[MEMORY] = memory
    allocatable = {"cpu": "95690m", "memory": "1056762Mi", "pods": "250"}
    if gpus is not None:
        allocatable["nvidia.com/gpu"] = gpus
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def kube_pod(node: str, gpus: int, phase: str = "Running", **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p-{node}-{gpus}-{phase}", "namespace": "ml"},
        "spec": {"nodeName": node, "containers": [container], **spec},
        "status": {"phase": phase},
    }


def kube_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def explain(gen: Callable[..., Run], tmp_path: Path, nodes: object, *extra: str | Path) -> tuple[Run, dict[str, Any]]:
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(nodes))
    result = gen(
        "explain", "gpu", "--workload", "gpu-reservation-demo", "--nodes", path, "--format", "json", *extra, POLICIES
    )
    rows = {row["node"]: row for row in json.loads(result.out)["placements"]} if result.out else {}
    return result, rows


def test_kubectl_inventory_with_pods(gen: Callable[..., Run], tmp_path: Path) -> None:
    nodes = kube_list(
        [
            kube_node("over", "8"),  # 7 taken by pods: 2 needed leaves -1
            kube_node("exact", "4"),  # 2 taken: remaining 0 -> 100
            kube_node("some", "8"),  # init containers take 2 (not 3): remaining 4 -> 60
            kube_node("nine", "11"),  # remaining 9 -> 10
            kube_node("many", "12"),  # remaining 10 -> 0
            kube_node("v100", "8", model="V100"),
            kube_node("small", "8", memory="40960"),  # needs > 40959: exactly 40960 is enough
            kube_node("smaller", "8", memory="40959"),
            kube_node("unlabelled", "8", model=None, memory=None),
            kube_node("cpu-only", None),
        ]
    )
    pods = kube_list(
        [
            kube_pod("over", 4),
            kube_pod("over", 3),
            kube_pod("over", 8, phase="Succeeded"),  # terminated Pods hold nothing
            kube_pod("exact", 2, phase="Pending"),
            # init containers run one after another: the largest step counts, not their sum
            kube_pod(
                "some",
                0,
                initContainers=[
                    {"name": "a", "image": "x", "resources": {"requests": {"nvidia.com/gpu": "1"}}},
                    {"name": "b", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "2"}}},
                ],
            ),
        ]
    )
    pods_path = tmp_path / "pods.json"
    pods_path.write_text(json.dumps(pods))
    result, rows = explain(gen, tmp_path, nodes, "--pods", pods_path)
    assert result.code == 0, result.err
    # custom-scheduler's profile: GPUPacking (weight 10) beside the default plugins
    got = {name: (row["feasible"], row["plugins"].get("GPUPacking")) for name, row in rows.items()}
    assert got == {
        "over": (False, None),
        "exact": (True, 100),
        "some": (True, 60),
        "nine": (True, 10),
        "many": (True, 0),
        "v100": (False, None),
        "small": (True, 40),
        "smaller": (False, None),
        "unlabelled": (False, None),
        "cpu-only": (False, None),
    }
    assert "insufficient nvidia.com/gpu: needs 2, 1 free" in rows["over"]["reason"]
    assert "V100" in rows["v100"]["reason"] and "40959" in rows["smaller"]["reason"]
    assert set(rows["exact"]) == {"target", "workload", "node", "feasible", "score", "plugins", "reason"}
    exact = rows["exact"]["plugins"]
    assert rows["exact"]["score"] == sum(exact[p] * w for p, w in WEIGHTS.items() if p in exact)


def test_yaml_inventory_and_a_workload_that_fits_nowhere(gen: Callable[..., Run], tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(
        f"- name: busy\n  labels: {{{MODEL}: A100, {MEMORY}: '81920'}}\n"
        "  allocatable: {nvidia.com/gpu: 8, cpu: 64, memory: 512Gi}\n  requested: {nvidia.com/gpu: 7}\n"
    )
    result = gen("explain", "gpu", "--workload", "gpu-reservation-demo", "--nodes", path, POLICIES)
    assert result.code == 1
    assert "busy" in result.out and "no" in result.out.split()
    assert "gpu-reservation-demo.yaml:" in result.err and "gpu-unschedulable" in result.err


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("- name: a\n  allocatable: {nvidia.com/gpu: lots}\n", ":2:"),
        ("- name: a\n  allocatable: {nvidia.com/gpu: 1}\n  requestd: {}\n", ":3:"),
        ("- labels: {}\n", ":1:"),
        ("- name: a\n  labels: {x: 1}\n", ":2:"),
        ("- name: a\n- name: a\n", ":2:"),
        ("- name: a\n  allocatable: {nvidia.com/gpu: 500m}\n", ""),
        ("42\n", ":1:"),
        ("- [\n", ":2:"),
    ],
)
def test_bad_inventories_are_located(gen: Callable[..., Run], tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(text)
    result = gen("explain", "gpu", "--workload", "gpu-reservation-demo", "--nodes", path, POLICIES)
    assert result.code == 1
    assert "Traceback" not in result.err
    if where:
        assert f"nodes.yaml{where}" in result.err
    else:
        assert "not a whole number" in result.out


def test_requested_twice_is_refused(gen: Callable[..., Run], tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        "- name: a\n  allocatable: {nvidia.com/gpu: 8, cpu: 64, memory: 512Gi}\n  requested: {nvidia.com/gpu: 1}\n"
    )
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps(kube_list([])))
    result = gen("explain", "gpu", "--workload", "gpu-reservation-demo", "--nodes", nodes, "--pods", pods, POLICIES)
    assert result.code == 1 and "inventory-requested-twice" in result.err


def test_utilization_blend_and_missing_samples(gen: Callable[..., Run], tmp_path: Path) -> None:
    nodes = kube_list([kube_node("a", "4"), kube_node("b", "4"), kube_node("c", "4"), kube_node("d", "4")])
    samples = tmp_path / "util.json"
    samples.write_text(
        json.dumps(
            [
                {"node": "a", "utilization": 0.25, "observed_at": "2026-12-02T10:00:00Z"},
                {"node": "b", "utilization": 0.5, "observed_at": "2026-12-02T09:58:00Z"},  # stale
                {"node": "c", "utilization": 1.5, "observed_at": "2026-12-02T10:00:00Z"},
            ]
        )
    )
    now = "2026-12-02T10:00:20Z"
    result, rows = explain(gen, tmp_path, nodes, "--utilization", samples, "--now", now)
    assert result.code == 1
    # packing 80 (2 left), utilization score 75: (80 * 7 + 75 * 3) / 10 = 78.5 -> 78
    assert rows["a"]["plugins"]["GPUPacking"] == 78
    assert rows["b"]["score"] is None and "stale" in rows["b"]["reason"]
    assert rows["c"]["score"] is None
    assert rows["d"]["score"] is None and "no utilization sample" in rows["d"]["reason"]
    assert "utilization-stale" in result.err and "utilization-missing" in result.err


def test_pod_requests_follow_kubernetes() -> None:
    def c(name: str, gpus: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "resources": {"requests": {"nvidia.com/gpu": gpus, "cpu": "1"}}, **extra}

    spec = {
        "initContainers": [c("sidecar", "1", restartPolicy="Always"), c("init", "3")],
        "containers": [c("main", "2")],
        "overhead": {"cpu": "250m"},
        "resources": {"requests": {"memory": "1Gi"}},
    }
    reqs = pod_requests(spec)
    # main + sidecar = 3; init step = 3 + sidecar 1 = 4 -> 4 GPUs
    assert reqs["nvidia.com/gpu"] == 4
    assert reqs["cpu"] == Decimal("2.25")  # max(1 + 1, 1 + 1) + overhead
    assert reqs["memory"] == 2**30  # pod-level resources replace the container sum


@pytest.mark.parametrize(
    ("operator", "values", "label", "matches"),
    [
        ("In", ["A100", "H100"], "H100", True),
        ("In", ["A100"], None, False),
        ("NotIn", ["V100"], None, True),
        ("NotIn", ["V100"], "V100", False),
        ("Exists", [], "x", True),
        ("DoesNotExist", [], "x", False),
        ("Gt", ["40959"], "40960", True),
        ("Gt", ["40959"], "40959", False),
        ("Gt", ["40959"], "40gb", False),
        ("Lt", ["10"], "9", True),
        ("Gt", ["0"], "1", True),
    ],
)
def test_node_affinity_operators(operator: str, values: list[str], label: str | None, matches: bool) -> None:
    node = Node("n", {} if label is None else {"k": label}, {})
    term = {"matchExpressions": [{"key": "k", "operator": operator, "values": values}]}
    spec = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    }
    assert (affinity_mismatch(spec, node) is None) is matches


SCHEDULER_FILTER_NODES = """\
- name: fits
  labels: {training.example.com/gpu-model: A100, training.example.com/gpu-memory-mib: '81920', topology.kubernetes.io/zone: us-east-1a}
  allocatable: {nvidia.com/gpu: 8, cpu: '64', memory: 512Gi}
  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
- name: prefer-no-schedule
  labels: {training.example.com/gpu-model: A100, training.example.com/gpu-memory-mib: '81920', topology.kubernetes.io/zone: us-east-1b}
  allocatable: {nvidia.com/gpu: 8, cpu: '64', memory: 512Gi}
  taints: [{key: spot, effect: PreferNoSchedule}]
- name: no-execute
  labels: {training.example.com/gpu-model: A100, training.example.com/gpu-memory-mib: '81920', topology.kubernetes.io/zone: us-east-1a}
  allocatable: {nvidia.com/gpu: 8, cpu: '64', memory: 512Gi}
  taints: [{key: nvidia.com/gpu, effect: NoSchedule}, {key: dedicated, value: inference, effect: NoExecute}]
- name: cordoned
  labels: {training.example.com/gpu-model: A100, training.example.com/gpu-memory-mib: '81920', topology.kubernetes.io/zone: us-east-1a}
  allocatable: {nvidia.com/gpu: 8, cpu: '64', memory: 512Gi}
  unschedulable: true
- name: other-zone
  labels: {training.example.com/gpu-model: A100, training.example.com/gpu-memory-mib: '81920', topology.kubernetes.io/zone: eu-west-1a}
  allocatable: {nvidia.com/gpu: 8, cpu: '64', memory: 512Gi}
- name: memory-short
  labels: {training.example.com/gpu-model: H100, training.example.com/gpu-memory-mib: '81920', topology.kubernetes.io/zone: us-east-1b}
  allocatable: {nvidia.com/gpu: 8, cpu: '64', memory: 64Gi}
  requested: {memory: 8Gi}
"""


def test_explain_gpu_applies_kube_schedulers_filters(gen: Callable[..., Run], tmp_path: Path) -> None:
    """The bundled training Job (policies/resnet-train.yaml) tolerates the nvidia.com/gpu taint,
    wants us-east-1a/b and requests 96Gi of memory with its 4 GPUs."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(SCHEDULER_FILTER_NODES)
    result = gen("explain", "gpu", "--workload", "resnet-train", "--nodes", nodes, "--format", "json", POLICIES)
    rows = {row["node"]: row for row in json.loads(result.out)["placements"]}
    assert result.code == 0, result.err
    assert rows["fits"]["feasible"] and rows["prefer-no-schedule"]["feasible"]  # PreferNoSchedule never filters
    assert rows["no-execute"]["reason"] == "TaintToleration: untolerated taint dedicated=inference:NoExecute"
    assert rows["cordoned"]["reason"] == "NodeUnschedulable: node is cordoned (spec.unschedulable)"
    assert rows["other-zone"]["reason"].startswith("NodeAffinity: label topology.kubernetes.io/zone='eu-west-1a'")
    assert rows["memory-short"]["reason"] == (
        "NodeResourcesFit: insufficient memory: needs 96Gi, 56Gi free (64Gi allocatable)"
    )


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, ("k", "v", "NoSchedule"), True),
        ({"key": "k", "value": "v"}, ("k", "v", "NoExecute"), True),  # empty effect: any; empty operator: Equal
        ({"key": "k", "value": "w"}, ("k", "v", "NoSchedule"), False),
        ({"key": "k", "operator": "Exists"}, ("k", "anything", "NoSchedule"), True),
        ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, ("k", "", "NoSchedule"), False),
        ({"operator": "Exists"}, ("any", "thing", "NoExecute"), True),  # empty key with Exists: every taint
        ({"key": "other", "operator": "Exists"}, ("k", "", "NoSchedule"), False),
        ({"key": "k", "operator": "Equal"}, ("k", "", "NoSchedule"), True),
    ],
)
def test_tolerations_match_as_kubernetes_matches_them(toleration: dict, taint: tuple, tolerated: bool) -> None:
    key, value, effect = taint
    assert gpu.tolerates(toleration, {"key": key, "value": value, "effect": effect}) is tolerated


@pytest.mark.parametrize(
    ("taints", "where"),
    [
        ("[{key: a, effect: NoSchedul}]", ":3:"),
        ("[{value: a, effect: NoSchedule}]", ":3:"),
        ("[{key: a, value: 1, effect: NoSchedule}]", ":3:"),
        ("{key: a}", ":3:"),
        ("[{key: a, effect: NoSchedule, toleration: x}]", ":3:"),
    ],
)
def test_malformed_taints_are_located(gen: Callable[..., Run], tmp_path: Path, taints: str, where: str) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(f"- name: a\n  allocatable: {{nvidia.com/gpu: 1}}\n  taints: {taints}\n")
    result = gen("explain", "gpu", "--workload", "gpu-reservation-demo", "--nodes", nodes, POLICIES)
    assert result.code == 1 and f"nodes.yaml{where}" in result.err and " inventory-invalid " in result.err, result.err


def test_a_node_without_a_free_pod_slot_is_full(gen: Callable[..., Run], tmp_path: Path) -> None:
    full, free = kube_node("full", "8"), kube_node("free", "8")
    full["status"]["allocatable"]["pods"] = "2"
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps(kube_list([kube_pod("full", 0), kube_pod("full", 1), kube_pod("free", 1)])))
    result, rows = explain(gen, tmp_path, kube_list([full, free]), "--pods", pods)
    assert rows["full"]["reason"] == "NodeResourcesFit: too many pods: all 2 taken"
    assert rows["free"]["feasible"] and result.code == 0


# --- each Pod as its scheduler places it: policies as a user writes them ---------------------

H100 = "{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, nvidia.com/gpu.memory: '81559'}"
TARGET = "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: prod}\nspec:\n  gpuLabels: nvidia-gfd\n"
GANG_SCHEDULER = """\
---
apiVersion: gen/v1alpha1
kind: Scheduler
metadata: {name: gpu-scheduler}
spec:
  namespace: gpu-scheduler
  image: registry.example.com/gpu-scheduler:v1.35.0
  outOfTreePlugins: [Coscheduling, GPUPacking]
  profiles:
  - schedulerName: gpu-scheduler
    plugins:
      multiPoint: {enabled: [{name: Coscheduling}]}
      queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: "*"}]}
      score: {enabled: [{name: GPUPacking, weight: 20}]}
"""
SERVICE = """\
---
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata: {name: inference}
spec:
  namespace: ml
  image: ghcr.io/example/vllm:0.9.1
  replicas: 2
  resources: {requests: {cpu: "4", memory: 32Gi}, limits: {memory: 32Gi}}
  gpu: {count: %d, models: [NVIDIA-H100-80GB-HBM3]}
  deletionCost: {initial: 0}
%s"""
GANG = """\
---
apiVersion: gen/v1alpha1
kind: GpuWorkload
metadata: {name: pretrain}
spec:
  namespace: ml
  workloadKind: Job
  schedulerName: gpu-scheduler
  job: {parallelism: 2, completions: 2, completionMode: Indexed}
  gang: {}
  gpu: {count: 8, models: [NVIDIA-H100-80GB-HBM3]}
  container:
    image: ghcr.io/example/pretrain:2026.12
    resources: {requests: {cpu: "32", memory: 512Gi}, limits: {memory: 512Gi}}
"""


def h100_nodes(*names: str, extra: str = "") -> str:
    return "".join(
        f"- name: {name}\n  labels: {H100}\n  allocatable: {{nvidia.com/gpu: 8, cpu: 96, memory: 1Ti{extra}}}\n"
        for name in names
    )


def explain_stack(gen: Callable[..., Run], tmp_path: Path, policies: str, nodes: str) -> tuple[Run, dict[str, Any]]:
    (tmp_path / "policies").mkdir(exist_ok=True)
    (tmp_path / "policies" / "stack.yaml").write_text(TARGET + policies)
    (tmp_path / "nodes.yaml").write_text(nodes)
    run = gen("explain", "gpu", "--nodes", tmp_path / "nodes.yaml", "--format", "json", tmp_path / "policies")
    return run, json.loads(run.out) if run.out else {}


def test_the_default_scheduler_spreads_a_gpu_service_so_the_gang_beside_it_stays_pending(
    gen: Callable[..., Run], tmp_path: Path
) -> None:
    # By hand (the default profile): the first replica ties everywhere and takes h100-a. The
    # second: PodTopologySpread's system hostname constraint (maxSkew 3) scores h100-a
    # round(1·ln(3+2) + 2) = 4 and the others 2, normalised 100·(4+2-4)/4 = 50 against 100
    # (weight 2); LeastAllocated gives h100-a 92 against 95. So h100-b: two nodes keep 7 GPUs,
    # and the 2 x 8-GPU gang finds one whole node.
    run, data = explain_stack(
        gen, tmp_path, GANG_SCHEDULER + SERVICE % (1, "") + GANG, h100_nodes("h100-a", "h100-b", "h100-c")
    )
    assert run.code == 1 and "gpu-capacity-together" in run.err, run.err
    inference = next(c for c in data["capacity"] if c["workload"] == "inference")
    assert inference["placed"] == [{"node": "h100-a", "replicas": 1}, {"node": "h100-b", "replicas": 1}]
    row = next(r for r in data["placements"] if r["workload"] == "inference" and r["node"] == "h100-a")
    assert "GPUPacking" not in row["plugins"] and row["plugins"]["PodTopologySpread"] == 100
    assert row["score"] == 3 * 100 + 2 * 0 + 2 * 100 + 95 + 99  # Taint, NodeAffinity, Spread, Fit, Balanced
    pretrain = next(t for t in data["together"] if t["workload"] == "pretrain")
    assert pretrain["fit_floor"] == 0


def test_a_profile_that_packs_places_the_service_on_one_node_and_the_gang_fits(
    gen: Callable[..., Run], tmp_path: Path
) -> None:
    # gpu-scheduler's profile adds GPUPacking at 20: for the second replica h100-a (6 GPUs left,
    # 40·20) beats h100-b (7 left, 30·20) by 200, more than spreading's 100 and LeastAllocated's 4
    service = SERVICE % (1, "  schedulerName: gpu-scheduler\n")
    run, data = explain_stack(gen, tmp_path, GANG_SCHEDULER + service + GANG, h100_nodes("h100-a", "h100-b", "h100-c"))
    assert run.code == 0, run.err
    inference = next(c for c in data["capacity"] if c["workload"] == "inference")
    assert inference["placed"] == [{"node": "h100-a", "replicas": 2}]
    assert all(t["fit_floor"] == t["floor"] for t in data["together"])


def test_every_requested_resource_is_filtered_by_name(gen: Callable[..., Run], tmp_path: Path) -> None:
    pod = """\
---
apiVersion: gen/v1alpha1
kind: GpuWorkload
metadata: {name: nccl-test}
spec:
  namespace: ml
  gpu: {count: 8, models: [NVIDIA-H100-80GB-HBM3]}
  container:
    image: ghcr.io/example/nccl-tests:2.13
    resources:
      requests: {cpu: "8", memory: 64Gi, hugepages-2Mi: 2Gi, ephemeral-storage: 100Gi, vpc.amazonaws.com/efa: 32}
      limits: {memory: 64Gi, hugepages-2Mi: 2Gi, vpc.amazonaws.com/efa: 32}
"""
    nodes = (
        h100_nodes("p5", extra=", vpc.amazonaws.com/efa: 32, hugepages-2Mi: 4Gi, ephemeral-storage: 3Ti")
        + h100_nodes("no-efa", extra=", hugepages-2Mi: 4Gi, ephemeral-storage: 3Ti")
        + h100_nodes("few-pages", extra=", vpc.amazonaws.com/efa: 32, hugepages-2Mi: 1Gi, ephemeral-storage: 3Ti")
        + h100_nodes("small-disk", extra=", vpc.amazonaws.com/efa: 32, hugepages-2Mi: 4Gi, ephemeral-storage: 50Gi")
    )
    run, data = explain_stack(gen, tmp_path, pod, nodes)
    rows = {r["node"]: r for r in data["placements"]}
    assert run.code == 0 and rows["p5"]["feasible"], run.err
    assert (
        rows["no-efa"]["reason"] == "NodeResourcesFit: insufficient vpc.amazonaws.com/efa: needs 32, the node has none"
    )
    assert rows["few-pages"]["reason"] == (
        "NodeResourcesFit: insufficient hugepages-2Mi: needs 2Gi, 1Gi free (1Gi allocatable)"
    )
    assert rows["small-disk"]["reason"] == (
        "NodeResourcesFit: insufficient ephemeral-storage: needs 100Gi, 50Gi free (50Gi allocatable)"
    )


def test_a_rolling_update_whose_surge_the_inventory_lacks_is_a_warning(gen: Callable[..., Run], tmp_path: Path) -> None:
    # replicas 2, maxSurge 25% rounded up: the update adds one 8-GPU Pod before removing one
    run, data = explain_stack(gen, tmp_path, SERVICE % (8, ""), h100_nodes("h100-a", "h100-b"))
    assert run.code == 0 and (data["capacity"][0]["surge"], data["capacity"][0]["fit_surge"]) == (1, 0)
    assert re.search(r"stack\.yaml:\d+:\d+: warning gpu-rollout-surge a rolling update adds 1 Pod of 8 nvidia", run.err)
    run, _ = explain_stack(gen, tmp_path, SERVICE % (8, ""), h100_nodes("h100-a", "h100-b", "h100-c"))
    assert run.code == 0 and "gpu-rollout-surge" not in run.err


def test_a_scheduler_profile_scores_with_the_plugins_kube_scheduler_builds_from_it() -> None:
    from generator.kube.scheduler_config import score_weights

    default = {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "DynamicResources": 1,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert score_weights({}) == default
    # an out-of-tree plugin added at score joins the defaults
    assert score_weights({"plugins": {"score": {"enabled": [{"name": "GPUPacking", "weight": 10}]}}}) == {
        **default,
        "GPUPacking": 10,
    }
    # a default re-enabled at score keeps the new weight; one disabled there is gone
    score = {"enabled": [{"name": "NodeResourcesFit", "weight": 5}], "disabled": [{"name": "PodTopologySpread"}]}
    got = score_weights({"plugins": {"score": score}})
    assert got["NodeResourcesFit"] == 5 and "PodTopologySpread" not in got
    # `*` disabled at score leaves only what the score set enables; weight 0 is 1
    only = {"score": {"enabled": [{"name": "GPUPacking", "weight": 0}], "disabled": [{"name": "*"}]}}
    assert score_weights({"plugins": only}) == {"GPUPacking": 1}
    # `*` disabled at multiPoint drops every default; a plugin that does not score adds nothing
    multi = {"multiPoint": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}
    assert score_weights({"plugins": multi}) == {}


def test_most_allocated_on_gpus_packs_where_the_default_profile_spreads(
    gen: Callable[..., Run], tmp_path: Path
) -> None:
    # gpu-2 already runs 6 GPUs' Pods (48 CPU). Default profile, for a 1-GPU 4-CPU replica:
    # LeastAllocated gpu-1 (95 cpu, 96 memory) 95 against gpu-2 (45, 96) 70, BalancedAllocation
    # 99 against 74: gpu-1. The bin-packer profile's MostAllocated (gpu 5, cpu 1, memory 1):
    # gpu-2 (87·5 + 54 + 3)/7 = 70 against gpu-1 (12·5 + 4 + 3)/7 = 9, 61 ahead of the 25 it
    # loses on balance: gpu-2.
    packer = """\
---
apiVersion: gen/v1alpha1
kind: Scheduler
metadata: {name: bin-packer}
spec:
  namespace: bin-packer
  image: registry.k8s.io/kube-scheduler:v1.35.0
  profiles:
  - schedulerName: bin-packer
    pluginConfig:
    - name: NodeResourcesFit
      args:
        scoringStrategy:
          type: MostAllocated
          resources: [{name: nvidia.com/gpu, weight: 5}, {name: cpu, weight: 1}, {name: memory, weight: 1}]
"""
    nodes = (
        f"- name: gpu-1\n  labels: {H100}\n  allocatable: {{nvidia.com/gpu: 8, cpu: 96, memory: 1Ti}}\n"
        f"- name: gpu-2\n  labels: {H100}\n  allocatable: {{nvidia.com/gpu: 8, cpu: 96, memory: 1Ti}}\n"
        "  requested: {nvidia.com/gpu: 6, cpu: 48}\n"
    )
    service = (SERVICE % (1, "")).replace("replicas: 2", "replicas: 1")
    run, data = explain_stack(gen, tmp_path, service, nodes)
    assert run.code == 0, run.err
    assert data["capacity"][0]["placed"] == [{"node": "gpu-1", "replicas": 1}]
    rows = {r["node"]: r["plugins"] for r in data["placements"]}
    assert (rows["gpu-1"]["NodeResourcesFit"], rows["gpu-2"]["NodeResourcesFit"]) == (95, 70)
    run, data = explain_stack(
        gen, tmp_path, packer + service.replace("  deletionCost", "  schedulerName: bin-packer\n  deletionCost"), nodes
    )
    assert run.code == 0, run.err
    assert data["capacity"][0]["placed"] == [{"node": "gpu-2", "replicas": 1}]
    rows = {r["node"]: r["plugins"] for r in data["placements"]}
    assert (rows["gpu-1"]["NodeResourcesFit"], rows["gpu-2"]["NodeResourcesFit"]) == (9, 70)


def test_preferred_anti_affinity_outweighs_packing(gen: Callable[..., Run], tmp_path: Path) -> None:
    # As the packing test, with spreadAcrossNodes: preferred (anti-affinity, weight 100). For the
    # second replica InterPodAffinity scores h100-a 2·(-100) = -200 (its term and the first
    # replica's), the others 0: normalised 0 against 100, weight 2. GPUPacking's 200 for h100-a
    # is met by InterPodAffinity's 200 and spreading's 100: h100-b.
    service = SERVICE % (1, "  schedulerName: gpu-scheduler\n  placement: {spreadAcrossNodes: preferred}\n")
    run, data = explain_stack(gen, tmp_path, GANG_SCHEDULER + service, h100_nodes("h100-a", "h100-b", "h100-c"))
    assert run.code == 0, run.err
    assert data["capacity"][0]["placed"] == [{"node": "h100-a", "replicas": 1}, {"node": "h100-b", "replicas": 1}]


def test_a_zone_spread_that_does_not_schedule_leaves_replicas_pending(gen: Callable[..., Run], tmp_path: Path) -> None:
    # 4-GPU replicas, maxSkew 1 over zones: a1 (zone a, ties by name), then zone b's b1 (a would
    # be 2 above b), then a2 (1 above b is allowed), then nothing: zone a is 1 ahead and b1 is full.
    nodes = "".join(
        f"- name: {name}\n  labels: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, topology.kubernetes.io/zone: {zone}}}\n"
        f"  allocatable: {{nvidia.com/gpu: {gpus}, cpu: 96, memory: 1Ti}}\n"
        for name, zone, gpus in (("a1", "a", 8), ("a2", "a", 8), ("b1", "b", 4))
    )
    spread = "  placement: {zoneSpread: {maxSkew: 1, whenUnsatisfiable: DoNotSchedule}}\n"
    service = (SERVICE % (4, spread)).replace("replicas: 2", "replicas: 4")
    run, data = explain_stack(gen, tmp_path, service, nodes)
    assert run.code == 1 and "only 3 of the 4 replicas it always runs fit" in run.err, run.err
    assert data["capacity"][0]["placed"] == [
        {"node": "a1", "replicas": 1},
        {"node": "a2", "replicas": 1},
        {"node": "b1", "replicas": 1},
    ]
    run, data = explain_stack(gen, tmp_path, service.replace("DoNotSchedule", "ScheduleAnyway"), nodes)
    assert run.code == 0, run.err


def test_pods_without_requests_count_as_the_scheduler_counts_them(gen: Callable[..., Run], tmp_path: Path) -> None:
    # 50 best-effort Pods on busy: NonZeroRequested counts 100m and 200Mi each, so LeastAllocated
    # reads cpu (95690 - 5000 - 100)·100/95690 = 94 and memory (1056762 - 10000 - 64)·100/1056762
    # = 99 there (96), against 99 and 99 on idle; BalancedAllocation reads the requests as given
    nodes = kube_list([kube_node("idle", "8"), kube_node("busy", "8")])
    pods_path = tmp_path / "pods.json"
    pods_path.write_text(json.dumps(kube_list([kube_pod("busy", 0) for _ in range(50)])))
    result, rows = explain(gen, tmp_path, nodes, "--pods", pods_path)
    assert result.code == 0, result.err
    assert (rows["idle"]["plugins"]["NodeResourcesFit"], rows["busy"]["plugins"]["NodeResourcesFit"]) == (99, 96)
    balanced = rows["idle"]["plugins"]["NodeResourcesBalancedAllocation"]
    assert rows["busy"]["plugins"]["NodeResourcesBalancedAllocation"] == balanced


def test_a_profile_that_lists_its_own_default_spread_constraints(gen: Callable[..., Run], tmp_path: Path) -> None:
    # The profile's PodTopologySpread args replace the system defaults with one DoNotSchedule zone
    # constraint (defaultingType List): the ReplicaSet's Pods are held to it though the policy
    # sets no spread. a1 (ties by name), then b1 (zone a would be 2 ahead), then a2, then none.
    zoned = """\
---
apiVersion: gen/v1alpha1
kind: Scheduler
metadata: {name: zoned}
spec:
  namespace: zoned
  image: registry.k8s.io/kube-scheduler:v1.35.0
  profiles:
  - schedulerName: zoned
    pluginConfig:
    - name: PodTopologySpread
      args:
        defaultingType: List
        defaultConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
"""
    nodes = "".join(
        f"- name: {name}\n  labels: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, topology.kubernetes.io/zone: {zone}}}\n"
        f"  allocatable: {{nvidia.com/gpu: {gpus}, cpu: 96, memory: 1Ti}}\n"
        for name, zone, gpus in (("a1", "a", 8), ("a2", "a", 8), ("b1", "b", 1))
    )
    service = (SERVICE % (1, "  schedulerName: zoned\n")).replace("replicas: 2", "replicas: 4")
    run, data = explain_stack(gen, tmp_path, zoned + service, nodes)
    assert run.code == 1 and "only 3 of the 4 replicas it always runs fit" in run.err, run.err
    assert [p["node"] for p in data["capacity"][0]["placed"]] == ["a1", "a2", "b1"]
    assert all("PodTopologySpread" not in r["plugins"] for r in data["placements"])  # no ScheduleAnyway left
    run, data = explain_stack(
        gen, tmp_path, zoned + service.replace("schedulerName: zoned", "schedulerName: default-scheduler"), nodes
    )
    assert run.code == 0, run.err
