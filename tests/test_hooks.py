"""The pre-commit hook definitions match policy files and not templates, and the pre-commit
examples users copy pass as written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.test_docs import INIT, README, _sh, _shell, _yaml_examples


def test_hook_files_patterns() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"gen-lint", "gen-check", "gen-validate"}
    assert hooks["gen-validate"]["types_or"] == ["yaml", "json"] and "files" not in hooks["gen-validate"]
    for hook in (hooks["gen-lint"], hooks["gen-check"]):
        pattern = re.compile(hook["files"])
        for path in ("policies/scheduler.yaml", "infra/policies/gpu.yml"):
            assert pattern.search(path), path
        for path in ("templates/scheduler/deployment.yaml.j2", "deploy/lab/kustomization.yaml", "README.md"):
            assert not pattern.search(path), path


def _pre_commit(repo: Path, config: object, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    subprocess.run(
        ["git", "add", ".pre-commit-config.yaml"], cwd=repo, env=env, check=True
    )  # pre-commit wants it staged
    pre_commit = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    assert pre_commit, "pre-commit is a test dependency"
    return subprocess.run([pre_commit, "run", "--all-files"], cwd=repo, env=env, capture_output=True, text=True)


def test_the_pre_commit_examples_pass_on_the_tours_repository(tmp_path: Path) -> None:
    """`pre-commit run` as a newcomer's repository gets it: the README's local hooks, gen init's,
    and the guide's hooks from gen's repository, there at this commit (the URL and SHA are the
    guide's placeholders; pre-commit installs gen from it into an environment of its own)."""
    env = {**_shell(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_CONFIG_NOSYSTEM": "1"}
    tour = "gen init platform && cd platform && gen render policies --out deploy && git init -q && git add -A"
    assert _sh(tour + " && git commit -qm first", tmp_path, env).returncode == 0
    repo = tmp_path / "platform"
    examples = [example for path in (README, INIT / ".pre-commit-config.yaml") for example in _yaml_examples(path)]
    assert len(examples) == 2
    for example in examples:
        run = _pre_commit(repo, example, env)
        assert run.returncode == 0 and "Failed" not in run.stdout, run.stdout + run.stderr
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    if commit.returncode != 0:
        pytest.skip("gen's own tree is no git clone: pre-commit has no repository to install the hooks from")
    (remote,) = _yaml_examples(ROOT / "docs" / "validate-in-ci.md")[-1:]
    assert re.fullmatch(r"[0-9a-f]{40}", remote["repos"][0]["rev"])  # a commit, as pre-commit pins one
    remote["repos"][0] |= {"repo": str(ROOT), "rev": commit.stdout.strip()}
    installed = {k: v for k, v in env.items() if k != "PYTHONPATH"}  # the hooks' own gen, not this tree's
    run = _pre_commit(repo, remote, installed)
    assert run.returncode == 0 and run.stdout.count("Passed") == 3, run.stdout + run.stderr
