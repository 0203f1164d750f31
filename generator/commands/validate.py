"""`gen validate`: any manifests against Kubernetes' schemas and rules, custom resources against
their CRDs; with a repository's .gen.yaml, a baseline, and reports CI systems read."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from generator import baseline, config
from generator.cache import validated as kept_files
from generator.errors import GeneratorError
from generator.kube.api_versions import DEFAULT_VERSION
from generator.kube.repository import validate_paths
from generator.problems import Problem, Severity, exit_code
from generator.reporters import report
from generator.yamlio.load import configure_max_file_mib


def run(
    paths: tuple[Path, ...],
    versions: tuple[str, ...],
    plugins: tuple[str, ...],
    crds: tuple[Path, ...],
    fmt: str,
    strict: bool,
    config_file: Path | None = None,
    baseline_file: Path | None = None,
    write_baseline: Path | None = None,
    output: Path | None = None,
) -> int:
    missing = [str(path) for path in paths if str(path) != "-" and not os.path.lexists(path)]
    if missing:  # a mistyped path is a usage error, not a finding that a baseline could hide
        raise GeneratorError(f"no such file or directory: {', '.join(missing)}")
    settings, unusable = config.settings(config_file)
    if unusable:
        report(unusable, fmt)
        return 1
    if settings is not None:  # the command line wins over the file
        versions = versions or settings.kubernetes_versions
        plugins = plugins or settings.plugins
        crds = crds or settings.crds
        configure_max_file_mib(settings.max_file_mib)
    validated = validate_paths(
        paths,
        versions or (DEFAULT_VERSION,),
        plugins,
        crds,
        excluded=settings.excluded if settings is not None else lambda name: False,
        feature_gates=dict(settings.feature_gates) if settings is not None else {},
        allow_privileged=settings.allow_privileged if settings is not None else True,
        kept_for=kept_files.Kept.of,
    )
    problems, by_config = config.silenced_by(settings, validated.problems)
    if write_baseline is not None:
        baseline.write(write_baseline, problems)
        print(f"gen: wrote {len(problems)} findings to {write_baseline}", file=sys.stderr)
        return 0
    known = stale = 0
    if baseline_file is not None:
        problems, known, stale = baseline.unknown(problems, baseline.read(baseline_file))
    if output is not None:
        try:
            with output.open("w", encoding="utf-8") as stream:
                report(problems, fmt, stream, validated.files)
        except OSError as err:
            raise GeneratorError(f"--output {output}: {err.strerror or err}") from err
        report(problems, "text")
    else:
        report(problems, fmt, files=validated.files)
    print(
        _summary(len(validated.files), problems, validated.silenced + by_config, known, validated.skipped, stale)
        + (f"; {validated.built}" if validated.built else ""),
        file=sys.stderr,
    )
    return exit_code(problems, strict)


def _summary(files: int, problems: list[Problem], silenced: int, known: int, skipped: int = 0, stale: int = 0) -> str:
    """One line for the terminal: what was judged, what was found, what was set aside."""
    counts = [
        f"{n} {word}{'s' if n != 1 and severity is not Severity.INFO else ''}"
        for word, severity in (("error", Severity.ERROR), ("warning", Severity.WARNING), ("info", Severity.INFO))
        if (n := sum(1 for p in problems if p.severity is severity)) or severity is not Severity.INFO
    ]
    line = f"gen: {files} file{'s' if files != 1 else ''} validated: {', '.join(counts)}; {silenced} silenced"
    line += f"; {known} known from the baseline" if known else ""
    line += (
        f"; {stale} baseline entr{'ies' if stale != 1 else 'y'} no longer found (fixed or changed: "
        "--write-baseline writes it anew)"
        if stale
        else ""
    )
    return line + (
        f"; {skipped} skipped (no manifests: tool configuration, Helm, Kustomize patches and inputs, "
        "YAML without apiVersion and kind, other tools' APIs)"
        if skipped
        else ""
    )
