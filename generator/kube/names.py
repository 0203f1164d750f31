"""Kubernetes name, label, annotation, port-name and IP syntax (k8s.io/apimachinery validation)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from functools import lru_cache

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_IANA_SVC = re.compile(r"^[-a-z0-9]+\Z")
_WILDCARD_DNS1123_SUBDOMAIN = re.compile(r"^\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+\Z")


@lru_cache(maxsize=8192)  # manifests repeat their names and keys
def dns1123_label(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _DNS1123_LABEL.match(value):
        return "must be a DNS-1123 label (lower-case alphanumerics and '-', alphanumeric at both ends)"
    return None


@lru_cache(maxsize=8192)
def dns1035_label(value: str) -> str | None:
    """A Service's name: a DNS-1123 label that starts with a letter (apimachinery's NameIsDNS1035Label)."""
    return dns1123_label(value) or (None if value[:1].isalpha() else "must start with a lower-case letter (DNS-1035)")


def path_segment(value: str) -> str | None:
    """RBAC names (apimachinery's ValidatePathSegmentName): anything a URL path segment can carry."""
    if value in (".", ".."):
        return f"may not be {value!r}"
    bad = [c for c in ("/", "%") if c in value]
    return "may not contain " + " or ".join(repr(c) for c in bad) if bad else None


def name_prefix(validate: Callable[[str], str | None], prefix: str) -> str | None:
    """A generateName, checked as ValidateObjectMeta does: by the kind's name validator in its
    prefix form. Path segments then only refuse '/' and '%'; the DNS forms mask a trailing
    dash as apimachinery's maskTrailingDash does (the last two characters become "a")."""
    if validate is path_segment:
        return path_segment(prefix) if prefix not in (".", "..") else None
    if len(prefix) > 1 and prefix.endswith("-"):
        prefix = prefix[:-2] + "a"
    return validate(prefix)


@lru_cache(maxsize=8192)
def dns1123_subdomain(value: str) -> str | None:
    if len(value) > 253:
        return "must be no more than 253 characters"
    if not _DNS1123_SUBDOMAIN.match(value):
        return "must be a DNS-1123 subdomain (lower-case alphanumerics, '-' and '.')"
    return None


def wildcard_dns1123_subdomain(value: str) -> str | None:
    """A wildcard host (apimachinery's IsWildcardDNS1123Subdomain): '*.' and a DNS subdomain."""
    if len(value) > 253:
        return "must be no more than 253 characters"
    if not _WILDCARD_DNS1123_SUBDOMAIN.match(value):
        return "must be a wildcard DNS-1123 subdomain: '*.' followed by a DNS subdomain"
    return None


def host_name(value: str) -> str | None:
    """An Ingress rule's or TLS entry's host: a wildcard subdomain where it holds a '*', else a
    DNS subdomain."""
    return wildcard_dns1123_subdomain(value) if "*" in value else dns1123_subdomain(value)


def port_number(value: int) -> str | None:
    """apimachinery's IsValidPortNum."""
    return None if 1 <= value <= 65535 else "must be between 1 and 65535, inclusive"


def fully_qualified_domain_name(value: str) -> str | None:
    """apimachinery's IsFullyQualifiedDomainName: a DNS subdomain of two labels or more (a
    trailing dot allowed), each label a DNS label."""
    name = value[:-1] if value.endswith(".") else value
    if err := dns1123_subdomain(name):
        return err
    labels = name.split(".")
    if len(labels) < 2:
        return "should be a domain with at least two segments separated by dots"
    return next((f"label {label!r} {err}" for label in labels if (err := dns1123_label(label))), None)


def csi_driver_name(value: str) -> str | None:
    """ValidateCSIDriverName: at most 63 characters, a DNS-1123 subdomain once lower-cased."""
    if not value:
        return "Required value"
    if len(value) > 63:
        return "must be no more than 63 characters"
    return dns1123_subdomain(value.lower())


@lru_cache(maxsize=8192)
def qualified_name(value: str) -> str | None:
    """A label key / annotation key: [prefix/]name."""
    parts = value.split("/")
    if len(parts) > 2:
        return "a qualified name may contain at most one '/'"
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            return "prefix part must be non-empty"
        err = dns1123_subdomain(parts[0])
        if err:
            return f"prefix part {err}"
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _QUALIFIED_NAME.match(name):
        return "name part must consist of alphanumerics, '-', '_' or '.', alphanumeric at both ends"
    return None


@lru_cache(maxsize=8192)
def label_value(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _LABEL_VALUE.match(value):
        return "must be empty or alphanumerics, '-', '_' or '.', alphanumeric at both ends"
    return None


# apimachinery's httpPathRegexp: the characters an HTTP path may hold
_HTTP_PATH = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+\Z")


def domain_prefixed_path(value: str) -> str | None:
    """IsDomainPrefixedPath: a DNS-1123 subdomain, '/', then an HTTP path (such as acme.io/foo)."""
    if not value:
        return "Required value"
    host, _, path = value.partition("/")
    if not host or not path:
        return 'must be a domain-prefixed path (such as "acme.io/foo")'
    if err := dns1123_subdomain(host):
        return f"{host}: {err}"
    if not _HTTP_PATH.match(path):
        return f"{path}: Invalid path: must match the regex [A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
    return None


@lru_cache(maxsize=8192)
def port_name(value: str) -> str | None:
    """IANA_SVC_NAME (RFC 6335), as kube-apiserver checks container and service port names."""
    if len(value) > 15:
        return "must be no more than 15 characters"
    if not _IANA_SVC.match(value):
        return "must contain only lower-case alphanumerics and '-'"
    if "--" in value:
        return "must not contain consecutive hyphens"
    if value.startswith("-") or value.endswith("-"):
        return "must not begin or end with a hyphen"
    if not any(c.isalpha() for c in value):
        return "must contain at least one letter"
    return None


def has_backsteps(value: str) -> bool:
    """validatePathNoBacksteps: a '..' element (kube-apiserver runs on Linux, where
    filepath.ToSlash leaves a backslash as it is)."""
    return ".." in value.split("/")


def local_descending_path_errors(value: str) -> list[str]:
    """validateLocalDescendingPath: relative (path.IsAbs: no leading '/'), with no '..' element."""
    errors = ["must be a relative path"] if value.startswith("/") else []
    return [*errors, "must not contain '..'"] if has_backsteps(value) else errors


# podshelper.ConvertDownwardAPIFieldLabel (pkg/apis/core/pods/helpers.go): the v1 Pod fields a
# fieldRef may name at all, an environment variable's or a downward API volume file's
_DOWNWARD_API_FIELDS = frozenset(
    {
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
        "spec.terminationGracePeriodSeconds",
        "spec.host",  # old clients' spelling of spec.nodeName
    }
)


def split_subscripted_path(field: str) -> tuple[str | None, str]:
    """fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['key']` -> (metadata.labels, key);
    (None, "") for a path without a subscript."""
    if not field.endswith("']"):
        return None, ""
    head, sep, key = field[:-2].partition("['")
    return (head, key) if sep and head else (None, "")


def downward_api_field_error(api_version: str, field: str) -> str:
    """ConvertDownwardAPIFieldLabel's error for a fieldRef, in its words; "" when it converts."""
    if api_version != "v1":
        return f"unsupported pod version: {api_version}"
    subscripted, _ = split_subscripted_path(field)
    if subscripted is not None:
        ok = subscripted in ("metadata.annotations", "metadata.labels")
        return "" if ok else f"field label does not support subscript: {field}"
    return "" if field in _DOWNWARD_API_FIELDS else f"field label not supported: {field}"


@lru_cache(maxsize=8192)
def config_map_key(key: str) -> str | None:
    """IsConfigMapKey: what a ConfigMap or Secret key may be (it becomes a file name), and the
    key a container's env takes from one."""
    if len(key) > 253:
        return "must be no more than 253 characters"
    if not _CONFIG_KEY.match(key):
        return "must consist of alphanumeric characters, '-', '_' or '.'"
    if key in (".", ".."):
        return "must not be '.' or '..'"
    return None


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def ip_sloppy(value: str) -> IPAddress | None:
    """netutils.ParseIPSloppy, as legacy fields parse IPs: IPv4 parts may carry leading zeros."""
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        pass
    parts = value.split(".")
    if len(parts) == 4 and all(p.isdigit() and p.isascii() for p in parts):
        try:
            return ipaddress.IPv4Address(".".join(str(int(p)) for p in parts))
        except ValueError:
            return None
    return None


def cidr_sloppy(value: str) -> IPNetwork | None:
    """netutils.ParseCIDRSloppy, as legacy fields parse CIDRs: an address (IPv4 parts may carry
    leading zeros), '/', and a prefix length; bits beyond the prefix are masked off."""
    address, slash, bits = value.partition("/")
    ip = ip_sloppy(address)
    if ip is None or not slash or not (bits.isdigit() and bits.isascii()) or int(bits) > ip.max_prefixlen:
        return None
    return ipaddress.ip_network(f"{ip}/{int(bits)}", strict=False)
