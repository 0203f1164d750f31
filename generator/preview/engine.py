"""Layer 5 of `gen plan`: what the GitOps engine itself does with a sync's changes.

Objects are not changed one by one: Argo CD runs a sync in phases and waves, prunes each wave
before applying it, and stops at the first wave that fails; Flux applies in stages, each
dry-run whole before any of it is applied, and prunes only after everything applied. So when
one object is refused, which of the others the same sync has already applied or pruned depends
on the engine. Removing a target deletes its Application / Kustomization, and what that does
to its objects depends on the finalizer or `prune` gen rendered into it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from generator.gitops import ARGOCD_SYNC_OPTIONS, NEVER_PRUNED, Engines, option_value, sync_options
from generator.kube.scope import at_path
from generator.layout import GITOPS_DIR
from generator.preview.sync import Change, is_object_file, read_object, removed, workload_size
from generator.render.links import HpaIndex, hpa_index
from generator.render.write import DirPlan, owned_files, safe_dir

_APPLICATION = ("argoproj.io", "Application")
_KUSTOMIZATION = ("kustomize.toolkit.fluxcd.io", "Kustomization")
_GITOPS_KINDS = frozenset({_APPLICATION[1], _KUSTOMIZATION[1]})

# -- Argo CD's order (gitops-engine, in argo-cd v3.5.1: pkg/sync/sync_tasks.go syncTasks.Less)

ARGOCD_HOOK = "argocd.argoproj.io/hook"
ARGOCD_SYNC_WAVE = "argocd.argoproj.io/sync-wave"
# syncPhaseOrder; an object without a hook annotation syncs in the Sync phase
_PHASES = {"PreSync": -1, "Sync": 0, "PostSync": 1, "SyncFail": 2}


def _annotations(obj: Mapping[str, Any]) -> dict[str, Any]:
    found = at_path(obj, ("metadata", "annotations"))
    return found if isinstance(found, dict) else {}


def argocd_phase(obj: Mapping[str, Any]) -> int:
    """The sync phase an object is applied in (hook.Types: the first hook type it names)."""
    hooks = [part.strip() for part in str(_annotations(obj).get(ARGOCD_HOOK, "")).split(",")]
    return next((_PHASES[hook] for hook in hooks if hook in _PHASES), 0)


def argocd_wave(obj: Mapping[str, Any]) -> int:
    """Its sync wave (syncwaves.Wave: the annotation as an integer, else 0)."""
    try:
        return int(str(_annotations(obj).get(ARGOCD_SYNC_WAVE, "0")))
    except ValueError:
        return 0


def _prune_waves(engines: Engines, applied: Iterable[Mapping[str, Any]], pruned: Mapping[str, Any]) -> dict[str, int]:
    """The wave each pruned object is deleted in (sync_context.go getSyncTasks): prune waves are
    mirrored (the last wave's objects are deleted first), and PruneLast moves a prune one wave
    past the last wave of the Sync phase."""
    waves = {rel: argocd_wave(obj) for rel, obj in pruned.items()}
    unique = sorted(set(waves.values()))
    mirrored = dict(zip(unique, reversed(unique), strict=True))
    waves = {rel: mirrored[wave] for rel, wave in waves.items()}
    last = max(
        [0]
        + [argocd_wave(obj) for obj in applied if argocd_phase(obj) == 0]
        + [wave for rel, wave in waves.items() if argocd_phase(pruned[rel]) == 0]
    )
    app_prunes_last = option_value(engines.argocd_options, "PruneLast") == "true"
    for rel, obj in pruned.items():
        own = option_value(sync_options(_annotations(obj).get(ARGOCD_SYNC_OPTIONS)), "PruneLast")
        if own == "true" or (own is None and app_prunes_last):
            waves[rel] = last + 1
    return waves


def _argocd_partial(change: Change, key: tuple[int, int], failing: tuple[int, int], first: Change) -> str:
    """What Argo CD has done to one changed object when the sync fails on `first` (the refused
    object of the earliest phase and wave). Sync runs one phase and wave at a time; runTasks
    prunes the wave's objects, then applies all of it kind by kind (a failed kind does not stop
    the next), and a failed wave ends the sync (sync_context.go Sync, runTasks)."""
    reached = key <= failing
    if change.action == "prune":
        if reached:
            return f"when the sync fails on {first.title}, Argo CD has already deleted it (it prunes a wave before applying it)"
        return f"not deleted while {first.title} is refused: Argo CD prunes it in a later wave, which the sync never reaches"
    if reached:
        return f"Argo CD applies it before the sync fails on {first.title}" + (
            " (same wave)" if key == failing else " (an earlier wave)"
        )
    return f"not applied while {first.title} is refused: Argo CD stops at that wave"


# -- Flux's stages (fluxcd/pkg ssa v0.77.0: manager_apply.go ApplyAllStaged, utils/is.go)


def flux_stage(obj: Mapping[str, Any]) -> int:
    """The stage Flux applies an object in: CRDs, Namespaces and ClusterRoles first, then kinds
    named *Class, then everything else (a controller's --custom-stage-kinds aside)."""
    kind, api_version = str(obj.get("kind", "")), str(obj.get("apiVersion", ""))
    if (
        (kind == "CustomResourceDefinition" and api_version.startswith("apiextensions.k8s.io/"))
        or (kind == "Namespace" and api_version == "v1")
        or (kind == "ClusterRole" and api_version.startswith("rbac.authorization.k8s.io/"))
    ):
        return 0
    return 1 if kind.endswith("Class") else 2


def _flux_partial(change: Change, stage: int | None, failing: int, first: Change) -> str:
    """What Flux has done to one changed object (applied in `stage`; None: pruned) when `first`
    is refused. ApplyAll dry-runs a whole stage server-side before applying any of it, so the
    refusal stops its stage and the later ones; the Kustomization prunes only after an apply
    that succeeded (kustomization_controller.go reconcile)."""
    if stage is None:
        return f"not deleted while {first.title} is refused: Flux prunes only after everything applies"
    if stage < failing:
        return f"Flux applies it (an earlier stage) before {first.title} is refused"
    if change.action == "recreate" and stage == failing:
        # the dry runs of a stage run side by side, and a forced object is deleted in its own
        return (
            f"Flux may delete it before {first.title} is refused, and recreates it only once its stage "
            "applies: its Pods may stay down until then"
        )
    return f"not applied while {first.title} is refused: Flux's dry run of the stage fails before it applies any of it"


def partial_sync(
    changes: list[Change], engines: Engines, directory: Path, new: Mapping[str, dict[str, Any]]
) -> list[Change]:
    """The changes from the render committed in directory to a new one (its objects by file),
    each that is not refused saying what the engines have done to it when the sync fails on a
    refused object."""
    refused = [c for c in changes if c.action == "refused"]
    if not refused:
        return changes
    # a kept object is a prune task too (skipped when it runs): its wave counts in the mirroring
    pruned = {
        c.rel: obj
        for c in changes
        if c.action in ("prune", "kept") and (obj := read_object(directory / c.rel)) is not None
    }
    prune_waves = _prune_waves(engines, new.values(), pruned) if engines.argocd else {}

    def argocd_key(change: Change) -> tuple[int, int]:
        if change.rel in prune_waves:
            return argocd_phase(pruned[change.rel]), prune_waves[change.rel]
        obj = new[change.rel]
        return argocd_phase(obj), argocd_wave(obj)

    def flux_key(change: Change) -> int:
        return flux_stage(new[change.rel])

    argocd_first = min(refused, key=argocd_key) if engines.argocd else None
    flux_first = min(refused, key=flux_key) if engines.flux else None
    told = []
    for change in changes:
        known = change.rel in pruned if change.action == "prune" else change.rel in new
        if change.action in ("refused", "kept") or not known:
            told.append(change)
            continue
        said = []
        if argocd_first is not None:
            said.append(_argocd_partial(change, argocd_key(change), argocd_key(argocd_first), argocd_first))
        if flux_first is not None:
            stage = None if change.action == "prune" else flux_key(change)
            said.append(_flux_partial(change, stage, flux_key(flux_first), flux_first))
        told.append(dataclasses.replace(change, reason=f"{change.reason}; {'; '.join(said)}") if said else change)
    return told


def verdicts(
    changes: list[Change], engines: Engines, directory: Path, new: Mapping[str, dict[str, Any]]
) -> list[Change]:
    """Layer 5 on the changes from the render committed in directory to a new one (its objects
    by file): what the engine does around each change, beyond the object itself."""
    told = []
    for change in changes:
        obj = read_object(directory / change.rel) if change.action == "prune" and change.kind in _GITOPS_KINDS else None
        if obj is not None and _group_kind(obj) in (_APPLICATION, _KUSTOMIZATION):
            change = dataclasses.replace(change, reason=f"{change.reason}; {deleting(obj)}")
        told.append(change)
    return partial_sync(told, engines, directory, new)


# -- a removed target


def _group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")).rpartition("/")[0], str(obj.get("kind", ""))


def committed_settings(objects: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The gitops settings a committed Application and / or Flux Kustomization were rendered
    from, as far as deleting them is concerned: finalizers, prune, sync options."""
    settings: dict[str, Any] = {}
    for obj in objects:
        if _group_kind(obj) == _APPLICATION:
            settings["argocd"] = {
                "finalizers": list(at_path(obj, ("metadata", "finalizers")) or []),
                "prune": bool(at_path(obj, ("spec", "syncPolicy", "automated", "prune"))),
                "syncOptions": list(at_path(obj, ("spec", "syncPolicy", "syncOptions")) or []),
            }
        elif _group_kind(obj) == _KUSTOMIZATION:
            settings["flux"] = {"prune": bool(at_path(obj, ("spec", "prune")))}
    return settings


def _synced_path(obj: Mapping[str, Any]) -> str:
    path = (
        at_path(obj, ("spec", "source", "path")) if _group_kind(obj) == _APPLICATION else at_path(obj, ("spec", "path"))
    )
    return str(path or "").removeprefix("./").rstrip("/")


def _objects(directory: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for rel in owned_files(directory) if directory.is_dir() else {}:
        if is_object_file(rel) and (obj := read_object(directory / rel)) is not None:
            found[rel] = obj
    return found


def removed_directories(out: Path, removals: Iterable[DirPlan]) -> list[Change]:
    """Directories under out that no target renders any more: every object in them leaves Git.
    A target's objects go as deleting its committed Application / Kustomization decides."""
    dirs = {removal.reldir: _objects(safe_dir(out, removal.reldir)) for removal in removals}
    gitops_objects = {
        reldir: [obj for obj in objects.values() if _group_kind(obj) in (_APPLICATION, _KUSTOMIZATION)]
        for reldir, objects in dirs.items()
        if reldir.startswith(GITOPS_DIR + "/")
    }
    changes = []
    for reldir, objects in dirs.items():
        hpas = hpa_index(objects.values())
        if reldir in gitops_objects:
            changes += [_gitops_object(reldir, obj, dirs, hpas, rel) for rel, obj in objects.items()]
            continue
        syncing = [
            obj for gitops_dir, found in gitops_objects.items() for obj in found if _syncs(gitops_dir, obj, reldir)
        ]
        engines = Engines(committed_settings(syncing))
        gone = [
            _cascaded(reldir, engines, obj, hpas, rel)
            if engines.configured
            else removed(reldir, engines, obj, hpas, rel)
            for rel, obj in objects.items()
        ]
        changes += _with_their_namespaces(gone)
    return changes


def _with_their_namespaces(changes: list[Change]) -> list[Change]:
    """Deleting a Namespace deletes everything in it (the namespace controller): an object kept
    in a Namespace that is deleted goes too, whatever protects the object itself."""
    deleted = {c.name for c in changes if c.kind == "Namespace" and c.action == "prune"}
    return [
        dataclasses.replace(
            c,
            action="prune",
            reason=f"{c.reason.partition(';')[0]}, but its Namespace {c.namespace} is deleted, and everything in it",
        )
        if c.action == "kept" and c.namespace in deleted
        else c
        for c in changes
    ]


def _syncs(gitops_dir: str, obj: Mapping[str, Any], reldir: str) -> bool:
    """Whether a committed Application / Kustomization syncs a target directory: it names its
    path, or it is the target's own (the directory and the target share their name)."""
    return gitops_dir == f"{GITOPS_DIR}/{reldir}" or f"/{_synced_path(obj)}".endswith(f"/{reldir}")


def _gitops_object(reldir: str, obj: dict[str, Any], dirs: Mapping[str, Any], hpas: HpaIndex, rel: str) -> Change:
    """An Application / Kustomization of gen's that leaves Git with its target or without it."""
    change = removed(reldir, Engines({}), obj, hpas, rel)
    if _group_kind(obj) not in (_APPLICATION, _KUSTOMIZATION):
        return change
    synced = [d for d in dirs if not d.startswith(GITOPS_DIR + "/") and _syncs(reldir, obj, d)]
    reason = "removed from Git: what applies _gitops/ (an app of apps, a root Kustomization) deletes it, else delete it by hand"
    if synced:
        return dataclasses.replace(
            change, reason=f"{reason}; then the objects it synced go as the lines of {synced[0]} say"
        )
    return dataclasses.replace(change, reason=f"{reason}; {deleting(obj)}, though they are still in Git")


def deleting(obj: Mapping[str, Any]) -> str:
    """What deleting an Application or a Flux Kustomization does to the objects it synced."""
    engines = Engines(committed_settings([obj]))
    if engines.argocd:
        if engines.argocd_finalizer is None:
            return "once it is deleted, the objects it synced stay, synced by nothing (it has no resources finalizer)"
        return (
            f"once it is deleted, its finalizer {engines.argocd_finalizer} deletes every object it synced but those "
            "with Delete=false (to keep them, remove the finalizer first)"
        )
    if not engines.flux_prunes:
        return "once it is deleted, the objects it applied stay, synced by nothing (prune: false)"
    return (
        "once it is deleted, Flux garbage-collects every object it applied but those with "
        "kustomize.toolkit.fluxcd.io/prune: disabled (to keep them, set prune: false first)"
    )


def _cascaded(target: str, engines: Engines, obj: dict[str, Any], hpas: HpaIndex, rel: str) -> Change:
    """One object of a removed target, as deleting its Application / Kustomization leaves it."""
    pods, gpus, size = workload_size(obj, hpas)
    group, kind = _group_kind(obj)
    deleted, why = engines.cascade(group, kind, _annotations(obj))
    meta = obj.get("metadata") or {}
    identity = (kind, str(meta.get("namespace") or ""), str(meta.get("name", "")))
    if deleted:
        return Change(
            target,
            "prune",
            *identity,
            f"target removed: {why}" + (f"; its {size} stop" if size else ""),
            pods,
            gpus,
            rel,
        )
    hint = "; delete it by hand once its data is no longer needed" if (group, kind) in NEVER_PRUNED else ""
    return Change(target, "kept", *identity, f"target removed: {why}{hint}", pods, gpus, rel)
