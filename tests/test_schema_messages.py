"""Messages written for people (SPEC §12): every schema keyword in words, tabs and non-UTF-8 bytes
at their own line, a misspelt plugin name answered with the right one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from generator.schema_messages import MESSAGES, in_words
from tests.conftest import ROOT
from tests.test_properties import UNREADABLE

# (keyword, schema, instance, the words expected)
CASES = [
    ("type", {"type": "object"}, None, "is empty, but takes a mapping: indent the fields"),
    ("type", {"type": "integer"}, "3", '"3" is a string, but the value takes a whole number'),
    ("pattern", {"type": "string", "pattern": "^a$", "patternErrorMessage": "must be a"}, "b", '"b" must be a'),
    ("pattern", {"type": "string", "pattern": "^[a-z]+$"}, "B", '"B" is not in the form this field takes'),
    ("enum", {"enum": ["Never", "OnFailure"]}, "never", '"never" is not one of: "Never", "OnFailure"'),
    ("const", {"const": "gen/v1alpha1"}, "v1", '"v1" must be "gen/v1alpha1"'),
    ("required", {"type": "object", "required": ["count"]}, {}, 'missing required field "count"'),
    ("minimum", {"minimum": 1}, 0, "0 must be at least 1"),
    ("maximum", {"maximum": 10}, 11, "11 must be at most 10"),
    ("exclusiveMinimum", {"exclusiveMinimum": 0}, 0, "0 must be greater than 0"),
    ("exclusiveMaximum", {"exclusiveMaximum": 1}, 1, "1 must be less than 1"),
    ("minLength", {"minLength": 1}, "", "the value must not be empty"),
    ("maxLength", {"maxLength": 2}, "abc", "the value must have at most 2 characters"),
    ("minItems", {"minItems": 2}, [1], "the value must have at least 2 entries"),
    ("maxItems", {"maxItems": 1}, [1, 2], "the value must have at most 1 entry"),
    ("minProperties", {"minProperties": 2}, {"a": 1}, "the value must have at least 2 fields"),
    ("maxProperties", {"maxProperties": 1}, {"a": 1, "b": 2}, "the value must have at most 1 field"),
    ("uniqueItems", {"uniqueItems": True}, ["a", "a"], "lists the same entry twice"),
    ("additionalProperties", {"properties": {"a": {}}, "additionalProperties": False}, {"b": 1}, 'unknown field "b"'),
    ("unevaluatedProperties", {"properties": {"a": {}}, "unevaluatedProperties": False}, {"b": 1}, 'unknown field "b"'),
    ("anyOf", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, [1], "a list matches none of the forms"),
    ("oneOf", {"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 1, "1 must match exactly one of the forms"),
    ("multipleOf", {"multipleOf": 2}, 3, "3 must be a multiple of 2"),
    ("not", {"not": {"type": "string"}}, "x", '"x" is not allowed here'),
]


@pytest.mark.parametrize(
    ("keyword", "schema", "instance", "words"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_every_keyword_reads_as_words(keyword: str, schema: dict, instance: object, words: str) -> None:
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(instance))
    assert [e.validator for e in errors] == [keyword]
    message = in_words(errors[0])
    assert words in message, message
    assert not UNREADABLE.search(message), message


def test_the_table_covers_every_keyword_the_tests_show() -> None:
    assert {c[0] for c in CASES} >= set(MESSAGES) - {"format"}


def _patterns(node: object):
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node
        for value in node.values():
            yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


def test_every_pattern_of_a_policy_schema_says_what_it_wants() -> None:
    for path in sorted((ROOT / "schemas").glob("*.json")):
        for node in _patterns(json.loads(path.read_text())):
            assert node.get("patternErrorMessage"), (path.name, node["pattern"])


# ---- through the CLI: failing and passing -------------------------------------------------


def test_a_bad_name_says_what_a_dns_label_is(gen, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Monitoring\nmetadata:\n  name: Z_bad\n")
    monkeypatch.chdir(tmp_path)
    run = gen("lint", "a.yaml")
    assert run.out == (
        'a.yaml:4:9: error policy-schema "Z_bad" must be a DNS-1123 label (lowercase letters, digits and'
        " '-', starting and ending with a letter or digit)\n"
    )
    (tmp_path / "a.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Monitoring\nmetadata:\n  name: z-good\n")
    assert gen("lint", "--strict", "a.yaml").out == ""


def test_an_empty_mapping_says_which_key_and_suggests_indentation(gen, tmp_path: Path, monkeypatch) -> None:
    text = "apiVersion: gen/v1alpha1\nkind: Target\nmetadata:\n  name: t\nspec:\n  selector:\n  matchLabels: {a: b}\n"
    (tmp_path / "t.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    run = gen("lint", "t.yaml")
    assert "t.yaml:6:12: error policy-schema 'selector' is empty, but takes a mapping: indent the fields" in run.out
    (tmp_path / "t.yaml").write_text(text.replace("  matchLabels", "    matchLabels"))
    assert gen("lint", "--strict", "t.yaml").out == ""


def test_a_tab_is_named_as_a_tab_at_its_line(gen, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Monitoring\nmetadata:\n\tname: m\n")
    monkeypatch.chdir(tmp_path)
    run = gen("lint", "a.yaml")
    assert run.out.startswith("a.yaml:4:1: error yaml-syntax tabs are not allowed for indentation")
    assert "hint: indent with spaces" in run.out


def test_a_non_utf8_byte_is_reported_at_its_own_line_and_column(gen, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.yaml").write_bytes(b"apiVersion: gen/v1alpha1\nkind: Monitoring\nmetadata:\n  name: caf\xe9\n")
    monkeypatch.chdir(tmp_path)
    run = gen("lint", "a.yaml")
    assert run.out.startswith("a.yaml:4:12: error file-encoding not UTF-8: byte 0xe9")


def test_a_misspelt_plugin_gets_did_you_mean_first(gen, tmp_path: Path, monkeypatch) -> None:
    text = (ROOT / "policies" / "scheduler.yaml").read_text()
    (tmp_path / "s.yaml").write_text(text.replace("- name: GPUPacking", "- name: GpuPacking"))
    monkeypatch.chdir(tmp_path)
    run = gen("lint", "s.yaml")
    assert re.search(
        r"error scheduler-plugin-name ScorePlugin \"GpuPacking\" does not exist \(hint: did you mean 'GPUPacking'\?\)",
        run.out,
    )
    (tmp_path / "s.yaml").write_text(text)
    assert " scheduler-plugin-name " not in gen("lint", "s.yaml").out
