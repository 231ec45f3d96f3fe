"""Type checkers see the components' arguments: pyright names a misspelt keyword and a value
of the wrong type in a user's program, and the package itself checks clean."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYRIGHT = shutil.which("pyright") or str(Path(sys.executable).with_name("pyright"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(PYRIGHT).exists(), reason="pyright is not installed"),
]


def pyright(*args: str, cwd: Path) -> list[dict]:
    done = subprocess.run(
        [PYRIGHT, "--outputjson", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    return json.loads(done.stdout)["generalDiagnostics"]


def test_a_misspelt_keyword_and_a_wrong_type_are_named(tmp_path: Path) -> None:
    (tmp_path / "pyrightconfig.json").write_text(
        json.dumps({"extraPaths": [str(REPO)], "typeCheckingMode": "basic"})
    )
    program = tmp_path / "program.py"
    program.write_text(
        "from langop_infra import LanguageTool\n\n"
        'LanguageTool("memory", image="ghcr.io/acme/memory:1", prot=9000)\n'
        'LanguageTool("files", image=5)\n'
        'LanguageTool("fine", image="ghcr.io/acme/files:1", port=9000)\n'
    )
    errors = {
        (d["range"]["start"]["line"] + 1, d["message"].splitlines()[0])
        for d in pyright(str(program), cwd=tmp_path)
        if d["severity"] == "error"
    }
    assert {line for line, _ in errors} == {3, 4}
    assert (3, 'No parameter named "prot"') in errors
    [(_, wrong_type)] = [e for e in errors if e[0] == 4]
    assert '"Literal[5]"' in wrong_type and '"image"' in wrong_type
