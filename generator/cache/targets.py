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
_KEPT_TARGETS = 64  # targets (and gen builds) remembered, the least recently written going first

# What a target keeps: per directory (relative path, files, their SHA-256, its manifest), and
# its findings as plain values. One file per target, named by the target and the key of what
# it was made from, so a target that changed costs one failed open.
_Kept = tuple[list[tuple[str, dict[str, bytes], dict[str, str], bytes]], list[Any]]


def _entry(target: Target, out: Path, definitions: Sequence[tuple[Any, str]]) -> tuple[str, str] | None:
    """(the target's name in the cache, its entry's name); None when nothing can be kept."""
    if cache.directory(_UP_TO_DATE) is None:
        return None
    try:
        made_from = [target.made_from, str(out).encode(), cache.stable_bytes(list(definitions))]
    except ValueError:  # a value marshal does not know (in the target's settings or a team's CRD)
        return None
    name = cache.target_name(target.name, target.policy.file, target.policy.directory)
    return name, name + "-" + cache.key(b"\0".join(made_from))


def taken(
    target: Target, out: Path, definitions: Sequence[tuple[Any, str]]
) -> tuple[list[write.DirPlan], list[Problem]] | None:
    """The target's directories and findings as the run that rendered them left them, if
    nothing they are made from changed and out holds that render; None otherwise."""
    entry = _entry(target, out, definitions)
    stored = cache.read(_UP_TO_DATE, entry[1]) if entry is not None else None
    if stored is None:
        return None
    try:
        kept, found = stored
        plans = []
        for reldir, files, digests, manifest in kept:
            if not _holds(out, reldir, manifest):
                return None
            plans.append(write.DirPlan.hashed(reldir, files, digests, manifest))
        return plans, [Problem.from_plain(p) for p in found]
    except (TypeError, ValueError, KeyError, AttributeError):  # an entry that does not read
        return None


def _holds(out: Path, reldir: str, manifest: bytes) -> bool:
    """Whether out holds a directory as this manifest lists it."""
    return write.read_regular(write.safe_dir(out, reldir) / MANIFEST_FILE) == manifest


def keep(
    target: Target,
    out: Path,
    definitions: Sequence[tuple[Any, str]],
    plans: list[write.DirPlan],
    problems: list[Problem],
    written: bool,
) -> None:
    """Keep a target's render for the next run that finds out holding it (replacing what
    the target kept before): its directories, and its findings but those about syncing over
    the committed render (there are none once out holds it). Only a render that out holds,
    or that is `written` into it next, is kept: a check that finds the output behind its
    policies keeps nothing (the render that follows it renders the target again)."""
    entry = _entry(target, out, definitions)
    if entry is None or not (written or all(_holds(out, p.reldir, p.with_manifest()[MANIFEST_FILE]) for p in plans)):
        return
    name, kept_as = entry
    kept: _Kept = (
        [(plan.reldir, plan.files, plan.digests(), plan.with_manifest()[MANIFEST_FILE]) for plan in plans],
        [p.to_plain() for p in problems],
    )
    cache.keep_one(_UP_TO_DATE, name, kept_as, kept, _KEPT_TARGETS)
