"""gen validate judges manifests as kube-apiserver / kube-scheduler 1.35 would."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.problems import Severity
from tests.conftest import POLICIES

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"containers": [{"name": "c", "image": "busybox:1.37", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
}


def pod(**changes) -> dict:
    import copy

    obj = copy.deepcopy(POD)
    container = obj["spec"]["containers"][0]
    for key, value in changes.items():
        if key == "affinity":
            obj["spec"]["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [value]}]
                    }
                }
            }
        elif key == "annotations":
            obj["metadata"]["annotations"] = value
        else:
            container[key] = value
    return obj


def deployment(cost: str) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {
                    "labels": {"app": "d"},
                    "annotations": {"controller.kubernetes.io/pod-deletion-cost": cost},
                },
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
    }


def config(**le) -> dict:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"resourceName": "s", "resourceNamespace": "s", **le},
        "profiles": [{"schedulerName": "s", "plugins": {"score": {"enabled": [{"name": "GPUPacking", "weight": 10}]}}}],
    }


def _container(name: str = "c", requests: dict | None = None, limits: dict | None = None, **extra) -> dict:
    resources = {"limits": {"nvidia.com/gpu": 1, **(limits or {})}, **({"requests": requests} if requests else {})}
    return {"name": name, "image": "busybox:1.37", "resources": resources, **extra}


def _spec(**fields) -> dict:
    import copy

    obj = copy.deepcopy(POD)
    obj["spec"].update(fields)
    return obj


def _rbac(kind: str, name: str) -> dict:
    """An RBAC object named as kube-prometheus and metrics-server name theirs."""
    if kind == "ClusterRole":
        return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name}, "rules": []}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "metrics-server", "namespace": "kube-system"}],
    }


def _service(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"ports": [{"port": 80}]},
    }


def _hpa(*metrics: dict) -> dict:
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {**spec, **({"metrics": list(metrics)} if metrics else {})},
    }


def _named(obj: dict, **meta) -> dict:
    return obj | {"metadata": meta}


def _binding(binding: str = "RoleBinding", ref: dict | None = None, **subject) -> dict:
    return _rbac(binding, "b") | {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"} | (ref or {}),
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"} | subject],
    }


def _pods_metric(name: str) -> dict:
    return {"type": "Pods", "pods": {"metric": {"name": name}, "target": {"type": "AverageValue", "averageValue": "1"}}}


VALID = {
    "gpu-limits-only": pod(),
    # SetDefaults_Subject gives a User or Group the RBAC group before validation
    "binding-user-without-api-group": _rbac("RoleBinding", "b")
    | {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"}],
    },
    "statefulset-mounting-its-claim": {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "ns"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "containers": [
                        {"name": "db", "image": "postgres:17", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}
                    ]
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            ],
        },
    },
    # generated names: a trailing dash is how prefixes end
    "generate-name": _named(pod(), generateName="trainer-"),
    "generate-name-rbac": _named(_rbac("ClusterRole", "x"), generateName="system:reader:"),
    "binding-system-role": _binding(ref={"name": "system:auth-delegator"}),
    "binding-user-and-group": _binding(
        "ClusterRoleBinding", kind="User", name="alice@example.com", apiGroup="rbac.authorization.k8s.io"
    )
    | {"subjects": [{"kind": "Group", "name": "system:masters", "apiGroup": "rbac.authorization.k8s.io"}]},
    "hpa-metric-name-dotted": _hpa(_pods_metric("http_requests.per-second")),
    # kube-apiserver validates RBAC names as path segments, not DNS subdomains
    "rbac-system-colon-name": _rbac("ClusterRole", "system:aggregated-metrics-reader"),
    "rbac-binding-colon-name": _rbac("ClusterRoleBinding", "metrics-server:system:auth-delegator"),
    "gt-zero": pod(affinity={"key": "gpu-memory-mib", "operator": "Gt", "values": ["0"]}),
    "int32-min-cost": deployment("-2147483648"),
    "cost-minus-zero": deployment("-0"),
    "port-name-15": pod(ports=[{"name": "abcdefghijklmno", "containerPort": 80}]),
    "weight-zero": config()
    | {"profiles": [{"schedulerName": "s", "plugins": {"score": {"enabled": [{"name": "GPUPacking", "weight": 0}]}}}]},
    "scheduler-config": config(),
    "renew-8-retry-6": config(renewDeadline="10s", retryPeriod="8s"),
    "tolerations": _spec(
        tolerations=[
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"operator": "Exists"},
            {"key": "k", "value": "v", "effect": "NoExecute", "tolerationSeconds": 30},
        ]
    ),
    "pod-level-resources": _spec(
        resources={"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        containers=[_container(requests={"cpu": "1", "memory": "512Mi"}, limits={"memory": "2Gi"})],
    ),
    "host-network-port-defaulted": _spec(hostNetwork=True, containers=[_container(ports=[{"containerPort": 80}])]),
    "host-ports-by-protocol": _spec(
        containers=[
            _container(ports=[{"containerPort": 53, "hostPort": 53}]),
            _container("d", ports=[{"containerPort": 53, "hostPort": 53, "protocol": "UDP"}]),
        ]
    ),
    "rolling-update-percentages": deployment("0")
    | {"spec": {**deployment("0")["spec"], "strategy": {"rollingUpdate": {"maxUnavailable": "100%", "maxSurge": 0}}}},
    "hpa-utilization-150": _hpa(
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 150}}}
    ),
    "hpa-pods-average": _hpa(
        {"type": "Pods", "pods": {"metric": {"name": "m"}, "target": {"type": "AverageValue", "averageValue": "100m"}}}
    ),
    "multipoint-own-sort-and-binder": config()
    | {
        "profiles": [
            {
                "schedulerName": "s",
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}, {"name": "NodeResourcesFit"}],
                        "disabled": [{"name": "*"}],
                    }
                },
            }
        ]
    },
    "extender-managed-gpu": config()
    | {"extenders": [{"urlPrefix": "http://e", "filterVerb": "f", "managedResources": [{"name": "nvidia.com/gpu"}]}]},
    "enums": _spec(
        restartPolicy="OnFailure",
        dnsPolicy="ClusterFirst",
        containers=[_container(imagePullPolicy="IfNotPresent", ports=[{"containerPort": 53, "protocol": "SCTP"}])],
    ),
    "hugepages-with-memory": pod(resources={"limits": {"hugepages-2Mi": "2Mi", "memory": "64Mi", "nvidia.com/gpu": 1}}),
}
INVALID = {
    "gpu-fraction": (pod(resources={"limits": {"nvidia.com/gpu": "500m"}}), "k8s-extended-resource-integer"),
    "gpu-requests-ne-limits": (
        pod(resources={"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}}),
        "k8s-extended-resource-limit",
    ),
    "gpu-requests-only": (pod(resources={"requests": {"nvidia.com/gpu": 1}}), "k8s-extended-resource-limit"),
    "gt-two-values": (pod(affinity={"key": "m", "operator": "Gt", "values": ["1", "2"]}), "k8s-node-selector"),
    "gt-negative": (pod(affinity={"key": "m", "operator": "Gt", "values": ["-1"]}), "k8s-node-selector"),
    "exists-with-values": (pod(affinity={"key": "m", "operator": "Exists", "values": ["a"]}), "k8s-node-selector"),
    "bad-operator": (pod(affinity={"key": "m", "operator": "Equals", "values": ["a"]}), "k8s-node-selector"),
    "port-name-16": (pod(ports=[{"name": "abcdefghijklmnop", "containerPort": 80}]), "k8s-port-name"),
    "port-name-digits": (pod(ports=[{"name": "8080", "containerPort": 80}]), "k8s-port-name"),
    "cost-plus": (deployment("+10"), "k8s-deletion-cost"),
    "cost-leading-zero": (deployment("007"), "k8s-deletion-cost"),
    "cost-overflow": (deployment("2147483648"), "k8s-deletion-cost"),
    "label-uppercase-prefix": (pod() | {"metadata": {"name": "p", "labels": {"Example.com/a": "b"}}}, "k8s-label"),
    "retry-jitter": (config(renewDeadline="10s", retryPeriod="9s"), "scheduler-leader-election"),
    "lease-not-longer": (config(leaseDuration="10s", renewDeadline="10s"), "scheduler-leader-election"),
    "lock-endpoints": (config(resourceLock="endpoints"), "scheduler-leader-election"),
    "unknown-plugin": (
        config() | {"profiles": [{"schedulerName": "s", "plugins": {"score": {"enabled": [{"name": "Nope"}]}}}]},
        "scheduler-plugin-name",
    ),
    "plugin-wrong-point": (
        config()
        | {"profiles": [{"schedulerName": "s", "plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}]},
        "scheduler-plugin-point",
    ),
    "duplicate-profile": (
        config() | {"profiles": [{"schedulerName": "s"}, {"schedulerName": "s"}]},
        "scheduler-profile-name",
    ),
    "removed-plugin": (
        config() | {"profiles": [{"schedulerName": "s", "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}]},
        "scheduler-plugin-name",
    ),
    "unknown-config-field": (config() | {"profile": []}, "k8s-schema"),
    "toleration-empty-key-equal": (_spec(tolerations=[{"operator": "Equal", "value": "x"}]), "k8s-toleration"),
    "toleration-seconds-noschedule": (
        _spec(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        "k8s-toleration",
    ),
    "toleration-exists-with-value": (
        _spec(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
        "k8s-toleration",
    ),
    "pod-level-gpu": (_spec(resources={"limits": {"nvidia.com/gpu": 1}}), "k8s-pod-resources"),
    "pod-level-below-containers": (
        _spec(resources={"requests": {"cpu": "100m"}}, containers=[_container(requests={"cpu": "1"})]),
        "k8s-pod-resources",
    ),
    "container-limit-above-pod": (
        _spec(resources={"limits": {"memory": "1Gi"}}, containers=[_container(limits={"memory": "2Gi"})]),
        "k8s-pod-resources",
    ),
    "host-network-port-mismatch": (
        _spec(hostNetwork=True, containers=[_container(ports=[{"containerPort": 80, "hostPort": 8080}])]),
        "k8s-port",
    ),
    "host-port-twice": (
        _spec(
            containers=[
                _container(ports=[{"containerPort": 80, "hostPort": 80}]),
                _container("d", ports=[{"containerPort": 81, "hostPort": 80}]),
            ]
        ),
        "k8s-port",
    ),
    "volume-twice": (_spec(volumes=[{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}]), "k8s-name"),
    "readiness-grace": (
        pod(readinessProbe={"tcpSocket": {"port": 80}, "terminationGracePeriodSeconds": 5}),
        "k8s-probe",
    ),
    "image-whitespace": (pod(image=" busybox"), "k8s-image"),
    "max-unavailable-over-100": (
        deployment("0")
        | {"spec": {**deployment("0")["spec"], "strategy": {"rollingUpdate": {"maxUnavailable": "101%"}}}},
        "k8s-deployment",
    ),
    "negative-history": (
        deployment("0") | {"spec": {**deployment("0")["spec"], "revisionHistoryLimit": -1}},
        "k8s-deployment",
    ),
    "both-zero": (
        deployment("0")
        | {"spec": {**deployment("0")["spec"], "strategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}}}},
        "k8s-deployment",
    ),
    "hpa-pods-without-average": (
        _hpa({"type": "Pods", "pods": {"metric": {"name": "m"}, "target": {"type": "Value", "value": "1"}}}),
        "k8s-hpa",
    ),
    "hpa-zero-value": (
        _hpa({"type": "External", "external": {"metric": {"name": "m"}, "target": {"type": "Value", "value": "0"}}}),
        "k8s-hpa",
    ),
    "hpa-target-name-slash": (
        _hpa(
            {"type": "Pods", "pods": {"metric": {"name": "m"}, "target": {"type": "AverageValue", "averageValue": "1"}}}
        )
        | {
            "spec": {**_hpa()["spec"], "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "a/b"}}
        },
        "k8s-hpa",
    ),
    "multipoint-disable-all": (
        config() | {"profiles": [{"schedulerName": "s", "plugins": {"multiPoint": {"disabled": [{"name": "*"}]}}}]},
        "scheduler-queue-sort",
    ),
    "node-affinity-args-gt": (
        config()
        | {
            "profiles": [
                {
                    "schedulerName": "s",
                    "pluginConfig": [
                        {
                            "name": "NodeAffinity",
                            "args": {
                                "addedAffinity": {
                                    "requiredDuringSchedulingIgnoredDuringExecution": {
                                        "nodeSelectorTerms": [
                                            {"matchExpressions": [{"key": "m", "operator": "Gt", "values": ["40GiB"]}]}
                                        ]
                                    }
                                }
                            },
                        }
                    ],
                }
            ]
        },
        "scheduler-plugin-args",
    ),
    "extender-managed-unprefixed": (
        config() | {"extenders": [{"urlPrefix": "http://e", "filterVerb": "f", "managedResources": [{"name": "gpu"}]}]},
        "scheduler-extender",
    ),
    "quantity-nan": (pod(resources={"limits": {"cpu": float("nan"), "nvidia.com/gpu": 1}}), "k8s-quantity"),
    "quantity-infinite": (pod(resources={"requests": {"memory": float("inf")}}), "k8s-quantity"),
    # Go's `$` ends the text; Python's also matches before a final newline
    "quantity-trailing-newline": (pod(resources={"limits": {"cpu": "100m\n", "nvidia.com/gpu": 1}}), "k8s-quantity"),
    "label-value-trailing-newline": (pod() | {"metadata": {"name": "p", "labels": {"app": "web\n"}}}, "k8s-label"),
    "name-trailing-newline": (pod() | {"metadata": {"name": "p\n"}}, "k8s-name"),
    "rbac-name-slash": (_rbac("ClusterRole", "system/reader"), "k8s-name"),
    "rbac-name-dot-dot": (_rbac("ClusterRole", ".."), "k8s-name"),
    "service-name-digit-first": (_service("1api"), "k8s-name"),
    "generate-name-uppercase": (_named(pod(), generateName="Trainer-"), "k8s-name"),
    "generate-name-service-digit": (_named(_service("x"), generateName="1api-"), "k8s-name"),
    "no-name": (_named(pod()), "k8s-name"),
    "crd-name-not-plural-group": (
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widget.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [
                    {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}
                ],
            },
        },
        "crd-invalid",
    ),
    "apiservice-name": (
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "metrics"},
            "spec": {
                "group": "metrics.k8s.io",
                "version": "v1beta1",
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
        },
        "k8s-name",
    ),
    "priority-class-too-high": (
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "urgent"},
            "value": 2000000000,
        },
        "k8s-priority-class",
    ),
    "volume-two-sources": (_spec(volumes=[{"name": "v", "emptyDir": {}, "configMap": {"name": "c"}}]), "k8s-volume"),
    "volume-secret-unnamed": (_spec(volumes=[{"name": "v", "secret": {"secretName": ""}}]), "k8s-volume"),
    "probe-two-handlers": (pod(readinessProbe={"httpGet": {"port": 80}, "tcpSocket": {"port": 80}}), "k8s-probe"),
    "liveness-success-threshold": (pod(livenessProbe={"tcpSocket": {"port": 80}, "successThreshold": 2}), "k8s-probe"),
    "service-account-uppercase": (_spec(serviceAccountName="Deployer"), "k8s-name"),
    "priority-class-underscore": (_spec(priorityClassName="batch_high"), "k8s-name"),
    "binding-role-slash": (_binding(ref={"name": "team/view"}), "k8s-name"),
    "binding-role-kind": (_binding("ClusterRoleBinding", ref={"kind": "Role"}), "k8s-rbac"),
    "binding-role-group": (_binding(ref={"apiGroup": "rbac.authorization.k8s.io/v1"}), "k8s-rbac"),
    "binding-sa-no-namespace": (_binding("ClusterRoleBinding", namespace=""), "k8s-rbac"),
    "binding-sa-name": (_binding(name="Deployer"), "k8s-name"),
    "binding-user-group": (_binding(kind="User", name="alice", apiGroup="v1"), "k8s-rbac"),
    "role-no-verbs": (
        _rbac("ClusterRole", "r") | {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": []}]},
        "k8s-rbac",
    ),
    "role-non-resource-url": (
        _rbac("ClusterRole", "r") | {"kind": "Role", "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
        "k8s-rbac",
    ),
    "hpa-pods-metric-slash": (_hpa(_pods_metric("requests/second")), "k8s-hpa"),
    "hpa-external-metric-percent": (
        _hpa(
            {
                "type": "External",
                "external": {"metric": {"name": "queue%depth"}, "target": {"type": "Value", "value": "1"}},
            }
        ),
        "k8s-hpa",
    ),
    "hpa-object-described-dot-dot": (
        _hpa(
            {
                "type": "Object",
                "object": {
                    "describedObject": {"apiVersion": "v1", "kind": "Service", "name": ".."},
                    "metric": {"name": "rps"},
                    "target": {"type": "Value", "value": "1"},
                },
            }
        ),
        "k8s-hpa",
    ),
    "port-protocol": (pod(ports=[{"containerPort": 80, "protocol": "HTTP"}]), "k8s-port"),
    "pull-policy": (pod(imagePullPolicy="Sometimes"), "k8s-enum"),
    "pod-restart-policy": (_spec(restartPolicy="Sometimes"), "k8s-enum"),
    "dns-policy": (_spec(dnsPolicy="ClusterLast"), "k8s-enum"),
    "hugepages-alone": (pod(resources={"limits": {"hugepages-2Mi": "2Mi"}}), "k8s-hugepages"),
}


def _write(tmp_path: Path, obj: dict) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(obj))
    return path


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_manifests_pass(gen, tmp_path: Path, name: str) -> None:
    run = gen("validate", _write(tmp_path, VALID[name]))
    assert run.code == 0, run.out


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_manifests_fail_with_rule(gen, tmp_path: Path, name: str) -> None:
    obj, rule = INVALID[name]
    run = gen("validate", _write(tmp_path, obj))
    assert run.code == 1, run.out
    assert f" {rule} " in run.out, run.out


def test_non_integer_gt_in_a_required_term_is_an_error(gen, tmp_path: Path) -> None:
    """The term can never match, so the Pod never schedules: Kubernetes accepts it, it never works."""
    path = _write(tmp_path, pod(affinity={"key": "m", "operator": "Gt", "values": ["80G"]}))
    run = gen("validate", path)
    assert run.code == 1 and "never schedules" in run.out
    assert "error k8s-node-selector-integer " in run.out  # rule "k8s-node-selector-integer"
    good = _write(tmp_path, pod(affinity={"key": "m", "operator": "Gt", "values": ["81919"]}))
    assert gen("validate", "--strict", good).code == 0


def test_non_integer_gt_in_a_preferred_term_is_a_warning(gen, tmp_path: Path) -> None:
    obj = pod()
    obj["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [{"key": "m", "operator": "Gt", "values": ["80G"]}]}}
            ]
        }
    }
    path = _write(tmp_path, obj)
    assert gen("validate", path).code == 0
    run = gen("validate", "--strict", path)
    assert run.code == 1 and "warning k8s-node-selector-integer" in run.out


def test_multi_document_files_and_directories(gen, tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        yaml.safe_dump(VALID["gpu-limits-only"]) + "---\n" + yaml.safe_dump(INVALID["port-name-16"][0])
    )
    run = gen("validate", tmp_path)
    assert run.code == 1 and "a.yaml:" in run.out


def test_gens_own_output_validates_and_its_fragments_are_not_objects(gen, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert gen("render", POLICIES, "--out", out).code == 0
    fragments = sorted(out.glob("*/integrations/*.yaml"))
    assert fragments, "the bundled Monitoring policy writes integration fragments"
    assert gen("validate", out).code == 0
    # the same file anywhere gen does not own is judged like any other YAML: a values file
    # names neither apiVersion nor kind, so it is no manifest
    stray = tmp_path / "elsewhere" / "integrations"
    stray.mkdir(parents=True)
    (stray / fragments[0].name).write_bytes(fragments[0].read_bytes())
    run = gen("validate", stray)
    assert run.code == 0 and "0 files validated" in run.err and "1 skipped" in run.err


def test_plugin_flag_declares_extra_plugins(gen, tmp_path: Path) -> None:
    obj = config() | {"profiles": [{"schedulerName": "s", "plugins": {"score": {"enabled": [{"name": "Mine"}]}}}]}
    path = _write(tmp_path, obj)
    assert gen("validate", path).code == 1
    assert gen("validate", "--plugin", "Mine", path).code == 0


ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "ns"}}
WARNINGS = {
    "host-network": (_spec(hostNetwork=True), "pod-security"),
    "host-path": (_spec(volumes=[{"name": "v", "hostPath": {"path": "/"}}]), "pod-security"),
    "privileged": (pod(securityContext={"privileged": True}), "pod-security"),
    "escalation": (pod(securityContext={"allowPrivilegeEscalation": True}), "pod-security"),
    "caps": (pod(securityContext={"capabilities": {"add": ["SYS_ADMIN"]}}), "pod-security"),
    "host-port": (pod(ports=[{"containerPort": 80, "hostPort": 80}]), "pod-security"),
    "rbac-wildcard": (ROLE | {"rules": [{"apiGroups": [""], "resources": ["*"], "verbs": ["get"]}]}, "rbac-wildcard"),
    # accepted, and has no effect: only the ReplicaSet controller reads the annotation
    "cost-on-pod": (
        pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "5"}),
        "deletion-cost-not-replicaset",
    ),
    "secret-data": (
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"token": "eA=="}},
        "secret-material",
    ),
    "secret-string-data": (
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"token": "x"}},
        "secret-material",
    ),
    "image-without-tag": (_spec(containers=[{"name": "c", "image": "nginx"}]), "image-tag"),
    "image-latest": (_spec(containers=[{"name": "c", "image": "ghcr.io/example/web:latest"}]), "image-tag"),
    "insecure-skip-verify": (
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": {"name": "m"},
            "spec": {"selector": {}, "endpoints": [{"port": "https", "tlsConfig": {"insecureSkipVerify": True}}]},
        },
        "insecure-tls",
    ),
}
QUIET = {
    "host-users-false": _spec(hostUsers=False),
    "net-bind": pod(securityContext={"capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}}),
    "rbac-listed": ROLE | {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "patch"]}]},
    "image-with-registry-port-and-tag": _spec(containers=[{"name": "c", "image": "registry:5000/web:1.2"}]),
    "image-latest-pinned-by-digest": _spec(containers=[{"name": "c", "image": "web:latest@sha256:" + "a" * 64}]),
}


@pytest.mark.parametrize("name", sorted(WARNINGS))
def test_insecure_but_accepted_objects_warn(gen, tmp_path: Path, name: str) -> None:
    obj, rule = WARNINGS[name]
    path = _write(tmp_path, obj)
    assert gen("validate", path).code == 0
    run = gen("validate", "--strict", path)
    assert run.code == 1 and f"warning {rule}" in run.out


@pytest.mark.parametrize("name", sorted(QUIET))
def test_secure_objects_do_not_warn(gen, tmp_path: Path, name: str) -> None:
    run = gen("validate", "--strict", _write(tmp_path, QUIET[name]))
    assert (run.code, run.out) == (0, ""), run.out


def test_parallel_validation_finds_what_serial_finds(tmp_path: Path, monkeypatch) -> None:
    from generator import cache, parallel
    from generator.kube.repository import validate_paths

    for name, (obj, _) in INVALID.items():
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(obj))
    for name, obj in VALID.items():
        (tmp_path / f"ok-{name}.yaml").write_text(yaml.safe_dump(obj))
    monkeypatch.setenv("GEN_NO_CACHE", "1")  # every file judged, in the workers below
    cache.directory.cache_clear()
    serial = validate_paths([tmp_path], ("1.35",))[0]
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
    assert parallel.workers(len(INVALID)) > 1 or parallel.cpus() == 1
    assert validate_paths([tmp_path], ("1.35",))[0] == serial
    cache.directory.cache_clear()
    assert {p.rule for p in serial} >= {rule for _, rule in INVALID.values()}


def test_size_rule_counts_what_aliases_repeat(gen, tmp_path: Path) -> None:
    """10 KB of YAML that expands to 400 KB: the size rule must measure the object, not the text."""
    row = ", ".join(["x" * 1000] * 10)
    text = f"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  a: &row [{row}]\n"
    text += "  b: [" + ", ".join(["*row"] * 40) + "]\n"
    (tmp_path / "w.yaml").write_text(text)
    assert " size-last-applied " in gen("validate", tmp_path).out


def test_escaped_insecure_skip_verify_is_found(gen, tmp_path: Path) -> None:
    text = (
        "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: m\nspec:\n  selector: {}\n"
        '  endpoints:\n  - port: https\n    tlsConfig: {"insecureSkip\\x56erify": true}\n'
    )
    (tmp_path / "m.yaml").write_text(text)
    run = gen("validate", "--strict", tmp_path)
    assert run.code == 1 and "m.yaml:9:" in run.out and "warning insecure-tls " in run.out, run.out


def test_timestamp_in_an_unchecked_kind_is_no_internal_error(gen, tmp_path: Path) -> None:
    """A YAML date is no JSON value; the size rule measures it as the string the API server gets
    (the note makes the text too long for the rule to skip measuring)."""
    text = f"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  when: 2020-01-01\n  note: {'x' * 50_000}\n"
    (tmp_path / "w.yaml").write_text(text)
    run = gen("validate", tmp_path)
    assert run.code == 0 and "internal error" not in run.out and " k8s-unknown-kind " in run.out, run.out


def test_gen_holds_its_own_output_to_its_opinions() -> None:
    """What gen renders never carries Secret data or skips TLS checks: errors there, warnings elsewhere."""
    from generator.kube.validate import ManifestValidator

    obj, _ = WARNINGS["secret-data"]
    tls, _ = WARNINGS["insecure-skip-verify"]
    for own, severity in ((True, Severity.ERROR), (False, Severity.WARNING)):
        validator = ManifestValidator(("1.35",), own_output=own)
        assert [(f.rule, f.severity) for f in validator.validate(obj)] == [("secret-material", severity)]
        assert [(f.rule, f.severity) for f in validator.validate(tls)] == [("insecure-tls", severity)]


def test_validate_without_a_path_reads_the_current_directory(gen, tmp_path: Path, monkeypatch) -> None:
    _write(tmp_path, pod())
    monkeypatch.chdir(tmp_path)
    assert gen("validate", "--strict").code == 0
    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\n")
    run = gen("validate")
    assert run.code == 1 and run.out.startswith("bad.yaml:3:")


def test_a_node_selector_no_label_can_hold_is_an_error(gen, tmp_path: Path) -> None:
    bad = _write(tmp_path, _spec(nodeSelector={"gpu.model": "A100 80GB"}))
    run = gen("validate", bad)
    assert run.code == 1 and "error k8s-node-selector gpu.model=A100 80GB" in run.out
    good = _write(tmp_path, _spec(nodeSelector={"gpu.model": "A100-80GB"}))
    assert gen("validate", "--strict", good).code == 0


def test_a_label_key_no_object_can_carry_is_named_as_written(gen, tmp_path: Path) -> None:
    """An empty key (with a null value, as a half-written selector has it): the key quoted as
    YAML spells it, never Python's `=None`."""
    bad = _write(tmp_path, _spec(nodeSelector={"": None}))
    run = gen("validate", bad)
    assert run.code == 1 and 'error k8s-node-selector key "": name part must be non-empty' in run.out
    assert "None" not in run.out


SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "ns"}}


@pytest.mark.parametrize(
    ("case", "spec", "words"),
    [
        ("unnamed-port-of-many", {"ports": [{"name": "http", "port": 80}, {"port": 81}]}, "needs a name"),
        ("lower-case-protocol", {"ports": [{"port": 80, "protocol": "tcp"}]}, 'Unsupported value: "tcp"'),
        ("no-ports", {"selector": {"app": "a"}}, "a Service needs ports"),
        ("external-name-missing", {"type": "ExternalName"}, "needs externalName"),
    ],
)
def test_service_rules(gen, tmp_path: Path, case: str, spec: dict, words: str) -> None:
    run = gen("validate", _write(tmp_path, SERVICE | {"spec": spec}))
    assert run.code == 1 and " k8s-service " in run.out and words in run.out, run.out


def test_valid_services_pass(gen, tmp_path: Path) -> None:
    for spec in (
        {
            "ports": [
                {"name": "http", "port": 80, "protocol": "TCP"},
                {"name": "grpc", "port": 81, "targetPort": "grpc"},
            ]
        },
        {"clusterIP": "None", "selector": {"app": "a"}},
        {"type": "ExternalName", "externalName": "db.example.com"},
    ):
        assert gen("validate", "--strict", _write(tmp_path, SERVICE | {"spec": spec})).code == 0, spec


def test_a_removed_in_tree_volume_plugin_is_an_error_from_its_version(gen, tmp_path: Path) -> None:
    path = _write(tmp_path, _spec(volumes=[{"name": "g", "glusterfs": {"endpoints": "e", "path": "p"}}]))
    run = gen("validate", "-k", "1.35", path)
    assert run.code == 1 and " k8s-volume-removed " in run.out and "non-functional in Kubernetes 1.26+" in run.out
    assert " k8s-volume-removed " not in gen("validate", "-k", "1.25", path).out


def test_a_beta_api_off_by_default_is_a_warning_naming_runtime_config(gen, tmp_path: Path) -> None:
    policy = {"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy"}
    path = _write(tmp_path, policy | {"metadata": {"name": "m"}, "spec": {}})
    run = gen("validate", "-k", "1.35", path)
    assert run.code == 0 and " k8s-api-disabled " in run.out and "--runtime-config=" in run.out
    on = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "v"},
    }
    assert " k8s-api-disabled " not in gen("validate", "-k", "1.35", _write(tmp_path, on | {"spec": {}})).out


def test_a_removed_kind_says_it_was_removed(gen, tmp_path: Path) -> None:
    psp = {"apiVersion": "policy/v1beta1", "kind": "PodSecurityPolicy", "metadata": {"name": "p"}, "spec": {}}
    run = gen("validate", _write(tmp_path, psp))
    assert run.code == 1 and "PodSecurityPolicy was removed in Kubernetes 1.25" in run.out
    assert "spelling" not in run.out and "pod-security.kubernetes.io/enforce" in run.out


def test_a_repeated_key_in_a_manifest_is_a_warning_and_the_last_value_wins(gen, tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n  a: 2\n")
    run = gen("validate", path)
    assert ":7:3: warning yaml-duplicate-key " in run.out and "kustomize refuses" in run.out
    # the last value is what kubectl sends: 2 is a number, which a ConfigMap's data refuses
    assert run.code == 1 and "cm.yaml:7:6: error k8s-schema 2 is a whole number" in run.out
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n  a: '2'\n")
    assert gen("validate", path).code == 0


def test_an_unquoted_yaml11_value_gets_the_quoting_hint(gen, tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {enabled: y}\n")
    run = gen("validate", path)
    assert run.code == 1 and "hint: Kubernetes reads the unquoted 'y' as a boolean; quote it" in run.out, run.out
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {enabled: 'y'}\n")
    assert gen("validate", path).code == 0


def test_every_kind_s_rules_are_found_where_the_table_names_them() -> None:
    """The per-kind rules are imported when first needed: a misspelt entry would fail only on a
    repository holding that kind."""
    from generator.kube.validate import GROUP_RULES, _group_rules

    for group, kind in GROUP_RULES:
        assert callable(_group_rules(group, kind)), (group, kind)
