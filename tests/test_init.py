"""`gen init` scaffolds a repository that lints, renders and checks cleanly as created."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, tree


@pytest.fixture
def repo(gen, tmp_path: Path) -> Path:
    path = tmp_path / "platform"
    run = gen("init", path)
    assert run.code == 0, run.err
    return path


def test_scaffold_lints_renders_and_checks_clean(gen, repo: Path) -> None:
    lint = gen("lint", "--strict", repo / "policies")
    assert (lint.code, lint.out) == (0, "")
    assert gen("render", repo / "policies", "--out", repo / "deploy").code == 0
    assert gen("render", repo / "policies", "--out", repo / "deploy", "--check").code == 0
    kinds = {yaml.safe_load(p.read_text())["kind"] for p in (repo / "deploy").rglob("*.yaml")}
    assert {"Deployment", "HorizontalPodAutoscaler", "Job", "ConfigMap", "Namespace"} <= kinds


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_scaffold_output_builds_with_kustomize(gen, repo: Path) -> None:
    assert gen("render", repo / "policies", "--out", repo / "deploy").code == 0
    for directory in sorted(p.parent for p in (repo / "deploy").rglob("kustomization.yaml")):
        built = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True, check=False)
        assert built.returncode == 0, built.stderr


def test_modelines_name_the_exported_schemas_and_policies_validate(repo: Path) -> None:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = repo / "schemas"
    registry = Registry().with_resources(
        (p.name, Resource.from_contents(json.loads(p.read_text()))) for p in schemas.glob("*.json")
    )
    policies = sorted((repo / "policies").glob("*.yaml"))
    assert len(policies) >= 5
    for path in policies:
        text = path.read_text()
        modeline = re.match(r"# yaml-language-server: \$schema=(\S+)\n", text)
        assert modeline, path
        schema_path = (path.parent / modeline[1]).resolve()
        assert schema_path.is_file(), schema_path
        doc = yaml.safe_load(text)
        assert schema_path.name == f"{doc['kind'].lower()}.json"
        errors = list(Draft202012Validator(json.loads(schema_path.read_text()), registry=registry).iter_errors(doc))
        assert not errors, (path, [e.message for e in errors])


def test_ci_and_pre_commit_run_the_gates(repo: Path) -> None:
    hooks = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    assert {h["id"] for h in hooks} == {"gen-lint", "gen-check"}
    assert any("render" in h["entry"] and "--check" in h["entry"] for h in hooks)
    workflow = yaml.safe_load((repo / ".github/workflows/gen.yaml").read_text())
    steps = [s.get("run", "") for s in workflow["jobs"]["check"]["steps"]]
    assert any("gen render" in s and "--check" in s for s in steps)


def test_init_never_overwrites(gen, repo: Path) -> None:
    (repo / "policies/web.yaml").write_text("# mine\n")
    before = tree(repo)
    run = gen("init", repo)
    assert run.code == 2 and "never overwrites" in run.err and "policies/web.yaml" in run.err
    assert tree(repo) == before


def test_the_requirement_gen_init_writes_is_one_pip_installs(repo: Path) -> None:
    """Run from a clone, gen init names the clone (a file:// URL): pip resolves it as written."""
    requirement = (repo / "gen-requirements.txt").read_text()
    assert f"gitops-gen @ {ROOT.as_uri()}\n" in requirement and "git+/" not in requirement
    report = repo / "report.json"
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--quiet", "--report", str(report)]
    run = subprocess.run(
        [*pip, "-r", str(repo / "gen-requirements.txt")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    installs = json.loads(report.read_text())["install"]
    assert [(i["metadata"]["name"], i["download_info"]["url"]) for i in installs] == [("gitops-gen", ROOT.as_uri())]


def _clone_with_remote(tmp_path: Path, remote: str, pushed: bool) -> tuple[Path, str]:
    clone = tmp_path / "gen"
    clone.mkdir(parents=True)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["remote", "add", "origin", remote], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run([*git, *args], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    if pushed:  # what a fetch records: the remote has the commit
        subprocess.run([*git, "update-ref", "refs/remotes/origin/main", commit], check=True)
    return clone, commit


@pytest.mark.parametrize(
    ("remote", "url"),
    [
        ("https://git.example.com/platform/gen.git", "https://git.example.com/platform/gen.git"),
        ("git@git.example.com:platform/gen.git", "ssh://git@git.example.com/platform/gen.git"),
    ],
)
def test_a_clone_of_a_remote_is_named_by_its_remote_at_its_commit(tmp_path: Path, remote: str, url: str) -> None:
    from generator.commands.init import _from_clone

    clone, commit = _clone_with_remote(tmp_path, remote, pushed=True)
    assert _from_clone(clone) == f"gitops-gen @ git+{url}@{commit}\n"
    unpushed, _ = _clone_with_remote(tmp_path / "local", remote, pushed=False)  # the remote lacks the commit
    assert _from_clone(unpushed).endswith(f"gitops-gen @ {unpushed.as_uri()}\n")
    local, _ = _clone_with_remote(tmp_path / "path", str(tmp_path / "upstream"), pushed=True)  # a path, not a URL
    assert _from_clone(local).endswith(f"gitops-gen @ {local.as_uri()}\n")


def test_scaffold_gpu_labels_are_the_ones_gpu_nodes_carry(gen, repo: Path, monkeypatch) -> None:
    """GPU Feature Discovery's labels, on the Job and in the inventory gen init writes beside it."""
    assert gen("render", repo / "policies", "--out", repo / "deploy").code == 0
    job = yaml.safe_load((repo / "deploy/production/ml-training/job-training-job.yaml").read_text())
    terms = job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    keys = {e["key"] for term in terms["nodeSelectorTerms"] for e in term["matchExpressions"]}
    assert keys == {"nvidia.com/gpu.product", "nvidia.com/gpu.memory"}
    assert not [p for p in (repo / "deploy").rglob("*.yaml") if "training.example.com" in p.read_text()]
    monkeypatch.chdir(repo)
    run = gen("explain", "gpu", "--nodes", "nodes.yaml", "policies")
    assert (
        run.code == 0
        and "production  training-job  h100-1  yes       1273" in run.out
        and "GPUPacking 80×10" in run.out
    ), run.out + run.err
