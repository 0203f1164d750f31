from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "policies"
SHARED_CRDS = ROOT.parent / "shared" / "reference" / "crds"


# The suite keeps gen's cache to itself, from collection on (some modules render while they
# load): never the developer's, and removed at the end.
_CACHE_HOME = tempfile.mkdtemp(prefix="gen-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME


@pytest.fixture(autouse=True, scope="session")
def _own_cache() -> Iterator[None]:
    yield
    shutil.rmtree(_CACHE_HOME, ignore_errors=True)


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def gen(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., Run]:
    """Run the real console entry point in-process."""
    from generator.cli import main

    def run(*args: str | Path) -> Run:
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", ["gen", *map(str, args)])
        code = main()
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def policy_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "policies"
    shutil.copytree(POLICIES, dest)
    return dest


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def edit(path: Path, old: str, new: str) -> None:
    """Change a fixture file in place; a replacement that matches nothing would make a test vacuous."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new))
