"""A render killed at any point leaves the previous output or the new one, never a mix.

Fault injection stops the writer at every filesystem operation in turn; from that moment on
nothing it does takes effect (as with SIGKILL: no cleanup runs). The next render's recovery
step must then find exactly the old tree or exactly the new one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from generator import pipeline
from generator.render import write
from tests.conftest import edit, tree

WATCHED = {"link", "symlink", "chmod", "rename", "open", "fsync", "rmtree", "copy2", "mkdir", "makedirs", "rmdir"}


class Killed(BaseException):
    """Not an Exception: nothing in gen may catch it, as nothing can catch SIGKILL."""


class Clock:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.dead = False

    def tick(self) -> None:
        if self.dead:
            raise Killed
        if self.budget == 0:
            self.dead = True
            raise Killed
        self.budget -= 1


class Faulty:
    """A stand-in for the os / shutil module whose watched calls stop at the clock's deadline."""

    def __init__(self, module: Any, clock: Clock) -> None:
        self._module, self._clock = module, clock

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._module, name)
        if name not in WATCHED or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._clock.tick()
            return attr(*args, **kwargs)

        return call


def _plans(policies: Path, out: Path) -> list[write.DirPlan]:
    result = pipeline.render(pipeline.RenderOptions(policies, out))
    assert not [p for p in result.problems if p.severity >= 2]
    return result.plans + write.removals(out, result.plans)


@pytest.fixture
def versions(policy_copy: Path, tmp_path: Path) -> tuple[Path, dict[str, bytes], list[write.DirPlan]]:
    """An output holding render v1 (with a hand-written file) and the plans of render v2."""
    out = tmp_path / "deploy"
    (policy_copy / "staging.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: Target\nmetadata:\n  name: staging\nspec:\n"
        "  gitops:\n    flux:\n      sourceRef:\n        name: platform\n"
    )
    write.write_all(out, _plans(policy_copy, out))
    (out / "lab" / "NOTES.md").write_text("hand-written\n")
    (out / "staging.yaml").unlink(missing_ok=True)
    (policy_copy / "staging.yaml").unlink()  # v2: one target fewer ...
    app = policy_copy / "data-processor.yaml"
    edit(app, "replicas: 5", "replicas: 6")  # ... and one change
    return out, tree(out), _plans(policy_copy, out)


def _new_tree(out: Path, plans: list[write.DirPlan], tmp_path: Path) -> dict[str, bytes]:
    copy = tmp_path / "expected" / out.name
    shutil.copytree(out, copy, symlinks=True)
    write.write_all(copy, plans)
    return tree(copy)


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_killed_at_every_step(versions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool) -> None:
    out, old, plans = versions
    new = _new_tree(out, plans, tmp_path)
    assert old != new
    if not exchange:
        monkeypatch.setattr(write, "_exchange", lambda a, b: False)
    assert _killed_at_every_step(out, old, new, plans, tmp_path, monkeypatch) > 20


def _killed_at_every_step(
    out: Path,
    old: dict[str, bytes],
    new: dict[str, bytes],
    plans: list[write.DirPlan],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> int:
    """Write plans into a fresh copy of out, killed at its first, second, ... filesystem step
    until a write completes: after recovery each time out holds the old or the new output and
    nothing staged is left. Returns the steps a whole write takes."""
    backup = tmp_path / "backup"
    shutil.copytree(out, backup, symlinks=True)
    outcomes = set()
    for budget in range(10_000):
        shutil.rmtree(out)
        shutil.copytree(backup, out, symlinks=True)
        clock = Clock(budget)
        with monkeypatch.context() as m:
            m.setattr(write, "os", Faulty(os, clock))
            m.setattr(write, "shutil", Faulty(shutil, clock))
            m.setattr(write, "open", Faulty(__import__("builtins"), clock).open, raising=False)
            with contextlib.suppress(Killed):
                write.write_all(out, plans)
        write.recover(out)
        now = tree(out) if out.exists() else {}
        assert now in (old, new), f"mixed output after a kill at step {budget}"
        assert not [p for p in out.parent.iterdir() if p.name.startswith(".gen-staging-")]
        outcomes.add("new" if now == new else "old")
        if not clock.dead:
            break
    assert outcomes == {"old", "new"}
    return budget


@pytest.fixture
def one_change(policy_copy: Path, tmp_path: Path) -> tuple[Path, dict[str, bytes], list[write.DirPlan]]:
    """An output holding a render (with a hand-written file beside gen's) and the plans of the
    render after one policy's edit: one directory changes."""
    out = tmp_path / "deploy"
    write.write_all(out, _plans(policy_copy, out))
    (out / "lab" / "NOTES.md").write_text("hand-written\n")
    edit(policy_copy / "data-processor.yaml", "replicas: 5", "replicas: 6")
    return out, tree(out), _plans(policy_copy, out)


def test_one_changed_directory_is_exchanged_alone_and_killed_at_every_step(
    one_change, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one directory changed, only that directory is staged and exchanged; a kill at any
    step still leaves the old output or the new one, the hand-written file kept, no staging left."""
    out, old, plans = one_change
    new = _new_tree(out, plans, tmp_path)
    assert old != new and new["lab/NOTES.md"] == b"hand-written\n"
    exchanged: list[tuple[str, str]] = []
    real = write._exchange
    monkeypatch.setattr(write, "_exchange", lambda a, b: exchanged.append((a.name, b.name)) or real(a, b))
    assert _killed_at_every_step(out, old, new, plans, tmp_path, monkeypatch) > 10
    assert exchanged and {target for _, target in exchanged} == {"lab"}  # the directory, never out


def test_sigkill_of_a_real_render(policy_copy: Path, tmp_path: Path) -> None:
    """The real entry point, killed with SIGKILL at spread-out moments of its run."""
    app = policy_copy / "data-processor.yaml"
    text = app.read_text()

    def render(replicas: int, out: Path, kill_after: float | None = None) -> float:
        app.write_text(text.replace("replicas: 5", f"replicas: {replicas}"))
        cmd = [sys.executable, "-m", "generator", "render", str(policy_copy), "--out", str(out)]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if kill_after is None:
            assert proc.wait() == 0
        else:
            time.sleep(kill_after)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        return time.perf_counter() - start

    expected = {}
    for replicas in (6, 7):
        render(replicas, tmp_path / f"r{replicas}" / "deploy")
        expected[replicas] = tree(tmp_path / f"r{replicas}" / "deploy")
    out = tmp_path / "deploy"
    duration = render(6, out)
    outcomes = set()
    for i, fraction in enumerate((0.3, 0.6, 0.8, 0.9, 0.95, 1.0, 1.1)):
        replicas = 7 if i % 2 == 0 else 6
        before = tree(out)
        render(replicas, out, kill_after=duration * fraction)
        write.recover(out)
        after = tree(out)
        assert after in (before, expected[replicas]), f"mixed output after SIGKILL at {fraction:.0%} of a render"
        outcomes.add(after == before)
    assert True in outcomes  # at least one kill landed before the swap
