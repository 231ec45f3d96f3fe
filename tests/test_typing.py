"""Type checkers see the components' arguments: pyright flags a misspelt keyword and names a
value of the wrong type in a user's program."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.pyright import run_pyright

REPO = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.slow]


def pyright(*args: str, cwd: Path) -> list[dict]:
    done = run_pyright("--outputjson", *args, cwd=cwd)
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
    # The @overload constructors (positional args, or keywords) make pyright report the
    # misspelt keyword as no overload matching, without naming it; the line is flagged.
    [(_, misspelt)] = [e for e in errors if e[0] == 3]
    assert misspelt in (
        'No parameter named "prot"',
        'No overloads for "__init__" match the provided arguments',
    )
    [(_, wrong_type)] = [e for e in errors if e[0] == 4]
    assert '"Literal[5]"' in wrong_type and '"image"' in wrong_type
