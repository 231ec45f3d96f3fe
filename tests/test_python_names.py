"""Python users get Python names (issue 35 §2): a misspelt keyword is named, with a
did-you-mean in the Python spelling, in a user's project outside this repository."""

from __future__ import annotations

from pathlib import Path

from tests.support.user_project import make_project, run_cli

PROGRAM = """
from langop_infra import LanguageTool
LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.0", namespace="apps", replicaz=2,
             schema_sync={"enabeld": True})
"""


def test_a_misspelt_keyword_is_named_with_a_did_you_mean(tmp_path: Path) -> None:
    code, _, err = run_cli(make_project(tmp_path / "p", PROGRAM), "validate", "--stack", "dev")
    assert code == 2
    assert "  - replicaz: unknown field; did you mean 'replicas'?" in err
    assert "  - schema_sync.enabeld: unknown field; did you mean 'enabled'?" in err
