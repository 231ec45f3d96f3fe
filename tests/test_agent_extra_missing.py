"""``python -m langop_infra.agent serve`` without the ``agent`` extra (issue 51 §5): one line
naming the extra to install, exit 2; it was a ModuleNotFoundError traceback. The extra's
modules are hidden from the process (``None`` in ``sys.modules``, as Python reads it: not
importable), the rest of the environment unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HIDE = """
import os, sys
sys.modules[os.environ["HIDDEN_MODULE"]] = None
"""


@pytest.mark.parametrize("module", ["a2a", "uvicorn", "prometheus_client"])
def test_the_runtime_without_the_extra_says_which_to_install(tmp_path: Path, module: str) -> None:
    (tmp_path / "sitecustomize.py").write_text(HIDE)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "HIDDEN_MODULE": module}
    done = subprocess.run(
        [sys.executable, "-m", "langop_infra.agent", "serve"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "langop-agent: error: the built-in agent runtime needs the `agent` extra "
        f"(no module '{module}'); install it: pip install 'langop-infra[agent]'\n"
    )
