"""Stage 1: read YAML documents safely, keeping the line and column of every node.

Loading is safe YAML only (no Python tags). Duplicate keys, non-string keys and recursive
aliases are findings, not silent last-one-wins. Positions are kept per JSON path so that
every later stage can point at the exact line of a policy file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from generator.problems import Problem, Severity

try:
    SAFE_LOADER: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - libyaml missing
    SAFE_LOADER = yaml.SafeLoader

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_NODES = 200_000

Path_ = tuple[str | int, ...]

# YAML 1.1 reads these plain scalars as booleans; a user almost always meant the string.
_YAML11_BOOLS = re.compile(r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$")


@dataclass(frozen=True)
class Position:
    line: int
    column: int


@dataclass(frozen=True)
class Scalar:
    """What the author wrote for a plain scalar, for hints on YAML 1.1 surprises."""

    text: str
    plain: bool


@dataclass
class SourceMap:
    """JSON path -> position of the value (and of its key, for mapping entries)."""

    values: dict[Path_, Position] = field(default_factory=dict)
    keys: dict[Path_, Position] = field(default_factory=dict)
    scalars: dict[Path_, Scalar] = field(default_factory=dict)

    def locate(self, path: Path_, *, key: bool = False) -> Position:
        """The position of path, or of its closest located ancestor.

        A mapping or sequence value is located at its key: that is the line a reader looks for.
        """
        probe = tuple(path)
        while True:
            use_key = key or probe not in self.scalars
            table = self.keys if use_key and probe in self.keys else self.values
            if probe in table:
                return table[probe]
            if not probe:
                return Position(1, 1)
            probe = probe[:-1]


@dataclass
class Document:
    """One YAML document of a file, with the means to locate its nodes."""

    file: str
    index: int
    data: Any
    source: SourceMap

    def problem(
        self,
        path: Path_,
        rule: str,
        message: str,
        *,
        severity: Severity = Severity.ERROR,
        hint: str = "",
        key: bool = False,
    ) -> Problem:
        from generator.problems import json_path

        pos = self.source.locate(path, key=key)
        return Problem(self.file, pos.line, pos.column, rule, severity, message, hint, json_path(path))


class _LoadError(Exception):
    def __init__(self, mark: yaml.Mark | None, rule: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.mark = mark
        self.rule = rule
        self.message = message
        self.hint = hint


class _StrictLoader(SAFE_LOADER):  # type: ignore[valid-type,misc]
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        own = sum(1 for key_node, _ in node.value if key_node.tag != "tag:yaml.org,2002:merge")
        self.flatten_mapping(node)
        # flatten_mapping puts keys merged in from `<<: *anchor` first; the mapping's own keys
        # may override those (YAML's documented merge), but not repeat each other.
        merged = len(node.value) - own
        seen: dict[Any, yaml.Node | None] = {}
        for position, (key_node, _) in enumerate(node.value):
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                hint = ""
                if isinstance(key_node, yaml.ScalarNode) and _YAML11_BOOLS.match(key_node.value):
                    hint = f"YAML 1.1 reads unquoted {key_node.value!r} as a boolean; quote it"
                raise _LoadError(
                    key_node.start_mark,
                    "yaml-key-type",
                    f"mapping key {key_node.value!r} is not a string",
                    hint or "quote the key",
                )
            earlier = seen.get(key)
            if earlier is not None and position >= merged:
                first = earlier.start_mark
                raise _LoadError(
                    key_node.start_mark,
                    "yaml-duplicate-key",
                    f"duplicate key {key!r} (first defined on line {first.line + 1})",
                    "remove one of the two; YAML would silently keep only the last",
                )
            seen[key] = key_node if position >= merged else None  # None: merged in, may be overridden
        return super().construct_mapping(node, deep=deep)


def _index(node: yaml.Node, source: SourceMap) -> None:
    """Record positions for every path, refusing cycles and alias bombs."""
    count = 0
    stack: list[tuple[yaml.Node, Path_, frozenset[int]]] = [(node, (), frozenset())]
    while stack:
        current, path, ancestors = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise _LoadError(
                current.start_mark,
                "yaml-too-large",
                f"document expands to more than {MAX_NODES} nodes (aliases included)",
                "split the policy or use fewer aliases",
            )
        mark = current.start_mark
        source.values[path] = Position(mark.line + 1, mark.column + 1)
        if id(current) in ancestors:
            raise _LoadError(mark, "yaml-recursive-alias", "recursive alias", "remove the cycle")
        inner = ancestors | {id(current)}
        if isinstance(current, yaml.MappingNode):
            for key_node, value_node in current.value:
                child = (*path, key_node.value)
                km = key_node.start_mark
                source.keys[child] = Position(km.line + 1, km.column + 1)
                stack.append((value_node, child, inner))
        elif isinstance(current, yaml.SequenceNode):
            for i, item in enumerate(current.value):
                stack.append((item, (*path, i), inner))
        elif isinstance(current, yaml.ScalarNode):
            source.scalars[path] = Scalar(current.value, current.style is None)


def _problem_at(file: str, mark: yaml.Mark | None, rule: str, message: str, hint: str) -> Problem:
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    return Problem(file, line, col, rule, Severity.ERROR, message, hint)


def load_text(text: str, file: str) -> tuple[list[Document], list[Problem]]:
    """Parse every document of text; a broken document is a Problem, the others still load."""
    docs: list[Document] = []
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        return docs, [
            Problem(
                file,
                1,
                1,
                "yaml-too-large",
                Severity.ERROR,
                f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB",
            )
        ]
    loader = _StrictLoader(text)
    index = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            try:
                data = loader.construct_document(node)
                source = SourceMap()
                _index(node, source)
            except _LoadError as err:
                loader.constructed_objects = {}
                loader.recursive_objects = {}
                loader.state_generators = []
                return docs, [_problem_at(file, err.mark, err.rule, err.message, err.hint)]
            if data is not None:
                docs.append(Document(file, index, data, source))
            index += 1
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        message = " ".join(str(x) for x in (err.context, err.problem) if x) or "invalid YAML"
        return docs, [_problem_at(file, mark, "yaml-syntax", message, "")]
    except yaml.YAMLError as err:
        return docs, [_problem_at(file, None, "yaml-syntax", str(err), "")]
    finally:
        loader.dispose()
    return docs, []


def load_file(path: Path, display: str | None = None) -> tuple[list[Document], list[Problem]]:
    name = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        return [], [Problem(name, 0, 0, "file-unreadable", Severity.ERROR, err.strerror or str(err))]
    if len(raw) > MAX_FILE_BYTES:
        return [], [
            Problem(
                name,
                1,
                1,
                "yaml-too-large",
                Severity.ERROR,
                f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB",
            )
        ]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return [], [
            Problem(name, 1, 1, "file-encoding", Severity.ERROR, f"not UTF-8: {err.reason} at byte {err.start}")
        ]
    return load_text(text, name)


YAML_SUFFIXES = (".yaml", ".yml")


def iter_yaml_files(root: Path) -> Iterator[Path]:
    """YAML files below root in a stable order, skipping hidden entries."""
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.suffix in YAML_SUFFIXES:
            yield path


def _display(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root.parent).as_posix()
    except ValueError:
        return path.as_posix()


def load_documents(paths: Iterable[Path]) -> tuple[list[Document], list[Problem]]:
    docs: list[Document] = []
    problems: list[Problem] = []
    for root in paths:
        if not root.exists():
            problems.append(Problem(str(root), 0, 0, "file-missing", Severity.ERROR, "no such file or directory"))
            continue
        for path in iter_yaml_files(root):
            found, errs = load_file(path, str(path) if path == root else _display(path, root))
            docs.extend(found)
            problems.extend(errs)
    return docs, problems
