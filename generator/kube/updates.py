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
    """The immutable field that changed, the first changed value under it, the upstream rule,
    and the state of the live object under which kube-apiserver accepts it after all (gen
    sees Git, not the cluster): empty when it refuses whatever that state. `blocks`: whether
    the plan counts it a refusal while that state is unknown (a Job suspended in Git has, as
    a rule, never run: its change is planned as accepted, with the condition said)."""

    field: Path
    changed: Path
    rule: str
    unless: str = ""
    blocks: bool = True


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


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    """An object's spec, or none when a hand-edited file holds something else there."""
    found = obj.get("spec")
    return found if isinstance(found, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


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
    ("batch", "Job"): {"completionMode": "NonIndexed", "suspend": False},
    ("apps", "StatefulSet"): {
        "replicas": 1,
        "podManagementPolicy": "OrderedReady",
        "revisionHistoryLimit": 10,
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
    },
    ("apps", "Deployment"): {"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
    ("apps", "ReplicaSet"): {"replicas": 1},
    ("apps", "DaemonSet"): {"revisionHistoryLimit": 10},
    ("", "PersistentVolumeClaim"): {"volumeMode": "Filesystem"},
    ("", "PersistentVolume"): {"volumeMode": "Filesystem"},
    ("", "Service"): {"type": "ClusterIP", "sessionAffinity": "None"},
}


# The rolling update each apps/v1 kind gets when its strategy says none (SetDefaults_Deployment,
# SetDefaults_StatefulSet, SetDefaults_DaemonSet).
_ROLLING_UPDATES: dict[str, tuple[str, dict[str, Any]]] = {
    "Deployment": ("strategy", {"maxSurge": "25%", "maxUnavailable": "25%"}),
    "StatefulSet": ("updateStrategy", {"partition": 0}),
    "DaemonSet": ("updateStrategy", {"maxUnavailable": 1, "maxSurge": 0}),
}


def _default_workload(group: str, kind: str, spec: dict[str, Any]) -> None:
    """The defaults that depend on other fields: SetDefaults_Job (completions 1 when neither it
    nor parallelism is set, parallelism 1, backoffLimit 6 or MaxInt32 beside backoffLimitPerIndex,
    podReplacementPolicy Failed beside a podFailurePolicy, else TerminatingOrFailed) and the
    apps/v1 update strategies."""
    if (group, kind) == ("batch", "Job"):
        if "completions" not in spec and "parallelism" not in spec:
            spec["completions"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6)
        spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed")
    elif group == "apps" and kind in _ROLLING_UPDATES:
        key, rolling = _ROLLING_UPDATES[kind]
        strategy = spec.setdefault(key, {})
        if not isinstance(strategy, dict):
            return
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            update = strategy.setdefault("rollingUpdate", {})
            if isinstance(update, dict):
                for name, value in rolling.items():
                    update.setdefault(name, value)


def rolling_surge(deployment: dict[str, Any], replicas: int) -> int:
    """The Pods a Deployment's rolling update runs above its replicas: maxSurge as stored
    (default 25%), a percentage of replicas rounded up (ResolveFenceposts,
    pkg/controller/deployment/util/deployment_util.go); none for Recreate."""
    strategy = spec_of(deployment).get("strategy")
    strategy = strategy if isinstance(strategy, dict) else {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0
    rolling = strategy.get("rollingUpdate")
    value = rolling.get("maxSurge", "25%") if isinstance(rolling, dict) else "25%"
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return -(-replicas * int(value[:-1]) // 100)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of obj with the defaults kube-apiserver would store."""
    out = copy.deepcopy(obj)
    group, kind = split_api(str(out.get("apiVersion", "")))[0], str(out.get("kind", ""))
    spec = out.get("spec")
    if isinstance(spec, dict):
        for key, value in _KIND_DEFAULTS.get((group, kind), {}).items():
            spec.setdefault(key, value)
        if kind == "Service":
            for port in _list(spec.get("ports")):
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
                    port.setdefault("targetPort", port.get("port"))
        _default_workload(group, kind, spec)
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


# What validatePodTemplateUpdate lets a suspended Job that never started change in its template.
_SCHEDULING_DIRECTIVES: tuple[Path, ...] = (
    ("metadata", "labels"),
    ("metadata", "annotations"),
    ("spec", "nodeSelector"),
    ("spec", "tolerations"),
    ("spec", "schedulingGates"),
    ("spec", "affinity", "nodeAffinity"),
)


def _without_scheduling_directives(template: Any) -> Any:
    """A Job's pod template without what the Job strategy's AllowMutableSchedulingDirectives
    frees (an affinity left empty counts as none, as upstream clears it)."""
    out = copy.deepcopy(template)
    for path in _SCHEDULING_DIRECTIVES:
        parent = at_path(out, path[:-1])
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    spec = out.get("spec") if isinstance(out, dict) else None
    if isinstance(spec, dict) and spec.get("affinity") == {}:
        spec.pop("affinity")
    return out


def _job(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidateJobSpecUpdate: selector, template, completionMode, podFailurePolicy,
    backoffLimitPerIndex, managedBy and successPolicy are immutable; completions too, but for an
    Indexed Job whose new completions equal its new parallelism (validateCompletions: elastic
    Indexed Jobs, GA in 1.31)."""
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
    spec, was = spec_of(new), spec_of(old)
    if spec.get("completions") == was.get("completions"):
        return None
    elastic = spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")
    return None if elastic else ("spec", "completions")


def _job_unless(old: dict[str, Any], new: dict[str, Any], field: Path) -> str:
    """validationOptionsForJob (pkg/registry/batch/job/strategy.go): node scheduling directives
    of a Job that is suspended and has no status.startTime may change, which Git cannot tell."""
    if field != ("spec", "template") or at_path(old, ("spec", "suspend")) is not True:
        return ""
    before, after = at_path(old, field), at_path(new, field)
    if _without_scheduling_directives(before) != _without_scheduling_directives(after):
        return ""
    return "the Job never started (created suspended, never resumed: no status.startTime)"


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
    was, spec = spec_of(old), spec_of(new)
    for key in sorted(was.keys() | spec.keys()):
        if key not in _STATEFULSET_MUTABLE and was.get(key) != spec.get(key):
            return ("spec", key)
    return None


def _pod(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidatePodUpdate: only container images, activeDeadlineSeconds, added tolerations and
    terminationGracePeriodSeconds may change."""
    was, spec = copy.deepcopy(spec_of(old)), copy.deepcopy(spec_of(new))
    for key in ("containers", "initContainers"):
        for before, after in zip(_list(was.get(key)), _list(spec.get(key)), strict=False):
            if isinstance(before, dict) and isinstance(after, dict) and "image" in after:
                before["image"] = after["image"]
    for key in ("activeDeadlineSeconds", "terminationGracePeriodSeconds"):
        was.pop(key, None)
        spec.pop(key, None)
    tolerations = _list(spec.get("tolerations"))
    if "tolerations" in spec and all(t in tolerations for t in _list(was.get("tolerations"))):
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
    was, spec = spec_of(old), spec_of(new)
    for key in sorted(was.keys() | spec.keys()):
        if (key not in _PV_NOT_SOURCE or key == "volumeMode") and was.get(key) != spec.get(key):
            return ("spec", key)
    return None


def _storage(request: Any) -> Decimal | None:
    return parse_quantity(request) if request is not None else None


def _claim(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidatePersistentVolumeClaimUpdate: the spec is immutable but for a larger storage
    request, volumeAttributesClassName, and a class or volume set where none was."""
    was, spec = copy.deepcopy(spec_of(old)), copy.deepcopy(spec_of(new))
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


def _service_type(obj: dict[str, Any]) -> str:
    return str(at_path(obj, ("spec", "type")) or "ClusterIP")


def _service(old: dict[str, Any], new: dict[str, Any]) -> Path | None:
    """ValidateServiceUpdate: a cluster IP, once set, stays what it is, unless either side is
    ExternalName (validateUpgradeDowngradeClusterIPs; an omitted one was already put back,
    kept_by_server); a LoadBalancer's loadBalancerClass stays what it is while it stays a
    LoadBalancer, set or not (validateLoadBalancerClassField)."""
    types = (_service_type(old), _service_type(new))
    if "ExternalName" not in types:
        for key in ("clusterIP", "clusterIPs"):
            path = ("spec", key)
            if at_path(old, path) != at_path(new, path):
                return path
    path = ("spec", "loadBalancerClass")
    if types == ("LoadBalancer", "LoadBalancer") and at_path(old, path) != at_path(new, path):
        return path
    return None


def _service_unless(old: dict[str, Any], new: dict[str, Any], field: Path) -> str:
    """A Service committed without a cluster IP has the one kube-apiserver allocated, which Git
    does not hold."""
    if at_path(old, field) is None and at_path(new, ("spec", "clusterIP")) != "None":
        return "the address set is the one kube-apiserver allocated when it created the Service"
    return ""


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


# When a refusal depends on live state: what gen cannot see, in words, and whether the plan
# still counts it a refusal.
_UNLESS: dict[tuple[str, str], tuple[Callable[[dict[str, Any], dict[str, Any], Path], str], bool]] = {
    ("batch", "Job"): (_job_unless, False),
    ("", "Service"): (_service_unless, True),
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
    condition, blocks = _UNLESS.get((group, kind), (None, True))
    unless = condition(old, new, field) if condition is not None else ""
    return Refusal(field, changed, name, unless, blocks or not unless)


# -- what the update strategy keeps of the stored object


def kept_by_server(old: dict[str, Any], new: dict[str, Any]) -> tuple[dict[str, Any], list[Path]]:
    """new as kube-apiserver stores it over old, and the fields it kept from old because new
    omits them. Only a Service has such fields (patchAllocatedValues,
    pkg/registry/core/service/storage/storage.go): its cluster IPs unless either side is
    ExternalName; node ports by port name while both need them (NodePort, LoadBalancer) and
    another port does not hold the number; the health check node port while both are
    LoadBalancers with externalTrafficPolicy Local."""
    if new.get("kind") != "Service" or old.get("kind") != "Service":
        return new, []
    was, spec = old.get("spec"), new.get("spec")
    if not isinstance(was, dict) or not isinstance(spec, dict):
        return new, []
    out = copy.deepcopy(new)
    spec = out["spec"]
    kept: list[Path] = []
    types = (_service_type(old), _service_type(new))
    if "ExternalName" not in types:
        for key in ("clusterIP", "clusterIPs"):
            if not spec.get(key) and was.get(key):
                spec[key] = was[key]
                kept.append(("spec", key))
    if all(kind in ("NodePort", "LoadBalancer") for kind in types):
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        used = {p.get("nodePort") for p in ports if p.get("nodePort")}
        by_name = {p.get("name"): p.get("nodePort") for p in was.get("ports") or [] if isinstance(p, dict)}
        for i, port in enumerate(spec.get("ports") or []):
            if isinstance(port, dict) and not port.get("nodePort"):
                number = by_name.get(port.get("name"))
                if number and number not in used:
                    port["nodePort"] = number
                    kept.append(("spec", "ports", i, "nodePort"))
    local = all(at_path(obj, ("spec", "externalTrafficPolicy")) == "Local" for obj in (old, new))
    health = "healthCheckNodePort"
    if types == ("LoadBalancer", "LoadBalancer") and local and not spec.get(health) and was.get(health):
        spec[health] = was[health]
        kept.append(("spec", health))
    return out, kept


# -- admission on by default


def storage_class_of(claim: dict[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    beta = annotations.get("volume.beta.kubernetes.io/storage-class") if isinstance(annotations, dict) else None
    return str(beta if beta is not None else at_path(claim, ("spec", "storageClassName")) or "")


def claim_grows(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether new asks for more storage than old (PersistentVolumeClaimResize's trigger)."""
    path = ("spec", "resources", "requests", "storage")
    smaller, larger = _storage(at_path(old, path)), _storage(at_path(new, path))
    return smaller is not None and larger is not None and larger > smaller


def resize_allowed(old: dict[str, Any], new: dict[str, Any], classes: dict[str, dict[str, Any]]) -> bool | None:
    """allowResize of the PersistentVolumeClaimResize admission plugin for a growing claim:
    the same class before and after, and that StorageClass's allowVolumeExpansion. None when
    the StorageClass is not among classes (the render's, by name) and lives only in the
    cluster, or when Git names none (the claim has the cluster's default class)."""
    name = storage_class_of(new)
    if name != storage_class_of(old):
        return False
    if not name or name not in classes:
        return None
    return classes[name].get("allowVolumeExpansion") is True


def spelled(path: Path) -> str:
    """A path as kubectl names fields: `spec.template.spec.containers[0].image`."""
    return json_path(path).removeprefix("$.").removeprefix("$")
