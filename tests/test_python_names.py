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


def test_a_python_program_gets_python_advice(tmp_path: Path) -> None:
    program = (
        "from langop_infra import LanguageTool\n"
        'LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.0", namespace="apps")\n'
    )
    code, _, err = run_cli(make_project(tmp_path / "p", program), "render", "--stack", "dev")
    assert code == 0, err
    assert "set defaults.schema_sync_from to the control plane's address range" in err
    assert "schema_sync.access: direct with a sync_url" in err
    assert "defaults.require_image_digests: true" in err
    assert "schemaSyncFrom" not in err and "requireImageDigests" not in err
