"""What gen writes never fights what the user wrote (SPEC §17): gen's backoffLimit stays out of an
Indexed Job with backoffLimitPerIndex, a GPU server gets no liveness probe it did not ask for
unless a startupProbe holds it back while weights load, and every namespace a target uses or
declares gets its Namespace, Manifests included. Policies are written as a team would write them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.kube import updates

TARGET = """\
apiVersion: gen/v1alpha1
kind: Target
metadata: {name: prod}
spec:
  gpuLabels: nvidia-gfd
"""
FINETUNE = """\
apiVersion: gen/v1alpha1
kind: GpuWorkload
metadata: {name: finetune}
spec:
  namespace: ml
  workloadKind: Job
  restartPolicy: Never
  job:
    completionMode: Indexed
    completions: 4
    parallelism: 4
    backoffLimitPerIndex: 2
  gpu: {count: 8, models: [NVIDIA-H100-80GB-HBM3]}
  container:
    image: ghcr.io/example/finetune:0.14.2
    resources:
      requests: {cpu: "32", memory: 512Gi}
      limits: {memory: 512Gi}
"""
INFERENCE = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata: {name: vllm}
spec:
  namespace: serving
  image: vllm/vllm-openai:v0.11.0
  ports: [{name: http, containerPort: 8000}]
  readinessProbe:
    httpGet: {path: /health, port: http}
    periodSeconds: 5
  gpu: {count: 1, models: [NVIDIA-L4]}
  resources:
    requests: {cpu: "4", memory: 32Gi}
    limits: {memory: 32Gi}
"""
STARTUP = """\
  startupProbe:
    httpGet: {path: /health, port: http}
    periodSeconds: 10
    failureThreshold: 90
"""
LIVENESS = """\
  livenessProbe:
    httpGet: {path: /health, port: http}
"""


def _render(gen, tmp_path: Path, **files: str):
    root = tmp_path / "policies"
    root.mkdir(exist_ok=True)
    for old in root.iterdir():
        old.unlink()
    for name, text in files.items():
        (root / f"{name}.yaml").write_text(text)
    return gen("render", root, "--out", tmp_path / "out")


def _object(tmp_path: Path, rel: str) -> Any:
    return yaml.safe_load((tmp_path / "out" / "prod" / rel).read_text())


# ---- backoffLimit beside backoffLimitPerIndex ----------------------------------------------


def test_an_indexed_job_with_a_per_index_limit_gets_no_backoff_limit_of_gens(gen, tmp_path: Path) -> None:
    run = _render(gen, tmp_path, target=TARGET, finetune=FINETUNE)
    assert run.code == 0, run.err
    spec = _object(tmp_path, "ml/job-finetune.yaml")["spec"]
    assert "backoffLimit" not in spec and spec["backoffLimitPerIndex"] == 2
    assert updates.defaulted(_object(tmp_path, "ml/job-finetune.yaml"))["spec"]["backoffLimit"] == 2147483647


def test_without_a_per_index_limit_a_failed_gpu_pod_fails_the_job(gen, tmp_path: Path) -> None:
    plain = FINETUNE.replace("    backoffLimitPerIndex: 2\n", "")
    assert _render(gen, tmp_path, target=TARGET, finetune=plain).code == 0
    assert _object(tmp_path, "ml/job-finetune.yaml")["spec"]["backoffLimit"] == 0
    assert updates.defaulted({"apiVersion": "batch/v1", "kind": "Job", "spec": {}})["spec"]["backoffLimit"] == 6


def test_a_backoff_limit_the_policy_writes_wins_and_is_warned_when_it_cuts_retries_short(gen, tmp_path: Path) -> None:
    tight = FINETUNE.replace("    backoffLimitPerIndex: 2\n", "    backoffLimitPerIndex: 2\n    backoffLimit: 3\n")
    run = _render(gen, tmp_path, target=TARGET, finetune=tight)
    assert run.code == 0, run.err  # a warning: Kubernetes accepts it
    assert "finetune.yaml:13:19: warning gpu-job-backoff backoffLimit 3 beside backoffLimitPerIndex 2" in run.err
    assert "before its 4 indexes use the 8 retries" in run.err and "raise it to at least 8" in run.err
    assert _object(tmp_path, "ml/job-finetune.yaml")["spec"]["backoffLimit"] == 3
    shorthand = FINETUNE.replace("  workloadKind: Job\n", "  workloadKind: Job\n  backoffLimit: 0\n")
    run = _render(gen, tmp_path, target=TARGET, finetune=shorthand)
    assert "finetune.yaml:7:17: warning gpu-job-backoff backoffLimit 0 beside backoffLimitPerIndex 2" in run.err
    roomy = FINETUNE.replace("    backoffLimitPerIndex: 2\n", "    backoffLimitPerIndex: 2\n    backoffLimit: 8\n")
    run = _render(gen, tmp_path, target=TARGET, finetune=roomy)
    assert run.code == 0 and "gpu-job-backoff" not in run.err
    assert _object(tmp_path, "ml/job-finetune.yaml")["spec"]["backoffLimit"] == 8


# ---- liveness on a GPU server ---------------------------------------------------------------


def _main_container(tmp_path: Path) -> dict[str, Any]:
    return _object(tmp_path, "serving/deployment-vllm.yaml")["spec"]["template"]["spec"]["containers"][0]


def test_a_gpu_server_that_asked_for_readiness_only_gets_no_liveness_probe(gen, tmp_path: Path) -> None:
    run = _render(gen, tmp_path, target=TARGET, vllm=INFERENCE)
    assert run.code == 0, run.err
    container = _main_container(tmp_path)
    assert "livenessProbe" not in container and "startupProbe" not in container
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}


def test_with_a_startup_probe_the_gpu_server_gets_gens_liveness_check(gen, tmp_path: Path) -> None:
    assert _render(gen, tmp_path, target=TARGET, vllm=INFERENCE + STARTUP).code == 0
    container = _main_container(tmp_path)
    assert container["startupProbe"]["failureThreshold"] == 90
    assert container["livenessProbe"] == {
        "tcpSocket": {"port": "http"},
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "failureThreshold": 3,
    }


def test_a_server_without_gpus_keeps_gens_liveness_check(gen, tmp_path: Path) -> None:
    cpu_only = INFERENCE.replace("  gpu: {count: 1, models: [NVIDIA-L4]}\n", "")
    assert _render(gen, tmp_path, target=TARGET, vllm=cpu_only).code == 0
    assert _main_container(tmp_path)["livenessProbe"]["tcpSocket"] == {"port": "http"}


def test_a_liveness_probe_the_policy_writes_without_a_startup_probe_is_warned(gen, tmp_path: Path) -> None:
    run = _render(gen, tmp_path, target=TARGET, vllm=INFERENCE + LIVENESS)
    assert run.code == 0, run.err
    assert "vllm.yaml:15:3: warning gpu-liveness-startup a liveness probe without a startupProbe" in run.err
    assert _main_container(tmp_path)["livenessProbe"] == {"httpGet": {"path": "/health", "port": "http"}}
    run = _render(gen, tmp_path, target=TARGET, vllm=INFERENCE + LIVENESS + STARTUP)
    assert run.code == 0 and "gpu-liveness-startup" not in run.err


# ---- a Namespace for every namespace the target uses or declares ----------------------------

BATCH_TARGET = (
    TARGET
    + """\
  namespaces:
    batch: {podSecurity: baseline}
    reserved: {podSecurity: privileged}
    default: {podSecurity: baseline}
"""
)
MANIFESTS = """\
apiVersion: gen/v1alpha1
kind: Manifests
metadata: {name: batch}
spec:
  namespace: batch
  objects:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings}
    data: {mode: nightly}
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: shared, namespace: tools}
    data: {mode: nightly}
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata: {name: reader}
    rules: []
"""


def _level(tmp_path: Path, namespace: str) -> str:
    labels = _object(tmp_path, f"_cluster/namespace-{namespace}.yaml")["metadata"]["labels"]
    return str(labels["pod-security.kubernetes.io/enforce"])


def test_namespaces_only_manifests_use_or_the_target_declares_get_their_namespace(gen, tmp_path: Path) -> None:
    run = _render(gen, tmp_path, target=BATCH_TARGET, batch=MANIFESTS)
    assert run.code == 0, run.err
    assert _level(tmp_path, "batch") == "baseline"  # declared, used by Manifests alone
    assert (
        _object(tmp_path, "_cluster/namespace-batch.yaml")["metadata"]["labels"]["pod-security.kubernetes.io/warn"]
        == "baseline"
    )
    assert _level(tmp_path, "tools") == "restricted"  # used by a Manifests object, not declared
    assert _level(tmp_path, "reserved") == "privileged"  # declared, used by nothing yet
    assert not (tmp_path / "out/prod/_cluster/namespace-default.yaml").exists()  # a system namespace...
    assert (
        "target.yaml:9:5: warning target-namespace podSecurity baseline for namespace default is applied to no "
        "Namespace: gen never creates the system namespace default" in run.err
    )  # ...and the Target is told so
    header = (tmp_path / "out/prod/_cluster/namespace-batch.yaml").read_text().splitlines()[0]
    assert header.startswith("# Generated by gen from policy Manifests/batch.")
    header = (tmp_path / "out/prod/_cluster/namespace-reserved.yaml").read_text().splitlines()[0]
    assert header.startswith("# Generated by gen from policy Target/prod.")


def test_without_create_namespaces_gen_creates_none(gen, tmp_path: Path) -> None:
    own = BATCH_TARGET.replace("spec:\n", "spec:\n  createNamespaces: false\n")
    run = _render(gen, tmp_path, target=own, batch=MANIFESTS)
    assert run.code == 0
    assert not list((tmp_path / "out/prod/_cluster").glob("namespace-*.yaml"))
    assert (
        "target.yaml:8:5: warning target-namespace podSecurity baseline for namespace batch is applied to "
        "no Namespace: createNamespaces is false" in run.err
    )


BROUGHT = """\
  - apiVersion: v1
    kind: Namespace
    metadata:
      name: batch
      labels: {pod-security.kubernetes.io/enforce: %s}
"""


def test_a_namespace_manifests_bring_wins_and_a_level_it_does_not_carry_is_warned(gen, tmp_path: Path) -> None:
    run = _render(gen, tmp_path, target=BATCH_TARGET, batch=MANIFESTS + BROUGHT % "restricted")
    assert run.code == 0, run.err
    assert _level(tmp_path, "batch") == "restricted"  # the team's Namespace, as written
    assert (
        "target.yaml:7:5: warning target-namespace podSecurity baseline for namespace batch is applied to no "
        "Namespace: a Manifests policy brings Namespace batch, which enforces restricted" in run.err
    )
    run = _render(gen, tmp_path, target=BATCH_TARGET, batch=MANIFESTS + BROUGHT % "baseline")
    assert run.code == 0 and "namespace batch is applied" not in run.err


def test_a_manifests_workload_in_gens_namespace_is_judged_at_its_level(gen, tmp_path: Path) -> None:
    agent = MANIFESTS + (
        "  - apiVersion: apps/v1\n    kind: DaemonSet\n    metadata: {name: agent, namespace: tools}\n    spec:\n"
        "      selector: {matchLabels: {app: agent}}\n      template:\n"
        "        metadata: {labels: {app: agent}}\n        spec:\n          hostNetwork: true\n"
        "          containers: [{name: agent, image: 'ghcr.io/example/agent:1.0.0'}]\n"
    )
    run = _render(gen, tmp_path, target=BATCH_TARGET, batch=agent)
    assert run.code == 1
    host_network = next(line for line in run.err.splitlines() if "(check hostNamespaces)" in line)
    assert "batch.yaml:27:24: error pod-security" in host_network  # the team's own line
    assert 'namespace tools enforces Pod Security "restricted"' in host_network
    assert "set namespaces: {tools: {podSecurity: privileged}} on the Target" in host_network
    declared = BATCH_TARGET + "    tools: {podSecurity: privileged}\n"
    assert _render(gen, tmp_path, target=declared, batch=agent).code == 0
    assert _level(tmp_path, "tools") == "privileged"


def test_a_namespace_no_namespace_can_be_called_is_left_to_the_objects_own_finding(gen, tmp_path: Path) -> None:
    bad = MANIFESTS.replace("namespace: tools", "namespace: Tools_1")
    run = _render(gen, tmp_path, target=TARGET, batch=bad)
    assert run.code == 1
    (finding,) = [line for line in run.err.splitlines() if "Tools_1" in line]
    assert "batch.yaml:13:41: error k8s-name ConfigMap Tools_1/shared: $.metadata.namespace" in finding


# ---- pod fields that override what gen derives from the same policy ------------------------

WRITER = INFERENCE + "  costWriter: {serviceAccount: cost-writer}\n  downwardEnv: [POD_NAME, POD_NAMESPACE, POD_UID]\n"
RANKS = FINETUNE.replace("    backoffLimitPerIndex: 2\n", "") + "  service: {}\n"


@pytest.mark.parametrize(
    ("name", "policy", "pod", "breaks"),
    [
        ("vllm", INFERENCE + "  schedulerName: default-scheduler\n", "{schedulerName: gpu-packing}", "explain gpu"),
        ("vllm", WRITER, "{serviceAccountName: default}", "RBAC is bound to costWriter.serviceAccount 'cost-writer'"),
        ("vllm", WRITER, "{automountServiceAccountToken: false}", "no token to patch its Pod with"),
        ("finetune", RANKS, "{subdomain: ranks}", "ranks resolve as <pod>.finetune only"),
    ],
    ids=["scheduler-name", "service-account", "token", "subdomain"],
)
def test_a_pod_field_overriding_what_gen_derives_is_warned(
    gen, tmp_path: Path, name: str, policy: str, pod: str, breaks: str
) -> None:
    field = pod[1:].split(":")[0]
    run = _render(gen, tmp_path, target=TARGET, **{name: policy + f"  pod: {pod}\n"})
    assert run.code == 0, run.err  # the policy's own value wins
    (line,) = [line for line in run.err.splitlines() if " pod-field-derived " in line]
    assert f"warning pod-field-derived pod.{field} overrides what gen derives from this policy" in line
    assert breaks in line
    agreeing = {"schedulerName": "default-scheduler", "serviceAccountName": "cost-writer", "subdomain": name}
    if field in agreeing:  # the same value as gen's is no override
        run = _render(gen, tmp_path, target=TARGET, **{name: policy + f"  pod: {{{field}: {agreeing[field]}}}\n"})
        assert run.code == 0 and " pod-field-derived " not in run.err, run.err
    run = _render(gen, tmp_path, target=TARGET, **{name: policy})
    assert run.code == 0 and " pod-field-derived " not in run.err, run.err
