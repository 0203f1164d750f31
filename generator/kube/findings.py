"""What every kube-apiserver rule returns: a finding at a JSON path of the object it judges."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from generator.problems import Severity
from generator.schema_messages import shown

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    path: Path
    rule: str
    severity: Severity
    message: str
    hint: str = ""
    at_key: bool = False  # located at the key of path (an unknown field), not at its value


def error_at(path: Path, rule: str, message: str, hint: str = "") -> Finding:
    return Finding(path, rule, Severity.ERROR, message, hint)


def warning_at(path: Path, rule: str, message: str, hint: str = "") -> Finding:
    return Finding(path, rule, Severity.WARNING, message, hint)


def unsupported(path: Path, rule: str, value: Any, allowed: Iterable[str], hint: str = "") -> Finding:
    """field.NotSupported: kube-apiserver's words for a value outside an enumeration."""
    listed = ", ".join(shown(a) for a in allowed)
    return Finding(path, rule, Severity.ERROR, f"Unsupported value: {shown(value)}: supported values: {listed}", hint)
