"""The components as a Pulumi package: Pulumi's own analyzer infers their schema, and inputs
in the package's camelCase shape build the same objects as the Python API."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi.provider.experimental.component import ComponentProvider

from langop_infra.offline._mock_engine import run_program
from langop_infra.program import package
from langop_infra.program.package import COMPONENTS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def provider() -> ComponentProvider:
    return ComponentProvider(COMPONENTS, "langop-infra", version="0.1.0")


@pytest.fixture(scope="module")
def schema(provider: ComponentProvider) -> dict[str, Any]:
    return json.loads(provider.schema)


def test_schema_has_every_component_with_its_inputs_and_outputs(schema: dict[str, Any]) -> None:
    resources = schema["resources"]
    assert sorted(resources) == [
        "langop-infra:index:HttpTool",
        "langop-infra:index:LanguageAgent",
        "langop-infra:index:LanguageCluster",
        "langop-infra:index:LanguageMemory",
        "langop-infra:index:LanguageModel",
        "langop-infra:index:LanguageTool",
    ]
    memory = resources["langop-infra:index:LanguageMemory"]
    assert {"type", "image", "size", "address", "headers"} <= set(memory["inputProperties"])
    assert set(memory["properties"]) == {"endpoint"}
    tool = resources["langop-infra:index:LanguageTool"]
    assert {"image", "port", "deploymentMode", "schemaSync", "containerArgs", "secretEnv"} <= set(
        tool["inputProperties"]
    )
    assert tool["inputProperties"]["image"] == {
        "type": "string",
        "description": "Container image, e.g. ghcr.io/org/tool:1.2.3.",
    }
    assert tool["inputProperties"]["port"]["type"] == "integer"
    assert set(tool["properties"]) == {
        "endpoint",
        "serviceName",
        "namespace",
        "deploymentMode",
        "toolSchemas",
        "schemaHash",
        "toolNames",
        "phase",
    }
    agent = resources["langop-infra:index:LanguageAgent"]
    assert {"image", "tools", "mcpServers", "webhookTools", "egressTo"} <= set(
        agent["inputProperties"]
    )
    assert set(agent["properties"]) == {"configYaml", "mcpServers"}
    cluster = resources["langop-infra:index:LanguageCluster"]
    assert set(cluster["inputProperties"]) == {
        "namespace",
        "createNamespace",
        "partOf",
        "defaults",
        "tools",
        "agents",
        "secrets",
        "models",
        "memories",
        "personas",
        "externalSecrets",
        "externalServices",
        "httpTools",
    }
    http_tool = resources["langop-infra:index:HttpTool"]
    assert {"displayName", "description", "endpoint", "authentication", "rateLimit"} <= set(
        http_tool["inputProperties"]
    )
    assert set(http_tool["properties"]) == {
        "phase",
        "lastError",
        "registeredAt",
        "lastSyncedAt",
        "conditions",
    }
    model = resources["langop-infra:index:LanguageModel"]
    assert {"provider", "modelName", "endpoint", "apiKey", "fallbacks"} <= set(
        model["inputProperties"]
    )
    assert set(model["properties"]) == {"endpoint"}
    assert set(cluster["properties"]) == {
        "namespace",
        "toolEndpoints",
        "agentConfigs",
        "modelEndpoints",
        "gatewayEndpoint",
    }
    assert all(p.get("description") for p in cluster["inputProperties"].values())


def test_yaml_example_inputs_build_the_cluster(provider: ComponentProvider) -> None:
    """The properties of examples/yaml/Pulumi.yaml, mapped as the provider maps them."""
    program = yaml.safe_load((ROOT / "examples/yaml/Pulumi.yaml").read_text())
    resource = program["resources"]["apps"]
    assert resource["type"] == "langop-infra:index:LanguageCluster"
    definition = provider._component_defs["LanguageCluster"]
    args = provider.map_inputs(resource["properties"], definition)
    constructor = provider._components["LanguageCluster"]
    run = run_program(lambda: constructor("apps", args, None))
    kinds = {(m["kind"], m["metadata"]["name"]) for m in run.manifests()}
    assert {("Deployment", "memory"), ("Service", "memory"), ("Deployment", "helper")} <= kinds
    [config] = [m for m in run.manifests() if m["kind"] == "ConfigMap"]
    document = yaml.safe_load(config["data"]["config.yaml"])
    assert document["tools"]["memory"]["endpoint"] == "http://memory.apps.svc.cluster.local:8080"


def test_plugin_entry_point_serves_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """Running provider/__main__.py hands every component to Pulumi's component host."""
    plugin = yaml.safe_load((ROOT / "provider/PulumiPlugin.yaml").read_text())
    assert plugin["runtime"]["name"] == "python"
    served: dict[str, Any] = {}
    monkeypatch.setattr(
        package, "component_provider_host", lambda components, **kw: served.update(kw, c=components)
    )
    runpy.run_path(str(ROOT / "provider/__main__.py"), run_name="__main__")
    assert served["c"] == COMPONENTS
    assert served["name"] == "langop-infra"


def test_every_input_and_output_of_every_component_is_described(schema: dict[str, Any]) -> None:
    """Pulumi's analyzer reads a field's description from the source of the class that
    declares it, and not from base classes: the ``*Args`` TypedDicts stay flat for that."""
    for token, resource in schema["resources"].items():
        for kind in ("inputProperties", "properties"):
            undescribed = [n for n, p in resource[kind].items() if not p.get("description")]
            assert undescribed == [], (token, kind, undescribed)
