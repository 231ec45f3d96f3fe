"""A small, fast MCP client over the official SDK's transports (on httpx2): streamable HTTP,
legacy HTTP+SSE and stdio; protocol revisions 2024-11-05 to 2026-07-28, negotiated as the
official SDK client's auto mode does.

    async with Session("http://tool.ns.svc.cluster.local:8080/mcp") as session:
        tools = await session.list_tools()
        result = await session.call_tool("recall", {"query": "units"})

    listing = fetch_tool_listing_sync("http://tool.ns.svc.cluster.local:8080/mcp")

Every failure is an :class:`MCPClientError` (a :class:`LangopError`) with a ``kind`` slug
and a one-line message; the tree is in :mod:`langop_infra.mcp._errors`. The errors import
nothing heavy and are here at once; the other names are imported on first use. This
package imports nothing of langop-infra outside itself; the agent's side of the contract
(``langop_infra.agent.runtime``) is built on it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from langop_infra.mcp._discovery import discover_endpoint
    from langop_infra.mcp._listing import ToolListing, fetch_tool_listing, fetch_tool_listing_sync
    from langop_infra.mcp._options import ClientOptions
    from langop_infra.mcp._session import (
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
# Where each lazily imported name lives, lightest module first.
_LAZY = ("_options", "_session", "_listing", "_discovery")


def __getattr__(name: str) -> Any:
    for module in _LAZY if name in __all__ else ():
        found = getattr(importlib.import_module(f"langop_infra.mcp.{module}"), name, None)
        if found is not None:
            return found
    raise AttributeError(f"module 'langop_infra.mcp' has no attribute {name!r}")
