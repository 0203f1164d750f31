"""What each command imports: pre-commit runs `gen lint` on every commit, so start-up is a feature.

The reference jsonschema implementation explains failures and is imported only when there is
one; `gen lint` needs no template engine or worker processes. typer parses the command line and
only the command line imports it; its help and errors are plain, so rich is never imported,
and it builds only the command named. What only writing an output, a CronJob's time zone or a
policy's patches needs is imported by them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup
from typer.main import get_command

from generator.cli import app
from tests.conftest import POLICIES, ROOT, edit

HEAVY = ("jsonschema", "jsonschema_rs", "jinja2", "multiprocessing", "pickle", "pydantic", "rich")
# What only writing an output, a CronJob's timeZone or a policy's patches use
WRITING = ("concurrent.futures", "ctypes", "jsonpatch", "zoneinfo")
SCRIPT = """
import json, sys
from generator.cli import main
watched = json.loads(sys.argv.pop(1))
sys.argv = ["gen", *sys.argv[1:]]
code = main()
print(json.dumps([code, sorted(m for m in watched if m in sys.modules)]))
"""


def imported(*args: str | Path, watched: tuple[str, ...] = HEAVY) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(watched), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, modules


def test_lint_of_a_valid_file_imports_nothing_heavy() -> None:
    # lint renders its policies' targets in memory, as render does (jinja2 imports pickle)
    assert imported("lint", POLICIES / "cache-app.yaml") == (0, ["jinja2", "jsonschema_rs", "pickle"])


def test_lint_leaves_out_what_only_writing_a_time_zone_or_a_patch_needs(tmp_path: Path) -> None:
    assert imported("lint", POLICIES / "cache-app.yaml", watched=WRITING) == (0, [])
    # the same modules, once a render writes its output
    assert imported("render", POLICIES, "--out", tmp_path / "deploy", watched=WRITING) == (
        0,
        ["concurrent.futures", "ctypes"],
    )


def test_a_command_line_builds_only_the_command_it_names() -> None:
    group = get_command(app)
    assert isinstance(group, TyperGroup)
    listed = ["render", "plan", "lint", "validate", "schema", "init", "cost", "explain"]
    assert list(group.commands) == listed  # as registered: the order help lists them in
    assert group.get_command(typer.Context(group), "lint") is not None
    assert list(group.commands.built) == ["explain", "lint"]  # type: ignore[attr-defined]
    assert group.get_command(typer.Context(group), "lnt") is None


def test_an_invalid_policy_brings_in_the_reference_validator_to_explain_it(tmp_path: Path) -> None:
    bad = tmp_path / "cache-app.yaml"
    bad.write_text((POLICIES / "cache-app.yaml").read_text())
    edit(bad, "minReplicas: 3", "minReplicas: three")
    assert imported("lint", bad) == (1, ["jsonschema", "jsonschema_rs"])


def test_render_and_validate_of_valid_input_skip_the_reference_validator(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert imported("render", POLICIES, "--out", out) == (0, ["jinja2", "jsonschema_rs", "pickle"])  # jinja2: pickle
    assert imported("validate", out) == (0, ["jsonschema_rs"])
    # gen's own kustomizations only list files: judged as written, with no build and no build threads
    assert imported("validate", out, watched=WRITING) == (0, [])


def test_a_check_of_an_output_that_holds_its_render_renders_nothing(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    assert imported("render", POLICIES, "--out", out)[0] == 0
    # every target taken whole, every policy from the cache: nothing is rendered or validated
    assert imported("render", POLICIES, "--out", out, "--check") == (0, [])


@pytest.mark.parametrize("args", [["--help"], ["render", "--help"], ["render", "--tagret"], []], ids=" ".join)
def test_help_and_usage_errors_are_plain_text_without_rich(args: list[str]) -> None:
    assert imported(*args) == (0 if "--help" in args else 2, [])


def test_typer_is_imported_by_the_command_line_alone() -> None:
    everything_else = """
import importlib, json, pkgutil, sys
import generator
names = [module.name for module in pkgutil.walk_packages(generator.__path__, "generator.")]
for name in names:
    if name not in ("generator.cli", "generator.__main__"):
        importlib.import_module(name)
print(json.dumps([names, sorted(name for name in sys.modules if name == "generator.cli" or name.startswith("typer"))]))
"""
    done = subprocess.run([sys.executable, "-c", everything_else], capture_output=True, text=True, cwd=ROOT, check=True)
    names, typer_modules = json.loads(done.stdout)
    sources = {".".join(path.relative_to(ROOT).with_suffix("").parts) for path in (ROOT / "generator").rglob("*.py")}
    assert set(names) == {name.removesuffix(".__init__") for name in sources} - {"generator"}  # every module
    assert typer_modules == []
    with_cli = subprocess.run(
        [sys.executable, "-c", "import sys, generator.cli; print('typer' in sys.modules)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert with_cli.stdout == "True\n"


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
