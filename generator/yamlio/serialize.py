"""Canonical YAML and JSON: one spelling per object, so the same input gives the same bytes."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import Any

import yaml

from generator.yamlio import kube_scalars

try:
    _BaseDumper: type[yaml.SafeDumper] = yaml.CSafeDumper  # type: ignore[assignment]
except AttributeError:  # pragma: no cover
    _BaseDumper = yaml.SafeDumper

_STR_TAG = "tag:yaml.org,2002:str"
_KUBE_NON_STRING_TAG = "tag:yaml.org,2002:kubernetes-non-string"  # any tag but str makes the emitter quote
_TOP_ORDER = ("apiVersion", "kind", "metadata", "spec", "data", "stringData", "rules", "subjects", "roleRef")
_META_ORDER = ("name", "namespace", "labels", "annotations")


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    def resolve(self, kind: type[yaml.Node], value: str, implicit: tuple[bool, bool]) -> str:
        """A string goes plain only if Kubernetes reads it back as that string too: the emitter
        quotes whatever resolves to another tag, so `y` or `1e3` (strings to YAML 1.1,
        a boolean and a number to go-yaml) get quotes."""
        tag: str = super().resolve(kind, value, implicit)
        if tag == _STR_TAG and kind is yaml.ScalarNode and implicit[0] and not kube_scalars.is_string(value):
            return _KUBE_NON_STRING_TAG
        return tag


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # Multi-line text (embedded configs, dashboards) reads best as a literal block.
    style = "|" if "\n" in data and _literal_ok(data) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _literal_ok(data: str) -> bool:
    return all(line == line.rstrip(" \t") for line in data.split("\n")) and all(
        ch == "\n" or ch.isprintable() for ch in data
    )


_Dumper.add_representer(str, _represent_str)


def _ordered(mapping: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    out = {k: mapping[k] for k in order if k in mapping}
    out.update((k, v) for k, v in mapping.items() if k not in out)
    return out


def canonical(obj: dict[str, Any]) -> dict[str, Any]:
    """Conventional key order: apiVersion, kind, metadata (name, namespace, labels, annotations), spec…"""
    out = _ordered(obj, _TOP_ORDER)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = _ordered(meta, _META_ORDER)
        for key in ("labels", "annotations"):
            if isinstance(meta.get(key), dict):
                meta[key] = dict(sorted(meta[key].items()))
        out["metadata"] = meta
    return out


_DUMP_OPTIONS: dict[str, Any] = {
    "Dumper": _Dumper,
    "sort_keys": False,
    "default_flow_style": False,
    "allow_unicode": True,
    "width": 1 << 16,
    "indent": 2,
}
# Characters YAML treats as line breaks: strings holding one take PyYAML's block/quoting paths.
_BREAKS = frozenset("\n\r\x85\u2028\u2029")
# Strings a JSON double-quoted scalar carries unchanged into YAML: printable ASCII, tab, CR, LF.
_JSON_SAFE = re.compile(r"[ -~\t\n\r]*\Z")
_SIMPLE_KEY_MAX = 128  # libyaml writes keys of more UTF-8 bytes as "? key"


# Strings PyYAML writes plain whenever YAML 1.1 would read them back as strings (tests check
# this against PyYAML); everything else is spelled by PyYAML itself.
_PLAIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9._/-]*(?::[A-Za-z0-9._/-]+)*\Z")
_RESOLVER = yaml.resolver.Resolver()


class _NeedsFullDumper(Exception):
    pass


@lru_cache(maxsize=65536)
def _scalar_text(value: Any, kind: Any, key: bool) -> str | None:
    """How PyYAML spells one scalar, or None where only PyYAML itself may write it (memoized:
    manifests repeat most of their scalars)."""
    del kind  # part of the cache key only: 1, 1.0 and True are equal but spelled differently
    if isinstance(value, str):
        if _BREAKS.intersection(value) or (key and len(value.encode("utf-8", "surrogatepass")) >= _SIMPLE_KEY_MAX):
            return None
        if (
            _PLAIN_WORD.match(value)
            and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG
            and kube_scalars.is_string(value)
        ):
            return value  # a name, path or image reference that reads back as itself: PyYAML writes it plain
    elif value is not None and not isinstance(value, int | float):
        return None
    text: str = yaml.dump(value, **_DUMP_OPTIONS)
    return text.removesuffix("\n...\n").removesuffix("\n")


def _scalar(value: Any, key: bool = False) -> str:
    try:
        # -0.0 == 0.0 would share a cache entry, so floats are not cached
        text = (
            _scalar_text.__wrapped__(value, "float", key)
            if isinstance(value, float)
            else _scalar_text(value, type(value).__name__, key)
        )
    except TypeError:  # unhashable: not a scalar
        text = None
    if text is None:
        raise _NeedsFullDumper
    return text


# The spelling of every string met so far, as a key and as a value: manifests repeat most of
# their strings, and a dict lookup is the cheapest way to find them again.
_KEY_TEXT: dict[str, str] = {}
_VALUE_TEXT: dict[str, str] = {}


def _string(value: str, key: bool) -> str:
    table = _KEY_TEXT if key else _VALUE_TEXT
    text = table.get(value)
    if text is None:
        text = _scalar(value, key)
        if len(table) < 65536:
            table[value] = text
    return text


def _key_text(key: Any) -> str:
    return _string(key, True) if type(key) is str else _scalar(key, True)


def _inline(item: Any) -> str:
    """A value on its key's or dash's line: a scalar, or an empty mapping or sequence."""
    if type(item) is str:
        return _VALUE_TEXT.get(item) or _string(item, False)
    if isinstance(item, dict | list):
        return "{}" if isinstance(item, dict) else "[]"
    return _scalar(item)


def _block(value: dict[Any, Any] | list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            head = pad + (_KEY_TEXT.get(key) or _key_text(key)) + ":"
            if item and isinstance(item, dict):
                out.append(head)
                _block(item, indent + 2, out)
            elif item and isinstance(item, list):
                out.append(head)
                _block(item, indent, out)  # PyYAML writes a mapping's sequences indentless
            else:
                out.append(head + " " + _inline(item))
        return
    for item in value:
        if item and isinstance(item, dict | list):
            start = len(out)
            _block(item, indent + 2, out)
            out[start] = pad + "- " + out[start][indent + 2 :]
        else:
            out.append(pad + "- " + _inline(item))


def dump_yaml(obj: Any) -> str:
    """Block YAML exactly as PyYAML writes it with our options, built directly for the common case.

    Manifests are plain nests of maps, lists and one-line scalars; building their lines here is
    about ten times faster than PyYAML's representer (25 µs
    instead of 276 for a Deployment). Anything else (multi-line text, long keys,
    other types) goes through PyYAML itself, which stays the reference (tests compare both).
    """
    if isinstance(obj, dict | list) and obj:
        try:
            return _block_text(obj)
        except _NeedsFullDumper:
            pass
    return dump_yaml_reference(obj)


def _block_text(obj: dict[Any, Any] | list[Any]) -> str:
    out: list[str] = []
    _block(obj, 0, out)
    return "\n".join(out) + "\n"


def dump_yaml_reference(obj: Any) -> str:
    return yaml.dump(obj, **_DUMP_OPTIONS)


# Flow spellings of the strings met so far: templates write the same labels and names again
# and again, and this lookup is most of what writing one costs.
_FLOW_TEXT: dict[str, str] = {}


def _flow_string(value: str) -> str:
    text = _FLOW_TEXT.get(value)
    if text is None:
        if _JSON_SAFE.match(value):
            text = encode_basestring_ascii(value)  # what json.dumps writes for a str
        else:
            text = yaml.dump(value, Dumper=_BaseDumper, default_style='"', allow_unicode=False, width=1 << 30)
            text = text.removesuffix("\n...\n").rstrip("\n")
        if len(_FLOW_TEXT) < 65536:
            _FLOW_TEXT[value] = text
    return text


def yaml_scalar(value: Any) -> str:
    """A YAML flow encoding of value that parses back to exactly value (used by templates)."""
    kind = type(value)
    if kind is str:
        return _flow_string(value)
    if kind is dict:
        return "{" + ", ".join([f"{_flow_string(str(k))}: {yaml_scalar(v)}" for k, v in value.items()]) + "}"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite numbers cannot be rendered")
        text = repr(value)
        # YAML 1.1 reads 1e-05 as a string: its floats need a dot (PyYAML writes 1.0e-05 too)
        return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text
    if isinstance(value, str):
        return _flow_string(str(value))
    if isinstance(value, dict):
        return yaml_scalar(dict(value))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(yaml_scalar(v) for v in value) + "]"
    raise TypeError(f"cannot render a value of type {type(value).__name__}")
