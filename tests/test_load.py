"""The event-driven loader: PyYAML's safe-schema values, plus positions and strict checks."""

from __future__ import annotations

import marshal
from dataclasses import fields, replace
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.policies.policy import Policy, build_policies
from generator.problems import Problem, Severity
from generator.yamlio import load
from generator.yamlio.load import MAX_DEPTH, MAX_NODES, Document, YamlError, _documents, load_text, parse_yaml
from tests.conftest import POLICIES
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
    assert ours == expected or repr(ours) == repr(expected)  # .nan is unequal to itself


def _builder_documents(text: str) -> list[object]:
    return [data for _, data, _ in _documents(text, track=False)]


def _python_simple(text: str) -> list[object] | None:
    try:
        return load._simple_documents(text)
    except load._Unusual:
        return None


# The simple path must give the builder's values or step aside (None).
@settings(max_examples=300, deadline=None)
@given(
    obj=documents,
    flow=st.sampled_from([None, True, False]),
    extra=st.sampled_from(["", "---\n", "--- !!str x\n", "---\nk: &a 1\nj: *a\n", "---\n<<: {a: 1}\n", "..."]),
)
def test_the_simple_path_gives_the_builders_values_or_steps_aside(obj: object, flow: bool | None, extra: str) -> None:
    text = yaml.safe_dump(obj, default_flow_style=flow, allow_unicode=True) + extra
    found = _python_simple(text)
    if found is not None:
        assert found == _builder_documents(text)
        assert [type(v) for v in found] == [type(v) for v in _builder_documents(text)]


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=200) | st.text(alphabet="ab:-[]{},&*!<>'\"#\n 0.1yYnN~", max_size=80))
def test_the_simple_path_never_accepts_what_the_builder_refuses(text: str) -> None:
    found = _python_simple(text)
    if found is not None:
        assert found == _builder_documents(text)  # raises YamlError if the builder refuses


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: 2\na: 3\n",  # duplicate key
        "yes: 1\n",  # a key that is not a string
        "? [a]\n: 1\n",
        "a: &x 1\nb: *x\n",  # anchors and aliases
        "m:\n  <<: {a: 1}\n",  # merge key
        "a: <<\n",
        "a: !!str 1\n",  # explicit tags
        "a: !custom x\n",
        "a: [1, 2\n",  # syntax error
        "a: 2001-13-45\n",  # a timestamp that does not construct
        "a: " + "[" * 101 + "]" * 101 + "\n",  # too deep
    ],
)
def test_the_simple_path_steps_aside_for_what_only_the_builder_handles(text: str) -> None:
    assert _python_simple(text) is None


def test_the_simple_path_takes_every_bundled_policy_and_golden_manifest() -> None:
    root = Path(__file__).resolve().parent.parent
    files = [*(root / "policies").glob("*.yaml"), *(root / "tests" / "golden").rglob("*.yaml")]
    assert len(files) > 20
    for path in files:
        text = path.read_text()
        assert _python_simple(text) == _builder_documents(text), path


def test_the_simple_path_stops_at_the_node_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "[" + ", ".join(["x"] * 50) + "]\n"
    monkeypatch.setattr(load, "MAX_NODES", 10)
    assert _python_simple(text) is None


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
        ("a: 1\nwhen: 2001-13-45\n", "yaml-value", 2),
        ("a: " + "[" * 101 + "]" * 101 + "\n", "yaml-too-large", 1),
        # an alias adds the depth of what it names
        ("a: &x " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 50 + "*x" + "]" * 50 + "\n", "yaml-too-large", 2),
    ],
)
def test_refusals_are_located(text: str, rule: str, line: int) -> None:
    _, problems = load_text(text, "f.yaml")
    assert [(p.rule, p.line) for p in problems] == [(rule, line)]


def test_nesting_up_to_the_limit_loads() -> None:
    deepest = "a: " + "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1) + "\n"
    docs, problems = load_text(deepest, "f.yaml")
    assert problems == [] and len(docs) == 1
    aliased = "a: &x " + "[" * 49 + "]" * 49 + "\nb: " + "[" * 49 + "*x" + "]" * 49 + "\n"
    assert load_text(aliased, "f.yaml")[1] == []


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


def test_files_are_named_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A monorepo: `gen lint infra/gitops/policies` names infra/gitops/policies/c.yaml, so a CI
    annotation lands on the right file; a path outside the current directory stays absolute."""
    from generator.files import named as yaml_files

    policies = tmp_path / "infra" / "gitops" / "policies"
    policies.mkdir(parents=True)
    (policies / "c.yaml").write_text("a: 1\n")
    monkeypatch.chdir(tmp_path)
    assert yaml_files([Path("infra/gitops/policies")])[0][0][1] == "infra/gitops/policies/c.yaml"
    assert yaml_files([policies])[0][0][1] == "infra/gitops/policies/c.yaml"
    monkeypatch.chdir(policies.parent)
    assert yaml_files([Path("policies/c.yaml")])[0][0][1] == "policies/c.yaml"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert yaml_files([policies])[0][0][1] == f"{policies.as_posix()}/c.yaml"


def test_yaml_files_are_found_in_path_order_without_hidden_entries_or_symlinked_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.files import named as yaml_files

    root = tmp_path / "policies"
    for rel in [
        "b.yaml",
        "a/z.yml",
        "a-b.yaml",
        "a/b/c.yaml",
        ".hidden.yaml",
        ".git/x.yaml",
        "notes.txt",
        "a/.d/e.yaml",
    ]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("a: 1\n")
    (root / "linked").symlink_to(root / "a", target_is_directory=True)
    (root / "file-link.yaml").symlink_to(root / "b.yaml")
    (root / "broken.yaml").symlink_to(root / "absent.yaml")
    monkeypatch.chdir(tmp_path)  # files are named from the current directory
    files, problems = yaml_files([root])
    assert problems == []
    names = [name for _, name in files]
    # as pathlib sorts: part by part, so "a/..." comes before "a-b.yaml"
    assert names == [
        "policies/a/b/c.yaml",
        "policies/a/z.yml",
        "policies/a-b.yaml",
        "policies/b.yaml",
        "policies/file-link.yaml",
    ]
    assert [path for path, _ in files] == [str(root / n.removeprefix("policies/")) for n in names]
    monkeypatch.chdir(root)
    assert [name for _, name in yaml_files([Path(".")])[0]] == [n.removeprefix("policies/") for n in names]
    assert yaml_files([root / "b.yaml"])[0] == [(str(root / "b.yaml"), "b.yaml")]  # named from here


def test_policies_come_back_from_a_worker_process_unchanged() -> None:
    """Loader processes send policies as marshal data; every field must survive, located or not."""
    docs, _ = load_text((POLICIES / "cache-app.yaml").read_text(), "cache-app.yaml")
    policies, problems = build_policies(docs)
    assert policies and not problems
    assert policies[0].doc.source.values  # one with its positions worked out, the others without
    for policy in policies:
        copy = Policy.from_plain(marshal.loads(marshal.dumps(policy.to_plain())))
        expected = replace(policy, doc=replace(policy.doc, _source=None))  # positions are worked out again
        for field in fields(Policy):  # every field compared, read back (a copy unpacks its spec when asked)
            if field.name != "doc" and field.compare:
                assert getattr(copy, field.name) == getattr(expected, field.name), field.name
        for field in fields(Document):
            if field.compare:
                assert getattr(copy.doc, field.name) == getattr(expected.doc, field.name), field.name
        assert copy.doc.text == policy.doc.text
        assert copy.doc.problem(("spec",), "r", "m") == policy.doc.problem(("spec",), "r", "m")


def test_findings_come_back_from_a_worker_process_unchanged() -> None:
    problem = Problem("a.yaml", 3, 5, "policy-schema", Severity.WARNING, "message", "hint", "$.spec")
    copy = Problem.from_plain(marshal.loads(marshal.dumps(problem.to_plain())))
    assert copy == problem and copy.severity is Severity.WARNING
