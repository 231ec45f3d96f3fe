"""The registry against language-operator's MCP client: background connection,
connect/disconnect/servers(),
servers.json verbatim, ``${VAR}`` in args, outputSchema checks, LLM tool names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from langop_infra.agent._naming import LLM_NAME, llm_name
from langop_infra.agent.runtime import (
    AgentConfigError,
    ServerEntry,
    connect_tool_registry,
    load_agent_servers,
)
from langop_infra.mcp import ClientOptions
from tests.faultservers import lifespan, read_body, until_disconnected
from tests.support.loopback import serve

pytestmark = pytest.mark.anyio

FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)

# language-operator's servers.json, verbatim.
SEED_SERVERS_JSON = """
{
  "servers": [
    {
      "name": "github",
      "transport": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {
        "GITHUB_TOKEN": "${GITHUB_TOKEN}"
      },
      "auto_connect": true
    },
    {
      "name": "filesystem",
      "transport": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/user/projects"],
      "auto_connect": false
    }
  ]
}
"""


class Hanging:
    """A server that reads each request and never answers (a server stuck in initialize)."""

    def __init__(self) -> None:
        self.requests = 0

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        await read_body(receive)
        self.requests += 1
        await until_disconnected(receive)


@pytest.fixture
def hanging() -> Iterator[tuple[str, Hanging]]:
    app = Hanging()
    with serve(app) as base:
        yield f"{base}/mcp", app


def test_the_seeds_servers_json_is_read_verbatim(tmp_path: Any) -> None:
    path = tmp_path / "servers.json"
    path.write_text(SEED_SERVERS_JSON)
    loaded = load_agent_servers(path, env={"GITHUB_TOKEN": "ghp-t0k"})
    github, filesystem = loaded.servers
    assert (github.name, github.transport, github.auto_connect) == ("github", "stdio", True)
    assert github.command == ("npx", "-y", "@modelcontextprotocol/server-github")
    assert dict(github.env) == {"GITHUB_TOKEN": "ghp-t0k"}
    assert (filesystem.auto_connect, filesystem.command[-1]) == (False, "/home/user/projects")
    assert loaded.failures == [] and github.source == "servers.json"
    unset = load_agent_servers(path, env={})
    assert [str(f) for f in unset.failures] == [
        "github: servers[0].env.GITHUB_TOKEN: ${GITHUB_TOKEN} is not set in the environment "
        "[config]"
    ]
    path.write_text('{"servers": {"github": {}}}')
    with pytest.raises(AgentConfigError, match="servers must be a list"):
        load_agent_servers(path, env={})


def test_a_config_with_no_known_key_is_not_read_as_0_servers_silently() -> None:
    loaded = load_agent_servers({"mcp": {"servers": []}, "version": 2}, env={})
    assert loaded.servers == [] and loaded.warnings == [
        "the agent config has none of the keys an agent config has (it has: mcp, version); "
        "expected tools, mcpServers, webhookTools or a servers.json `servers` list"
    ]
    assert load_agent_servers({}, env={}).warnings == []
    assert load_agent_servers({"agent": {"name": "a"}}, env={}).warnings == []


def test_args_expand_variables() -> None:
    document = {
        "servers": [
            {
                "name": "fs",
                "transport": "stdio",
                "command": "mcp-fs",
                "args": ["--root", "${ROOT:-/srv}", "--user=${USER_NAME}"],
            },
        ]
    }
    [entry] = load_agent_servers(document, env={"USER_NAME": "ada"}).servers
    assert entry.command == ("mcp-fs", "--root", "/srv", "--user=ada")
    [failure] = load_agent_servers(document, env={}).failures
    assert failure.message == "servers[0].args[2]: ${USER_NAME} is not set in the environment"


async def test_one_hanging_server_does_not_hold_the_registry(
    hanging: tuple[str, Hanging], json_url: str
) -> None:
    url, app = hanging
    servers = [ServerEntry("stuck", url), ServerEntry("notes", json_url)]
    registry = await connect_tool_registry(servers, FAST, wait="first")
    try:
        # Ready while the hanging server's initialize is still unanswered (below: it is still
        # "connecting" and sent one request): the registry did not wait for it.
        added = await registry.call_tool("notes__add", {"a": 1, "b": 2})
        assert added.content == [{"type": "text", "text": "3"}]
        states = {s.name: s.state for s in registry.servers()}
        assert states == {"stuck": "connecting", "notes": "connected"}
        assert app.requests == 1  # its initialize is still waiting
        assert registry.failures == []
        await registry.disconnect("stuck")  # gives up on it: no tools, no failure
        assert {s.name: s.state for s in registry.servers()}["stuck"] == "disconnected"
    finally:
        await registry.aclose()


async def test_connect_disconnect_and_status(json_url: str, stateful_url: str) -> None:
    document = {
        "servers": [
            {"name": "notes", "transport": "http", "url": json_url},
            {"name": "local", "url": stateful_url, "auto_connect": False},
        ]
    }
    async with await connect_tool_registry(
        load_agent_servers(document, env={}), FAST, naming="mcp"
    ) as registry:
        assert [(s.name, s.state) for s in registry.servers()] == [
            ("notes", "connected"),
            ("local", "disconnected"),
        ]
        assert not any(name.startswith("mcp:local:") for name in registry.tools)
        status = await registry.connect("local")
        assert (status.state, status.transport) == ("connected", "http")
        assert status.tools == sum(1 for t in registry.tools if t.startswith("mcp:local:")) > 0
        echoed = await registry.call_tool("mcp:local:add", {"a": 2, "b": 3})
        assert echoed.content[0]["text"] == "5"
        await registry.disconnect("notes")
        assert not any(name.startswith("mcp:notes:") for name in registry.tools)
        gone = await registry.call_tool("mcp:notes:add", {"a": 1, "b": 1})
        assert gone.is_error and gone.content[0]["text"].startswith("no tool named")
        assert [(s.name, s.state) for s in registry.servers()] == [
            ("notes", "disconnected"),
            ("local", "connected"),
        ]
        with pytest.raises(KeyError, match="no server named 'nope'"):
            await registry.connect("nope")


def _weather_server() -> Any:
    """An official-SDK low-level server whose tool declares an outputSchema and returns
    structuredContent that breaks it when asked to."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    output = {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name="weather", input_schema={"type": "object"}, output_schema=output)
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        value = {"temp": "hot"} if params.arguments.get("broken") else {"temp": 21.5}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(value))],
            structured_content=value,
        )

    return Server(
        "weather", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
    ).streamable_http_app()


async def test_structured_content_is_checked_against_the_output_schema() -> None:
    with serve(_weather_server()) as base:
        async with await connect_tool_registry([ServerEntry("w", f"{base}/mcp")], FAST) as registry:
            good = await registry.call_tool("w__weather", {})
            bad = await registry.call_tool("w__weather", {"broken": True})
            counts = registry.counts["w__weather"]
    assert (good.is_error, good.structured_content) == (False, {"temp": 21.5})
    assert bad.is_error is True
    assert bad.content[0]["text"] == (
        "tool w__weather returned structuredContent that violates its outputSchema at temp: "
        "'hot' is not of type 'number'"
    )
    assert (counts.invocations, counts.errors) == (2, 1)


async def test_definitions_for_llm_apis_have_valid_names_and_a_reverse_map(
    json_url: str,
) -> None:
    async with await connect_tool_registry(
        [ServerEntry("notes", json_url)], FAST, naming="mcp"
    ) as registry:
        openai, reverse = registry.llm_definitions("openai")
        anthropic = registry.definitions(format="anthropic")
        plain = registry.definitions()
    names = [d["function"]["name"] for d in openai]
    assert all(LLM_NAME.fullmatch(n) for n in names)
    assert [reverse[n] for n in names] == [d["name"] for d in plain]
    assert "mcp_notes_add" in names and reverse["mcp_notes_add"] == "mcp:notes:add"
    add = next(d for d in openai if d["function"]["name"] == "mcp_notes_add")
    assert add["type"] == "function"
    assert add["function"]["parameters"]["required"] == ["a", "b"]
    assert [d["name"] for d in anthropic] == names
    assert anthropic[0].keys() == {"name", "description", "input_schema"}


def test_llm_names_stay_valid_and_apart() -> None:
    long_a, long_b = "mcp:" + "a" * 70 + ":x", "mcp:" + "a" * 70 + ":y"
    assert llm_name("mcp:github:search_repositories") == "mcp_github_search_repositories"
    assert llm_name(long_a) != llm_name(long_b)
    assert all(len(llm_name(n)) == 64 and LLM_NAME.fullmatch(llm_name(n)) for n in (long_a, long_b))
    assert llm_name("::") == "tool"
