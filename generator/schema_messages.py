"""Schema errors in words: one table, keyword by keyword, for policies and manifests alike.

jsonschema's own messages show regular expressions, Python reprs and `None is not of type
'object'`. A person needs what the field takes. Patterns say it in the schema itself, with the
`patternErrorMessage` keyword editors (yaml-language-server) show as well.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

_JSON_TYPES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def shown(value: Any) -> str:
    """A value as YAML and JSON would write it: "a", 3, true, null (never a Python repr)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return json.dumps(str(value), ensure_ascii=False)


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true or false"
    for name, python in (("integer", int), ("number", float), ("string", str), ("object", dict), ("array", list)):
        if isinstance(value, python):
            return _JSON_TYPES[name]
    return "a value of another kind"


def _field(err: jsonschema.ValidationError) -> str:
    path = list(err.absolute_path)
    return repr(str(path[-1])) if path and isinstance(path[-1], str) else "the value"


def _type(err: jsonschema.ValidationError) -> str:
    wanted = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
    want = " or ".join(_JSON_TYPES.get(str(w), str(w)) for w in wanted if w != "null")
    if err.instance is None:
        if "object" in wanted:
            return f"{_field(err)} is empty, but takes {want}: indent the fields that belong under it"
        return f"{_field(err)} is empty, but takes {want}"
    if isinstance(err.instance, dict | list):  # shown() would only repeat the kind: "a list is a list"
        return f"{_field(err)} is {_kind(err.instance)}, but takes {want}"
    return f"{shown(err.instance)} is {_kind(err.instance)}, but {_field(err)} takes {want}"


def _pattern(err: jsonschema.ValidationError) -> str:
    words = err.schema.get("patternErrorMessage") if isinstance(err.schema, dict) else None
    return f"{shown(err.instance)} {words or 'is not in the form this field takes'}"


def _enum(err: jsonschema.ValidationError) -> str:
    return f"{shown(err.instance)} is not one of: {', '.join(shown(v) for v in err.validator_value)}"


def _required(err: jsonschema.ValidationError) -> str:
    missing = [key for key in err.validator_value if isinstance(err.instance, dict) and key not in err.instance]
    return f"missing required field {shown(missing[0] if missing else err.validator_value[0])}"


def _bound(word: str, strict: bool = False) -> Callable[[jsonschema.ValidationError], str]:
    def message(err: jsonschema.ValidationError) -> str:
        return f"{shown(err.instance)} must be {word}{' than' if strict else ''} {err.validator_value}"

    return message


_SINGULAR = {"characters": "character", "entries": "entry", "fields": "field"}


def _length(word: str, unit: str) -> Callable[[jsonschema.ValidationError], str]:
    def message(err: jsonschema.ValidationError) -> str:
        if err.validator_value == 1 and word == "at least":
            return f"{_field(err)} must not be empty"
        count = err.validator_value
        return f"{_field(err)} must have {word} {count} {_SINGULAR[unit] if count == 1 else unit}"

    return message


def _unknown(err: jsonschema.ValidationError) -> str:
    allowed = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
    extra = sorted(str(k) for k in (err.instance or {}) if k not in allowed)
    return f"unknown field{'s' if len(extra) > 1 else ''} {', '.join(shown(k) for k in extra)}"


MESSAGES: dict[str, Callable[[jsonschema.ValidationError], str]] = {
    "type": _type,
    "pattern": _pattern,
    "enum": _enum,
    "const": lambda err: f"{shown(err.instance)} must be {shown(err.validator_value)}",
    "required": _required,
    "minimum": _bound("at least"),
    "maximum": _bound("at most"),
    "exclusiveMinimum": _bound("greater", strict=True),
    "exclusiveMaximum": _bound("less", strict=True),
    "minLength": _length("at least", "characters"),
    "maxLength": _length("at most", "characters"),
    "minItems": _length("at least", "entries"),
    "maxItems": _length("at most", "entries"),
    "minProperties": _length("at least", "fields"),
    "maxProperties": _length("at most", "fields"),
    "uniqueItems": lambda err: f"{_field(err)} lists the same entry twice",
    "additionalProperties": _unknown,
    "unevaluatedProperties": _unknown,
    "anyOf": lambda err: f"{shown(err.instance)} matches none of the forms {_field(err)} takes",
    "oneOf": lambda err: f"{shown(err.instance)} must match exactly one of the forms {_field(err)} takes",
    "multipleOf": lambda err: f"{shown(err.instance)} must be a multiple of {err.validator_value}",
    "format": lambda err: f"{shown(err.instance)} is not a valid {err.validator_value}",
    "not": lambda err: f"{shown(err.instance)} is not allowed here",
}


def in_words(err: jsonschema.ValidationError) -> str:
    """The error as a person reads it; a keyword the table lacks keeps jsonschema's text."""
    message = MESSAGES.get(str(err.validator))
    return message(err) if message else err.message
