"""The GPU platform as GPU teams run it: every target side by side, workloads placed together,
quantities in people's units, inventories that say too little."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.conftest import ROOT

TOGETHER = ROOT / "tests" / "data" / "together"


def test_the_readme_together_example_prints_what_the_readme_says(gen, tmp_path: Path, monkeypatch) -> None:
    shown = re.search(
        r"```\n\$ gen explain gpu --nodes nodes.yaml policies\n(together.*?)\n```",
        (ROOT / "README.md").read_text(),
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
    (tmp_path / "nodes.yaml").write_text(nodes + nodes.split("- name: h100-b")[0].replace("h100-a", "h100-e"))
    monkeypatch.chdir(tmp_path)
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
