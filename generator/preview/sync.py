"""`gen plan`: what syncing a render does to the running cluster.

The render committed in --out is what the cluster runs: gen wrote it and Argo CD or Flux
synced it. Comparing it object by object with a new render says, before the commit, which
objects a sync creates, updates in place, restarts (their Pods replaced), recreates, cannot
update (kube-apiserver refuses an immutable field), prunes, or keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.gitops import CONFIG_HASH, Engines
from generator.kube import updates
from generator.kube.scope import POD_SPEC_PATHS, at_path, title
from generator.layout import FRAGMENTS_DIR, MANIFEST_FILE
from generator.render.links import TEMPLATE_PATHS, HpaIndex, count, hpa_index
from generator.render.write import owned_files, read_regular
from generator.yamlio.load import load_text

# In the order a reviewer weighs them: what fails the sync first, what only adds last.
ACTIONS = ("refused", "prune", "recreate", "restart", "kept", "update", "create")


@dataclass(frozen=True)
class Change:
    """One object a sync changes, and how."""

    target: str
    action: str
    kind: str
    namespace: str
    name: str
    reason: str
    pods: int | None = None
    gpus: int | None = None
    rel: str = field(default="", compare=False)  # its file in the target's directory
    refusal: updates.Refusal | None = field(default=None, compare=False)

    @property
    def title(self) -> str:
        return title(self.kind, self.namespace or None, self.name)

    def line(self) -> str:
        return f"{self.target}  {self.action}  {self.title}  {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "action": self.action,
            "kind": self.kind,
            "namespace": self.namespace or None,
            "name": self.name,
            "reason": self.reason,
            "pods": self.pods,
            "gpus": self.gpus,
        }


# -- what a workload runs


def _gpus_per_pod(pod_spec: Any) -> int:
    """GPUs one Pod holds: its containers' (and sidecars') limits of GPU extended resources."""
    if not isinstance(pod_spec, dict):
        return 0
    containers = list(pod_spec.get("containers") or [])
    containers += [c for c in pod_spec.get("initContainers") or [] if (c or {}).get("restartPolicy") == "Always"]
    total = 0
    for container in containers:
        limits = ((container or {}).get("resources") or {}).get("limits") or {}
        for resource, amount in limits.items() if isinstance(limits, dict) else ():
            if "gpu" in str(resource).lower() and isinstance(amount, int | str) and str(amount).isdigit():
                total += int(amount)
    return total


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def workload_size(obj: dict[str, Any], hpas: HpaIndex) -> tuple[int | None, int | None, str]:
    """How many Pods a workload runs (the most, under an HPA), their GPUs, and both in words;
    (None, None, "") for an object that runs no Pods."""
    kind = str(obj.get("kind"))
    if kind not in POD_SPEC_PATHS:
        return None, None, ""
    per_pod = _gpus_per_pod(at_path(obj, POD_SPEC_PATHS[kind]))
    if kind == "DaemonSet":
        return None, None, "one Pod per node" + (f", {_plural(per_pod, 'GPU')} each" if per_pod else "")
    pods: int | None = 1
    if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        _, namespace, name = _identity(obj)
        scaled = hpas.get((namespace, kind, name))
        if scaled is not None:
            low, high = scaled
            gpus = f", up to {_plural(high * per_pod, 'GPU')}" if per_pod else ""
            return high, high * per_pod, f"{low}–{high} {'GPU ' if per_pod else ''}Pods (HPA{gpus})"
        pods = count(obj, ("spec", "replicas"))
    elif kind == "Job":
        pods = count(obj, ("spec", "parallelism"))
    elif kind == "CronJob":
        pods = count(obj, ("spec", "jobTemplate", "spec", "parallelism")) or 1
    if pods is None:  # no whole number: a hand-edited file, whose size is unknown
        return None, None, ""
    words = _plural(pods, "GPU Pod" if per_pod else "Pod")
    return pods, pods * per_pod, words + (f" ({_plural(pods * per_pod, 'GPU')})" if per_pod else "")


# -- one object


def _identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", ""))


def _annotations(obj: dict[str, Any]) -> dict[str, Any]:
    found = (obj.get("metadata") or {}).get("annotations")
    return found if isinstance(found, dict) else {}


def _changed_field(path: updates.Path, before: dict[str, Any]) -> str:
    if path[-2:] == ("annotations", CONFIG_HASH):
        if at_path(before, path) is None:
            return "gen.dev/config-hash added (a change to a ConfigMap its Pods read now rolls them)"
        return "a ConfigMap its Pods read changed (gen.dev/config-hash)"
    return f"{updates.spelled(path)} changed"


def created(target: str, obj: dict[str, Any], hpas: HpaIndex, rel: str = "") -> Change:
    pods, gpus, size = workload_size(obj, hpas)
    return Change(target, "create", *_identity(obj), "new" + (f": {size}" if size else ""), pods, gpus, rel)


def compared(
    target: str, engines: Engines, old: dict[str, Any], new: dict[str, Any], hpas: HpaIndex, rel: str = ""
) -> Change | None:
    """How a sync changes old into new; None when kube-apiserver would store the same object."""
    before, after = updates.defaulted(old), updates.defaulted(new)
    changed = [path for path in updates.differences(before, after) if path[:1] != ("status",)]
    if not changed:
        return None
    pods, gpus, size = workload_size(new, hpas)
    identity = _identity(new)
    refusal = updates.refused(before, after)
    if refusal is not None:
        what = _changed_field(refusal.changed, before) + (
            ", and it is immutable"
            if refusal.changed == refusal.field
            else f", and {updates.spelled(refusal.field)} is immutable"
        )
        if engines.recreates_refused(_annotations(new)):
            reason = f"{what}: Flux deletes and recreates it" + (f"; its {size} restart" if size else "")
            return Change(target, "recreate", *identity, reason, pods, gpus, rel, refusal)
        reason = f"{what} (kube-apiserver {refusal.rule}): the sync fails until the {identity[0]} is deleted"
        return Change(target, "refused", *identity, reason, pods, gpus, rel, refusal)
    # a CronJob's jobTemplate is mutable and shapes only its next Job
    template = TEMPLATE_PATHS.get(identity[0]) if identity[0] != "CronJob" else None
    in_template = [path for path in changed if template is not None and path[: len(template)] == template]
    more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
    if in_template:
        reason = f"{_changed_field(in_template[0], before)}{more}: {size} replaced"
        return Change(target, "restart", *identity, reason, pods, gpus, rel)
    what = _changed_field(changed[0], before)
    if identity[0] == "PersistentVolumeClaim" and changed[0] == _STORAGE_REQUEST:
        what = (
            f"storage grows from {at_path(old, _STORAGE_REQUEST)} to {at_path(new, _STORAGE_REQUEST)} "
            "(its StorageClass must allow volume expansion)"
        )
    return Change(target, "update", *identity, f"{what}{more}", pods, gpus, rel)


_STORAGE_REQUEST = ("spec", "resources", "requests", "storage")

_DATA_KINDS = frozenset({"PersistentVolumeClaim", "PersistentVolume", "CustomResourceDefinition", "Namespace"})


def removed(target: str, engines: Engines, old: dict[str, Any], hpas: HpaIndex, rel: str = "") -> Change:
    pods, gpus, size = workload_size(old, hpas)
    kept = engines.kept_because(_annotations(old))
    identity = _identity(old)
    if kept is not None:
        reason = f"removed from Git, stays in the cluster: {kept}"
        if identity[0] in _DATA_KINDS:
            reason += "; delete it by hand once its data is no longer needed"
        return Change(target, "kept", *identity, reason, pods, gpus, rel)
    reason = f"removed from Git: {engines.names} deletes it" + (f"; its {size} stop" if size else "")
    return Change(target, "prune", *identity, reason, pods, gpus, rel)


# -- one directory


def is_object_file(rel: str) -> bool:
    return rel not in ("kustomization.yaml", MANIFEST_FILE) and not rel.startswith(FRAGMENTS_DIR + "/")


def read_object(path: Path) -> dict[str, Any] | None:
    """The object a committed file holds, read as Kubernetes reads it; None if it holds none."""
    data = read_regular(path)
    if data is None:
        return None
    try:
        docs, _ = load_text(data.decode("utf-8"), str(path), kube=True)
    except UnicodeDecodeError:
        return None
    return docs[0].data if docs and isinstance(docs[0].data, dict) else None


def plan_directory(
    target: str, engines: Engines, directory: Path, digests: Mapping[str, str], objects: Mapping[str, dict[str, Any]]
) -> list[Change]:
    """The changes from the render committed in directory to a new one (the SHA-256 of its
    files and, by file, the objects they hold). Only files whose content differs are read."""
    owned = owned_files(directory) if directory.is_dir() else {}
    old: dict[str, dict[str, Any]] = {}
    unreadable: set[str] = set()  # committed, but no object can be read from it (edited by hand?)
    for rel in owned:
        if is_object_file(rel) and owned[rel] != digests.get(rel):
            found = read_object(directory / rel)
            if found is not None:
                old[rel] = found
            else:
                unreadable.add(rel)
    hpas = {**hpa_index(old.values()), **hpa_index(objects.values())}
    changes: list[Change] = []
    for rel, obj in objects.items():
        if rel not in owned:
            changes.append(created(target, obj, hpas, rel))
        elif rel in old:
            change = compared(target, engines, old[rel], obj, hpas, rel)
            if change is not None:
                changes.append(change)
        elif rel in unreadable:
            reason = "the committed file holds no object gen can read, so what the cluster runs is unknown: applied as rendered"
            changes.append(Change(target, "update", *_identity(obj), reason, rel=rel))
    changes += [removed(target, engines, obj, hpas, rel) for rel, obj in old.items() if rel not in objects]
    return changes


def ordered(changes: Iterable[Change]) -> list[Change]:
    return sorted(changes, key=lambda c: (c.target, ACTIONS.index(c.action), c.namespace, c.kind, c.name))


def summary(changes: list[Change]) -> list[str]:
    """One line per target that changes: `prod: 3 update, 1 restart (12 GPU Pods), 1 kept`."""
    lines = []
    for target in sorted({c.target for c in changes}):
        mine = [c for c in changes if c.target == target]
        parts = []
        for action in ACTIONS:
            acted = [c for c in mine if c.action == action]
            if not acted:
                continue
            text = f"{len(acted)} {action}"
            if action in ("restart", "recreate", "prune"):
                gpu_pods = sum(c.pods or 0 for c in acted if c.gpus)
                pods = sum(c.pods or 0 for c in acted if not c.gpus)
                counted = [_plural(n, word) for n, word in ((pods, "Pod"), (gpu_pods, "GPU Pod")) if n]
                text += f" ({', '.join(counted)})" if counted else ""
            parts.append(text)
        lines.append(f"{target}: {', '.join(parts)}")
    return lines
