"""What a render takes from its target's previous render: a policy's objects, and each
object's file text and findings, when nothing they are made from has changed.

A templated policy's objects are a function of its own document (the text of its file,
whose lines its findings name), the target's settings and overrides, what the render reads
of the target's other policies (`context.across`) and gen's own code (in the entry's name).
An object's text and findings are a function of the rendered object, what the links set on it
(`links.settle`) and what it is judged with: the versions, the declared scheduler plugins,
the namespaces' Pod Security levels and the CRDs. Each run keeps exactly what it rendered,
under the SHA-256 of those inputs; everything else is rendered and judged again. Manifests
policies, Namespaces and GitOps objects are always made anew (reading them is the work).
Beside a policy's objects it keeps what each one is (kind, namespace, name) and what the checks
across objects derived from it, so a later render answers them without unpacking the objects;
and the target's kustomization.yaml, under the files it lists.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from generator import cache
from generator.policies import context
from generator.policies.overrides import OverlaidDocument
from generator.policies.policy import Policy
from generator.policies.targets import Target, text_key
from generator.problems import Problem
from generator.render import templates
from generator.render.templates import Facts, KeptOutput, Manifest, PolicyOutput, facts_of, facts_read

_RENDERS = "renders"
_KEPT_TARGETS = 64  # targets (and gen builds) remembered, the least recently used going first:
# more than a repository has, or a run would evict the renders its next target reads

# One object as judged: what the links set on it, its file text and its findings as plain values.
_Judged = tuple[Any, str, list[Any]]
# What a policy's objects are kept with: each one's template and facts (as the render left
# them, before the links), its fragments and its findings as plain values.
_Summary = tuple[list[str], list[Facts], list[Any], list[Any]]
# A policy's entry: its output as marshal data, its objects as judged, its summary (None: kept
# without, by a run that found no render of the target before).
_Entry = tuple[bytes, list[_Judged | None], _Summary | None]


class Reuse:
    """One target's previous render, and what this render keeps for the next one."""

    @classmethod
    def of(cls, target: Target) -> Reuse | None:
        """The target's previous render; None when caching is off, or the target's settings
        hold a value marshal does not know."""
        if cache.directory(_RENDERS) is None:
            return None
        try:
            return cls(target)
        except ValueError:
            return None

    def __init__(self, target: Target) -> None:
        self._name = cache.target_name(target.name, target.policy.file, target.policy.directory)
        self._files: dict[str, bytes] = {}  # file -> its text's key, for text_key
        self._target = target.settings_key + self._file(target.policy)
        self._judged_with = ""
        self._keys: dict[int, str] = {}  # id(policy) -> its key
        self._made: dict[int, tuple[str, int]] = {}  # id(manifest) -> (its policy's key, its index)
        self._next: dict[str, _Entry] = {}
        self._listed: tuple[str, str] | None = None  # the target's kustomization.yaml: (its key, its text)

    @cached_property
    def _bundle(self) -> cache.Bundle:
        """key -> (the policy's output as marshal data, its objects as judged, what with, its
        summary), and the kustomization.yaml's text; read only when the target is rendered."""
        return cache.Bundle(_RENDERS, self._name, keep=_KEPT_TARGETS)

    @property
    def _previous(self) -> dict[str, Any]:
        return self._bundle.stored

    def _file(self, policy: Policy) -> bytes:
        """What names the text a policy was read from (an overridden policy's own file: the
        override's text is the target's)."""
        doc = policy.doc
        return text_key(doc.written if isinstance(doc, OverlaidDocument) else doc, self._files)

    def _key(self, policy: Policy, target: Target) -> str:
        key = self._keys.get(id(policy))
        if key is None:
            facts = (policy.kind, policy.name, policy.doc.file, policy.doc.index, context.across(policy, target))
            key = self._keys[id(policy)] = cache.key(self._target + self._file(policy) + cache.stable_bytes(facts))
        return key

    def rendered(self, policy: Policy, target: Target) -> PolicyOutput | KeptOutput | None:
        """The policy's objects as it rendered them last time, or None: kept packed, with what
        the checks across objects ask of each (fresh copies unpacked when first read), or
        unpacked now where the run before kept no facts of them."""
        key = self._key(policy, target)
        entry = self._previous.get(key)
        if entry is None:
            return None
        try:
            packed, _, _, summary = entry
            if summary is not None:
                object_templates, facts, fragments, found = summary
                if len(object_templates) == len(facts) and all(map(facts_read, facts)):
                    self._next[key] = (packed, [], summary)
                    return KeptOutput(
                        packed, object_templates, facts, fragments, [Problem.from_plain(p) for p in found]
                    )
            with cache.collector_paused():
                output = templates.unpack(packed)
        except (EOFError, ValueError, TypeError, IndexError, KeyError):  # an entry that does not read
            return None
        self.keep(policy, target, packed, output)
        return output

    def keep(self, policy: Policy, target: Target, packed: bytes, output: PolicyOutput) -> None:
        """A policy rendered this run (its output as marshal data, taken before the links
        change its objects); its objects' facts follow (`keep_facts`), unless the target was
        never rendered before (a fresh CI runner's cache is never read again: the next run
        keeps them)."""
        objects, fragments, found = output
        summary: _Summary | None = None
        if self._previous:
            summary = ([template for _, template, _ in objects], [], fragments, [p.to_plain() for p in found])
        self._next[self._key(policy, target)] = (packed, [], summary)

    def made(self, manifest: Manifest, policy: Policy, index: int) -> None:
        """The manifest is its policy's index-th object: where its judgment is kept."""
        key = self._keys[id(policy)]
        entry = self._next.get(key)
        if entry is not None:  # else not kept (a value marshal does not know)
            self._made[id(manifest)] = (key, index)
            entry[1].append(None)

    def keep_facts(self, manifest: Manifest) -> None:
        """What the checks across objects ask of a manifest rendered this run, as rendered."""
        made = self._made.get(id(manifest))
        summary = self._next[made[0]][2] if made is not None else None
        if made is not None and summary is not None and len(summary[1]) == made[1]:
            summary[1].append(facts_of(manifest))

    def judging_with(self, *inputs: Any) -> None:
        """What objects are judged with this run: a judgment made with anything else is not used."""
        try:
            self._judged_with = cache.key(cache.stable_bytes(inputs))
        except ValueError:  # a value marshal does not know (in a team's CRD): judge again
            self._judged_with = ""

    def judged(self, manifest: Manifest, settled: Any) -> tuple[str, list[Problem]] | None:
        """The object's text and findings from last time, if it is the same object: rendered
        from the same inputs, the links set the same on it, and judged with the same."""
        made = self._made.get(id(manifest))
        entry = self._previous.get(made[0]) if made is not None else None
        if made is None or entry is None or not self._judged_with:
            return None
        try:
            _, judged, judged_with, _ = entry
            before = judged[made[1]]
            if judged_with != self._judged_with or before[0] != settled or not isinstance(before[1], str):
                return None
            text, found = before[1], [Problem.from_plain(p) for p in before[2]]
        except (IndexError, TypeError, ValueError, KeyError):  # an entry that does not read
            return None
        self._next[made[0]][1][made[1]] = before
        return text, found

    def keep_judged(self, manifest: Manifest, settled: Any, text: str, found: list[Problem]) -> None:
        """An object judged this run."""
        made = self._made.get(id(manifest))
        if made is not None:
            key, index = made
            self._next[key][1][index] = (settled, text, [p.to_plain() for p in found])

    def listing(self, resources: list[str]) -> str | None:
        key = self._listing_key(resources)
        text = self._previous.get(key)
        if not isinstance(text, str):
            return None
        self._listed = (key, text)
        return text

    def keep_listing(self, resources: list[str], text: str) -> None:
        self._listed = (self._listing_key(resources), text)

    @staticmethod
    def _listing_key(resources: list[str]) -> str:
        return cache.key(b"kustomization.yaml\0" + cache.stable_bytes(resources))  # gen's code: in the bundle's name

    def save(self) -> None:
        """Keep this run's renders for the next run (only what this run rendered), writing
        the files of the bundle that changed."""
        self._bundle.kept = {  # an object not judged (no run leaves one so) is judged again next time
            key: (rendered, [] if None in judged else judged, self._judged_with, summary)
            for key, (rendered, judged, summary) in self._next.items()
        }
        if self._listed is not None:
            self._bundle.kept[self._listed[0]] = self._listed[1]
        self._bundle.save()
