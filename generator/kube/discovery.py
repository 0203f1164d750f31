"""kube-apiserver's create-time rules for discovery.k8s.io/v1 EndpointSlices, read from
pkg/apis/discovery/validation/validation.go (ValidateEndpointSliceCreate)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator.kube import labels, names
from generator.kube.core import endpoint_ip_error
from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.schema_messages import shown

_ADDRESS_TYPES = ("IPv4", "IPv6", "FQDN")  # a create refuses the deprecated "IP"
_PROTOCOLS = ("TCP", "UDP", "SCTP")
MAX_ENDPOINTS, MAX_ADDRESSES, MAX_PORTS, MAX_TOPOLOGY_LABELS = 1000, 100, 100, 16
_RULE = "k8s-endpoint-slice"


def _too_many(path: Path, items: list[Any], limit: int) -> Finding:
    return error_at(path, _RULE, f"Too many: {len(items)}: must have at most {limit} items", "split the slice")


def _address_error(address: str, address_type: Any) -> str | None:
    """The address as its slice's type reads it: an IP of the type's family (IsValidIPv4Address,
    IsValidIPv6Address) that a Service may route to (ValidateNonSpecialIP), a fully qualified
    domain name, or, for the deprecated "IP", any IP; other types are not read."""
    if address_type == "FQDN":
        return names.fully_qualified_domain_name(address) if address else "Required value: an address"
    if address_type not in ("IP", "IPv4", "IPv6"):
        return None
    ip = names.ip_sloppy(address)
    if ip is None:
        return f"{shown(address)} must be a valid IP address"
    if address_type == "IP":
        return None
    family = 4 if ip.version == 4 or getattr(ip, "ipv4_mapped", None) is not None else 6
    if address_type != f"IPv{family}":
        return f"{shown(address)} must be a valid {address_type} address"
    return endpoint_ip_error(address)


def _endpoints(endpoints: list[Any], address_type: Any) -> Iterator[Finding]:
    """validateEndpoints: at most 1000, each with 1 to 100 addresses of the slice's type, at
    most 16 topology labels and a hostname that is a DNS label."""
    if len(endpoints) > MAX_ENDPOINTS:
        yield _too_many(("endpoints",), endpoints, MAX_ENDPOINTS)
        return
    for i, endpoint in enumerate(endpoints):
        if not isinstance(endpoint, dict):
            continue
        at: Path = ("endpoints", i)
        addresses = endpoint.get("addresses") or []
        if not addresses:
            yield error_at((*at, "addresses"), _RULE, "Required value: must contain at least 1 address")
        elif len(addresses) > MAX_ADDRESSES:
            yield _too_many((*at, "addresses"), addresses, MAX_ADDRESSES)
        for j, address in enumerate(addresses):
            if isinstance(address, str) and (err := _address_error(address, address_type)):
                yield error_at((*at, "addresses", j), _RULE, err, f"addressType is {address_type}")
        topology = endpoint.get("deprecatedTopology")  # the internal API's topology
        if isinstance(topology, dict):
            if len(topology) > MAX_TOPOLOGY_LABELS:
                yield _too_many((*at, "deprecatedTopology"), list(topology), MAX_TOPOLOGY_LABELS)
            yield from labels.check_labels(topology, (*at, "deprecatedTopology"), _RULE)
        hostname = endpoint.get("hostname")
        if isinstance(hostname, str) and (err := names.dns1123_label(hostname)):
            yield error_at((*at, "hostname"), _RULE, f"hostname {shown(hostname)} {err}")


def _ports(ports: list[Any]) -> Iterator[Finding]:
    """validatePorts: at most 100, each name (empty when unset: SetDefaults_EndpointPort) a DNS
    label and used once, the protocol (TCP when unset) TCP, UDP or SCTP, appProtocol a qualified
    name."""
    if len(ports) > MAX_PORTS:
        yield _too_many(("ports",), ports, MAX_PORTS)
        return
    seen: set[str] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        at: Path = ("ports", i)
        name = port.get("name") or ""
        if name and (err := names.dns1123_label(name)):
            yield error_at((*at, "name"), _RULE, f"port name {shown(name)} {err}")
        if name in seen:
            yield error_at(
                (*at, "name"),
                _RULE,
                f"Duplicate value: port name {shown(name)}",
                "name each port of a slice differently (several ports need names)",
            )
        seen.add(name)
        protocol = port.get("protocol", "TCP")
        if protocol not in _PROTOCOLS:
            yield unsupported((*at, "protocol"), _RULE, protocol, _PROTOCOLS)
        app = port.get("appProtocol")
        if isinstance(app, str) and (err := names.qualified_name(app)):
            yield error_at((*at, "appProtocol"), _RULE, f"appProtocol {shown(app)}: {err}")


def check_endpoint_slice(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateEndpointSliceCreate: an address type, the endpoints read by it, and the ports."""
    address_type = obj.get("addressType")
    if not address_type:
        yield error_at(("addressType",), _RULE, "Required value: addressType", "IPv4, IPv6 or FQDN")
    elif address_type not in _ADDRESS_TYPES:
        yield unsupported(("addressType",), _RULE, address_type, _ADDRESS_TYPES)
    endpoints, ports = obj.get("endpoints"), obj.get("ports")
    yield from _endpoints(endpoints if isinstance(endpoints, list) else [], address_type)
    yield from _ports(ports if isinstance(ports, list) else [])
