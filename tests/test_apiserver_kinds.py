"""kube-apiserver's create-time rules across the kinds a GitOps repository holds: each rule fails
on a manifest the strict schemas accept and passes on its corrected twin, through `gen validate`."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

META = {"name": "x", "namespace": "ns"}
PVC = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": META,
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": META, "data": {"app.properties": "a=b"}}
TLS = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": META,
    "type": "kubernetes.io/tls",
    "stringData": {"tls.crt": "c", "tls.key": "k"},
}
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": META,
    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}},
}
NETPOL = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": META,
    "spec": {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [
            {
                "to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                "ports": [{"protocol": "TCP", "port": 32000, "endPort": 32768}],
            }
        ],
    },
}
INGRESS = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "Ingress",
    "metadata": META,
    "spec": {
        "ingressClassName": "nginx",
        "rules": [
            {
                "host": "*.shop.example.com",
                "http": {
                    "paths": [
                        {
                            "path": "/api",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": "api", "port": {"number": 80}}},
                        }
                    ]
                },
            }
        ],
    },
}
VAP = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "replica-limit"},
    "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": ["apps"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["deployments"],
                }
            ]
        },
        "validations": [
            {
                "expression": "object.spec.replicas <= 5",
                "messageExpression": "'too many: ' + string(object.spec.replicas)",
            }
        ],
    },
}
WEBHOOK = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": "policy"},
    "webhooks": [
        {
            "name": "pods.policy.example.com",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": "policy", "namespace": "ns"}},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
        }
    ],
}
CLAIM_TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": META,
    "spec": {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.nvidia.com",
                            "selectors": [
                                {"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == 'A100'"}}
                            ],
                        },
                    }
                ]
            }
        }
    },
}


def _set(obj: dict, path: tuple, value: object) -> dict:
    out = copy.deepcopy(obj)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is None:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


RUNTIME_CLASS = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": "nvidia"},
    "handler": "nvidia",
    "overhead": {"podFixed": {"memory": "120Mi", "cpu": "250m"}},
    "scheduling": {
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    },
}
LEASE = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": META,
    "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0},
}
VOLUME_ATTACHMENT = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "VolumeAttachment",
    "metadata": {"name": "csi-0123"},
    "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}},
}

PV = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "datasets"},
    "spec": {
        "capacity": {"storage": "1Ti"},
        "accessModes": ["ReadOnlyMany"],
        "persistentVolumeReclaimPolicy": "Recycle",
        "hostPath": {"path": "/mnt/datasets", "type": "Directory"},
    },
}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": META,
    "spec": {"selector": {"app": "trainer"}, "ports": [{"name": "metrics", "port": 9400}]},
}
CRONJOB = {
    "apiVersion": "batch/v1",
    "kind": "CronJob",
    "metadata": META,
    "spec": {
        "schedule": "0 3 * * *",
        "jobTemplate": {
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [{"name": "report", "image": "registry.example.com/report:1.0"}],
                    }
                }
            }
        },
    },
}
ENDPOINTS = {
    "apiVersion": "v1",
    "kind": "Endpoints",
    "metadata": META,
    "subsets": [{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"port": 9400, "protocol": "TCP"}]}],
}
ENDPOINT_SLICE = {
    "apiVersion": "discovery.k8s.io/v1",
    "kind": "EndpointSlice",
    "metadata": {**META, "labels": {"kubernetes.io/service-name": "dcgm-exporter"}},
    "addressType": "IPv4",
    "endpoints": [{"addresses": ["10.0.0.7"]}],
    "ports": [{"name": "metrics", "port": 9400, "protocol": "TCP"}],
}
GPU_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {**META, "labels": {"app": "trainer"}},
    "spec": {
        "containers": [{"name": "trainer", "image": "registry.example.com/trainer:1.0"}],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "minDomains": 2,
                "labelSelector": {"matchLabels": {"app": "trainer"}},
            }
        ],
    },
}
QUOTA = {
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": META,
    "spec": {"hard": {"requests.nvidia.com/gpu": "8", "pods": "20"}, "scopes": ["NotBestEffort"]},
}


# (case, the good object, the change that breaks it, rule, words of the message)
CASES = [
    ("pvc-no-storage", PVC, (("spec", "resources"), {}), "k8s-pvc", "resources.requests.storage"),
    ("pvc-no-access-mode", PVC, (("spec", "accessModes"), None), "k8s-pvc", "at least 1 access mode"),
    (
        "pvc-rwop-mixed",
        PVC,
        (("spec", "accessModes"), ["ReadWriteOncePod", "ReadOnlyMany"]),
        "k8s-pvc",
        "ReadWriteOncePod",
    ),
    ("configmap-key", CONFIGMAP, (("data",), {"app/properties": "a"}), "k8s-configmap", "alphanumeric"),
    ("configmap-key-twice", CONFIGMAP, (("binaryData",), {"app.properties": "YQ=="}), "k8s-configmap", "duplicate"),
    ("tls-secret-without-key", TLS, (("stringData",), {"tls.crt": "c"}), "k8s-secret", "tls.key"),
    ("pdb-both", PDB, (("spec", "maxUnavailable"), 1), "k8s-pdb", "cannot be both set"),
    ("pdb-percent", PDB, (("spec", "minAvailable"), "150%"), "k8s-pdb", "100%"),
    (
        "netpol-except-outside",
        NETPOL,
        (("spec", "egress", 0, "to", 0, "ipBlock", "except"), ["192.168.0.0/16"]),
        "k8s-network-policy",
        "strict subset",
    ),
    (
        "netpol-bad-cidr",
        NETPOL,
        (("spec", "egress", 0, "to", 0, "ipBlock", "cidr"), "10.0.0.0/33"),
        "k8s-network-policy",
        "valid CIDR",
    ),
    (
        "netpol-end-port-below",
        NETPOL,
        (("spec", "egress", 0, "ports", 0, "endPort"), 100),
        "k8s-network-policy",
        "endPort",
    ),
    (
        "ingress-relative-path",
        INGRESS,
        (("spec", "rules", 0, "http", "paths", 0, "path"), "api"),
        "k8s-ingress",
        "absolute path",
    ),
    (
        "ingress-two-ports",
        INGRESS,
        (("spec", "rules", 0, "http", "paths", 0, "backend", "service", "port"), {"name": "http", "number": 80}),
        "k8s-ingress",
        "cannot set both port name & port number",
    ),
    (
        "vap-cel",
        VAP,
        (("spec", "validations", 0, "expression"), "object.spec.replicas <= "),
        "k8s-admission-policy",
        "CEL does not compile",
    ),
    ("webhook-two-segments", WEBHOOK, (("webhooks", 0, "name"), "policy.example"), "k8s-webhook", "three segments"),
    (
        "webhook-side-effects",
        WEBHOOK,
        (("webhooks", 0, "sideEffects"), "Some"),
        "k8s-webhook",
        '"None", "NoneOnDryRun"',
    ),
    (
        "claim-request-upper-case",
        CLAIM_TEMPLATE,
        (("spec", "spec", "devices", "requests", 0, "name"), "GPU"),
        "k8s-resource-claim",
        "DNS-1123 label",
    ),
    (
        "claim-selector-cel",
        CLAIM_TEMPLATE,
        (
            ("spec", "spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression"),
            "device.attributes[ == 1",
        ),
        "k8s-resource-claim",
        "compilation failed",
    ),
    ("runtime-class-handler", RUNTIME_CLASS, (("handler",), "nvidia_runc"), "k8s-runtime-class", "DNS-1123 label"),
    (
        "runtime-class-toleration-twice",
        RUNTIME_CLASS,
        (("scheduling", "tolerations"), [RUNTIME_CLASS["scheduling"]["tolerations"][0]] * 2),  # type: ignore[index]
        "k8s-runtime-class",
        "Duplicate value",
    ),
    ("lease-duration-zero", LEASE, (("spec", "leaseDurationSeconds"), 0), "k8s-lease", "greater than 0"),
    (
        "volume-attachment-two-sources",
        VOLUME_ATTACHMENT,
        (("spec", "source", "inlineVolumeSpec"), {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "v"}}),
        "k8s-volume-attachment",
        "exactly one of inlineVolumeSpec and persistentVolumeName",
    ),
    (
        "netpol-empty-peer",
        NETPOL,
        (("spec", "egress", 0, "to", 0), {}),
        "k8s-network-policy",
        "must specify a peer",
    ),
    (
        "netpol-selector-operator-values",
        NETPOL,
        (("spec", "podSelector"), {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["a"]}]}),
        "k8s-network-policy",
        "may not be specified when `operator` is Exists",
    ),
    (
        "endpoints-loopback",
        ENDPOINTS,
        (("subsets", 0, "addresses", 0, "ip"), "127.0.0.1"),
        "k8s-endpoints",
        "loopback range",
    ),
    (
        "endpoints-unnamed-ports",
        ENDPOINTS,
        (("subsets", 0, "ports"), [{"port": 80}, {"port": 443}]),
        "k8s-endpoints",
        "ports of a subset with several are named",
    ),
    (
        "endpoint-slice-family",
        ENDPOINT_SLICE,
        (("endpoints", 0, "addresses", 0), "fd00::7"),
        "k8s-endpoint-slice",
        "must be a valid IPv4 address",
    ),
    (
        "endpoint-slice-port-names",
        ENDPOINT_SLICE,
        (("ports",), [{"port": 9400}, {"port": 9401}]),
        "k8s-endpoint-slice",
        "Duplicate value",
    ),
    (
        "topology-spread-min-domains",
        GPU_POD,
        (("spec", "topologySpreadConstraints", 0, "whenUnsatisfiable"), "ScheduleAnyway"),
        "k8s-topology-spread",
        "can only use minDomains if whenUnsatisfiable=DoNotSchedule",
    ),
    (
        "quota-conflicting-scopes",
        QUOTA,
        (("spec", "scopes"), ["BestEffort", "NotBestEffort"]),
        "k8s-quota",
        "conflicting scopes",
    ),
    (
        "quota-storage",
        QUOTA,
        (("spec", "hard", "storage"), "10Gi"),
        "k8s-quota",
        "did you mean requests.storage?",
    ),
    ("pv-two-sources", PV, (("spec", "nfs"), {"server": "nfs.example.com", "path": "/data"}), "k8s-pv", "more than 1"),
    ("pv-recycle-root", PV, (("spec", "hostPath", "path"), "/"), "k8s-pv", "hostPath mount of '/'"),
    ("pvc-zero-storage", PVC, (("spec", "resources", "requests", "storage"), "0"), "k8s-pvc", "greater than zero"),
    (
        "unmasked-proc-mount-host-users",
        GPU_POD,
        (("spec", "containers", 0, "securityContext"), {"procMount": "Unmasked"}),
        "k8s-security-context",
        "`hostUsers` must be false",
    ),
    (
        "service-etp-on-cluster-ip",
        SERVICE,
        (("spec", "externalTrafficPolicy"), "Local"),
        "k8s-service",
        "may only be set for externally-accessible services",
    ),
    (
        "service-source-range",
        SERVICE,
        (("spec", "loadBalancerSourceRanges"), ["10.0.0.0/8"]),
        "k8s-service",
        "may only be used when `type` is 'LoadBalancer'",
    ),
    (
        "cronjob-template-selector",
        CRONJOB,
        (("spec", "jobTemplate", "spec", "selector"), {"matchLabels": {"app": "report"}}),
        "k8s-cronjob",
        "`selector` will be auto-generated",
    ),
    (
        "template-ephemeral-container",
        CRONJOB,
        (
            ("spec", "jobTemplate", "spec", "template", "spec", "ephemeralContainers"),
            [{"name": "debug", "image": "busybox:1.36"}],
        ),
        "k8s-container",
        "ephemeral containers not allowed in pod template",
    ),
    (
        "webhook-service-path",
        WEBHOOK,
        (("webhooks", 0, "clientConfig"), {"service": {"name": "svc", "namespace": "ns", "path": "validate/pods"}}),
        "k8s-webhook",
        "must start with a '/'",
    ),
    ("webhook-timeout", WEBHOOK, (("webhooks", 0, "timeoutSeconds"), 60), "k8s-webhook", "between 1 and 30 seconds"),
    (
        "ingress-host-ip",
        INGRESS,
        (("spec", "rules", 0, "host"), "10.0.0.1"),
        "k8s-ingress",
        "not an IP address",
    ),
]


def _write(tmp_path: Path, obj: dict) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(obj))
    return path


@pytest.mark.parametrize(("case", "good", "change", "rule", "words"), CASES, ids=[c[0] for c in CASES])
def test_rule_fails_and_passes(
    gen, tmp_path: Path, case: str, good: dict, change: tuple, rule: str, words: str
) -> None:
    run = gen("validate", _write(tmp_path, good))
    assert run.code == 0 and " error " not in run.out, run.out
    bad = _set(good, *change)
    run = gen("validate", _write(tmp_path, bad))
    assert run.code == 1 and f" error {rule} " in run.out and words in run.out, run.out


STATEFULSET = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": META,
    "spec": {
        "serviceName": "db",
        "selector": {"matchLabels": {"app": "db"}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "template": {
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
        },
    },
}
DAEMONSET = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": META,
    "spec": {
        "selector": {"matchLabels": {"app": "agent"}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "template": {
            "metadata": {"labels": {"app": "agent"}},
            "spec": {"containers": [{"name": "agent", "image": "agent:1.0"}]},
        },
    },
}
STORAGE_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "gp3"},
    "provisioner": "ebs.csi.aws.com",
    "volumeBindingMode": "WaitForFirstConsumer",
    "reclaimPolicy": "Delete",
}
QUOTA = {
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": META,
    "spec": {"hard": {"requests.cpu": "10", "pods": "20"}, "scopes": ["NotTerminating"]},
}
LIMITS = {
    "apiVersion": "v1",
    "kind": "LimitRange",
    "metadata": META,
    "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}, "min": {"memory": "64Mi"}}]},
}
DEVICE_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
}
MORE = [
    (
        "device-class-cel",
        DEVICE_CLASS,
        (("spec", "selectors", 0, "cel", "expression"), "device.driver =="),
        "k8s-resource-claim",
        "compilation failed",
    ),
    (
        "sts-on-delete-rolling",
        STATEFULSET,
        (("spec", "updateStrategy", "type"), "OnDelete"),
        "k8s-apps",
        "only allowed",
    ),
    (
        "sts-max-unavailable-zero",
        STATEFULSET,
        (("spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), 0),
        "k8s-apps",
        "greater than 0",
    ),
    ("sts-pod-management", STATEFULSET, (("spec", "podManagementPolicy"), "parallel"), "k8s-apps", "Unsupported value"),
    # maxUnavailable defaults to 1: with maxSurge 0 written out and 0 unavailable, nothing can roll
    (
        "ds-both-zero",
        DAEMONSET,
        (("spec", "updateStrategy", "rollingUpdate", "maxSurge"), 0),
        "k8s-apps",
        "may not be 0",
    ),
    (
        "storage-class-binding",
        STORAGE_CLASS,
        (("volumeBindingMode",), "Lazy"),
        "k8s-storage-class",
        "WaitForFirstConsumer",
    ),
    ("quota-negative", QUOTA, (("spec", "hard", "pods"), "-1"), "k8s-quota", "greater than or equal to 0"),
    ("quota-scope", QUOTA, (("spec", "scopes"), ["Forever"]), "k8s-quota", "Unsupported value"),
    # a NotBestEffort quota counts Pods and their compute resources: not Services
    (
        "quota-scope-resource",
        QUOTA,
        (("spec", "hard", "services"), "2"),
        "k8s-quota",
        "unsupported scope applied to resource",
    ),
    # the default request is defaulted from min, the default limit from max: min above max is refused
    (
        "limits-min-above-max",
        LIMITS,
        (("spec", "limits", 0, "min"), {"memory": "2Gi"}),
        "k8s-limit-range",
        "greater than max",
    ),
    (
        "limits-default-above-max",
        LIMITS,
        (("spec", "limits", 0, "default"), {"memory": "2Gi"}),
        "k8s-limit-range",
        "default value 2Gi is greater than max",
    ),
]


@pytest.mark.parametrize(("case", "good", "change", "rule", "words"), MORE, ids=[c[0] for c in MORE])
def test_apps_storage_and_quota_rules(
    gen, tmp_path: Path, case: str, good: dict, change: tuple, rule: str, words: str
) -> None:
    test_rule_fails_and_passes(gen, tmp_path, case, good, change, rule, words)


@pytest.mark.parametrize(
    ("field", "source", "words"),
    [
        ("dataSource", {"apiGroup": "volsync.backube", "kind": "ReplicationDestination", "name": "dst"}, "kind"),
        ("dataSourceRef", {"kind": "PersistentVolumeClaim", "name": "src", "namespace": "other"}, "namespace"),
    ],
)
def test_a_data_source_kube_apiserver_drops_is_a_warning(
    gen, tmp_path: Path, field: str, source: dict, words: str
) -> None:
    """The claim strategy's PrepareForCreate drops these silently: the claim is created, empty."""
    dropped = gen("validate", _write(tmp_path, _set(PVC, ("spec", field), source)))
    assert dropped.code == 0 and " warning k8s-pvc " in dropped.out and f"drops a {field}" in dropped.out, dropped.out
    assert words in dropped.out
    kept = {key: value for key, value in source.items() if key != "namespace"}
    run = gen("validate", _write(tmp_path, _set(PVC, ("spec", "dataSourceRef"), kept)))
    assert run.code == 0 and "k8s-pvc" not in run.out, run.out


CSI_DRIVER = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "CSIDriver",
    "metadata": {"name": "csi.example.com"},
    "spec": {"attachRequired": True, "tokenRequests": [{"audience": "vault", "expirationSeconds": 3600}]},
}
CSI_NODE = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "CSINode",
    "metadata": {"name": "node1"},
    "spec": {
        "drivers": [{"name": "csi.example.com", "nodeID": "node1", "topologyKeys": ["topology.kubernetes.io/zone"]}]
    },
}
VOLUME_ATTRIBUTES_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "VolumeAttributesClass",
    "metadata": {"name": "gold"},
    "driverName": "csi.example.com",
    "parameters": {"iops": "3000"},
}
CSI_CASES = [
    (
        "csi-driver-short-token",
        CSI_DRIVER,
        (("spec", "tokenRequests", 0, "expirationSeconds"), 60),
        "k8s-csi-driver",
        "less than 10 minutes",
    ),
    ("csi-node-empty-node-id", CSI_NODE, (("spec", "drivers", 0, "nodeID"), ""), "k8s-csi-node", "Required value"),
    (
        "volume-attributes-class-without-parameters",
        VOLUME_ATTRIBUTES_CLASS,
        (("parameters",), None),
        "k8s-volume-attributes-class",
        "at least one key/value pair",
    ),
]


@pytest.mark.parametrize(("case", "good", "change", "rule", "words"), CSI_CASES, ids=[c[0] for c in CSI_CASES])
def test_csi_and_volume_attributes_rules(
    gen, tmp_path: Path, case: str, good: dict, change: tuple, rule: str, words: str
) -> None:
    test_rule_fails_and_passes(gen, tmp_path, case, good, change, rule, words)
