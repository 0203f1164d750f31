"""kube-apiserver's create-time rules for core/v1 kinds beyond the schemas, read from
pkg/apis/core/validation/validation.go (ValidateService) and pkg/api/pod/warnings.go."""

from __future__ import annotations

import ipaddress
import posixpath
from collections.abc import Iterator
from typing import Any

from generator.kube import claims, containers, labels, names, objectmeta, pods, volumes
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
                ("spec", "clusterIPs", i) if listed else ("spec", "clusterIP"),
                f"expected an {family} value as indicated by `ipFamilies[{i}]`",
            )
    if len(declared) > 2:
        yield _error(("spec", "ipFamilies"), "may have at most 2 values")
    if kind == "ExternalName":
        if cluster_ip:
            yield _error(("spec", "clusterIP"), "Forbidden: must be empty for ExternalName services")
        for field in ("ipFamilies", "ipFamilyPolicy"):
            if spec.get(field):
                yield _error(("spec", field), "Forbidden: may not be set for ExternalName services")
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
    LoadBalancer; with ClientIP affinity a timeout of 1 s to a day (with None, SetDefaults_Service
    drops the config, so it is a warning); a known trafficDistribution; the two topology
    annotations alike when both are set."""
    spec = obj["spec"]
    for field in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
        if field in spec and kind != "LoadBalancer":
            yield _error(("spec", field), "may only be used when `type` is 'LoadBalancer'")
    lb_class = spec.get("loadBalancerClass")
    if isinstance(lb_class, str) and (err := names.qualified_name(lb_class)):
        yield _error(("spec", "loadBalancerClass"), f"{shown(lb_class)}: {err}")
    config, affinity = spec.get("sessionAffinityConfig"), spec.get("sessionAffinity") or "None"
    if isinstance(config, dict) and affinity == "None":
        yield Finding(
            ("spec", "sessionAffinityConfig"),
            "k8s-service",
            Severity.WARNING,
            "dropped: kube-apiserver clears sessionAffinityConfig when `sessionAffinity` is None (SetDefaults_Service)",
            "set sessionAffinity: ClientIP for the config to apply, or remove it",
        )
    elif isinstance(config, dict) and affinity == "ClientIP":
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
            ("metadata", "annotations", _TOPOLOGY_ANNOTATIONS[1]),
            f"must match annotations[{_TOPOLOGY_ANNOTATIONS[0]}] when both are specified",
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


# ValidatePersistentVolumeSpec's order of volume sources: a source after the first is refused
# at its own field, except flexVolume, which is counted but never refused
_PV_SOURCE_ORDER = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)


def check_persistent_volume(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidatePersistentVolumeSpec (not inline): access modes; a capacity of storage only,
    above zero; exactly one volume source, valid as a PersistentVolume's own source types are
    (_pv_source); a known reclaim policy, Recycle never on a hostPath of `/`; a hostPath
    without `..`; class names as DNS subdomains, a volume attributes class only on a CSI
    volume; node affinity with required terms, which a local volume needs."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    yield from claims.access_modes(spec.get("accessModes"), ("spec", "accessModes"), "k8s-pv")
    yield from claims.volume_mode(spec, "k8s-pv")
    capacity = spec.get("capacity") or {}
    if not capacity:
        yield _pv_error(("spec", "capacity"), "Required value: a volume states its capacity (storage)")
    elif set(capacity) != {"storage"}:
        yield unsupported(("spec", "capacity"), "k8s-pv", ", ".join(map(str, capacity)), ("storage",))
    for name, raw in capacity.items():
        amount = parse_quantity(raw)
        if amount is None or amount <= 0:
            yield _pv_error(("spec", "capacity", name), f"{shown(raw)}: must be greater than zero")
    sources = [key for key in _PV_SOURCE_ORDER if spec.get(key) is not None]
    if not sources:
        yield _pv_error(("spec",), "Required value: must specify a volume type")
    for key in sources[1:]:
        if key != "flexVolume":
            yield _pv_error(("spec", key), f"may not specify more than 1 volume type ({sources[0]} is one)")
    for key in dict.fromkeys([*sources[:1], *(["flexVolume"] if "flexVolume" in sources else [])]):
        if isinstance(spec[key], dict):
            yield from _pv_source(key, spec[key], str((obj.get("metadata") or {}).get("name") or ""))
    if spec.get("local") is not None and "local" in sources[:1] and spec.get("nodeAffinity") is None:
        yield _pv_error(("spec", "local"), "Required value: a local volume requires nodeAffinity")
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in _RECLAIM_POLICIES:
        yield unsupported(("spec", "persistentVolumeReclaimPolicy"), "k8s-pv", policy, _RECLAIM_POLICIES)
    host_path = (spec.get("hostPath") or {}).get("path") if isinstance(spec.get("hostPath"), dict) else None
    if isinstance(host_path, str) and policy == "Recycle" and posixpath.normpath(host_path) in ("/", "//"):
        yield _pv_error(
            ("spec", "persistentVolumeReclaimPolicy"),
            "Forbidden: may not be 'recycle' for a hostPath mount of '/'",
            "recycling scrubs the volume: here, the node's root file system",
        )
    yield from claims.class_names(spec, "k8s-pv")
    if spec.get("volumeAttributesClassName") is not None:
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


# A PersistentVolume's own source types (validate*PersistentVolumeSource, validateAzureFilePV,
# validateLocalVolumeSource) where they differ from a Pod volume's: the fields they need beyond it
_PV_SOURCE_REQUIRED = {"cinder": ("volumeID",), "local": ("path",), "csi": ("volumeHandle",)}
_CSI_SECRET_REFS = (
    "controllerPublishSecretRef",
    "controllerExpandSecretRef",
    "nodePublishSecretRef",
    "nodeExpandSecretRef",
)


def _pv_source(kind: str, source: dict[str, Any], pv_name: str) -> Iterator[Finding]:
    """A source as validate*PersistentVolumeSource judges it: the rules of the Pod volume of
    the same type (volumes.check_source), and what the PersistentVolume's own type adds. A
    Cinder or CSI source is a type of its own: its secrets carry a namespace."""
    at = ("spec", kind)
    if kind not in ("cinder", "csi"):
        yield from volumes.check_source(kind, source, at)
    for field in _PV_SOURCE_REQUIRED.get(kind, ()):
        if not source.get(field):
            yield _pv_error((*at, field), f"Required value: the {kind} volume needs {field}")
    if kind == "iscsi":
        portal = str(source.get("targetPortal") or "")
        if source.get("initiatorName") is not None and len(f"{pv_name}:{portal}") > 64:
            yield _pv_error(
                (*at, "targetPortal"),
                "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters "
                "if iscsi.initiatorName is specified.",
            )
        ref = source.get("secretRef")
        if isinstance(ref, dict) and not ref.get("name"):
            yield _pv_error((*at, "secretRef", "name"), "Required value: a secret reference needs name")
    elif kind == "glusterfs" and source.get("endpointsNamespace") is not None:
        namespace = str(source["endpointsNamespace"])
        err = (
            names.dns1123_label(namespace)
            if namespace
            else "if the endpointnamespace is set, it must be a valid namespace name"
        )
        if err:
            yield _pv_error((*at, "endpointsNamespace"), f"{shown(namespace)}: {err}")
    elif kind == "azureFile" and source.get("secretNamespace") == "":
        yield _pv_error((*at, "secretNamespace"), "Required value: an empty secretNamespace is refused (leave it out)")
    elif kind == "local" and ".." in str(source.get("path") or "").split("/"):
        yield _pv_error((*at, "path"), "must not contain '..'")
    elif kind == "storageos":
        ref = source.get("secretRef")
        if isinstance(ref, dict) and not ref.get("namespace"):
            yield _pv_error((*at, "secretRef", "namespace"), "Required value: a secret reference needs namespace")
    elif kind == "cinder" and isinstance(source.get("secretRef"), dict):
        yield from _pv_secret_reference(source["secretRef"], (*at, "secretRef"), dns_checked=False)
    elif kind == "csi":
        driver = source.get("driver")
        if isinstance(driver, str) and (err := names.csi_driver_name(driver)):
            yield _pv_error((*at, "driver"), f"driver {shown(driver)}: {err}")
        for ref in _CSI_SECRET_REFS:
            if isinstance(source.get(ref), dict):
                yield from _pv_secret_reference(source[ref], (*at, ref), dns_checked=True)


def _pv_secret_reference(ref: dict[str, Any], at: tuple[str | int, ...], dns_checked: bool) -> Iterator[Finding]:
    """A secret a volume plugin reads: a name and a namespace, as DNS names where
    validatePVSecretReference checks them (a CSI volume's)."""
    for field, check in (("name", names.dns1123_subdomain), ("namespace", names.dns1123_label)):
        value = ref.get(field)
        if not value:
            yield _pv_error((*at, field), f"Required value: a secret reference needs {field}")
        elif dns_checked and (err := check(str(value))):
            yield _pv_error((*at, field), f"{shown(value)}: {err}")


def _pv_error(path: tuple[str | int, ...], message: str, hint: str = "") -> Finding:
    return Finding(path, "k8s-pv", Severity.ERROR, message, hint)


def check_config_keys(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateConfigMap / ValidateSecret: every key a valid file name, no ConfigMap key in both
    data and binaryData, the values together at most 1 MiB."""
    configmap = obj.get("kind") == "ConfigMap"
    rule = "k8s-configmap" if configmap else "k8s-secret"
    fields = ("data", "binaryData") if configmap else ("data", "stringData")
    maps: dict[str, dict[Any, Any]] = {f: m if isinstance(m := obj.get(f), dict) else {} for f in fields}
    for field, mapping in maps.items():
        for key in mapping:
            if err := names.config_map_key(str(key)):
                yield Finding((field, key), rule, Severity.ERROR, f"key {shown(key)} {err}")
    if configmap:
        for key in maps["data"].keys() & maps["binaryData"].keys():
            yield Finding(
                ("data", key), rule, Severity.ERROR, f"key {shown(key)}: duplicate of key present in binaryData"
            )
    yield from _config_size(obj, maps, configmap)
    if not configmap:
        yield from _secret_type_keys(obj, maps)
        for key, value in maps["data"].items():
            if isinstance(value, str) and (why := _base64_error(value)) is not None:
                yield Finding(
                    ("data", key),
                    rule,
                    Severity.ERROR,
                    f"{why}: kube-apiserver cannot decode it",
                    "data holds base64; put plain text under stringData",
                )


MAX_CONFIG_BYTES = 1024 * 1024  # core.MaxSecretSize, for a ConfigMap's values as for a Secret's


def _config_size(obj: dict[str, Any], maps: dict[str, dict[Any, Any]], configmap: bool) -> Iterator[Finding]:
    """The values' bytes as kube-apiserver counts them (keys are not counted): a ConfigMap's data
    and decoded binaryData; a Secret's decoded data with stringData merged over it."""
    text_field, base64_field = ("data", "binaryData") if configmap else ("stringData", "data")
    sizes = {key: _decoded_length(str(value)) for key, value in maps[base64_field].items()}
    text = {key: len(str(value).encode("utf-8")) for key, value in maps[text_field].items()}
    total = sum(text.values()) + sum(sizes.values()) if configmap else sum((sizes | text).values())
    if total > MAX_CONFIG_BYTES:
        at = "data" if obj.get("data") else base64_field if configmap else "stringData"
        yield Finding(
            (at,),
            "size-configmap" if configmap else "k8s-secret",
            Severity.ERROR,
            f"Too long: the values hold {total} bytes; may not be more than {MAX_CONFIG_BYTES} bytes",
            "keep large files out of ConfigMaps and Secrets (a volume, an image, object storage)",
        )


def _decoded_length(value: str) -> int:
    """How many bytes a base64 value decodes to (Go skips line breaks)."""
    text = value.replace("\n", "").replace("\r", "")
    return len(text) // 4 * 3 - text.endswith("=") - text.endswith("==")


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


SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
# ValidateSecret: the keys a typed Secret must carry (basic-auth: one of the two)
_SECRET_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/basic-auth": ("username", "password"),
}


def _secret_type_keys(obj: dict[str, Any], maps: dict[str, dict[Any, Any]]) -> Iterator[Finding]:
    """The keys of a typed Secret (stringData counts: it is merged into data before validation);
    an ssh-auth key must not be empty either. Each missing key is reported at data[key]."""
    kind = str(obj.get("type"))
    present = {str(key) for mapping in maps.values() for key in mapping}
    needed = _SECRET_KEYS.get(kind, ())
    if kind == "kubernetes.io/basic-auth" and present & set(needed):
        needed = ()
    if kind == "kubernetes.io/ssh-auth" and _secret_value_length(maps, "ssh-privatekey") == 0:
        present.discard("ssh-privatekey")
    for key in needed:
        if key not in present:
            yield Finding(
                ("data", key),
                "k8s-secret",
                Severity.ERROR,
                f"Required value: a {kind} Secret needs data[{key}]",
                f"add {key} under data (base64) or stringData",
            )
    docker_key = {"kubernetes.io/dockercfg": ".dockercfg", "kubernetes.io/dockerconfigjson": ".dockerconfigjson"}.get(
        kind
    )
    if docker_key in present and (why := _docker_config_error(obj, docker_key)):
        field = "stringData" if docker_key in maps["stringData"] else "data"
        yield Finding((field, docker_key), "k8s-secret", Severity.ERROR, f"{docker_key} {why}")
    if kind == "kubernetes.io/service-account-token":
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if not annotations.get(SERVICE_ACCOUNT_NAME_KEY):
            yield Finding(
                ("metadata", "annotations", SERVICE_ACCOUNT_NAME_KEY),
                "k8s-secret",
                Severity.ERROR,
                f"Required value: a service-account-token Secret needs the annotation {SERVICE_ACCOUNT_NAME_KEY}",
            )


def _secret_value_length(maps: dict[str, dict[Any, Any]], key: str) -> int:
    """The bytes of a Secret's value once stringData is merged over the decoded data."""
    if key in maps["stringData"]:
        return len(str(maps["stringData"][key]).encode("utf-8"))
    return _decoded_length(str(maps["data"].get(key) or ""))


def _docker_config_error(obj: dict[str, Any], key: str) -> str | None:
    """ValidateSecret unmarshals a registry Secret's key into a map: it must hold a JSON object or
    null (stringData as written, data once base64-decoded)."""
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
    return (
        None if config is None or isinstance(config, dict) else "must be a JSON object"
    )  # Go takes null as an empty map


_PORT_PROTOCOLS = ("TCP", "UDP", "SCTP")


def endpoint_ip_error(ip: Any) -> str | None:
    """IsValidIPForLegacyField and ValidateEndpointIP (ValidateNonSpecialIP): an IP, and not one no
    Service may route to."""
    address = names.ip_sloppy(str(ip)) if isinstance(ip, str) else None
    if address is None:
        return f"{shown(ip)} must be a valid IP address"
    if address.is_unspecified:
        return f"may not be unspecified ({ip})"
    if address.is_loopback:
        return "may not be in the loopback range (127.0.0.0/8, ::1/128)"
    if address.is_link_local:
        return "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
    if address in _LINK_LOCAL_MULTICAST[address.version]:
        return "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
    return None


_LINK_LOCAL_MULTICAST = {4: ipaddress.ip_network("224.0.0.0/24"), 6: ipaddress.ip_network("ff02::/16")}


def check_namespace(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateNamespace: spec.finalizers are finalizer names (validateFinalizerName)."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        yield from objectmeta.check_finalizers(spec.get("finalizers"), ("spec", "finalizers"), core=True)


def check_endpoints(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateEndpointsCreate (validateEndpointSubsets): each subset has addresses, each address
    an IP a Service may route to (with a DNS-label hostname and a DNS-subdomain nodeName), ports
    named when there are several, numbered, with a protocol and a qualified appProtocol."""
    for i, subset in enumerate(obj.get("subsets") or []):
        if not isinstance(subset, dict):
            continue
        at = ("subsets", i)
        if not subset.get("addresses") and not subset.get("notReadyAddresses"):
            yield _endpoints_error(at, "must specify `addresses` or `notReadyAddresses`")
        for field in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(subset.get(field) or []):
                if isinstance(address, dict):
                    yield from _endpoint_address(address, (*at, field, j))
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


def _endpoint_address(address: dict[str, Any], at: tuple[str | int, ...]) -> Iterator[Finding]:
    """validateEndpointAddress: a routable IP, a DNS-1123 label hostname, a DNS-1123 subdomain nodeName."""
    if why := endpoint_ip_error(address.get("ip")):
        yield _endpoints_error((*at, "ip"), why)
    hostname, node = address.get("hostname"), address.get("nodeName")
    if isinstance(hostname, str) and hostname and (err := names.dns1123_label(hostname)):
        yield _endpoints_error((*at, "hostname"), f"hostname {shown(hostname)} {err}")
    if isinstance(node, str) and (err := names.dns1123_subdomain(node)):
        yield _endpoints_error((*at, "nodeName"), f"nodeName {shown(node)} {err}")


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
    whole for counts; scopes and scope selector requirements as _quota_scopes and
    _quota_scope_selector judge them."""
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
    hard = [str(name) for name in spec.get("hard") or {}] if isinstance(spec.get("hard"), dict) else []
    yield from _quota_scopes(spec.get("scopes"), hard)
    yield from _quota_scope_selector(spec.get("scopeSelector"), hard)


# helper.IsResourceQuotaScopeValidForResource: the standard resources a scope can count
_POD_QUOTA_RESOURCES = frozenset(
    {"pods", "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
)
_SCOPE_RESOURCES = {
    **dict.fromkeys(
        ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"),
        _POD_QUOTA_RESOURCES,
    ),
    "BestEffort": frozenset({"pods"}),
    "VolumeAttributesClass": frozenset({"persistentvolumeclaims", "requests.storage"}),
}


def _scope_misfits(scope: Any, hard: list[str]) -> Iterator[str]:
    """The standard quota resources (helper.IsStandardQuotaResourceName) a scope cannot count."""
    allowed = _SCOPE_RESOURCES.get(scope) if isinstance(scope, str) else None
    if allowed is None:
        return
    for name in sorted(hard):
        standard = name in _QUOTA_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))
        if standard and name not in allowed:
            yield name


def _scope_misfit_error(path: tuple[str | int, ...], scope: str, misfits: list[str]) -> Finding:
    allowed = ", ".join(sorted(_SCOPE_RESOURCES[scope]))
    return Finding(
        path,
        "k8s-quota",
        Severity.ERROR,
        f"unsupported scope applied to resource: a {scope} quota cannot count {', '.join(misfits)}",
        f"a {scope} quota counts only {allowed}; put the other resources in a quota of their own",
    )


def _conflicts(scopes: list[Any], path: tuple[str | int, ...]) -> Iterator[Finding]:
    for one, other in _CONFLICTING_SCOPES:
        if one in scopes and other in scopes:
            yield _quota_error(path, f"conflicting scopes: {one} and {other} together select nothing")


def _quota_scopes(scopes: Any, hard: list[str]) -> Iterator[Finding]:
    """validateResourceQuotaScopes: known scopes, each able to count every standard resource
    in hard, never two that contradict."""
    scopes = scopes if isinstance(scopes, list) else []
    for i, scope in enumerate(scopes):
        if scope not in _QUOTA_SCOPES:
            yield unsupported(("spec", "scopes", i), "k8s-quota", scope, _QUOTA_SCOPES)
        elif misfits := list(_scope_misfits(scope, hard)):
            yield _scope_misfit_error(("spec", "scopes", i), scope, misfits)
    yield from _conflicts(scopes, ("spec", "scopes"))


def _quota_scope_selector(selector: Any, hard: list[str]) -> Iterator[Finding]:
    """validateScopedResourceSelectorRequirement: each requirement a known scope able to count
    hard's standard resources, with a known operator (Exists for the Terminating, BestEffort and
    CrossNamespacePodAffinity scopes) and values that fit it; no two scopes that contradict
    (judged apart from spec.scopes, as kube-apiserver does)."""
    requirements = selector.get("matchExpressions") if isinstance(selector, dict) else None
    scopes: list[Any] = []
    for i, req in enumerate(requirements if isinstance(requirements, list) else []):
        if not isinstance(req, dict):
            continue
        at, scope, op = ("spec", "scopeSelector", "matchExpressions", i), req.get("scopeName"), req.get("operator")
        scopes.append(scope)
        if scope not in _QUOTA_SCOPES:
            yield unsupported((*at, "scopeName"), "k8s-quota", scope, _QUOTA_SCOPES)
        elif misfits := list(_scope_misfits(scope, hard)):
            yield _scope_misfit_error((*at, "scopeName"), scope, misfits)
        if op not in _SCOPE_OPERATORS:
            yield unsupported((*at, "operator"), "k8s-quota", op, _SCOPE_OPERATORS)
        elif scope in _EXISTS_ONLY_SCOPES and op != "Exists":
            yield _quota_error((*at, "operator"), f"must be 'Exists' when scope is {scope}")
        elif op in ("In", "NotIn") and not req.get("values"):
            yield _quota_error((*at, "values"), f"must be at least one value when `operator` is {op}")
        elif op in ("Exists", "DoesNotExist") and req.get("values"):
            yield _quota_error((*at, "values"), f"must be no values when `operator` is {op}")
    yield from _conflicts(scopes, ("spec", "scopeSelector", "matchExpressions"))


def _quota_error(path: tuple[str | int, ...], message: str) -> Finding:
    return Finding(path, "k8s-quota", Severity.ERROR, message)


_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def _limit_item_defaults(item: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """SetDefaults_LimitRangeItem: a Container's default limit is its max, its default request
    the default limit, else the min; kube-apiserver validates what these make."""
    sections = {key: dict(item.get(key) or {}) for key in ("max", "min", "default", "defaultRequest")}
    if item.get("type") == "Pod":  # ValidateLimitRange reads neither on a Pod item
        sections["default"], sections["defaultRequest"] = {}, {}
    if item.get("type") == "Container":
        for key, value in sections["max"].items():
            sections["default"].setdefault(key, value)
        for key, value in sections["default"].items():
            sections["defaultRequest"].setdefault(key, value)
        for key, value in sections["min"].items():
            sections["defaultRequest"].setdefault(key, value)
    return sections


# (lower, upper, the side kube-apiserver reports): ValidateLimitRange's orderings, each checked
# per resource; gen reports the other side when that one was filled by a default
_LIMIT_ORDER = (
    ("min", "max", "min"),
    ("min", "defaultRequest", "defaultRequest"),
    ("defaultRequest", "max", "defaultRequest"),
    ("defaultRequest", "default", "defaultRequest"),
    ("min", "default", "default"),
    ("default", "max", "default"),
)
_LIMIT_SECTIONS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")
# helper.IsStandardResourceName: the unprefixed names validateResourceName accepts
_STANDARD_RESOURCES = _QUOTA_RESOURCES | {"storage"}


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


def _limit_resource_error(kind: Any, name: str) -> str | None:
    """validateLimitRangeResourceName: validateResourceName (a qualified name; unprefixed, a
    standard resource), and for a Pod or Container item validateContainerResourceName (unprefixed,
    cpu, memory, ephemeral-storage or huge pages; prefixed outside kubernetes.io, an extended
    resource)."""
    if err := names.qualified_name(name):
        return err
    hugepages = name.startswith(("hugepages-", "requests.hugepages-"))
    if "/" not in name and name not in _STANDARD_RESOURCES and not hugepages:
        return "must be a standard resource type or fully qualified"
    if kind not in ("Pod", "Container"):
        return None
    if "/" not in name and name not in containers.STANDARD_RESOURCES and not name.startswith("hugepages-"):
        return "must be a standard resource for containers"
    native = "/" not in name or "kubernetes.io/" in name
    if not native and (name.startswith("requests.") or names.qualified_name("requests." + name)):
        return "doesn't follow extended resource name standard"
    return None


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources other than huge pages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def check_limit_range(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateLimitRange after SetDefaults_LimitRangeItem: a known or qualified type once per
    range; resource names as validateLimitRangeResourceName judges them; no defaults on Pod items; a PersistentVolumeClaim item bounds storage; per
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
        for section in _LIMIT_SECTIONS:
            if kind == "Pod" and section in ("default", "defaultRequest"):
                continue  # refused whole below, its names never read
            for name in (item.get(section) or {}) if isinstance(item.get(section), dict) else ():
                if err := _limit_resource_error(kind, str(name)):
                    yield _limit_error((*at, section, name), f"resource {shown(name)}: {err}")
        if kind == "Pod":
            for key in ("default", "defaultRequest"):
                if item.get(key):
                    yield _limit_error((*at, key), "may not be specified when `type` is 'Pod'")
        if kind == "PersistentVolumeClaim" and not (
            {**(item.get("min") or {}), **(item.get("max") or {})}.keys() & {"storage"}
        ):
            yield _limit_error(at, "either minimum or maximum storage value is required, but neither was provided")
        sections = _limit_item_defaults(item)
        for low, high, reported in _LIMIT_ORDER:
            for name in sorted(set(sections[low]) & set(sections[high])):
                lower, upper = parse_quantity(sections[low][name]), parse_quantity(sections[high][name])
                if lower is not None and upper is not None and lower > upper:
                    other = high if reported == low else low
                    where = reported if name in (item.get(reported) or {}) else other
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
                    (*at, "defaultRequest" if name in (item.get("defaultRequest") or {}) else "default", name),
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
