"""Every rule in docs/rules.md has a failing and a passing fixture.

The tables below cover the rules the focused test modules do not; the last test checks the
catalogue against the code and the tests, so a new rule cannot land undocumented or untested.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, edit
from tests.test_validate import config, deployment, pod

SCHED = "kubescheduler.config.k8s.io/v1"


def hpa(**spec: Any) -> dict[str, Any]:
    base = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "minReplicas": 1,
        "maxReplicas": 3,
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
            }
        ],
    }
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {**base, **spec},
    }


def with_path(obj: dict[str, Any], path: tuple, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def profile(**fields: Any) -> dict[str, Any]:
    return config() | {"profiles": [{"schedulerName": "s", **fields}]}


def fit_args(strategy: dict[str, Any]) -> dict[str, Any]:
    return profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}])


GOOD_DEPLOYMENT = deployment("0")
CONTAINER = ("spec", "containers", 0)
TEMPLATE_CONTAINER = ("spec", "template", "spec", "containers", 0)

# rule -> (an object Kubernetes rejects (or warns about), the nearest object it accepts)
MANIFEST_RULES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "k8s-name": (with_path(pod(), ("metadata", "name"), "Bad_Name"), pod()),
    "k8s-annotation": (with_path(pod(), ("metadata", "annotations"), {"bad key!": "v"}), pod()),
    "k8s-annotation-size": (
        with_path(pod(), ("metadata", "annotations"), {"a": "x" * 262_145}),
        with_path(pod(), ("metadata", "annotations"), {"a": "x" * 1000}),
    ),
    "k8s-quantity": (pod(resources={"requests": {"cpu": "-1"}}), pod(resources={"requests": {"cpu": "1"}})),
    "k8s-resource-name": (
        pod(resources={"limits": {"gpu!": 1}}),
        pod(resources={"limits": {"example.com/gpu": 1}}),
    ),
    "k8s-request-over-limit": (
        pod(resources={"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi", "nvidia.com/gpu": 1}}),
        pod(resources={"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi", "nvidia.com/gpu": 1}}),
    ),
    "k8s-restart-policy": (
        with_path(GOOD_DEPLOYMENT, ("spec", "template", "spec", "restartPolicy"), "Never"),
        with_path(GOOD_DEPLOYMENT, ("spec", "template", "spec", "restartPolicy"), "Always"),
    ),
    "k8s-selector": (
        with_path(GOOD_DEPLOYMENT, ("spec", "selector"), {"matchLabels": {"app": "other"}}),
        GOOD_DEPLOYMENT,
    ),
    "k8s-deployment": (
        with_path(GOOD_DEPLOYMENT, ("spec", "replicas"), -1),
        with_path(GOOD_DEPLOYMENT, ("spec", "replicas"), 0),
    ),
    "k8s-affinity-weight": (
        with_path(
            pod(),
            ("spec", "affinity"),
            {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
                    ]
                }
            },
        ),
        with_path(
            pod(),
            ("spec", "affinity"),
            {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
                    ]
                }
            },
        ),
    ),
    "k8s-hpa": (hpa(minReplicas=3, maxReplicas=2), hpa(minReplicas=2, maxReplicas=2)),
    "k8s-hpa-behavior": (
        hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 3601}}),
        hpa(behavior={"scaleDown": {"stabilizationWindowSeconds": 3600}}),
    ),
    "k8s-unknown-kind": (
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}},
    ),
    "secret-material": (
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"token": "x"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque"},
    ),
    "insecure-tls": (
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": {"name": "m"},
            "spec": {
                "selector": {},
                "endpoints": [{"port": "https", "scheme": "https", "tlsConfig": {"insecureSkipVerify": True}}],
            },
        },
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": {"name": "m"},
            "spec": {
                "selector": {},
                "endpoints": [{"port": "https", "scheme": "https", "tlsConfig": {"serverName": "s"}}],
            },
        },
    ),
    "dashboard-json": (
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}, "data": {"d.json": '{"panels": [}'}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}, "data": {"d.json": '{"panels": []}'}},
    ),
    "k8s-finalizer": (
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": ["cleanup"]}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": ["example.com/cleanup"]}},
    ),
    "k8s-metadata": (
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "c",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"}],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "c",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "1"}],
            },
        },
    ),
    "size-configmap": (
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x" * (1024 * 1024 + 1)}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x" * 1024}},
    ),
    "size-last-applied": (
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x" * 300_000}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x" * 200_000}},
    ),
    "promql-parse": (
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": {"name": "r"},
            "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "sum(rate(x[5m]"}]}]},
        },
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": {"name": "r"},
            "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "sum(rate(x[5m]))"}]}]},
        },
    ),
    "scheduler-queue-sort": (
        profile(plugins={"queueSort": {"enabled": [{"name": "PrioritySort"}], "disabled": [{"name": "*"}]}})
        | {
            "profiles": [
                {"schedulerName": "s", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}},
                {
                    "schedulerName": "t",
                    "plugins": {"queueSort": {"enabled": [{"name": "Other"}], "disabled": [{"name": "*"}]}},
                },
            ]
        },
        profile(),
    ),
    "scheduler-plugin-config": (
        profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {}}, {"name": "NodeResourcesFit", "args": {}}]),
        profile(pluginConfig=[{"name": "NodeResourcesFit", "args": {}}]),
    ),
    "scheduler-plugin-args": (
        fit_args({"type": "Packed"}),
        fit_args({"type": "MostAllocated", "resources": [{"name": "nvidia.com/gpu", "weight": 1}]}),
    ),
    "scheduler-plugin-duplicate": (
        profile(plugins={"score": {"enabled": [{"name": "GPUPacking"}, {"name": "GPUPacking"}]}}),
        profile(plugins={"score": {"enabled": [{"name": "GPUPacking"}]}}),
    ),
    "scheduler-extender": (
        config() | {"extenders": [{"urlPrefix": "http://e", "prioritizeVerb": "p", "weight": 0}]},
        config() | {"extenders": [{"urlPrefix": "http://e", "prioritizeVerb": "p", "weight": 1}]},
    ),
    "deletion-cost-on-owner": (
        with_path(GOOD_DEPLOYMENT, ("metadata", "annotations"), {"controller.kubernetes.io/pod-deletion-cost": "5"}),
        GOOD_DEPLOYMENT,
    ),
    "k8s-port": (pod(ports=[{"containerPort": 70000}]), pod(ports=[{"containerPort": 65535}])),
    "scheduler-lease-shared": (
        config() | {"leaderElection": {"leaderElect": True}},
        config(),
    ),
}


def _write(tmp_path: Path, name: str, obj: Any) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(obj))
    return path


def test_k8s_object_rule(gen, tmp_path: Path) -> None:
    assert " k8s-object " in gen("validate", _write(tmp_path, "bad", {"kind": "Pod", "metadata": {"name": "a"}})).out
    assert gen("validate", "--strict", _write(tmp_path, "good", pod())).code == 0


@pytest.mark.parametrize("rule", sorted(MANIFEST_RULES))
def test_manifest_rule_fails_and_passes(gen, tmp_path: Path, rule: str) -> None:
    bad, good = MANIFEST_RULES[rule]
    failing = gen("validate", "--strict", _write(tmp_path, "bad", bad))
    assert failing.code == 1 and f" {rule} " in failing.out, failing.out
    assert "bad.yaml:" in failing.out
    passing = gen("validate", "--strict", _write(tmp_path, "good", good))
    assert f" {rule} " not in passing.out, passing.out


BASE_POLICIES = {
    "scheduler.yaml": """\
apiVersion: gen/v1alpha1
kind: Scheduler
metadata: {name: s}
spec:
  namespace: sched
  image: example/scheduler:1
  outOfTreePlugins: [GPUPacking]
  profiles:
  - schedulerName: gpu
    plugins: {score: {enabled: [{name: GPUPacking, weight: 10}]}}
    pluginConfig:
    - name: NodeResourcesFit
      args: {scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu, weight: 1}]}}
""",
}
GPU = """\
apiVersion: gen/v1alpha1
kind: GpuWorkload
metadata: {name: train}
spec:
  schedulerName: gpu
  workloadKind: Job
  restartPolicy: %s
  gpu: {count: 1%s}
  container:
    name: c
    image: example/train:1
    resources: %s
"""
SERVICE = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata: {name: web}
spec:
  namespace: web
  image: example/web:1
  deletionCost: {initial: 0}
%s"""
COST = """\
apiVersion: gen/v1alpha1
kind: DeletionCostPolicy
metadata: {name: %s}
spec:
  tiers: {low: %s}
"""
# rule -> (policy files with the mistake, the fixed files)
POLICY_RULES: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "gpu-restart-policy": (
        {"gpu.yaml": GPU % ("Always", ", models: [A100]", "{}")},
        {"gpu.yaml": GPU % ("Never", ", models: [A100]", "{}")},
    ),
    "gpu-no-affinity": (
        {"gpu.yaml": GPU % ("Never", "", "{}")},
        {"gpu.yaml": GPU % ("Never", ", models: [A100]", "{}")},
    ),
    "gpu-resource-duplicate": (
        {"gpu.yaml": GPU % ("Never", ", models: [A100]", "{limits: {nvidia.com/gpu: 2}}")},
        {"gpu.yaml": GPU % ("Never", ", models: [A100]", "{limits: {memory: 1Gi}}")},
    ),
    "gpu-memory-unreachable": (
        {
            "gpu.yaml": GPU
            % ("Never", ", labels: nvidia-gfd, models: [NVIDIA-H100-80GB-HBM3], minMemoryMiB: 81920", "{}")
        },
        {
            "gpu.yaml": GPU
            % ("Never", ", labels: nvidia-gfd, models: [NVIDIA-H100-80GB-HBM3], minMemoryMiB: 81559", "{}")
        },
    ),
    "gpu-job-backoff": (
        {
            "gpu.yaml": GPU % ("Never", ", models: [A100]", "{}")
            + "  job: {completionMode: Indexed, completions: 4, parallelism: 4, backoffLimitPerIndex: 2, backoffLimit: 3}\n"
        },
        {
            "gpu.yaml": GPU % ("Never", ", models: [A100]", "{}")
            + "  job: {completionMode: Indexed, completions: 4, parallelism: 4, backoffLimitPerIndex: 2}\n"
        },
    ),
    "gpu-liveness-startup": (
        {"web.yaml": SERVICE % "  gpu: {count: 1, models: [A100]}\n  livenessProbe: {tcpSocket: {port: 8080}}\n"},
        {
            "web.yaml": SERVICE % "  gpu: {count: 1, models: [A100]}\n  livenessProbe: {tcpSocket: {port: 8080}}\n"
            "  startupProbe: {tcpSocket: {port: 8080}, periodSeconds: 10, failureThreshold: 90}\n"
        },
    ),
    "target-namespace": (
        {
            "t.yaml": "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: t}\n"
            "spec: {namespaces: {default: {podSecurity: baseline}}}\n"
        },
        {
            "t.yaml": "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: t}\n"
            "spec: {namespaces: {ml: {podSecurity: baseline}}}\n"
        },
    ),
    "cost-tier-range": ({"cost.yaml": COST % ("c", "[10, 1]")}, {"cost.yaml": COST % ("c", "[1, 10]")}),
    "cost-policy-single": (
        {"a.yaml": COST % ("a", "[1, 10]"), "b.yaml": COST % ("b", "[1, 10]")},
        {"a.yaml": COST % ("a", "[1, 10]")},
    ),
    "cost-annotation-duplicate": (
        {"web.yaml": SERVICE % "  podAnnotations: {controller.kubernetes.io/pod-deletion-cost: '5'}\n"},
        {"web.yaml": SERVICE % "  podAnnotations: {example.com/team: web}\n"},
    ),
    "cost-writer-uid": (
        {"web.yaml": SERVICE % "  costWriter: {serviceAccount: writer}\n"},
        {
            "web.yaml": SERVICE
            % "  costWriter: {serviceAccount: writer}\n  downwardEnv: [POD_NAME, POD_NAMESPACE, POD_UID]\n"
        },
    ),
    "gpu-packing-least-allocated": (
        {"scheduler.yaml": BASE_POLICIES["scheduler.yaml"].split("    pluginConfig:")[0]},
        {},
    ),
    "metrics-ca-namespace": (
        {"scheduler.yaml": BASE_POLICIES["scheduler.yaml"] + "  metrics:\n    ca: {namespace: other}\n"},
        {"scheduler.yaml": BASE_POLICIES["scheduler.yaml"] + "  metrics:\n    ca: {namespace: monitoring}\n"},
    ),
    "target-output-dir": (
        {
            "a.yaml": "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: a}\nspec: {outputDir: same}\n",
            "b.yaml": "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: b}\nspec: {outputDir: same}\n",
        },
        {
            "a.yaml": "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: a}\nspec: {outputDir: a}\n",
            "b.yaml": "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: b}\nspec: {outputDir: b}\n",
        },
    ),
    "service-ports": (
        {
            "s.yaml": "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata: {name: s}\nspec: {image: 'nginx:1.27', ports: [{containerPort: 80}], service: {}}\n"
        },
        {
            "s.yaml": "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata: {name: s}\nspec: {image: 'nginx:1.27', ports: [{name: http, containerPort: 80}], service: {}}\n"
        },
    ),
    "budget-blocks-eviction": (
        {
            "s.yaml": "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata: {name: s}\nspec: {image: 'nginx:1.27', autoscaling: {minReplicas: 3, maxReplicas: 6}, disruptionBudget: {minAvailable: '100%'}}\n"
        },
        {
            "s.yaml": "apiVersion: gen/v1alpha1\nkind: ReplicatedService\nmetadata: {name: s}\nspec: {image: 'nginx:1.27', autoscaling: {minReplicas: 3, maxReplicas: 6}, disruptionBudget: {maxUnavailable: '10%'}}\n"
        },
    ),
    "target-version": (
        {
            "t.yaml": "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: t}\nspec: {kubernetesVersion: '1.35', upgradeTo: '1.34'}\n"
        },
        {
            "t.yaml": "apiVersion: gen/v1alpha1\nkind: Target\nmetadata: {name: t}\nspec: {kubernetesVersion: '1.35', upgradeTo: '1.36'}\n"
        },
    ),
    "policy-shape": ({"list.yaml": "- just\n- a list\n"}, {}),
    "policy-required": (
        {"gpu.yaml": "apiVersion: gen/v1alpha1\nkind: GpuWorkload\nmetadata: {name: g}\nspec: {gpu: {count: 1}}\n"},
        {"gpu.yaml": GPU % ("Never", ", models: [A100]", "{}")},
    ),
    "policy-duplicate-name": (
        {"a.yaml": SERVICE % "", "b.yaml": SERVICE % ""},
        {"a.yaml": SERVICE % "", "b.yaml": (SERVICE % "").replace("name: web", "name: api")},
    ),
}


@pytest.mark.parametrize("rule", sorted(POLICY_RULES))
def test_policy_rule_fails_and_passes(gen, tmp_path: Path, rule: str) -> None:
    for label, files in zip(("bad", "good"), POLICY_RULES[rule], strict=True):
        root = tmp_path / label / "policies"
        root.mkdir(parents=True)
        for name, text in {**BASE_POLICIES, **files}.items():
            (root / name).write_text(text)
        run = gen("lint", "--strict", root)
        if label == "bad":
            assert f" {rule} " in run.out, run.out
            assert run.code == (0 if f"info {rule} " in run.out else 1)
            assert re.search(rf"\.yaml:[1-9]\d*:\d+: \w+ {rule} ", run.out), run.out
        else:
            assert f" {rule} " not in run.out, run.out


def _documented() -> set[str]:
    from generator.catalogue import rules

    return set(rules())


def _emitted() -> set[str]:
    source = "\n".join(p.read_text() for p in (ROOT / "generator").rglob("*.py"))
    found = set(
        re.findall(
            r'"((?:yaml|file|input|policy|target|gpu|scheduler|cost|hpa|colocate|placement|k8s|'
            r"deletion|secret|insecure|size|promql|dashboard|template|object|output|drift|pod|rbac|"
            r'inventory|utilization|autoscaling|scale|patch|service|budget|helm|manifests|batch|image|ignore|crd|config|baseline)-[a-z0-9-]+)"',
            source,
        )
    )
    return found - {"pod-template-hash", "scale-down"}  # a Kubernetes label key and a command name, not rules


def test_every_emitted_rule_is_documented() -> None:
    missing = sorted(_emitted() - _documented())
    assert not missing, f"add to docs/rules.md: {missing}"


def test_every_documented_rule_has_a_failing_fixture() -> None:
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py"))
    untested = sorted(r for r in _documented() if "*" not in r and f'"{r}"' not in tests and f" {r} " not in tests)
    assert not untested, f"no fixture names these rules: {untested}"


MONITORING = "apiVersion: gen/v1alpha1\nkind: Monitoring\nmetadata:\n  name: m\n"


def test_file_rules(gen, tmp_path: Path) -> None:
    from generator.yamlio.load import load_file

    root = tmp_path / "policies"
    root.mkdir()
    (root / "latin1.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    assert " file-encoding " in gen("lint", root / "latin1.yaml").out
    (root / "latin1.yaml").write_text("# caf\u00e9, in UTF-8\n" + MONITORING)
    assert gen("lint", "--strict", root / "latin1.yaml").out == ""
    assert " file-missing " in gen("lint", root / "absent.yaml").out
    _, problems = load_file(root)  # a directory where a file was expected
    assert [p.rule for p in problems] == ["file-unreadable"]
    assert load_file(root / "latin1.yaml")[1] == []


def test_render_rules(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    app = policy_copy / "cache-app.yaml"
    clash = app.read_text() + "  costWriter:\n    serviceAccount: data-processor\n"
    other = policy_copy / "data-processor.yaml"
    other.write_text(other.read_text() + "  costWriter:\n    serviceAccount: data-processor\n")
    app.write_text(clash)
    collided = gen("render", policy_copy, "--out", out)
    assert collided.code == 1 and " object-collision " in collided.err
    edit(other, "serviceAccount: data-processor", "serviceAccount: dp-writer")
    assert gen("render", policy_copy, "--out", out).code == 0

    owned = out / "lab/deletion-cost-lab/deployment-cache-app.yaml"
    owned.write_text(owned.read_text() + "# edited\n")
    assert " drift-modified " in gen("render", policy_copy, "--out", out, "--check").out
    assert gen("render", policy_copy, "--out", out).code == 0
    assert gen("render", policy_copy, "--out", out, "--check").code == 0

    (policy_copy / "extra.yaml").write_text(
        (policy_copy / "fresh-replica-service.yaml").read_text().replace("name: fresh-replica-service", "name: extra")
    )
    (out / "lab/deletion-cost-lab/deployment-extra.yaml").write_text("# mine\n")
    assert " output-collision " in gen("render", policy_copy, "--out", out, "--check").out


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("{% if %}", "template-syntax"),
        ("{{ missing.value }}", "template-render"),
        ("{{ range(3) | list }}", "template-render"),  # no globals: Jinja's defaults are removed
        ("{{ namespace(a=1).a }}", "template-render"),
        ("a: {{ 1 }}\n  b: [", "template-output"),
    ],
)
def test_template_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, rule: str) -> None:
    from generator.render import templates as render

    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.yaml.j2").write_text(source)
    (tmp_path / "templates" / "ok.yaml.j2").write_text("a: {{ value }}\n")
    monkeypatch.setattr(render, "data_dir", lambda name: tmp_path / name)
    render._environment.cache_clear()
    try:
        with pytest.raises(render.RenderError) as caught:
            render.render_yaml("t.yaml.j2", {})
        assert caught.value.problem.rule == rule
        assert render.render_yaml("ok.yaml.j2", {"value": "x: y"}) == {"a": "x: y"}
    finally:
        render._environment.cache_clear()


def test_a_broken_template_compiled_ahead_is_still_reported_by_the_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Templates compiled while policies load must not turn a syntax error into a crash."""
    from generator.render import templates as render

    broken = tmp_path / "templates" / "replicatedservice" / "deployment.yaml.j2"
    broken.parent.mkdir(parents=True)
    broken.write_text("kind: Deployment\n{% if %}\n")
    monkeypatch.setattr(render, "data_dir", lambda name: tmp_path / name)
    render._environment.cache_clear()
    try:
        render.compile_templates(("ReplicatedService",))
        with pytest.raises(render.RenderError) as caught:
            render.render_yaml("replicatedservice/deployment.yaml.j2", {})
        assert (caught.value.problem.rule, caught.value.problem.line) == ("template-syntax", 2)
    finally:
        render._environment.cache_clear()


def test_field_lookup_on_mappings_answers_as_jinjas_sandbox() -> None:
    """Templates read policy fields as `p.field`; gen's direct lookup must give Jinja's answer."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from generator.render import templates as render

    ours, jinjas = render._environment("yaml"), ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined)
    spec = {"image": "x", "items": 3, "get": 4, "__class__": 5, "mro": 6, "empty": None}
    for name in ["image", "items", "get", "keys", "__class__", "__init__", "mro", "empty", "missing"]:
        mine, theirs = ours.getattr(spec, name), jinjas.getattr(spec, name)
        if isinstance(theirs, jinja2.Undefined):
            assert type(mine) is type(theirs), name
        else:
            assert mine == theirs and type(mine) is type(theirs), name
    assert ours.getattr(render.Fragment("a", 1, None, "c"), "relpath") == "a"  # not a dict: Jinja's path  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        (b"\xff\xfe not utf-8", "input-encoding"),
        (b"- name: a\n---\n- name: b\n", "input-documents"),
        (b"- name: a\n  allocatable: {nvidia.com/gpu: many}\n", "inventory-invalid"),
        (b"- name: a\n- name: a\n", "inventory-duplicate-node"),
        (b'[{"name": "a", "allocatable": {"nvidia.com/gpu": 1e400}}]', "inventory-invalid"),
        (None, "input-unreadable"),
    ],
)
def test_inventory_rules(gen, tmp_path: Path, content: bytes | None, rule: str) -> None:
    from tests.conftest import POLICIES

    nodes = tmp_path / "nodes.yaml"
    if content is not None:
        nodes.write_bytes(content)
    run = gen("explain", "gpu", "--workload", "gpu-reservation-demo", "--nodes", nodes, POLICIES)
    assert run.code == 1 and f" {rule} " in run.err, run.err
    nodes.write_text(
        "- name: a\n  labels: {training.example.com/gpu-model: A100, training.example.com/gpu-memory-mib: '81920'}\n"
        "  allocatable: {nvidia.com/gpu: 8, cpu: 64, memory: 512Gi}\n"
    )
    assert gen("explain", "gpu", "--workload", "gpu-reservation-demo", "--nodes", nodes, POLICIES).code == 0


def test_utilization_and_now_rules(gen, tmp_path: Path) -> None:
    from tests.conftest import POLICIES

    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        "- name: a\n  labels: {training.example.com/gpu-model: A100, training.example.com/gpu-memory-mib: '81920'}\n"
        "  allocatable: {nvidia.com/gpu: 8, cpu: 64, memory: 512Gi}\n"
    )
    samples = tmp_path / "util.yaml"
    samples.write_text("- {node: a, utilization: -0.5, observed_at: '2026-12-02T10:00:00Z'}\n")
    args = (
        "explain",
        "gpu",
        "--workload",
        "gpu-reservation-demo",
        "--nodes",
        nodes,
        "--utilization",
        samples,
        POLICIES,
    )
    assert " utilization-invalid " in gen(*args, "--now", "2026-12-02T10:00:10Z").err
    assert " utilization-now " in gen(*args, "--now", "2026-12-02T10:00:10").err
    samples.write_text("- {node: a, utilization: 0.5, observed_at: '2026-12-02T10:00:00Z'}\n")
    assert gen(*args, "--now", "2026-12-02T10:00:10Z").code == 0

    sample = tmp_path / "sample.json"
    sample.write_text(
        '{"pod_uid": "u", "observed_at": "2026-12-02T10:00:00Z", "active_requests": 1,'
        ' "cache_hit_rate": 0.5, "avg_response_time_ms": 10}'
    )
    naive = gen("cost", "--sample", sample, "--now", "2026-12-02T10:00:10", POLICIES)
    assert (naive.code, naive.out) == (1, "") and " cost-now " in naive.err
    assert gen("cost", "--sample", sample, "--now", "2026-12-02T10:00:10Z", POLICIES).code == 0


EXAMPLES = ROOT / "docs" / "rule-examples.md"


def _shorten(value: Any) -> Any:
    """Long strings (size-limit fixtures) become a note of their length."""
    if isinstance(value, str) and len(value) > 120:
        return f"<{len(value)} characters>"
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    return value


def _manifest_yaml(obj: Any) -> str:
    return yaml.safe_dump(_shorten(obj), sort_keys=False, default_flow_style=False).rstrip()


def _policy_yaml(files: dict[str, str]) -> str:
    return "\n".join(f"# {name}\n{text.rstrip()}" for name, text in files.items()) or "# (the file removed)"


def render_examples() -> str:
    """docs/rule-examples.md, made from the fixtures the tests run, so the examples are true."""
    from tests.test_lint import BAD
    from tests.test_validate import INVALID

    sections: dict[str, list[str]] = {}
    for rule, (bad, good) in MANIFEST_RULES.items():
        sections.setdefault(rule, []).append(
            f"Found by `gen validate`:\n\n```yaml\n{_manifest_yaml(bad)}\n```\n\n"
            f"Accepted:\n\n```yaml\n{_manifest_yaml(good)}\n```\n"
        )
    for name, (bad, rule) in INVALID.items():
        sections.setdefault(rule, []).append(
            f"Found by `gen validate` ({name}):\n\n```yaml\n{_manifest_yaml(bad)}\n```\n"
        )
    for rule, (bad, good) in POLICY_RULES.items():
        sections.setdefault(rule, []).append(
            f"Found by `gen lint`:\n\n```yaml\n{_policy_yaml(bad)}\n```\n\nFixed:\n\n```yaml\n{_policy_yaml(good)}\n```\n"
        )
    for name, text, rule, line in BAD:
        sections.setdefault(rule, []).append(
            f"Found by `gen lint` at line {line} ({name}):\n\n```yaml\n{text.rstrip()}\n```\n"
        )
    parts = [
        "# Rule examples\n",
        "Generated from the test fixtures (`tests/test_rule_catalogue.py`, `tests/test_validate.py`,\n"
        "`tests/test_lint.py`); every example here is run by the test suite. Regenerate with\n"
        "`UPDATE_DOCS=1 pytest tests/test_rule_catalogue.py`. The rules themselves are described in\n"
        "[rules.md](rules.md).\n",
    ]
    for rule in sorted(sections):
        parts.append(f"## {rule}\n")
        parts.extend(sections[rule])
    return "\n".join(parts)


def test_rule_examples_document_is_current() -> None:
    import os

    text = render_examples()
    if os.environ.get("UPDATE_DOCS"):
        EXAMPLES.write_text(text)
    assert EXAMPLES.read_text() == text, "run UPDATE_DOCS=1 pytest tests/test_rule_catalogue.py"
