"""What an agent may call on a LanguageTool, and with which credentials: a tool reference's
``allowedTools`` and ``headers``, from the stack file to config.yaml and env, and through the
agent-side registry against real official-SDK servers on loopback."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import yaml
from mcp.server.mcpserver import MCPServer

from langop_infra.agent.runtime import connect_tool_registry, load_agent_servers
from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._advice import cluster_warnings
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from langop_infra.mcp import ClientOptions
from langop_infra.offline._mock_engine import run_program
from langop_infra.sync.provider import ToolSchemaSyncProvider
from tests.faultservers import GOOD_TOKEN, guarded_memory_server
from tests.support.loopback import free_port, serve
from tests.support.provider_host import EngineHost, reveal, service_inputs

CANARY = "cnry-tool-ref-header-3f9a"
FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)


def two_tool_server() -> MCPServer:
    server = MCPServer("memory", version="1.0.0", log_level="WARNING")

    @server.tool()
    def remember(content: str) -> str:
        """Store information in long-term memory."""
        return "Stored."

    @server.tool()
    def recall(query: str) -> str:
        """Retrieve information from long-term memory."""
        return f"found {query}"

    return server


def cluster(ref: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "namespace": "apps",
        "secrets": {"memory-token": {"token": "from-the-secret"}},
        "tools": [{"name": "memory", "image": "ghcr.io/acme/memory:1"}],
        "agents": [
            {
                "name": "helper",
                "image": "ghcr.io/acme/helper:1",
                "tools": [{"name": "memory", **ref}],
                **extra,
            }
        ],
    }


REF = {
    "allowedTools": ["recall"],
    "headers": [
        {
            "name": "Authorization",
            "valueFrom": {"secretKeyRef": {"name": "memory-token", "key": "token"}},
        },
        {"name": "X-Org", "value": "acme"},
    ],
}


def test_config_yaml_carries_allowed_tools_and_names_header_env_vars(render) -> None:
    rendered = render(lambda: LanguageCluster("c", cluster(REF)))
    config = yaml.safe_load(
        rendered.find("ConfigMap", "helper-config", "apps")["data"]["config.yaml"]
    )
    assert config["tools"]["memory"] == {
        "endpoint": "http://memory.apps.svc.cluster.local:8080",
        "protocol": "mcp",
        "allowedTools": ["recall"],
        "headers": [
            {"name": "Authorization", "valueFromEnv": "LANGOP_TOOL_MEMORY_HEADER_AUTHORIZATION"},
            {"name": "X-Org", "value": "acme"},
        ],
    }
    env = {
        e["name"]: e
        for e in rendered.find("Deployment", "helper", "apps")["spec"]["template"]["spec"][
            "containers"
        ][0]["env"]
    }
    assert env["LANGOP_TOOL_MEMORY_HEADER_AUTHORIZATION"] == {
        "name": "LANGOP_TOOL_MEMORY_HEADER_AUTHORIZATION",
        "valueFrom": {"secretKeyRef": {"name": "memory-token", "key": "token"}},
    }
    assert env["LANGOP_TOOL_MEMORY_HEADER_X_ORG"]["value"] == "acme"
    assert "from-the-secret" not in json.dumps(
        [m for m in rendered.manifests if m["kind"] != "Secret"]
    )


def test_a_reference_without_scoping_renders_as_before(render) -> None:
    rendered = render(lambda: LanguageCluster("c", cluster({})))
    config = yaml.safe_load(
        rendered.find("ConfigMap", "helper-config", "apps")["data"]["config.yaml"]
    )
    assert config["tools"]["memory"] == {
        "endpoint": "http://memory.apps.svc.cluster.local:8080",
        "protocol": "mcp",
    }


def test_an_undeclared_header_secret_is_refused() -> None:
    ref = {
        "headers": [
            {
                "name": "Authorization",
                "valueFrom": {"secretKeyRef": {"name": "nope", "key": "token"}},
            }
        ]
    }
    with pytest.raises(SpecError) as caught:
        run_program(lambda: LanguageCluster("c", cluster(ref)))
    assert [p.path for p in caught.value.problems] == [
        "agents[0].tools[0].headers[0].valueFrom.secretKeyRef.name"
    ]


def test_bad_input_names_the_field_and_never_echoes_a_secret() -> None:
    ref = {
        "allowedTools": ["recall", "recall"],
        "headers": [{"name": "bad header", "secret": CANARY}],
    }
    with pytest.raises(SpecError) as caught:
        run_program(lambda: LanguageCluster("c", cluster(ref)))
    paths = sorted(p.path for p in caught.value.problems)
    assert paths == ["agents[0].tools[0].allowedTools", "agents[0].tools[0].headers[0].name"]
    assert CANARY not in str(caught.value)


def test_a_literal_credential_header_is_warned_about() -> None:
    ref = {"headers": [{"name": "Authorization", "value": "Bearer plain"}]}
    run = run_program(lambda: LanguageCluster("c", cluster(ref)))
    warnings = cluster_warnings(parse_cluster(cluster(ref)))
    credential = [w.path for w in warnings if w.kind == "langop_literal_credential"]
    assert credential == ["agents[0].tools[0].headers[0].value"]
    assert run.registrations  # valid: rendered, only warned


def test_two_headers_folding_to_one_env_var_are_refused() -> None:
    ref = {"headers": [{"name": "X-Key", "value": "a"}, {"name": "X_Key", "value": "b"}]}
    with pytest.raises(SpecError, match="LANGOP_TOOL_MEMORY_HEADER_X_KEY twice"):
        run_program(lambda: LanguageCluster("c", cluster(ref)))


def test_the_reserved_prefix_cannot_be_user_env() -> None:
    with pytest.raises(SpecError, match="LANGOP_TOOL_MEMORY_HEADER_X is set by langop-infra"):
        run_program(
            lambda: LanguageCluster("c", cluster({}, env={"LANGOP_TOOL_MEMORY_HEADER_X": "y"}))
        )


def test_allowed_tools_is_optional_and_may_be_empty() -> None:
    agent = AgentSpec.model_validate(
        {"name": "a", "image": "x/y:1", "tools": [{"name": "m"}, {"name": "n", "allowedTools": []}]}
    )
    assert [r.allowed_tools for r in agent.tools] == [None, []]


# --- the agent-side registry enforces it -------------------------------------------------------


def registry_names(document: dict[str, Any], env: dict[str, str]) -> tuple[list[str], Any]:
    async def connect() -> tuple[list[str], Any]:
        servers = load_agent_servers(document, env=env)
        async with await connect_tool_registry(servers, FAST) as registry:
            refused = await registry.call_tool("memory__remember", {"content": "x"})
            allowed = await registry.call_tool("memory__recall", {"query": "units"})
            return sorted(registry.tools), (refused, allowed, registry.failures)

    return asyncio.run(connect())


def test_the_registry_offers_only_the_allowed_tools() -> None:
    with serve(two_tool_server().streamable_http_app()) as base:
        document = {
            "tools": {"memory": {"endpoint": base, "protocol": "mcp", "allowedTools": ["recall"]}}
        }
        names, (refused, allowed, failures) = registry_names(document, {})
    assert names == ["memory__recall"]
    assert refused.is_error and "no tool named 'memory__remember'" in refused.content[0]["text"]
    assert not allowed.is_error and allowed.content[0]["text"] == "found units"
    assert failures == []


def test_without_allowed_tools_the_registry_offers_every_tool() -> None:
    with serve(two_tool_server().streamable_http_app()) as base:
        document = {"tools": {"memory": {"endpoint": base, "protocol": "mcp"}}}
        names, _ = registry_names(document, {})
    assert names == ["memory__recall", "memory__remember"]


def test_a_header_from_env_reaches_a_tool_that_demands_a_token() -> None:
    port = free_port()
    server = guarded_memory_server(f"http://127.0.0.1:{port}")
    header = {"name": "Authorization", "valueFromEnv": "LANGOP_TOOL_MEMORY_HEADER_AUTHORIZATION"}
    with serve(server.streamable_http_app(), port) as base:
        document = {"tools": {"memory": {"endpoint": base, "protocol": "mcp", "headers": [header]}}}

        async def connect(env: dict[str, str]) -> tuple[list[str], list[Any]]:
            servers = load_agent_servers(document, env=env)
            async with await connect_tool_registry(servers, FAST) as registry:
                return sorted(registry.tools), registry.failures

        with_token = asyncio.run(
            connect({"LANGOP_TOOL_MEMORY_HEADER_AUTHORIZATION": f"Bearer {GOOD_TOKEN}"})
        )
        without = asyncio.run(connect({}))
    assert with_token == (["memory__remember"], [])
    assert without[0] == []
    [failure] = without[1]
    assert "LANGOP_TOOL_MEMORY_HEADER_AUTHORIZATION is not set" in failure.message


# --- schema sync reports names the tool does not have -----------------------------------------


def test_schema_sync_is_given_each_agents_allowed_tools() -> None:
    document = cluster({"allowedTools": ["recall", "recal"]})
    document["agents"].append(
        {"name": "other", "image": "ghcr.io/acme/o:1", "tools": [{"name": "memory"}]}
    )
    run = run_program(lambda: LanguageCluster("c", document))
    [sync] = [r for r in run.registrations if r.type == "pulumi-python:dynamic:Resource"]
    assert sync.inputs["allowed_tools"] == {"apps/helper": ["recall", "recal"]}


def test_a_tool_without_scoping_agents_syncs_as_before() -> None:
    run = run_program(lambda: LanguageCluster("c", cluster({})))
    [sync] = [r for r in run.registrations if r.type == "pulumi-python:dynamic:Resource"]
    assert "allowed_tools" not in sync.inputs


def test_the_provider_reports_an_allowed_name_the_tool_lacks_as_drift() -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    with serve(two_tool_server().streamable_http_app()) as base:
        inputs = service_inputs(
            base, allowed_tools={"apps/helper": ["recall", "recal"], "apps/other": ["remember"]}
        )
        host.up(inputs)
        assert reveal(host.outputs["phase"]) == "Registered"
        assert reveal(host.outputs["unknown_allowed_tools"]) == ["apps/helper: recal"]
        assert host.preview(inputs).op == "same"
        fixed = service_inputs(base, allowed_tools={"apps/helper": ["recall"]})
        assert host.preview(fixed).op == "update"
        host.up(fixed)
        assert reveal(host.outputs["unknown_allowed_tools"]) == []


def test_the_tool_warns_of_the_drift_its_sync_found() -> None:
    def synced(state: dict[str, Any]) -> dict[str, Any]:
        return {"phase": "Registered", "unknown_allowed_tools": ["apps/helper: recal"]}

    run = run_program(
        lambda: LanguageCluster("c", cluster({"allowedTools": ["recal"]})), dynamic_state=synced
    )
    assert [w for w in run.warnings if "'memory' drifted" in w and "apps/helper: recal" in w]
