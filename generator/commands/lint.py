"""`gen lint`: policy structure and cross-policy rules, for pre-commit."""

from __future__ import annotations

import sys
from pathlib import Path

from generator import config, pipeline
from generator.files import named
from generator.problems import Problem, Severity, exit_code
from generator.reporters import report


def run(paths: tuple[Path, ...], fmt: str, strict: bool) -> int:
    found, unusable = config.settings(None)
    if unusable:
        report(unusable, fmt)
        return 1
    result = pipeline.lint(paths, found.crds if found is not None else ())
    report(result.problems, fmt)
    print(summary(len(named(paths)[0]), result.problems, result.left_to_render), file=sys.stderr)
    return exit_code(result.problems, strict)


def summary(files: int, problems: list[Problem], left_to_render: tuple[str, ...] = ()) -> str:
    """One line for a CI log: what was looked at, what was found, and which rules only a
    render of the whole policy directory checks when only some of its files were linted."""
    counts = [
        f"{n} {word}{'s' if n != 1 else ''}"
        for word, severity in (("error", Severity.ERROR), ("warning", Severity.WARNING))
        for n in [sum(1 for p in problems if p.severity is severity)]
    ]
    advice = sum(1 for p in problems if p.severity is Severity.INFO)
    left = (
        f"; {' and '.join(left_to_render)} left to gen render (they need every policy of a target)"
        if left_to_render
        else ""
    )
    return (
        f"gen: {files} policy file{'s' if files != 1 else ''} linted: {', '.join(counts)}"
        + (f", {advice} info" if advice else "")
        + left
    )
