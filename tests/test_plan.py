"""gen plan: what a commit does to the running cluster, object by object, before it is made.

A two-target repository (the whole-stack example plus a GPU inference service) goes through
the commits a platform team makes; after each, `gen plan` must name exactly the action the
next Argo CD or Flux sync takes. Every render in between is the "commit".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, edit

INFERENCE = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata:
  name: inference
  labels: {stack: shop}
spec:
  namespace: ml
  image: ghcr.io/example/vllm:0.9.1
  ports: [{name: http, containerPort: 8000}]
  resources:
    requests: {cpu: "4", memory: 32Gi}
    limits: {memory: 32Gi}
  gpu: {count: 1, models: [NVIDIA-A100-SXM4-80GB]}
  deletionCost: {initial: 0, tier: default}
  autoscaling: {minReplicas: 2, maxReplicas: 6}
"""


@pytest.fixture
def stack(gen, tmp_path: Path) -> Path:
    """The whole-stack example with a GPU service, rendered and "committed" into deploy/."""
    root = tmp_path / "stack"
    shutil.copytree(ROOT / "examples" / "whole-stack", root, ignore=shutil.ignore_patterns("deploy"))
    (root / "policies" / "inference.yaml").write_text(INFERENCE)
    assert gen("render", root / "policies", "--out", root / "deploy").code == 0
    return root


def plan(gen, root: Path, *flags: str) -> tuple[int, dict[tuple[str, str, str], dict[str, Any]], str]:
    """Exit code, prod's changes by (action, kind, namespace/name), and what went to stderr."""
    run = gen("plan", root / "policies", "--out", root / "deploy", "--format", "json", *flags)
    changes = json.loads(run.out)
    prod = {(c["action"], c["kind"], f"{c['namespace']}/{c['name']}"): c for c in changes if c["target"] == "prod"}
    assert {c["target"] for c in changes} <= {"prod", "staging"}
    return run.code, prod, run.err


def commit(gen, root: Path) -> None:
    assert gen("render", root / "policies", "--out", root / "deploy").code == 0


def test_an_unchanged_render_plans_to_nothing(gen, stack: Path) -> None:
    code, prod, _ = plan(gen, stack)
    assert (code, prod) == (0, {})
    text = gen("plan", stack / "policies", "--out", stack / "deploy")
    assert text.out == "" and "gen: no changes" in text.err


def test_a_configmap_edit_restarts_the_pods_that_read_it(gen, stack: Path) -> None:
    edit(stack / "manifests/web/config.yaml", "LOG_FORMAT: json", "LOG_FORMAT: text")
    code, prod, _ = plan(gen, stack)
    assert code == 0
    assert set(prod) == {
        ("update", "ConfigMap", "web/webapi-settings"),
        ("restart", "Deployment", "web/webapi"),  # it mounts the ConfigMap: gen.dev/config-hash changed
    }
    restart = prod[("restart", "Deployment", "web/webapi")]
    assert "ConfigMap" in restart["reason"] and (restart["pods"], restart["gpus"]) == (20, 0)


def test_a_gpu_image_bump_restarts_the_gpu_pods(gen, stack: Path) -> None:
    edit(stack / "policies/inference.yaml", "vllm:0.9.1", "vllm:0.9.2")
    code, prod, _ = plan(gen, stack)
    assert code == 0 and list(prod) == [("restart", "Deployment", "ml/inference")]
    change = prod[("restart", "Deployment", "ml/inference")]
    assert (change["pods"], change["gpus"]) == (6, 6)  # the HPA's maximum, one GPU each
    assert "spec.template.spec.containers[0].image changed: 2–6 GPU Pods" in change["reason"]


def test_a_changed_job_is_refused_under_argo_cd(gen, stack: Path) -> None:
    edit(stack / "policies/training.yaml", "finetune:0.14.2", "finetune:0.14.3")
    code, prod, err = plan(gen, stack)
    assert code == 1  # the sync would fail: say so before the commit
    change = prod[("refused", "Job", "ml/llm-finetune")]
    assert (change["pods"], change["gpus"]) == (4, 32)
    assert "ValidateJobUpdate" in change["reason"]
    assert "policies/training.yaml:" in err and " job-immutable " in err and "whenChanged: newName" in err
    rendered = gen("render", stack / "policies", "--out", stack / "deploy")
    assert rendered.code == 0 and " job-immutable " in rendered.err  # a warning: render still writes
    assert "prod: 1 refused — gen plan for details" in rendered.err


def test_a_changed_job_is_recreated_under_flux(gen, stack: Path) -> None:
    targets = stack / "policies/targets.yaml"
    edit(
        targets,
        "    argocd:\n      repoURL: https://git.example.com/platform/shop.git\n      revision: main\n"
        "      destinationServer: https://prod.k8s.example.com\n",
        "    flux: {sourceRef: {name: shop}}\n",
    )
    commit(gen, stack)
    edit(stack / "policies/training.yaml", "finetune:0.14.2", "finetune:0.14.3")
    code, prod, _ = plan(gen, stack, "--target", "prod")  # staging stays on Argo CD, which refuses
    assert code == 0 and list(prod) == [("recreate", "Job", "ml/llm-finetune")]
    assert (
        "Flux deletes and recreates it; its 4 GPU Pods (32 GPUs) restart"
        in prod[("recreate", "Job", "ml/llm-finetune")]["reason"]
    )


def test_when_changed_new_name_makes_a_changed_job_a_new_run(gen, stack: Path) -> None:
    edit(stack / "policies/training.yaml", "  workloadKind: Job\n", "  workloadKind: Job\n  whenChanged: newName\n")
    commit(gen, stack)
    assert plan(gen, stack)[:2] == (0, {})
    edit(stack / "policies/training.yaml", "finetune:0.14.2", "finetune:0.14.3")
    code, prod, err = plan(gen, stack)
    assert code == 0 and "job-immutable" not in err
    assert sorted(action for action, _, _ in prod) == ["create", "prune"]
    (new,) = [name for action, _, name in prod if action == "create"]
    (old,) = [name for action, _, name in prod if action == "prune"]
    assert new.startswith("ml/llm-finetune-") and old.startswith("ml/llm-finetune-") and new != old
    assert plan(gen, stack, "--strict")[0] == 1  # --strict fails on prunes too


def test_a_removed_pvc_is_kept_and_a_removed_configmap_pruned(gen, stack: Path) -> None:
    (stack / "manifests/web/storage.yaml").unlink()
    config = stack / "manifests/web/config.yaml"
    config.write_text(config.read_text().split("---")[0])  # drop webapi-feature-flags
    code, prod, _ = plan(gen, stack)
    assert code == 0
    kept = prod[("kept", "PersistentVolumeClaim", "web/webapi-uploads")]
    assert "Prune=false" in kept["reason"] and "delete it by hand" in kept["reason"]
    assert ("prune", "ConfigMap", "web/webapi-feature-flags") in prod
    assert plan(gen, stack, "--strict")[0] == 1


def test_a_pvc_class_change_is_refused_and_growth_is_an_update(gen, stack: Path) -> None:
    data = stack / "manifests/ml/data.yaml"
    edit(data, "storageClassName: fsx-lustre", "storageClassName: fsx-scratch")
    code, prod, _ = plan(gen, stack)
    assert code == 1 and list(prod) == [("refused", "PersistentVolumeClaim", "ml/training-data")]
    assert (
        "spec.storageClassName changed, and it is immutable"
        in prod[("refused", "PersistentVolumeClaim", "ml/training-data")]["reason"]
    )
    edit(data, "storageClassName: fsx-scratch", "storageClassName: fsx-lustre")
    edit(data, "storage: 2Ti", "storage: 3Ti")
    code, prod, _ = plan(gen, stack)
    assert (
        code == 0 and "grows from 2Ti to 3Ti" in prod[("update", "PersistentVolumeClaim", "ml/training-data")]["reason"]
    )
    edit(data, "storage: 3Ti", "storage: 1Ti")
    assert plan(gen, stack)[0] == 1  # a claim never shrinks


def test_an_application_that_does_not_prune_keeps_what_leaves_git(gen, stack: Path) -> None:
    edit(
        stack / "policies/targets.yaml",
        "      destinationServer: https://prod.k8s.example.com\n",
        "      destinationServer: https://prod.k8s.example.com\n      prune: false\n",
    )
    commit(gen, stack)
    config = stack / "manifests/web/config.yaml"
    config.write_text(config.read_text().split("---")[0])
    _, prod, _ = plan(gen, stack)
    assert "the Application does not prune" in prod[("kept", "ConfigMap", "web/webapi-feature-flags")]["reason"]


def test_render_summarises_and_diff_shows_the_plan_first(gen, stack: Path) -> None:
    edit(stack / "policies/inference.yaml", "vllm:0.9.1", "vllm:0.9.2")
    diff = gen("render", stack / "policies", "--out", stack / "deploy", "--diff")
    lines = diff.out.splitlines()
    assert diff.code == 1 and lines[0].startswith("prod  restart  Deployment ml/inference  ")
    assert lines[2].startswith("--- a/prod/")
    rendered = gen("render", stack / "policies", "--out", stack / "deploy")
    assert "gen: prod: 1 restart (6 GPU Pods) — gen plan for details" in rendered.err
    assert gen("render", stack / "policies", "--out", stack / "deploy").err.count("gen plan") == 0


def test_plan_text_and_github_formats(gen, stack: Path) -> None:
    edit(stack / "manifests/ml/data.yaml", "storageClassName: fsx-lustre", "storageClassName: fsx-scratch")
    text = gen("plan", stack / "policies", "--out", stack / "deploy", "--target", "prod")
    assert text.code == 1
    assert text.out.startswith("prod  refused  PersistentVolumeClaim ml/training-data  spec.storageClassName changed")
    assert "gen: prod: 1 refused" in text.err
    github = gen("plan", stack / "policies", "--out", stack / "deploy", "--format", "github")
    assert github.out.startswith("::error title=gen plan: refused::")


def test_a_removed_target_is_pruned_but_keeps_its_data(gen, stack: Path) -> None:
    targets = stack / "policies/targets.yaml"
    targets.write_text(targets.read_text().split("---")[0])  # prod is gone
    run = gen("plan", stack / "policies", "--out", stack / "deploy", "--format", "json")
    prod = [c for c in json.loads(run.out) if c["target"] == "prod"]
    assert {c["action"] for c in prod} == {"prune", "kept"}
    assert {c["kind"] for c in prod if c["action"] == "kept"} == {"Namespace", "PersistentVolumeClaim"}


def test_no_object_gen_writes_asks_argo_cd_to_replace_it(gen, stack: Path) -> None:
    for path in (stack / "deploy").rglob("*.yaml"):
        assert "Replace=true" not in path.read_text() and "Force=true" not in path.read_text(), path


def test_a_pod_template_that_starts_reading_a_configmap_gains_its_hash(gen, stack: Path) -> None:
    policy = stack / "policies/inference.yaml"
    policy.write_text(policy.read_text() + "  envFrom: [{configMapRef: {name: webapi-settings}}]\n")
    edit(stack / "manifests/web/config.yaml", "name: webapi-settings", "name: webapi-settings\n  namespace: ml")
    _, prod, _ = plan(gen, stack)
    restart = prod[("restart", "Deployment", "ml/inference")]
    assert "gen.dev/config-hash added" in restart["reason"]


def test_a_committed_file_edited_past_reading_is_still_planned(gen, stack: Path) -> None:
    (stack / "deploy/prod/ml/deployment-inference.yaml").write_text("apiVersion: apps/v1\nkind: [\n")
    edit(stack / "policies/inference.yaml", "vllm:0.9.1", "vllm:0.9.2")
    code, prod, _ = plan(gen, stack)
    assert code == 0 and "holds no object gen can read" in prod[("update", "Deployment", "ml/inference")]["reason"]


def test_a_committed_count_that_is_no_number_leaves_the_size_unknown(gen, stack: Path) -> None:
    """A hand edit of deploy/ (replicas: three) is planned with no size, not a crash."""
    deployment, hpa = (
        stack / f"deploy/prod/ml/{kind}-inference.yaml" for kind in ("deployment", "horizontalpodautoscaler")
    )
    edit(deployment, "\nspec:\n", "\nspec:\n  replicas: three\n")
    edit(hpa, "maxReplicas: 6", "maxReplicas: many")
    (stack / "policies/inference.yaml").unlink()
    code, prod, _ = plan(gen, stack)
    pruned = prod[("prune", "Deployment", "ml/inference")]
    assert code == 0 and pruned["pods"] is None and pruned["reason"].endswith("deletes it")


def test_pods_that_stop_without_replacement_are_a_stop_line_in_every_format(gen, stack: Path) -> None:
    """Adding autoscaling to a service that ran a fixed count: the apply removes replicas and
    kube-apiserver defaults it to 1, so all GPU Pods but one terminate until the HPA acts."""
    policy = stack / "policies/inference.yaml"
    edit(policy, "  autoscaling: {minReplicas: 2, maxReplicas: 6}\n", "  replicas: 4\n")
    commit(gen, stack)
    edit(policy, "  replicas: 4\n", "  autoscaling: {minReplicas: 2, maxReplicas: 6}\n")
    code, prod, _ = plan(gen, stack)
    change = prod[("stop", "Deployment", "ml/inference")]
    assert code == 0 and (change["pods"], change["gpus"]) == (3, 3)
    assert "kubectl apply edit-last-applied deployment/inference -n ml" in change["reason"]
    text = gen("plan", stack / "policies", "--out", stack / "deploy", "--target", "prod")
    assert text.out.startswith("prod  stop  Deployment ml/inference  autoscaling takes over spec.replicas")
    assert "gen: prod: 1 stop (3 GPU Pods), 1 create" in text.err  # the HPA is new
    github = gen("plan", stack / "policies", "--out", stack / "deploy", "--target", "prod", "--format", "github")
    assert github.out.startswith("::warning title=gen plan: stop::prod  stop  Deployment ml/inference")
    rendered = gen("render", stack / "policies", "--out", stack / "deploy")
    assert "prod: 1 stop (3 GPU Pods), 1 create — gen plan for details" in rendered.err


def test_a_suspended_job_that_may_take_new_scheduling_directives_is_no_refusal(gen, stack: Path) -> None:
    training = stack / "policies/training.yaml"
    edit(training, "    completions: 4\n", "    completions: 4\n    suspend: true\n")
    commit(gen, stack)
    edit(
        training,
        "    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n    volumes:\n    - name: data\n      persistentVolumeClaim:\n        claimName: training-data\n        readOnly: true\n    - name: dshm",
        "    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n    - {key: pool, operator: Exists}\n    volumes:\n    - name: data\n      persistentVolumeClaim:\n        claimName: training-data\n        readOnly: true\n    - name: dshm",
    )
    code, prod, err = plan(gen, stack)
    change = prod[("update", "Job", "ml/llm-finetune")]
    assert code == 0 and "refused unless the Job never started" in change["reason"]
    assert " job-immutable " not in err  # kube-apiserver takes it while the Job has never run
