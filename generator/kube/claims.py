"""A PersistentVolumeClaim's spec as kube-apiserver judges it (ValidatePersistentVolumeClaimSpec,
pkg/apis/core/validation), wherever one is written: a PersistentVolumeClaim, and the claim
template of an ephemeral volume; access modes, volume modes and class names as a
PersistentVolume shares them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import labels, names
from generator.kube.findings import Finding, unsupported, warning_at
from generator.kube.quantity import parse_quantity
from generator.problems import Severity
from generator.schema_messages import shown

_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")


def access_modes(modes: Any, path: tuple[str | int, ...], rule: str) -> Iterator[Finding]:
    """ValidatePersistentVolumeSpec / ValidatePersistentVolumeClaimSpec: at least one known access
    mode, ReadWriteOncePod alone."""
    modes = modes or []
    if not modes:
        yield Finding(path, rule, Severity.ERROR, "Required value: at least 1 access mode is required")
    for i, mode in enumerate(modes):
        if mode not in _ACCESS_MODES:
            yield unsupported((*path, i), rule, mode, _ACCESS_MODES)
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        yield Finding(path, rule, Severity.ERROR, "may not use ReadWriteOncePod with other access modes")


def class_names(spec: dict[str, Any], rule: str) -> Iterator[Finding]:
    """ValidateClassName on a volume's storage and attributes classes (empty means none)."""
    for field in ("storageClassName", "volumeAttributesClassName"):
        value = spec.get(field)
        if isinstance(value, str) and value and (err := names.dns1123_subdomain(value)):
            yield Finding(("spec", field), rule, Severity.ERROR, f"{shown(value)}: {err}")


def volume_mode(spec: dict[str, Any], rule: str) -> Iterator[Finding]:
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Filesystem", "Block"):
        yield unsupported(("spec", "volumeMode"), rule, mode, ("Filesystem", "Block"))


def check_persistent_volume_claim(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidatePersistentVolumeClaimSpec: access modes; a storage request above zero; a valid
    selector; class names as DNS subdomains; the data sources PrepareForCreate keeps name a kind
    and an object in a valid API group, and are alike when both are set."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from access_modes(spec.get("accessModes"), ("spec", "accessModes"), "k8s-pvc")
    yield from labels.check_selector(spec.get("selector"), ("spec", "selector"), "k8s-pvc")
    requests = (spec.get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        yield Finding(
            ("spec", "resources"),
            "k8s-pvc",
            Severity.ERROR,
            "Required value: resources.requests.storage: a claim must say how much storage it needs",
        )
    elif (amount := parse_quantity(requests["storage"])) is not None and amount <= 0:
        yield Finding(
            ("spec", "resources", "requests", "storage"), "k8s-pvc", Severity.ERROR, "must be greater than zero"
        )
    yield from volume_mode(spec, "k8s-pvc")
    yield from class_names(spec, "k8s-pvc")
    source, ref, dropped = _kept_data_sources(spec)
    yield from dropped
    if source is not None:
        yield from _data_source(source, ("spec", "dataSource"))
    if ref is not None:
        yield from _data_source(ref, ("spec", "dataSourceRef"))
    if source is not None and ref is not None and _data_source_key(source) != _data_source_key(ref):
        yield Finding(
            ("spec", "dataSource"),
            "k8s-pvc",
            Severity.ERROR,
            "must match dataSourceRef",
            "set one of them: kube-apiserver copies dataSource into dataSourceRef",
        )


_SNAPSHOT_GROUP = "snapshot.storage.k8s.io"


def _kept_data_sources(spec: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[Finding]]:
    """The data sources a claim keeps through the PVC strategy's PrepareForCreate
    (pkg/api/persistentvolumeclaim: DropDisabledFields, EnforceDataSourceBackwardsCompatibility),
    and a warning for each it silently drops: a dataSourceRef that names a namespace
    (CrossNamespaceVolumeDataSource is alpha, off by default) and, without a dataSourceRef, a
    dataSource that is neither a PersistentVolumeClaim nor a VolumeSnapshot. Either way the
    claim is created empty. NormalizeDataSources then copies the one kept into the other field,
    so its defects are reported once, where they are written."""
    source = spec.get("dataSource") if isinstance(spec.get("dataSource"), dict) else None
    ref = spec.get("dataSourceRef") if isinstance(spec.get("dataSourceRef"), dict) else None
    dropped: list[Finding] = []
    if ref is not None and ref.get("namespace"):
        dropped.append(
            warning_at(
                ("spec", "dataSourceRef", "namespace"),
                "k8s-pvc",
                "kube-apiserver drops a dataSourceRef that names a namespace (the CrossNamespaceVolumeDataSource "
                "feature gate is alpha, off by default): the claim is created empty",
                "populate from an object in the claim's own namespace, or enable the gate on the cluster",
            )
        )
        ref = None
    if source is not None and ref is None and not _is_claim_or_snapshot(source):
        dropped.append(
            warning_at(
                ("spec", "dataSource"),
                "k8s-pvc",
                f"kube-apiserver drops a dataSource of kind {shown(source.get('kind') or '')}: only a "
                f"PersistentVolumeClaim or a {_SNAPSHOT_GROUP} VolumeSnapshot is kept there, so the claim is "
                "created empty",
                "name any other populator under dataSourceRef",
            )
        )
        source = None
    return source, ref, dropped


def _is_claim_or_snapshot(source: dict[str, Any]) -> bool:
    group, kind = source.get("apiGroup") or "", source.get("kind")
    return (kind, group) in (("PersistentVolumeClaim", ""), ("VolumeSnapshot", _SNAPSHOT_GROUP))


def _data_source_key(source: dict[str, Any]) -> tuple[Any, str, str]:
    """isDataSourceEqualDataSourceRef: the same API group (unset and empty differ), kind and name."""
    return source.get("apiGroup"), str(source.get("kind") or ""), str(source.get("name") or "")


def _data_source(source: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[Finding]:
    """validateDataSource / validateDataSourceRef: a kind and a name; the core group only for a
    PersistentVolumeClaim; any other API group a DNS subdomain."""
    for key in ("kind", "name"):
        if not source.get(key):
            yield Finding((*path, key), "k8s-pvc", Severity.ERROR, f"Required value: a data source names its {key}")
    group, kind = source.get("apiGroup") or "", source.get("kind")
    if not group and kind and kind != "PersistentVolumeClaim":
        yield Finding(
            (*path, "kind"),
            "k8s-pvc",
            Severity.ERROR,
            f"{shown(kind)}: must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            "name the populator's apiGroup",
        )
    if isinstance(group, str) and group and (err := names.dns1123_subdomain(group)):
        yield Finding((*path, "apiGroup"), "k8s-pvc", Severity.ERROR, f"apiGroup {shown(group)}: {err}")
