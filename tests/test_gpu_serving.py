"""GPU serving and distributed training (SPEC §11): GPU services, GPU Feature Discovery labels,
gangs on the secondary scheduler, headless Services, and capacity previews checked by hand."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.preview import gpu
from tests.conftest import POLICIES

SCHEDULER = (POLICIES / "scheduler.yaml").read_text()
SERVICE = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata:
  name: infer
spec:
  namespace: ai
  schedulerName: custom-scheduler
  image: ghcr.io/example/llm:1.0.0
  gpu: {count: 2, models: [A100]}
  resources:
    requests: {cpu: "4", memory: 16Gi}
  autoscaling:
    minReplicas: 2
    maxReplicas: 4
    metrics:
    - type: Pods
      pods: {metric: {name: queue}, target: {type: AverageValue, averageValue: "3"}}
"""
GANG = """\
apiVersion: gen/v1alpha1
kind: GpuWorkload
metadata:
  name: ranks
spec:
  namespace: ml
  workloadKind: Job
  schedulerName: custom-scheduler
  restartPolicy: Never
  job: {completionMode: Indexed, completions: 4, parallelism: 4}
  gang: {scheduleTimeoutSeconds: 300}
  service: {}
  gpu: {count: 4, models: [H100]}
  container: {image: 'ghcr.io/example/train:1.0.0'}
"""


def repo(tmp_path: Path, **files: str) -> Path:
    root = tmp_path / "policies"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / f"{name}.yaml").write_text(text)
    return root


def _docs(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _render(gen, tmp_path: Path, **files: str) -> Path:
    run = gen("render", repo(tmp_path, **files), "--out", tmp_path / "out", "--strict")
    assert run.code == 0, run.err
    return tmp_path / "out" / "default"


# ---- GPU services ---------------------------------------------------------------------


def test_a_gpu_service_keeps_the_gpu_guarantees_and_its_cost(gen, tmp_path: Path) -> None:
    out = _render(gen, tmp_path, scheduler=SCHEDULER, infer=SERVICE)
    deployment = _docs(out / "ai" / "deployment-infer.yaml")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["schedulerName"] == "custom-scheduler"
    resources = pod["containers"][0]["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == 2
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "training.example.com/gpu-model", "operator": "In", "values": ["A100"]}]}
    ]
    assert "controller.kubernetes.io/pod-deletion-cost" in deployment["spec"]["template"]["metadata"]["annotations"]
    assert "replicas" not in deployment["spec"]
    assert _docs(out / "ai" / "horizontalpodautoscaler-infer.yaml")["spec"]["maxReplicas"] == 4


def test_a_gpu_services_own_required_terms_are_anded_with_the_gpus(gen, tmp_path: Path) -> None:
    extra = (
        "  pod:\n    affinity:\n      nodeAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
        "          nodeSelectorTerms:\n          - matchExpressions: [{key: zone, operator: In, values: [a]}]\n"
        "          - matchExpressions: [{key: zone, operator: In, values: [b]}]\n"
    )
    out = _render(gen, tmp_path, scheduler=SCHEDULER, infer=SERVICE + extra)
    pod = _docs(out / "ai" / "deployment-infer.yaml")["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert [[e["key"] for e in t["matchExpressions"]] for t in terms] == [
        ["training.example.com/gpu-model", "zone"],
        ["training.example.com/gpu-model", "zone"],
    ]


# (case, policy text, rule, line)
SERVICE_BAD = [
    ("gpu-count-zero", SERVICE.replace("count: 2", "count: 0"), "policy-schema", 9),
    (
        "unknown-scheduler",
        SERVICE.replace("schedulerName: custom-scheduler", "schedulerName: gpu-sched"),
        "gpu-scheduler-name",
        7,
    ),
    (
        "gpu-in-resources-too",
        SERVICE.replace('requests: {cpu: "4", memory: 16Gi}', 'requests: {cpu: "4", nvidia.com/gpu: 2}'),
        "gpu-resource-duplicate",
        11,
    ),
    (
        "patch-on-the-gpu-affinity",
        SERVICE
        + "  patches:\n  - patch:\n    - {op: remove, path: /spec/template/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution}\n",
        "patch-guarded",
        20,
    ),
]


@pytest.mark.parametrize(("case", "text", "rule", "line"), SERVICE_BAD, ids=[c[0] for c in SERVICE_BAD])
def test_gpu_service_bad_case(gen, tmp_path: Path, monkeypatch, case, text, rule, line) -> None:
    repo(tmp_path, scheduler=SCHEDULER, infer=text)
    monkeypatch.chdir(tmp_path)
    run = gen("render", "policies", "--out", "out")
    assert run.code == 1
    assert re.search(rf"^policies/infer.yaml:{line}:\d+: error {rule} ", run.err, re.M), run.err
    assert not (tmp_path / "out").exists()


# ---- GPU Feature Discovery labels: preset, target default, policy override --------------

TARGET = "apiVersion: gen/v1alpha1\nkind: Target\nmetadata:\n  name: prod\nspec:\n"


def _memory_and_model_keys(out: Path) -> list[str]:
    pod = _docs(out / "ai" / "deployment-infer.yaml")["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return [e["key"] for e in terms[0]["matchExpressions"]]


@pytest.mark.parametrize(
    ("target", "policy", "keys"),
    [
        ("", "", ["training.example.com/gpu-model", "training.example.com/gpu-memory-mib"]),
        ("  gpuLabels: nvidia-gfd\n", "", ["nvidia.com/gpu.product", "nvidia.com/gpu.memory"]),
        ("  gpuLabels: {model: lab/model}\n", "", ["lab/model", "training.example.com/gpu-memory-mib"]),
        (
            "  gpuLabels: {model: lab/model}\n",
            "labels: nvidia-gfd, ",
            ["nvidia.com/gpu.product", "nvidia.com/gpu.memory"],
        ),
        ("  gpuLabels: nvidia-gfd\n", "labels: {memoryMiB: lab/mem}, ", ["nvidia.com/gpu.product", "lab/mem"]),
    ],
    ids=["built-in", "target-preset", "target-mapping", "policy-preset-wins", "policy-field-over-target-preset"],
)
def test_gpu_label_precedence(gen, tmp_path: Path, target: str, policy: str, keys: list[str]) -> None:
    # GPU Feature Discovery's labels take its product names; the others any value
    model = "NVIDIA-A100-SXM4-80GB" if keys[0] == "nvidia.com/gpu.product" else "A100"
    service = SERVICE.replace(
        "gpu: {count: 2, models: [A100]}",
        f"gpu: {{{policy}count: 2, models: [{model}], minMemoryMiB: 40960}}",
    )
    out = _render(
        gen, tmp_path, scheduler=SCHEDULER, infer=service, target=TARGET + (target or "  createNamespaces: true\n")
    )
    assert _memory_and_model_keys(out.parent / "prod") == keys


def test_an_unknown_label_preset_is_located(gen, tmp_path: Path, monkeypatch) -> None:
    repo(tmp_path, scheduler=SCHEDULER, target=TARGET + "  gpuLabels: gfd\n")
    monkeypatch.chdir(tmp_path)
    run = gen("lint", "policies")
    assert run.code == 1 and "policies/target.yaml:6:" in run.out


# ---- gangs and headless Services --------------------------------------------------------


def test_a_gang_renders_a_pod_group_labelled_pods_and_a_headless_service(gen, tmp_path: Path) -> None:
    out = _render(gen, tmp_path, scheduler=SCHEDULER, ranks=GANG)
    group = _docs(out / "ml" / "podgroup-ranks.yaml")
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert group["spec"] == {"minMember": 4, "scheduleTimeoutSeconds": 300}
    template = _docs(out / "ml" / "job-ranks.yaml")["spec"]["template"]
    assert template["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "ranks"
    assert template["spec"]["subdomain"] == "ranks"
    service = _docs(out / "ml" / "service-ranks.yaml")["spec"]
    assert service == {"clusterIP": "None", "publishNotReadyAddresses": True, "selector": {"app": "ranks"}}
    role = _docs(out / "_cluster" / "clusterrole-custom-scheduler-podgroups.yaml")
    assert {r["resources"][0] for r in role["rules"]} == {"podgroups", "podgroups/status"}


def test_a_scheduler_without_coscheduling_gets_no_pod_group_rbac(gen, tmp_path: Path) -> None:
    plain = SCHEDULER.replace("[GPUPacking, Coscheduling]", "[GPUPacking]")
    start, end = plain.index("      multiPoint:"), plain.index("      score:")
    out = _render(gen, tmp_path, scheduler=plain[:start] + plain[end:])
    assert not (out / "_cluster" / "clusterrole-custom-scheduler-podgroups.yaml").exists()


PLAIN_SCHEDULER = SCHEDULER.replace("[GPUPacking, Coscheduling]", "[GPUPacking]")
NO_COSCHEDULING = (
    PLAIN_SCHEDULER[: PLAIN_SCHEDULER.index("      multiPoint:")]
    + PLAIN_SCHEDULER[PLAIN_SCHEDULER.index("      score:") :]
)

GANG_BAD = [
    (
        "gang-on-a-pod",
        GANG.replace("workloadKind: Job", "workloadKind: Pod").replace(
            "  job: {completionMode: Indexed, completions: 4, parallelism: 4}\n", ""
        ),
        SCHEDULER,
        10,
    ),
    ("parallelism-one", GANG.replace("parallelism: 4}", "parallelism: 1}"), SCHEDULER, 11),
    (
        "min-member-above-parallelism",
        GANG.replace("gang: {scheduleTimeoutSeconds: 300}", "gang: {minMember: 5}"),
        SCHEDULER,
        11,
    ),
    (
        "default-scheduler",
        GANG.replace("schedulerName: custom-scheduler", "schedulerName: default-scheduler"),
        SCHEDULER,
        8,
    ),
    ("profile-without-coscheduling", GANG, NO_COSCHEDULING, 8),
]


@pytest.mark.parametrize(("case", "text", "scheduler", "line"), GANG_BAD, ids=[c[0] for c in GANG_BAD])
def test_gang_bad_case(gen, tmp_path: Path, monkeypatch, case, text, scheduler, line) -> None:
    repo(tmp_path, scheduler=scheduler, ranks=text)
    monkeypatch.chdir(tmp_path)
    run = gen("render", "policies", "--out", "out")
    assert run.code == 1
    assert re.search(rf"^policies/ranks.yaml:{line}:\d+: error gpu-gang ", run.err, re.M), run.err


def test_a_scheduler_that_enables_but_does_not_declare_coscheduling(gen, tmp_path: Path, monkeypatch) -> None:
    repo(tmp_path, scheduler=PLAIN_SCHEDULER, ranks=GANG)
    monkeypatch.chdir(tmp_path)
    run = gen("render", "policies", "--out", "out")
    assert run.code == 1
    assert "policies/ranks.yaml:8:" in run.err and "does not list Coscheduling in outOfTreePlugins" in run.err
    assert " scheduler-out-of-tree Coscheduling is enabled but not listed" in run.err


def test_profiles_with_different_queue_sorts_are_refused(gen, tmp_path: Path, monkeypatch) -> None:
    second = SCHEDULER.replace("  metrics:\n", "  - schedulerName: plain\n  metrics:\n", 1)
    repo(tmp_path, scheduler=second)
    monkeypatch.chdir(tmp_path)
    run = gen("lint", "policies")
    assert run.code == 1 and "queueSort must be the same for all profiles" in run.out


# ---- capacity previews, computed by hand ---------------------------------------------------


def node(name: str, free: int, total: int = 8, model: str = "A100", **extra: object) -> dict:
    entry = {
        "name": name,
        "labels": {"training.example.com/gpu-model": model},
        "allocatable": {"nvidia.com/gpu": total, "cpu": 96, "memory": "1Ti", **extra.get("allocatable", {})},
        "requested": {"nvidia.com/gpu": total - free},
    }
    return entry


def _explain(gen, tmp_path: Path, nodes: list[dict], **files: str) -> tuple[int, dict, str]:
    path = tmp_path / "nodes.yaml"
    path.write_text(yaml.safe_dump(nodes))
    run = gen("explain", "gpu", "--nodes", path, "--format", "json", repo(tmp_path, scheduler=SCHEDULER, **files))
    data = json.loads(run.out) if run.out else {}
    return run.code, {c["workload"]: c for c in data.get("capacity", [])}, run.err


# Each GPU service replica needs 2 GPUs; floor 2, ceiling 4 (the HPA's bounds).
# GPUPacking: 100 - 10 * (GPUs left after placing); ties by node name.
CAPACITY = [
    # a: 3 free -> 1 left (90), b: 8 free -> 6 left (40). 1st on a (a: 1 free), 2nd on b (b: 6), 3rd b (4), 4th b (2).
    (
        "fits",
        [node("a", 3), node("b", 8)],
        SERVICE,
        0,
        {"placed": [{"node": "a", "replicas": 1}, {"node": "b", "replicas": 1}], "fit_floor": 2, "fit_ceiling": 4},
    ),
    # 2 + 2 + 1 free: a takes 1 (0 left, 100), b takes 1, c holds none: 2 of max 4.
    (
        "ceiling-short",
        [node("a", 2), node("b", 2), node("c", 1)],
        SERVICE,
        0,
        {"placed": [{"node": "a", "replicas": 1}, {"node": "b", "replicas": 1}], "fit_floor": 2, "fit_ceiling": 2},
    ),
    # only a holds one replica: the floor of 2 is short by one.
    (
        "floor-short",
        [node("a", 3), node("b", 1)],
        SERVICE,
        1,
        {"placed": [{"node": "a", "replicas": 1}], "fit_floor": 1, "fit_ceiling": 1},
    ),
    # required spread: one replica per node even where GPUs would hold two; 3 nodes -> ceiling 3 of 4.
    (
        "required-spread",
        [node("a", 8), node("b", 8), node("c", 8)],
        SERVICE + "  placement: {spreadAcrossNodes: required}\n",
        0,
        {"placed": [{"node": "a", "replicas": 1}, {"node": "b", "replicas": 1}], "fit_floor": 2, "fit_ceiling": 3},
    ),
]


@pytest.mark.parametrize(("case", "nodes", "text", "code", "expected"), CAPACITY, ids=[c[0] for c in CAPACITY])
def test_service_capacity_table(gen, tmp_path: Path, case, nodes, text, code, expected) -> None:
    got, capacity, err = _explain(gen, tmp_path, nodes, infer=text)
    assert got == code, err
    fit = capacity["infer"]
    assert (fit["kind"], fit["floor"], fit["ceiling"]) == ("ReplicatedService", 2, 4)
    assert {k: fit[k] for k in expected} == expected
    if case == "floor-short":
        assert "policies/infer.yaml:13:" in err and " gpu-capacity " in err
    if case == "ceiling-short":
        assert " warning gpu-capacity-ceiling " in err


GANG_NODES = [node("h1", 8, model="H100"), node("h2", 4, model="H100"), node("h3", 4, model="H100"), node("a", 8)]


def test_a_gang_that_fits_is_placed_member_by_member(gen, tmp_path: Path) -> None:
    # 4 GPUs each: h2 (0 left: 100) first, then h3 (100), then h1 twice (4 left: 60, then 0 left: 100).
    code, capacity, err = _explain(gen, tmp_path, GANG_NODES, ranks=GANG)
    assert code == 0, err
    assert capacity["ranks"]["placed"] == [
        {"node": "h1", "replicas": 2},
        {"node": "h2", "replicas": 1},
        {"node": "h3", "replicas": 1},
    ]
    assert capacity["ranks"]["fit_floor"] == 4


def test_a_gang_short_by_one_starts_no_member(gen, tmp_path: Path) -> None:
    nodes = [*GANG_NODES[:2], node("h3", 3, model="H100"), GANG_NODES[3]]  # h3 can no longer hold 4
    code, capacity, err = _explain(gen, tmp_path, nodes, ranks=GANG)
    assert code == 1
    assert capacity["ranks"]["fit_floor"] == 3
    assert "policies/ranks.yaml:11:" in err and "the gang of 4 cannot start: only 3 members fit" in err


def test_the_text_report_says_how_many_fit(gen, tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(yaml.safe_dump([node("a", 2), node("b", 2), node("c", 1)]))
    run = gen("explain", "gpu", "--nodes", path, repo(tmp_path, scheduler=SCHEDULER, infer=SERVICE))
    assert "infer: min 2 placed (a ×1, b ×1); max 4: 2 fit — 2 replicas would stay Pending" in run.out


def test_gfd_naming_hint_in_the_affinity_reason(gen, tmp_path: Path) -> None:
    full = node("a", 8)
    full["labels"] = {"training.example.com/gpu-model": "NVIDIA-A100-SXM4-80GB"}
    shared = node("b", 8)
    shared["labels"] = {"training.example.com/gpu-model": "A100-SHARED"}
    path = tmp_path / "nodes.yaml"
    path.write_text(yaml.safe_dump([full, shared]))
    run = gen("explain", "gpu", "--nodes", path, "--format", "json", repo(tmp_path, scheduler=SCHEDULER, infer=SERVICE))
    reasons = {row["node"]: row["reason"] for row in json.loads(run.out)["placements"]}
    assert "names the full product: list 'NVIDIA-A100-SXM4-80GB', not 'A100'" in reasons["a"]
    assert "marks time-sliced GPUs -SHARED: list 'A100-SHARED'" in reasons["b"]


# ---- the placement never takes more than a node has -----------------------------------------

resources = st.fixed_dictionaries(
    {"gpus": st.integers(0, 8), "cpu": st.integers(0, 64), "memory": st.integers(0, 512), "pods": st.integers(0, 4)}
)


@settings(max_examples=200, deadline=None)
@given(
    free=st.lists(resources, min_size=1, max_size=6),
    want=st.fixed_dictionaries({"gpus": st.integers(0, 4), "cpu": st.integers(0, 16), "memory": st.integers(0, 64)}),
    count=st.integers(1, 12),
    one_per_node=st.booleans(),
)
def test_placement_never_exceeds_any_nodes_free_resources(free, want, count, one_per_node) -> None:
    nodes = [
        gpu.Node(
            f"n{i}",
            {},
            {"nvidia.com/gpu": Decimal(8), "cpu": Decimal(64), "memory": Decimal(512), "pods": Decimal(110)},
            {
                "nvidia.com/gpu": Decimal(8 - f["gpus"]),
                "cpu": Decimal(64 - f["cpu"]),
                "memory": Decimal(512 - f["memory"]),
                "pods": Decimal(110 - f["pods"]),
            },
        )
        for i, f in enumerate(free)
    ]
    container = {
        "resources": {"requests": {"nvidia.com/gpu": want["gpus"], "cpu": want["cpu"], "memory": want["memory"]}}
    }
    pod = gpu.GpuPod("w", "nvidia.com/gpu", {"containers": [container]}, one_per_node=one_per_node)
    placed = gpu.Pool(nodes).place(pod, [n.name for n in nodes], count)
    assert len(placed) <= count
    for i, f in enumerate(free):
        here = placed.count(f"n{i}")
        assert here * want["gpus"] <= f["gpus"]
        assert here * want["cpu"] <= f["cpu"]
        assert here * want["memory"] <= f["memory"]
        assert here <= f["pods"]
        assert not one_per_node or here <= 1
    if len(placed) < count:  # it stopped because the next Pod fits nowhere
        left = [
            (f["gpus"] - placed.count(f"n{i}") * want["gpus"], f["cpu"] - placed.count(f"n{i}") * want["cpu"])
            for i, f in enumerate(free)
        ]
        assert not any(
            g >= want["gpus"]
            and c >= want["cpu"]
            and f["memory"] - placed.count(f"n{i}") * want["memory"] >= want["memory"]
            and f["pods"] - placed.count(f"n{i}") >= 1
            and not (one_per_node and f"n{i}" in placed)
            for i, ((g, c), f) in enumerate(zip(left, free, strict=True))
        )


@pytest.mark.parametrize(
    ("model", "ok"),
    [
        ("NVIDIA-A100-SXM4-80GB", True),
        ("Tesla-T4", True),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", True),
        ("NVIDIA-L4-SHARED", True),
        ("A100", False),
        ("NVIDIA-A100-SXM4-80G", False),
        ("NVIDIA-A100-SXM4-80GB-MIG-1g.5gb", False),  # a 40 GB profile on an 80 GB card
    ],
)
def test_gfd_product_names(gen, tmp_path: Path, model: str, ok: bool) -> None:
    service = SERVICE.replace(
        "gpu: {count: 2, models: [A100]}", f"gpu: {{count: 2, models: [{model}], labels: nvidia-gfd}}"
    )
    repo(tmp_path, scheduler=SCHEDULER, infer=service, target=TARGET + "  createNamespaces: true\n")
    run = gen("lint", tmp_path / "policies")
    assert (" gpu-model-name " not in run.out) is ok, run.out
    if model == "A100":
        assert "infer.yaml:9:" in run.out and "did you mean 'NVIDIA-A100-80GB-PCIe' or" in run.out
        rendered = gen("render", tmp_path / "policies", "--out", tmp_path / "out")
        assert rendered.code == 1 and " gpu-model-name " in rendered.err
