"""A template's output as data, without parsing every rendering of it.

Every `{{ }}` of a YAML template prints one whole flow node (the encoder writes a value on one
line), so the text's shape comes from the template and its values from the context. A data
render prints a token for each value instead and records the value; the tokened text (the
skeleton) repeats across the policies of a kind, so it is parsed once and each rendering
copies it with the values put back as data. Parsing each rendering's text was two fifths of
a large render.

Anything this cannot reproduce exactly (a token inside a longer string, a value the encoder
would not print as itself, a key a value would duplicate) raises Unusual, and the caller
renders the text and parses it as before: the result is the same object either way.
"""

from __future__ import annotations

import math
from typing import Any

import jinja2

from generator.yamlio.load import YamlError, parse_yaml

_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use characters: never in a template's own text
_MOST_SKELETONS = 4096


class Unusual(Exception):
    """Output the skeleton cannot reproduce: render the text and parse it instead."""


_printed: list[Any] = []  # the values of the render under way, in the order they were printed


@jinja2.pass_context  # needs the render: Jinja then never folds a constant at compile time
def token(context: Any, value: Any) -> str:
    """The finalize of a data render: record value, print its token."""
    del context
    _printed.append(value)
    return f"{_OPEN}{len(_printed) - 1}{_CLOSE}"


def start() -> None:
    """Forget the values of the last render (call before each render)."""
    _printed.clear()


_skeletons: dict[str, Any] = {}
_BROKEN = object()  # a skeleton that does not parse: the real text reports why


def filled(text: str) -> Any:
    """The object the last render's text stands for, its values in place."""
    skeleton = _skeletons.get(text)
    if skeleton is None:
        try:
            skeleton = parse_yaml(text)
        except YamlError:
            skeleton = _BROKEN
        if len(_skeletons) < _MOST_SKELETONS:
            _skeletons[text] = skeleton
    if skeleton is _BROKEN:
        raise Unusual
    return _fill(skeleton, _printed)


def _fill(node: Any, values: list[Any]) -> Any:
    kind = type(node)
    if kind is str:
        return _value(node, values) if _OPEN in node else node
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in node.items():
            if type(key) is str and _OPEN in key:
                key = _value(key, values)
                if type(key) is not str:
                    raise Unusual  # the encoder prints other keys in ways YAML reads differently
            if key in out:
                raise Unusual  # a duplicate key: the parser reports it
            out[key] = _fill(item, values)
        return out
    if kind is list:
        return [_fill(item, values) for item in node]
    return node  # a number, boolean or null the template wrote itself


def _value(text: str, values: list[Any]) -> Any:
    number = text[1:-1]
    if text[0] != _OPEN or text[-1] != _CLOSE or not number.isdigit():
        raise Unusual  # a token inside a longer string
    return _plain(values[int(number)])


def _plain(value: Any) -> Any:
    """value as parsing its encoding gives it back: a fresh copy in plain types."""
    kind = type(value)
    if kind is str:
        if _OPEN in value:
            raise Unusual  # printed text that holds tokens (a value built from other output)
        return value
    if value is None or kind is bool or kind is int:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise Unusual  # the encoder refuses it, with its message
        return value
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str or _OPEN in key:
                raise Unusual
            out[key] = _plain(item)
        return out
    if kind is list or kind is tuple:
        return [_plain(item) for item in value]
    raise Unusual  # any other type: the encoder decides
