"""Kustomizations built by the real engine, each built object traced to the file it came from.

`kustomize build` (or `kubectl kustomize`) is run on a wrapper kustomization in a temporary
directory that names the user's as its one resource and asks for `originAnnotations`, so the
user's files are never changed. The engine runs with an empty PATH and a proxy that leads
nowhere: it cannot start git, helm or a plugin, nor reach the network; a kustomization that
names a remote base is not built at all (said as an info), and what it holds is judged file
by file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import cache
from typing import Any, NamedTuple

from generator.files import display_path, kustomization_in, read_kustomization
from generator.problems import Problem, Severity
from generator.yamlio.load import Document, YamlError, load_file, load_text, parse_yaml

ORIGIN = "config.kubernetes.io/origin"
BUILD_SECONDS = 60
_REMOTE = ("://", "github.com/", "gitlab.com/", "bitbucket.org/", "git@", "git::")


def engine() -> tuple[str, ...] | None:
    """The command that builds a kustomization: kustomize, else kubectl's built-in one."""
    import shutil  # only a run with kustomizations pays for the import

    if found := shutil.which("kustomize"):
        return (found, "build")
    if found := shutil.which("kubectl"):
        return (found, "kustomize")
    return None


def kustomization_file(directory: str) -> str | None:
    """The path of the kustomization file directory holds, if any."""
    name = kustomization_in(directory)
    return os.path.join(directory, name) if name is not None else None


def _entries(kustomization: dict[str, Any]) -> Iterator[str]:
    """What a kustomization includes from elsewhere: resources, bases and components."""
    for key in ("resources", "bases", "components"):
        entries = kustomization.get(key)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str):
                yield entry


def variables(directories: frozenset[str]) -> frozenset[str]:
    """The names of the `vars` the kustomizations in directories declare (kustomize replaces
    `$(NAME)` with them in everything the build holds)."""
    return frozenset(
        str(var["name"])
        for directory in directories
        if (file := kustomization_file(directory)) is not None
        for var in read_kustomization(file).get("vars") or []
        if isinstance(var, dict) and "name" in var
    )


def is_remote(entry: str) -> bool:
    return entry.startswith(_REMOTE) or "://" in entry or "?ref=" in entry


_FILE_SUFFIXES = (".yaml", ".yml", ".json")


@cache
def _names_in(directory: str) -> frozenset[str]:
    """The files in directory: one read of it, not one stat per file a kustomization lists."""
    try:
        return frozenset(entry.name for entry in os.scandir(directory) if entry.is_file())
    except OSError:
        return frozenset()


def _is_file(path: str) -> bool:
    directory, _, name = path.rpartition("/")
    return name in _names_in(directory)


@cache
def _includes(directory: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the kustomization in directory includes that may be a kustomization (directories,
    normalised), and why its build cannot run here (a remote base, a Helm chart): one pass over
    its entries, which may be thousands of files."""
    file = kustomization_file(directory)
    if file is None:
        return (), ()
    data = read_kustomization(file)
    why: list[str] = []
    if data.get("helmCharts") or data.get("helmChartInflationGenerator"):
        why.append(f"it inflates a Helm chart ({os.path.relpath(file)}), which would run helm")
    below: list[str] = []
    for entry in _entries(data):
        if "://" in entry or entry.startswith(_REMOTE) or "?ref=" in entry:
            why.append(f"it includes a remote base ({entry}), which gen never fetches")
        elif not entry.endswith(_FILE_SUFFIXES):  # a file includes no kustomization
            below.append(os.path.normpath(os.path.join(directory, entry)))
    return tuple(below), tuple(why)


@cache
def closure(directory: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The kustomization directories a build of directory reads (it among them), and why gen
    does not build it, if it does not: a remote base any of them names (the engine would fetch
    it), or a Helm chart one inflates (the engine would run helm, which may fetch the chart)."""
    seen: set[str] = set()
    remote: list[str] = []  # why not
    pending = [directory]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        if kustomization_file(current) is None:
            continue
        seen.add(current)
        below, why = _includes(current)
        remote += why
        pending += [target for target in below if os.path.isdir(target)]
    return frozenset(seen), tuple(remote)


def roots(kustomizations: list[str]) -> list[str]:
    """The directories of the kustomizations (files) that no other among them includes: the
    ones an engine builds; a Component is built only by what includes it. What only a
    kustomization with a remote base includes (never built here) is built on its own."""
    dirs = {os.path.dirname(path): path for path in map(os.path.abspath, kustomizations)}  # as read before
    included: set[str] = set()
    for directory in dirs:
        if not closure(directory)[1]:
            included.update(_includes(directory)[0])
    return sorted(
        d for d, file in dirs.items() if d not in included and read_kustomization(file).get("kind") != "Component"
    )


# What a kustomization's build sets on all it includes: a base that only a kustomization with a
# remote base includes is built with these of its includer's, as the includer would set them.
_INHERITED_KEYS = ("namespace", "commonLabels", "labels", "commonAnnotations")


def inherited(root: str, kustomizations: list[str]) -> dict[str, Any]:
    """What the nearest kustomizations including root that are not built (they have a remote
    base) set on everything they include, the nearest's value for each key."""
    dirs = [os.path.dirname(os.path.abspath(k)) for k in kustomizations]
    found: dict[str, Any] = {}
    pending, seen = [root], {root}
    while pending:
        current = pending.pop(0)
        for directory in sorted(dirs):
            file = kustomization_file(directory)
            if file is None or directory in seen or not closure(directory)[1]:
                continue
            data = read_kustomization(file)
            if any(
                not is_remote(entry) and os.path.normpath(os.path.join(directory, entry)) == current
                for entry in _entries(data)
            ):
                seen.add(directory)
                pending.append(directory)
                for key in _INHERITED_KEYS:
                    if key in data and key not in found:
                        found[key] = data[key]
    return found


# A kustomization with no other key than these changes nothing in what it lists.
_AS_WRITTEN_KEYS = frozenset({"apiVersion", "kind", "metadata", "resources", "sortOptions", "buildMetadata"})


def as_written(directory: str, known: frozenset[str] = frozenset()) -> list[str] | None:
    """The files (absolute) a kustomization includes when it only lists them, as gen's own
    output does, directly or through kustomizations that only list theirs: its build is those
    files as written (known: files, absolute, known to exist). None when a transformer,
    generator or remote base may change them."""
    file = kustomization_file(directory)
    data = read_kustomization(file) if file is not None else {}
    if file is None or data.get("kind") == "Component" or not data.keys() <= _AS_WRITTEN_KEYS:
        return None
    listed: list[str] = []
    here = _names_in(directory)
    for entry in data.get("resources") or []:
        if not isinstance(entry, str) or is_remote(entry):
            return None
        target = f"{directory}/{entry}"
        if target in known or entry in here:  # the common cases: a file found by the walk, or beside
            listed.append(target)
            continue
        entry = entry.removeprefix("./")
        target = f"{directory}/{entry}"
        if "/./" in target or "/../" in target or entry.startswith("../"):
            target = os.path.normpath(target)  # only where the entry climbs: most name a file below
        if _is_file(target):
            listed.append(target)
        elif os.path.isdir(target) and (below := as_written(target, known)) is not None:
            listed += below
        else:
            return None  # it transforms, or the engine says why it cannot build it
    return listed


def forget() -> None:
    """Read the kustomizations afresh: a process may validate again after files changed."""
    for cached in (read_kustomization, _names_in, _includes, closure):
        cached.cache_clear()


class Built(NamedTuple):
    """One kustomization's build: its objects, each with the file (absolute) it came from and
    the document of that file it was written in; or why it was not built."""

    objects: list[tuple[Any, str, Document | None]]
    problem: Problem | None = None


def build(
    directory: str,
    command: tuple[str, ...],
    name: str,
    read_before: dict[str, list[Document]],
    settings: dict[str, Any] | None = None,
) -> Built:
    """directory's kustomization built (name: its file as findings name it); read_before
    keeps the source files read for any build of the run, with the positions worked out for
    their findings, so a base many overlays build is read once; settings, what the wrapper
    sets on all it builds (see inherited)."""
    import subprocess  # only a run that builds pays for the imports
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gen-kustomize-") as wrapper:
        resource = os.path.relpath(directory, wrapper)
        with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as handle:
            handle.write(f"resources:\n- {json.dumps(resource)}\nbuildMetadata: [originAnnotations]\n")  # quoted
            for key, value in (settings or {}).items():
                handle.write(f"{key}: {json.dumps(value)}\n")  # JSON is YAML
        nowhere = "http://127.0.0.1:9"
        env = {"PATH": "", "HOME": wrapper, "HTTP_PROXY": nowhere, "HTTPS_PROXY": nowhere, "NO_PROXY": ""}
        try:
            done = subprocess.run(
                [*command, wrapper], capture_output=True, text=True, env=env, timeout=BUILD_SECONDS, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return Built([], _build_problem(name, str(err)))
        if done.returncode != 0:
            return Built([], _build_problem(name, _reason(done.stderr, directory, resource)))
        docs, problems = load_text(done.stdout, name, kube=True)
        if problems:
            return Built([], _build_problem(name, problems[0].message))
        sources = read_before
        objects: list[tuple[Any, str, Document | None]] = []
        for doc in docs:
            data = doc.data
            origin = _origin(data)
            if origin is None:
                objects.append((data, "", None))
                continue
            path, generated = origin
            source = os.path.normpath(os.path.join(wrapper, path))
            if source not in sources:
                shown = display_path(source, os.getcwd())
                sources[source] = [d for d in load_file(source, shown, kube=True)[0] if isinstance(d.data, dict)]
            written = sources[source]
            objects.append(
                (data, source, (written[0] if written else None) if generated else _source_document(data, written))
            )
    return Built(objects)


def _reason(stderr: str, directory: str, resource: str) -> str:
    """The engine's message about directory's kustomization (resource: the wrapper's path to
    it): without kubectl's log prefix, the wrapper's layer, and directory's path before the
    files it names."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    reason = (lines[-1] if lines else "the build failed").split('err="', 1)[-1].removesuffix('"')
    reason = reason.split(f"recursed accumulation of path '{directory}': ", 1)[-1]
    reason = reason.removeprefix(
        f"accumulating resources: accumulation err='accumulating resources from '{resource}': "
    )
    return reason.replace(directory + os.sep, "").replace(os.getcwd() + os.sep, "")


def _build_problem(name: str, reason: str) -> Problem:
    return Problem(
        name,
        1,
        1,
        "kustomize-build",
        Severity.ERROR,
        f"kustomize cannot build this kustomization: {reason}",
        "the GitOps engine's build fails the same way: fix the kustomization",
    )


def _origin(data: Any) -> tuple[str, bool] | None:
    """Where kustomize says a built object came from (a path from the wrapper; whether a
    generator made it from the kustomization at that path), with the annotation removed."""
    if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
        return None
    annotations = data["metadata"].get("annotations")
    if not isinstance(annotations, dict) or ORIGIN not in annotations:
        return None
    text = annotations.pop(ORIGIN)
    if not annotations:
        del data["metadata"]["annotations"]
    try:
        origin = parse_yaml(str(text))
    except YamlError:
        return None
    if not isinstance(origin, dict):
        return None
    if isinstance(origin.get("configuredIn"), str):  # made by a generator the kustomization configures
        return origin["configuredIn"], True
    return (origin["path"], False) if isinstance(origin.get("path"), str) else None


def _source_document(data: dict[str, Any], docs: list[Document]) -> Document | None:
    """The document a built object was written as: the one of its kind, by its name before a
    prefix or suffix was added."""
    kind = data.get("kind")
    name = str((data.get("metadata") or {}).get("name", ""))
    same = [d for d in docs if d.data.get("kind") == kind]
    if len(same) <= 1:
        return same[0] if same else (docs[0] if len(docs) == 1 else None)
    named = [d for d in same if str((d.data.get("metadata") or {}).get("name", "")) in name]
    return max(named, key=lambda d: len(str((d.data.get("metadata") or {}).get("name", ""))), default=same[0])
