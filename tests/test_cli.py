"""The command line as users meet it when they get it wrong: exit 2, the command's own usage,
and a message that names what to fix; never a traceback. Through typer's CliRunner on the app,
and through the installed `gen` console script."""

from __future__ import annotations

import subprocess
import sysconfig
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from generator.cli import app
from tests.conftest import POLICIES, ROOT


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(arg) for arg in args], prog_name="gen")


@pytest.mark.parametrize(
    ("args", "usage", "said"),
    [
        (
            ["render", "--tagret", "prod"],
            "gen render [OPTIONS] [POLICY_DIR]",
            "No such option: --tagret (Possible options: --strict, --target)",
        ),
        (
            ["lint", "--fromat", "json"],
            "gen lint [OPTIONS] [PATH...]",
            "No such option: --fromat (Possible options: --format)",
        ),
        (
            ["lint", "--format", "xml"],
            "gen lint [OPTIONS] [PATH...]",
            "Invalid value for '--format': 'xml' is not one of 'text', 'json', 'github', 'sarif', 'junit'.",
        ),
        (
            ["plan", "--format", "sarif"],
            "gen plan [OPTIONS] [POLICY_DIR]",
            "Invalid value for '--format': 'sarif' is not one of 'text', 'json', 'github'.",
        ),
        (["explain", "gpu"], "gen explain gpu [OPTIONS] [POLICY_DIR]", "Missing option '--nodes'."),
        (
            ["explain", "scale-down", "--pods", "p.json", "--deployment", "web", "--to", "two"],
            "gen explain scale-down [OPTIONS] [POLICY_DIR]",
            "Invalid value for '--to': 'two' is not a valid int.",
        ),
        (
            ["cost", "--sample", "s.json", "--apply"],
            "gen cost [OPTIONS] [POLICY_DIR]",
            "Invalid value for '--apply': needs --pod NAMESPACE/NAME",
        ),
        (["rendr"], "gen [OPTIONS] COMMAND [ARGS]...", "No such command 'rendr'. Did you mean 'render'?"),
        (["explain", "cpu"], "gen explain [OPTIONS] COMMAND [ARGS]...", "No such command 'cpu'. Did you mean 'gpu'?"),
        (
            ["render", "policies", "deploy"],
            "gen render [OPTIONS] [POLICY_DIR]",
            "Got unexpected extra argument (deploy): one POLICY_DIR only; the output directory goes after --out",
        ),
        (
            ["explain", "gpu", "--nodes", "n.yaml", "a", "b"],
            "gen explain gpu [OPTIONS] [POLICY_DIR]",
            "Got unexpected extra argument (b): one POLICY_DIR only",
        ),
        (["init", "a", "b"], "gen init [OPTIONS] [DIR]", "Got unexpected extra argument (b): one DIR only"),
        (["schema", "schemas"], "gen schema [OPTIONS]", "Got unexpected extra argument (schemas)"),
        (["render", "--out"], "gen render [OPTIONS] [POLICY_DIR]", "Option '--out' requires an argument."),
        (["lint", "--strict=yes"], "gen lint [OPTIONS] [PATH...]", "Option '--strict' does not take a value."),
        (["--no-cache=1", "lint"], "gen [OPTIONS] COMMAND [ARGS]...", "Option '--no-cache' does not take a value."),
    ],
    ids=lambda x: " ".join(x) if isinstance(x, list) else "",
)
def test_a_usage_error_exits_2_naming_the_command_and_what_is_wrong(args: list[str], usage: str, said: str) -> None:
    run = invoke(*args)
    command = usage.split(" [")[0]
    assert run.exit_code == 2, run.output
    assert run.stderr.splitlines() == [f"Usage: {usage}", f"Try '{command} --help' for help.", "", f"Error: {said}"]


COMMANDS = {"render", "plan", "lint", "validate", "schema", "init", "cost", "explain"}


@pytest.mark.parametrize(
    ("args", "group", "commands"),
    [([], "gen", COMMANDS), (["--no-cache"], "gen", COMMANDS), (["explain"], "gen explain", {"gpu", "scale-down"})],
    ids=lambda x: " ".join(x) if isinstance(x, list) else "",
)
def test_no_command_lists_the_commands_there_are_and_exits_2(args: list[str], group: str, commands: set[str]) -> None:
    run = invoke(*args)
    assert run.exit_code == 2 and run.stdout == ""
    assert run.stderr.startswith(f"Usage: {group} [OPTIONS] COMMAND [ARGS]...\n"), run.stderr
    assert {line.split()[0] for line in run.stderr.split("Commands:\n")[1].splitlines() if line.strip()} == commands


def test_options_go_before_or_after_the_paths_and_repeat(tmp_path: Path, cache_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GEN_NO_CACHE", "")  # --no-cache sets it for the process; put back after
    out = tmp_path / "deploy"
    assert invoke("--no-cache", "render", "--out", out, POLICIES, "--target", "lab").exit_code == 0
    assert invoke("render", POLICIES, "--check", "--out", out, "--target", "lab").exit_code == 0
    both = invoke("render", POLICIES, "--out", out, "--target", "lab", "--target", "prod")
    assert both.exit_code == 2 and "gen: error: unknown target(s): prod; known: lab" in both.stderr


def test_help_shows_each_default_that_is_a_value() -> None:
    render = invoke("render", "--help")
    gpu = invoke("explain", "gpu", "--help")
    assert (render.exit_code, gpu.exit_code) == (0, 0)
    render_help, gpu_help = (" ".join(run.stdout.split()) for run in (render, gpu))
    assert "POLICY_DIR Policy directory. [default: policies]" in render_help
    assert "--out DIR Output directory. [default: deploy]" in render_help
    assert "Output format. [default: text]" in render_help
    assert "Seconds after which a sample is stale. [default: 60.0]" in gpu_help
    assert "[required]" in gpu_help.split("--nodes FILE")[1].split("--")[0]
    for text in (render_help, gpu_help):
        assert "[default: None]" not in text and "[default: False]" not in text


def test_the_version() -> None:
    from generator import __version__

    run = invoke("--version", "render", "--no-such-flag")  # eager: nothing after it is parsed
    assert (run.exit_code, run.stdout) == (0, f"gen {__version__}\n")


def test_an_internal_error_is_one_line_not_a_traceback(gen, monkeypatch) -> None:
    from generator.commands import schema

    def broken(out: Path | None) -> int:
        raise KeyError("boom")

    monkeypatch.setattr(schema, "run", broken)
    run = gen("schema")
    assert (run.code, run.err) == (2, "gen: internal error: KeyError: 'boom' (please report this with the input)\n")


def _installed_gen(*args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sysconfig.get_path("scripts")) / "gen"
    assert script.is_file(), f"{script}: the package is not installed (pip install -e .)"
    return subprocess.run([script, *args], capture_output=True, text=True, cwd=ROOT, check=False)


def test_the_installed_console_script_reports_a_usage_error_and_shows_help() -> None:
    wrong = _installed_gen("render", "policies", "deploy")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.startswith("Usage: gen render [OPTIONS] [POLICY_DIR]\n"), wrong.stderr
    assert wrong.stderr.endswith("the output directory goes after --out\n") and "Traceback" not in wrong.stderr
    helped = _installed_gen("--help")
    assert helped.returncode == 0 and helped.stderr == ""
    assert helped.stdout.startswith("Usage: gen [OPTIONS] COMMAND [ARGS]...\n")
    assert "render " in helped.stdout and "explain " in helped.stdout
