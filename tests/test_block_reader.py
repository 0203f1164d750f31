"""The C block reader: where it reads a text, its values are libyaml's, types included.

It steps aside (None) for anything outside its subset, so every test here has two halves: it
must agree with the builder whenever it answers, and it must answer for the texts gen writes
and people keep in policies, or it would be a test that cannot fail.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import load
from generator.load import YamlError, _documents
from generator.serialize import dump_yaml, yaml_scalar
from tests.test_properties import _typed

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(load._accel is None, reason="gen_yaml_accel not built")

# Words where YAML's rules bite: resolved types, indicators, comments, quotes, escapes.
# fmt: off
TRICKY = st.sampled_from(
    [
        "yes", "No", "on", "OFF", "true", "~", "null", "Null", "", " ", "1", "-1", "+1", "0o7", "0x1F", "012",
        "1_000", "1e3", "1.0e3", ".5", "-.inf", ".NaN", "1:30", "2001-12-14", "2001-13-45", "<<", "=", "-",
        "-a", "- a", "?a", "? a", ":a", "a:b", "a: b", "a #b", "a#b", "#a", "a:", "'a'", '"a"', "a'b", 'a"b',
        "[a]", "{a: 1}", "a, b", "a]", "&a", "*a", "!a", "!!str", "|", ">", "%a", "@a", "`a", "a\\b", "\\n",
        "a  b", "a ", " a", "---", "...", "--- a", "é", "\t", "a\nb", "\x85", "\u2028",
    ]
)
# fmt: on
WORDS = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12) | TRICKY
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | WORDS
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(WORDS, inner, max_size=4), max_leaves=20
)
ROOTS = st.lists(VALUES, min_size=1, max_size=4) | st.dictionaries(WORDS, VALUES, min_size=1, max_size=5)


def _templated(value: object, indent: str = "") -> str:
    """Block lines with flow values, the way templates write manifests."""
    if isinstance(value, dict):
        return "".join(f"{indent}{yaml_scalar(str(k))}: {yaml_scalar(v)}\n" for k, v in value.items())
    return "".join(f"{indent}- {yaml_scalar(v)}\n" for v in value)  # type: ignore[attr-defined]


def _texts(value: object) -> list[str]:
    texts = [
        yaml.safe_dump(value, default_flow_style=False, width=1 << 16),
        yaml.safe_dump(value, default_flow_style=None),
        yaml.safe_dump(value, default_flow_style=True),
        yaml.safe_dump(value, default_flow_style=False, allow_unicode=True, indent=4),
    ]
    for writer in (_templated, dump_yaml):
        with contextlib.suppress(TypeError, ValueError):  # what gen's writers refuse: non-finite numbers
            texts.append(writer(value))
    return texts


def _builder(text: str) -> list[object]:
    return [data for _, data, _ in _documents(text, track=False)]


def _agrees(text: str) -> bool:
    """True when the reader read text (and gave the builder's values), False when it stepped aside."""
    found = load._accel.block_documents(text)
    if found is None:
        return False
    try:
        expected = _builder(text)
    except YamlError as err:
        pytest.fail(f"the block reader accepted text libyaml refuses ({err}): {text!r}")
    assert _typed(found) == _typed(expected), text
    assert load._accel.simple_documents(text) == found
    return True


@settings(max_examples=400, deadline=None)
@given(value=ROOTS)
def test_written_texts_read_as_libyaml_reads_them(value: object) -> None:
    for text in _texts(value):
        _agrees(text)


# fmt: off
EDITS = st.sampled_from(
    [
        "", " ", "  ", "-", "- ", ":", ": ", "#", " #", "'", '"', "\\", "[", "]", "{", "}", ",", ", ", "\n",
        "\n  ", "\n- ", "---\n", "...\n", "?", "? ", "&a ", "*a", "!", "!!str ", "|", ">", "%", "@", "\t",
        "\r", "é", "\\u00e9", "\\x41", "\\ud800", "\\/", "''", "0x1", "1e3", "~", "<<", "yes", "a: b",
    ]
)
# fmt: on


@settings(max_examples=1500, deadline=None)
@given(value=ROOTS, data=st.data())
def test_mutated_texts_read_as_libyaml_reads_them_or_are_left_to_it(value: object, data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(_texts(value)))
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 6)))
        text = text[:start] + data.draw(EDITS) + text[end:]
    _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n",
        "---\nkind: Deployment  # trailing comment\n# a comment line\n\nspec: {replicas: 3}\n",
        "a:\n- x\n- y: 1\n  z: [1, 'b', {c: d}]\nb: \"\\t\\u00e9\\x41\\U0001F600\\N\\_\\e\"\n",
        "- a\n-\n  - b\n- 'it''s'\n-   c: d\n    e: ''\n",
        "-\n- x\n- # nothing\n- y: \n  z:\n  - 1\n",
        "list:\n  - name: x\n    valueFrom:\n      fieldRef: {fieldPath: metadata.name}\nnext: ~\n",
        "empty:\nzero: 0\noctal: 012\nfloat: 1.5e+3\nbool: yes\nwhen: 2001-12-14\n",
    ],
)
def test_common_shapes_are_read(text: str) -> None:
    assert _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: |\n  block\n",  # block scalars
        "a: >\n  folded\n",
        "a: b\n  continued\n",  # multi-line plain
        'a: "two\n  lines"\n',
        "a: [1,\n  2]\n",
        "a: 1\n---\nb: 2\n",  # several documents
        "---\n---\n- a\n",  # an empty one first
        "a:\tb\n",  # tab
        "a: b\r\n",
        "a: é\n",  # non-ASCII: libyaml's
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "? a\n: b\n",
        "- - a\n",
        "a: b: c\n",
        "a: 1\na: 2\n",
        '"a":b\n',  # libyaml wants a space after a block key's colon
        '- "a":b\n',
        "1: a\n",
        "a: '\\/'\nb: \"\\/\"\n",
        'a: "\\ud800"\n',
        "  a: 1\n",  # an indented root
        "scalar\n",
        "[1, 2]\n",
        "",
        "# only a comment\n",
        "a: {b: 1,}\n",
        "a: {b}\n",
        "a: [b: 1]\n",
        "k" * 1024 + ": v\n",  # longer than libyaml's simple keys
    ],
)
def test_everything_else_is_left_to_libyaml(text: str) -> None:
    assert load._accel.block_documents(text) is None
    try:
        expected = _builder(text)
    except YamlError:
        expected = None
    assert load._simple(text) in (None, expected)


def test_bundled_policies_and_manifests_without_block_scalars_are_read() -> None:
    files = [*(ROOT / "policies").glob("*.yaml"), *(ROOT / "tests" / "golden").rglob("*.yaml")]
    plain = [path for path in files if ": |" not in path.read_text()]
    assert len(plain) > 20 and all(_agrees(path.read_text()) for path in plain)


def test_json_documents_are_read() -> None:
    value = {"apiVersion": "v1", "items": [{"name": "a", "port": 80, "ratio": 0.5, "on": True, "none": None}]}
    assert _agrees("data: " + json.dumps(value) + "\n")
