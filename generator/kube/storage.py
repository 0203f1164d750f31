"""kube-apiserver's create-time rules for storage.k8s.io/v1 StorageClasses, read from
pkg/apis/storage/validation/validation.go (ValidateStorageClass)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import names
from generator.kube.findings import Finding, unsupported
from generator.problems import Severity
from generator.schema_messages import shown

_RECLAIM = ("Delete", "Retain")
_BINDING = ("Immediate", "WaitForFirstConsumer")


def check_storage_class(obj: dict[str, Any]) -> Iterator[Finding]:
    provisioner = obj.get("provisioner")
    if isinstance(provisioner, str) and (err := names.qualified_name(provisioner.lower())):
        yield Finding(("provisioner",), "k8s-storage-class", Severity.ERROR, f"provisioner {shown(provisioner)}: {err}")
    for field, allowed in (("reclaimPolicy", _RECLAIM), ("volumeBindingMode", _BINDING)):
        value = obj.get(field)
        if value is not None and value not in allowed:
            yield unsupported((field,), "k8s-storage-class", value, allowed)
