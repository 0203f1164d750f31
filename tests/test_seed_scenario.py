"""The bundled policies render the seed's scenario with the seed's values."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.problems import has_errors
from tests.conftest import POLICIES


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from generator import pipeline
    from generator.render import write

    out = tmp_path_factory.mktemp("out") / "deploy"
    result = pipeline.render(pipeline.RenderOptions(POLICIES, out))
    assert not has_errors(result.problems), result.problems
    write.write_all(out, result.plans)
    return out


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_gpu_pod_affinity_and_resources(rendered: Path) -> None:
    pod = load(rendered / "lab/scheduler-lab/pod-gpu-reservation-demo.yaml")
    spec = pod["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "training.example.com/gpu-model", "operator": "In", "values": ["A100"]},
                {"key": "training.example.com/gpu-memory-mib", "operator": "Gt", "values": ["40959"]},
            ]
        }
    ]
    resources = spec["containers"][0]["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == 2
    assert resources["requests"]["cpu"] == "100m" and resources["limits"]["memory"] == "128Mi"
    assert spec["schedulerName"] == "custom-scheduler"
    assert spec["automountServiceAccountToken"] is False
    assert spec["restartPolicy"] == "Never"
    assert spec["containers"][0]["command"] == ["sh", "-c", "sleep 60"]
    assert spec["containers"][0]["image"] == "busybox:1.37.0"


def test_scheduler_deployment(rendered: Path) -> None:
    dep = load(rendered / "lab/scheduler-lab/deployment-custom-scheduler.yaml")
    pod = dep["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["args"] == [
        "--config=/etc/scheduler/config.yaml",
        "--tls-cert-file=/etc/scheduler-serving/tls.crt",
        "--tls-private-key-file=/etc/scheduler-serving/tls.key",
    ]
    tls = next(v for v in pod["volumes"] if v["name"] == "serving-tls")
    assert tls["secret"] == {"secretName": "custom-scheduler-serving-tls", "defaultMode": 288}
    mount = next(m for m in container["volumeMounts"] if m["name"] == "serving-tls")
    assert mount["readOnly"] is True
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"]["scheme"] == "HTTPS"
        assert container[probe]["httpGet"]["port"] == "https"
    assert container["ports"] == [{"name": "https", "containerPort": 10259}]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    # the config ConfigMap it mounts is hashed into the template: a config change rolls the Pods
    assert len(dep["spec"]["template"]["metadata"]["annotations"]["gen.dev/config-hash"]) == 64


def test_scheduler_config_matches_seed(rendered: Path) -> None:
    cm = load(rendered / "lab/scheduler-lab/configmap-custom-scheduler-config.yaml")
    config = yaml.safe_load(cm["data"]["config.yaml"])
    assert config == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {
            "leaderElect": True,
            "resourceLock": "leases",
            "resourceName": "custom-scheduler",
            "resourceNamespace": "scheduler-lab",
            "leaseDuration": "15s",
            "renewDeadline": "10s",
            "retryPeriod": "2s",
        },
        "profiles": [
            {
                "schedulerName": "custom-scheduler",
                "plugins": {
                    # beyond the seed: Coscheduling, for the bundled gang-scheduled training Job
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                    # the seed's GPUPacking score plugin
                    "score": {"enabled": [{"name": "GPUPacking", "weight": 10}]},
                },
            }
        ],
    }


def test_service_monitor_and_metrics_rbac(rendered: Path) -> None:
    sm = load(rendered / "lab/monitoring/servicemonitor-custom-scheduler.yaml")
    endpoint = sm["spec"]["endpoints"][0]
    assert endpoint["tlsConfig"] == {
        "serverName": "custom-scheduler.scheduler-lab.svc",
        "ca": {"configMap": {"name": "custom-scheduler-ca", "key": "ca.crt"}},
    }
    assert endpoint["authorization"] == {
        "type": "Bearer",
        "credentials": {"name": "scheduler-scrape-token", "key": "token"},
    }
    assert endpoint["port"] == "https" and endpoint["scheme"] == "https" and endpoint["interval"] == "15s"
    role = load(rendered / "lab/_cluster/clusterrole-custom-scheduler-metrics.yaml")
    assert role["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    binding = load(rendered / "lab/_cluster/clusterrolebinding-custom-scheduler-metrics.yaml")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}]
    svc = load(rendered / "lab/scheduler-lab/service-custom-scheduler.yaml")
    assert svc["spec"]["ports"] == [{"name": "https", "port": 10259, "targetPort": "https"}]


def test_scheduler_rbac_covers_secondary_scheduler(rendered: Path) -> None:
    refs = {
        load(p)["roleRef"]["name"] for p in (rendered / "lab").rglob("*binding-*.yaml") if "custom-scheduler" in p.name
    }
    assert {
        "system:kube-scheduler",
        "system:volume-scheduler",
        "system:auth-delegator",
        "extension-apiserver-authentication-reader",
        "custom-scheduler-leader-election",
        "custom-scheduler-metrics",
    } <= refs
    role = load(rendered / "lab/scheduler-lab/role-custom-scheduler-leader-election.yaml")
    assert {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": ["custom-scheduler"],
        "verbs": ["get", "update"],
    } in role["rules"]


def test_dashboards_use_seed_queries(rendered: Path) -> None:
    import json

    cm = load(rendered / "lab/monitoring/configmap-custom-scheduler-dashboard.yaml")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    dash = json.loads(cm["data"]["custom-scheduler-dashboard.json"])
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    assert exprs == [
        'histogram_quantile(0.95, sum by (le, profile) (rate(scheduler_scheduling_attempt_duration_seconds_bucket{profile="custom-scheduler",result="scheduled"}[5m])))',
        'sum by (result) (rate(scheduler_schedule_attempts_total{profile="custom-scheduler"}[5m]))',
    ]
    cost = load(rendered / "lab/monitoring/configmap-deletion-cost-dashboard.yaml")
    dash = json.loads(cost["data"]["deletion-cost-dashboard.json"])
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    assert exprs[0].startswith(
        "count by (annotation_controller_kubernetes_io_pod_deletion_cost) (kube_pod_annotations{"
    )
    assert 'namespace="deletion-cost-lab"' in exprs[0]


def test_replicated_services(rendered: Path) -> None:
    cache = load(rendered / "lab/deletion-cost-lab/deployment-cache-app.yaml")
    assert "replicas" not in cache["spec"]
    template = cache["spec"]["template"]
    assert template["metadata"]["annotations"] == {"controller.kubernetes.io/pod-deletion-cost": "0"}
    container = template["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert [e["name"] for e in container["env"]] == ["POD_NAME", "POD_NAMESPACE", "POD_UID", "HOME"]
    hpa = load(rendered / "lab/deletion-cost-lab/horizontalpodautoscaler-cache-app.yaml")
    assert hpa["spec"]["minReplicas"] == 3 and hpa["spec"]["maxReplicas"] == 10
    assert hpa["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 70}
    assert hpa["spec"]["behavior"]["scaleDown"] == {
        "stabilizationWindowSeconds": 300,
        "policies": [
            {"type": "Percent", "value": 50, "periodSeconds": 60},
            {"type": "Pods", "value": 2, "periodSeconds": 60},
        ],
        "selectPolicy": "Min",
    }
    data = load(rendered / "lab/deletion-cost-lab/deployment-data-processor.yaml")
    assert data["spec"]["replicas"] == 5
    assert data["spec"]["template"]["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"] == "50"
    anti = data["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert anti == [
        {
            "weight": 100,
            "podAffinityTerm": {
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["data-processor"]}]},
                "topologyKey": "kubernetes.io/hostname",
            },
        }
    ]
    fresh = load(rendered / "lab/deletion-cost-lab/deployment-fresh-replica-service.yaml")
    assert fresh["spec"]["template"]["metadata"]["annotations"]["controller.kubernetes.io/pod-deletion-cost"] == "-50"


def test_integrations_are_outside_the_kustomization(rendered: Path) -> None:
    kustomization = load(rendered / "lab/kustomization.yaml")
    assert not any(r.startswith("integrations/") for r in kustomization["resources"])
    values = load(rendered / "lab/integrations/kube-state-metrics-values.yaml")
    assert values == {
        "kube-state-metrics": {"metricAnnotationsAllowList": ["pods=[controller.kubernetes.io/pod-deletion-cost]"]}
    }
    patch = load(rendered / "lab/integrations/kube-state-metrics-patch.yaml")
    assert patch[-1] == {
        "op": "add",
        "path": "/spec/template/spec/containers/0/args/-",
        "value": "--metric-annotations-allowlist=pods=[controller.kubernetes.io/pod-deletion-cost]",
    }


def test_every_file_has_a_provenance_header(rendered: Path) -> None:
    for path in (rendered / "lab").rglob("*.yaml"):
        first = path.read_text().splitlines()[0]
        assert first.startswith("# Generated by gen"), path


def test_manifest_lists_owned_files_with_sha256(rendered: Path) -> None:
    import hashlib
    import json

    manifest = json.loads((rendered / "lab/.gen-manifest.json").read_text())
    files = manifest["files"]
    assert "kustomization.yaml" in files
    for rel, digest in files.items():
        assert hashlib.sha256((rendered / "lab" / rel).read_bytes()).hexdigest() == digest
    on_disk = {p.relative_to(rendered / "lab").as_posix() for p in (rendered / "lab").rglob("*") if p.is_file()}
    assert on_disk == set(files) | {".gen-manifest.json"}
