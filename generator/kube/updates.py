"""What kube-apiserver refuses on update: fields that are immutable once an object exists.

Each rule is a `Validate*Update` function of kube-apiserver 1.35 (named in `docs/rules.md`):
when such a field changes, `kubectl apply`, Argo CD and Flux fail to sync the object until
someone deletes it. Objects are compared after the defaults kube-apiserver fills in, so
spelling out a default is no change.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any, NamedTuple

from generator.kube.api_versions import split_api
from generator.kube.quantity import parse_quantity
from generator.kube.scope import POD_SPEC_PATHS, at_path
from generator.problems import json_path

Path = tuple[str | int, ...]


class Refusal(NamedTuple):
    """The immutable field that changed, the first changed value under it, and the upstream rule."""

    field: Path
    changed: Path
    rule: str


def differences(old: Any, new: Any, path: Path = ()) -> Iterator[Path]:
    """Every path at which new differs from old: changed scalars, keys added or removed, lists
    that changed length (at the first index past the shorter one)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys(), key=str):
            if key not in old or key not in new:
                yield (*path, key)
            else:
                yield from differences(old[key], new[key], (*path, key))
    elif isinstance(old, list) and isinstance(new, list):
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            yield from differences(a, b, (*path, i))
        if len(old) != len(new):
            yield (*path, min(len(old), len(new)))
    elif old != new or type(old) is not type(new):
        yield path


def first_difference(old: Any, new: Any, path: Path = ()) -> Path | None:
    return next(differences(old, new, path), None)


# -- defaults: SetDefaults_* of pkg/apis/core/v1, apps/v1, batch/v1 for the fields that decide
#    restarts and refusals (a template spelling out a default is the same template)

_CONTAINER_DEFAULTS = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
_POD_DEFAULTS = {
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "terminationGracePeriodSeconds": 30,
    "securityContext": {},
    "enableServiceLinks": True,
}


def _pull_policy(image: Any) -> str:
    """SetDefaults_Container: Always for `:latest` or no tag, else IfNotPresent."""
    text = str(image)
    if "@" in text:
        return "IfNotPresent"
    tag = text.rpartition("/")[2].partition(":")[2]
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _default_container(container: Any) -> None:
    if not isinstance(container, dict):
        return
    for key, value in _CONTAINER_DEFAULTS.items():
        container.setdefault(key, value)
    if "image" in container:
        container.setdefault("imagePullPolicy", _pull_policy(container["image"]))
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for env in container.get("env") or []:
        field_ref = ((env or {}).get("valueFrom") or {}).get("fieldRef") if isinstance(env, dict) else None
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")


def _default_pod_spec(spec: Any, restart: str | None) -> None:
    if not isinstance(spec, dict):
        return
    for key, value in _POD_DEFAULTS.items():
        spec.setdefault(key, value)
    if restart is not None:
        spec.setdefault("restartPolicy", restart)
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            _default_container(container)


MAX_INT32 = 2147483647
_KIND_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {
    ("batch", "Job"): {"completionMode": "NonIndexed", "backoffLimit": 6, "parallelism": 1, "suspend": False},
    ("apps", "StatefulSet"): {"podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10},
    ("apps", "Deployment"): {"revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
    ("", "PersistentVolumeClaim"): {"volumeMode": "Filesystem"},
    ("", "PersistentVolume"): {"volumeMode": "Filesystem"},
    ("", "Service"): {"type": "ClusterIP", "sessionAffinity": "None"},
}


def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of obj with the defaults kube-apiserver would store."""
    out = copy.deepcopy(obj)
    group, kind = split_api(str(out.get("apiVersion", "")))[0], str(out.get("kind", ""))
    spec = out.get("spec")
    if isinstance(spec, dict):
        if (group, kind) == ("batch", "Job") and spec.get("backoffLimitPerIndex") is not None:
            spec.setdefault("backoffLimit", MAX_INT32)  # SetDefaults_Job: the per-index limit decides
        for key, value in _KIND_DEFAULTS.get((group, kind), {}).items():
            spec.setdefault(key, value)
        if kind == "Service":
            for port in spec.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
                    port.setdefault("targetPort", port.get("port"))
    if kind in POD_SPEC_PATHS:
        _default_pod_spec(at_path(out, POD_SPEC_PATHS[kind]), None if kind in ("Job", "CronJob") else "Always")
    return out


# -- the update rules


def _immutable(*fields: str) -> Callable[[dict[str, Any], dict[str, Any]], Path | None]:
    """A rule for spec fields that may not change once set (ValidateImmutableField)."""

    def rule(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
        for name in fields:
            path = tuple(name.split("."))
            if at_path(old, path) != at_path(new, path):
                return path
        return None

    return rule


def _job(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """validateJobSpecUpdate: completions may change only for an elastic Indexed Job."""
    found = _immutable(
        "spec.selector",
        "spec.template",
        "spec.completionMode",
        "spec.podFailurePolicy",
        "spec.backoffLimitPerIndex",
        "spec.successPolicy",
        "spec.managedBy",
    )(old, new)
    if found is not None:
        return found
    spec, was = new.get("spec") or {}, old.get("spec") or {}
    elastic = spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")
    if spec.get("completions") != was.get("completions") and not (
        elastic and was.get("completions") == was.get("parallelism")
    ):
        return ("spec", "completions")
    return None


_STATEFULSET_MUTABLE = frozenset(
    {
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    }
)


def _stateful_set(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidateStatefulSetUpdate: only the fields its message lists may change."""
    was, spec = old.get("spec") or {}, new.get("spec") or {}
    for key in sorted(was.keys() | spec.keys()):
        if key not in _STATEFULSET_MUTABLE and was.get(key) != spec.get(key):
            return ("spec", key)
    return None


def _pod(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidatePodUpdate: only container images, activeDeadlineSeconds, added tolerations and
    terminationGracePeriodSeconds may change."""
    was, spec = copy.deepcopy(old.get("spec") or {}), copy.deepcopy(new.get("spec") or {})
    for key in ("containers", "initContainers"):
        for before, after in zip(was.get(key) or [], spec.get(key) or [], strict=False):
            if isinstance(before, dict) and isinstance(after, dict) and "image" in after:
                before["image"] = after["image"]
    for key in ("activeDeadlineSeconds", "terminationGracePeriodSeconds"):
        was.pop(key, None)
        spec.pop(key, None)
    tolerations = spec.get("tolerations") or []
    if "tolerations" in spec and all(t in tolerations for t in was.get("tolerations") or []):
        was["tolerations"] = tolerations  # tolerations may only be added
    changed = first_difference(was, spec, ("spec",))
    return None if changed is None else changed[:2]


# PersistentVolumeSpec fields that are not its volume source.
_PV_NOT_SOURCE = frozenset(
    {
        "capacity",
        "accessModes",
        "claimRef",
        "persistentVolumeReclaimPolicy",
        "storageClassName",
        "mountOptions",
        "volumeMode",
        "nodeAffinity",
        "volumeAttributesClassName",
    }
)


def _persistent_volume(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidatePersistentVolumeUpdate: the volume source and volumeMode are immutable."""
    was, spec = old.get("spec") or {}, new.get("spec") or {}
    for key in sorted(was.keys() | spec.keys()):
        if (key not in _PV_NOT_SOURCE or key == "volumeMode") and was.get(key) != spec.get(key):
            return ("spec", key)
    return None


def _storage(request: Any) -> Decimal | None:
    return parse_quantity(request) if request is not None else None


def _claim(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidatePersistentVolumeClaimUpdate: the spec is immutable but for a larger storage
    request, volumeAttributesClassName, and a class or volume set where none was."""
    was, spec = copy.deepcopy(old.get("spec") or {}), copy.deepcopy(new.get("spec") or {})
    before = at_path(was, ("resources", "requests", "storage"))
    after = at_path(spec, ("resources", "requests", "storage"))
    if before != after:
        smaller, larger = _storage(before), _storage(after)
        if smaller is None or larger is None or larger < smaller:
            return ("spec", "resources", "requests", "storage")
    for part in (was, spec):
        part.pop("volumeAttributesClassName", None)
        if isinstance(part.get("resources"), dict):
            part["resources"] = {k: v for k, v in part["resources"].items() if k != "requests"}
    for key in ("storageClassName", "volumeName"):
        if key not in was:
            spec.pop(key, None)
    changed = first_difference(was, spec, ("spec",))
    return None if changed is None else changed[:2]


def _service(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidateServiceUpdate: an allocated (or `None`) cluster IP stays what it is."""
    for key in ("clusterIP", "clusterIPs"):
        path = ("spec", key)
        if at_path(old, path) != at_path(new, path):
            return path
    return None


def _immutable_data(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidateConfigMapUpdate / ValidateSecretUpdate: `immutable: true` freezes the data (and
    itself); a Secret's type never changes."""
    if old.get("kind") == "Secret" and old.get("type") != new.get("type"):
        return ("type",)
    if old.get("immutable") is not True:
        return None
    for key in ("immutable", "data", "binaryData", "stringData"):
        if old.get(key) != new.get(key):
            return (key,)
    return None


RULES: dict[tuple[str, str], tuple[str, Callable[[dict[str, Any], dict[str, Any]], Path | None]]] = {
    ("apps", "Deployment"): ("ValidateDeploymentUpdate", _immutable("spec.selector")),
    ("apps", "ReplicaSet"): ("ValidateReplicaSetUpdate", _immutable("spec.selector")),
    ("apps", "DaemonSet"): ("ValidateDaemonSetUpdate", _immutable("spec.selector")),
    ("apps", "StatefulSet"): ("ValidateStatefulSetUpdate", _stateful_set),
    ("batch", "Job"): ("ValidateJobUpdate", _job),
    ("", "Pod"): ("ValidatePodUpdate", _pod),
    ("", "PersistentVolumeClaim"): ("ValidatePersistentVolumeClaimUpdate", _claim),
    ("", "PersistentVolume"): ("ValidatePersistentVolumeUpdate", _persistent_volume),
    ("", "Service"): ("ValidateServiceUpdate", _service),
    ("", "ConfigMap"): ("ValidateConfigMapUpdate", _immutable_data),
    ("", "Secret"): ("ValidateSecretUpdate", _immutable_data),
    ("rbac.authorization.k8s.io", "RoleBinding"): ("ValidateRoleBindingUpdate", _immutable("roleRef")),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ("ValidateClusterRoleBindingUpdate", _immutable("roleRef")),
    ("storage.k8s.io", "StorageClass"): (
        "ValidateStorageClassUpdate",
        _immutable("provisioner", "parameters", "reclaimPolicy", "volumeBindingMode"),
    ),
    ("scheduling.k8s.io", "PriorityClass"): ("ValidatePriorityClassUpdate", _immutable("value", "preemptionPolicy")),
    ("networking.k8s.io", "IngressClass"): ("ValidateIngressClassUpdate", _immutable("spec.controller")),
}


def refused(old: dict[str, Any], new: dict[str, Any]) -> Refusal | None:
    """The immutable field kube-apiserver refuses to change from old to new (both defaulted)."""
    group, kind = split_api(str(new.get("apiVersion", "")))[0], str(new.get("kind", ""))
    found = RULES.get((group, kind))
    if found is None:
        return None
    name, rule = found
    field = rule(old, new)
    if field is None:
        return None
    changed = first_difference(at_path(old, field), at_path(new, field), field) or field
    return Refusal(field, changed, name)


def spelled(path: Path) -> str:
    """A path as kubectl names fields: `spec.template.spec.containers[0].image`."""
    return json_path(path).removeprefix("$.").removeprefix("$")
