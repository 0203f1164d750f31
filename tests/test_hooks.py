"""The pre-commit hook definitions match policy files and not templates."""

from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT


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
