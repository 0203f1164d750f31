"""kube-apiserver's create-time rules for networking.k8s.io/v1 NetworkPolicies and Ingresses,
read from pkg/apis/networking/validation/validation.go (ValidateNetworkPolicySpec,
ValidateIPBlock, ValidateIngressSpec)."""

from __future__ import annotations

import ipaddress
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


def _error(path: Path, rule: str, message: str, hint: str = "") -> Finding:
    return Finding(path, rule, Severity.ERROR, message, hint)


def _ip_block(block: Any, path: Path) -> Iterator[Finding]:
    if not isinstance(block, dict):
        return
    try:
        network = ipaddress.ip_network(str(block.get("cidr", "")), strict=False)
    except ValueError:
        yield _error((*path, "cidr"), "k8s-network-policy", f"{shown(block.get('cidr'))} is not a valid CIDR")
        return
    for i, text in enumerate(block.get("except") or []):
        try:
            excluded = ipaddress.ip_network(str(text), strict=False)
        except ValueError:
            yield _error((*path, "except", i), "k8s-network-policy", f"{shown(text)} is not a valid CIDR")
            continue
        if excluded.version != network.version or not excluded.subnet_of(network) or excluded == network:  # type: ignore[arg-type]
            yield _error(
                (*path, "except", i),
                "k8s-network-policy",
                f"{text} must be a strict subset of `cidr` {block.get('cidr')}",
                "an exception carves a smaller range out of the block's own",
            )


def _ports(ports: Any, path: Path) -> Iterator[Finding]:
    for i, port in enumerate(ports or []):
        if not isinstance(port, dict):
            continue
        at = (*path, i)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            yield unsupported((*at, "protocol"), "k8s-network-policy", protocol, _PROTOCOLS)
        number, end = port.get("port"), port.get("endPort")
        if isinstance(number, int) and not 1 <= number <= 65535:
            yield _error((*at, "port"), "k8s-network-policy", "must be between 1 and 65535, inclusive")
        elif isinstance(number, str) and (err := names.port_name(number)):
            yield _error((*at, "port"), "k8s-network-policy", f"port {shown(number)} {err}")
        if end is not None:
            if not isinstance(number, int):
                yield _error((*at, "endPort"), "k8s-network-policy", "may only be set when `port` is a number")
            elif isinstance(end, int) and end < number:
                yield _error(
                    (*at, "endPort"), "k8s-network-policy", f"endPort {end} must be greater than or equal to `port`"
                )


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
    if not isinstance(backend, dict):
        return
    service, resource = backend.get("service"), backend.get("resource")
    if (service is None) == (resource is None):
        yield _error(path, "k8s-ingress", "exactly one of service and resource must be specified")
    if isinstance(service, dict):
        port = service.get("port") or {}
        if ("name" in port) == ("number" in port):
            yield _error((*path, "service", "port"), "k8s-ingress", "exactly one of name and number must be specified")
        name = service.get("name")
        if isinstance(name, str) and (err := names.dns1035_label(name)):
            yield _error((*path, "service", "name"), "k8s-ingress", f"service name {shown(name)} {err}")


def check_ingress(obj: dict[str, Any]) -> Iterator[Finding]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("defaultBackend") is None and not spec.get("rules"):
        yield _error(("spec",), "k8s-ingress", "either `defaultBackend` or `rules` must be specified")
    yield from _backend(spec.get("defaultBackend"), ("spec", "defaultBackend"))
    for r, rule in enumerate(spec.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        host = rule.get("host")
        if isinstance(host, str) and host:
            bare = host[2:] if host.startswith("*.") else host
            if names.ip_sloppy(host) is not None:
                yield _error(
                    ("spec", "rules", r, "host"),
                    "k8s-ingress",
                    f"host {shown(host)} must be a DNS name, not an IP address",
                )
            elif err := names.dns1123_subdomain(bare):
                yield _error(("spec", "rules", r, "host"), "k8s-ingress", f"host {shown(host)} {err}")
        http = rule.get("http")
        if isinstance(http, dict) and not http.get("paths"):
            yield _error(
                ("spec", "rules", r, "http", "paths"), "k8s-ingress", "Required value: an http rule needs paths"
            )
        for p, entry in enumerate(((rule.get("http") or {}).get("paths")) or []):
            if not isinstance(entry, dict):
                continue
            at = ("spec", "rules", r, "http", "paths", p)
            kind = entry.get("pathType")
            if kind not in _PATH_TYPES:
                yield unsupported((*at, "pathType"), "k8s-ingress", kind, _PATH_TYPES)
            path = entry.get("path")
            if kind in ("Exact", "Prefix") and not (isinstance(path, str) and path.startswith("/")):
                yield _error(
                    (*at, "path"), "k8s-ingress", f"must be an absolute path (starting with '/') for pathType {kind}"
                )
            yield from _backend(entry.get("backend"), (*at, "backend"))


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
