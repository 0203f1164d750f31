"""kube-apiserver's create-time rules for core/v1 kinds beyond the schemas, read from
pkg/apis/core/validation/validation.go (ValidateService) and pkg/api/pod/warnings.go."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator.kube import names
from generator.kube.findings import Finding, unsupported
from generator.kube.quantity import parse_quantity
from generator.problems import Severity
from generator.schema_messages import shown

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
            if err := names.dns1123_label(name):  # a Service's port names are DNS labels, not IANA names
                yield _error((*at, "name"), f"port name {shown(name)} {err}")
            if name in seen:
                yield _error((*at, "name"), f"Duplicate value: port name {shown(name)}")
            seen.add(name)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            hint = "protocols are upper case" if str(protocol).upper() in _PROTOCOLS else ""
            yield unsupported((*at, "protocol"), "k8s-service", protocol, _PROTOCOLS, hint)
        if port.get("nodePort") and kind == "ClusterIP":
            yield _error(
                (*at, "nodePort"),
                "Forbidden: may not be used when `type` is 'ClusterIP'",
                "use type NodePort or LoadBalancer, or drop nodePort",
            )
        number = port.get("port")
        if isinstance(number, int) and not 1 <= number <= 65535:
            yield _error((*at, "port"), "must be between 1 and 65535, inclusive")
        target = port.get("targetPort")
        if isinstance(target, int) and not 1 <= target <= 65535:
            yield _error((*at, "targetPort"), "must be between 1 and 65535, inclusive")
        elif isinstance(target, str) and (err := names.port_name(target)):
            yield _error((*at, "targetPort"), f"targetPort {shown(target)} {err}")


_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+\Z")


def check_persistent_volume_claim(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidatePersistentVolumeClaimSpec: access modes and a storage request."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    modes = spec.get("accessModes") or []
    if not modes:
        yield Finding(
            ("spec", "accessModes"), "k8s-pvc", Severity.ERROR, "Required value: at least 1 access mode is required"
        )
    for i, mode in enumerate(modes):
        if mode not in _ACCESS_MODES:
            yield unsupported(("spec", "accessModes", i), "k8s-pvc", mode, _ACCESS_MODES)
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        yield Finding(
            ("spec", "accessModes"), "k8s-pvc", Severity.ERROR, "may not use ReadWriteOncePod with other access modes"
        )
    requests = (spec.get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        yield Finding(
            ("spec", "resources"),
            "k8s-pvc",
            Severity.ERROR,
            "Required value: resources.requests.storage: a claim must say how much storage it needs",
        )
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Filesystem", "Block"):
        yield unsupported(("spec", "volumeMode"), "k8s-pvc", mode, ("Filesystem", "Block"))


def _config_key_error(key: str) -> str | None:
    """IsConfigMapKey: what a ConfigMap or Secret key may be (it becomes a file name)."""
    if len(key) > 253:
        return "must be no more than 253 characters"
    if not _CONFIG_KEY.match(key):
        return "must consist of alphanumeric characters, '-', '_' or '.'"
    if key in (".", ".."):
        return "must not be '.' or '..'"
    return None


def check_config_keys(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateConfigMap / ValidateSecret: every key a valid file name, no key in two maps."""
    rule = "k8s-configmap" if obj.get("kind") == "ConfigMap" else "k8s-secret"
    fields = ("data", "binaryData") if obj.get("kind") == "ConfigMap" else ("data", "stringData")
    seen: dict[str, str] = {}
    for field in fields:
        for key in obj.get(field) or {}:
            if err := _config_key_error(str(key)):
                yield Finding((field, key), rule, Severity.ERROR, f"key {shown(key)} {err}")
            if obj.get("kind") == "ConfigMap" and key in seen:
                yield Finding((field, key), rule, Severity.ERROR, f"duplicate of key {shown(key)} in {seen[key]}")
            seen[str(key)] = field
    if obj.get("kind") == "Secret":
        yield from _secret_type_keys(obj, set(seen))
        for key, value in (obj.get("data") or {}).items():
            if isinstance(value, str) and (why := _base64_error(value)) is not None:
                yield Finding(
                    ("data", key),
                    rule,
                    Severity.ERROR,
                    f"{why}: kube-apiserver cannot decode it",
                    "data holds base64; put plain text under stringData",
                )


def _base64_error(value: str) -> str | None:
    """Why Go's base64.StdEncoding cannot decode value (None: it can)."""
    import binascii

    text = value.replace("\n", "").replace("\r", "")  # Go skips line breaks
    try:
        binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        for i, ch in enumerate(text):
            if not (ch.isascii() and (ch.isalnum() or ch in "+/=")):
                return f"illegal base64 data at input byte {i}"
        return "illegal base64 data: not whole groups of four characters (padding missing or misplaced)"
    return None


# ValidateSecret: the keys a typed Secret must carry
_SECRET_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
}


def _secret_type_keys(obj: dict[str, Any], keys: set[str]) -> Iterator[Finding]:
    kind = obj.get("type")
    for needed in _SECRET_KEYS.get(str(kind), ()):
        if needed not in keys:
            yield Finding(
                ("type",), "k8s-secret", Severity.ERROR, f"Required value: a {kind} Secret needs the key {needed}"
            )
    if kind == "kubernetes.io/service-account-token":
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            yield Finding(
                ("metadata", "annotations"),
                "k8s-secret",
                Severity.ERROR,
                "Required value: a service-account-token Secret needs the annotation kubernetes.io/service-account.name",
            )


_QUOTA_SCOPES = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
)


def check_resource_quota(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateResourceQuotaSpec: quantities not negative, scopes known."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for name, value in (spec.get("hard") or {}).items():
        amount = parse_quantity(value)
        if amount is None:
            yield Finding(("spec", "hard", name), "k8s-quota", Severity.ERROR, f"{shown(value)} is not a quantity")
        elif amount < 0:
            yield Finding(("spec", "hard", name), "k8s-quota", Severity.ERROR, "must be greater than or equal to 0")
    for i, scope in enumerate(spec.get("scopes") or []):
        if scope not in _QUOTA_SCOPES:
            yield unsupported(("spec", "scopes", i), "k8s-quota", scope, _QUOTA_SCOPES)


_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def _limit_item_defaults(item: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """SetDefaults_LimitRangeItem: a Container's default limit is its max, its default request
    the default limit, else the min; kube-apiserver validates what these make."""
    sections = {key: dict(item.get(key) or {}) for key in ("max", "min", "default", "defaultRequest")}
    if item.get("type") == "Container":
        for key, value in sections["max"].items():
            sections["default"].setdefault(key, value)
        for key, value in sections["default"].items():
            sections["defaultRequest"].setdefault(key, value)
        for key, value in sections["min"].items():
            sections["defaultRequest"].setdefault(key, value)
    return sections


# (lower, upper): ValidateLimitRange's orderings, each checked per resource
_LIMIT_ORDER = (
    ("min", "max"),
    ("min", "defaultRequest"),
    ("defaultRequest", "max"),
    ("min", "default"),
    ("default", "max"),
    ("defaultRequest", "default"),
)


def check_limit_range(obj: dict[str, Any]) -> Iterator[Finding]:
    for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
        if not isinstance(item, dict):
            continue
        at = ("spec", "limits", i)
        if item.get("type") not in _LIMIT_TYPES:
            yield unsupported((*at, "type"), "k8s-limit-range", item.get("type"), _LIMIT_TYPES)
        sections = _limit_item_defaults(item)
        for low, high in _LIMIT_ORDER:
            for name in sorted(set(sections[low]) & set(sections[high])):
                lower, upper = parse_quantity(sections[low][name]), parse_quantity(sections[high][name])
                if lower is not None and upper is not None and lower > upper:
                    where = low if low in item and name in (item.get(low) or {}) else high
                    yield Finding(
                        (*at, where, name),
                        "k8s-limit-range",
                        Severity.ERROR,
                        f"{low} value {sections[low][name]} is greater than {high} value {sections[high][name]}"
                        + ("" if low in item and high in item else " (after defaulting)"),
                    )
