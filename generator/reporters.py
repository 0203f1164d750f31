"""Output formats for findings and drift: text for people, json for tools, github annotations."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from generator.problems import Problem, Severity

_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}


def _use_color(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def _described(problem: Problem) -> str:
    """The message, the targets it holds for (when a render has several) and the hint."""
    text = problem.message
    if problem.targets:
        text += f" [target{'s' if len(problem.targets) > 1 else ''} {', '.join(problem.targets)}]"
    return text + (f" (hint: {problem.hint})" if problem.hint else "")


def report_text(problems: Sequence[Problem], stream: TextIO) -> None:
    color = _use_color(stream)
    for p in problems:
        sev = str(p.severity)
        if color:
            sev = f"{_COLORS[p.severity]}{sev}\033[0m"
        print(f"{p.file}:{p.line}:{p.column}: {sev} {p.rule} {_described(p)}", file=stream)


def report_json(problems: Sequence[Problem], stream: TextIO) -> None:
    print(json.dumps([p.as_dict() for p in problems], indent=2), file=stream)


def _escape_github(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def report_github(problems: Sequence[Problem], stream: TextIO) -> None:
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    for p in problems:
        message = f"{p.rule}: {_described(p)}"
        props = f"file={_escape_github(p.file).replace(',', '%2C').replace(':', '%3A')},line={p.line},col={p.column}"
        print(f"::{level[p.severity]} {props},title={p.rule}::{_escape_github(message)}", file=stream)


REPORTER_BY_NAME: dict[str, Callable[[Sequence[Problem], TextIO], None]] = {
    "text": report_text,
    "json": report_json,
    "github": report_github,
}


def report(problems: Sequence[Problem], fmt: str, stream: TextIO | None = None) -> None:
    REPORTER_BY_NAME[fmt](sorted(problems), stream or sys.stdout)
