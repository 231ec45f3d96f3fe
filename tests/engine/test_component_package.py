"""The component package (provider/) from another language: a Pulumi YAML program with
LanguageTool and LanguageAgent, run by the real engine through the YAML language host and the
package's Python plugin, renders the same objects as the equivalent Python program, and its
schema sync (a dynamic resource inside a multi-language component) works."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.engine.test_render_fidelity import differences, without_secret_values
from tests.engine.test_user_program import user_project
from tests.support.engine import REPO, Engine, read_manifests, stack_state

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
    tools=[{{"name": "memory"}}], opts=pulumi.ResourceOptions(depends_on=[memory]),
)
'''


def plugin_copy(folder: Path) -> Path:
    """provider/ with its virtualenv pointed at the repository's venv."""
    plugin = folder / "provider"
    shutil.copytree(REPO / "provider", plugin)
    settings = yaml.safe_load((plugin / "PulumiPlugin.yaml").read_text())
    settings["runtime"]["options"]["virtualenv"] = str(REPO / "venv")
    (plugin / "PulumiPlugin.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    return plugin


def yaml_project(folder: Path, plugin: Path) -> Path:
    folder.mkdir(parents=True)
    program = {
        "name": "yamlshop",
        "runtime": "yaml",
        "packages": {"langop-infra": str(plugin)},
        "resources": {
            "memory": {"type": "langop-infra:index:LanguageTool", "properties": TOOL},
            "helper": {
                "type": "langop-infra:index:LanguageAgent",
                "properties": {**AGENT, "tools": [{"name": "memory"}]},
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
    engine.run(
        project, "config", "set", "--stack", "dev", "kubernetes:renderYamlToDirectory", str(out)
    )
    engine.run(project, "up", "--stack", "dev", "--yes", "--skip-preview")
    return read_manifests(out)


def test_a_yaml_program_renders_what_the_python_program_renders(
    engine: Engine, tmp_path: Path
) -> None:
    plugin = plugin_copy(tmp_path)
    from_yaml = rendered_by_engine(
        engine, yaml_project(tmp_path / "yaml", plugin), tmp_path / "yaml-out"
    )
    from_python = rendered_by_engine(
        engine, user_project(tmp_path / "python", PYTHON_PROGRAM), tmp_path / "py-out"
    )
    assert sorted(from_yaml) == sorted(from_python)
    found = [
        f"{key}: {d}"
        for key in sorted(from_python)
        for d in differences(
            (), without_secret_values(from_python[key]), without_secret_values(from_yaml[key])
        )
    ]
    assert found == []
    state = stack_state(engine, tmp_path / "yaml", "dev")
    types = {r["type"] for r in state["deployment"]["resources"]}
    assert {"langop-infra:index:LanguageTool", "langop-infra:index:LanguageAgent"} <= types
    # Schema sync ran inside the multi-language component (pulumi/pulumi#5455).
    syncs = [
        r for r in state["deployment"]["resources"] if r["type"] == "pulumi-python:dynamic:Resource"
    ]
    assert syncs, sorted(types)
    assert all("phase" in json.dumps(r.get("outputs", {})) for r in syncs)
