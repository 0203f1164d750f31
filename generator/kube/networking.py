"""kube-apiserver's create-time rules for networking.k8s.io/v1 NetworkPolicies and Ingresses,
read from pkg/apis/networking/validation/validation.go (ValidateNetworkPolicySpec,
ValidateIPBlock, ValidateIngressSpec)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from generator.kube import labels, names
from generator.kube.findings import Finding, Path, unsupported
from generator.problems import Severity
from generator.schema_messages import shown

_POLICY_TYPES = ("Ingress", "Egress")
_PROTOCOLS = ("TCP", "UDP", "SCTP")
_PATH_TYPES = ("Exact", "Prefix", "ImplementationSpecific")
_NOT_A_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
# what an Exact or Prefix path may not hold (invalidPathSequences) or end with (invalidPathSuffixes)
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"


def _error(path: Path, rule: str, message: str, hint: str = "") -> Finding:
    return Finding(path, rule, Severity.ERROR, message, hint)


def _ip_block(block: Any, path: Path) -> Iterator[Finding]:
    """ValidateIPBlock: the CIDR and each exception parse as legacy fields do (StrictIPCIDRValidation
    is off by default), and each exception is a strict subset of the CIDR."""
    if not isinstance(block, dict):
        return
    cidr = block.get("cidr")
    if not cidr:
        yield _error((*path, "cidr"), "k8s-network-policy", "Required value: an ipBlock needs a cidr")
        return
    network = names.cidr_sloppy(str(cidr))
    if network is None:
        yield _error((*path, "cidr"), "k8s-network-policy", f"{shown(cidr)} {_NOT_A_CIDR}")
        return
    for i, text in enumerate(block.get("except") or []):
        excluded = names.cidr_sloppy(str(text))
        if excluded is None:
            yield _error((*path, "except", i), "k8s-network-policy", f"{shown(text)} {_NOT_A_CIDR}")
            continue
        if excluded.version != network.version or not excluded.subnet_of(network) or excluded == network:  # type: ignore[arg-type]
            yield _error(
                (*path, "except", i),
                "k8s-network-policy",
                f"{text} must be a strict subset of `cidr` {cidr}",
                "an exception carves a smaller range out of the block's own",
            )


def _ports(ports: Any, path: Path) -> Iterator[Finding]:
    """ValidateNetworkPolicyPort: a known protocol, a port number or name, and an endPort only
    after a numeric port, not below it and itself a port number."""
    for i, port in enumerate(ports or []):
        if not isinstance(port, dict):
            continue
        at = (*path, i)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            yield unsupported((*at, "protocol"), "k8s-network-policy", protocol, _PROTOCOLS)
        number, end = port.get("port"), port.get("endPort")
        if isinstance(number, int) and (err := names.port_number(number)):
            yield _error((*at, "port"), "k8s-network-policy", err)
        elif isinstance(number, str) and (err := names.port_name(number)):
            yield _error((*at, "port"), "k8s-network-policy", f"port {shown(number)} {err}")
        if not isinstance(end, int):
            continue
        if number is None:
            yield _error((*at, "endPort"), "k8s-network-policy", "may not be specified when `port` is not specified")
        elif not isinstance(number, int):
            yield _error((*at, "endPort"), "k8s-network-policy", "may not be specified when `port` is non-numeric")
        else:
            if end < number:
                yield _error(
                    (*at, "endPort"), "k8s-network-policy", f"endPort {end} must be greater than or equal to `port`"
                )
            if err := names.port_number(end):
                yield _error((*at, "endPort"), "k8s-network-policy", f"endPort {end} {err}")


def check_network_policy(obj: dict[str, Any]) -> Iterator[Finding]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from labels.check_selector(spec.get("podSelector"), ("spec", "podSelector"), "k8s-network-policy")
    kinds = spec.get("policyTypes") or []
    for i, kind in enumerate(kinds):
        if kind not in _POLICY_TYPES:
            yield unsupported(("spec", "policyTypes", i), "k8s-network-policy", kind, _POLICY_TYPES)
    if len(kinds) > len(_POLICY_TYPES):
        yield _error(("spec", "policyTypes"), "k8s-network-policy", "may not specify more than two policyTypes")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for r, rule in enumerate(spec.get(direction) or []):
            if not isinstance(rule, dict):
                continue
            at = ("spec", direction, r)
            yield from _ports(rule.get("ports"), (*at, "ports"))
            for p, peer in enumerate(rule.get(peers) or []):
                if not isinstance(peer, dict):
                    continue
                if not peer.keys() & {"ipBlock", "podSelector", "namespaceSelector"}:
                    yield _error(
                        (*at, peers, p),
                        "k8s-network-policy",
                        "must specify a peer: podSelector, namespaceSelector or ipBlock",
                        "to allow every source or destination, leave the list out",
                    )
                elif "ipBlock" in peer and ({"podSelector", "namespaceSelector"} & peer.keys()):
                    yield _error(
                        (*at, peers, p),
                        "k8s-network-policy",
                        "may not specify more than 1 peer type (ipBlock with selectors)",
                    )
                for selector in ("podSelector", "namespaceSelector"):
                    yield from labels.check_selector(
                        peer.get(selector), (*at, peers, p, selector), "k8s-network-policy"
                    )
                yield from _ip_block(peer.get("ipBlock"), (*at, peers, p, "ipBlock"))


def _backend(backend: Any, path: Path) -> Iterator[Finding]:
    """validateIngressBackend: a service or a resource, never both; a service by a DNS-1035 name
    and one port, by name or number (0 and "" count as unset)."""
    if not isinstance(backend, dict):
        return
    service, resource = backend.get("service"), backend.get("resource")
    if (service is None) == (resource is None):
        yield _error(path, "k8s-ingress", "exactly one of service and resource must be specified")
        return
    if isinstance(resource, dict):
        yield from _typed_reference(resource, (*path, "resource"))
    if not isinstance(service, dict):
        return
    name = service.get("name")
    if not name:
        yield _error((*path, "service", "name"), "k8s-ingress", "Required value: the backend's Service name")
    elif isinstance(name, str) and (err := names.dns1035_label(name)):
        yield _error((*path, "service", "name"), "k8s-ingress", f"service name {shown(name)} {err}")
    port = service.get("port")
    port = port if isinstance(port, dict) else {}
    port_name, number = port.get("name"), port.get("number")
    if port_name and number:
        yield _error((*path, "service", "port"), "k8s-ingress", "cannot set both port name & port number")
    elif port_name:
        if isinstance(port_name, str) and (err := names.port_name(port_name)):
            yield _error((*path, "service", "port", "name"), "k8s-ingress", f"port name {shown(port_name)} {err}")
    elif number:
        if isinstance(number, int) and (err := names.port_number(number)):
            yield _error((*path, "service", "port", "number"), "k8s-ingress", f"port {number} {err}")
    else:
        yield _error(
            (*path, "service", "port"),
            "k8s-ingress",
            "Required value: port name or number is required",
            "name the Service's port: `number: 80` or `name: http`",
        )


def _typed_reference(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateIngressTypedLocalObjectReference: an optional API group (a DNS subdomain), and a
    kind and a name that are path segments."""
    group = ref.get("apiGroup")
    if isinstance(group, str) and (err := names.dns1123_subdomain(group)):
        yield _error((*path, "apiGroup"), "k8s-ingress", f"apiGroup {shown(group)} {err}")
    for key in ("kind", "name"):
        value = ref.get(key)
        if not value:
            yield _error(
                (*path, key),
                "k8s-ingress",
                f"Required value: the resource backend's {key}",
                "a resource backend names an object of the Ingress's namespace by kind and name",
            )
        elif isinstance(value, str) and (err := names.path_segment(value)):
            yield _error((*path, key), "k8s-ingress", f"{key} {shown(value)} {err}")


def _ingress_path(entry: dict[str, Any], at: Path) -> Iterator[Finding]:
    """validateHTTPIngressPath: a known pathType; an absolute path, which for Exact and Prefix
    holds no '//', '/./', '/../' or encoded '/', and ends in no '/..' or '/.'."""
    kind = entry.get("pathType")
    raw = entry.get("path")
    path = raw if isinstance(raw, str) else ""
    if kind not in _PATH_TYPES:
        yield unsupported((*at, "pathType"), "k8s-ingress", kind, _PATH_TYPES)
    elif (kind != "ImplementationSpecific" or path) and not path.startswith("/"):
        yield _error((*at, "path"), "k8s-ingress", f"must be an absolute path (starting with '/') for pathType {kind}")
    if kind in ("Exact", "Prefix"):
        for sequence in _INVALID_PATH_SEQUENCES:
            if sequence in path:
                yield _error(
                    (*at, "path"),
                    "k8s-ingress",
                    f"path {shown(path)} must not contain {sequence!r}",
                    "write the path in its normal form: Exact and Prefix paths are matched by their segments",
                )
        for suffix in _INVALID_PATH_SUFFIXES:
            if path.endswith(suffix):
                yield _error(
                    (*at, "path"),
                    "k8s-ingress",
                    f"path {shown(path)} cannot end with {suffix!r}",
                    "write the path in its normal form: Exact and Prefix paths are matched by their segments",
                )
    yield from _backend(entry.get("backend"), (*at, "backend"))


def _ingress_rules(rules: list[Any]) -> Iterator[Finding]:
    """validateIngressRules: a host is a DNS name (a wildcard one where it holds '*'), not an
    IP address; an http rule has paths."""
    for r, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        host = rule.get("host")
        if isinstance(host, str) and host:
            at: Path = ("spec", "rules", r, "host")
            if names.ip_sloppy(host) is not None:
                yield _error(at, "k8s-ingress", f"host {shown(host)} must be a DNS name, not an IP address")
            elif err := names.host_name(host):
                yield _error(at, "k8s-ingress", f"host {shown(host)} {err}")
        http = rule.get("http")
        if not isinstance(http, dict):
            continue
        if not http.get("paths"):
            yield _error(
                ("spec", "rules", r, "http", "paths"), "k8s-ingress", "Required value: an http rule needs paths"
            )
        for p, entry in enumerate(http.get("paths") or []):
            if isinstance(entry, dict):
                yield from _ingress_path(entry, ("spec", "rules", r, "http", "paths", p))


def _ingress_tls(tls: list[Any]) -> Iterator[Finding]:
    """validateIngressTLS: each host a DNS name (a wildcard one where it holds '*'), the
    secret's name a Secret's."""
    for t, entry in enumerate(tls):
        if not isinstance(entry, dict):
            continue
        for h, host in enumerate(entry.get("hosts") or []):
            if isinstance(host, str) and (err := names.host_name(host)):
                yield _error(("spec", "tls", t, "hosts", h), "k8s-ingress", f"host {shown(host)} {err}")
        secret = entry.get("secretName")
        if isinstance(secret, str) and secret and (err := names.dns1123_subdomain(secret)):
            yield _error(("spec", "tls", t, "secretName"), "k8s-ingress", f"secret name {shown(secret)} {err}")


def check_ingress(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateIngressCreate: a default backend or rules (an Ingress without a spec has
    neither), valid rules, TLS and class name, and the legacy class annotation, where both are
    set, equal to ingressClassName."""
    spec = obj.get("spec") or {}
    if not isinstance(spec, dict):
        return
    rules, tls = spec.get("rules"), spec.get("tls")
    if spec.get("defaultBackend") is None and not rules:
        yield _error(
            ("spec",),
            "k8s-ingress",
            "either `defaultBackend` or `rules` must be specified",
            "route by rules, or send every request to a defaultBackend",
        )
    yield from _backend(spec.get("defaultBackend"), ("spec", "defaultBackend"))
    yield from _ingress_rules(rules if isinstance(rules, list) else [])
    yield from _ingress_tls(tls if isinstance(tls, list) else [])
    class_name = spec.get("ingressClassName")
    if isinstance(class_name, str) and (err := names.dns1123_subdomain(class_name)):
        yield _error(("spec", "ingressClassName"), "k8s-ingress", f"ingressClassName {shown(class_name)} {err}")
    annotations = (obj.get("metadata") or {}).get("annotations")
    annotated = annotations.get(INGRESS_CLASS_ANNOTATION) if isinstance(annotations, dict) else None
    if annotated is not None and class_name is not None and annotated != class_name:
        yield _error(
            ("metadata", "annotations", INGRESS_CLASS_ANNOTATION),
            "k8s-ingress",
            f"{INGRESS_CLASS_ANNOTATION} {shown(annotated)} must match `ingressClassName` ({shown(class_name)}) "
            "when both are specified",
            "keep only spec.ingressClassName: the annotation is deprecated",
        )


MAX_INGRESS_CLASS_CONTROLLER = 250
# IsDomainPrefixedPath's path: the characters an HTTP path may hold (apimachinery's httpPathRegexp)
_HTTP_PATH = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")


def check_ingress_class(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateIngressClass: the controller is a domain-prefixed path of at most 250
    characters; parameters name a kind and a name, and a namespace exactly when their scope
    (Cluster when unset: SetDefaults_IngressClass) is Namespace."""
    spec = obj.get("spec") or {}
    controller = spec.get("controller") or ""
    at: Path = ("spec", "controller")
    if len(controller) > MAX_INGRESS_CLASS_CONTROLLER:
        yield _error(
            at, "k8s-ingress-class", f"controller must be no more than {MAX_INGRESS_CLASS_CONTROLLER} characters"
        )
    domain, _, path = controller.partition("/")
    if not controller:
        yield _error(
            at, "k8s-ingress-class", "controller is required", 'a domain-prefixed path, such as "example.com/ingress"'
        )
    elif not domain or not path:
        yield _error(
            at,
            "k8s-ingress-class",
            f'controller {shown(controller)} must be a domain-prefixed path (such as "acme.io/foo")',
        )
    else:
        if (problem := names.dns1123_subdomain(domain)) is not None:
            yield _error(at, "k8s-ingress-class", f"controller's domain {shown(domain)} {problem}")
        if not _HTTP_PATH.match(path):
            yield _error(
                at, "k8s-ingress-class", f"controller's path {shown(path)} holds characters an HTTP path may not"
            )
    params = spec.get("parameters")
    if isinstance(params, dict):
        yield from _ingress_class_parameters(params, ("spec", "parameters"))


def _ingress_class_parameters(params: dict[str, Any], at: Path) -> Iterator[Finding]:
    group = params.get("apiGroup")
    if isinstance(group, str) and (problem := names.dns1123_subdomain(group)) is not None:
        yield _error((*at, "apiGroup"), "k8s-ingress-class", f"parameters.apiGroup {shown(group)} {problem}")
    for key in ("kind", "name"):
        value = params.get(key) or ""
        if not value:
            yield _error((*at, key), "k8s-ingress-class", f"parameters.{key} is required")
        elif (problem := names.path_segment(value)) is not None:
            yield _error((*at, key), "k8s-ingress-class", f"parameters.{key} {shown(value)} {problem}")
    scope = params.get("scope", "Cluster")
    namespace = params.get("namespace")
    if scope not in ("Cluster", "Namespace"):
        yield unsupported((*at, "scope"), "k8s-ingress-class", scope, ("Cluster", "Namespace"))
    elif scope == "Namespace":
        if namespace is None:
            yield _error(
                (*at, "namespace"), "k8s-ingress-class", "parameters.namespace is required: scope is Namespace"
            )
        elif (problem := names.dns1123_label(namespace)) is not None:
            yield _error((*at, "namespace"), "k8s-ingress-class", f"parameters.namespace {shown(namespace)} {problem}")
    elif namespace is not None:
        yield _error(
            (*at, "namespace"),
            "k8s-ingress-class",
            "parameters.namespace is forbidden: scope is Cluster" + ("" if "scope" in params else " (the default)"),
            "set scope: Namespace, or remove the namespace",
        )
