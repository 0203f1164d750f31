"""`gen validate`: arbitrary manifests against Kubernetes schemas and semantic rules."""

from __future__ import annotations

from pathlib import Path

from generator.load import load_documents
from generator.problems import exit_code
from generator.reporters import report
from generator.validate_manifests import ManifestValidator


def run(paths: tuple[Path, ...], version: str, plugins: tuple[str, ...], fmt: str, strict: bool) -> int:
    validator = ManifestValidator(version, plugins)
    docs, problems = load_documents(paths)
    for doc in docs:
        for finding in validator.validate(doc.data):
            problems.append(
                doc.problem(finding.path, finding.rule, finding.message, severity=finding.severity, hint=finding.hint)
            )
    report(problems, fmt)
    return exit_code(problems, strict)
