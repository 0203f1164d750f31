"""Stage 4: validate Kubernetes objects as the target cluster would.

Three layers, each compiled once per run: kubernetes-validate's strict schemas for the
target version (core kinds), the bundled schemas in schemas/ (scheduler config and CRDs), and
the rules of kube-apiserver per API group (one module each) and kube-scheduler (scheduler_config.py).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cache, partial
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import jsonschema_rs

from generator import cache as gen_cache
from generator import files, parallel, schemas, suppressions
from generator.kube import (
    admission,
    api_versions,
    apps,
    autoscaling,
    batch,
    claims,
    containers,
    coordination,
    core,
    crds,
    defaults,
    discovery,
    kustomize,
    networking,
    node,
    objectmeta,
    openapi,
    pod_security,
    pods,
    policy,
    rbac,
    resource,
    scheduling,
    sources,
    storage,
)
from generator.kube.api_versions import SCHEDULER_CONFIG_KIND
from generator.kube.findings import Finding, Path
from generator.kube.scheduler_config import check_config
from generator.kube.scope import (
    BUILD_TOOL_GROUPS,
    CRD_GROUP,
    CRD_KIND,
    POD_SPEC_PATHS,
    at_path,
    is_definition,
    title_of,
)
from generator.problems import Problem, Severity, json_path
from generator.schema_messages import shown
from generator.yamlio.kube_scalars import plain_value
from generator.yamlio.load import Document, YamlError, load_file, parse_yaml

if TYPE_CHECKING:  # the reference implementation is imported only to explain a failure
    from referencing import Registry

LAST_APPLIED_LIMIT = 262144
# The feature gates that change a verdict, from the version they are on by default (the others,
# HPAScaleToZero among them, are off unless .gen.yaml's featureGates turns them on).
# RelaxedEnvironmentVariableValidation: beta in 1.32, GA in 1.34; ContainerRestartRules: beta in 1.35.
_ON_BY_DEFAULT = {"RelaxedEnvironmentVariableValidation": (1, 32), "ContainerRestartRules": (1, 35)}
# Compact JSON spends at most this many bytes per character of the YAML it was read from, when
# that YAML has no aliases. The worst cases are a flow mapping of bare keys, `{a,b}` ->
# `{"a":null,"b":null}` (4.5 bytes per character), and the same with 4-byte UTF-8 keys (6).
JSON_BYTES_PER_YAML_CHAR = 6


K8S_BASE = "https://kubernetes.io/api/"  # the $id of kubernetes-validate's _definitions.json


@cache
def _k8s_reference_registry(version: str) -> Registry[Any]:
    from referencing import Registry, Resource

    return Resource.from_contents(api_versions.definitions(version)) @ Registry()


@cache
def _k8s_fast_registry(version: str) -> jsonschema_rs.Registry:
    return jsonschema_rs.Registry([(K8S_BASE + "_definitions.json", api_versions.definitions(version))])


def load_kubernetes_schemas(version: str) -> None:
    """Parse the version's shared schema definitions now, so processes forked later inherit them."""
    _k8s_fast_registry(version)


def _kind_registry(version: str, api_version: str, kind: str) -> jsonschema_rs.Registry:
    """The version's whole registry where it is built already (parsed before worker processes
    fork, for many files), else the definitions of this kind alone (a few objects)."""
    if _k8s_fast_registry.cache_info().currsize:
        return _k8s_fast_registry(version)
    return jsonschema_rs.Registry(
        [(K8S_BASE + "_definitions.json", api_versions.kind_definitions(version, api_version, kind))]
    )


@cache
def k8s_validator(version: str, api_version: str, kind: str) -> schemas.TwoTierValidator | None:
    """The strict schema validator of one built-in kind, compiled once; None if version serves none."""
    schema = api_versions.kind_schema(api_versions.folder(version), api_version, kind)
    if schema is None:
        return None
    name = api_versions.schema_file_name(api_version, kind)
    registry = _kind_registry(version, api_version, kind)
    fast = jsonschema_rs.Draft202012Validator(schema, registry=registry, base_uri=K8S_BASE + name)
    return schemas.TwoTierValidator(fast, lambda: _reference_validator(schema, version))


def _reference_validator(schema: Any, version: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(schema, registry=_k8s_reference_registry(version))


# kube-apiserver's rules per kind beyond the schemas, one module per API group.
GROUP_RULES: dict[tuple[str, str], Callable[[dict[str, Any]], Iterator[Finding]]] = {
    ("", "Service"): core.check_service,
    ("", "Endpoints"): core.check_endpoints,
    ("", "Namespace"): core.check_namespace,
    ("", "PersistentVolumeClaim"): claims.check_persistent_volume_claim,
    ("", "PersistentVolume"): core.check_persistent_volume,
    ("", "ConfigMap"): core.check_config_keys,
    ("", "Secret"): core.check_config_keys,
    ("", "ResourceQuota"): core.check_resource_quota,
    ("", "LimitRange"): core.check_limit_range,
    ("apps", "StatefulSet"): apps.check_stateful_set,
    ("node.k8s.io", "RuntimeClass"): node.check_runtime_class,
    ("coordination.k8s.io", "Lease"): coordination.check_lease,
    ("discovery.k8s.io", "EndpointSlice"): discovery.check_endpoint_slice,
    ("apps", "DaemonSet"): apps.check_daemon_set,
    ("apps", "Deployment"): apps.check_deployment,
    ("apps", "ReplicaSet"): apps.check_replica_set,
    ("apps", "ControllerRevision"): apps.check_controller_revision,
    ("storage.k8s.io", "StorageClass"): storage.check_storage_class,
    ("storage.k8s.io", "VolumeAttachment"): storage.check_volume_attachment,
    ("storage.k8s.io", "CSIDriver"): storage.check_csi_driver,
    ("storage.k8s.io", "CSINode"): storage.check_csi_node,
    ("storage.k8s.io", "VolumeAttributesClass"): storage.check_volume_attributes_class,
    ("batch", "Job"): batch.check_job,
    ("batch", "CronJob"): batch.check_cron_job,
    ("policy", "PodDisruptionBudget"): policy.check_pod_disruption_budget,
    ("networking.k8s.io", "NetworkPolicy"): networking.check_network_policy,
    ("networking.k8s.io", "Ingress"): networking.check_ingress,
    ("networking.k8s.io", "IngressClass"): networking.check_ingress_class,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): admission.check_validating_admission_policy,
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ): admission.check_validating_admission_policy_binding,
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): admission.check_mutating_admission_policy,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): admission.check_webhooks,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): admission.check_webhooks,
    ("resource.k8s.io", "ResourceClaim"): resource.check_resource_claim,
    ("resource.k8s.io", "ResourceClaimTemplate"): resource.check_resource_claim,
    ("resource.k8s.io", "DeviceClass"): resource.check_device_class,
    (CRD_GROUP, CRD_KIND): crds.check_definition,
}


def pod_security_finding(
    v: pod_security.Violation, namespace: str, level: str | None, own_output: bool, created_by_gen: bool = False
) -> Finding | None:
    """A failed Pod Security check where the Pods' namespace enforces level (None: unknown);
    created_by_gen: gen creates that Namespace, at the level its Target sets."""
    if level is not None and pod_security.LEVELS[v.level] <= pod_security.LEVELS[level]:
        lower = "privileged" if v.level == "baseline" else "baseline"
        if created_by_gen:
            hint = (
                f"gen creates namespace {namespace} at the level its Target sets: meet {shown(level)}, or set "
                f"namespaces: {{{namespace}: {{podSecurity: {lower}}}}} on the Target"
            )
        elif own_output:
            hint = f"meet {shown(level)}, or lower the level where Namespace {namespace} is defined"
        else:
            hint = "meet the level, or run the workload in a namespace that enforces a lower one"
        return Finding(
            v.path,
            "pod-security",
            Severity.ERROR,
            f"namespace {namespace} enforces Pod Security {shown(level)}, which refuses these Pods "
            f"(check {v.check}): {v.detail}",
            hint,
        )
    if v.check in pod_security.HOST_AND_PRIVILEGE or v.path[-1] in ("allowPrivilegeEscalation", "add"):
        return Finding(
            v.path,
            "pod-security",
            Severity.WARNING,
            f"Pod Security {v.level} check {v.check}: {v.detail}",
            f"a namespace enforcing {v.level} refuses these Pods",
        )
    return None


class ManifestValidator:
    """Validates objects for one or more Kubernetes versions; `plugins` are extra scheduler plugins.

    A finding that holds for only some of the versions names them. Opinions (Secret data,
    skipped TLS verification) are warnings on anyone's manifests; with own_output, what gen
    renders itself, they are errors: gen never emits either.
    """

    def __init__(
        self,
        versions: tuple[str, ...],
        plugins: Iterable[str] = (),
        own_output: bool = False,
        enforced: Mapping[str, str] | None = None,
        definitions: crds.Catalog | None = None,
        gen_namespaces: Collection[str] = (),
        feature_gates: Mapping[str, bool] | None = None,
    ) -> None:
        for version in versions:
            api_versions.folder(version)  # an unsupported version fails here, before any work
        self.versions = tuple(dict.fromkeys(versions))
        self.plugins = tuple(plugins)
        self.opinion = Severity.ERROR if own_output else Severity.WARNING
        # namespace -> the Pod Security level it enforces; None: judged by the caller afterwards
        self.enforced = dict(enforced) if enforced is not None else None
        self.gen_namespaces = frozenset(gen_namespaces)  # the namespaces gen creates, at the level their Target sets
        self.definitions = definitions  # CRDs that judge the custom resources they define
        self.feature_gates = dict(sorted((feature_gates or {}).items()))  # as the clusters set them

    def gate(self, name: str, version: str) -> bool:
        """Whether the clusters enable a feature gate: as .gen.yaml sets it, else the version's default."""
        if name in self.feature_gates:
            return self.feature_gates[name]
        return name in _ON_BY_DEFAULT and api_versions.parse_version(version) >= _ON_BY_DEFAULT[name]

    def objects(self, data: Any) -> list[tuple[Path, Any]]:
        """The objects a document holds, each with its path in the document: a `kind: List`
        (what `kubectl get -o yaml` writes) or a typed list of a kind known here (`ConfigMapList`)
        holds its items, every other document is one object."""
        if isinstance(data, dict) and isinstance(data.get("items"), list) and self._is_list(data):
            return [(("items", i), item) for i, item in enumerate(data["items"])]
        return [((), data)]

    def _is_list(self, data: dict[str, Any]) -> bool:
        api, kind = data.get("apiVersion"), data.get("kind")
        if not isinstance(api, str) or not isinstance(kind, str) or not kind.endswith("List"):
            return False
        if (api, kind) == ("v1", "List"):
            return True
        item = kind.removesuffix("List")
        return (
            (api, item) in schemas.MANIFEST_SCHEMA_FILES
            or any(k8s_validator(version, api, item) is not None for version in self.versions)
            or (self.definitions is not None and self.definitions.find(api, item) is not None)
        )

    def validate(self, obj: Any, text: str | None = None, opaque: frozenset[Path] = frozenset()) -> list[Finding]:
        """Findings for obj; text, where given, is YAML obj was read from (it may hold more);
        opaque, the paths of values gen cannot know (encrypted, or a variable's), which no
        finding is about.

        With text the size rules can often tell, without serializing obj, that it is far below
        every limit: a quarter of the work on a typical Deployment.
        """
        if not isinstance(obj, dict):
            return [Finding((), "k8s-object", Severity.ERROR, "a manifest must be a mapping")]
        api, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api, str) or not isinstance(kind, str):
            return [Finding((), "k8s-object", Severity.ERROR, "apiVersion and kind are required strings")]
        definition = self.definitions.find(api, kind) if self.definitions else None
        if definition is not None:  # the same for every Kubernetes version
            return sources.beside(list(self._custom(obj, kind, text, definition.judge(obj, api), opaque)), opaque)
        if len(self.versions) == 1:
            return sources.beside(list(self._validate(obj, api, kind, text, self.versions[0], opaque)), opaque)
        holds: dict[Finding, list[str]] = {}
        for version in self.versions:
            for finding in sources.beside(list(self._validate(obj, api, kind, text, version, opaque)), opaque):
                holds.setdefault(finding, []).append(version)
        return [
            f
            if len(found) == len(self.versions)
            else replace(f, message=f"{f.message} (for Kubernetes {', '.join(found)})")
            for f, found in holds.items()
        ]

    def _validate(
        self,
        obj: dict[str, Any],
        api: str,
        kind: str,
        text: str | None,
        version: str,
        opaque: frozenset[Path] = frozenset(),
    ) -> Iterator[Finding]:
        if api.split("/")[0] in BUILD_TOOL_GROUPS or api == schemas.POLICY_API_VERSION:
            return  # read by kustomize or by gen (`gen lint` checks policies), never sent to the API server
        bundled = schemas.MANIFEST_SCHEMA_FILES.get((api, kind))
        validator = schemas.validator(bundled) if bundled is not None else k8s_validator(version, api, kind)
        if validator is None or kind == SCHEDULER_CONFIG_KIND:  # only then can the version refuse it
            refused = api_versions.not_served(version, api, kind)
            if refused is not None:
                yield Finding(("apiVersion",), "k8s-api-version", Severity.ERROR, refused.message, refused.hint)
                return
        if validator is None:
            yield Finding(
                ("kind",),
                "k8s-unknown-kind",
                Severity.WARNING,
                f"no schema for {kind} {api}; not validated",
                "give gen its CustomResourceDefinition (among the files, with --crds, or in .gen.yaml's crds), "
                "or a JSON Schema catalog ({kind}_{version}.json) with --crds",
            )
            yield from self._any_object(obj, kind, text)  # its shape is unknown: only what holds for all
            return
        if api_versions.disabled_by_default(version, api, kind):
            instead = api_versions.replacement(version, api, kind)
            yield Finding(
                ("apiVersion",),
                "k8s-api-disabled",
                Severity.WARNING,
                f"{api} is {'an alpha' if 'alpha' in api else 'a beta'} API that Kubernetes {version} serves only "
                f"when the cluster enables it (--runtime-config={api}=true, and its feature gate)",
                f"use {instead}, which is on by default"
                if instead and instead != api and not api_versions.disabled_by_default(version, instead, kind)
                else "managed control planes often cannot enable it: check yours does",
            )
        group = api_versions.split_api(api)[0]
        obj = defaults.defaulted(obj, group, kind)  # as kube-apiserver validates it
        found = sources.beside(list(crds.schema_findings(validator, obj, "k8s-schema")), opaque)
        yield from found
        if found:
            return  # semantic rules assume the shape is right
        if kind == SCHEDULER_CONFIG_KIND:
            if bundled is not None:  # the rules are v1's; an older served version is only named
                yield from check_config(obj, self.plugins)
            return
        judged = list(self._rules(obj, api, group, kind, text, version))
        yield from judged
        declared = openapi.check(obj, version, api, kind) if bundled is None else []
        if declared:  # what the API types declare, where no rule above said it already
            covered = [f.path for f in judged]
            for finding in declared:
                if not any(path[: len(finding.path)] == finding.path for path in covered):
                    yield finding

    def _rules(
        self, obj: dict[str, Any], api: str, group: str, kind: str, text: str | None, version: str
    ) -> Iterator[Finding]:
        """kube-apiserver's rules beyond the schema, and what holds for every object."""
        yield from pods.check_workload(obj, frozenset(gate for gate in containers.GATES if self.gate(gate, version)))
        yield from rbac.check_rbac(obj)
        yield from self._pod_security(obj)
        yield from objectmeta.check_derived_names(obj)
        if kind == "PriorityClass":
            yield from scheduling.check_priority_class(obj)
        if kind == "HorizontalPodAutoscaler":
            yield from autoscaling.check_hpa(obj, self.gate("HPAScaleToZero", version))
        yield from _removed_volume_plugins(obj, kind, version)
        rules = GROUP_RULES.get((group, kind))
        if rules is not None:  # only the kinds present pay for their group's rules
            yield from rules(obj)
        if kind == "ConfigMap":
            yield from self._check_configmap(obj, version)
        if kind == "PrometheusRule":
            yield from _check_prometheus_rule(obj)
        if kind == "Secret" and (obj.get("data") or obj.get("stringData")):
            yield Finding(
                ("data",),
                "secret-material",
                self.opinion,
                "Secret data in Git is readable by everyone who can read the repository",
                "provision Secrets with a secret manager (External Secrets, Sealed Secrets) and reference them by name",
            )
        yield from self._any_object(obj, kind, text)

    def _custom(
        self, obj: dict[str, Any], kind: str, text: str | None, judged: Iterable[Finding], opaque: frozenset[Path]
    ) -> Iterator[Finding]:
        """A custom resource: its CRD's verdict, then the rules that hold for every object."""
        found = sources.beside(list(judged), opaque)
        yield from found
        if any(f.rule in ("crd-schema", "crd-version") for f in found):
            return  # the rules below assume the shape is right
        if kind == "PrometheusRule":
            yield from _check_prometheus_rule(obj)
        yield from self._any_object(obj, kind, text)

    def _any_object(self, obj: dict[str, Any], kind: str, text: str | None) -> Iterator[Finding]:
        """What holds for an object of any kind: its metadata, TLS verification, its size."""
        if isinstance(obj.get("metadata"), dict):
            yield from objectmeta.check_metadata(obj, ("metadata",), kind)
        elif obj.get("metadata") is None and not _configuration_file(obj):
            yield Finding(
                ("metadata",), "k8s-name", Severity.ERROR, "metadata: Required value: name or generateName is required"
            )
        if _may_hold(text, "insecureSkip"):  # the walk is only worth it where the key may occur
            yield from _check_insecure_tls(obj, self.opinion)
        yield from _check_size(obj, kind, text)

    def _pod_security(self, obj: dict[str, Any]) -> Iterator[Finding]:
        """Pod Security admission: an error where the namespace enforces a level the Pods fail
        (they are never created); elsewhere host access and privilege stay warnings. With
        enforced None the caller judges it, once it knows every Namespace (see validate_paths)."""
        if self.enforced is None:
            return
        namespace = (obj.get("metadata") or {}).get("namespace")
        level = self.enforced.get(namespace) if isinstance(namespace, str) else None
        for v in pod_security.workload_violations(obj):
            finding = pod_security_finding(
                v,
                str(namespace),
                level,
                own_output=self.opinion is Severity.ERROR,
                created_by_gen=namespace in self.gen_namespaces,
            )
            if finding is not None:
                yield finding

    def _check_configmap(self, obj: dict[str, Any], version: str) -> Iterator[Finding]:
        for key, value in (obj.get("data") or {}).items():
            if not isinstance(value, str):
                continue
            if SCHEDULER_CONFIG_KIND in value:
                yield from self._embedded_scheduler_config(key, value, version)
            if key.endswith(".json") and '"panels"' in value:
                yield from _check_dashboard(key, value)

    def _embedded_scheduler_config(self, key: str, text: str, version: str) -> Iterator[Finding]:
        """A scheduler config file kept in a ConfigMap: checked as that file, reported at its key."""
        base: Path = ("data", key)
        try:
            cfg = parse_yaml(text, kube=True)
        except YamlError as err:
            yield Finding(base, "scheduler-config", Severity.ERROR, f"embedded scheduler config is not YAML: {err}")
            return
        if (
            not isinstance(cfg, dict)
            or cfg.get("kind") != SCHEDULER_CONFIG_KIND
            or not isinstance(cfg.get("apiVersion"), str)
        ):
            return
        for f in self._validate(cfg, cfg["apiVersion"], SCHEDULER_CONFIG_KIND, None, version):
            yield Finding(base, f.rule, f.severity, f"{json_path(f.path)}: {f.message}", f.hint)


def _configuration_file(obj: dict[str, Any]) -> bool:
    """A component's configuration (kube-scheduler's, the kubelet's, a kubeconfig, istioctl's
    IstioOperator: Istio removed the in-cluster operator in 1.24), which a process reads from a
    file: it is no API object and needs no metadata."""
    group = api_versions.split_api(str(obj.get("apiVersion", "")))[0]
    return (
        group.endswith("config.k8s.io")
        or group == "audit.k8s.io"
        or (obj.get("apiVersion"), obj.get("kind")) == ("v1", "Config")
        or (group, obj.get("kind")) == ("install.istio.io", "IstioOperator")
    )


def _removed_volume_plugins(obj: dict[str, Any], kind: str, version: str) -> Iterator[Finding]:
    """In-tree volume plugins kube-apiserver warns are non-functional from a version on
    (pkg/api/pod/warnings.go): from that version such a Pod can never start."""
    if kind == "PersistentVolume":
        sources: list[tuple[Path, Any]] = [(("spec",), obj.get("spec"))]
    elif kind in POD_SPEC_PATHS:
        volumes = at_path(obj, (*POD_SPEC_PATHS[kind], "volumes"))
        sources = [((*POD_SPEC_PATHS[kind], "volumes", i), v) for i, v in enumerate(volumes or [])]
    else:
        return
    at = api_versions.parse_version(version)
    for path, source in sources:
        for plugin, removed in core.REMOVED_VOLUME_PLUGINS.items():
            if isinstance(source, dict) and plugin in source and at >= api_versions.parse_version(removed):
                yield Finding(
                    (*path, plugin),
                    "k8s-volume-removed",
                    Severity.ERROR,
                    f"the in-tree {plugin} volume plugin is non-functional in Kubernetes {removed}+: the volume never mounts",
                    "use the storage's CSI driver",
                )


def promql_error(expr: str) -> str | None:
    import promql_parser

    try:
        promql_parser.parse(expr)
    except Exception as err:  # the parser raises plain ValueError/RuntimeError subclasses
        return str(err) or type(err).__name__
    return None


def _check_prometheus_rule(obj: dict[str, Any]) -> Iterator[Finding]:
    for g, group in enumerate((obj.get("spec") or {}).get("groups") or []):
        for r, rule in enumerate(group.get("rules") or []):
            expr = rule.get("expr")
            if isinstance(expr, str) and (err := promql_error(expr)):
                yield Finding(
                    ("spec", "groups", g, "rules", r, "expr"),
                    "promql-parse",
                    Severity.ERROR,
                    f"PromQL does not parse: {err}",
                )


# Grafana's template variables: `$name`, `${name}`, `${name:format}`, `[[name]]`.
_GRAFANA_RANGE = re.compile(r"\[\s*(?:\$\{?\w+(?::\w+)?\}?|\[\[\w+\]\])\s*(?=[:\]])")
_GRAFANA_VARIABLE = re.compile(r"\$\{?\w+|\[\[\w+\]\]")
_PROMQL_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`")


def _without_grafana_ranges(expr: Any) -> str | None:
    """A panel's query as Prometheus would receive it, where gen can tell: a range variable
    (`[$__rate_interval]`) stands for a duration; any other variable outside a string leaves
    the query to Grafana (None), which substitutes it before Prometheus parses anything."""
    if not isinstance(expr, str):
        return None
    expr = _GRAFANA_RANGE.sub("[5m", expr)
    return None if _GRAFANA_VARIABLE.search(_PROMQL_STRING.sub('""', expr)) else expr


def _check_dashboard(key: str, text: str) -> Iterator[Finding]:
    try:
        dashboard = json.loads(text)
    except ValueError as err:
        yield Finding(("data", key), "dashboard-json", Severity.ERROR, f"dashboard is not JSON: {err}")
        return
    for panel in dashboard.get("panels") or [] if isinstance(dashboard, dict) else []:
        for target in panel.get("targets") or [] if isinstance(panel, dict) else []:
            expr = _without_grafana_ranges(target.get("expr")) if isinstance(target, dict) else None
            if expr is not None and (problem := promql_error(expr)):
                yield Finding(
                    ("data", key),
                    "promql-parse",
                    Severity.ERROR,
                    f"panel {panel.get('title')!r}: PromQL does not parse: {problem}",
                )


# Prometheus Operator and Argo CD spell it insecureSkipVerify; APIService and kubeconfigs insecureSkipTLSVerify.
_SKIP_TLS_KEYS = frozenset({"insecureSkipVerify", "insecureSkipTLSVerify"})


def _check_insecure_tls(obj: Any, severity: Severity, path: Path = ()) -> Iterator[Finding]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in _SKIP_TLS_KEYS and value is True:
                yield Finding(
                    (*path, key),
                    "insecure-tls",
                    severity,
                    f"{key} disables certificate checks",
                    "reference the CA instead",
                )
            else:
                yield from _check_insecure_tls(value, severity, (*path, key))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _check_insecure_tls(value, severity, (*path, i))


def _unaliased(text: str | None) -> str | None:
    """text, if it certainly holds no YAML alias (`*name`), so each of its nodes occurs once."""
    return text if text is not None and "*" not in text else None


def _may_hold(text: str | None, key: str) -> bool:
    """Whether an object read from text may have key: YAML can spell a key only literally or
    with backslash escapes."""
    return text is None or key in text or "\\" in text


def _compact_json_size(obj: dict[str, Any], text: str | None) -> int:
    """Bytes of obj as compact JSON (what the last-applied annotation holds), or an upper bound
    of them from the YAML it was read from when that bound is below the limit anyway."""
    plain = _unaliased(text)
    if plain is not None and len(plain) * JSON_BYTES_PER_YAML_CHAR + 2 <= LAST_APPLIED_LIMIT:
        return len(plain) * JSON_BYTES_PER_YAML_CHAR + 2
    # a YAML timestamp reaches the API server as a string; str() spells it about as long
    compact = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str)
    return len(compact.encode("utf-8"))


def _check_size(obj: dict[str, Any], kind: str, text: str | None) -> Iterator[Finding]:
    size = _compact_json_size(obj, text)
    if size > LAST_APPLIED_LIMIT:
        yield Finding(
            (),
            "size-last-applied",
            Severity.WARNING,
            f"object is {size} bytes: client-side apply's last-applied annotation allows {LAST_APPLIED_LIMIT}",
            "use server-side apply (Argo CD: ServerSideApply=true)",
        )


# A workload's failed Pod Security check, judged once every Namespace among the inputs is known:
# its namespace, the check it fails, and where (a located finding whose words come later).
Deferred = tuple[str, pod_security.Violation, Problem]


# Findings after which an object's shape is not known to be its kind's.
SHAPE_UNSURE = frozenset({"k8s-schema", "k8s-object", "k8s-unknown-kind", "crd-schema", "crd-version"})


class FileResult(NamedTuple):
    """What validating one file gives: its findings; the Pod Security levels its Namespaces
    enforce; its workloads' failed Pod Security checks, which wait for the Namespaces of every
    file; its text if it holds gen:ignore comments; the CRDs it defines; and the custom kinds
    it uses that no CRD known so far defined (a CRD among the inputs may, and wins over a
    bundled schema)."""

    problems: list[Problem]
    enforced: dict[str, str]
    deferred: list[Deferred]
    text: str | None
    definitions: list[Any]
    custom: set[tuple[str, str]]
    not_manifest: bool = False  # a file of data, not objects (package.json, an Ansible playbook)
    flux: tuple[Any, ...] = ()  # the Flux Kustomizations it defines, as sources.flux_kustomization keeps them
    holders: tuple[tuple[str, str, str], ...] = ()  # its ConfigMaps and Secrets (kind, namespace, name)


def _validate_file(
    file: tuple[str, str], validator: ManifestValidator, applied: sources.Applied | None = None
) -> FileResult:
    """One file's findings; with applied, as an engine makes its objects (Flux substitution, a namespace)."""
    docs, problems = load_file(*file, kube=True)
    # a document with neither apiVersion nor kind is no manifest (Ansible, Talos, app configuration)
    docs = [doc for doc in docs if _names_a_kind(doc.data)]
    if not docs and not problems:
        return FileResult([], {}, [], None, [], set(), not_manifest=True)
    judged = _Gathered()
    judged.problems += problems
    for doc in docs:
        judged.document(doc, doc.data, validator, applied)
    text = docs[0].text if docs and "gen:ignore" in docs[0].text else None
    return FileResult(
        judged.problems,
        judged.enforced,
        judged.deferred,
        text,
        judged.definitions,
        judged.custom,
        flux=tuple(judged.flux),
        holders=tuple(judged.holders),
    )


class _Gathered:
    """What judging objects gives, gathered: findings at their source lines, the Pod Security
    levels Namespaces enforce, workloads' deferred Pod Security checks, CRDs and custom kinds."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.enforced: dict[str, str] = {}
        self.deferred: list[Deferred] = []
        self.definitions: list[Any] = []
        self.custom: set[tuple[str, str]] = set()
        self.flux: list[Any] = []
        self.defined: list[tuple[str, str, str]] = []  # (namespace, level, file) of each Namespace
        self.holders: list[tuple[str, str, str]] = []

    def document(
        self,
        doc: Document,
        data: Any,
        validator: ManifestValidator,
        applied: sources.Applied | None,
        opaque: frozenset[Path] = frozenset(),
    ) -> None:
        """The objects of one document (data: as the engine made it; doc: where it was written)
        as the cluster receives them: SOPS decrypted, Flux's variables substituted."""
        sops = sources.is_sops(data)
        if sops:
            data, encrypted = sources.decrypted(data)
            opaque |= encrypted
        if applied is not None and applied.kustomize_vars:
            opaque |= sources.kustomize_var_paths(data, applied.kustomize_vars)
        for prefix, obj in validator.objects(data):
            within = frozenset(path[len(prefix) :] for path in opaque if path[: len(prefix)] == prefix)
            if (
                applied is not None
                and applied.variables is not None
                and isinstance(obj, dict)
                and not sources.substitution_disabled(obj)
            ):
                obj, unknown_paths, unknown = sources.substituted(obj, applied, partial(_plain, doc, prefix))
                within |= unknown_paths
                if unknown:
                    self.problems.append(
                        doc.problem(
                            (*prefix, *sorted(unknown_paths)[0]),
                            "flux-substitution",
                            f"{applied.source}'s postBuild variables {sources.unknown_reasons(unknown, applied)}: "
                            "the values that use them are not checked",
                            severity=Severity.INFO,
                            hint="a ConfigMap or Secret it substitutes from among the files validated makes them known",
                        )
                    )
            if applied is not None and applied.namespace and isinstance(obj, dict):
                obj = sources.in_namespace(obj, applied.namespace)
            self.object(doc, prefix, obj, validator, within, sops)

    def object(
        self,
        doc: Document,
        prefix: Path,
        data: Any,
        validator: ManifestValidator,
        opaque: frozenset[Path],
        encrypted: bool = False,
    ) -> None:
        found = validator.validate(data, doc.text, opaque)
        if encrypted:  # what the Secret holds is not readable in Git
            found = [f for f in found if f.rule != "secret-material"]
        about = title_of(data)
        self.problems += [
            replace(
                doc.problem(
                    (*prefix, *f.path),
                    f.rule,
                    f.message,
                    severity=f.severity,
                    hint=f.hint or quote_hint(doc, (*prefix, *f.path), f),
                    key=f.at_key,
                ),
                about=about,
            )
            for f in found
        ]
        if isinstance(data, dict):
            kind = (str(data.get("apiVersion")), str(data.get("kind")))
            if kind in schemas.MANIFEST_SCHEMA_FILES or any(f.rule == "k8s-unknown-kind" for f in found):
                self.custom.add(kind)
        if not isinstance(data, dict) or any(f.rule in SHAPE_UNSURE for f in found):
            return  # the checks below assume the shape is right
        if is_definition(data):
            self.definitions.append(data)
        if (flux := sources.flux_kustomization(data)) is not None:
            self.flux.append(flux)
        if data.get("kind") in ("ConfigMap", "Secret") and data.get("apiVersion") == "v1":
            metadata = data.get("metadata") or {}
            self.holders.append((str(data["kind"]), str(metadata.get("namespace", "")), str(metadata.get("name"))))
        if data.get("kind") == "Namespace" and data.get("apiVersion") == "v1":
            # without an enforce label, Pod Security admits anything: privileged (a second
            # definition of the namespace that enforces more is then an alternative, not the truth)
            level = pod_security.enforced_level(data) or "privileged"
            self.enforced[str((data.get("metadata") or {}).get("name"))] = level
            self.defined.append((str((data.get("metadata") or {}).get("name")), level, doc.file))
        namespace = str((data.get("metadata") or {}).get("namespace"))
        self.deferred += [
            (namespace, v, replace(doc.problem((*prefix, *v.path), "pod-security", ""), about=about))
            for v in pod_security.workload_violations(data)
        ]


def _plain(doc: Document, prefix: Path, path: Path) -> bool:
    """Whether the value at path (below prefix) of doc was written as an unquoted scalar."""
    scalar = doc.source.scalars.get((*prefix, *path))
    return scalar is not None and scalar.plain


def _refused_by_kustomize(path: str, result: FileResult) -> FileResult:
    """Duplicate keys are errors in a file a kustomization builds: kustomize's YAML reader
    (kyaml, on go-yaml v3) refuses the file ("mapping key already defined"), where kubectl
    keeps the last value. Decided after a file's result is kept or taken from the cache: it
    hangs on the directory, not on the file's own bytes."""
    if not any(p.rule == "yaml-duplicate-key" for p in result.problems):
        return result
    built_by = files.kustomization_in(os.path.dirname(os.path.abspath(path))) if path != "/dev/stdin" else None
    if built_by is None:
        return result
    return result._replace(
        problems=[
            replace(
                p,
                severity=Severity.ERROR,
                hint=f"kustomize refuses the file (mapping key already defined); the {built_by} beside it builds it: "
                "remove one of the two",
            )
            if p.rule == "yaml-duplicate-key"
            else p
            for p in result.problems
        ]
    )


def _names_a_kind(data: Any) -> bool:
    return isinstance(data, dict) and ("kind" in data or "apiVersion" in data)


def _judged(deferred: list[Deferred], enforced: dict[str, list[tuple[str, str]]]) -> list[Problem]:
    """The Pod Security findings, now that every Namespace among the inputs is known (enforced:
    each namespace's levels, with the file defining each).

    Alternative overlays may define one namespace twice with different levels: the definition
    in the workload's own kustomization wins; without one, neither is picked silently: the
    workload is judged by the least strict, and a warning names both.
    """
    out = []
    kustomizations: dict[str, str | None] = {}
    warned: set[tuple[str, str]] = set()
    for namespace, violation, located in deferred:
        definitions = enforced.get(namespace, [])
        levels = {level for level, _ in definitions}
        if len(levels) > 1:
            home = sources.kustomization_of(located.file, kustomizations)
            own = [level for level, file in definitions if sources.kustomization_of(file, kustomizations) == home]
            if home is not None and len(set(own)) == 1:
                level: str | None = own[0]
            else:
                level = min(levels, key=lambda name: pod_security.LEVELS[name])
                if (located.file, namespace) not in warned:
                    warned.add((located.file, namespace))
                    named = " and ".join(
                        f"{file} ({shown(level_)})" for level_, file in sorted(definitions, key=lambda d: d[1])
                    )
                    out.append(
                        replace(
                            located,
                            rule="namespace-definitions",
                            severity=Severity.WARNING,
                            message=f"namespace {namespace} is defined with different Pod Security levels by {named}; "
                            f"judged by the least strict, {shown(level)}",
                            hint="put the Namespace in the same kustomization as its workloads, or define it once",
                        )
                    )
        else:
            level = next(iter(levels), None)
        finding = pod_security_finding(violation, namespace, level, own_output=False)
        if finding is not None:
            out.append(replace(located, severity=finding.severity, message=finding.message, hint=finding.hint))
    return out


def quote_hint(doc: Document, path: Path, finding: Finding) -> str:
    """For a string field holding an unquoted `y`, `on` or `1e3` (at path of doc): how Kubernetes read it."""
    if finding.rule != "k8s-schema" or not finding.message.endswith("takes a string"):
        return ""
    scalar = doc.source.scalars.get(path)
    if scalar is None or not scalar.plain:
        return ""
    read = plain_value(scalar.text)
    what = {bool: "a boolean", int: "an integer", float: "a number"}.get(
        type(read), "null" if read is None else "a non-string"
    )
    return f"Kubernetes reads the unquoted {scalar.text!r} as {what}; quote it"


def validate_paths(
    paths: Iterable[FsPath],
    versions: tuple[str, ...],
    plugins: tuple[str, ...] = (),
    crd_paths: Iterable[FsPath] = (),
    excluded: Callable[[str], bool] = lambda name: False,
    feature_gates: Mapping[str, bool] | None = None,
    kept_for: KeptFor | None = None,
) -> Validated:
    """`gen validate`: every manifest below paths, in worker processes when there are many;
    custom resources by the CRDs among them and below crd_paths; `kept_for`: what the run
    before judged, for these paths and this validator.

    CRDs from crd_paths are known from the start (read for their schemas only: their own
    findings count when they are among paths). Those among the inputs are learnt as the files
    are validated; a file that used a kind one of them defines is validated again once all are
    known. A repository without CRDs pays nothing for the second pass.
    """
    paths = list(paths)
    kustomize.forget()  # kustomizations are read afresh each run
    selected, problems = files.manifest_files(paths, excluded)
    definitions = crds.Catalog()
    given: list[Any] = []
    if crd_paths:
        crd_sources = crds.sources(crd_paths)
        problems += crd_sources.problems
        definitions.add_all(crd_sources.crds, stored=True)
        definitions.add_schemas(crd_sources.schemas)
        given = [*crd_sources.crds, *(_stamped(path, name) for path, name in crd_sources.schemas)]
    found = selected.files
    problems += selected.notes
    # an unsupported version is a usage error before any work
    validator = ManifestValidator(
        versions, plugins, enforced=None, definitions=definitions, feature_gates=feature_gates
    )
    results = _validate_files(found, validator, kept_for(paths, validator, given) if kept_for is not None else None)
    learnt = [(data, name) for (_, name), result in zip(found, results, strict=True) for data in result.definitions]
    if learnt:
        definitions.add_all(learnt)
        again = [i for i, result in enumerate(results) if any(definitions.find(*kind) for kind in result.custom)]
        for i, result in zip(again, _validate_files([found[i] for i in again], validator), strict=True):
            results[i] = result
    here = os.getcwd()  # once: os.path.abspath asks for it per path
    absolute = [_absolute(path, here) for path, _ in found]
    kustomizations = [
        os.path.abspath(name) for name in selected.skipped if os.path.basename(name) in files.KUSTOMIZATIONS
    ]
    named = [os.path.abspath(path) for path in paths if path.is_file()]
    around = sources.fluxes_around(named, set(absolute)) if named else []
    engines = _as_engines_apply(found, absolute, results, validator, kustomizations, around)
    built = _built(selected.skipped, found, absolute, results, validator, engines, sources.including(named))
    problems += built.problems
    enforced: dict[str, list[tuple[str, str]]] = {}
    deferred: list[Deferred] = []
    texts: dict[str, str] = {}
    judged: list[str] = []
    skipped = list(selected.skipped)
    for (_, name), result in zip(found, results, strict=True):
        if result.not_manifest or name in built.unreferenced:
            skipped.append(name)
            continue
        judged.append(name)
        problems += result.problems
        for namespace, level in result.enforced.items():
            enforced.setdefault(namespace, []).append((level, name))
        deferred += result.deferred
        if result.text is not None:
            texts[name] = result.text
    for namespace, level, name in built.enforced:
        enforced.setdefault(namespace, []).append((level, name))
    deferred += built.deferred
    kept, silenced = suppressions.apply(problems + _judged(deferred, enforced), texts)
    return Validated(kept, silenced, judged, len(skipped), built.summary)


def _absolute(path: str, here: str) -> str:
    """path from the filesystem root; normalised only where it may need it (a walk's paths
    seldom do, and normalising 2,000 of them is measurable)."""
    if path.startswith("/"):
        return path if "/." not in path and "//" not in path else os.path.normpath(path)
    joined = f"{here}/{path}"
    return (
        joined if "/." not in joined and "//" not in joined and not path.startswith(".") else os.path.normpath(joined)
    )


def _as_engines_apply(
    found: list[tuple[str, str]],
    absolute: list[str],
    results: list[FileResult],
    validator: ManifestValidator,
    kustomizations: list[str],
    around: list[tuple[str, Any]],
) -> dict[str, list[sources.Applied]]:
    """Judge again, as Flux and kustomize apply them, the files an engine changes: substituted
    by the Flux Kustomizations whose path holds them, in the namespace one puts them in. A
    file several apply is judged for each; a finding they share is said once. What applies to
    each of the kustomizations (files) is returned too, for their builds; around: Flux
    Kustomizations found beyond the inputs for files named on their own."""
    fluxes = [(file, flux) for file, result in zip(absolute, results, strict=True) for flux in result.flux]
    fluxes += around
    holders: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for i, result in enumerate(results if fluxes else ()):  # only substituteFrom reads them
        for kind, namespace, name in result.holders:
            holders.setdefault((kind, name), []).append((namespace, i))

    def holder(kind: str, namespace: str, name: str) -> dict[str, str | None] | None:
        places = sorted(holders.get((kind, name), []), key=lambda place: place[0] != namespace)
        return _holder_data(found[places[0][1]], kind, name) if places else None

    engines = sources.engines([*absolute, *kustomizations], fluxes, holder)  # a kustomization: what its build is given
    todo = [(i, applied) for i, file in enumerate(absolute) for applied in engines.get(file, [])]
    if not todo:
        return engines
    again: dict[int, list[FileResult]] = {}
    for (i, _), result in zip(todo, _judged_applied(todo, found, validator), strict=True):
        again.setdefault(i, []).append(result)
    for i, judged in again.items():
        results[i] = judged[0]._replace(
            problems=list({replace(p, about=""): p for r in judged for p in r.problems}.values()),
            enforced={k: v for r in judged for k, v in r.enforced.items()},
            deferred=list(dict.fromkeys(d for r in judged for d in r.deferred)),
        )
    return engines


class _Builds(NamedTuple):
    """What building the kustomizations among the inputs gave: findings at their source lines,
    Namespaces' levels (namespace, level, file) and deferred Pod Security checks; the files a
    build left out (never applied); and a sentence for the summary."""

    problems: list[Problem]
    enforced: list[tuple[str, str, str]]
    deferred: list[Deferred]
    unreferenced: set[str]
    summary: str


def _built(
    skipped: list[str],
    found: list[tuple[str, str]],
    absolute: list[str],
    results: list[FileResult],
    validator: ManifestValidator,
    engines: dict[str, list[sources.Applied]],
    around: list[str],
) -> _Builds:
    """Every kustomization among the inputs that no other includes, built by the real engine
    and judged as built: the files it reads are judged through it (their own results give way
    to it), the files beside it that it leaves out are never applied. Around: kustomization
    files (absolute) that build files named on their own; only the named files' findings count.
    Without an engine on PATH, or for a remote base, the files are judged one by one and the
    summary says so."""
    asked = [name for name in skipped if os.path.basename(name) in files.KUSTOMIZATIONS]
    here = os.getcwd()
    kustomizations = list(dict.fromkeys([*asked, *(files.display_path(path, here) for path in around)]))
    if not kustomizations:
        return _Builds([], [], [], set(), "")
    names = {path: name for path, (_, name) in zip(absolute, found, strict=True)}
    index = {path: i for i, path in enumerate(absolute)}
    command = kustomize.engine()
    if command is None:
        unbuilt = [kustomize.closure(root)[0] for root in kustomize.roots(kustomizations)]
        declared = kustomize.variables(frozenset(os.path.dirname(os.path.abspath(k)) for k in kustomizations))
        _with_kustomize_vars(unbuilt, declared, absolute, found, results, validator, engines)
        return _Builds([], [], [], set(), "kustomizations judged file by file (neither kustomize nor kubectl on PATH)")
    shown = {os.path.dirname(os.path.abspath(name)): name for name in kustomizations}
    asked_kustomizations = {os.path.abspath(name) for name in asked}  # what their generators make is asked for
    gathered = _Gathered()
    consumed: set[str] = set()  # files a build judged: their own results give way
    used: set[str] = set()  # files some kustomization includes
    read: set[str] = set()  # the kustomization directories of what was built or taken as written
    remote = built_count = as_written = 0
    planned = []
    found_files = frozenset(index)  # they exist
    for root in kustomize.roots(kustomizations):
        directories, remote_bases = kustomize.closure(root)
        settings = kustomize.inherited(root, kustomizations)
        listed = None if remote_bases or settings else kustomize.as_written(root, found_files)
        if listed is not None:  # it lists files and changes nothing: judged as written, no build
            as_written += 1
            used.update(listed)
            read |= directories
        else:
            planned.append((root, directories, remote_bases, settings))
    read_before: dict[str, list[Document]] = {}
    judged_before: set[tuple[str, int, str, tuple[sources.Applied, ...]]] = set()
    to_judge: list[tuple[Document, Any, sources.Applied]] = []  # judged in worker processes when many
    # a base's `$(NAME)` that a kustomization including it declares in vars is kustomize's to replace
    declared = kustomize.variables(frozenset(os.path.dirname(os.path.abspath(k)) for k in kustomizations))
    builds: list[Any] = []
    if planned:
        from concurrent.futures import ThreadPoolExecutor  # only a run that builds pays for the import

        with ThreadPoolExecutor(max_workers=parallel.cpus()) as pool:  # each build waits on its engine
            builds = list(
                pool.map(
                    lambda plan: (
                        None if plan[2] else kustomize.build(plan[0], command, shown[plan[0]], read_before, plan[3])
                    ),
                    planned,
                )
            )
    for (root, directories, remote_bases, _), build in zip(planned, builds, strict=True):
        name = shown[root]
        if build is None:
            remote += 1
            if name not in asked:
                continue  # found around a file named alone: its own files were not asked about
            gathered.problems.append(
                Problem(
                    name,
                    1,
                    1,
                    "kustomize-remote",
                    Severity.INFO,
                    f"not built: {remote_bases[0]}; its files are judged one by one",
                    "validate the output of `kustomize build` where the network is allowed",
                )
            )
            continue
        if build.problem is not None:
            if name in asked:
                gathered.problems.append(build.problem)
            continue
        built_count += 1
        read |= directories
        kustomization_doc = load_file(os.path.join(root, os.path.basename(name)), name, kube=True)[0]
        flux = [each._replace(kustomize_vars=declared) for each in engines.get(os.path.abspath(name), []) if each.flux]
        each_applied = flux or [sources.Applied("kustomization", kustomize_vars=declared)]
        for data, source, doc in build.objects:
            consumed.add(source)
            where = doc or (kustomization_doc[0] if kustomization_doc else None)
            if where is None or (source and source not in names and source not in asked_kustomizations):
                continue  # a base outside the paths asked: judged where it is asked for
            same = (where.file, where.index, json.dumps(data, sort_keys=True, default=str), tuple(each_applied))
            if same in judged_before:
                continue  # a base several overlays build alike: judged once
            judged_before.add(same)
            to_judge += [(where, data, each) for each in each_applied]
    for judged_objects in parallel.map_in_order(
        partial(_judge_built, validator=validator), to_judge, parallel.workers(len(to_judge)), codec=_PLAIN_GATHERED
    ):
        gathered.problems += judged_objects.problems
        gathered.defined += judged_objects.defined
        gathered.deferred += judged_objects.deferred
    used |= consumed
    unbuilt = [plan[1] for plan, build in zip(planned, builds, strict=True) if build is None]
    _with_kustomize_vars(unbuilt, declared, absolute, found, results, validator, engines)
    for source in consumed & index.keys():
        i = index[source]
        results[i] = results[i]._replace(problems=[], enforced={}, deferred=[])
    known: dict[str, str | None] = {}
    unreferenced = {
        name
        for path, name in names.items()
        if path not in used and sources.kustomization_of(path, known) in read and not results[index[path]].not_manifest
    }
    problems = list({replace(p, about=""): p for p in gathered.problems}.values())
    how = " ".join(os.path.basename(part) for part in command)
    summary = f"{built_count} kustomization{'s' if built_count != 1 else ''} built with {how}"
    summary += f", {as_written} judged as written (they only list files)" if as_written else ""
    summary += f", {remote} not built (remote base or Helm chart)" if remote else ""
    summary += (
        f", {len(unreferenced)} file{'s' if len(unreferenced) != 1 else ''} no kustomization uses"
        if unreferenced
        else ""
    )
    return _Builds(
        problems, list(dict.fromkeys(gathered.defined)), list(dict.fromkeys(gathered.deferred)), unreferenced, summary
    )


def _judge_built(item: tuple[Document, Any, sources.Applied], validator: ManifestValidator) -> _Gathered:
    """One built object judged at the document it was written in."""
    gathered = _Gathered()
    gathered.document(*item[:2], validator, item[2])
    return gathered


def _gathered_to_plain(gathered: _Gathered) -> tuple[Any, ...]:
    return (
        [p.to_plain() for p in gathered.problems],
        gathered.defined,
        [(namespace, dataclasses.astuple(v), p.to_plain()) for namespace, v, p in gathered.deferred],
    )


def _gathered_from_plain(plain: Any) -> _Gathered:
    gathered = _Gathered()
    problems, defined, deferred = plain
    gathered.problems = [Problem.from_plain(p) for p in problems]
    gathered.defined = [tuple(d) for d in defined]
    gathered.deferred = [(namespace, pod_security.Violation(*v), Problem.from_plain(p)) for namespace, v, p in deferred]
    return gathered


# What judging a built object gives, as a worker sends it: its findings, Namespaces and deferred checks.
_PLAIN_GATHERED: parallel.Codec[_Gathered] = parallel.Codec(_gathered_to_plain, _gathered_from_plain)


def _with_kustomize_vars(
    unbuilt: list[frozenset[str]],
    declared: frozenset[str],
    absolute: list[str],
    found: list[tuple[str, str]],
    results: list[FileResult],
    validator: ManifestValidator,
    engines: dict[str, list[sources.Applied]],
) -> None:
    """Judge again the files of kustomizations that were not built (each given by the
    kustomization directories its build would read) with the `vars` kustomizations declare
    (declared): kustomize would replace `$(NAME)`, so those values are opaque. Files a Flux
    Kustomization applies keep its judgement."""
    known: dict[str, str | None] = {}
    todo: list[tuple[int, sources.Applied]] = []
    applied = sources.Applied("kustomization", kustomize_vars=declared)
    for directories in unbuilt if declared else []:
        todo += [
            (i, applied)
            for i, path in enumerate(absolute)
            if path not in engines and sources.kustomization_of(path, known) in directories
        ]
    for (i, _), result in zip(todo, _judged_applied(todo, found, validator), strict=True):
        results[i] = result


def _judged_applied(
    todo: list[tuple[int, sources.Applied]], found: list[tuple[str, str]], validator: ManifestValidator
) -> list[FileResult]:
    """Each (file index, what applies) judged, in worker processes when there are many."""
    judge = partial(_judge_applied, found=found, validator=validator)
    codec: parallel.Codec[FileResult] = parallel.Codec(_result_to_plain, _result_from_plain)
    return parallel.map_in_order(judge, todo, parallel.workers(len(todo)), codec=codec)


def _judge_applied(
    item: tuple[int, sources.Applied], found: list[tuple[str, str]], validator: ManifestValidator
) -> FileResult:
    file = found[item[0]]
    return _refused_by_kustomize(file[0], _validate_file(file, validator, item[1]))


def _holder_data(file: tuple[str, str], kind: str, name: str) -> dict[str, str | None]:
    """The data of the ConfigMap or Secret called name in file, as Flux reads variables from
    it: a Secret's data decoded, stringData as written; a value SOPS encrypted is unknown (None)."""
    docs, _ = load_file(*file, kube=True)
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict) or data.get("kind") != kind or (data.get("metadata") or {}).get("name") != name:
            continue
        sops = sources.is_sops(data)
        values: dict[str, str | None] = {}
        for field_name in ("data", "stringData") if kind == "Secret" else ("data",):
            for key, value in (data.get(field_name) or {}).items():
                values[str(key)] = _readable(value, sops, encoded=field_name == "data" and kind == "Secret")
        return values
    return {}


def _readable(value: Any, sops: bool, encoded: bool) -> str | None:
    text = str(value)
    if sops and text.startswith("ENC["):
        return None
    if not encoded:
        return text
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except ValueError:
        return None


def _stamped(path: str, name: str) -> tuple[str, int, int]:
    """A catalog schema as the kept results know it: by name, size and modification time (the
    schemas of a large catalog are read only when a kind uses them)."""
    try:
        stat = os.stat(path)
    except OSError:
        return name, -1, -1
    return name, stat.st_size, stat.st_mtime_ns


class Validated(NamedTuple):
    """The findings no gen:ignore comment silences, how many it did, every file judged, and
    how many files were skipped as no manifest."""

    problems: list[Problem]
    silenced: int
    files: list[str]
    skipped: int = 0
    built: str = ""  # which kustomizations were built, and how


def _result_to_plain(result: FileResult) -> tuple[Any, ...]:
    return (
        [p.to_plain() for p in result.problems],
        result.enforced,
        [(namespace, dataclasses.astuple(v), p.to_plain()) for namespace, v, p in result.deferred],
        result.text,
        result.definitions,
        result.custom,
        result.not_manifest,
        result.flux,
        result.holders,
    )


def _result_from_plain(plain: Any) -> FileResult:
    problems, enforced, deferred, text, definitions, custom, not_manifest, flux, holders = plain
    return FileResult(
        [Problem.from_plain(p) for p in problems],
        dict(enforced),
        [(namespace, pod_security.Violation(*v), Problem.from_plain(p)) for namespace, v, p in deferred],
        text,
        list(definitions),
        set(custom),
        bool(not_manifest),
        tuple(flux),
        tuple(tuple(holder) for holder in holders),
    )


class Kept(Protocol):
    """What judging files may take from the run before: the cache layer
    (`generator.cache.validated`) answers, and decides what is the same; the stage only asks."""

    def results(self, files: list[tuple[str, str]]) -> tuple[list[Any], list[str | None]]:
        """Each file's result as plain values where it was judged before with the same name
        and content (else None), and each file's key where it was read to look."""

    def keep(self, key: str, plain: Any) -> None:
        """A file judged this run."""

    def save(self) -> None:
        """Keep what this run judged for the next."""


KeptFor = Callable[[list[FsPath], "ManifestValidator", list[Any]], "Kept | None"]


# A judged file as a worker sends it: its result, the result as plain values when it is to be
# kept, and the file's key (read where the file is read when this process has not read it for
# a lookup, so a run with nothing kept yet does not read every file twice in this process).
_Judged = tuple[FileResult, Any, "str | None"]


def _judge_file(item: tuple[tuple[str, str], str | None], validator: ManifestValidator, keep: bool) -> _Judged:
    file, key = item
    result = _validate_file(file, validator)
    return (result, _result_to_plain(result), key or gen_cache.file_key(*file)) if keep else (result, None, None)


_PLAIN_JUDGED: parallel.Codec[_Judged] = parallel.Codec(
    lambda judged: (judged[1] if judged[1] is not None else _result_to_plain(judged[0]), judged[2]),
    lambda sent: (_result_from_plain(sent[0]), sent[0], sent[1]),
)


def _validate_files(
    files: list[tuple[str, str]], validator: ManifestValidator, kept: Kept | None = None
) -> list[FileResult]:
    """Each file's result, in order; with `kept`, a file judged before with the same name and
    content is taken from it, and what this run judged is kept for the next."""
    results: list[FileResult | None] = [None] * len(files)
    keys: list[str | None] = [None] * len(files)  # each file's key, once read for a lookup
    if kept is not None:
        plains, keys = kept.results(files)
        for i, (key, plain) in enumerate(zip(keys, plains, strict=True)):
            if key is None or plain is None:
                continue
            with contextlib.suppress(TypeError, ValueError, IndexError):  # an entry that does not read
                results[i] = _result_from_plain(plain)
                kept.keep(key, plain)
    todo = [i for i, result in enumerate(results) if result is None]
    processes = parallel.workers(len(todo))
    if processes > 1:
        for version in validator.versions:
            load_kubernetes_schemas(version)  # parsed once here, inherited by every worker
        if validator.definitions:
            validator.definitions.compile()
    judge = partial(_judge_file, validator=validator, keep=kept is not None)
    judged = parallel.map_in_order(judge, [(files[i], keys[i]) for i in todo], processes, codec=_PLAIN_JUDGED)
    for i, (result, plain, key) in zip(todo, judged, strict=True):
        results[i] = result
        if kept is not None and key is not None:
            kept.keep(key, plain)
    if kept is not None:
        kept.save()
    return [
        _refused_by_kustomize(file[0], result)
        for file, result in zip(files, results, strict=True)
        if result is not None
    ]
