"""Canonical YAML and JSON: one spelling per object, so the same input gives the same bytes."""

from __future__ import annotations

import json
import math
from typing import Any

import yaml

try:
    _BaseDumper: type[yaml.SafeDumper] = yaml.CSafeDumper  # type: ignore[assignment]
except AttributeError:  # pragma: no cover
    _BaseDumper = yaml.SafeDumper

_TOP_ORDER = ("apiVersion", "kind", "metadata", "spec", "data", "stringData", "rules", "subjects", "roleRef")
_META_ORDER = ("name", "namespace", "labels", "annotations")


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    pass


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


def dump_yaml(obj: Any) -> str:
    return yaml.dump(
        obj,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 16,
        indent=2,
    )


def dump_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def yaml_scalar(value: Any) -> str:
    """A YAML flow encoding of value that parses back to exactly value (used by templates)."""
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
        return repr(value)
    if isinstance(value, str):
        if value.isascii() and all(" " <= ch <= "~" or ch in "\t\n\r" for ch in value):
            return json.dumps(value)
        text = yaml.dump(value, Dumper=_BaseDumper, default_style='"', allow_unicode=False, width=1 << 30)
        return text.removesuffix("\n...\n").rstrip("\n")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_scalar(str(k))}: {yaml_scalar(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(yaml_scalar(v) for v in value) + "]"
    raise TypeError(f"cannot render a value of type {type(value).__name__}")
