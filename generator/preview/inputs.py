"""Operator inputs that are not policies: node and pod inventories, utilization and metric samples.

They are usually JSON straight from kubectl or a collector, sometimes YAML written by hand.
JSON is parsed with the json module (fast, exact numbers, no YAML 1.1 surprises); positions
for a finding are looked up only when there is one to report.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.problems import STDIN_NAME, Problem, Severity, json_path
from generator.yamlio.load import Path_, SourceMap, load_text, max_file_bytes

STDIN = "-"


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


@dataclass
class InputFile:
    """One parsed input document and the means to point at a line of it."""

    name: str
    data: Any
    text: str
    _source: SourceMap | None = field(default=None, repr=False)

    def _positions(self) -> SourceMap:
        if self._source is None:
            docs, _ = load_text(self.text, self.name) if len(self.text) <= max_file_bytes() else ([], [])
            self._source = docs[0].source if docs else SourceMap()
        return self._source

    def problem(
        self, path: Path_, rule: str, message: str, hint: str = "", severity: Severity = Severity.ERROR
    ) -> Problem:
        pos = self._positions().locate(path)
        return Problem(self.name, pos.line, pos.column, rule, severity, message, hint, json_path(path))


def read_input(path: Path) -> tuple[InputFile | None, list[Problem]]:
    """The single document in path (`-` reads standard input), or the problem that stops reading it."""
    name = STDIN_NAME if str(path) == STDIN else str(path)
    try:
        raw = sys.stdin.buffer.read() if str(path) == STDIN else path.read_bytes()
    except OSError as err:
        return None, [Problem(name, 0, 0, "input-unreadable", Severity.ERROR, err.strerror or str(err))]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return None, [Problem(name, 1, 1, "input-encoding", Severity.ERROR, f"not UTF-8: {err.reason}")]
    try:
        return InputFile(name, json.loads(text, object_pairs_hook=_no_duplicates), text), []
    except ValueError:
        pass  # not JSON (or JSON with a duplicate key): the YAML loader says exactly where
    docs, problems = load_text(text, name)
    if problems:
        return None, problems
    if len(docs) != 1:
        return None, [
            Problem(name, 1, 1, "input-documents", Severity.ERROR, f"expected one document, found {len(docs)}")
        ]
    return InputFile(name, docs[0].data, text), []  # positions only when a finding needs one
