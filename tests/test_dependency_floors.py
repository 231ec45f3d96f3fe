"""The lowest versions ``pyproject.toml`` allows really work: uv installs each direct
dependency at its floor (``--resolution lowest-direct``) into a clean virtualenv, and a fast
subset of the suite runs there against this checkout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBSET = [
    "tests/test_contract.py",
    "tests/test_specs.py",
    "tests/test_validation.py",
    "tests/test_typed_contract.py",
    "tests/test_outputs_as_inputs.py",
    "tests/test_user_project_render.py",
    "tests/test_user_project_errors.py",
    "tests/test_cli_output_options.py",
    "tests/test_tool.py",
    "tests/test_agent.py",
    "tests/test_render_cli.py",
    "tests/test_cli_commands.py",
    "tests/test_stack_program.py",
    "tests/test_mock_engine_sdk.py",
    "tests/test_diff.py",
]
tomllib = pytest.importorskip("tomllib")  # Python 3.11+


def call(argv: list[str | Path], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(a) for a in argv], env=env, capture_output=True, text=True, timeout=900, **kwargs
    )
    assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
def test_a_subset_passes_on_the_lowest_allowed_versions(tmp_path: Path) -> None:
    tools, lowest = tmp_path / "tools", tmp_path / "lowest"
    call([sys.executable, "-m", "venv", tools])
    call([tools / "bin" / "python", "-m", "pip", "install", "-q", "uv"])
    uv = tools / "bin" / "uv"
    call([uv, "venv", "-q", "-p", sys.executable, lowest])
    python = lowest / "bin" / "python"
    extras = ["pytest>=8", "kubernetes-validate>=1.30", "hypothesis>=6.100"]
    call([uv, "pip", "install", "-q", "-p", python, "--resolution", "lowest-direct", ROOT, *extras])
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    script = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
    for requirement in dependencies:
        name, floor = re.match(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement).groups()  # type: ignore[union-attr]
        installed = call([python, "-c", script, name]).stdout.strip()
        wanted = floor.split(".")
        assert installed.split(".")[: len(wanted)] == wanted, (name, installed, floor)
    done = call(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", *SUBSET],
        cwd=ROOT,
    )
    assert re.search(r"\d+ passed", done.stdout)
