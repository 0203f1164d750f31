"""Rules kube-apiserver and kube-scheduler enforce beyond the OpenAPI schemas.

Each rule mirrors a check in Kubernetes 1.35 source (see docs/rules.md). Objects are the
plain dicts of a manifest; findings carry a JSON path into that object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from generator.kube import names
from generator.kube.quantity import parse_quantity
from generator.kube.scope import at_path
from generator.problems import Severity
from generator.schema_messages import shown

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
ANNOTATIONS_MAX_BYTES = 262144
STANDARD_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
OVERCOMMITTABLE = STANDARD_RESOURCES

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    path: Path
    rule: str
    severity: Severity
    message: str
    hint: str = ""
    at_key: bool = False  # located at the key of path (an unknown field), not at its value


def _err(path: Path, rule: str, message: str, hint: str = "") -> Finding:
    return Finding(path, rule, Severity.ERROR, message, hint)


def _warn(path: Path, rule: str, message: str, hint: str = "") -> Finding:
    return Finding(path, rule, Severity.WARNING, message, hint)


def unsupported(path: Path, rule: str, value: Any, allowed: Iterable[str], hint: str = "") -> Finding:
    """field.NotSupported: kube-apiserver's words for a value outside an enumeration."""
    listed = ", ".join(shown(a) for a in allowed)
    return Finding(path, rule, Severity.ERROR, f"Unsupported value: {shown(value)}: supported values: {listed}", hint)


# ---- metadata ---------------------------------------------------------------------------

# The name validator kube-apiserver uses per kind (ValidateObjectMeta's callers); DNS-1123
# subdomain for every other kind.
_NAME_VALIDATORS: dict[str, Callable[[str], str | None]] = {
    "Namespace": names.dns1123_label,
    "Service": names.dns1035_label,
    "Role": names.path_segment,
    "ClusterRole": names.path_segment,
    "RoleBinding": names.path_segment,
    "ClusterRoleBinding": names.path_segment,
}


def check_metadata(obj: dict[str, Any], path: Path = ("metadata",), kind: str | None = None) -> Iterator[Finding]:
    meta = at_path(obj, path)
    if not isinstance(meta, dict):
        return
    if kind is not None:
        yield from _check_object_names(meta, path, _NAME_VALIDATORS.get(kind, names.dns1123_subdomain))
    ns = meta.get("namespace")
    if isinstance(ns, str) and (err := names.dns1123_label(ns)):
        yield _err((*path, "namespace"), "k8s-name", f"namespace {shown(ns)} {err}")
    for key, value in (meta.get("labels") or {}).items():
        if err := names.qualified_name(str(key)):
            yield _err((*path, "labels", key), "k8s-label", f"label key {shown(str(key))}: {err}")
        if isinstance(value, str) and (err := names.label_value(value)):
            yield _err((*path, "labels", key), "k8s-label", f"label value {shown(value)}: {err}")
    annotations = meta.get("annotations") or {}
    total = 0
    for key, value in annotations.items():
        if err := names.qualified_name(str(key).lower()):
            yield _err((*path, "annotations", key), "k8s-annotation", f"annotation key {shown(str(key))}: {err}")
        total += len(str(key)) + len(str(value))
    if total > ANNOTATIONS_MAX_BYTES:
        yield _err(
            (*path, "annotations"),
            "k8s-annotation-size",
            f"annotations total {total} bytes; kube-apiserver allows {ANNOTATIONS_MAX_BYTES}",
        )


def _check_object_names(meta: dict[str, Any], path: Path, validate: Callable[[str], str | None]) -> Iterator[Finding]:
    name, prefix = meta.get("name"), meta.get("generateName")
    if isinstance(prefix, str) and prefix and (err := names.name_prefix(validate, prefix)):
        yield _err((*path, "generateName"), "k8s-name", f"generateName {prefix!r} {err}")
    if not name and not prefix:
        yield _err(path, "k8s-name", "name or generateName is required")
    elif isinstance(name, str) and name and (err := validate(name)):
        yield _err((*path, "name"), "k8s-name", f"name {name!r} {err}")


def check_derived_names(obj: dict[str, Any]) -> Iterator[Finding]:
    """An APIService's name is made of its spec: <version>.<group> (ValidateAPIService). A CRD's
    <plural>.<group> is checked with the rest of the CRD (crds.check_definition)."""
    kind, name, spec = obj.get("kind"), (obj.get("metadata") or {}).get("name"), obj.get("spec") or {}
    if kind == "APIService":
        want, rule = f"{spec.get('version')}.{spec.get('group') or ''}", 'spec.version+"."+spec.group'
    else:
        return
    if isinstance(name, str) and name != want:
        yield _err(("metadata", "name"), "k8s-name", f"name {name!r} must be {rule}: {want!r}")


# Priorities above this are reserved to the system-* classes (scheduling validation).
HIGHEST_USER_PRIORITY = 1_000_000_000


def check_priority_class(obj: dict[str, Any]) -> Iterator[Finding]:
    name, value = (obj.get("metadata") or {}).get("name"), obj.get("value")
    if isinstance(value, int) and value > HIGHEST_USER_PRIORITY and not str(name).startswith("system-"):
        yield _err(
            ("value",),
            "k8s-priority-class",
            f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
        )


# ---- pod-deletion-cost -------------------------------------------------------------------

_COST_FIRST = re.compile(r"^(-|[1-9])")


def parse_deletion_cost(value: str) -> int | None:
    """GetDeletionCostFromPodAnnotations: first char '-' or 1-9 (or exactly "0"), then base-10 int32."""
    if value != "0" and not _COST_FIRST.match(value):
        return None
    if not re.fullmatch(r"-?[0-9]+", value):
        return None
    number = int(value)
    return number if -(2**31) <= number < 2**31 else None


def check_pod_template_annotations(meta: Any, path: Path, owner: str) -> Iterator[Finding]:
    if not isinstance(meta, dict) or DELETION_COST not in (meta.get("annotations") or {}):
        return
    value = meta["annotations"][DELETION_COST]
    where = (*path, "annotations", DELETION_COST)
    if not isinstance(value, str) or parse_deletion_cost(value) is None:
        yield _err(
            where,
            "k8s-deletion-cost",
            f"pod-deletion-cost {value!r} must be a 32bit integer",
            "a base-10 signed int32 with no sign '+', no leading zeros, no spaces",
        )
    if owner not in ("Deployment", "ReplicaSet"):
        yield _warn(
            where,
            "deletion-cost-not-replicaset",
            f"pod-deletion-cost on a {owner}'s Pods has no effect: only the ReplicaSet controller reads it",
            "use a Deployment (ReplicatedService) or drop the annotation",
        )


# ---- pod spec ----------------------------------------------------------------------------


def _resource_name_error(name: str) -> str | None:
    """validateContainerResourceName: standard names, or a valid extended resource name."""
    if "/" not in name:
        if name in STANDARD_RESOURCES or name.startswith("hugepages-"):
            return None
        return "must be a standard resource for containers"
    if err := names.qualified_name(name):
        return err
    if not _is_extended(name):
        return "must be a standard resource for containers"
    if name.startswith("requests.") or names.qualified_name("requests." + name):
        return "doesn't follow extended resource name standard"
    return None


def _is_extended(name: str) -> bool:
    prefix = name.split("/")[0] if "/" in name else ""
    return bool(prefix) and not (prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"))


def check_resources(res: Any, path: Path) -> Iterator[Finding]:
    if not isinstance(res, dict):
        return
    parsed: dict[str, dict[str, Decimal]] = {"requests": {}, "limits": {}}
    for section in ("requests", "limits"):
        for name, raw in (res.get(section) or {}).items():
            where = (*path, section, name)
            if err := _resource_name_error(str(name)):
                yield _err(where, "k8s-resource-name", f"resource {name!r} {err}")
                continue
            value = parse_quantity(raw)
            if value is None:
                yield _err(where, "k8s-quantity", f"{raw!r} is not a valid quantity")
                continue
            if value < 0:
                yield _err(where, "k8s-quantity", f"{name} must be greater than or equal to 0")
                continue
            if (_is_extended(name) or name.startswith("hugepages-")) and value != value.to_integral_value():
                yield _err(where, "k8s-extended-resource-integer", f"{name} {raw!r} must be an integer")
                continue
            parsed[section][name] = value
    requests, limits = parsed["requests"], parsed["limits"]
    present = {*requests, *limits}
    if any(n.startswith("hugepages-") for n in present) and not present & {"cpu", "memory"}:
        yield _err(path, "k8s-hugepages", "HugePages require cpu or memory")
    for name, req in requests.items():
        if _is_extended(name) or name.startswith("hugepages-"):
            if name not in limits:
                yield _err(
                    (*path, "requests", name),
                    "k8s-extended-resource-limit",
                    f"Limit must be set for non overcommitable resources ({name})",
                    "set limits equal to requests (or only limits: requests default to them)",
                )
            elif limits[name] != req:
                yield _err(
                    (*path, "requests", name),
                    "k8s-extended-resource-limit",
                    f"must be equal to {name} limit of {limits[name]}",
                )
        elif name in limits and req > limits[name]:
            yield _err(
                (*path, "requests", name),
                "k8s-request-over-limit",
                f"{name} request must be less than or equal to {name} limit of {limits[name]}",
            )


_NODE_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


def check_node_selector_requirement(expr: Any, path: Path, required: bool) -> Iterator[Finding]:
    if not isinstance(expr, dict):
        return
    op, values, key = expr.get("operator"), expr.get("values") or [], expr.get("key", "")
    if err := names.qualified_name(str(key)):
        yield _err((*path, "key"), "k8s-node-selector", f"key {key!r}: {err}")
    if op not in _NODE_OPERATORS:
        yield _err((*path, "operator"), "k8s-node-selector", f"{op!r} is not a valid selector operator")
        return
    if op in ("In", "NotIn") and not values:
        yield _err((*path, "values"), "k8s-node-selector", "must be specified when `operator` is 'In' or 'NotIn'")
    if op in ("Exists", "DoesNotExist") and values:
        yield _err(
            (*path, "values"), "k8s-node-selector", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        )
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            yield _err(
                (*path, "values"), "k8s-node-selector", "must be specified single value when `operator` is 'Lt' or 'Gt'"
            )
        elif not re.fullmatch(r"[+-]?[0-9]+", str(values[0])) or not -(2**63) <= int(values[0]) < 2**63:
            # kube-apiserver accepts it; the scheduler cannot parse it, so the term matches no node:
            # a required term then never schedules the Pod (an error), a preferred one never applies
            yield Finding(
                (*path, "values", 0),
                "k8s-node-selector-integer",
                Severity.ERROR if required else Severity.WARNING,
                f"Gt/Lt value {values[0]!r} is not an integer: the scheduler cannot parse it, so the term matches "
                + ("no node and the Pod never schedules" if required else "no node"),
                "use an integer such as '40959'",
            )
    if required:
        for i, value in enumerate(values):
            if isinstance(value, str) and (err := names.label_value(value)):
                yield _err((*path, "values", i), "k8s-node-selector", f"value {value!r}: {err}")


def check_affinity(affinity: Any, path: Path) -> Iterator[Finding]:
    if not isinstance(affinity, dict):
        return
    node = affinity.get("nodeAffinity") or {}
    req = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict):
        terms = req.get("nodeSelectorTerms")
        rpath = (*path, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        if not terms:
            yield _err(rpath, "k8s-node-selector", "must have at least one node selector term")
        for t, term in enumerate(terms or []):
            for e, expr in enumerate((term or {}).get("matchExpressions") or []):
                yield from check_node_selector_requirement(expr, (*rpath, t, "matchExpressions", e), True)
            for e, field in enumerate((term or {}).get("matchFields") or []):
                fpath = (*rpath, t, "matchFields", e)
                if field.get("key") != "metadata.name":
                    yield _err((*fpath, "key"), "k8s-node-selector", "matchFields supports only metadata.name")
                if field.get("operator") not in ("In", "NotIn") or len(field.get("values") or []) != 1:
                    yield _err(fpath, "k8s-node-selector", "matchFields needs In/NotIn with exactly one value")
    for p, pref in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        ppath = (*path, "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", p)
        if not isinstance(pref.get("weight"), int) or not 1 <= pref["weight"] <= 100:
            yield _err((*ppath, "weight"), "k8s-affinity-weight", "must be in the range 1-100")
        for e, expr in enumerate((pref.get("preference") or {}).get("matchExpressions") or []):
            yield from check_node_selector_requirement(expr, (*ppath, "preference", "matchExpressions", e), False)
    for kind in ("podAffinity", "podAntiAffinity"):
        block = affinity.get(kind) or {}
        for p, pref in enumerate(block.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            w = pref.get("weight")
            if not isinstance(w, int) or not 1 <= w <= 100:
                yield _err(
                    (*path, kind, "preferredDuringSchedulingIgnoredDuringExecution", p, "weight"),
                    "k8s-affinity-weight",
                    "must be in the range 1-100",
                )


def check_pod_spec(spec: Any, path: Path, owner: str, claims: Iterable[str] = ()) -> Iterator[Finding]:
    """claims: a StatefulSet's volumeClaimTemplates, which its Pods mount as volumes."""
    if not isinstance(spec, dict):
        return
    policy = spec.get("restartPolicy")
    if owner in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") and policy not in (None, "Always"):
        yield _err((*path, "restartPolicy"), "k8s-restart-policy", f"{owner} Pods support only restartPolicy Always")
    if owner == "Pod" and policy not in (None, "Always", "OnFailure", "Never"):
        yield _err((*path, "restartPolicy"), "k8s-enum", f"Unsupported value: {policy!r}: Always, OnFailure or Never")
    dns = spec.get("dnsPolicy")
    if dns is not None and dns not in ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"):
        yield _err((*path, "dnsPolicy"), "k8s-enum", f"Unsupported value: {dns!r}")
    if owner == "Job" and policy not in ("Never", "OnFailure"):
        yield _err((*path, "restartPolicy"), "k8s-restart-policy", "a Job's Pods need restartPolicy Never or OnFailure")
    if owner in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") and "activeDeadlineSeconds" in spec:
        yield _err((*path, "activeDeadlineSeconds"), "k8s-restart-policy", f"not allowed in a {owner}'s Pod template")
    for field in ("serviceAccountName", "priorityClassName"):  # names of other objects: DNS-1123 subdomains
        ref = spec.get(field)
        if isinstance(ref, str) and ref and (err := names.dns1123_subdomain(ref)):
            yield _err((*path, field), "k8s-name", f"{field} {ref!r} {err}")
    seen: set[str] = set()
    volumes = {str(v.get("name")) for v in spec.get("volumes") or [] if isinstance(v, dict)} | set(claims)
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            cpath = (*path, group, i)
            if not isinstance(c, dict):
                continue
            yield from _check_container_refs(c, cpath, group, volumes)
            cname = str(c.get("name", ""))
            if err := names.dns1123_label(cname):
                yield _err((*cpath, "name"), "k8s-name", f"container name {cname!r} {err}")
            if cname in seen:
                yield _err((*cpath, "name"), "k8s-name", f"duplicate container name {cname!r}")
            seen.add(cname)
            port_names: set[str] = set()
            for j, port in enumerate(c.get("ports") or []):
                ppath = (*cpath, "ports", j)
                pname = port.get("name")
                if pname is not None:
                    if err := names.port_name(str(pname)):
                        yield _err((*ppath, "name"), "k8s-port-name", f"port name {pname!r} {err}")
                    if pname in port_names:
                        yield _err((*ppath, "name"), "k8s-port-name", f"duplicate port name {pname!r}")
                    port_names.add(pname)
                protocol = port.get("protocol")
                if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
                    yield _err((*ppath, "protocol"), "k8s-port", f"Unsupported value: {protocol!r}: TCP, UDP or SCTP")
                number = port.get("containerPort")
                if not isinstance(number, int) or not 1 <= number <= 65535:
                    yield _err((*ppath, "containerPort"), "k8s-port", "must be between 1 and 65535, inclusive")
            yield from check_resources(c.get("resources"), (*cpath, "resources"))
            if isinstance(c.get("readinessProbe"), dict) and "terminationGracePeriodSeconds" in c["readinessProbe"]:
                yield _err(
                    (*cpath, "readinessProbe", "terminationGracePeriodSeconds"),
                    "k8s-probe",
                    "must not be set for readinessProbes",
                )
            pull = c.get("imagePullPolicy")
            if pull is not None and pull not in ("Always", "IfNotPresent", "Never"):
                yield _err(
                    (*cpath, "imagePullPolicy"),
                    "k8s-enum",
                    f"Unsupported value: {pull!r}: Always, IfNotPresent or Never",
                )
            image = c.get("image")
            if owner == "Pod" and isinstance(image, str) and image != image.strip():
                yield _err((*cpath, "image"), "k8s-image", "must not have leading or trailing whitespace")
            yield from _check_container_security(c.get("securityContext"), (*cpath, "securityContext"))
    yield from check_affinity(spec.get("affinity"), (*path, "affinity"))
    for key, value in (spec.get("nodeSelector") or {}).items():  # ValidateLabels: no node could carry it
        problem = names.qualified_name(str(key)) or (names.label_value(value) if isinstance(value, str) else None)
        if problem:
            yield _err((*path, "nodeSelector", key), "k8s-node-selector", f"{key}={value}: {problem}")
    yield from check_tolerations(spec.get("tolerations"), (*path, "tolerations"))
    yield from check_pod_resources(spec, path)
    yield from check_host_ports(spec, path)
    yield from check_volumes(spec.get("volumes"), (*path, "volumes"))
    yield from _check_run_as_root(spec, path)


_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")


def _check_probes(c: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateProbe / validateHandler: exactly one handler; liveness and startup succeed once."""
    for field in ("readinessProbe", "livenessProbe", "startupProbe"):
        probe = c.get(field)
        if not isinstance(probe, dict):
            continue
        handlers = [h for h in _HANDLERS if h in probe]
        if len(handlers) != 1:
            message = "must specify a handler type" if not handlers else "may not specify more than 1 handler type"
            yield _err((*path, field), "k8s-probe", message, "one of exec, httpGet, tcpSocket, grpc")
        if field != "readinessProbe" and probe.get("successThreshold", 1) != 1:
            yield _err((*path, field, "successThreshold"), "k8s-probe", "must be 1")


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


def _check_container_refs(c: dict[str, Any], path: Path, group: str, volumes: set[str]) -> Iterator[Finding]:
    """validateContainers / validateInitContainers / ValidateVolumeMounts / validateEnv: what a
    container refers to, and what only sidecars or only regular containers may set."""
    yield from _check_probes(c, path)
    image = c.get("image")
    if isinstance(image, str) and (why := image_tag_problem(image)):
        yield _warn(
            (*path, "image"),
            "image-tag",
            f"{why}: a rollout or a rescheduled Pod may run other code than was reviewed",
            "pin a version tag, or a digest (@sha256:...)",
        )
    mount_paths: set[Any] = set()
    for j, mount in enumerate(c.get("volumeMounts") or []):
        if not isinstance(mount, dict):
            continue
        if mount.get("name") not in volumes:
            yield _err(
                (*path, "volumeMounts", j, "name"),
                "k8s-volume-mount",
                f"volumeMount {mount.get('name')!r} names no volume of the Pod",
                "add it to the Pod's volumes (spec.pod.volumes in a policy)",
            )
        target = mount.get("mountPath")
        if target in mount_paths:
            yield _err(
                (*path, "volumeMounts", j, "mountPath"), "k8s-volume-mount", f"mountPath {target!r} must be unique"
            )
        mount_paths.add(target)
        sub = mount.get("subPath")
        if isinstance(sub, str) and (sub.startswith("/") or ".." in sub.split("/")):
            yield _err(
                (*path, "volumeMounts", j, "subPath"), "k8s-volume-mount", "must be a relative path without '..'"
            )
    for j, var in enumerate(c.get("env") or []):
        if not isinstance(var, dict):
            continue
        if var.get("value") and var.get("valueFrom") is not None:
            yield _err(
                (*path, "env", j, "valueFrom"),
                "k8s-env",
                "may not be specified when `value` is not empty",
                "keep value or valueFrom",
            )
        sources = [k for k in (var.get("valueFrom") or {}) if k in _ENV_SOURCES]
        if var.get("valueFrom") is not None and len(sources) != 1:
            yield _err(
                (*path, "env", j, "valueFrom"),
                "k8s-env",
                "must specify exactly one of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef, fileKeyRef",
            )
    for j, source in enumerate(c.get("envFrom") or []):
        if isinstance(source, dict) and ("configMapRef" in source) == ("secretRef" in source):
            yield _err((*path, "envFrom", j), "k8s-env", "must specify exactly one of configMapRef and secretRef")
    restart = c.get("restartPolicy")
    if group == "containers" and restart is not None:
        yield _err((*path, "restartPolicy"), "k8s-container", "may not be set for non-init containers")
    if group == "initContainers" and restart not in (None, "Always"):
        yield _err(
            (*path, "restartPolicy"),
            "k8s-container",
            "an init container's restartPolicy can only be Always (a sidecar)",
        )
    if group == "initContainers" and restart is None:
        for probe in ("readinessProbe", "livenessProbe", "startupProbe", "lifecycle"):
            if probe in c:
                yield _err(
                    (*path, probe),
                    "k8s-container",
                    "may not be set for init containers without restartPolicy Always",
                    "make it a sidecar (restartPolicy: Always) or drop it",
                )


_ENV_SOURCES = frozenset({"fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"})


_SYS_ADMIN = frozenset({"SYS_ADMIN", "CAP_SYS_ADMIN"})


def _check_container_security(ctx: Any, path: Path) -> Iterator[Finding]:
    """ValidateSecurityContext (pkg/apis/core/validation): combinations kube-apiserver refuses."""
    if not isinstance(ctx, dict) or ctx.get("allowPrivilegeEscalation") is not False:
        return
    if ctx.get("privileged") is True:
        yield _err(
            (*path, "allowPrivilegeEscalation"),
            "k8s-security-context",
            "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            "a privileged container escalates by definition: drop one of the two",
        )
    added = ctx["capabilities"].get("add") or [] if isinstance(ctx.get("capabilities"), dict) else []
    if _SYS_ADMIN & set(map(str, added)):
        yield _err(
            (*path, "allowPrivilegeEscalation"),
            "k8s-security-context",
            "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            "CAP_SYS_ADMIN allows escalation: drop one of the two",
        )


def _check_run_as_root(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """The kubelet refuses to start a container that must not run as root but is told to run as
    user 0 (container settings over the Pod's): the Pod never runs."""
    pod: dict[str, Any] = spec["securityContext"] if isinstance(spec.get("securityContext"), dict) else {}
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            ctx = (c.get("securityContext") if isinstance(c, dict) else None) or {}
            if not isinstance(ctx, dict):
                continue
            non_root = ctx.get("runAsNonRoot", pod.get("runAsNonRoot"))
            user = ctx.get("runAsUser", pod.get("runAsUser"))
            if non_root is True and user == 0:
                at = (*path, group, i, "securityContext") if "runAsUser" in ctx else (*path, "securityContext")
                yield _err(
                    (*at, "runAsUser"),
                    "k8s-security-context",
                    f"container {c.get('name')!s} runs as user 0 with runAsNonRoot: the kubelet refuses to start it",
                    "run as a non-zero user, or drop runAsNonRoot if it must run as root",
                )


_RBAC_GROUP = "rbac.authorization.k8s.io"


def check_rbac(obj: dict[str, Any]) -> Iterator[Finding]:
    """ValidateRole / ValidateRoleBinding (pkg/apis/rbac/validation), and wildcard rules: valid,
    and never least privilege."""
    kind = obj.get("kind")
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        yield from _check_binding(obj, namespaced=kind == "RoleBinding")
    if kind not in ("Role", "ClusterRole"):
        return
    for i, rule in enumerate(obj.get("rules") or []):
        rule = rule or {}
        if not rule.get("verbs"):
            yield _err(("rules", i, "verbs"), "k8s-rbac", "verbs must contain at least one value")
        if rule.get("nonResourceURLs"):
            if kind == "Role":
                yield _err(
                    ("rules", i, "nonResourceURLs"), "k8s-rbac", "namespaced rules cannot apply to non-resource URLs"
                )
            if rule.get("apiGroups") or rule.get("resources"):
                yield _err(
                    ("rules", i, "nonResourceURLs"),
                    "k8s-rbac",
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
        else:
            for field in ("apiGroups", "resources"):
                if not rule.get(field):
                    yield _err(("rules", i, field), "k8s-rbac", f"resource rules must supply at least one {field[:-1]}")
    for i, rule in enumerate(obj.get("rules") or []):
        for field in ("apiGroups", "resources", "verbs", "nonResourceURLs"):
            if "*" in ((rule or {}).get(field) or []):
                yield _warn(
                    ("rules", i, field),
                    "rbac-wildcard",
                    f"{field} '*' grants everything, now and later",
                    "list what is needed",
                )


def _check_binding(obj: dict[str, Any], namespaced: bool) -> Iterator[Finding]:
    ref = obj.get("roleRef") or {}
    if ref.get("apiGroup") != _RBAC_GROUP:
        yield _err(("roleRef", "apiGroup"), "k8s-rbac", f"must be {_RBAC_GROUP!r}")
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        yield _err(("roleRef", "kind"), "k8s-rbac", f"must be {' or '.join(kinds)}")
    name = ref.get("name")
    if not name:
        yield _err(("roleRef", "name"), "k8s-rbac", "the role's name is required")
    elif isinstance(name, str) and (err := names.path_segment(name)):
        yield _err(("roleRef", "name"), "k8s-name", f"role name {name!r} {err}")
    for i, subject in enumerate(obj.get("subjects") or []):
        yield from _check_subject(subject or {}, ("subjects", i), namespaced)


def _check_subject(subject: dict[str, Any], path: Path, namespaced: bool) -> Iterator[Finding]:
    kind, name, group = subject.get("kind"), subject.get("name"), subject.get("apiGroup", "")
    if not name:
        yield _err((*path, "name"), "k8s-rbac", "a subject's name is required")
    if kind == "ServiceAccount":
        if isinstance(name, str) and name and (err := names.dns1123_subdomain(name)):
            yield _err((*path, "name"), "k8s-name", f"service account name {name!r} {err}")
        if group:
            yield _err((*path, "apiGroup"), "k8s-rbac", "must be empty for a ServiceAccount")
        if not namespaced and not subject.get("namespace"):
            yield _err(
                (*path, "namespace"), "k8s-rbac", "a ServiceAccount subject of a ClusterRoleBinding needs a namespace"
            )
    elif kind in ("User", "Group"):
        # SetDefaults_Subject (rbac/v1) fills an empty apiGroup in before validation
        if (group or _RBAC_GROUP) != _RBAC_GROUP:
            yield _err((*path, "apiGroup"), "k8s-rbac", f"must be {_RBAC_GROUP!r} for a {kind}")
    else:
        yield _err((*path, "kind"), "k8s-rbac", "must be ServiceAccount, User or Group")


_TOLERATION_EFFECTS = frozenset({"", "NoSchedule", "PreferNoSchedule", "NoExecute"})


def check_tolerations(tolerations: Any, path: Path) -> Iterator[Finding]:
    """validateTolerations: keys, operator/value pairs, effects, tolerationSeconds."""
    for i, tol in enumerate(tolerations or []):
        if not isinstance(tol, dict):
            continue
        tpath = (*path, i)
        key, op, value = tol.get("key") or "", tol.get("operator") or "", tol.get("value") or ""
        if key and (err := names.qualified_name(str(key))):
            yield _err((*tpath, "key"), "k8s-toleration", f"key {key!r}: {err}")
        if not key and op != "Exists":
            yield _err(
                (*tpath, "operator"),
                "k8s-toleration",
                "operator must be Exists when `key` is empty, which means 'match all values and all keys'",
            )
        if op in ("", "Equal"):
            if err := names.label_value(str(value)):
                yield _err((*tpath, "value"), "k8s-toleration", f"value {value!r}: {err}")
        elif op == "Exists":
            if value:
                yield _err((*tpath, "value"), "k8s-toleration", "value must be empty when `operator` is 'Exists'")
        else:
            yield _err(
                (*tpath, "operator"), "k8s-toleration", f"Unsupported value: {op!r}: supported values: Equal, Exists"
            )
        effect = tol.get("effect") or ""
        if effect not in _TOLERATION_EFFECTS:
            yield _err((*tpath, "effect"), "k8s-toleration", f"Unsupported value: {effect!r}")
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            yield _err(
                (*tpath, "effect"), "k8s-toleration", "effect must be 'NoExecute' when `tolerationSeconds` is set"
            )


_POD_LEVEL = ("cpu", "memory")


def check_pod_resources(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """Pod-level spec.resources (PodLevelResources, on since 1.34)."""
    res = spec.get("resources")
    if not isinstance(res, dict):
        return
    rpath = (*path, "resources")
    if res.get("claims"):
        yield _err((*rpath, "claims"), "k8s-pod-resources", "claims may not be set at the pod level")
    pod: dict[str, dict[str, Decimal]] = {"requests": {}, "limits": {}}
    for section in ("requests", "limits"):
        for name, raw in (res.get(section) or {}).items():
            if name not in _POD_LEVEL and not str(name).startswith("hugepages-"):
                yield _err(
                    (*rpath, section, name),
                    "k8s-pod-resources",
                    f"Unsupported value: {name!r}: supported values: cpu, memory, hugepages-*",
                    "extended resources such as GPUs are requested per container",
                )
                continue
            value = parse_quantity(raw)
            if value is None or value < 0:
                yield _err((*rpath, section, name), "k8s-quantity", f"{raw!r} is not a valid non-negative quantity")
                continue
            pod[section][name] = value
    for name, req in pod["requests"].items():
        if name in pod["limits"] and req > pod["limits"][name]:
            yield _err((*rpath, "requests", name), "k8s-request-over-limit", f"{name} request must be <= pod limit")
    total: dict[str, Decimal] = {}
    containers = [(g, i, c) for g in ("initContainers", "containers") for i, c in enumerate(spec.get(g) or [])]
    for group, i, c in containers:
        cres = (c or {}).get("resources") or {} if isinstance(c, dict) else {}
        counted = group == "containers" or (isinstance(c, dict) and c.get("restartPolicy") == "Always")
        for name in _POD_LEVEL:
            wanted = parse_quantity((cres.get("requests") or {}).get(name))
            lim = parse_quantity((cres.get("limits") or {}).get(name))
            if counted and wanted is not None:
                total[name] = total.get(name, Decimal(0)) + wanted
            if lim is not None and name in pod["limits"] and lim > pod["limits"][name]:
                yield _err(
                    (*path, group, i, "resources", "limits", name),
                    "k8s-pod-resources",
                    f"container {name} limit must be less than or equal to the pod-level limit",
                )
    for name, req in pod["requests"].items():
        if name in total and total[name] > req:
            yield _err(
                (*rpath, "requests", name),
                "k8s-pod-resources",
                f"pod-level {name} request must be greater than or equal to the aggregate container requests",
            )


def check_host_ports(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """Host ports: equal to containerPort under hostNetwork, and unique per protocol/hostIP/port."""
    seen: set[str] = set()
    for i, c in enumerate(spec.get("containers") or []):
        for j, port in enumerate((c or {}).get("ports") or [] if isinstance(c, dict) else []):
            if not isinstance(port, dict):
                continue
            ppath = (*path, "containers", i, "ports", j, "hostPort")
            host = port.get("hostPort") or 0
            if spec.get("hostNetwork") is True and host not in (0, port.get("containerPort")):
                yield _err(ppath, "k8s-port", "must match `containerPort` when `hostNetwork` is true")
            if host:
                key = f"{port.get('protocol') or 'TCP'}/{port.get('hostIP') or ''}/{host}"
                if key in seen:
                    yield _err(ppath, "k8s-port", f"Duplicate value: {key!r}")
                seen.add(key)


def check_volumes(volumes: Any, path: Path) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, volume in enumerate(volumes or []):
        name = str((volume or {}).get("name", "")) if isinstance(volume, dict) else ""
        sources = [key for key in volume or {} if key != "name"] if isinstance(volume, dict) else []
        if len(sources) != 1:  # validateVolumeSource
            message = "must specify a volume type" if not sources else "may not specify more than 1 volume type"
            yield _err((*path, i), "k8s-volume", message, f"found: {', '.join(sources)}" if sources else "")
        if err := names.dns1123_label(name):
            yield _err((*path, i, "name"), "k8s-name", f"volume name {name!r} {err}")
        elif name in seen:
            yield _err((*path, i, "name"), "k8s-name", f"Duplicate value: volume {name!r}")
        seen.add(name)


# ---- workloads ---------------------------------------------------------------------------

_TEMPLATE_OWNERS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"}


def _selector_matches(selector: Any, labels: dict[str, str]) -> bool:
    if not isinstance(selector, dict):
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if (
            (op == "In" and (not present or labels[key] not in values))
            or (op == "NotIn" and present and labels[key] in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True


def check_workload(obj: dict[str, Any]) -> Iterator[Finding]:
    kind = obj.get("kind")
    meta = obj.get("metadata")
    meta_annotations = meta.get("annotations") if isinstance(meta, dict) else None  # unknown kinds are unchecked
    if kind != "Pod" and isinstance(meta_annotations, dict) and DELETION_COST in meta_annotations:
        yield _warn(
            ("metadata", "annotations", DELETION_COST),
            "deletion-cost-on-owner",
            f"pod-deletion-cost on the {kind}'s own metadata has no effect",
            "put it in spec.template.metadata.annotations",
        )
    if kind == "Pod":
        yield from check_pod_template_annotations(obj.get("metadata"), ("metadata",), "Pod")
        yield from check_pod_spec(obj.get("spec"), ("spec",), "Pod")
        return
    spec = obj.get("spec") or {}
    if kind == "CronJob":
        tpath: Path = ("spec", "jobTemplate", "spec", "template")
        owner = "Job"
    elif kind in _TEMPLATE_OWNERS:
        tpath, owner = ("spec", "template"), str(kind)
    else:
        return
    template = at_path(obj, tpath) or {}
    yield from check_metadata(obj, (*tpath, "metadata"))
    yield from check_pod_template_annotations(template.get("metadata"), (*tpath, "metadata"), owner)
    claims = [
        str((claim.get("metadata") or {}).get("name"))
        for claim in (spec.get("volumeClaimTemplates") or [] if kind == "StatefulSet" else [])
        if isinstance(claim, dict)
    ]
    yield from check_pod_spec(template.get("spec"), (*tpath, "spec"), owner, claims)
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        selector = spec.get("selector")
        labels = (template.get("metadata") or {}).get("labels") or {}
        if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
            yield _err(("spec", "selector"), "k8s-selector", f"empty selector is invalid for {kind.lower()}")
        elif not _selector_matches(selector, labels):
            yield _err(("spec", "selector"), "k8s-selector", "`selector` does not match template `labels`")
    if kind == "Deployment":
        yield from _check_deployment(spec)


def _check_deployment(spec: dict[str, Any]) -> Iterator[Finding]:
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        yield _err(("spec", "replicas"), "k8s-deployment", "must be greater than or equal to 0")
    strategy = spec.get("strategy") or {}
    if strategy.get("type") == "Recreate" and "rollingUpdate" in strategy:
        yield _err(
            ("spec", "strategy", "rollingUpdate"),
            "k8s-deployment",
            "may not be specified when strategy `type` is 'Recreate'",
        )
    ru = strategy.get("rollingUpdate") or {}
    values = {}
    for key in ("maxUnavailable", "maxSurge"):
        if key in ru:
            raw = ru[key]
            if isinstance(raw, str) and not re.fullmatch(r"[0-9]+%", raw):
                yield _err(
                    ("spec", "strategy", "rollingUpdate", key),
                    "k8s-deployment",
                    f"{raw!r} must be an integer or a percentage",
                )
            values[key] = int(raw.rstrip("%")) if isinstance(raw, str) and raw.rstrip("%").isdigit() else raw
            if isinstance(values[key], int) and values[key] < 0:
                yield _err(
                    ("spec", "strategy", "rollingUpdate", key), "k8s-deployment", "must be greater than or equal to 0"
                )
    unavailable = ru.get("maxUnavailable")
    if isinstance(unavailable, str) and unavailable.endswith("%") and values.get("maxUnavailable", 0) > 100:
        yield _err(
            ("spec", "strategy", "rollingUpdate", "maxUnavailable"), "k8s-deployment", "must not be greater than 100%"
        )
    for field in ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        if isinstance(spec.get(field), int) and spec[field] < 0:
            yield _err(("spec", field), "k8s-deployment", "must be greater than or equal to 0")
    if values.get("maxUnavailable") == 0 and values.get("maxSurge") == 0:
        yield _err(
            ("spec", "strategy", "rollingUpdate", "maxUnavailable"),
            "k8s-deployment",
            "may not be 0 when `maxSurge` is 0",
        )
    mrs, pds = spec.get("minReadySeconds", 0), spec.get("progressDeadlineSeconds")
    if isinstance(pds, int) and isinstance(mrs, int) and pds <= mrs:
        yield _err(("spec", "progressDeadlineSeconds"), "k8s-deployment", "must be greater than minReadySeconds")


# ---- HPA ---------------------------------------------------------------------------------


def _check_object_reference(ref: dict[str, Any], path: Path) -> Iterator[Finding]:
    """ValidateCrossVersionObjectReference: kind and name are required path segments."""
    for field in ("kind", "name"):
        segment = ref.get(field)
        if not segment:
            yield _err((*path, field), "k8s-hpa", f"{field} is required")
        elif err := names.path_segment(str(segment)):
            yield _err((*path, field), "k8s-hpa", f"{field} {segment!r} {err}")


def _check_metric_identifier(source: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateMetricIdentifier: a metric name goes into the metrics API's URL path."""
    if "describedObject" in source:
        yield from _check_object_reference(source.get("describedObject") or {}, (*path, "describedObject"))
    name = (source.get("metric") or {}).get("name")
    if not name:
        yield _err((*path, "metric", "name"), "k8s-hpa", "must specify a metric name")
    elif err := names.path_segment(str(name)):
        yield _err((*path, "metric", "name"), "k8s-hpa", f"metric name {name!r} {err}")


def check_hpa(obj: dict[str, Any]) -> Iterator[Finding]:
    spec = obj.get("spec") or {}
    lo, hi = spec.get("minReplicas", 1), spec.get("maxReplicas")
    if isinstance(lo, int) and lo < 1:
        yield _err(("spec", "minReplicas"), "k8s-hpa", "must be greater than or equal to 1")
    if isinstance(hi, int) and (hi < 1 or (isinstance(lo, int) and hi < lo)):
        yield _err(("spec", "maxReplicas"), "k8s-hpa", "must be greater than or equal to `minReplicas`")
    for m, metric in enumerate(spec.get("metrics") or []):
        mpath: Path = ("spec", "metrics", m)
        source = {
            "Resource": "resource",
            "ContainerResource": "containerResource",
            "Pods": "pods",
            "Object": "object",
            "External": "external",
        }.get(metric.get("type"))
        if source is None:
            yield _err((*mpath, "type"), "k8s-hpa", "must be Object, Pods, Resource, ContainerResource or External")
            continue
        populated = [k for k in ("resource", "containerResource", "pods", "object", "external") if k in metric]
        if source not in populated:
            yield _err(mpath, "k8s-hpa", "must populate information for the given metric source")
        if set(populated) - {source}:
            yield _err(mpath, "k8s-hpa", "must populate the given metric source only")
        target = (metric.get(source) or {}).get("target") or {}
        if target.get("type") not in ("Utilization", "Value", "AverageValue"):
            yield _err(
                (*mpath, source, "target", "type"), "k8s-hpa", "must be either Utilization, Value, or AverageValue"
            )
        util = target.get("averageUtilization")
        if util is not None and (not isinstance(util, int) or util < 1):
            yield _err((*mpath, source, "target", "averageUtilization"), "k8s-hpa", "must be greater than 0")
        if source in ("resource", "containerResource") and ("averageUtilization" in target) == (
            "averageValue" in target
        ):
            yield _err(
                (*mpath, source, "target"),
                "k8s-hpa",
                "must set either a target raw value or a target utilization, not both",
            )
        for field in ("value", "averageValue"):
            amount = parse_quantity(target[field]) if field in target else None
            if field in target and (amount is None or amount <= 0):
                yield _err((*mpath, source, "target", field), "k8s-hpa", "must be positive")
        if source == "pods" and "averageValue" not in target:
            yield _err(
                (*mpath, source, "target", "averageValue"), "k8s-hpa", "must specify a positive target averageValue"
            )
        if source in ("object", "external") and not ({"value", "averageValue"} & target.keys()):
            yield _err((*mpath, source, "target"), "k8s-hpa", "must set either a target value or averageValue")
        if source == "external" and {"value", "averageValue"} <= target.keys():
            yield _err((*mpath, source, "target"), "k8s-hpa", "may not set both a target value and averageValue")
        if source in ("object", "pods", "external"):
            yield from _check_metric_identifier(metric.get(source) or {}, (*mpath, source))
    yield from _check_object_reference(spec.get("scaleTargetRef") or {}, ("spec", "scaleTargetRef"))
    behavior = spec.get("behavior") or {}
    for direction in ("scaleUp", "scaleDown"):
        rules = behavior.get(direction)
        if not isinstance(rules, dict):
            continue
        bpath: Path = ("spec", "behavior", direction)
        window = rules.get("stabilizationWindowSeconds")
        if window is not None and not 0 <= window <= 3600:
            yield _err((*bpath, "stabilizationWindowSeconds"), "k8s-hpa-behavior", "must be between 0 and 3600")
        if rules.get("selectPolicy", "Max") not in ("Max", "Min", "Disabled"):
            yield _err((*bpath, "selectPolicy"), "k8s-hpa-behavior", "must be Max, Min or Disabled")
        if "policies" in rules and not rules["policies"]:
            yield _err((*bpath, "policies"), "k8s-hpa-behavior", "must specify at least one Policy")
        for p, pol in enumerate(rules.get("policies") or []):
            if pol.get("type") not in ("Pods", "Percent"):
                yield _err((*bpath, "policies", p, "type"), "k8s-hpa-behavior", "must be Pods or Percent")
            if not isinstance(pol.get("value"), int) or pol["value"] <= 0:
                yield _err((*bpath, "policies", p, "value"), "k8s-hpa-behavior", "must be greater than zero")
            period = pol.get("periodSeconds")
            if not isinstance(period, int) or not 1 <= period <= 1800:
                yield _err((*bpath, "policies", p, "periodSeconds"), "k8s-hpa-behavior", "must be between 1 and 1800")
        tol = rules.get("tolerance")
        if tol is not None and (parse_quantity(tol) or Decimal(0)) < 0:
            yield _err((*bpath, "tolerance"), "k8s-hpa-behavior", "must be greater than or equal to 0")
