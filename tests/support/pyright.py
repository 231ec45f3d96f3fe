"""pyright as the tests run it: always the venv's own pyright, always told which interpreter
resolves imports (``--pythonpath``). Without that flag pyright asks the first ``python`` on
PATH, so a result would depend on what the machine's own Python holds (issue 42)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# The pyright beside the interpreter running the tests, never one found on PATH.
PYRIGHT = Path(sys.executable).with_name("pyright")


def run_pyright(
    *args: str, cwd: Path, python: str = sys.executable, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run pyright with ``python`` resolving imports (default: the interpreter running the
    tests). Raises if pyright is missing: the ``[test]`` extra installs it."""
    if not PYRIGHT.exists():
        raise FileNotFoundError(
            f"{PYRIGHT} is missing; install the test extra: pip install -e '.[test]'"
        )
    return subprocess.run(
        [str(PYRIGHT), "--pythonpath", python, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
