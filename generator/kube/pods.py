"""kube-apiserver's rules for Pods and pod templates (pkg/apis/core/validation: ValidatePodSpec,
its volumes, affinity, tolerations and resources; its containers' are in containers.py), and the
pod-deletion-cost annotation the ReplicaSet controller reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Set
from decimal import Decimal
from typing import Any

from generator.kube import containers, names, pod_spec
from generator.kube import labels as labels_
from generator.kube import volumes as volumes_
from generator.kube.findings import Finding, Path, error_at, unsupported, warning_at
from generator.kube.objectmeta import check_metadata
from generator.kube.quantity import parse_quantity
from generator.kube.scope import at_path
from generator.problems import Severity
from generator.schema_messages import shown

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
# what a StatefulSet's volumeClaimTemplates become in its Pods: claims of their own
_CLAIM_VOLUME: dict[str, Any] = {"persistentVolumeClaim": {}}


# ---- pod-deletion-cost -------------------------------------------------------------------

_COST_FIRST = re.compile(r"^(-|[1-9])")


def parse_deletion_cost(value: str) -> int | None:
    """GetDeletionCostFromPodAnnotations: first char '-' or 1-9 (or exactly "0"), then base-10 int32."""
    if value != "0" and not _COST_FIRST.match(value):
        return None
    if not re.fullmatch(r"-?[0-9]+", value):
        return None
    number = int(value)
    return number if -(2**31) <= number < 2**31 else None


def check_pod_template_annotations(meta: Any, path: Path, owner: str) -> Iterator[Finding]:
    if not isinstance(meta, dict) or DELETION_COST not in (meta.get("annotations") or {}):
        return
    value = meta["annotations"][DELETION_COST]
    where = (*path, "annotations", DELETION_COST)
    if not isinstance(value, str) or parse_deletion_cost(value) is None:
        yield error_at(
            where,
            "k8s-deletion-cost",
            f"pod-deletion-cost {value!r} must be a 32bit integer",
            "a base-10 signed int32 with no sign '+', no leading zeros, no spaces",
        )
    if owner not in ("Deployment", "ReplicaSet"):
        yield warning_at(
            where,
            "deletion-cost-not-replicaset",
            f"pod-deletion-cost on a {owner}'s Pods has no effect: only the ReplicaSet controller reads it",
            "use a Deployment (ReplicatedService) or drop the annotation",
        )


# ---- pod spec ----------------------------------------------------------------------------


_NODE_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


def check_node_selector_requirement(expr: Any, path: Path, required: bool) -> Iterator[Finding]:
    if not isinstance(expr, dict):
        return
    op, values, key = expr.get("operator"), expr.get("values") or [], expr.get("key", "")
    if err := names.qualified_name(str(key)):
        yield error_at((*path, "key"), "k8s-node-selector", f"key {key!r}: {err}")
    if op not in _NODE_OPERATORS:
        yield error_at((*path, "operator"), "k8s-node-selector", f"{op!r} is not a valid selector operator")
        return
    if op in ("In", "NotIn") and not values:
        yield error_at((*path, "values"), "k8s-node-selector", "must be specified when `operator` is 'In' or 'NotIn'")
    if op in ("Exists", "DoesNotExist") and values:
        yield error_at(
            (*path, "values"), "k8s-node-selector", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        )
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            yield error_at(
                (*path, "values"), "k8s-node-selector", "must be specified single value when `operator` is 'Lt' or 'Gt'"
            )
        elif not re.fullmatch(r"[+-]?[0-9]+", str(values[0])) or not -(2**63) <= int(values[0]) < 2**63:
            # kube-apiserver accepts it; the scheduler cannot parse it, so the term matches no node:
            # a required term then never schedules the Pod (an error), a preferred one never applies
            yield Finding(
                (*path, "values", 0),
                "k8s-node-selector-integer",
                Severity.ERROR if required else Severity.WARNING,
                f"Gt/Lt value {values[0]!r} is not an integer: the scheduler cannot parse it, so the term matches "
                + ("no node and the Pod never schedules" if required else "no node"),
                "use an integer such as '40959'",
            )
    if required:
        for i, value in enumerate(values):
            if isinstance(value, str) and (err := names.label_value(value)):
                yield error_at((*path, "values", i), "k8s-node-selector", f"value {value!r}: {err}")


def check_affinity(affinity: Any, path: Path, merged_labels: Any = None) -> Iterator[Finding]:
    """validateAffinity; merged_labels: a Pod's labels, which kube-apiserver merges into its
    pod affinity terms' selectors by their matchLabelKeys before validating."""
    if not isinstance(affinity, dict):
        return
    node = affinity.get("nodeAffinity") or {}
    req = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict):
        terms = req.get("nodeSelectorTerms")
        rpath = (*path, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        if not terms:
            yield error_at(rpath, "k8s-node-selector", "must have at least one node selector term")
        for t, term in enumerate(terms or []):
            for e, expr in enumerate((term or {}).get("matchExpressions") or []):
                yield from check_node_selector_requirement(expr, (*rpath, t, "matchExpressions", e), True)
            for e, field in enumerate((term or {}).get("matchFields") or []):
                yield from _check_node_field_selector(field, (*rpath, t, "matchFields", e))
    for p, pref in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        ppath = (*path, "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", p)
        if not isinstance(pref.get("weight"), int) or not 1 <= pref["weight"] <= 100:
            yield error_at((*ppath, "weight"), "k8s-affinity-weight", "must be in the range 1-100")
        for e, expr in enumerate((pref.get("preference") or {}).get("matchExpressions") or []):
            yield from check_node_selector_requirement(expr, (*ppath, "preference", "matchExpressions", e), False)
        for e, field in enumerate((pref.get("preference") or {}).get("matchFields") or []):
            yield from _check_node_field_selector(field, (*ppath, "preference", "matchFields", e))
    for kind in ("podAffinity", "podAntiAffinity"):
        block = affinity.get(kind) or {}
        for p, term in enumerate(block.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            yield from _check_pod_affinity_term(
                term, (*path, kind, "requiredDuringSchedulingIgnoredDuringExecution", p), merged_labels
            )
        for p, pref in enumerate(block.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            w = pref.get("weight")
            if not isinstance(w, int) or not 1 <= w <= 100:
                yield error_at(
                    (*path, kind, "preferredDuringSchedulingIgnoredDuringExecution", p, "weight"),
                    "k8s-affinity-weight",
                    "must be in the range 1-100",
                )
            yield from _check_pod_affinity_term(
                pref.get("podAffinityTerm"),
                (*path, kind, "preferredDuringSchedulingIgnoredDuringExecution", p, "podAffinityTerm"),
                merged_labels,
            )


def _check_node_field_selector(field: Any, path: Path) -> Iterator[Finding]:
    """ValidateNodeFieldSelectorRequirement: In or NotIn with one value, on metadata.name
    only, whose values are node names."""
    if not isinstance(field, dict):
        return
    values = field.get("values") or []
    if field.get("operator") not in ("In", "NotIn"):
        yield error_at(
            (*path, "operator"), "k8s-node-selector", f"{shown(field.get('operator'))}: not a valid selector operator"
        )
    elif len(values) != 1:
        yield error_at(
            (*path, "values"),
            "k8s-node-selector",
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        )
    if field.get("key") != "metadata.name":
        yield error_at(
            (*path, "key"),
            "k8s-node-selector",
            f"{shown(field.get('key'))}: not a valid field selector key",
            "metadata.name",
        )
        return
    for i, value in enumerate(values):
        if err := names.dns1123_subdomain(str(value)):
            yield error_at((*path, "values", i), "k8s-node-selector", f"node name {shown(value)} {err}")


def selected_twice(selector: Any, keys: list[str], merged_labels: Any) -> set[str]:
    """The matchLabelKeys a labelSelector names twice (matchLabels and matchExpressions
    together) once kube-apiserver has merged them into it: for a Pod (merged_labels, its
    labels) it adds `key In (value)` for each key the Pod carries; a template's stay as written."""
    if not isinstance(selector, dict):
        return set()
    named = [*(selector.get("matchLabels") or {})]
    named += [str(e.get("key")) for e in selector.get("matchExpressions") or [] if isinstance(e, dict)]
    if isinstance(merged_labels, dict):
        named += [key for key in keys if key in merged_labels]
    return {key for key in keys if named.count(key) > 1}


def _check_pod_affinity_term(term: Any, path: Path, merged_labels: Any) -> Iterator[Finding]:
    """validatePodAffinityTerm: valid selectors, namespaces that are namespace names,
    matchLabelKeys and mismatchLabelKeys label keys beside a labelSelector, never the same key
    in both or in matchLabelKeys and twice in the selector, and a topologyKey."""
    if not isinstance(term, dict):
        return
    rule = "k8s-pod-affinity"
    for field in ("labelSelector", "namespaceSelector"):  # ValidatePodAffinityTermSelector
        yield from labels_.check_selector(term.get(field), (*path, field), rule)
    for i, namespace in enumerate(term.get("namespaces") or []):
        if err := names.dns1123_label(str(namespace)):
            yield error_at((*path, "namespaces", i), rule, f"namespace {shown(namespace)} {err}")
    selector = term.get("labelSelector")
    for field in ("matchLabelKeys", "mismatchLabelKeys"):
        keys = term.get(field) or []
        if keys and selector is None:
            yield error_at((*path, field), rule, "must not be specified when labelSelector is not set")
            continue
        for i, key in enumerate(keys):
            if err := names.qualified_name(str(key)):
                yield error_at((*path, field, i), rule, f"{shown(key)}: {err}")
    match_keys = [str(k) for k in term.get("matchLabelKeys") or []]
    for i, key in enumerate(match_keys):
        if key in selected_twice(selector, match_keys, merged_labels):
            yield error_at(
                (*path, "matchLabelKeys", i), rule, f"{shown(key)}: exists in both matchLabelKeys and labelSelector"
            )
    mismatch = {str(k) for k in term.get("mismatchLabelKeys") or []}
    for i, key in enumerate(match_keys):
        if key in mismatch:
            yield error_at(
                (*path, "matchLabelKeys", i), rule, f"{shown(key)}: exists in both matchLabelKeys and mismatchLabelKeys"
            )
    topology = term.get("topologyKey")
    if not topology:
        yield error_at(
            (*path, "topologyKey"),
            rule,
            "Required value: can not be empty",
            "a node label, such as kubernetes.io/hostname",
        )
    elif err := names.qualified_name(str(topology)):
        yield error_at((*path, "topologyKey"), rule, f"{shown(topology)}: {err}")


def check_pod_spec(
    spec: Any, path: Path, owner: str, gates: Set[str], claims: Iterable[str] = (), merged_labels: Any = None
) -> Iterator[Finding]:
    """claims: a StatefulSet's volumeClaimTemplates, which its Pods mount as volumes; gates: the
    feature gates on (containers.GATES) for the version, and containers.PRIVILEGED_DISALLOWED
    where the clusters refuse privileged containers; merged_labels: a Pod's own labels (see
    selected_twice)."""
    if not isinstance(spec, dict):
        return
    policy = spec.get("restartPolicy")
    if owner in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") and policy not in (None, "Always"):
        yield error_at(
            (*path, "restartPolicy"), "k8s-restart-policy", f"{owner} Pods support only restartPolicy Always"
        )
    if owner in ("Pod", "PodTemplate") and policy not in (None, "Always", "OnFailure", "Never"):
        yield error_at(
            (*path, "restartPolicy"), "k8s-enum", f"Unsupported value: {policy!r}: Always, OnFailure or Never"
        )
    dns = spec.get("dnsPolicy")
    if dns is not None and dns not in ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"):
        yield error_at((*path, "dnsPolicy"), "k8s-enum", f"Unsupported value: {dns!r}")
    change = (spec.get("securityContext") or {}).get("seLinuxChangePolicy")
    if change is not None and change not in ("MountOption", "Recursive"):
        yield unsupported(
            (*path, "securityContext", "seLinuxChangePolicy"), "k8s-enum", change, ("MountOption", "Recursive")
        )
    if owner == "Job" and policy not in ("Never", "OnFailure"):
        yield error_at(
            (*path, "restartPolicy"), "k8s-restart-policy", "a Job's Pods need restartPolicy Never or OnFailure"
        )
    if owner in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") and "activeDeadlineSeconds" in spec:
        yield error_at(
            (*path, "activeDeadlineSeconds"), "k8s-restart-policy", f"not allowed in a {owner}'s Pod template"
        )
    for field in ("serviceAccountName", "priorityClassName"):  # names of other objects: DNS-1123 subdomains
        ref = spec.get(field)
        if isinstance(ref, str) and ref and (err := names.dns1123_subdomain(ref)):
            yield error_at((*path, field), "k8s-name", f"{field} {ref!r} {err}")
    volumes = {str(v.get("name")): v for v in spec.get("volumes") or [] if isinstance(v, dict)}
    volumes.update(dict.fromkeys(claims, _CLAIM_VOLUME))
    yield from containers.check_containers(spec, path, owner, volumes, gates)
    # each of these reads one field, which most Pod specs leave out: only those set are asked
    if spec.get("affinity") is not None:
        yield from check_affinity(spec["affinity"], (*path, "affinity"), merged_labels)
    if spec.get("nodeSelector") is not None:
        yield from check_node_selector(spec["nodeSelector"], (*path, "nodeSelector"))
    if spec.get("tolerations") is not None:
        yield from check_tolerations(spec["tolerations"], (*path, "tolerations"))
    if spec.get("topologySpreadConstraints") is not None:
        yield from check_topology_spread(
            spec["topologySpreadConstraints"], (*path, "topologySpreadConstraints"), merged_labels
        )
    if spec.get("resources") is not None:
        yield from check_pod_resources(spec, path)
    yield from check_host_ports(spec, path)
    if spec.get("volumes") is not None:
        yield from volumes_.check_volumes(spec["volumes"], (*path, "volumes"))
    yield from _check_run_as_root(spec, path)
    yield from pod_spec.check_spec_fields(spec, path, owner, gates)
    if spec.get("overhead") is not None:
        yield from _check_overhead(spec["overhead"], (*path, "overhead"))


def check_node_selector(selector: Any, path: Path) -> Iterator[Finding]:
    """ValidateLabels on a node selector: a key or value no label can have, no node carries."""
    yield from labels_.check_labels(selector, path, "k8s-node-selector")


def _check_run_as_root(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """The kubelet refuses to start a container that must not run as root but is told to run as
    user 0 (container settings over the Pod's): the Pod never runs."""
    pod: dict[str, Any] = spec["securityContext"] if isinstance(spec.get("securityContext"), dict) else {}
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            ctx = (c.get("securityContext") if isinstance(c, dict) else None) or {}
            if not isinstance(ctx, dict):
                continue
            non_root = ctx.get("runAsNonRoot", pod.get("runAsNonRoot"))
            user = ctx.get("runAsUser", pod.get("runAsUser"))
            if non_root is True and user == 0:
                at = (*path, group, i, "securityContext") if "runAsUser" in ctx else (*path, "securityContext")
                yield error_at(
                    (*at, "runAsUser"),
                    "k8s-security-context",
                    f"container {c.get('name')!s} runs as user 0 with runAsNonRoot: the kubelet refuses to start it",
                    "run as a non-zero user, or drop runAsNonRoot if it must run as root",
                )


_TOLERATION_EFFECTS = frozenset({"", "NoSchedule", "PreferNoSchedule", "NoExecute"})


def check_tolerations(tolerations: Any, path: Path) -> Iterator[Finding]:
    """validateTolerations: keys, operator/value pairs, effects, tolerationSeconds."""
    for i, tol in enumerate(tolerations or []):
        if not isinstance(tol, dict):
            continue
        tpath = (*path, i)
        key, op, value = tol.get("key") or "", tol.get("operator") or "", tol.get("value") or ""
        if key and (err := names.qualified_name(str(key))):
            yield error_at((*tpath, "key"), "k8s-toleration", f"key {key!r}: {err}")
        if not key and op != "Exists":
            yield error_at(
                (*tpath, "operator"),
                "k8s-toleration",
                "operator must be Exists when `key` is empty, which means 'match all values and all keys'",
            )
        if op in ("", "Equal"):
            if err := names.label_value(str(value)):
                yield error_at((*tpath, "value"), "k8s-toleration", f"value {value!r}: {err}")
        elif op == "Exists":
            if value:
                yield error_at((*tpath, "value"), "k8s-toleration", "value must be empty when `operator` is 'Exists'")
        else:
            yield error_at(
                (*tpath, "operator"), "k8s-toleration", f"Unsupported value: {op!r}: supported values: Equal, Exists"
            )
        effect = tol.get("effect") or ""
        if effect not in _TOLERATION_EFFECTS:
            yield error_at((*tpath, "effect"), "k8s-toleration", f"Unsupported value: {effect!r}")
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            yield error_at(
                (*tpath, "effect"), "k8s-toleration", "effect must be 'NoExecute' when `tolerationSeconds` is set"
            )


TOLERATIONS_ANNOTATION = "scheduler.alpha.kubernetes.io/tolerations"
_TOLERATION_FIELDS = {"key": str, "operator": str, "value": str, "effect": str, "tolerationseconds": int}


def _check_pod_annotations(meta: Any, spec: Any, path: Path, spec_path: Path, is_pod: bool) -> Iterator[Finding]:
    """ValidatePodSpecificAnnotations beside the deletion cost: the tolerations annotation
    (ValidateTolerationsInPodAnnotations), then pod_spec's mirror, seccomp and AppArmor ones."""
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict) and annotations.get(TOLERATIONS_ANNOTATION):
        where = (*path, "annotations", TOLERATIONS_ANNOTATION)
        tolerations = _decoded_tolerations(str(annotations[TOLERATIONS_ANNOTATION]))
        if tolerations is None:
            yield error_at(
                where,
                "k8s-toleration",
                "the tolerations annotation is not a JSON list of tolerations",
                "set spec.tolerations instead",
            )
        else:
            yield from check_tolerations(tolerations, where)
    yield from pod_spec.check_pod_annotations(meta, spec, path, spec_path, is_pod)


def _decoded_tolerations(text: str) -> list[dict[str, Any]] | None:
    """The annotation as Go's encoding/json decodes it into []v1.Toleration: field names
    matched without regard to case (an exact match first), each of its type; None where the
    decoding fails."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if value is None:
        return []
    if not isinstance(value, list):
        return None
    decoded: list[dict[str, Any]] = []
    for item in value:
        if item is None:
            decoded.append({})
            continue
        if not isinstance(item, dict):
            return None
        fields: dict[str, Any] = {}
        exact = ("key", "operator", "value", "effect", "tolerationSeconds")
        for key in sorted(item, key=lambda k: k in exact):  # an exact name is read last, so it wins
            wanted = _TOLERATION_FIELDS.get(str(key).lower())
            if wanted is None or item[key] is None:
                continue
            if type(item[key]) is not wanted:
                return None
            fields["tolerationSeconds" if wanted is int else str(key).lower()] = item[key]
        decoded.append(fields)
    return decoded


def _check_overhead(overhead: Any, path: Path) -> Iterator[Finding]:
    """validateOverhead: the overhead is checked as a container's limits."""
    for name, raw in overhead.items() if isinstance(overhead, dict) else ():
        if err := containers.resource_name_error(str(name)):
            yield error_at((*path, name), "k8s-resource-name", f"resource {name!r} {err}")
        elif (value := parse_quantity(raw)) is None or value < 0:
            yield error_at((*path, name), "k8s-quantity", f"{name} must be greater than or equal to 0")


_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION = ("Honor", "Ignore")


def check_topology_spread(constraints: Any, path: Path, merged_labels: Any = None) -> Iterator[Finding]:
    """validateTopologySpreadConstraints, as on create: maxSkew above 0, a topology key, a known
    whenUnsatisfiable, no {topologyKey, whenUnsatisfiable} twice, minDomains above 0 and only
    with DoNotSchedule, known node inclusion policies, matchLabelKeys only beside a
    labelSelector and each a label key, the labelSelector itself valid."""
    rule = "k8s-topology-spread"
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints if isinstance(constraints, list) else ()):
        if not isinstance(c, dict):
            continue
        at = (*path, i)
        skew, key, when = c.get("maxSkew"), c.get("topologyKey") or "", c.get("whenUnsatisfiable") or ""
        if isinstance(skew, int) and skew <= 0:
            yield error_at((*at, "maxSkew"), rule, f"maxSkew {skew} must be greater than zero")
        if not key:
            yield error_at(
                (*at, "topologyKey"),
                rule,
                "topologyKey can not be empty",
                "a node label, such as topology.kubernetes.io/zone",
            )
        if when not in _WHEN_UNSATISFIABLE:
            yield unsupported((*at, "whenUnsatisfiable"), rule, when, _WHEN_UNSATISFIABLE)
        if (key, when) in seen:
            yield error_at(
                at, rule, f"Duplicate value: {{{key}, {when}}}: one constraint per topology key and whenUnsatisfiable"
            )
        seen.add((key, when))
        domains = c.get("minDomains")
        if isinstance(domains, int):
            if domains <= 0:
                yield error_at((*at, "minDomains"), rule, f"minDomains {domains} must be greater than zero")
            if when != "DoNotSchedule":
                yield error_at(
                    (*at, "minDomains"), rule, f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"
                )
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if policy in c and c[policy] not in _NODE_INCLUSION:
                yield unsupported((*at, policy), rule, c[policy], _NODE_INCLUSION)
        keys = c.get("matchLabelKeys") or []
        if keys and c.get("labelSelector") is None:
            yield error_at((*at, "matchLabelKeys"), rule, "must not be specified when labelSelector is not set")
        twice = selected_twice(c.get("labelSelector"), [str(k) for k in keys], merged_labels)
        for k, label in enumerate(keys):
            if err := names.qualified_name(str(label)):
                yield error_at((*at, "matchLabelKeys", k), rule, f"{shown(label)}: {err}")
            if str(label) in twice:
                yield error_at(
                    (*at, "matchLabelKeys", k), rule, f"{shown(label)}: exists in both matchLabelKeys and labelSelector"
                )
        yield from labels_.check_selector(c.get("labelSelector"), (*at, "labelSelector"), rule)


_POD_LEVEL = ("cpu", "memory")


def check_pod_resources(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """Pod-level spec.resources (PodLevelResources, on since 1.34)."""
    res = spec.get("resources")
    if not isinstance(res, dict):
        return
    rpath = (*path, "resources")
    if res.get("claims"):
        yield error_at((*rpath, "claims"), "k8s-pod-resources", "claims may not be set at the pod level")
    pod: dict[str, dict[str, Decimal]] = {"requests": {}, "limits": {}}
    for section in ("requests", "limits"):
        for name, raw in (res.get(section) or {}).items():
            if name not in _POD_LEVEL and not str(name).startswith("hugepages-"):
                yield error_at(
                    (*rpath, section, name),
                    "k8s-pod-resources",
                    f"Unsupported value: {name!r}: supported values: cpu, memory, hugepages-*",
                    "extended resources such as GPUs are requested per container",
                )
                continue
            value = parse_quantity(raw)
            if value is None or value < 0:
                yield error_at((*rpath, section, name), "k8s-quantity", f"{raw!r} is not a valid non-negative quantity")
                continue
            pod[section][name] = value
    for name, req in pod["requests"].items():
        if name in pod["limits"] and req > pod["limits"][name]:
            yield error_at((*rpath, "requests", name), "k8s-request-over-limit", f"{name} request must be <= pod limit")
    total: dict[str, Decimal] = {}
    containers = [(g, i, c) for g in ("initContainers", "containers") for i, c in enumerate(spec.get(g) or [])]
    for group, i, c in containers:
        cres = (c or {}).get("resources") or {} if isinstance(c, dict) else {}
        counted = group == "containers" or (isinstance(c, dict) and c.get("restartPolicy") == "Always")
        for name in _POD_LEVEL:
            wanted = parse_quantity((cres.get("requests") or {}).get(name))
            lim = parse_quantity((cres.get("limits") or {}).get(name))
            if counted and wanted is not None:
                total[name] = total.get(name, Decimal(0)) + wanted
            if lim is not None and name in pod["limits"] and lim > pod["limits"][name]:
                yield error_at(
                    (*path, group, i, "resources", "limits", name),
                    "k8s-pod-resources",
                    f"container {name} limit must be less than or equal to the pod-level limit",
                )
    for name, req in pod["requests"].items():
        if name in total and total[name] > req:
            yield error_at(
                (*rpath, "requests", name),
                "k8s-pod-resources",
                f"pod-level {name} request must be greater than or equal to the aggregate container requests",
            )


def check_host_ports(spec: dict[str, Any], path: Path) -> Iterator[Finding]:
    """Host ports: equal to containerPort under hostNetwork, and unique per protocol/hostIP/port."""
    seen: set[str] = set()
    for i, c in enumerate(spec.get("containers") or []):
        for j, port in enumerate((c or {}).get("ports") or [] if isinstance(c, dict) else []):
            if not isinstance(port, dict):
                continue
            ppath = (*path, "containers", i, "ports", j, "hostPort")
            host = port.get("hostPort") or 0
            if spec.get("hostNetwork") is True and host not in (0, port.get("containerPort")):
                yield error_at(ppath, "k8s-port", "must match `containerPort` when `hostNetwork` is true")
            if host:
                key = f"{port.get('protocol') or 'TCP'}/{port.get('hostIP') or ''}/{host}"
                if key in seen:
                    yield error_at(ppath, "k8s-port", f"Duplicate value: {key!r}")
                seen.add(key)


_TEMPLATE_OWNERS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"}


def check_workload(obj: dict[str, Any], gates: Set[str]) -> Iterator[Finding]:
    """gates: the feature gates on (containers.GATES) for the version the object is validated
    for, and containers.PRIVILEGED_DISALLOWED where the clusters refuse privileged containers."""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    meta_annotations = meta.get("annotations") if isinstance(meta, dict) else None  # unknown kinds are unchecked
    if kind != "Pod" and isinstance(meta_annotations, dict) and DELETION_COST in meta_annotations:
        yield warning_at(
            ("metadata", "annotations", DELETION_COST),
            "deletion-cost-on-owner",
            f"pod-deletion-cost on the {kind}'s own metadata has no effect",
            "put it in spec.template.metadata.annotations",
        )
    if kind == "Pod":
        yield from check_pod_template_annotations(obj.get("metadata"), ("metadata",), "Pod")
        yield from _check_pod_annotations(obj.get("metadata"), obj.get("spec"), ("metadata",), ("spec",), True)
        yield from pod_spec.check_pod_create(obj.get("spec"), ("spec",))
        labels = obj["metadata"].get("labels") if isinstance(obj.get("metadata"), dict) else None
        yield from check_pod_spec(obj.get("spec"), ("spec",), "Pod", gates, merged_labels=labels or {})
        yield from volumes_.check_pod_volumes(obj)
        return
    spec = obj.get("spec") or {}
    if kind == "CronJob":
        tpath: Path = ("spec", "jobTemplate", "spec", "template")
        owner = "Job"
    elif kind == "PodTemplate":  # ValidatePodTemplate: its template is validated as any other
        tpath, owner = ("template",), "PodTemplate"
    elif kind in _TEMPLATE_OWNERS:
        tpath, owner = ("spec", "template"), str(kind)
    else:
        return
    template = at_path(obj, tpath) or {}
    yield from check_metadata(obj, (*tpath, "metadata"))
    yield from check_pod_template_annotations(template.get("metadata"), (*tpath, "metadata"), owner)
    yield from _check_pod_annotations(
        template.get("metadata"), template.get("spec"), (*tpath, "metadata"), (*tpath, "spec"), False
    )
    claims = [
        str((claim.get("metadata") or {}).get("name"))
        for claim in (spec.get("volumeClaimTemplates") or [] if kind == "StatefulSet" else [])
        if isinstance(claim, dict)
    ]
    yield from check_pod_spec(template.get("spec"), (*tpath, "spec"), owner, gates, claims)
    if (template.get("spec") or {}).get("ephemeralContainers"):  # ValidatePodTemplateSpec
        yield error_at(
            (*tpath, "spec", "ephemeralContainers"),
            "k8s-container",
            "ephemeral containers not allowed in pod template",
            "ephemeral containers are added to running Pods (kubectl debug), never templated",
        )
