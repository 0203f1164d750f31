"""Locates the templates and schemas shipped with the package.

A wheel carries them inside the package (generator/templates, generator/schemas); a source
checkout keeps them at the repository root, beside the package.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    from generator.errors import GeneratorError

    raise GeneratorError(f"installation is incomplete: no '{name}' directory beside the package")
