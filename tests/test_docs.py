"""The README is the front door and the guides hold the detail: what they show is what gen
prints, and every gen command they show runs (no usage error, no traceback)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs").glob("*.md"))
FRONT_DOOR_LIMIT = 15_000


def test_the_readme_is_a_front_door() -> None:
    text = README.read_text()
    assert len(text) <= FRONT_DOOR_LIMIT, len(text)
    for guide in ("docs/policies.md", "docs/gitops.md", "docs/gpu.md", "docs/validate-in-ci.md"):
        assert f"({guide})" in text and (ROOT / guide).is_file()


def _shell(tmp_path: Path) -> dict[str, str]:
    """The environment a newcomer's shell has: a `gen` on PATH (this tree's, as `pip install .`
    gives it) and a git that can commit."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gen").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m generator "$@"\n')
    (bin_dir / "gen").chmod(0o755)
    who = {
        f"GIT_{role}_{key}": value
        for role in ("AUTHOR", "COMMITTER")
        for key, value in (("NAME", "t"), ("EMAIL", "t@example.com"))
    }
    return {
        **os.environ,
        **who,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def _sh(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _shown(text: str, command: str) -> str:
    """What the document prints under `$ command`."""
    found = re.search(rf"```\n\$ {re.escape(command)}\n(.*?)\n```", text, re.S)
    assert found, command
    return found[1]


def test_the_tour_runs_and_prints_what_the_readme_says(tmp_path: Path) -> None:
    """The tour as a newcomer types it, in a new directory: each block's commands as printed,
    each listing what gen prints there."""
    text, env = README.read_text(), _shell(tmp_path)
    tour = re.search(r"## A five-minute tour\n\n```sh\n(.*?)```", text, re.S)
    assert tour
    run = _sh(tour[1], tmp_path, env)
    summary = re.search(r"`(gen: 5 policy files linted: 0 errors, 0 warnings)`", text)
    assert run.returncode == 0 and summary and summary[1] in run.stderr, run.stderr
    platform = tmp_path / "platform"
    web, job = platform / "policies/web.yaml", platform / "policies/training-job.yaml"
    web.write_text(web.read_text().replace("\n  ports:\n", "\n  port:\n", 1))  # the mistake the README shows
    mistake = re.search(r"```\n(policies/web.yaml:.*?)\n```", text, re.S)
    assert mistake and _sh("gen lint policies", platform, env).stdout.strip() == mistake[1]
    assert _sh("git checkout -q policies", platform, env).returncode == 0
    assert "`v1` to `v2` in\n`policies/web.yaml` and `policies/training-job.yaml`" in text  # the edit the plan shows
    for policy in (web, job):
        policy.write_text(policy.read_text().replace(":v1\n", ":v2\n"))
    plan = _sh("gen plan policies --out deploy", platform, env)
    assert plan.returncode == 1 and plan.stdout.strip() == _shown(text, "gen plan policies --out deploy")
    assert _sh("gen render policies --out deploy", platform, env).stderr.endswith(
        re.search(r"\(`(gen: production: .*? — gen plan for details)`\)", text)[1] + "\n"
    )
    gpu = _sh("gen explain gpu --nodes nodes.yaml policies", platform, env)
    assert gpu.returncode == 0 and gpu.stdout == _shown(text, "gen explain gpu --nodes nodes.yaml policies") + "\n"


_SUBCOMMANDS = ("render", "lint", "plan", "validate", "explain", "cost", "init", "schema")


def _commands(path: Path) -> list[str]:
    """Every `gen …` line of a shell or plain fenced block (`$ gen …` in an output listing),
    comments cut."""
    found, fence = [], None
    for raw in path.read_text().splitlines():
        if raw.startswith("```"):
            fence = None if fence is not None else raw[3:].strip()
            continue
        if fence not in ("", "sh", "bash"):
            continue
        for part in raw.removeprefix("$ ").split("  #")[0].split("&&"):
            words = part.split()
            if (
                words[:1] == ["gen"]
                and words[1:2]
                and words[1] in _SUBCOMMANDS
                and "…" not in part
                and "=" not in words
            ):
                found.append(part.strip())
    return found


INIT = ROOT / "templates" / "init"
DOCUMENTS = [README, *GUIDES, INIT / "README.md"]  # the last: the README of the repository gen init makes
COMMANDS = [(doc.relative_to(ROOT).as_posix(), command) for doc in DOCUMENTS for command in _commands(doc)]


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _shell(tmp_path_factory.mktemp("shell"))


def _kubectl_list(items: list[dict[str, object]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}})


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory, shell: dict[str, str]) -> Path:
    """A fresh `gen init` directory, as a newcomer has it, and what the documents say comes from
    elsewhere: kubectl's nodes and pods, a metrics sample, the files and CRDs a guide shows."""
    root = tmp_path_factory.mktemp("docs")
    assert _sh("gen init .", root, shell).returncode == 0
    inventory = yaml.safe_load((root / "nodes.yaml").read_text())
    nodes = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n["name"], "labels": n["labels"]}}
        | {"status": {"allocatable": {k: str(v) for k, v in n["allocatable"].items()}}}
        for n in inventory
    ]
    (root / "nodes.json").write_text(_kubectl_list(nodes))
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"web-7d9f-{i}",
                "namespace": "web",
                "uid": f"uid-{i}",
                "labels": {"app": "web", "pod-template-hash": "7d9f"},
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f", "controller": True}
                ],
                "creationTimestamp": "2026-11-01T10:00:00Z",
            },
            "spec": {"nodeName": node["name"], "containers": [{"name": "web", "image": "r/web:1"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
        }
        for i, node in enumerate([*inventory, inventory[0]])
    ]
    (root / "pods.json").write_text(_kubectl_list(pods))
    (root / "sample.json").write_text(
        '{"pod_uid": "0f6b9c1e-2d4a-4b8e-9a51-7c3d2e1f0a9b", "observed_at": "2026-12-02T10:00:00Z",'
        ' "active_requests": 40, "cache_hit_rate": 0.29, "avg_response_time_ms": 99.5}'
    )
    flavors = re.search(
        r"```yaml\n(# queues/flavors.yaml\n.*?)```", (ROOT / "docs/validate-in-ci.md").read_text(), re.S
    )
    assert flavors
    (root / "queues").mkdir()
    (root / "queues/flavors.yaml").write_text(flavors[1])
    (root / "vendor/kueue/crds").mkdir(parents=True)
    shutil.copy(ROOT / "tests/realworld/crds/kueue/resourceflavors.yaml", root / "vendor/kueue/crds")
    return root


@pytest.mark.parametrize(("document", "command"), COMMANDS, ids=[f"{d}: {c}" for d, c in COMMANDS])
def test_every_command_shown_runs(sandbox: Path, shell: dict[str, str], document: str, command: str) -> None:
    """As printed, in a fresh `gen init` directory: no usage error, no traceback, no input it
    names missing."""
    run = _sh(command, sandbox, shell)
    assert run.returncode in (0, 1), f"{document}: {command}\n{run.stderr}"
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr
    assert "usage:" not in run.stderr.lower() and "unrecognized arguments" not in run.stderr
    for missing in ("input-unreadable", "file-missing", "No such file"):
        assert missing not in run.stdout + run.stderr, f"{document}: {command}\n{run.stdout}{run.stderr}"


def test_the_documents_show_commands() -> None:
    documents = {d for d, _ in COMMANDS}
    assert len(COMMANDS) >= 10 and documents >= {
        "README.md",
        "docs/gpu.md",
        "docs/validate-in-ci.md",
        "templates/init/README.md",
    }


EXAMPLES = [*DOCUMENTS, INIT / ".github/workflows/gen.yaml", INIT / ".pre-commit-config.yaml"]


_CI_OR_HOOKS = re.compile(r"^\s*(?:- )?(?:run|script|repos):", re.M)


def _yaml_examples(path: Path) -> list[object]:
    """The CI and pre-commit configuration a document shows (a YAML file is one example); each
    must parse, as the tool reading it would."""
    text = path.read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S) if path.suffix == ".md" else [text]
    return [yaml.safe_load(block) for block in blocks if _CI_OR_HOOKS.search(block)]


def _ci_lines(example: object) -> list[str]:
    """The shell lines a CI example runs: GitHub Actions `run:` steps, GitLab CI `script:` lines."""
    if isinstance(example, list):
        return [line for item in example for line in _ci_lines(item)]
    if not isinstance(example, dict):
        return []
    own = [example["run"]] if isinstance(example.get("run"), str) else []
    own += [line for line in example.get("script") or [] if isinstance(line, str)]
    return own + [line for key, value in example.items() if key not in ("run", "script") for line in _ci_lines(value)]


CI_LINES = sorted({(p.name, line) for p in EXAMPLES for example in _yaml_examples(p) for line in _ci_lines(example)})


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory, shell: dict[str, str]) -> Path:
    """The repository a newcomer has after the tour: gen init, a render, a commit."""
    root = tmp_path_factory.mktemp("ci")
    tour = "gen init . && gen render policies --out deploy && git init -q && git add -A && git commit -qm first"
    assert _sh(tour, root, shell).returncode == 0
    return root


@pytest.mark.parametrize(("document", "line"), CI_LINES, ids=[f"{d}: {c}" for d, c in CI_LINES])
def test_every_ci_step_runs_as_written(committed: Path, shell: dict[str, str], document: str, line: str) -> None:
    """In the tour's repository, each step passes; pip only resolves what it would install (the
    tests' own environment stays as it is)."""
    if line.startswith("pip install "):
        line = line.replace("pip install ", f'"{sys.executable}" -m pip install --dry-run --no-deps --quiet ', 1)
    run = _sh(line, committed, shell)
    assert run.returncode == 0, f"{document}: {line}\n{run.stdout}{run.stderr}"


def test_the_ci_examples_are_found() -> None:
    lines = {line for _, line in CI_LINES}
    assert "pip install -r gen-requirements.txt" in lines and not [line for line in lines if "gitops-gen" in line]
    assert {"gen validate --format sarif --output gen.sarif", "gen render --check --format github"} <= lines
