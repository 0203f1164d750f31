"""What each command imports: pre-commit runs `gen lint` on every commit, so start-up is a feature.

The reference jsonschema implementation explains failures and is imported only when there is
one; `gen lint` needs no template engine or worker processes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import POLICIES, ROOT, edit

HEAVY = ("jsonschema", "jsonschema_rs", "jinja2", "multiprocessing", "pickle", "pydantic")
SCRIPT = f"""
import json, sys
from generator.cli import main
sys.argv = ["gen", *sys.argv[1:]]
code = main()
print(json.dumps([code, sorted(m for m in {HEAVY!r} if m in sys.modules)]))
"""


def imported(*args: str | Path) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *map(str, args)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, modules


def test_lint_of_a_valid_file_imports_nothing_heavy() -> None:
    # lint renders its policies' targets in memory, as render does (jinja2 imports pickle)
    assert imported("lint", POLICIES / "cache-app.yaml") == (0, ["jinja2", "jsonschema_rs", "pickle"])


def test_an_invalid_policy_brings_in_the_reference_validator_to_explain_it(tmp_path: Path) -> None:
    bad = tmp_path / "cache-app.yaml"
    bad.write_text((POLICIES / "cache-app.yaml").read_text())
    edit(bad, "minReplicas: 3", "minReplicas: three")
    assert imported("lint", bad) == (1, ["jsonschema", "jsonschema_rs"])


def test_render_and_validate_of_valid_input_skip_the_reference_validator(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert imported("render", POLICIES, "--out", out) == (0, ["jinja2", "jsonschema_rs", "pickle"])  # jinja2: pickle
    assert imported("validate", out) == (0, ["jsonschema_rs"])


def test_a_check_of_an_output_that_holds_its_render_renders_nothing(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert imported("render", POLICIES, "--out", out)[0] == 0
    # every target taken whole, every policy from the cache: nothing is rendered or validated
    assert imported("render", POLICIES, "--out", out, "--check") == (0, [])


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["render"],
        ["lint"],
        ["validate"],
        ["schema"],
        ["init"],
        ["cost"],
        ["explain", "gpu"],
        ["explain", "scale-down"],
    ],
    ids=lambda c: " ".join(c) or "gen",
)
def test_help_text_has_no_stray_fragments(gen, monkeypatch, command: list[str]) -> None:
    """Help that reads as written: no sentence ending in " ." where markup ate a bracketed default."""
    monkeypatch.setenv("COLUMNS", "200")
    run = gen(*command, "--help")
    assert run.code == 0
    assert not re.search(r"\w \.(\s|$)", run.out), run.out
