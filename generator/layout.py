"""The shape of an output directory, shared by the writer and by `gen validate` reading one back."""

from __future__ import annotations

from pathlib import Path

from generator.errors import GeneratorError

# Argo CD Applications and Flux Kustomizations live here, outside every directory they sync.
GITOPS_DIR = "_gitops"
# Fragments for tools gen does not render (Helm values, JSON patches): files, not resources.
FRAGMENTS_DIR = "integrations"
# Lists the files gen owns in a directory it writes.
MANIFEST_FILE = ".gen-manifest.json"


def check_out(out: Path) -> None:
    """--out must be a directory or nothing yet: gen replaces what is there in one rename, so a
    file (or a link) in its place would be moved aside, never written into."""
    if out.is_symlink():
        raise GeneratorError(
            f"--out {out} is a symbolic link; gen does not write through links: name the directory itself"
        )
    if out.exists() and not out.is_dir():
        raise GeneratorError(f"--out {out} is a file, not a directory: name the directory gen renders into")
