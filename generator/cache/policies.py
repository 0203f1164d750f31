"""What loading and checking policies take from the run before: each policy file's build
(its policies and findings) while the file's bytes are the same, and each target's rule
findings while nothing the target is made from changed (`Target.made_from`).

Builds are kept per policy directory (and working directory, which names the files), one
bundle holding each file's plain form under the hash of its name and content; a file's stats,
as last read, spare hashing it again. Checks are kept per working directory.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from generator import cache
from generator.policies.targets import Target
from generator.policies.validate import Built, built_from_plain, built_to_plain
from generator.problems import Problem

_BUILDS = "policies"
_KEPT_BUNDLES = 32  # policy directories (and gen builds) remembered; the least recently used go first
_CHECKS = "checks"
_KEPT_CHECKS = 32  # working directories (and gen builds) remembered, the least recently used going first

File = tuple[str, str]  # (path, the name findings give it)


class Kept:
    """The builds and checks of one run over some policy directories, and the next run's."""

    @classmethod
    def of(cls, roots: Sequence[Path]) -> Kept | None:
        """What the run before kept for these directories; None when caching is off."""
        return cls(roots) if cache.directory(_BUILDS) is not None else None

    def __init__(self, roots: Sequence[Path]) -> None:
        where = "\0".join([os.getcwd(), *(os.path.realpath(root) for root in roots)])
        self._name = cache.key(cache.code() + where.encode())

    def builds(self, files: list[File], build: Callable[[list[File]], list[Built]]) -> list[Built]:
        """Each file's build: as the run before built it when its bytes are the same, else
        `build` of the files that changed (all at once, so it may fan them out)."""
        stamps = cache.Stamps("", self._name)  # the policy files' stats, as last read
        keys = [cache.file_key(path, name, stamps) for path, name in files]
        stamps.save()
        bundle = cache.Bundle(_BUILDS, self._name, keep=_KEPT_BUNDLES)
        stored = _stored_builds(bundle.stored)
        fresh = iter(build([file for file, key in zip(files, keys, strict=True) if key not in stored]))
        loaded: list[Built] = []
        for key in keys:
            if key in stored:
                bundle.kept[key], built = stored[key]
                loaded.append(built)
            else:
                loaded.append(next(fresh))
                if key is not None:
                    bundle.kept[key] = built_to_plain(loaded[-1])
            for policy, _ in loaded[-1]:
                if policy is not None and key is not None:
                    policy.doc.digest = key  # what later keys use, instead of hashing the text again
        bundle.save()
        return loaded

    def checks(self, targets: list[Target], check: Callable[[Target], list[Problem]]) -> list[list[Problem]]:
        """Each target's rule findings: as the run before found them where nothing the target
        is made from changed, else `check` of it."""
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
                checked = check(target)
                if key is not None:
                    bundle.kept[key] = [p.to_plain() for p in checked]
            found.append(checked)
        bundle.save()
        return found


def _stored_builds(stored: dict[str, Any]) -> dict[str, tuple[Any, Built]]:
    """The builds a bundle holds, plain and decoded (an entry that does not decode is built again)."""
    builds: dict[str, tuple[Any, Built]] = {}
    with cache.collector_paused():
        for key, plain in stored.items():
            with contextlib.suppress(TypeError, ValueError, KeyError, IndexError, AttributeError):
                builds[key] = (plain, built_from_plain(plain))
    return builds
