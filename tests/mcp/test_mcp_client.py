"""The client against real MCP servers built on the official SDK, in every transport mode."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest

import langop_infra
from langop_infra.mcp import (
    ClientOptions,
    HTTPStatusError,
    Session,
    ToolCallResult,
    ToolListing,
    fetch_tool_listing,
    fetch_tool_listing_sync,
)
from tests.support.startup import stdio_options

pytestmark = pytest.mark.anyio

SDK_TOOLS = {"add", "echo", "fail", "chatty", "polled"}
# The deadline bounds a hung test, not a speed: a stdio server starting on a loaded 2-core
# machine (importing the MCP SDK) has taken more than 10 s.
FAST = ClientOptions(timeout=5, deadline=60)
# The 2025 era: a session, server-to-client requests (2026-07-28 has neither).
HANDSHAKE = ClientOptions(timeout=5, deadline=10, protocol="2025-11-25")


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
@pytest.mark.parametrize(
    ("server", "server_name", "transport", "has_session"),
    [
        ("stateful_url", "sdk-stateful", "streamable-http", True),
        ("json_url", "sdk-json", "streamable-http", True),
        ("stateless_url", "sdk-stateless", "streamable-http", False),
        ("resumable_url", "sdk-resumable", "streamable-http", True),
        ("legacy_sse_url", "sdk-legacy", "sse", False),
    ],
)
async def test_lists_and_calls_tools_of_sdk_servers(
    request: pytest.FixtureRequest,
    server: str,
    server_name: str,
    transport: str,
    has_session: bool,
    protocol: str,
) -> None:
    url = request.getfixturevalue(server)
    # The SDK serves both eras on streamable HTTP; auto mode picks 2026-07-28 there.
    modern = protocol == "auto" and transport == "streamable-http"
    async with Session(url, ClientOptions(timeout=5, deadline=10, protocol=protocol)) as session:
        assert session.transport_name == transport
        assert session.protocol_version == ("2026-07-28" if modern else "2025-11-25")
        assert session.server_info == {"name": server_name, "version": "1.0.0"}
        assert (session.session_id is not None) is (has_session and not modern)
        tools = await session.list_tools()
        assert {tool["name"] for tool in tools} == SDK_TOOLS
        add = next(tool for tool in tools if tool["name"] == "add")
        assert add["title"] == "Add numbers"
        assert add["description"] == "Add two integers."
        assert add["inputSchema"]["required"] == ["a", "b"]

        assert await session.call_tool("add", {"a": 2, "b": 40}) == ToolCallResult(
            content=[{"type": "text", "text": "42"}],
            is_error=False,
            structured_content={"result": 42},
        )
        failed = await session.call_tool("fail", {"reason": "disk full"})
        assert failed.is_error is True
        assert "disk full" in failed.content[0]["text"]


@pytest.mark.parametrize("server", ["stateful_url", "legacy_sse_url"])
async def test_skips_notifications_and_answers_server_pings_mid_call(
    request: pytest.FixtureRequest, server: str
) -> None:
    async with Session(request.getfixturevalue(server), HANDSHAKE) as session:
        result = await session.call_tool("chatty")
    assert result.content == [{"type": "text", "text": "client answered the ping"}]


async def test_resumes_a_stream_the_server_closed_mid_call(resumable_url: str) -> None:
    async with Session(resumable_url, FAST) as session:
        result = await session.call_tool("polled")
    assert result.content == [{"type": "text", "text": "resumed"}]
    assert result.is_error is False


async def test_stdio_server_negotiates_2026_07_28(stdio_command: list[str]) -> None:
    async with Session(stdio_command, stdio_options()) as session:
        assert session.protocol_version == "2026-07-28"
        assert session.server_info["name"] == "sdk-stdio"
        assert {tool["name"] for tool in await session.list_tools()} == SDK_TOOLS
        assert (await session.call_tool("add", {"a": 1, "b": 2})).structured_content == {
            "result": 3
        }


async def test_stdio_server_lists_calls_and_pings(stdio_command: list[str]) -> None:
    async with Session(stdio_command, stdio_options(protocol="2025-11-25")) as session:
        assert session.transport_name == "stdio"
        assert session.server_info["name"] == "sdk-stdio"
        assert {tool["name"] for tool in await session.list_tools()} == SDK_TOOLS
        assert (await session.call_tool("echo", {"text": "hi", "repeat": 3})).content == [
            {"type": "text", "text": "hi hi hi"}
        ]
        chatty = await session.call_tool("chatty")
        assert chatty.content[0]["text"] == "client answered the ping"
        assert "stdio test server starting" in session.transport.diagnostics()  # type: ignore[union-attr]
        process = session.transport._process  # type: ignore[union-attr]
    assert process.returncode is not None  # closing stopped the server


async def test_follows_next_cursor_through_every_page(paged_url: str) -> None:
    async with Session(paged_url, FAST) as session:
        tools = await session.list_tools()
    assert [tool["name"] for tool in tools] == [f"tool_{i:02d}" for i in range(7)]
    assert tools[0]["inputSchema"]["required"] == ["x"]


async def test_seed_style_server_without_initialize(seed_url: str) -> None:
    async with Session(seed_url, FAST) as session:
        assert session.protocol_version == "unknown"
        assert session.server_info == {}
        tools = await session.list_tools()
        assert [tool["name"] for tool in tools] == ["remember", "recall"]
        stored = await session.call_tool("remember", {"content": "User prefers metric units"})
        assert stored.content == [{"type": "text", "text": "Stored successfully."}]
        recalled = await session.call_tool("recall", {"query": "metric"})
    assert recalled.content == [{"type": "text", "text": "User prefers metric units"}]
    assert recalled.is_error is False


async def test_reinitializes_once_when_the_server_forgets_the_session(stateful_url: str) -> None:
    async with Session(stateful_url, HANDSHAKE) as session:
        first = session.session_id
        assert first
        # End the session behind the client's back, as a server restart would.
        async with httpx.AsyncClient() as client:
            gone = await client.delete(stateful_url, headers={"mcp-session-id": first})
        assert gone.status_code == 200
        tools = await session.list_tools()
        assert {tool["name"] for tool in tools} == SDK_TOOLS
        assert session.session_id not in (None, first)


async def test_closing_deletes_the_server_session(stateful_url: str) -> None:
    async with Session(stateful_url, HANDSHAKE) as session:
        session_id = session.session_id
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"mcp-session-id": session_id, "accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient() as client:
        after = await client.post(stateful_url, json=body, headers=headers)
    assert after.status_code == 404


async def test_sends_headers_session_id_and_version_and_answers_pings(
    fault_server: tuple[str, Any],
) -> None:
    base, app = fault_server
    options = ClientOptions(headers={"X-Team": "platform"}, timeout=5, listen=False)
    before = len(app.requests)
    async with Session(f"{base}/ok", options) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["only"]
    sent = [r for r in app.requests[before:] if r.path == "/ok"]
    assert [r.method for r in sent] == ["POST", "POST", "POST", "POST", "POST", "DELETE"]
    discover, init, initialized, listing, pong, delete = sent
    # Auto mode asks server/discover first, enveloped as 2026-07-28 requires; this server
    # answers "method not found" (it predates 2026-07-28), so the handshake follows.
    assert discover.message["method"] == "server/discover"
    assert discover.message["params"] == {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {
                "name": "langop-infra",
                "version": langop_infra.__version__,
            },
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    }
    assert discover.headers["mcp-protocol-version"] == "2026-07-28"
    assert discover.headers["mcp-method"] == "server/discover"
    assert init.message["method"] == "initialize"
    assert init.message["params"] == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "langop-infra", "version": langop_infra.__version__},
    }
    assert init.headers["accept"] == "application/json, text/event-stream"
    assert "mcp-session-id" not in init.headers
    assert "mcp-protocol-version" not in init.headers
    assert initialized.message == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert listing.message["method"] == "tools/list"
    assert pong.message == {"jsonrpc": "2.0", "id": "server-ping-1", "result": {}}
    for later in (initialized, listing, pong, delete):
        assert later.headers["mcp-session-id"] == "scripted-1"
        assert later.headers["mcp-protocol-version"] == "2025-11-25"
    assert all(r.names.count("mcp-protocol-version") <= 1 for r in sent)  # each sent once
    assert all(r.headers["x-team"] == "platform" for r in sent)
    # Bodies are read to their end, so kept-alive connections carry the session: one, plus
    # a second for the pong, sent while the tools/list stream still held the first.
    assert discover.client_port == init.client_port == initialized.client_port
    assert init.client_port == listing.client_port
    assert pong.client_port != listing.client_port
    assert len({r.client_port for r in sent}) == 2


async def test_accepts_an_older_protocol_version(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    async with Session(f"{base}/old-version", FAST) as session:
        assert session.protocol_version == "2024-11-05"
        assert await session.list_tools()


async def test_resumes_with_last_event_id(fault_server: tuple[str, Any]) -> None:
    base, app = fault_server
    async with Session(f"{base}/resume", FAST) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["only"]
    resumed = [r for r in app.requests if r.path == "/resume" and r.method == "GET"]
    assert resumed[-1].headers["last-event-id"] == "p-1"
    assert resumed[-1].headers["mcp-session-id"] == "resumable-1"


async def test_follows_a_same_origin_redirect(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    async with Session(f"{base}/redirect-here", FAST) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["only"]


async def test_explicit_transport_is_not_second_guessed(
    legacy_sse_url: str, stateful_url: str
) -> None:
    streamable_only = ClientOptions(timeout=5, transport="streamable-http")
    with pytest.raises(HTTPStatusError) as refused:
        async with Session(legacy_sse_url, streamable_only):
            pass
    assert refused.value.status == 405
    sse_only = ClientOptions(timeout=5, transport="sse")
    with pytest.raises(HTTPStatusError) as not_sse:
        async with Session(stateful_url, sse_only):
            pass
    assert not_sse.value.status == 400
    assert "Missing session ID" in str(not_sse.value)


async def test_fetch_tool_listing(legacy_sse_url: str) -> None:
    listing = await fetch_tool_listing(legacy_sse_url, FAST)
    assert isinstance(listing, ToolListing)
    assert {tool["name"] for tool in listing.tools} == SDK_TOOLS
    assert listing.server_info["name"] == "sdk-legacy"
    assert (listing.protocol_version, listing.transport) == ("2025-11-25", "sse")


def test_fetch_tool_listing_sync_without_a_running_loop(stateless_url: str) -> None:
    listing = fetch_tool_listing_sync(stateless_url, FAST)
    assert {tool["name"] for tool in listing.tools} == SDK_TOOLS
    assert listing.transport == "streamable-http"


async def test_fetch_tool_listing_sync_inside_a_running_loop(paged_url: str) -> None:
    loop_thread = threading.get_ident()
    listing = fetch_tool_listing_sync(paged_url, FAST)  # must not raise "loop is running"
    assert len(listing.tools) == 7
    assert threading.get_ident() == loop_thread
    assert asyncio.get_running_loop().is_running()


async def test_connect_retries_wait_for_a_server_still_starting(
    free_port: int, serve_app: Any, server_module: Any
) -> None:
    seed = server_module("seed")
    started, finished = threading.Event(), threading.Event()

    def start_late() -> None:
        finished.wait(0.4)
        with serve_app(seed.build_app(), port=free_port):
            started.set()
            finished.wait(10)

    late = threading.Thread(target=start_late, daemon=True)
    late.start()
    options = ClientOptions(timeout=5, connect_retries=6, retry_backoff=0.1)
    try:
        listing = await fetch_tool_listing(f"http://127.0.0.1:{free_port}/mcp", options)
    finally:
        finished.set()
    assert started.is_set()
    assert [tool["name"] for tool in listing.tools] == ["remember", "recall"]
    late.join(5)
