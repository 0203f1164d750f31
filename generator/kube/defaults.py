"""The defaults kube-apiserver fills in before it validates a built-in object.

kube-apiserver decodes a request, applies the SetDefaults_* functions of the object's group
and version (pkg/apis/<group>/<version>/defaults.go), and only then validates: a field a
default fills is never missing. gen ports the defaults that change a verdict and applies them
to a copy, sharing everything it does not fill (most objects need nothing and are not copied).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from generator.kube.findings import Path
from generator.kube.scope import POD_SPEC_PATHS, at_path

RBAC_GROUP = "rbac.authorization.k8s.io"

Fill = tuple[Path, Any]
# A fill's value that removes the field: what a strategy's dropDisabledFields does, before
# defaulting and validation, to a field whose feature gate is off.
DROPPED = object()


def _unset(mapping: dict[str, Any], key: str) -> bool:
    """A string field a SetDefaults_* fills: absent, null or empty (Go's zero value). A number,
    a boolean or a structure there never decodes into the string, so it is left for the schema
    to refuse, not defaulted over."""
    return mapping.get(key) in (None, "")


def _role_binding(obj: dict[str, Any]) -> Iterator[Fill]:
    """SetDefaults_RoleBinding, SetDefaults_ClusterRoleBinding and SetDefaults_Subject (rbac/v1)."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and _unset(ref, "apiGroup"):
        yield ("roleRef", "apiGroup"), RBAC_GROUP
    subjects = obj.get("subjects")
    for i, subject in enumerate(subjects if isinstance(subjects, list) else []):
        if isinstance(subject, dict) and _unset(subject, "apiGroup") and subject.get("kind") in ("User", "Group"):
            yield ("subjects", i, "apiGroup"), RBAC_GROUP


def _job(obj: dict[str, Any]) -> Iterator[Fill]:
    """SetDefaults_Job (batch/v1): a Job that sets neither completions nor parallelism runs one
    Pod to one completion; completionMode is NonIndexed."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        yield ("spec", "completions"), 1
    if spec.get("parallelism") is None:
        yield ("spec", "parallelism"), 1
    if spec.get("completionMode") is None:
        yield ("spec", "completionMode"), "NonIndexed"


def _deployment(obj: dict[str, Any]) -> Iterator[Fill]:
    """SetDefaults_Deployment (apps/v1) as far as a verdict depends on it: the progress
    deadline is 600 s, which minReadySeconds must stay below. (Its other defaults, one replica,
    25% surge and unavailability, ten revisions, meet no rule a given value would not.)"""
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("progressDeadlineSeconds") is None and "minReadySeconds" in spec:
        yield ("spec", "progressDeadlineSeconds"), 600


def _ports(ports: Any, path: Path) -> Iterator[Fill]:
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        if isinstance(port, dict) and _unset(port, "protocol"):
            yield (*path, i, "protocol"), "TCP"


def _field_refs(items: Any, path: Path) -> Iterator[Fill]:
    """SetDefaults_ObjectFieldSelector: a downward API file's fieldRef reads the v1 Pod."""
    for i, item in enumerate(items if isinstance(items, list) else []):
        ref = item.get("fieldRef") if isinstance(item, dict) else None
        if isinstance(ref, dict) and _unset(ref, "apiVersion"):
            yield (*path, i, "fieldRef", "apiVersion"), "v1"


def _volumes(volumes: Any, path: Path) -> Iterator[Fill]:
    """SetDefaults_Volume (a volume with no source is an emptyDir; an image volume pulls Always
    for :latest, IfNotPresent otherwise), SetDefaults_ObjectFieldSelector,
    SetDefaults_ServiceAccountTokenProjection (an hour) and the azureDisk defaults the v1 types
    declare (cachingMode ReadWrite, kind Shared)."""
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        if not isinstance(volume, dict):
            continue
        at = (*path, i)
        if all(value is None for key, value in volume.items() if key != "name"):
            yield (*at, "emptyDir"), {}
        image = volume.get("image")
        if isinstance(image, dict) and _unset(image, "pullPolicy"):
            reference = str(image.get("reference") or "")
            tag = reference.split("@")[0].rpartition("/")[2].partition(":")[2]  # parsers.ParseImageName
            latest = tag == "latest" or (not tag and "@" not in reference)
            yield (*at, "image", "pullPolicy"), "Always" if latest else "IfNotPresent"
        downward = volume.get("downwardAPI")
        if isinstance(downward, dict):
            yield from _field_refs(downward.get("items"), (*at, "downwardAPI", "items"))
        projected = volume.get("projected")
        sources = projected.get("sources") if isinstance(projected, dict) else None
        for j, source in enumerate(sources if isinstance(sources, list) else []):
            if not isinstance(source, dict):
                continue
            downward, token = source.get("downwardAPI"), source.get("serviceAccountToken")
            if isinstance(downward, dict):
                yield from _field_refs(downward.get("items"), (*at, "projected", "sources", j, "downwardAPI", "items"))
            if isinstance(token, dict) and token.get("expirationSeconds") is None:
                yield (*at, "projected", "sources", j, "serviceAccountToken", "expirationSeconds"), 3600
        disk = volume.get("azureDisk")
        if isinstance(disk, dict):
            for key, value in (("cachingMode", "ReadWrite"), ("kind", "Shared")):
                if disk.get(key) is None:
                    yield (*at, "azureDisk", key), value


def _pod_template(obj: dict[str, Any]) -> Iterator[Fill]:
    """SetDefaults_ContainerPort (core/v1), on every container of the object's Pod spec, and
    the defaults of its volumes."""
    base = POD_SPEC_PATHS[str(obj.get("kind"))]
    spec = at_path(obj, base)
    if not isinstance(spec, dict):
        return
    for group in ("initContainers", "containers", "ephemeralContainers"):
        containers = spec.get(group)
        for i, container in enumerate(containers if isinstance(containers, list) else []):
            if isinstance(container, dict):
                yield from _ports(container.get("ports"), (*base, group, i, "ports"))
    yield from _volumes(spec.get("volumes"), (*base, "volumes"))


def _service(obj: dict[str, Any]) -> Iterator[Fill]:
    """SetDefaults_Service (core/v1): the type is ClusterIP, a port's protocol TCP."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if _unset(spec, "type"):
        yield ("spec", "type"), "ClusterIP"
    yield from _ports(spec.get("ports"), ("spec", "ports"))


def _device_requests(spec: Any, path: Path, api: Any) -> Iterator[Fill]:
    """DropDisabledFields (pkg/api/resourceclaimspec) with 1.35's gates: a request's tolerations
    (DRADeviceTaints), capacity and a constraint's distinctAttribute (DRAConsumableCapacity) are
    dropped; then, in v1, SetDefaults_ExactDeviceRequest and SetDefaults_DeviceSubRequest: a
    request allocates ExactCount devices, one unless it says how many. (Other versions' defaults
    differ, and gen judges no unset allocationMode or count.)"""
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return
    constraints = devices.get("constraints")
    for k, constraint in enumerate(constraints if isinstance(constraints, list) else []):
        if isinstance(constraint, dict) and "distinctAttribute" in constraint:
            yield (*path, "devices", "constraints", k, "distinctAttribute"), DROPPED
    requests = devices.get("requests")
    for i, request in enumerate(requests if isinstance(requests, list) else []):
        if not isinstance(request, dict):
            continue
        at = (*path, "devices", "requests", i)
        bodies = [((*at, "exactly"), request.get("exactly"))]
        if api == "resource.k8s.io/v1beta1":  # its request holds what later versions put in `exactly`
            bodies.append((at, request))
        subs = request.get("firstAvailable")
        bodies += [((*at, "firstAvailable", j), sub) for j, sub in enumerate(subs if isinstance(subs, list) else [])]
        for where, body in bodies:
            if not isinstance(body, dict):
                continue
            yield from (((*where, gated), DROPPED) for gated in ("tolerations", "capacity") if gated in body)
            if api != "resource.k8s.io/v1":
                continue
            mode = "ExactCount" if _unset(body, "allocationMode") else body.get("allocationMode")
            if mode != body.get("allocationMode"):
                yield (*where, "allocationMode"), mode
            count = body.get("count")
            if mode == "ExactCount" and (count is None or (count == 0 and not isinstance(count, bool))):
                yield (*where, "count"), 1


def _resource_claim(obj: dict[str, Any]) -> Iterator[Fill]:
    """A ResourceClaim's spec, or a template's spec.spec, as _device_requests leaves it."""
    spec = obj.get("spec")
    api = obj.get("apiVersion")
    if obj.get("kind") == "ResourceClaimTemplate":
        yield from _device_requests(spec.get("spec") if isinstance(spec, dict) else None, ("spec", "spec"), api)
    else:
        yield from _device_requests(spec, ("spec",), api)


def _device_class(obj: dict[str, Any]) -> Iterator[Fill]:
    """The DeviceClass strategy's dropDisabledFields: extendedResourceName goes while
    DRAExtendedResource is off (alpha, off by default in 1.35)."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and "extendedResourceName" in spec:
        yield ("spec", "extendedResourceName"), DROPPED


# (group, kind) -> the fills its SetDefaults_* make on an object that lacks them
DEFAULTERS: dict[tuple[str, str], Callable[[dict[str, Any]], Iterable[Fill]]] = {
    (RBAC_GROUP, "RoleBinding"): _role_binding,
    (RBAC_GROUP, "ClusterRoleBinding"): _role_binding,
    ("batch", "Job"): lambda obj: (*_job(obj), *_pod_template(obj)),
    ("", "Service"): _service,
    **{(group, kind): _pod_template for kind, group in (("Pod", ""), ("CronJob", "batch"))},
    ("apps", "Deployment"): lambda obj: (*_deployment(obj), *_pod_template(obj)),
    **{("apps", kind): _pod_template for kind in ("ReplicaSet", "StatefulSet", "DaemonSet")},
    **{("resource.k8s.io", kind): _resource_claim for kind in ("ResourceClaim", "ResourceClaimTemplate")},
    ("resource.k8s.io", "DeviceClass"): _device_class,
}


def defaulted(obj: dict[str, Any], group: str, kind: str) -> dict[str, Any]:
    """obj as kube-apiserver validates it: with its defaults filled in (and the fields of gates
    that are off dropped). obj itself when nothing is filled; otherwise a copy that shares every
    mapping and list it does not change."""
    defaulter = DEFAULTERS.get((group, kind))
    fills = list(defaulter(obj)) if defaulter is not None else []
    if not fills:
        return obj
    root = dict(obj)
    copied = {id(root)}
    for path, value in fills:
        node: Any = root
        for step in path[:-1]:
            child = node[step]
            if id(child) not in copied:
                child = dict(child) if isinstance(child, dict) else list(child)
                node[step] = child
                copied.add(id(child))
            node = child
        if value is DROPPED:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value
    return root
