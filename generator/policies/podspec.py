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


def restricted(container: dict[str, Any]) -> dict[str, Any]:
    """A container with gen's restricted security context under its own, field by field."""
    return {**container, "securityContext": {**RESTRICTED_CONTAINER, **(container.get("securityContext") or {})}}


def main_container(
    fields: dict[str, Any], name: str, *, resources: dict[str, Any], env: list[dict[str, Any]]
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
    return restricted({**out, "securityContext": fields.get("securityContext")})


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
            out[key] = {**RESTRICTED_POD, **value}
        elif key == "affinity":
            out[key] = merge_affinity(derived.get("affinity") or {}, value)
        elif key == "topologySpreadConstraints":
            out[key] = [*derived.get(key, []), *value]
        elif key == "initContainers":
            out[key] = [restricted(c) for c in value]
        else:
            out[key] = value
    out["containers"] = containers
    return out


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
