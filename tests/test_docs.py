"""The README is the front door and the guides hold the detail: what they show is what gen
prints, and every gen command they show runs (no usage error, no traceback)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs").glob("*.md"))
FRONT_DOOR_LIMIT = 15_000


def test_the_readme_is_a_front_door() -> None:
    text = README.read_text()
    assert len(text) <= FRONT_DOOR_LIMIT, len(text)
    for guide in ("docs/policies.md", "docs/gitops.md", "docs/gpu.md", "docs/validate-in-ci.md"):
        assert f"({guide})" in text and (ROOT / guide).is_file()


def test_the_tour_prints_what_the_readme_says(gen, tmp_path: Path, monkeypatch) -> None:
    text = README.read_text()
    monkeypatch.chdir(tmp_path)
    assert gen("init", "platform").code == 0
    monkeypatch.chdir(tmp_path / "platform")
    clean = gen("lint", "policies")
    assert clean.code == 0 and re.search(r"`(gen: 5 policy files linted: 0 errors, 0 warnings)`", text)[1] in clean.err
    web = Path("policies/web.yaml")
    web.write_text(web.read_text().replace("\n  ports:\n", "\n  port:\n", 1))
    shown = re.search(r"```\n(policies/web.yaml:.*?)\n```", text, re.S)
    assert shown and gen("lint", "policies").out.strip() == shown[1]


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


DOCUMENTS = [README, *GUIDES]
COMMANDS = [(doc.name, command) for doc in DOCUMENTS for command in _commands(doc)]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory where the documents' commands find what they name: the bundled policies,
    an inventory, a sample, a rendered deploy/."""
    root = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "policies", root / "policies")
    for name in ("nodes.yaml",):
        shutil.copy(ROOT / "tests" / "data" / "together" / name, root / name)
    (root / "sample.json").write_text(
        '{"pod_uid": "0f6b9c1e-2d4a-4b8e-9a51-7c3d2e1f0a9b", "observed_at": "2026-12-02T10:00:00Z",'
        ' "active_requests": 40, "cache_hit_rate": 0.29, "avg_response_time_ms": 99.5}'
    )
    return root


@pytest.mark.parametrize(("document", "command"), COMMANDS, ids=[f"{d}: {c}" for d, c in COMMANDS])
def test_every_command_shown_runs(gen, sandbox: Path, monkeypatch, document: str, command: str) -> None:
    monkeypatch.chdir(sandbox)
    run = gen(*shlex.split(command)[1:])
    assert run.code in (0, 1), f"{document}: {command}\n{run.err}"
    assert "internal error" not in run.err and "Traceback" not in run.err
    assert "Usage:" not in run.err and "No such option" not in run.err


def test_the_documents_show_commands() -> None:
    assert len(COMMANDS) >= 10 and {d for d, _ in COMMANDS} >= {"README.md", "gpu.md", "validate-in-ci.md"}
