"""A user's own program outside the repository, and the Python template through `pulumi new`,
each run by the real engine with renderYamlToDirectory: the objects are as `render` shows."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.engine import (
    REPO,
    Engine,
    offline_render,
    python_project,
    read_manifests,
    render_differences,
    render_to,
)

pytestmark = pytest.mark.engine

CANARY = "search-token-canary-0d4e"
DIGEST = "@sha256:" + "cd" * 32
PROGRAM = f"""\
import pulumi
import pulumi_kubernetes as k8s

from langop_infra import LanguageAgent, LanguageTool

config = pulumi.Config()
ns = k8s.core.v1.Namespace("apps", metadata={{"name": "apps"}})
memory = LanguageTool(
    "memory", image="ghcr.io/acme/memory-mcp:1{DIGEST}", namespace=ns.metadata.name
)
agent = LanguageAgent(
    "helper",
    image="ghcr.io/acme/helper-agent:2{DIGEST}",
    namespace=ns.metadata.name,
    tools=[memory],
    mcp_servers=[{{
        "name": "search",
        "url": "https://search.example.com/mcp",
        "headers": [{{"name": "Authorization", "value": config.require_secret("searchToken")}}],
    }}],
)
pulumi.export("endpoint", memory.endpoint)
"""


def user_project(folder: Path, program: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text(
        f"name: shop\nruntime:\n  name: python\n  options:\n    virtualenv: {REPO / 'venv'}\n"
    )
    (folder / "__main__.py").write_text(textwrap.dedent(program))
    return folder


def up_and_compare(
    engine: Engine, project: Path, stack: str, tmp_path: Path
) -> dict[tuple[str, str, str], dict]:
    render_to(engine, project, stack, tmp_path / "real")
    up = engine.run(project, "up", "--stack", stack, "--yes", "--skip-preview")
    assert CANARY not in up.stdout + up.stderr
    real = read_manifests(tmp_path / "real")
    offline = offline_render(project, stack, tmp_path / "offline", engine.env)
    assert sorted(offline) == sorted(real)
    assert render_differences(offline, real) == []
    return real


def test_a_users_program_with_an_output_namespace_and_a_secret_header(
    engine: Engine, tmp_path: Path
) -> None:
    project = user_project(tmp_path / "shop", PROGRAM)
    engine.run(project, "stack", "init", "dev")
    engine.run(project, "config", "set", "--stack", "dev", "--secret", "searchToken", CANARY)
    real = up_and_compare(engine, project, "dev", tmp_path)
    assert ("Deployment", "apps", "helper") in real
    assert ("Secret", "apps", "helper-env") in real
    config = real[("ConfigMap", "apps", "helper-config")]
    assert CANARY not in str(config)


def test_the_template_through_pulumi_new(engine: Engine, tmp_path: Path) -> None:
    project = tmp_path / "from-template"
    project.mkdir()
    engine.run(
        project,
        "new",
        str(REPO / "templates" / "python"),
        "--yes",
        "--stack",
        "dev",
        "--name",
        "acme",
        "--generate-only",
    )
    settings = (project / "Pulumi.yaml").read_text()
    assert "virtualenv: venv" in settings
    (project / "Pulumi.yaml").write_text(
        settings.replace("virtualenv: venv", f"virtualenv: {REPO / 'venv'}")
    )
    engine.run(project, "stack", "init", "dev")
    real = up_and_compare(engine, project, "dev", tmp_path)
    assert {(kind, name) for kind, _, name in real} >= {
        ("Deployment", "memory"),
        ("Deployment", "helper"),
    }


def test_invalid_configuration_is_one_clean_error_under_the_engine(
    engine: Engine, tmp_path: Path
) -> None:
    """Bad input under `pulumi up` reads as under `langop-infra validate`: the field path and
    the fix, no Python traceback (the real engine showed "Program failed with an unhandled
    exception" and the package's frames)."""
    project = python_project(tmp_path / "project", stacks=("dev",))
    stack_file = project / "stacks" / "Pulumi.dev.yaml"
    stack_file.write_text(stack_file.read_text().replace("port: 9090", "port: 99999"))
    engine.run(project, "stack", "init", "dev")
    render_to(engine, project, "dev", tmp_path / "out")
    done = engine.run(project, "preview", "--stack", "dev", check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "langop-infra:tools[1].port" in output
    assert "Traceback" not in output
    assert "unhandled exception" not in output
