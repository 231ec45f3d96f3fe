"""ark's env path and seed 002's client API in the agent library (#39 §3): with no
config.yaml, AGENT_MCP_SERVERS, its ARK_MCP_*_HEADER_* variables and AGENT_WEBHOOK_TOOLS are
read (never 0 servers without a word); ``connect()`` takes a new server's settings;
``refresh()`` returns the tools; ``{dataDir}/mcp/servers.json`` is read. The servers are the
tool kit's, on the official MCP SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from langop_infra.agent.runtime import ServerEntry, connect_tool_registry, load_agent_servers
from langop_infra.mcp import ClientOptions
from langop_infra.toolkit import MCPToolRegistry
from langop_infra.toolkit._server import build_app
from tests.support.loopback import serve

pytestmark = pytest.mark.anyio
FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)
MISSING = None  # no config.yaml


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recorder:
    """Wraps a real ASGI app and keeps every request's headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app, self.headers = app, list[dict[str, str]]()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def tool_server() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder(build_app(MCPToolRegistry()))
    with serve(recorder) as url:
        yield url, recorder


def test_arks_env_alone_gives_servers_headers_and_webhook_tools() -> None:
    env = {
        "AGENT_MCP_SERVERS": json.dumps([{"name": "search", "url": "http://s.example/mcp"}]),
        "ARK_MCP_SEARCH_HEADER_AUTHORIZATION": "Bearer canary-token",
        "ARK_MCP_SEARCH_HEADER_X_API_VERSION": "2",
        "AGENT_WEBHOOK_TOOLS": json.dumps(
            [
                {
                    "name": "lookup",
                    "url": "http://h.example/x",
                    "method": "GET",
                    "inputSchema": '{"type":"object"}',
                }
            ]
        ),
    }
    found = load_agent_servers(MISSING, env=env)
    assert [(s.name, s.url, s.source) for s in found.servers] == [
        ("search", "http://s.example/mcp", "AGENT_MCP_SERVERS")
    ]
    assert dict(found.servers[0].headers) == {
        "Authorization": "Bearer canary-token",
        "X-Api-Version": "2",
    }
    assert [t.name for t in found.http_tools] == ["lookup"]
    assert (found.failures, found.warnings) == ([], [])


def test_unusable_ark_env_is_a_failure_not_zero_servers() -> None:
    found = load_agent_servers(MISSING, env={"AGENT_MCP_SERVERS": "[{"})
    assert found.servers == []
    assert [(f.name, f.message.split(" (")[0]) for f in found.failures] == [
        ("AGENT_MCP_SERVERS", "AGENT_MCP_SERVERS: not JSON")
    ]
    found = load_agent_servers(MISSING, env={"AGENT_MCP_SERVERS": '[{"url": "http://x"}]'})
    assert [f.message for f in found.failures] == ["AGENT_MCP_SERVERS[0]: needs a name and a url"]
    stray = load_agent_servers(
        MISSING, env={"AGENT_MCP_SERVERS": "[]", "ARK_MCP_GONE_HEADER_TOKEN": "x"}
    )
    assert stray.warnings == [
        "ARK_MCP_GONE_HEADER_TOKEN is set but AGENT_MCP_SERVERS names no server GONE: "
        "the header is not sent"
    ]


def test_config_yaml_wins_over_the_env_it_duplicates() -> None:
    document = {"mcpServers": [{"name": "search", "url": "http://from-config/mcp"}]}
    env = {"AGENT_MCP_SERVERS": json.dumps([{"name": "search", "url": "http://from-env/mcp"}])}
    found = load_agent_servers(document, env=env)
    assert [s.url for s in found.servers] == ["http://from-config/mcp"]


def test_servers_json_under_the_data_dir(tmp_path: Path) -> None:
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "servers.json").write_text(
        json.dumps(
            {
                "servers": [
                    {
                        "name": "files",
                        "transport": "http",
                        "url": "http://f/mcp",
                        "auto_connect": False,
                    }
                ]
            }
        )
    )
    found = load_agent_servers(MISSING, env={"AGENT_DATA_DIR": str(tmp_path)})
    assert [(s.name, s.source, s.auto_connect) for s in found.servers] == [
        ("files", "servers.json", False)
    ]
    assert load_agent_servers(MISSING, env={}, data_dir=tmp_path).servers[0].name == "files"


async def test_arks_headers_reach_the_server(tool_server: tuple[str, Recorder]) -> None:
    url, recorder = tool_server
    env = {
        "AGENT_MCP_SERVERS": json.dumps([{"name": "kit", "url": f"{url}/mcp"}]),
        "ARK_MCP_KIT_HEADER_AUTHORIZATION": "Bearer ark-canary",
    }
    before = len(recorder.headers)
    async with await connect_tool_registry(load_agent_servers(MISSING, env=env), FAST) as registry:
        assert "kit__get_current_datetime" in registry.tools
    sent = recorder.headers[before:]
    assert sent and all(h.get("authorization") == "Bearer ark-canary" for h in sent)


async def test_connect_takes_a_new_server_and_refresh_returns_its_tools(
    tool_server: tuple[str, Recorder],
) -> None:
    url, _ = tool_server
    async with await connect_tool_registry([], FAST) as registry:
        status = await registry.connect(ServerEntry("kit", f"{url}/mcp"))
        assert (status.name, status.state, status.tools) == ("kit", "connected", 1)
        tools: list[dict[str, Any]] = await registry.refresh("kit")
        assert [t["name"] for t in tools] == ["kit__get_current_datetime"]
        with pytest.raises(ValueError, match="disconnect it first"):
            await registry.connect(ServerEntry("kit", f"{url}/other"))
        assert [s.name for s in registry.servers()] == ["kit"]


def _success_false_server() -> Any:
    """An official-SDK low-level server whose tool answers seed 003's ``success: false``
    without setting ``isError`` (as AgentLab's own API did)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.transport_security import TransportSecuritySettings

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tool = types.Tool(name="lookup", input_schema={"type": "object"})
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        value = {"success": False, "error": "not found"}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(value))],
            structured_content=value,
        )

    return Server(
        "legacy", version="1", on_list_tools=list_tools, on_call_tool=call_tool
    ).streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )


async def test_success_false_counts_as_an_error() -> None:
    with serve(_success_false_server()) as url:
        async with await connect_tool_registry(
            [ServerEntry("legacy", f"{url}/mcp")], FAST
        ) as registry:
            result = await registry.call_tool("legacy__lookup", {})
            counts = registry.counts["legacy__lookup"]
    assert result.is_error is False  # as the server said
    assert (counts.invocations, counts.errors) == (1, 1)
