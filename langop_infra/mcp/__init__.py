"""A small, fast MCP client on httpx: streamable HTTP, legacy HTTP+SSE and stdio; protocol
revisions 2024-11-05 to 2026-07-28, negotiated as the official SDK client's auto mode does.

    async with Session("http://tool.ns.svc.cluster.local:8080/mcp") as session:
        tools = await session.list_tools()
        result = await session.call_tool("recall", {"query": "units"})

    listing = fetch_tool_listing_sync("http://tool.ns.svc.cluster.local:8080/mcp")

Every failure is an :class:`MCPError` with a ``kind`` slug and a one-line message. This
package imports nothing of langop-infra outside itself; the agent's side of the contract
(``langop_infra.agent.runtime``) is built on it.
"""

from __future__ import annotations

from langop_infra.mcp.discovery import discover_endpoint
from langop_infra.mcp.errors import (
    ConfinementError,
    HTTPStatusError,
    InvalidInput,
    JSONRPCError,
    MalformedResponse,
    MCPError,
    MCPTimeout,
    ProtocolVersionError,
    ResponseTooLarge,
    ServerUnreachable,
    TransportError,
)
from langop_infra.mcp.listing import ToolListing, fetch_tool_listing, fetch_tool_listing_sync
from langop_infra.mcp.options import ClientOptions
from langop_infra.mcp.session import (
    PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    Session,
    ToolCallResult,
    Transport,
)

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "ClientOptions",
    "ConfinementError",
    "HTTPStatusError",
    "InvalidInput",
    "JSONRPCError",
    "MCPError",
    "MCPTimeout",
    "MalformedResponse",
    "ProtocolVersionError",
    "ResponseTooLarge",
    "ServerUnreachable",
    "Session",
    "ToolCallResult",
    "ToolListing",
    "Transport",
    "TransportError",
    "discover_endpoint",
    "fetch_tool_listing",
    "fetch_tool_listing_sync",
]
