"""kube-apiserver's rules for a Pod's containers, as it creates a Pod or a pod template
(pkg/apis/core/validation: validateContainers, validateInitContainers, validateContainerCommon
and what it calls: ports, env and envFrom, volume mounts and devices, resources and resize
policy, security context, probes and lifecycle handlers; validateContainersOnlyForPod).

The paths are upstream's where it names a field; where upstream names a list without its index
(`volumeMounts.subPath`, `resources.requests`), the finding is at the entry that caused it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Set
from decimal import ROUND_CEILING, Decimal
from functools import lru_cache
from typing import Any

from generator.kube import names, quantity
from generator.kube.findings import Finding, Path, error_at, unsupported, warning_at
from generator.kube.quantity import parse_quantity
from generator.schema_messages import shown

# The feature gates whose default changes what a container may carry (validate.py decides which
# are on for the version): relaxed variable names; restartPolicy on any container (1.35 beta).
RELAXED_ENV = "RelaxedEnvironmentVariableValidation"
RESTART_RULES = "ContainerRestartRules"
GATES = (RELAXED_ENV, RESTART_RULES)
# kube-apiserver's --allow-privileged=false, carried among the gates the rules receive: the API
# server then refuses privileged containers and HostProcess Pods ("disallowed by cluster policy").
PRIVILEGED_DISALLOWED = "--allow-privileged=false"
DISALLOWED_BY_CLUSTER = (
    "the clusters run kube-apiserver with --allow-privileged=false, as .gen.yaml's allowPrivileged says"
)

STANDARD_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DEFAULT_GRACE_PERIOD = 30  # SetDefaults_PodSpec (pkg/apis/core/v1/defaults.go)
_MAX_ID = 2147483647


# ---- validateContainers / validateInitContainers ------------------------------------------


def check_containers(
    spec: dict[str, Any], path: Path, owner: str, volumes: dict[str, Any], gates: Set[str]
) -> Iterator[Finding]:
    """volumes: the Pod's volumes by name (a StatefulSet's claim templates among them); gates:
    the GATES on for the version, and PRIVILEGED_DISALLOWED where the clusters refuse privileged
    containers."""
    containers = spec.get("containers")
    if isinstance(containers, list) and not containers:
        yield error_at((*path, "containers"), "k8s-container", "Required value: a Pod needs at least one container")
    pod = _PodContext(spec, owner, volumes, gates)
    seen: set[str] = set()
    for group in ("containers", "initContainers"):  # upstream's order: duplicates land on the init container
        listed = spec.get(group)
        for i, c in enumerate(listed if isinstance(listed, list) else ()):
            if not isinstance(c, dict):
                continue
            cpath = (*path, group, i)
            yield from _container_common(c, cpath, pod)
            name = c.get("name")
            if isinstance(name, str) and name:
                if name in seen:
                    yield error_at((*cpath, "name"), "k8s-name", f"Duplicate value: container name {shown(name)}")
                seen.add(name)
            if group == "containers":
                yield from _regular_only(c, cpath, pod)
            else:
                yield from _init_only(c, cpath, pod)
            if owner == "Pod":  # validateContainerOnlyForPod
                image = c.get("image")
                if isinstance(image, str) and image != image.strip():
                    yield error_at((*cpath, "image"), "k8s-image", "must not have leading or trailing whitespace")
    ephemeral = spec.get("ephemeralContainers")
    if owner == "Pod" and ephemeral:  # ValidatePodCreate
        yield error_at(
            (*path, "ephemeralContainers"),
            "k8s-container",
            "Forbidden: cannot be set on create",
            "ephemeral containers are added to a running Pod (kubectl debug), never in its manifest",
        )
    for i, c in enumerate(ephemeral if isinstance(ephemeral, list) else ()):
        if isinstance(c, dict) and not c.get("image"):
            yield error_at(
                (*path, "ephemeralContainers", i, "image"), "k8s-image", "Required value: a container needs an image"
            )


class _PodContext:
    """What a container's rules read from its Pod: volumes, restart policy, grace period, gates."""

    __slots__ = ("gates", "grace", "host_users", "owner", "restart", "spec", "volumes")

    def __init__(self, spec: dict[str, Any], owner: str, volumes: dict[str, Any], gates: Set[str]) -> None:
        self.spec = spec
        self.owner = owner
        self.volumes = volumes
        self.gates = gates
        self.restart = spec.get("restartPolicy") or "Always"  # SetDefaults_PodSpec
        grace = spec.get("terminationGracePeriodSeconds")
        self.grace = grace if isinstance(grace, int) and not isinstance(grace, bool) else _DEFAULT_GRACE_PERIOD
        self.host_users = spec.get("hostUsers") is not False


def _regular_only(c: dict[str, Any], path: Path, pod: _PodContext) -> Iterator[Finding]:
    """validateContainers: probes and lifecycle validated; restartPolicy only with ContainerRestartRules."""
    yield from _probes_and_lifecycle(c, path, pod)
    restart = c.get("restartPolicy")
    if restart is None:
        return
    if RESTART_RULES not in pod.gates:
        yield error_at(
            (*path, "restartPolicy"),
            "k8s-container",
            "Forbidden: may not be set for non-init containers",
            "ContainerRestartRules (on by default from 1.35) allows it",
        )
    elif restart not in _RESTART_POLICIES:
        yield unsupported((*path, "restartPolicy"), "k8s-container", restart, _RESTART_POLICIES)


def _init_only(c: dict[str, Any], path: Path, pod: _PodContext) -> Iterator[Finding]:
    """validateInitContainers: a sidecar (restartPolicy Always) is probed like a regular
    container; any other init container runs to completion and may carry no probe or hook."""
    restart = c.get("restartPolicy")
    allowed = _RESTART_POLICIES if RESTART_RULES in pod.gates else ("Always",)
    if restart is not None and restart not in allowed:
        yield unsupported((*path, "restartPolicy"), "k8s-container", restart, allowed)
    if restart == "Always":
        yield from _probes_and_lifecycle(c, path, pod)
        return
    for field in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
        if c.get(field) is not None:
            yield error_at(
                (*path, field),
                "k8s-container",
                "Forbidden: may not be set for init containers without restartPolicy=Always",
                "make it a sidecar (restartPolicy: Always) or drop it",
            )


# ---- validateContainerCommon ----------------------------------------------------------------


def _container_common(c: dict[str, Any], path: Path, pod: _PodContext) -> Iterator[Finding]:
    name = c.get("name")
    if name == "":
        yield error_at((*path, "name"), "k8s-name", "Required value: a container needs a name")
    elif isinstance(name, str) and (err := names.dns1123_label(name)):
        yield error_at((*path, "name"), "k8s-name", f"container name {shown(name)} {err}")
    image = c.get("image")
    if not image:
        yield error_at((*path, "image"), "k8s-image", "Required value: a container needs an image")
    elif isinstance(image, str) and (why := image_tag_problem(image)):
        yield warning_at(
            (*path, "image"),
            "image-tag",
            f"{why}: a rollout or a rescheduled Pod may run other code than was reviewed",
            "pin a version tag, or a digest (@sha256:...)",
        )
    # each check below reads its own field, asked only where it is set
    if c.get("ports") is not None:
        yield from _ports(c["ports"], (*path, "ports"))
    if c.get("env") is not None:
        yield from _env(c["env"], (*path, "env"), RELAXED_ENV in pod.gates)
    if c.get("envFrom") is not None:
        yield from _env_from(c["envFrom"], (*path, "envFrom"), RELAXED_ENV in pod.gates)
    mounts = [m if isinstance(m, dict) else {} for m in _listed(c.get("volumeMounts"))]
    devices = [d if isinstance(d, dict) else {} for d in _listed(c.get("volumeDevices"))]
    if mounts:
        yield from _volume_mounts(mounts, devices, c, (*path, "volumeMounts"), pod)
    if devices:
        yield from _volume_devices(devices, mounts, (*path, "volumeDevices"), pod)
    pull = c.get("imagePullPolicy")
    if pull is not None and pull not in ("Always", "IfNotPresent", "Never"):
        yield unsupported((*path, "imagePullPolicy"), "k8s-enum", pull, ("Always", "IfNotPresent", "Never"))
    if c.get("resources") is not None:
        yield from check_resources(c["resources"], (*path, "resources"), _claim_names(pod.spec))
    if c.get("resizePolicy") is not None:
        yield from _resize_policy(c["resizePolicy"], (*path, "resizePolicy"), pod.restart)
    if c.get("securityContext") is not None:
        yield from _security_context(c["securityContext"], (*path, "securityContext"), pod)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def image_tag_problem(image: str) -> str | None:
    """Why an image reference does not pin what runs: no tag and no digest, or `latest`."""
    if "@" in image:
        return None  # a digest pins it, whatever the tag says
    name = image.rsplit("/", 1)[-1]
    tag = name.partition(":")[2]
    if not tag:
        return f"image {image!r} has no tag: it runs whatever `latest` is when a node pulls it"
    if tag == "latest":
        return f"image {image!r} uses the moving tag latest"
    return None


# ---- validateContainerPorts -------------------------------------------------------------------


def _ports(ports: Any, path: Path) -> Iterator[Finding]:
    seen: set[str] = set()
    for j, port in enumerate(_listed(ports)):
        if not isinstance(port, dict):
            continue
        at = (*path, j)
        name = port.get("name")
        if isinstance(name, str) and name:
            if err := names.port_name(name):
                yield error_at((*at, "name"), "k8s-port-name", f"port name {shown(name)} {err}")
            elif name in seen:
                yield error_at((*at, "name"), "k8s-port-name", f"Duplicate value: port name {shown(name)}")
            seen.add(name)
        number = port.get("containerPort")
        if number == 0:
            yield error_at((*at, "containerPort"), "k8s-port", "Required value: containerPort")
        elif not _port_number(number):
            yield error_at((*at, "containerPort"), "k8s-port", "must be between 1 and 65535, inclusive")
        host = port.get("hostPort")
        if host not in (None, 0) and not _port_number(host):
            yield error_at((*at, "hostPort"), "k8s-port", "must be between 1 and 65535, inclusive")
        protocol = port.get("protocol")
        if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
            yield unsupported((*at, "protocol"), "k8s-port", protocol, ("SCTP", "TCP", "UDP"))


def _port_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def _port_num_or_name(port: Any, path: Path, rule: str) -> Iterator[Finding]:
    """ValidatePortNumOrName: a number in range, or an IANA service name."""
    if isinstance(port, str):
        if err := names.port_name(port):
            yield error_at(path, rule, f"port {shown(port)} {err}")
    elif isinstance(port, int) and not _port_number(port):
        yield error_at(path, rule, "must be between 1 and 65535, inclusive")


# ---- ValidateEnv / ValidateEnvFrom ------------------------------------------------------------

# IsEnvVarName before RelaxedEnvironmentVariableValidation, IsRelaxedEnvVarName after it
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
_RELAXED_ENV_NAME = re.compile(r"[ -<>-~]+")  # printable ASCII (space to ~) but '='
_ENV_SOURCES = frozenset({"fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"})
# validEnvDownwardAPIFieldPathExpressions: what an environment variable may take from the Pod
_ENV_FIELDS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
# validContainerResourceFieldPathExpressions and ...PrefixesWithDownwardAPIHugePages: what a
# resourceFieldRef reads, from an environment variable or a downwardAPI volume alike
CONTAINER_RESOURCE_FIELDS = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)
HUGEPAGES_FIELD_PREFIXES = ("requests.hugepages-", "limits.hugepages-")


@lru_cache(maxsize=8192)  # manifests repeat their variables' names
def env_name_error(name: str, relaxed: bool) -> str | None:
    if relaxed:
        return None if _RELAXED_ENV_NAME.fullmatch(name) else "must consist of printable ASCII characters except '='"
    if not _ENV_NAME.match(name):
        return (
            "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
            "and must not start with a digit"
        )
    return None


def _env(variables: Any, path: Path, relaxed: bool) -> Iterator[Finding]:
    for j, var in enumerate(_listed(variables)):
        if not isinstance(var, dict):
            continue
        name = var.get("name")
        if name == "":
            yield error_at((*path, j, "name"), "k8s-env", "Required value: an environment variable needs a name")
        elif isinstance(name, str) and (why := env_name_error(name, relaxed)):
            yield error_at((*path, j, "name"), "k8s-env", f"{shown(name)}: {why}")
        source = var.get("valueFrom")
        if isinstance(source, dict):
            yield from _value_from(source, bool(var.get("value")), (*path, j, "valueFrom"))


def _value_from(source: dict[str, Any], has_value: bool, path: Path) -> Iterator[Finding]:
    """validateEnvVarValueFrom: exactly one source, and no value beside it."""
    count = len([key for key in source.keys() & _ENV_SOURCES if source[key] is not None])
    if count == 0:
        yield error_at(
            path, "k8s-env", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
        )
    elif has_value:
        yield error_at(path, "k8s-env", "may not be specified when `value` is not empty", "keep value or valueFrom")
    elif count > 1:
        yield error_at(path, "k8s-env", "may not have more than one field specified at a time")
    if isinstance(source.get("fieldRef"), dict):
        yield from _field_ref(source["fieldRef"], (*path, "fieldRef"))
    if isinstance(source.get("resourceFieldRef"), dict):
        yield from _resource_field_ref(source["resourceFieldRef"], (*path, "resourceFieldRef"))
    for key in ("configMapKeyRef", "secretKeyRef"):
        if isinstance(source.get(key), dict):
            yield from _key_selector(source[key], (*path, key))


def _field_ref(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateObjectFieldSelector with the variables' expressions (apiVersion defaults to v1)."""
    api = ref.get("apiVersion") or "v1"
    field = ref.get("fieldPath")
    if not isinstance(field, str) or (api == "v1" and field in _ENV_FIELDS):
        return  # nearly every fieldRef: a field the Pod has, which converts
    if not field:
        yield error_at((*path, "fieldPath"), "k8s-env", "Required value: fieldPath")
        return
    if why := names.downward_api_field_error(str(api), field):
        yield error_at((*path, "fieldPath"), "k8s-env", f"{shown(field)}: error converting fieldPath: {why}")
        return
    subscripted, subscript = names.split_subscripted_path(field)
    if subscripted is not None:
        key = subscript.lower() if subscripted == "metadata.annotations" else subscript
        if err := names.qualified_name(key):
            yield error_at(path, "k8s-env", f"{shown(field)}: key {shown(key)}: {err}")
        return
    if (field if field != "spec.host" else "spec.nodeName") not in _ENV_FIELDS:
        yield unsupported(
            (*path, "fieldPath"), "k8s-env", field, _ENV_FIELDS, "an environment variable takes these from its Pod"
        )


def _resource_field_ref(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateContainerResourceFieldSelector and validateContainerResourceDivisor."""
    resource = ref.get("resource")
    if not isinstance(resource, str):
        return
    if not resource:
        yield error_at((*path, "resource"), "k8s-env", "Required value: resource")
    elif resource not in CONTAINER_RESOURCE_FIELDS and not resource.startswith(HUGEPAGES_FIELD_PREFIXES):
        yield unsupported((*path, "resource"), "k8s-env", resource, CONTAINER_RESOURCE_FIELDS)
    if why := quantity.divisor_error(resource, ref.get("divisor")):
        yield error_at((*path, "divisor"), "k8s-env", why)


def _key_selector(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateConfigMapKeySelector / validateSecretKeySelector: the object's name, a key."""
    name = ref.get("name", "")
    if isinstance(name, str) and (err := names.dns1123_subdomain(name)):
        yield error_at((*path, "name"), "k8s-env", f"name {shown(name)} {err}")
    key = ref.get("key")
    if key == "":
        yield error_at((*path, "key"), "k8s-env", "Required value: key")
    elif isinstance(key, str) and (err := names.config_map_key(key)):
        yield error_at((*path, "key"), "k8s-env", f"key {shown(key)} {err}")


def _env_from(sources: Any, path: Path, relaxed: bool) -> Iterator[Finding]:
    for j, source in enumerate(_listed(sources)):
        if not isinstance(source, dict):
            continue
        at = (*path, j)
        prefix = source.get("prefix")
        if isinstance(prefix, str) and prefix and (why := env_name_error(prefix, relaxed)):
            yield error_at((*at, "prefix"), "k8s-env", f"prefix {shown(prefix)}: {why}")
        refs = [key for key in ("configMapRef", "secretRef") if source.get(key) is not None]
        if not refs:
            yield error_at(at, "k8s-env", "must specify one of: `configMapRef` or `secretRef`")
        elif len(refs) > 1:
            yield error_at(at, "k8s-env", "may not have more than one field specified at a time")
        for key in refs:
            ref = source[key]
            name = ref.get("name", "") if isinstance(ref, dict) else None
            if name == "":
                yield error_at((*at, key, "name"), "k8s-env", "Required value: name")
            elif isinstance(name, str) and (err := names.dns1123_subdomain(name)):
                yield error_at((*at, key, "name"), "k8s-env", f"name {shown(name)} {err}")


# ---- ValidateVolumeMounts / ValidateVolumeDevices -------------------------------------------

_RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")


def _volume_mounts(
    mounts: list[dict[str, Any]], devices: list[dict[str, Any]], c: dict[str, Any], path: Path, pod: _PodContext
) -> Iterator[Finding]:
    rule = "k8s-volume-mount"
    device_names = {d.get("name") for d in devices}
    device_paths = {d.get("devicePath") for d in devices}
    targets: set[Any] = set()
    context = c.get("securityContext")
    privileged = isinstance(context, dict) and context.get("privileged") is True
    for j, mount in enumerate(mounts):
        at = (*path, j)
        name, target = mount.get("name"), mount.get("mountPath")
        if name == "":
            yield error_at((*at, "name"), rule, "Required value: name")
        elif name not in pod.volumes:
            yield error_at(
                (*at, "name"),
                rule,
                f"volumeMount {shown(name)} names no volume of the Pod",
                "add it to the Pod's volumes",
            )
        if target == "":
            yield error_at((*at, "mountPath"), rule, "Required value: mountPath")
        elif target in targets:
            yield error_at((*at, "mountPath"), rule, f"mountPath {shown(target)} must be unique")
        targets.add(target)
        if name in device_names:
            yield error_at((*at, "name"), rule, "must not already exist in volumeDevices")
        if target in device_paths:
            yield error_at((*at, "mountPath"), rule, "must not already exist as a path in volumeDevices")
        sub, expr = mount.get("subPath"), mount.get("subPathExpr")
        volume = pod.volumes.get(name) if isinstance(name, str) else None
        if isinstance(volume, dict) and "image" in volume:
            for field, value in (("subPath", sub), ("subPathExpr", expr)):
                if value:
                    yield error_at((*at, field), rule, "not allowed in image volume sources")
        if isinstance(sub, str) and sub:
            yield from _descending_path(sub, (*at, "subPath"), rule)
        if isinstance(expr, str) and expr:
            if sub:
                yield error_at((*at, "subPathExpr"), rule, "subPathExpr and subPath are mutually exclusive")
            yield from _descending_path(expr, (*at, "subPathExpr"), rule)
        propagation = mount.get("mountPropagation")
        if propagation == "Bidirectional" and not privileged:
            yield error_at(
                (*at, "mountPropagation"),
                rule,
                "Forbidden: Bidirectional mount propagation is available only to privileged containers",
            )
        recursive = mount.get("recursiveReadOnly")
        if recursive in ("Enabled", "IfPossible"):
            if mount.get("readOnly") is not True:
                yield error_at(
                    (*at, "recursiveReadOnly"), rule, "Forbidden: may only be specified when readOnly is true"
                )
            if propagation not in (None, "None"):
                yield error_at(
                    (*at, "recursiveReadOnly"),
                    rule,
                    "Forbidden: may only be specified when mountPropagation is None or not specified",
                )
        elif recursive not in (None, "Disabled"):
            yield unsupported((*at, "recursiveReadOnly"), rule, recursive, _RECURSIVE_READ_ONLY)


def _descending_path(value: str, path: Path, rule: str) -> Iterator[Finding]:
    """validateLocalDescendingPath: relative, and no '..' element."""
    for why in names.local_descending_path_errors(value):
        yield error_at(path, rule, f"{shown(value)} {why}")


def _volume_devices(
    devices: list[dict[str, Any]], mounts: list[dict[str, Any]], path: Path, pod: _PodContext
) -> Iterator[Finding]:
    rule = "k8s-volume-mount"
    mount_names = {m.get("name") for m in mounts}
    mount_paths = {m.get("mountPath") for m in mounts}
    seen_names: set[Any] = set()
    seen_paths: set[Any] = set()
    for j, device in enumerate(devices):
        at = (*path, j)
        name, target = device.get("name"), device.get("devicePath")
        volume = pod.volumes.get(name) if isinstance(name, str) else None
        if name == "":
            yield error_at((*at, "name"), rule, "Required value: name")
        elif name in seen_names:
            yield error_at((*at, "name"), rule, f"volumeDevice {shown(name)} must be unique")
        if isinstance(volume, dict) and not ({"persistentVolumeClaim", "ephemeral"} & volume.keys()):
            yield error_at(
                (*at, "name"),
                rule,
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
            )
        elif volume is None and name:
            yield error_at((*at, "name"), rule, f"volumeDevice {shown(name)} names no volume of the Pod")
        if target == "":
            yield error_at((*at, "devicePath"), rule, "Required value: devicePath")
        elif target in seen_paths:
            yield error_at((*at, "devicePath"), rule, f"devicePath {shown(target)} must be unique")
        if isinstance(target, str) and target and ".." in target.split("/"):
            yield error_at((*at, "devicePath"), rule, "can not contain backsteps ('..')")
        else:
            seen_paths.add(target)
        if name in mount_names:
            yield error_at((*at, "name"), rule, "must not already exist in volumeMounts")
        if target in mount_paths:
            yield error_at((*at, "devicePath"), rule, "must not already exist as a path in volumeMounts")
        if name:
            seen_names.add(name)


# ---- ValidateContainerResourceRequirements ------------------------------------------------


@lru_cache(maxsize=4096)  # the same few resource names on every container
def resource_name_error(name: str) -> str | None:
    """validateContainerResourceName: standard names, or a valid extended resource name."""
    if err := names.qualified_name(name):
        return err
    if "/" not in name:
        if name in STANDARD_RESOURCES or name.startswith("hugepages-"):
            return None
        return "must be a standard resource for containers"
    if not _is_extended(name):
        return "must be a standard resource for containers"
    if name.startswith("requests.") or names.qualified_name("requests." + name):
        return "doesn't follow extended resource name standard"
    return None


@lru_cache(maxsize=4096)
def _is_extended(name: str) -> bool:
    prefix = name.split("/")[0] if "/" in name else ""
    return bool(prefix) and not (prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"))


def _written(res: dict[str, Any], name: str, section: str = "limits") -> str:
    """A quantity as the manifest wrote it (`512Mi`, never 536870912)."""
    return str(res[section][name])


def _hugepages_error(name: str, value: Decimal) -> str | None:
    """IsHugePageResourceValueDivisible: a whole number of pages of the size the name gives."""
    page = parse_quantity(name.removeprefix("hugepages-"))
    if page is None or page <= 0 or page != page.to_integral_value():
        return f"{name} names no page size"
    if value.to_integral_value(ROUND_CEILING) % page:
        return f"is not positive integer multiple of {name}"
    return None


def check_resources(res: Any, path: Path, pod_claims: Set[str] = frozenset()) -> Iterator[Finding]:
    """validateResourceRequirements with the container's resource names; pod_claims: the names
    in the Pod's spec.resourceClaims, which resources.claims must name."""
    if not isinstance(res, dict):
        return
    parsed: dict[str, dict[str, Decimal]] = {"requests": {}, "limits": {}}
    for section in ("requests", "limits"):
        listed = res.get(section)
        for name, raw in (listed if isinstance(listed, dict) else {}).items():
            where = (*path, section, name)
            if err := resource_name_error(str(name)):
                yield error_at(where, "k8s-resource-name", f"resource {name!r} {err}")
                continue
            value = parse_quantity(raw)
            if value is None:
                yield error_at(where, "k8s-quantity", f"{raw!r} is not a valid quantity")
                continue
            if value < 0:
                yield error_at(where, "k8s-quantity", f"{name} must be greater than or equal to 0")
                continue
            if (_is_extended(name) or name.startswith("hugepages-")) and value != value.to_integral_value():
                yield error_at(where, "k8s-extended-resource-integer", f"{name} {raw!r} must be an integer")
                continue
            if name.startswith("hugepages-") and (why := _hugepages_error(name, value)):
                yield error_at(where, "k8s-hugepages", f"{raw!r} {why}", "hugepages come in whole pages")
            parsed[section][name] = value
    requests, limits = parsed["requests"], parsed["limits"]
    present = {*requests, *limits}
    if any(n.startswith("hugepages-") for n in present) and not present & {"cpu", "memory"}:
        yield error_at(path, "k8s-hugepages", "HugePages require cpu or memory")
    for name, req in requests.items():
        if _is_extended(name) or name.startswith("hugepages-"):
            if name not in limits:
                yield error_at(
                    (*path, "requests", name),
                    "k8s-extended-resource-limit",
                    f"Limit must be set for non overcommitable resources ({name})",
                    "set limits equal to requests (or only limits: requests default to them)",
                )
            elif limits[name] != req:
                yield error_at(
                    (*path, "requests", name),
                    "k8s-extended-resource-limit",
                    f"must be equal to {name} limit of {_written(res, name)}",
                )
        elif name in limits and req > limits[name]:
            yield error_at(
                (*path, "requests", name),
                "k8s-request-over-limit",
                f"{name} request {_written(res, name, 'requests')} must be less than or equal to {name} limit of "
                f"{_written(res, name)}",
            )
    yield from _claims(res.get("claims"), (*path, "claims"), pod_claims)


def _claim_names(spec: dict[str, Any]) -> frozenset[str]:
    claims = spec.get("resourceClaims")
    return frozenset(
        c["name"] for c in (claims if isinstance(claims, list) else ()) if isinstance(c, dict) and c.get("name")
    )


def _claims(claims: Any, path: Path, pod_claims: Set[str]) -> Iterator[Finding]:
    """validateResourceClaimNames: each entry names a claim of the Pod, once (a whole claim or
    each of its requests)."""
    rule = "k8s-resource-claim"
    seen: set[str] = set()
    for i, claim in enumerate(_listed(claims)):
        if not isinstance(claim, dict):
            continue
        at = (*path, i)
        name, request = str(claim.get("name") or ""), str(claim.get("request") or "")
        if not name:
            yield error_at(at, rule, "Required value: the name of one of the Pod's resourceClaims")
            continue
        if name in seen:
            yield error_at(at, rule, f"Duplicate value: claim {shown(name)} is already referenced")
        else:
            key = name
            if request:
                if err := names.dns1123_label(request):
                    yield error_at((*at, "request"), rule, f"request {shown(request)} {err}")
                key = f"{name}/{request}"
            if key in seen or (not request and any(k.partition("/")[0] == name for k in seen if "/" in k)):
                yield error_at(at, rule, f"Duplicate value: {shown(key)} is already referenced")
            seen.add(key)
        if name not in pod_claims:
            listed = ", ".join(sorted(pod_claims)) or "which is empty"
            yield error_at(
                at, rule, f"Not found: {shown(name)}: must be one of the names in pod.spec.resourceClaims: {listed}"
            )


# ---- validateResizePolicy ---------------------------------------------------------------------

_RESIZE_RESOURCES = ("cpu", "memory")
_RESIZE_POLICIES = ("NotRequired", "RestartContainer")


def _resize_policy(policies: Any, path: Path, pod_restart: str) -> Iterator[Finding]:
    rule = "k8s-container"
    seen: set[Any] = set()
    for i, policy in enumerate(_listed(policies)):
        if not isinstance(policy, dict):
            continue
        at = (*path, i)
        resource, restart = policy.get("resourceName") or "", policy.get("restartPolicy") or ""
        if resource in seen:
            yield error_at(at, rule, f"Duplicate value: {shown(resource)}")
        seen.add(resource)
        if not resource:
            yield error_at((*at, "resourceName"), rule, "Required value: resourceName")
        elif resource not in _RESIZE_RESOURCES:
            yield unsupported((*at, "resourceName"), rule, resource, _RESIZE_RESOURCES)
        if not restart:
            yield error_at((*at, "restartPolicy"), rule, "Required value: restartPolicy")
        elif restart not in _RESIZE_POLICIES:
            yield unsupported((*at, "restartPolicy"), rule, restart, _RESIZE_POLICIES)
        if pod_restart == "Never" and restart != "NotRequired":
            yield error_at((*at, "restartPolicy"), rule, "must be 'NotRequired' when `restartPolicy` is 'Never'")


# ---- ValidateSecurityContext ------------------------------------------------------------------

# kube-apiserver compares the literal: `SYS_ADMIN` (as the container runtime spells it) passes
_SYS_ADMIN = "CAP_SYS_ADMIN"
_MAX_GMSA_SPEC = 64 * 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NETBIOS_DOMAIN = re.compile(r'[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}\Z')
_DNS_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_DNS_DOMAIN = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*\Z")
_USER_CHARS = re.compile(r'["/\\:;|=,+*?<>@\[\]]')
_DOTS_SPACES = re.compile(r"[. ]+\Z")


def _security_context(ctx: Any, path: Path, pod: _PodContext) -> Iterator[Finding]:
    """ValidateSecurityContext: user and group IDs in range, an Unmasked procMount only in a user
    namespace, seccomp and AppArmor profiles, Windows options, and the combinations with
    allowPrivilegeEscalation false kube-apiserver refuses; validateLinux: no Windows options
    on a Linux Pod."""
    if not isinstance(ctx, dict):
        return
    rule = "k8s-security-context"
    if ctx.get("privileged") is True and PRIVILEGED_DISALLOWED in pod.gates:
        yield error_at(
            (*path, "privileged"),
            rule,
            "Forbidden: disallowed by cluster policy",
            f"{DISALLOWED_BY_CLUSTER}: drop privileged, or set allowPrivileged: true where they allow it",
        )
    for field in ("runAsUser", "runAsGroup"):
        value = ctx.get(field)
        if isinstance(value, int) and not 0 <= value <= _MAX_ID:
            yield error_at((*path, field), rule, f"must be between 0 and {_MAX_ID}, inclusive")
    if ctx.get("procMount") == "Unmasked" and pod.host_users:
        yield error_at(
            (*path, "procMount"),
            rule,
            "`hostUsers` must be false to use `Unmasked`",
            "an unmasked /proc is only safe in a user namespace: set spec.hostUsers: false",
        )
    yield from seccomp_profile(ctx.get("seccompProfile"), (*path, "seccompProfile"))
    yield from app_armor_profile(ctx.get("appArmorProfile"), (*path, "appArmorProfile"))
    if isinstance(ctx.get("windowsOptions"), dict):
        yield from windows_options(ctx["windowsOptions"], (*path, "windowsOptions"))
    os = pod.spec.get("os")
    if isinstance(os, dict) and os.get("name") == "linux" and "windowsOptions" in ctx:
        yield error_at((*path, "windowsOptions"), rule, "windows options cannot be set for a linux pod")
    if ctx.get("allowPrivilegeEscalation") is not False:
        return
    if ctx.get("privileged") is True:
        yield error_at(
            (*path, "allowPrivilegeEscalation"),
            rule,
            "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            "a privileged container escalates by definition: drop one of the two",
        )
    added = ctx["capabilities"].get("add") or [] if isinstance(ctx.get("capabilities"), dict) else []
    if _SYS_ADMIN in map(str, added):
        yield error_at(
            (*path, "allowPrivilegeEscalation"),
            rule,
            "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            "CAP_SYS_ADMIN allows escalation: drop one of the two",
        )


def seccomp_profile(profile: Any, path: Path) -> Iterator[Finding]:
    """validateSeccompProfileField (the type's other values are the enum check's), for a
    container's security context and the Pod's (pod_spec.py)."""
    if not isinstance(profile, dict):
        return
    rule = "k8s-security-context"
    kind, local = profile.get("type"), profile.get("localhostProfile")
    if kind == "":
        yield error_at((*path, "type"), rule, "Required value: type is required when seccompProfile is set")
    if kind == "Localhost":
        if local is None:
            yield error_at(
                (*path, "localhostProfile"), rule, "Required value: must be set when seccomp type is Localhost"
            )
        elif isinstance(local, str):
            yield from _descending_path(local, (*path, "localhostProfile"), rule)
    elif local is not None:
        yield error_at((*path, "localhostProfile"), rule, "can only be set when seccomp type is Localhost")


def app_armor_profile(profile: Any, path: Path) -> Iterator[Finding]:
    """ValidateAppArmorProfileField (the type's other values are the enum check's)."""
    if not isinstance(profile, dict):
        return
    rule = "k8s-security-context"
    kind, local = profile.get("type"), profile.get("localhostProfile")
    at = (*path, "localhostProfile")
    if kind == "Localhost":
        if local is None or local == "":
            yield error_at(at, rule, "Required value: must be set when AppArmor type is Localhost")
        elif isinstance(local, str):
            if local != local.strip():
                yield error_at(at, rule, "must not be padded with whitespace")
            elif not local.strip():
                yield error_at(at, rule, "Required value: must be set when AppArmor type is Localhost")
            if len(local.encode()) > 4095:
                yield error_at(at, rule, "Too long: may not be more than 4095 bytes")
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            yield error_at(at, rule, "can only be set when AppArmor type is Localhost")
    elif kind == "":
        yield error_at((*path, "type"), rule, "Required value: type is required when appArmorProfile is set")


def windows_options(options: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateWindowsSecurityContextOptions: a GMSA credential spec's name and size, and a
    runAsUserName Windows can log on as ([DOMAIN\\]USER)."""
    rule = "k8s-security-context"
    name = options.get("gmsaCredentialSpecName")
    if isinstance(name, str) and (err := names.dns1123_subdomain(name)):
        yield error_at((*path, "gmsaCredentialSpecName"), rule, f"{shown(name)} {err}")
    spec = options.get("gmsaCredentialSpec")
    if spec == "":
        yield error_at((*path, "gmsaCredentialSpec"), rule, "gmsaCredentialSpec cannot be an empty string")
    elif isinstance(spec, str) and len(spec.encode()) > _MAX_GMSA_SPEC:
        yield error_at((*path, "gmsaCredentialSpec"), rule, "gmsaCredentialSpec size must be under 64 KiB")
    user = options.get("runAsUserName")
    if isinstance(user, str):
        for why in _windows_user_errors(user):
            yield error_at((*path, "runAsUserName"), rule, why)


def _windows_user_errors(value: str) -> Iterator[str]:
    if not value:
        yield "runAsUserName cannot be an empty string"
        return
    if _CONTROL.search(value):
        yield "runAsUserName cannot contain control characters"
        return
    parts = value.split("\\")
    if len(parts) > 2:
        yield "runAsUserName cannot contain more than one backslash"
        return
    domain, user = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0])
    if len(domain.encode()) >= 256:
        yield "runAsUserName's Domain length must be under 256 characters"
    if len(parts) == 2 and not (_NETBIOS_DOMAIN.match(domain) or _DNS_DOMAIN.match(domain)):
        yield "runAsUserName's Domain doesn't match the NetBios nor the DNS format"
    if not user:
        yield "runAsUserName's User cannot be empty"
    elif len(user.encode()) > 104:
        yield "runAsUserName's User length must not be longer than 104 characters"
    if _DOTS_SPACES.match(user):
        yield "runAsUserName's User cannot contain only periods or spaces"
    if _USER_CHARS.search(user):
        yield "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]"


# ---- validateProbe, validateHandler, validateLifecycle -------------------------------------

_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
_PROBE_COUNTS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")
_HEADER_NAME = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+\Z")  # an RFC 7230 token


def _probes_and_lifecycle(c: dict[str, Any], path: Path, pod: _PodContext) -> Iterator[Finding]:
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            if isinstance(lifecycle.get(hook), dict):
                yield from _handler(lifecycle[hook], _LIFECYCLE_HANDLERS, (*path, "lifecycle", hook), pod)
    for field in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(field)
        if not isinstance(probe, dict):
            continue
        at = (*path, field)
        yield from _handler(probe, _PROBE_HANDLERS, at, pod)
        for count in _PROBE_COUNTS:
            value = probe.get(count)
            if isinstance(value, int) and value < 0:
                yield error_at((*at, count), "k8s-probe", "must be greater than or equal to 0")
        grace = probe.get("terminationGracePeriodSeconds")
        if field == "readinessProbe" and grace is not None:
            yield error_at((*at, "terminationGracePeriodSeconds"), "k8s-probe", "must not be set for readinessProbes")
        elif isinstance(grace, int) and grace <= 0:
            yield error_at((*at, "terminationGracePeriodSeconds"), "k8s-probe", "must be greater than 0")
        success = probe.get("successThreshold") or 1  # SetDefaults_Probe fills 0 with 1
        if field != "readinessProbe" and success != 1:
            yield error_at((*at, "successThreshold"), "k8s-probe", "must be 1")


def _handler(handler: dict[str, Any], kinds: tuple[str, ...], path: Path, pod: _PodContext) -> Iterator[Finding]:
    """validateHandler: the first handler set is validated, every further one is refused."""
    rule = "k8s-probe"
    present = [kind for kind in kinds if handler.get(kind) is not None]
    if not present:
        yield error_at(path, rule, "Required value: must specify a handler type", "one of " + ", ".join(kinds))
        return
    for extra in present[1:]:
        yield error_at((*path, extra), rule, "Forbidden: may not specify more than 1 handler type")
    kind, action = present[0], handler[present[0]]
    if not isinstance(action, dict):
        return
    at = (*path, kind)
    if kind == "exec" and not action.get("command"):
        yield error_at((*at, "command"), rule, "Required value: command")
    elif kind == "httpGet":
        yield from _port_num_or_name(action.get("port"), (*at, "port"), rule)
        headers = action.get("httpHeaders")
        for h, header in enumerate(_listed(headers)):
            name = header.get("name") if isinstance(header, dict) else None
            if isinstance(name, str) and not _HEADER_NAME.match(name):
                yield error_at((*at, "httpHeaders", h, "name"), rule, f"{shown(name)} is not a valid HTTP header name")
    elif kind in ("tcpSocket", "grpc"):
        yield from _port_num_or_name(action.get("port"), (*at, "port"), rule)
    elif kind == "sleep":
        seconds = action.get("seconds")
        if isinstance(seconds, int) and not 0 <= seconds <= pod.grace:
            yield error_at(
                (*at, "seconds"),
                rule,
                f"must be non-negative and less than terminationGracePeriodSeconds ({pod.grace})",
                "sleep no longer than the Pod's grace period (30 s unless spec.terminationGracePeriodSeconds says)",
            )
