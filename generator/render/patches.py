"""spec.patches: RFC 6902 operations on a policy's rendered objects, the last resort for a
field gen does not model.

Operations apply one at a time (jsonpatch), so a failure names its operation. A patch may not
touch what gen guarantees: the deletion-cost annotation, a GpuWorkload's GPU affinity and
resources, and the names, labels and selectors that tie objects together. What a patch
produces is validated like every rendered object, and findings inside it point at the patch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonpointer

from generator.kube.pods import DELETION_COST
from generator.kube.scope import POD_SPEC_PATHS
from generator.policies.policy import Policy
from generator.problems import Problem
from generator.schema_messages import shown

Path = tuple[str | int, ...]
_MISSING = object()


@dataclass
class Rendered:
    """An object a policy rendered, before gen finishes it, and which policy paths made it."""

    obj: dict[str, Any]
    template: str
    origins: list[tuple[Path, Path]]  # (path in the object, path in the policy document)


def _default_kind(policy: Policy) -> str | None:
    if policy.kind == "GpuWorkload":
        return str(policy.spec["workloadKind"])
    return {"ReplicatedService": "Deployment", "Scheduler": "Deployment", "Monitoring": "ConfigMap"}.get(policy.kind)


def _pointer(path: Path) -> str:
    return str(jsonpointer.JsonPointer.from_parts(path).path)


def _tokens(pointer: str) -> Path:
    """A JSON Pointer as a path: list indices as ints, as findings spell them."""
    return tuple(int(p) if p.isdigit() else p for p in jsonpointer.JsonPointer(pointer).parts)


def guarded(policy: Policy, obj: dict[str, Any]) -> list[Path]:
    """The paths of obj a patch may not touch, and why each is gen's."""
    kind = str(obj.get("kind"))
    paths: list[Path] = [("metadata", "name"), ("metadata", "namespace"), ("spec", "selector")]
    if kind in ("Deployment", "Job"):
        paths.append(("spec", "template", "metadata", "labels"))
    if kind == "CronJob":
        paths.append(("spec", "jobTemplate", "spec", "template", "metadata", "labels"))
    if obj.get("kind") == "HorizontalPodAutoscaler":
        paths.append(("spec", "scaleTargetRef"))
    if policy.kind == "ReplicatedService" and obj.get("kind") == "Deployment":
        paths.append(("spec", "template", "metadata", "annotations", DELETION_COST))
    if "gpu" in policy.spec and kind in POD_SPEC_PATHS:  # a GpuWorkload's Pod, a GPU service's Deployment
        pod = POD_SPEC_PATHS[kind]
        gpu = policy.spec["gpu"]["resource"]
        paths.append((*pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))
        for section in ("requests", "limits"):
            paths.append((*pod, "containers", 0, "resources", section, gpu))
    return paths


def _touches(path: Path, guard: Path) -> bool:
    """Whether changing path changes guard: one is a prefix of the other."""
    n = min(len(path), len(guard))
    return path[:n] == guard[:n]


def apply(policy: Policy, rendered: list[Rendered]) -> list[Problem]:
    """Apply the policy's patches to its rendered objects in place; the problems found."""
    problems: list[Problem] = []
    patches = policy.spec.get("patches", [])
    if not patches:
        return problems
    import jsonpatch  # here: only a policy with patches needs it; every gen lint would pay about 1 ms

    for i, patch in enumerate(patches):
        where: Path = ("patches", i)
        target = _find(policy, rendered, patch.get("target", {}), where, problems)
        if target is None:
            continue
        guards = guarded(policy, target.obj)
        for j, op in enumerate(patch["patch"]):
            at: Path = (*where, "patch", j)
            touched = [_tokens(op["path"]), *([_tokens(op["from"])] if op["op"] == "move" else [])]
            hit = None if op["op"] == "test" else next((g for g in guards for t in touched if _touches(t, g)), None)
            if hit is not None:
                what = "it" if _pointer(hit) == op["path"] else _pointer(hit)
                problems.append(
                    policy.problem(
                        at,
                        "patch-guarded",
                        f"{op['op']} {op['path']} would change {what}, which gen guarantees",
                        hint="set it through the policy's own fields, which keep the guarantee"
                        + ("; Pod template labels: podLabels" if "labels" in _pointer(hit) else ""),
                    )
                )
                continue
            try:
                target.obj = jsonpatch.JsonPatch([op]).apply(target.obj)
            except jsonpatch.JsonPatchTestFailed:
                actual = jsonpointer.resolve_pointer(target.obj, op["path"], _MISSING)
                message = f"test {op['path']}: " + (
                    "the rendered object has no such path"
                    if actual is _MISSING or isinstance(actual, jsonpointer.EndOfList)  # "-": past the last entry
                    else f"the rendered value is {shown(actual)}, not {shown(op['value'])}"
                )
                problems.append(policy.problem(at, "patch-failed", message, hint=_hint(op)))
                continue
            except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as err:
                message = f"{op['op']} {op['path']}: {_failure(target.obj, op) or err}"
                problems.append(policy.problem(at, "patch-failed", message, hint=_hint(op)))
                continue
            target.origins.append((_tokens(op["path"]), ("spec", *at)))
    return problems


def _failure(obj: Any, op: dict[str, Any]) -> str | None:
    """Which step of the operation's pointers the rendered object lacks, in its own terms
    (jsonpointer's messages print the whole object as a Python dict); None if none does."""
    source = _missing(obj, op["from"], creates=False) if op["op"] in ("move", "copy") and "from" in op else None
    return source or _missing(obj, op["path"], creates=op["op"] in ("add", "move", "copy"))


def _missing(obj: Any, pointer: str, creates: bool) -> str | None:
    """What stops pointer from resolving in obj (creates: its last step may be new)."""
    tokens = jsonpointer.JsonPointer(pointer).parts
    node = obj
    for depth, token in enumerate(tokens):
        parent, new = _pointer(tuple(tokens[:depth])) or "the object", creates and depth == len(tokens) - 1
        if isinstance(node, dict):
            if token not in node:
                return None if new else f"{_pointer(tuple(tokens[: depth + 1]))} does not exist"
            node = node[token]
        elif isinstance(node, list):
            if token == "-" and new:
                return None
            if not token.isdigit():
                return f"{parent} is a list, and {shown(token)} is no index of it"
            if int(token) >= len(node) + new:
                return f"{parent} has {len(node)} entries, so no index {token}"
            node = node[int(token)] if int(token) < len(node) else None
        else:
            return f"{parent} is {shown(node)}, which has no fields or entries"
    return None


def _hint(op: dict[str, Any]) -> str:
    if op["op"] == "test":
        return "the object differs from what the patch expects; re-render and compare"
    if op["op"] in ("replace", "remove"):
        return "the path must exist in the rendered object; use add to create it"
    return "a missing parent must be added first; `-` appends to a list"


def _find(
    policy: Policy, rendered: list[Rendered], target: dict[str, str], where: Path, problems: list[Problem]
) -> Rendered | None:
    kind = target.get("kind") or _default_kind(policy)
    if kind is None:
        problems.append(policy.problem((*where,), "patch-target", f"a {policy.kind} patch must name target.kind"))
        return None
    found = [r for r in rendered if r.obj.get("kind") == kind]
    if "name" in target:
        found = [r for r in found if (r.obj.get("metadata") or {}).get("name") == target["name"]]
    if len(found) == 1:
        return found[0]
    names = sorted(str((r.obj.get("metadata") or {}).get("name")) for r in rendered if r.obj.get("kind") == kind)
    what = f"{kind} {target['name']!r}" if "name" in target else kind
    message = f"{policy.kind} {policy.name!r} renders no {what}" if not found else f"it renders several {kind}s"
    rendered_kinds = sorted({str(r.obj.get("kind")) for r in rendered})
    hint = f"name one of: {', '.join(names)}" if names else f"it renders: {', '.join(rendered_kinds)}"
    problems.append(policy.problem((*where, "target"), "patch-target", message, hint=hint))
    return None
