"""What a GitOps engine makes of a source document before kube-apiserver sees it.

Flux's kustomize-controller decrypts SOPS documents (the `sops` key is gone, the values are
what the cluster's key makes of them) and substitutes `postBuild` variables into what it
built (fluxcd/pkg kustomize/kustomize_varsub.go with its envsubst package). gen has neither
the key nor, always, the variables: such values are opaque, and no finding is made on them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from generator.files import KUSTOMIZATIONS, read_kustomization, walk
from generator.kube import kustomize, scope
from generator.kube.findings import Finding, Path
from generator.yamlio.kube_scalars import plain_value
from generator.yamlio.load import load_file

SOPS_KEY = "sops"
# A value SOPS encrypted: `ENC[AES256_GCM,data:…,iv:…,tag:…,type:str]`
_ENCRYPTED = re.compile(r"ENC\[[A-Z0-9_]+,data:.*\]\Z", re.DOTALL)

# Flux's variable names (kustomize_varsub.go varsubRegex) and the expansions gen evaluates:
# `${VAR}`, `${VAR=default}`, `${VAR-default}`, `${VAR:=default}`, `${VAR:-default}`. `$${` is
# envsubst's escape for a literal `${`. Other bash functions (`${#VAR}`, `${VAR^^}`, …) leave
# the value opaque.
_EXPANSION = re.compile(
    r"\$\$\{|\$\{([_a-zA-Z][_a-zA-Z0-9]*)(?:(:?[=-])([^${}]*))?\}|\$\{#?(?P<function>[_a-zA-Z][_a-zA-Z0-9]*)?"
)
SUBSTITUTE_ANNOTATION = "kustomize.toolkit.fluxcd.io/substitute"


def is_sops(data: Any) -> bool:
    """Whether a document is SOPS-encrypted: a top-level `sops` mapping (its metadata)."""
    return isinstance(data, dict) and isinstance(data.get(SOPS_KEY), dict)


def decrypted(data: dict[str, Any]) -> tuple[dict[str, Any], frozenset[Path]]:
    """A SOPS document as the cluster receives it: without `sops`; and the paths of its
    encrypted values, whose plain text only the key knows."""
    body = {key: value for key, value in data.items() if key != SOPS_KEY}
    return body, frozenset(path for path, value in _scalars(body) if isinstance(value, str) and _ENCRYPTED.match(value))


def _scalars(data: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _scalars(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _scalars(value, (*path, i))
    else:
        yield path, data


class Applied(NamedTuple):
    """What an engine does to a file's objects before it applies them: Flux's postBuild
    variables (None: no substitution; a variable's value None: gen cannot know it, from a
    Secret that is encrypted), and the namespace Flux's targetNamespace or kustomize's
    `namespace` puts them in."""

    source: str  # who applies it, for messages: `Flux Kustomization default/atuin`
    variables: tuple[tuple[str, str | None], ...] | None = None
    namespace: str | None = None
    flux: bool = False  # a Flux Kustomization's, applied after kustomize built its path
    kustomize_vars: frozenset[str] = frozenset()  # `vars` a kustomization not built would replace

    @property
    def names(self) -> dict[str, str | None]:
        return dict(self.variables or ())


class _Opaque(Exception):
    """A value gen cannot work out: a variable it does not know, or a function it does not evaluate."""


def expand(text: str, variables: dict[str, str | None]) -> str:
    """text with Flux's variables substituted, as envsubst does; _Opaque if gen cannot tell."""

    def one(match: re.Match[str]) -> str:
        whole, name, operator, default = match.group(0), match.group(1), match.group(2), match.group(3)
        if whole == "$${":
            return "${"
        if name is None:  # a function gen does not evaluate, of the variable it names
            raise _Opaque(match.group("function") or whole)
        value = variables.get(name, _UNSET)
        if value is None:
            raise _Opaque(name)
        if operator is None:
            if value is _UNSET:
                raise _Opaque(name)
            return str(value)
        if value is _UNSET or (operator.startswith(":") and value == ""):
            return default or ""
        return str(value)

    return _EXPANSION.sub(one, text)


_UNSET: Any = object()


def substituted(
    data: dict[str, Any], substitution: Applied, plain: Callable[[Path], bool]
) -> tuple[dict[str, Any], frozenset[Path], list[str]]:
    """data with the variables substituted into its string values (plain(path): the value was
    an unquoted scalar, which Flux's YAML reader types again after substituting); the paths
    left opaque and the variables gen did not know, sorted."""
    opaque: set[Path] = set()
    unknown: set[str] = set()
    names = substitution.names

    def walk(value: Any, path: Path) -> Any:
        if isinstance(value, dict):
            return {key: walk(item, (*path, key)) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item, (*path, i)) for i, item in enumerate(value)]
        if not isinstance(value, str) or "${" not in value:
            return value
        try:
            result = expand(value, names)
        except _Opaque as err:
            opaque.add(path)
            unknown.add(str(err))
            return value
        return plain_value(result) if result and plain(path) else result

    return walk(data, ()), frozenset(opaque), sorted(unknown)


def unknown_reasons(names: list[str], applied: Applied) -> str:
    """Why each variable left a value opaque, for the info that says so."""
    return ", ".join(
        f"{name} ({'not set' if name not in applied.names else 'encrypted' if applied.names[name] is None else 'through a function gen does not evaluate'})"
        for name in names
    )


def substitution_disabled(data: dict[str, Any]) -> bool:
    """Flux skips an object labelled or annotated `kustomize.toolkit.fluxcd.io/substitute: disabled`."""
    metadata = data.get("metadata")
    return isinstance(metadata, dict) and any(
        isinstance(marks := metadata.get(where), dict) and marks.get(SUBSTITUTE_ANNOTATION) == "disabled"
        for where in ("labels", "annotations")
    )


def beside(findings: list[Finding], opaque: frozenset[Path]) -> list[Finding]:
    """findings without those on an opaque value (or below it)."""
    if not opaque:
        return findings
    return [f for f in findings if not any(f.path[: len(path)] == path for path in opaque)]


_KUSTOMIZE_VAR = re.compile(r"\$\(([^()$]+)\)")


def kustomize_var_paths(data: Any, names: frozenset[str]) -> frozenset[Path]:
    """The paths of string values that use one of a kustomization's `vars` (`$(NAME)`), which
    kustomize replaces when it builds."""
    return frozenset(
        path
        for path, value in _scalars(data)
        if isinstance(value, str) and "$(" in value and any(n in names for n in _KUSTOMIZE_VAR.findall(value))
    )


def in_namespace(data: dict[str, Any], namespace: str) -> dict[str, Any]:
    """data as Flux's targetNamespace (or kustomize's `namespace`) places it: a namespaced
    object moves to namespace, a Namespace is renamed to it, a cluster-scoped object stays."""
    api, kind = data.get("apiVersion"), data.get("kind")
    metadata = data.get("metadata")
    if not isinstance(api, str) or not isinstance(kind, str) or not isinstance(metadata, dict):
        return data
    if (api, kind) == ("v1", "Namespace"):
        return {**data, "metadata": {**metadata, "name": namespace}}
    if scope.cluster_scoped(api, kind):
        return data
    return {**data, "metadata": {**metadata, "namespace": namespace}}


FLUX_KUSTOMIZE_GROUP = "kustomize.toolkit.fluxcd.io"


def flux_kustomization(data: dict[str, Any]) -> dict[str, Any] | None:
    """What of a Flux Kustomization says how it applies its path: name, namespace, path,
    components, postBuild, targetNamespace (None for any other object)."""
    api = data.get("apiVersion")
    if (
        data.get("kind") != "Kustomization"
        or not isinstance(api, str)
        or not api.startswith(FLUX_KUSTOMIZE_GROUP + "/")
    ):
        return None
    spec: dict[str, Any] = data["spec"] if isinstance(data.get("spec"), dict) else {}
    metadata: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
    return {
        "name": str(metadata.get("name", "")),
        "namespace": str(metadata.get("namespace") or ""),
        "path": str(spec.get("path") or "./"),
        "components": [c for c in spec.get("components") or [] if isinstance(c, str)],
        "postBuild": spec.get("postBuild") if isinstance(spec.get("postBuild"), dict) else None,
        "targetNamespace": spec.get("targetNamespace") if isinstance(spec.get("targetNamespace"), str) else None,
    }


def source_root(directory: str) -> str:
    """Where a Flux Kustomization's path starts: the repository (the directory holding .git)
    its file lies in, else the current directory."""
    current = os.path.abspath(directory)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return os.getcwd()
        current = parent


def flux_variables(
    flux: dict[str, Any], holder: Callable[[str, str, str], dict[str, str | None] | None]
) -> tuple[tuple[str, str | None], ...] | None:
    """A Flux Kustomization's postBuild variables, as kustomize-controller loads them:
    substituteFrom in order (holder(kind, namespace, name) reads a ConfigMap's or Secret's data
    among the inputs; one not there gives nothing), then substitute over them; newlines
    removed. None without postBuild: Flux substitutes nothing."""
    post = flux.get("postBuild")
    if post is None:
        return None
    found: dict[str, str | None] = {}
    for reference in post.get("substituteFrom") or []:
        if isinstance(reference, dict) and reference.get("kind") in ("ConfigMap", "Secret"):
            data = holder(str(reference["kind"]), flux["namespace"], str(reference.get("name")))
            found.update(
                {key: None if value is None else value.replace("\n", "") for key, value in (data or {}).items()}
            )
    for key, value in (post.get("substitute") or {}).items():
        found[str(key)] = str(value).replace("\n", "")
    return tuple(sorted(found.items()))


def _below(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def engines(
    files: list[str],
    fluxes: list[tuple[str, dict[str, Any]]],
    holder: Callable[[str, str, str], dict[str, str | None] | None],
) -> dict[str, list[Applied]]:
    """For each file (absolute paths) that an engine changes before applying it, what it does:
    the Flux Kustomizations (file, summary) whose path or components hold it, each with its
    variables and target namespace, else the `namespace` of the kustomization nearest above it
    (found beside the file or above, whether among the inputs or not: pre-commit names single
    files)."""
    namespaces: dict[str, str | None] = {}

    def nearest_namespace(path: str) -> str | None:
        directory, seen = os.path.dirname(path), []
        while directory not in namespaces:
            seen.append(directory)
            kustomization = next(
                (os.path.join(directory, n) for n in KUSTOMIZATIONS if os.path.isfile(os.path.join(directory, n))),
                None,
            )
            parent = os.path.dirname(directory)
            if kustomization is not None or parent == directory:
                namespaces[directory] = _namespace_of(kustomization) if kustomization else None
                break
            directory = parent
        for below in seen:
            namespaces[below] = namespaces[directory]
        return namespaces[directory]

    found: dict[str, list[Applied]] = {}
    kustomization_dirs: dict[str, str | None] = {}
    kustomizations = [os.path.dirname(f) for f in files if os.path.basename(f) in KUSTOMIZATIONS]
    for defined_in, flux in fluxes:
        root = source_root(os.path.dirname(defined_in))
        path = os.path.normpath(os.path.join(root, flux["path"]))
        dirs = [path, *(os.path.normpath(os.path.join(path, c)) for c in flux["components"])]
        built = _flux_builds(dirs, kustomizations)
        variables = flux_variables(flux, holder)
        where = f"{flux['namespace']}/{flux['name']}" if flux["namespace"] else flux["name"]
        for file in files:
            if any(_below(file, d) for d in dirs) and (
                (home := kustomization_of(file, kustomization_dirs)) in built
                or home is None
                or not any(_below(home, d) for d in dirs)
                or file.endswith(KUSTOMIZATIONS)
            ):
                applied = Applied(
                    f"Flux Kustomization {where}",
                    variables,
                    flux["targetNamespace"] or nearest_namespace(file),
                    flux=True,
                )
                found.setdefault(file, []).append(applied)
    by_directory: dict[str, str | None] = {}  # files are many, their directories few
    for file in files:
        directory = file.rpartition("/")[0]  # absolute paths: their directory, without dirname's checks
        if directory not in by_directory:
            by_directory[directory] = nearest_namespace(file)
        if file not in found and (namespace := by_directory[directory]):
            found[file] = [Applied("kustomization", None, namespace)]
    return found


def _flux_builds(dirs: list[str], kustomizations: list[str]) -> frozenset[str]:
    """The kustomization directories a Flux Kustomization's build reads: from its path's (and
    components') kustomizations; where a path has none, Flux generates one that takes the files
    below and the topmost kustomizations below, each as its build includes."""
    built: set[str] = set()
    for directory in dirs:
        if kustomize.kustomization_file(directory) is not None:
            built |= kustomize.closure(directory)[0]
            continue
        below = [k for k in kustomizations if _below(k, directory)]
        for top in below:
            if not any(other != top and _below(top, other) for other in below):
                built |= kustomize.closure(top)[0]
    return frozenset(built)


def _namespace_of(kustomization: str) -> str | None:
    namespace = read_kustomization(kustomization).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else None


def kustomization_of(file: str, known: dict[str, str | None]) -> str | None:
    """The directory of the kustomization nearest above file (as findings name it), if any;
    known keeps what each directory gave."""
    directory, seen = os.path.dirname(file if os.path.isabs(file) else os.path.abspath(file)), []
    if directory in known:  # the common case: a file beside others asked about before
        return known[directory]
    while directory not in known:
        seen.append(directory)
        parent = os.path.dirname(directory)
        if any(os.path.isfile(os.path.join(directory, name)) for name in KUSTOMIZATIONS):
            known[directory] = directory
        elif parent == directory:
            known[directory] = None
        else:
            directory = parent
    for below in seen:
        known[below] = known[directory]
    return known[directory]


def including(named: list[str]) -> list[str]:
    """The kustomization files of the repository whose builds read the kustomization nearest
    above each file named (pre-commit names changed files, not the overlays that build them):
    found from the repository root, so a base named alone is judged as its overlays build it."""
    known: dict[str, str | None] = {}
    homes = {home for file in named if (home := kustomization_of(file, known)) is not None}
    if not homes:
        return []
    found = []
    for root in sorted({source_root(home) for home in homes}):
        for rel in walk(root, KUSTOMIZATIONS):
            path = os.path.join(root, *rel)
            if rel[-1] in KUSTOMIZATIONS and kustomize.closure(os.path.dirname(path))[0] & homes:
                found.append(path)
    return found


def fluxes_around(named: list[str], among: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The Flux Kustomizations of the repository (file, summary), found from its root, when a
    file named on its own uses a variable (`${`) and they are not among the inputs (among: the
    files read already): pre-commit names the changed file, and CI substitutes it all the same."""
    using: list[str] = []
    for file in named:
        try:
            with open(file, "rb") as handle:
                if b"${" in handle.read():
                    using.append(file)
        except OSError:
            continue
    found: list[tuple[str, dict[str, Any]]] = []
    for root in sorted({source_root(os.path.dirname(file)) for file in using}):
        for rel in walk(root):
            path = os.path.join(root, *rel)
            if path in among:
                continue
            try:
                with open(path, "rb") as handle:
                    if FLUX_KUSTOMIZE_GROUP.encode() not in handle.read():
                        continue
            except OSError:
                continue
            found += [
                (path, flux)
                for doc in load_file(path, kube=True)[0]
                if isinstance(doc.data, dict) and (flux := flux_kustomization(doc.data)) is not None
            ]
    return found
