"""`gen validate` over a repository as it is: the files that hold manifests, what the GitOps
engine makes of them before kube-apiserver sees them (SOPS decrypted, Flux's substitution and
targetNamespace, kustomizations built by the real engine and traced back to their files:
`sources.py`, `kustomize.py`), each object judged by `validate.ManifestValidator`, the CRDs
among the inputs learnt as they are read, Pod Security judged once every Namespace is known,
and each file's findings kept for the next run where the cache layer keeps them."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path as FsPath
from typing import Any, NamedTuple, Protocol

from generator import cache as gen_cache
from generator import files, parallel, schemas, suppressions
from generator.kube import api_versions, crds, kustomize, pod_security, sources
from generator.kube.findings import Path
from generator.kube.scope import is_definition, title_of
from generator.kube.validate import (
    SHAPE_UNSURE,
    Deferred,
    ManifestValidator,
    load_kubernetes_schemas,
    pod_security_finding,
    quote_hint,
)
from generator.problems import Problem, Severity
from generator.schema_messages import shown
from generator.yamlio.load import Document, load_file


class FileResult(NamedTuple):
    """What validating one file gives: its findings; the Pod Security levels its Namespaces
    enforce; its workloads' failed Pod Security checks, which wait for the Namespaces of every
    file; its text if it holds gen:ignore comments; the CRDs it defines; and the custom kinds
    it uses that no CRD known so far defined (a CRD among the inputs may, and wins over a
    bundled schema)."""

    problems: list[Problem]
    enforced: dict[str, str]
    deferred: list[Deferred]
    text: str | None
    definitions: list[Any]
    custom: set[tuple[str, str]]
    not_manifest: bool = False  # a file of data, not objects (package.json, an Ansible playbook)
    flux: tuple[Any, ...] = ()  # the Flux Kustomizations it defines, as sources.flux_kustomization keeps them
    holders: tuple[tuple[str, str, str], ...] = ()  # its ConfigMaps and Secrets (kind, namespace, name)


def _validate_file(
    file: tuple[str, str], validator: ManifestValidator, applied: sources.Applied | None = None
) -> FileResult:
    """One file's findings; with applied, as an engine makes its objects (Flux substitution, a namespace)."""
    return _judged_documents(*load_file(*file, kube=True), validator, applied)


def _judged_documents(
    docs: list[Document], problems: list[Problem], validator: ManifestValidator, applied: sources.Applied | None
) -> FileResult:
    # a document with neither apiVersion nor kind is no manifest (Ansible, Talos, app
    # configuration), nor is one of another tool's API (Talos' VolumeConfig)
    docs = [doc for doc in docs if _names_a_kind(doc.data) and not _another_tools(doc.data)]
    if not docs and not problems:
        return FileResult([], {}, [], None, [], set(), not_manifest=True)
    judged = _Gathered()
    judged.problems += problems
    for doc in docs:
        judged.document(doc, doc.data, validator, applied)
    text = docs[0].text if docs and "gen:ignore" in docs[0].text else None
    return FileResult(
        judged.problems,
        judged.enforced,
        judged.deferred,
        text,
        judged.definitions,
        judged.custom,
        flux=tuple(judged.flux),
        holders=tuple(judged.holders),
    )


class _Gathered:
    """What judging objects gives, gathered: findings at their source lines, the Pod Security
    levels Namespaces enforce, workloads' deferred Pod Security checks, CRDs and custom kinds."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.enforced: dict[str, str] = {}
        self.deferred: list[Deferred] = []
        self.definitions: list[Any] = []
        self.custom: set[tuple[str, str]] = set()
        self.flux: list[Any] = []
        self.defined: list[tuple[str, str, str]] = []  # (namespace, level, file) of each Namespace
        self.holders: list[tuple[str, str, str]] = []

    def document(
        self,
        doc: Document,
        data: Any,
        validator: ManifestValidator,
        applied: sources.Applied | None,
        opaque: frozenset[Path] = frozenset(),
    ) -> None:
        """The objects of one document (data: as the engine made it; doc: where it was written)
        as the cluster receives them: SOPS decrypted, Flux's variables substituted."""
        sops = sources.is_sops(data)
        if sops:
            data, encrypted = sources.decrypted(data)
            opaque |= encrypted
        if applied is not None and applied.kustomize_vars:
            opaque |= sources.kustomize_var_paths(data, applied.kustomize_vars)
        for prefix, obj in validator.objects(data):
            within = frozenset(path[len(prefix) :] for path in opaque if path[: len(prefix)] == prefix)
            if (
                applied is not None
                and applied.variables is not None
                and isinstance(obj, dict)
                and not sources.substitution_disabled(obj)
            ):
                obj, unknown_paths, unknown = sources.substituted(obj, applied, partial(_plain, doc, prefix))
                within |= unknown_paths
                if unknown:
                    self.problems.append(
                        doc.problem(
                            (*prefix, *sorted(unknown_paths)[0]),
                            "flux-substitution",
                            f"{applied.source}'s postBuild variables {sources.unknown_reasons(unknown, applied)}: "
                            "the values that use them are not checked",
                            severity=Severity.INFO,
                            hint="a ConfigMap or Secret it substitutes from among the files validated makes them known",
                        )
                    )
            if applied is not None and applied.namespace and isinstance(obj, dict):
                obj = sources.in_namespace(obj, applied.namespace)
            self.object(doc, prefix, obj, validator, within, sops)

    def object(
        self,
        doc: Document,
        prefix: Path,
        data: Any,
        validator: ManifestValidator,
        opaque: frozenset[Path],
        encrypted: bool = False,
    ) -> None:
        found = validator.validate(data, doc.text, opaque)
        if encrypted:  # what the Secret holds is not readable in Git
            found = [f for f in found if f.rule != "secret-material"]
        about = title_of(data)
        self.problems += [
            replace(
                doc.problem(
                    (*prefix, *f.path),
                    f.rule,
                    f.message,
                    severity=f.severity,
                    hint=f.hint or quote_hint(doc, (*prefix, *f.path), f),
                    key=f.at_key,
                ),
                about=about,
            )
            for f in found
        ]
        if isinstance(data, dict):
            kind = (str(data.get("apiVersion")), str(data.get("kind")))
            if kind in schemas.MANIFEST_SCHEMA_FILES or any(f.rule == "k8s-unknown-kind" for f in found):
                self.custom.add(kind)
        if not isinstance(data, dict) or any(f.rule in SHAPE_UNSURE for f in found):
            return  # the checks below assume the shape is right
        if is_definition(data):
            self.definitions.append(data)
        if (flux := sources.flux_kustomization(data)) is not None:
            self.flux.append(flux)
        if data.get("kind") in ("ConfigMap", "Secret") and data.get("apiVersion") == "v1":
            metadata = data.get("metadata") or {}
            self.holders.append((str(data["kind"]), str(metadata.get("namespace", "")), str(metadata.get("name"))))
        if data.get("kind") == "Namespace" and data.get("apiVersion") == "v1":
            # without an enforce label, Pod Security admits anything: privileged (a second
            # definition of the namespace that enforces more is then an alternative, not the truth)
            level = pod_security.enforced_level(data) or "privileged"
            self.enforced[str((data.get("metadata") or {}).get("name"))] = level
            self.defined.append((str((data.get("metadata") or {}).get("name")), level, doc.file))
        namespace = str((data.get("metadata") or {}).get("namespace"))
        self.deferred += [
            (namespace, v, replace(doc.problem((*prefix, *v.path), "pod-security", ""), about=about))
            for v in pod_security.workload_violations(data)
        ]


def _plain(doc: Document, prefix: Path, path: Path) -> bool:
    """Whether the value at path (below prefix) of doc was written as an unquoted scalar."""
    scalar = doc.source.scalars.get((*prefix, *path))
    return scalar is not None and scalar.plain


def _refused_by_kustomize(path: str, result: FileResult) -> FileResult:
    """Duplicate keys are errors in a file a kustomization builds: kustomize's YAML reader
    (kyaml, on go-yaml v3) refuses the file ("mapping key already defined"), where kubectl
    keeps the last value. Decided after a file's result is kept or taken from the cache: it
    hangs on the directory, not on the file's own bytes."""
    if not any(p.rule == "yaml-duplicate-key" for p in result.problems):
        return result
    built_by = files.kustomization_in(os.path.dirname(os.path.abspath(path))) if path != "/dev/stdin" else None
    if built_by is None:
        return result
    return result._replace(
        problems=[
            replace(
                p,
                severity=Severity.ERROR,
                hint=f"kustomize refuses the file (mapping key already defined); the {built_by} beside it builds it: "
                "remove one of the two",
            )
            if p.rule == "yaml-duplicate-key"
            else p
            for p in result.problems
        ]
    )


def _names_a_kind(data: Any) -> bool:
    return isinstance(data, dict) and ("kind" in data or "apiVersion" in data)


def _another_tools(data: dict[str, Any]) -> bool:
    """A document of another tool's API, never sent to a cluster (Talos' `apiVersion: v1alpha1`
    `kind: VolumeConfig`): an apiVersion that is a version alone other than v1, which no
    Kubernetes serves (the core group has v1 alone), and a kind no Kubernetes group has. A
    Kubernetes kind at such a version is a mistake, and judged; so is an apiVersion that is no
    version at all."""
    api, kind = data.get("apiVersion"), data.get("kind")
    return (
        isinstance(api, str)
        and _GROUPLESS_VERSION.fullmatch(api) is not None
        and api != "v1"
        and isinstance(kind, str)
        and kind != ""
        and not api_versions.has_kind(kind)
    )


_GROUPLESS_VERSION = re.compile(r"v[1-9][0-9]*(?:(?:alpha|beta)[1-9][0-9]*)?")  # a version alone: v1alpha1


def _judged(deferred: list[Deferred], enforced: dict[str, list[tuple[str, str]]]) -> list[Problem]:
    """The Pod Security findings, now that every Namespace among the inputs is known (enforced:
    each namespace's levels, with the file defining each).

    Alternative overlays may define one namespace twice with different levels: the definition
    in the workload's own kustomization wins; without one, neither is picked silently: the
    workload is judged by the least strict, and a warning names both.
    """
    out = []
    kustomizations: dict[str, str | None] = {}
    warned: set[tuple[str, str]] = set()
    for namespace, violation, located in deferred:
        definitions = enforced.get(namespace, [])
        levels = {level for level, _ in definitions}
        if len(levels) > 1:
            home = sources.kustomization_of(located.file, kustomizations)
            own = [level for level, file in definitions if sources.kustomization_of(file, kustomizations) == home]
            if home is not None and len(set(own)) == 1:
                level: str | None = own[0]
            else:
                level = min(levels, key=lambda name: pod_security.LEVELS[name])
                if (located.file, namespace) not in warned:
                    warned.add((located.file, namespace))
                    named = " and ".join(
                        f"{file} ({shown(level_)})" for level_, file in sorted(definitions, key=lambda d: d[1])
                    )
                    out.append(
                        replace(
                            located,
                            rule="namespace-definitions",
                            severity=Severity.WARNING,
                            message=f"namespace {namespace} is defined with different Pod Security levels by {named}; "
                            f"judged by the least strict, {shown(level)}",
                            hint="put the Namespace in the same kustomization as its workloads, or define it once",
                        )
                    )
        else:
            level = next(iter(levels), None)
        finding = pod_security_finding(violation, namespace, level, own_output=False)
        if finding is not None:
            out.append(replace(located, severity=finding.severity, message=finding.message, hint=finding.hint))
    return out


def validate_paths(
    paths: Iterable[FsPath],
    versions: tuple[str, ...],
    plugins: tuple[str, ...] = (),
    crd_paths: Iterable[FsPath] = (),
    excluded: Callable[[str], bool] = lambda name: False,
    feature_gates: Mapping[str, bool] | None = None,
    allow_privileged: bool = True,
    kept_for: KeptFor | None = None,
) -> Validated:
    """`gen validate`: every manifest below paths, in worker processes when there are many;
    custom resources by the CRDs among them and below crd_paths; `kept_for`: what the run
    before judged, for these paths and this validator.

    CRDs from crd_paths are known from the start (read for their schemas only: their own
    findings count when they are among paths). Those among the inputs are learnt as the files
    are validated; a file that used a kind one of them defines is validated again once all are
    known. A repository without CRDs pays nothing for the second pass.
    """
    paths = list(paths)
    kustomize.forget()  # kustomizations are read afresh each run
    selected, problems = files.manifest_files(paths, excluded)
    definitions = crds.Catalog()
    given: list[Any] = []
    if crd_paths:
        crd_sources = crds.sources(crd_paths)
        problems += crd_sources.problems
        definitions.add_all(crd_sources.crds, stored=True)
        definitions.add_schemas(crd_sources.schemas)
        given = [*crd_sources.crds, *(_stamped(path, name) for path, name in crd_sources.schemas)]
    found = selected.files
    problems += selected.notes
    # an unsupported version is a usage error before any work
    validator = ManifestValidator(
        versions,
        plugins,
        enforced=None,
        definitions=definitions,
        feature_gates=feature_gates,
        allow_privileged=allow_privileged,
    )
    results = _validate_files(found, validator, kept_for(paths, validator, given) if kept_for is not None else None)
    learnt = [(data, name) for (_, name), result in zip(found, results, strict=True) for data in result.definitions]
    if learnt:
        definitions.add_all(learnt)
        again = [i for i, result in enumerate(results) if any(definitions.find(*kind) for kind in result.custom)]
        for i, result in zip(again, _validate_files([found[i] for i in again], validator), strict=True):
            results[i] = result
    here = os.getcwd()  # once: os.path.abspath asks for it per path
    absolute = [_absolute(path, here) for path, _ in found]
    kustomizations = [
        os.path.abspath(name) for name in selected.skipped if os.path.basename(name) in files.KUSTOMIZATIONS
    ]
    named = [os.path.abspath(path) for path in paths if path.is_file()]
    around = sources.fluxes_around(named, set(absolute)) if named else []
    engines = _as_engines_apply(found, absolute, results, validator, kustomizations, around)
    built = _built(selected.skipped, found, absolute, results, validator, engines, sources.including(named))
    problems += built.problems
    enforced: dict[str, list[tuple[str, str]]] = {}
    deferred: list[Deferred] = []
    texts: dict[str, str] = {}
    judged: list[str] = []
    skipped = list(selected.skipped)
    for (_, name), result in zip(found, results, strict=True):
        if result.not_manifest or name in built.unreferenced:
            skipped.append(name)
            continue
        judged.append(name)
        problems += result.problems
        for namespace, level in result.enforced.items():
            enforced.setdefault(namespace, []).append((level, name))
        deferred += result.deferred
        if result.text is not None:
            texts[name] = result.text
    for namespace, level, name in built.enforced:
        enforced.setdefault(namespace, []).append((level, name))
    deferred += built.deferred
    kept, silenced = suppressions.apply(problems + _judged(deferred, enforced), texts)
    return Validated(kept, silenced, judged, len(skipped), built.summary)


def _absolute(path: str, here: str) -> str:
    """path from the filesystem root; normalised only where it may need it (a walk's paths
    seldom do, and normalising 2,000 of them is measurable)."""
    if path.startswith("/"):
        return path if "/." not in path and "//" not in path else os.path.normpath(path)
    joined = f"{here}/{path}"
    return (
        joined if "/." not in joined and "//" not in joined and not path.startswith(".") else os.path.normpath(joined)
    )


def _as_engines_apply(
    found: list[tuple[str, str]],
    absolute: list[str],
    results: list[FileResult],
    validator: ManifestValidator,
    kustomizations: list[str],
    around: list[tuple[str, Any]],
) -> dict[str, list[sources.Applied]]:
    """Judge again, as Flux and kustomize apply them, the files an engine changes: substituted
    by the Flux Kustomizations whose path holds them, in the namespace one puts them in. A
    file several apply is judged for each; a finding they share is said once. What applies to
    each of the kustomizations (files) is returned too, for their builds; around: Flux
    Kustomizations found beyond the inputs for files named on their own."""
    fluxes = [(file, flux) for file, result in zip(absolute, results, strict=True) for flux in result.flux]
    fluxes += around
    holders: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for i, result in enumerate(results if fluxes else ()):  # only substituteFrom reads them
        for kind, namespace, name in result.holders:
            holders.setdefault((kind, name), []).append((namespace, i))

    def holder(kind: str, namespace: str, name: str) -> dict[str, str | None] | None:
        places = sorted(holders.get((kind, name), []), key=lambda place: place[0] != namespace)
        return _holder_data(found[places[0][1]], kind, name) if places else None

    engines = sources.engines([*absolute, *kustomizations], fluxes, holder)  # a kustomization: what its build is given
    todo = [(i, applied) for i, file in enumerate(absolute) for applied in engines.get(file, [])]
    if not todo:
        return engines
    again: dict[int, list[FileResult]] = {}
    for (i, _), result in zip(todo, _judged_applied(todo, found, validator), strict=True):
        again.setdefault(i, []).append(result)
    for i, judged in again.items():
        results[i] = judged[0]._replace(
            problems=list({replace(p, about=""): p for r in judged for p in r.problems}.values()),
            enforced={k: v for r in judged for k, v in r.enforced.items()},
            deferred=list(dict.fromkeys(d for r in judged for d in r.deferred)),
        )
    return engines


class _Builds(NamedTuple):
    """What building the kustomizations among the inputs gave: findings at their source lines,
    Namespaces' levels (namespace, level, file) and deferred Pod Security checks; the files a
    build left out (never applied); and a sentence for the summary."""

    problems: list[Problem]
    enforced: list[tuple[str, str, str]]
    deferred: list[Deferred]
    unreferenced: set[str]
    summary: str


def _built(
    skipped: list[str],
    found: list[tuple[str, str]],
    absolute: list[str],
    results: list[FileResult],
    validator: ManifestValidator,
    engines: dict[str, list[sources.Applied]],
    around: list[str],
) -> _Builds:
    """Every kustomization among the inputs that no other includes, built by the real engine
    and judged as built: the files it reads are judged through it (their own results give way
    to it), the files beside it that it leaves out are never applied. Around: kustomization
    files (absolute) that build files named on their own; only the named files' findings count.
    Without an engine on PATH, or for a remote base, the files are judged one by one and the
    summary says so."""
    asked = [name for name in skipped if os.path.basename(name) in files.KUSTOMIZATIONS]
    here = os.getcwd()
    kustomizations = list(dict.fromkeys([*asked, *(files.display_path(path, here) for path in around)]))
    if not kustomizations:
        return _Builds([], [], [], set(), "")
    names = {path: name for path, (_, name) in zip(absolute, found, strict=True)}
    index = {path: i for i, path in enumerate(absolute)}
    command = kustomize.engine()
    if command is None:
        unbuilt = [kustomize.closure(root)[0] for root in kustomize.roots(kustomizations)]
        declared = kustomize.variables(frozenset(os.path.dirname(os.path.abspath(k)) for k in kustomizations))
        _with_kustomize_vars(unbuilt, declared, absolute, found, results, validator, engines)
        return _Builds([], [], [], set(), "kustomizations judged file by file (neither kustomize nor kubectl on PATH)")
    shown = {os.path.dirname(os.path.abspath(name)): name for name in kustomizations}
    asked_kustomizations = {os.path.abspath(name) for name in asked}  # what their generators make is asked for
    gathered = _Gathered()
    consumed: set[str] = set()  # files a build judged: their own results give way
    used: set[str] = set()  # files some kustomization includes
    read: set[str] = set()  # the kustomization directories of what was built or taken as written
    remote = built_count = as_written = 0
    planned = []
    found_files = frozenset(index)  # they exist
    for root in kustomize.roots(kustomizations):
        directories, remote_bases = kustomize.closure(root)
        settings = kustomize.inherited(root, kustomizations)
        listed = None if remote_bases or settings else kustomize.as_written(root, found_files)
        if listed is not None:  # it lists files and changes nothing: judged as written, no build
            as_written += 1
            used.update(listed)
            read |= directories
        else:
            planned.append((root, directories, remote_bases, settings))
    read_before: dict[str, list[Document]] = {}
    judged_before: set[tuple[str, int, str, tuple[sources.Applied, ...]]] = set()
    to_judge: list[tuple[Document, Any, sources.Applied]] = []  # judged in worker processes when many
    # a base's `$(NAME)` that a kustomization including it declares in vars is kustomize's to replace
    declared = kustomize.variables(frozenset(os.path.dirname(os.path.abspath(k)) for k in kustomizations))
    builds: list[Any] = []
    if planned:
        from concurrent.futures import ThreadPoolExecutor  # only a run that builds pays for the import

        with ThreadPoolExecutor(max_workers=parallel.cpus()) as pool:  # each build waits on its engine
            builds = list(
                pool.map(
                    lambda plan: (
                        None if plan[2] else kustomize.build(plan[0], command, shown[plan[0]], read_before, plan[3])
                    ),
                    planned,
                )
            )
    for (root, directories, remote_bases, _), build in zip(planned, builds, strict=True):
        name = shown[root]
        if build is None:
            remote += 1
            if name not in asked:
                continue  # found around a file named alone: its own files were not asked about
            gathered.problems.append(
                Problem(
                    name,
                    1,
                    1,
                    "kustomize-remote",
                    Severity.INFO,
                    f"not built: {remote_bases[0]}; its files are judged one by one",
                    "validate the output of `kustomize build` where the network is allowed",
                )
            )
            continue
        if build.problem is not None:
            if name in asked:
                gathered.problems.append(build.problem)
            continue
        built_count += 1
        read |= directories
        kustomization_doc = load_file(os.path.join(root, os.path.basename(name)), name, kube=True)[0]
        flux = [each._replace(kustomize_vars=declared) for each in engines.get(os.path.abspath(name), []) if each.flux]
        each_applied = flux or [sources.Applied("kustomization", kustomize_vars=declared)]
        for data, source, doc in build.objects:
            consumed.add(source)
            where = doc or (kustomization_doc[0] if kustomization_doc else None)
            if where is None or (source and source not in names and source not in asked_kustomizations):
                continue  # a base outside the paths asked: judged where it is asked for
            same = (where.file, where.index, json.dumps(data, sort_keys=True, default=str), tuple(each_applied))
            if same in judged_before:
                continue  # a base several overlays build alike: judged once
            judged_before.add(same)
            to_judge += [(where, data, each) for each in each_applied]
    for judged_objects in parallel.map_in_order(
        partial(_judge_built, validator=validator), to_judge, parallel.workers(len(to_judge)), codec=_PLAIN_GATHERED
    ):
        gathered.problems += judged_objects.problems
        gathered.defined += judged_objects.defined
        gathered.deferred += judged_objects.deferred
    used |= consumed
    unbuilt = [plan[1] for plan, build in zip(planned, builds, strict=True) if build is None]
    _with_kustomize_vars(unbuilt, declared, absolute, found, results, validator, engines)
    for source in consumed & index.keys():
        i = index[source]
        results[i] = results[i]._replace(problems=[], enforced={}, deferred=[])
    known: dict[str, str | None] = {}
    unreferenced = {
        name
        for path, name in names.items()
        if path not in used and sources.kustomization_of(path, known) in read and not results[index[path]].not_manifest
    }
    problems = list({replace(p, about=""): p for p in gathered.problems}.values())
    how = " ".join(os.path.basename(part) for part in command)
    summary = f"{built_count} kustomization{'s' if built_count != 1 else ''} built with {how}"
    summary += f", {as_written} judged as written (they only list files)" if as_written else ""
    summary += f", {remote} not built (remote base or Helm chart)" if remote else ""
    summary += (
        f", {len(unreferenced)} file{'s' if len(unreferenced) != 1 else ''} no kustomization uses"
        if unreferenced
        else ""
    )
    return _Builds(
        problems, list(dict.fromkeys(gathered.defined)), list(dict.fromkeys(gathered.deferred)), unreferenced, summary
    )


def _judge_built(item: tuple[Document, Any, sources.Applied], validator: ManifestValidator) -> _Gathered:
    """One built object judged at the document it was written in."""
    gathered = _Gathered()
    gathered.document(*item[:2], validator, item[2])
    return gathered


def _gathered_to_plain(gathered: _Gathered) -> tuple[Any, ...]:
    return (
        [p.to_plain() for p in gathered.problems],
        gathered.defined,
        [(namespace, dataclasses.astuple(v), p.to_plain()) for namespace, v, p in gathered.deferred],
    )


def _gathered_from_plain(plain: Any) -> _Gathered:
    gathered = _Gathered()
    problems, defined, deferred = plain
    gathered.problems = [Problem.from_plain(p) for p in problems]
    gathered.defined = [tuple(d) for d in defined]
    gathered.deferred = [(namespace, pod_security.Violation(*v), Problem.from_plain(p)) for namespace, v, p in deferred]
    return gathered


# What judging a built object gives, as a worker sends it: its findings, Namespaces and deferred checks.
_PLAIN_GATHERED: parallel.Codec[_Gathered] = parallel.Codec(_gathered_to_plain, _gathered_from_plain)


def _with_kustomize_vars(
    unbuilt: list[frozenset[str]],
    declared: frozenset[str],
    absolute: list[str],
    found: list[tuple[str, str]],
    results: list[FileResult],
    validator: ManifestValidator,
    engines: dict[str, list[sources.Applied]],
) -> None:
    """Judge again the files of kustomizations that were not built (each given by the
    kustomization directories its build would read) with the `vars` kustomizations declare
    (declared): kustomize would replace `$(NAME)`, so those values are opaque. Files a Flux
    Kustomization applies keep its judgement."""
    known: dict[str, str | None] = {}
    todo: list[tuple[int, sources.Applied]] = []
    applied = sources.Applied("kustomization", kustomize_vars=declared)
    for directories in unbuilt if declared else []:
        todo += [
            (i, applied)
            for i, path in enumerate(absolute)
            if path not in engines and sources.kustomization_of(path, known) in directories
        ]
    for (i, _), result in zip(todo, _judged_applied(todo, found, validator), strict=True):
        results[i] = result


def _judged_applied(
    todo: list[tuple[int, sources.Applied]], found: list[tuple[str, str]], validator: ManifestValidator
) -> list[FileResult]:
    """Each (file index, what applies) judged, in worker processes when there are many."""
    judge = partial(_judge_applied, found=found, validator=validator)
    codec: parallel.Codec[FileResult] = parallel.Codec(_result_to_plain, _result_from_plain)
    return parallel.map_in_order(judge, todo, parallel.workers(len(todo)), codec=codec)


def _judge_applied(
    item: tuple[int, sources.Applied], found: list[tuple[str, str]], validator: ManifestValidator
) -> FileResult:
    file = found[item[0]]
    return _refused_by_kustomize(file[0], _validate_file(file, validator, item[1]))


def _holder_data(file: tuple[str, str], kind: str, name: str) -> dict[str, str | None]:
    """The data of the ConfigMap or Secret called name in file, as Flux reads variables from
    it: a Secret's data decoded, stringData as written; a value SOPS encrypted is unknown (None)."""
    docs, _ = load_file(*file, kube=True)
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict) or data.get("kind") != kind or (data.get("metadata") or {}).get("name") != name:
            continue
        sops = sources.is_sops(data)
        values: dict[str, str | None] = {}
        for field_name in ("data", "stringData") if kind == "Secret" else ("data",):
            for key, value in (data.get(field_name) or {}).items():
                values[str(key)] = _readable(value, sops, encoded=field_name == "data" and kind == "Secret")
        return values
    return {}


def _readable(value: Any, sops: bool, encoded: bool) -> str | None:
    text = str(value)
    if sops and text.startswith("ENC["):
        return None
    if not encoded:
        return text
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except ValueError:
        return None


def _stamped(path: str, name: str) -> tuple[str, int, int]:
    """A catalog schema as the kept results know it: by name, size and modification time (the
    schemas of a large catalog are read only when a kind uses them)."""
    try:
        stat = os.stat(path)
    except OSError:
        return name, -1, -1
    return name, stat.st_size, stat.st_mtime_ns


class Validated(NamedTuple):
    """The findings no gen:ignore comment silences, how many it did, every file judged, and
    how many files were skipped as no manifest."""

    problems: list[Problem]
    silenced: int
    files: list[str]
    skipped: int = 0
    built: str = ""  # which kustomizations were built, and how


def _result_to_plain(result: FileResult) -> tuple[Any, ...]:
    return (
        [p.to_plain() for p in result.problems],
        result.enforced,
        [(namespace, dataclasses.astuple(v), p.to_plain()) for namespace, v, p in result.deferred],
        result.text,
        result.definitions,
        result.custom,
        result.not_manifest,
        result.flux,
        result.holders,
    )


def _result_from_plain(plain: Any) -> FileResult:
    problems, enforced, deferred, text, definitions, custom, not_manifest, flux, holders = plain
    return FileResult(
        [Problem.from_plain(p) for p in problems],
        dict(enforced),
        [(namespace, pod_security.Violation(*v), Problem.from_plain(p)) for namespace, v, p in deferred],
        text,
        list(definitions),
        set(custom),
        bool(not_manifest),
        tuple(flux),
        tuple(tuple(holder) for holder in holders),
    )


class Kept(Protocol):
    """What judging files may take from the run before: the cache layer
    (`generator.cache.validated`) answers, and decides what is the same; the stage only asks."""

    def results(self, files: list[tuple[str, str]]) -> tuple[list[Any], list[str | None]]:
        """Each file's result as plain values where it was judged before with the same name
        and content (else None), and each file's key where it was read to look."""

    def keep(self, key: str, plain: Any) -> None:
        """A file judged this run."""

    def save(self) -> None:
        """Keep what this run judged for the next."""


KeptFor = Callable[[list[FsPath], "ManifestValidator", list[Any]], "Kept | None"]


# A judged file as a worker sends it: its result, the result as plain values when it is to be
# kept, and the file's key (read where the file is read when this process has not read it for
# a lookup, so a run with nothing kept yet does not read every file twice in this process).
_Judged = tuple[FileResult, Any, "str | None"]


def _judge_file(item: tuple[tuple[str, str], str | None], validator: ManifestValidator, keep: bool) -> _Judged:
    file, key = item
    docs, problems = load_file(*file, kube=True)
    result = _judged_documents(docs, problems, validator, None)
    if not keep:
        return result, None, None
    # the key from the text just read; a file read without documents (empty, unreadable) is read again
    key = key or (gen_cache.text_key(file[1], docs[0].text) if docs else gen_cache.file_key(*file))
    return result, _result_to_plain(result), key


_PLAIN_JUDGED: parallel.Codec[_Judged] = parallel.Codec(
    lambda judged: (judged[1] if judged[1] is not None else _result_to_plain(judged[0]), judged[2]),
    lambda sent: (_result_from_plain(sent[0]), sent[0], sent[1]),
)


def _validate_files(
    files: list[tuple[str, str]], validator: ManifestValidator, kept: Kept | None = None
) -> list[FileResult]:
    """Each file's result, in order; with `kept`, a file judged before with the same name and
    content is taken from it, and what this run judged is kept for the next."""
    results: list[FileResult | None] = [None] * len(files)
    keys: list[str | None] = [None] * len(files)  # each file's key, once read for a lookup
    if kept is not None:
        plains, keys = kept.results(files)
        for i, (key, plain) in enumerate(zip(keys, plains, strict=True)):
            if key is None or plain is None:
                continue
            with contextlib.suppress(TypeError, ValueError, IndexError):  # an entry that does not read
                results[i] = _result_from_plain(plain)
                kept.keep(key, plain)
    todo = [i for i, result in enumerate(results) if result is None]
    processes = parallel.workers(len(todo))
    if processes > 1:
        for version in validator.versions:
            load_kubernetes_schemas(version)  # parsed once here, inherited by every worker
        if validator.definitions:
            validator.definitions.compile()
    judge = partial(_judge_file, validator=validator, keep=kept is not None)
    judged = parallel.map_in_order(judge, [(files[i], keys[i]) for i in todo], processes, codec=_PLAIN_JUDGED)
    for i, (result, plain, key) in zip(todo, judged, strict=True):
        results[i] = result
        if kept is not None and key is not None:
            kept.keep(key, plain)
    if kept is not None:
        kept.save()
    return [
        _refused_by_kustomize(file[0], result)
        for file, result in zip(files, results, strict=True)
        if result is not None
    ]
