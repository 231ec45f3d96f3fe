"""Stacks that import Pulumi ESC environments (issue 35 §2): one clear warning that offline
commands cannot read ESC, and ``--environment-values FILE`` (``pulumi env open <env>
--format json``) whose ``pulumiConfig`` is merged as ``pulumi up`` merges it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.support.user_project import make_project, run_cli

PROGRAM = """
import pulumi
from langop_infra import LanguageTool
config = pulumi.Config("langop-infra")
LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1.4.0", namespace=config.require("namespace"),
             labels={"team": pulumi.Config().get("team") or "none"})
"""


def env_file(tmp_path: Path, config: dict[str, object]) -> Path:
    path = tmp_path / "env.json"
    path.write_text(json.dumps({"environmentVariables": {}, "pulumiConfig": config}))
    return path


def deployment(out: str) -> dict[str, object]:
    [found] = [d for d in yaml.safe_load_all(out) if d and d["kind"] == "Deployment"]
    return found


def test_a_stack_importing_an_environment_gets_one_warning_before_the_error(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "p", PROGRAM, "environment:\n  - acme/shop-dev\nconfig: {}\n")
    code, _, err = run_cli(project, "validate", "--stack", "dev")
    assert code != 0
    lines = err.splitlines()
    warnings = [line for line in lines if "cannot read ESC" in line]
    assert len(warnings) == 1
    assert lines[0] == warnings[0]
    assert warnings[0].startswith(
        "langop-infra validate: warning: stack 'dev' imports the ESC environment(s) "
        "acme/shop-dev: offline commands cannot read ESC"
    )
    assert "--environment-values FILE" in warnings[0]
    assert "`pulumi env open acme/shop-dev --format json`" in warnings[0]


def test_the_imports_form_is_recognised_too(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "p", PROGRAM, "environment:\n  imports: [acme/a, acme/b]\nconfig: {}\n"
    )
    err = run_cli(project, "render", "--stack", "dev")[2]
    assert "imports the ESC environment(s) acme/a, acme/b:" in err


def test_environment_values_are_merged_under_the_stack_config(tmp_path: Path) -> None:
    values = env_file(
        tmp_path,
        {"langop-infra:namespace": "from-esc", "team": "esc-team"},
    )
    project = make_project(
        tmp_path / "p",
        PROGRAM,
        "environment:\n  - acme/shop-dev\nconfig:\n  shop:team: stack-team\n",
    )
    code, out, err = run_cli(
        project, "render", "--stack", "dev", "--environment-values", str(values)
    )
    assert code == 0, err
    assert "cannot read ESC" not in err
    metadata = deployment(out)["metadata"]
    assert isinstance(metadata, dict)
    # The environment supplies the namespace; the stack file's own `team` wins over it.
    assert metadata["namespace"] == "from-esc"
    assert metadata["labels"]["team"] == "stack-team"


def test_a_project_key_of_the_environment_gets_the_project_namespace(tmp_path: Path) -> None:
    values = env_file(tmp_path, {"langop-infra:namespace": "apps", "team": "esc-team"})
    project = make_project(tmp_path / "p", PROGRAM, "environment: [acme/shop-dev]\n")
    code, out, err = run_cli(
        project, "render", "--stack", "dev", "--environment-values", str(values)
    )
    assert code == 0, err
    metadata = deployment(out)["metadata"]
    assert isinstance(metadata, dict)
    assert metadata["labels"]["team"] == "esc-team"


def test_a_file_that_is_not_json_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "env.json"
    bad.write_text("pulumiConfig: {}\n")
    project = make_project(tmp_path / "p", PROGRAM, "config: {}\n")
    code, _, err = run_cli(project, "render", "--stack", "dev", "--environment-values", str(bad))
    assert code == 2
    assert f"--environment-values {bad}: not JSON" in err
    assert "pulumi env open <env> --format json" in err
