"""ObjectMeta as kube-apiserver validates it for every kind (ValidateObjectMeta in
k8s.io/apimachinery/pkg/api/validation, with core's finalizer rule): names per kind, labels,
annotations, owner references, finalizers, managed fields, and names that controllers derive
from an object's own.
"""

from __future__ import annotations

import dataclasses
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
        yield from _check_object_fields(meta, path, kind, "/" not in str(obj.get("apiVersion", "")))
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


def check_template_metadata(meta: Any, path: Path, rule: str) -> Iterator[Finding]:
    """ValidateTemplateObjectMeta (pkg/apis/core/validation): a claim template's metadata carries
    labels and annotations, valid as an object's, and nothing else (validateFieldAllowList refuses
    every other field that is set)."""
    if not isinstance(meta, dict):
        return
    for key, value in meta.items():
        if key not in ("labels", "annotations") and value not in (None, "", [], {}, 0):
            yield error_at(
                (*path, key), rule, "cannot be set", "a claim template's metadata carries only labels and annotations"
            )
    kept = {"metadata": {key: meta.get(key) for key in ("labels", "annotations")}}
    for finding in check_metadata(kept):
        yield dataclasses.replace(finding, path=(*path, *finding.path[1:]))


# helper.IsStandardFinalizerName: the finalizers a name without a domain may be
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
# The kinds whose create keeps metadata.generation as written (the workload kinds'
# PrepareForCreate sets it to 1, so a negative one never reaches their validation).
_GENERATION_AS_WRITTEN = frozenset({"ConfigMap", "Secret", "Service", "ServiceAccount", "Endpoints", "Namespace"})
MAX_FIELD_MANAGER = 128  # metav1 validation's FieldManagerMaxLength
MAX_SUBRESOURCE = 256  # MaxSubresourceNameLength


def check_finalizers(finalizers: Any, path: Path, core: bool) -> Iterator[Finding]:
    """Finalizer names (ValidateFinalizerName): qualified names; and core's
    validateKubeFinalizerName: a name without a domain is a standard finalizer. core: the kind is
    core/v1's, whose validation (core's ValidateObjectMeta) refuses such a name; custom resources
    are only warned, as Argo CD's resources-finalizer.argocd.argoproj.io is, so other kinds are
    left to kube-apiserver."""
    listed = [f for f in finalizers if isinstance(f, str)] if isinstance(finalizers, list) else []
    for i, name in enumerate(listed):
        if err := names.qualified_name(name):
            yield error_at((*path, i), "k8s-finalizer", f"finalizer {shown(name)}: {err}")
        elif core and "/" not in name and name not in STANDARD_FINALIZERS:
            yield error_at(
                (*path, i),
                "k8s-finalizer",
                f"finalizer {shown(name)}: name is neither a standard finalizer name nor is it fully qualified",
                "qualify it with a domain you own, such as example.com/cleanup",
            )


def _check_object_fields(meta: dict[str, Any], path: Path, kind: str, core: bool) -> Iterator[Finding]:
    """The rest of ValidateObjectMetaAccessor on an object (not a template): generation,
    ownerReferences, finalizers, managedFields."""
    generation = meta.get("generation")
    if kind in _GENERATION_AS_WRITTEN and isinstance(generation, int) and generation < 0:
        yield error_at((*path, "generation"), "k8s-metadata", "must be greater than or equal to 0")
    refs = meta.get("ownerReferences")
    controllers = []
    for i, ref in enumerate(refs if isinstance(refs, list) else []):
        if isinstance(ref, dict):
            yield from _check_owner_reference(ref, (*path, "ownerReferences", i))
            if ref.get("controller") is True:
                controllers.append(f"{ref.get('kind')}/{ref.get('name')}")
    if len(controllers) > 1:
        yield error_at(
            (*path, "ownerReferences"),
            "k8s-metadata",
            f'Only one reference can have Controller set to true. Found "true" in references for '
            f"{controllers[0]} and {controllers[1]}",
        )
    finalizers = meta.get("finalizers")
    yield from check_finalizers(finalizers, (*path, "finalizers"), core)
    if isinstance(finalizers, list) and {"orphan", "foregroundDeletion"} <= set(finalizers):  # ValidateFinalizers
        yield error_at(
            (*path, "finalizers"), "k8s-finalizer", "finalizer orphan and foregroundDeletion cannot be both set"
        )
    entries = meta.get("managedFields")
    for i, entry in enumerate(entries if isinstance(entries, list) and entries != [{}] else []):  # [{}] resets them
        if isinstance(entry, dict):
            yield from _check_managed_fields_entry(entry, (*path, "managedFields", i))


def _check_owner_reference(ref: dict[str, Any], at: Path) -> Iterator[Finding]:
    """validateOwnerReference: a version, a kind, a name and a uid; never an Event."""
    api_version, kind = str(ref.get("apiVersion") or ""), ref.get("kind")
    group, _, version = api_version.rpartition("/")
    if not version or "/" in group:  # schema.FromAPIVersionAndKind finds no version
        yield error_at(
            (*at, "apiVersion"), "k8s-metadata", f"apiVersion {shown(api_version)}: version must not be empty"
        )
    for field in ("kind", "name", "uid"):
        if not ref.get(field):
            yield error_at((*at, field), "k8s-metadata", f"{field} must not be empty")
    if api_version == "v1" and kind == "Event":
        yield error_at(at, "k8s-metadata", "/v1, Kind=Event is disallowed from being an owner")


def _check_managed_fields_entry(entry: dict[str, Any], at: Path) -> Iterator[Finding]:
    """ValidateManagedFields on what the field manager keeps of a written entry: its operation,
    manager and subresource (it rewrites fieldsType to FieldsV1)."""
    operation = entry.get("operation")
    if operation not in ("Apply", "Update"):
        yield error_at((*at, "operation"), "k8s-metadata", f"{shown(operation)}: must be `Apply` or `Update`")
    manager = entry.get("manager")
    if isinstance(manager, str):
        if len(manager) > MAX_FIELD_MANAGER:
            yield error_at(
                (*at, "manager"), "k8s-metadata", f"Too long: may not be more than {MAX_FIELD_MANAGER} bytes"
            )
        if (bad := next((i for i, c in enumerate(manager) if not c.isprintable()), None)) is not None:
            yield error_at(
                (*at, "manager"), "k8s-metadata", f"invalid character U+{ord(manager[bad]):04X} (at position {bad})"
            )
    subresource = entry.get("subresource")
    if isinstance(subresource, str) and len(subresource) > MAX_SUBRESOURCE:
        yield error_at((*at, "subresource"), "k8s-metadata", f"Too long: may not be more than {MAX_SUBRESOURCE} bytes")


def _check_object_names(meta: dict[str, Any], path: Path, validate: Callable[[str], str | None]) -> Iterator[Finding]:
    name, prefix = meta.get("name"), meta.get("generateName")
    if isinstance(prefix, str) and prefix and (err := names.name_prefix(validate, prefix)):
        yield error_at((*path, "generateName"), "k8s-name", f"generateName {prefix!r} {err}")
    if not name and not prefix:
        yield error_at((*path, "name"), "k8s-name", "Required value: name or generateName is required")
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
