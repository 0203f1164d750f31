"""Per-target overrides: an RFC 7386 merge patch on a policy's spec, for one target only.

The merged policy is checked as if it had been written so. Its document answers "where is
this?" from two files: a value the override set is found at the override's line in the
Target file, everything else where the policy wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
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


def _merged_into(patch: Any, path: Path_) -> dict[str, Any] | None:
    """The part of the patch merged into the mapping at path, when the patch merged into it
    (rather than replacing it)."""
    node = patch
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) and node else None


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
    target: str = ""  # the target whose override this is

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
        targets = (self.target,) if self.target else ()
        if path[:1] == ("spec",) and _overridden(self.patch, path[1:]):
            found = self.override.problem((*self.at, *path[1:]), rule, message, severity=severity, hint=hint, key=key)
            return replace(found, targets=targets)
        merged = _merged_into(self.patch, path[1:]) if path[:1] == ("spec",) else None
        if merged is not None:  # a mapping the override merged into: the merge is the likely cause
            under = _at(self.written.data, path)  # the policy's value there: a mapping, or what the merge replaced
            kept = sorted(set(under) - set(merged)) if isinstance(under, dict) else []
            spelled = ".".join(map(str, path[1:]))
            merge = (
                f"the override merges into spec.{spelled} (RFC 7386), which keeps {', '.join(kept)} from the policy: "
                f"write {kept[0]}: null in the override to remove it"
                if kept
                else f"the override merges into spec.{spelled} (RFC 7386)"
            )
            first = next(iter(merged))
            found = self.override.problem(
                (*self.at, *path[1:], first),
                rule,
                message,
                severity=severity,
                hint=f"{hint}; {merge}" if hint else merge,
                key=True,
            )
            return replace(found, targets=targets)
        return self.written.problem(path, rule, message, severity=severity, hint=hint, key=key)


def _at(data: Any, path: Path_) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def overlaid(
    written: Document, override: Document, at: Path_, patch: dict[str, Any], target: str = ""
) -> OverlaidDocument:
    """The document of written with target's patch merged into its spec."""
    data = dict(written.data)
    data["spec"] = merge_patch(data.get("spec") or {}, patch)
    return OverlaidDocument(
        written.file, written.index, data, written=written, override=override, at=at, patch=patch, target=target
    )
