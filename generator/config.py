"""`.gen.yaml`: a repository's settings for `gen validate`, checked by schemas/config.json (which
`gen schema` exports for editors, like the policy kinds).

The file is found in the current directory or the nearest parent, stopping at the repository
root (the directory holding .git); `--config FILE` names one. Its paths and globs are relative
to the directory it lies in; the command line's flags win over it.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator import catalogue, schemas
from generator.errors import GeneratorError
from generator.files import display_path
from generator.kube import api_versions
from generator.policies.policy import schema_problems
from generator.problems import Problem
from generator.yamlio.load import load_file

CONFIG_FILE = ".gen.yaml"
SCHEMA = "config.json"


@dataclass(frozen=True)
class Ignore:
    rule: str
    paths: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Config:
    directory: str  # where the file lies (absolute): its paths and globs are relative to it
    kubernetes_versions: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    crds: tuple[Path, ...] = ()
    exclude: tuple[str, ...] = ()
    ignore: tuple[Ignore, ...] = ()
    max_file_mib: int | None = None  # the largest file gen reads (yamlio/load.py's default otherwise)
    feature_gates: tuple[tuple[str, bool], ...] = ()  # as the clusters set them
    allow_privileged: bool = True  # kube-apiserver's --allow-privileged, as kubeadm and managed clusters set it

    def _relative(self, name: str) -> str:
        full = os.path.normpath(os.path.join(os.getcwd(), name))
        return Path(os.path.relpath(full, self.directory)).as_posix()

    def excluded(self, name: str) -> bool:
        """Whether the file findings call name is left out of validation."""
        return bool(self.exclude) and _matches(self._relative(name), self.exclude)

    def silences(self, problem: Problem) -> bool:
        """Whether an `ignore` entry accepts the finding."""
        return any(
            entry.rule == problem.rule and (not entry.paths or _matches(self._relative(problem.file), entry.paths))
            for entry in self.ignore
        )


def _matches(path: str, globs: tuple[str, ...]) -> bool:
    """fnmatch's globs (`*` matches across directories); a pattern also matches what lies below it."""
    return any(fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(path, g.rstrip("/") + "/*") for g in globs)


def find(start: Path) -> Path | None:
    """The .gen.yaml of the repository start lies in, if any."""
    for directory in (start, *start.parents):
        if (directory / CONFIG_FILE).is_file():
            return directory / CONFIG_FILE
        if (directory / ".git").exists():
            return None
    return None


def load(path: Path) -> tuple[Config | None, list[Problem]]:
    """The settings of a config file, or the findings that make it unusable (each at its line)."""
    if not path.is_file():
        raise GeneratorError(f"--config {path}: no such file")
    directory = str(path.resolve().parent)
    docs, problems = load_file(path, display_path(str(path), os.getcwd()))
    if problems or not docs:
        return (None if problems else Config(directory)), problems
    doc = docs[0]
    for extra in docs[1:]:
        problems.append(extra.problem((), "config-schema", f"{CONFIG_FILE} holds one YAML document"))
    for err in schemas.iter_schema_errors(SCHEMA, doc.data):
        problems += schema_problems(doc, err, SCHEMA, prefix="config")
    if problems:
        return None, list(dict.fromkeys(problems))
    data = doc.data
    for i, version in enumerate(data.get("kubernetesVersions", [])):
        try:
            api_versions.folder(version)
        except GeneratorError as err:
            problems.append(doc.problem(("kubernetesVersions", i), "config-schema", str(err)))
    known = catalogue.rules()
    for i, entry in enumerate(data.get("ignore", [])):
        if entry["rule"] not in known:
            close = difflib.get_close_matches(entry["rule"], sorted(known), n=1)
            problems.append(
                doc.problem(
                    ("ignore", i, "rule"),
                    "config-schema",
                    f"no rule is called {entry['rule']!r}",
                    hint=f"did you mean {close[0]!r}?" if close else "rule IDs are listed in docs/rules.md",
                )
            )
    if problems:
        return None, problems
    return Config(
        directory,
        tuple(data.get("kubernetesVersions", ())),
        tuple(data.get("plugins", ())),
        tuple(Path(directory, p) for p in data.get("crds", ())),
        tuple(data.get("exclude", ())),
        tuple(Ignore(e["rule"], tuple(e.get("paths", ())), e["reason"]) for e in data.get("ignore", ())),
        data.get("maxFileMiB"),
        tuple(sorted(data.get("featureGates", {}).items())),
        data.get("allowPrivileged", True),
    ), []


def settings(named: Path | None) -> tuple[Config | None, list[Problem]]:
    """The config a run uses: the file named, else the repository's, else none."""
    path = named if named is not None else find(Path.cwd())
    if path is None:
        return None, []
    return load(path)


def silenced_by(config: Config | None, problems: list[Problem]) -> tuple[list[Problem], int]:
    """problems without those the config's ignore entries accept, and how many those were."""
    if config is None or not config.ignore:
        return problems, 0
    kept = [p for p in problems if not config.silences(p)]
    return kept, len(problems) - len(kept)


def render_options(policy_dir: Path, out: Path, targets: tuple[str, ...], crds: tuple[Path, ...]) -> Any:
    """What `gen render` and `gen plan` run with: the CRDs named on the command line, else those
    the repository's .gen.yaml lists; or the config's problems, when it cannot be used."""
    from generator.pipeline import RenderOptions

    found, unusable = settings(None)
    if unusable:
        return unusable
    if not crds and found is not None:
        crds = found.crds
    return RenderOptions(policy_dir, out, targets, crds)
