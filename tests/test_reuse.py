"""A render reuses its target's previous render only where nothing it was made from changed:
after every kind of edit, a render with the cache gives the bytes and findings of one without."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import cache, pipeline
from generator.problems import Problem
from generator.render import write
from tests.conftest import ROOT, crd, edit

WHOLE_STACK = ROOT / "examples" / "whole-stack"

SERVICE = """apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata:
  name: {name}
spec:
  namespace: {namespace}
  image: registry.example.com/{name}
  placement:
    colocateWith:
    - matchLabels: {{app: {near}}}
"""


Rendered = tuple[list[Problem], dict[str, bytes]]


def _render(policies: Path, out: Path, monkeypatch: pytest.MonkeyPatch, cached: bool = True) -> Rendered:
    with monkeypatch.context() as scoped:
        if not cached:
            scoped.setenv("GEN_NO_CACHE", "1")
        cache.directory.cache_clear()
        result = pipeline.render(pipeline.RenderOptions(policies, out))
    cache.directory.cache_clear()
    files = {f"{plan.reldir}/{name}": data for plan in result.plans for name, data in plan.with_manifest().items()}
    return result.problems, files


def _same_as_uncached(policies: Path, monkeypatch: pytest.MonkeyPatch) -> Rendered:
    """Render with the cache (and write it, as the next run's previous output), and hold it to
    a render of the same policies without any cache; then render the output found up to date
    (which keeps each target whole for the next run) and take it whole."""
    out = policies.parent / "out"
    warm = _render(policies, out, monkeypatch)
    assert warm == _render(policies, out, monkeypatch, cached=False)
    with write.output_lock(out):
        write.write_all(out, pipeline.render(pipeline.RenderOptions(policies, out)).plans)
    steady = _render(policies, out, monkeypatch)
    assert steady == _render(policies, out, monkeypatch, cached=False) == _render(policies, out, monkeypatch)
    return warm


def _bundle(home: Path, kind: str = "renders") -> Path:
    (found,) = [p for p in home.rglob("*") if p.is_dir() and p.parent.name == kind]
    return found


def test_the_whole_stack_follows_every_edit(cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Overrides, a ConfigMap that pod templates hash, the Target's labels, a policy's own
    field: each edit reaches the output through a warm cache."""
    stack = tmp_path / "stack"
    shutil.copytree(WHOLE_STACK, stack, ignore=shutil.ignore_patterns("deploy"))
    monkeypatch.chdir(stack)
    policies = Path("policies")
    before = _same_as_uncached(policies, monkeypatch)
    assert _same_as_uncached(policies, monkeypatch) == before  # warm, unchanged
    edits: list[Callable[[], None]] = [
        lambda: edit(stack / "policies" / "webapi.yaml", "webapi:1.8.3", "webapi:1.8.4"),
        lambda: edit(stack / "manifests" / "web" / "config.yaml", "LOG_FORMAT: json", "LOG_FORMAT: text"),
        lambda: edit(stack / "policies" / "targets.yaml", "webapi:1.9.0-rc.2", "webapi:1.9.0-rc.3"),
        lambda: edit(
            stack / "policies" / "targets.yaml", "gpuLabels: nvidia-gfd", "gpuLabels: {model: example.com/gpu}"
        ),
    ]
    seen = [before]
    for change in edits:
        change()
        seen.append(_same_as_uncached(policies, monkeypatch))
        assert seen[-1] != seen[-2]


def test_colocation_and_lines_follow_edits_in_other_files(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service's affinity names the namespaces of the services it colocates with: moving one
    of those re-renders it; a finding's line moves with its file's text."""
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "a.yaml").write_text(SERVICE.format(name="a", namespace="ns-a", near="b"))
    (policies / "b.yaml").write_text(SERVICE.format(name="b", namespace="ns-b", near="a"))
    (policies / "watch.yaml").write_text("apiVersion: gen/v1alpha1\nkind: Monitoring\nmetadata:\n  name: watch\n")
    monkeypatch.chdir(tmp_path)
    problems, files = _same_as_uncached(Path("policies"), monkeypatch)
    assert b"ns-b" in files["default/ns-a/deployment-a.yaml"]
    untagged = [p for p in problems if p.file == "policies/a.yaml" and "tag" in p.message]
    assert untagged

    edit(policies / "b.yaml", "namespace: ns-b", "namespace: ns-c")
    problems, files = _same_as_uncached(Path("policies"), monkeypatch)
    assert b"ns-c" in files["default/ns-a/deployment-a.yaml"]

    (policies / "a.yaml").write_text("# the front end\n\n" + (policies / "a.yaml").read_text())
    moved = [p for p in _same_as_uncached(Path("policies"), monkeypatch)[0] if p.file == "policies/a.yaml"]
    assert [p.line for p in moved if p in untagged] == []  # not the cached lines: two further down
    assert sorted(p.line for p in moved if p.rule == "image-tag") == [p.line + 2 for p in untagged]


@pytest.mark.parametrize("kinds", [("up-to-date",), ("renders", "up-to-date")])
def test_a_broken_entry_is_ignored_and_rewritten(
    cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch, kinds: tuple[str, ...]
) -> None:
    """Whole targets kept broken: the target is rendered from its policies' renders; those
    broken too: rendered from the policies. Each broken file is written again."""
    monkeypatch.chdir(policy_copy.parent)
    cold = _same_as_uncached(Path("policies"), monkeypatch)
    assert _same_as_uncached(Path("policies"), monkeypatch) == cold  # the output is up to date: kept whole
    (kept,) = [p for p in cache_home.rglob("*") if p.parent.name == "up-to-date"]  # one file per target
    entries = [*_bundle(cache_home).iterdir(), kept]  # and the renders' shards
    whole = [entry.read_bytes() for entry in entries]

    def kind_and_name(entry: Path) -> tuple[str, str]:
        kind = entry.parent if entry.parent.name in ("renders", "up-to-date") else entry.parent.parent
        return kind.name, entry.relative_to(kind).as_posix()

    for broken in (lambda data: b"\x00not marshal data", lambda data: data[: len(data) // 2]):
        for entry, data in zip(entries, whole, strict=True):
            if kind_and_name(entry)[0] in kinds:
                entry.write_bytes(broken(data))
        assert _same_as_uncached(Path("policies"), monkeypatch) == cold
        assert all(cache.read(*kind_and_name(entry)) is not None for entry in entries)


def _unpacked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The policies whose kept objects a render unpacks, as it unpacks them."""
    from generator.render import templates

    unpacked: list[str] = []
    get = templates._Unpacked.get

    def noted(self: templates._Unpacked) -> object:
        if self.objects is None:
            unpacked.append(self._again[0].name)
        return get(self)

    monkeypatch.setattr(templates._Unpacked, "get", noted)
    return unpacked


def test_after_one_edit_no_other_policys_objects_are_unpacked(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the checks across objects ask of an unchanged policy's objects (their identity, Pod
    labels, HPA ranges, selectors) is kept beside them: a render after one edit unpacks none of
    them (once a run has kept them: a fresh cache's first render does not)."""
    policies = tmp_path / "policies"
    policies.mkdir()
    for name in ("a", "b", "c"):
        (policies / f"{name}.yaml").write_text(SERVICE.format(name=name, namespace="shop", near="a"))
        with (policies / f"{name}.yaml").open("a") as handle:
            handle.write("  autoscaling: {minReplicas: 2, maxReplicas: 4}\n  service: {ports: [{port: 80}]}\n")
    monkeypatch.chdir(tmp_path)
    unpacked = _unpacked(monkeypatch)
    _same_as_uncached(Path("policies"), monkeypatch)  # a fresh cache: kept without facts
    edit(policies / "c.yaml", "registry.example.com/c", "registry.example.com/c2")
    _same_as_uncached(Path("policies"), monkeypatch)  # kept with them
    assert set(unpacked) <= {"c"}  # the plan looks into what changed against the output
    unpacked.clear()
    edit(policies / "b.yaml", "registry.example.com/b", "registry.example.com/b2")
    _same_as_uncached(Path("policies"), monkeypatch)
    assert set(unpacked) <= {"b"}


def test_a_kept_job_renamed_per_change_keeps_its_name(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `whenChanged: newName` Job kept from the run before is renamed as when it was rendered:
    its name and Pod labels then come from the object, not from what was kept of it."""
    stack = tmp_path / "stack"
    shutil.copytree(WHOLE_STACK, stack, ignore=shutil.ignore_patterns("deploy"))
    monkeypatch.chdir(stack)
    edit(stack / "policies" / "training.yaml", "  workloadKind: Job\n", "  workloadKind: Job\n  whenChanged: newName\n")
    renamed = _same_as_uncached(Path("policies"), monkeypatch)
    edit(stack / "policies" / "webapi.yaml", "webapi:1.8.3", "webapi:1.8.4")
    _same_as_uncached(Path("policies"), monkeypatch)  # the facts kept
    edit(stack / "policies" / "webapi.yaml", "webapi:1.8.4", "webapi:1.8.5")
    unpacked = _unpacked(monkeypatch)
    again = _same_as_uncached(Path("policies"), monkeypatch)
    assert "llm-finetune" in unpacked
    jobs = {name for name in again[1] if "/job-llm-finetune-" in name}
    assert jobs and jobs == {name for name in renamed[1] if "/job-llm-finetune-" in name}


def test_kept_facts_of_the_wrong_shape_are_rendered_again(
    cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A render's entries whose facts a cache file holds misshapen: the render is the same."""
    monkeypatch.chdir(policy_copy.parent)
    cold = _same_as_uncached(Path("policies"), monkeypatch)
    edit(policy_copy / "data-processor.yaml", "data-processor:validated", "data-processor:v2")
    changed = _same_as_uncached(Path("policies"), monkeypatch)  # kept with facts now
    bundle = _bundle(cache_home)
    for shard in bundle.iterdir():
        name = f"{bundle.name}/{shard.name}"
        entries = cache.read("renders", name)
        for key, entry in entries.items():
            if isinstance(entry, tuple) and entry[3] is not None:
                entries[key] = (*entry[:3], (entry[3][0], [{"group_kind": 1}] * len(entry[3][1]), *entry[3][2:]))
        cache.write("renders", name, entries)
    edit(policy_copy / "data-processor.yaml", "data-processor:v2", "data-processor:validated")
    assert _same_as_uncached(Path("policies"), monkeypatch) == cold != changed


def test_kept_objects_that_do_not_unpack_are_rendered_again(cache_home: Path, policy_copy: Path) -> None:
    """Packed objects damaged inside a cache file that reads: the policy is rendered again."""
    from generator.policies.validate import check_policies, load_policies
    from generator.render import templates

    policies, _ = load_policies([policy_copy])
    (target,), _ = check_policies(policies)
    policy = next(p for p in target.policies if p.kind == "ReplicatedService")
    fresh = templates._render_policy(policy, target)[0]
    assert templates._Unpacked(b"\x00damaged", policy, target).get() == fresh


MONITOR_CRD = crd(
    "monitoring.coreos.com",
    "ServiceMonitor",
    "{type: object, required: [sampleLimit], x-kubernetes-preserve-unknown-fields: true}",
)


def test_other_crds_judge_again(cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the objects are judged with is part of the entry: a ServiceMonitor judged before
    without a CRD (its output up to date, so kept whole) is judged again against the CRD
    given now."""
    monkeypatch.chdir(policy_copy.parent)
    definition = policy_copy.parent / "servicemonitor-crd.yaml"
    definition.write_text(MONITOR_CRD)
    out = Path("out")
    without = _same_as_uncached(Path("policies"), monkeypatch)[0]
    options = pipeline.RenderOptions(Path("policies"), out, crds=(definition,))
    against = pipeline.render(options).problems
    assert [p for p in against if "sampleLimit" in p.message] and not [p for p in without if "sampleLimit" in p.message]
    monkeypatch.setenv("GEN_NO_CACHE", "1")
    cache.directory.cache_clear()
    assert against == pipeline.render(options).problems


def test_an_output_marshal_cannot_write_is_rendered_every_time(
    cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value marshal does not know (a date read from a free-form field, say) keeps its
    policy out of the cache; the render is the same."""
    from generator.render import templates

    monkeypatch.chdir(policy_copy.parent)
    expected = _render(Path("policies"), Path("out"), monkeypatch, cached=False)
    plain = templates._plain_output
    monkeypatch.setattr(templates, "_plain_output", lambda output: (*plain(output), object()))
    assert _same_as_uncached(Path("policies"), monkeypatch) == expected
    assert _same_as_uncached(Path("policies"), monkeypatch) == expected


# Edits that reach other policies' objects through every input of a kept render: a policy's
# own field, a ConfigMap that Pods hash, an override, the Target's settings, a Job's image, a
# claim's access modes (a check across objects), lines above findings, per-change Job names.
TOGGLES = [
    ("policies/webapi.yaml", "webapi:1.8.3", "webapi:1.8.4"),
    ("manifests/web/config.yaml", "LOG_FORMAT: json", "LOG_FORMAT: text"),
    ("policies/targets.yaml", "webapi:1.9.0-rc.2", "webapi:1.9.0-rc.3"),
    ("policies/targets.yaml", "gpuLabels: nvidia-gfd", "gpuLabels: {model: example.com/gpu}"),
    ("policies/training.yaml", "finetune:0.14.2", "finetune:0.14.3"),
    ("manifests/ml/data.yaml", "accessModes: [ReadOnlyMany]", "accessModes: [ReadWriteOnce]"),
    (
        "policies/webapi.yaml",
        "apiVersion: gen/v1alpha1\nkind: ReplicatedService",
        "\n\napiVersion: gen/v1alpha1\nkind: ReplicatedService",
    ),
    ("policies/training.yaml", "  workloadKind: Job\n", "  workloadKind: Job\n  whenChanged: newName\n"),
]


def test_kept_objects_judged_in_worker_processes_render_as_without_a_cache(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every piece of work forked, even one object: a kept object the links change is unpacked
    here and judged in a child, and every edit still renders as without a cache."""
    from generator import parallel

    monkeypatch.setenv("GEN_WORKERS", "2")
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
    stack = tmp_path / "stack"
    shutil.copytree(WHOLE_STACK, stack, ignore=shutil.ignore_patterns("deploy"))
    monkeypatch.chdir(stack)
    _same_as_uncached(Path("policies"), monkeypatch)
    for name, old, new in TOGGLES:
        edit(stack / name, old, new)
        _same_as_uncached(Path("policies"), monkeypatch)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(range(len(TOGGLES))), min_size=1, max_size=3))
def test_any_sequence_of_edits_renders_as_without_a_cache(monkeypatch: pytest.MonkeyPatch, edits: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        stack = Path(tmp) / "stack"
        shutil.copytree(WHOLE_STACK, stack, ignore=shutil.ignore_patterns("deploy"))
        monkeypatch.setenv("XDG_CACHE_HOME", str(Path(tmp) / "cache"))
        monkeypatch.delenv("GEN_NO_CACHE", raising=False)
        monkeypatch.chdir(stack)
        _same_as_uncached(Path("policies"), monkeypatch)
        for index in edits:
            name, old, new = TOGGLES[index]
            path = stack / name
            text = path.read_text()
            assert old in text or new in text, f"{old!r} not in {name}"
            path.write_text(text.replace(old, new) if old in text and new not in text else text.replace(new, old))
            _same_as_uncached(Path("policies"), monkeypatch)
