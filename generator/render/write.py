"""Stage 5: lay out files per target, compare them with disk, and replace them atomically.

gen owns exactly the files listed in a directory's .gen-manifest.json. It never overwrites,
prunes or follows anything else, and never writes outside --out. A target directory is
swapped in one rename (RENAME_EXCHANGE where the kernel has it), so readers see the old or
the new render, never a mix.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from generator import cache, parallel
from generator.errors import GeneratorError
from generator.layout import MANIFEST_FILE

STAGING_PREFIX = ".gen-staging-"
FILE_MODE = 0o644


@dataclass
class DirPlan:
    """Everything gen wants one directory (relative to --out) to hold."""

    reldir: str
    files: dict[str, bytes] = field(default_factory=dict)
    remove: bool = False  # a directory gen wrote before and no target produces any more
    # rel -> (the bytes hashed, their SHA-256): a render compares them with the committed
    # manifest and writes them into the new one, and hashing 20,000 files twice cost 30 ms
    _hashed: dict[str, tuple[bytes, str]] = field(default_factory=dict, repr=False, compare=False)
    # the manifest of the listing it was made for: a render and its check each ask for it
    _manifest: tuple[dict[str, str], bytes] | None = field(default=None, repr=False, compare=False)
    # the files last listed and their listing: the render, its plan and its check each ask for
    # it, and sorting 20,000 files' entries took 25 ms each time
    _listed: tuple[dict[str, bytes], dict[str, str]] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def hashed(cls, reldir: str, files: dict[str, bytes], digests: dict[str, str], manifest: bytes) -> DirPlan:
        """A plan whose files' SHA-256 and manifest are known already."""
        plan = cls(reldir, files, _hashed={rel: (data, digests[rel]) for rel, data in files.items()})
        plan._manifest = (digests, manifest)
        return plan

    def digests(self) -> dict[str, str]:
        """relpath -> SHA-256 of each file, in path order."""
        if self._listed is not None and self._listed[0] == self.files:  # the same bytes: compared by identity first
            return dict(self._listed[1])
        listing = {}
        for rel, data in sorted(self.files.items()):
            known = self._hashed.get(rel)
            if known is None or known[0] is not data:
                known = self._hashed[rel] = (data, hashlib.sha256(data).hexdigest())
            listing[rel] = known[1]
        self._listed = (dict(self.files), listing)
        return dict(listing)

    def with_manifest(self) -> dict[str, bytes]:
        return self.wanted()[0]

    def wanted(self) -> tuple[dict[str, bytes], dict[str, str]]:
        """with_manifest() and digests() from one pass over the files."""
        if self.remove:
            return {}, {}
        listing = self.digests()
        if self._manifest is None or self._manifest[0] != listing:
            text = json.dumps({"generator": "gen", "files": listing}, indent=2) + "\n"
            self._manifest = (listing, text.encode())
        return {**self.files, MANIFEST_FILE: self._manifest[1]}, listing


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
    return [DirPlan(rel, remove=True) for rel in owned_directories(out) if rel not in keep]


def owned_directories(out: Path) -> list[str]:
    """The directories under out that gen owns (they hold its manifest), relative to out."""
    found = []
    if out.is_dir():
        for dirpath, dirnames, filenames in os.walk(out):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(STAGING_PREFIX))
            rel = Path(dirpath).relative_to(out).as_posix()
            if MANIFEST_FILE in filenames and rel != ".":
                found.append(rel)
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
    return {str(k): str(v) for k, v in files.items() if is_safe_rel(str(k))}


def is_safe_rel(rel: str) -> bool:
    """A path gen could have written: relative, plain names only (a manifest may be hand-edited)."""
    return not {"", ".", ".."} & set(rel.split("/"))


def read_regular(path: str | Path) -> bytes | None:
    """A regular file's bytes; None when there is none (missing, a symlink, a directory...)."""
    found = read_regular_stat(path)
    return None if found is None else found[0]


def read_regular_stat(path: str | Path) -> tuple[bytes, os.stat_result] | None:
    """A regular file's bytes and its stat from before they were read; None when there is none.

    Plain os calls, one open, one fstat and (for a file that does not change meanwhile) one
    read: pathlib's three stats per file, and then Python's file objects, were most of checking
    an unchanged output for drift.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not hang us
    except OSError as err:
        if err.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return None
        raise GeneratorError(f"cannot read {path}: {err.strerror}") from err
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        data = os.read(fd, info.st_size + 1)
        if len(data) != info.st_size:  # it changed since the fstat: read on to its end
            chunks = [data]
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data, info
    finally:
        os.close(fd)


def collisions(directory: Path, wanted: dict[str, bytes], owned: Collection[str] | None = None) -> list[str]:
    """Generated paths (a plan's with_manifest()) that would overwrite a file gen does not own
    (`owned`: the directory's owned_files(), when read already)."""
    owned = owned_files(directory) if owned is None else owned
    return sorted(rel for rel in wanted if rel not in owned and rel != MANIFEST_FILE and (directory / rel).exists())


@dataclass(frozen=True)
class Held:
    """What a directory gen owns holds now: its manifest as written, and each file the manifest
    lists by the SHA-256 of its content ("" where something other than a regular file is, None
    where nothing is)."""

    manifest: bytes | None
    files: dict[str, str | None]


def held(directory: Path) -> Held:
    """The directory as it is, each file known by its stat where a run before read it."""
    stamps = cache.Stamps.of_directory(str(directory))
    files: dict[str, str | None] = {}
    for rel in owned_files(directory):
        digest = stamps.digest(rel)
        if digest is None:
            path = os.path.join(directory, rel)
            found = read_regular_stat(path)
            if found is None:
                digest = "" if os.path.exists(path) else None
            else:
                digest = hashlib.sha256(found[0]).hexdigest()
                stamps.note(rel, found[1], digest)
        files[rel] = digest
    stamps.save()
    return Held(read_regular(directory / MANIFEST_FILE), files)


def survey(out: Path) -> dict[str, Held]:
    """Every directory gen owns under out, as it holds it now: what a check compares its render
    with, independent of the policies (so it is taken while they load)."""
    found = {}
    for rel in owned_directories(out):
        with contextlib.suppress(GeneratorError):  # an unreadable one is reported when checked, if it is
            found[rel] = held(safe_dir(out, rel))
    return found


_PLAIN_SURVEY = parallel.Codec(
    lambda surveyed: {rel: (found.manifest, found.files) for rel, found in surveyed.items()},
    lambda plain: {rel: Held(*found) for rel, found in plain.items()},
)
# About one file's line in a manifest: `    "team/deployment-web.yaml": "<64 hex digits>",`
_MANIFEST_LINE_BYTES = 100


def surveying(out: Path) -> parallel.Beside[Path, dict[str, Held]]:
    """survey(out) in a process of its own while this one goes on, where out holds enough files
    to pay for one (a small output is surveyed here when asked)."""
    listed = 0
    for rel in owned_directories(out):
        with contextlib.suppress(OSError):
            listed += os.stat(os.path.join(out, rel, MANIFEST_FILE)).st_size
    return parallel.Beside(survey, out, listed // _MANIFEST_LINE_BYTES, _PLAIN_SURVEY)


def drift(
    directory: Path, wanted: dict[str, bytes], digests: dict[str, str] | None = None, now: Held | None = None
) -> Drift:
    """How directory differs from wanted (a plan's with_manifest(); `digests`, the plan's
    digests(), when known): each file gen owns as held() finds it (`now`: surveyed already),
    each other path gen would write read again."""
    if digests is None:
        digests = {rel: hashlib.sha256(data).hexdigest() for rel, data in wanted.items()}
    now = held(directory) if now is None else now
    result = Drift()
    for rel, data in sorted(wanted.items()):
        if rel == MANIFEST_FILE:
            missing, same = now.manifest is None, now.manifest == data
        elif rel in now.files:
            missing, same = not now.files[rel], now.files[rel] == digests.get(rel)
        else:
            found = read_regular(os.path.join(directory, rel))
            missing, same = found is None, found == data
        if missing:
            result.missing.append(rel)
        elif not same:
            result.modified.append(rel)
    for rel in sorted(_owned_with_manifest(directory, now.files)):
        if rel not in wanted and now.files.get(rel, "") is not None:  # the manifest: is_file() said it is there
            result.stale.append(rel)
    return result


def _owned_with_manifest(directory: Path, owned: Collection[str] | None = None) -> list[str]:
    listed = list(owned_files(directory) if owned is None else owned)
    return [*listed, MANIFEST_FILE] if (directory / MANIFEST_FILE).is_file() else listed


def unified_diff(directory: Path, wanted: dict[str, bytes], label: str) -> str:
    chunks: list[str] = []
    stale = [rel for rel in _owned_with_manifest(directory) if rel not in wanted]
    for rel in sorted({*wanted, *stale}):
        old = read_regular(directory / rel)
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
    """Serialize writers of one --out directory; a second concurrent render is refused.

    The lock is on out's parent: out itself is replaced by each render, so a lock on it would
    not be seen by a process that opens the new one.
    """
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)  # no lock file ends up in the repository
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            raise GeneratorError(f"another gen render is writing {out}; try again when it finishes") from err
        yield
    finally:
        os.close(fd)


def _libc(name: str) -> Callable[..., int] | None:
    """A C library function (errno kept for _c_errno), or None where it is missing."""
    import ctypes  # here: only writing an output calls C; lint and --check would pay about 2 ms for it

    try:
        function: Callable[..., int] = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    return function


def _c_errno() -> int:
    """errno as the last function _libc gave left it."""
    import ctypes  # imported already by _libc, which gave that function

    return ctypes.get_errno()


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with renameat2(RENAME_EXCHANGE); False where unsupported."""
    renameat2 = _libc("renameat2")
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = _c_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _carry_over(src: Path, dst: Path, replaced: set[str]) -> None:
    """Hard-link every entry of src into dst except the files being replaced: hand-written files,
    symlinks and empty directories come through unchanged; directories are made only for what
    they will hold, so a directory emptied of gen's files disappears."""
    made: set[str] = set()

    def place(rel_dir: str) -> str:
        if rel_dir not in made:
            os.makedirs(os.path.join(dst, rel_dir), exist_ok=True)
            made.add(rel_dir)
        return os.path.join(dst, rel_dir)

    def visit(rel_dir: str) -> None:
        with os.scandir(os.path.join(src, rel_dir)) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
        if not entries:
            place(rel_dir)  # the user's own empty directory
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir(follow_symlinks=False):
                visit(rel)
            elif rel in replaced:
                continue
            elif entry.is_symlink():
                os.symlink(os.readlink(entry.path), os.path.join(place(rel_dir), entry.name))
            else:
                target = os.path.join(place(rel_dir), entry.name)
                try:
                    os.link(entry.path, target, follow_symlinks=False)
                except OSError:
                    shutil.copy2(entry.path, target)

    visit("")


def _write_each(files: list[tuple[str, bytes]], chmod: bool, flush: bool) -> None:
    """Plain os calls: Python's file objects cost about as much again on a RAM disk."""
    for path, data in files:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)  # never through a link
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if chmod:
                os.fchmod(fd, FILE_MODE)
            if flush:
                os.fsync(fd)
        finally:
            os.close(fd)


def _umask() -> int:
    """The process's umask (reading it means setting it; no other thread runs yet)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _syncfs() -> Callable[[int], int] | None:
    """syncfs(2), which flushes one whole filesystem; None where the C library lacks it."""
    return _libc("syncfs")


def _write_files(files: list[tuple[str, bytes]], staging: Path) -> None:
    """Write the staged files and make them durable before the swap can make them visible.

    File creation releases the GIL, so one thread per CPU, each with a contiguous share (a few
    directories), overlaps it where creating an inode is slow. A task per file cost more in
    locks than it saved: 2,000 files took 0.2 s on tmpfs, against 0.05 s in one thread.
    One syncfs then flushes them all: the filesystem commits its journal once instead of once
    per file (a quarter of a cold 10,000-service render on ext4); without syncfs, each file is
    fsynced as it is written.
    """
    syncfs = _syncfs()
    write = partial(_write_each, chmod=bool(_umask() & FILE_MODE), flush=syncfs is None)
    # here: only writing an output needs threads; lint and --check would pay about 2.5 ms for them
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=parallel.cpus()) as pool:
        list(pool.map(write, parallel.split(files, parallel.cpus())))
    if syncfs is None:
        return
    fd = os.open(staging, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            err = _c_errno()
            raise OSError(err, f"flushing the staged output: {os.strerror(err)}", str(staging))
    finally:
        os.close(fd)


def _unchanged(directory: Path, wanted: dict[str, bytes], found: Drift) -> list[str]:
    """Wanted files already on disk byte for byte, as gen writes them (mode included).

    They are hard-linked into the new tree instead of written again: a one-service change
    rewrites one file, not its whole target, and the untouched files keep their inode and
    mtime, so `git status` has nothing to re-hash.
    """
    differ = {*found.missing, *found.modified}
    unchanged = []
    for rel in wanted:
        if rel not in differ:
            mode = os.lstat(os.path.join(directory, rel)).st_mode
            if stat.S_ISREG(mode) and stat.S_IMODE(mode) == FILE_MODE:
                unchanged.append(rel)
    return unchanged


def _staging_name(out: Path, kind: str) -> Path:
    return out.parent / f"{STAGING_PREFIX}{out.name}-{kind}{os.getpid()}"


def write_all(out: Path, plans: list[DirPlan]) -> list[str]:
    """Make out hold every plan, in one atomic step; returns the directories that changed.

    The new tree is staged beside out (unchanged and hand-written files hard-linked in, new
    files written and flushed to disk) and then exchanged with out in a single rename, so a reader or
    a killed render only ever sees the old output or the new one, never a mix; when one directory
    changed, that directory alone is staged and exchanged the same way.
    """
    out = Path(os.path.abspath(out))
    directories = {plan.reldir: safe_dir(out, plan.reldir) for plan in plans}
    wanted = {plan.reldir: plan.with_manifest() for plan in plans}  # hashed once, used four times
    changed = []
    kept: set[str] = set()  # files that already hold exactly what gen would write: linked, not rewritten
    for plan in plans:
        directory = directories[plan.reldir]
        if directory.exists() and not directory.is_dir():
            raise GeneratorError(f"{directory} exists and is not a directory")
        if directory.is_dir():
            now = held(directory)
            found = drift(directory, wanted[plan.reldir], plan.digests(), now)
            if not found.paths():
                continue
            clash = collisions(directory, wanted[plan.reldir], now.files)
            if clash:
                raise GeneratorError(
                    f"{directory}: generated file(s) would overwrite files gen does not own: {', '.join(clash)}"
                )
            kept.update(f"{plan.reldir}/{rel}" for rel in _unchanged(directory, wanted[plan.reldir], found))
        elif plan.remove:
            continue
        changed.append(plan)
    if not changed:
        return []
    if len(changed) == 1 and _write_one_directory(changed[0], directories, wanted, kept, out):
        return [changed[0].reldir]
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = _staging_name(out, "")
    if staging.exists():
        shutil.rmtree(staging)
    replaced: set[str] = set()
    for plan in changed:
        directory = directories[plan.reldir]
        owned = [*owned_files(directory), MANIFEST_FILE] if directory.is_dir() else []
        replaced.update(f"{plan.reldir}/{rel}" for rel in owned if f"{plan.reldir}/{rel}" not in kept)
    try:
        staging.mkdir()
        if out.is_dir():
            _carry_over(out, staging, replaced)
        # plain strings: a Path per file costs more than writing it on a RAM disk
        files = [
            (os.path.join(staging, plan.reldir, rel), data)
            for plan in changed
            for rel, data in sorted(wanted[plan.reldir].items())
            if f"{plan.reldir}/{rel}" not in kept
        ]
        for parent in sorted({os.path.dirname(path) for path, _ in files}):
            os.makedirs(parent, exist_ok=True)
        _write_files(files, staging)
        _swap_in(staging, out)
    except BaseException as err:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(err, OSError):  # a full disk or a permission: the user's to fix, not a crash
            raise GeneratorError(f"could not write {out}: {err}; the previous output is unchanged") from err
        raise
    return [plan.reldir for plan in changed]


def _write_one_directory(
    plan: DirPlan, directories: dict[str, Path], wanted: dict[str, dict[str, bytes]], kept: set[str], out: Path
) -> bool:
    """The one directory that changed, staged beside out and exchanged with its old self in one
    renameat2: as atomic as swapping the whole tree, but linking and later removing only that
    directory's files, not every file of out (20,000 links and unlinks at 10,000 services).
    False, with nothing touched, where the directory is new, goes away, or the exchange is not
    supported: the whole tree is swapped then."""
    directory = directories[plan.reldir]
    if plan.remove or not directory.is_dir() or _libc("renameat2") is None:
        return False
    staging = _staging_name(out, "dir-")
    if staging.exists():
        shutil.rmtree(staging)
    prefix = f"{plan.reldir}/"
    replaced = {rel for rel in [*owned_files(directory), MANIFEST_FILE] if prefix + rel not in kept}
    try:
        staging.mkdir()
        _carry_over(directory, staging, replaced)
        files = [
            (os.path.join(staging, rel), data)
            for rel, data in sorted(wanted[plan.reldir].items())
            if prefix + rel not in kept
        ]
        for parent in sorted({os.path.dirname(path) for path, _ in files}):
            os.makedirs(parent, exist_ok=True)
        _write_files(files, staging)
        os.chmod(staging, stat.S_IMODE(directory.stat().st_mode))
        if not _exchange(staging, directory):
            shutil.rmtree(staging)
            return False
        shutil.rmtree(staging)  # now the directory as it was
    except BaseException as err:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(err, OSError):
            raise GeneratorError(f"could not write {out}: {err}; the previous output is unchanged") from err
        raise
    return True


def _swap_in(staging: Path, out: Path) -> None:
    if not out.exists():
        os.rename(staging, out)
    elif _exchange(staging, out):
        shutil.rmtree(staging)
    else:
        old = _staging_name(out, "old-")
        os.rename(out, old)
        os.rename(staging, out)  # a kill between the two renames is undone by recover()
        shutil.rmtree(old)


def recover(out: Path) -> None:
    """Undo what a killed render left beside out: put the previous output back if out is missing
    (the fallback path's window between two renames), and drop staging trees."""
    out = Path(os.path.abspath(out))
    if not out.parent.is_dir():
        return
    prefix = f"{STAGING_PREFIX}{out.name}-"
    leftovers = sorted(p for p in out.parent.iterdir() if p.name.startswith(prefix))
    for entry in leftovers:
        if entry.name[len(prefix) :].startswith("old-") and not out.exists():
            os.rename(entry, out)
    for entry in leftovers:
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)
