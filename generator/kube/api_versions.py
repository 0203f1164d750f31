"""Which apiVersion of a kind each Kubernetes version serves.

Built-in APIs: derived from the schema data kubernetes-validate ships, one folder per minor
version (1.25 on). A kind is served by a version when that version's folder has its schema
with that exact group, version and kind. kube-scheduler's own configuration file is no API
object and has no such data: its served versions come from the scheduler's source.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from generator import cache as gen_cache
from generator.errors import GeneratorError

DEFAULT_VERSION = "1.35"  # what gen validates for when nothing names a version
SCHEDULER_CONFIG_KIND = "KubeSchedulerConfiguration"
SCHEDULER_CONFIG_GROUP = "kubescheduler.config.k8s.io"
# cmd/kube-scheduler/app/options/configfile.go: the versions each release decodes, as
# (first release, release that removed it): v1beta1 went in 1.23 (kubernetes#104782), v1beta2
# in 1.28 (#117649), v1beta3 in 1.29 (#119994); v1 is GA since 1.25.
SCHEDULER_CONFIG_VERSIONS: dict[str, tuple[tuple[int, int], tuple[int, int] | None]] = {
    "v1": ((1, 25), None),
    "v1beta3": ((1, 23), (1, 29)),
    "v1beta2": ((1, 22), (1, 28)),
    "v1beta1": ((1, 19), (1, 23)),
}

Version = tuple[int, int]


@cache
def parse_version(text: str) -> Version:
    """ "1.35" (or "1.35.2") -> (1, 35); cached: the rules ask it about the same few versions
    for every object."""
    try:
        major, minor = (int(part) for part in text.split(".")[:2])
    except ValueError as err:
        raise GeneratorError(f"invalid Kubernetes version {text!r}") from err
    return major, minor


def spell(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


@cache
def schema_root() -> Path:
    """kubernetes-validate's schema folder, found without importing the package (it imports jsonschema)."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise GeneratorError("kubernetes-validate is not installed: it provides the Kubernetes schemas")
    return Path(spec.submodule_search_locations[0]) / "kubernetes-json-schema"


@cache
def _folders() -> dict[Version, Path]:
    """Strict schema folder per minor version, oldest first."""
    found = {}
    for path in schema_root().iterdir():
        if path.name.startswith("v") and path.name.endswith("-local-strict"):
            found[parse_version(path.name[1:].split("-")[0])] = path
    return dict(sorted(found.items()))


def shipped() -> list[Version]:
    return list(_folders())


@cache
def folder(version: str) -> Path:
    """The schema folder for version: the newest shipped one not newer than it."""
    wanted = parse_version(version)
    known = shipped()
    usable = [v for v in known if v <= wanted]
    if not usable or wanted > known[-1]:
        raise GeneratorError(
            f"Kubernetes {version} is not supported; schemas exist for {', '.join(spell(v) for v in known)}"
        )
    return _folders()[usable[-1]]


def split_api(api: str) -> tuple[str, str]:
    """apiVersion -> (group, version); the core group is ""."""
    group, _, version = api.rpartition("/")
    return group, version


def schema_file_name(api: str, kind: str) -> str:
    """kubernetes-validate's file name: the group's first label only, so CRD groups can collide."""
    group, version = split_api(api)
    return f"{kind.lower()}-{group.split('.')[0]}-{version}.json" if group else f"{kind.lower()}-{version}.json"


@cache
def _schema_at(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def kind_schema(folder_path: Path, api: str, kind: str) -> Any:
    """The strict schema of exactly this group, version and kind in folder_path, or None."""
    schema = _schema_at(folder_path / schema_file_name(api, kind))
    if schema is None:
        return None
    group, version = split_api(api)
    wanted = {"group": group, "version": version, "kind": kind}
    return schema if wanted in schema.get("x-kubernetes-group-version-kind", []) else None


@cache
def definitions(version: str) -> Any:
    """The version's shared schema definitions, parsed once per process: they are large (1.5 MB
    of JSON for 1.35). gen's cache keeps them as marshal data, which reads in about 4 ms
    instead of 8-14 for every validation; its key names kubernetes-validate's version."""
    path = folder(version) / "_definitions.json"
    name = gen_cache.key(gen_cache.code() + str(path).encode())
    found = gen_cache.read("definitions", name)
    if found is None:
        found = json.loads(path.read_text(encoding="utf-8"))
        gen_cache.write("definitions", name, found)
    return found


_DEF_REF = "#/$defs/"


def kind_definitions(version: str, api: str, kind: str) -> Any:
    """The version's definitions one kind's schema reaches, and nothing else: what validating
    that kind needs (a Deployment reaches 60 of the 735 definitions of 1.35), without the
    descriptions no validator reads. gen's cache keeps them per kind, so a run that validates
    objects of a few kinds never reads the whole 1.5 MB."""
    path = folder(version) / "_definitions.json"
    name = gen_cache.key(gen_cache.code() + f"{path}\0{api}\0{kind}".encode())
    found = gen_cache.read("kind-definitions", name)
    if found is None:
        found = _reached(definitions(version), kind_schema(folder(version), api, kind))
        gen_cache.write("kind-definitions", name, found)
    return found


def _reached(everything: Any, schema: Any) -> dict[str, Any]:
    defs = everything.get("$defs", {})
    kept: dict[str, Any] = {}
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and _DEF_REF in ref:
                name = ref.split(_DEF_REF, 1)[1]
                if name not in kept and name in defs:
                    kept[name] = _undescribed(defs[name])
                    todo.append(kept[name])
            todo += [value for key, value in node.items() if key != "$ref"]
        elif isinstance(node, list):
            todo += node
    return {**{k: v for k, v in everything.items() if k != "$defs"}, "$defs": dict(sorted(kept.items()))}


def _undescribed(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _undescribed(value) for key, value in schema.items() if key != "description"}
    if isinstance(schema, list):
        return [_undescribed(value) for value in schema]
    return schema


@cache
def _builtin_groups(version: str) -> frozenset[str]:
    """Every group the version's data names; its DeleteOptions lists the groups of old versions too."""
    return frozenset(
        gvk["group"]
        for schema in definitions(version).get("$defs", {}).values()
        if isinstance(schema, dict)
        for gvk in schema.get("x-kubernetes-group-version-kind", [])
    )


def is_builtin_group(version: str, group: str) -> bool:
    """Kubernetes' own API groups; a CRD's group always holds a dot, so dotless groups are too."""
    return "." not in group or group in _builtin_groups(version)


@cache
def _type_names() -> frozenset[str]:
    """The names (lower case) of every type the shipped versions define, kinds among them."""
    return frozenset(path.name.split("-")[0] for root in _folders().values() for path in root.glob("*-*.json"))


def has_kind(kind: str) -> bool:
    """Whether some Kubernetes version gen knows has a type called kind, in any group."""
    return kind.lower() in _type_names()


@dataclass(frozen=True)
class NotServed:
    """Why a version refuses an apiVersion of a kind, and what to use instead."""

    message: str
    hint: str


@cache
def not_served(version: str, api: str, kind: str) -> NotServed | None:
    """NotServed when version refuses this built-in apiVersion of kind; None when it serves it,
    or when the kind belongs to no built-in group (a CRD: gen cannot know)."""
    group, _ = split_api(api)
    if group == SCHEDULER_CONFIG_GROUP and kind == SCHEDULER_CONFIG_KIND:
        return _scheduler_config(version, api)
    if not is_builtin_group(version, group) or kind in _CLIENT_SIDE_KINDS:
        return None
    target = parse_version(version)
    served = [v for v in shipped() if kind_schema(_folders()[v], api, kind) is not None]
    if target in served or (served and served[0] <= target <= served[-1]):
        return None
    instead = replacement(version, api, kind)
    hint = f"use {instead}" if instead else f"Kubernetes {spell(target)} has no {kind} in any API group"
    if served and target < served[0]:
        return NotServed(f"{api} {kind} is not served yet: Kubernetes {spell(served[0])} adds it", hint)
    if served:
        removed = shipped()[shipped().index(served[-1]) + 1]
        return NotServed(f"{api} {kind} is no longer served: Kubernetes {spell(removed)} removed it", hint)
    if kind in REMOVED_KINDS:
        gone, instead_text = REMOVED_KINDS[kind]
        return NotServed(f"{kind} was removed in Kubernetes {gone}, and no API replaces it", instead_text)
    if instead:
        return NotServed(f"{api} {kind} is not served by Kubernetes {spell(shipped()[0])} or later", hint)
    return NotServed(f"Kubernetes serves no kind {kind} in {api or 'v1'}", "check the kind's spelling")


# Kinds removed before the versions gen ships schemas for, with nothing in their place.
REMOVED_KINDS = {
    "PodSecurityPolicy": (
        "1.25",
        "Pod Security admission replaces it: label each Namespace pod-security.kubernetes.io/enforce: <level>",
    ),
}


# Beta APIs of the versions gen supports that are new since 1.24 and so off by default
# (KEP-3136): served only where the cluster enables them. Alpha APIs are always off.
DISABLED_BETAS = frozenset(
    {
        "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicyBinding",
        "certificates.k8s.io/v1beta1/ClusterTrustBundle",
        "coordination.k8s.io/v1beta1/LeaseCandidate",
        "networking.k8s.io/v1beta1/IPAddress",
        "networking.k8s.io/v1beta1/ServiceCIDR",
        "storage.k8s.io/v1beta1/VolumeAttributesClass",
    }
)


def disabled_by_default(version: str, api: str, kind: str) -> bool:
    """Whether kube-apiserver serves api only when the cluster enables it (--runtime-config)."""
    group, api_version = split_api(api)
    if not group or ("." in group and group not in _builtin_groups(version)):
        return False  # a custom resource's versions are its CRD's business
    return "alpha" in api_version or f"{api}/{kind}" in DISABLED_BETAS


def removals() -> list[tuple[str, str, Version, Version]]:
    """(apiVersion, kind, last version serving it, version that removed it) for every built-in
    kind the shipped data shows going away: the table docs/api-removals.md lists."""
    seen: dict[tuple[str, str], list[Version]] = {}
    for version, path in _folders().items():
        for file in path.glob("*.json"):
            for gvk in (_schema_at(file) or {}).get("x-kubernetes-group-version-kind", []):
                api = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
                if schema_file_name(api, gvk["kind"]) == file.name:
                    seen.setdefault((api, gvk["kind"]), []).append(version)
    versions = shipped()
    return sorted(
        (api, kind, served[-1], versions[versions.index(served[-1]) + 1])
        for (api, kind), served in seen.items()
        if served[-1] != versions[-1] and not kind.endswith("List")  # lists are read, never applied
    )


# Kinds kubectl unpacks on the client side (`kind: List` from `kubectl get -o yaml`).
_CLIENT_SIDE_KINDS = frozenset({"List"})
_VERSION_PARTS = re.compile(r"v([0-9]+)(?:(alpha|beta)([0-9]*))?\Z")


def _rank(version: str) -> tuple[int, int, int]:
    """Kubernetes' version priority: GA before beta before alpha, newer before older."""
    parts = _VERSION_PARTS.match(version)
    if parts is None:
        return 3, 0, 0
    major, level, minor = parts.groups()
    return {None: 0, "beta": 1, "alpha": 2}[level], -int(major), -int(minor or 0)


def replacement(version: str, api: str, kind: str) -> str | None:
    """The apiVersion to use for kind in version: its own group's most stable one served, else another group's."""
    group, _ = split_api(api)
    base = folder(version)
    candidates = []
    for path in base.glob(f"{kind.lower()}-*.json"):
        schema = _schema_at(path)
        for gvk in schema.get("x-kubernetes-group-version-kind", []) if schema else []:
            if gvk["kind"] == kind:
                other = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
                candidates.append((gvk["group"] != group, _rank(gvk["version"]), other))
    return min(candidates)[2] if candidates else None


def _scheduler_config(version: str, api: str) -> NotServed | None:
    _, config_version = split_api(api)
    target = parse_version(version)
    span = SCHEDULER_CONFIG_VERSIONS.get(config_version)
    hint = f"use {SCHEDULER_CONFIG_GROUP}/v1"
    if span is None:
        return NotServed(f"kube-scheduler reads no configuration {api}", hint)
    first, removed = span
    if removed is not None and target >= removed:
        return NotServed(f"kube-scheduler no longer reads {api}: Kubernetes {spell(removed)} removed it", hint)
    if target < first:
        return NotServed(f"kube-scheduler does not read {api} yet: Kubernetes {spell(first)} adds it", hint)
    return None
