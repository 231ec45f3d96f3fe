"""A burst against one MCP server (the security review's load finding): 1,000 concurrent
calls through the agent's registry to the official SDK server on loopback. Calls beyond the
per-server limit wait in a bounded queue, those beyond the queue are refused at once with an
error naming the limit, and afterwards a single call answers normally."""

from __future__ import annotations

import asyncio
from typing import Any

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


class Stuck:
    """The official SDK server's app, which stops answering anything once ``stuck`` is set
    (every request then waits until its client gives up): a wedged server, on demand."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.stuck = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.stuck and scope["type"] == "http":
            await asyncio.Event().wait()
        await self.app(scope, receive, send)


async def test_readyz_counts_a_wedged_required_tool_out_until_it_answers() -> None:
    from langop_infra.agent._lifecycle import WEDGED_AFTER
    from langop_infra.agent._serve import Runtime
    from langop_infra.agent._settings import RuntimeSettings

    options = ClientOptions(timeout=1, deadline=10, connect_retries=0, listen=False)
    settings = RuntimeSettings("http://127.0.0.1:1/v1", "m", required_tools=("h",))
    app = Stuck(hanging_server().streamable_http_app(stateless_http=True))
    with serve(app) as base:
        registry = await connect_tool_registry([ServerEntry("h", base + "/mcp")], options)
        runtime = Runtime(settings, registry, model=None, loop=None, metrics=None)  # type: ignore[arg-type]
        async with registry:
            assert runtime.not_ready() == []
            app.stuck = True
            for _ in range(WEDGED_AFTER - 1):
                assert (await registry.call_tool("h__add", {"a": 1, "b": 1})).is_error
            assert runtime.not_ready() == []  # a slow call or two is not a wedge
            await registry.call_tool("h__add", {"a": 1, "b": 1})
            assert registry.wedged() == ["h"]
            assert runtime.not_ready() == ["h"]  # and it asks the server again meanwhile
            answers = registry.sessions["h"].list_tools
            assert await registry.stalls.recheck("h", answers) is False
            assert runtime.not_ready() == ["h"]
            app.stuck = False
            assert await registry.stalls.recheck("h", answers) is True
            assert runtime.not_ready() == []
