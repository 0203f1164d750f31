"""Where an object lives: which kinds are cluster-scoped (a namespace given to one is
meaningless), and which groups are build files that never reach the API server.

Kubernetes' OpenAPI definitions do not say a kind's scope; this is the list
`kubectl api-resources --namespaced=false` gives on a 1.35 cluster with every built-in API
enabled, by (group, kind).
"""

from __future__ import annotations

from typing import Any

from generator.kube.api_versions import split_api

CRD_GROUP = "apiextensions.k8s.io"
CRD_KIND = "CustomResourceDefinition"

# Read by kustomize, never sent to the API server.
BUILD_TOOL_GROUPS = frozenset({"kustomize.config.k8s.io"})

CLUSTER_SCOPED = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("", "ComponentStatus"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("authentication.k8s.io", "TokenReview"),
        ("authentication.k8s.io", "SelfSubjectReview"),
        ("authorization.k8s.io", "SelfSubjectAccessReview"),
        ("authorization.k8s.io", "SelfSubjectRulesReview"),
        ("authorization.k8s.io", "SubjectAccessReview"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
        ("certificates.k8s.io", "ClusterTrustBundle"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
        ("internal.apiserver.k8s.io", "StorageVersion"),
        ("networking.k8s.io", "IngressClass"),
        ("networking.k8s.io", "IPAddress"),
        ("networking.k8s.io", "ServiceCIDR"),
        ("node.k8s.io", "RuntimeClass"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("resource.k8s.io", "DeviceClass"),
        ("resource.k8s.io", "DeviceTaintRule"),
        ("resource.k8s.io", "ResourceSlice"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("storage.k8s.io", "VolumeAttributesClass"),
        ("storagemigration.k8s.io", "StorageVersionMigration"),
    }
)


def cluster_scoped(api_version: str, kind: str) -> bool:
    return (split_api(api_version)[0], kind) in CLUSTER_SCOPED


# Where each workload kind keeps the spec of the Pods it creates.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def at_path(obj: Any, path: tuple[str | int, ...]) -> Any:
    """The value at path in obj (keys of mappings, indices of lists), or None where a step is missing."""
    for part in path:
        if isinstance(obj, dict) and isinstance(part, str):
            obj = obj.get(part)
        elif isinstance(obj, list) and isinstance(part, int) and part < len(obj):
            obj = obj[part]
        else:
            return None
    return obj


def title(kind: str, namespace: str | None, name: str) -> str:
    """An object as people name it: `Deployment web/webapi`, `ClusterRole view`."""
    return f"{kind} {namespace + '/' if namespace else ''}{name}"


def title_of(obj: Any) -> str:
    """The title of a manifest read from a file, as far as it says (empty when it says nothing)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
        return ""
    meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    return title(obj["kind"], namespace, str(meta.get("name", "")))


def is_definition(obj: Any) -> bool:
    """Whether obj is a CustomResourceDefinition."""
    return (
        isinstance(obj, dict)
        and obj.get("kind") == CRD_KIND
        and isinstance(obj.get("apiVersion"), str)
        and obj["apiVersion"].startswith(CRD_GROUP + "/")
    )
