"""kube-apiserver's create-time rules for storage.k8s.io/v1 StorageClasses and
VolumeAttachments, read from pkg/apis/storage/validation/validation.go (ValidateStorageClass,
ValidateVolumeAttachment, ValidateVolumeAttachmentV1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import names
from generator.kube.findings import Finding, error_at, unsupported
from generator.problems import Severity
from generator.schema_messages import shown

_RECLAIM = ("Delete", "Retain")
_BINDING = ("Immediate", "WaitForFirstConsumer")
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024


def check_storage_class(obj: dict[str, Any]) -> Iterator[Finding]:
    provisioner = obj.get("provisioner")
    if isinstance(provisioner, str) and (err := names.qualified_name(provisioner.lower())):
        yield Finding(("provisioner",), "k8s-storage-class", Severity.ERROR, f"provisioner {shown(provisioner)}: {err}")
    for field, allowed in (("reclaimPolicy", _RECLAIM), ("volumeBindingMode", _BINDING)):
        value = obj.get(field)
        if value is not None and value not in allowed:
            yield unsupported((field,), "k8s-storage-class", value, allowed)
    yield from _parameters(obj.get("parameters"))
    yield from _allowed_topologies(obj.get("allowedTopologies"))


def _parameters(parameters: Any) -> Iterator[Finding]:
    """validateParameters: at most 512 keys, none empty, keys and values 256 KiB together."""
    if not isinstance(parameters, dict):
        return
    if len(parameters) > MAX_PARAMETERS:
        yield error_at(
            ("parameters",),
            "k8s-storage-class",
            f"Too many: {len(parameters)}: must have at most {MAX_PARAMETERS} items",
        )
        return
    if "" in parameters:
        yield error_at(("parameters", ""), "k8s-storage-class", "a parameter's name can not be empty")
    size = sum(len(str(k)) + len(str(v)) for k, v in parameters.items())
    if size > MAX_PARAMETERS_SIZE:
        yield error_at(
            ("parameters",),
            "k8s-storage-class",
            f"Too long: parameters are {size} bytes (names and values): may not be more than {MAX_PARAMETERS_SIZE}",
        )


def _allowed_topologies(terms: Any) -> Iterator[Finding]:
    """validateAllowedTopologies and ValidateTopologySelectorTerm: every requirement a label key
    with a set of values, no key twice in a term, no two terms alike. A term with no
    expressions counts as a duplicate too (the function compares it with the empty terms it
    starts from), so kube-apiserver refuses it."""
    seen: list[dict[str, frozenset[str]]] = []
    for i, term in enumerate(terms if isinstance(terms, list) else ()):
        at = ("allowedTopologies", i)
        expressions: dict[str, frozenset[str]] = {}
        for j, req in enumerate((term or {}).get("matchLabelExpressions") or [] if isinstance(term, dict) else ()):
            if not isinstance(req, dict):
                continue
            where, key, values = (*at, "matchLabelExpressions", j), str(req.get("key", "")), req.get("values") or []
            if not values:
                yield error_at((*where, "values"), "k8s-storage-class", "Required value: a requirement needs values")
            for k, value in enumerate(values):
                if value in values[:k]:
                    yield error_at((*where, "values", k), "k8s-storage-class", f"Duplicate value: {shown(value)}")
            if err := names.qualified_name(key):
                yield error_at((*where, "key"), "k8s-storage-class", f"key {shown(key)}: {err}")
            if key in expressions:
                yield error_at((*where, "key"), "k8s-storage-class", f"Duplicate value: {shown(key)}")
            expressions[key] = frozenset(map(str, values))
        if not expressions or expressions in seen:
            yield error_at(
                (*at, "matchLabelExpressions") if isinstance(term, dict) and "matchLabelExpressions" in term else at,
                "k8s-storage-class",
                "Duplicate value: this term allows what another term already does"
                if expressions
                else "a term with no matchLabelExpressions is refused (as a duplicate of an empty term)",
                "each term lists the label values a volume may be provisioned in; drop the repeated term"
                if expressions
                else "give the term matchLabelExpressions, or drop it",
            )
        seen.append(expressions)


def check_volume_attachment(obj: dict[str, Any]) -> Iterator[Finding]:
    """validateVolumeAttachmentSpec and ValidateVolumeAttachmentV1: a CSI driver name, one
    source (a PersistentVolume's name, or an inline CSI spec), a node name."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    attacher = spec.get("attacher")
    if isinstance(attacher, str) and (err := names.csi_driver_name(attacher)):
        yield error_at(("spec", "attacher"), "k8s-volume-attachment", f"attacher {shown(attacher)}: {err}")
    source = spec.get("source")
    if isinstance(source, dict):
        pv_name, inline = source.get("persistentVolumeName"), source.get("inlineVolumeSpec")
        if (pv_name is None) == (inline is None):
            yield error_at(
                ("spec", "source"),
                "k8s-volume-attachment",
                "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
            )
        elif isinstance(pv_name, str) and (
            err := "Required value" if not pv_name else names.dns1123_subdomain(pv_name)
        ):
            yield error_at(
                ("spec", "source", "persistentVolumeName"), "k8s-volume-attachment", f"{shown(pv_name)}: {err}"
            )
        elif isinstance(inline, dict) and not isinstance(inline.get("csi"), dict):
            yield error_at(
                ("spec", "source", "inlineVolumeSpec"),
                "k8s-volume-attachment",
                "an inline volume to attach must be a CSI volume (csi)",
            )
    node = spec.get("nodeName")
    if isinstance(node, str) and (err := names.dns1123_subdomain(node)):
        yield error_at(("spec", "nodeName"), "k8s-volume-attachment", f"nodeName {shown(node)}: {err}")
