"""A small, fast MCP client on httpx: streamable HTTP, legacy HTTP+SSE and stdio.

    async with Session("http://tool.ns.svc.cluster.local:8080/mcp") as session:
        tools = await session.list_tools()
        result = await session.call_tool("recall", {"query": "units"})

    listing = fetch_tool_listing_sync("http://tool.ns.svc.cluster.local:8080/mcp")

Every failure is an :class:`MCPError` with a ``kind`` slug and a one-line message. Agents
load their servers with :func:`load_agent_servers` and connect them all at once with
:func:`connect_tool_registry`.
"""

from __future__ import annotations

from langop_infra.mcp.agent_config import (
    AgentServers,
    ServerEntry,
    ServerFailure,
    ToolRegistry,
    connect_tool_registry,
    load_agent_servers,
)
from langop_infra.mcp.errors import (
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
)

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "AgentServers",
    "ClientOptions",
    "HTTPStatusError",
    "InvalidInput",
    "JSONRPCError",
    "MCPError",
    "MCPTimeout",
    "MalformedResponse",
    "ProtocolVersionError",
    "ResponseTooLarge",
    "ServerEntry",
    "ServerFailure",
    "ServerUnreachable",
    "Session",
    "ToolCallResult",
    "ToolListing",
    "ToolRegistry",
    "TransportError",
    "connect_tool_registry",
    "fetch_tool_listing",
    "fetch_tool_listing_sync",
    "load_agent_servers",
]
