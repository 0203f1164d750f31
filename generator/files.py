"""Which files gen reads: directories walked in a stable order, files named as findings name
them, and, for `gen validate`, which YAML and JSON files are Kubernetes manifests at all.

A repository holds much YAML that no Kubernetes tool applies: gen's own `.gen.yaml`, CI and
pre-commit configuration, Helm charts and values, the patch files a kustomization applies to
other files, the fragments gen writes beside a target. Whether found by a directory walk or
named on the command line (pre-commit names every changed file), those are skipped, and
counted, never validated as objects.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from generator.layout import FRAGMENTS_DIR, MANIFEST_FILE
from generator.problems import STDIN_NAME, Problem, Severity

YAML_SUFFIXES = (".yaml", ".yml")
MANIFEST_SUFFIXES = (*YAML_SUFFIXES, ".json")


def walk(directory: str, suffixes: tuple[str, ...] = YAML_SUFFIXES) -> list[tuple[str, ...]]:
    """Relative parts of every file with one of suffixes below directory, skipping hidden
    entries and not following symlinked directories; sorted as paths sort (part by part)."""
    found: list[tuple[str, ...]] = []
    pending: list[tuple[str, tuple[str, ...]]] = [(directory, ())]
    while pending:
        current, rel = pending.pop()
        try:
            entries = list(os.scandir(current))
        except PermissionError:
            continue  # as Path.rglob does: an unreadable directory holds nothing gen can load
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append((entry.path, (*rel, entry.name)))
            elif entry.name.endswith(suffixes) and entry.is_file():
                found.append((*rel, entry.name))
    return sorted(found)


def display_path(path: str, here: str) -> str:
    """path as findings name it: from here (the current directory) when it lies below it."""
    full = os.path.normpath(os.path.join(here, path))
    if full == here or full.startswith(here.rstrip(os.sep) + os.sep):
        return Path(os.path.relpath(full, here)).as_posix()
    return Path(full).as_posix()


def named(
    paths: Iterable[Path], suffixes: tuple[str, ...] = YAML_SUFFIXES
) -> tuple[list[tuple[str, str]], list[Problem]]:
    """(path, name to report it by) for every file below paths, in a stable order.

    Files are reported by their path from the current directory (as given, when that is
    relative), so an editor, a terminal and a CI annotation all find them, in a monorepo too;
    a path outside the current directory keeps its absolute form; a file reached twice (named
    twice, or below two of the paths) once. Paths are strings: a Path per file costs more than
    reading a small file.
    """
    files: list[tuple[str, str]] = []
    problems: list[Problem] = []
    here = os.getcwd()
    for root in paths:
        if str(root) == "-":  # `kustomize build | gen validate -`
            files.append(("/dev/stdin", STDIN_NAME))
            continue
        if not root.exists():
            problems.append(Problem(str(root), 0, 0, "file-missing", Severity.ERROR, "no such file or directory"))
            continue
        base = display_path(str(root), here)
        if root.is_file():
            files.append((str(root), base))
            continue
        prefix = "" if base == "." else f"{base}/"
        under = os.path.join(root, "")  # joined by hand below: os.path.join per file costs more than the join
        files.extend((under + "/".join(rel), prefix + "/".join(rel)) for rel in walk(str(root), suffixes))
    return list({name: (path, name) for path, name in files}.values()), problems


# YAML that configures tools, by file name (fnmatch), besides every dotfile (`.gen.yaml`,
# `.pre-commit-config.yaml`, `.gitlab-ci.yml`, `.sops.yaml`) and what lies in a dot-directory
# (`.github/`).
_NOT_MANIFEST_NAMES = (
    "Chart.yaml",
    "Chart.lock",
    "values.yaml",
    "values.yml",
    "values-*.yaml",
    "values-*.yml",
    "values.*.yaml",
    "values.*.yml",
    "*.values.yaml",
    "kustomization.yaml",  # kustomize's build file, with or without its apiVersion
    "kustomization.yml",
    "Kustomization",
)
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")


_NOT_MANIFEST_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern in _NOT_MANIFEST_NAMES))


def _tool_file(path: str) -> bool:
    """A file by its name or its directory's: a tool's configuration. Dotfiles (`.sops.yaml`,
    `.yamlfmt.yaml`) and files in dot-directories are, as the walk never enters them; pre-commit
    names them all the same (a path outside the current directory is judged by its name)."""
    directory, _, name = path.rpartition("/")  # os.path.split's parts, at a fraction of its cost per file
    if name.startswith(".") or _NOT_MANIFEST_NAME.match(name):
        return True
    if not (directory.startswith(".") or "/." in directory) or os.path.isabs(path):
        return False  # the common case, without splitting the path
    return any(part.startswith(".") and part not in (".", "..") for part in directory.split("/"))


def _is_fragment(directory: str) -> bool:
    """A file in directory is a Helm values file or patch gen wrote beside a target's
    manifests: not an object."""
    return directory.rpartition("/")[2] == FRAGMENTS_DIR and os.path.isfile(
        os.path.join(os.path.dirname(directory), MANIFEST_FILE)
    )


def _chart_root(directory: str, roots: dict[str, str | None]) -> str | None:
    """The Helm chart directory (one holding Chart.yaml) that directory lies in, if any."""
    seen = []
    while directory not in roots:
        seen.append(directory)
        if os.path.isfile(os.path.join(directory, "Chart.yaml")):
            roots[directory] = directory
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            roots[directory] = None
            break
        directory = parent
    for below in seen:
        roots[below] = roots[directory]
    return roots[directory]


def _patch_paths(kustomization: Any) -> Iterable[str]:
    """The files a kustomization applies to others (patches, replacements, generators' inputs)."""
    if not isinstance(kustomization, dict):
        return
    for key in ("patches", "patchesJson6902", "replacements"):
        for entry in kustomization.get(key) or []:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                yield entry["path"]
    for entry in kustomization.get("patchesStrategicMerge") or []:
        if isinstance(entry, str) and "\n" not in entry:  # a path; an inline patch holds lines
            yield entry
    for key in ("configurations", "transformers", "generators", "validators"):
        for entry in kustomization.get(key) or []:
            if isinstance(entry, str) and entry.endswith((".yaml", ".yml")):
                yield entry
    for key in ("configMapGenerator", "secretGenerator"):  # the files a generator reads are data
        for generator in kustomization.get(key) or []:
            if isinstance(generator, dict):
                for entry in [*(generator.get("files") or []), *(generator.get("envs") or []), generator.get("env")]:
                    if isinstance(entry, str):
                        yield entry.split("=", 1)[-1]  # `key=path` names the key the file's bytes go under
    for chart in kustomization.get("helmCharts") or []:
        if isinstance(chart, dict) and isinstance(chart.get("valuesFile"), str):
            yield chart["valuesFile"]


@cache
def read_kustomization(path: str) -> dict[str, Any]:
    """A kustomization file's mapping (empty when it is none), read once per run by all that
    ask (which files are patches, which kustomizations to build): read_kustomization.cache_clear()
    starts a run."""
    from generator.yamlio.load import load_file  # only directories that hold one pay

    docs, _ = load_file(path, kube=True)
    return docs[0].data if docs and isinstance(docs[0].data, dict) else {}


def _patches_of(directory: str, cache: dict[str, set[str]]) -> set[str]:
    """Real paths of the files the kustomization in directory (if any) uses as patches."""
    if directory in cache:
        return cache[directory]
    found: set[str] = set()
    for name in KUSTOMIZATIONS:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            data = read_kustomization(candidate)
            found.update(os.path.realpath(os.path.join(directory, rel)) for rel in _patch_paths(data))
            break
    cache[directory] = found
    return found


class Selected(NamedTuple):
    """The manifest files to validate, what was skipped as no manifest, and notes about it."""

    files: list[tuple[str, str]]
    skipped: list[str]
    notes: list[Problem]


def manifest_files(
    paths: Iterable[Path], excluded: Callable[[str], bool] = lambda name: False
) -> tuple[Selected, list[Problem]]:
    """The files below paths that hold Kubernetes manifests, and the paths that do not exist.

    Kustomize patch files are known from the kustomization beside them or in a directory above
    (a `patches/` folder); Helm charts are said once each (render them with `helm template`).
    """
    paths = list(paths)
    found, missing = named(paths, MANIFEST_SUFFIXES)
    # a kustomization is found by the walk that finds its patches; a file named on its own may
    # have one in its directory or above
    look_for_patches = any(os.path.basename(path) in KUSTOMIZATIONS for path, _ in found) or any(
        root.is_file() for root in paths
    )
    kept: list[tuple[str, str]] = []
    skipped: list[str] = []
    patch_cache: dict[str, set[str]] = {}
    patches_near: dict[str, set[str]] = {}
    roots: dict[str, str | None] = {}
    charts: dict[str, str] = {}
    for path, name in found:
        if excluded(name):
            continue
        directory = os.path.dirname(path)  # once per file: the checks below all start from it
        if path != "/dev/stdin" and (
            _tool_file(name)
            or _is_fragment(directory)
            or (look_for_patches and _is_patch(path, directory, patches_near, patch_cache))
        ):
            skipped.append(name)
            continue
        root = _chart_root(directory, roots) if path != "/dev/stdin" else None
        if root is not None:
            charts.setdefault(root, name[: len(name) - len(os.path.relpath(path, root))] + "Chart.yaml")
            skipped.append(name)
            continue
        kept.append((path, name))
    notes = [
        Problem(
            chart,
            0,
            0,
            "helm-chart",
            Severity.INFO,
            "a Helm chart: its templates become manifests only when rendered; not validated",
            "validate the output of `helm template` instead",
        )
        for chart in sorted(charts.values())
    ]
    return Selected(kept, skipped, notes), missing


def _is_patch(path: str, directory: str, near: dict[str, set[str]], cache: dict[str, set[str]]) -> bool:
    """Whether a kustomization in path's directory or up to two above uses path as a patch
    (its real path is worked out only where such a kustomization lists patches)."""
    patches = _patches_near(directory, near, cache)
    return bool(patches) and os.path.realpath(path) in patches


def _patches_near(directory: str, near: dict[str, set[str]], cache: dict[str, set[str]]) -> set[str]:
    """What the kustomizations in directory and up to two above use as patches: worked out once
    per directory, not once per file in it."""
    found = near.get(directory)
    if found is None:
        found = set()
        current = os.path.abspath(directory)
        for _ in range(3):
            found |= _patches_of(current, cache)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        near[directory] = found
    return found


def kustomization_in(directory: str) -> str | None:
    """The kustomization file directory holds, if any: kustomize builds what lies beside it."""
    for name in KUSTOMIZATIONS:
        if os.path.isfile(os.path.join(directory, name)):
            return name
    return None
