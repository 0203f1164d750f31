"""Property-based: arbitrary input never crashes gen, and policy strings come out literally."""

from __future__ import annotations

import copy
import importlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import pipeline
from generator.policies.policy import build_policies
from generator.problems import has_errors
from generator.yamlio.load import load_text
from tests.conftest import POLICIES, ROOT

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
nasty = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=80) | st.sampled_from(
    ["{{ 7*7 }}", "{% raw %}", "a: b", "x\n- y", "#", "'", '"', "yes", "0440", "1e3", "\x00", "é😀", "---", "&a", "*a"]
)


@SETTINGS
@given(text=st.text(max_size=300), kube=st.booleans())
def test_loader_never_raises(text: str, kube: bool) -> None:
    """Neither gen's reading nor Kubernetes' (manifests) raises on any text."""
    docs, problems = load_text(text, "f.yaml", kube=kube)
    for problem in problems:
        assert problem.line >= 0 and problem.rule
    for doc in docs:
        assert doc.source is not None  # positions are worked out without raising either


@SETTINGS
@given(value=nasty, field=st.sampled_from(["image", "containerName", "namespace", "replicas", "readinessProbe"]))
def test_any_value_renders_literally_or_is_located(tmp_path: Path, value: str, field: str) -> None:
    policy = {
        "apiVersion": "gen/v1alpha1",
        "kind": "ReplicatedService",
        "metadata": {"name": "svc"},
        "spec": {"image": "registry/app:1", field: value},
    }
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(policy, allow_unicode=True))
    result = pipeline.render(pipeline.RenderOptions(tmp_path, tmp_path / "out"))
    if has_errors(result.problems):
        assert all(p.line >= 1 for p in result.problems if p.file.endswith("p.yaml"))
        return
    files = result.plans[0].files
    deployment = next(yaml.safe_load(v) for k, v in files.items() if "deployment-svc" in k)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    if field == "image":
        assert container["image"] == value
    elif field == "containerName":
        assert container["name"] == value
    elif field == "namespace":
        assert deployment["metadata"]["namespace"] == value


@SETTINGS
@given(
    label=nasty,
    count=st.integers(min_value=-(2**64), max_value=2**64),
    cost=st.integers(min_value=-(2**40), max_value=2**40),
)
def test_numbers_and_labels_at_bounds(label: str, count: int, cost: int) -> None:
    docs, _ = load_text(
        yaml.safe_dump(
            [
                {
                    "apiVersion": "gen/v1alpha1",
                    "kind": "GpuWorkload",
                    "metadata": {"name": "g", "labels": {"team": label}},
                    "spec": {"gpu": {"count": count, "models": [label]}, "container": {"image": "x"}},
                },
                {
                    "apiVersion": "gen/v1alpha1",
                    "kind": "ReplicatedService",
                    "metadata": {"name": "r"},
                    "spec": {"image": "x", "deletionCost": {"initial": cost}},
                },
            ],
            allow_unicode=True,
        ).replace("- apiVersion", "---\napiVersion"),
        "f.yaml",
    )
    policies, problems = build_policies(docs)
    for policy in policies:
        if policy.kind == "GpuWorkload":
            assert 1 <= policy.spec["gpu"]["count"] <= 2**31 - 1
        if policy.kind == "ReplicatedService":
            assert -(2**31) <= policy.spec["deletionCost"]["initial"] < 2**31
    assert all(p.line >= 1 for p in problems)


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | nasty
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(nasty, inner, max_size=4),
    max_leaves=25,
)


@SETTINGS
@given(obj=documents)
def test_fast_yaml_writer_matches_pyyaml(obj: object) -> None:
    from generator.yamlio.serialize import dump_yaml, dump_yaml_reference

    text = dump_yaml(obj)
    assert text == dump_yaml_reference(obj)
    assert yaml.load(text, Loader=yaml.SafeLoader) == obj


def _outcome(write: Callable[[], str]) -> str:
    try:
        return write()
    except (TypeError, ValueError, yaml.YAMLError) as err:
        return type(err).__name__


@pytest.mark.parametrize(
    "obj",
    [
        [[[1]], [{"a": [True, None, 2.5, "x"]}], {}],  # sequences of sequences: "- - - 1"
        {"a": {"b": {"c": []}}, "d": [{"e": {}, "f": [[], {}]}]},
        {7: "int key", True: "bool key", None: "null key", 2.5: "float key"},
        {"v": [1, True, 0, False, 1, True]},  # True == 1, but each is spelled as itself
        {"k": 1, "b": True, "i": 10**30, "neg": -5, "f": False},
        {"x": "line\nbreak"},  # multi-line text: only PyYAML may write it
        {"x": ("a", "tuple")},  # not YAML data at all
    ],
)
def test_yaml_layout_matches_pyyaml_on_edge_cases(obj: object) -> None:
    from generator.yamlio.serialize import dump_yaml, dump_yaml_reference

    assert _outcome(lambda: dump_yaml(obj)) == _outcome(lambda: dump_yaml_reference(obj))


flow_values = st.recursive(
    scalars | st.just(float("inf")),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(nasty | st.integers() | st.booleans(), inner, max_size=4)
    ),
    max_leaves=25,
)


@SETTINGS
@given(obj=flow_values)
def test_flow_values_read_back_as_written(obj: object) -> None:
    from generator.yamlio.serialize import yaml_scalar

    text = _outcome(lambda: yaml_scalar(obj))
    if not text.endswith("Error"):
        assert yaml.load(f"v: {text}", Loader=yaml.SafeLoader)["v"] == _as_loaded(obj)


def _as_loaded(value: object) -> object:
    """What YAML gives back for value: tuples come back as lists, keys as strings."""
    if isinstance(value, dict):
        return {str(k): _as_loaded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_loaded(v) for v in value]
    return value


WORDS = st.from_regex(r"[A-Za-z][A-Za-z0-9._/:-]{0,30}", fullmatch=True) | st.sampled_from(
    [
        "yes",
        "No",
        "ON",
        "off",
        "true",
        "Null",
        "n",
        "y",
        "e",
        "E1",
        "x1_0",
        "a.b",
        "inf",
        "NaN",
        "True",
        "a:",
        "a::b",
        "r.io/x:v1",
    ]
)


@SETTINGS
@given(words=st.lists(WORDS, min_size=1, max_size=6))
def test_names_and_paths_are_spelled_as_pyyaml_spells_them(words: list[str]) -> None:
    from generator.yamlio.serialize import dump_yaml, dump_yaml_reference

    obj = {w: [w, {w: w}] for w in words}
    assert dump_yaml(obj) == dump_yaml_reference(obj)


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


BUNDLED = {p.name: p.read_text() for p in sorted(POLICIES.glob("*.yaml"))}
replacements = (
    documents
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 0, -1, "", "0", "1e3", "10m", "-0", "A100"])
)


def _mutate(data: st.DataObject, doc: object) -> None:
    """One random edit of a document: a value removed, or replaced by a nasty one."""
    path = data.draw(st.sampled_from([p for p in _paths(doc) if p]))
    parent: object = doc
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(replacements)  # type: ignore[index]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_bundled_policies_render_valid_manifests_or_located_findings(tmp_path_factory, data) -> None:
    """Hundreds of random edits of the real policies: never a crash, never an invalid manifest."""
    name = data.draw(st.sampled_from(sorted(BUNDLED)))
    doc = yaml.safe_load(BUNDLED[name])
    _mutate(data, doc)
    root = tmp_path_factory.mktemp("mutant")
    for other, text in BUNDLED.items():
        (root / other).write_text(text)
    (root / name).write_text(mutant := yaml.safe_dump(doc, allow_unicode=True))

    result = pipeline.render(pipeline.RenderOptions(root, root.parent / "out"))
    _assert_readable(result.problems, mutant)
    if has_errors(result.problems):
        assert all(p.line >= 1 for p in result.problems if p.file.endswith(".yaml")), result.problems
        return
    _assert_valid(result.plans)


# Each bundled workload policy, and the object its patches change by default, as rendered.
GOLDEN = ROOT / "tests" / "golden" / "seed" / "lab"
PATCHED = {
    name: found[0]
    for name in BUNDLED
    if (found := sorted(GOLDEN.glob(f"*/*-{name.removesuffix('.yaml')}.yaml")))
    and found[0].name.split("-")[0] in ("deployment", "job", "pod")
}


def _operations(pointers: list[str]) -> st.SearchStrategy[dict[str, object]]:
    """RFC 6902 operations on paths the object has (and some it has not), values of any type,
    the members an operation needs sometimes left out."""
    path = st.sampled_from(pointers)
    full = st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]), "path": path},
        optional={"value": replacements, "from": path},
    )
    valued = st.fixed_dictionaries({"op": st.sampled_from(["add", "replace"]), "path": path, "value": replacements})
    return st.one_of(valued, valued, valued, full)  # mostly operations a team would write


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_patched_bundled_policies_render_valid_manifests_or_located_findings(tmp_path_factory, data) -> None:
    """Random spec.patches on the real workloads (a string into replicas, a list where a mapping
    goes, a move out of a guarded path, another kind as target): never a crash, every finding at
    a line, never an invalid object written."""
    import jsonpointer

    name = data.draw(st.sampled_from(sorted(PATCHED)))
    rendered = yaml.safe_load(PATCHED[name].read_text())
    pointers = [jsonpointer.JsonPointer.from_parts(p).path for p in _paths(rendered)]
    pointers += ["/spec/unknown/field", "/spec/template/spec/containers/-", "/metadata/labels/team"]
    doc = yaml.safe_load(BUNDLED[name])
    target = data.draw(st.sampled_from([None, None, None, {"kind": "Service"}, {"kind": "Job"}]))
    patch = {"patch": data.draw(st.lists(_operations(pointers), min_size=1, max_size=3))}
    doc["spec"]["patches"] = [patch if target is None else {"target": target, **patch}]
    root = tmp_path_factory.mktemp("patched")
    for other, text in BUNDLED.items():
        (root / other).write_text(text)
    (root / name).write_text(patched := yaml.safe_dump(doc, allow_unicode=True))

    result = pipeline.render(pipeline.RenderOptions(root, root.parent / "out"))
    _assert_readable(result.problems, patched)
    if has_errors(result.problems):
        assert all(p.line >= 1 for p in result.problems if p.file.endswith(".yaml")), result.problems
        return
    _assert_valid(result.plans)


STACK = ROOT / "examples" / "whole-stack"
STACK_FILES = {
    p.relative_to(STACK).as_posix(): p.read_text()
    for p in sorted(STACK.rglob("*.yaml"))
    if p.relative_to(STACK).parts[0] in ("policies", "manifests")
}


# What no message may show: a raw regular expression, jsonschema's type sentence, a Python repr.
# (A dict or list repr, not a quoted field name such as '{'.)
# grammar a generated message or hint gets wrong: "a int", "1 fields", "a list is a list", a
# quantity in raw bytes
RAW_BYTES = re.compile(r"\b(?:limit|request) (?:of )?\d{7,}\b")
UNGRAMMATICAL = (
    r"\ba (?=(?:int|integer|array|object|entry|error|empty)\b)|\b1 (?:fields|entries|characters)\b|"
    r"\ba (?P<kind>list|mapping) is a (?P=kind)\b|" + RAW_BYTES.pattern
)
UNREADABLE = re.compile(
    r"\^[\[(]|[\])]\*?\$'|\\S|is not of type|PosixPath\(|\{'[^']*': |\['[^']*'[,\]]|(?<!\")\bNone\b(?!\")|"
    + UNGRAMMATICAL
)


def _assert_readable(problems, written: str = "") -> None:
    """written: the input's text; a quantity the input itself wrote in bytes may be quoted so."""
    for problem in problems:
        found = UNREADABLE.search(problem.message)
        digits = re.sub(r"\D", "", found.group()) if found else ""
        as_written = found is not None and RAW_BYTES.fullmatch(found.group()) is not None and digits in written
        assert not found or as_written, problem
        assert not re.search(UNGRAMMATICAL, problem.hint), problem


def _assert_valid(plans) -> None:
    """Every written object passes its kind's schema (kinds gen has none for were warned about)."""
    from generator.kube.validate import k8s_validator
    from generator.schemas import MANIFEST_SCHEMA_FILES, validator

    for plan in plans:
        for rel, text in plan.files.items():
            if rel.startswith("integrations/") or rel.endswith("kustomization.yaml") or not rel.endswith(".yaml"):
                continue
            obj = yaml.safe_load(text)
            bundled = MANIFEST_SCHEMA_FILES.get((obj["apiVersion"], obj["kind"]))
            check = validator(bundled) if bundled else k8s_validator("1.35", obj["apiVersion"], obj["kind"])
            assert check is None or not list(check.iter_errors(obj)), rel


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_whole_stack_renders_valid_manifests_or_located_findings(tmp_path_factory, data) -> None:
    """Random edits of a two-cluster repository: its Manifests policies and the raw files they
    read, its targets' overrides, its CronJob and Indexed Job. Never a crash, never a finding
    without a line, never an invalid object written."""
    name = data.draw(st.sampled_from(sorted(STACK_FILES)))
    docs = list(yaml.safe_load_all(STACK_FILES[name]))
    _mutate(data, docs[data.draw(st.integers(min_value=0, max_value=len(docs) - 1))])
    root = tmp_path_factory.mktemp("stack")
    for rel, text in STACK_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / name).write_text(yaml.safe_dump_all(docs, allow_unicode=True))

    result = pipeline.render(pipeline.RenderOptions(root / "policies", root / "out"))
    _assert_readable(result.problems, (root / name).read_text())
    if has_errors(result.problems):
        assert all(p.line >= 1 for p in result.problems if p.file.endswith(".yaml")), result.problems
        return
    _assert_valid(result.plans)


def test_defaults_are_filled_into_a_copy_that_shares_nothing() -> None:
    """Policies keep what was written (rules read it) beside the spec with defaults."""
    import copy

    from generator import schemas
    from generator.files import named
    from generator.yamlio.load import load_file

    def containers(value: object) -> list[int]:
        if isinstance(value, dict):
            return [id(value), *(i for v in value.values() for i in containers(v))]
        if isinstance(value, list):
            return [id(value), *(i for v in value for i in containers(v))]
        return []

    docs = [doc for path, name in named([POLICIES])[0] for doc in load_file(path, name)[0]]
    for doc in docs:
        written = copy.deepcopy(doc.data)
        name = schemas.policy_schema_file(doc.data["kind"])
        first, second = schemas.apply_defaults(doc.data, name), schemas.apply_defaults(doc.data, name)
        assert doc.data == written and first == second
        assert not set(containers(first)) & (set(containers(doc.data)) | set(containers(second)))
        assert first["spec"].keys() >= written.get("spec", {}).keys()


def _typed(value: object) -> object:
    """value with every scalar tagged by its type: 1, 1.0 and True compare equal, but must not pass for each other."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


template_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | nasty,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(nasty, inner, max_size=3),
    max_leaves=8,
)


@SETTINGS
@given(value=template_values)
def test_template_values_parse_back_to_themselves(value: object) -> None:
    """What a template writes for `{{ value }}` is read back as value, type included (1e-05 was read as a string)."""
    from generator.yamlio.load import parse_yaml
    from generator.yamlio.serialize import yaml_scalar

    assert _typed(parse_yaml(f"v: {yaml_scalar(value)}\n")["v"]) == _typed(value)


def _within_json_bound(text: str) -> None:
    import json

    from generator.kube.validate import JSON_BYTES_PER_YAML_CHAR

    docs, problems = load_text(text, "f.yaml")
    assert not problems, problems
    for doc in docs:
        compact = json.dumps(doc.data, separators=(",", ":"), ensure_ascii=False, default=str)
        assert len(compact.encode("utf-8")) <= len(text) * JSON_BYTES_PER_YAML_CHAR + 2, text


@pytest.mark.parametrize(
    "text",
    [
        "{a,b,c,d,e,f,g,h}",  # bare keys: the densest nulls
        "{" + ",".join(chr(0x1D400 + i) for i in range(40)) + "}",  # the same with 4-byte keys
        "{" + ",".join(chr(0x4E00 + i) for i in range(40)) + "}",
        "a:\nb:\nc:\n",
        "-\n-\n-\n",
        "[~,~,~,~]",
        "[no,no,no,on]",
        '["\\0\\0\\0\\e\\e\\a"]',
        "[1.e+15,1.e+15,.5]",
        "a: |\n\n\n\n\n\n x\n",
        "[a\\b, c\"d, '\t\t']",
        '{"",a}',
    ],
)
def test_compact_json_bound_holds_for_dense_yaml(text: str) -> None:
    """The size rules skip serializing an object whose YAML is small enough; these spellings
    make the most JSON per YAML character (6 for `{X,Y}` with 4-byte keys)."""
    _within_json_bound(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@SETTINGS
@given(value=json_values, flow=st.sampled_from([True, False, None]), unicode=st.booleans())
def test_compact_json_bound_holds_for_dumped_yaml(value: object, flow: bool | None, unicode: bool) -> None:
    from generator.yamlio.serialize import dump_yaml

    _within_json_bound(yaml.safe_dump(value, default_flow_style=flow, allow_unicode=unicode, width=20))
    _within_json_bound(dump_yaml(value))


OUT_KINDS = ("nothing", "empty-dir", "rendered-dir", "file", "link-to-file", "link-to-dir", "dangling-link")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(OUT_KINDS), mode=st.sampled_from([(), ("--check",), ("--diff",)]))
def test_any_out_is_rendered_into_or_refused_without_touching_the_users_files(
    tmp_path_factory, kind: str, mode: tuple[str, ...]
) -> None:
    """--out as users get it wrong: never a traceback, never a moved or rewritten file of theirs."""
    import contextlib
    import io
    import sys

    from generator.cli import main

    root = tmp_path_factory.mktemp("out")
    notes = root / "notes.txt"
    notes.write_bytes(b"mine\n")
    (root / "elsewhere").mkdir()
    out = root / "deploy"
    if kind == "empty-dir":
        out.mkdir()
    elif kind == "rendered-dir":
        out.mkdir()
        (out / "README.md").write_text("hand-written\n")
    elif kind == "file":
        out = notes
    elif kind != "nothing":
        out.symlink_to({"link-to-file": notes, "link-to-dir": root / "elsewhere"}.get(kind, root / "gone"))
    before = {p.name for p in root.iterdir()}
    argv, sys.argv = sys.argv, ["gen", "render", str(POLICIES), "--out", str(out), *mode]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main()
    finally:
        sys.argv = argv
    assert "Traceback" not in err.getvalue()
    assert notes.read_bytes() == b"mine\n"
    assert not any((root / "elsewhere").iterdir())
    if kind in ("file", "link-to-file", "link-to-dir", "dangling-link"):
        assert code == 2 and {p.name for p in root.iterdir()} == before
    else:
        assert code in (0, 1)
        assert not [p for p in root.iterdir() if p.name.startswith(".gen-")]  # no staging left behind
        if kind == "rendered-dir":
            assert (out / "README.md").read_text() == "hand-written\n"


# cel-python raises the recursion limit when its parser is built: done here, before any example runs
importlib.import_module("generator.kube.cel").parse_error("true")

KIND_DOCS = [
    doc
    for name in ("cluster-policies.yaml", "workload-kinds.yaml")
    for doc in yaml.safe_load_all((ROOT / "tests" / "realworld" / "valid" / name).read_text())
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_manifests_of_every_kind_give_located_findings(tmp_path_factory, data) -> None:
    """Random edits of documented examples of the kinds gen validate checks beyond their schemas
    (NetworkPolicy, Ingress, budgets, claims, ConfigMaps, admission policies, webhooks,
    StatefulSets, DaemonSets, Jobs, CronJobs, Services, quotas, LimitRanges, a Namespace):
    never a crash, every finding at a line, no raw expression or repr in a message."""
    from generator.kube.repository import validate_paths

    docs = copy.deepcopy(KIND_DOCS)
    _mutate(data, docs[data.draw(st.integers(min_value=0, max_value=len(docs) - 1))])
    path = tmp_path_factory.mktemp("kinds") / "m.yaml"
    path.write_text(yaml.safe_dump_all(docs, allow_unicode=True))
    problems = validate_paths([path], ("1.35",)).problems
    assert all(p.line >= 1 for p in problems), problems
    _assert_readable(problems)


CRD_DIR = ROOT / "tests" / "realworld" / "crds"
CRD_DOCS = {
    p.relative_to(CRD_DIR).as_posix(): list(yaml.safe_load_all(p.read_text())) for p in sorted(CRD_DIR.rglob("*.yaml"))
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), given_apart=st.booleans())
def test_mutated_crds_and_custom_resources_give_located_findings(tmp_path_factory, data, given_apart: bool) -> None:
    """Random edits of real CRDs (their schemas, list types, CEL rules) and of the custom
    resources they judge, the CRDs among the files or under --crds: never a crash, every finding
    at a line, no raw expression or repr in a message."""
    from generator.kube.repository import validate_paths

    docs = copy.deepcopy(CRD_DOCS)
    name = data.draw(st.sampled_from(sorted(docs)))
    _mutate(data, docs[name][data.draw(st.integers(min_value=0, max_value=len(docs[name]) - 1))])
    root = tmp_path_factory.mktemp("crds")
    for rel, content in docs.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(yaml.safe_dump_all(content, allow_unicode=True))
    if given_apart:
        resources = [root / rel for rel in docs if rel.endswith("examples.yaml")]
        crds = [root / rel for rel in docs if not rel.endswith("examples.yaml")]
        problems = validate_paths(resources, ("1.35",), crd_paths=crds).problems
    else:
        problems = validate_paths([root], ("1.35",)).problems
    assert all(p.line >= 1 for p in problems), problems
    _assert_readable(problems)


config_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.sampled_from(["1.35", "image-tag", "a/*"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["rule", "paths", "reason", "exclude", "crds"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    config=st.dictionaries(
        st.sampled_from(["kubernetesVersions", "plugins", "crds", "exclude", "ignore", "exlude"]),
        config_values,
        max_size=4,
    ),
    baseline=json_values,
)
def test_any_config_or_baseline_is_read_or_refused_in_words(tmp_path_factory, config, baseline) -> None:
    """A .gen.yaml and a --baseline file of any shape: located findings or a usage error, never a traceback."""
    import contextlib
    import io
    import json
    import sys

    from generator.cli import main

    root = tmp_path_factory.mktemp("ci")
    (root / ".gen.yaml").write_text(yaml.safe_dump(config))
    (root / "baseline.json").write_text(json.dumps(baseline))
    (root / "m.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
    argv, sys.argv = sys.argv, ["gen", "validate", str(root), "--config", str(root / ".gen.yaml")]
    sys.argv += ["--baseline", str(root / "baseline.json"), "--format", "sarif"]
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main()
    finally:
        sys.argv = argv
    assert "Traceback" not in err.getvalue() and code in (0, 1, 2), err.getvalue()
    if code == 2:
        assert err.getvalue().startswith("gen: error: "), err.getvalue()
