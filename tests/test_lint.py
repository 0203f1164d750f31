"""gen lint: every bad policy is exit 1 with the right file:line and rule, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import POLICIES, edit

SCHEDULER = """\
apiVersion: gen/v1alpha1
kind: Scheduler
metadata:
  name: custom-scheduler
spec:
  namespace: scheduler-lab
  image: example/scheduler:1
  outOfTreePlugins: [GPUPacking]
  profiles:
  - schedulerName: custom-scheduler
"""

# (name, file text, expected rule, expected line)
BAD = [
    ("unknown-field", SCHEDULER + "  replcas: 2\n", "policy-unknown-field", 11),
    ("yaml-syntax", SCHEDULER + "  replicas: [unclosed\n", "yaml-syntax", 12),
    ("duplicate-key", SCHEDULER + "  image: again\n", "yaml-duplicate-key", 11),
    ("wrong-type", SCHEDULER.replace("replicas", "x") + "  replicas: three\n", "policy-schema", 11),
    ("yes-as-bool-key", SCHEDULER + "  on: 1\n", "yaml-key-type", 11),
    ("non-finite", SCHEDULER + "  metrics:\n    alerts:\n      p95LatencySeconds: .inf\n", "policy-number", 13),
    ("float-overflow", SCHEDULER + "  metrics:\n    alerts:\n      p95LatencySeconds: 1.0e+400\n", "policy-number", 13),
    # a date beside the nan: the data is not JSON, so the fast finiteness check cannot vouch for it
    (
        "nan-beside-date",
        SCHEDULER + "  since: 2001-12-14\n  metrics:\n    alerts:\n      p95LatencySeconds: .NaN\n",
        "policy-number",
        14,
    ),
    ("bad-kind", SCHEDULER.replace("kind: Scheduler", "kind: Schedular"), "policy-kind", 2),
    ("bad-name", SCHEDULER.replace("name: custom-scheduler\n", "name: Custom_Scheduler\n", 1), "policy-schema", 4),
    (
        "int32-overflow",
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: a\nspec:\n  image: x\n  deletionCost:\n    initial: 2147483648\n",
        "policy-schema",
        8,
    ),
    (
        "lease-jitter",
        SCHEDULER + "  leaderElection:\n    renewDeadline: 10s\n    retryPeriod: 9s\n",
        "scheduler-leader-election",
        12,
    ),
    (
        "lease-order",
        SCHEDULER + "  leaderElection:\n    leaseDuration: 10s\n    renewDeadline: 10s\n",
        "scheduler-leader-election",
        12,
    ),
    (
        "gpu-scheduler-name",
        "apiVersion: gen/v1alpha1\nkind: GpuWorkload\nmetadata:\n  name: g\nspec:\n  schedulerName: nope\n  gpu: {count: 1, models: [A100]}\n  container: {image: busybox}\n",
        "gpu-scheduler-name",
        6,
    ),
    (
        "fit-disabled",
        SCHEDULER
        + "    plugins:\n      score:\n        enabled: [{name: GPUPacking, weight: 10}]\n      multiPoint:\n        disabled: [{name: NodeResourcesFit}]\n",
        "gpu-packing-needs-fit",
        15,  # the entry that disables NodeResourcesFit, not the profile's plugins key
    ),
    (
        "out-of-tree-missing",
        SCHEDULER.replace("  outOfTreePlugins: [GPUPacking]\n", "")
        + "    plugins:\n      score:\n        enabled: [{name: GPUPacking, weight: 10}]\n",
        "scheduler-out-of-tree",
        12,  # the GPUPacking entry outOfTreePlugins lacks
    ),
    (
        "negative-weight",
        SCHEDULER + "    plugins:\n      score:\n        enabled: [{name: GPUPacking, weight: -1}]\n",
        "scheduler-plugin-weight",
        13,
    ),
    (
        "cost-tier",
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: a\nspec:\n  image: x\n  deletionCost:\n    initial: 500\n    tier: medium\n",
        "cost-tier",
        8,
    ),
    (
        "cost-cap",
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: a\nspec:\n  image: x\n  deletionCost:\n    initial: 5000\n",
        "cost-cap",
        8,
    ),
    (
        "cost-on-pod",
        "apiVersion: gen/v1alpha1\nkind: GpuWorkload\nmetadata:\n  name: g\nspec:\n  podAnnotations:\n    controller.kubernetes.io/pod-deletion-cost: '5'\n  gpu: {count: 1, models: [A100]}\n  container: {image: busybox}\n",
        "deletion-cost-not-replicaset",
        7,
    ),
    (
        "hpa-min-max",
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: a\nspec:\n  image: x\n  autoscaling:\n    minReplicas: 5\n    maxReplicas: 2\n",
        "hpa-min-max",
        8,
    ),
    (
        "hpa-cpu-requests",
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: a\nspec:\n  image: x\n  resources:\n    requests: {memory: 1Gi}\n  autoscaling:\n    maxReplicas: 2\n",
        "hpa-cpu-requests",
        7,
    ),
    (
        "hpa-replicas-warning",
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: a\nspec:\n  image: x\n  replicas: 3\n  autoscaling:\n    maxReplicas: 5\n",
        "hpa-replicas-conflict",
        7,
    ),
    (
        "colocate-no-match",
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: a\nspec:\n  image: x\n  placement:\n    colocateWith:\n    - matchLabels: {app: nothing}\n",
        "colocate-no-match",
        9,
    ),
]


@pytest.mark.parametrize(("name", "text", "rule", "line"), BAD, ids=[b[0] for b in BAD])
def test_bad_policy_is_located(gen, tmp_path: Path, name: str, text: str, rule: str, line: int) -> None:
    path = tmp_path / "policies" / f"{name}.yaml"
    path.parent.mkdir()
    path.write_text(text)
    run = gen("lint", "--strict", path)
    assert run.code == 1, run.out
    assert "Traceback" not in run.out + run.err
    hits = [row for row in run.out.splitlines() if f" {rule} " in row]
    assert hits, run.out
    assert any(row.split(":")[1] == str(line) for row in hits), run.out


def test_bundled_policies_lint_clean(gen) -> None:
    run = gen("lint", "--strict", *sorted(POLICIES.glob("*.yaml")))
    assert run.code == 0, run.out


def test_lint_reports_only_the_files_asked_about(gen, tmp_path: Path) -> None:
    root = tmp_path / "policies"
    root.mkdir()
    (root / "good.yaml").write_text(SCHEDULER)
    (root / "bad.yaml").write_text(SCHEDULER.replace("custom-scheduler", "other") + "  bogus: 1\n")
    run = gen("lint", root / "good.yaml")
    assert run.code == 0 and "bad.yaml" not in run.out


def test_the_files_asked_are_found_however_they_are_named(gen, tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "policies"
    root.mkdir()
    (root / "good.yaml").write_text(SCHEDULER)
    (root / "bad.yaml").write_text(SCHEDULER.replace("custom-scheduler", "other") + "  bogus: 1\n")
    (tmp_path / "linked").symlink_to(root)
    monkeypatch.chdir(tmp_path)
    through_link = gen("lint", "linked/bad.yaml")
    assert through_link.code == 1 and "bad.yaml:" in through_link.out and "good.yaml" not in through_link.out
    assert gen("lint", "policies/../policies/good.yaml").code == 0
    assert gen("lint", "linked").code == 1
    (tmp_path / "elsewhere").mkdir()
    (root / "bad.yaml").rename(tmp_path / "elsewhere/bad.yaml")
    (root / "bad.yaml").symlink_to(tmp_path / "elsewhere/bad.yaml")  # the file itself a link
    assert gen("lint", "policies/good.yaml").code == 0
    assert gen("lint", "policies/bad.yaml").code == 1


def test_cross_policy_rules_see_the_whole_directory(gen, tmp_path: Path) -> None:
    root = tmp_path / "policies"
    root.mkdir()
    (root / "scheduler.yaml").write_text(SCHEDULER)
    gpu = root / "gpu.yaml"
    gpu.write_text(
        "apiVersion: gen/v1alpha1\nkind: GpuWorkload\nmetadata:\n  name: g\nspec:\n  schedulerName: custom-scheduler\n"
        "  gpu: {count: 1, models: [A100]}\n  container: {image: 'busybox:1.37'}\n"
    )
    assert gen("lint", "--strict", gpu).code == 0


@pytest.mark.parametrize("fmt", ["json", "github"])
def test_machine_formats(gen, tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "policies" / "bad.yaml"
    path.parent.mkdir()
    path.write_text(SCHEDULER + "  replcas: 2\n")
    run = gen("lint", "--format", fmt, path)
    assert run.code == 1
    assert ("::error file=" in run.out) if fmt == "github" else ('"rule": "policy-unknown-field"' in run.out)


def test_did_you_mean_hint(gen, tmp_path: Path) -> None:
    path = tmp_path / "policies" / "bad.yaml"
    path.parent.mkdir()
    path.write_text(SCHEDULER + "  replcas: 2\n")
    assert "did you mean 'replicas'?" in gen("lint", path).out


GPU_DEPLOYMENT = """\
apiVersion: gen/v1alpha1
kind: GpuWorkload
metadata:
  name: llm
spec:
  namespace: inference
  workloadKind: WORKLOAD_KIND
  gpu: {count: 1}
  container: {name: server, image: "registry.example.com/llm:v1"}
"""


def test_a_gpu_deployment_asked_of_a_gpu_workload_is_pointed_at_replicated_service(gen, tmp_path: Path) -> None:
    """The newcomer's guess (workloadKind: Deployment) gets the schema's advice for that field."""
    path = tmp_path / "policies" / "llm.yaml"
    path.parent.mkdir()
    path.write_text(GPU_DEPLOYMENT.replace("WORKLOAD_KIND", "Deployment"))
    run = gen("lint", path)
    assert run.code == 1 and ":7:17: error policy-schema " in run.out
    assert "(hint: a GPU Deployment is a ReplicatedService with gpu:" in run.out, run.out
    path.write_text(GPU_DEPLOYMENT.replace("WORKLOAD_KIND", "Job"))
    assert gen("lint", path).code == 0


def test_linting_a_directory_reports_its_files(gen, policy_copy: Path) -> None:
    scheduler = policy_copy / "scheduler.yaml"
    edit(scheduler, "replicas: 1", "replicas: one")
    run = gen("lint", policy_copy)
    assert run.code == 1 and "policies/scheduler.yaml:" in run.out and " policy-schema " in run.out
    assert gen("lint", policy_copy / "cache-app.yaml").code == 0  # judged with its directory, reported alone


def test_every_unknown_field_is_reported_at_its_line_with_what_was_meant(gen, tmp_path: Path) -> None:
    (tmp_path / "web.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: web\nspec:\n"
        "  image: nginx:1.27\n"
        "  envv:\n  - {name: A, value: b}\n"  # 7
        "  tolerations:\n  - {key: dedicated, operator: Exists}\n"  # 9
        "  volumeMounts:\n  - name: cache\n    mountPath: /cache\n    readonly: true\n"  # 14
        "  pod:\n    volumes:\n    - {name: cache, emptyDir: {}}\n    nodeSelectr: {a: b}\n"  # 18
    )
    (tmp_path / "train.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: GpuWorkload\nmetadata:\n  name: train\nspec:\n  gpu: {count: 1}\n"
        "  container:\n    image: trainer:1\n    tolerations: []\n"  # 9
        "  pod:\n    schedulerName: x\n    containers: []\n"  # 11, 12
    )
    run = gen("lint", "--format", "json", tmp_path)
    found = {(Path(f["file"]).name, f["line"], f["path"].rsplit(".", 1)[-1], f["hint"]) for f in json.loads(run.out)}
    assert run.code == 1
    assert found == {
        ("web.yaml", 7, "envv", "did you mean 'env'?"),
        ("web.yaml", 9, "tolerations", "did you mean spec.pod.tolerations? PodSpec fields go under spec.pod"),
        ("web.yaml", 14, "readonly", "did you mean 'readOnly'?"),
        ("web.yaml", 18, "nodeSelectr", "did you mean 'nodeSelector'?"),
        ("train.yaml", 9, "tolerations", "did you mean spec.pod.tolerations? PodSpec fields go under spec.pod"),
        (
            "train.yaml",
            11,
            "schedulerName",
            "a GpuWorkload sets it at spec.schedulerName (a profile of a Scheduler in its target)",
        ),
        (
            "train.yaml",
            12,
            "containers",
            "gen builds the main container from the policy's Container fields; more long-running containers are "
            "native sidecars: pod.initContainers entries with restartPolicy: Always",
        ),
    }


def test_github_annotations_land_on_the_file_in_a_monorepo(gen, tmp_path, monkeypatch) -> None:
    policies = tmp_path / "infra" / "gitops" / "policies"
    policies.mkdir(parents=True)
    (policies / "c.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Monitoring\nmetadata:\n  name: Bad\n")
    monkeypatch.chdir(tmp_path)
    run = gen("lint", "infra/gitops/policies", "--format", "github")
    assert run.code == 1 and run.out.startswith("::error file=infra/gitops/policies/c.yaml,line=4,col=9,")
    (policies / "c.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Monitoring\nmetadata:\n  name: good\n")
    assert gen("lint", "infra/gitops/policies", "--format", "github").out == ""


def test_lint_reports_what_render_would(gen, tmp_path: Path) -> None:
    """A policy lint passes renders: bad quantities, cron, Pod Security and guarded patches are
    found by the render lint runs in memory, at the policy line, and nothing is written."""
    from tests.conftest import POLICIES, edit

    root = tmp_path / "policies"
    shutil.copytree(POLICIES, root)
    storefront = root / "storefront.yaml"
    edit(storefront, "cpu: 250m", "cpu: 25OOm")
    run = gen("lint", storefront)
    assert run.code == 1 and "storefront.yaml:46:21: error k8s-quantity" in run.out
    assert "1 policy file linted: 1 error" in run.err
    rendered = gen("render", root, "--out", tmp_path / "deploy")
    assert rendered.code == 1 and "storefront.yaml:46:21: error k8s-quantity" in rendered.err
    assert not (tmp_path / "deploy").exists()
    other = gen("lint", root / "cache-app.yaml")
    assert other.code == 0 and "storefront" not in other.out  # only the files asked
