"""ObjectMeta as kube-apiserver validates it for every kind (ValidateObjectMeta in
k8s.io/apimachinery/pkg/api/validation): names per kind, labels, annotations, and names that
controllers derive from an object's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from generator.kube import names
from generator.kube.findings import Finding, Path, error_at
from generator.kube.scope import at_path
from generator.schema_messages import shown

ANNOTATIONS_MAX_BYTES = 262144


# The name validator kube-apiserver uses per kind (ValidateObjectMeta's callers); DNS-1123
# subdomain for every other kind.
_NAME_VALIDATORS: dict[str, Callable[[str], str | None]] = {
    "Namespace": names.dns1123_label,
    "Service": names.dns1035_label,
    "StatefulSet": names.dns1123_label,  # ValidateStatefulSetName: its Pods' hostnames
    "Role": names.path_segment,
    "ClusterRole": names.path_segment,
    "RoleBinding": names.path_segment,
    "ClusterRoleBinding": names.path_segment,
}


def check_metadata(obj: dict[str, Any], path: Path = ("metadata",), kind: str | None = None) -> Iterator[Finding]:
    meta = at_path(obj, path)
    if not isinstance(meta, dict):
        return
    if kind is not None:
        yield from _check_object_names(meta, path, _NAME_VALIDATORS.get(kind, names.dns1123_subdomain))
    ns = meta.get("namespace")
    if isinstance(ns, str) and (err := names.dns1123_label(ns)):
        yield error_at((*path, "namespace"), "k8s-name", f"namespace {shown(ns)} {err}")
    for key, value in (meta.get("labels") or {}).items():
        if err := names.qualified_name(str(key)):
            yield error_at((*path, "labels", key), "k8s-label", f"label key {shown(str(key))}: {err}")
        if isinstance(value, str) and (err := names.label_value(value)):
            yield error_at((*path, "labels", key), "k8s-label", f"label value {shown(value)}: {err}")
    annotations = meta.get("annotations") or {}
    total = 0
    for key, value in annotations.items():
        if err := names.qualified_name(str(key).lower()):
            yield error_at((*path, "annotations", key), "k8s-annotation", f"annotation key {shown(str(key))}: {err}")
        total += len(str(key)) + len(str(value))
    if total > ANNOTATIONS_MAX_BYTES:
        yield error_at(
            (*path, "annotations"),
            "k8s-annotation-size",
            f"annotations total {total} bytes; kube-apiserver allows {ANNOTATIONS_MAX_BYTES}",
        )


def _check_object_names(meta: dict[str, Any], path: Path, validate: Callable[[str], str | None]) -> Iterator[Finding]:
    name, prefix = meta.get("name"), meta.get("generateName")
    if isinstance(prefix, str) and prefix and (err := names.name_prefix(validate, prefix)):
        yield error_at((*path, "generateName"), "k8s-name", f"generateName {prefix!r} {err}")
    if not name and not prefix:
        yield error_at(path, "k8s-name", "name or generateName is required")
    elif isinstance(name, str) and name and (err := validate(name)):
        yield error_at((*path, "name"), "k8s-name", f"name {name!r} {err}")


def check_derived_names(obj: dict[str, Any]) -> Iterator[Finding]:
    """An APIService's name is made of its spec: <version>.<group> (ValidateAPIService). A CRD's
    <plural>.<group> is checked with the rest of the CRD (crds.check_definition)."""
    kind, name, spec = obj.get("kind"), (obj.get("metadata") or {}).get("name"), obj.get("spec") or {}
    if kind == "APIService":
        want, rule = f"{spec.get('version')}.{spec.get('group') or ''}", 'spec.version+"."+spec.group'
    else:
        return
    if isinstance(name, str) and name != want:
        yield error_at(("metadata", "name"), "k8s-name", f"name {name!r} must be {rule}: {want!r}")
