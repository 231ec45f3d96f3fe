"""The component package (provider/) from another language: a Pulumi YAML program with
LanguageTool and LanguageAgent, run by the real engine through the YAML language host and the
package's Python plugin, renders the same objects as the equivalent Python program, and its
schema sync (a dynamic resource inside a multi-language component) works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.engine.test_user_program import user_project
from tests.support.engine import (
    REPO,
    Engine,
    read_manifests,
    render_differences,
    render_to,
    stack_state,
    with_virtualenv,
)

pytestmark = pytest.mark.engine

DIGEST = "@sha256:" + "ef" * 32
TOOL = {"namespace": "apps", "image": f"ghcr.io/acme/memory-mcp:1{DIGEST}"}
AGENT = {
    "namespace": "apps",
    "image": f"ghcr.io/acme/helper-agent:2{DIGEST}",
    "instructions": "Help the team.",
}

PYTHON_PROGRAM = f'''\
import pulumi
from langop_infra import LanguageAgent, LanguageTool

memory = LanguageTool("memory", namespace="apps", image="{TOOL["image"]}")
LanguageAgent(
    "helper", namespace="apps", image="{AGENT["image"]}", instructions="{AGENT["instructions"]}",
    mcp_servers=[{{"name": "memory", "url": memory.endpoint}}],
    opts=pulumi.ResourceOptions(depends_on=[memory]),
)
'''


def yaml_project(folder: Path, plugin: Path) -> Path:
    folder.mkdir(parents=True)
    program = {
        "name": "yamlshop",
        # pulumi/pulumi#5455: the engine starts the dynamic-provider host (schema sync) with
        # the program's runtime options; without a virtualenv holding the package, that host
        # runs the machine's python3 and fails (this test saw it). docs/python-api.md says so.
        "runtime": {"name": "yaml", "options": {"virtualenv": str(REPO / "venv")}},
        "packages": {"langop-infra": str(plugin)},
        "resources": {
            "memory": {"type": "langop-infra:index:LanguageTool", "properties": TOOL},
            "helper": {
                "type": "langop-infra:index:LanguageAgent",
                # A tool by name (`tools: [{name: memory}]`) is found only among components
                # built in the same Construct call: each component of a YAML program is one,
                # so the agent reaches the tool by its endpoint Output (docs/python-api.md).
                "properties": {
                    **AGENT,
                    "mcpServers": [{"name": "memory", "url": "${memory.endpoint}"}],
                },
                "options": {"dependsOn": ["${memory}"]},
            },
        },
        "outputs": {"endpoint": "${memory.endpoint}"},
    }
    (folder / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    return folder


def rendered_by_engine(
    engine: Engine, project: Path, out: Path
) -> dict[tuple[str, str, str], dict]:
    engine.run(project, "stack", "init", "dev")
    render_to(engine, project, "dev", out)
    engine.run(project, "up", "--stack", "dev", "--yes", "--skip-preview")
    return read_manifests(out)


def test_a_yaml_program_renders_what_the_python_program_renders(
    engine: Engine, tmp_path: Path
) -> None:
    plugin = with_virtualenv(REPO / "provider", tmp_path, "PulumiPlugin.yaml")
    from_yaml = rendered_by_engine(
        engine, yaml_project(tmp_path / "yaml", plugin), tmp_path / "yaml-out"
    )
    from_python = rendered_by_engine(
        engine, user_project(tmp_path / "python", PYTHON_PROGRAM), tmp_path / "py-out"
    )
    assert sorted(from_yaml) == sorted(from_python)
    assert render_differences(from_python, from_yaml) == []
    state = stack_state(engine, tmp_path / "yaml", "dev")
    types = {r["type"] for r in state["deployment"]["resources"]}
    assert {"langop-infra:index:LanguageTool", "langop-infra:index:LanguageAgent"} <= types
    # Schema sync ran inside the multi-language component (pulumi/pulumi#5455).
    syncs = [
        r for r in state["deployment"]["resources"] if r["type"] == "pulumi-python:dynamic:Resource"
    ]
    assert syncs, sorted(types)
    assert all("phase" in json.dumps(r.get("outputs", {})) for r in syncs)
