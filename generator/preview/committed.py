"""A target's render compared with the one committed in the output directory: what syncing it
changes, object by object (`sync`), what the engine does around those changes (`engine`), and
the findings about syncing over the committed render (`job-immutable`, `namespace-not-created`).
`gen render`, `render --check` and `gen plan` ask it after the render stages, for renders
without errors: an object Kubernetes refuses has no size to plan with."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from generator import gitops
from generator.kube import scope, updates
from generator.policies import context
from generator.policies.targets import Target
from generator.preview import engine
from generator.preview.sync import Change, plan_directory
from generator.problems import Problem, Severity, has_errors
from generator.render import write
from generator.render.plan import Planned
from generator.render.templates import Manifest


def compare(target: Target, planned: Planned, out: Path) -> tuple[list[Change], list[Problem]]:
    """What syncing the planned directories over those committed in out changes, and the
    findings about it (none for a render with errors)."""
    if has_errors(planned.problems):
        return [], []
    synced = [
        _changes(target.name, target.engines, out, plan, objects)
        for plan, objects in zip(planned.plans, planned.objects, strict=True)
    ]
    owners, changes = planned.objects[0], synced[0]  # the target's own directory; then its GitOps objects'
    found = _job_immutable(changes, owners) + _namespaces_not_created(target, owners, changes, planned.gitops)
    return [change for directory in synced for change in directory], found


def _changes(
    target: str, engines: gitops.Engines, out: Path, plan: write.DirPlan, owners: dict[str, Manifest]
) -> list[Change]:
    directory = write.safe_dir(out, plan.reldir)
    changes = plan_directory(target, engines, directory, plan.digests(), owners)
    return engine.verdicts(changes, engines, directory, _Objects(owners))


class _Objects(Mapping[str, dict[str, Any]]):
    """The planned objects by file, each read only when asked for (a kept one is unpacked then)."""

    def __init__(self, owners: dict[str, Manifest]) -> None:
        self._owners = owners

    def __getitem__(self, rel: str) -> dict[str, Any]:
        return self._owners[rel].obj

    def __iter__(self) -> Iterator[str]:
        return iter(self._owners)

    def __len__(self) -> int:
        return len(self._owners)


def _job_immutable(changes: list[Change], owners: dict[str, Manifest]) -> list[Problem]:
    """`job-immutable`: what each engine does with a Job whose immutable fields changed."""
    problems = []
    for change in changes:
        if change.kind != "Job" or change.refusal is None:
            continue
        manifest = owners[change.rel]
        problems.append(
            manifest.problem(
                change.refusal.changed,
                "job-immutable",
                f"{manifest.title}: {updates.spelled(change.refusal.changed)} changed and a Job's "
                f"{updates.spelled(change.refusal.field)} is immutable: Argo CD's sync fails until the Job is "
                f"deleted; Flux (force) deletes and recreates it, restarting its Pods",
                severity=Severity.WARNING,
                hint="set spec.whenChanged: newName to run each change as a new Job"
                if manifest.policy.kind == "GpuWorkload"
                else "give the changed Job a new name, or delete the Job before the sync",
            )
        )
    return problems


def _namespaces_not_created(
    target: Target, owners: dict[str, Manifest], changes: list[Change], gitops_objects: list[Manifest]
) -> list[Problem]:
    """Namespaces that objects created by this sync need and that nothing creates: with
    createNamespaces false, neither gen nor (beyond its destination) Argo CD makes them."""
    if target.create_namespaces:
        return []
    made = {m.name for m in owners.values() if m.group_kind == ("", "Namespace")}
    for app in gitops_objects:
        made.add(str(scope.at_path(app.obj, ("spec", "destination", "namespace")) or ""))
    needed = sorted(
        {c.namespace for c in changes if c.action == "create" and c.namespace} - made - context.SYSTEM_NAMESPACES
    )
    if not needed:
        return []
    return [
        target.policy.problem(
            ("createNamespaces",),
            "namespace-not-created",
            f"target {target.name!r} creates objects in namespace{'s' if len(needed) > 1 else ''} "
            f"{', '.join(needed)}, which no object creates (createNamespaces: false)",
            severity=Severity.WARNING,
            hint="bring Namespace objects in a Manifests policy, or create them before the first sync "
            "(Argo CD's CreateNamespace=true creates only its destination namespace)",
        )
    ]
