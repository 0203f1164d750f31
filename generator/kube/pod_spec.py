"""kube-apiserver's rules for a Pod spec's own fields, beside its containers and volumes
(pkg/apis/core/validation: ValidatePodSpec's host namespaces, names, DNS, host aliases,
scheduling and readiness gates, OS, resource claims, the Pod's security context with its
sysctls, seccomp, AppArmor and Windows options; ValidatePodCreate; and the Pod-specific
annotations of ValidatePodSpecificAnnotations with their match against the fields).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Set
from typing import Any

from generator.kube import containers as containers_
from generator.kube import names
from generator.kube.findings import Finding, Path, error_at, unsupported
from generator.schema_messages import shown

MAX_ID = 2147483647  # IsValidUserID / IsValidGroupID: 0 to math.MaxInt32
CONTAINER_GROUPS = ("initContainers", "containers", "ephemeralContainers")  # podshelper.VisitContainersWithPath

MIRROR = "kubernetes.io/config.mirror"
SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER = "container.apparmor.security.beta.kubernetes.io/"
_LOCALHOST = "localhost/"
_POD_SPECIFIC = (MIRROR, SECCOMP_POD, SECCOMP_CONTAINER, APPARMOR_CONTAINER)


def containers(spec: dict[str, Any], path: Path) -> Iterator[tuple[dict[str, Any], Path]]:
    """Every container of every kind with its path, as VisitContainersWithPath walks them."""
    for group in CONTAINER_GROUPS:
        listed = spec.get(group)
        for i, container in enumerate(listed if isinstance(listed, list) else []):
            if isinstance(container, dict):
                yield container, (*path, group, i)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# ---- annotations -------------------------------------------------------------------------


def _seccomp_annotation_error(value: str) -> str | None:
    """ValidateSeccompProfile: the profiles the deprecated annotations could name."""
    if value in ("runtime/default", "docker/default", "unconfined"):
        return None
    if value.startswith(_LOCALHOST):
        return next(iter(names.local_descending_path_errors(value.removeprefix(_LOCALHOST))), None)
    return "must be a valid seccomp profile"


def check_pod_annotations(meta: Any, spec: Any, path: Path, spec_path: Path, is_pod: bool) -> Iterator[Finding]:
    """ValidatePodSpecificAnnotations (the mirror, seccomp and AppArmor annotations; the
    deletion cost and tolerations are pods.py's), then the annotations' match with the
    seccomp and AppArmor fields that ValidatePodCreate and ValidatePodTemplateSpec check
    (is_pod: a Pod, whose AppArmor annotations the Pod strategy first copies to fields)."""
    annotations = _mapping(_mapping(meta).get("annotations"))
    if not any(str(key).startswith(_POD_SPECIFIC) for key in annotations):
        return  # every check below starts from one of these annotations
    spec = _mapping(spec)
    where = (*path, "annotations")
    if MIRROR in annotations and not spec.get("nodeName"):
        yield error_at(
            (*where, MIRROR),
            "k8s-pod-spec",
            "must set spec.nodeName if mirror pod annotation is set",
            "the kubelet creates mirror Pods for its static Pods; drop the annotation",
        )
    names_here = {str(c.get("name")) for c, _ in containers(spec, spec_path)}
    for key, value in annotations.items():
        key, text = str(key), str(value)
        if key == SECCOMP_POD or key.startswith(SECCOMP_CONTAINER):
            if why := _seccomp_annotation_error(text):
                yield error_at(
                    (*where, key),
                    "k8s-seccomp",
                    f"{shown(text)}: {why}",
                    "runtime/default, unconfined or localhost/<profile>; better, securityContext.seccompProfile",
                )
        elif key.startswith(APPARMOR_CONTAINER):
            if key.removeprefix(APPARMOR_CONTAINER) not in names_here:
                yield error_at(
                    (*where, key), "k8s-apparmor", f"container {key.removeprefix(APPARMOR_CONTAINER)!r} not found"
                )
            if text not in ("", "runtime/default", "unconfined") and not text.startswith(_LOCALHOST):
                yield error_at(
                    (*where, key),
                    "k8s-apparmor",
                    f"invalid AppArmor profile name: {shown(text)}",
                    "runtime/default, unconfined or localhost/<profile>; better, securityContext.appArmorProfile",
                )
    yield from _seccomp_annotations_match(annotations, spec, spec_path)
    yield from _apparmor_annotations_match(annotations, spec, spec_path, is_pod)


def _profile_match(
    annotation: str, profile: dict[str, Any], path: Path, kind: str, allowed: dict[str, tuple[str, ...]]
) -> Iterator[Finding]:
    """validateSeccompAnnotationsAndFieldsMatch / validateAppArmorAnnotationsAndFieldsMatchOnCreate."""
    rule = f"k8s-{kind.lower()}"
    kind_type = profile.get("type")
    if kind_type in allowed and annotation not in allowed[kind_type]:
        yield error_at((*path, "type"), rule, f"{kind} type in annotation and field must match")
    elif kind_type == "Localhost":
        if not annotation.startswith(_LOCALHOST):
            yield error_at((*path, "type"), rule, f"{kind} type in annotation and field must match")
        elif annotation.removeprefix(_LOCALHOST) != profile.get("localhostProfile"):
            yield error_at((*path, "localhostProfile"), rule, f"{kind} profile in annotation and field must match")


_SECCOMP_NAMES: dict[str, tuple[str, ...]] = {
    "Unconfined": ("unconfined",),
    "RuntimeDefault": ("runtime/default", "docker/default"),
}
_APPARMOR_NAMES: dict[str, tuple[str, ...]] = {"Unconfined": ("unconfined",), "RuntimeDefault": ("runtime/default",)}


def _seccomp_annotations_match(annotations: dict[str, Any], spec: dict[str, Any], spec_path: Path) -> Iterator[Finding]:
    pod_profile = _mapping(_mapping(spec.get("securityContext")).get("seccompProfile"))
    if pod_profile and SECCOMP_POD in annotations:
        at = (*spec_path, "securityContext", "seccompProfile")
        yield from _profile_match(str(annotations[SECCOMP_POD]), pod_profile, at, "seccomp", _SECCOMP_NAMES)
    for container, at in containers(spec, spec_path):
        profile = _mapping(_mapping(container.get("securityContext")).get("seccompProfile"))
        key = SECCOMP_CONTAINER + str(container.get("name"))
        if profile and key in annotations:
            where = (*at, "securityContext", "seccompProfile")
            yield from _profile_match(str(annotations[key]), profile, where, "seccomp", _SECCOMP_NAMES)


def _apparmor_field(annotation: str) -> bool:
    """Whether ApparmorFieldForAnnotation makes a valid appArmorProfile of an annotation."""
    if annotation in ("runtime/default", "unconfined"):
        return True
    local = annotation.removeprefix(_LOCALHOST)
    return annotation.startswith(_LOCALHOST) and bool(local) and local.strip() == local and len(local) <= 4095


def _apparmor_annotations_match(
    annotations: dict[str, Any], spec: dict[str, Any], spec_path: Path, is_pod: bool
) -> Iterator[Finding]:
    if _mapping(spec.get("os")).get("name") == "windows":
        return
    pod_profile = _mapping(_mapping(spec.get("securityContext")).get("appArmorProfile"))
    for container, at in containers(spec, spec_path):
        own = _mapping(_mapping(container.get("securityContext")).get("appArmorProfile"))
        key = APPARMOR_CONTAINER + str(container.get("name"))
        if is_pod and not own and _apparmor_field(str(annotations.get(key, ""))):
            continue  # applyAppArmorVersionSkew gives the container the annotation's profile
        profile = own or pod_profile
        if profile and key in annotations:
            where = (*at, "securityContext", "appArmorProfile")
            yield from _profile_match(str(annotations[key]), profile, where, "AppArmor", _APPARMOR_NAMES)


# ---- ValidatePodCreate -------------------------------------------------------------------


def check_pod_create(spec: Any, path: Path) -> Iterator[Finding]:
    """ValidatePodCreate beside its ephemeral containers (containers.py's): a Pod is not
    created on a node while its scheduling gates remain."""
    spec = _mapping(spec)
    if spec.get("nodeName") and spec.get("schedulingGates"):
        yield error_at(
            (*path, "nodeName"),
            "k8s-pod-spec",
            "cannot be set until all schedulingGates have been cleared",
            "drop nodeName, or the schedulingGates",
        )


# ---- ValidatePodSpec's own fields ---------------------------------------------------------


def check_spec_fields(spec: Any, path: Path, owner: str, gates: Set[str]) -> Iterator[Finding]:
    """ValidatePodSpec's fields beside containers, volumes, affinity, tolerations, topology
    spread and pod-level resources (those are pods.py's); owner: the Pod's or template's kind;
    gates: as containers.check_containers takes them. Each check runs only where its fields are
    set: most specs set none of them."""
    if not isinstance(spec, dict):
        return
    present = spec.keys() & _CHECKED_FIELDS
    if present & {"hostUsers", "shareProcessNamespace"}:
        yield from _host_namespaces(spec, path)
    if present & {"nodeName", "hostname", "subdomain", "runtimeClassName"}:
        yield from _names(spec, path)
    deadline = spec.get("activeDeadlineSeconds")
    if owner in ("Pod", "Job", "PodTemplate") and isinstance(deadline, int) and not 1 <= deadline <= MAX_ID:
        yield error_at((*path, "activeDeadlineSeconds"), "k8s-pod-spec", f"must be between 1 and {MAX_ID}, inclusive")
    if spec.get("preemptionPolicy") == "":
        yield error_at(
            (*path, "preemptionPolicy"),
            "k8s-pod-spec",
            "Required value",
            "PreemptLowerPriority or Never, or leave it out",
        )
    if present & {"readinessGates", "schedulingGates"}:
        yield from _gates(spec, path)
    if present & {"dnsPolicy", "dnsConfig"}:
        yield from _dns_config(spec, path)
    if "hostAliases" in present:
        yield from _host_aliases(spec["hostAliases"], (*path, "hostAliases"))
    if "resourceClaims" in present:
        yield from _resource_claims(spec["resourceClaims"], (*path, "resourceClaims"))
    if "securityContext" in present:
        yield from check_pod_security_context(spec, path)
    yield from _host_process(spec, path, gates)
    if "os" in present:
        yield from _os(spec, path)


_CHECKED_FIELDS = frozenset(
    {
        "hostUsers",
        "shareProcessNamespace",
        "nodeName",
        "hostname",
        "subdomain",
        "runtimeClassName",
        "readinessGates",
        "schedulingGates",
        "dnsPolicy",
        "dnsConfig",
        "hostAliases",
        "resourceClaims",
        "securityContext",
        "os",
    }
)


def _host_namespaces(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateHostUsers: a user namespace shares none of the host's; and ShareProcessNamespace
    beside HostPID (validatePodSpecSecurityContext)."""
    if spec.get("hostUsers") is False:
        for field in ("hostNetwork", "hostPID", "hostIPC"):
            if spec.get(field) is True:
                yield error_at(
                    (*path, field),
                    "k8s-pod-spec",
                    "Forbidden: when `pod.Spec.HostUsers` is false",
                    "a Pod in its own user namespace cannot share the host's namespaces: drop one of the two",
                )
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        yield error_at(
            (*path, "shareProcessNamespace"),
            "k8s-pod-spec",
            "ShareProcessNamespace and HostPID cannot both be enabled",
        )


def _names(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """The names ValidatePodSpec checks beside serviceAccountName and priorityClassName."""
    checks = (
        ("nodeName", names.dns1123_subdomain, False),
        ("hostname", names.dns1123_label, False),
        ("subdomain", names.dns1123_label, False),
        ("runtimeClassName", names.dns1123_subdomain, True),  # a pointer: an empty string is a name too
    )
    for field, validate, empty_counts in checks:
        value = spec.get(field)
        if (
            isinstance(value, str)
            and (value or empty_counts)
            and (err := validate(value) if value else "must be non-empty")
        ):
            yield error_at((*path, field), "k8s-name", f"{field} {shown(value)} {err}")


def _gates(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateReadinessGates and validateSchedulingGates: qualified names, no gate twice."""
    gates = spec.get("readinessGates")
    for i, gate in enumerate(gates if isinstance(gates, list) else []):
        condition = _mapping(gate).get("conditionType")
        if isinstance(condition, str) and (err := names.qualified_name(condition)):
            yield error_at((*path, "readinessGates", i, "conditionType"), "k8s-pod-spec", f"{shown(condition)}: {err}")
    seen: set[str] = set()
    gates = spec.get("schedulingGates")
    for i, gate in enumerate(gates if isinstance(gates, list) else []):
        name = _mapping(gate).get("name")
        if not isinstance(name, str):
            continue
        if err := names.qualified_name(name):
            yield error_at((*path, "schedulingGates", i, "name"), "k8s-pod-spec", f"{shown(name)}: {err}")
        if name in seen:
            yield error_at((*path, "schedulingGates", i, "name"), "k8s-pod-spec", f"Duplicate value: {shown(name)}")
        seen.add(name)


MAX_NAMESERVERS, MAX_SEARCHES, MAX_SEARCH_CHARS = 3, 32, 2048
_SUBDOMAIN_WITH_UNDERSCORE = re.compile(r"[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?(\.[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?)*\Z")


def _dns_config(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validatePodDNSConfig, with the relaxed search names RelaxedDNSSearchValidation allows
    (GA in 1.34: underscores, and a lone '.')."""
    rule, at = "k8s-dns-config", (*path, "dnsConfig")
    config = spec.get("dnsConfig")
    if spec.get("dnsPolicy") == "None":
        if not isinstance(config, dict):
            yield error_at(at, rule, "Required value: must provide `dnsConfig` when `dnsPolicy` is None")
            return
        if not config.get("nameservers"):
            yield error_at(
                (*at, "nameservers"),
                rule,
                "Required value: must provide at least one DNS nameserver when `dnsPolicy` is None",
            )
            return
    if not isinstance(config, dict):
        return
    servers = config.get("nameservers") or []
    if len(servers) > MAX_NAMESERVERS:
        yield error_at((*at, "nameservers"), rule, f"must not have more than {MAX_NAMESERVERS} nameservers")
    for i, server in enumerate(servers):
        if names.ip_sloppy(str(server)) is None:
            yield error_at((*at, "nameservers", i), rule, f"{shown(server)}: must be a valid IP address")
    searches = [str(s) for s in config.get("searches") or []]
    if len(searches) > MAX_SEARCHES:
        yield error_at((*at, "searches"), rule, f"must not have more than {MAX_SEARCHES} search paths")
    if len(" ".join(searches)) > MAX_SEARCH_CHARS:
        yield error_at(
            (*at, "searches"),
            rule,
            f"must not have more than {MAX_SEARCH_CHARS} characters (including spaces) in the search list",
        )
    for i, search in enumerate(searches):
        name = search.removesuffix(".")
        if search != "." and (len(name) > 253 or not _SUBDOMAIN_WITH_UNDERSCORE.match(name)):
            yield error_at(
                (*at, "searches", i),
                rule,
                f"{shown(search)}: must be a DNS-1123 subdomain (lower-case alphanumerics, '-', '_' and '.')",
            )
    for i, option in enumerate(config.get("options") or []):
        if not _mapping(option).get("name"):
            yield error_at((*at, "options", i), rule, "Required value: must not be empty", "an option needs a name")


def _host_aliases(aliases: Any, path: Path) -> Iterator[Finding]:
    """ValidateHostAliases: each an IP and DNS-1123 subdomain host names."""
    for i, alias in enumerate(aliases if isinstance(aliases, list) else []):
        alias = _mapping(alias)
        if names.ip_sloppy(str(alias.get("ip", ""))) is None:
            yield error_at(
                (*path, i, "ip"), "k8s-pod-spec", f"{shown(alias.get('ip', ''))}: must be a valid IP address"
            )
        for j, host in enumerate(alias.get("hostnames") or []):
            if err := names.dns1123_subdomain(str(host)):
                yield error_at((*path, i, "hostnames", j), "k8s-name", f"host name {shown(host)} {err}")


def _resource_claims(claims: Any, path: Path) -> Iterator[Finding]:
    """validatePodResourceClaim: unique DNS-1123 label names, each naming exactly one of a
    ResourceClaim and a ResourceClaimTemplate by a DNS-1123 subdomain."""
    seen: set[str] = set()
    for i, claim in enumerate(claims if isinstance(claims, list) else []):
        claim = _mapping(claim)
        name = str(claim.get("name") or "")
        if not name:
            yield error_at((*path, i, "name"), "k8s-pod-spec", "Required value: a resource claim needs a name")
        elif name in seen:
            yield error_at((*path, i, "name"), "k8s-pod-spec", f"Duplicate value: {shown(name)}")
        elif err := names.dns1123_label(name):
            yield error_at((*path, i, "name"), "k8s-name", f"resource claim name {shown(name)} {err}")
        seen.add(name)
        refs = [field for field in ("resourceClaimName", "resourceClaimTemplateName") if claim.get(field) is not None]
        if len(refs) != 1:
            yield error_at(
                (*path, i),
                "k8s-pod-spec",
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
                if refs
                else "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )
        for field in refs:
            if err := names.dns1123_subdomain(str(claim[field])):
                yield error_at((*path, i, field), "k8s-name", f"{field} {shown(claim[field])} {err}")


def _os(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateOS, then validateLinux or validateWindows: what the other OS's fields may not be
    set for a Pod that names its OS."""
    os_ = spec.get("os")
    if not isinstance(os_, dict):
        return
    name = os_.get("name")
    if not name:
        yield error_at((*path, "os", "name"), "k8s-pod-spec", "Required value: cannot be empty", "linux or windows")
    elif name not in ("linux", "windows"):
        yield unsupported((*path, "os", "name"), "k8s-pod-spec", name, ("linux", "windows"))
    elif name == "linux":
        if "windowsOptions" in _mapping(spec.get("securityContext")):
            yield error_at(
                (*path, "securityContext", "windowsOptions"),
                "k8s-windows",
                "windows options cannot be set for a linux pod",
            )
    else:
        yield from _windows_pod(spec, path)


# validateWindows: the Linux-only fields of the Pod's security context, of the Pod, of a container's
_WINDOWS_FORBIDDEN_POD_CONTEXT = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "fsGroup",
    "fsGroupChangePolicy",
    "sysctls",
    "runAsUser",
    "runAsGroup",
    "supplementalGroups",
    "supplementalGroupsPolicy",
    "seLinuxChangePolicy",
)
_WINDOWS_FORBIDDEN_POD = ("hostUsers", "hostPID", "hostIPC", "shareProcessNamespace")
_WINDOWS_FORBIDDEN_CONTAINER = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
)


def _windows_pod(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    def forbidden(at: Path) -> Finding:
        return error_at(
            at, "k8s-windows", "cannot be set for a windows pod", "a Linux-only setting: drop it, or run on linux"
        )

    context = _mapping(spec.get("securityContext"))
    for field in _WINDOWS_FORBIDDEN_POD_CONTEXT:
        if context.get(field) is not None and not (field in ("sysctls", "supplementalGroups") and not context[field]):
            yield forbidden((*path, "securityContext", field))
    for field in _WINDOWS_FORBIDDEN_POD:
        if spec.get(field) is True or (field in ("hostUsers", "shareProcessNamespace") and spec.get(field) is not None):
            yield forbidden((*path, field))
    for container, at in containers(spec, path):
        context = _mapping(container.get("securityContext"))
        for field in _WINDOWS_FORBIDDEN_CONTAINER:
            if context.get(field) is not None:
                yield forbidden((*at, "securityContext", field))


def _host_process(spec: dict[str, Any], path: Path, gates: Set[str]) -> Iterator[Finding]:
    """validateWindowsHostProcessPod: hostProcess the same where the Pod and a container both
    set it, all containers HostProcess or none, HostProcess only with hostNetwork, and only
    where the clusters allow privileged containers (kube-apiserver's --allow-privileged)."""
    pod_value = _mapping(_mapping(spec.get("securityContext")).get("windowsOptions")).get("hostProcess")
    count, chosen = 0, []  # every container; those that set hostProcess, with their paths
    for group in CONTAINER_GROUPS:
        listed = spec.get(group)
        for i, container in enumerate(listed if isinstance(listed, list) else ()):
            count += 1
            context = container.get("securityContext") if isinstance(container, dict) else None
            if isinstance(context, dict) and isinstance(context.get("windowsOptions"), dict):
                value = context["windowsOptions"].get("hostProcess")
                if isinstance(value, bool):
                    chosen.append(((*path, group, i, "securityContext", "windowsOptions", "hostProcess"), value))
    if pod_value is None and not chosen:
        return
    for at, value in chosen:
        if isinstance(pod_value, bool) and value != pod_value:
            yield error_at(
                at,
                "k8s-windows",
                f"pod hostProcess value must be identical if both are specified, was {str(pod_value).lower()}",
            )
    host_process = sum(value for _, value in chosen)
    if pod_value is True:
        host_process += count - len(chosen)  # the containers that inherit it
    if not host_process:
        return
    if host_process != count:
        yield error_at(
            path,
            "k8s-windows",
            "If pod contains any hostProcess containers then all containers must be HostProcess containers",
        )
    if spec.get("hostNetwork") is not True:
        yield error_at(
            (*path, "hostNetwork"),
            "k8s-windows",
            "hostNetwork must be true if pod contains any hostProcess containers",
            "set hostNetwork: true",
        )
    if containers_.PRIVILEGED_DISALLOWED in gates:
        yield error_at(
            path,
            "k8s-windows",
            "Forbidden: hostProcess containers are disallowed by cluster policy",
            f"{containers_.DISALLOWED_BY_CLUSTER}: run the Pod without hostProcess, "
            "or set allowPrivileged: true where they allow it",
        )


# ---- validatePodSpecSecurityContext ------------------------------------------------------


def check_pod_security_context(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validatePodSpecSecurityContext: user and group IDs in range, sysctls, and the seccomp,
    AppArmor and Windows options, checked as a container's are (containers.py)."""
    context = spec.get("securityContext")
    if not isinstance(context, dict):
        return
    at = (*path, "securityContext")
    for field in ("fsGroup", "runAsUser", "runAsGroup"):
        value = context.get(field)
        if isinstance(value, int) and not 0 <= value <= MAX_ID:
            yield error_at((*at, field), "k8s-security-context", f"must be between 0 and {MAX_ID}, inclusive")
    for i, gid in enumerate(context.get("supplementalGroups") or []):
        if isinstance(gid, int) and not 0 <= gid <= MAX_ID:
            yield error_at(
                (*at, "supplementalGroups", i), "k8s-security-context", f"must be between 0 and {MAX_ID}, inclusive"
            )
    yield from _sysctls(context.get("sysctls"), spec, (*at, "sysctls"))
    yield from containers_.seccomp_profile(context.get("seccompProfile"), (*at, "seccompProfile"))
    yield from containers_.app_armor_profile(context.get("appArmorProfile"), (*at, "appArmorProfile"))
    if isinstance(context.get("windowsOptions"), dict):
        yield from containers_.windows_options(context["windowsOptions"], (*at, "windowsOptions"))


_SYSCTL = re.compile(r"([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?\Z")
# utilsysctl.GetNamespace: the sysctls of the IPC namespace; net.* is the network namespace's
_IPC_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "kernel.msgmax",
        "kernel.msgmnb",
        "kernel.msgmni",
        "kernel.sem",
        "kernel.shmall",
        "kernel.shmmax",
        "kernel.shmmni",
    }
)


def _sysctl_dotted(name: str) -> str:
    """utilsysctl.NormalizeName: a name whose first separator is '/' uses '/' and '.' swapped."""
    slash, dot = name.find("/"), name.find(".")
    if slash != -1 and (dot == -1 or slash < dot):
        return name.translate(str.maketrans("/.", "./"))
    return name


def _sysctls(sysctls: Any, spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """validateSysctls and ValidateHostSysctl: named, well-formed, each once, and none of a
    namespace the Pod shares with the host."""
    seen: set[str] = set()
    for i, sysctl in enumerate(sysctls if isinstance(sysctls, list) else []):
        name = str(_mapping(sysctl).get("name") or "")
        at = (*path, i, "name")
        if not name:
            yield error_at(at, "k8s-sysctl", "Required value: a sysctl needs a name")
        elif len(name) > 253 or not _SYSCTL.match(name):
            yield error_at(
                at, "k8s-sysctl", f"{shown(name)}: must have at most 253 characters and match regex {_SYSCTL.pattern}"
            )
        elif name in seen:
            yield error_at(at, "k8s-sysctl", f"Duplicate value: {shown(name)}")
        dotted = _sysctl_dotted(name)
        if spec.get("hostNetwork") is True and dotted.startswith("net."):
            yield error_at(at, "k8s-sysctl", f"{shown(name)}: may not be specified when 'hostNetwork' is true")
        elif spec.get("hostIPC") is True and (dotted in _IPC_SYSCTLS or dotted.startswith("fs.mqueue.")):
            yield error_at(at, "k8s-sysctl", f"{shown(name)}: may not be specified when 'hostIPC' is true")
        seen.add(name)
