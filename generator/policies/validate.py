"""Stage 2: policies as written -> schema-valid policies, targets and cross-policy findings.

Everything `gen lint` needs and nothing more: no template engine, no manifest validators, so
the pre-commit path stays fast.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from generator import parallel
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


def built_to_plain(built: Built) -> list[tuple[Any, ...]]:
    return [(None if policy is None else policy.to_plain(), [p.to_plain() for p in found]) for policy, found in built]


def built_from_plain(plain: list[tuple[Any, ...]]) -> Built:
    return [
        (None if policy is None else Policy.from_plain(policy), [Problem.from_plain(p) for p in found])
        for policy, found in plain
    ]


# Loader processes send policies as plain values: 19 ms instead of 31 ms for 750 of them.
_PLAIN_POLICIES = parallel.Codec(built_to_plain, built_from_plain)

File = tuple[str, str]  # (path, the name findings give it)


class Kept(Protocol):
    """What loading and checking may take from the run before: the cache layer
    (`generator.cache.policies`) answers, and decides what is the same; the stage only asks."""

    def builds(self, files: list[File], build: Callable[[list[File]], list[Built]]) -> list[Built]:
        """Each file's build, `build` called for those it does not keep."""

    def checks(
        self, targets: list[Target], check: Callable[[Target, rules.Previous | None], list[Problem]]
    ) -> list[list[Problem]]:
        """Each target's rule findings, `check` called for those it does not keep (with what
        it keeps of the target's workloads)."""


def _build_files(files: list[File], meanwhile: Callable[[], object] | None = None) -> list[Built]:
    """Each file loaded and built, large sets in worker processes (`meanwhile` done here while they load)."""
    return parallel.map_in_order(
        _load_and_build, files, parallel.workers(len(files)), meanwhile=meanwhile, codec=_PLAIN_POLICIES
    )


def load_policies(
    paths: Iterable[Path], meanwhile: Callable[[], object] | None = None, kept: Kept | None = None
) -> tuple[list[Policy], list[Problem]]:
    """Stages 1 and 2a: files -> schema-valid policies with defaults (large sets in parallel,
    with `meanwhile` done here while worker processes load); `kept`: what the run before built."""
    roots = list(paths)
    files, problems = named(roots)
    loaded = (
        _build_files(files, meanwhile)
        if kept is None
        else kept.builds(files, partial(_build_files, meanwhile=meanwhile))
    )
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
    policies: list[Policy],
    only: tuple[str, ...] = (),
    broken: frozenset[tuple[str, str]] = frozenset(),
    kept: Kept | None = None,
) -> tuple[list[Target], list[Problem]]:
    """Stage 2b: targets and cross-policy rules (each problem reported once); `broken` names
    the policies that failed to load, whose own findings say why; `kept`: what the run before found."""
    targets, problems = resolve_targets(policies, only, broken)
    checks = [rules.check_target(t) for t in targets] if kept is None else kept.checks(targets, rules.check_target)
    found = [(target.name, problem) for target, checked in zip(targets, checks, strict=True) for problem in checked]
    held = [p for p in per_target(found, len(targets)) if replace(p, targets=()) not in problems]
    return targets, problems + held


class Linted(NamedTuple):
    """Policy checks of some files: the targets (empty when a policy has an error), every
    finding, and which findings are about the files asked (a Manifests policy's own files
    belong to it)."""

    targets: list[Target]
    problems: list[Problem]
    concerns: Callable[[str], bool]


def lint(
    paths: Sequence[Path],
    meanwhile: Callable[[], object] | None = None,
    kept_for: Callable[[list[Path]], Kept | None] | None = None,
) -> Linted:
    """Policy checks for the given files, judged within the policy directory each belongs to
    (`meanwhile`: preparation done while worker processes load a large directory; `kept_for`:
    what the run before kept for those directories)."""
    asked = [p.resolve() for p in paths]
    roots = sorted({f.parent if f.is_file() else f for f in asked})
    kept = kept_for(roots) if kept_for is not None else None
    policies, problems = load_policies(roots, meanwhile, kept)
    targets, semantic = check_policies(policies, broken=_broken(problems), kept=kept)
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


def deletion_cost_policy(
    policy_dir: Path | None, only: tuple[str, ...] = (), kept: Kept | None = None
) -> tuple[Policy, list[Problem]]:
    """The DeletionCostPolicy of the selected targets (the built-in one when there is none)."""
    if policy_dir is None:
        return builtin_policy("DeletionCostPolicy"), []
    policies, problems = load_policies([policy_dir], kept=kept)
    if has_errors(problems):
        return builtin_policy("DeletionCostPolicy"), problems
    targets, problems = resolve_targets(policies, only)
    chosen = {p.name: p for t in targets for p in t.of_kind("DeletionCostPolicy")}
    if len(chosen) > 1:
        raise GeneratorError(
            f"targets use different DeletionCostPolicies ({', '.join(sorted(chosen))}); choose one with --target"
        )
    return next(iter(chosen.values()), builtin_policy("DeletionCostPolicy")), problems
