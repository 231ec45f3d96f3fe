"""Ctrl-C at the first instant of a command (issue 51 §5): while the command is still
importing its own modules, before its ``main`` runs. The signal is sent by the process
itself, from an import hook, at the import of a chosen module: no timing involved.
Exit 130 and one line, no KeyboardInterrupt traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from langop_infra._interrupt import command_prefix

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "langop-infra"

# Loaded by `site` at startup: signals the process when `target` is first imported.
HOOK = """
import os, signal, sys

class _Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["INTERRUPT_AT"]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, _Interrupt())
"""


def interrupted_at(
    module: str, argv: list[str], tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOOK)
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{ROOT}", "INTERRUPT_AT": module}
    return subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("module", "argv", "command"),
    [
        ("langop_infra.cli", [str(SCRIPT), "render", "--stack", "dev"], "render"),
        ("langop_infra.cli.main", [sys.executable, "-m", "langop_infra", "render"], "render"),
        ("argparse", [sys.executable, "-m", "langop_infra.cli", "validate"], "validate"),
    ],
    ids=["script", "cli-main", "argparse"],
)
def test_ctrl_c_while_the_command_imports_is_one_line(
    tmp_path: Path, module: str, argv: list[str], command: str
) -> None:
    """The line names the command, as every later one does (before 2026-11-29 it said
    ``langop-infra:`` until the command's ``main`` ran)."""
    done = interrupted_at(module, argv, tmp_path)
    assert (done.returncode, done.stdout) == (130, ""), done.stderr
    assert done.stderr == f"langop-infra {command}: error: interrupted\n"


def test_ctrl_c_while_the_agent_starts_is_one_line(tmp_path: Path) -> None:
    done = interrupted_at(
        "langop_infra.agent", [sys.executable, "-m", "langop_infra.agent", "serve"], tmp_path
    )
    assert (done.returncode, done.stdout) == (130, ""), done.stderr
    assert done.stderr == "langop-agent: error: interrupted\n"


def test_a_program_that_imports_the_package_keeps_pythons_handler(tmp_path: Path) -> None:
    """Only our commands: a user's program (or test run) still gets its KeyboardInterrupt."""
    program = "import langop_infra, signal; print(signal.getsignal(signal.SIGINT).__name__)"
    done = interrupted_at("never-imported", [sys.executable, "-c", program], tmp_path)
    assert (done.returncode, done.stdout) == (0, "default_int_handler\n"), done.stderr


@pytest.mark.parametrize(
    ("orig_argv", "expected"),
    [
        (["python", "-m", "langop_infra", "render"], "langop-infra render"),
        (["python", "-X", "importtime", "-m", "langop_infra.cli"], "langop-infra"),
        (["python", "-m", "langop_infra", "--version"], "langop-infra"),
        (
            ["/venv/bin/python", "/venv/bin/langop-infra", "graph", "--stack", "x"],
            "langop-infra graph",
        ),
        (["/venv/bin/python", "/venv/bin/langop-infra", "-v", "diff", "a"], "langop-infra diff"),
        (["python", "-m", "langop_infra.agent", "serve"], "langop-agent"),
        (["python", "-m", "pytest", "tests"], None),
        (["python", "__main__.py"], None),
        (["python", "-m", "langop_infra.program.package"], None),
        (["python"], None),
    ],
)
def test_which_processes_are_our_commands(orig_argv: list[str], expected: str | None) -> None:
    assert command_prefix(orig_argv) == expected
