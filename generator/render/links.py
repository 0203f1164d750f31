"""What ties a target's rendered objects together, settled once every policy is rendered: the
hash of the ConfigMaps a pod template reads (a config change rolls its Pods), the new name of a
Job that runs each change as a new run, and selectors that select no Pod of the target.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import Any

from generator.gitops import CONFIG_HASH
from generator.kube import labels as labels_
from generator.kube.scope import POD_SPEC_PATHS, at_path
from generator.policies.context import POD_GROUP_LABEL
from generator.policies.rules import NAME_HASH_LENGTH
from generator.problems import Problem, Severity
from generator.render.templates import Manifest
from generator.schema_messages import shown

# Where each workload keeps the template of its Pods: a change to it replaces them. A bare Pod
# has none (an annotation restarts nothing), a Job's is immutable (see _templates).
TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {kind: path[:-1] for kind, path in POD_SPEC_PATHS.items() if kind != "Pod"}


def _renamed_per_change(manifest: Manifest) -> bool:
    """A GpuWorkload Job whose every change runs as a new Job (`whenChanged: newName`)."""
    return (
        not manifest.raw
        and manifest.kind == "Job"
        and manifest.policy.kind == "GpuWorkload"
        and manifest.policy.spec.get("whenChanged") == "newName"
    )


def _template(manifest: Manifest) -> dict[str, Any] | None:
    """The pod template a config change should roll: never a Job's, whose template kube-apiserver
    refuses to change, unless the Job is renamed per change anyway."""
    path = TEMPLATE_PATHS.get(manifest.kind)
    if path is None or (manifest.kind == "Job" and not _renamed_per_change(manifest)):
        return None
    found = at_path(manifest.obj, path)
    return found if isinstance(found, dict) else None


def _config_maps_of(manifest: Manifest) -> list[str]:
    """The ConfigMaps the pod template a config change rolls reads (none without one)."""
    template = _template(manifest)
    return sorted(_config_maps_read(template.get("spec"))) if template is not None else []


def _config_maps_read(pod_spec: Any) -> set[str]:
    """Names of the ConfigMaps a Pod mounts, projects, or reads variables from."""
    if not isinstance(pod_spec, dict):
        return set()
    names: set[Any] = set()
    for volume in pod_spec.get("volumes") or []:
        names.add(at_path(volume, ("configMap", "name")))
        for source in at_path(volume, ("projected", "sources")) or []:
            names.add(at_path(source, ("configMap", "name")))
    for key in ("containers", "initContainers"):
        for container in pod_spec.get(key) or []:
            for env in at_path(container, ("env",)) or []:
                names.add(at_path(env, ("valueFrom", "configMapKeyRef", "name")))
            for source in at_path(container, ("envFrom",)) or []:
                names.add(at_path(source, ("configMapRef", "name")))
    return {name for name in names if isinstance(name, str)}


# What settle set on each object it changed, by the object's id: the same rendered object
# with the same settings is the same object.
Settled = dict[int, tuple[tuple[str, str], ...]]


def settle(manifests: list[Manifest]) -> Settled:
    """Everything that ties the target's objects together, once every policy is rendered."""
    settled: dict[int, list[tuple[str, str]]] = {}
    _config_hashes(manifests, settled)
    _new_names(manifests, settled)
    return {key: tuple(values) for key, values in settled.items()}


def _config_hashes(manifests: list[Manifest], settled: dict[int, list[tuple[str, str]]]) -> None:
    """`gen.dev/config-hash` on every pod template that reads ConfigMaps this target writes:
    SHA-256 over their names and data in name order, so changing one rolls the Pods."""
    config_maps = {(m.namespace or "", m.name): m.obj for m in manifests if m.group_kind == ("", "ConfigMap")}
    holding = {namespace for namespace, _ in config_maps}
    for manifest in manifests:
        namespace = manifest.namespace or ""
        if namespace not in holding:
            continue  # no ConfigMap of this target to read there
        names: list[str] = manifest.fact("config_maps", _config_maps_of)
        read = sorted(n for n in names if (namespace, n) in config_maps)
        template = _template(manifest) if read else None
        if template is None:
            continue
        if not all(
            isinstance(config_maps[(namespace, n)].get(k) or {}, dict) for n in read for k in ("data", "binaryData")
        ):
            continue
        content = [
            [
                name,
                config_maps[(namespace, name)].get("data") or {},
                config_maps[(namespace, name)].get("binaryData") or {},
            ]
            for name in read
        ]
        digest = hashlib.sha256(
            json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        ).hexdigest()
        meta = template.setdefault("metadata", {})
        if not isinstance(meta, dict) or not isinstance(meta.get("annotations", {}), dict):
            continue  # reported by validation, as written
        meta["annotations"] = dict(sorted({**meta.get("annotations", {}), CONFIG_HASH: digest}.items()))
        settled.setdefault(id(manifest), []).append((CONFIG_HASH, digest))


def _new_names(manifests: list[Manifest], settled: dict[int, list[tuple[str, str]]]) -> None:
    """A `whenChanged: newName` Job takes a short hash of its spec into its name, and its
    PodGroup and pod-group label follow: a changed Job is a new run, never an update
    kube-apiserver refuses. Its headless Service keeps the workload's name."""
    for job in [m for m in manifests if _renamed_per_change(m)]:
        digest = hashlib.sha256(
            json.dumps(job.obj["spec"], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        ).hexdigest()[:NAME_HASH_LENGTH]
        old, new = job.name, f"{job.name}-{digest}"
        job.obj["metadata"]["name"] = new
        settled.setdefault(id(job), []).append(("name", new))
        labels = at_path(job.obj, ("spec", "template", "metadata", "labels"))
        if isinstance(labels, dict) and labels.get(POD_GROUP_LABEL) == old:
            labels[POD_GROUP_LABEL] = new
        for group in manifests:
            if group.policy is job.policy and group.kind == "PodGroup" and group.name == old:
                group.obj["metadata"]["name"] = new
                settled.setdefault(id(group), []).append(("name", new))


# Labels the controllers add to the Pods they create, with values no manifest states.
_CONTROLLER_LABELS = frozenset(
    {
        "pod-template-hash",
        "controller-revision-hash",
        "controller-uid",
        "batch.kubernetes.io/controller-uid",
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
        "batch.kubernetes.io/job-completion-index",
        "job-name",
        "batch.kubernetes.io/job-name",
    }
)


def pod_labels(manifest: Manifest) -> dict[str, Any] | None:
    """The labels of the Pods an object creates (a Job's controller adds its name)."""
    labels: dict[str, Any] | None = manifest.fact("pod_labels", _pod_labels)
    return labels


def _pod_labels(manifest: Manifest) -> dict[str, Any] | None:
    if manifest.kind == "Pod":
        labels = at_path(manifest.obj, ("metadata", "labels"))
    elif manifest.kind in TEMPLATE_PATHS:
        labels = at_path(manifest.obj, (*TEMPLATE_PATHS[manifest.kind], "metadata", "labels"))
    else:
        return None
    labels = dict(labels) if isinstance(labels, dict) else {}
    if manifest.kind == "Job":
        labels.update({"job-name": manifest.name, "batch.kubernetes.io/job-name": manifest.name})
    return labels


def _keys(selector: dict[str, Any]) -> set[str]:
    return set(selector.get("matchLabels") or {}) | {str(e.get("key")) for e in selector.get("matchExpressions") or []}


def _value(value: Any) -> str:
    return value if isinstance(value, str) else shown(value)


def _spelled(selector: dict[str, Any]) -> str:
    parts = [f"{k}={_value(v)}" for k, v in sorted((selector.get("matchLabels") or {}).items(), key=str)]
    for e in selector.get("matchExpressions") or []:
        values = ",".join(map(_value, e.get("values") or []))
        parts.append(f"{e.get('key')} {e.get('operator')}" + (f" ({values})" if values else ""))
    return ", ".join(parts)


# Kinds whose selector picks Pods, and where: a Service's is a plain label map.
_SELECTORS = {
    ("", "Service"): ("spec", "selector"),
    ("policy", "PodDisruptionBudget"): ("spec", "selector"),
    ("networking.k8s.io", "NetworkPolicy"): ("spec", "podSelector"),
}


def selector_problems(manifests: list[Manifest], target: str) -> Iterator[Problem]:
    """`selector-no-match`: a Service, PodDisruptionBudget or NetworkPolicy whose selector
    matches no pod template in its namespace of this target."""
    pods: dict[str, list[dict[str, Any]]] = {}
    for manifest in manifests:
        labels = pod_labels(manifest)
        if labels is not None:
            pods.setdefault(manifest.namespace or "", []).append(labels)
    for manifest in manifests:
        found: tuple[tuple[str, ...], dict[str, Any]] | None = manifest.fact("selector", _selector)
        if found is None:
            continue
        path, selector = found
        if manifest.kind == "Service":
            selector = {"matchLabels": selector}
        candidates = pods.get(manifest.namespace or "", [])
        unknowable = _keys(selector) & _CONTROLLER_LABELS
        if any(labels_.selects(selector, labels) for labels in candidates) or any(
            not unknowable <= labels.keys() for labels in candidates
        ):
            continue
        yield manifest.problem(
            path,
            "selector-no-match",
            f"{manifest.title} selects no Pod: no pod template in namespace {manifest.namespace or '(none)'} "
            f"of target {target!r} carries {_spelled(selector)}",
            severity=Severity.WARNING,
            hint="gen labels each workload's Pods app: <policy name>; fix the selector, "
            "or ignore this if the Pods come from outside gen",
        )


def _selector(manifest: Manifest) -> tuple[tuple[str, ...], dict[str, Any]] | None:
    """Where an object selects Pods, and its selector; None when it selects none by label
    (none, or empty: every Pod; or, for a Service, endpoints managed elsewhere)."""
    path = _SELECTORS.get(manifest.group_kind)
    if path is None or (manifest.kind == "Service" and at_path(manifest.obj, ("spec", "type")) == "ExternalName"):
        return None
    selector = at_path(manifest.obj, path)
    return (path, selector) if isinstance(selector, dict) and selector else None


HpaIndex = dict[tuple[str, str, str], tuple[int, int]]


def count(obj: dict[str, Any], path: tuple[str, ...], default: int = 1) -> int | None:
    """A replica count or parallelism as the object states it (default when unset); None when
    it is no whole number, which the object's own findings report (a patch can write one)."""
    value = at_path(obj, path)
    if value is None:
        return default
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def hpa_index(objects: Iterable[dict[str, Any]]) -> HpaIndex:
    """(namespace, kind, name) of each HPA's target -> its replica range (HPAs whose range is
    no pair of whole numbers are left out)."""
    return dict(entry for obj in objects if (entry := hpa_entry(obj)) is not None)


HpaEntry = tuple[tuple[str, str, str], tuple[int, int]]


def hpa_of(manifest: Manifest) -> HpaEntry | None:
    """The manifest's entry in `hpa_index`."""
    entry: HpaEntry | None = manifest.fact("hpa", _hpa)
    return entry


def _hpa(manifest: Manifest) -> HpaEntry | None:
    return hpa_entry(manifest.obj)


def hpa_entry(obj: dict[str, Any]) -> HpaEntry | None:
    """An object's entry in `hpa_index`: None unless it is an HPA with a whole-number range."""
    if obj.get("kind") != "HorizontalPodAutoscaler":
        return None
    low, high = count(obj, ("spec", "minReplicas")), count(obj, ("spec", "maxReplicas"))
    if low is None or high is None:
        return None
    namespace = str(at_path(obj, ("metadata", "namespace")) or "")
    kind, name = (str(at_path(obj, ("spec", "scaleTargetRef", key))) for key in ("kind", "name"))
    return (namespace, kind, name), (low, high)


# Access modes under which a volume attaches to one node (or one Pod) only.
_SINGLE_ATTACH = frozenset({"ReadWriteOnce", "ReadWriteOncePod"})


def _most_pods(manifest: Manifest, hpas: HpaIndex) -> int:
    """The most Pods a workload runs at once: an HPA's maximum, its replicas, a Job's parallelism."""
    if manifest.kind == "Job":
        return count(manifest.obj, ("spec", "parallelism")) or 1
    scaled = hpas.get((manifest.namespace or "", manifest.kind, manifest.name))
    return scaled[1] if scaled else count(manifest.obj, ("spec", "replicas")) or 1


def shared_claims(manifests: list[Manifest], target: str) -> Iterator[Problem]:
    """`pvc-rwo-shared`: a workload that can run more than one Pod mounting a ReadWriteOnce
    claim of its target: the volume attaches to one node, so Pods elsewhere hang in
    ContainerCreating (ReadWriteOncePod: every Pod but one)."""
    claims = {
        (m.namespace or "", m.name): set(at_path(m.obj, ("spec", "accessModes")) or [])
        for m in manifests
        if m.group_kind == ("", "PersistentVolumeClaim")
    }
    holding = {namespace for namespace, _ in claims}
    if not holding:
        return
    hpas = dict(entry for m in manifests if (entry := hpa_of(m)) is not None)
    for manifest in manifests:
        if manifest.kind not in ("Deployment", "ReplicaSet", "StatefulSet", "Job") or (
            (manifest.namespace or "") not in holding
        ):
            continue
        spec_path = POD_SPEC_PATHS[manifest.kind]
        for i, volume in enumerate(at_path(manifest.obj, (*spec_path, "volumes")) or []):
            claim = at_path(volume, ("persistentVolumeClaim", "claimName"))
            modes = claims.get((manifest.namespace or "", str(claim)))
            if not modes or not modes <= _SINGLE_ATTACH or (pods := _most_pods(manifest, hpas)) < 2:
                continue
            mode = "ReadWriteOncePod" if "ReadWriteOncePod" in modes else "ReadWriteOnce"
            yield manifest.problem(
                (*spec_path, "volumes", i, "persistentVolumeClaim", "claimName"),
                "pvc-rwo-shared",
                f"{manifest.title} can run {pods} Pods, and they all mount {mode} claim {claim!r} of target "
                f"{target!r}: "
                + (
                    "only one Pod can use it at a time, the others stay in ContainerCreating"
                    if mode == "ReadWriteOncePod"
                    else "the volume attaches to one node, so Pods scheduled elsewhere stay in ContainerCreating"
                ),
                severity=Severity.WARNING,
                hint="give each Pod its own claim (a StatefulSet's volumeClaimTemplates), use ReadWriteMany "
                "storage, or run one replica",
            )
