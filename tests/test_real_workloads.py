"""Real workloads (SPEC §8): Kubernetes' Container and PodSpec fields in policies, merged with
gen's guarantees; Services, budgets and patches; and every bad case located at its line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import POLICIES

COST = "controller.kubernetes.io/pod-deletion-cost"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("workloads") / "deploy"
    subprocess.run(
        [sys.executable, "-m", "generator", "render", POLICIES, "--out", out], check=True, capture_output=True
    )
    return out / "lab"


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_the_service_keeps_gens_guarantees_under_the_policys_fields(rendered: Path) -> None:
    deployment = _load(rendered / "shop" / "deployment-storefront.yaml")
    template = deployment["spec"]["template"]
    pod = template["spec"]
    assert COST in template["metadata"]["annotations"]
    assert "replicas" not in deployment["spec"]  # the HPA owns the count
    init, sidecar = pod["initContainers"]
    assert sidecar["restartPolicy"] == "Always"
    for container in (*pod["containers"], init, sidecar):  # restricted defaults reach every container
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    main = pod["containers"][0]
    assert [v["name"] for v in main["env"]] == ["DATABASE_URL", "LOG_FORMAT", "HOME"]  # HOME: a writable emptyDir
    assert main["startupProbe"]["failureThreshold"] == 30
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["tolerations"][0]["key"] == "dedicated"
    service = _load(rendered / "shop" / "service-storefront.yaml")
    assert service["spec"]["ports"] == [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}]
    budget = _load(rendered / "shop" / "poddisruptionbudget-storefront.yaml")
    assert budget["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "storefront"}}}


def test_the_policys_required_node_affinity_is_anded_into_every_gpu_term(rendered: Path) -> None:
    job = _load(rendered / "ml" / "job-resnet-train.yaml")
    spec = job["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert len(terms) == 1
    keys = [e["key"] for e in terms[0]["matchExpressions"]]
    assert keys == [
        "training.example.com/gpu-model",
        "training.example.com/gpu-memory-mib",
        "topology.kubernetes.io/zone",
    ]
    container = spec["containers"][0]
    assert (
        container["resources"]["limits"]["nvidia.com/gpu"] == container["resources"]["requests"]["nvidia.com/gpu"] == 4
    )
    assert {v["name"]: v for v in spec["volumes"]}["dshm"]["emptyDir"]["medium"] == "Memory"


def test_an_or_of_the_policys_terms_stays_anded_with_the_gpu(gen, tmp_path: Path) -> None:
    text = (
        (POLICIES / "resnet-train.yaml")
        .read_text()
        .replace("  schedulerName: custom-scheduler\n", "")
        .replace(
            "              values: [us-east-1a, us-east-1b]\n",
            "              values: [us-east-1a]\n          - matchExpressions:\n"
            "            - {key: node.example.com/reserved, operator: DoesNotExist}\n",
        )
    )
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "train.yaml").write_text(text)
    assert gen("render", tmp_path / "p", "--out", tmp_path / "out").code == 0
    job = _load(tmp_path / "out" / "default" / "ml" / "job-resnet-train.yaml")
    terms = job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert len(terms["nodeSelectorTerms"]) == 2
    for term in terms["nodeSelectorTerms"]:  # (gpu and zone) or (gpu and not reserved): never a term without the GPU
        assert [e["key"] for e in term["matchExpressions"]][:2] == [
            "training.example.com/gpu-model",
            "training.example.com/gpu-memory-mib",
        ]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kustomize_builds_the_real_workloads(rendered: Path) -> None:
    built = subprocess.run(["kubectl", "kustomize", rendered], check=True, capture_output=True, text=True).stdout
    names = {(doc["kind"], doc["metadata"]["name"]) for doc in yaml.safe_load_all(built)}
    assert {
        ("Deployment", "storefront"),
        ("HorizontalPodAutoscaler", "storefront"),
        ("Service", "storefront"),
        ("PodDisruptionBudget", "storefront"),
        ("Job", "resnet-train"),
        ("Namespace", "shop"),
        ("Namespace", "ml"),
    } <= names


WEB = "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata:\n  name: web\nspec:\n  image: nginx:1.27\n"
GPU = "apiVersion: gen/v1alpha1\nkind: GpuWorkload\nmetadata:\n  name: train\nspec:\n  gpu: {count: 1}\n  container:\n    image: t:1\n"

# (name, policy text, rule, line): each bad case must fail `gen render` at that line
BAD = [
    ("mount-without-volume", WEB + "  volumeMounts:\n  - {name: cache, mountPath: /c}\n", "k8s-volume-mount", 8),
    (
        "env-value-and-value-from",
        WEB + "  env:\n  - name: A\n    value: x\n    valueFrom: {secretKeyRef: {name: s, key: k}}\n",
        "k8s-env",
        10,
    ),
    (
        "sidecar-named-like-main",
        WEB + "  pod:\n    initContainers:\n    - {name: app, image: b:1, restartPolicy: Always}\n",
        "pod-container-name",
        9,
    ),
    (
        "duplicate-volume",
        WEB + "  pod:\n    volumes:\n    - {name: v, emptyDir: {}}\n    - {name: v, emptyDir: {}}\n",
        "k8s-name",
        10,
    ),
    (
        "port-name-twice",
        WEB + "  ports:\n  - {name: http, containerPort: 80}\n  - {name: http, containerPort: 81}\n",
        "k8s-port-name",
        9,
    ),
    (
        "init-probe-without-sidecar",
        WEB
        + "  pod:\n    initContainers:\n    - name: i\n      image: b:1\n      readinessProbe: {tcpSocket: {port: 1}}\n",
        "k8s-container",
        11,
    ),
    (
        "gpu-mount-without-volume",
        GPU + "    volumeMounts:\n    - {name: data, mountPath: /data}\n",
        "k8s-volume-mount",
        10,
    ),
    (
        "patch-missing-path",
        WEB + "  patches:\n  - patch:\n    - {op: replace, path: /spec/paused, value: true}\n",
        "patch-failed",
        9,
    ),
    (
        "patch-failed-test",
        WEB + "  patches:\n  - patch:\n    - {op: test, path: /kind, value: Pod}\n",
        "patch-failed",
        9,
    ),
    (
        "patch-cost-annotation",
        WEB
        + "  patches:\n  - patch:\n    - op: remove\n"
        + "      path: /spec/template/metadata/annotations/controller.kubernetes.io~1pod-deletion-cost\n",
        "patch-guarded",
        9,
    ),
    (
        "patch-selector",
        WEB + "  patches:\n  - patch:\n    - {op: add, path: /spec/selector/matchLabels/x, value: y}\n",
        "patch-guarded",
        9,
    ),
    (
        "patch-no-such-object",
        WEB + "  patches:\n  - target: {kind: Ingress}\n    patch:\n    - {op: add, path: /x, value: 1}\n",
        "patch-target",
        8,
    ),
    ("patch-malformed", WEB + "  patches:\n  - patch:\n    - {op: add, path: /spec/x}\n", "policy-required", 9),
    (
        "patch-refused-result",
        WEB + "  patches:\n  - patch:\n    - {op: add, path: /spec/template/spec/restartPolicy, value: Never}\n",
        "k8s-restart-policy",
        9,
    ),
]


@pytest.mark.parametrize(("name", "text", "rule", "line"), BAD, ids=[b[0] for b in BAD])
def test_bad_workloads_fail_the_render_at_their_line(
    gen, tmp_path: Path, name: str, text: str, rule: str, line: int
) -> None:
    policies, out = tmp_path / "policies", tmp_path / "deploy"
    policies.mkdir()
    (policies / "p.yaml").write_text(text)
    run = gen("render", policies, "--out", out)
    assert run.code == 1, run.err
    assert f"p.yaml:{line}:" in run.err and f" {rule} " in run.err, run.err
    assert not out.exists()  # nothing written


def test_a_test_of_the_end_of_a_list_names_no_python_object(gen, tmp_path: Path) -> None:
    """RFC 6901's "-" is the entry past the last one: a test of it never holds, said in words."""
    text = WEB + "  patches:\n  - patch:\n    - {op: test, path: /spec/template/spec/containers/-, value: 0}\n"
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "w.yaml").write_text(text)
    run = gen("render", tmp_path / "p", "--out", tmp_path / "out")
    assert run.code == 1, run.err
    assert "test /spec/template/spec/containers/-: the rendered object has no such path" in run.err, run.err
    assert "EndOfList" not in run.err and "{'" not in run.err, run.err


def test_a_gpu_affinity_patch_is_refused(gen, tmp_path: Path) -> None:
    text = GPU.replace("gpu: {count: 1}", "gpu: {count: 1, models: [A100]}")
    text += "  patches:\n  - patch:\n    - {op: remove, path: /spec/affinity}\n    - {op: replace, path: /spec/containers/0/resources/limits/nvidia.com~1gpu, value: 2}\n"
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "g.yaml").write_text(text)
    run = gen("render", tmp_path / "p", "--out", tmp_path / "out")
    assert run.code == 1
    assert "g.yaml:11:" in run.err and "g.yaml:12:" in run.err and run.err.count(" patch-guarded ") == 2, run.err


def test_patched_output_is_byte_stable(gen, tmp_path: Path) -> None:
    text = WEB + "  patches:\n  - patch:\n    - {op: add, path: /spec/revisionHistoryLimit, value: 3}\n"
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "w.yaml").write_text(text)
    first, second = tmp_path / "a", tmp_path / "b"
    assert gen("render", tmp_path / "p", "--out", first).code == 0
    assert gen("render", tmp_path / "p", "--out", second).code == 0
    a = (first / "default" / "default" / "deployment-web.yaml").read_bytes()
    assert a == (second / "default" / "default" / "deployment-web.yaml").read_bytes()
    assert b"revisionHistoryLimit: 3" in a


def test_a_patch_to_a_removed_api_fails_the_upgrade_check(gen, tmp_path: Path) -> None:
    """A Target's upgradeTo validates the output for the next version: an API it removes fails now."""
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "t.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: lab}\nspec: {kubernetesVersion: '1.31', upgradeTo: '1.32'}\n"
    )
    (tmp_path / "p" / "w.yaml").write_text(
        WEB
        + "  autoscaling: {maxReplicas: 3}\n  resources: {requests: {cpu: 100m}}\n"
        + "  patches:\n  - target: {kind: HorizontalPodAutoscaler}\n    patch:\n"
        + "    - {op: replace, path: /apiVersion, value: autoscaling/v2}\n"
    )
    assert gen("render", tmp_path / "p", "--out", tmp_path / "out").code == 0
    # the same policy through a patch naming an API 1.32 no longer serves
    flow = tmp_path / "p" / "flow.yaml"
    flow.write_text(
        WEB.replace("name: web", "name: flow")
        + "  patches:\n  - target: {kind: Deployment}\n    patch:\n"
        + "    - {op: replace, path: /apiVersion, value: flowcontrol.apiserver.k8s.io/v1beta3}\n"
        + "    - {op: replace, path: /kind, value: FlowSchema}\n"
    )
    run = gen("render", tmp_path / "p", "--out", tmp_path / "out2")
    assert run.code == 1 and " k8s-api-version " in run.err and "(for Kubernetes 1.32)" in run.err, run.err
    assert "flow.yaml:" in run.err


keys = st.sampled_from(["a", "b", "c"])
expressions = st.builds(
    lambda key, op, values: {"key": key, "operator": op, **({"values": values} if op in ("In", "NotIn") else {})},
    keys,
    st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]),
    st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=2),
)
terms = st.lists(
    st.builds(lambda e: {"matchExpressions": e}, st.lists(expressions, min_size=1, max_size=2)), min_size=1, max_size=3
)


@settings(max_examples=300, deadline=None)
@given(ours=terms, theirs=terms, labels=st.dictionaries(keys, st.sampled_from(["x", "y", "z"])))
def test_merged_required_affinity_matches_exactly_where_both_do(ours: list, theirs: list, labels: dict) -> None:
    """ANDing the policy's terms into gen's: a node matches the merged affinity iff it matches both,
    judged by the scheduler's own matching (preview.gpu)."""
    from generator.policies.podspec import merge_affinity
    from generator.preview.gpu import Node, affinity_mismatch

    def required(selector_terms: list) -> dict:
        return {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": selector_terms}}
        }

    node = Node("n", labels, {})

    def fits(affinity: dict) -> bool:
        return affinity_mismatch({"affinity": affinity}, node) is None

    merged = merge_affinity(required(ours), required(theirs))
    assert fits(merged) == (fits(required(ours)) and fits(required(theirs)))
