"""Per-target overrides: an RFC 7386 merge patch on a policy's spec, for one target only.

The merged policy is checked as if it had been written so. Its document answers "where is
this?" from two files: a value the override set is found at the override's line in the
Target file, everything else where the policy wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.problems import Problem, Severity
from generator.yamlio.load import Document, SourceMap

Path_ = tuple[str | int, ...]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: mappings merge key by key, null removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def _overridden(patch: Any, path: Path_) -> bool:
    """Whether the patch set the value at path (relative to spec), or one that holds it."""
    node = patch
    for part in path:
        if not isinstance(node, dict):
            return True
        if part not in node:
            return False
        node = node[part]
    return not isinstance(node, dict)


@dataclass
class OverlaidDocument(Document):
    """A policy document with a target's override merged into its spec."""

    written: Document = field(default_factory=lambda: Document("", 0, None, SourceMap()))
    override: Document = field(default_factory=lambda: Document("", 0, None, SourceMap()))
    at: Path_ = ()  # where the override's spec is in its document
    patch: Any = None

    @property
    def text(self) -> str:
        return self.written.text

    @property
    def source(self) -> SourceMap:
        return self.written.source

    def problem(
        self,
        path: Path_,
        rule: str,
        message: str,
        *,
        severity: Severity = Severity.ERROR,
        hint: str = "",
        key: bool = False,
    ) -> Problem:
        if path[:1] == ("spec",) and _overridden(self.patch, path[1:]):
            return self.override.problem((*self.at, *path[1:]), rule, message, severity=severity, hint=hint, key=key)
        return self.written.problem(path, rule, message, severity=severity, hint=hint, key=key)


def overlaid(written: Document, override: Document, at: Path_, patch: dict[str, Any]) -> OverlaidDocument:
    """The document of written with patch merged into its spec."""
    data = dict(written.data)
    data["spec"] = merge_patch(data.get("spec") or {}, patch)
    return OverlaidDocument(written.file, written.index, data, written=written, override=override, at=at, patch=patch)
