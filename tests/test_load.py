"""The event-driven loader: PyYAML's safe-schema values, plus positions and strict checks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.load import MAX_NODES, YamlError, _documents, _simple_documents, _Unusual, load_text, parse_yaml
from tests.test_properties import nasty

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | nasty | st.dates()
documents = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(nasty, inner, max_size=4), max_leaves=30
)


@settings(max_examples=300, deadline=None)
@given(obj=documents, flow=st.sampled_from([None, True, False]))
def test_values_are_pyyamls(obj: object, flow: bool | None) -> None:
    text = yaml.safe_dump(obj, default_flow_style=flow, allow_unicode=True)
    assert parse_yaml(text) == yaml.safe_load(text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_verdicts_on_arbitrary_text_match_pyyaml_or_are_stricter(text: str) -> None:
    try:
        ours = parse_yaml(text)
    except YamlError:
        return  # stricter (duplicate keys, non-string keys, tags) or the same syntax error
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)  # the same libyaml parser
    except yaml.YAMLError:
        pytest.fail("accepted text PyYAML rejects")
    assert ours == expected


def _builder_documents(text: str) -> list[object]:
    return [data for _, data, _ in _documents(text, track=False)]


@settings(max_examples=300, deadline=None)
@given(
    obj=documents,
    flow=st.sampled_from([None, True, False]),
    extra=st.sampled_from(["", "---\n", "--- !!str x\n", "---\nk: &a 1\nj: *a\n", "---\n<<: {a: 1}\n", "..."]),
)
def test_the_simple_path_gives_the_builders_values_or_steps_aside(obj: object, flow: bool | None, extra: str) -> None:
    text = yaml.safe_dump(obj, default_flow_style=flow, allow_unicode=True) + extra
    try:
        simple = _simple_documents(text)
    except _Unusual:
        return
    assert simple == _builder_documents(text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_the_simple_path_never_accepts_what_the_builder_refuses(text: str) -> None:
    try:
        simple = _simple_documents(text)
    except _Unusual:
        return
    assert simple == _builder_documents(text)  # raises YamlError if the builder refuses


def test_the_simple_path_takes_every_bundled_policy_and_golden_manifest() -> None:
    root = Path(__file__).resolve().parent.parent
    files = [*(root / "policies").glob("*.yaml"), *(root / "tests" / "golden").rglob("*.yaml")]
    assert len(files) > 20
    for path in files:
        text = path.read_text()
        assert _simple_documents(text) == _builder_documents(text), path


SHARED = """\
base: &base
  image: busybox
  port: 80
other: &other
  port: 81
  user: nobody
app:
  <<: [*base, *other]
  port: 8080
copy: *base
"""


def test_merge_keys_and_aliases_follow_pyyaml_and_keep_positions() -> None:
    assert parse_yaml(SHARED) == yaml.safe_load(SHARED)
    assert list(parse_yaml(SHARED)["app"]) == list(yaml.safe_load(SHARED)["app"])
    [doc], problems = load_text(SHARED, "f.yaml")
    assert problems == []
    assert doc.source.locate(("app", "port")).line == 9  # the mapping's own key wins
    assert doc.source.locate(("app", "image")).line == 2  # merged: where the anchor wrote it
    assert doc.source.locate(("app", "user")).line == 6
    assert doc.source.locate(("copy", "port")).line == 3


@pytest.mark.parametrize(
    ("text", "rule", "line"),
    [
        ("a: 1\nb: 2\na: 3\n", "yaml-duplicate-key", 3),
        ("base: &b {x: 1}\nm:\n  <<: *b\n  y: 1\n  y: 2\n", "yaml-duplicate-key", 5),
        ("yes: 1\n", "yaml-key-type", 1),
        ("? [a]\n: 1\n", "yaml-key-type", 1),
        ("a: &x [*x]\n", "yaml-recursive-alias", 1),
        ("a: *nothing\n", "yaml-alias", 1),
        ("a: !!python/object:os.system x\n", "yaml-tag", 1),
        ("a: !custom x\n", "yaml-tag", 1),
        ("a: !!set {x}\n", "yaml-tag", 1),
        ("m:\n  <<: 3\n", "yaml-merge", 2),
        ("a: [1, 2\n", "yaml-syntax", 2),
    ],
)
def test_refusals_are_located(text: str, rule: str, line: int) -> None:
    _, problems = load_text(text, "f.yaml")
    assert [(p.rule, p.line) for p in problems] == [(rule, line)]


def test_alias_bombs_stop_at_the_node_limit() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    _, problems = load_text("\n".join(lines) + "\n", "f.yaml")
    assert [p.rule for p in problems] == ["yaml-too-large"]
    assert MAX_NODES < 10**8


def test_documents_keep_their_index_and_skip_empty_ones() -> None:
    docs, problems = load_text("a: 1\n---\n---\nb: 2\n", "f.yaml")
    assert problems == []
    assert [(d.index, d.data) for d in docs] == [(0, {"a": 1}), (2, {"b": 2})]


def test_timestamps_and_yaml11_scalars_match_pyyaml() -> None:
    text = "t: 2026-12-02T10:00:00Z\nd: 2026-12-02\no: 0440\nb: on\nf: 1e3\ng: 1.0e3\nn: ~\nbin: !!binary aGk=\n"
    assert parse_yaml(text) == yaml.safe_load(text)
