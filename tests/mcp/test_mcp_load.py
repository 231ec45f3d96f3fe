"""A burst against one MCP server (the security review's load finding): 1,000 concurrent
calls through the agent's registry to the official SDK server on loopback. Calls beyond the
per-server limit wait in a bounded queue, those beyond the queue are refused at once with an
error naming the limit, and afterwards a single call answers normally."""

from __future__ import annotations

import asyncio

import pytest
from mcp.server.mcpserver import MCPServer

from langop_infra.agent.runtime import ServerEntry, connect_tool_registry
from langop_infra.mcp import ClientOptions
from tests.support.loopback import serve

pytestmark = pytest.mark.anyio

BURST = 1000


async def test_a_burst_of_calls_leaves_the_server_usable(stateful_url: str) -> None:
    options = ClientOptions(timeout=60, deadline=60, connect_retries=0)
    registry = await connect_tool_registry([ServerEntry("sdk", stateful_url)], options)
    async with registry:
        burst = [registry.call_tool("sdk__add", {"a": i, "b": 1}) for i in range(BURST)]
        results = await asyncio.gather(*burst)
        after = await registry.call_tool("sdk__add", {"a": 2, "b": 2})
    assert (after.is_error, after.structured_content) == (False, {"result": 4})
    answered = [r for r in results if not r.is_error]
    refused = [r for r in results if r.is_error]
    limit = options.max_concurrent_calls + options.max_queued_calls
    assert len(answered) == limit
    assert sorted(r.structured_content["result"] for r in answered) == list(range(1, limit + 1))
    assert len(refused) == BURST - limit
    assert refused[0].content[0]["text"] == (
        f"tool sdk__add failed: {stateful_url} is busy: {options.max_concurrent_calls} calls "
        f"running and {options.max_queued_calls} waiting (max_concurrent_calls, "
        "max_queued_calls); try again shortly [busy]"
    )


def hanging_server() -> MCPServer:
    """The official SDK server with a tool that never finishes and one that answers."""
    server = MCPServer("hanging", log_level="WARNING")

    @server.tool()
    async def hang() -> str:
        await asyncio.Event().wait()
        return "never"

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    return server


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
async def test_calls_that_time_out_leave_no_connection_taken(protocol: str) -> None:
    """Calls that never finish held every pooled connection (100) before: each later call
    timed out until a restart (the review's "one burst wedges a tool for good"). Under the
    call limit (32 running) the pool never runs dry, and a cancelled call's body is closed
    even inside the cancelled scope that aborts it at 2026-07-28."""
    options = ClientOptions(timeout=2, deadline=20, connect_retries=0, protocol=protocol)
    with serve(hanging_server().streamable_http_app()) as base:
        registry = await connect_tool_registry([ServerEntry("h", base + "/mcp")], options)
        async with registry:
            results = await asyncio.gather(*(registry.call_tool("h__hang") for _ in range(BURST)))
            after = await registry.call_tool("h__add", {"a": 2, "b": 2})
    assert all(r.is_error for r in results)
    assert {r.content[0]["text"].rpartition(" ")[2] for r in results} == {"[timeout]", "[busy]"}
    assert (after.is_error, after.structured_content) == (False, {"result": 4})
