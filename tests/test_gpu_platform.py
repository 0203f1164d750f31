"""The GPU platform as GPU teams run it: every target side by side, workloads placed together,
quantities in people's units, inventories that say too little."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.conftest import ROOT

TOGETHER = ROOT / "tests" / "data" / "together"


def test_the_guide_together_example_prints_what_the_guide_says(gen, tmp_path: Path, monkeypatch) -> None:
    shown = re.search(
        r"```\n\$ gen explain gpu --nodes nodes.yaml policies\n(together.*?)\n```",
        (ROOT / "docs" / "gpu.md").read_text(),
        re.S,
    )
    assert shown
    (tmp_path / "policies").mkdir()
    shutil.copy(TOGETHER / "stack.yaml", tmp_path / "policies" / "stack.yaml")
    shutil.copy(TOGETHER / "nodes.yaml", tmp_path / "nodes.yaml")
    monkeypatch.chdir(tmp_path)
    run = gen("explain", "gpu", "--nodes", "nodes.yaml", "policies")
    assert run.code == 1 and run.out.endswith(shown[1] + "\n")
    assert (
        "policies/stack.yaml:51:3: error gpu-capacity-together target 'prod': its floor of 4 fits the inventory alone"
        in run.err
    )
    assert "placed after inference" in run.err
    data = json.loads(gen("explain", "gpu", "--nodes", "nodes.yaml", "policies", "--format", "json").out)
    assert data["together"] == [
        {"target": "prod", "workload": "inference", "floor": 2, "fit_floor": 2, "ceiling": 6, "fit_ceiling": 6},
        {"target": "prod", "workload": "pretrain", "floor": 4, "fit_floor": 0, "ceiling": 4, "fit_ceiling": 0},
    ]


def test_together_fits_when_there_is_room(gen, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "policies").mkdir()
    shutil.copy(TOGETHER / "stack.yaml", tmp_path / "policies" / "stack.yaml")
    nodes = (TOGETHER / "nodes.yaml").read_text()
    node = nodes.split("- name: h100-b")[0]
    # the inference service has no schedulerName: the default scheduler spreads its two replicas
    # over two nodes (LeastAllocated, PodTopologySpread), so one spare node is not enough
    (tmp_path / "nodes.yaml").write_text(nodes + node.replace("h100-a", "h100-e"))
    monkeypatch.chdir(tmp_path)
    run = gen("explain", "gpu", "--nodes", "nodes.yaml", "policies")
    assert run.code == 1 and "prod: pretrain: floor 0/4" in run.out and "gpu-capacity-together" in run.err
    (tmp_path / "nodes.yaml").write_text(nodes + node.replace("h100-a", "h100-e") + node.replace("h100-a", "h100-f"))
    run = gen("explain", "gpu", "--nodes", "nodes.yaml", "policies")
    assert run.code == 0 and "prod: pretrain: floor 4/4" in run.out and "gpu-capacity-together" not in run.err


TARGETS = """\
apiVersion: gen/v1alpha1
kind: Target
metadata: {name: staging}
spec:
  gpuLabels: nvidia-gfd
  selector: {matchLabels: {}}
  overrides:
  - kind: GpuWorkload
    name: train
    spec: {gpu: {models: [NVIDIA-L4]}}
---
apiVersion: gen/v1alpha1
kind: Target
metadata: {name: prod}
spec:
  gpuLabels: nvidia-gfd
---
apiVersion: gen/v1alpha1
kind: GpuWorkload
metadata: {name: train}
spec:
  namespace: ml
  schedulerName: default-scheduler
  gpu: {count: 1, models: [NVIDIA-H100-80GB-HBM3]}
  container:
    image: ghcr.io/example/train:1
    resources: {requests: {cpu: "4", memory: 40Gi}, limits: {memory: 40Gi}}
"""
STAGING_NODES = "- name: l4-a\n  labels: {nvidia.com/gpu.product: NVIDIA-L4}\n  allocatable: {nvidia.com/gpu: 1, cpu: 3, memory: 32Gi}\n"


def test_every_target_side_by_side_unless_target_picks(gen, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "all.yaml").write_text(TARGETS)
    (tmp_path / "staging-nodes.yaml").write_text(STAGING_NODES)
    monkeypatch.chdir(tmp_path)
    both = gen("explain", "gpu", "--nodes", "staging-nodes.yaml", "policies")
    assert both.code == 1 and [line.split()[0] for line in both.out.splitlines()[1:3]] == [
        "prod",
        "staging",
    ]  # targets by name
    assert "for target 'prod'" in both.err and "--target picks" in both.err
    staging = gen(
        "explain", "gpu", "--nodes", "staging-nodes.yaml", "policies", "--target", "staging", "--format", "json"
    )
    rows = json.loads(staging.out)["placements"]
    assert {r["target"] for r in rows} == {"staging"}
    # quantities as people read them: 3 CPU, 40Gi, never raw bytes
    assert "needs 4 CPU, 3 CPU free" in rows[0]["reason"] and "needs 40Gi, 32Gi free" in rows[0]["reason"]


def test_an_inventory_node_without_cpu_or_memory_is_said_and_has_none(gen, tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "all.yaml").write_text(TARGETS)
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        "- name: l4-a\n  labels: {nvidia.com/gpu.product: NVIDIA-L4}\n  allocatable: {nvidia.com/gpu: 1}\n"
    )
    run = gen("explain", "gpu", "--nodes", nodes, tmp_path / "policies", "--target", "staging")
    assert "nodes.yaml:3:3: warning inventory-incomplete node 'l4-a' states no allocatable cpu or memory" in run.err
    assert run.code == 1 and "insufficient cpu: needs 4 CPU, 0 CPU free" in run.out
    nodes.write_text(STAGING_NODES.replace("cpu: 3", "cpu: 8").replace("32Gi", "64Gi"))
    ok = gen("explain", "gpu", "--nodes", nodes, tmp_path / "policies", "--target", "staging")
    assert ok.code == 0 and "inventory-incomplete" not in ok.err


SERVICE = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata: {name: vllm}
spec:
  namespace: ml
  image: ghcr.io/example/vllm:0.9.1
  podLabels: {cost-center: ml-serving}
  deletionCost: {initial: 0, tier: default}
"""
TARGET = """\
apiVersion: gen/v1alpha1
kind: Target
metadata: {name: prod}
spec:
  podLabels: {team: ml, cost-center: shared}
"""


def _render(gen, tmp_path: Path, *docs: str):
    (tmp_path / "policies").mkdir(exist_ok=True)
    (tmp_path / "policies" / "all.yaml").write_text("---\n".join(docs))
    return gen("render", tmp_path / "policies", "--out", tmp_path / "out")


def _yaml(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())


def test_pod_labels_go_on_pod_templates_only(gen, tmp_path: Path) -> None:
    assert _render(gen, tmp_path, TARGET, SERVICE).code == 0
    deployment = _yaml(tmp_path / "out/prod/ml/deployment-vllm.yaml")
    assert deployment["spec"]["template"]["metadata"]["labels"] == {
        "app": "vllm",
        "cost-center": "ml-serving",
        "team": "ml",
    }
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": "vllm"}}  # never in the selector
    assert "team" not in deployment["metadata"]["labels"]


def test_gen_pod_labels_are_reserved(gen, tmp_path: Path) -> None:
    run = _render(
        gen,
        tmp_path,
        TARGET.replace("team: ml", "app: other"),
        SERVICE.replace("cost-center: ml-serving", "scheduling.x-k8s.io/pod-group: g"),
    )
    assert run.code == 1 and run.err.count(" pod-label-reserved ") == 2


def test_a_namespace_of_its_own_pod_security_level(gen, tmp_path: Path) -> None:
    root_agent = SERVICE.replace("  podLabels: {cost-center: ml-serving}\n", "  securityContext: {runAsUser: 0}\n")
    refused = _render(gen, tmp_path, TARGET, root_agent)
    assert refused.code == 1 and " pod-security " in refused.err
    level = TARGET + "  namespaces:\n    ml: {podSecurity: baseline}\n"
    assert _render(gen, tmp_path, level, root_agent).code == 0
    labels = _yaml(tmp_path / "out/prod/_cluster/namespace-ml.yaml")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"


def test_restricted_defaults_leave_tmp_and_home_writable(gen, tmp_path: Path) -> None:
    assert _render(gen, tmp_path, TARGET, SERVICE).code == 0
    pod = _yaml(tmp_path / "out/prod/ml/deployment-vllm.yaml")["spec"]["template"]["spec"]
    (main,) = pod["containers"]
    assert main["securityContext"]["readOnlyRootFilesystem"] is True
    assert {"name": "gen-tmp", "mountPath": "/tmp"} in main["volumeMounts"]
    assert {"name": "HOME", "value": "/home/nonroot"} in main["env"]
    assert {"name": "gen-tmp", "emptyDir": {}} in pod["volumes"] and {"name": "gen-home", "emptyDir": {}} in pod[
        "volumes"
    ]
    own = (
        SERVICE
        + "  env: [{name: HOME, value: /data}]\n  volumeMounts: [{name: scratch, mountPath: /tmp}]\n  pod: {volumes: [{name: scratch, emptyDir: {medium: Memory}}]}\n"
    )
    assert _render(gen, tmp_path, TARGET, own).code == 0
    pod = _yaml(tmp_path / "out/prod/ml/deployment-vllm.yaml")["spec"]["template"]["spec"]
    assert [v["name"] for v in pod["volumes"]] == ["scratch"]  # the policy's own /tmp and HOME win
    writable = SERVICE + "  securityContext: {readOnlyRootFilesystem: false}\n"
    assert _render(gen, tmp_path, TARGET, writable).code == 0
    assert "volumes" not in _yaml(tmp_path / "out/prod/ml/deployment-vllm.yaml")["spec"]["template"]["spec"]


def _lint_gpu(gen, tmp_path: Path, gpu: str):
    root = tmp_path / "policies"
    root.mkdir(exist_ok=True)
    prod = TARGETS[TARGETS.index("apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: prod}") :]
    (root / "all.yaml").write_text(prod.replace("  gpu: {count: 1, models: [NVIDIA-H100-80GB-HBM3]}", f"  gpu: {gpu}"))
    return gen("lint", root)


def test_min_memory_is_judged_against_what_gfd_writes_for_the_listed_models(gen, tmp_path: Path) -> None:
    # NVML's total: 81559 MiB for an H100 80GB HBM3, 81920 for an A100 80GB; a -SHARED GPU is the same GPU
    models = "[NVIDIA-H100-80GB-HBM3-SHARED, NVIDIA-A100-SXM4-80GB]"
    run = _lint_gpu(gen, tmp_path, f"{{count: 1, models: {models}, minMemoryMiB: 81921}}")
    assert run.code == 1
    assert (
        "error gpu-memory-unreachable minMemoryMiB 81921 is above the nvidia.com/gpu.memory GPU Feature Discovery "
        "writes for every listed model (NVIDIA-H100-80GB-HBM3-SHARED 81559, NVIDIA-A100-SXM4-80GB 81920 MiB)"
    ) in run.out
    assert "ask for at most 81920" in run.out
    assert (
        " gpu-memory-unreachable "
        not in _lint_gpu(gen, tmp_path, f"{{count: 1, models: {models}, minMemoryMiB: 81920}}").out
    )
    # a model the table has no figure for is not judged: a MIG product, one not seen on a device,
    # or a GDDR one seen only with ECC on (an L4 reports 23034 MiB then, more without ECC)
    for models in (
        "[NVIDIA-H100-80GB-HBM3, NVIDIA-RTX-A6000]",
        "[NVIDIA-A100-SXM4-80GB-MIG-1g.10gb]",
        "[NVIDIA-L4]",
    ):
        run = _lint_gpu(gen, tmp_path, f"{{count: 1, models: {models}, minMemoryMiB: 150000}}")
        assert " gpu-memory-unreachable " not in run.out, run.out
    # nor is a policy without models
    assert " gpu-memory-unreachable " not in _lint_gpu(gen, tmp_path, "{count: 1, minMemoryMiB: 150000}").out
    # an override that lists another model is judged for the target that applies it
    staging = TARGETS.replace(
        "  gpu: {count: 1, models: [NVIDIA-H100-80GB-HBM3]}", "  gpu: {count: 1, minMemoryMiB: 81559}"
    ).replace("models: [NVIDIA-L4]", "models: [NVIDIA-A100-SXM4-40GB]")
    (tmp_path / "policies" / "all.yaml").write_text(staging)
    run = gen("lint", tmp_path / "policies")
    assert "(NVIDIA-A100-SXM4-40GB 40960 MiB): no node matches [target staging]" in run.out, run.out
    assert "[target prod]" not in run.out
