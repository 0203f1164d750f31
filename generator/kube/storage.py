"""kube-apiserver's create-time rules for storage.k8s.io/v1 StorageClasses and
VolumeAttachments, read from pkg/apis/storage/validation/validation.go (ValidateStorageClass,
ValidateVolumeAttachment, ValidateVolumeAttachmentV1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import claims, names
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
    yield from _parameters(obj.get("parameters"), "k8s-storage-class")
    yield from _allowed_topologies(obj.get("allowedTopologies"))


def _parameters(parameters: Any, rule: str, allow_empty: bool = True) -> Iterator[Finding]:
    """validateParameters: at most 512 keys, none empty, keys and values 256 KiB together; at
    least one unless allowed empty (a VolumeAttributesClass needs one, a StorageClass not)."""
    if not allow_empty and not parameters:
        yield error_at(("parameters",), rule, "Required value: must contain at least one key/value pair")
    if not isinstance(parameters, dict):
        return
    if len(parameters) > MAX_PARAMETERS:
        yield error_at(("parameters",), rule, f"Too many: {len(parameters)}: must have at most {MAX_PARAMETERS} items")
        return
    if "" in parameters:
        yield error_at(("parameters", ""), rule, "a parameter's name can not be empty")
    size = sum(len(str(k)) + len(str(v)) for k, v in parameters.items())
    if size > MAX_PARAMETERS_SIZE:
        yield error_at(
            ("parameters",),
            rule,
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
        elif isinstance(inline, dict):
            yield from _inline_volume_spec(inline, ("spec", "source", "inlineVolumeSpec"))
    node = spec.get("nodeName")
    if isinstance(node, str) and (err := names.dns1123_subdomain(node)):
        yield error_at(("spec", "nodeName"), "k8s-volume-attachment", f"nodeName {shown(node)}: {err}")


# ValidatePersistentVolumeSpec with validateInlinePersistentVolumeSpec: what an inline volume may
# not carry, since the PersistentVolume it stands for is never created
_NOT_INLINE = ("claimRef", "capacity", "nodeAffinity", "storageClassName")


def _inline_volume_spec(spec: dict[str, Any], at: tuple[str | int, ...]) -> Iterator[Finding]:
    """An inline volume spec (CSI migration): a CSI volume with access modes, no claim,
    capacity, node affinity or class, a Retain reclaim policy and a Filesystem volume mode if any."""
    yield from claims.access_modes(spec.get("accessModes"), (*at, "accessModes"), "k8s-volume-attachment")
    if not isinstance(spec.get("csi"), dict):
        yield error_at(
            (*at, "csi"), "k8s-volume-attachment", "Required value: an inline volume to attach is a CSI volume"
        )
    for field in _NOT_INLINE:
        if spec.get(field):
            yield error_at(
                (*at, field),
                "k8s-volume-attachment",
                "Forbidden: may not be specified in the context of inline volumes",
            )
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy != "Retain":
        yield error_at(
            (*at, "persistentVolumeReclaimPolicy"),
            "k8s-volume-attachment",
            "Forbidden: may only be Retain in the context of inline volumes",
        )
    mode = spec.get("volumeMode")
    if mode is not None and mode != "Filesystem":
        yield error_at(
            (*at, "volumeMode"),
            "k8s-volume-attachment",
            "Forbidden: may not specify volumeMode other than Filesystem in the context of inline volumes",
        )


_FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
_LIFECYCLE_MODES = ("Persistent", "Ephemeral")
MIN_TOKEN_SECONDS, MAX_TOKEN_SECONDS = 600, 1 << 32


def check_csi_driver(obj: dict[str, Any]) -> Iterator[Finding]:
    """validateCSIDriverSpec after SetDefaults_CSIDriver (which fills attachRequired,
    podInfoOnMount, storageCapacity and seLinuxMount): a known fsGroupPolicy and lifecycle
    modes; token requests for distinct audiences, valid 10 minutes to 2^32 seconds; an
    allocatable update period of at least 10 seconds."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in _FS_GROUP_POLICIES:
        yield unsupported(("spec", "fsGroupPolicy"), "k8s-csi-driver", policy, _FS_GROUP_POLICIES)
    audiences: set[str] = set()
    requests = spec.get("tokenRequests")
    for i, request in enumerate(requests if isinstance(requests, list) else []):
        if not isinstance(request, dict):
            continue
        audience, seconds = str(request.get("audience") or ""), request.get("expirationSeconds")
        if audience in audiences:
            yield error_at(
                ("spec", "tokenRequests", i, "audience"), "k8s-csi-driver", f"Duplicate value: {shown(audience)}"
            )
            continue
        audiences.add(audience)
        if isinstance(seconds, int) and seconds < MIN_TOKEN_SECONDS:
            yield error_at(
                ("spec", "tokenRequests", i, "expirationSeconds"),
                "k8s-csi-driver",
                "may not specify a duration less than 10 minutes",
            )
        elif isinstance(seconds, int) and seconds > MAX_TOKEN_SECONDS:
            yield error_at(
                ("spec", "tokenRequests", i, "expirationSeconds"),
                "k8s-csi-driver",
                "may not specify a duration larger than 2^32 seconds",
            )
    modes = spec.get("volumeLifecycleModes")
    for i, mode in enumerate(modes if isinstance(modes, list) else []):
        if mode not in _LIFECYCLE_MODES:
            yield unsupported(("spec", "volumeLifecycleModes", i), "k8s-csi-driver", mode, _LIFECYCLE_MODES)
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if isinstance(period, int) and period < 10:
        yield error_at(
            ("spec", "nodeAllocatableUpdatePeriodSeconds"),
            "k8s-csi-driver",
            "must be greater than or equal to 10 seconds",
        )


MAX_CSI_NODE_ID = 256  # the CSINode strategy validates with AllowLongNodeID


def check_csi_node(obj: dict[str, Any]) -> Iterator[Finding]:
    """validateCSINodeDrivers: each driver once, a CSI driver name, a node ID of at most 256
    characters, an allocatable count not below 0, topology keys that are qualified names, once."""
    drivers = (obj.get("spec") or {}).get("drivers") if isinstance(obj.get("spec"), dict) else None
    names_seen: set[str] = set()
    for i, driver in enumerate(drivers if isinstance(drivers, list) else []):
        if not isinstance(driver, dict):
            continue
        at, name = ("spec", "drivers", i), str(driver.get("name") or "")
        if err := names.csi_driver_name(name):
            yield error_at((*at, "name"), "k8s-csi-node", f"name {shown(name)}: {err}")
        if name in names_seen:
            yield error_at((*at, "name"), "k8s-csi-node", f"Duplicate value: {shown(name)}")
        names_seen.add(name)
        node_id = str(driver.get("nodeID") or "")
        if not node_id:
            yield error_at((*at, "nodeID"), "k8s-csi-node", "Required value")
        elif len(node_id) > MAX_CSI_NODE_ID:
            yield error_at((*at, "nodeID"), "k8s-csi-node", f"must be {MAX_CSI_NODE_ID} characters or less")
        count = (driver.get("allocatable") or {}).get("count") if isinstance(driver.get("allocatable"), dict) else None
        if isinstance(count, int) and count < 0:
            yield error_at((*at, "allocatable", "count"), "k8s-csi-node", "must be greater than or equal to 0")
        listed = driver.get("topologyKeys")
        keys: list[Any] = listed if isinstance(listed, list) else []
        for j, key in enumerate(keys):
            where = (*at, "topologyKeys", j)
            if key in keys[:j]:
                yield error_at(where, "k8s-csi-node", f"Duplicate value: {shown(key)}")
            elif err := names.qualified_name(str(key or "")):
                yield error_at(where, "k8s-csi-node", f"topology key {shown(key)}: {err}")


def check_volume_attributes_class(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateVolumeAttributesClass: a driver name that is a qualified name, and parameters
    (at least one) as a StorageClass's."""
    driver = obj.get("driverName") or ""
    if isinstance(driver, str) and (err := "Required value" if not driver else names.qualified_name(driver.lower())):
        yield error_at(("driverName",), "k8s-volume-attributes-class", f"driverName {shown(driver)}: {err}")
    yield from _parameters(obj.get("parameters"), "k8s-volume-attributes-class", allow_empty=False)
