"""Pod Security admission: the Pod Security Standards' checks, as k8s.io/pod-security-admission
defines them (policy/check_*.go), for the latest version of each check in Kubernetes 1.35.

A namespace labelled `pod-security.kubernetes.io/enforce: <level>` refuses Pods that fail a
check of that level or below; a Deployment's Pods are then never created. Each check keeps its
upstream ID, so a finding names it as `kubectl` and the audit log do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from generator.kube.scope import POD_SPEC_PATHS, at_path

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
LEVELS = {"privileged": 0, "baseline": 1, "restricted": 2}
Path = tuple[str | int, ...]

# check_capabilities_baseline.go: what baseline lets a container add
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# check_sysctls.go, the 1.32 set
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    }
)
# check_seLinuxOptions.go
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
# check_restrictedVolumes.go: the volume sources restricted allows
RESTRICTED_VOLUMES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)
# The checks gen reports as warnings where no enforce level is known: host access and privilege.
HOST_AND_PRIVILEGE = frozenset(
    {"hostNamespaces", "hostPathVolumes", "hostPorts", "privileged", "capabilities_baseline"}
)


@dataclass(frozen=True)
class Violation:
    check: str  # the upstream check ID
    level: str  # the lowest level that forbids it
    path: Path
    detail: str


def _containers(spec: dict[str, Any], path: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(spec.get(group) or []):
            if isinstance(c, dict):
                yield (*path, group, i), c


def _security(node: dict[str, Any]) -> dict[str, Any]:
    value = node.get("securityContext")
    return value if isinstance(value, dict) else {}


def pod_violations(spec: Any, meta: Any, path: Path) -> list[Violation]:
    """Every check the Pod (its spec at path) fails, baseline's and restricted's."""
    if not isinstance(spec, dict):
        return []
    found: list[Violation] = []
    pod_ctx = _security(spec)
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field) is True:
            found.append(Violation("hostNamespaces", "baseline", (*path, field), f"{field}=true"))
    for i, volume in enumerate(spec.get("volumes") or []):
        if not isinstance(volume, dict):
            continue
        if "hostPath" in volume:
            found.append(Violation("hostPathVolumes", "baseline", (*path, "volumes", i, "hostPath"), "hostPath volume"))
        sources = set(volume) - {"name"}
        if sources and not sources <= RESTRICTED_VOLUMES:
            kinds = ", ".join(sorted(sources - RESTRICTED_VOLUMES))
            found.append(Violation("restrictedVolumes", "restricted", (*path, "volumes", i), f"{kinds} volume"))
    for i, sysctl in enumerate(pod_ctx.get("sysctls") or []):
        if isinstance(sysctl, dict) and sysctl.get("name") not in SAFE_SYSCTLS:
            found.append(
                Violation(
                    "sysctls", "baseline", (*path, "securityContext", "sysctls", i), f"sysctl {sysctl.get('name')}"
                )
            )
    found += _selinux(pod_ctx.get("seLinuxOptions"), (*path, "securityContext", "seLinuxOptions"))
    found += _profile_baseline(pod_ctx, (*path, "securityContext"))
    if ((pod_ctx.get("windowsOptions") or {}).get("hostProcess")) is True:
        found.append(Violation("hostProcess", "baseline", (*path, "securityContext", "windowsOptions"), "hostProcess"))
    if pod_ctx.get("runAsUser") == 0:
        found.append(Violation("runAsUser", "restricted", (*path, "securityContext", "runAsUser"), "runAsUser=0"))
    for cpath, c in _containers(spec, path):
        found += _container_violations(c, cpath, pod_ctx, spec.get("hostUsers") is False)
    pod_seccomp = (pod_ctx.get("seccompProfile") or {}).get("type")
    unset_seccomp = [
        cpath for cpath, c in _containers(spec, path) if not (_security(c).get("seccompProfile") or {}).get("type")
    ]
    if pod_seccomp is None and unset_seccomp:
        found.append(
            Violation(
                "seccompProfile_restricted",
                "restricted",
                (*path, "securityContext"),
                "seccompProfile.type must be RuntimeDefault or Localhost, on the Pod or every container",
            )
        )
    unset_non_root = [cpath for cpath, c in _containers(spec, path) if _security(c).get("runAsNonRoot") is None]
    if pod_ctx.get("runAsNonRoot") is not True and unset_non_root:
        found.append(
            Violation(
                "runAsNonRoot",
                "restricted",
                (*path, "securityContext"),
                "runAsNonRoot must be true, on the Pod or every container",
            )
        )
    if pod_ctx.get("runAsNonRoot") is False:
        found.append(
            Violation("runAsNonRoot", "restricted", (*path, "securityContext", "runAsNonRoot"), "runAsNonRoot=false")
        )
    annotations = (meta or {}).get("annotations") if isinstance(meta, dict) else None
    for key, value in (annotations or {}).items():
        if str(key).startswith("container.apparmor.security.beta.kubernetes.io/") and not (
            value == "runtime/default" or str(value).startswith("localhost/")
        ):
            found.append(Violation("appArmorProfile", "baseline", ("metadata", "annotations", key), f"{key}={value}"))
    return found


def _selinux(options: Any, path: Path) -> list[Violation]:
    if not isinstance(options, dict):
        return []
    out = []
    if options.get("type", "") not in SELINUX_TYPES:
        out.append(Violation("seLinuxOptions", "baseline", (*path, "type"), f"type {options.get('type')}"))
    for field in ("user", "role"):
        if options.get(field):
            out.append(Violation("seLinuxOptions", "baseline", (*path, field), f"{field} {options[field]}"))
    return out


def _profile_baseline(ctx: dict[str, Any], path: Path) -> list[Violation]:
    out = []
    if (ctx.get("seccompProfile") or {}).get("type") == "Unconfined":
        out.append(Violation("seccompProfile_baseline", "baseline", (*path, "seccompProfile"), "Unconfined"))
    if (ctx.get("appArmorProfile") or {}).get("type") == "Unconfined":
        out.append(Violation("appArmorProfile", "baseline", (*path, "appArmorProfile"), "Unconfined"))
    return out


def _container_violations(c: dict[str, Any], path: Path, pod_ctx: dict[str, Any], user_ns: bool) -> list[Violation]:
    ctx = _security(c)
    at: Path = (*path, "securityContext")
    found = []
    if ctx.get("privileged") is True:
        found.append(Violation("privileged", "baseline", (*at, "privileged"), "privileged=true"))
    if ((ctx.get("windowsOptions") or {}).get("hostProcess")) is True:
        found.append(Violation("hostProcess", "baseline", (*at, "windowsOptions"), "hostProcess"))
    capabilities: dict[str, Any] = ctx["capabilities"] if isinstance(ctx.get("capabilities"), dict) else {}
    added = [str(cap) for cap in capabilities.get("add") or []]
    beyond = [cap for cap in added if cap not in BASELINE_CAPABILITIES]
    if beyond:
        found.append(Violation("capabilities_baseline", "baseline", (*at, "capabilities", "add"), ", ".join(beyond)))
    if "ALL" not in (capabilities.get("drop") or []):
        found.append(Violation("capabilities_restricted", "restricted", at, "capabilities.drop must include ALL"))
    if any(cap != "NET_BIND_SERVICE" for cap in added) and not beyond:
        found.append(
            Violation(
                "capabilities_restricted",
                "restricted",
                (*at, "capabilities", "add"),
                "only NET_BIND_SERVICE may be added",
            )
        )
    for j, port in enumerate(c.get("ports") or []):
        if isinstance(port, dict) and port.get("hostPort"):
            found.append(
                Violation("hostPorts", "baseline", (*path, "ports", j, "hostPort"), f"hostPort {port['hostPort']}")
            )
    if ctx.get("procMount") not in (None, "Default") and not user_ns:
        found.append(Violation("procMount", "baseline", (*at, "procMount"), f"procMount {ctx['procMount']}"))
    found += _selinux(ctx.get("seLinuxOptions"), (*at, "seLinuxOptions"))
    found += _profile_baseline(ctx, at)
    if ctx.get("allowPrivilegeEscalation") is True:
        found.append(
            Violation(
                "allowPrivilegeEscalation",
                "restricted",
                (*at, "allowPrivilegeEscalation"),
                "allowPrivilegeEscalation=true",
            )
        )
    elif ctx.get("allowPrivilegeEscalation") is None:
        found.append(Violation("allowPrivilegeEscalation", "restricted", at, "allowPrivilegeEscalation must be false"))
    if ctx.get("runAsNonRoot") is False:
        found.append(Violation("runAsNonRoot", "restricted", (*at, "runAsNonRoot"), "runAsNonRoot=false"))
    if ctx.get("runAsUser") == 0:
        found.append(Violation("runAsUser", "restricted", (*at, "runAsUser"), "runAsUser=0"))
    return found


def workload_violations(obj: dict[str, Any]) -> list[Violation]:
    """The checks the Pods of a workload object (Pod, Deployment, Job, CronJob, ...) fail."""
    kind = obj.get("kind")
    if kind not in POD_SPEC_PATHS:
        return []
    spec_path = POD_SPEC_PATHS[str(kind)]
    meta_path = (*spec_path[:-1], "metadata")
    found = pod_violations(at_path(obj, spec_path), at_path(obj, meta_path), spec_path)
    return [
        v
        if v.path[:2] != ("metadata", "annotations")
        else Violation(v.check, v.level, (*meta_path, *v.path[1:]), v.detail)
        for v in found
    ]


def enforced_level(namespace: dict[str, Any]) -> str | None:
    """The level a Namespace object enforces, if it names a valid one."""
    meta = namespace.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    level = labels.get(ENFORCE_LABEL) if isinstance(labels, dict) else None
    return level if level in LEVELS else None
