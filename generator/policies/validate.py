"""Stage 2: policies as written -> schema-valid policies, targets and cross-policy findings.

Everything `gen lint` needs and nothing more: no template engine, no manifest validators, so
the pre-commit path stays fast.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from generator import cache, parallel
from generator.errors import GeneratorError
from generator.files import named
from generator.policies import manifests, rules
from generator.policies.policy import Policy, build_policy, builtin_policy, unique_policies
from generator.policies.targets import Target, resolve_targets
from generator.problems import Problem, Severity, has_errors, per_target
from generator.yamlio.load import load_file

Built = list[tuple[Policy | None, list[Problem]]]


def _load_and_build(file: tuple[str, str]) -> Built:
    docs, problems = load_file(*file)
    if not docs and not problems:
        problems = [
            Problem(
                file[1],
                1,
                1,
                "policy-empty",
                Severity.WARNING,
                "the file holds no policy",
                hint="delete it, or check that its documents were not commented out",
            )
        ]
    return [(None, problems), *(build_policy(doc) for doc in docs)]


def _built_to_plain(built: Built) -> list[tuple[Any, ...]]:
    return [(None if policy is None else policy.to_plain(), [p.to_plain() for p in found]) for policy, found in built]


def _built_from_plain(plain: list[tuple[Any, ...]]) -> Built:
    return [
        (None if policy is None else Policy.from_plain(policy), [Problem.from_plain(p) for p in found])
        for policy, found in plain
    ]


# Loader processes send policies as plain values: 19 ms instead of 31 ms for 750 of them.
_PLAIN_POLICIES = parallel.Codec(_built_to_plain, _built_from_plain)

# The cache of built policies: per policy directory (and working directory, which names the
# files), one bundle holding each file's plain form under the hash of its name and content.
_BUILDS = "policies"
_KEPT_BUNDLES = 32  # policy directories (and gen builds) remembered; the least recently used go first


def _bundle_name(roots: Sequence[Path]) -> str:
    where = "\0".join([os.getcwd(), *(os.path.realpath(root) for root in roots)])
    return cache.key(cache.code() + where.encode())


def _stored_builds(stored: dict[str, Any]) -> dict[str, tuple[Any, Built]]:
    """The builds a bundle holds, plain and decoded (an entry that does not decode is built again)."""
    builds: dict[str, tuple[Any, Built]] = {}
    with cache.collector_paused():
        for key, plain in stored.items():
            with contextlib.suppress(TypeError, ValueError, KeyError, IndexError, AttributeError):
                builds[key] = (plain, _built_from_plain(plain))
    return builds


def load_policies(
    paths: Iterable[Path], meanwhile: Callable[[], object] | None = None
) -> tuple[list[Policy], list[Problem]]:
    """Stages 1 and 2a: files -> schema-valid policies with defaults (large sets in parallel,
    with `meanwhile` done here while worker processes load). A file read before, unchanged,
    is taken from the cache as a loader process would send it."""
    roots = list(paths)
    files, problems = named(roots)
    caching = cache.directory(_BUILDS) is not None
    bundle_name = _bundle_name(roots)
    stamps = cache.Stamps("", bundle_name) if caching else None  # the policy files' stats, as last read
    keys = [cache.file_key(path, name, stamps) if caching else None for path, name in files]
    if stamps is not None:
        stamps.save()
    bundle = cache.Bundle(_BUILDS, bundle_name, keep=_KEPT_BUNDLES)
    stored = _stored_builds(bundle.stored)
    missing = [file for file, key in zip(files, keys, strict=True) if key not in stored]
    processes = parallel.workers(len(missing))
    fresh = iter(parallel.map_in_order(_load_and_build, missing, processes, meanwhile=meanwhile, codec=_PLAIN_POLICIES))
    loaded: list[Built] = []
    for key in keys:
        if key in stored:
            bundle.kept[key], built = stored[key]
            loaded.append(built)
        else:
            loaded.append(next(fresh))
            if key is not None:
                bundle.kept[key] = _built_to_plain(loaded[-1])
        for policy, _ in loaded[-1]:
            if policy is not None and key is not None:
                policy.doc.digest = key  # what later caches key on, instead of hashing the text again
    bundle.save()
    built = [item for found in loaded for item in found]
    real = {name: path for path, name in files}
    for policy, _ in built:
        if policy is not None:
            policy.directory = os.path.dirname(real.get(policy.file, policy.file))
    claimed = manifests.claimed_paths(p for p, _ in built if p is not None)
    if claimed:
        built = _unclaimed(built, {name for path, name in files if os.path.realpath(path) in claimed})
    policies, found = unique_policies(built)
    return policies, problems + found


def _unclaimed(built: Built, claimed: set[str]) -> Built:
    """What was loaded without the files a Manifests policy claims: they hold Kubernetes objects."""
    return [
        (
            None if policy is None or (policy.file in claimed and policy.kind != "Manifests") else policy,
            [p for p in found if p.file not in claimed],
        )
        for policy, found in built
    ]


def check_policies(
    policies: list[Policy], only: tuple[str, ...] = (), broken: frozenset[tuple[str, str]] = frozenset()
) -> tuple[list[Target], list[Problem]]:
    """Stage 2b: targets and cross-policy rules (each problem reported once); `broken` names
    the policies that failed to load, whose own findings say why."""
    targets, problems = resolve_targets(policies, only, broken)
    found = [
        (target.name, problem) for target, checked in zip(targets, _checks(targets), strict=True) for problem in checked
    ]
    held = [p for p in per_target(found, len(targets)) if replace(p, targets=()) not in problems]
    return targets, problems + held


# The findings of each target's rules, under what the target is made from: a target none of
# whose policies changed is not checked again.
_CHECKS = "checks"
_KEPT_CHECKS = 32  # working directories (and gen builds) remembered, the least recently used going first


def _checks(targets: list[Target]) -> list[list[Problem]]:
    """rules.check_target of each target, taken from the run before where nothing it reads changed."""
    if cache.directory(_CHECKS) is None:
        return [rules.check_target(target) for target in targets]
    bundle = cache.Bundle(_CHECKS, cache.key(cache.code() + os.getcwd().encode()), keep=_KEPT_CHECKS)
    found = []
    for target in targets:
        try:
            key: str | None = cache.key(target.made_from)
        except ValueError:  # a value marshal does not know, in the target's settings
            key = None
        checked = None
        if key is not None and key in bundle.stored:
            with contextlib.suppress(TypeError, ValueError):  # an entry that does not read
                checked = [Problem.from_plain(p) for p in bundle.stored[key]]
                bundle.kept[key] = bundle.stored[key]
        if checked is None:
            checked = rules.check_target(target)
            if key is not None:
                bundle.kept[key] = [p.to_plain() for p in checked]
        found.append(checked)
    bundle.save()
    return found


class Linted(NamedTuple):
    """Policy checks of some files: the targets (empty when a policy has an error), every
    finding, and which findings are about the files asked (a Manifests policy's own files
    belong to it)."""

    targets: list[Target]
    problems: list[Problem]
    concerns: Callable[[str], bool]


def lint(paths: Sequence[Path], meanwhile: Callable[[], object] | None = None) -> Linted:
    """Policy checks for the given files, judged within the policy directory each belongs to
    (`meanwhile`: preparation done while worker processes load a large directory)."""
    asked = [p.resolve() for p in paths]
    roots = sorted({f.parent if f.is_file() else f for f in asked})
    policies, problems = load_policies(roots, meanwhile)
    targets, semantic = check_policies(policies, broken=_broken(problems))
    problems += semantic

    exactly = {str(a) for a in asked}
    within = tuple(str(a).rstrip(os.sep) + os.sep for a in asked)

    @functools.cache
    def real_directory(directory: str) -> str:
        return str(Path(directory or os.curdir).resolve())

    @functools.cache
    def wanted(file: str) -> bool:
        # files are named from the current directory; each directory is resolved once, not
        # each of its files (10,000 resolves took 0.3 s)
        directory, name = os.path.split(file)
        path = os.path.join(real_directory(directory), name)
        if os.path.islink(path):
            path = str(Path(path).resolve())
        return path in exactly or path.startswith(within)

    claimed = {
        name
        for policy in policies
        if policy.kind == "Manifests" and wanted(policy.file)
        for name in manifests.claimed_names(policy)
    }
    return Linted([] if has_errors(problems) else targets, problems, lambda file: wanted(file) or file in claimed)


def _broken(problems: list[Problem]) -> frozenset[tuple[str, str]]:
    """(kind, name) of the policies in files with errors: no later rule reports them missing."""
    found = set()
    for file in sorted({p.file for p in problems if p.severity is Severity.ERROR}):
        for doc in load_file(file)[0]:
            data = doc.data
            name = (
                data.get("metadata", {}).get("name")
                if isinstance(data, dict) and isinstance(data.get("metadata"), dict)
                else None
            )
            if isinstance(name, str) and isinstance(data.get("kind"), str):
                found.add((data["kind"], name))
    return frozenset(found)


def deletion_cost_policy(policy_dir: Path | None, only: tuple[str, ...] = ()) -> tuple[Policy, list[Problem]]:
    """The DeletionCostPolicy of the selected targets (the built-in one when there is none)."""
    if policy_dir is None:
        return builtin_policy("DeletionCostPolicy"), []
    policies, problems = load_policies([policy_dir])
    if has_errors(problems):
        return builtin_policy("DeletionCostPolicy"), problems
    targets, problems = resolve_targets(policies, only)
    chosen = {p.name: p for t in targets for p in t.of_kind("DeletionCostPolicy")}
    if len(chosen) > 1:
        raise GeneratorError(
            f"targets use different DeletionCostPolicies ({', '.join(sorted(chosen))}); choose one with --target"
        )
    return next(iter(chosen.values()), builtin_policy("DeletionCostPolicy")), problems
