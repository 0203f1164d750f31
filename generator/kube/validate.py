"""Stage 4: validate Kubernetes objects as the target cluster would.

Three layers, each compiled once per run: kubernetes-validate's strict schemas for the
target version (core kinds), the bundled schemas in schemas/ (scheduler config and CRDs), and
the rules of kube-apiserver per API group (one module each) and kube-scheduler (scheduler_config.py).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any

from generator import schemas
from generator.kube import (
    api_versions,
    autoscaling,
    containers,
    core,
    crds,
    defaults,
    objectmeta,
    openapi,
    pod_security,
    pods,
    rbac,
    sources,
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
)
from generator.problems import Problem, Severity, json_path
from generator.schema_messages import shown
from generator.yamlio.kube_scalars import plain_value
from generator.yamlio.load import Document, YamlError, parse_yaml

if TYPE_CHECKING:  # the reference implementation is imported only to explain a failure
    import jsonschema_rs
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
    import jsonschema_rs  # here, not at the top: a run whose files all come from the cache judges none (6 ms)

    return jsonschema_rs.Registry([(K8S_BASE + "_definitions.json", api_versions.definitions(version))])


def load_kubernetes_schemas(version: str) -> None:
    """Parse the version's shared schema definitions now, so processes forked later inherit them."""
    _k8s_fast_registry(version)


def _kind_registry(version: str, api_version: str, kind: str) -> jsonschema_rs.Registry:
    """The version's whole registry where it is built already (parsed before worker processes
    fork, for many files), else the definitions of this kind alone (a few objects)."""
    if _k8s_fast_registry.cache_info().currsize:
        return _k8s_fast_registry(version)
    import jsonschema_rs

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
    import jsonschema_rs

    fast = jsonschema_rs.Draft202012Validator(schema, registry=registry, base_uri=K8S_BASE + name)
    return schemas.TwoTierValidator(fast, lambda: _reference_validator(schema, version))


def _reference_validator(schema: Any, version: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(schema, registry=_k8s_reference_registry(version))


# kube-apiserver's rules per kind beyond the schemas, one module per API group, named here
# ("module.function" under generator.kube) and imported when an object of the kind is first
# judged: a repository of a few kinds never loads the rules of the others.
GROUP_RULES: dict[tuple[str, str], str] = {
    ("", "Service"): "core.check_service",
    ("", "Endpoints"): "core.check_endpoints",
    ("", "Namespace"): "core.check_namespace",
    ("", "PersistentVolumeClaim"): "claims.check_persistent_volume_claim",
    ("", "PersistentVolume"): "core.check_persistent_volume",
    ("", "ConfigMap"): "core.check_config_keys",
    ("", "Secret"): "core.check_config_keys",
    ("", "ResourceQuota"): "core.check_resource_quota",
    ("", "LimitRange"): "core.check_limit_range",
    ("apps", "StatefulSet"): "apps.check_stateful_set",
    ("node.k8s.io", "RuntimeClass"): "node.check_runtime_class",
    ("coordination.k8s.io", "Lease"): "coordination.check_lease",
    ("discovery.k8s.io", "EndpointSlice"): "discovery.check_endpoint_slice",
    ("apps", "DaemonSet"): "apps.check_daemon_set",
    ("apps", "Deployment"): "apps.check_deployment",
    ("apps", "ReplicaSet"): "apps.check_replica_set",
    ("apps", "ControllerRevision"): "apps.check_controller_revision",
    ("storage.k8s.io", "StorageClass"): "storage.check_storage_class",
    ("storage.k8s.io", "VolumeAttachment"): "storage.check_volume_attachment",
    ("storage.k8s.io", "CSIDriver"): "storage.check_csi_driver",
    ("storage.k8s.io", "CSINode"): "storage.check_csi_node",
    ("storage.k8s.io", "VolumeAttributesClass"): "storage.check_volume_attributes_class",
    ("batch", "Job"): "batch.check_job",
    ("batch", "CronJob"): "batch.check_cron_job",
    ("policy", "PodDisruptionBudget"): "policy.check_pod_disruption_budget",
    ("networking.k8s.io", "NetworkPolicy"): "networking.check_network_policy",
    ("networking.k8s.io", "Ingress"): "networking.check_ingress",
    ("networking.k8s.io", "IngressClass"): "networking.check_ingress_class",
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): "admission.check_validating_admission_policy",
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ): "admission.check_validating_admission_policy_binding",
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): "admission.check_mutating_admission_policy",
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): "admission.check_webhooks",
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): "admission.check_webhooks",
    ("resource.k8s.io", "ResourceClaim"): "resource.check_resource_claim",
    ("resource.k8s.io", "ResourceClaimTemplate"): "resource.check_resource_claim",
    ("resource.k8s.io", "DeviceClass"): "resource.check_device_class",
    (CRD_GROUP, CRD_KIND): "crds.check_definition",
    ("scheduling.k8s.io", "PriorityClass"): "scheduling.check_priority_class",
}


@cache
def _group_rules(group: str, kind: str) -> Callable[[dict[str, Any]], Iterator[Finding]] | None:
    named = GROUP_RULES.get((group, kind))
    if named is None:
        return None
    module, function = named.split(".")
    rules: Callable[[dict[str, Any]], Iterator[Finding]] = getattr(
        importlib.import_module(f"generator.kube.{module}"), function
    )
    return rules


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
        allow_privileged: bool = True,
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
        self.allow_privileged = allow_privileged  # kube-apiserver's --allow-privileged, as the clusters set it
        # per version, what the Pod spec's rules ask of the clusters: the gates on, privileged refused
        refused = {containers.PRIVILEGED_DISALLOWED} if not allow_privileged else set()
        self._cluster_switches = {
            version: frozenset({gate for gate in containers.GATES if self.gate(gate, version)} | refused)
            for version in self.versions
        }

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
        yield from pods.check_workload(obj, self._cluster_switches[version])
        yield from rbac.check_rbac(obj)
        yield from self._pod_security(obj)
        yield from objectmeta.check_derived_names(obj)
        if kind == "HorizontalPodAutoscaler":
            yield from autoscaling.check_hpa(obj, self.gate("HPAScaleToZero", version))
        yield from _removed_volume_plugins(obj, kind, version)
        rules = _group_rules(group, kind)
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
        if not isinstance(source, dict) or source.keys().isdisjoint(core.REMOVED_VOLUME_PLUGINS):
            continue  # nearly every volume: a source still in the tree
        for plugin, removed in core.REMOVED_VOLUME_PLUGINS.items():
            if plugin in source and at >= api_versions.parse_version(removed):
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
