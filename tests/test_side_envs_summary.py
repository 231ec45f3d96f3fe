"""A run that skips tests because a side environment is missing ends with one line per
missing environment, naming the command that builds it (#37 §1): through real pytest runs of
a folder whose tests skip as ours do, with tests/conftest.py's hook."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.side_envs import SIDE_ENVS, missing_environment_lines

ROOT = Path(__file__).resolve().parents[1]
SKIPPING = """
import pytest

def test_router():
    pytest.skip("LiteLLM is not installed in .venv-litellm; .ci/run creates it")

def test_proxy():
    pytest.skip("LiteLLM's proxy is not installed in .venv-litellm; .ci/run creates it")

@pytest.mark.skipif(True, reason="checkov is not installed in .venv-checkov")
def test_checkov():
    pass

def test_other():
    pytest.skip("not on this platform")

def test_runs():
    assert 1 + 1 == 2
"""


def run_pytest(folder: Path, side_envs_root: Path, *args: str) -> str:
    (folder / "conftest.py").write_text("from tests.conftest import pytest_terminal_summary\n")
    (folder / "test_skipping.py").write_text(SKIPPING)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LANGOP_TEST_SIDE_ENVS_ROOT": str(side_envs_root),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", *args, "."],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_run_ends_with_a_line_per_missing_environment(tmp_path: Path) -> None:
    out = run_pytest(tmp_path, tmp_path / "nothing-built")
    lines = out.splitlines()
    at = lines.index(next(line for line in lines if "side environments" in line))
    assert lines[at + 1 : at + 3] == [
        "1 skipped: .venv-checkov is missing; build it with: .ci/side-envs .venv-checkov",
        "2 skipped: .venv-litellm is missing; build it with: .ci/side-envs .venv-litellm",
    ]
    assert ".venv-mcp-proxy" not in out and ".conformance" not in out  # nothing skipped there
    assert lines[-1].startswith("1 passed, 4 skipped")


def test_a_built_environment_gets_no_line(tmp_path: Path) -> None:
    built = tmp_path / "built"
    for name in (".venv-checkov", ".venv-litellm"):
        marker = built / SIDE_ENVS[name]
        marker.parent.mkdir(parents=True)
        marker.write_text("")
    out = run_pytest(tmp_path, built)
    assert "side environments" not in out and "build it with" not in out


def test_the_lines_under_xdist_too(tmp_path: Path) -> None:
    out = run_pytest(tmp_path, tmp_path / "nothing-built", "-n", "2")
    assert "2 skipped: .venv-litellm is missing; build it with: .ci/side-envs .venv-litellm" in out


def test_missing_environment_lines_count_by_folder_name(tmp_path: Path) -> None:
    reasons = [
        "the conformance suite is not installed; run: npm install --prefix .conformance ...",
        "mcp-proxy is not installed (.ci/run installs it in .venv-mcp-proxy)",
        "mcp-proxy is not installed (.ci/run installs it in .venv-mcp-proxy)",
        "unrelated",
    ]
    assert missing_environment_lines(reasons, tmp_path) == [
        "2 skipped: .venv-mcp-proxy is missing; build it with: .ci/side-envs .venv-mcp-proxy",
        "1 skipped: .conformance is missing; build it with: .ci/side-envs .conformance",
    ]
    assert missing_environment_lines([], tmp_path) == []
