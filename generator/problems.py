"""The one finding type every stage reports, and the exit-code rule built on it."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, replace

STDIN_NAME = "<stdin>"  # the file findings on standard input name


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, order=True)
class Problem:
    """A finding located in a file; line and column are 1-based (0 when unknown)."""

    file: str
    line: int
    column: int
    rule: str
    severity: Severity
    message: str
    hint: str = ""
    json_path: str = ""
    targets: tuple[str, ...] = ()  # the targets a render finding holds for, when there are several
    about: str = ""  # the object it is about, as people name it (`Deployment web/api`), where known

    def to_plain(self) -> tuple[str, int, int, str, int, str, str, str, tuple[str, ...], str]:
        """The finding as plain values, for worker processes to send (see parallel.Codec)."""
        return (
            self.file,
            self.line,
            self.column,
            self.rule,
            int(self.severity),
            self.message,
            self.hint,
            self.json_path,
            self.targets,
            self.about,
        )

    @classmethod
    def from_plain(cls, plain: tuple[str, int, int, str, int, str, str, str, tuple[str, ...], str]) -> Problem:
        file, line, column, rule, severity, message, hint, path, targets, obj = plain
        return cls(file, line, column, rule, Severity(severity), message, hint, path, tuple(targets), obj)

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "rule": self.rule,
            "severity": str(self.severity),
            "message": self.message,
            "hint": self.hint,
            "path": self.json_path,
            **({"targets": list(self.targets)} if self.targets else {}),
            **({"object": self.about} if self.about else {}),
        }


def per_target(found: Iterable[tuple[str, Problem]], targets: int) -> list[Problem]:
    """Findings of several targets, each once in order of first appearance; with more than one
    target, each names the targets it holds for."""
    held: dict[Problem, list[str]] = {}
    for target, problem in found:
        names = held.setdefault(problem, [])
        if target not in names:
            names.append(target)
    if targets <= 1:
        return list(held)
    return [replace(problem, targets=tuple(names)) for problem, names in held.items()]


def has_errors(problems: Iterable[Problem], strict: bool = False) -> bool:
    """An error, or with strict a warning, among problems: what makes a command fail."""
    threshold = Severity.WARNING if strict else Severity.ERROR
    return any(p.severity >= threshold for p in problems)


def exit_code(problems: Iterable[Problem], strict: bool = False) -> int:
    return 1 if has_errors(problems, strict) else 0


def json_path(path: Iterable[object]) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out
