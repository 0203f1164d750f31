"""A template's values put into its parsed shape give the object parsing its text gives."""

from __future__ import annotations

from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.render import skeletons
from generator.yamlio.load import YamlError, parse_yaml
from generator.yamlio.serialize import yaml_scalar

TEMPLATES = {
    "value": "kind: Thing\nspec: {{ v }}\n",
    "key": "kind: Thing\nlabels:\n  {{ k }}: {{ v }}\n  fixed: 1\n",
    "sequence": "kind: Thing\nargs: [--flag, {{ v }}]\nitems:\n- {{ v }}\n- {{ k }}\n",
    "inside a string": "kind: Thing\nname: {{ k }}-suffix\n",
    "two keys": "kind: Thing\n{{ k }}: 1\n{{ v }}: 2\n",
}


def _render(source: str, finalize: Any, **values: Any) -> str:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, finalize=finalize, keep_trailing_newline=True)
    return env.from_string(source).render(values)


def _parsed(source: str, **values: Any) -> Any:
    """What the template's text parses to, or the error's type when it does not."""
    try:
        return parse_yaml(_render(source, yaml_scalar, **values))
    except (YamlError, ValueError, TypeError) as err:
        return type(err)


def _filled(source: str, **values: Any) -> Any:
    skeletons.start()
    text = _render(source, skeletons.token, **values)
    try:
        return skeletons.filled(text)
    except skeletons.Unusual:
        return _parsed(source, **values)  # what the renderer does


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(TEMPLATES)), values, st.text(max_size=6) | st.integers() | st.booleans())
def test_filled_equals_parsed(name: str, value: Any, key: Any) -> None:
    source = TEMPLATES[name]
    assert _filled(source, v=value, k=key) == _parsed(source, v=value, k=key)


@pytest.mark.parametrize(
    ("name", "k", "v"),
    [
        ("value", "a", {"nested": [1, "two", None]}),
        ("key", "app", "web"),
        ("sequence", "x", 3),
    ],
)
def test_the_common_shapes_need_no_parse(name: str, k: Any, v: Any) -> None:
    skeletons.start()
    text = _render(TEMPLATES[name], skeletons.token, k=k, v=v)
    assert skeletons.filled(text) == _parsed(TEMPLATES[name], k=k, v=v)


@pytest.mark.parametrize(
    ("name", "k", "v"),
    [
        ("inside a string", "web", None),  # a token inside a longer string
        ("two keys", "same", "same"),  # a duplicate key
        ("key", 5, "x"),  # a key that is not a string
        ("value", "k", float("nan")),  # a value the encoder refuses
        ("value", "k", "\ue000" + "0\ue001"),  # a value that looks like a token
    ],
)
def test_what_a_skeleton_cannot_reproduce_is_left_to_the_parser(name: str, k: Any, v: Any) -> None:
    skeletons.start()
    text = _render(TEMPLATES[name], skeletons.token, k=k, v=v)
    with pytest.raises(skeletons.Unusual):
        skeletons.filled(text)


def test_a_filled_object_shares_nothing_with_the_context() -> None:
    labels = {"app": "web"}
    first = _filled("a: {{ v }}\nb: {{ v }}\n", v=labels)
    first["a"]["app"] = "changed"
    assert first["b"] == {"app": "web"} and labels == {"app": "web"}
