"""kube-apiserver's create-time rules for core/v1 kinds beyond the schemas, read from
pkg/apis/core/validation/validation.go (ValidateService) and pkg/api/pod/warnings.go."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import names
from generator.kube.semantic import Finding
from generator.problems import Severity

# pkg/api/pod/warnings.go: the version from which each in-tree plugin is "non-functional"
REMOVED_VOLUME_PLUGINS = {
    "photonPersistentDisk": "1.16",
    "scaleIO": "1.22",
    "flocker": "1.25",
    "quobyte": "1.25",
    "storageos": "1.25",
    "glusterfs": "1.26",
    "cephfs": "1.31",
    "rbd": "1.31",
}
_PROTOCOLS = ("TCP", "UDP", "SCTP")


def _error(path: tuple[str | int, ...], message: str, hint: str = "") -> Finding:
    return Finding(path, "k8s-service", Severity.ERROR, message, hint)


def check_service(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateService: port names, protocols and numbers, and what a headless or ExternalName
    Service may leave out."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    headless = spec.get("clusterIP") == "None"
    kind = spec.get("type", "ClusterIP")
    if not ports and not headless and kind != "ExternalName":
        yield _error(("spec", "ports"), "Required value: a Service needs ports (unless headless or ExternalName)")
    if kind == "ExternalName" and not spec.get("externalName"):
        yield _error(("spec", "externalName"), "Required value: an ExternalName Service needs externalName")
    seen: set[str] = set()
    for i, port in enumerate(ports):
        at = ("spec", "ports", i)
        name = port.get("name")
        if len(ports) > 1 and not name:
            yield _error((*at, "name"), "Required value: every port of a multi-port Service needs a name")
        elif isinstance(name, str) and name:
            if err := names.port_name(name):
                yield _error((*at, "name"), f"port name {name!r} {err}")
            if name in seen:
                yield _error((*at, "name"), f"Duplicate value: port name {name!r}")
            seen.add(name)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            yield _error(
                (*at, "protocol"),
                f"Unsupported value: {protocol!r}: supported values: TCP, UDP, SCTP",
                "protocols are upper case" if str(protocol).upper() in _PROTOCOLS else "",
            )
        number = port.get("port")
        if isinstance(number, int) and not 1 <= number <= 65535:
            yield _error((*at, "port"), "must be between 1 and 65535, inclusive")
        target = port.get("targetPort")
        if isinstance(target, int) and not 1 <= target <= 65535:
            yield _error((*at, "targetPort"), "must be between 1 and 65535, inclusive")
        elif isinstance(target, str) and (err := names.port_name(target)):
            yield _error((*at, "targetPort"), f"targetPort {target!r} {err}")
