"""kube-apiserver's create-time rules for core/v1 kinds beyond the schemas, read from
pkg/apis/core/validation/validation.go (ValidateService) and pkg/api/pod/warnings.go."""

from __future__ import annotations

import ipaddress
import posixpath
from collections.abc import Iterator
from typing import Any

from generator.kube import labels, names, pods
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
    """ValidateService after SetDefaults_Service: selector labels; cluster IPs; what headless,
    ExternalName, NodePort and LoadBalancer Services may hold; ports; external IPs; source
    ranges; traffic policies."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    headless = spec.get("clusterIP") == "None"
    kind = spec.get("type", "ClusterIP")
    if not ports and not headless and kind != "ExternalName":
        yield _error(("spec", "ports"), "Required value: a Service needs ports (unless headless or ExternalName)")
    yield from labels.check_labels(spec.get("selector"), ("spec", "selector"), "k8s-service")
    yield from _service_cluster_ips(spec, kind)
    yield from _service_ports(ports, kind)
    for i, ip in enumerate(spec.get("externalIPs") or []):
        if why := endpoint_ip_error(ip):
            yield _error(("spec", "externalIPs", i), why)
    yield from _service_source_ranges(obj, kind)
    yield from _service_traffic_policies(spec, kind)
    yield from _service_load_balancer(obj, kind)


def _service_cluster_ips(spec: dict[str, Any], kind: str) -> Iterator[Finding]:
    """ValidateService's IP rules: clusterIPs[0] is clusterIP; at most two, IPs of different
    families, None only alone; ipFamilies IPv4 or IPv6, at most two, different, and matching
    the IPs they are given with; none at all on an ExternalName Service, whose externalName is
    a DNS name; never None on NodePort or LoadBalancer."""
    cluster_ip, listed = spec.get("clusterIP"), spec.get("clusterIPs") or []
    if listed and cluster_ip != listed[0]:
        yield _error(("spec", "clusterIPs", 0), f"first value must match `clusterIP` ({shown(cluster_ip)})")
    if len(listed) > 2:
        yield _error(("spec", "clusterIPs"), "may have at most 2 values, one per IP family")
    families: list[int] = []
    for i, ip in enumerate(listed or ([cluster_ip] if cluster_ip else [])):
        where = ("spec", "clusterIPs", i) if listed else ("spec", "clusterIP")
        if ip == "None":
            if len(listed) > 1:
                yield _error(where, '"None" is allowed only as the one value of clusterIPs (headless)')
            continue
        address = names.ip_sloppy(str(ip))
        if address is None:
            yield _error(where, f'{shown(ip)} must be a valid IP address or "None" (headless)')
            continue
        if address.version in families:
            yield _error(where, "may specify no more than one IP for each IP family")
        families.append(address.version)
    declared = spec.get("ipFamilies") or []
    for i, family in enumerate(declared):
        if family not in ("IPv4", "IPv6"):
            yield unsupported(("spec", "ipFamilies", i), "k8s-service", family, ("IPv4", "IPv6"))
        elif family in declared[:i]:
            yield _error(("spec", "ipFamilies", i), f"Duplicate value: {family}")
        elif i < len(families) and family != f"IPv{families[i]}":
            yield _error(
                ("spec", "ipFamilies", i), f"{family} does not match clusterIPs[{i}], an IPv{families[i]} address"
            )
    if len(declared) > 2:
        yield _error(("spec", "ipFamilies"), "may have at most 2 values")
    if kind == "ExternalName":
        if cluster_ip:
            yield _error(("spec", "clusterIP"), "Forbidden: must be empty for ExternalName services")
        external = spec.get("externalName")
        if not external:
            yield _error(("spec", "externalName"), "Required value: an ExternalName Service needs externalName")
        elif err := names.dns1123_subdomain(str(external).removesuffix(".")):
            yield _error(("spec", "externalName"), f"{shown(external)} {err}")
    elif kind in ("NodePort", "LoadBalancer") and cluster_ip == "None":
        yield _error(("spec", "clusterIP"), f"may not be set to 'None' for {kind} services")


def _service_ports(ports: list[dict[str, Any]], kind: str) -> Iterator[Finding]:
    seen: set[str] = set()
    numbers: set[tuple[Any, Any]] = set()
    node_ports: set[tuple[Any, Any]] = set()
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
        protocol = port.get("protocol", "TCP")
        if protocol not in _PROTOCOLS:
            hint = "protocols are upper case" if str(protocol).upper() in _PROTOCOLS else ""
            yield unsupported((*at, "protocol"), "k8s-service", protocol, _PROTOCOLS, hint)
        node_port = port.get("nodePort")
        if node_port and kind == "ClusterIP":
            yield _error(
                (*at, "nodePort"),
                "Forbidden: may not be used when `type` is 'ClusterIP'",
                "use type NodePort or LoadBalancer, or drop nodePort",
            )
        if node_port and (node_port, protocol) in node_ports:
            yield _error((*at, "nodePort"), f"Duplicate value: nodePort {node_port}/{protocol}")
        node_ports.add((node_port, protocol))
        number = port.get("port")
        if isinstance(number, int) and not 1 <= number <= 65535:
            yield _error((*at, "port"), "must be between 1 and 65535, inclusive")
        elif (number, protocol) in numbers:
            yield _error((*at, "port"), f"Duplicate value: port {number}/{protocol}")
        numbers.add((number, protocol))
        target = port.get("targetPort")
        if isinstance(target, int) and not 1 <= target <= 65535:
            yield _error((*at, "targetPort"), "must be between 1 and 65535, inclusive")
        elif isinstance(target, str) and (err := names.port_name(target)):
            yield _error((*at, "targetPort"), f"targetPort {shown(target)} {err}")
        app = port.get("appProtocol")
        if isinstance(app, str) and (err := names.qualified_name(app)):
            yield _error((*at, "appProtocol"), f"appProtocol {shown(app)}: {err}")


SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"


def _service_source_ranges(obj: dict[str, Any], kind: str) -> Iterator[Finding]:
    """validateLoadBalancerSourceRanges: only on a LoadBalancer, every entry (trimmed) a CIDR;
    the annotation is read only when the field is empty."""
    spec = obj["spec"]
    ranges = spec.get("loadBalancerSourceRanges") or []
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if kind != "LoadBalancer":
        if ranges:
            yield _error(("spec", "loadBalancerSourceRanges"), "may only be used when `type` is 'LoadBalancer'")
        if SOURCE_RANGES_ANNOTATION in annotations:
            yield _error(
                ("metadata", "annotations", SOURCE_RANGES_ANNOTATION), "may only be used when `type` is 'LoadBalancer'"
            )
        return
    for i, cidr in enumerate(ranges):
        if not _is_cidr(str(cidr).strip()):
            yield _error(("spec", "loadBalancerSourceRanges", i), f"{shown(cidr)} must be a CIDR, such as 10.0.0.0/8")
    value = str(annotations.get(SOURCE_RANGES_ANNOTATION) or "").strip()
    if not ranges and value:
        for cidr in value.split(","):
            if not _is_cidr(cidr.strip()):
                yield _error(
                    ("metadata", "annotations", SOURCE_RANGES_ANNOTATION),
                    f"{shown(cidr.strip())} must be a CIDR, such as 10.0.0.0/8",
                )


def _is_cidr(text: str) -> bool:
    return names.cidr_sloppy(text) is not None


_TRAFFIC_POLICIES = ("Cluster", "Local")
_TRAFFIC_DISTRIBUTIONS = ("PreferClose", "PreferSameZone", "PreferSameNode")
_TOPOLOGY_ANNOTATIONS = ("service.kubernetes.io/topology-aware-hints", "service.kubernetes.io/topology-mode")
MAX_AFFINITY_TIMEOUT = 86400


def _service_load_balancer(obj: dict[str, Any], kind: str) -> Iterator[Finding]:
    """allocateLoadBalancerNodePorts and loadBalancerClass (a qualified name) only on a
    LoadBalancer; session affinity config only with ClientIP affinity and a timeout of 1 s to
    a day; a known trafficDistribution; the two topology annotations alike when both are set."""
    spec = obj["spec"]
    for field in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
        if field in spec and kind != "LoadBalancer":
            yield _error(("spec", field), "may only be used when `type` is 'LoadBalancer'")
    lb_class = spec.get("loadBalancerClass")
    if isinstance(lb_class, str) and (err := names.qualified_name(lb_class)):
        yield _error(("spec", "loadBalancerClass"), f"{shown(lb_class)}: {err}")
    config = spec.get("sessionAffinityConfig")
    if isinstance(config, dict):
        if spec.get("sessionAffinity", "None") != "ClientIP":
            yield _error(("spec", "sessionAffinityConfig"), "must not be set when `sessionAffinity` is None")
        timeout = (config.get("clientIP") or {}).get("timeoutSeconds")
        if isinstance(timeout, int) and not 0 < timeout <= MAX_AFFINITY_TIMEOUT:
            yield _error(
                ("spec", "sessionAffinityConfig", "clientIP", "timeoutSeconds"),
                f"must be greater than 0 and less than {MAX_AFFINITY_TIMEOUT}",
            )
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution not in _TRAFFIC_DISTRIBUTIONS:
        yield unsupported(("spec", "trafficDistribution"), "k8s-service", distribution, _TRAFFIC_DISTRIBUTIONS)
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    hints, mode = (annotations.get(key) for key in _TOPOLOGY_ANNOTATIONS)
    if hints is not None and mode is not None and hints != mode:
        yield _error(
            ("metadata", "annotations", _TOPOLOGY_ANNOTATIONS[0]),
            f"must match annotations[{_TOPOLOGY_ANNOTATIONS[1]}] when both are set",
        )


def _service_traffic_policies(spec: dict[str, Any], kind: str) -> Iterator[Finding]:
    """validateServiceExternalTrafficPolicy and validateServiceInternalTrafficPolicy."""
    external = spec.get("externalTrafficPolicy")
    reachable = kind in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))
    if external is not None and not reachable:
        yield _error(("spec", "externalTrafficPolicy"), "may only be set for externally-accessible services")
    elif external is not None and external not in _TRAFFIC_POLICIES:
        yield unsupported(("spec", "externalTrafficPolicy"), "k8s-service", external, _TRAFFIC_POLICIES)
    internal = spec.get("internalTrafficPolicy")
    if internal is not None and internal not in _TRAFFIC_POLICIES:
        yield unsupported(("spec", "internalTrafficPolicy"), "k8s-service", internal, _TRAFFIC_POLICIES)
    health = spec.get("healthCheckNodePort")
    if health is not None:
        if not (kind == "LoadBalancer" and external == "Local"):
            yield _error(
                ("spec", "healthCheckNodePort"),
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            )
        elif isinstance(health, int) and not 0 <= health <= 65535:
            yield _error(("spec", "healthCheckNodePort"), "must be between 0 and 65535, inclusive")


_ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")


def _access_modes(modes: Any, path: tuple[str | int, ...], rule: str) -> Iterator[Finding]:
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


def _class_names(spec: dict[str, Any], rule: str) -> Iterator[Finding]:
    """ValidateClassName on a volume's storage and attributes classes (empty means none)."""
    for field in ("storageClassName", "volumeAttributesClassName"):
        value = spec.get(field)
        if isinstance(value, str) and value and (err := names.dns1123_subdomain(value)):
            yield Finding(("spec", field), rule, Severity.ERROR, f"{shown(value)}: {err}")


def _volume_mode(spec: dict[str, Any], rule: str) -> Iterator[Finding]:
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Filesystem", "Block"):
        yield unsupported(("spec", "volumeMode"), rule, mode, ("Filesystem", "Block"))


def check_persistent_volume_claim(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidatePersistentVolumeClaimSpec: access modes; a storage request above zero; a valid
    selector; class names as DNS subdomains; data sources that name a kind and an object, an
    API group as a DNS subdomain, and dataSource and dataSourceRef alike when both are set."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from _access_modes(spec.get("accessModes"), ("spec", "accessModes"), "k8s-pvc")
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
    yield from _volume_mode(spec, "k8s-pvc")
    yield from _class_names(spec, "k8s-pvc")
    for field in ("dataSource", "dataSourceRef"):
        yield from _data_source(spec.get(field), ("spec", field))
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict) and isinstance(ref, dict):
        keys = ("apiGroup", "kind", "name")
        if [source.get(k) or "" for k in keys] != [ref.get(k) or "" for k in keys] or ref.get("namespace"):
            yield Finding(
                ("spec", "dataSource"),
                "k8s-pvc",
                Severity.ERROR,
                "must match dataSourceRef",
                "set one of them: kube-apiserver copies dataSource into dataSourceRef",
            )


def _data_source(source: Any, path: tuple[str | int, ...]) -> Iterator[Finding]:
    """validateDataSource / validateDataSourceRef: a kind and a name; an API group, if any, a DNS
    subdomain."""
    if not isinstance(source, dict):
        return
    for key in ("kind", "name"):
        if not source.get(key):
            yield Finding((*path, key), "k8s-pvc", Severity.ERROR, f"Required value: a data source names its {key}")
    group = source.get("apiGroup")
    if isinstance(group, str) and group and (err := names.dns1123_subdomain(group)):
        yield Finding((*path, "apiGroup"), "k8s-pvc", Severity.ERROR, f"apiGroup {shown(group)}: {err}")


# PersistentVolumeSpec's own fields; every other key of the spec is a volume source
_PV_FIELDS = frozenset(
    {
        "accessModes",
        "capacity",
        "claimRef",
        "mountOptions",
        "nodeAffinity",
        "persistentVolumeReclaimPolicy",
        "storageClassName",
        "volumeAttributesClassName",
        "volumeMode",
    }
)
_RECLAIM_POLICIES = ("Retain", "Delete", "Recycle")


def check_persistent_volume(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidatePersistentVolumeSpec (not inline): access modes; a capacity of storage only,
    above zero; exactly one volume source; a known reclaim policy, Recycle never on a hostPath
    of `/`; a hostPath without `..`; class names as DNS subdomains, a volume attributes class
    only on a CSI volume; node affinity with required terms."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from _access_modes(spec.get("accessModes"), ("spec", "accessModes"), "k8s-pv")
    yield from _volume_mode(spec, "k8s-pv")
    capacity = spec.get("capacity") or {}
    if set(capacity) != {"storage"}:
        yield unsupported(("spec", "capacity"), "k8s-pv", ", ".join(map(str, capacity)) or None, ("storage",))
    for name, raw in capacity.items():
        amount = parse_quantity(raw)
        if amount is None or amount <= 0:
            yield _pv_error(("spec", "capacity", name), f"{shown(raw)}: must be greater than zero")
    sources = sorted(key for key in spec if key not in _PV_FIELDS)
    if len(sources) != 1:
        yield _pv_error(
            ("spec",),
            "must specify a volume type"
            if not sources
            else f"may not specify more than 1 volume type: {', '.join(sources)}",
        )
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in _RECLAIM_POLICIES:
        yield unsupported(("spec", "persistentVolumeReclaimPolicy"), "k8s-pv", policy, _RECLAIM_POLICIES)
    host_path = (spec.get("hostPath") or {}).get("path") if isinstance(spec.get("hostPath"), dict) else None
    if isinstance(host_path, str):
        if ".." in host_path.split("/"):
            yield _pv_error(("spec", "hostPath", "path"), "must not contain '..'")
        if policy == "Recycle" and posixpath.normpath(host_path) in ("/", "//"):
            yield _pv_error(
                ("spec", "hostPath", "path"), "may not be '/' when persistentVolumeReclaimPolicy is 'Recycle'"
            )
    yield from _class_names(spec, "k8s-pv")
    if "volumeAttributesClassName" in spec:
        if not spec["volumeAttributesClassName"]:
            yield _pv_error(("spec", "volumeAttributesClassName"), "an empty string is disallowed")
        if not isinstance(spec.get("csi"), dict):
            yield _pv_error(("spec", "volumeAttributesClassName"), "has to be used with a CSI volume (spec.csi)")
    affinity = spec.get("nodeAffinity")
    if isinstance(affinity, dict):
        terms = (affinity.get("required") or {}).get("nodeSelectorTerms")
        if not terms:
            yield _pv_error(
                ("spec", "nodeAffinity"), "must specify required node constraints (required.nodeSelectorTerms)"
            )
        for t, term in enumerate(terms or []):
            for e, expr in enumerate((term or {}).get("matchExpressions") or []):
                where = ("spec", "nodeAffinity", "required", "nodeSelectorTerms", t, "matchExpressions", e)
                yield from pods.check_node_selector_requirement(expr, where, True)


def _pv_error(path: tuple[str | int, ...], message: str) -> Finding:
    return Finding(path, "k8s-pv", Severity.ERROR, message)


def check_config_keys(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateConfigMap / ValidateSecret: every key a valid file name, no key in two maps."""
    rule = "k8s-configmap" if obj.get("kind") == "ConfigMap" else "k8s-secret"
    fields = ("data", "binaryData") if obj.get("kind") == "ConfigMap" else ("data", "stringData")
    seen: dict[str, str] = {}
    for field in fields:
        for key in obj.get(field) or {}:
            if err := names.config_map_key(str(key)):
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
    if kind == "kubernetes.io/basic-auth" and not keys & {"username", "password"}:
        yield Finding(
            ("type",), "k8s-secret", Severity.ERROR, "Required value: a basic-auth Secret needs username or password"
        )
    docker_key = {"kubernetes.io/dockercfg": ".dockercfg", "kubernetes.io/dockerconfigjson": ".dockerconfigjson"}.get(
        str(kind)
    )
    if docker_key in keys and (why := _docker_config_error(obj, docker_key)):
        field = "stringData" if docker_key in (obj.get("stringData") or {}) else "data"
        yield Finding((field, docker_key), "k8s-secret", Severity.ERROR, f"{docker_key} {why}")
    if kind == "kubernetes.io/service-account-token":
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            yield Finding(
                ("metadata", "annotations"),
                "k8s-secret",
                Severity.ERROR,
                "Required value: a service-account-token Secret needs the annotation kubernetes.io/service-account.name",
            )


def _docker_config_error(obj: dict[str, Any], key: str) -> str | None:
    """ValidateSecret unmarshals a registry Secret's key: it must hold a JSON object
    (stringData as written, data once base64-decoded)."""
    import base64
    import json

    raw = (obj.get("stringData") or {}).get(key)
    if raw is None:
        try:
            raw = base64.b64decode(str((obj.get("data") or {}).get(key, "")).replace("\n", "")).decode()
        except (ValueError, UnicodeDecodeError):
            return None  # reported as data that is not base64
    if not isinstance(raw, str):
        return None
    try:
        config = json.loads(raw)
    except json.JSONDecodeError as err:
        return f"is not JSON ({err.msg})"
    return None if isinstance(config, dict) else "must be a JSON object"


_PORT_PROTOCOLS = ("TCP", "UDP", "SCTP")


def endpoint_ip_error(ip: Any) -> str | None:
    """IsValidIPForLegacyField and ValidateEndpointIP (ValidateNonSpecialIP): an IP, and not one no
    Service may route to."""
    address = names.ip_sloppy(str(ip)) if isinstance(ip, str) else None
    if address is None:
        return f"{shown(ip)} must be a valid IP address"
    if address.is_unspecified:
        return "may not be unspecified (0.0.0.0)"
    if address.is_loopback:
        return "may not be in the loopback range (127.0.0.0/8, ::1/128)"
    if address.is_link_local:
        return "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
    if address in _LINK_LOCAL_MULTICAST[address.version]:
        return "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
    return None


_LINK_LOCAL_MULTICAST = {4: ipaddress.ip_network("224.0.0.0/24"), 6: ipaddress.ip_network("ff02::/16")}


def check_endpoints(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateEndpointsCreate (validateEndpointSubsets): each subset has addresses, each address
    an IP a Service may route to, ports named when there are several, numbered, with a
    protocol and a qualified appProtocol."""
    for i, subset in enumerate(obj.get("subsets") or []):
        if not isinstance(subset, dict):
            continue
        at = ("subsets", i)
        if not subset.get("addresses") and not subset.get("notReadyAddresses"):
            yield _endpoints_error(at, "must specify `addresses` or `notReadyAddresses`")
        for field in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(subset.get(field) or []):
                if isinstance(address, dict) and (why := endpoint_ip_error(address.get("ip"))):
                    yield _endpoints_error((*at, field, j, "ip"), why)
        ports = subset.get("ports") or []
        for j, port in enumerate(ports):
            if not isinstance(port, dict):
                continue
            where, name = (*at, "ports", j), port.get("name") or ""
            if not name and len(ports) > 1:
                yield _endpoints_error((*where, "name"), "Required value: ports of a subset with several are named")
            elif name and (err := names.dns1123_label(name)):
                yield _endpoints_error((*where, "name"), f"name {shown(name)}: {err}")
            number = port.get("port")
            if not isinstance(number, int) or not 1 <= number <= 65535:
                yield _endpoints_error((*where, "port"), "must be between 1 and 65535, inclusive")
            protocol = port.get("protocol", "TCP")  # SetDefaults_EndpointPort
            if protocol not in _PORT_PROTOCOLS:
                yield unsupported((*where, "protocol"), "k8s-endpoints", protocol, _PORT_PROTOCOLS)
            app = port.get("appProtocol")
            if isinstance(app, str) and (err := names.qualified_name(app)):
                yield _endpoints_error((*where, "appProtocol"), f"appProtocol {shown(app)}: {err}")


def _endpoints_error(path: tuple[str | int, ...], message: str) -> Finding:
    return Finding(path, "k8s-endpoints", Severity.ERROR, message)


_QUOTA_SCOPES = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
)


# helper.IsStandardQuotaResourceName: the names a quota may count without a domain prefix
_QUOTA_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.storage",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "services.nodeports",
        "services.loadbalancers",
    }
)
# helper.IsIntegerResourceName: object counts, whole by nature
_QUOTA_INTEGERS = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_CONFLICTING_SCOPES = (("Terminating", "NotTerminating"), ("BestEffort", "NotBestEffort"))
# validateScopedResourceSelectorRequirement: scopes that only mean something as Exists
_EXISTS_ONLY_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "CrossNamespacePodAffinity")
_SCOPE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _quota_resource_error(name: str) -> str | None:
    """validateResourceQuotaResourceName: a qualified name; without a prefix, one a quota counts."""
    if err := names.qualified_name(name):
        return err
    if "/" not in name and name not in _QUOTA_RESOURCES and not name.startswith(("hugepages-", "requests.hugepages-")):
        return "must be a standard resource for quota"
    return None


def _is_integer_resource(name: str) -> bool:
    """helper.IsIntegerResourceName: object counts and extended resources (a domain other than
    kubernetes.io, not a requests. name)."""
    extended = "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")
    return name in _QUOTA_INTEGERS or extended


def check_resource_quota(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateResourceQuotaSpec: resource names a quota counts, quantities not negative and
    whole for counts; known scopes, never two that contradict; scope selector requirements
    with known operators and values that fit them."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for name, value in (spec.get("hard") or {}).items():
        where = ("spec", "hard", name)
        amount = parse_quantity(value)
        if err := _quota_resource_error(str(name)):
            yield Finding(
                where,
                "k8s-quota",
                Severity.ERROR,
                f"resource {shown(name)}: {err}",
                f"did you mean requests.{name}?" if f"requests.{name}" in _QUOTA_RESOURCES else "",
            )
        elif amount is None:
            yield _quota_error(where, f"{shown(value)} is not a quantity")
        elif amount < 0:
            yield _quota_error(where, "must be greater than or equal to 0")
        elif _is_integer_resource(str(name)) and amount != amount.to_integral_value():
            yield _quota_error(where, f"{name} {shown(value)} must be an integer")
    scopes = list(spec.get("scopes") or [])
    for i, scope in enumerate(scopes):
        if scope not in _QUOTA_SCOPES:
            yield unsupported(("spec", "scopes", i), "k8s-quota", scope, _QUOTA_SCOPES)
    selector = spec.get("scopeSelector")
    for i, req in enumerate((selector or {}).get("matchExpressions") or [] if isinstance(selector, dict) else ()):
        if not isinstance(req, dict):
            continue
        at, scope, op = ("spec", "scopeSelector", "matchExpressions", i), req.get("scopeName"), req.get("operator")
        scopes.append(scope)
        if scope not in _QUOTA_SCOPES:
            yield unsupported((*at, "scopeName"), "k8s-quota", scope, _QUOTA_SCOPES)
        if op not in _SCOPE_OPERATORS:
            yield unsupported((*at, "operator"), "k8s-quota", op, _SCOPE_OPERATORS)
        elif scope in _EXISTS_ONLY_SCOPES and op != "Exists":
            yield _quota_error((*at, "operator"), f"must be 'Exists' when scope is {scope}")
        elif op in ("In", "NotIn") and not req.get("values"):
            yield _quota_error((*at, "values"), f"must be at least one value when `operator` is {op}")
        elif op in ("Exists", "DoesNotExist") and req.get("values"):
            yield _quota_error((*at, "values"), f"must be no values when `operator` is {op}")
    for one, other in _CONFLICTING_SCOPES:
        if one in scopes and other in scopes:
            yield _quota_error(("spec",), f"conflicting scopes: {one} and {other} together select nothing")


def _quota_error(path: tuple[str | int, ...], message: str) -> Finding:
    return Finding(path, "k8s-quota", Severity.ERROR, message)


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


def _limit_type_error(kind: Any) -> str | None:
    """validateLimitRangeTypeName: a qualified name, one of the standard types unless it has a
    prefix (`example.com/foo`), which a third-party admission plugin may enforce."""
    if not isinstance(kind, str):
        return "must be a standard limit type or fully qualified"
    if err := names.qualified_name(kind):
        return err
    if "/" not in kind and kind not in _LIMIT_TYPES:
        return f"must be a standard limit type ({', '.join(_LIMIT_TYPES)}) or fully qualified"
    return None


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources other than huge pages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def check_limit_range(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateLimitRange after SetDefaults_LimitRangeItem: a known or qualified type once per
    range; no defaults on Pod items; a PersistentVolumeClaim item bounds storage; per
    resource min <= defaultRequest <= default <= max; a max/limit ratio of at least 1 and at
    most max/min; resources that cannot overcommit default to equal request and limit."""
    seen: set[Any] = set()
    for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
        if not isinstance(item, dict):
            continue
        at, kind = ("spec", "limits", i), item.get("type")
        if err := _limit_type_error(kind):
            yield _limit_error((*at, "type"), f"type {shown(kind)} {err}")
        if kind in seen:
            yield _limit_error((*at, "type"), f"Duplicate value: {shown(kind)}: one item per type")
        seen.add(kind)
        if kind == "Pod":
            for key in ("default", "defaultRequest"):
                if item.get(key):
                    yield _limit_error((*at, key), "may not be specified when `type` is 'Pod'")
        if kind == "PersistentVolumeClaim" and not (
            {**(item.get("min") or {}), **(item.get("max") or {})}.keys() & {"storage"}
        ):
            yield _limit_error(at, "either minimum or maximum storage value is required, but neither was provided")
        sections = _limit_item_defaults(item)
        for low, high in _LIMIT_ORDER:
            for name in sorted(set(sections[low]) & set(sections[high])):
                lower, upper = parse_quantity(sections[low][name]), parse_quantity(sections[high][name])
                if lower is not None and upper is not None and lower > upper:
                    where = low if low in item and name in (item.get(low) or {}) else high
                    yield _limit_error(
                        (*at, where, name),
                        f"{low} value {sections[low][name]} is greater than {high} value {sections[high][name]}"
                        + ("" if low in item and high in item else " (after defaulting)"),
                    )
        yield from _limit_ratios(item, at)
        for name in sorted(set(sections["default"]) & set(sections["defaultRequest"])):
            limit, request = parse_quantity(sections["default"][name]), parse_quantity(sections["defaultRequest"][name])
            if not _overcommit_allowed(name) and limit is not None and request is not None and limit != request:
                yield _limit_error(
                    (*at, "default" if name in (item.get("default") or {}) else "defaultRequest", name),
                    f"default value {sections['default'][name]} must equal to defaultRequest value "
                    f"{sections['defaultRequest'][name]} in {name}: it cannot be overcommitted",
                )


def _limit_ratios(item: dict[str, Any], at: tuple[str | int, ...]) -> Iterator[Finding]:
    low, high = item.get("min") or {}, item.get("max") or {}
    for name, raw in (item.get("maxLimitRequestRatio") or {}).items():
        ratio = parse_quantity(raw)
        if ratio is None:
            continue
        if ratio < 1:
            yield _limit_error((*at, "maxLimitRequestRatio", name), f"ratio {raw} is less than 1")
        least, most = parse_quantity(low.get(name)), parse_quantity(high.get(name))
        if least and most is not None and ratio > most / least:
            yield _limit_error(
                (*at, "maxLimitRequestRatio", name), f"ratio {raw} is greater than max/min = {most / least:f}"
            )


def _limit_error(path: tuple[str | int, ...], message: str) -> Finding:
    return Finding(path, "k8s-limit-range", Severity.ERROR, message)
