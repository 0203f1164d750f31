"""A whole target as the run that rendered it left it, taken while its output holds that render.

A target's directories and findings are a function of what it is made from
(`Target.made_from`: its settings, its policies' files, what its Manifests policies read), the
CRDs it is judged with, gen's code, the output directory's name and the render committed
there. Once the output holds the render (each directory's manifest says so), a sync changes
nothing and no committed file is read, so the outcome is the one kept; any other change
renders the target. This module is light on purpose: a run whose every target is up to date
never imports the template engine or the validators.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from generator import cache
from generator.layout import MANIFEST_FILE
from generator.policies.targets import Target
from generator.problems import Problem
from generator.render import write

_UP_TO_DATE = "up-to-date"
_KEPT_TARGETS = 64  # targets (and gen builds) remembered, the least recently used going first

# What a target keeps: per directory (relative path, files, their SHA-256, its manifest), and
# its findings as plain values.
_Kept = tuple[list[tuple[str, dict[str, bytes], dict[str, str], bytes]], list[Any]]


def _bundle(target: Target) -> cache.Bundle:
    name = cache.target_name(target.name, target.policy.file, target.policy.directory)
    return cache.Bundle(_UP_TO_DATE, name, keep=_KEPT_TARGETS)


def _key(target: Target, out: Path, definitions: Sequence[tuple[Any, str]]) -> str | None:
    try:
        return cache.key(b"\0".join([target.made_from, str(out).encode(), cache.stable_bytes(list(definitions))]))
    except ValueError:  # a value marshal does not know (in the target's settings or a team's CRD)
        return None


def taken(
    target: Target, out: Path, definitions: Sequence[tuple[Any, str]]
) -> tuple[list[write.DirPlan], list[Problem]] | None:
    """The target's directories and findings as the run that rendered them left them, if
    nothing they are made from changed and out holds that render; None otherwise."""
    if cache.directory(_UP_TO_DATE) is None:
        return None
    key = _key(target, out, definitions)
    entry = _bundle(target).stored.get(key) if key is not None else None
    if entry is None:
        return None
    try:
        kept, found = entry
        plans = []
        for reldir, files, digests, manifest in kept:
            if write.read_regular(write.safe_dir(out, reldir) / MANIFEST_FILE) != manifest:
                return None
            plans.append(write.DirPlan.hashed(reldir, files, digests, manifest))
        return plans, [Problem.from_plain(p) for p in found]
    except (TypeError, ValueError, KeyError, AttributeError):  # an entry that does not read
        return None


def keep(
    target: Target,
    out: Path,
    definitions: Sequence[tuple[Any, str]],
    plans: list[write.DirPlan],
    problems: list[Problem],
) -> None:
    """Keep a target's render for the next run that finds out holding it: its directories,
    and its findings but those about syncing over the committed render (there are none once
    out holds it)."""
    if cache.directory(_UP_TO_DATE) is None:
        return
    key = _key(target, out, definitions)
    kept: _Kept = (
        [(plan.reldir, plan.files, plan.digests(), plan.with_manifest()[MANIFEST_FILE]) for plan in plans],
        [p.to_plain() for p in problems],
    )
    bundle = _bundle(target)
    bundle.kept = {} if key is None else {key: kept}
    bundle.save()
