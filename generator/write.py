"""Stage 5: lay out files per target, compare them with disk, and replace them atomically.

gen owns exactly the files listed in a directory's .gen-manifest.json. It never overwrites,
prunes or follows anything else, and never writes outside --out. A target directory is
swapped in one rename (RENAME_EXCHANGE where the kernel has it), so readers see the old or
the new render, never a mix.
"""

from __future__ import annotations

import contextlib
import ctypes
import difflib
import errno
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from generator.errors import GeneratorError

MANIFEST_FILE = ".gen-manifest.json"
STAGING_PREFIX = ".gen-staging-"
FILE_MODE = 0o644


@dataclass
class DirPlan:
    """Everything gen wants one directory (relative to --out) to hold."""

    reldir: str
    files: dict[str, bytes] = field(default_factory=dict)
    remove: bool = False  # a directory gen wrote before and no target produces any more

    def with_manifest(self) -> dict[str, bytes]:
        if self.remove:
            return {}
        listing = {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(self.files.items())}
        manifest = json.dumps({"generator": "gen", "files": listing}, indent=2) + "\n"
        return {**self.files, MANIFEST_FILE: manifest.encode()}


@dataclass
class Drift:
    missing: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    def paths(self) -> list[tuple[str, str]]:
        return sorted(
            [(p, "missing") for p in self.missing]
            + [(p, "modified") for p in self.modified]
            + [(p, "stale") for p in self.stale]
        )


def safe_dir(out: Path, reldir: str) -> Path:
    """out/reldir, refusing anything that resolves outside out or passes through a symlink."""
    root = out.resolve()
    candidate = root
    for part in Path(reldir).parts:
        if part in ("", ".", "..") or os.sep in part or part.startswith("/"):
            raise GeneratorError(f"output directory {reldir!r} is not a plain relative path")
        candidate = candidate / part
        if candidate.is_symlink():
            raise GeneratorError(f"{candidate} is a symlink; gen does not write through symlinks")
    if root not in candidate.parents and candidate != root:
        raise GeneratorError(f"output directory {reldir!r} escapes {out}")
    return candidate


def removals(out: Path, planned: Iterable[DirPlan]) -> list[DirPlan]:
    """Plans that empty the directories gen owns under out (they hold its manifest) but no
    longer renders: a deleted Target, or GitOps objects no longer asked for."""
    keep = {plan.reldir for plan in planned}
    found = []
    if out.is_dir():
        for dirpath, dirnames, filenames in os.walk(out):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(STAGING_PREFIX))
            rel = Path(dirpath).relative_to(out).as_posix()
            if MANIFEST_FILE in filenames and rel != ".":
                if rel not in keep:
                    found.append(DirPlan(rel, remove=True))
                dirnames[:] = []  # an owned directory holds no other
    return found


def owned_files(directory: Path) -> dict[str, str]:
    """relpath -> sha256 from the directory's manifest (empty when there is none)."""
    path = directory / MANIFEST_FILE
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if not isinstance(files, dict):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise GeneratorError(f"{path} is not a gen manifest: {err}") from err
    return {str(k): str(v) for k, v in files.items() if _is_safe_rel(str(k))}


def _is_safe_rel(rel: str) -> bool:
    parts = Path(rel).parts
    return bool(parts) and not Path(rel).is_absolute() and ".." not in parts


def _read(path: Path) -> bytes | None:
    if path.is_symlink() or not path.is_file():
        return None
    return path.read_bytes()


def collisions(directory: Path, plan: DirPlan) -> list[str]:
    """Generated paths that would overwrite a file gen does not own."""
    owned = owned_files(directory)
    return sorted(
        rel for rel in plan.with_manifest() if rel not in owned and rel != MANIFEST_FILE and (directory / rel).exists()
    )


def drift(directory: Path, plan: DirPlan) -> Drift:
    wanted = plan.with_manifest()
    result = Drift()
    for rel, data in sorted(wanted.items()):
        current = _read(directory / rel)
        if current is None:
            result.missing.append(rel)
        elif current != data:
            result.modified.append(rel)
    for rel in sorted(_owned_with_manifest(directory)):
        if rel not in wanted and (directory / rel).exists():
            result.stale.append(rel)
    return result


def _owned_with_manifest(directory: Path) -> list[str]:
    owned = list(owned_files(directory))
    return [*owned, MANIFEST_FILE] if (directory / MANIFEST_FILE).is_file() else owned


def unified_diff(directory: Path, plan: DirPlan, label: str) -> str:
    wanted = plan.with_manifest()
    chunks: list[str] = []
    stale = [rel for rel in _owned_with_manifest(directory) if rel not in wanted]
    for rel in sorted({*wanted, *stale}):
        old = _read(directory / rel)
        new = wanted.get(rel)
        if old == new:
            continue
        old_lines = (old or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new_lines = (new or b"").decode("utf-8", "replace").splitlines(keepends=True)
        chunks.extend(
            difflib.unified_diff(
                old_lines,
                new_lines,
                fromfile=f"a/{label}/{rel}" if old is not None else "/dev/null",
                tofile=f"b/{label}/{rel}" if new is not None else "/dev/null",
            )
        )
    return "".join(chunks)


@contextlib.contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Serialize writers of one --out directory; a second concurrent render is refused."""
    out.mkdir(parents=True, exist_ok=True)
    # Lock the directory itself: no lock file ends up in the repository.
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            raise GeneratorError(f"another gen render is writing {out}; try again when it finishes") from err
        yield
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with renameat2(RENAME_EXCHANGE); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _copy_foreign(src: Path, dst: Path, owned: set[str]) -> None:
    """Carry every entry gen does not own into the staging tree, unchanged (hard links)."""
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        base = Path(dirpath)
        rel_dir = base.relative_to(src)
        for name in [*dirnames, *filenames]:
            path = base / name
            rel = (rel_dir / name).as_posix()
            target = dst / rel
            if path.is_symlink():
                if rel not in owned:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(os.readlink(path), target)
                continue
            if path.is_dir():
                if not any(path.iterdir()):
                    target.mkdir(parents=True, exist_ok=True)  # keep the user's empty directories
            elif rel not in owned and rel != MANIFEST_FILE:
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(path, target)
                except OSError:
                    shutil.copy2(path, target)
        dirnames[:] = [d for d in dirnames if not (base / d).is_symlink()]


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_all(paths: list[Path]) -> None:
    """Make every staged file durable before the swap; fsyncs overlap in threads (they release the GIL)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(_fsync, paths))


def write_dir(out: Path, plan: DirPlan) -> bool:
    """Make out/plan.reldir hold the plan; False (and nothing touched) when it already does."""
    directory = safe_dir(out, plan.reldir)
    if directory.exists() and not directory.is_dir():
        raise GeneratorError(f"{directory} exists and is not a directory")
    if directory.is_dir() and not drift(directory, plan).paths():
        return False
    if plan.remove and not directory.is_dir():
        return False
    clash = collisions(directory, plan) if directory.is_dir() else []
    if clash:
        raise GeneratorError(
            f"{directory}: generated file(s) would overwrite files gen does not own: {', '.join(clash)}"
        )
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.parent / f"{STAGING_PREFIX}{directory.name}-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    try:
        if directory.is_dir():
            _copy_foreign(directory, staging, set(owned_files(directory)))
        written = []
        for rel, data in sorted(plan.with_manifest().items()):
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
            os.chmod(path, FILE_MODE)
            written.append(path)
        _fsync_all(written)
        if plan.remove and not any(staging.iterdir()):
            trash = directory.parent / f"{STAGING_PREFIX}{directory.name}-old-{os.getpid()}"
            os.rename(directory, trash)  # gone in one step; nothing of the user's was inside
            shutil.rmtree(trash)
            staging.rmdir()
        elif not directory.exists():
            os.rename(staging, directory)
        elif _exchange(staging, directory):
            shutil.rmtree(staging)
        else:
            old = directory.parent / f"{STAGING_PREFIX}{directory.name}-old-{os.getpid()}"
            os.rename(directory, old)
            os.rename(staging, directory)
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return True


def recover(out: Path) -> None:
    """Finish or undo a swap that a killed render left behind (the fallback path only)."""
    if not out.is_dir():
        return
    for entry in out.rglob(f"{STAGING_PREFIX}*"):
        name = entry.name[len(STAGING_PREFIX) :]
        if "-old-" in name:
            original = entry.parent / name.split("-old-")[0]
            if not original.exists():
                os.rename(entry, original)
                continue
        shutil.rmtree(entry, ignore_errors=True)
