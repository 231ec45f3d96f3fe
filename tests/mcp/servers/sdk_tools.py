"""The official-SDK MCP server the integration tests talk to, over every transport.

Also imported by ``stdio_server.py``, which serves it on stdin/stdout.
"""

from __future__ import annotations

import asyncio
import itertools
import warnings

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.shared.message import ServerMessageMetadata


def build_server(name: str = "sdk-demo") -> MCPServer:
    """A server with plain tools, a failing tool and a tool that talks back mid-call."""
    server = MCPServer(name, version="1.0.0", log_level="WARNING")

    @server.tool(title="Add numbers")
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo(text: str, repeat: int = 1) -> str:
        """Repeat a text."""
        return " ".join([text] * repeat)

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails, with the given reason."""
        raise ToolError(reason)

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Sends a log notification and pings the client before answering."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await ctx.log("info", "working on it")
        await ctx.session.send_request(
            types.PingRequest(),
            types.EmptyResult,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )
        return "client answered the ping"

    @server.tool()
    async def polled(ctx: Context) -> str:
        """Closes its SSE stream mid-call; the client must resume it with Last-Event-ID."""
        await ctx.close_sse_stream()
        await asyncio.sleep(0.1)
        return "resumed"

    return server


class MemoryEventStore(EventStore):
    """Events kept in memory, so that a closed SSE stream can be resumed (SSE polling)."""

    def __init__(self) -> None:
        self._events: list[tuple[str, str, types.JSONRPCMessage | None]] = []
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: str, message: types.JSONRPCMessage | None) -> str:
        event_id = str(next(self._ids))
        self._events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        stream = next((s for e, s, _ in self._events if e == last_event_id), None)
        if stream is None:
            return None
        after = False
        for event_id, stream_id, message in self._events:
            if after and stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream
