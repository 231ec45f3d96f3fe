"""The CLI behaves like the tools platform engineers already use: finding the project, choosing
a stack, ``python -m``, exit codes in ``--help``, one error prefix, a progress line, and no
tracebacks for a closed pipe, Ctrl-C, or an error in the user's own program."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langop_infra.cli.main import SUBCOMMANDS, main
from tests.support.terminal import run_on_a_terminal

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(*argv: str, cwd: Path = ROOT, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``python -m langop_infra <argv>`` as a process."""
    return subprocess.run(
        [sys.executable, "-m", "langop_infra", *argv],
        cwd=cwd,
        env=kwargs.pop("env", ENV),  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def project(tmp_path: Path, program: str | None = None, **files: str) -> Path:
    """A copy of this repository's project (Pulumi.yaml, dev stack), with another program."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "stacks" / "Pulumi.dev.yaml", tmp_path / "stacks" / "Pulumi.dev.yaml")
    (tmp_path / "__main__.py").write_text(program or (ROOT / "__main__.py").read_text())
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


# --- finding the project and the stack ---------------------------------------------------------


@pytest.mark.slow
def test_python_dash_m_runs_the_cli_and_finds_pulumi_yaml_in_parent_folders() -> None:
    from_stacks = cli("render", "--stack", "dev", cwd=ROOT / "stacks")
    from_root = cli("render", "--stack", "dev")
    assert from_stacks.returncode == 0, from_stacks.stderr
    assert from_stacks.stdout == from_root.stdout
    assert "kind: Namespace" in from_stacks.stdout


def test_no_stack_lists_the_stacks_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "--project-dir", str(ROOT)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "langop-infra render: error: no stack given; pass --stack NAME "
        "(stacks here: dev, prod, staging)\n"
    )


def test_a_misspelt_stack_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--stack", "prdo", "--project-dir", str(ROOT / "stacks")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "langop-infra validate: error: invalid configuration: 1 problem\n"
        f"  - {ROOT / 'stacks' / 'Pulumi.prdo.yaml'}: no config for stack 'prdo'; did you mean "
        "'prod'? (stacks here: dev, prod, staging); create this file\n"
    )


def test_no_project_anywhere_up_the_tree(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["render", "--stack", "dev", "--project-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("langop-infra render: error: invalid configuration: 1 problem\n")
    assert "no Pulumi.yaml here or in a parent folder; pass --project-dir" in err


# --- help and error prefixes ---------------------------------------------------------------------


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_every_help_lists_the_exit_codes(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"exit status: {SUBCOMMANDS[command].exit_codes}; 130 interrupted" in help_text
    assert "141 the output pipe was closed" in help_text


def test_top_level_help_lists_the_new_commands() -> None:
    done = cli("--help")
    assert done.returncode == 0
    for command in ("validate", "outputs", "graph", "config-schema", "completion"):
        assert f"    {command}" in done.stdout
    assert "exit status:" in done.stdout


def test_usage_errors_use_the_command_prefix() -> None:
    done = cli("diff", "only-one.yaml")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("langop-infra diff: error: ")


# --- progress ----------------------------------------------------------------------------------


def _render_with_stderr_on_a_terminal(env: dict[str, str]) -> tuple[int, str]:
    done, err = run_on_a_terminal(
        [sys.executable, "-m", "langop_infra", "render", "--stack", "dev"],
        stream="stderr",
        env={**ENV, **env},
        cwd=ROOT,
        timeout=120,
    )
    return done.returncode, err


def test_a_slow_render_prints_a_progress_line_on_a_terminal() -> None:
    # The delay is 2 s by default; 0 here so that every render counts as slow.
    code, err = _render_with_stderr_on_a_terminal({"LANGOP_INFRA_PROGRESS_AFTER": "0"})
    assert code == 0
    assert err.replace("\r", "") == "langop-infra render: rendering stack dev...\n"


def test_no_progress_line_when_stderr_is_not_a_terminal() -> None:
    done = cli("render", "--stack", "dev", env={**ENV, "LANGOP_INFRA_PROGRESS_AFTER": "0"})
    assert done.returncode == 0
    assert "rendering stack" not in done.stderr


# --- closed pipes, Ctrl-C, the user's own errors -------------------------------------------------


@pytest.mark.parametrize("argv", [("config-schema",), ("render", "--stack", "dev")])
def test_a_closed_output_pipe_exits_quietly(argv: tuple[str, ...]) -> None:
    """As in ``langop-infra ... | head``: the reader is gone before the output is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    with subprocess.Popen(
        [sys.executable, "-m", "langop_infra", *argv],
        cwd=ROOT,
        env=ENV,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        os.close(write_end)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 141
    assert err == ""


SLEEPING_PROGRAM = """
import pathlib, time
pathlib.Path("started").write_text("yes")
for _ in range(600):
    time.sleep(0.1)
"""


def test_ctrl_c_exits_130_with_one_line(tmp_path: Path) -> None:
    home = project(tmp_path, SLEEPING_PROGRAM)
    with subprocess.Popen(
        [sys.executable, "-m", "langop_infra", "render", "--stack", "dev"],
        cwd=home,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        for _ in range(600):
            if (home / "started").exists():
                break
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert (out, err) == ("", "langop-infra render: error: interrupted\n")


FAILING_HELPER = """
def build(factor):
    scale = 10 / factor
    return scale
"""
FAILING_PROGRAM = """
import pulumi
from helpers import build

pulumi.export("scale", build(0))
"""


def test_an_error_in_the_users_program_shows_their_frame_first(tmp_path: Path) -> None:
    home = project(tmp_path, FAILING_PROGRAM, helpers=FAILING_HELPER)
    done = cli("render", "--stack", "dev", cwd=home)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == (
        f"langop-infra render: error: your program failed at {home / 'helpers.py'}:3 in build: "
        "ZeroDivisionError: division by zero"
    )
    assert lines[1:] == [
        f'    File "{home / "__main__.py"}", line 5, in <module>',
        '      pulumi.export("scale", build(0))',
        f'    File "{home / "helpers.py"}", line 3, in build',
        "      scale = 10 / factor",
        "  (frames of langop-infra and Pulumi left out)",
    ]
