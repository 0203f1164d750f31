"""`gen init`: a policy repository that lints and renders cleanly as created."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from generator import __version__, schemas
from generator.errors import GeneratorError
from generator.resources import data_dir

REQUIREMENTS = "gen-requirements.txt"


def run(directory: Path) -> int:
    source = data_dir("templates") / "init"
    files = {p.relative_to(source).as_posix(): p for p in sorted(source.rglob("*")) if p.is_file()}
    wanted = [*files, REQUIREMENTS, *(f"schemas/{name}" for name in schemas.exported_schema_files())]
    existing = [rel for rel in wanted if (directory / rel).exists()]
    if existing:
        raise GeneratorError(f"{directory} already has {', '.join(existing)}; gen init never overwrites files")
    for rel, path in files.items():
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    (directory / REQUIREMENTS).write_text(install_source())
    schemas.export(directory / "schemas")
    print(f"gen: created a policy repository in {directory} ({len(wanted)} files)")
    print(f"next: cd {directory} && gen lint policies && gen render policies --out deploy")
    return 0


def install_source() -> str:
    """Where CI installs gen from: where this gen came from (PEP 610), so the workflow works
    before, or without, a release on the package index."""
    header = "# Where CI installs gen from (pip install -r gen-requirements.txt); gen init wrote it.\n"
    try:
        from importlib.metadata import distribution

        found = json.loads(distribution("gitops-gen").read_text("direct_url.json") or "{}")
    except Exception:  # not installed as a distribution (a source checkout on sys.path)
        found = {}
    url = str(found.get("url", ""))
    vcs = found.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        return header + f"gitops-gen @ git+{url}@{vcs.get('commit_id', '')}\n"
    if url.startswith("file://"):
        remote = _git(url.removeprefix("file://"), "remote", "get-url", "origin")
        commit = _git(url.removeprefix("file://"), "rev-parse", "HEAD")
        if remote and commit:
            return header + f"gitops-gen @ git+{remote}@{commit}\n"
        return header + (
            f"# gen came from {url}, which CI cannot reach: name the repository it is kept in, e.g.\n"
            "# gitops-gen @ git+https://git.example.com/platform/gen.git@main\n"
            f"gitops-gen=={__version__}\n"
        )
    return header + f"gitops-gen=={__version__}\n"


def _git(directory: str, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", directory, *args], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
