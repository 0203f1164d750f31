"""Manifests are read as Kubernetes reads them (sigs.k8s.io/yaml over go-yaml v2), and what
gen writes reads back the same under both that reader and gen's own."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.yamlio import load
from generator.yamlio.kube_scalars import key_string, plain_value
from generator.yamlio.load import YamlError, _documents, parse_yaml
from generator.yamlio.serialize import dump_yaml, dump_yaml_reference
from tests.test_properties import nasty

# (plain scalar, what go-yaml v2's resolve() makes of it, what gen's policy reader makes of it)
DIFFERENCES = [
    ("=", "=", None),  # YAML 1.1's value tag: refused in policies
    ("y", True, "y"),
    ("N", False, "N"),
    ("on", True, True),
    ("1:20", "1:20", 80),  # sexagesimal
    ("0o17", 15, "0o17"),
    ("0X1F", 31, "0X1F"),
    ("0x1F", 31, 31),
    ("010", 8, 8),
    ("08", 8.0, "08"),
    ("1e3", 1000.0, "1e3"),
    ("1.5e3", 1500.0, "1.5e3"),
    (".5e3", 500.0, ".5e3"),
    ("1_000", 1000, 1000),
    ("1e999", "1e999", "1e999"),  # overflows Go's ParseFloat: a string
    ("99999999999999999999", 1e20, 99999999999999999999),  # beyond uint64: a float
    ("18446744073709551615", 18446744073709551615, 18446744073709551615),
    ("2024-01-01", "2024-01-01", None),  # a timestamp stays its text
    ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z", None),
    ("10.0.0.1", "10.0.0.1", "10.0.0.1"),
    ("~", None, None),
    ("+", "+", "+"),
]


@pytest.mark.parametrize(("text", "kube", "policy"), DIFFERENCES)
def test_plain_scalars_read_as_go_yaml_does(text: str, kube: object, policy: object) -> None:
    assert plain_value(text) == kube and type(plain_value(text)) is type(kube)
    assert parse_yaml(f"v: {text}\n", kube=True) == {"v": kube}
    if policy is not None:
        assert parse_yaml(f"v: {text}\n") == {"v": policy}


def test_a_bare_equals_sign_is_a_string_in_a_crd_enum() -> None:
    text = "enum:\n- =\n- '!='\n- =~\n"
    assert parse_yaml(text, kube=True) == {"enum": ["=", "!=", "=~"]}
    with pytest.raises(YamlError, match="value"):
        parse_yaml(text)  # policies keep gen's rules


def test_quoted_and_tagged_scalars_stay_strings() -> None:
    assert parse_yaml("a: 'y'\nb: \"1e3\"\nc: ! 12\nd: |\n  on\n", kube=True) == {
        "a": "y",
        "b": "1e3",
        "c": "12",
        "d": "on\n",
    }


def test_keys_that_read_as_other_types_become_their_json_spelling() -> None:
    assert parse_yaml("1: a\ny: b\n1.5: c\noff: d\n", kube=True) == {"1": "a", "true": "b", "1.5": "c", "false": "d"}
    assert [key_string(v) for v in (1e7, 0.0001, -0.0, math.inf)] == ["1e+07", "0.0001", "-0", ".inf"]
    with pytest.raises(YamlError, match="not a string"):
        parse_yaml("~: a\n", kube=True)  # sigs.k8s.io/yaml refuses a null key


def test_keys_that_collide_once_spelled_are_duplicates() -> None:
    with pytest.raises(YamlError, match="duplicate key 'true'"):
        parse_yaml("y: a\n'true': b\n", kube=True)


def test_merge_overwrites_keys_written_before_it_as_go_yaml_v2_does() -> None:
    text = "base: &b {p: 1, q: 2}\nm:\n  p: 0\n  <<: *b\n  q: 3\n"
    assert parse_yaml(text, kube=True)["m"] == {"p": 1, "q": 3}
    assert parse_yaml(text)["m"] == {"p": 0, "q": 3}  # YAML's merge rule: the mapping's own keys win
    listed = "a: &a {k: 1}\nb: &b {k: 2, j: 2}\nm:\n  <<: [*a, *b]\n"
    assert parse_yaml(listed, kube=True)["m"] == {"k": 1, "j": 2}  # earlier sources win
    assert parse_yaml("m:\n  x: <<\n", kube=True) == {"m": {"x": "<<"}}  # only a key merges


def test_merged_keys_are_located_at_their_source() -> None:
    docs, problems = load.load_text("base: &b\n  p: 1\nm:\n  <<: *b\n", "f.yaml", kube=True)
    assert not problems
    assert docs[0].source.locate(("m", "p")).line == 2


def _kube_builder(text: str) -> list[object]:
    return [data for _, data, _ in _documents(text, track=False, kube=True)]


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab:-[]{},&*!<>'\"#\n 0.1yYnN~=e_x+", max_size=80))
def test_the_simple_path_gives_the_builders_kubernetes_values_or_steps_aside(text: str) -> None:
    try:
        found = load._simple_documents(text, kube=True)
    except load._Unusual:
        return
    assert found == _kube_builder(text)


words = st.text(alphabet="yYnNoO01289.eE+-_:=<x~ ", min_size=1, max_size=6)


@settings(max_examples=500, deadline=None)
@given(obj=st.dictionaries(words | nasty, words | nasty, min_size=1, max_size=4))
def test_what_gen_writes_reads_back_the_same_for_kubernetes_and_for_gen(obj: dict[str, str]) -> None:
    text = dump_yaml(obj)
    assert text == dump_yaml_reference(obj)
    assert parse_yaml(text, kube=True) == obj
    assert yaml.safe_load(text) == obj
