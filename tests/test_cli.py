"""The command line as users meet it when they get it wrong: exit 2, the command's own usage,
and a message that names what to fix; never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import POLICIES


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["render", "--tagret", "prod"], "gen render: error: unrecognized arguments: --tagret"),
        (["lint", "--format", "xml"], "gen lint: error: argument --format: invalid choice: 'xml'"),
        (["plan", "--format", "sarif"], "gen plan: error: argument --format: invalid choice: 'sarif'"),
        (["explain", "gpu"], "gen explain gpu: error: the following arguments are required: --nodes"),
        (
            ["explain", "scale-down", "--pods", "p.json", "--deployment", "web", "--to", "two"],
            "gen explain scale-down: error: argument --to: invalid int value: 'two'",
        ),
        (["cost", "--sample", "s.json", "--apply"], "gen: --apply needs --pod NAMESPACE/NAME"),
        (["rendr"], "gen: error: argument COMMAND: invalid choice: 'rendr'"),
        (
            ["render", "policies", "deploy"],
            "arguments: deploy (one POLICY_DIR only; the output directory goes after --out)",
        ),
        (
            ["explain", "gpu", "--nodes", "n.yaml", "a", "b"],
            "gen explain gpu: error: unrecognized arguments: b (one POLICY_DIR only)",
        ),
    ],
    ids=lambda x: " ".join(x) if isinstance(x, list) else "",
)
def test_a_usage_error_exits_2_naming_the_command_and_what_is_wrong(gen, args: list[str], said: str) -> None:
    run = gen(*args)
    assert run.code == 2 and said in run.err and "Traceback" not in run.err, run.err


@pytest.mark.parametrize("args", [[], ["explain"], ["--no-cache"]], ids=lambda a: " ".join(a) or "gen")
def test_no_command_shows_what_there_is_and_exits_2(gen, args: list[str]) -> None:
    run = gen(*args)
    assert run.code == 2 and "usage: gen" in run.err
    assert ("gpu" in run.err and "scale-down" in run.err) if args == ["explain"] else "render" in run.err


def test_options_go_before_or_after_the_paths_and_repeat(gen, tmp_path: Path, cache_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GEN_NO_CACHE", "")  # --no-cache sets it for the process; put back after
    out = tmp_path / "deploy"
    assert gen("--no-cache", "render", "--out", out, POLICIES, "--target", "lab").code == 0
    assert gen("render", POLICIES, "--check", "--out", out, "--target", "lab").code == 0
    both = gen("render", POLICIES, "--out", out, "--target", "lab", "--target", "prod")
    assert both.code == 2 and "unknown target(s): prod; known: lab" in both.err


def test_help_shows_each_default_that_is_a_value(gen) -> None:
    run = gen("render", "--help")
    assert run.code == 0
    assert "Output directory. (default: deploy)" in " ".join(run.out.split())
    assert "(default: None)" not in run.out and "(default: False)" not in run.out
