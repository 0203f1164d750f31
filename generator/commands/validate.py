"""`gen validate`: arbitrary manifests against Kubernetes schemas and semantic rules."""

from __future__ import annotations

import sys
from pathlib import Path

from generator.kube.validate import validate_paths
from generator.problems import exit_code
from generator.reporters import report


def run(
    paths: tuple[Path, ...],
    versions: tuple[str, ...],
    plugins: tuple[str, ...],
    crds: tuple[Path, ...],
    fmt: str,
    strict: bool,
) -> int:
    problems, silenced = validate_paths(paths, versions, plugins, crds)
    report(problems, fmt)
    if silenced:
        print(f"gen: {silenced} finding{'s' if silenced > 1 else ''} silenced by gen:ignore comments", file=sys.stderr)
    return exit_code(problems, strict)
