"""`pulumi preview --policy-pack policy-pack` under the real engine: the pack runs through the
Python language host, refuses a stack that breaks a mandatory policy, passes the shipped prod
stack, and names the same violations as `langop-infra check`."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.engine import (
    REPO,
    Engine,
    python_project,
    render_to,
    reseal_secrets,
    with_virtualenv,
)

pytestmark = pytest.mark.engine


def preview_with_pack(
    engine: Engine, project: Path, folder: Path
) -> subprocess.CompletedProcess[str]:
    """`pulumi preview --policy-pack` of the prod stack, with a copy of policy-pack/ whose
    virtualenv is the repository's venv."""
    pack = with_virtualenv(REPO / "policy-pack", folder, "PulumiPolicy.yaml")
    return engine.run(
        project, "preview", "--stack", "prod", "--policy-pack", str(pack), check=False
    )


def prepared(engine: Engine, tmp_path: Path, stack: str, source_stack: str) -> Path:
    """A project whose stack `stack` holds the stack file of `source_stack`."""
    project = python_project(tmp_path / "project", stacks=(source_stack,))
    if stack != source_stack:
        (project / "stacks" / f"Pulumi.{source_stack}.yaml").rename(
            project / "stacks" / f"Pulumi.{stack}.yaml"
        )
    engine.run(project, "stack", "init", stack)
    reseal_secrets(engine, project, stack, "canary-policy")
    render_to(engine, project, stack, tmp_path / "out")
    return project


def offline_check(project: Path, stack: str, env: dict[str, str]) -> set[tuple[str, str, str]]:
    done = subprocess.run(
        [
            str(REPO / "venv" / "bin" / "langop-infra"),
            "check",
            "--stack",
            stack,
            "--project-dir",
            str(project),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    return {(v["policy"], v["level"], v["message"]) for v in json.loads(done.stdout)}


def engine_violations(output: str) -> set[tuple[str, str, str]]:
    """(policy, level, message) of each violation `pulumi preview` printed: a line
    `- [level]  policy  (resource)`, the policy's description, then the message."""
    pattern = re.compile(r"- \[(mandatory|advisory)\]\s+(langop-[a-z-]+)\s+\(.*\)\n.*\n\s+(.+)\n")
    return {(policy, level, message.strip()) for level, policy, message in pattern.findall(output)}


def test_a_stack_that_breaks_a_mandatory_policy_fails_the_preview(
    engine: Engine, tmp_path: Path
) -> None:
    # The dev stack leaves agents' egress open, which the pack refuses in a stack named prod.
    project = prepared(engine, tmp_path, "prod", "dev")
    done = preview_with_pack(engine, project, tmp_path)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "langop-agent-egress" in output
    preview = engine_violations(output)
    offline = offline_check(project, "prod", engine.env)
    assert {v for v in offline if v[1] == "mandatory"} == {
        v for v in preview if v[1] == "mandatory"
    }
    assert {p for p, level, _ in preview if level == "mandatory"} == {"langop-agent-egress"}


def test_the_shipped_prod_stack_passes(engine: Engine, tmp_path: Path) -> None:
    project = prepared(engine, tmp_path, "prod", "prod")
    done = preview_with_pack(engine, project, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mandatory" not in done.stdout
