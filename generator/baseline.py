"""Baselines: adopt `gen validate` on a large repository without fixing everything first.

A baseline is a previous `--format json` report. A finding is known when the baseline holds
one with the same file, object, rule and message, never by line, so an edit above a known
finding does not bring it back; each baseline entry accepts one finding.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from generator.errors import GeneratorError
from generator.problems import Problem

Key = tuple[str, str, str, str]


def _key(entry: dict[str, Any]) -> Key:
    return (str(entry["file"]), str(entry.get("object", "")), str(entry["rule"]), str(entry["message"]))


def read(path: Path) -> Counter[Key]:
    """The findings a baseline file accepts."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(entries, list):
            raise ValueError("it is not a list of findings")
        return Counter(_key(entry) for entry in entries)
    except OSError as err:
        raise GeneratorError(f"--baseline {path}: {err.strerror or err}") from err
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise GeneratorError(
            f"--baseline {path}: not a gen JSON report ({err}); write one with --write-baseline"
        ) from err


def unknown(problems: Iterable[Problem], known: Counter[Key]) -> tuple[list[Problem], int, int]:
    """The findings the baseline does not hold, how many it did, and how many of its entries
    matched no finding (stale: fixed, or changed so that they no longer match)."""
    left = Counter(known)
    new: list[Problem] = []
    matched = 0
    for problem in sorted(problems):
        key = _key(problem.as_dict())
        if left[key] > 0:
            left[key] -= 1
            matched += 1
        else:
            new.append(problem)
    return new, matched, sum(left.values())


def write(path: Path, problems: Iterable[Problem]) -> None:
    try:
        path.write_text(json.dumps([p.as_dict() for p in sorted(problems)], indent=2) + "\n", encoding="utf-8")
    except OSError as err:
        raise GeneratorError(f"--write-baseline {path}: {err.strerror or err}") from err
