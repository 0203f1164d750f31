"""Targets: which policies render into which directory, for which Kubernetes version."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from generator import cache
from generator.gitops import Engines
from generator.kube import api_versions
from generator.kube.api_versions import DEFAULT_VERSION
from generator.layout import GITOPS_DIR
from generator.policies import manifests, overrides
from generator.policies.policy import Policy, build_policy
from generator.problems import Problem, Severity
from generator.yamlio.load import Document, SourceMap

DEFAULT_TARGET = "default"


@dataclass
class Target:
    name: str
    kubernetes_version: str
    upgrade_to: str | None
    output_dir: str
    match_labels: dict[str, str]
    common_labels: dict[str, str]
    create_namespaces: bool
    gitops: dict[str, Any]
    gpu_labels: str | dict[str, str] | None
    policy: Policy
    pod_labels: dict[str, str] = field(default_factory=dict)  # on every workload's Pod template
    pod_security: dict[str, str] = field(default_factory=dict)  # namespace -> level it enforces
    policies: list[Policy] = field(default_factory=list)
    _by_kind: tuple[int, dict[str, tuple[Policy, ...]]] = field(default=(-1, {}), repr=False, compare=False)

    @property
    def versions(self) -> tuple[str, ...]:
        """The versions its output is validated for: the cluster's, and the next one if set."""
        return (self.kubernetes_version, self.upgrade_to) if self.upgrade_to else (self.kubernetes_version,)

    @cached_property
    def settings_key(self) -> bytes:
        """Its settings (everything but its policies) as a cache key's bytes; ValueError for a
        value marshal does not know."""
        settings = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for own in ("policy", "policies", "_by_kind"):
            del settings[own]
        return cache.stable_bytes(sorted(settings.items()))

    @cached_property
    def engines(self) -> Engines:
        """The GitOps engines its Application / Kustomization sync it with."""
        return Engines(self.gitops)

    @cached_property
    def made_from(self) -> bytes:
        """What a target's checks and render read, as a cache key's bytes (gen's code aside): its
        settings, its Target file (overrides included), each policy's kind, name, place and file,
        and what its Manifests policies read from the files they claim. ValueError for a value
        marshal does not know."""
        texts: dict[str, bytes] = {}
        parts = [self.settings_key, text_key(self.policy.doc, texts)]
        for policy in self.policies:
            doc = policy.doc
            written = doc.written if isinstance(doc, overrides.OverlaidDocument) else doc
            parts += [cache.stable_bytes((policy.kind, policy.name, doc.file, doc.index)), text_key(written, texts)]
            if policy.kind == "Manifests":  # its objects, and what is wrong with the files that hold none
                objects, problems = manifests.load(policy)
                parts += [text_key(raw.doc, texts) for raw in objects if raw.doc is not doc]
                parts.append(cache.stable_bytes([p.to_plain() for p in problems]))
        return hashlib.sha256(b"\0".join(parts)).digest()

    def of_kind(self, kind: str) -> tuple[Policy, ...]:
        """The target's policies of one kind; indexed once, since rules ask per policy (a
        tuple, not a copy: a copy per policy made a large target's render grow quadratically)."""
        count, index = self._by_kind
        if count != len(self.policies):
            grouped: dict[str, list[Policy]] = {}
            for policy in self.policies:
                grouped.setdefault(policy.kind, []).append(policy)
            index = {kind: tuple(found) for kind, found in grouped.items()}
            self._by_kind = (len(self.policies), index)
        return index.get(kind, ())


def text_key(doc: Document, seen: dict[str, bytes]) -> bytes:
    """What names a document's file and text in a cache key: the key loading read the file
    under, else the SHA-256 of its text (worked out once per file, in seen)."""
    if doc.digest:
        return doc.digest.encode()
    if doc.file not in seen:
        seen[doc.file] = hashlib.sha256(doc.text.encode()).digest()
    return seen[doc.file]


def _implicit_policy() -> Policy:
    doc = Document("<implicit>", 0, {}, SourceMap())
    return Policy("Target", DEFAULT_TARGET, {}, {}, doc)


def resolve_targets(
    policies: list[Policy], only: tuple[str, ...] = (), broken: frozenset[tuple[str, str]] = frozenset()
) -> tuple[list[Target], list[Problem]]:
    """Targets in name order, each with the non-Target policies its selector matches."""
    declared = [p for p in policies if p.kind == "Target"] or [_implicit_policy()]
    others = [p for p in policies if p.kind != "Target"]
    problems: list[Problem] = []
    targets: list[Target] = []
    dirs: dict[str, Policy] = {}
    selected: set[int] = set()  # id() of every policy some target selects
    for tp in sorted(declared, key=lambda p: p.name):
        spec = tp.spec
        target = Target(
            name=tp.name,
            kubernetes_version=spec.get("kubernetesVersion", DEFAULT_VERSION),
            upgrade_to=spec.get("upgradeTo"),
            output_dir=spec.get("outputDir", tp.name),
            match_labels=spec.get("selector", {}).get("matchLabels", {}),
            common_labels=spec.get("commonLabels", {}),
            create_namespaces=spec.get("createNamespaces", True),
            gitops=spec.get("gitops", {}),
            gpu_labels=spec.get("gpuLabels"),
            policy=tp,
            pod_labels=spec.get("podLabels", {}),
            pod_security={ns: str(v.get("podSecurity", "restricted")) for ns, v in spec.get("namespaces", {}).items()},
        )
        target.policies = _selected(target, others)
        selected.update(map(id, target.policies))
        problems.extend(_apply_overrides(target, others, broken))
        clash = _dir_clash(target.output_dir, {GITOPS_DIR: tp, **dirs})
        if clash is not None:
            problems.append(
                tp.problem(
                    ("outputDir",),
                    "target-output-dir",
                    f"outputDir {target.output_dir!r} overlaps target {clash.name!r}",
                    hint="give every target its own directory",
                )
            )
        dirs[target.output_dir] = tp
        problems.extend(_version_problems(target))
        targets.append(target)
    problems.extend(_unselected(others, targets, selected))
    if only:
        known = {t.name for t in targets}
        missing = [n for n in only if n not in known]
        if missing:
            from generator.errors import GeneratorError

            raise GeneratorError(f"unknown target(s): {', '.join(missing)}; known: {', '.join(sorted(known))}")
        targets = [t for t in targets if t.name in only]
    return targets, problems


def _selector(target: Target) -> str:
    """A target's selector as a person writes it: `policies labelled env=prod`."""
    labels = ", ".join(f"{k}={v}" for k, v in sorted(target.match_labels.items()))
    return f"policies labelled {labels}" if labels else "every policy"


def _selected(target: Target, policies: list[Policy]) -> list[Policy]:
    """The policies labelled with every one of the target's matchLabels (labels are strings,
    so a subset of the items is exactly that)."""
    wanted = target.match_labels.items()
    return [policy for policy in policies if wanted <= policy.labels.items()]


def _unselected(policies: list[Policy], targets: list[Target], selected: set[int]) -> Iterator[Problem]:
    """Nothing vanishes silently: a policy no target renders is said so, once."""
    if not targets or targets[0].policy.file == "<implicit>":
        return
    for policy in policies:
        if id(policy) not in selected:
            selectors = "; ".join(f"{t.name} selects {_selector(t)}" for t in targets)
            yield policy.doc.problem(
                ("metadata",),
                "policy-unselected",
                f"no Target selects {policy.kind} {policy.name!r}: it is not rendered",
                severity=Severity.WARNING,
                hint=f"{selectors}; give the policy matching metadata.labels, or delete it",
                key=True,
            )


def _apply_overrides(target: Target, policies: list[Policy], broken: frozenset[tuple[str, str]]) -> Iterator[Problem]:
    """The target's overrides merged into its policies: each overridden policy is rebuilt
    (schema, defaults) as if written so, for this target alone."""
    index = {(p.kind, p.name): i for i, p in enumerate(target.policies)}
    done: dict[tuple[str, str], int] = {}
    for i, override in enumerate(target.policy.spec.get("overrides", [])):
        key = (override["kind"], override["name"])
        at = ("overrides", i)
        if key in done:
            yield target.policy.problem(
                (*at, "name"),
                "target-override",
                f"{key[0]} {key[1]!r} is already overridden at overrides[{done[key]}]",
                hint="merge the two overrides into one",
            )
            continue
        done[key] = i
        if key in broken:
            continue  # it failed to load: its own findings say why
        if key not in index:
            exists = any((p.kind, p.name) == key for p in policies)
            yield target.policy.problem(
                (*at, "name"),
                "target-override",
                f"target {target.name!r} does not select {key[0]} {key[1]!r}"
                + ("" if exists else ": there is no such policy"),
                hint=f"the target selects {_selector(target)}"
                if exists
                else "overrides name a policy by kind and metadata.name",
            )
            continue
        written = target.policies[index[key]]
        doc = overrides.overlaid(written.doc, target.policy.doc, ("spec", *at, "spec"), override["spec"], target.name)
        merged, found = build_policy(doc)
        yield from found
        if merged is not None:
            merged.directory = written.directory
            target.policies[index[key]] = merged


def _version_problems(target: Target) -> Iterator[Problem]:
    """Versions gen has Kubernetes' schemas for; an upgrade goes forward."""
    known = api_versions.shipped()
    for key, version in (("kubernetesVersion", target.kubernetes_version), ("upgradeTo", target.upgrade_to)):
        if version is not None and api_versions.parse_version(version) not in known:
            yield target.policy.problem(
                (key,),
                "target-version",
                f"gen has no Kubernetes {version} schemas to validate the output with",
                hint=f"one of {api_versions.spell(known[0])} to {api_versions.spell(known[-1])}",
            )
    if target.upgrade_to and api_versions.parse_version(target.upgrade_to) <= api_versions.parse_version(
        target.kubernetes_version
    ):
        yield target.policy.problem(
            ("upgradeTo",),
            "target-version",
            f"upgradeTo {target.upgrade_to} is not newer than kubernetesVersion {target.kubernetes_version}",
            hint="name the version the cluster upgrades to next, or drop upgradeTo",
        )


def _dir_clash(new: str, dirs: dict[str, Policy]) -> Policy | None:
    for existing, policy in dirs.items():
        if new == existing or new.startswith(existing + "/") or existing.startswith(new + "/"):
            return policy
    return None
