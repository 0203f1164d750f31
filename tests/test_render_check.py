"""render --check / --diff, ownership, pruning and atomicity through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import POLICIES, edit, tree


def test_check_is_clean_after_render_and_names_drift(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    assert gen("render", policy_copy, "--out", out, "--check").code == 0

    target = out / "lab/deletion-cost-lab/deployment-cache-app.yaml"
    target.write_text(target.read_text() + "# edited\n")
    run = gen("render", policy_copy, "--out", out, "--check")
    assert run.code == 1 and "deployment-cache-app.yaml" in run.out and "modified" in run.out

    assert gen("render", policy_copy, "--out", out).code == 0
    target.unlink()
    run = gen("render", policy_copy, "--out", out, "--check", "--format", "json")
    assert run.code == 1 and "drift-missing" in run.out


def test_hand_written_files_survive_and_are_not_drift(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    mine = out / "lab/notes/README.md"
    mine.parent.mkdir()
    mine.write_text("hand-written\n")
    (out / "lab/extra.yaml").write_text("kind: Mine\n")
    assert gen("render", policy_copy, "--out", out, "--check").code == 0
    (policy_copy / "fresh-replica-service.yaml").unlink()
    assert gen("render", policy_copy, "--out", out).code == 0
    assert mine.read_text() == "hand-written\n"
    assert (out / "lab/extra.yaml").read_text() == "kind: Mine\n"
    assert not (out / "lab/deletion-cost-lab/deployment-fresh-replica-service.yaml").exists()
    assert "deployment-fresh-replica-service.yaml" not in (out / "lab/kustomization.yaml").read_text()
    assert gen("render", policy_copy, "--out", out, "--check").code == 0


def test_stale_owned_file_is_drift(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    (policy_copy / "fresh-replica-service.yaml").unlink()
    run = gen("render", policy_copy, "--out", out, "--check")
    assert run.code == 1 and "stale" in run.out


def test_a_policy_change_rewrites_only_the_files_it_changes(gen, policy_copy: Path, tmp_path: Path) -> None:
    out, fresh = tmp_path / "deploy", tmp_path / "fresh"
    assert gen("render", policy_copy, "--out", out).code == 0
    inodes = {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()}
    deployment = out / "lab/deletion-cost-lab/deployment-fresh-replica-service.yaml"
    chmodded = out / "lab/deletion-cost-lab/deployment-cache-app.yaml"
    chmodded.chmod(0o600)  # same bytes, but not as gen writes it
    edit(policy_copy / "fresh-replica-service.yaml", "replicas: 3", "replicas: 4")

    assert gen("render", policy_copy, "--out", out).code == 0
    rewritten = {p for p, inode in inodes.items() if p.stat().st_ino != inode}
    assert rewritten == {deployment, chmodded, out / "lab/.gen-manifest.json"}
    assert "replicas: 4" in deployment.read_text() and chmodded.stat().st_mode & 0o777 == 0o644
    assert gen("render", policy_copy, "--out", fresh).code == 0
    assert tree(out) == tree(fresh)


def test_a_hand_edited_manifest_cannot_reach_outside_its_directory(gen, policy_copy: Path, tmp_path: Path) -> None:
    import json

    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    manifest = out / "lab/.gen-manifest.json"
    data = json.loads(manifest.read_text())
    for rel in ("../../victim.txt", str(victim), "./../../victim.txt", "", "."):
        data["files"][rel] = "0" * 64
    manifest.write_text(json.dumps(data))
    edit(policy_copy / "fresh-replica-service.yaml", "replicas: 3", "replicas: 4")

    assert "victim" not in gen("render", policy_copy, "--out", out, "--check").out
    assert gen("render", policy_copy, "--out", out).code == 0
    assert victim.read_text() == "keep\n"
    assert gen("render", policy_copy, "--out", out, "--check").code == 0


def test_an_unreadable_output_file_is_a_gen_error(gen, policy_copy: Path, tmp_path: Path, monkeypatch) -> None:
    import errno
    import os

    import pytest

    from generator.errors import GeneratorError
    from generator.render import write

    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    real_open = os.open

    def denied(path: str, *args: object) -> int:
        if str(path).endswith("deployment-cache-app.yaml"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args)

    monkeypatch.setattr(write.os, "open", denied)
    with pytest.raises(GeneratorError, match=r"cannot read .*deployment-cache-app\.yaml: Permission denied"):
        write.drift(out / "lab", {"deletion-cost-lab/deployment-cache-app.yaml": b""})


def test_collision_with_hand_written_file_is_an_error(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    (out / "lab/deletion-cost-lab").mkdir(parents=True)
    mine = out / "lab/deletion-cost-lab/deployment-cache-app.yaml"
    mine.write_text("mine\n")
    run = gen("render", policy_copy, "--out", out)
    assert run.code == 2 and "deployment-cache-app.yaml" in run.err
    assert mine.read_text() == "mine\n"


def test_invalid_policy_leaves_output_untouched(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    before = tree(out)
    edit(policy_copy / "cache-app.yaml", "minReplicas: 3", "minReplicas: 30")
    run = gen("render", policy_copy, "--out", out)
    assert run.code == 1 and "hpa-min-max" in run.err and "cache-app.yaml" in run.err
    assert tree(out) == before


def test_a_render_failing_its_policy_checks_creates_nothing(gen, policy_copy: Path, tmp_path: Path) -> None:
    edit(policy_copy / "cache-app.yaml", "minReplicas: 3", "minReplicas: three")
    assert gen("render", policy_copy, "--out", tmp_path / "new" / "deploy").code == 1
    assert not (tmp_path / "new").exists()


def test_diff_writes_nothing(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    before = tree(out)
    clean = gen("render", policy_copy, "--out", out, "--diff")
    assert clean.code == 0 and clean.out == ""  # nothing to change: exit 0, like diff
    edit(policy_copy / "data-processor.yaml", "replicas: 5", "replicas: 6")
    run = gen("render", policy_copy, "--out", out, "--diff")
    assert run.code == 1 and "-  replicas: 5" in run.out and "+  replicas: 6" in run.out  # differences: exit 1
    assert tree(out) == before


@pytest.mark.parametrize("kind", ["file", "symlink-to-file", "symlink-to-directory", "dangling-symlink"])
def test_out_naming_anything_but_a_directory_is_a_usage_error(gen, tmp_path: Path, kind: str) -> None:
    """The user's file keeps its bytes: nothing is moved aside, nothing is created beside it."""
    precious = tmp_path / "notes.txt"
    precious.write_bytes(b"my notes\n")
    (tmp_path / "dir").mkdir()
    out = tmp_path / "out"
    if kind == "file":
        out = precious
    else:
        out.symlink_to(
            {"symlink-to-file": precious, "symlink-to-directory": tmp_path / "dir"}.get(kind, tmp_path / "gone")
        )
    before = sorted(p.name for p in tmp_path.iterdir())
    for mode in ((), ("--check",), ("--diff",)):
        run = gen("render", POLICIES, "--out", out, *mode)
        assert run.code == 2 and "--out" in run.err and "PosixPath" not in run.err, run.err
    assert precious.read_bytes() == b"my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not any((tmp_path / "dir").iterdir())


def test_an_out_directory_gen_may_not_write_is_an_error_that_changes_nothing(gen, tmp_path: Path, monkeypatch) -> None:
    """A read-only file system or directory: the write fails as the kernel says, nothing changes."""
    import os

    out = tmp_path / "deploy"
    assert gen("render", POLICIES, "--out", out).code == 0
    before = tree(out)
    real_mkdir = Path.mkdir

    def read_only(self: Path, *args, **kwargs) -> None:
        if tmp_path in self.parents:
            raise PermissionError(13, os.strerror(13), str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    run = gen("render", POLICIES.parent / "examples" / "whole-stack" / "policies", "--out", out)
    assert run.code == 2 and "could not write" in run.err and "previous output is unchanged" in run.err, run.err
    assert tree(out) == before


def test_failed_swap_keeps_previous_output(gen, policy_copy: Path, tmp_path: Path, monkeypatch) -> None:
    from generator.render import write

    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    before = tree(out)
    edit(policy_copy / "data-processor.yaml", "replicas: 5", "replicas: 6")

    def broken(a: Path, b: Path) -> bool:
        raise OSError(5, "injected failure")

    monkeypatch.setattr(write, "_exchange", broken)
    run = gen("render", policy_copy, "--out", out)
    assert run.code == 2
    assert tree(out) == before
    assert not list(out.parent.glob(".gen-staging-*"))


def test_staged_files_are_flushed_before_the_swap(gen, policy_copy: Path, tmp_path: Path, monkeypatch) -> None:
    """One syncfs of the staging tree's filesystem; where there is none, an fsync per file."""
    import ctypes
    import errno
    import os

    from generator.render import write

    flushed: list[str] = []

    def fake_syncfs(fd: int) -> int:
        flushed.append(os.readlink(f"/proc/self/fd/{fd}"))
        return 0

    monkeypatch.setattr(write, "_syncfs", lambda: fake_syncfs)
    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    assert len(flushed) == 1 and ".gen-staging-" in flushed[0]
    expected = tree(out)

    fsynced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(write, "_syncfs", lambda: None)
    monkeypatch.setattr(write.os, "fsync", lambda fd: (fsynced.append(fd), real_fsync(fd))[1])
    other = tmp_path / "other"
    assert gen("render", policy_copy, "--out", other).code == 0
    assert tree(other) == expected and len(fsynced) == len(expected)

    def failing_syncfs(fd: int) -> int:
        ctypes.set_errno(errno.EIO)
        return -1

    monkeypatch.setattr(write, "_syncfs", lambda: failing_syncfs)
    edit(policy_copy / "data-processor.yaml", "replicas: 5", "replicas: 6")
    run = gen("render", policy_copy, "--out", out)
    assert run.code == 2 and "gen: error: could not write" in run.err and "internal error" not in run.err
    assert tree(out) == expected
    assert not list(out.parent.glob(".gen-staging-*"))


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o000])
def test_output_files_are_0644_whatever_the_umask(gen, policy_copy: Path, tmp_path: Path, umask: int) -> None:
    """gen decides its files' mode (and finds them unchanged by it): reviewers and Argo CD read them."""
    import os

    previous = os.umask(umask)
    try:
        assert gen("render", policy_copy, "--out", tmp_path / "deploy").code == 0
    finally:
        os.umask(previous)
    modes = {p.stat().st_mode & 0o777 for p in (tmp_path / "deploy").rglob("*") if p.is_file()}
    assert modes == {0o644}


def test_render_only_one_target(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    run = gen("render", policy_copy, "--out", out, "--target", "nope")
    assert run.code == 2 and "unknown target" in run.err
    assert gen("render", policy_copy, "--out", out, "--target", "lab").code == 0
    assert (out / "lab/kustomization.yaml").is_file()


def test_bundled_policies_validate_against_exported_schemas(gen, tmp_path: Path) -> None:
    import json

    import yaml
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    from tests.conftest import POLICIES

    assert gen("schema", "--out", tmp_path / "schemas").code == 0
    registry = Registry().with_resources(
        (p.name, Resource.from_contents(json.loads(p.read_text()))) for p in (tmp_path / "schemas").glob("*.json")
    )
    for path in sorted(POLICIES.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        schema = json.loads((tmp_path / "schemas" / f"{doc['kind'].lower()}.json").read_text())
        errors = list(Draft202012Validator(schema, registry=registry).iter_errors(doc))
        assert not errors, (path, [e.message for e in errors])


SECOND_TARGET = """\
apiVersion: gen/v1alpha1
kind: Target
metadata:
  name: staging
spec:
  kubernetesVersion: "1.34"
  gitops:
    path: deploy/staging
    flux:
      sourceRef:
        name: platform
"""


def test_removed_target_is_pruned_but_hand_written_files_stay(gen, policy_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    (policy_copy / "staging.yaml").write_text(SECOND_TARGET)
    assert gen("render", policy_copy, "--out", out).code == 0
    assert (out / "staging/kustomization.yaml").is_file() and (out / "_gitops/staging").is_dir()
    (out / "staging/NOTES.md").write_text("hand-written\n")
    (policy_copy / "staging.yaml").unlink()

    check = gen("render", policy_copy, "--out", out, "--check")
    assert check.code == 1
    assert "staging/kustomization.yaml" in check.out and "drift-stale" in check.out
    assert "_gitops/staging/" in check.out
    diff = gen("render", policy_copy, "--out", out, "--diff")
    assert "+++ /dev/null" in diff.out and "staging/kustomization.yaml" in diff.out

    only_lab = gen("render", policy_copy, "--out", out, "--target", "lab")
    assert only_lab.code == 0 and (out / "staging/kustomization.yaml").is_file()  # a subset prunes nothing

    assert gen("render", policy_copy, "--out", out).code == 0
    assert sorted(p.name for p in (out / "staging").iterdir()) == ["NOTES.md"]
    assert not (out / "_gitops/staging").exists()
    assert gen("render", policy_copy, "--out", out, "--check").code == 0
    assert (out / "lab/kustomization.yaml").is_file()


@pytest.mark.parametrize("workers", ["2", "8"])  # 2: a target per process; 8: more CPUs than targets,
# so each target's policies and objects are spread over the processes
def test_parallel_render_is_byte_identical_to_serial(
    policy_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    import sys

    from generator import cache, parallel, pipeline

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from synthetic import make_repo

    policies = make_repo(tmp_path / "repo", 40)
    for path in policy_copy.glob("*.yaml"):
        if "target" not in path.name:
            (policies / path.name).write_text(
                path.read_text().replace("metadata:\n", "metadata:\n  labels:\n    cluster: cluster-0\n", 1)
            )

    def plans() -> list[tuple[str, dict[str, bytes]]]:
        result = pipeline.render(pipeline.RenderOptions(policies, tmp_path / "deploy"))
        assert not [p for p in result.problems if p.severity >= 2], result.problems
        return [(p.reldir, p.files) for p in result.plans]

    monkeypatch.setenv("GEN_WORKERS", "1")
    serial = plans()  # and each target's render kept for the next run
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
    monkeypatch.setenv("GEN_WORKERS", workers)
    assert parallel.workers(10) == int(workers)
    assert plans() == serial  # everything reused from the serial run
    monkeypatch.setenv("GEN_NO_CACHE", "1")
    cache.directory.cache_clear()
    assert plans() == serial  # everything rendered and judged in the workers
    cache.directory.cache_clear()


def test_check_json_is_one_report_with_warnings_and_drift(gen, policy_copy: Path, tmp_path: Path) -> None:
    import json

    gpu = policy_copy / "gpu-reservation-demo.yaml"
    edit(gpu, "    models: [A100]\n    minMemoryMiB: 40960\n", "")
    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    clean = gen("render", policy_copy, "--out", out, "--check", "--format", "json")
    assert clean.code == 0 and [p["rule"] for p in json.loads(clean.out)] == ["gpu-no-affinity"]
    (out / "lab/kustomization.yaml").write_text("edited\n")
    drifted = gen("render", policy_copy, "--out", out, "--check", "--format", "json")
    assert drifted.code == 1
    assert sorted(p["rule"] for p in json.loads(drifted.out)) == ["drift-modified", "gpu-no-affinity"]
    assert gen("render", policy_copy, "--out", out, "--check", "--strict").code == 1


def test_a_plans_digests_follow_its_files() -> None:
    import hashlib

    from generator.layout import MANIFEST_FILE
    from generator.render.write import DirPlan

    def listed(plan: DirPlan) -> dict[str, str]:
        files: dict[str, str] = json.loads(plan.with_manifest()[MANIFEST_FILE])["files"]
        return files

    plan = DirPlan("lab", {"b.yaml": b"b\n", "a.yaml": b"a\n"})
    assert plan.digests() == {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(plan.files.items())}
    assert list(plan.digests()) == ["a.yaml", "b.yaml"] and listed(plan) == plan.digests()
    plan.files["a.yaml"] = b"changed\n"  # a file replaced after it was hashed is hashed again
    plan.files["c.yaml"] = b"c\n"
    assert plan.digests()["a.yaml"] == hashlib.sha256(b"changed\n").hexdigest()
    assert set(plan.digests()) == {"a.yaml", "b.yaml", "c.yaml"}
    assert listed(plan) == plan.digests()  # and so is the manifest


def test_check_reads_again_a_file_changed_since_it_was_vouched_for(
    gen, policy_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files a check found as rendered are known by their stat next time; an edit that keeps
    the size and puts the modification time back still changes the change time."""
    from generator import cache
    from tests.test_cache import _same_size_edit

    monkeypatch.setattr(cache, "SETTLED_NS", 0)
    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    assert gen("render", policy_copy, "--out", out, "--check").code == 0  # reads and vouches
    assert gen("render", policy_copy, "--out", out, "--check").code == 0  # by stat
    target = out / "lab/deletion-cost-lab/deployment-cache-app.yaml"
    text = target.read_bytes()
    _same_size_edit(target, text.replace(b"cache-app", b"cache-apq", 1))
    run = gen("render", policy_copy, "--out", out, "--check")
    assert run.code == 1 and "deployment-cache-app.yaml" in run.out and "modified" in run.out


def _hand_edit(out: Path, how: str) -> None:
    directory = out / "lab"
    deployment = directory / "deletion-cost-lab/deployment-cache-app.yaml"
    if how == "modified":
        deployment.write_text(deployment.read_text() + "# edited\n")
    elif how == "missing":
        deployment.unlink()
    elif how == "a directory":
        deployment.unlink()
        deployment.mkdir()
    elif how == "a symlink":
        deployment.unlink()
        deployment.symlink_to(directory / "kustomization.yaml")
    elif how == "stale":
        manifest = json.loads((directory / ".gen-manifest.json").read_text())
        manifest["files"]["deletion-cost-lab/old.yaml"] = "0" * 64
        (directory / ".gen-manifest.json").write_text(json.dumps(manifest))
        (directory / "deletion-cost-lab/old.yaml").write_text("kind: Old\n")
    elif how == "manifest gone":
        (directory / ".gen-manifest.json").unlink()
    elif how == "a target gone, its manifest a symlink":
        (out / "gone").mkdir()
        (out / "gone/.gen-manifest.json").symlink_to(directory / ".gen-manifest.json")


@pytest.mark.parametrize(
    "how",
    [
        "unchanged",
        "modified",
        "missing",
        "a directory",
        "a symlink",
        "stale",
        "manifest gone",
        "a target gone, its manifest a symlink",
    ],
)
def test_drift_from_a_survey_of_out_is_drift_read_file_by_file(
    gen, policy_copy: Path, tmp_path: Path, how: str
) -> None:
    """A check surveys out while its render goes on; what it finds must be what reading each
    file after the render finds."""
    from generator import pipeline
    from generator.render import write

    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    _hand_edit(out, how)
    surveyed = write.survey(out)
    rendered = pipeline.render(pipeline.RenderOptions(policy_copy, out)).plans
    plans = rendered + write.removals(out, rendered)
    assert set(surveyed) == {plan.reldir for plan in plans} - ({"lab"} if how == "manifest gone" else set())
    for plan in plans:
        if plan.reldir in surveyed:
            directory = write.safe_dir(out, plan.reldir)
            wanted, digests = plan.wanted()
            direct = write.drift(directory, wanted, digests)
            assert write.drift(directory, wanted, digests, now=surveyed[plan.reldir]) == direct
    assert (gen("render", policy_copy, "--out", out, "--check").code == 0) == (how == "unchanged")


def test_a_damaged_manifest_is_reported_by_the_check_not_by_the_survey(gen, policy_copy: Path, tmp_path: Path) -> None:
    from generator.render import write

    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    (out / "elsewhere").mkdir()
    (out / "elsewhere/.gen-manifest.json").write_text("{not json")
    assert "elsewhere" not in write.survey(out) and "lab" in write.survey(out)
    run = gen("render", policy_copy, "--out", out, "--check")
    assert run.code == 2 and "elsewhere/.gen-manifest.json is not a gen manifest" in run.err
    (out / "lab/.gen-manifest.json").write_text("[]")
    run = gen("render", policy_copy, "--out", out, "--check")
    assert run.code == 2 and "lab/.gen-manifest.json is not a gen manifest" in run.err


def test_the_directories_gen_owns_are_those_holding_its_manifest(tmp_path: Path) -> None:
    from generator.layout import MANIFEST_FILE
    from generator.render import write

    out = tmp_path / "deploy"
    for owned in ("prod", "gitops/prod", "gitops/staging", "team/a/b", "prod/nested"):
        (out / owned).mkdir(parents=True, exist_ok=True)
        (out / owned / MANIFEST_FILE).write_text("{}")
    (out / "notes").mkdir()
    (out / "notes/README.md").write_text("mine\n")
    (out / f"{write.STAGING_PREFIX}x").mkdir()
    (out / f"{write.STAGING_PREFIX}x" / MANIFEST_FILE).write_text("{}")
    (out / "linked").symlink_to(out / "prod")
    (out / "team/a/c").mkdir()
    (out / "team/a/c" / MANIFEST_FILE).symlink_to(out / "prod" / MANIFEST_FILE)
    assert write.owned_directories(out) == ["gitops/prod", "gitops/staging", "prod", "team/a/b", "team/a/c"]
    assert write.owned_directories(tmp_path / "none") == []


def test_a_check_surveys_out_in_a_process_of_its_own_only_where_out_is_large(
    gen, policy_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator import parallel
    from generator.render import write

    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    monkeypatch.setenv("GEN_WORKERS", "2")
    amounts: list[int] = []

    class Recorded(parallel.Beside):  # type: ignore[type-arg]
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            amounts.append(args[2])

    monkeypatch.setattr(write.parallel, "Beside", Recorded)
    assert gen("render", policy_copy, "--out", out, "--check").code == 0
    files = len(json.loads((out / "lab/.gen-manifest.json").read_text())["files"])
    assert files < amounts[0] * 2 and amounts[0] < files * 2 and parallel.workers(amounts[0]) == 1


def test_a_survey_in_a_process_of_its_own_finds_what_one_here_finds(
    gen, policy_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The survey's own process (forced here by counting every manifest byte as a file) sends
    back what the check then compares: clean, then drift, reported alike."""
    from generator.render import write

    out = tmp_path / "deploy"
    assert gen("render", policy_copy, "--out", out).code == 0
    reports = []
    for forked in (False, True):
        monkeypatch.setenv("GEN_WORKERS", "2")
        monkeypatch.setattr(write, "_MANIFEST_LINE_BYTES", 1 if forked else 1 << 30)
        clean = gen("render", policy_copy, "--out", out, "--check")
        _hand_edit(out, "modified")
        drifted = gen("render", policy_copy, "--out", out, "--check", "--format", "json")
        assert gen("render", policy_copy, "--out", out).code == 0
        reports.append((clean.code, drifted.code, json.loads(drifted.out)))
    assert reports[0] == reports[1] and reports[0][:2] == (0, 1)
    assert {p["rule"] for p in reports[0][2]} >= {"drift-modified"}
