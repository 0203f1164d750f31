"""Stage 3: policies -> Kubernetes objects, through sandboxed Jinja2 templates.

Every `{{ }}` output passes through a data-safe encoder (YAML flow or JSON), undefined
variables are errors, and the rendered text is parsed back and re-emitted canonically, so a
policy value can never add structure to a manifest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from generator import context as ctx
from generator.load import YamlError, parse_yaml
from generator.policy import Policy
from generator.problems import Problem, Severity
from generator.resources import data_dir
from generator.serialize import canonical, dump_yaml, yaml_scalar
from generator.targets import Target

CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "ClusterRole",
        "ClusterRoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "PriorityClass",
    }
)
MANAGED_BY = {"app.kubernetes.io/managed-by": "gen"}


@dataclass
class Manifest:
    """One rendered object and where it came from."""

    obj: dict[str, Any]
    policy: Policy
    template: str
    sources: list[Policy] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def name(self) -> str:
        return str(self.obj.get("metadata", {}).get("name", ""))

    @property
    def namespace(self) -> str | None:
        ns = self.obj.get("metadata", {}).get("namespace")
        return str(ns) if ns is not None else None

    @property
    def relpath(self) -> str:
        return f"{self.namespace or '_cluster'}/{self.kind.lower()}-{self.name}.yaml"


@dataclass
class Fragment:
    """A file that is not a cluster resource (integration snippets)."""

    relpath: str
    data: Any
    policy: Policy
    comment: str


@dataclass
class TargetRender:
    target: Target
    manifests: list[Manifest] = field(default_factory=list)
    fragments: list[Fragment] = field(default_factory=list)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _promql_string(value: str) -> str:
    """Escape a label value for a double-quoted PromQL string."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


_RE2_META = re.compile(r"([\\.+*?()|\[\]{}^$])")


def _label_matcher(values: list[str], label: str) -> str:
    """A PromQL matcher selecting exactly these label values: `l="a"` or `l=~"a|b"`."""
    unique = sorted(set(values))
    if len(unique) == 1:
        return f'{label}="{_promql_string(unique[0])}"'
    pattern = "|".join(_RE2_META.sub(r"\\\1", v) for v in unique)
    return f'{label}=~"{_promql_string(pattern)}"'


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return {**base, **extra}


def _finalize_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, allow_nan=False)


@cache
def _environment(kind: str) -> jinja2.Environment:
    finalize: Callable[[Any], str] = _finalize_json if kind == "json" else yaml_scalar
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # templates ship with the package; no stat per render
        autoescape=False,
        finalize=finalize,
    )
    env.filters["promql_string"] = _promql_string
    env.filters["label_matcher"] = _label_matcher
    env.filters["sha256"] = _sha256
    env.filters["merged"] = _merged
    return env


class RenderError(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def render_text(template: str, context: dict[str, Any]) -> str:
    env = _environment("json" if template.endswith(".json.j2") else "yaml")
    try:
        return env.get_template(template).render(context)
    except jinja2.TemplateSyntaxError as err:
        raise RenderError(
            Problem(
                f"templates/{template}", err.lineno or 0, 1, "template-syntax", Severity.ERROR, err.message or str(err)
            )
        ) from err
    except (jinja2.TemplateError, ValueError, TypeError) as err:
        raise RenderError(
            Problem(
                f"templates/{template}", _template_line(err, template), 1, "template-render", Severity.ERROR, str(err)
            )
        ) from err


def _template_line(err: BaseException, template: str) -> int:
    tb = err.__traceback__
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(template):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def render_yaml(template: str, context: dict[str, Any]) -> Any:
    text = render_text(template, context)
    if not text.strip():
        return None  # a template whose condition is off renders nothing
    try:
        return parse_yaml(text)
    except YamlError as err:
        raise RenderError(
            Problem(
                f"templates/{template}",
                0,
                0,
                "template-output",
                Severity.ERROR,
                f"template produced invalid YAML: {err}",
            )
        ) from err


def render_json(template: str, context: dict[str, Any]) -> Any:
    text = render_text(template, context)
    try:
        return json.loads(text)
    except ValueError as err:
        raise RenderError(
            Problem(
                f"templates/{template}",
                err.__dict__.get("lineno", 0),
                0,
                "template-output",
                Severity.ERROR,
                f"template produced invalid JSON: {err}",
            )
        ) from err


# Which templates each policy kind renders, in order; a template may render nothing.
TEMPLATES: dict[str, tuple[str, ...]] = {
    "Scheduler": (
        "scheduler/serviceaccount.yaml.j2",
        "scheduler/clusterrolebinding-kube-scheduler.yaml.j2",
        "scheduler/clusterrolebinding-volume-scheduler.yaml.j2",
        "scheduler/clusterrolebinding-auth-delegator.yaml.j2",
        "scheduler/rolebinding-authentication-reader.yaml.j2",
        "scheduler/role-leader-election.yaml.j2",
        "scheduler/rolebinding-leader-election.yaml.j2",
        "scheduler/configmap-config.yaml.j2",
        "scheduler/deployment.yaml.j2",
        "scheduler/poddisruptionbudget.yaml.j2",
        "scheduler/service.yaml.j2",
        "scheduler/clusterrole-metrics.yaml.j2",
        "scheduler/clusterrolebinding-metrics.yaml.j2",
        "scheduler/servicemonitor.yaml.j2",
        "scheduler/configmap-dashboard.yaml.j2",
        "scheduler/prometheusrule.yaml.j2",
    ),
    "GpuWorkload": ("gpuworkload/workload.yaml.j2",),
    "ReplicatedService": (
        "replicatedservice/deployment.yaml.j2",
        "replicatedservice/horizontalpodautoscaler.yaml.j2",
        "replicatedservice/serviceaccount.yaml.j2",
        "replicatedservice/role.yaml.j2",
        "replicatedservice/rolebinding.yaml.j2",
        "replicatedservice/validatingadmissionpolicy.yaml.j2",
        "replicatedservice/validatingadmissionpolicybinding.yaml.j2",
    ),
    "Monitoring": ("monitoring/configmap-dashboard.yaml.j2",),
    "DeletionCostPolicy": (),
}
# Templates of objects that exist only when the policy's spec sets a field. Deciding that here
# costs a dict lookup; rendering a template only to find it empty cost about 30 µs each, a
# sixth of a ReplicatedService's render.
WHEN_SPEC_HAS: dict[str, str] = {
    "replicatedservice/horizontalpodautoscaler.yaml.j2": "autoscaling",
    "replicatedservice/serviceaccount.yaml.j2": "costWriter",
    "replicatedservice/role.yaml.j2": "costWriter",
    "replicatedservice/rolebinding.yaml.j2": "costWriter",
    "replicatedservice/validatingadmissionpolicy.yaml.j2": "costWriter",
    "replicatedservice/validatingadmissionpolicybinding.yaml.j2": "costWriter",
}


def _finish(obj: dict[str, Any], target: Target) -> dict[str, Any]:
    meta = obj.setdefault("metadata", {})
    meta["labels"] = {**target.common_labels, **(meta.get("labels") or {}), **MANAGED_BY}
    return canonical(obj)


def _objects(template: str, context: dict[str, Any]) -> list[dict[str, Any]]:
    data = render_yaml(template, context)
    if data is None:
        return []
    if not isinstance(data, dict) or not {"apiVersion", "kind", "metadata"} <= data.keys():
        raise RenderError(
            Problem(
                f"templates/{template}",
                0,
                0,
                "template-output",
                Severity.ERROR,
                "template must render one object with apiVersion, kind and metadata",
            )
        )
    return [data]


def render_target(target: Target) -> tuple[TargetRender, list[Problem]]:
    out = TargetRender(target)
    problems: list[Problem] = []
    for policy in sorted(target.policies, key=lambda p: (p.kind, p.name)):
        try:
            context = ctx.build(policy, target)
            if policy.kind == "Scheduler":
                context["config_text"] = dump_yaml(render_yaml("scheduler/kubescheduler-config.yaml.j2", context))
                context["dashboard_json"] = (
                    json.dumps(render_json("scheduler/dashboard.json.j2", context), indent=2) + "\n"
                )
            if policy.kind == "Monitoring":
                context["dashboard_json"] = (
                    json.dumps(render_json("monitoring/dashboard.json.j2", context), indent=2) + "\n"
                )
                for rel, template, comment in ctx.MONITORING_FRAGMENTS:
                    out.fragments.append(Fragment(rel, render_yaml(template, context), policy, comment))
            for template in TEMPLATES[policy.kind]:
                needed = WHEN_SPEC_HAS.get(template)
                if needed is not None and needed not in policy.spec:
                    continue
                for obj in _objects(template, context):
                    out.manifests.append(Manifest(_finish(obj, target), policy, template, [policy]))
        except RenderError as err:
            problems.append(err.problem)
    try:
        for namespace, sources in ctx.namespaces(target).items():
            for obj in _objects("target/namespace.yaml.j2", {"namespace": namespace}):
                out.manifests.append(Manifest(_finish(obj, target), sources[0], "target/namespace.yaml.j2", sources))
    except RenderError as err:
        problems.append(err.problem)
    return out, problems


def render_gitops(target: Target, repo_path: str) -> tuple[list[Manifest], list[Problem]]:
    """The Argo CD Application / Flux Kustomization that sync target's directory."""
    manifests: list[Manifest] = []
    context = {"target": target.name, "gitops": target.gitops, "path": repo_path}
    try:
        for key, template in (("argocd", "target/application.yaml.j2"), ("flux", "target/flux-kustomization.yaml.j2")):
            if key in target.gitops:
                for obj in _objects(template, context):
                    manifests.append(Manifest(_finish(obj, target), target.policy, template, [target.policy]))
    except RenderError as err:
        return [], [err.problem]
    return manifests, []
