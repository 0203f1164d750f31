"""The Pod a workload policy describes: its Kubernetes fields merged with what gen guarantees.

A ReplicatedService carries Kubernetes' Container fields at spec level, a GpuWorkload under
spec.container, and both take PodSpec fields under spec.pod. gen lays them over its own:
restricted security contexts (overridable field by field), the GPU's required node affinity
(the policy's required terms are ANDed into it, never ORed beside it), placement rules, the
downward API variables a cost writer needs, the GPU resources.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from generator import schemas

# gen's restricted defaults (Pod Security "restricted"); a policy overrides them field by field.
RESTRICTED_POD = {
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "runAsGroup": 65532,
    "seccompProfile": {"type": "RuntimeDefault"},
}
RESTRICTED_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "capabilities": {"drop": ["ALL"]},
}
DOWNWARD_FIELDS = {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_UID": "metadata.uid"}
# The container fields gen writes first, in this order; the policy's other fields follow as written.
_LEADING = ("command", "args", "ports", "readinessProbe", "livenessProbe", "resources", "env")
_REQUIRED_TERMS = "requiredDuringSchedulingIgnoredDuringExecution"


@cache
def container_fields() -> frozenset[str]:
    """The names of Kubernetes' Container fields a policy may set (from schemas/kubernetes.json)."""
    return frozenset(schemas.read("kubernetes.json")["$defs"]["gen.ContainerFields"]["properties"])


def overlay(defaults: dict[str, Any], asked: dict[str, Any], pod_asked: dict[str, Any] | None = None) -> dict[str, Any]:
    """gen's restricted defaults under what a policy asks, field by field; a default the asked
    fields contradict yields, so gen never writes a combination Kubernetes refuses: a privileged
    container (or one adding CAP_SYS_ADMIN) escalates by definition, and user 0 is root."""
    kept = dict(defaults)
    added = {str(c) for c in (asked.get("capabilities") or {}).get("add") or []}
    if asked.get("privileged") is True or added & {"SYS_ADMIN", "CAP_SYS_ADMIN"}:
        kept.pop("allowPrivilegeEscalation", None)
    if asked.get("runAsUser", (pod_asked or {}).get("runAsUser")) == 0:  # a container runs as the Pod's user
        kept.pop("runAsNonRoot", None)
    return {**kept, **asked}


def restricted(container: dict[str, Any], pod_asked: dict[str, Any] | None = None) -> dict[str, Any]:
    """A container with gen's restricted security context under its own, field by field
    (pod_asked: what the policy asked of the Pod's security context)."""
    asked = container.get("securityContext") or {}
    return {**container, "securityContext": overlay(RESTRICTED_CONTAINER, asked, pod_asked)}


def main_container(
    fields: dict[str, Any],
    name: str,
    *,
    resources: dict[str, Any],
    env: list[dict[str, Any]],
    pod: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The main container: name and image, gen's fields, the policy's other Container fields,
    then the restricted security context."""
    own = {k: v for k, v in fields.items() if k in container_fields() and (k != "ports" or v)}
    if "ports" in own:  # Kubernetes' default, written out as gen always has
        own["ports"] = [{**port, "protocol": port.get("protocol", "TCP")} for port in own["ports"]]
    own["resources"] = resources
    if env or "env" in own:
        own["env"] = [*own.get("env", []), *env]
    out: dict[str, Any] = {"name": name, "image": own.pop("image")}
    out.update((k, own.pop(k)) for k in _LEADING if k in own)
    own.pop("securityContext", None)
    out.update(own)
    return restricted({**out, "securityContext": fields.get("securityContext")}, (pod or {}).get("securityContext"))


def downward_env(names: list[str]) -> list[dict[str, Any]]:
    return [{"name": n, "valueFrom": {"fieldRef": {"fieldPath": DOWNWARD_FIELDS[n]}}} for n in names]


def pod_spec(derived: dict[str, Any], pod: dict[str, Any], containers: list[dict[str, Any]]) -> dict[str, Any]:
    """gen's Pod fields, the policy's `pod` fields merged in, then the containers.

    derived holds what gen sets (securityContext and affinity among them); the policy's values
    win except where merging is the contract: securityContext field by field, affinity terms
    combined (see merge_affinity), topology spread constraints appended.
    """
    out = dict(derived)
    for key, value in pod.items():
        if key == "securityContext":
            out[key] = overlay(RESTRICTED_POD, value)
        elif key == "affinity":
            out[key] = merge_affinity(derived.get("affinity") or {}, value)
        elif key == "topologySpreadConstraints":
            out[key] = [*derived.get(key, []), *value]
        elif key == "initContainers":
            out[key] = [restricted(c, pod.get("securityContext")) for c in value]
        else:
            out[key] = value
    out["containers"] = containers
    _writable_paths(out)
    asked = pod.get("securityContext") or {}
    ctx = out.get("securityContext")
    if isinstance(ctx, dict) and "runAsNonRoot" not in asked and any(_as_root(c) for c in _all_containers(out)):
        # a container asked to run as user 0 would inherit gen's Pod-level runAsNonRoot, and the
        # kubelet would refuse to start it: the default yields to what the policy asked
        out["securityContext"] = {k: v for k, v in ctx.items() if k != "runAsNonRoot"}
    return out


# Where gen makes a root filesystem read-only, programs still need to write: temporary files,
# and caches under $HOME (model weights under ~/.cache). 65532 is distroless' nonroot user.
TMP_VOLUME = {"name": "gen-tmp", "emptyDir": {}}
HOME_VOLUME = {"name": "gen-home", "emptyDir": {}}
HOME_PATH = "/home/nonroot"


def _writable_paths(pod: dict[str, Any]) -> None:
    """/tmp and $HOME as emptyDirs in every container gen gives a read-only root filesystem,
    unless the policy mounts those paths or sets HOME itself."""
    wanted: list[dict[str, Any]] = []
    for container in _all_containers(pod):
        if (container.get("securityContext") or {}).get("readOnlyRootFilesystem") is not True:
            continue
        mounts = list(container.get("volumeMounts") or [])
        env = list(container.get("env") or [])
        paths = {m.get("mountPath") for m in mounts if isinstance(m, dict)}
        if "/tmp" not in paths:
            mounts.append({"name": TMP_VOLUME["name"], "mountPath": "/tmp"})
            wanted.append(TMP_VOLUME)
        if HOME_PATH not in paths and not any(isinstance(e, dict) and e.get("name") == "HOME" for e in env):
            mounts.append({"name": HOME_VOLUME["name"], "mountPath": HOME_PATH})
            env.append({"name": "HOME", "value": HOME_PATH})
            wanted.append(HOME_VOLUME)
        container["volumeMounts"] = mounts
        if env:
            container["env"] = env
    volumes = list(pod.get("volumes") or [])
    names = {v.get("name") for v in volumes if isinstance(v, dict)}
    for volume in wanted:
        if volume["name"] not in names:
            volumes.append(dict(volume))
            names.add(volume["name"])
    if volumes:
        pod["volumes"] = volumes


def _all_containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for group in ("initContainers", "containers") for c in pod.get(group) or [] if isinstance(c, dict)]


def _as_root(container: dict[str, Any]) -> bool:
    ctx = container.get("securityContext") or {}
    return ctx.get("runAsUser") == 0 and "runAsNonRoot" not in ctx


def merge_affinity(gen: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """Required node affinity: every term of gen's ANDed with every term of the policy's, since
    nodeSelectorTerms are ORed and a term of the policy's own would let a Pod past gen's
    requirement. Preferred terms and pod (anti-)affinity terms are appended."""
    out = {key: dict(value) for key, value in gen.items()}
    for kind, rules in user.items():
        merged = out.setdefault(kind, {})
        for key, value in rules.items():
            if kind == "nodeAffinity" and key == _REQUIRED_TERMS and _REQUIRED_TERMS in merged:
                merged[key] = {
                    "nodeSelectorTerms": and_terms(merged[key]["nodeSelectorTerms"], value["nodeSelectorTerms"])
                }
            else:
                merged[key] = [*merged.get(key, []), *value] if isinstance(value, list) else value
    return out


def and_terms(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """(a or b) and (c or d) as nodeSelectorTerms: a+c, a+d, b+c, b+d (each term ANDs its expressions)."""
    out = []
    for mine in ours:
        for other in theirs:
            term: dict[str, Any] = {}
            for field in ("matchExpressions", "matchFields"):
                joined = [*mine.get(field, []), *other.get(field, [])]
                if joined:
                    term[field] = joined
            out.append(term)
    return out
