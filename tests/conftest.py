from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
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


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache of the test's own, and caching on whatever the environment says."""
    from generator import cache

    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv("GEN_NO_CACHE", raising=False)
    cache.directory.cache_clear()
    yield home
    cache.directory.cache_clear()


def crd(group: str, kind: str, spec: str) -> str:
    """A namespaced CRD serving v1 of group/kind, whose spec schema is `spec` (YAML: a flow
    mapping, or a block that goes indented under the spec key)."""
    plural = kind.lower() + "s"
    if "\n" in spec:
        spec = "\n" + textwrap.indent(spec, " " * 12).rstrip("\n")
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {plural}.{group}}}
spec:
  group: {group}
  names: {{kind: {kind}, listKind: {kind}List, plural: {plural}, singular: {kind.lower()}}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {spec}
"""


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
