"""The rendered shipped stacks pass checkov, save the findings SECURITY.md accepts.

``tools/checkov.sh`` needs checkov in ``.venv-checkov`` (its pins clash with pulumi's); CI
creates it, and these tests skip when it is absent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "tools" / "checkov.sh"
CHECKOV = REPO / ".venv-checkov" / "bin" / "checkov"

pytestmark = pytest.mark.skipif(
    not CHECKOV.exists(),
    reason=f"checkov is not installed in {CHECKOV.parent.parent.name}; run tools/checkov.sh once "
    "(it creates the virtualenv) to enable these tests",
)


def checkov(stack: str, project_dir: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), stack],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHON": sys.executable, "PROJECT_DIR": str(project_dir)},
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_shipped_stack_has_no_unaccepted_finding(stack: str) -> None:
    """Only the agent contract's header env vars (CKV_K8S_35) and the probes agents do not
    declare (CKV_K8S_8/9) are skipped; every pod is selected by a policy (CKV2_K8S_6)."""
    result = checkov(stack)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Failed checks: 0" in result.stdout
    assert "CKV_K8S_35,CKV_K8S_8,CKV_K8S_9" in result.stderr


@pytest.mark.slow
def test_script_fails_on_a_finding(tmp_path: Path) -> None:
    """A copy of the dev stack with a floating image tag: checkov's digest check must fail."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "stacks").mkdir()
    text = (REPO / "stacks" / "Pulumi.dev.yaml").read_text()
    floating = re.sub(r"(triage-agent:main)@sha256:[0-9a-f]{64}", r"\1", text)
    assert floating != text
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(floating)
    result = checkov("dev", tmp_path)
    assert result.returncode != 0
    assert 'CKV_K8S_43: "Image should use digest"' in result.stdout
    assert "not accepted in SECURITY.md" in result.stderr
