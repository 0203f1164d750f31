"""Stages 3-4 for one target: render its manifests, validate each, lay out its directories.

This module brings in the render machinery (jinja2, the Kubernetes schemas, the writer).
`pipeline` imports it only once policy loading is under way, so a large render overlaps the
import with the loading instead of paying for it before the first policy is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from generator import parallel
from generator.kube import crds, pod_security
from generator.kube.api_versions import DEFAULT_VERSION
from generator.kube.scope import is_definition
from generator.kube.validate import SHAPE_UNSURE, ManifestValidator, load_kubernetes_schemas, quote_hint
from generator.layout import GITOPS_DIR
from generator.policies.policy import Policy
from generator.policies.targets import Target
from generator.problems import Problem, Severity, json_path
from generator.render import links, templates, write
from generator.render.templates import Manifest, TargetRender, compile_templates, render_gitops, render_target
from generator.yamlio.serialize import dump_yaml

# Kinds a repository holds by the hundred: their templates are worth compiling ahead.
_NUMEROUS_KINDS = ("ReplicatedService", "GpuWorkload")


def prepare() -> None:
    """What every render worker would otherwise build for itself (about 40 ms each)."""
    compile_templates(_NUMEROUS_KINDS)
    load_kubernetes_schemas(DEFAULT_VERSION)


def _manifest_problems(manifest: Manifest, validator: ManifestValidator) -> list[Problem]:
    problems = []
    for finding in validator.validate(manifest.obj, manifest.text):
        if finding.severity < Severity.WARNING:
            continue  # advice is given once, on the policy
        if manifest.raw and finding.rule == "secret-material":
            continue  # an error on the Manifests policy already (manifests-secret)
        hint = finding.hint
        if manifest.written_in is not None:  # the team's own object, named as they wrote it
            where = manifest.title
            hint = hint or quote_hint(manifest.written_in, manifest.origin(finding.path), finding)
        else:
            kind = manifest.obj.get("kind")  # a patch may have replaced it with anything
            where = f"rendered {kind if isinstance(kind, str) and kind else 'object'} {manifest.relpath}"
        problems.append(
            manifest.problem(
                finding.path,
                finding.rule,
                f"{where}: {json_path(finding.path)}: {finding.message}",
                severity=finding.severity,
                hint=hint,
                key=finding.at_key,
            )
        )
    return problems


_Judged = tuple[str, list[Problem]]


def _judged(manifest: Manifest, validator: ManifestValidator, raw_validator: ManifestValidator) -> _Judged:
    """An object's file text and findings: independent of every other object's."""
    return manifest.text, _manifest_problems(manifest, raw_validator if manifest.raw else validator)


_PLAIN_JUDGED = parallel.Codec(
    lambda judged: (judged[0], [p.to_plain() for p in judged[1]]),
    lambda plain: (plain[0], [Problem.from_plain(p) for p in plain[1]]),
)


def _owner(manifest: Manifest) -> str:
    return f"{manifest.policy.kind} {manifest.policy.name!r}"


def _collisions(manifest: Manifest, other: Manifest, target: str) -> list[Problem]:
    """One object, one owner: the same object twice in a target is reported at both places."""
    name = manifest.title
    here = manifest.problem(("metadata", "name"), "object-collision", "")
    there = other.problem(("metadata", "name"), "object-collision", "")
    hint = "every object has one owner: drop one, or rename it"
    return [
        replace(
            here,
            message=f"{name} is defined twice in target {target!r}: also by {_owner(other)} at {there.file}:{there.line}",
            hint=hint,
        ),
        replace(
            there,
            message=f"{name} is defined twice in target {target!r}: also by {_owner(manifest)} at {here.file}:{here.line}",
            hint=hint,
        ),
    ]


def _plan_target(render: TargetRender) -> tuple[write.DirPlan, list[Problem], dict[str, Manifest]]:
    plan = write.DirPlan(render.target.output_dir)
    problems: list[Problem] = []
    owners: dict[str, Manifest] = {}
    objects: dict[tuple[str, str, str, str], Manifest] = {}
    for manifest in render.manifests:
        rel = manifest.relpath
        if not write.is_safe_rel(rel) or rel.count("/") != 1:
            problems.append(
                manifest.problem(
                    ("metadata", "name"),
                    "object-name",
                    f"{manifest.kind} {manifest.name!r} cannot be written: its kind, namespace or name is no file name",
                    hint="Kubernetes names hold no '/' and are never '.' or '..'",
                )
            )
            continue
        key = manifest.key
        other = objects.get(key) or owners.get(rel)
        if other is not None:
            problems += _collisions(manifest, other, render.target.name)
            continue
        owners[rel] = objects[key] = manifest
        plan.files[rel] = manifest.text.encode("utf-8")
    for fragment in render.fragments:
        head = f"# Generated by gen from policy {fragment.policy.kind}/{fragment.policy.name}. {fragment.comment}\n"
        plan.files[fragment.relpath] = (head + dump_yaml(fragment.data)).encode("utf-8")
    resources = sorted(owners)
    kustomization = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources}
    plan.files["kustomization.yaml"] = (
        "# Generated by gen. Lists every resource of this target; integrations/ holds fragments, not resources.\n"
        + dump_yaml(kustomization)
    ).encode("utf-8")
    return plan, problems, owners


class PreviousRender(templates.Previous, Protocol):
    """What judging a target's objects may take from an earlier run (`generator.cache.renders`)."""

    def judging_with(self, *inputs: Any) -> None:
        """What this run judges objects with."""

    def judged(self, manifest: Manifest, settled: Any) -> tuple[str, list[Problem]] | None:
        """The object's text and findings from last time, if it is the same object judged the same way."""

    def keep_judged(self, manifest: Manifest, settled: Any, text: str, found: list[Problem]) -> None:
        """An object judged this run."""


@dataclass
class Planned:
    """A target's directories and findings, with the objects each directory's files hold (what
    a sync of them is planned from: `generator.preview.committed`)."""

    plans: list[write.DirPlan]
    problems: list[Problem]
    objects: list[dict[str, Manifest]]  # per plan: file -> the object it holds
    gitops: list[Manifest]  # the Argo CD Applications / Flux Kustomizations that sync the target


# The rules that judge objects of several policies together, which a render of only some of a
# target's policies (`gen lint` of a few files) cannot check.
WHOLE_TARGET_RULES = ("selector-no-match", "pvc-rwo-shared")


def render_and_plan(
    target: Target,
    out: Path | None,
    definitions: Sequence[tuple[Any, str]] = (),
    only: Callable[[Policy], bool] | None = None,
    processes: int = 1,
    reuse: PreviousRender | None = None,
) -> Planned:
    """Stages 3-4 for one target: its directory and, if asked, its GitOps objects' directory
    (`out`: the output directory they are named for; None for `gen lint`). `only` renders and
    judges just some policies' objects, without the checks across all of the target's objects
    (`gen lint` of a few files). `processes`: how many the target's policies and objects are
    spread over; `reuse`: what an earlier run rendered and judged, when the cache is on."""
    rendered, problems = render_target(target, only, processes, reuse)
    settled = links.settle(rendered.manifests)
    plugins = _declared_plugins(target)
    enforced = {  # the namespaces of this target that refuse Pods below a Pod Security level
        m.name: level
        for m in rendered.manifests
        if m.group_kind == ("", "Namespace") and (level := pod_security.enforced_level(m.obj))
    }
    gen_namespaces = sorted(m.name for m in rendered.manifests if m.group_kind == ("", "Namespace") and not m.raw)
    catalog = crds.Catalog()  # the team's CRDs (--crds, .gen.yaml, Manifests) judge their custom resources
    catalog.add_all(definitions, stored=True)  # crds.stored() checked them
    own = [(m.obj, m.written_in.file) for m in rendered.manifests if m.written_in and is_definition(m.obj)]
    catalog.add_all(own)
    validator = ManifestValidator(
        target.versions, plugins, own_output=True, enforced=enforced, definitions=catalog, gen_namespaces=gen_namespaces
    )
    # the team's objects, as `gen validate` judges them
    raw_validator = ManifestValidator(
        target.versions, plugins, enforced=enforced, definitions=catalog, gen_namespaces=gen_namespaces
    )
    well_formed = []  # objects of their kind's shape, which the checks across objects may rely on
    judge = partial(_judged, validator=validator, raw_validator=raw_validator)
    judged: dict[int, _Judged] = {}
    if reuse is not None:
        reuse.judging_with(target.versions, plugins, sorted(enforced.items()), gen_namespaces, list(definitions), own)
        judged = {
            id(m): before for m in rendered.manifests if (before := reuse.judged(m, settled.get(id(m)))) is not None
        }
    todo = [m for m in rendered.manifests if id(m) not in judged]
    workers = parallel.workers(len(todo), processes)
    if workers > 1 and catalog:
        catalog.compile()  # once here, inherited by the workers, as `gen validate` does
    for manifest, (text, found) in zip(
        todo, parallel.map_in_order(judge, todo, workers, codec=_PLAIN_JUDGED), strict=True
    ):
        judged[id(manifest)] = (text, found)
        if reuse is not None:
            reuse.keep_judged(manifest, settled.get(id(manifest)), text, found)
    for manifest in rendered.manifests:
        text, found = judged[id(manifest)]
        manifest.text = text  # written in a worker or a previous run: the same text
        problems.extend(found)
        if not any(p.rule in SHAPE_UNSURE for p in found):
            well_formed.append(manifest)
    if only is None:  # WHOLE_TARGET_RULES: they need every object of the target
        problems += links.selector_problems(well_formed, target.name)
        problems += links.shared_claims(well_formed, target.name)
    plan, found, owners = _plan_target(rendered)
    problems.extend(found)
    namespaces = {m.namespace for m in owners.values() if m.namespace}
    planned = Planned([plan], problems, [owners], [])
    repo_path = target.gitops.get("path") or f"{out.name if out is not None else 'deploy'}/{target.output_dir}"
    manifests, found = render_gitops(target, repo_path, namespaces)
    problems.extend(found)
    if manifests:
        gitops_plan = write.DirPlan(f"{GITOPS_DIR}/{target.name}")
        listed: dict[str, Manifest] = {}
        for manifest in manifests:
            problems.extend(_manifest_problems(manifest, validator))
            rel = f"{manifest.kind.lower()}-{manifest.name}.yaml"
            gitops_plan.files[rel] = manifest.text.encode("utf-8")
            listed[rel] = manifest
        listing = {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": sorted(gitops_plan.files),
        }
        gitops_plan.files["kustomization.yaml"] = (
            "# Generated by gen. The GitOps objects that sync this target, kept outside the directory they sync.\n"
            + dump_yaml(listing)
        ).encode("utf-8")
        planned.plans.append(gitops_plan)
        planned.objects.append(listed)
        planned.gitops = manifests
    _LAST_RENDER[:] = [rendered, reuse, judged, settled]
    return planned


# The last target's objects stay referenced until the process ends, and the CLI ends it without
# freeing them: freeing a 10,000-service target (its objects, their policies) took 0.15 s.
# Each target frees the one before, so a render holds at most one more than it works on.
_LAST_RENDER: list[object] = []


def _declared_plugins(target: Target) -> list[str]:
    return sorted({p for s in target.of_kind("Scheduler") for p in s.spec["outOfTreePlugins"]})
