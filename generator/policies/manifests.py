"""A Manifests policy's objects: the files its patterns claim, and the objects written inline.

Files are read as Kubernetes reads YAML (sigs.k8s.io/yaml), and every object keeps the
document it was written in, so each finding points at its own file and line.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from generator import schemas
from generator.files import walk
from generator.kube import names, scope
from generator.kube.api_versions import split_api
from generator.kube.scope import BUILD_TOOL_GROUPS, is_definition
from generator.policies.policy import Policy
from generator.problems import Problem, Severity
from generator.yamlio.load import Document, load_file

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class RawObject:
    """One object as the team wrote it: `at` is its path in `doc` (() for a document of its own)."""

    doc: Document
    at: Path_
    data: dict[str, Any]

    def problem(self, path: Path_, rule: str, message: str, **kw: Any) -> Problem:
        return self.doc.problem((*self.at, *path), rule, message, **kw)


def _matches(directory: str, pattern: str) -> list[str]:
    """The files a pattern names, relative to directory: a file, a glob, or every YAML file
    below a directory; sorted, so the output never depends on the file system's order."""
    full = os.path.join(directory, pattern)
    hits = sorted(glob.glob(full, recursive=True)) if glob.has_magic(pattern) else [full]
    found = []
    for hit in hits:
        if os.path.isdir(hit):
            found += [os.path.join(hit, *rel) for rel in walk(hit)]
        elif os.path.isfile(hit):
            found.append(hit)
    return found


def _claims(policy: Policy) -> Iterator[tuple[int, str, list[str]]]:
    for i, pattern in enumerate(policy.spec["files"]):
        yield i, pattern, [] if os.path.isabs(pattern) else _matches(policy.directory, pattern)


def claimed_paths(policies: Iterable[Policy]) -> set[str]:
    """The real paths of every file the Manifests policies claim: they are not policies."""
    return {
        os.path.realpath(path)
        for policy in policies
        if policy.kind == "Manifests"
        for _, _, paths in _claims(policy)
        for path in paths
    }


def claimed_names(policy: Policy) -> set[str]:
    """The files a Manifests policy claims, named as its findings name them."""
    return {_display(policy, path) for _, _, paths in _claims(policy) for path in paths}


def _display(policy: Policy, path: str) -> str:
    """A claimed file named the way its policy is: from the same base, so a report reads alike."""
    return os.path.normpath(os.path.join(os.path.dirname(policy.file), os.path.relpath(path, policy.directory)))


def load(policy: Policy) -> tuple[list[RawObject], list[Problem]]:
    """The policy's objects in order (files, then inline) and what is wrong with them; read
    once per policy, however many targets render it."""
    if policy.loaded is None:
        policy.loaded = _load(policy)
    return policy.loaded


def _load(policy: Policy) -> tuple[list[RawObject], list[Problem]]:
    objects: list[RawObject] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for i, pattern, paths in _claims(policy):
        if os.path.isabs(pattern):
            problems.append(
                policy.problem(
                    ("files", i),
                    "manifests-file",
                    f"{pattern!r} is an absolute path: the repository would render only on this machine",
                    hint="write the path relative to this policy file",
                )
            )
            continue
        if not paths:
            problems.append(
                policy.problem(
                    ("files", i),
                    "manifests-file",
                    f"{pattern!r} matches no file",
                    hint=f"paths are relative to the directory of {policy.file}",
                )
            )
        for path in paths:
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            docs, found = load_file(path, _display(policy, path), kube=True)
            problems += found
            objects += [RawObject(doc, (), doc.data) for doc in docs]
    for i, data in enumerate(policy.spec["objects"]):
        objects.append(RawObject(policy.doc, ("spec", "objects", i), data))
    kept = []
    for obj in objects:
        found = list(_object_problems(obj, policy))
        problems += found
        if not any(p.severity == Severity.ERROR for p in found):
            kept.append(obj)
    return kept, problems


def _object_problems(obj: RawObject, policy: Policy) -> Iterator[Problem]:
    data = obj.data
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("apiVersion"), str)
        or not isinstance(data.get("kind"), str)
    ):
        yield obj.problem(
            (),
            "manifests-object",
            "not a Kubernetes object: apiVersion and kind are required strings",
            hint="every document of a claimed file must be one Kubernetes object",
        )
        return
    if data["apiVersion"] == schemas.POLICY_API_VERSION:
        yield obj.problem(
            ("apiVersion",),
            "manifests-object",
            f"a gen policy in a file Manifests {policy.name!r} claims: it would be read as a Kubernetes object",
            hint="keep policies out of the files spec.files matches",
        )
        return
    if data["apiVersion"].split("/")[0] in BUILD_TOOL_GROUPS:
        yield obj.problem(
            ("kind",),
            "manifests-object",
            f"a {data['kind']} is kustomize's build file, not an object to apply",
            hint="point files at the resources it lists (or at their directory, without the kustomization)",
        )
        return
    meta = data.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        yield obj.problem(
            ("metadata",),
            "manifests-object",
            "the object has no metadata.name: gen writes, owns and prunes objects by name",
            hint="generateName works only with kubectl create, never with a GitOps sync; name the object",
        )
        return
    if data["kind"] == "Secret" and data["apiVersion"] == "v1":
        for key in ("data", "stringData"):
            if data.get(key):
                yield obj.problem(
                    (key,),
                    "manifests-secret",
                    "Secret data in Git is readable by everyone who can read the repository; gen never writes it",
                    hint="provision the Secret with a secret manager (an ExternalSecret or a SealedSecret is fine)",
                    key=True,
                )


def cluster_kinds(policies: Iterable[Policy]) -> frozenset[tuple[str, str]]:
    """The custom kinds (group, kind) the CRDs among these policies' objects make cluster-scoped."""
    return frozenset(
        (str(spec.get("group")), str((spec.get("names") or {}).get("kind")))
        for policy in policies
        for obj in load(policy)[0]
        if is_definition(obj.data)
        and isinstance(spec := obj.data.get("spec"), dict)
        and spec.get("scope") == "Cluster"
        and isinstance(spec.get("names"), dict)
    )


def _cluster_scoped(data: dict[str, Any], custom: frozenset[tuple[str, str]]) -> bool:
    return (
        scope.cluster_scoped(data["apiVersion"], data["kind"])
        or (
            split_api(data["apiVersion"])[0],
            data["kind"],
        )
        in custom
    )


def namespace_problems(policy: Policy, custom: frozenset[tuple[str, str]]) -> Iterator[Problem]:
    """A namespaced object that names no namespace, where the policy gives none either; custom
    are the cluster-scoped kinds the target's CRDs define."""
    if "namespace" in policy.spec:
        return
    for obj in load(policy)[0]:
        meta = obj.data["metadata"]
        if "namespace" not in meta and not _cluster_scoped(obj.data, custom):
            yield obj.problem(
                ("metadata",),
                "manifests-namespace",
                f"{obj.data['kind']} {meta['name']!r} names no namespace: it lands in whichever one the sync "
                "defaults to",
                severity=Severity.WARNING,
                hint="set metadata.namespace, or spec.namespace on the Manifests policy",
            )


def placed(obj: RawObject, policy: Policy, custom: frozenset[tuple[str, str]]) -> dict[str, Any]:
    """A copy of the object with the policy's namespace where it names none and may hold one;
    custom are the cluster-scoped kinds the target's CRDs define."""
    data = schemas.plain_copy(obj.data)
    namespace = policy.spec.get("namespace")
    meta = data["metadata"]
    if namespace is not None and "namespace" not in meta and not _cluster_scoped(data, custom):
        meta["namespace"] = namespace
    return data


def namespaces_used(policy: Policy, custom: frozenset[tuple[str, str]]) -> set[str]:
    """The namespaces the policy's namespaced objects live in (as placed: the policy's namespace
    where an object names none); custom are the cluster-scoped kinds the target's CRDs define.
    A name no namespace can have is left to the object's own finding."""
    used = set()
    for obj in load(policy)[0]:
        if _cluster_scoped(obj.data, custom):
            continue
        namespace = obj.data["metadata"].get("namespace", policy.spec.get("namespace"))
        if isinstance(namespace, str) and names.dns1123_label(namespace) is None:
            used.add(namespace)
    return used


def namespaces_brought(policies: Iterable[Policy]) -> dict[str, RawObject]:
    """The Namespace objects these Manifests policies bring, by name."""
    return {
        str(obj.data["metadata"]["name"]): obj
        for policy in policies
        for obj in load(policy)[0]
        if obj.data["kind"] == "Namespace" and split_api(obj.data["apiVersion"])[0] == ""
    }
