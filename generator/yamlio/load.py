"""Stage 1: read YAML documents safely, keeping the line and column of every node.

Loading is safe YAML only (no Python tags). Duplicate keys, non-string keys and recursive
aliases are findings, not silent last-one-wins. Positions are kept per JSON path so that
every later stage can point at the exact line of a policy file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import yaml

from generator.errors import GeneratorError
from generator.problems import Problem, Severity
from generator.yamlio import kube_scalars

try:
    SAFE_LOADER: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - libyaml missing
    SAFE_LOADER = yaml.SafeLoader

# Files and stdin up to this size are read (a whole rendered platform is ~9 MB); the node and
# depth limits below bound what a file of that size can make gen hold, aliases included.
DEFAULT_MAX_FILE_MIB = 64
MAX_FILE_ENV = "GEN_MAX_FILE_MIB"  # wins over .gen.yaml's maxFileMiB
_configured_mib: list[int] = []  # .gen.yaml's maxFileMiB, once its settings are read
MAX_NODES = 200_000
MAX_DEPTH = 100  # nesting levels; later stages recurse per level, and no manifest needs more

Path_ = tuple[str | int, ...]
_T = TypeVar("_T")

# YAML 1.1 reads these plain scalars as booleans; a user almost always meant the string.
_YAML11_BOOLS = re.compile(r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)\Z")


def configure_max_file_mib(mib: int | None) -> None:
    """The size limit a repository's settings give (None: the default)."""
    _configured_mib[:] = [mib] if mib else []


def max_file_bytes() -> int:
    """The largest file or stdin gen reads: $GEN_MAX_FILE_MIB, else .gen.yaml's, else 64 MiB."""
    raw = os.environ.get(MAX_FILE_ENV)
    if raw is not None and (raw := raw.strip()):
        try:
            mib = int(raw)
        except ValueError:
            mib = 0
        if mib <= 0:
            raise GeneratorError(f"{MAX_FILE_ENV}={raw!r}: the size limit is a whole number of MiB above 0")
        return mib * 1024 * 1024
    return (_configured_mib[0] if _configured_mib else DEFAULT_MAX_FILE_MIB) * 1024 * 1024


def _too_large(file: str, limit: int) -> Problem:
    return Problem(
        file,
        1,
        1,
        "yaml-too-large",
        Severity.ERROR,
        f"file is larger than {limit // (1024 * 1024)} MiB",
        hint=f"raise the limit with {MAX_FILE_ENV} or .gen.yaml's maxFileMiB if the file is meant to be this large",
    )


class Position(NamedTuple):
    line: int
    column: int


class Scalar(NamedTuple):
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
    """One YAML document of a file, with the means to locate its nodes.

    Positions are worked out from the text only when a finding needs one: most documents are
    valid, and keeping a position for every node would double the cost of loading.
    """

    file: str
    index: int
    data: Any
    _source: SourceMap | None = None
    _text: str = field(default="", repr=False)
    kube: bool = False  # read as Kubernetes reads manifests, not by gen's policy rules
    _file_sources: FileSources | None = field(default=None, repr=False, compare=False)
    digest: str = field(default="", repr=False, compare=False)  # its file's name and text as a cache key, once read

    @property
    def text(self) -> str:
        """The whole text of the file this document was read from."""
        return self._text

    @property
    def source(self) -> SourceMap:
        if self._source is None:
            if self._file_sources is not None:
                self._source = self._file_sources.of(self.index)
            else:
                self._source = _source_of(self._text, self.index, self.kube)
        return self._source

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
    def __init__(self, mark: _Mark | None, rule: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.mark = mark
        self.rule = rule
        self.message = message
        self.hint = hint


_Mark = Any  # yaml.error.Mark, or libyaml's own Mark type
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_MERGE = object()  # the pending key of a `<<:` entry


def _position(mark: _Mark) -> Position:
    return Position(mark.line + 1, mark.column + 1)  # libyaml counts from 0


@dataclass
class _Open:
    """A mapping or sequence whose end event has not come yet."""

    value: dict[str, Any] | list[Any]
    path: Path_
    mark: _Mark
    anchor: str | None = None
    nodes_before: int = 0  # node count when it opened, to size what an alias of it expands to
    height: int = 1  # levels of nesting it holds, itself included
    key: Any = None  # mapping only: the key whose value comes next (None: a key comes next)
    key_marks: dict[str, _Mark] = field(default_factory=dict)
    merges: list[tuple[dict[str, Any], Path_]] = field(default_factory=list)


class _Builder:
    """Builds Python data from libyaml's event stream, with positions, in one pass.

    Doing this here instead of in PyYAML's composer and constructor is several times faster and
    lets every check happen where the event is: duplicate and non-string keys, recursive
    aliases, alias expansion beyond MAX_NODES, and tags the safe schema does not know.
    """

    def __init__(self, source: SourceMap | None, kube: bool = False, warnings: list[_LoadError] | None = None) -> None:
        self.source = source
        self.kube = kube  # read as Kubernetes does (kube_scalars), not by gen's policy rules
        self.warnings = warnings  # where reading goes on past a problem, as kubectl does (None: it stops)
        self.mark: _Mark | None = None
        # anchor -> (value, its path, its open frame or None once closed, nodes it expands to, its height)
        self.anchors: dict[str, tuple[Any, Path_, _Open | None, int, int]] = {}
        self.stack: list[_Open] = []
        self.root: Any = None
        self.nodes = 0

    # -- values -------------------------------------------------------------------------

    def value(self, event: yaml.ScalarEvent, key: bool = False) -> Any:
        """The scalar's value; _MERGE for a `<<` key."""
        if self.kube and event.tag in (None, "!"):
            if event.style or event.tag == "!":
                return event.value  # quoted, block or `!`-tagged: always a string
            if key and event.value == "<<":
                return _MERGE
            return kube_scalars.plain_value(event.value)
        if event.tag is None or event.tag == "!":
            tag = _resolve_scalar_tag(event.value, event.implicit)
        else:
            tag = str(event.tag)
        if key and tag == _MERGE_TAG:
            return _MERGE
        return self.scalar(event, tag)

    def scalar(self, event: yaml.ScalarEvent, tag: str) -> Any:
        try:
            return _construct_scalar(tag, event.value, event.style)
        except _BadValue as err:
            raise _LoadError(event.start_mark, "yaml-value", str(err), "quote it to keep it a string") from err
        except yaml.YAMLError as err:
            raise _LoadError(event.start_mark, "yaml-tag", str(err).split("\n")[0], "use plain YAML values") from err

    def _child_path(self) -> Path_:
        if not self.stack or self.source is None:
            return ()  # paths only serve positions
        top = self.stack[-1]
        if isinstance(top.value, list):
            return (*top.path, len(top.value))
        if top.key is _MERGE:
            return (*top.path, "<<")
        return (*top.path, top.key)

    def _count(self, extra: int = 1) -> None:
        self.nodes += extra
        if self.nodes > MAX_NODES:
            raise _LoadError(
                self.mark,
                "yaml-too-large",
                f"document expands to more than {MAX_NODES} nodes (aliases included)",
                "split the file or use fewer aliases",
            )

    def _nest(self, height: int, mark: _Mark) -> None:
        """A value `height` levels deep goes into the open container (aliases included)."""
        if len(self.stack) + height > MAX_DEPTH:
            raise _LoadError(
                mark, "yaml-too-large", f"document nests deeper than {MAX_DEPTH} levels", "flatten the structure"
            )
        if self.stack and height:
            self.stack[-1].height = max(self.stack[-1].height, height + 1)

    def _place(self, value: Any, path: Path_, mark: _Mark) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        if isinstance(top.value, list):
            top.value.append(value)
            return
        if top.key is _MERGE:
            sources = value if isinstance(value, list) else [value]
            if not all(isinstance(v, dict) for v in sources):
                raise _LoadError(mark, "yaml-merge", "`<<` needs a mapping or a list of mappings", "")
            # YAML's merge rule: with `<<: [*a, *b]`, *a wins over *b; the mapping's own keys win over both
            found = [(v, (*path, i)) for i, v in enumerate(sources)] if isinstance(value, list) else [(value, path)]
            if self.kube:
                # go-yaml v2 merges where `<<` stands: it overwrites the keys written before it
                for source, origin in reversed(found):
                    for merged in source:
                        self._copy_positions((*origin, merged), (*top.path, merged))
                    top.value.update(source)
            else:
                top.merges.extend(found)
        else:
            top.value[top.key] = value
        top.key = None

    def _record(self, path: Path_, mark: _Mark, scalar: Scalar | None = None) -> None:
        if self.source is not None:
            self.source.values[path] = _position(mark)
            if scalar is not None:
                self.source.scalars[path] = scalar

    def _key(self, top: _Open, event: yaml.Event) -> None:
        if not isinstance(event, yaml.ScalarEvent):
            raise _LoadError(event.start_mark, "yaml-key-type", "a mapping key must be a string, not a collection", "")
        key = self.value(event, key=True)
        if key is _MERGE:
            top.key = _MERGE
            return
        if self.kube and not isinstance(key, str):
            key = kube_scalars.key_string(key)  # sigs.k8s.io/yaml spells such keys as JSON strings
        if not isinstance(key, str):
            hint = "quote the key"
            if not event.style and _YAML11_BOOLS.match(event.value):
                hint = f"YAML 1.1 reads unquoted {event.value!r} as a boolean; quote it"
            raise _LoadError(event.start_mark, "yaml-key-type", f"mapping key {event.value!r} is not a string", hint)
        first = top.key_marks.get(key)
        if first is not None:
            duplicate = _LoadError(
                event.start_mark,
                "yaml-duplicate-key",
                f"duplicate key {key!r} (first defined on line {first.line + 1})",
                "remove one of the two; YAML would silently keep only the last",
            )
            if not self.kube or self.warnings is None:
                raise duplicate  # in a policy gen decides, and refuses to guess
            duplicate.hint = "kubectl sends the last value, but kustomize refuses the file: remove one of the two"
            self.warnings.append(duplicate)
        top.key_marks[key] = event.start_mark
        if self.source is not None:
            self.source.keys[(*top.path, key)] = _position(event.start_mark)
        top.key = key

    # -- events -------------------------------------------------------------------------

    def feed(self, event: yaml.Event) -> None:
        self.mark = event.start_mark
        top = self.stack[-1] if self.stack else None
        if (
            top is not None
            and isinstance(top.value, dict)
            and top.key is None
            and not isinstance(event, yaml.MappingEndEvent)
        ):
            self._key(top, event)
            return
        if isinstance(event, yaml.ScalarEvent):
            self._count()
            path = self._child_path()
            value = self.value(event)
            if self.source is not None:
                self._record(path, event.start_mark, Scalar(event.value, not event.style))
            if event.anchor:
                self.anchors[event.anchor] = (value, path, None, 1, 0)
            self._place(value, path, event.start_mark)
        elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            self._count()
            is_map = isinstance(event, yaml.MappingStartEvent)
            if event.tag not in (None, "!", _MAP_TAG if is_map else _SEQ_TAG):
                raise _LoadError(
                    event.start_mark, "yaml-tag", f"unsupported tag {event.tag!r}", "use plain YAML values"
                )
            self._nest(1, event.start_mark)
            path = self._child_path()
            frame = _Open({} if is_map else [], path, event.start_mark, event.anchor, self.nodes - 1)
            self._record(path, event.start_mark)
            if event.anchor:
                self.anchors[event.anchor] = (frame.value, path, frame, 0, 0)
            self.stack.append(frame)
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            frame = self.stack.pop()
            if frame.merges:
                frame.value = self._merged(frame)
            if frame.anchor:
                size = self.nodes - frame.nodes_before
                self.anchors[frame.anchor] = (frame.value, frame.path, None, size, frame.height)
            self._nest(frame.height, frame.mark)
            self._place(frame.value, frame.path, frame.mark)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in self.anchors:
                raise _LoadError(event.start_mark, "yaml-alias", f"found undefined alias {event.anchor!r}", "")
            value, origin, still_open, size, height = self.anchors[event.anchor]
            if still_open is not None:
                raise _LoadError(event.start_mark, "yaml-recursive-alias", "recursive alias", "remove the cycle")
            self._count(size)  # later stages walk the expanded tree: a billion laughs stops here
            self._nest(height, event.start_mark)
            path = self._child_path()
            self._copy_positions(origin, path)
            self._place(value, path, event.start_mark)

    def _merged(self, frame: _Open) -> dict[str, Any]:
        assert isinstance(frame.value, dict)
        out: dict[str, Any] = {}
        for source, origin in frame.merges:
            for key, value in source.items():
                if key not in out:
                    out[key] = value
                    if key not in frame.value:
                        self._copy_positions((*origin, key), (*frame.path, key))
        out.update(frame.value)
        return out

    def _copy_positions(self, origin: Path_, path: Path_) -> None:
        """An alias (or merged key) is located where its anchor's content is, under the new path."""
        if self.source is not None:
            _copy_prefix(self.source.values, origin, path)
            _copy_prefix(self.source.keys, origin, path)
            _copy_prefix(self.source.scalars, origin, path)


def _copy_prefix(table: dict[Path_, _T], origin: Path_, path: Path_) -> None:
    n = len(origin)
    table.update({(*path, *p[n:]): v for p, v in table.items() if p[:n] == origin})


_CONSTRUCTOR = yaml.SafeLoader("")  # only its resolver tables and scalar constructors are used


@lru_cache(maxsize=16384)
def _resolve_scalar_tag(value: str, implicit: tuple[bool, bool]) -> str:
    return str(_CONSTRUCTOR.resolve(yaml.ScalarNode, value, implicit))


@lru_cache(maxsize=16384)
def _scalar_tag_and_value(
    tag: str | None, value: str, implicit: tuple[bool, bool], style: str | None
) -> tuple[str | None, Any]:
    """(resolved tag, value) of a scalar event, or (None, None) where the general path must decide."""
    resolved = _resolve_scalar_tag(value, implicit) if tag is None or tag == "!" else tag
    try:
        return resolved, _construct_scalar(resolved, value, style)
    except yaml.YAMLError:
        return None, None


@lru_cache(maxsize=16384)
def _construct_scalar(tag: str, value: str, style: str | None) -> Any:
    """Safe-schema scalars are immutable (str, int, float, bool, None, dates, bytes), so cache them."""
    node = yaml.ScalarNode(tag, value, style=style)
    constructor = _CONSTRUCTOR.yaml_constructors.get(tag)
    if constructor is None:
        raise yaml.constructor.ConstructorError(None, None, f"unsupported tag {tag!r}", None)
    try:
        return constructor(_CONSTRUCTOR, node)
    except (ValueError, OverflowError) as err:  # e.g. 2026-13-45: shaped like a date, but none
        kind = tag.rsplit(":", 1)[-1]
        raise _BadValue(f"{value!r} reads as a YAML {kind} but is not a valid one ({err})") from err


class _BadValue(yaml.YAMLError):
    """A scalar whose form picks a type whose constructor then rejects it."""


def _problem_at(
    file: str, mark: _Mark | None, rule: str, message: str, hint: str, severity: Severity = Severity.ERROR
) -> Problem:
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    return Problem(file, line, col, rule, severity, message, hint)


class YamlError(ValueError):
    """Text that is not YAML gen accepts; `mark` is where (None when unknown)."""

    def __init__(self, message: str, mark: _Mark | None = None, rule: str = "yaml-syntax", hint: str = "") -> None:
        super().__init__(message)
        self.mark, self.rule, self.hint = mark, rule, hint


def _documents(
    text: str, track: bool, kube: bool = False, warnings: list[_LoadError] | None = None
) -> Iterator[tuple[int, Any, SourceMap | None]]:
    """(index, data, positions) per document; raises YamlError at the first problem (what reads
    on regardless, as Kubernetes does, goes to warnings)."""
    loader = SAFE_LOADER(text)
    try:
        builder: _Builder | None = None
        index = 0
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.DocumentStartEvent):
                builder = _Builder(SourceMap() if track else None, kube, warnings)
            elif isinstance(event, yaml.DocumentEndEvent) and builder is not None:
                yield index, builder.root, builder.source
                index += 1
            elif builder is not None and not isinstance(event, yaml.StreamEndEvent):
                builder.feed(event)
    except _LoadError as err:
        raise YamlError(err.message, err.mark, err.rule, err.hint) from err
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        if "'\\t'" in str(err.problem) or (mark is not None and _char_at(text, mark) == "\t"):
            raise YamlError(
                "tabs are not allowed for indentation (or anywhere a token starts)",
                mark,
                hint="indent with spaces",
            ) from err
        message = " ".join(str(x) for x in (err.context, err.problem) if x) or "invalid YAML"
        if err.context_mark is not None and "end of stream" in str(err.problem):
            # a quote or bracket never closed: the error is where it opened, not at the file's end
            raise YamlError(
                f"{err.context} that is never closed", err.context_mark, hint="close it, or quote the value"
            ) from err
        raise YamlError(message, mark) from err
    except yaml.YAMLError as err:
        raise YamlError(str(err)) from err
    finally:
        loader.dispose()


def _char_at(text: str, mark: _Mark) -> str:
    lines = text.split("\n", mark.line + 1)
    line = lines[mark.line] if mark.line < len(lines) else ""
    return line[mark.column] if mark.column < len(line) else ""


class _Unusual(Exception):
    """Text the simple path leaves to the builder: anything but plain maps, lists and scalars."""


def _simple_documents(text: str, kube: bool = False) -> list[Any]:
    """Every document of text, when it holds only mappings, sequences and untagged scalars
    with unique string keys: what nearly every policy and rendered manifest is.

    This is the builder's result without its bookkeeping (no positions, anchors, merges or
    per-event method calls), 1.6 times as fast. Anything else, a syntax error included,
    raises _Unusual, and the builder reads the text again and decides (or reports).
    """
    loader = SAFE_LOADER(text)
    get_event = loader.get_event
    scalar_event, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    docs: list[Any] = []
    # the open mapping or sequence (None: none yet) in locals, the ones around it on a stack
    top: Any = None
    key: Any = None  # in a mapping, the key whose value comes next (None: a key comes next)
    is_list = False
    around: list[tuple[Any, Any, bool]] = []  # (container, its key, is_list) of each enclosing one
    root: Any = None
    nodes = 0
    try:
        while (event := get_event()) is not None:
            kind = type(event)
            if kind is scalar_event:  # most events: the fewest steps
                if kube:
                    if event.anchor is not None or event.tag is not None or event.value == "<<":
                        raise _Unusual
                    value = event.value if event.style else kube_scalars.plain_value(event.value)
                else:
                    if event.anchor is not None or (event.tag is not None and event.tag != "!"):
                        raise _Unusual
                    tag, value = _scalar_tag_and_value(None, event.value, event.implicit, event.style)
                    if tag is None or tag == _MERGE_TAG:
                        raise _Unusual
                nodes += 1
                if nodes > MAX_NODES:
                    raise _Unusual
            elif kind is mapping_start or kind is sequence_start:
                if event.anchor is not None or event.tag not in (None, "!"):
                    raise _Unusual
                around.append((top, key, is_list))
                is_list = kind is sequence_start
                top, key = ([] if is_list else {}), None
                nodes += 1
                if nodes > MAX_NODES or len(around) > MAX_DEPTH:
                    raise _Unusual
                continue
            elif kind in closing:
                value = top
                top, key, is_list = around.pop()
            elif kind is yaml.DocumentEndEvent:
                docs.append(root)
                continue
            elif kind is yaml.DocumentStartEvent:
                top, key, is_list, around, root, nodes = None, None, False, [], None, 0
                continue
            elif kind is yaml.StreamStartEvent or kind is yaml.StreamEndEvent:
                continue
            else:  # aliases
                raise _Unusual
            if top is None:  # the document's root
                root = value
            elif is_list:
                top.append(value)
            elif key is None:
                if type(value) is not str or value in top:
                    raise _Unusual
                key = value
            else:
                top[key] = value
                key = None
    except yaml.YAMLError as err:
        raise _Unusual from err
    finally:
        loader.dispose()
    return docs


def _simple(text: str, kube: bool = False) -> list[Any] | None:
    """The documents of text by the simple path, or None: the builder decides."""
    try:
        return _simple_documents(text, kube)
    except _Unusual:
        return None


class FileSources:
    """The positions of every document of one file, worked out in one pass the first time any
    document needs them: locating each document by reading the file up to it again took time
    growing with the square of the documents (Argo CD's 2 MB install: seconds)."""

    def __init__(self, text: str, kube: bool) -> None:
        self._text, self._kube = text, kube
        self._maps: list[SourceMap] | None = None

    def of(self, index: int) -> SourceMap:
        if self._maps is None:
            self._maps = []
            try:
                tolerated: list[_LoadError] = []
                for _, _, source in _documents(
                    self._text, track=True, kube=self._kube, warnings=tolerated if self._kube else None
                ):
                    self._maps.append(source if source is not None else SourceMap())
            except YamlError:
                pass  # the documents before the broken one keep their positions
        return self._maps[index] if index < len(self._maps) else SourceMap()


def _source_of(text: str, index: int, kube: bool) -> SourceMap:
    try:
        tolerated: list[_LoadError] = []  # a manifest read past its warnings is located the same way
        for found, _, source in _documents(text, track=True, kube=kube, warnings=tolerated if kube else None):
            if found == index and source is not None:
                return source
    except YamlError:
        pass  # the document itself loaded; a later one is broken
    return SourceMap()


def parse_yaml(text: str, kube: bool = False) -> Any:
    """The one document in text (None if empty), with every load-time check; no positions kept.

    kube: read it as Kubernetes does (see kube_scalars), not by gen's policy rules.
    """
    found = _simple(text, kube)
    if found is None:
        found = [data for _, data, _ in _documents(text, track=False, kube=kube)]
    if len(found) > 1:
        raise YamlError(f"expected one document, found {len(found)}")
    return found[0] if found else None


def load_text(
    text: str, file: str, kube: bool = False, limit: int | None = None
) -> tuple[list[Document], list[Problem]]:
    """Parse every document of text; a broken document is a Problem, the others still load.
    limit: the size limit in bytes, when the caller has it (max_file_bytes() otherwise)."""
    docs: list[Document] = []
    limit = max_file_bytes() if limit is None else limit
    if len(text) > limit // 4 and len(text.encode("utf-8", "surrogatepass")) > limit:
        return docs, [_too_large(file, limit)]
    simple = _simple(text, kube)
    shared = FileSources(text, kube)
    if simple is not None:
        return [
            Document(file, index, data, None, text, kube, shared)
            for index, data in enumerate(simple)
            if data is not None
        ], []
    warnings: list[_LoadError] = []
    # a file the fast reader declined is read once, positions kept: its findings need them
    maps: list[SourceMap] = []
    try:
        for index, data, source in _documents(text, track=True, kube=kube, warnings=warnings):
            maps.append(source if source is not None else SourceMap())
            if data is not None:
                docs.append(Document(file, index, data, maps[-1], text, kube))
    except YamlError as err:
        return docs, [_problem_at(file, err.mark, err.rule, str(err), err.hint)]
    return docs, [_problem_at(file, w.mark, w.rule, str(w), w.hint, Severity.WARNING) for w in warnings]


def _read_at_most(fh: Any, limit: int) -> bytes | None:
    """The file's bytes, or None if it holds more than limit: memory never holds more than that
    (a regular file is measured first, a pipe such as stdin read up to one byte past it)."""
    size = os.fstat(fh.fileno()).st_size
    if size > limit:
        return None
    if size:
        raw: bytes = fh.readall()
        return raw if len(raw) <= limit else None
    chunks, held = [], 0
    while chunk := fh.read(min(1 << 20, limit + 1 - held)):
        chunks.append(chunk)
        held += len(chunk)
        if held > limit:
            return None
    return b"".join(chunks)


def load_file(path: str | Path, display: str | None = None, kube: bool = False) -> tuple[list[Document], list[Problem]]:
    name = display or str(path)
    limit = max_file_bytes()
    try:
        with open(path, "rb", buffering=0) as fh:  # unbuffered: one read, half pathlib's cost
            raw = _read_at_most(fh, limit)
    except OSError as err:
        return [], [Problem(name, 0, 0, "file-unreadable", Severity.ERROR, err.strerror or str(err))]
    if raw is None:
        return [], [_too_large(name, limit)]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        column = len(raw[raw.rfind(b"\n", 0, err.start) + 1 : err.start].decode("utf-8", "replace")) + 1
        return [], [
            Problem(
                name,
                line,
                column,
                "file-encoding",
                Severity.ERROR,
                f"not UTF-8: byte 0x{raw[err.start]:02x} ({err.reason})",
                hint="save the file as UTF-8",
            )
        ]
    return load_text(text, name, kube, limit)
