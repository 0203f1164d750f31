"""Where gen keeps what it can reuse between runs: under the user's cache directory
(`$XDG_CACHE_HOME/gen`, else `~/.cache/gen`), one folder per gen version, so nothing is ever
trusted across versions. Everything cached is a speed-up only: a missing, unwritable or corrupt
cache is ignored, and `GEN_NO_CACHE=1` turns caching off.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from generator import __version__


@cache
def directory(kind: str) -> Path | None:
    """The cache folder for one kind of entry, created on first use; None when caching is off
    or impossible (no home, a read-only file system)."""
    if os.environ.get("GEN_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None  # as the XDG specification says: a relative path is to be ignored
    folder = Path(base) / "gen" / __version__ / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder
