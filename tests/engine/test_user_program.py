"""A user's own program outside the repository, and the Python template through `pulumi new`,
each run by the real engine with renderYamlToDirectory: the objects are as `render` shows."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.engine.test_render_fidelity import differences, without_secret_values
from tests.support.engine import REPO, Engine, read_manifests

pytestmark = pytest.mark.engine

CANARY = "search-token-canary-0d4e"
DIGEST = "@sha256:" + "cd" * 32
PROGRAM = f"""\
import pulumi
import pulumi_kubernetes as k8s

from langop_infra import LanguageAgent, LanguageTool

config = pulumi.Config()
ns = k8s.core.v1.Namespace("apps", metadata={{"name": "apps"}})
memory = LanguageTool("memory", image="ghcr.io/acme/memory-mcp:1{DIGEST}", namespace=ns.metadata.name)
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


def render(
    project: Path, stack: str, out: Path, env: dict[str, str]
) -> dict[tuple[str, str, str], dict]:
    done = subprocess.run(
        [str(REPO / "venv" / "bin" / "langop-infra"), "render", "--stack", stack, "--project-dir", str(project), "--output-dir", str(out)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return read_manifests(out)


def up_and_compare(
    engine: Engine, project: Path, stack: str, tmp_path: Path
) -> dict[tuple[str, str, str], dict]:
    engine.run(
        project,
        "config",
        "set",
        "--stack",
        stack,
        "kubernetes:renderYamlToDirectory",
        str(tmp_path / "real"),
    )
    up = engine.run(project, "up", "--stack", stack, "--yes", "--skip-preview")
    assert CANARY not in up.stdout + up.stderr
    real = read_manifests(tmp_path / "real")
    offline = render(project, stack, tmp_path / "offline", engine.env)
    assert sorted(offline) == sorted(real)
    found = [
        f"{key}: {d}"
        for key in sorted(offline)
        for d in differences(
            (), without_secret_values(offline[key]), without_secret_values(real[key])
        )
    ]
    assert found == []
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
        project, "new", str(REPO / "templates" / "python"), "--yes", "--stack", "dev", "--name", "acme",
        "--generate-only",
    )  # fmt: skip
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
