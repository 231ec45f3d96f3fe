"""The specs work on the oldest pydantic ``pyproject.toml`` allows, not only on the newest.

A virtualenv gets exactly that pydantic (and its pydantic-core) from the package index; a
``.pth`` file then adds this environment's site-packages after its own, so every other
dependency is the one installed here and only pydantic is pinned. A fast subset of the suite
runs there: the specs, validation, the generated Args and the JSON Schema.
"""

from __future__ import annotations

import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBSET = ["tests/test_specs.py", "tests/test_validation.py", "tests/test_typed_contract.py"]


def floor() -> str:
    """``2.11`` from ``"pydantic>=2.11,<3"`` in pyproject.toml."""
    found = re.search(r'"pydantic>=([0-9.]+)', (ROOT / "pyproject.toml").read_text())
    assert found, "pyproject.toml names no pydantic floor"
    return found.group(1)


@pytest.mark.slow
def test_the_fast_subset_passes_on_the_pydantic_floor(tmp_path: Path) -> None:
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    pin = f"pydantic=={floor()}.*"
    installed = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", pin],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if installed.returncode != 0:
        pytest.skip(f"could not install {pin}: {installed.stderr.strip()[-300:]}")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = [p for p in sys.path if p.endswith("site-packages")]
    # After the venv's own site-packages: its pydantic wins, the rest comes from here.
    adds = "; ".join(f"site.addsitedir({p!r})" for p in ours)
    (Path(purelib) / "_langop_floor.pth").write_text(f"import site; {adds}\n")
    version = subprocess.run(
        [python, "-c", "import pydantic; print(pydantic.VERSION)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version.startswith(floor() + "."), version
    done = subprocess.run(
        [python, "-m", "pytest", "-q", "-m", "not slow", "-p", "no:cacheprovider", *SUBSET],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout)
