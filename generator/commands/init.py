"""`gen init`: a policy repository that lints and renders cleanly as created."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

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
    """A requirement pip installs this gen from, so the CI workflow works before, or without, a
    release on a package index: its repository at this commit when the commit is on a remote,
    else the clone or file it was installed from (PEP 610's record of where that was)."""
    header = "# Where CI installs gen from (pip install -r gen-requirements.txt); gen init wrote it.\n"
    source = Path(__file__).resolve().parents[2]  # a clone, when gen runs from one (editable or on sys.path)
    if (source / "pyproject.toml").is_file() and (source / "generator").is_dir():
        return header + _from_clone(source)
    try:
        from importlib.metadata import distribution

        found = json.loads(distribution("gitops-gen").read_text("direct_url.json") or "{}")
    except Exception:  # no record of where it came from
        found = {}
    url = str(found.get("url", ""))
    vcs = found.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        return header + f"gitops-gen @ git+{url}@{vcs.get('commit_id', '')}\n"
    if url.startswith("file://"):
        path = Path(url2pathname(urlparse(url).path))
        return header + (_from_clone(path) if path.is_dir() else f"gitops-gen @ {url}\n")
    return header + f"gitops-gen=={__version__}\n"  # from a package index


def _from_clone(clone: Path) -> str:
    """The clone's remote at its commit when the remote has that commit; else the clone itself,
    which pip installs on this machine only."""
    remote = _git(clone, "remote", "get-url", "origin")
    commit = _git(clone, "rev-parse", "HEAD")
    url = _vcs_url(remote)
    if url and commit and _git(clone, "branch", "--remotes", "--contains", commit):
        return f"gitops-gen @ git+{url}@{commit}\n"
    return (
        f"# {clone} is a path on this machine: for CI, name the repository gen is kept in and a commit,\n"
        "# gitops-gen @ git+https://HOST/PATH/gen.git@COMMIT\n"
        f"gitops-gen @ {clone.as_uri()}\n"
    )


def _vcs_url(remote: str) -> str | None:
    """A remote as pip's git+ URLs take it (scp-like git@host:path becomes ssh://); None for a
    path on this machine, which CI cannot reach."""
    if re.match(r"(https?|ssh|git)://", remote):
        return remote
    scp = re.fullmatch(r"([^@/:]+@)?([^/:]+):(?!//)(.+)", remote)
    if scp and len(scp[2]) > 1:  # not a Windows drive letter
        return f"ssh://{scp[1] or ''}{scp[2]}/{scp[3]}"
    return None


def _git(directory: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
