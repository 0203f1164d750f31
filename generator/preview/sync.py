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
from generator.render.links import TEMPLATE_PATHS, HpaIndex, count, hpa_index, hpa_of
from generator.render.templates import Manifest
from generator.render.write import owned_files, read_regular
from generator.yamlio.load import load_text

# In the order a reviewer weighs them: what fails the sync first, what only adds last.
ACTIONS = ("refused", "prune", "recreate", "stop", "restart", "kept", "update", "create")


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


def _pods(count: int, per_pod: int) -> str:
    """`4 GPU Pods (32 GPUs)`, or `3 Pods`."""
    words = _plural(count, "GPU Pod" if per_pod else "Pod")
    return words + (f" ({_plural(count * per_pod, 'GPU')})" if per_pod else "")


def _gpus_of(obj: dict[str, Any]) -> int:
    kind = str(obj.get("kind"))
    return _gpus_per_pod(at_path(obj, POD_SPEC_PATHS[kind])) if kind in POD_SPEC_PATHS else 0


def _count(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def workload_size(obj: dict[str, Any], hpas: HpaIndex) -> tuple[int | None, int | None, str]:
    """How many Pods a workload runs (the most, under an HPA), their GPUs, and both in words;
    (None, None, "") for an object that runs no Pods."""
    kind = str(obj.get("kind"))
    if kind not in POD_SPEC_PATHS:
        return None, None, ""
    per_pod = _gpus_of(obj)
    if kind == "DaemonSet":
        return None, None, "one Pod per node" + (f", {_plural(per_pod, 'GPU')} each" if per_pod else "")
    pods: int | None = 1
    if kind in _SCALED:
        scaled = hpas.get(_key(obj))
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
    return pods, pods * per_pod, _pods(pods, per_pod)


# -- what the plan of one object needs from the rest of its target


@dataclass(frozen=True)
class Surroundings:
    """The engines that sync the target, the HPAs of both renders (their ranges, by the
    workload they scale), which workloads an HPA scaled before this sync, and the new
    render's StorageClasses by name."""

    engines: Engines
    hpas: HpaIndex = field(default_factory=dict)
    scaled_before: frozenset[tuple[str, str, str]] = frozenset()
    scaled_after: frozenset[tuple[str, str, str]] = frozenset()
    storage_classes: Mapping[str, dict[str, Any]] = field(default_factory=dict)


# -- one object

_SCALED = ("Deployment", "ReplicaSet", "StatefulSet")


def _identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", ""))


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    kind, namespace, name = _identity(obj)
    return namespace, kind, name


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


def _kubectl(obj: dict[str, Any]) -> str:
    kind, namespace, name = _identity(obj)
    return f"{kind.lower()}/{name}" + (f" -n {namespace}" if namespace else "")


def _remedy(obj: dict[str, Any]) -> str:
    """What makes a refused sync pass without losing data."""
    kind = str(obj.get("kind"))
    if kind == "StatefulSet":
        return (
            f"the sync fails until the StatefulSet is deleted without its Pods (`kubectl delete {_kubectl(obj)} "
            "--cascade=orphan`): the sync then creates it, and it adopts the running Pods and their claims"
        )
    if kind in ("PersistentVolumeClaim", "PersistentVolume"):
        return (
            f"the sync fails until the change is reverted (for the new spec, create a new {kind} and move "
            "the data to it; deleting this one to make the sync pass deletes its data)"
        )
    return f"the sync fails until the {kind} is deleted"


def _refused(
    target: str, around: Surroundings, before: dict[str, Any], new: dict[str, Any], refusal: updates.Refusal, rel: str
) -> Change:
    pods, gpus, size = workload_size(new, around.hpas)
    identity = _identity(new)
    what = _changed_field(refusal.changed, before) + (
        ", and it is immutable"
        if refusal.changed == refusal.field
        else f", and {updates.spelled(refusal.field)} is immutable"
    )
    recreated = around.engines.recreates_refused(_annotations(new))
    if not refusal.blocks:
        then = "Flux deletes and recreates it" if recreated else _remedy(new)
        reason = f"{what} (kube-apiserver {refusal.rule}), refused unless {refusal.unless}; if it has run, {then}"
        return Change(target, "update", *identity, reason, pods, gpus, rel)
    if recreated:
        reason = f"{what}: Flux deletes and recreates it" + (f"; its {size} restart" if size else "")
        return Change(target, "recreate", *identity, reason, pods, gpus, rel, refusal)
    unless = f", refused unless {refusal.unless}" if refusal.unless else ""
    reason = f"{what} (kube-apiserver {refusal.rule}){unless}: {_remedy(new)}"
    return Change(target, "refused", *identity, reason, pods, gpus, rel, refusal)


_STORAGE_REQUEST = ("spec", "resources", "requests", "storage")


def _claim_growth(
    target: str, around: Surroundings, old: dict[str, Any], new: dict[str, Any], rel: str, more: str
) -> Change:
    """PersistentVolumeClaimResize (admission on by default) decides a growing claim."""
    identity = _identity(new)
    grows = f"storage grows from {at_path(old, _STORAGE_REQUEST)} to {at_path(new, _STORAGE_REQUEST)}{more}"
    name = updates.storage_class_of(new)
    allowed = updates.resize_allowed(old, new, dict(around.storage_classes))
    if allowed:
        reason = f"{grows} (StorageClass {name} allows volume expansion; the claim must be bound)"
        return Change(target, "update", *identity, reason, rel=rel)
    if allowed is None:
        which = f"StorageClass {name}, which is not in this render," if name else "the cluster's default StorageClass"
        reason = f"{grows}: refused by kube-apiserver's PersistentVolumeClaimResize admission unless {which} has allowVolumeExpansion: true"
        return Change(target, "update", *identity, reason, rel=rel)
    refusal = updates.Refusal(_STORAGE_REQUEST, _STORAGE_REQUEST, "PersistentVolumeClaimResize admission")
    reason = (
        f"{grows}, and StorageClass {name} in this render does not set allowVolumeExpansion: true "
        "(kube-apiserver's PersistentVolumeClaimResize admission refuses it): the sync fails until the "
        "StorageClass allows expansion or the request is reverted"
    )
    return Change(target, "refused", *identity, reason, rel=rel, refusal=refusal)


def _apply(client_side: bool) -> str:
    return (
        "the client-side apply (a three-way merge with the last-applied configuration) removes it"
        if client_side
        else "the server-side apply removes it (the engine's field manager owns it)"
    )


def _handover(obj: dict[str, Any], was: int, client_side: bool) -> str:
    """The documented way to stop writing replicas without the one-time drop (Kubernetes'
    HPA guide, "Migrating Deployments and StatefulSets to horizontal autoscaling")."""
    if client_side:
        step = (
            f"remove spec.replicas from the last-applied configuration "
            f"(`kubectl apply edit-last-applied {_kubectl(obj)}`)"
        )
    else:
        step = (
            "hand spec.replicas to another field manager (`kubectl apply --server-side "
            f"--field-manager=handover-to-hpa` of a manifest holding only spec.replicas: {was})"
        )
    return f"to avoid it, {step} before the sync, as Kubernetes' HPA guide says for migrating to autoscaling"


def _stops(
    around: Surroundings, old: dict[str, Any], new: dict[str, Any], before: dict[str, Any], after: dict[str, Any]
) -> tuple[int, str] | None:
    """Pods the sync stops without replacing them, and why: a lower replica count (written, or
    removed and defaulted to 1 as the apply removes a field gen stops writing), a lower Job
    parallelism, a Job suspended."""
    kind = str(new.get("kind"))
    per_pod = _gpus_of(new)
    was_spec, now_spec = updates.spec_of(before), updates.spec_of(after)
    if kind in _SCALED:
        key = _key(new)
        was, now = _count(was_spec.get("replicas"), 1), _count(now_spec.get("replicas"), 1)
        dropped = "replicas" in updates.spec_of(old) and "replicas" not in updates.spec_of(new)
        scaled_range = around.hpas.get(key)
        if key in around.scaled_before and "replicas" not in updates.spec_of(old):
            if key in around.scaled_after or scaled_range is None or scaled_range[1] <= now:
                return None
            low, high = scaled_range
            return high - now, (
                f"spec.replicas is written again ({now}) and no HPA scales it any more: up to "
                f"{_pods(high - now, per_pod)} stop, as many as the HPA ran above {now} (it ran {low}–{high})"
            )
        if dropped and was > now:
            client_side = around.engines.applies_client_side(_annotations(new))
            takes = "autoscaling takes over spec.replicas" if key in around.scaled_after else "spec.replicas"
            lead = f"{takes}, which is no longer written: {_apply(client_side)} and kube-apiserver defaults it to {now}"
            until = " until the HPA scales up again" if key in around.scaled_after else ""
            if key in around.scaled_before and not client_side:
                return was - now, (
                    f"{lead}, unless the HPA has changed spec.replicas since the last sync (then the HPA owns "
                    f"it and nothing stops): all but {now} of its Pods stop{until}; "
                    f"{_handover(new, was, client_side)}"
                )
            if key not in around.scaled_before:
                return was - now, (
                    f"{lead}, so {_pods(was - now, per_pod)} stop (of {was}){until}; {_handover(new, was, client_side)}"
                )
            most = max(was, scaled_range[1] if scaled_range else was) - now  # the HPA may run more than Git says
            return most, (
                f"{lead}, so all but {now} of its Pods stop (up to {_pods(most, per_pod)}){until}; "
                f"{_handover(new, was, client_side)}"
            )
        if now < was and key not in around.scaled_after:
            return was - now, f"spec.replicas lowered from {was} to {now}: {_pods(was - now, per_pod)} stop"
        return None
    if kind == "Job":
        was, now = _count(was_spec.get("parallelism"), 1), _count(now_spec.get("parallelism"), 1)
        if now_spec.get("suspend") is True and was_spec.get("suspend") is not True:
            return was, (
                f"spec.suspend set: while the Job runs, the Job controller deletes all its active Pods, up to "
                f"{_pods(was, per_pod)} (a finished Job loses none); they start again when it is resumed"
            )
        if now < was:
            return was - now, (
                f"spec.parallelism lowered from {was} to {now}: while the Job runs, the Job controller deletes its "
                f"active Pods above {now}, up to {_pods(was - now, per_pod)} (a finished Job loses none), and a gang whose ranks "
                "must all run (torchrun, a PodGroup) fails; to resize a distributed run, let it finish and run "
                "the new size as a new Job (GpuWorkload: whenChanged: newName)"
            )
    return None


def _rollout(after: dict[str, Any], count: int | None, per_pod: int, size: str) -> tuple[int | None, str]:
    """How the controller rolls a changed template: the Pods it replaces (None: one per node)
    and the words for it; 0 when it replaces none (OnDelete: only Pods someone deletes come
    back with the new template; a partition at or above the replicas)."""
    kind, spec = str(after.get("kind")), updates.spec_of(after)
    if kind in ("StatefulSet", "DaemonSet"):
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            return 0, "updateStrategy OnDelete replaces no Pod until someone deletes it"
        partition = _count(at_path(strategy, ("rollingUpdate", "partition")), 0) if kind == "StatefulSet" else 0
        if partition > 0 and count is not None:
            if partition >= count:
                return 0, f"no Pod replaced: every ordinal is below the partition ({partition})"
            return count - partition, (
                f"{_pods(count - partition, per_pod)} from ordinal {partition} on replaced (partition {partition})"
            )
    if kind == "Deployment" and count is not None:
        strategy = spec.get("strategy") or {}
        if strategy.get("type") == "Recreate":
            return count, f"{size} replaced, every old one stopped before the new ones start (Recreate)"
        surge = updates.rolling_surge(after, count)
        if per_pod and surge:
            return count, (
                f"{size} replaced; the rollout needs {_plural(surge * per_pod, 'GPU')} free beside its own "
                f"while up to {_plural(surge, 'extra Pod')} run (maxSurge)"
            )
    return count, f"{size} replaced"


def _kept_note(kept: list[updates.Path], before: dict[str, Any]) -> str:
    """What the update strategy keeps that gen stopped writing (a Service's allocated values)."""
    if not kept:
        return ""
    value = at_path(before, kept[0])
    fields = ", ".join(updates.spelled(path) for path in kept)
    held = (
        "None: the Service stays headless; a cluster IP takes deleting the Service so the sync creates it again"
        if value == "None"
        else _shown(value)
    )
    return f"{fields} no longer written: kube-apiserver keeps what it holds ({held})"


def compared(
    target: str, around: Surroundings, old: dict[str, Any], new: dict[str, Any], rel: str = ""
) -> Change | None:
    """How a sync changes old into new; None when kube-apiserver would store the same object."""
    before = updates.defaulted(old)
    after, kept = updates.kept_by_server(before, updates.defaulted(new))
    changed = [path for path in updates.differences(before, after) if path[:1] != ("status",)]
    identity = _identity(new)
    note = _kept_note(kept, before)
    if not changed:
        return Change(target, "update", *identity, f"{note}; nothing else changes", rel=rel) if note else None
    pods, gpus, size = workload_size(new, around.hpas)
    refusal = updates.refused(before, after)
    if refusal is not None:
        return _refused(target, around, before, new, refusal, rel)
    more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
    if identity[0] == "PersistentVolumeClaim" and updates.claim_grows(before, after):
        return _claim_growth(target, around, old, new, rel, more)
    # a CronJob's jobTemplate is mutable and shapes only its next Job
    template = TEMPLATE_PATHS.get(identity[0]) if identity[0] != "CronJob" else None
    in_template = [path for path in changed if template is not None and path[: len(template)] == template]
    per_pod = _gpus_of(new)
    stops = _stops(around, old, new, before, after)
    if stops is not None:
        stopped, reason = stops
        if in_template:
            reason += f"; {_changed_field(in_template[0], before)} too: the Pods that stay are replaced"
        return Change(target, "stop", *identity, reason, stopped, stopped * per_pod, rel)
    if in_template:
        replaced, words = _rollout(after, pods, per_pod, size)
        reason = f"{_changed_field(in_template[0], before)}{more}: {words}"
        if replaced == 0:
            return Change(target, "update", *identity, reason, pods, gpus, rel)
        replaced_gpus = None if replaced is None else replaced * per_pod
        return Change(target, "restart", *identity, reason, replaced, replaced_gpus, rel)
    reason = f"{_changed_field(changed[0], before)}{more}" + (f"; {note}" if note else "")
    return Change(target, "update", *identity, reason, pods, gpus, rel)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else ", ".join(map(str, value)) if isinstance(value, list) else str(value)


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
    deletes = "delete" if engines.argocd and engines.flux else "deletes"
    reason = f"removed from Git: {engines.names} {deletes} it" + (f"; its {size} stop" if size else "")
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
    target: str, engines: Engines, directory: Path, digests: Mapping[str, str], owners: Mapping[str, Manifest]
) -> list[Change]:
    """The changes from the render committed in directory to a new one (the SHA-256 of its
    files and, by file, the objects they hold). Only files whose content differs are read, and
    only the objects that changed are looked into (an unchanged one may be kept packed)."""
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
    hpas_before = hpa_index(old.values())
    after = {rel: entry for rel, m in owners.items() if (entry := hpa_of(m)) is not None}
    hpas_after = dict(after.values())
    unchanged = (entry[0] for rel, entry in after.items() if rel in owned and rel not in old and rel not in unreadable)
    around = Surroundings(
        engines,
        {**hpas_before, **hpas_after},
        frozenset(hpas_before) | frozenset(unchanged),
        frozenset(hpas_after),
        {str((m.obj.get("metadata") or {}).get("name")): m.obj for m in owners.values() if m.kind == "StorageClass"},
    )
    hpas = around.hpas
    changes: list[Change] = []
    for rel, manifest in owners.items():
        if rel not in owned:
            changes.append(created(target, manifest.obj, hpas, rel))
        elif rel in old:
            change = compared(target, around, old[rel], manifest.obj, rel)
            if change is not None:
                changes.append(change)
        elif rel in unreadable:
            reason = "the committed file holds no object gen can read, so what the cluster runs is unknown: applied as rendered"
            changes.append(Change(target, "update", *_identity(manifest.obj), reason, rel=rel))
    changes += [removed(target, engines, obj, hpas, rel) for rel, obj in old.items() if rel not in owners]
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
            if action in ("stop", "restart", "recreate", "prune"):
                gpu_pods = sum(c.pods or 0 for c in acted if c.gpus)
                pods = sum(c.pods or 0 for c in acted if not c.gpus)
                counted = [_plural(n, word) for n, word in ((pods, "Pod"), (gpu_pods, "GPU Pod")) if n]
                text += f" ({', '.join(counted)})" if counted else ""
            parts.append(text)
        lines.append(f"{target}: {', '.join(parts)}")
    return lines
