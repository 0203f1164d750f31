"""What `gen validate` takes from the run before: the findings of every file it judged, by the
file's name and content, in one bundle per working directory, paths asked, and what files are
judged with (versions, plugins, feature gates, the CRDs given, the size limit)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from generator import cache
from generator.kube.validate import ManifestValidator
from generator.yamlio.load import max_file_bytes

_VALIDATED = "validated"
_KEPT_BUNDLES = 16  # invocations (paths asked, versions, CRDs) remembered; the least recently used go first


class Kept:
    """One invocation's judged files, from the run before and for the next."""

    @classmethod
    def of(cls, paths: list[Path], validator: ManifestValidator, given: list[Any]) -> Kept | None:
        """What the run before with the same paths and judges kept; None when caching is off,
        or a CRD holds a value marshal does not know."""
        if cache.directory(_VALIDATED) is None:
            return None
        asked = [os.getcwd(), *(os.path.realpath(path) for path in paths)]
        try:
            judged_with = cache.stable_bytes(
                (
                    asked,
                    validator.versions,
                    validator.plugins,
                    given,
                    max_file_bytes(),
                    sorted(validator.feature_gates.items()),
                    validator.allow_privileged,
                )
            )
        except ValueError:
            return None
        return cls(cache.Bundle(_VALIDATED, cache.key(cache.code() + judged_with), keep=_KEPT_BUNDLES))

    def __init__(self, bundle: cache.Bundle) -> None:
        self._bundle = bundle

    def results(self, files: list[tuple[str, str]]) -> tuple[list[Any], list[str | None]]:
        """Each file's result as plain values when judged before (else None), and its key; a
        run with nothing kept reads no file to look (the workers read each once, to judge it)."""
        if not self._bundle.stored:
            return [None] * len(files), [None] * len(files)
        stamps = cache.Stamps("", self._bundle.name)
        keys = [cache.file_key(path, name, stamps) for path, name in files]
        stamps.save()
        return [self._bundle.stored.get(key) if key is not None else None for key in keys], keys

    def keep(self, key: str, plain: Any) -> None:
        self._bundle.kept[key] = plain

    def save(self) -> None:
        self._bundle.save()
