"""gen's cache is a speed-up only: the same findings cold, warm, corrupted and turned off."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator import cache
from generator.kube import api_versions, crds
from tests.conftest import ROOT, edit

KUEUE = ROOT / "tests" / "realworld" / "crds" / "kueue"
CERT_MANAGER = ROOT / "tests" / "realworld" / "crds" / "cert-manager-shaped"


def _entries(home: Path, kind: str) -> list[Path]:
    return sorted(p for p in home.rglob("*") if p.is_file() and p.parent.name == kind)


def _bundles(home: Path, kind: str) -> list[Path]:
    """The bundles of a kind: folders of cache.SHARDS files."""
    return sorted(p for p in home.rglob("*") if p.is_dir() and p.parent.name == kind)


def test_an_entry_reads_back_and_a_broken_one_reads_as_none(cache_home: Path) -> None:
    cache.write("crds", "a", [{"kind": "CustomResourceDefinition"}, 1, None])
    assert cache.read("crds", "a") == [{"kind": "CustomResourceDefinition"}, 1, None]
    (entry,) = _entries(cache_home, "crds")
    for broken in (b"", b"\x00garbage", entry.read_bytes()[:5]):
        entry.write_bytes(broken)
        assert cache.read("crds", "a") is None
    assert cache.read("crds", "missing") is None
    assert not [p for p in entry.parent.iterdir() if p.name.startswith(".tmp-")]  # no temporary left


def test_crd_sources_are_the_same_cold_warm_and_corrupted(cache_home: Path) -> None:
    cold, missing = crds.stored([KUEUE])
    assert not missing and {crd["spec"]["names"]["kind"] for crd, _ in cold} >= {"ClusterQueue", "LocalQueue"}
    entries = _entries(cache_home, "crds")
    assert len(entries) == len(list(KUEUE.glob("*.yaml")))
    assert crds.stored([KUEUE])[0] == cold
    for entry in entries:
        entry.write_bytes(b"not marshal data")
    assert crds.stored([KUEUE])[0] == cold
    assert all(cache.read("crds", e.name) is not None for e in entries)  # rewritten whole


def test_kubernetes_definitions_are_the_same_cold_warm_and_corrupted(cache_home: Path) -> None:
    parsed = json.loads((api_versions.folder("1.35") / "_definitions.json").read_text(encoding="utf-8"))
    for _ in ("cold", "warm"):
        api_versions.definitions.cache_clear()
        assert api_versions.definitions("1.35") == parsed
    (entry,) = _entries(cache_home, "definitions")
    entry.write_bytes(b"not marshal data")
    api_versions.definitions.cache_clear()
    assert api_versions.definitions("1.35") == parsed
    assert cache.read("definitions", entry.name) == parsed  # rewritten whole
    api_versions.definitions.cache_clear()


def test_gen_no_cache_reads_and_writes_nothing(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_NO_CACHE", "1")
    cache.directory.cache_clear()
    assert crds.stored([KUEUE])[0]
    cache.write("crds", "a", 1)
    assert cache.read("crds", "a") is None and not cache_home.exists()


def _validate_cert(home: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """A custom resource whose CRD's CEL rules refuse it, validated in a fresh process (the
    parser is built or loaded once per process)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(home)}
    env.pop("GEN_NO_CACHE", None)
    cert = (CERT_MANAGER / "examples.yaml").read_text().replace("size: 256", "size: 2048")
    return subprocess.run(
        [sys.executable, "-m", "generator", *flags, "validate", "-", "--crds", str(CERT_MANAGER)],
        input=cert,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )


def test_the_cel_parser_gives_the_same_verdicts_cold_warm_corrupted_and_off(tmp_path: Path) -> None:
    home = tmp_path / "cache"
    cold = _validate_cert(home)
    assert cold.returncode == 1 and "crd-rule" in cold.stdout and "ECDSA key size" in cold.stdout, cold
    (parser,) = _entries(home, "cel")
    assert _validate_cert(home).stdout == cold.stdout
    parser.write_bytes(b"broken")
    assert _validate_cert(home).stdout == cold.stdout
    assert parser.read_bytes() != b"broken"  # rebuilt
    off = tmp_path / "off"
    assert _validate_cert(off, "--no-cache").stdout == cold.stdout
    assert not off.exists()


def _render(policies: Path, out: Path) -> tuple[list[object], dict[str, bytes]]:
    from generator import pipeline
    from generator.render import write

    result = pipeline.render(pipeline.RenderOptions(policies, out))
    assert not [p for p in result.problems if p.severity.name == "ERROR"], result.problems
    files = {f"{plan.reldir}/{name}": data for plan in result.plans for name, data in plan.with_manifest().items()}
    with write.output_lock(out):
        write.write_all(out, result.plans)
    return result.problems, files


def test_policies_are_the_same_cold_warm_edited_and_corrupted(cache_home: Path, policy_copy: Path) -> None:
    """A policy file unchanged since the last run is taken from the cache; an edited one is read
    again, so the render follows the edit; a broken entry is ignored and rewritten."""
    out = policy_copy.parent / "out"
    cold = _render(policy_copy, out)
    (bundle,) = _bundles(cache_home, "policies")
    assert len(list(bundle.iterdir())) == cache.SHARDS
    written = {p.name: p.stat().st_ino for p in bundle.iterdir()}
    assert _render(policy_copy, out) == cold
    assert {p.name: p.stat().st_ino for p in bundle.iterdir()} == written  # nothing rewritten

    app = policy_copy / "cache-app.yaml"
    app.write_text(app.read_text().replace("memory: 256Mi", "memory: 320Mi"))
    edited = _render(policy_copy, out)
    assert edited != cold and any(b"320Mi" in data for data in edited[1].values())
    rewritten = [p.name for p in bundle.iterdir() if p.stat().st_ino != written[p.name]]
    assert 1 <= len(rewritten) <= 2  # the files that held its old build and hold the new one, alone
    assert _render(policy_copy, out) == edited  # and the edit is what the cache holds now

    for shard in bundle.iterdir():
        shard.write_bytes(b"\x00not marshal data")
    assert _render(policy_copy, out) == edited
    assert all(cache.read("policies", f"{bundle.name}/{p.name}") is not None for p in bundle.iterdir())


def test_policies_cached_by_other_code_are_not_read(
    cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry is named after gen's code too: a checkout edited without a new version number
    never reads what the code before the edit cached."""
    out = policy_copy.parent / "out"
    _render(policy_copy, out)
    cache.code.cache_clear()
    monkeypatch.setattr(cache, "code", lambda: b"other code")
    _render(policy_copy, out)
    assert len(_bundles(cache_home, "policies")) == 2


def test_a_kind_kept_to_a_number_loses_its_least_recently_used_bundles(cache_home: Path) -> None:
    def store(name: str, value: int, when: int | None = None) -> None:
        bundle = cache.Bundle("policies", name, keep=4)
        bundle.kept = {f"{value:064x}": value}
        bundle.save()
        if when is not None:
            os.utime(next(cache_home.glob("gen/*/policies")) / name, (when, when))

    for n in range(6):
        store(f"b{n}", n, when=n)
    assert len(_bundles(cache_home, "policies")) == 4
    store("b3", 3)  # unchanged, used again: now the most recent
    store("b6", 6)
    assert [p.name for p in _bundles(cache_home, "policies")] == ["b3", "b4", "b5", "b6"]
    assert cache.Bundle("policies", "b6", keep=4).stored == {f"{6:064x}": 6}


def test_upgrading_a_library_alone_is_other_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML spells what is written and kubernetes-validate ships the schemas: entries made
    beside other versions of them are not read."""
    libraries = tmp_path / "site-packages"
    (libraries / "yaml").mkdir(parents=True)
    (libraries / "PyYAML-6.0.1.dist-info").mkdir()
    monkeypatch.setattr(cache.yaml, "__file__", str(libraries / "yaml" / "__init__.py"))

    def fingerprint() -> bytes:
        cache.code.cache_clear()
        return cache.code()

    before = fingerprint()
    assert fingerprint() == before
    (libraries / "PyYAML-6.0.1.dist-info").rename(libraries / "PyYAML-6.0.2.dist-info")
    assert fingerprint() != before
    cache.code.cache_clear()


def test_other_versions_unused_for_a_month_are_removed(cache_home: Path) -> None:
    """Each version keeps a folder of its own; the first run of a new one removes those of
    versions nothing used for cache.UNUSED_DAYS, and keeps the others."""
    month_ago = time.time() - (cache.UNUSED_DAYS + 1) * 86400
    for version, when in (("0.0.1", month_ago), ("0.0.2", None)):
        bundle = cache_home / "gen" / version / "policies" / "bundle"
        bundle.mkdir(parents=True)
        (cache_home / "gen" / version / "crds").write_text("a file where a folder is expected")
        if when is not None:
            for path in (bundle, bundle.parent, bundle.parent.parent, cache_home / "gen" / version / "crds"):
                os.utime(path, (when, when))
    assert cache.directory("policies") is not None
    assert sorted(p.name for p in (cache_home / "gen").iterdir()) == sorted(["0.0.2", cache.__version__])


def _same_size_edit(path: Path, data: bytes) -> None:
    """Change a file's bytes and put its modification time back, as a careless tool might."""
    before = path.stat()
    assert len(data) == before.st_size
    time.sleep(0.05)  # past the file system's timestamp granularity
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_file_read_before_is_known_by_its_stat_until_it_changes(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.render import write

    monkeypatch.setattr(cache, "SETTLED_NS", 0)
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "a.yaml").write_bytes(b"kind: A\n")
    stamps = cache.Stamps.of_directory(str(folder))
    assert stamps.digest("a.yaml") is None
    found = write.read_regular_stat(folder / "a.yaml")
    assert found is not None
    stamps.note("a.yaml", found[1], "sha-of-a")
    stamps.save()
    assert cache.Stamps.of_directory(str(folder)).digest("a.yaml") == "sha-of-a"
    _same_size_edit(folder / "a.yaml", b"kind: B\n")
    assert cache.Stamps.of_directory(str(folder)).digest("a.yaml") is None  # its change time moved
    (folder / "a.yaml").unlink()
    assert cache.Stamps.of_directory(str(folder)).digest("a.yaml") is None


def test_a_file_changed_just_before_it_was_read_is_not_vouched_for(cache_home: Path, tmp_path: Path) -> None:
    """A second change within the timestamp granularity of the first could keep every time."""
    from generator.render import write

    (tmp_path / "a.yaml").write_bytes(b"kind: A\n")
    stamps = cache.Stamps.of_directory(str(tmp_path))
    found = write.read_regular_stat(tmp_path / "a.yaml")
    assert found is not None
    stamps.note("a.yaml", found[1], "sha-of-a")
    stamps.save()
    assert cache.Stamps.of_directory(str(tmp_path)).digest("a.yaml") is None


def test_a_policy_edited_behind_its_stat_is_read_again(
    cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Policy files known unchanged by their stat are not read; one edited since (its size and
    modification time kept) is."""
    monkeypatch.setattr(cache, "SETTLED_NS", 0)
    out = policy_copy.parent / "out"
    cold = _render(policy_copy, out)
    assert _render(policy_copy, out) == cold == _render(policy_copy, out)  # read and noted, then by stat
    app = policy_copy / "cache-app.yaml"
    _same_size_edit(app, app.read_bytes().replace(b"memory: 256Mi", b"memory: 257Mi"))
    assert any(b"257Mi" in data for data in _render(policy_copy, out)[1].values())


TWO_TARGETS = """apiVersion: gen/v1alpha1
kind: Target
metadata: {name: east}
---
apiVersion: gen/v1alpha1
kind: Target
metadata: {name: west}
spec: {kubernetesVersion: "1.34"}
"""

COST = """apiVersion: gen/v1alpha1
kind: DeletionCostPolicy
metadata: {name: %s}
"""

CLAIMING = """apiVersion: gen/v1alpha1
kind: Manifests
metadata: {name: team}
spec:
  files: [../manifests/]
"""


def _checked(policies: Path, monkeypatch: pytest.MonkeyPatch, cached: bool = True) -> list[object]:
    from generator.cache.policies import Kept
    from generator.policies.validate import check_policies, load_policies

    with monkeypatch.context() as scoped:
        if not cached:
            scoped.setenv("GEN_NO_CACHE", "1")
        cache.directory.cache_clear()
        kept = Kept.of([policies])
        found = check_policies(load_policies([policies], kept=kept)[0], kept=kept)[1]
    cache.directory.cache_clear()
    return sorted(found)


def test_each_targets_checks_are_kept_under_what_it_is_made_from(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two targets in one file selecting the same policies are two entries; a file a Manifests
    policy claims is part of its target, broken or not."""
    policies, claimed = tmp_path / "policies", tmp_path / "manifests"
    policies.mkdir()
    claimed.mkdir()
    (policies / "targets.yaml").write_text(TWO_TARGETS)
    (policies / "costs.yaml").write_text(COST % "one" + "---\n" + COST % "two")
    (policies / "team.yaml").write_text(CLAIMING)
    (claimed / "settings.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata: [\n")
    monkeypatch.chdir(tmp_path)
    uncached = _checked(Path("policies"), monkeypatch, cached=False)
    assert {t for p in uncached if p.rule == "cost-policy-single" for t in p.targets} == {"east", "west"}
    assert uncached == _checked(Path("policies"), monkeypatch) == _checked(Path("policies"), monkeypatch)
    (claimed / "settings.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n\nmetadata: {name: s}\ndata: [\n")
    moved = _checked(Path("policies"), monkeypatch, cached=False)
    assert moved != uncached and moved == _checked(Path("policies"), monkeypatch)  # the finding's line moved


SECOND_SERVICE = """---
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata:
  name: data-reader
spec:
  namespace: deletion-cost-lab
  image: registry.example.com/training/data-reader:validated
  autoscaling: {minReplicas: 5, maxReplicas: 2}
"""

OVERRIDE = """  overrides:
  - kind: ReplicatedService
    name: data-processor
    spec:
      deletionCost: {initial: 2000}
"""


def test_a_workloads_findings_follow_what_its_rules_read_of_other_policies(
    cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workload's findings are kept per policy, under its document and what its rules read of
    the target (`rules.Facts`): a Scheduler's profiles, the DeletionCostPolicy's tiers, an
    override in the Target file and the lines above it each reach them through a warm cache;
    two policies of one file are two entries."""
    monkeypatch.chdir(policy_copy.parent)
    policies = Path("policies")
    with (policy_copy / "data-processor.yaml").open("a") as handle:
        handle.write(SECOND_SERVICE)
    target = policy_copy / "target.yaml"
    edits = [  # (the edit, whether it changes the findings)
        (lambda: edit(policy_copy / "scheduler.yaml", "- schedulerName: custom-scheduler", "- schedulerName: x"), True),
        (lambda: edit(policy_copy / "scheduler.yaml", "- schedulerName: x", "- schedulerName: custom-scheduler"), True),
        (lambda: edit(policy_copy / "scheduler.yaml", "[GPUPacking, Coscheduling]", "[GPUPacking]"), True),
        (lambda: edit(policy_copy / "deletion-cost-policy.yaml", "medium: [1, 100]", "medium: [1, 40]"), True),
        (lambda: edit(policy_copy / "llm-inference.yaml", "llm-server:0.9.2", "llm-server:0.9.3"), False),
        (lambda: target.write_text(target.read_text() + OVERRIDE), True),
        (lambda: target.write_text("# the lab\n\n" + target.read_text()), True),
    ]
    seen = [_checked(policies, monkeypatch, cached=False)]
    assert {p.rule for p in seen[-1] if p.file == "policies/data-processor.yaml"} == {"hpa-min-max"}
    assert _checked(policies, monkeypatch) == seen[-1] == _checked(policies, monkeypatch)
    for change, changes_findings in edits:
        change()
        seen.append(_checked(policies, monkeypatch, cached=False))
        assert _checked(policies, monkeypatch) == seen[-1] == _checked(policies, monkeypatch)
        assert (seen[-1] != seen[-2]) == changes_findings
    before, after = (
        [p.line for p in found if p.rule == "cost-cap" and p.file == "policies/target.yaml"] for found in seen[-2:]
    )
    assert before and after == [line + 2 for line in before]  # the override's finding moved with its line


def test_after_one_edit_only_that_workloads_rules_run(
    cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What checking a target after an edit costs scales with the edit: the workloads whose
    documents are unchanged are not checked again (nor their specs unpacked), once a run has
    kept their findings (a fresh cache's first run keeps none: a CI runner's is never read)."""
    from generator.policies import rules
    from generator.policies.policy import Policy

    checked: list[str] = []

    def noted(policy: Policy, facts: rules.Facts) -> list[object]:
        checked.append(policy.name)
        return []

    noting = {kind: (noted, *kind_rules) for kind, kind_rules in rules.WORKLOAD_RULES.items()}
    monkeypatch.setattr(rules, "WORKLOAD_RULES", noting)
    monkeypatch.chdir(policy_copy.parent)
    policies = Path("policies")
    first = _checked(policies, monkeypatch)
    assert len(checked) > 3
    checked.clear()
    assert _checked(policies, monkeypatch) == first and checked == []  # the target's findings, whole
    edit(policy_copy / "llm-inference.yaml", "llm-server:0.9.2", "llm-server:0.9.3")
    _checked(policies, monkeypatch)  # a fresh cache kept no workload's findings: now it does
    checked.clear()
    edit(policy_copy / "data-processor.yaml", "data-processor:validated", "data-processor:v2")
    _checked(policies, monkeypatch)
    assert checked == ["data-processor"]


def test_broken_workload_findings_are_checked_again_and_rewritten(
    cache_home: Path, policy_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The targets' findings and each workload's, kept broken (not marshal data, cut short,
    entries of the wrong shape): the workloads are checked again, and each file written again."""
    monkeypatch.chdir(policy_copy.parent)
    policies = Path("policies")
    cold = _checked(policies, monkeypatch, cached=False)
    assert _checked(policies, monkeypatch) == cold
    shards = [
        p for kind in ("checks", "workload-checks") for bundle in _bundles(cache_home, kind) for p in bundle.iterdir()
    ]
    assert shards
    whole = [shard.read_bytes() for shard in shards]

    def wrong_shape(data: bytes) -> bytes:
        return marshal.dumps({key: [("file", 1)] for key in marshal.loads(data)})

    for broken in (lambda data: b"\x00not marshal data", lambda data: data[: len(data) // 2], wrong_shape):
        for shard, data in zip(shards, whole, strict=True):
            shard.write_bytes(broken(data))
        assert _checked(policies, monkeypatch) == cold
        assert all(
            cache.read(shard.parent.parent.name, f"{shard.parent.name}/{shard.name}") is not None for shard in shards
        )


def test_a_record_of_files_all_written_since_is_no_longer_asked(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a render rewrote a directory, every stat differs: past the first misses the
    files are read without a stat each."""
    from generator.render import write

    monkeypatch.setattr(cache, "SETTLED_NS", 0)
    names = [f"{i:03d}.yaml" for i in range(cache.Stamps.STALE_AFTER + 8)]
    stamps = cache.Stamps.of_directory(str(tmp_path))
    for name in names:
        (tmp_path / name).write_bytes(b"kind: A\n")
        found = write.read_regular_stat(tmp_path / name)
        assert found is not None
        stamps.note(name, found[1], "sha")
    stamps.save()
    time.sleep(0.05)
    for name in names:
        os.link(tmp_path / name, tmp_path / "link")  # as a render's staging does: the change time moves
        os.unlink(tmp_path / "link")
    stats = []
    monkeypatch.setattr(cache.os, "lstat", lambda path: stats.append(path) or os.stat(path, follow_symlinks=False))
    stamps = cache.Stamps.of_directory(str(tmp_path))
    assert [stamps.digest(name) for name in names] == [None] * len(names)
    assert len([path for path in stats if str(path).endswith(".yaml")]) == cache.Stamps.STALE_AFTER


def test_a_policy_damaged_inside_its_cache_file_is_read_from_its_file_again(
    gen, cache_home: Path, policy_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached policy is unpacked only when asked for, so damage inside an entry whose file
    still reads is found late: the policy is read from its file then, as without a cache."""
    import marshal

    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    edit(policy_copy / "cache-app.yaml", "memory: 256Mi", "memory: 320Mi")  # so the render below is one
    assert gen("render", policy_copy, "--out", out).code == 0
    (bundle,) = _bundles(cache_home, "policies")
    for shard in bundle.iterdir():
        entries = marshal.loads(shard.read_bytes())
        for built in entries.values():
            for i, (policy, found) in enumerate(built):
                if policy is not None:
                    built[i] = ((*policy[:-1], b"\x00damaged"), found)
        shard.write_bytes(marshal.dumps(entries))
    edit(policy_copy / "cache-app.yaml", "memory: 320Mi", "memory: 256Mi")
    damaged = gen("render", policy_copy, "--out", out, "--check", "--format", "json")
    monkeypatch.setenv("GEN_NO_CACHE", "1")
    cache.directory.cache_clear()
    assert damaged == gen("render", policy_copy, "--out", out, "--check", "--format", "json")
    assert damaged.code == 1 and "drift-modified" in damaged.out
