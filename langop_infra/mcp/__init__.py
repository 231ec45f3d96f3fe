"""A small, fast MCP client over the official SDK's transports (on httpx2): streamable HTTP,
legacy HTTP+SSE and stdio; protocol revisions 2024-11-05 to 2026-07-28, negotiated as the
official SDK client's auto mode does.

    async with Session("http://tool.ns.svc.cluster.local:8080/mcp") as session:
        tools = await session.list_tools()
        result = await session.call_tool("recall", {"query": "units"})

    listing = fetch_tool_listing_sync("http://tool.ns.svc.cluster.local:8080/mcp")

Every failure is an :class:`MCPClientError` (a :class:`LangopError`) with a ``kind`` slug
and a one-line message; the tree is in :mod:`langop_infra.mcp._errors`. Names are imported
on first use, so that ``langop_infra.mcp._errors`` (the root of every exception of the
package) costs nothing to import. This
package imports nothing of langop-infra outside itself; the agent's side of the contract
(``langop_infra.agent.runtime``) is built on it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "discover_endpoint": "langop_infra.mcp._discovery",
    "ConfinementError": "langop_infra.mcp._errors",
    "ConnectionLost": "langop_infra.mcp._errors",
    "HTTPStatusError": "langop_infra.mcp._errors",
    "InvalidInput": "langop_infra.mcp._errors",
    "JSONRPCError": "langop_infra.mcp._errors",
    "LangopError": "langop_infra.mcp._errors",
    "MCPClientError": "langop_infra.mcp._errors",
    "MCPConnectionError": "langop_infra.mcp._errors",
    "MCPError": "langop_infra.mcp._errors",
    "MCPHTTPError": "langop_infra.mcp._errors",
    "MCPProtocolError": "langop_infra.mcp._errors",
    "MCPTimeout": "langop_infra.mcp._errors",
    "MalformedResponse": "langop_infra.mcp._errors",
    "ProtocolVersionError": "langop_infra.mcp._errors",
    "ResponseTooLarge": "langop_infra.mcp._errors",
    "ServerBusy": "langop_infra.mcp._errors",
    "ServerUnreachable": "langop_infra.mcp._errors",
    "TransportError": "langop_infra.mcp._errors",
    "ToolListing": "langop_infra.mcp._listing",
    "fetch_tool_listing": "langop_infra.mcp._listing",
    "fetch_tool_listing_sync": "langop_infra.mcp._listing",
    "ClientOptions": "langop_infra.mcp._options",
    "PROTOCOL_VERSION": "langop_infra.mcp._session",
    "SUPPORTED_PROTOCOL_VERSIONS": "langop_infra.mcp._session",
    "Session": "langop_infra.mcp._session",
    "ToolCallResult": "langop_infra.mcp._session",
    "Transport": "langop_infra.mcp._session",
}
__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "ClientOptions",
    "ConfinementError",
    "ConnectionLost",
    "HTTPStatusError",
    "InvalidInput",
    "JSONRPCError",
    "LangopError",
    "MCPClientError",
    "MCPConnectionError",
    "MCPError",
    "MCPHTTPError",
    "MCPProtocolError",
    "MCPTimeout",
    "MalformedResponse",
    "ProtocolVersionError",
    "ResponseTooLarge",
    "ServerBusy",
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

if TYPE_CHECKING:
    from langop_infra.mcp._discovery import (
        discover_endpoint,
    )
    from langop_infra.mcp._errors import (
        ConfinementError,
        ConnectionLost,
        HTTPStatusError,
        InvalidInput,
        JSONRPCError,
        LangopError,
        MalformedResponse,
        MCPClientError,
        MCPConnectionError,
        MCPError,
        MCPHTTPError,
        MCPProtocolError,
        MCPTimeout,
        ProtocolVersionError,
        ResponseTooLarge,
        ServerBusy,
        ServerUnreachable,
        TransportError,
    )
    from langop_infra.mcp._listing import (
        ToolListing,
        fetch_tool_listing,
        fetch_tool_listing_sync,
    )
    from langop_infra.mcp._options import (
        ClientOptions,
    )
    from langop_infra.mcp._session import (
        PROTOCOL_VERSION,
        SUPPORTED_PROTOCOL_VERSIONS,
        Session,
        ToolCallResult,
        Transport,
    )


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'langop_infra.mcp' has no attribute {name!r}")
