"""What loading and checking policies take from the run before: each policy file's build
(its policies and findings) while the file's bytes are the same, each target's rule
findings while nothing the target is made from changed (`Target.made_from`), and else each
workload's findings while its text and what its rules read of the others are the same.

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
from generator.policies import rules
from generator.policies.overrides import OverlaidDocument
from generator.policies.policy import Policy
from generator.policies.targets import Target, text_key
from generator.policies.validate import Built, built_from_plain, built_to_plain
from generator.problems import Problem

_BUILDS = "policies"
_KEPT_BUNDLES = 32  # policy directories (and gen builds) remembered; the least recently used go first
_CHECKS = "checks"
_KEPT_CHECKS = 32  # working directories (and gen builds) remembered, the least recently used going first
_WORKLOAD_CHECKS = "workload-checks"
_WORKLOAD_SHARDS = 8  # a workload's findings are a few bytes (most have none)
# targets (and gen builds) whose workload findings are remembered, the least recently used going first
_KEPT_TARGETS = 64

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

    def checks(
        self, targets: list[Target], check: Callable[[Target, rules.Previous | None], list[Problem]]
    ) -> list[list[Problem]]:
        """Each target's rule findings: as the run before found them where nothing the target
        is made from changed, else `check` of it, given each workload's findings from the run
        before (`Workloads`)."""
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
            if checked is None:  # each workload's findings, but on a fresh runner's cache (never read again)
                workloads = Workloads(target) if bundle.stored else None
                checked = check(target, workloads)
                if workloads is not None:
                    workloads.save()
                if key is not None:
                    bundle.kept[key] = [p.to_plain() for p in checked]
            found.append(checked)
        bundle.save()
        return found


class Workloads:
    """One target's workload findings from the run before, and this run's (`rules.Previous`).

    A workload's findings are a function of its document (the text of its file, whose lines
    they name; an overridden policy's also the Target file's, where its overrides are), what
    its rules read of the rest of the target (`rules.Facts`) and gen's code (in the bundle's
    name). Each run keeps exactly the findings it used."""

    def __init__(self, target: Target) -> None:
        self._texts: dict[str, bytes] = {}
        self._overrides = target.policy.doc  # the Target file: where an overridden policy's overrides are
        name = cache.target_name(target.name, target.policy.file, target.policy.directory)
        self._bundle = cache.Bundle(_WORKLOAD_CHECKS, name, keep=_KEPT_TARGETS, shards=_WORKLOAD_SHARDS)
        self._facts: tuple[rules.Facts, bytes] | None = None
        self._keys: dict[int, str] = {}  # id(policy) -> its key: asked, then kept

    def _key(self, policy: Policy, facts: rules.Facts) -> str | None:
        if self._facts is None or self._facts[0] is not facts:
            try:
                self._facts = (facts, facts.key())
            except ValueError:  # a value marshal does not know
                return None
            self._keys.clear()
        if id(policy) not in self._keys:
            self._keys[id(policy)] = self._made_from(policy, self._facts[1])
        return self._keys[id(policy)]

    def _made_from(self, policy: Policy, facts: bytes) -> str:
        doc = policy.doc
        parts = [facts, cache.stable_bytes((policy.kind, policy.name, doc.file, doc.index))]
        if isinstance(doc, OverlaidDocument):
            parts += [text_key(doc.written, self._texts), text_key(self._overrides, self._texts)]
        else:
            parts.append(text_key(doc, self._texts))
        return cache.key(b"".join(parts))

    def checked(self, policy: Policy, facts: rules.Facts) -> list[Problem] | None:
        key = self._key(policy, facts)
        if key is None or (stored := self._bundle.stored.get(key)) is None:
            return None
        try:
            found = [Problem.from_plain(p) for p in stored]
        except (TypeError, ValueError, IndexError, KeyError):  # an entry that does not read
            return None
        self._bundle.kept[key] = stored
        return found

    def keep_checked(self, policy: Policy, facts: rules.Facts, found: list[Problem]) -> None:
        key = self._key(policy, facts)
        if key is not None:
            self._bundle.kept[key] = [p.to_plain() for p in found]

    def save(self) -> None:
        self._bundle.save()


def _stored_builds(stored: dict[str, Any]) -> dict[str, tuple[Any, Built]]:
    """The builds a bundle holds, plain and decoded (an entry that does not decode is built again)."""
    builds: dict[str, tuple[Any, Built]] = {}
    with cache.collector_paused():
        for key, plain in stored.items():
            with contextlib.suppress(TypeError, ValueError, KeyError, IndexError, AttributeError):
                builds[key] = (plain, built_from_plain(plain))
    return builds
