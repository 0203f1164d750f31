"""`gen lint`: policy structure and cross-policy rules, for pre-commit."""

from __future__ import annotations

from pathlib import Path

from generator.policies import validate as validate_policies
from generator.problems import exit_code
from generator.reporters import report


def run(paths: tuple[Path, ...], fmt: str, strict: bool) -> int:
    problems = validate_policies.lint(paths)
    report(problems, fmt)
    return exit_code(problems, strict)
