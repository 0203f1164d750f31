"""Where gen keeps what it can reuse between runs: under the user's cache directory
(`$XDG_CACHE_HOME/gen`, else `~/.cache/gen`), one folder per gen version, so nothing is ever
trusted across versions. Everything cached is a speed-up only: a missing, unwritable or corrupt
cache is ignored, and `gen --no-cache` or `GEN_NO_CACHE=1` turns caching off.

Entries are written to a temporary file and renamed into place, so a run reading while another
writes sees the whole entry or none.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import marshal
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from generator import __version__


def disable() -> None:
    """No cache for the rest of this process (`gen --no-cache`)."""
    os.environ["GEN_NO_CACHE"] = "1"  # forked workers and anything asking later see it too
    directory.cache_clear()


@cache
def directory(kind: str) -> Path | None:
    """The cache folder for one kind of entry, created on first use; None when caching is off
    or impossible (no home, a read-only file system)."""
    if os.environ.get("GEN_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None  # as the XDG specification says: a relative path is to be ignored
    versions = Path(base) / "gen"
    folder = versions / __version__ / kind
    if not folder.parent.is_dir():  # this version's first run here: the others' may have been its last
        _forget_unused_versions(versions)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder


UNUSED_DAYS = 30  # a version of gen whose cache nothing read or wrote for this long is removed


def _forget_unused_versions(versions: Path) -> None:
    """Remove the folders of other gen versions unused for UNUSED_DAYS (each version keeps
    its own, and prunes only within it)."""
    cutoff = time.time() - UNUSED_DAYS * 86400
    with contextlib.suppress(OSError):
        for version in os.scandir(versions):
            if version.is_dir() and version.name != __version__:
                used = [version.stat().st_mtime]
                for kind in os.scandir(version.path):
                    used.append(kind.stat().st_mtime)
                    if kind.is_dir():
                        used += [entry.stat().st_mtime for entry in os.scandir(kind.path)]
                if max(used) < cutoff:
                    shutil.rmtree(version.path, ignore_errors=True)


def key(content: bytes) -> str:
    """An entry's name: the SHA-256 of what it was made from."""
    return hashlib.sha256(content).hexdigest()


def stable_bytes(value: Any) -> bytes:
    """A plain value's bytes for a key: marshal's version 0, whose output depends on the value
    alone (later versions mark shared and interned strings, which differ run to run); raises
    ValueError for a value marshal does not know."""
    return marshal.dumps(value, 0)


def file_key(path: str, name: str, stamps: Stamps | None = None) -> str | None:
    """What the results of reading a file are kept under: its name (findings name it) and
    content; None when it cannot be read (its reader says why) or reading it would consume it
    (standard input). With stamps, a file whose stat says it is as a run before read it is
    not read again."""
    if path == "/dev/stdin":
        return None
    if stamps is not None and (known := stamps.digest(path, name)) is not None:
        return known
    try:
        with open(path, "rb", buffering=0) as handle:  # unbuffered: one read, as the YAML reader does
            info = os.fstat(handle.fileno())
            content = handle.readall()
    except OSError:
        return None
    found = _content_key(name, content)
    if stamps is not None:
        stamps.note(path, info, found, name)
    return found


def text_key(name: str, text: str) -> str:
    """file_key of a file whose UTF-8 text is already read: the same key, without reading it again."""
    return _content_key(name, text.encode("utf-8"))


def _content_key(name: str, content: bytes) -> str:
    return key(name.encode() + b"\0" + content)


def target_name(*where: str) -> str:
    """The name of a target's entries: gen's code, the working directory (findings name files
    from it) and where the target is written."""
    return key(code() + "\0".join([os.getcwd(), *where]).encode())


@cache
def code() -> bytes:
    """gen's own code as the cache sees it: every file of the package by path, size and
    modification time, so an entry made by other code (a development checkout edited
    without a new version number) is never read; and the distributions installed beside its
    libraries by name and version (PyYAML spells the YAML written, kubernetes-validate ships
    the schemas), so upgrading one alone is other code too."""
    root = Path(__file__).parent
    stamp = hashlib.sha256()
    libraries = os.path.dirname(os.path.dirname(yaml.__file__))
    with contextlib.suppress(OSError):
        stamp.update("\0".join(sorted(n for n in os.listdir(libraries) if n.endswith(".dist-info"))).encode())
    for folder, subfolders, names in os.walk(root):
        subfolders.sort()
        for name in sorted(names):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(folder, name)
            info = os.stat(path)
            stamp.update(f"{os.path.relpath(path, root)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return stamp.digest()


def read(kind: str, name: str) -> Any:
    """The plain value stored under name, or None (no entry, caching off, or an entry that does not read)."""
    folder = directory(kind)
    if folder is None:
        return None
    try:
        with open(folder / name, "rb") as entry:
            data = entry.read()  # marshal.load reads a file object piece by piece: 8 times slower
        with collector_paused():
            return marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """For making millions of objects that live on (what a cache entry holds): the cycle
    collector's passes would each walk everything alive (reading 10,000 cached policies took
    0.93 s instead of 0.09 s)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()  # and none of them is walked by a pass later either: they live to the end
        if was_enabled:
            gc.enable()


def write(kind: str, name: str, value: Any) -> None:
    """Store a plain value (what marshal writes) under name; silently nothing when it cannot be."""
    folder = directory(kind)
    if folder is None:
        return
    try:
        data = marshal.dumps(value)
    except ValueError:
        return  # a value marshal does not know: not cached
    with contextlib.suppress(OSError):
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as entry:
                entry.write(data)
            os.replace(temporary, folder / name)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def keep_one(kind: str, owner: str, name: str, value: Any, keep: int) -> None:
    """Store value under name (which starts with owner) as owner's only entry of the kind,
    leaving at most keep entries of the kind, the least recently written going first."""
    folder = directory(kind)
    if folder is None:
        return
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name.startswith(f"{owner}-") and entry.name != name:
                os.unlink(entry.path)
    _prune(folder, keep - 1, spare=name)
    write(kind, name, value)


# A bundle (thousands of entries read together: a policy directory's files, a target's
# render) is a folder of this many files, each entry in the file its key picks: a run that
# changes one entry rewrites one file, not the whole bundle.
SHARDS = 64


class Bundle:
    """Entries read together (a policy directory's builds, a target's render, the findings of
    a repository's files), each under the SHA-256 of what it was made from, in a folder of
    SHARDS files: `stored` as the last run left them, `kept` what this run keeps (only what it
    used: entries of deleted files go). Saving writes only the files whose entries changed."""

    def __init__(self, kind: str, name: str, keep: int, shards: int = SHARDS) -> None:
        # keep: bundles of the kind left; shards: fewer for small entries, each file written
        # costs more than its entries (a cold run writes every one)
        self._kind, self.name, self._keep, self._shards = kind, name, keep, shards
        self._files = [read(kind, f"{name}/{i:02d}") for i in range(shards)]
        self.stored: dict[str, Any] = {}
        for stored in self._files:
            if isinstance(stored, dict):
                self.stored.update(stored)
        self.kept: dict[str, Any] = {}

    def save(self) -> None:
        folder = directory(self._kind)
        if folder is None:
            return
        files: list[dict[str, Any]] = [{} for _ in range(self._shards)]
        for key, value in self.kept.items():
            files[int(key[:8], 16) % self._shards][key] = value
        changed = [i for i, (new, old) in enumerate(zip(files, self._files, strict=True)) if new != old]
        if changed:
            _prune(folder, self._keep - 1, spare=self.name)
            with contextlib.suppress(OSError):
                (folder / self.name).mkdir(exist_ok=True)
            for i in changed:
                write(self._kind, f"{self.name}/{i:02d}", files[i])
        with contextlib.suppress(OSError):
            os.utime(folder / self.name)  # used now: pruning removes the least recently used first


def _prune(folder: Path, keep: int, spare: str) -> None:
    """Leave keep entries (bundles or files) in folder besides spare, the least recently used going first."""
    with contextlib.suppress(OSError):
        entries = [entry for entry in os.scandir(folder) if entry.name != spare and not entry.name.startswith(".tmp-")]
        if len(entries) <= keep:
            return
        entries.sort(key=lambda entry: entry.stat().st_mtime_ns)
        for entry in entries[: len(entries) - keep]:
            if entry.is_dir():
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)


# How long after its last change a file must be read before its stat vouches for its content:
# a change within the file system's timestamp granularity of the one before can leave every
# time as it was, so a file read that soon is read again next time (git calls these racily
# clean). Longer than the coarsest granularity in use (FAT's two seconds).
SETTLED_NS = 3_000_000_000
_STAMPS = "stamps"
_KEPT_STAMPS = 256  # records (directories, sets of files) remembered, the least recently used going first


def _stamp(info: os.stat_result) -> tuple[int, int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


class Stamps:
    """What files were found to hold when a run last read them, known again from their stat
    alone, as git's index knows a work tree: the same device, inode, size, modification and
    change time (which no one can set back) mean the same content. Files changed shortly
    before they were read are not vouched for (SETTLED_NS). `base` is what the paths asked
    about are relative to; `name` names the record (one per directory or set of files read
    together)."""

    def __init__(self, base: str, name: str) -> None:
        # joined by hand: os.path.join per file was a third of a lookup
        self._prefix = os.path.join(base, "") if base else ""
        self._name = name
        stored = read(_STAMPS, name)
        self._stored: dict[str, Any] = stored if isinstance(stored, dict) else {}
        self._kept: dict[str, Any] = {}
        self._hits = self._misses = 0  # lookups so far that found the file as noted, and changed

    @classmethod
    def of_directory(cls, path: str) -> Stamps:
        return cls(path, key(os.path.realpath(path).encode()))

    # A record whose first this many lookups all find their file changed is of files written
    # since (a render rewrote them all): the rest are read without asking it.
    STALE_AFTER = 32

    def digest(self, rel: str, tag: str = "") -> str | None:
        """The digest noted for the file (under tag), if its stat says it has not changed since."""
        entry = self._stored.get(f"{rel}\0{tag}")
        if entry is None or (self._misses >= self.STALE_AFTER and not self._hits):
            return None
        try:
            same = _stamp(os.lstat(self._prefix + rel)) == entry[0]
        except (OSError, TypeError, IndexError):
            same = False
        if not same:
            self._misses += 1
            return None
        self._hits += 1
        self._kept[f"{rel}\0{tag}"] = entry
        return str(entry[1])

    def note(self, rel: str, info: os.stat_result, digest: str, tag: str = "") -> None:
        """The file, its stat taken as it was read, held what digest names."""
        if max(info.st_ctime_ns, info.st_mtime_ns) < time.time_ns() - SETTLED_NS:
            self._kept[f"{rel}\0{tag}"] = (_stamp(info), digest)

    def save(self) -> None:
        """Keep what this run read or found unchanged (nothing else) for the next run."""
        folder = directory(_STAMPS)
        if folder is None:
            return
        if self._kept != self._stored:
            _prune(folder, _KEPT_STAMPS - 1, spare=self._name)
            write(_STAMPS, self._name, self._kept)
        else:
            with contextlib.suppress(OSError):
                os.utime(folder / self._name)
