"""pyright resolves imports with the interpreter we name, never the first ``python`` on PATH
(issue 42): CI and every typing test pass ``--pythonpath``."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import pyright as support
from tests.support.source import parse_source

ROOT = Path(__file__).resolve().parents[1]
HELPER = ROOT / "tests" / "support" / "pyright.py"


def ci_pyright_lines(script: str) -> list[str]:
    """The lines of a shell script that run pyright (comments aside)."""
    return [
        line
        for line in script.splitlines()
        if re.search(r"(^|[\s/])pyright(\s|$)", line.split("#", 1)[0])
    ]


def test_ci_names_the_interpreter_for_every_pyright_run() -> None:
    lines = ci_pyright_lines((ROOT / ".ci" / "run").read_text())
    assert lines, "CI no longer runs pyright"
    for line in lines:
        assert "--pythonpath venv/bin/python" in line, line


def test_the_ci_check_sees_a_pyright_run_without_the_interpreter() -> None:
    bare = "venv/bin/python -m pyright --project pyproject.toml || exit 1\n"
    named = "venv/bin/python -m pyright --pythonpath venv/bin/python --project x\n"
    assert ci_pyright_lines("# pyright runs below\n" + bare) == [bare.rstrip("\n")]
    assert "--pythonpath" not in ci_pyright_lines(bare)[0]
    assert "--pythonpath" in ci_pyright_lines(named)[0]


def pyright_mentions(path: Path) -> list[int]:
    """Lines of a test module that name the pyright executable themselves (a mapping's key,
    ``tools["pyright"]`` of pyproject's tables, names no executable)."""
    tree = parse_source(path.read_text())
    keys = {id(node.slice) for node in ast.walk(tree) if isinstance(node, ast.Subscript)}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and id(node) not in keys
        and isinstance(node.value, str)
        and re.fullmatch(r"(.*/)?pyright", node.value)
    ]


def test_no_test_runs_pyright_except_through_the_helper() -> None:
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path != HELPER and (lines := pyright_mentions(path))
    }
    assert offenders == {}, "run pyright through tests.support.pyright.run_pyright"


def test_the_scan_finds_a_bare_pyright_call(tmp_path: Path) -> None:
    bad = tmp_path / "test_bad.py"
    bad.write_text('import subprocess\nsubprocess.run(["pyright", "x.py"])\nt = {}["pyright"]\n')
    assert pyright_mentions(bad) == [2]


def test_the_helper_passes_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(support.subprocess, "run", fake_run)
    support.run_pyright("a.py", cwd=ROOT)
    support.run_pyright("b.py", cwd=ROOT, python="/elsewhere/python")
    assert calls == [
        [str(support.PYRIGHT), "--pythonpath", sys.executable, "a.py"],
        [str(support.PYRIGHT), "--pythonpath", "/elsewhere/python", "b.py"],
    ]
    assert support.PYRIGHT.parent == Path(sys.executable).parent
